//! What a bot runs as: its command, its limits, its sandbox, where its
//! stderr goes. A description only: `spawn.rs` starts it.

use std::path::PathBuf;

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

    /// The command as one line for messages ([`shown_words`]).
    pub fn display(&self) -> String {
        shown_words(&self.argv())
    }
}

/// Words of a command (a bot.toml's `command` or `build`) as one line for
/// a terminal: joined by spaces, each escaped
/// ([`crate::protocol::escape_line`]), so that a word can neither break
/// the line nor send the terminal an escape sequence.
pub fn shown_words<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| crate::protocol::escape_line(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
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
    /// Keep its stderr in memory too, as lines, at most this many bytes
    /// between two takes (see [`BotProcess::take_stderr`]); `None`: not
    /// kept (the default).
    ///
    /// [`BotProcess::take_stderr`]: super::BotProcess::take_stderr
    pub capture: Option<u64>,
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
    /// The most its folder may hold: bytes, and files and folders
    /// (`[sandbox] build_mb`, `build_files`).
    pub quota: Quota,
}

/// What a build's folder may hold: in the sandbox, the size and inodes of
/// the tmpfs it is built in, so the kernel refuses more; without it,
/// checked after the build (docs/security.md, "Builds").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub bytes: u64,
    pub files: u64,
}

impl Quota {
    /// A league's, when its file does not say: 2 GiB in 200,000 files.
    pub const LEAGUE: Quota = Quota {
        bytes: 2048 << 20,
        files: 200_000,
    };
    /// A ladder's, when its file does not say: 256 MiB in 20,000 files.
    pub const LADDER: Quota = Quota {
        bytes: 256 << 20,
        files: 20_000,
    };
}

impl Default for Quota {
    fn default() -> Quota {
        Quota::LEAGUE
    }
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

impl Sandbox {
    /// The mode as a league file writes it (`sandbox = "off"`).
    pub fn word(self) -> &'static str {
        match self {
            Sandbox::On => "on",
            Sandbox::Off => "off",
        }
    }
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
            capture: None,
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

    /// What these settings (a bot.toml's) raise above the defaults of
    /// [`Limits::new`] where `league` (a league file's `[limits]`, and its
    /// flags) sets nothing: a league takes them as asked, and says so.
    pub fn raised_over_defaults(&self, league: &LimitSettings) -> Vec<String> {
        let d = Limits::new(0);
        let mut out = Vec::new();
        let mut check = |key: &str, asked: Option<u64>, set: bool, default: u64| {
            if let Some(a) = asked.filter(|&a| !set && a > default) {
                out.push(format!("{key} = {a} (default {default})"));
            }
        };
        check(
            "memory_mb",
            self.memory_mb,
            league.memory_mb.is_some(),
            d.memory_mb,
        );
        check(
            "processes",
            self.processes,
            league.processes.is_some(),
            d.processes,
        );
        check(
            "cpus",
            self.cpus.map(u64::from),
            league.cpus.is_some(),
            u64::from(d.cpus),
        );
        check(
            "file_size_mb",
            self.file_size_mb,
            league.file_size_mb.is_some(),
            d.file_size_mb,
        );
        out
    }

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

    /// The first setting above the bound the flags and a league file's
    /// `[limits]` have (a bot.toml's, a league's bot table's): its key,
    /// its value and the bound.
    pub fn too_high(&self) -> Option<(&'static str, u64, u64)> {
        [
            ("memory_mb", self.memory_mb, LimitSettings::MAX_MB),
            ("processes", self.processes, LimitSettings::MAX_PROCESSES),
            (
                "cpus",
                self.cpus.map(u64::from),
                u64::from(LimitSettings::MAX_CPUS),
            ),
            ("file_size_mb", self.file_size_mb, LimitSettings::MAX_MB),
        ]
        .into_iter()
        .find_map(|(key, n, max)| n.filter(|&n| n > max).map(|n| (key, n, max)))
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
