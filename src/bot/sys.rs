//! Every `unsafe` system call of the crate, each behind a safe function
//! with its SAFETY note. Linux is the target; elsewhere the calls that have
//! no portable meaning do nothing.

use std::os::fd::RawFd;

/// A clean start for a bot process, between fork and exec, whether
/// sandboxed or not (docs/security.md):
/// - a session of its own (`setsid`): no controlling terminal, so no
///   `TIOCSTI` into the organiser's shell; the process leads its own
///   process group, which the referee kills (and freezes) as a whole;
/// - every descriptor above 2 closed at exec (`close_range` with
///   `CLOSE_RANGE_CLOEXEC`): nothing the referee inherited from its own
///   parent (a shell's `3<secret`) reaches the bot;
/// - no core dumps (`RLIMIT_CORE` = 0);
/// - death with the referee: the kernel SIGKILLs the child when the thread
///   that spawned it dies (`PR_SET_PDEATHSIG`), and it exits at once if
///   the parent is already gone. The signal follows the spawning thread, so
///   bots must be spawned from long-lived threads, as the league's workers
///   and the commands' main threads are.
pub fn start_clean(cmd: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls (setsid, setrlimit, syscall
        // close_range, fcntl, prctl, getppid, _exit) run between fork and
        // exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                close_inherited_at_exec();
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

/// Sets each `(resource, value)` of `limits` as the child's soft and hard
/// limit, between fork and exec (a bot outside the sandbox: its file size
/// and data size, docs/security.md). The spawn fails if one cannot be set.
pub fn limit_at_exec(
    cmd: &mut std::process::Command,
    limits: Vec<(libc::__rlimit_resource_t, u64)>,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only setrlimit runs between fork and exec, over a vector
    // built before the fork (nothing allocates there).
    unsafe {
        cmd.pre_exec(move || {
            for &(resource, value) in &limits {
                let r = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                if libc::setrlimit(resource, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Marks every descriptor above 2 close-on-exec (`close_range(3, ~0,
/// CLOSE_RANGE_CLOEXEC)`, Linux 5.11; on older kernels one `fcntl` per
/// descriptor up to the open-files limit, at most 65,536). The pipe
/// through which the spawn learns of a failed exec stays open until the
/// exec, as it must.
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
#[cfg(target_os = "linux")]
pub unsafe fn close_inherited_at_exec() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) == 0 {
        return;
    }
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let top = match libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) {
        0 => r.rlim_cur.min(65_536) as libc::c_int,
        _ => 1024,
    };
    for fd in 3..top {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}

/// True when reading `fd` will not block: data, end of file or an error is
/// waiting.
pub fn poll_readable(fd: RawFd) -> bool {
    poll_readable_within(fd, std::time::Duration::ZERO)
}

/// True when `fd` has something to read (or is at its end) within `wait`:
/// `poll(2)` with a timeout, rounded up to whole milliseconds.
pub fn poll_readable_within(fd: RawFd, wait: std::time::Duration) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(wait.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
    // SAFETY: one valid pollfd.
    let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
    ready > 0 && pfd.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
}

/// True when `fd`, the write end of a pipe, has no reader left (every
/// process that held the read end closed it): `poll(2)` says `POLLERR`.
pub fn reader_gone(fd: RawFd) -> bool {
    revents_now(fd, libc::POLLOUT) & libc::POLLERR != 0
}

/// True when `fd`, the read end of a pipe, has no writer left (every
/// process that held the write end closed it): `poll(2)` says `POLLHUP`.
pub fn writer_gone(fd: RawFd) -> bool {
    revents_now(fd, libc::POLLIN) & libc::POLLHUP != 0
}

/// What `poll(2)` says of `fd` asked for `events`, without waiting (0:
/// nothing).
fn revents_now(fd: RawFd, events: libc::c_short) -> libc::c_short {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd; a bad descriptor sets POLLNVAL.
    match unsafe { libc::poll(&mut pfd, 1, 0) } {
        n if n > 0 => pfd.revents,
        _ => 0,
    }
}

/// `fd` registered with the runtime's reactor for `interest` (a pipe's
/// write end for [`tokio::io::Interest::ERROR`]: its reader gone). Must
/// be called inside a tokio runtime.
pub fn watch(
    fd: std::os::fd::OwnedFd,
    interest: tokio::io::Interest,
) -> Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    // SAFETY: an `OwnedFd` is open and stays so, the same descriptor,
    // until it is dropped, which the `AsyncFd` that owns it does last.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, interest) }.ok()
}

/// Bytes in the pipe `fd` (either end) that its reader has not read yet
/// (`FIONREAD`); `None` where the descriptor cannot say.
pub fn unread_bytes(fd: RawFd) -> Option<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int into `n`; a bad descriptor fails
    // with EBADF.
    let r = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
    (r == 0).then(|| usize::try_from(n).unwrap_or(0))
}

/// Gives this thread's CPU to another runnable thread, if there is one
/// (`sched_yield(2)`).
pub fn yield_cpu() {
    // SAFETY: no arguments, no memory touched.
    unsafe { libc::sched_yield() };
}

/// One `read(2)` into `buf`: for a descriptor [`poll_readable`] said is
/// ready, or one that does not block (`WouldBlock` when it holds
/// nothing). `Ok(0)`: end of file.
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
