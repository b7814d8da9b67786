//! The sandboxed child's side, between fork and exec: namespaces, the
//! keeper, and the bot's root replayed from its plan (`view.rs`). Every
//! call here is async-signal-safe, on buffers built before the fork.

/// What the child sets up, planned before the fork.
#[derive(Debug)]
pub struct Setup {
    /// The bot's cgroups' `cgroup.procs` files, to write `0` into.
    pub cgroup_procs: Vec<std::ffi::CString>,
    /// `RLIMIT_FSIZE`, bytes.
    pub file_size: u64,
    /// `RLIMIT_DATA`, bytes: the memory limit where no cgroup could be made.
    pub data: Option<u64>,
    /// `RLIMIT_NPROC` inside the bot's own user namespace: the process
    /// limit where no cgroup could be made.
    pub processes: Option<u64>,
    /// The user and group the bot runs as outside, when the referee runs
    /// as root (a uid that owns nothing on the host); `None`: the
    /// referee's own.
    pub outside: Option<(u32, u32)>,
    /// The host's network (a build allowed it): no network namespace of
    /// its own.
    pub network: bool,
    pub view: RootPlan,
    /// Landlock, the second wall behind the view (see `landlock.rs`).
    pub wall: super::landlock::Wall,
    /// The system-call filter, installed last (see `seccomp.rs`); `None`
    /// where it could not be built (the bot's log says so).
    pub filter: Option<&'static super::seccomp::Filter>,
}

/// `want`, or the hard limit of `resource` this process inherited where
/// that is lower: no unprivileged process may raise a hard limit, so a
/// shell's `ulimit -f` (or `-d`, `-u`) below a bot's limit would otherwise
/// fail every start. The bot gets the shell's limit, and the log says so
/// once per resource.
pub fn within_hard_limit(
    resource: libc::__rlimit_resource_t,
    (what, flag): (&str, &str),
    want: u64,
) -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct it is given.
    if unsafe { libc::getrlimit(resource, &mut r) } != 0 || r.rlim_max >= want {
        return want;
    }
    static SAID: std::sync::Mutex<Vec<libc::__rlimit_resource_t>> =
        std::sync::Mutex::new(Vec::new());
    if let Ok(mut said) = SAID.lock() {
        if !said.contains(&resource) {
            said.push(resource);
            let said = |n: u64| match resource {
                libc::RLIMIT_NPROC => n.to_string(),
                _ => format!("{:.1} MiB", n as f64 / f64::from(1 << 20)),
            };
            tracing::warn!(
                "this shell's hard limit on {what} (`ulimit {flag}`) is {}, below the bots' {}: each bot gets the shell's; raise it (`ulimit -H {flag}`) to give them theirs",
                said(r.rlim_max),
                said(want)
            );
        }
    }
    r.rlim_max
}

/// A bot's `RLIMIT_FSIZE` under `limits` (`file_size_mb`), within this
/// process's hard limit ([`within_hard_limit`]).
pub fn file_size_limit(limits: &crate::bot::launch::Limits) -> u64 {
    let bytes = limits.file_size_mb.saturating_mul(1 << 20);
    within_hard_limit(libc::RLIMIT_FSIZE, ("file size", "-f"), bytes)
}

/// A bot's `RLIMIT_DATA` under `limits` (`memory_mb`, per process), where
/// no cgroup bounds its memory, within this process's hard limit.
pub fn data_size_limit(limits: &crate::bot::launch::Limits) -> u64 {
    let bytes = limits.memory_mb.saturating_mul(1 << 20);
    within_hard_limit(libc::RLIMIT_DATA, ("data size", "-d"), bytes)
}

/// Puts the child, between fork and exec, in user, PID, mount, network,
/// IPC and UTS namespaces of its own: no network (only a loopback that is
/// down), no System V IPC or POSIX queues shared with others, no other
/// process it can signal or trace (their pids do not exist in its
/// namespace), and a root of its own built from the view (see `view.rs`).
/// Inside, the user is not root ([`VIEW_UID`]), so the bot keeps no
/// capability after exec: it cannot undo its mounts. When the referee runs
/// as root, the child first becomes `setup.outside`, a user that owns
/// nothing, so that what the host keeps for root alone stays unreadable
/// even where shown. Fails (and the spawn with it) where user namespaces
/// are not allowed.
///
/// A new PID namespace takes effect for children only, so the child forks
/// once more: the grandchild is PID 1 of the namespace, its init
/// ([`reap`]), which forks the bot, PID 2, and exits when the bot ends
/// (then the kernel kills everything left in there). The bot is not PID 1
/// so that its signals work as anywhere else (the kernel drops a signal
/// sent from inside to a PID 1 without a handler: the bot's `abort()`
/// ended in SIGSEGV). The child stays outside as the keeper ([`keep`]):
/// it holds no descriptor but the pipe on which the init tells the bot's
/// wait status, waits for the init and exits as the bot did, so the
/// referee sees the bot's status. All three share the bot's process
/// group, so a group kill reaches them; each dies with its parent
/// (PR_SET_PDEATHSIG). The bot builds its root, mounts its `/proc`, joins
/// a session keyring of its own, and sets `PR_SET_NO_NEW_PRIVS`.
///
/// Before that, the child joins the bot's cgroups and the bot gets its
/// rlimits: `RLIMIT_FSIZE`, and where no cgroup could be made
/// `RLIMIT_DATA` and `RLIMIT_NPROC` (the latter counted in the bot's own
/// user namespace).
pub fn isolate(cmd: &mut std::process::Command, setup: Setup) {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid and getegid cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let (uid, gid) = setup.outside.unwrap_or((uid, gid));
    let inside = |id: u32| if id == 0 { VIEW_UID } else { id };
    // Built before the fork: nothing allocates between fork and exec.
    let uid_map = format!("{} {uid} 1\n", inside(uid));
    let gid_map = format!("{} {gid} 1\n", inside(gid));
    let parent = std::process::id() as libc::pid_t;
    // Where the referee's command line is in its memory: the namespace's
    // init, a copy of the referee the bot can see, blanks its copy, since
    // a command line is open to every process that sees it (an `arena
    // worker --token ...`'s token, say).
    let args = crate::host::own_arguments();
    // SAFETY: only async-signal-safe system calls (setrlimit, fstat,
    // pipe2, read, rt_sigaction, rt_sigprocmask, fchown, setgroups,
    // setresgid, setresuid, prctl, getppid, unshare, open, write, close,
    // fork, waitpid, kill, mkdir, rmdir, symlink, mount, chdir, pivot_root,
    // umount2, keyctl, _exit) run between fork and exec, on buffers built
    // before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let failed = || Err(std::io::Error::from_raw_os_error(ISOLATE_FAILED));
            for procs in &setup.cgroup_procs {
                if !write_proc(procs, b"0") {
                    return failed();
                }
            }
            let limit = |resource, bytes: u64| {
                let r = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                libc::setrlimit(resource, &r) == 0
            };
            if !limit(libc::RLIMIT_FSIZE, setup.file_size)
                || !setup.data.is_none_or(|b| limit(libc::RLIMIT_DATA, b))
            {
                return failed();
            }
            if let Some((uid, gid)) = setup.outside {
                if !stage(&setup.view.stage, setup.view.handed.as_ref()) {
                    return Err(std::io::Error::from_raw_os_error(VIEW_FAILED));
                }
                if !(0..3).all(|fd| give_pipe(fd, (uid, gid))) {
                    return failed();
                }
                // A credential change clears the parent-death signal and
                // dumpability: both are set again (dumpable, so that this
                // process may write its own uid_map below).
                let ok = libc::setgroups(0, std::ptr::null()) == 0
                    && libc::setresgid(gid, gid, gid) == 0
                    && libc::setresuid(uid, uid, uid) == 0;
                if !ok {
                    return failed();
                }
                libc::prctl(libc::PR_SET_DUMPABLE, 1);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
            }
            let net = match setup.network {
                true => 0,
                false => libc::CLONE_NEWNET,
            };
            let flags = libc::CLONE_NEWUSER
                | libc::CLONE_NEWPID
                | libc::CLONE_NEWNS
                | net
                | libc::CLONE_NEWIPC
                | libc::CLONE_NEWUTS;
            let set_up = libc::unshare(flags) == 0
                && write_proc(c"/proc/self/setgroups", b"deny")
                && write_proc(c"/proc/self/uid_map", uid_map.as_bytes())
                && write_proc(c"/proc/self/gid_map", gid_map.as_bytes());
            if !set_up {
                // An errno that exec never gives: the spawn's caller can
                // tell a sandbox failure from a bad command.
                return failed();
            }
            // The bot's status, from the namespace's init to the keeper.
            let mut told = [0; 2];
            if libc::pipe2(told.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // PID 1 of the namespace: it dies with the keeper.
            let init = fork_dying_with_parent()?;
            if init == 0 {
                libc::close(told[0]);
                // Hidden before the bot exists, so that it never sees the
                // init otherwise.
                hide(args);
                // The bot, PID 2: it dies with its init.
                let bot = fork_dying_with_parent()?;
                if bot == 0 {
                    // Dumpable, as any process until its exec.
                    libc::prctl(libc::PR_SET_DUMPABLE, 1);
                    libc::close(told[1]);
                    enter(&setup.view)?;
                    settle(setup.processes)?;
                    return walls(&setup.wall, setup.filter);
                }
                reap(bot, told[1])
            }
            libc::close(told[1]);
            keep(init, told[0])
        });
    }
}

/// `fork`, the child killed when its parent dies (PR_SET_PDEATHSIG): the
/// child's pid to the parent, 0 to the child.
///
/// # Safety
/// Between fork and exec: fork and prctl only.
unsafe fn fork_dying_with_parent() -> std::io::Result<libc::pid_t> {
    let pid = libc::fork();
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    Ok(pid)
}

/// Gives descriptor `fd`, where it is a pipe, to the bot's user outside.
/// The referee's pipes are made by root with mode 0600, so a bot that
/// opens `/dev/stdout` or `/dev/stderr` (a reopening through
/// `/proc/self/fd`, as shell scripts and some runtimes do) would be
/// refused; owned by the bot's user, they open as they do for any process
/// whose referee is not root. Other kinds of descriptor (`/dev/null`) are
/// left as they are.
///
/// # Safety
/// Between fork and exec: only fstat and fchown.
unsafe fn give_pipe(fd: libc::c_int, (uid, gid): (u32, u32)) -> bool {
    let mut st: libc::stat = std::mem::zeroed();
    if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFIFO {
        return true;
    }
    libc::fchown(fd, uid, gid) == 0
}

/// Makes every mount of this mount namespace private: nothing mounted here
/// reaches the host's, nor the other way.
///
/// # Safety
/// Between fork and exec: one system call.
unsafe fn make_private() -> bool {
    let none = std::ptr::null::<libc::c_char>();
    libc::mount(
        none,
        c"/".as_ptr(),
        none,
        libc::MS_REC | libc::MS_PRIVATE,
        none.cast(),
    ) == 0
}

/// Mounts each source on its staging folder, in a mount namespace of the
/// child's own (see [`RootPlan::stage`]); says which failed in the bot's
/// log.
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
unsafe fn stage(
    staged: &[(std::ffi::CString, std::ffi::CString)],
    handed: Option<&Handoff>,
) -> bool {
    let none = std::ptr::null::<libc::c_char>();
    if libc::unshare(libc::CLONE_NEWNS) != 0 || !make_private() {
        return fail(b"stage the view in", c"a mount namespace").is_ok();
    }
    for (src, at) in staged {
        let bind = libc::MS_BIND | libc::MS_REC;
        if libc::mount(src.as_ptr(), at.as_ptr(), none, bind, none.cast()) != 0 {
            return fail(b"stage", src).is_ok();
        }
    }
    handed.is_none_or(|h| hand_over(h))
}

/// Mounts the build's folder `h` and hands it to the referee, then waits
/// for its word that the folder is filled (see [`Handoff`]); says what
/// failed in the build's log.
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls (mount, open,
/// sendmsg, read, close), on `h`'s buffers and the stack.
unsafe fn hand_over(h: &Handoff) -> bool {
    let tmpfs = c"tmpfs".as_ptr();
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    if libc::mount(
        tmpfs,
        h.at.as_ptr(),
        tmpfs,
        flags,
        h.options.as_ptr().cast(),
    ) != 0
    {
        return fail(b"mount the build's folder at", &h.at).is_ok();
    }
    let fd = libc::open(
        h.at.as_ptr(),
        libc::O_DIRECTORY | libc::O_RDONLY | libc::O_CLOEXEC,
    );
    if fd < 0 {
        return fail(b"open the build's folder", &h.at).is_ok();
    }
    let mut byte = [1u8];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // Room for one cmsghdr and one descriptor (CMSG_SPACE(4) is 24 here),
    // aligned as a cmsghdr.
    let mut room = [0u64; 8];
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = room.as_mut_ptr().cast();
    msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as _;
    let c = libc::CMSG_FIRSTHDR(&msg);
    if c.is_null() {
        return fail(b"hand over the build's folder", &h.at).is_ok();
    }
    (*c).cmsg_level = libc::SOL_SOCKET;
    (*c).cmsg_type = libc::SCM_RIGHTS;
    (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
    std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>(), fd);
    let sent = libc::sendmsg(h.sock, &msg, libc::MSG_NOSIGNAL);
    libc::close(fd);
    if sent != 1 {
        return fail(b"hand over the build's folder", &h.at).is_ok();
    }
    let mut go = [0u8];
    let got = loop {
        let n = libc::read(h.sock, go.as_mut_ptr().cast(), 1);
        if n >= 0 || *libc::__errno_location() != libc::EINTR {
            break n;
        }
    };
    if got != 1 || go[0] != 1 {
        return fail(
            b"fill the build's folder (its files are over the build's quota?) at",
            &h.at,
        )
        .is_ok();
    }
    true
}

/// The walls behind the view, last before exec: Landlock (file access to
/// what is shown, writes to `/tmp`; TCP, abstract sockets and signals
/// where the kernel's ABI has them), then the system-call filter, which
/// refuses even Landlock's own calls. A wall the kernel does not have is
/// said in the bot's log, never silently left out.
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
unsafe fn walls(
    wall: &super::landlock::Wall,
    filter: Option<&super::seccomp::Filter>,
) -> std::io::Result<()> {
    let say = |parts: &[&[u8]]| {
        for p in parts {
            libc::write(2, p.as_ptr().cast(), p.len());
        }
    };
    match wall.restrict() {
        Ok(0) => say(&[b"arena sandbox: Landlock is not available in this kernel: the mount view alone limits files\n"]),
        Ok(_) => {}
        Err(_) => say(&[b"arena sandbox: Landlock could not be applied: the mount view alone limits files\n"]),
    }
    match filter {
        Some(f) => {
            if f.install().is_err() {
                say(&[b"arena sandbox: the system-call filter could not be installed (no seccomp here?): system calls are not filtered\n"]);
            }
        }
        None => say(&[b"arena sandbox: no system-call filter for this machine: system calls are not filtered\n"]),
    }
    Ok(())
}

/// The bot's last steps before exec, inside its root: a session keyring of
/// its own (the one it inherited is shared with the organiser), its
/// process limit, and `PR_SET_NO_NEW_PRIVS` (no set-uid program can give
/// it back what it lost).
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
unsafe fn settle(processes: Option<u64>) -> std::io::Result<()> {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    let none = std::ptr::null::<libc::c_char>();
    if libc::syscall(libc::SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, none) < 0 {
        let note = b"arena sandbox: no session keyring of its own could be made (keyctl is refused to the bot all the same)\n";
        libc::write(2, note.as_ptr().cast(), note.len());
    }
    if let Some(n) = processes {
        let r = libc::rlimit {
            rlim_cur: n,
            rlim_max: n,
        };
        if libc::setrlimit(libc::RLIMIT_NPROC, &r) != 0 {
            return Err(std::io::Error::from_raw_os_error(ISOLATE_FAILED));
        }
    }
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        return Err(std::io::Error::from_raw_os_error(ISOLATE_FAILED));
    }
    Ok(())
}

/// The user and group id a sandboxed bot has inside its namespace when
/// the referee runs as root: any id but 0, so that exec leaves the bot no
/// capability.
pub const VIEW_UID: u32 = 1000;

/// One step of building a sandboxed bot's root; every path but a bind's
/// source and a link's target is already under the new root.
#[derive(Debug)]
pub enum MountStep {
    /// An empty folder (nothing if it exists).
    Dir(std::ffi::CString),
    /// An empty file, to bind a file over.
    File(std::ffi::CString),
    Symlink {
        target: std::ffi::CString,
        link: std::ffi::CString,
    },
    /// `src` shown at `dst`, with what is mounted inside it; read-only with
    /// these flags (those the kernel will not let us drop), or writable.
    /// `src` is the path itself or its staged copy; `name` is the path,
    /// for messages.
    Bind {
        src: std::ffi::CString,
        name: std::ffi::CString,
        dst: std::ffi::CString,
        read_only: Option<libc::c_ulong>,
    },
    /// The empty file `src` mounted read-only over `dst` (a masked file,
    /// socket or FIFO).
    Mask {
        src: std::ffi::CString,
        dst: std::ffi::CString,
    },
    /// A mount that came with a bind, made read-only too.
    ReadOnly {
        dst: std::ffi::CString,
        flags: libc::c_ulong,
    },
    /// An empty read-only folder over `dst` (a hidden folder).
    Empty(std::ffi::CString),
    /// A fresh writable tmpfs at `dst` (`options`: its mode and size).
    Scratch {
        dst: std::ffi::CString,
        options: std::ffi::CString,
    },
    /// A build's folder, a tmpfs bounded by the kernel (see [`Handoff`]).
    Handed(Handoff),
    /// The `/proc` of the bot's PID namespace at `dst`, then `masks`
    /// (host-wide files and folders emptied, host-wide counters replaced
    /// by the bot's own), and `sys` (its `/proc/sys`) made read-only.
    Proc {
        dst: std::ffi::CString,
        masks: Vec<MountStep>,
        sys: std::ffi::CString,
    },
}

/// A sandboxed bot's root: built at `root` from `steps`, then made `/`;
/// the bot starts in `cwd`.
#[derive(Debug)]
pub struct RootPlan {
    pub root: std::ffi::CString,
    /// Files of the bot's own, written before the steps (see [`OwnFiles`]).
    pub own: OwnFiles,
    pub steps: Vec<MountStep>,
    pub cwd: std::ffi::CString,
    /// Sources to mount on staging folders (`(source, stage)`) while the
    /// child is still the referee's root user, before it becomes the bot's
    /// user (see `view::Steps`); empty when it stays the referee's user.
    pub stage: Vec<(std::ffi::CString, std::ffi::CString)>,
    /// A build's folder mounted on a staging folder while the child is
    /// still root (then bound as the others are), handed to the referee
    /// there; `None` when it stays the referee's user (then it is a
    /// [`MountStep::Handed`] among `steps`) or does not build.
    pub handed: Option<Handoff>,
}

/// A build's folder as the kernel bounds it (issue 47): a fresh tmpfs at
/// `at` whose `options` give its size and inodes (`size=`, `nr_inodes=`:
/// past them, writes fail with ENOSPC), handed to the referee over the
/// socket `sock` (its descriptor, with SCM_RIGHTS). The referee fills it
/// with the bot's files and answers one byte, 1, before the child goes
/// on; after the build it copies what the build made out of it, through
/// that descriptor, and the tmpfs goes with the last of them.
#[derive(Debug)]
pub struct Handoff {
    pub at: std::ffi::CString,
    pub options: std::ffi::CString,
    pub sock: libc::c_int,
}

/// The sources of what is mounted over masked paths: an empty file, and
/// the bot's own values of the host-wide counters of `/proc` (its memory
/// limit as `meminfo`, constants for `sys/fs/file-nr` and the like). They
/// are written, before the steps, in a small tmpfs of the bot's own at
/// `dir` (a folder under the new root), which is detached and removed
/// before the root is made `/`: the masks keep it, and the mount table
/// names only that tmpfs (`/empty`, `/meminfo`), never a host path.
#[derive(Debug)]
pub struct OwnFiles {
    pub dir: std::ffi::CString,
    /// Each file's path (under `dir`) and content.
    pub files: Vec<(std::ffi::CString, Vec<u8>)>,
}

/// The mount flags that [`MountStep::Bind`] must keep when it remounts
/// `path` read-only (a user namespace may add restrictions to a mount, not
/// drop them), plus `nosuid` and `nodev`.
pub fn locked_flags(path: &std::path::Path) -> libc::c_ulong {
    use std::os::unix::ffi::OsStrExt;
    let keep = libc::ST_NOSUID
        | libc::ST_NODEV
        | libc::ST_NOEXEC
        | libc::ST_NOATIME
        | libc::ST_NODIRATIME
        | libc::ST_RELATIME;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return libc::MS_NOSUID | libc::MS_NODEV;
    };
    // SAFETY: statvfs fills a zeroed plain struct that we own, from a
    // NUL-terminated path.
    let flags = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) == 0 {
            st.f_flag & keep
        } else {
            0
        }
    };
    // ST_* and MS_* share their values.
    flags as libc::c_ulong | libc::MS_NOSUID | libc::MS_NODEV
}

/// Every mount point of this process's mount namespace that is not
/// covered by a later mount (/proc/self/mountinfo), `\040`-style escapes
/// undone.
pub fn mount_points() -> Vec<std::path::PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let unescape = |s: &str| {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            let octal = b.get(i + 1..i + 4).and_then(|o| {
                std::str::from_utf8(o)
                    .ok()
                    .and_then(|o| u8::from_str_radix(o, 8).ok())
            });
            match (b[i], octal) {
                (b'\\', Some(v)) => {
                    out.push(v);
                    i += 4;
                }
                (c, _) => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        std::path::PathBuf::from(std::ffi::OsString::from_vec(out))
    };
    let all: Vec<std::path::PathBuf> = info
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(unescape))
        .collect();
    // A mount that a later one covers (mounted on it or on a folder above
    // it) cannot be reached, and cannot be remounted: it is left out.
    all.iter()
        .enumerate()
        .filter(|(i, m)| !all[i + 1..].iter().any(|later| m.starts_with(later)))
        .map(|(_, m)| m.clone())
        .collect()
}

/// Builds the bot's root from `view` and makes it `/` (see [`RootPlan`]).
/// On failure, says which step failed on stderr (the bot's log) and
/// returns [`VIEW_FAILED`].
///
/// # Safety
/// Between fork and exec, as the bot, in its namespaces: only
/// async-signal-safe calls, on buffers built before the fork.
unsafe fn enter(view: &RootPlan) -> std::io::Result<()> {
    let root = view.root.as_ptr();
    if !make_private() {
        return fail(b"make private", c"/");
    }
    let tmpfs = c"tmpfs".as_ptr();
    let opts = c"mode=0755,size=1m";
    if libc::mount(
        tmpfs,
        root,
        tmpfs,
        libc::MS_NOSUID | libc::MS_NODEV,
        opts.as_ptr().cast(),
    ) != 0
    {
        return fail(b"mount a root at", &view.root);
    }
    write_own(&view.own)?;
    for step in &view.steps {
        take(step)?;
    }
    // The masks hold what they need of the bot's own files: their folder
    // goes, so that nothing of it is left in the root.
    if libc::umount2(view.own.dir.as_ptr(), libc::MNT_DETACH) != 0
        || libc::rmdir(view.own.dir.as_ptr()) != 0
    {
        return fail(b"remove", &view.own.dir);
    }
    if !remount_read_only(&view.root, libc::MS_NOSUID | libc::MS_NODEV) {
        return fail(b"make read-only", &view.root);
    }
    // pivot_root(".", "."): the old root ends up on top of the new one and
    // is detached at once (pivot_root(2)); nothing of it stays reachable.
    let dot = c".".as_ptr();
    if libc::chdir(root) != 0
        || libc::syscall(libc::SYS_pivot_root, dot, dot) != 0
        || libc::umount2(dot, libc::MNT_DETACH) != 0
        || libc::chdir(c"/".as_ptr()) != 0
    {
        return fail(b"enter the root", &view.root);
    }
    if libc::chdir(view.cwd.as_ptr()) != 0 {
        return fail(b"enter the working folder", &view.cwd);
    }
    Ok(())
}

/// Writes the bot's own files (see [`OwnFiles`]) in a fresh tmpfs at
/// their folder, read-only for everyone.
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
unsafe fn write_own(own: &OwnFiles) -> std::io::Result<()> {
    let tmpfs = c"tmpfs".as_ptr();
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    if libc::mkdir(own.dir.as_ptr(), 0o755) != 0
        || libc::mount(
            tmpfs,
            own.dir.as_ptr(),
            tmpfs,
            flags,
            c"mode=0755,size=64k".as_ptr().cast(),
        ) != 0
    {
        return fail(b"mount its own files at", &own.dir);
    }
    for (path, content) in &own.files {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
            0o444,
        );
        if fd < 0 {
            return fail(b"write", path);
        }
        let mut at = 0;
        while at < content.len() {
            let n = libc::write(fd, content[at..].as_ptr().cast(), content.len() - at);
            if n <= 0 {
                libc::close(fd);
                return fail(b"write", path);
            }
            at += n as usize;
        }
        libc::close(fd);
    }
    Ok(())
}

/// Says which step failed on stderr (the bot's log); [`VIEW_FAILED`].
///
/// # Safety
/// Between fork and exec: write only.
unsafe fn fail(what: &[u8], path: &std::ffi::CStr) -> std::io::Result<()> {
    for part in [
        b"arena sandbox: cannot ".as_slice(),
        what,
        b" ",
        path.to_bytes(),
        b"\n",
    ] {
        libc::write(2, part.as_ptr().cast(), part.len());
    }
    Err(std::io::Error::from_raw_os_error(VIEW_FAILED))
}

/// One step of [`enter`].
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
unsafe fn take(step: &MountStep) -> std::io::Result<()> {
    let none = std::ptr::null::<libc::c_char>();
    let tmpfs = c"tmpfs".as_ptr();
    match step {
        MountStep::Dir(p) => {
            if libc::mkdir(p.as_ptr(), 0o755) != 0 && *libc::__errno_location() != libc::EEXIST {
                return fail(b"make the folder", p);
            }
        }
        MountStep::File(p) => {
            let fd = libc::open(
                p.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            );
            if fd < 0 {
                return fail(b"make the file", p);
            }
            libc::close(fd);
        }
        MountStep::Symlink { target, link } => {
            if libc::symlink(target.as_ptr(), link.as_ptr()) != 0 {
                return fail(b"link", link);
            }
        }
        MountStep::Bind {
            src,
            name,
            dst,
            read_only,
        } => {
            let bind = libc::MS_BIND | libc::MS_REC;
            if libc::mount(src.as_ptr(), dst.as_ptr(), none, bind, none.cast()) != 0 {
                return fail(b"show", name);
            }
            if let Some(flags) = read_only {
                if !remount_read_only(dst, *flags) {
                    return fail(b"make read-only", name);
                }
            }
        }
        MountStep::Mask { src, dst } => {
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(src.as_ptr(), dst.as_ptr(), none, libc::MS_BIND, none.cast()) != 0
                || !remount_read_only(dst, flags)
            {
                return fail(b"mask", dst);
            }
        }
        MountStep::ReadOnly { dst, flags } => {
            // A mount the kernel will not let us touch stays as it was
            // only if it is already read-only.
            if !remount_read_only(dst, *flags) {
                return fail(b"make read-only", dst);
            }
        }
        MountStep::Empty(p) => {
            let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(
                tmpfs,
                p.as_ptr(),
                tmpfs,
                flags,
                c"mode=0555,size=4k".as_ptr().cast(),
            ) != 0
            {
                return fail(b"hide", p);
            }
        }
        MountStep::Scratch { dst, options } => {
            let flags = libc::MS_NOSUID | libc::MS_NODEV;
            if libc::mount(tmpfs, dst.as_ptr(), tmpfs, flags, options.as_ptr().cast()) != 0 {
                return fail(b"mount a scratch /tmp at", dst);
            }
        }
        MountStep::Handed(h) => {
            if !hand_over(h) {
                return Err(std::io::Error::from_raw_os_error(VIEW_FAILED));
            }
        }
        MountStep::Proc { dst, masks, sys } => {
            let proc_ = c"proc".as_ptr();
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(proc_, dst.as_ptr(), proc_, flags, none.cast()) != 0 {
                // A container that masks parts of /proc forbids a new
                // one: the bot runs without /proc (it sees less, not
                // more; most interpreters start without it, the JVM
                // does not), and its log says so.
                let note = b"arena sandbox: no /proc of its own could be mounted here (a container that masks /proc?); the bot runs without /proc\n";
                libc::write(2, note.as_ptr().cast(), note.len());
                return Ok(());
            }
            for m in masks {
                take(m)?;
            }
            let bind = libc::MS_BIND | libc::MS_REC;
            if libc::mount(sys.as_ptr(), sys.as_ptr(), none, bind, none.cast()) != 0
                || !remount_read_only(sys, flags)
            {
                return fail(b"make read-only", sys);
            }
        }
    }
    Ok(())
}

/// Remounts the mount at `dst` read-only, keeping `flags`.
///
/// # Safety
/// Between fork and exec: one system call.
unsafe fn remount_read_only(dst: &std::ffi::CStr, flags: libc::c_ulong) -> bool {
    let none = std::ptr::null::<libc::c_char>();
    let flags = flags | libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
    libc::mount(none, dst.as_ptr(), none, flags, none.cast()) == 0
}

/// Lets go of every descriptor but `fd`: the bot's pipes, and the pipe
/// through which the spawn learns of the exec, which must close when the
/// bot execs.
///
/// # Safety
/// Between fork and exec: close_range only.
unsafe fn close_all_but(fd: libc::c_int) {
    let fd = fd as u32;
    if fd > 0 {
        libc::syscall(libc::SYS_close_range, 0u32, fd - 1, 0u32);
    }
    libc::syscall(libc::SYS_close_range, fd + 1, u32::MAX, 0u32);
}

/// Waits for child `pid`, going on after a signal; `None` on any other
/// failure.
///
/// # Safety
/// Between fork and exec: waitpid only.
unsafe fn wait_for(pid: libc::pid_t) -> Option<libc::c_int> {
    let mut status = 0;
    loop {
        let r = libc::waitpid(pid, &mut status, 0);
        if r == pid {
            return Some(status);
        }
        if r < 0 && *libc::__errno_location() != libc::EINTR {
            return None;
        }
    }
}

/// Hides the namespace's init, a copy of the referee, from the bot: not
/// dumpable (the bot cannot read its environ, memory or descriptors),
/// without the referee's signal handlers (so that the kernel drops every
/// signal the bot sends it), and its command line, at `args` (see
/// [`crate::host::own_arguments`]), blanked (its length still shows).
///
/// # Safety
/// Between fork and exec: prctl, and writes to this process's own
/// command line.
unsafe fn hide(args: Option<(usize, usize)>) {
    libc::prctl(libc::PR_SET_DUMPABLE, 0);
    // No handler of the referee's: as PID 1 without a handler, the init
    // gets no signal sent from inside the namespace.
    for sig in 1..=64 {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            to_default(sig);
        }
    }
    if let Some((start, end)) = args {
        std::ptr::write_bytes(start as *mut u8, 0, end - start);
    }
}

/// The life of the namespace's init, PID 1 (see [`isolate`]), once
/// hidden ([`hide`]): lets go of every descriptor but `told`, reaps what ends in
/// the namespace until the bot does, then writes the bot's wait status
/// to `told` for the keeper and exits, which ends every process left in
/// the namespace. As PID 1 it ignores every signal sent from inside, so
/// the bot cannot end it; the bot, PID 2, gets its own signals as any
/// process does (its `abort()` is a SIGABRT). Never returns.
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
unsafe fn reap(bot: libc::pid_t, told: libc::c_int) -> ! {
    close_all_but(told);
    loop {
        let mut status = 0;
        let r = libc::waitpid(-1, &mut status, 0);
        if r == bot {
            let bytes = status.to_ne_bytes();
            libc::write(told, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(0);
        }
        if r < 0 && *libc::__errno_location() != libc::EINTR {
            libc::_exit(127);
        }
    }
}

/// The keeper's life (see [`isolate`]): hides its memory, lets go of
/// every descriptor but `told`, waits for the namespace's init and ends
/// as the bot ended, as the init `told` it (as the init ended when it
/// could not tell: killed with the group, say). Never returns.
///
/// # Safety
/// Between fork and exec: only async-signal-safe calls.
unsafe fn keep(init: libc::pid_t, told: libc::c_int) -> ! {
    // The keeper is a copy of the referee, memory and environment included,
    // in the bot's user namespace: not dumpable, so that the bot cannot
    // read its /proc/PID/environ or mem.
    libc::prctl(libc::PR_SET_DUMPABLE, 0);
    close_all_but(told);
    let Some(mut status) = wait_for(init) else {
        libc::_exit(127)
    };
    let mut bytes = [0u8; 4];
    if libc::read(told, bytes.as_mut_ptr().cast(), bytes.len()) == bytes.len() as isize {
        status = libc::c_int::from_ne_bytes(bytes);
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        to_default(sig);
        libc::kill(libc::getpid(), sig);
        // Not ended by it (it cannot be: the referee's handlers are gone):
        // a kill all the same, never the `exit 0` of a bot that quit.
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

/// Gives signal `sig` its default action, unblocked, through the kernel
/// itself: glibc's `signal` and `sigprocmask` refuse its own signals 32
/// and 33, and a copy of the referee has a handler for 33 (glibc's
/// SIGSETXID), so a bot killed by signal 33 was told as `exited (status
/// 0)`.
///
/// # Safety
/// Between fork and exec: rt_sigaction and rt_sigprocmask only.
unsafe fn to_default(sig: libc::c_int) {
    // The kernel's `struct sigaction`, all zero: SIG_DFL, no flags, no
    // mask, whatever the order of its fields on this architecture.
    let default = [0u64; 4];
    let none = std::ptr::null::<u64>();
    libc::syscall(libc::SYS_rt_sigaction, sig, default.as_ptr(), none, 8usize);
    let set: u64 = 1 << (sig - 1);
    libc::syscall(
        libc::SYS_rt_sigprocmask,
        libc::SIG_UNBLOCK,
        &set,
        none,
        8usize,
    );
}

/// The errno [`isolate`] reports when the namespaces cannot be set up
/// (user namespaces not allowed, or none left).
const ISOLATE_FAILED: i32 = libc::EOPNOTSUPP;

/// The errno [`isolate`] reports when the bot's root cannot be built (the
/// step that failed is named in the bot's log).
pub const VIEW_FAILED: i32 = libc::ENOTRECOVERABLE;

/// True when a spawn error came from setting up the namespaces.
pub fn is_isolate_error(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(ISOLATE_FAILED | VIEW_FAILED))
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
