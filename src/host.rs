//! Facts of the machine the referee runs on that are not the sandbox: the
//! CPUs it may use and pinning to them, its open-files limit, whether a
//! process lives, and signal set-up. (Everything that shuts a bot in lives
//! in `bot::sandbox`.) Linux is the target; elsewhere these do nothing or
//! say they do not know.

/// What a server says when it cannot listen on `bind` for `e`: where
/// another process holds the address, what to do.
pub fn cannot_listen(bind: std::net::SocketAddr, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "cannot listen on {bind}, which another process holds (stop it, or give another --bind)"
        ),
        _ => format!("cannot listen on {bind}"),
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
    pin_current_thread_to(&[cpu]);
}

/// Lets the calling thread run on `cpus` only (none: nothing changes).
pub fn pin_current_thread_to(cpus: &[usize]) {
    #[cfg(target_os = "linux")]
    // SAFETY: the set is a plain bit set built with the libc macros (CPU_SET
    // ignores numbers past CPU_SETSIZE); pid 0 is the calling thread.
    unsafe {
        if cpus.is_empty() {
            return;
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        let _ = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpus;
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

/// The CPUs to pin `n` threads to, from `cpus`: first those that no other
/// league, ladder or worker on this machine holds, then the others in
/// order. A CPU is held through an abstract Unix socket named after it,
/// bound as long as the claim is kept: no file to leave behind, and the
/// kernel lets it go when the process dies however it dies. Two `arena
/// worker -j 1` on one machine then play on two CPUs, not both on the
/// first.
pub struct CpuClaim {
    pub cpus: Vec<usize>,
    _held: Vec<std::os::unix::net::UnixDatagram>,
}

pub fn claim_cpus(cpus: &[usize], n: usize) -> CpuClaim {
    let (mut free, mut others, mut held) = (Vec::new(), Vec::new(), Vec::new());
    for &cpu in cpus {
        if free.len() < n {
            if let Some(socket) = hold_cpu(cpu) {
                held.push(socket);
                free.push(cpu);
                continue;
            }
        }
        others.push(cpu);
    }
    free.extend(others);
    CpuClaim {
        cpus: free,
        _held: held,
    }
}

/// The socket that holds `cpu`, when no one else holds it.
fn hold_cpu(cpu: usize) -> Option<std::os::unix::net::UnixDatagram> {
    #[cfg(target_os = "linux")]
    {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("mancala-arena-cpu-{cpu}");
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).ok()?;
        std::os::unix::net::UnixDatagram::bind_addr(&addr).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        None
    }
}

/// The state letter of process `pid` (`R`, `S`, `Z`, ...: the field after
/// the command name in /proc/PID/stat), or `None` when it does not exist.
pub fn process_state(pid: u32) -> Option<char> {
    state_in_stat(&std::fs::read(format!("/proc/{pid}/stat")).ok()?)
}

/// The first child of process `pid`, as /proc lists it.
pub fn first_child(pid: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The state letter in the text of a /proc/PID/stat: the first field after
/// the command name, which is in parentheses and may hold any character
/// (so the last `)` ends it; the fields after it are numbers).
pub fn state_in_stat(stat: &[u8]) -> Option<char> {
    let state = after_name(stat)?
        .iter()
        .find(|b| !b.is_ascii_whitespace())?;
    Some(char::from(*state))
}

/// The CPU time a process has used, user and system (`utime` plus
/// `stime`, the 14th and 15th fields of its /proc/PID/stat: every thread
/// of it, in clock ticks of [`CLOCK_TICK`]).
pub fn cpu_ticks_in_stat(stat: &[u8]) -> Option<u64> {
    let fields = std::str::from_utf8(after_name(stat)?).ok()?;
    let mut after_state = fields.split_ascii_whitespace().skip(11);
    let user: u64 = after_state.next()?.parse().ok()?;
    let system: u64 = after_state.next()?.parse().ok()?;
    Some(user + system)
}

/// How long a clock tick of /proc's CPU times is (`sysconf(_SC_CLK_TCK)`,
/// 100 per second on Linux).
pub const CLOCK_TICK: std::time::Duration = std::time::Duration::from_millis(10);

/// The fields of a /proc/PID/stat after the command name (state, ppid,
/// pgrp, ...): the name is in parentheses and may hold any character, so
/// the last `)` ends it.
fn after_name(stat: &[u8]) -> Option<&[u8]> {
    let end = stat.iter().rposition(|&b| b == b')')?;
    Some(&stat[end + 1..])
}

/// Where this process's command line lies in its memory: `arg_start`
/// and `arg_end`, the 48th and 49th fields of /proc/self/stat (proc(5)),
/// read once (they do not move).
pub fn own_arguments() -> Option<(usize, usize)> {
    static PLACE: std::sync::OnceLock<Option<(usize, usize)>> = std::sync::OnceLock::new();
    *PLACE.get_or_init(arguments_in_stat)
}

/// [`own_arguments`], read from /proc/self/stat.
fn arguments_in_stat() -> Option<(usize, usize)> {
    let stat = std::fs::read("/proc/self/stat").ok()?;
    let fields = String::from_utf8_lossy(after_name(&stat)?).into_owned();
    // The fields after the name start at the third.
    let mut f = fields.split_ascii_whitespace();
    let start = f.nth(48 - 3)?.parse().ok()?;
    let end = f.next()?.parse().ok()?;
    (start < end).then_some((start, end))
}

/// A thread of a process group, as /proc shows it: its state letter
/// (`R`, `S`, `T`, ...) and, asleep, where in the kernel it waits
/// (`wchan`: `pipe_read`, `hrtimer_nanosleep`, ...; empty when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadState {
    pub state: char,
    pub wchan: String,
}

/// The state and the process group of a /proc stat file's text.
fn state_and_group(stat: &[u8]) -> Option<(char, u32)> {
    let fields = String::from_utf8_lossy(after_name(stat)?).into_owned();
    let mut f = fields.split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    Some((state, f.nth(1)?.parse::<u32>().ok()?))
}

/// The processes of process group `pgid`: each one's /proc folder and
/// state letter (zombies included); one scan of /proc.
pub fn group_processes(pgid: u32) -> Vec<(std::path::PathBuf, char)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| {
            let (state, pgrp) = state_and_group(&std::fs::read(e.path().join("stat")).ok()?)?;
            (pgrp == pgid).then(|| (e.path(), state))
        })
        .collect()
}

/// The threads of the processes of process group `pgid` (a process's own
/// state is its main thread's: a bot thinking in another thread would
/// look asleep), for the rare paths (a bot that did not answer).
pub fn group_states(pgid: u32) -> Vec<ThreadState> {
    let thread = |dir: &std::path::Path, state: char| ThreadState {
        state,
        wchan: match state {
            'S' | 'D' => std::fs::read_to_string(dir.join("wchan")).unwrap_or_default(),
            _ => String::new(),
        },
    };
    let mut states = Vec::new();
    for (dir, state) in group_processes(pgid) {
        states.push(thread(&dir, state));
        let Ok(tasks) = std::fs::read_dir(dir.join("task")) else {
            continue;
        };
        let own = dir.file_name().map(std::ffi::OsStr::to_os_string);
        for t in tasks.flatten().filter(|t| Some(t.file_name()) != own) {
            if let Some((state, _)) = std::fs::read(t.path().join("stat"))
                .ok()
                .and_then(|s| state_and_group(&s))
            {
                states.push(thread(&t.path(), state));
            }
        }
    }
    states
}

/// Whether a process of process group `pgid` is stopped by a signal
/// (state `T` or `t`).
pub fn group_stopped(pgid: u32) -> bool {
    group_states(pgid)
        .iter()
        .any(|t| matches!(t.state, 'T' | 't'))
}

/// True while process `pid` exists and is not a zombie (Linux: /proc).
pub fn process_alive(pid: u32) -> bool {
    !matches!(process_state(pid), None | Some('Z') | Some('X'))
}

/// SIGPIPE back to its default, which Rust sets to ignored: for the
/// commands that end as Unix filters do when their reader goes away.
/// Call before any thread is started.
pub fn default_sigpipe() {
    // SAFETY: sets one signal's disposition to its default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A write past the shell's file size limit (`ulimit -f`) fails with
/// EFBIG, named with its file as a full disk is, instead of SIGXFSZ
/// ending the process without a word. A handler, not "ignored": exec
/// resets a handled signal to its default, so bots and builds still get
/// SIGXFSZ at their own limit. Call before any thread is started.
pub fn file_size_limit_as_error() {
    extern "C" fn noted(_: libc::c_int) {}
    // A handler that does nothing is async-signal-safe.
    handle(libc::SIGXFSZ, noted);
}

/// Installs `handler` for `signal`, with SA_RESTART (system calls go on
/// after it). The handler must call only async-signal-safe functions.
fn handle(signal: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: sigaction with a zeroed struct filled in here; the handler's
    // own safety is the caller's (above).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(signal, &sa, std::ptr::null_mut());
    }
}

/// This machine's host name (`gethostname`), or `localhost`; read once.
/// Once: the ladder's claim on its database names its host at each
/// heartbeat, and a name read again when the process is out of file
/// descriptors (a flood of connections) came back as `localhost`, so the
/// heartbeat found no claim of its own and the server stopped, taking
/// itself for overtaken.
pub fn host_name() -> String {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most `buf.len()` bytes into the
        // buffer we own.
        let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
        match ok && !name.is_empty() {
            true => name,
            false => "localhost".to_string(),
        }
    })
    .clone()
}

/// The signal [`on_stop_signal`] last saw (0: none yet).
static STOP_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The exit code of a process stopped by the signal [`on_stop_signal`]
/// saw, as a shell reports a process killed by it: 128 plus its number
/// (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP); 130 when none was
/// seen.
pub fn stopped_exit_code() -> u8 {
    match STOP_SIGNAL.load(std::sync::atomic::Ordering::SeqCst) {
        s @ 1..=64 => 128 + s as u8,
        _ => 130,
    }
}

/// Ctrl-C, SIGTERM and SIGHUP (a closed terminal or ssh session), noted
/// from the first call on for the rest of the process's life: the signal
/// seen (0: none yet), which a receiver made later still sees. Without the
/// one listener kept for good, a signal between two watchers (after the
/// bots' start-up check, before the league's games) would be lost: once a
/// handler is set, the signal's default action never comes back.
pub fn stop_signals() -> tokio::sync::watch::Receiver<i32> {
    static SEEN: std::sync::OnceLock<tokio::sync::watch::Sender<i32>> = std::sync::OnceLock::new();
    SEEN.get_or_init(|| {
        let (tx, _) = tokio::sync::watch::channel(0);
        let listening = std::sync::Arc::new(std::sync::Barrier::new(2));
        let (told, ready) = (tx.clone(), listening.clone());
        let started = std::thread::Builder::new()
            .name("stop-signals".into())
            .spawn(move || listen_for_stop_signals(&told, &ready));
        // Back once the handlers are set, so that a signal sent as soon as
        // the caller goes on is noted.
        if started.is_ok() {
            listening.wait();
        }
        tx
    })
    .subscribe()
}

/// [`stop_signals`]'s thread: sets the handlers, lets the caller go on,
/// and notes each signal that comes.
fn listen_for_stop_signals(seen: &tokio::sync::watch::Sender<i32>, listening: &std::sync::Barrier) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let Ok(rt) = rt else {
        listening.wait();
        return;
    };
    rt.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let handlers = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        );
        listening.wait();
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) = handlers else {
            return;
        };
        loop {
            let number = tokio::select! {
                _ = int.recv() => libc::SIGINT,
                _ = term.recv() => libc::SIGTERM,
                _ = hup.recv() => libc::SIGHUP,
            };
            STOP_SIGNAL.store(number, std::sync::atomic::Ordering::SeqCst);
            seen.send_replace(number);
        }
    });
}

/// Runs `then`, on a thread of its own named `name`, when Ctrl-C, SIGTERM
/// or SIGHUP comes or has come ([`stop_signals`]; which one is noted for
/// [`stopped_exit_code`]); gives up, without running it, once `give_up`
/// finishes.
pub fn on_stop_signal<G, T>(
    name: &str,
    give_up: G,
    then: T,
) -> std::io::Result<std::thread::JoinHandle<()>>
where
    G: std::future::Future<Output = ()> + Send + 'static,
    T: FnOnce() + Send + 'static,
{
    let mut seen = stop_signals();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let signalled = rt.block_on(async move {
                tokio::select! {
                    seen = seen.wait_for(|&s| s != 0) => seen.is_ok(),
                    _ = give_up => false,
                }
            });
            if signalled {
                then();
            }
        })
}

/// Ctrl-C and SIGTERM, listened for from the moment this is made: the stop
/// of a server (`arena serve`, `arena view`). Made before the server says
/// where it listens, so that a signal sent as soon as it does is a stop,
/// not the process's death by the signal's default action (a handler set
/// at the first wait came after the address was printed).
pub struct Termination {
    interrupt: Option<tokio::signal::unix::Signal>,
    terminate: Option<tokio::signal::unix::Signal>,
}

impl Termination {
    /// Starts listening; inside a tokio runtime with its signals enabled.
    /// (A signal that cannot be listened for is waited for never.)
    pub fn listen() -> Termination {
        use tokio::signal::unix::{signal, SignalKind};
        Termination {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
        }
    }

    /// Resolves at the first Ctrl-C or SIGTERM since [`Termination::listen`].
    pub async fn wait(mut self) {
        async fn one(s: Option<&mut tokio::signal::unix::Signal>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            () = one(self.interrupt.as_mut()) => {}
            () = one(self.terminate.as_mut()) => {}
        }
    }
}

/// Hands the memory the allocator holds free back to the system (glibc's
/// `malloc_trim`): after a burst of large requests, a server returns to
/// its size at rest. Nothing elsewhere.
pub fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The monotonic clock's nanoseconds at the stop watch's last tick.
static LAST_TICK_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Nanoseconds this process spent stopped, as the stop watch counted.
static STOPPED_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// How often the stop watch ticks.
const STOP_TICK: std::time::Duration = std::time::Duration::from_millis(50);

/// The monotonic clock, in nanoseconds (async-signal-safe).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// SIGCONT's handler: the time since the watch's last tick, less a tick,
/// was spent stopped (only atomics and the clock: async-signal-safe).
extern "C" fn on_continue(_: libc::c_int) {
    use std::sync::atomic::Ordering::SeqCst;
    let now = monotonic_ns();
    let last = LAST_TICK_NS.swap(now, SeqCst);
    let gap = now.saturating_sub(last);
    STOPPED_NS.fetch_add(gap.saturating_sub(STOP_TICK.as_nanos() as u64), SeqCst);
}

/// Starts counting the time this process spends stopped (SIGSTOP, or
/// Ctrl-Z's SIGTSTP, until SIGCONT): a thread notes the clock every
/// [`STOP_TICK`], and SIGCONT's handler adds the time since its last
/// note. A referee stopped while a bot thinks does not charge the bot
/// for it ([`stopped`]). Once per process; later calls do nothing.
pub fn watch_stops() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        LAST_TICK_NS.store(monotonic_ns(), std::sync::atomic::Ordering::SeqCst);
        let spawned = std::thread::Builder::new()
            .name("stop-watch".into())
            .spawn(|| loop {
                std::thread::sleep(STOP_TICK);
                LAST_TICK_NS.store(monotonic_ns(), std::sync::atomic::Ordering::SeqCst);
            });
        if spawned.is_err() {
            return;
        }
        // A handler of only atomics and clock_gettime, which are
        // async-signal-safe.
        handle(libc::SIGCONT, on_continue);
    });
}

/// How long this process has spent stopped since [`watch_stops`] began
/// (zero without it), to a tick or so.
pub fn stopped() -> std::time::Duration {
    std::time::Duration::from_nanos(STOPPED_NS.load(std::sync::atomic::Ordering::SeqCst))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An address another process holds is said so, with what to do.
    #[test]
    fn an_address_in_use_is_said_so() {
        let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = held.local_addr().unwrap();
        let e = std::net::TcpListener::bind(at).unwrap_err();
        assert_eq!(
            cannot_listen(at, &e),
            format!("cannot listen on {at}, which another process holds (stop it, or give another --bind)")
        );
    }

    #[test]
    fn the_state_follows_the_last_parenthesis_of_the_command_name() {
        assert_eq!(state_in_stat(b"42 (python3) S 1 42 42 0 -1"), Some('S'));
        // A command name may hold spaces and parentheses of its own.
        assert_eq!(state_in_stat(b"7 (a) R (b) Z 1 7 7"), Some('Z'));
        assert_eq!(state_in_stat(b"7 (cut"), None);
        assert_eq!(state_in_stat(b""), None);
    }

    #[test]
    fn a_cpu_held_by_one_claim_goes_last_in_the_next() {
        // CPU numbers no machine has, so that no real league interferes.
        let cpus = [9001, 9002, 9003];
        let first = claim_cpus(&cpus, 1);
        assert_eq!(first.cpus, [9001, 9002, 9003]);
        let second = claim_cpus(&cpus, 2);
        assert_eq!(second.cpus, [9002, 9003, 9001]);
        let third = claim_cpus(&cpus, 1);
        assert_eq!(third.cpus, [9001, 9002, 9003], "all held: in order");
        drop(first);
        assert_eq!(claim_cpus(&cpus, 1).cpus, [9001, 9002, 9003]);
    }

    #[test]
    fn this_process_is_alive_and_no_process_has_the_largest_pid() {
        assert!(process_alive(std::process::id()));
        assert_eq!(process_state(u32::MAX), None);
    }
}
