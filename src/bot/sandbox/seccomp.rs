//! The system-call wall (issue 28, item 5): a seccomp-BPF allowlist for bot
//! processes. Built in ordinary code before the fork ([`Filter::for_bots`],
//! cached by [`bot_filter`]), installed in the child between fork and exec
//! by [`Filter::install`], which allocates nothing and takes no lock (the
//! referee is multi-threaded).
//!
//! What is allowed: what ordinary programs and language runtimes need
//! (glibc, CPython, Node/V8 and libuv, the JVM, Rust's std, Go's runtime;
//! Docker's default profile was the reference), with argument checks on
//! `socket`/`socketpair` (`AF_UNIX` only), `clone` (no `CLONE_NEW*`
//! namespace flag), `ioctl` (not `TIOCSTI` nor `TIOCLINUX`), `fcntl` (no
//! lock, lease or notify command) and `personality` (only `PER_LINUX` and
//! the query `0xffffffff`). Everything else fails with `EPERM` (an errno, so
//! a runtime that probes a call goes on without it), but `clone3`, which
//! fails with `ENOSYS` so that glibc falls back to `clone`, whose flags the
//! filter can read (clone3's are behind a pointer). A system call made with
//! a foreign architecture's convention (`int 0x80` on x86_64) kills the
//! process; x32 numbers on x86_64 match nothing and get `EPERM`.
//!
//! Denied on purpose (see [`DENIED`]): debugging other processes (`ptrace`,
//! `process_vm_*`, `kcmp`, `pidfd_getfd`), the keyring, `bpf`,
//! `perf_event_open`, `userfaultfd`, every mount and namespace call,
//! modules and `kexec`, `inotify`/`fanotify` and `flock` (channels between
//! bots that share a read-only file; `flock` is answered with a success
//! that locks nothing, see [`ANSWERED`]), `io_uring` (its operations bypass
//! seccomp), `setsid`/`setpgid` (the referee freezes a bot by signalling
//! its process group: no process may leave it), `sched_setaffinity` (a
//! bot stays on the CPU it is pinned to), and the clock, swap, reboot,
//! quota, handle, syslog, port I/O and accounting calls.
//!
//! Why `seccompiler` (Firecracker's, pure Rust) rather than `libseccomp`:
//! no C library to find at build time or on the organiser's machine, and
//! it compiles rules with argument conditions to a plain `Vec` of BPF
//! instructions before the fork, which is all the child needs. Its one gap,
//! a single action for every allowed call, is filled by a short prefix of
//! our own that answers `clone3` with `ENOSYS` and `flock` with a success
//! that does nothing (see [`ANSWERED`]).
//!
//! Order in the child: whatever must still call `setsid`, `unshare`,
//! `mount`, `pivot_root` or Landlock runs first; [`Filter::install`] last,
//! right before exec.

use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Why the bots' filter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// This crate has no system-call list for the machine's architecture.
    #[error("no seccomp filter for the {0} architecture (x86_64 and aarch64 only)")]
    UnsupportedArch(&'static str),
    /// `seccompiler` refused the rules.
    #[error("the seccomp filter could not be compiled: {0}")]
    Compile(#[from] BackendError),
    /// The program is longer than a `sock_fprog` can say.
    #[error("the seccomp filter has {0} instructions, more than the kernel takes")]
    TooLong(usize),
}

/// A compiled seccomp program, ready to be installed in a child.
pub struct Filter {
    program: Vec<libc::sock_filter>,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("instructions", &self.program.len())
            .finish()
    }
}

/// The bots' filter, compiled on first use and kept: `None` (with the
/// reason logged once) where it cannot be built, for the caller to say
/// that this wall is missing.
pub fn bot_filter() -> Option<&'static Filter> {
    static FILTER: OnceLock<Option<Filter>> = OnceLock::new();
    FILTER
        .get_or_init(|| match Filter::for_bots() {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::warn!("bots run without a system-call filter: {e}");
                None
            }
        })
        .as_ref()
}

/// The filter of a build that the league lets use the network: the bots'
/// filter, with `AF_INET` and `AF_INET6` sockets allowed too.
pub fn network_filter() -> Option<&'static Filter> {
    static FILTER: OnceLock<Option<Filter>> = OnceLock::new();
    FILTER
        .get_or_init(|| match Filter::with_network(true) {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::warn!("builds run without a system-call filter: {e}");
                None
            }
        })
        .as_ref()
}

impl Filter {
    /// The allowlist for bot processes described in the module doc.
    pub fn for_bots() -> Result<Filter, FilterError> {
        Filter::with_network(false)
    }

    /// The bots' allowlist; with `network`, internet sockets allowed.
    fn with_network(network: bool) -> Result<Filter, FilterError> {
        let arch = target_arch()?;
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        for &nr in ALLOWED {
            rules.insert(nr, Vec::new());
        }
        for (nr, chain) in conditional_rules(network)? {
            rules.insert(nr, chain);
        }
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Errno(libc::EPERM as u32),
            SeccompAction::Allow,
            arch,
        )?;
        let compiled: BpfProgram = filter.try_into()?;
        // Our prefix: the architecture check (a foreign convention would
        // give other numbers their meaning), then clone3 -> ENOSYS.
        // seccompiler's program follows and checks the architecture again.
        let mut program = vec![
            stmt(LD_ABS, SECCOMP_DATA_ARCH),
            jump(JEQ_K, audit_arch(), 1, 0),
            stmt(RET_K, libc::SECCOMP_RET_KILL_PROCESS),
            stmt(LD_ABS, SECCOMP_DATA_NR),
        ];
        for &(nr, errno) in ANSWERED {
            program.push(jump(JEQ_K, nr as u32, 0, 1));
            program.push(stmt(RET_K, libc::SECCOMP_RET_ERRNO | errno as u32));
        }
        program.extend(compiled.iter().map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        }));
        if program.len() > usize::from(u16::MAX) || program.len() > BPF_MAXINSNS {
            return Err(FilterError::TooLong(program.len()));
        }
        Ok(Filter { program })
    }

    /// The number of BPF instructions.
    pub fn len(&self) -> usize {
        self.program.len()
    }

    /// Never true for a built filter (clippy asks for it beside `len`).
    pub fn is_empty(&self) -> bool {
        self.program.is_empty()
    }

    /// Installs the filter on the calling thread (and what it will exec):
    /// `PR_SET_NO_NEW_PRIVS`, then `seccomp(SECCOMP_SET_MODE_FILTER, 0)`.
    /// The errno of the call that failed otherwise.
    ///
    /// # Safety
    /// Meant for the child between fork and exec: it only makes two system
    /// calls on memory built before the fork (async-signal-safe). Every
    /// system call after it, exec included, goes through the filter.
    pub unsafe fn install(&self) -> Result<(), i32> {
        let prog = libc::sock_fprog {
            // Checked against u16::MAX in `for_bots`.
            len: self.program.len() as u16,
            filter: self.program.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(errno());
        }
        // SAFETY: `prog` points at `self.program`, alive for the call; the
        // kernel copies the program.
        let r = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0 as libc::c_uint,
                &prog as *const libc::sock_fprog,
            )
        };
        if r != 0 {
            return Err(errno());
        }
        Ok(())
    }
}

/// Calls that never run and are answered by the filter, before the
/// allowlist: `(number, errno)`, where errno 0 is a success.
///
/// - `clone3`: `ENOSYS`, so that glibc (2.34+ creates threads with it)
///   falls back to `clone`, whose flags the filter can check.
/// - `flock`: 0, a lock that is never taken. Denying it with `EPERM` broke
///   the JVM: HotSpot (17.0.15 here, since JDK-8286030) flocks its
///   `/tmp/hsperfdata_*` file and, when that fails, prints a warning on
///   *stdout*, which the referee reads as a `bad_json` fault before the
///   bot's hello (seen in `shipped_bots_start_and_play_under_the_filter`).
///   A flock that always succeeds and locks nothing carries no bit between
///   bots that share a file (`flock_passes_no_bit`), which is what the
///   denial was for; a bot that locks between its own processes gets no
///   exclusion.
pub const ANSWERED: &[(i64, i32)] = &[(libc::SYS_clone3, libc::ENOSYS), (libc::SYS_flock, 0)];

/// The calling thread's errno, read without allocating.
fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

// Classic BPF, as in <linux/filter.h> and <linux/seccomp.h>.
const LD_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
/// `offsetof(struct seccomp_data, nr)` and `arch`.
const SECCOMP_DATA_NR: u32 = 0;
const SECCOMP_DATA_ARCH: u32 = 4;
/// `BPF_MAXINSNS`: the kernel's limit on a classic BPF program.
const BPF_MAXINSNS: usize = 4096;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// `AUDIT_ARCH_*` of this build (<linux/audit.h>): the ELF machine with the
/// 64-bit and little-endian bits.
fn audit_arch() -> u32 {
    const BITS_64_LE: u32 = 0x8000_0000 | 0x4000_0000;
    if cfg!(target_arch = "aarch64") {
        183 | BITS_64_LE
    } else {
        62 | BITS_64_LE
    }
}

fn target_arch() -> Result<TargetArch, FilterError> {
    if cfg!(target_arch = "x86_64") {
        Ok(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Ok(TargetArch::aarch64)
    } else {
        Err(FilterError::UnsupportedArch(std::env::consts::ARCH))
    }
}

/// A condition on the low 32 bits of argument `arg` (every argument checked
/// here is an `int` or `unsigned int` to the kernel, which ignores the high
/// half).
fn arg32(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
}

/// The `CLONE_NEW*` flags that `clone` reads (`CLONE_NEWTIME` shares the
/// exit-signal byte there and works with `clone3` and `unshare` only, both
/// denied).
const CLONE_NAMESPACES: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u64;

/// `PER_LINUX` (<linux/personality.h>): the one personality a bot may set.
const PER_LINUX: u64 = 0;

/// The `fcntl` commands that lock, lease or watch a file (channels between
/// processes that share it).
pub const FCNTL_DENIED: &[libc::c_int] = &[
    libc::F_GETLK,
    libc::F_SETLK,
    libc::F_SETLKW,
    libc::F_OFD_GETLK,
    libc::F_OFD_SETLK,
    libc::F_OFD_SETLKW,
    libc::F_SETLEASE,
    libc::F_GETLEASE,
    libc::F_NOTIFY,
];

/// The allowed calls whose arguments are checked; any other argument gets
/// `EPERM`. Within a chain, rules are alternatives and a rule's conditions
/// must all hold.
// `libc::Ioctl` is u64 here but c_int on other libcs: the casts stay.
#[allow(clippy::unnecessary_cast)]
fn conditional_rules(network: bool) -> Result<Vec<(i64, Vec<SeccompRule>)>, BackendError> {
    use SeccompCmpOp::{Eq, MaskedEq, Ne};
    let families: &[i32] = match network {
        true => &[libc::AF_UNIX, libc::AF_INET, libc::AF_INET6],
        false => &[libc::AF_UNIX],
    };
    let unix_only = || -> Result<Vec<SeccompRule>, BackendError> {
        families
            .iter()
            .map(|&f| SeccompRule::new(vec![arg32(0, Eq, f as u64)?]))
            .collect()
    };
    let fcntl = SeccompRule::new(
        FCNTL_DENIED
            .iter()
            .map(|&c| arg32(1, Ne, c as u64))
            .collect::<Result<_, _>>()?,
    )?;
    Ok(vec![
        (libc::SYS_socket, unix_only()?),
        (libc::SYS_socketpair, unix_only()?),
        (
            libc::SYS_clone,
            vec![SeccompRule::new(vec![arg32(
                0,
                MaskedEq(CLONE_NAMESPACES),
                0,
            )?])?],
        ),
        (
            libc::SYS_ioctl,
            vec![SeccompRule::new(vec![
                arg32(1, Ne, libc::TIOCSTI as u64)?,
                arg32(1, Ne, libc::TIOCLINUX as u64)?,
            ])?],
        ),
        (libc::SYS_fcntl, vec![fcntl]),
        (
            libc::SYS_personality,
            vec![
                SeccompRule::new(vec![arg32(0, Eq, PER_LINUX)?])?,
                SeccompRule::new(vec![arg32(0, Eq, 0xffff_ffff)?])?,
            ],
        ),
    ])
}

// Calls numbered alike on every architecture since 424, missing from the
// `libc` crate's tables for these targets.
const SYS_CACHESTAT: i64 = 451;
const SYS_FCHMODAT2: i64 = 452;
#[cfg(target_arch = "x86_64")]
const SYS_MAP_SHADOW_STACK: i64 = 453;

/// Allowed whatever their arguments.
pub const ALLOWED: &[i64] = &[
    // Files and descriptors.
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_preadv,
    libc::SYS_pwritev,
    libc::SYS_preadv2,
    libc::SYS_pwritev2,
    libc::SYS_openat,
    libc::SYS_openat2,
    libc::SYS_close,
    libc::SYS_close_range,
    libc::SYS_lseek,
    libc::SYS_fstat,
    libc::SYS_newfstatat,
    libc::SYS_statx,
    libc::SYS_statfs,
    libc::SYS_fstatfs,
    libc::SYS_faccessat,
    libc::SYS_faccessat2,
    libc::SYS_getdents64,
    libc::SYS_getcwd,
    libc::SYS_chdir,
    libc::SYS_fchdir,
    libc::SYS_mkdirat,
    libc::SYS_unlinkat,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_linkat,
    libc::SYS_symlinkat,
    libc::SYS_readlinkat,
    libc::SYS_mknodat,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    SYS_FCHMODAT2,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_umask,
    libc::SYS_truncate,
    libc::SYS_ftruncate,
    libc::SYS_fallocate,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_syncfs,
    libc::SYS_sync_file_range,
    libc::SYS_fadvise64,
    libc::SYS_readahead,
    libc::SYS_utimensat,
    libc::SYS_dup,
    libc::SYS_dup3,
    libc::SYS_pipe2,
    libc::SYS_sendfile,
    libc::SYS_splice,
    libc::SYS_tee,
    libc::SYS_vmsplice,
    libc::SYS_copy_file_range,
    SYS_CACHESTAT,
    libc::SYS_getxattr,
    libc::SYS_lgetxattr,
    libc::SYS_fgetxattr,
    libc::SYS_listxattr,
    libc::SYS_llistxattr,
    libc::SYS_flistxattr,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    libc::SYS_memfd_create,
    // Waiting on descriptors.
    libc::SYS_ppoll,
    libc::SYS_pselect6,
    libc::SYS_epoll_create1,
    libc::SYS_epoll_ctl,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_eventfd2,
    libc::SYS_signalfd4,
    libc::SYS_timerfd_create,
    libc::SYS_timerfd_settime,
    libc::SYS_timerfd_gettime,
    // Sockets: only AF_UNIX ones can be made (see `conditional_rules`).
    libc::SYS_connect,
    libc::SYS_accept,
    libc::SYS_accept4,
    libc::SYS_bind,
    libc::SYS_listen,
    libc::SYS_shutdown,
    libc::SYS_sendto,
    libc::SYS_recvfrom,
    libc::SYS_sendmsg,
    libc::SYS_recvmsg,
    libc::SYS_sendmmsg,
    libc::SYS_recvmmsg,
    libc::SYS_getsockname,
    libc::SYS_getpeername,
    libc::SYS_getsockopt,
    libc::SYS_setsockopt,
    // Memory.
    libc::SYS_brk,
    libc::SYS_mmap,
    libc::SYS_munmap,
    libc::SYS_mremap,
    libc::SYS_mprotect,
    libc::SYS_madvise,
    libc::SYS_msync,
    libc::SYS_mincore,
    libc::SYS_mlock,
    libc::SYS_mlock2,
    libc::SYS_munlock,
    libc::SYS_mlockall,
    libc::SYS_munlockall,
    libc::SYS_pkey_mprotect,
    libc::SYS_pkey_alloc,
    libc::SYS_pkey_free,
    libc::SYS_get_mempolicy,
    libc::SYS_membarrier,
    libc::SYS_mseal,
    // Processes and threads (`clone` in `conditional_rules`).
    libc::SYS_execve,
    libc::SYS_execveat,
    libc::SYS_exit,
    libc::SYS_exit_group,
    libc::SYS_wait4,
    libc::SYS_waitid,
    libc::SYS_set_tid_address,
    libc::SYS_set_robust_list,
    libc::SYS_get_robust_list,
    libc::SYS_rseq,
    libc::SYS_futex,
    libc::SYS_futex_waitv,
    libc::SYS_prctl,
    libc::SYS_seccomp,
    libc::SYS_getpid,
    libc::SYS_getppid,
    libc::SYS_gettid,
    libc::SYS_getpgid,
    libc::SYS_getsid,
    libc::SYS_getuid,
    libc::SYS_geteuid,
    libc::SYS_getgid,
    libc::SYS_getegid,
    libc::SYS_getresuid,
    libc::SYS_getresgid,
    libc::SYS_getgroups,
    libc::SYS_capget,
    libc::SYS_getrlimit,
    libc::SYS_setrlimit,
    libc::SYS_prlimit64,
    libc::SYS_getrusage,
    libc::SYS_times,
    libc::SYS_uname,
    libc::SYS_sysinfo,
    libc::SYS_getrandom,
    libc::SYS_getcpu,
    libc::SYS_getpriority,
    libc::SYS_setpriority,
    libc::SYS_ioprio_get,
    libc::SYS_ioprio_set,
    libc::SYS_sched_yield,
    libc::SYS_sched_getaffinity,
    libc::SYS_sched_getparam,
    libc::SYS_sched_setparam,
    libc::SYS_sched_getscheduler,
    libc::SYS_sched_setscheduler,
    libc::SYS_sched_getattr,
    libc::SYS_sched_setattr,
    libc::SYS_sched_get_priority_max,
    libc::SYS_sched_get_priority_min,
    libc::SYS_sched_rr_get_interval,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_send_signal,
    // Signals (a bot's PID namespace bounds whom it can reach).
    libc::SYS_kill,
    libc::SYS_tkill,
    libc::SYS_tgkill,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigreturn,
    libc::SYS_rt_sigpending,
    libc::SYS_rt_sigtimedwait,
    libc::SYS_rt_sigqueueinfo,
    libc::SYS_rt_tgsigqueueinfo,
    libc::SYS_rt_sigsuspend,
    libc::SYS_sigaltstack,
    libc::SYS_restart_syscall,
    // Time.
    libc::SYS_clock_gettime,
    libc::SYS_clock_getres,
    libc::SYS_clock_nanosleep,
    libc::SYS_gettimeofday,
    libc::SYS_nanosleep,
    libc::SYS_getitimer,
    libc::SYS_setitimer,
    libc::SYS_timer_create,
    libc::SYS_timer_settime,
    libc::SYS_timer_gettime,
    libc::SYS_timer_getoverrun,
    libc::SYS_timer_delete,
    // System V and POSIX IPC (the bot's IPC namespace is its own).
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmdt,
    libc::SYS_shmctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
    libc::SYS_mq_getsetattr,
    // The older calls that x86_64 keeps (aarch64 has only the *at forms).
    #[cfg(target_arch = "x86_64")]
    libc::SYS_open,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_creat,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_stat,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_lstat,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_access,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_getdents,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_mkdir,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_rmdir,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_rename,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_link,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_unlink,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_symlink,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_readlink,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_mknod,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chmod,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_lchown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utime,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utimes,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_futimesat,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_pipe,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_dup2,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_select,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_poll,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_epoll_create,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_epoll_wait,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_eventfd,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_signalfd,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_fork,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_vfork,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_pause,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_alarm,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_time,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_getpgrp,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_arch_prctl,
    #[cfg(target_arch = "x86_64")]
    SYS_MAP_SHADOW_STACK,
];

/// Denied with `EPERM` although a program might try them (documentation,
/// and a check that none of them is in [`ALLOWED`]; the filter denies
/// every call it does not allow). Calls with argument checks are allowed
/// in part: see the module doc.
pub const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_process_madvise,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_inotify_init1,
    libc::SYS_inotify_add_watch,
    libc::SYS_inotify_rm_watch,
    libc::SYS_fanotify_init,
    libc::SYS_fanotify_mark,
    libc::SYS_clone3,
    libc::SYS_setsid,
    libc::SYS_setpgid,
    libc::SYS_sched_setaffinity,
    libc::SYS_acct,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_quotactl,
    libc::SYS_quotactl_fd,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_lookup_dcookie,
    libc::SYS_syslog,
    libc::SYS_vhangup,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_setuid,
    libc::SYS_setgid,
    libc::SYS_setreuid,
    libc::SYS_setregid,
    libc::SYS_setresuid,
    libc::SYS_setresgid,
    libc::SYS_setgroups,
    libc::SYS_setfsuid,
    libc::SYS_setfsgid,
    libc::SYS_capset,
    libc::SYS_memfd_secret,
    libc::SYS_process_mrelease,
    libc::SYS_landlock_create_ruleset,
    libc::SYS_landlock_add_rule,
    libc::SYS_landlock_restrict_self,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_inotify_init,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_modify_ldt,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_uselib,
];

#[cfg(test)]
mod tests {
    use super::super::landlock::{self, Access, Rule, Wall};
    use super::*;
    use std::ffi::CString;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::process::CommandExt;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn filter() -> &'static Filter {
        bot_filter().expect("the bots' filter builds on x86_64 and aarch64")
    }

    #[test]
    fn no_denied_call_is_allowed() {
        for nr in DENIED {
            assert!(!ALLOWED.contains(nr), "system call {nr} is in both lists");
        }
        for (nr, _) in ANSWERED {
            assert!(
                !ALLOWED.contains(nr),
                "system call {nr} is answered and allowed"
            );
        }
        let checked: Vec<i64> = conditional_rules(false)
            .unwrap()
            .into_iter()
            .map(|(nr, _)| nr)
            .collect();
        for nr in &checked {
            assert!(!ALLOWED.contains(nr) && !DENIED.contains(nr), "{nr}");
        }
        let f = filter();
        println!(
            "{} calls allowed ({} with argument checks), {} BPF instructions",
            ALLOWED.len() + checked.len(),
            checked.len(),
            f.len()
        );
        assert!(f.len() < BPF_MAXINSNS);
    }

    /// What one probe's system call gave: `Ok(())` or the errno.
    type Outcome = Result<(), i32>;

    /// Runs `call` in a forked child, under the bots' filter when `filtered`
    /// (the child is a real process: the filter is installed as it will be,
    /// between fork and exec, in a multi-threaded parent). `call` must be
    /// async-signal-safe: raw system calls on memory made before.
    fn probe(filtered: bool, call: &dyn Fn() -> libc::c_long) -> Outcome {
        let f = filter();
        // SAFETY: the child makes only raw system calls and _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: as above; exit codes: 0 = success, errno, 255 = the
            // filter could not be installed.
            unsafe {
                if filtered && f.install().is_err() {
                    libc::_exit(255);
                }
                let r = call();
                libc::_exit(if r < 0 { errno() } else { 0 });
            }
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        let w = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(w, pid);
        assert!(libc::WIFEXITED(status), "probe killed (status {status:#x})");
        match libc::WEXITSTATUS(status) {
            0 => Ok(()),
            255 => panic!("the filter could not be installed"),
            e => Err(e),
        }
    }

    fn name(e: i32) -> String {
        std::io::Error::from_raw_os_error(e).to_string()
    }

    /// The call fails with `errno` under the filter. Its result without
    /// the filter is printed beside, to show the test is not vacuous (it
    /// is another result for every probe below when run as root).
    fn denied(what: &str, errno: i32, call: &dyn Fn() -> libc::c_long) {
        let bare = probe(false, call);
        let walled = probe(true, call);
        println!(
            "{what}: without the filter {:?}, with it {:?}",
            bare.map_err(name),
            walled.map_err(name)
        );
        assert_eq!(walled, Err(errno), "{what} under the filter");
    }

    fn allowed(what: &str, call: &dyn Fn() -> libc::c_long) {
        let walled = probe(true, call);
        println!("{what}: with the filter {:?}", walled.map_err(name));
        assert_eq!(walled, Ok(()), "{what} must work under the filter");
    }

    /// A file of our own for the lock probes.
    fn scratch_file() -> (tempfile::TempDir, CString) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("shared");
        std::fs::write(&p, b"x").unwrap();
        let c = CString::new(p.to_str().unwrap()).unwrap();
        (dir, c)
    }

    #[test]
    fn attacks_get_eperm() {
        use libc::*;
        let (_dir, file) = scratch_file();
        let file = file.as_ptr();
        let devnull = c"/dev/null".as_ptr();
        // SAFETY (every closure below): raw system calls on values made
        // before the fork; a call that succeeds only touches the probe.
        unsafe {
            denied("ptrace(PTRACE_TRACEME)", EPERM, &|| {
                syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0)
            });
            denied("process_vm_readv(self)", EPERM, &|| {
                let mut buf = [0u8; 8];
                let src = [0u8; 8];
                let local = iovec {
                    iov_base: buf.as_mut_ptr().cast(),
                    iov_len: 8,
                };
                let remote = iovec {
                    iov_base: src.as_ptr() as *mut c_void,
                    iov_len: 8,
                };
                syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0)
            });
            denied("keyctl(GET_KEYRING_ID, session)", EPERM, &|| {
                syscall(SYS_keyctl, 0, -3, 1)
            });
            denied("add_key(user, process keyring)", EPERM, &|| {
                syscall(
                    SYS_add_key,
                    c"user".as_ptr(),
                    c"probe".as_ptr(),
                    c"x".as_ptr(),
                    1,
                    -2,
                )
            });
            denied("socket(AF_VSOCK)", EPERM, &|| {
                syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0)
            });
            denied("socket(AF_INET)", EPERM, &|| {
                syscall(SYS_socket, AF_INET, SOCK_STREAM, 0)
            });
            denied("socket(AF_INET6)", EPERM, &|| {
                syscall(SYS_socket, AF_INET6, SOCK_DGRAM, 0)
            });
            denied("socket(AF_NETLINK)", EPERM, &|| {
                syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 0)
            });
            denied("socket(AF_INET, with bits above the int)", EPERM, &|| {
                // The kernel reads an int, and so does the filter.
                syscall(SYS_socket, (1i64 << 32) | AF_INET as i64, SOCK_STREAM, 0)
            });
            denied("socketpair(AF_INET)", EPERM, &|| {
                let mut sv = [0 as c_int; 2];
                syscall(SYS_socketpair, AF_INET, SOCK_STREAM, 0, sv.as_mut_ptr())
            });
            denied("inotify_init1", EPERM, &|| syscall(SYS_inotify_init1, 0));
            denied("fanotify_init", EPERM, &|| {
                syscall(SYS_fanotify_init, 0, O_RDONLY)
            });
            for (what, cmd) in [
                ("fcntl(F_SETLK)", F_SETLK),
                ("fcntl(F_SETLKW)", F_SETLKW),
                ("fcntl(F_GETLK)", F_GETLK),
                ("fcntl(F_OFD_SETLK)", F_OFD_SETLK),
                ("fcntl(F_OFD_GETLK)", F_OFD_GETLK),
            ] {
                denied(what, EPERM, &|| {
                    let fd = open(file, O_RDWR);
                    let mut lock: flock = std::mem::zeroed();
                    lock.l_type = F_WRLCK as c_short;
                    lock.l_whence = SEEK_SET as c_short;
                    syscall(SYS_fcntl, fd, cmd, &mut lock)
                });
            }
            denied("fcntl(F_SETLEASE)", EPERM, &|| {
                let fd = open(file, O_RDONLY);
                syscall(SYS_fcntl, fd, F_SETLEASE, F_RDLCK)
            });
            denied("fcntl(F_NOTIFY)", EPERM, &|| {
                let fd = open(c"/tmp".as_ptr(), O_RDONLY | O_DIRECTORY);
                syscall(SYS_fcntl, fd, F_NOTIFY, 4 /* DN_CREATE */)
            });
            // On /dev/null, which is no terminal: without the filter the
            // kernel says ENOTTY, and no character is injected anywhere.
            denied("ioctl(TIOCSTI)", EPERM, &|| {
                let fd = open(devnull, O_RDWR);
                let c = b'x';
                syscall(SYS_ioctl, fd, TIOCSTI, &c)
            });
            denied("ioctl(TIOCLINUX)", EPERM, &|| {
                let fd = open(devnull, O_RDWR);
                let c = 0u8;
                syscall(SYS_ioctl, fd, TIOCLINUX, &c)
            });
            denied("unshare(CLONE_NEWUSER)", EPERM, &|| {
                syscall(SYS_unshare, CLONE_NEWUSER)
            });
            denied("setns", EPERM, &|| syscall(SYS_setns, -1, 0));
            denied("mount(tmpfs)", EPERM, &|| {
                syscall(
                    SYS_mount,
                    c"none".as_ptr(),
                    c"/nonexistent-arena-probe".as_ptr(),
                    c"tmpfs".as_ptr(),
                    0,
                    0,
                )
            });
            denied("bpf", EPERM, &|| syscall(SYS_bpf, 0, 0, 0));
            denied("perf_event_open", EPERM, &|| {
                syscall(SYS_perf_event_open, 0, 0, -1, -1, 0)
            });
            denied("userfaultfd", EPERM, &|| syscall(SYS_userfaultfd, 0));
            denied("io_uring_setup", EPERM, &|| {
                syscall(SYS_io_uring_setup, 1, 0)
            });
            denied("setsid", EPERM, &|| syscall(SYS_setsid));
            denied("setpgid(0, 0)", EPERM, &|| syscall(SYS_setpgid, 0, 0));
            denied("personality(ADDR_NO_RANDOMIZE)", EPERM, &|| {
                syscall(SYS_personality, ADDR_NO_RANDOMIZE)
            });
            denied("sched_setaffinity", EPERM, &|| {
                let mut set: cpu_set_t = std::mem::zeroed();
                CPU_SET(0, &mut set);
                syscall(
                    SYS_sched_setaffinity,
                    0,
                    std::mem::size_of::<cpu_set_t>(),
                    &set,
                )
            });
            let ns_clone = |flag: c_int| {
                move || {
                    let r = syscall(SYS_clone, flag | SIGCHLD, 0, 0, 0, 0);
                    if r == 0 {
                        _exit(0);
                    }
                    r
                }
            };
            for (what, flag) in [
                ("clone(CLONE_NEWUSER)", CLONE_NEWUSER),
                ("clone(CLONE_NEWNS)", CLONE_NEWNS),
                ("clone(CLONE_NEWPID)", CLONE_NEWPID),
                ("clone(CLONE_NEWNET)", CLONE_NEWNET),
            ] {
                denied(what, EPERM, &ns_clone(flag));
            }
            denied("clone3", ENOSYS, &|| syscall(SYS_clone3, 0, 0));
            #[cfg(target_arch = "x86_64")]
            denied("x32 getpid", EPERM, &|| syscall(SYS_getpid | 0x4000_0000));
        }
    }

    /// flock under the filter neither takes a lock nor sees one: a
    /// process outside holds the lock and the walled one still "gets" it
    /// (without the filter it gets EWOULDBLOCK: the probe can fail); the
    /// walled one "holds" it and the outside one still gets it.
    #[test]
    fn flock_passes_no_bit() {
        use libc::*;
        let (_dir, file) = scratch_file();
        let path = file.as_ptr();
        // SAFETY: raw calls on our own file; `held` stays open (and
        // locked) until the end of the test.
        unsafe {
            let held = open(path, O_RDONLY | O_CLOEXEC);
            assert!(held >= 0);
            assert_eq!(flock(held, LOCK_EX | LOCK_NB), 0);
            let try_lock = || {
                let fd = open(path, O_RDONLY);
                syscall(SYS_flock, fd, LOCK_EX | LOCK_NB)
            };
            assert_eq!(probe(false, &try_lock), Err(EWOULDBLOCK));
            assert_eq!(probe(true, &try_lock), Ok(()));
            assert_eq!(flock(held, LOCK_UN), 0);
            // The walled child locks and, while it lives, the test locks.
            // Two pipes: `up` from the child, `down` to it.
            let (mut up, mut down) = ([0 as c_int; 2], [0 as c_int; 2]);
            assert_eq!(pipe2(up.as_mut_ptr(), O_CLOEXEC), 0);
            assert_eq!(pipe2(down.as_mut_ptr(), O_CLOEXEC), 0);
            let f = filter();
            let pid = fork();
            if pid == 0 {
                if f.install().is_err() {
                    _exit(255);
                }
                let fd = open(path, O_RDONLY);
                let r = syscall(SYS_flock, fd, LOCK_EX | LOCK_NB);
                let b = [if r == 0 { b'y' } else { b'n' }];
                write(up[1], b.as_ptr().cast(), 1);
                // Wait, lock "held", until the test has tried.
                let mut x = [0u8; 1];
                read(down[0], x.as_mut_ptr().cast(), 1);
                _exit(0);
            }
            let mut b = [0u8; 1];
            assert_eq!(read(up[0], b.as_mut_ptr().cast(), 1), 1);
            let outside = open(path, O_RDONLY | O_CLOEXEC);
            let r = flock(outside, LOCK_EX | LOCK_NB);
            write(down[1], b"x".as_ptr().cast(), 1);
            let mut st = 0;
            waitpid(pid, &mut st, 0);
            for fd in [outside, held, up[0], up[1], down[0], down[1]] {
                close(fd);
            }
            assert_eq!(b[0], b'y', "flock under the filter reports success");
            assert_eq!(r, 0, "the walled process took a real lock");
        }
    }

    #[test]
    fn ordinary_calls_still_work() {
        use libc::*;
        let (_dir, file) = scratch_file();
        let file = file.as_ptr();
        // SAFETY: as in `attacks_get_eperm`.
        unsafe {
            allowed("socketpair(AF_UNIX)", &|| {
                let mut sv = [0 as c_int; 2];
                syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv.as_mut_ptr())
            });
            allowed("socket(AF_UNIX)", &|| {
                syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)
            });
            allowed("fcntl(F_GETFL, F_SETFD, F_DUPFD_CLOEXEC)", &|| {
                let fd = open(file, O_RDWR);
                if syscall(SYS_fcntl, fd, F_GETFL) < 0
                    || syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC) < 0
                {
                    return -1;
                }
                syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 10)
            });
            allowed("ioctl(FIONREAD) on a pipe", &|| {
                let mut p = [0 as c_int; 2];
                let mut n: c_int = 0;
                if pipe(p.as_mut_ptr()) < 0 {
                    return -1;
                }
                syscall(SYS_ioctl, p[0], FIONREAD, &mut n)
            });
            allowed("personality(query)", &|| {
                syscall(SYS_personality, 0xffff_ffffu32 as c_long)
            });
            allowed("fork (clone with SIGCHLD)", &|| {
                let pid = fork();
                if pid == 0 {
                    _exit(0);
                }
                let mut st = 0;
                waitpid(pid, &mut st, 0) as c_long
            });
            allowed("a thread's clone flags", &|| {
                // The flags glibc's pthread_create gives clone, with a
                // child that exits at once on its own stack.
                let flags = CLONE_VM
                    | CLONE_FS
                    | CLONE_FILES
                    | CLONE_SIGHAND
                    | CLONE_THREAD
                    | CLONE_SYSVSEM;
                let r = syscall(SYS_clone, flags, 0, 0, 0, 0);
                if r == 0 {
                    syscall(SYS_exit, 0);
                }
                r
            });
        }
    }

    /// What a hostile Python bot would write, through the interpreter's
    /// own modules and ctypes; each line of the probe is `name result`.
    const PY_PROBE: &str = r#"
import ctypes, errno, fcntl, os, socket, subprocess, sys, termios, threading
libc = ctypes.CDLL(None, use_errno=True)
def report(name, f):
    try:
        r = f()
        if isinstance(r, int) and r < 0:
            print(name, errno.errorcode.get(ctypes.get_errno(), "?"))
        else:
            print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, "?"))
sys_nr = {"x86_64": dict(ptrace=101, keyctl=250, unshare=272, inotify_init1=294, io_uring_setup=425),
          "aarch64": dict(ptrace=117, keyctl=219, unshare=97, inotify_init1=26, io_uring_setup=425)}[os.uname().machine]
report("socket_inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
report("socket_vsock", lambda: socket.socket(40, socket.SOCK_STREAM))
report("socketpair_inet", lambda: socket.socketpair(socket.AF_INET))
report("socketpair_unix", lambda: socket.socketpair())
f = open(sys.argv[1], "rb")
report("lockf", lambda: fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB))
report("flock", lambda: fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB))
tty = os.open("/dev/null", os.O_RDWR)
report("tiocsti", lambda: fcntl.ioctl(tty, termios.TIOCSTI, b"x"))
report("setsid", os.setsid)
report("setpgid", lambda: os.setpgid(0, 0))
report("ptrace", lambda: libc.syscall(sys_nr["ptrace"], 0, 0, 0, 0))
report("keyctl", lambda: libc.syscall(sys_nr["keyctl"], 0, -3, 1))
report("unshare", lambda: libc.syscall(sys_nr["unshare"], 0x10000000))
report("inotify", lambda: libc.syscall(sys_nr["inotify_init1"], 0))
report("io_uring", lambda: libc.syscall(sys_nr["io_uring_setup"], 1, 0))
t = threading.Thread(target=lambda: None); t.start(); t.join()
print("thread ok")
report("subprocess", lambda: subprocess.run(["true"], check=True) and 0)
"#;

    #[test]
    fn a_python_probe_finds_every_door_shut() {
        if !on_path("python3") {
            println!("python3 probe: SKIPPED (no python3)");
            return;
        }
        let (_dir, file) = scratch_file();
        let f = filter();
        let mut cmd = Command::new("python3");
        cmd.args(["-c", PY_PROBE, file.to_str().unwrap()]);
        // SAFETY: as in `play_under_filter`.
        unsafe {
            cmd.pre_exec(move || f.install().map_err(std::io::Error::from_raw_os_error));
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success());
        for expected in [
            "socket_inet EPERM",
            "socket_vsock EPERM",
            "socketpair_inet EPERM",
            "socketpair_unix ok",
            "lockf EPERM",
            // A success that locks nothing (see ANSWERED).
            "flock ok",
            "tiocsti EPERM",
            "setsid EPERM",
            "setpgid EPERM",
            "ptrace EPERM",
            "keyctl EPERM",
            "unshare EPERM",
            "inotify EPERM",
            "io_uring EPERM",
            "thread ok",
            "subprocess ok",
        ] {
            assert!(
                stdout.lines().any(|l| l == expected),
                "expected `{expected}` in:\n{stdout}"
            );
        }
    }

    // ---- Real bots under the filter alone ----

    fn repo() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    fn on_path(program: &str) -> bool {
        Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    }

    /// The first of target/{release,debug}/`name` (next to the test
    /// binary's own target folder) that exists.
    fn built_bin(name: &str) -> Option<PathBuf> {
        let exe = std::env::current_exe().ok()?;
        let target = exe.parent()?.parent()?.parent()?.to_path_buf();
        ["release", "debug"]
            .iter()
            .map(|p| target.join(p).join(name))
            .find(|p| p.is_file())
    }

    const HELLO: &str = r#"{"type":"hello","protocol":1,"games":["filo","kisolo"]}"#;
    const GAME_START: &str = r#"{"type":"game_start","game_id":"g1","variant":"filo","players":2,"options":{},"max_plies":4,"seat":1,"names":["a","b"],"time":{"per_decision_ms":5000},"seed":"0"}"#;
    const REQUEST: &str = r#"{"type":"request","game_id":"g1","seq":1,"ply":1,"state":{"decision":"entry","exited":{"black":0,"white":0},"phase":"entry","pieces":{"black":12,"white":12},"players":2,"ply":1,"reserve":{"black":12,"white":11},"result":null,"squares":{"A":["W"],"B":[],"C":[],"D":[],"E":[],"F":[],"G":[],"H":[]},"to_decide":1,"to_move":"black","variant":"filo"},"legal":["1","2","3","4","5","6","7","8"],"since":[{"seat":0,"ply":0,"option":"1","forced":false,"opening":false}],"timeout_ms":5000}"#;
    const GAME_END: &str = r#"{"type":"game_end","game_id":"g1","scores":[0.5,0.5],"reason":"max_plies","since":[],"state":{}}"#;
    const QUIT: &str = r#"{"type":"quit"}"#;

    /// Makes `cmd` start behind `wall` (when given) and then the bots'
    /// filter, in the order the sandbox's child must raise them.
    fn walled(cmd: &mut Command, wall: Option<&Wall>) {
        let f = filter();
        let wall = wall.cloned();
        // SAFETY: restrict and install make system calls on memory built
        // before the fork (async-signal-safe).
        unsafe {
            cmd.pre_exec(move || {
                if let Some(w) = &wall {
                    w.restrict().map_err(std::io::Error::from_raw_os_error)?;
                }
                f.install().map_err(std::io::Error::from_raw_os_error)
            });
        }
    }

    /// Starts `cmd` under the bots' filter and plays the start of a game
    /// with it: hello, game_start, one request (its reply must be a legal
    /// option), game_end, quit; then it must exit 0. Err says what went
    /// wrong, with the bot's stderr.
    fn play_under_filter(mut cmd: Command, wall: Option<&Wall>) -> Result<(), String> {
        walled(&mut cmd, wall);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("spawn: {e}"))?;
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
            s
        });
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let next = |what: &str| -> Result<serde_json::Value, String> {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .map_err(|_| format!("no {what} line"))?;
            serde_json::from_str(&line).map_err(|e| format!("{what}: {e}: {line}"))
        };
        let mut send = |line: &str| writeln!(stdin, "{line}").map_err(|e| format!("write: {e}"));
        let talk = (|| {
            send(HELLO)?;
            let hello = next("hello")?;
            if hello["type"] != "hello" {
                return Err(format!("expected hello, got {hello}"));
            }
            send(GAME_START)?;
            send(REQUEST)?;
            let reply = next("reply")?;
            let option = reply["option"].as_str().unwrap_or("");
            if reply["type"] != "reply" || !("1"..="8").contains(&option) || option.len() != 1 {
                return Err(format!("expected a legal reply, got {reply}"));
            }
            send(GAME_END)?;
            send(QUIT)?;
            Ok(())
        })();
        drop(stdin);
        // Give it until the deadline to exit after quit.
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let err = err_reader.join().unwrap_or_default();
        let result = talk.and_then(|_| match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => Err(format!("exited with {s}")),
            None => Err("did not exit after quit".into()),
        });
        result.map_err(|e| format!("{e}; stderr: {err}"))
    }

    fn command(program: impl AsRef<std::ffi::OsStr>, args: &[&str], dir: &Path) -> Command {
        let mut c = Command::new(program);
        c.args(args).current_dir(dir);
        c
    }

    /// Runs one bot, or prints why it is skipped; the error otherwise.
    fn check(name: &str, cmd: Option<Command>, wall: Option<&Wall>, failures: &mut Vec<String>) {
        let under = match wall {
            Some(_) => "Landlock and the filter",
            None => "the filter",
        };
        match cmd {
            None => println!("{name}: SKIPPED (its interpreter or binary is missing)"),
            Some(cmd) => match play_under_filter(cmd, wall) {
                Ok(()) => println!("{name}: started and played under {under}"),
                Err(e) => failures.push(format!("{name}: {e}")),
            },
        }
    }

    /// Compiles a template under the filter too (a bot's build will run in
    /// the sandbox): `cc`/`c++` and their children must work in it.
    fn build_under_filter(
        program: &str,
        args: &[&str],
        dir: &Path,
        wall: Option<&Wall>,
    ) -> Result<(), String> {
        let mut c = command(program, args, dir);
        walled(&mut c, wall);
        let out = c.output().map_err(|e| format!("{program}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} {args:?}: {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    #[test]
    fn shipped_bots_start_and_play_under_the_filter() {
        shipped_bots(None);
    }

    /// The same behind Landlock too, as the sandbox will lay it out: `/`
    /// read-only, the temporary folder and /dev/null writable.
    #[test]
    fn shipped_bots_start_and_play_behind_landlock_and_the_filter() {
        let abi = landlock::abi();
        if abi == 0 {
            println!("SKIPPED: this kernel has no Landlock");
            return;
        }
        let tmp = std::env::temp_dir();
        let mut rules = vec![
            Rule::new(c"/".into(), Access::ReadOnly),
            Rule::new(c"/tmp".into(), Access::ReadWrite),
            Rule::new(c"/dev/null".into(), Access::ReadWrite),
        ];
        if tmp != Path::new("/tmp") {
            let tmp = CString::new(tmp.to_str().unwrap()).unwrap();
            rules.push(Rule::new(tmp, Access::ReadWrite));
        }
        let wall = Wall::new(rules);
        println!("{}", wall.describe());
        shipped_bots(Some(&wall));
    }

    /// Both walls in the order the child must raise them (Landlock, then
    /// the seccomp filter that denies Landlock's calls): a shell runs and
    /// writes its own folder only.
    #[test]
    fn landlock_then_seccomp() {
        if landlock::abi() == 0 {
            println!("SKIPPED: this kernel has no Landlock");
            return;
        }
        let filter = filter();
        let own = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let wall = Wall::new(vec![
            Rule::new(c"/".into(), Access::ReadOnly),
            Rule::new(
                CString::new(own.path().to_str().unwrap()).unwrap(),
                Access::ReadWrite,
            ),
            Rule::new(c"/dev/null".into(), Access::ReadWrite),
        ]);
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args([
            "-c",
            r#"echo a > "$0/a" && ! (echo b > "$1/b") 2>/dev/null"#,
        ])
        .arg(own.path())
        .arg(other.path());
        // SAFETY: restrict and install make system calls on memory built
        // before the fork (async-signal-safe).
        unsafe {
            cmd.pre_exec(move || {
                wall.restrict().map_err(std::io::Error::from_raw_os_error)?;
                filter.install().map_err(std::io::Error::from_raw_os_error)
            });
        }
        let status = cmd.status().unwrap();
        assert!(status.success(), "{status}");
        assert!(own.path().join("a").exists());
        assert!(!other.path().join("b").exists());
    }

    fn shipped_bots(wall: Option<&Wall>) {
        let repo = repo();
        let bots = repo.join("bots");
        let mut failures = Vec::new();
        let python = on_path("python3")
            .then(|| command("python3", &["bot.py"], &bots.join("random-python")));
        check(
            "python3 bots/random-python/bot.py",
            python,
            wall,
            &mut failures,
        );
        let node = on_path("node").then(|| command("node", &["bot.js"], &bots.join("random-js")));
        check("node bots/random-js/bot.js", node, wall, &mut failures);
        for bin in ["random-bot", "greedy-bot", "search-bot"] {
            let cmd = built_bin(bin).map(|p| command(p, &[], &repo));
            check(&format!("target/*/{bin}"), cmd, wall, &mut failures);
        }
        let java =
            on_path("java").then(|| command("java", &["Bot.java"], &bots.join("templates/java")));
        check("java Bot.java (templates/java)", java, wall, &mut failures);
        let build = tempfile::tempdir().unwrap();
        let out = build.path();
        for (lang, compiler, src, std) in [
            ("c", "cc", "bot.c", "-std=c99"),
            ("cpp", "c++", "bot.cpp", "-std=c++17"),
        ] {
            let name = format!("templates/{lang} ({compiler}, built under the filter)");
            if !on_path(compiler) {
                check(&name, None, wall, &mut failures);
                continue;
            }
            let src = bots.join("templates").join(lang).join(src);
            let exe = out.join(format!("bot-{lang}"));
            let args = [
                "-O2",
                std,
                "-o",
                exe.to_str().unwrap(),
                src.to_str().unwrap(),
            ];
            match build_under_filter(compiler, &args, out, wall) {
                Ok(()) => check(&name, Some(command(&exe, &[], out)), wall, &mut failures),
                Err(e) => failures.push(format!("{name}: build: {e}")),
            }
        }
        if on_path("go") {
            let exe = out.join("bot-go");
            let src = bots.join("templates/go/bot.go");
            let args = ["build", "-o", exe.to_str().unwrap(), src.to_str().unwrap()];
            match build_under_filter("go", &args, out, wall) {
                Ok(()) => check(
                    "templates/go",
                    Some(command(&exe, &[], out)),
                    wall,
                    &mut failures,
                ),
                Err(e) => failures.push(format!("templates/go: build: {e}")),
            }
        } else {
            check("templates/go", None, wall, &mut failures);
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
