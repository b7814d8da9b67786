//! The bot runner: one bot process, started from a [`Launch`], talked to in
//! lines over its stdin and stdout, and ended with every process it started.
//!
//! Owns processes and pipes only: it knows nothing of the rules, of JSON or
//! of games (see [`crate::protocol`] and [`crate::referee`]).
//!
//! Rooms, in the order a bot's life passes through them:
//! - `spawn.rs`: [`BotProcess::spawn`]`(&launch)` starts the command in its
//!   own process group, with piped stdin/stdout, its stderr drained on its
//!   own task into the log (capped at [`Limits::stderr_cap`] bytes, the rest
//!   discarded) or to `/dev/null`, and [`TOKEN_VAR`] in its environment.
//! - `lines.rs`: [`BotProcess::send_line`] (one write per line, bounded by a
//!   deadline), [`BotProcess::read_line`] (one `select!` over line / exit /
//!   deadline; a line longer than [`Limits::max_line`] costs bounded memory
//!   and is [`BotError::LineTooLong`]; blank lines are skipped), and
//!   [`BotProcess::stray_output`]: what the bot wrote without being asked,
//!   seen without waiting, so that it is never taken for a later answer.
//! - `contain.rs`: [`BotProcess::shutdown`]`(grace)` (close stdin, wait,
//!   SIGTERM the group, wait, SIGKILL the group), [`BotProcess::kill`], and
//!   `Drop`, which SIGKILLs the group, so dropping a game future mid-game
//!   leaves no process behind. Every kill also reaches the descendants that
//!   left the group, found by [`TOKEN_VAR`] in their environment.
//! - `sys.rs`: every `unsafe` system call of the crate, each with its SAFETY
//!   note; the rest of the crate calls safe wrappers.
//!
//! Everything here runs on the caller's tokio runtime (a `current_thread`
//! runtime per worker is the intended use); nothing blocks a thread.

pub mod build;
mod contain;
mod lines;
pub mod manifest;
pub mod sandbox;
mod spawn;
pub(crate) mod sys;

pub use contain::{group_alive, kill_group, kill_tokened, token_alive};
pub use lines::{STRAY_KEEP, STRAY_SCAN};
pub use spawn::{sweep_leftovers, TOKEN_VAR};

use std::path::PathBuf;
use std::process::ExitStatus;
use tokio::io::BufReader;
use tokio::process::{Child, ChildStdin, ChildStdout};

/// What to run: program, arguments, working directory, environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BotCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Working directory (default: the referee's).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl BotCommand {
    /// A command from its words (`["python3", "bot.py"]`).
    pub fn from_words<S: AsRef<str>>(words: &[S]) -> Option<BotCommand> {
        let (first, rest) = words.split_first()?;
        Some(BotCommand {
            program: first.as_ref().to_string(),
            args: rest.iter().map(|s| s.as_ref().to_string()).collect(),
            cwd: None,
            env: Vec::new(),
        })
    }

    /// The program and its arguments.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// The command as one line for messages.
    pub fn display(&self) -> String {
        let mut s = self.program.clone();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Everything needed to start one bot process: the one value spawning
/// takes, so that a new way of starting bots changes this type and not the
/// signatures of its callers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub command: BotCommand,
    /// Where the bot's stderr is appended; `None`: discarded.
    pub stderr_log: Option<PathBuf>,
    pub limits: Limits,
    /// Bytes of stderr that this process shares with the others launched
    /// with the same budget (a league gives one per bot): once spent,
    /// their stderr is discarded, however often the bot is restarted.
    pub stderr_budget: Option<StderrBudget>,
    pub sandbox: Sandbox,
    /// Folders a sandboxed bot must not see even where its view would show
    /// them (a league's results): an empty folder is shown instead.
    pub hidden: Vec<PathBuf>,
    /// Paths a sandboxed bot sees read-only besides its own view (a league
    /// file's `[sandbox] expose`).
    pub expose: Vec<PathBuf>,
    /// The user ids (`first`, `count`) sandboxed bots run as when the
    /// referee runs as root; `None`: [`sandbox::DEFAULT_UIDS`].
    pub uids: Option<(u32, u32)>,
    /// False (the default): the bot's processes are stopped while it is
    /// not its turn (see [`BotProcess::pause`]); true: it may think on
    /// the others' time.
    pub ponder: bool,
    /// Set for a bot's build (see [`build`]), not for the bot: its folder
    /// (a copy made for the build) is writable, and the network is the
    /// host's when the league allows it.
    pub building: Option<Building>,
}

/// What a build may do that a bot may not (see [`Launch::building`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Building {
    /// The host's network (`[sandbox] build_network = true`).
    pub network: bool,
}

/// How a bot process is shut in (docs/security.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sandbox {
    /// Its own user, PID, mount, network and IPC namespaces (no network at
    /// all, no other process), a root of its own (see `view.rs`: system
    /// folders, `PATH`, its own folder, read-only), and an environment
    /// cleared to [`sandbox::SANDBOX_ENV`], the bot's own `env` and [`TOKEN_VAR`],
    /// with `HOME` and `TMPDIR` at `/tmp`, a scratch folder of its own,
    /// created for the process and removed after it.
    #[default]
    On,
    /// None of that: the referee's environment and network.
    Off,
}

/// Bytes of stderr log shared by several processes (see
/// [`Launch::stderr_budget`]).
#[derive(Clone, Debug)]
pub struct StderrBudget(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl StderrBudget {
    pub fn new(bytes: u64) -> StderrBudget {
        StderrBudget(std::sync::Arc::new(bytes.into()))
    }

    /// Takes up to `want` bytes from the budget; returns how many it got.
    pub fn take(&self, want: u64) -> u64 {
        use std::sync::atomic::Ordering;
        let mut left = self.0.load(Ordering::Relaxed);
        loop {
            let got = want.min(left);
            match self.0.compare_exchange_weak(
                left,
                left - got,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return got,
                Err(now) => left = now,
            }
        }
    }
}

/// Two budgets are equal when they are the same budget.
impl PartialEq for StderrBudget {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for StderrBudget {}

impl Launch {
    /// Launches `command` under `limits`, its stderr discarded.
    pub fn new(command: BotCommand, limits: Limits) -> Launch {
        Launch {
            command,
            stderr_log: None,
            limits,
            stderr_budget: None,
            sandbox: Sandbox::On,
            hidden: Vec::new(),
            expose: Vec::new(),
            uids: None,
            ponder: false,
            building: None,
        }
    }

    /// The same launch in `sandbox`.
    pub fn sandboxed(mut self, sandbox: Sandbox) -> Launch {
        self.sandbox = sandbox;
        self
    }

    /// The same launch, with `dir` hidden from a sandboxed bot.
    pub fn hiding(mut self, dir: impl Into<PathBuf>) -> Launch {
        self.hidden.push(dir.into());
        self
    }

    /// The same launch, with `path` shown read-only to a sandboxed bot.
    pub fn exposing(mut self, path: impl Into<PathBuf>) -> Launch {
        self.expose.push(path.into());
        self
    }

    /// The same launch with stderr appended to `path`.
    pub fn log_to(mut self, path: impl Into<PathBuf>) -> Launch {
        self.stderr_log = Some(path.into());
        self
    }
}

/// What the bot runner enforces on one process: its pipes, and in the
/// sandbox its resources (docs/security.md). (How long a bot may take is
/// the referee's business: it passes deadlines per call.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest line (bytes, newline excluded) accepted from the bot's stdout.
    pub max_line: usize,
    /// Bytes of stderr kept in the log; the rest is read and discarded.
    pub stderr_cap: u64,
    /// Memory of the bot's whole process tree, MiB (cgroup).
    pub memory_mb: u64,
    /// Processes and threads of the bot's tree at once (cgroup).
    pub processes: u64,
    /// CPUs' worth of time the tree may use (cgroup CFS quota).
    pub cpus: u32,
    /// Largest file the bot may write, MiB (rlimit).
    pub file_size_mb: u64,
}

/// Resource limits as given in one place (a bot.toml's `[limits]`, a
/// league's `[limits]`, flags): fields not given fall back to the next
/// place, then to [`Limits::new`]'s defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    pub memory_mb: Option<u64>,
    pub processes: Option<u64>,
    pub cpus: Option<u32>,
    pub file_size_mb: Option<u64>,
}

impl LimitSettings {
    /// The largest `memory_mb` and `file_size_mb` accepted (1 TiB).
    pub const MAX_MB: u64 = 1 << 20;
    /// The largest `processes` accepted.
    pub const MAX_PROCESSES: u64 = 100_000;
    /// The largest `cpus` accepted.
    pub const MAX_CPUS: u32 = 1024;

    /// These settings, where given; `other`'s elsewhere.
    pub fn or(self, other: LimitSettings) -> LimitSettings {
        LimitSettings {
            memory_mb: self.memory_mb.or(other.memory_mb),
            processes: self.processes.or(other.processes),
            cpus: self.cpus.or(other.cpus),
            file_size_mb: self.file_size_mb.or(other.file_size_mb),
        }
    }

    /// A ladder's rule (issue 47): these settings where given, else the
    /// defaults of [`Limits::new`], each lowered where `asks` (a bot.toml
    /// written by a stranger) asks for less; never raised. Every field is
    /// given.
    pub fn capping(self, asks: LimitSettings) -> LimitSettings {
        let d = Limits::new(0);
        let at_most = |own: Option<u64>, default: u64, ask: Option<u64>| {
            let ceiling = own.unwrap_or(default);
            Some(ask.map_or(ceiling, |a| a.min(ceiling)))
        };
        LimitSettings {
            memory_mb: at_most(self.memory_mb, d.memory_mb, asks.memory_mb),
            processes: at_most(self.processes, d.processes, asks.processes),
            cpus: at_most(
                self.cpus.map(u64::from),
                u64::from(d.cpus),
                asks.cpus.map(u64::from),
            )
            .map(|c| c as u32),
            file_size_mb: at_most(self.file_size_mb, d.file_size_mb, asks.file_size_mb),
        }
    }

    /// Writes the settings given into `limits`.
    pub fn apply(self, limits: &mut Limits) {
        limits.memory_mb = self.memory_mb.unwrap_or(limits.memory_mb);
        limits.processes = self.processes.unwrap_or(limits.processes);
        limits.cpus = self.cpus.unwrap_or(limits.cpus);
        limits.file_size_mb = self.file_size_mb.unwrap_or(limits.file_size_mb);
    }

    /// The first setting that is 0 (no limit can be 0), if any.
    pub fn zero(&self) -> Option<&'static str> {
        [
            ("memory_mb", self.memory_mb == Some(0)),
            ("processes", self.processes == Some(0)),
            ("cpus", self.cpus == Some(0)),
            ("file_size_mb", self.file_size_mb == Some(0)),
        ]
        .into_iter()
        .find_map(|(name, zero)| zero.then_some(name))
    }
}

/// Bytes of a bot's stderr kept per process by default (1 MiB).
pub const DEFAULT_STDERR_CAP: u64 = 1 << 20;

impl Limits {
    /// Lines up to `max_line` bytes, the default stderr cap and resource
    /// limits (1024 MiB, 64 processes, 1 CPU, 64 MiB files).
    pub fn new(max_line: usize) -> Limits {
        Limits {
            max_line,
            stderr_cap: DEFAULT_STDERR_CAP,
            memory_mb: 1024,
            processes: 64,
            cpus: 1,
            file_size_mb: 64,
        }
    }
}

/// What went wrong talking to a bot process.
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error("cannot start `{command}`: {}", spawn_why(.command, .source))]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("cannot open the stderr log {path}: {source}")]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no line before the deadline")]
    Timeout,
    /// The process exited (or closed its stdout, `status` then unknown).
    #[error("the bot exited ({})", describe_status(.status))]
    Exited { status: Option<ExitStatus> },
    /// Writing to the bot failed because nothing reads its stdin any more
    /// (it closed stdin or exited): EPIPE. `status` when already known.
    #[error("the bot closed its stdin ({})", describe_status(.status))]
    InputClosed { status: Option<ExitStatus> },
    /// A line longer than the limit; `start` holds its first bytes.
    #[error("line longer than {limit} bytes")]
    LineTooLong { limit: usize, start: Vec<u8> },
    /// The sandbox could not be set up (no user namespaces, say).
    #[error("cannot start `{command}` in its sandbox: {}", sandbox_why(.source))]
    Sandbox {
        command: String,
        source: std::io::Error,
    },
    /// The command cannot run in the sandbox as written (a bot.toml's
    /// argument names a file the bot would not see); the message says
    /// where it is written and why.
    #[error("{0}")]
    Refused(String),
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl BotError {
    /// True when the failure is the machine's, not the bot's: out of
    /// descriptors (EMFILE, ENFILE), processes or memory (EAGAIN, ENOMEM),
    /// disk (ENOSPC, EIO), or a stderr log that cannot be opened. Such a
    /// failure must never be charged to the bot.
    pub fn is_harness(&self) -> bool {
        let harness = |e: &std::io::Error| {
            matches!(
                e.raw_os_error(),
                Some(
                    libc::EMFILE
                        | libc::ENFILE
                        | libc::EAGAIN
                        | libc::ENOMEM
                        | libc::ENOSPC
                        | libc::EIO
                )
            )
        };
        match self {
            BotError::Log { .. } | BotError::Sandbox { .. } => true,
            BotError::Spawn { source, .. } => harness(source),
            BotError::Io(e) => harness(e),
            _ => false,
        }
    }
}

/// The last `n` lines (at most the last 8 KiB) of a bot's stderr log,
/// each line cut at 300 characters; `None` when there is nothing to show.
/// Waits first until the log stops growing (at most a second): it is
/// written by the bot's stderr drain, which may still be finishing.
///
/// `from`: the log's length when the process of interest started (a log
/// shared by several processes in turn shows only the last one's lines).
pub async fn log_tail(path: &std::path::Path, n: usize, from: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    // Until the log stops growing (at most a second).
    let size = || std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut last = size();
    for _ in 0..20 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let now = size();
        if now == last && now > 0 {
            break;
        }
        last = now;
    }
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(8192).max(from.min(len))))
        .ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.chars().take(300).collect())
        .collect();
    let tail = &lines[lines.len().saturating_sub(n)..];
    (!tail.is_empty()).then(|| tail.join("\n"))
}

/// Why a command did not start: for a bare program name that does not
/// exist, that it is not on `PATH` (a missing compiler, say).
fn spawn_why(command: &str, e: &std::io::Error) -> String {
    let program = command.split(' ').next().unwrap_or_default();
    match e.kind() == std::io::ErrorKind::NotFound && !program.contains('/') {
        true => {
            format!("`{program}` was not found on PATH ({e}); install it, or name it by its path")
        }
        false => e.to_string(),
    }
}

/// Why a sandbox could not be set up, and what to do.
fn sandbox_why(e: &std::io::Error) -> String {
    const OFF: &str = "or run without it: `sandbox = \"off\"` in the league file, `--sandbox off` on the command line (docs/security.md)";
    if e.raw_os_error() == Some(sandbox::VIEW_FAILED) {
        format!("its root (the folders it may see) could not be built; the bot's stderr log names the step that failed (a folder that cannot be mounted, say); {OFF}")
    } else if sandbox::is_isolate_error(e) {
        format!("no user namespace can be made here. The sandbox needs them (Linux: sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone = 1 where it exists; in a container, allow unshare and mount); {OFF}")
    } else {
        format!("{e}; {OFF}")
    }
}

/// "status 3", "signal 9", "unknown status".
pub fn describe_status(status: &Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("status {c}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "unknown status".into(),
        },
        None => "stdout closed".into(),
    }
}

/// A running bot process. Started in `spawn.rs`, read and written in
/// `lines.rs`, ended in `contain.rs`.
pub struct BotProcess {
    child: Child,
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The line being read (kept across cancelled reads).
    line: Vec<u8>,
    /// Bytes of the current over-long line already skipped.
    overflow: bool,
    /// `line` holds a complete line already returned (not a partial one
    /// left by a cancelled read).
    line_done: bool,
    max_line: usize,
    exited: Option<ExitStatus>,
    stdout_eof: bool,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    /// Bytes read from the bot's stderr so far (kept or not; 0 when its
    /// stderr goes to /dev/null).
    stderr_seen: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The value of [`TOKEN_VAR`] in the bot's environment, inherited by
    /// its descendants: finds the ones that left the process group.
    token: String,
    /// The sandbox's share of the machine (scratch folder, cgroups),
    /// released with the process.
    jail: Option<sandbox::Jail>,
    /// See [`Launch::ponder`].
    ponder: bool,
    /// Whether the bot is paused, and how many times it was resumed (a
    /// pause to come is called off by a resume): shared with the task of
    /// [`BotProcess::pause_later`].
    pausing: std::sync::Arc<std::sync::Mutex<Pausing>>,
    /// The bot's main process (the keeper's child in the sandbox), once
    /// known.
    main_pid: Option<u32>,
}

/// See [`BotProcess::pausing`](BotProcess).
#[derive(Debug, Default)]
struct Pausing {
    paused: bool,
    generation: u64,
}

/// How long a bot that is not to move may run before it is paused: one
/// that answers sooner costs no pause, and one that leaves processes
/// running gains at most this much of another's turn.
pub const PAUSE_AFTER: std::time::Duration = std::time::Duration::from_millis(1);

/// How long a bot that is not to move may run when it is not idle by then
/// (still handling `game_start`, or writing): then it is paused all the
/// same.
pub const PAUSE_GRACE: std::time::Duration = std::time::Duration::from_millis(10);

impl std::fmt::Debug for BotProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotProcess")
            .field("pid", &self.pid)
            .finish()
    }
}

impl BotProcess {
    /// The process id, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The token of this bot's processes (see [`TOKEN_VAR`]).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// True when the kernel killed one of the bot's processes at its
    /// memory limit.
    pub fn over_memory(&self) -> bool {
        self.jail.as_ref().is_some_and(sandbox::Jail::over_memory)
    }
}

#[cfg(test)]
mod tests;
