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
//! - `capture.rs`: with [`Launch::capture`], its stderr also kept in
//!   memory as lines, each with a mark the caller sets
//!   ([`BotProcess::mark_stderr`], the referee's turn), taken per game
//!   ([`BotProcess::take_stderr`]).
//! - `sink.rs`: the stderr log file, capped per process and by a budget.
//! - `lines.rs`: [`BotProcess::send_line`] (one write per line, bounded by a
//!   deadline), [`BotProcess::read_line`] (one `select!` over line / exit /
//!   deadline; a line longer than [`Limits::max_line`] costs bounded memory
//!   and is [`BotError::LineTooLong`]; blank lines are skipped), and
//!   [`BotProcess::stray_output`]: what the bot wrote without being asked,
//!   seen without waiting, so that it is never taken for a later answer.
//! - `stdin.rs`: the bot's stdin, and a watch on it through the runtime:
//!   a bot that closes it while its answer is awaited is seen at once.
//! - `stdout.rs`: the bot's stdout, read through the runtime or, on a
//!   thread that [`wait_in_place_on_this_thread`] marks (a league's
//!   worker), a reply waited for in place (a read, a yield, `poll(2)`)
//!   for up to [`WAIT_IN_PLACE`]: an instant bot's answer without the
//!   reactor's round of `epoll_wait`, timer and task wake-up.
//! - `contain.rs`: [`BotProcess::shutdown`]`(grace)` (close stdin, wait,
//!   SIGTERM the group, wait, SIGKILL the group), [`BotProcess::kill`], and
//!   `Drop`, which SIGKILLs the group, so dropping a game future mid-game
//!   leaves no process behind. Outside the sandbox every kill also reaches
//!   the descendants that left the group, found by [`TOKEN_VAR`] in their
//!   environment; in it, they die with the PID namespace they cannot leave.
//! - `sys.rs`: every `unsafe` system call of the crate, each with its SAFETY
//!   note; the rest of the crate calls safe wrappers.
//!
//! Everything here runs on the caller's tokio runtime (a `current_thread`
//! runtime per worker is the intended use); nothing blocks a thread but
//! the in-place wait of `stdout.rs`, at most [`WAIT_IN_PLACE`] a read, and
//! only on a thread that asked for it.

pub mod build;
mod capture;
mod contain;
mod error;
mod launch;
mod lines;
pub mod manifest;
pub mod sandbox;
mod sink;
mod spawn;
mod stdin;
mod stdout;
pub use stdout::{wait_in_place_on_this_thread, WAIT_IN_PLACE};
pub(crate) mod sys;

pub use capture::{Captured, MarkedLine};
pub use contain::{group_alive, kill_group, kill_tokened, token_alive};
pub use error::{describe_status, failed_start_note, BotError};
pub use launch::{
    shown_words, BotCommand, Building, Launch, LimitSettings, Limits, Quota, Sandbox, StderrBudget,
    DEFAULT_STDERR_CAP,
};
pub use lines::{STRAY_KEEP, STRAY_SCAN};
pub use spawn::{sweep_leftovers, SANDBOX_START_NOTE, TOKEN_VAR, UNSANDBOXED_LIMITS};

use std::process::ExitStatus;
use tokio::io::BufReader;
use tokio::process::Child;

/// The last `n` lines (at most the last 8 KiB) of a bot's stderr log,
/// each line cut at 300 characters; `None` when there is nothing to show.
/// Waits first until the log stops growing (at most a second): it is
/// written by the bot's stderr drain, which may still be finishing.
///
/// `from`: the log's length when the process of interest started (a log
/// shared by several processes in turn shows only the last one's lines).
pub async fn log_tail(path: &std::path::Path, n: usize, from: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    // Until the log stops growing (at most a second): the drain writes
    // what the pipe holds at once, so a log unchanged for 50 ms is whole,
    // and an empty one still empty after 200 ms has nothing coming (a bot
    // that wrote nothing on stderr does not hold its forfeit's report for
    // the whole second).
    let size = || std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut last = size();
    let mut unchanged = 0;
    for _ in 0..20 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let now = size();
        unchanged = if now == last { unchanged + 1 } else { 0 };
        if (unchanged >= 1 && now > 0) || unchanged >= 4 {
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

/// A running bot process. Started in `spawn.rs`, read and written in
/// `lines.rs`, ended in `contain.rs`.
pub struct BotProcess {
    child: Child,
    pid: u32,
    stdin: Option<stdin::Input>,
    stdout: BufReader<stdout::Stdout>,
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
    /// Its stderr kept in memory, line by line ([`Launch::capture`]).
    capture: Option<capture::Capture>,
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
    /// The main process's /proc/PID/stat, kept open once read: whether
    /// the bot is idle is looked at after most games and decisions, and
    /// a read of an open file costs one system call where opening it by
    /// its path costs four.
    stat: Option<std::fs::File>,
    /// The main process's CPU time when it was last stopped (clock
    /// ticks), to see at the resume whether it ran meanwhile.
    cpu_at_stop: Option<u64>,
    /// CPU time the main process used while it was paused, not yet
    /// charged (clock ticks): a bot can arrange a SIGCONT for itself (a
    /// timer, a signal it asked for), which undoes the pause.
    ran_paused: u64,
}

/// How long a bot that is not to move may run before it is paused: one
/// that answers sooner costs no pause, and one that leaves processes
/// running gains at most this much of another's turn.
pub const PAUSE_AFTER: std::time::Duration = std::time::Duration::from_millis(1);

/// How long a bot that is not to move may run when it is not idle by then
/// (still handling `game_start`, or writing): then it is paused all the
/// same.
pub const PAUSE_GRACE: std::time::Duration = std::time::Duration::from_millis(10);

/// How long a bot between games may run when it is not idle by then: a
/// bot exiting after `game_end` (a Python interpreter's shutdown, on a
/// loaded machine) has that long; one still busy after it (spinning, or
/// thinking on others' time) is paused all the same. Paused halfway
/// through an exit, it ends it when its next game's `game_start` thaws
/// it, and is started again without charge as a bot that left before
/// playing.
pub const PAUSE_BETWEEN_GAMES: std::time::Duration = std::time::Duration::from_millis(250);

/// The most CPU time (clock ticks of 10 ms) a bot's main process may be
/// seen to use while paused before it is charged
/// ([`BotProcess::ran_while_paused`]): a stopped process uses none, and a
/// tick may fall between the SIGSTOP sent and the process stopped.
pub const RAN_PAUSED_LIMIT: u64 = 2;

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

    /// True when a fork or thread of the bot was refused at its process
    /// limit (where its cgroup can say so).
    pub fn at_process_limit(&self) -> bool {
        self.jail
            .as_ref()
            .is_some_and(sandbox::Jail::at_process_limit)
    }
}

#[cfg(test)]
mod tests;
