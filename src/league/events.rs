//! What the league runner tells its caller: its events as it goes
//! ([`Event`]), how a run ended ([`RunEnd`], [`Summary`]) and its errors
//! ([`LeagueError`]), each naming the bot, the file or the row.

use super::folder::{Rejected, StoreError};
use crate::results::GameRow;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum LeagueError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("bot `{bot}`: build command {command:?} failed in {}: {why}", dir.canonicalize().unwrap_or_else(|_| dir.clone()).display())]
    Build {
        bot: String,
        command: Vec<String>,
        dir: PathBuf,
        why: String,
    },
    /// Every bot that cannot start, each with its command and why.
    #[error("{}", cannot_start_message(.0))]
    Start(Vec<CannotStart>),
    #[error("cannot start the worker runtime: {0}")]
    Runtime(std::io::Error),
    /// Rows of games.csv that the schedule does not account for.
    #[error("{}", rejected_message(.path, .rows))]
    Rejected { path: PathBuf, rows: Vec<Rejected> },
    /// The league's format cannot run as asked (a Swiss with shards).
    #[error("{0}")]
    Format(String),
    /// Ctrl-C, SIGTERM or SIGHUP came before the games (during the bots'
    /// start-up check).
    #[error("interrupted before the games: no game was played")]
    Interrupted,
}

/// A bot that cannot start.
#[derive(Debug)]
pub struct CannotStart {
    pub bot: String,
    pub command: Vec<String>,
    /// Where the bot is written (`league.toml:4`), if known.
    pub origin: Option<String>,
    /// The folder its command runs in.
    pub cwd: PathBuf,
    pub why: String,
    /// The machine's fault (no descriptors, processes or memory left),
    /// not the bot's.
    pub machine: bool,
}

fn cannot_start_message(bots: &[CannotStart]) -> String {
    let one = |b: &CannotStart| {
        let at = b
            .origin
            .as_deref()
            .map(|o| format!("{o}: "))
            .unwrap_or_default();
        let placeholder = crate::bot::manifest::unknown_placeholder(&b.command)
            .map(|p| format!("; {p}"))
            .unwrap_or_default();
        format!(
            "{at}bot `{}` cannot start ({:?}, run in {}): {}{placeholder}",
            b.bot,
            b.command,
            b.cwd.display(),
            b.why
        )
    };
    match bots {
        [b] => one(b),
        _ => {
            let mut msg = format!("{} bots cannot start:", bots.len());
            for b in bots {
                msg.push_str("\n  ");
                msg.push_str(&one(b));
            }
            msg
        }
    }
}

fn rejected_message(path: &std::path::Path, rows: &[Rejected]) -> String {
    let mut msg = format!(
        "{} row(s) of {} do not match the schedule:",
        rows.len(),
        path.display()
    );
    for r in rows.iter().take(20) {
        msg.push_str(&format!("\n  {}:{}: {}", path.display(), r.line, r.why));
    }
    if rows.len() > 20 {
        msg.push_str(&format!("\n  ... and {} more", rows.len() - 20));
    }
    msg.push_str("\nNothing was played. Run again with --repair to set these rows aside in rejected.csv and play their games again.");
    msg
}

/// What the runner reports as it goes.
#[derive(Clone, Debug)]
pub enum Event {
    /// A bot's build command is running: its own (`how` empty), or cargo
    /// bringing this package's binary it runs up to date with the source
    /// (`how` says so, and where).
    Building { bot: String, how: String },
    /// `--repair` set rows aside in `path` (their games will be played).
    SetAside { rows: Vec<Rejected>, path: PathBuf },
    /// The games are about to start: `done` of `total` were finished before.
    Started {
        total: usize,
        done: usize,
        dir: PathBuf,
        repaired_bytes: u64,
        /// Bytes of records without a row cut from the record logs.
        cut_record_bytes: u64,
        /// How long the check of the rows found took.
        checked_in: Duration,
    },
    /// A game was committed to games.csv; `detail` says what the offender
    /// of a forfeit did.
    Finished {
        row: Box<GameRow>,
        detail: Option<String>,
    },
    /// A bot process was (re)started on a worker.
    BotStarted {
        bot: String,
        worker: usize,
        restart: bool,
    },
    /// The pairings hand out no more games before the schedule's end, and
    /// `why` (an SPRT decided): the games in flight are finished and
    /// recorded.
    Ending { why: String },
    /// Ctrl-C or SIGTERM: in-flight games are abandoned (they rerun on resume).
    Interrupted,
    /// Something the organiser should know that does not stop the run.
    Warning(String),
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Every game of the schedule (or shard) is in games.csv.
    Complete,
    /// Ctrl-C, SIGTERM or SIGHUP: in-flight games were abandoned and rerun
    /// on resume.
    Interrupted,
    /// The league stopped itself before the end; resume goes on from here.
    Stopped(Stop),
    /// The caller raised [`RunOptions::drain`], or the pairings ended
    /// before the schedule (an SPRT decided): the games in flight were
    /// finished and recorded, the rest not started.
    Drained,
}

/// Why a league stopped itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The harness failed (the results could not be written, or a game
    /// could not be played at all): nothing was charged to a bot, nothing
    /// recorded was lost, and a resume after fixing the cause goes on.
    Failed(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Failed(why) => f.write_str(why),
        }
    }
}

/// The end of a run.
#[derive(Clone, Debug)]
pub struct Summary {
    pub total: usize,
    pub played: usize,
    pub skipped: usize,
    pub end: RunEnd,
    pub dir: PathBuf,
}
