//! Every `unsafe` system call of the crate, each behind a safe function
//! with its SAFETY note. Linux is the target; elsewhere the calls that have
//! no portable meaning do nothing.

use std::os::fd::RawFd;

/// Asks the kernel to SIGKILL the child when the thread that spawned it
/// dies (`PR_SET_PDEATHSIG`), and exits at once if the parent is already
/// gone. The signal follows the spawning thread, so bots must be spawned
/// from long-lived threads, as the league's workers and the commands' main
/// threads are.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls (prctl, getppid, _exit) run
        // between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Puts the child, between fork and exec, in user, PID, network and IPC
/// namespaces of its own: no network (only a loopback that is down), no
/// System V IPC or POSIX queues shared with others, and no other process it
/// can signal or trace (their pids do not exist in its namespace). Inside,
/// the user is mapped to itself, so files are reached as before. Fails (and
/// the spawn with it) where user namespaces are not allowed.
///
/// A new PID namespace takes effect for children only, so the child forks
/// once more: the bot is the grandchild, PID 1 of its namespace (when it
/// ends, the kernel kills everything it left in there), and the child stays
/// outside as its keeper: it holds no descriptor, waits for the bot and
/// exits as the bot did, so the referee sees the bot's status. Both share
/// the bot's process group, so a group kill reaches both; the bot dies with
/// its keeper (PR_SET_PDEATHSIG).
///
/// Before that, the child joins the bot's cgroups (`cgroup_procs`: files to
/// write `0` into) and the bot gets `RLIMIT_FSIZE` = `file_size` bytes.
pub fn isolate(
    cmd: &mut std::process::Command,
    cgroup_procs: Vec<std::ffi::CString>,
    file_size: u64,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid and getegid cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // Built before the fork: nothing allocates between fork and exec.
    let uid_map = format!("0 {uid} 1\n");
    let gid_map = format!("0 {gid} 1\n");
    // SAFETY: only async-signal-safe system calls (unshare, open, write,
    // close, fork, prctl, waitpid, kill, _exit) run between fork and exec,
    // on buffers built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            for procs in &cgroup_procs {
                if !write_proc(procs, b"0") {
                    return Err(std::io::Error::from_raw_os_error(ISOLATE_FAILED));
                }
            }
            let fsize = libc::rlimit {
                rlim_cur: file_size,
                rlim_max: file_size,
            };
            let flags =
                libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWIPC;
            let set_up = libc::setrlimit(libc::RLIMIT_FSIZE, &fsize) == 0
                && libc::unshare(flags) == 0
                && write_proc(c"/proc/self/setgroups", b"deny")
                && write_proc(c"/proc/self/uid_map", uid_map.as_bytes())
                && write_proc(c"/proc/self/gid_map", gid_map.as_bytes());
            if !set_up {
                // An errno that exec never gives: the spawn's caller can
                // tell a sandbox failure from a bad command.
                return Err(std::io::Error::from_raw_os_error(ISOLATE_FAILED));
            }
            let bot = libc::fork();
            if bot < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if bot == 0 {
                // The bot, PID 1 of its namespace: it dies with its keeper.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                return Ok(());
            }
            keep(bot)
        });
    }
}

/// The keeper's life (see [`isolate`]): hides its memory, lets go of
/// every descriptor (the
/// bot's pipes, and the pipe through which the spawn learns of the exec,
/// which must close when the bot execs), waits for the bot and ends as it
/// ended. Never returns.
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
unsafe fn keep(bot: libc::pid_t) -> ! {
    // The keeper is a copy of the referee, memory and environment included,
    // in the bot's user namespace: not dumpable, so that the bot cannot
    // read its /proc/PID/environ or mem.
    libc::prctl(libc::PR_SET_DUMPABLE, 0);
    libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
    let mut status = 0;
    loop {
        let r = libc::waitpid(bot, &mut status, 0);
        if r == bot {
            break;
        }
        if r < 0 && *libc::__errno_location() != libc::EINTR {
            libc::_exit(127);
        }
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        libc::kill(libc::getpid(), sig);
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

/// The errno [`isolate`] reports when the namespaces cannot be set up
/// (user namespaces not allowed, or none left).
const ISOLATE_FAILED: i32 = libc::EOPNOTSUPP;

/// True when a spawn error came from setting up the namespaces.
pub fn is_isolate_error(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(ISOLATE_FAILED)
}

/// Writes `data` to a /proc file in one write (between fork and exec).
///
/// # Safety
/// Only async-signal-safe calls: open, write, close.
unsafe fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> bool {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    let n = libc::write(fd, data.as_ptr().cast(), data.len());
    libc::close(fd);
    n == data.len() as isize
}

/// True when reading `fd` will not block: data, end of file or an error is
/// waiting.
pub fn poll_readable(fd: RawFd) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let ready = unsafe { libc::poll(&mut pfd, 1, 0) };
    ready > 0 && pfd.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
}

/// One `read(2)` into `buf`, for a descriptor [`poll_readable`] said is
/// ready (so it does not block). `Ok(0)`: end of file.
pub fn read_ready(fd: RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: reads into a live buffer of the given length; a bad
    // descriptor fails with EBADF rather than touching memory.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// True when our child `pid` has exited, without reaping it (`waitid` with
/// `WNOWAIT`), or when it is no longer our child (already reaped).
pub fn child_has_exited(pid: u32) -> bool {
    // SAFETY: waitid with WNOWAIT only inspects our own child; the siginfo
    // is zeroed and written by the kernel.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        // -1: not our child any more (already reaped): gone.
        r != 0 || info.si_pid() != 0
    }
}

/// Sends `sig` to the process group `pgid` (ignored when it is gone; never
/// to group 0 or 1, which would mean our own group or every process).
pub fn kill_group(pgid: u32, sig: i32) {
    if pgid > 1 {
        // SAFETY: killpg only sends a signal; a stale group id fails with
        // ESRCH, which we ignore.
        unsafe {
            libc::killpg(pgid as libc::pid_t, sig);
        }
    }
}

/// Sends `sig` to process `pid` (ignored when it is gone; never to pid 0 or
/// 1).
pub fn kill(pid: u32, sig: i32) {
    if pid > 1 {
        // SAFETY: kill only sends a signal; a stale pid fails with ESRCH.
        unsafe {
            libc::kill(pid as libc::pid_t, sig);
        }
    }
}

/// The CPUs this process may run on (`sched_getaffinity`), or `None` when
/// the system does not say.
pub fn allowed_cpus() -> Option<Vec<usize>> {
    #[cfg(target_os = "linux")]
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity
    // writes at most size_of::<cpu_set_t>() bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect();
            if !cpus.is_empty() {
                return Some(cpus);
            }
        }
    }
    None
}

/// Pins the calling thread (and so the processes it spawns, which inherit
/// the mask) to one CPU.
pub fn pin_current_thread(cpu: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: the set is a plain bit set built with the libc macros; pid 0
    // is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let _ = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

/// Raises this process's soft limit on open files to its hard limit (bots
/// cost descriptors: see docs/league.md); returns the limit now in force,
/// or `None` when the system does not say.
pub fn raise_open_files_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write one plain struct that
    // we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return None;
        }
        if r.rlim_cur < r.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: r.rlim_max,
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                r = raised;
            }
        }
    }
    Some(r.rlim_cur)
}
