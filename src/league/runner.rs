//! The concurrent league runner: builds and checks the bots, runs the
//! games its [`Pairings`] hand out on N pinned worker threads (each a
//! single-threaded tokio runtime reusing its own bot processes), and
//! commits each finished game through one ordered writer, the main
//! thread's, to its [`Store`] (the results folder). Workers play and
//! serialize; only the main thread writes. `run_logged` reads as the
//! pipeline: open the store, prepare the bots, then get work, play,
//! commit, report (`play_all`, `worker`, `play_one`, `commit_all`). A run ends as a
//! [`RunEnd`]: complete, interrupted (Ctrl-C, SIGTERM, SIGHUP), drained
//! (the caller asked, or the pairings had no more games: an SPRT
//! decided), or stopped by the league itself (a harness failure, nothing
//! charged to a bot).
//!
//! Knows nothing of rules (the referee plays the games) or of ratings. It
//! emits [`Event`]s; the command line's console consumes them.

use super::config::{BotSpec, Format, Tournament};
pub use super::events::{CannotStart, Event, LeagueError, RunEnd, Stop, Summary};
use super::folder::{self, Expected, Layout, LeagueMeta, PlayedUnder, ResultsDir};
use super::launch::Room;
use super::pairings::{Pairings, RoundRobin, SprtStop};
use super::schedule::{self, Schedule, ScheduledGame, Shard};
use super::swiss_games::{SwissPairings, SwissPlan, SwissState};
use crate::bot::manifest;
use crate::bot::{Launch, Sandbox, StderrBudget};
use crate::referee::{
    self, record, BotPlayer, Clock, GameReport, GameSpec, Player, TimeControl, Timing,
};
use crate::results::store::Store;
use crate::results::GameRow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How to run (the tournament says what to run).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub shard: Option<Shard>,
    /// Skip the bots' build commands.
    pub no_build: bool,
    /// Do not pin workers to CPUs.
    pub no_affinity: bool,
    /// Set rows that do not match the schedule aside (rejected.csv) and
    /// play their games again, instead of stopping.
    pub repair: bool,
    /// Raised by the caller (from its event handler) to end the league
    /// early: no game starts after it, the games in flight are finished
    /// and recorded, and the run ends as [`RunEnd::Drained`].
    pub drain: Drain,
    /// The league's SPRT, with the games of earlier runs counted: the
    /// schedule ends when it decides (the run ends as
    /// [`RunEnd::Drained`]).
    pub sprt: Option<SprtStop>,
    /// The command that resumes this league, when it is not `arena run
    /// FILE` (kept in league.json for `arena status`).
    pub resume: Option<String>,
    /// The `--bots` list the league's bots were kept by, if any (kept in
    /// league.json: a resume under another is refused naming it).
    pub bots_flag: Option<Vec<String>>,
    /// The programs of the bots without a build, hashed by the caller
    /// before the run ([`programs_unbuilt`]: `arena match` choosing its
    /// folder): league.json keeps these, and only the bots with a build
    /// are hashed after it, so that each file is read once.
    pub programs: Option<Programs>,
}

/// Each bot's program files and their SHA-256, by bot name: what
/// league.json's `played_under.programs` keeps.
pub type Programs = std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

/// A flag that asks a running league to finish its games in flight and
/// start no other ([`RunOptions::drain`]).
#[derive(Clone, Debug, Default)]
pub struct Drain(Arc<std::sync::atomic::AtomicBool>);

impl Drain {
    pub fn raise(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn is_raised(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The results folder of a run: the tournament's output, or a
/// `shard-K-of-N` folder inside it.
pub fn output_dir(t: &Tournament, shard: Option<Shard>) -> PathBuf {
    match shard {
        Some(s) if s.count > 1 => t.output.join(s.folder_name()),
        _ => t.output.clone(),
    }
}

/// A hash of everything that makes the schedule what it is.
pub fn fingerprint(t: &Tournament, schedule: &Schedule) -> String {
    let text = format!("{}{}", fingerprint_head(t), schedule.describe());
    format!("{:016x}", schedule::group_seed(0, &text))
}

/// A Swiss's fingerprint: the league's head and the plan.
fn swiss_fingerprint(t: &Tournament, plan: &SwissPlan) -> String {
    let text = format!("{}{}", fingerprint_head(t), plan.describe());
    format!("{:016x}", schedule::group_seed(0, &text))
}

/// The fingerprint as versions before the lazy schedule computed it, over
/// every game: a folder they started still resumes.
fn legacy_fingerprint(t: &Tournament, schedule: &Schedule) -> String {
    let mut text = fingerprint_head(t);
    for g in schedule.iter() {
        text.push_str(&format!("{}:{:?}\n", g.game_id, g.seats));
    }
    format!("{:016x}", schedule::group_seed(0, &text))
}

/// The whole league's fingerprint, the same for each of its shards
/// (`LeagueMeta::league`): what makes two shards parts of one league. The
/// bots' folders are left out (one checkout may sit at another path on
/// each machine); their commands, environment and limits are in.
pub fn league_fingerprint(t: &Tournament) -> String {
    let mut text = fingerprint_head(t);
    match SwissPlan::of(t) {
        Some(plan) => text.push_str(&plan.describe()),
        None => text.push_str(&Schedule::new(t, None).describe()),
    }
    text.push_str(&format!(
        "{:?}|{:?}|{:?}|{:?}|{}\n",
        t.time,
        t.gauntlet,
        t.sandbox,
        t.limits,
        env!("CARGO_PKG_VERSION")
    ));
    for b in &t.bots {
        text.push_str(&format!(
            "{}:{:?}:{:?}:{:?}:{:?}\n",
            b.name, b.command, b.env, b.build, b.limits
        ));
    }
    format!("{:016x}", schedule::group_seed(0, &text))
}

fn fingerprint_head(t: &Tournament) -> String {
    let mut text = format!(
        "{}|{}|{}|{}|{}\n",
        t.name, t.seed, t.rounds, t.max_plies, t.openings
    );
    for v in &t.variants {
        text.push_str(&format!(
            "{}:{}:{}:{:?}\n",
            v.key, v.variant, v.players, v.options
        ));
    }
    // Only with a book: the folders of leagues without one keep theirs.
    if let Some(b) = &t.book {
        text.push_str(&format!("openings book {}\n", b.describe()));
    }
    for b in &t.bots {
        text.push_str(&b.name);
        text.push('\n');
    }
    text
}

/// How the league `t` starts `bot` outside a league run (`arena replay`):
/// the same command, sandbox, limits and start-up time; stderr to `log`.
pub fn launch_alone(t: &Tournament, bot: &BotSpec, log: Option<PathBuf>) -> (Launch, Timing) {
    (Room::of(t).launch_bot(bot, log), timing(t.time.startup_ms))
}

fn timing(startup_ms: u64) -> Timing {
    Timing {
        startup: Duration::from_millis(startup_ms),
        ..Timing::default()
    }
}

/// Starts every bot once (spawn and handshake) and stops it again, so that
/// the bots that cannot start are reported, all of them, before any game
/// runs. As many start at once as this process has CPUs (a league of slow
/// starters waits for the slowest of each batch, not for the sum).
pub fn check_bots_start(
    bots: &[BotSpec],
    startup_ms: u64,
    logs: &Layout,
    room: &Room<'_>,
) -> Result<(), LeagueError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(LeagueError::Runtime)?;
    let at_once = allowed_cpus().len().max(1);
    // A signal during the check ends it (the bots dropped with the
    // runtime: their process groups die) and the run with it, as one
    // during the games does.
    let mut stop = crate::host::stop_signals();
    let check = async {
        let mut starting = tokio::task::JoinSet::new();
        let mut failed = Vec::new();
        for (i, b) in bots.iter().enumerate() {
            if starting.len() >= at_once {
                if let Some(f) = starting.join_next().await.and_then(joined).flatten() {
                    failed.push(f);
                }
            }
            let log = logs.check_log(&b.name);
            let launch = room.launch_bot(b, Some(log.clone()));
            let (bot, command, origin) = (b.name.clone(), b.command.clone(), b.origin.clone());
            let cwd = launch.command.cwd.clone().unwrap_or_default();
            let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
            starting.spawn(async move {
                let e = match BotPlayer::start(&launch, &timing(startup_ms)).await {
                    Ok(mut p) => {
                        p.quit().await;
                        return None;
                    }
                    Err(e) => e,
                };
                let mut why = why_not_started(&e);
                why += &stderr_tail(&log, 0, true).await.unwrap_or_default();
                why += &sandbox_start_note(launch.sandbox, &e);
                Some((
                    i,
                    CannotStart {
                        bot,
                        command,
                        origin,
                        cwd,
                        why,
                        machine: e.is_harness(),
                    },
                ))
            });
        }
        while let Some(r) = starting.join_next().await {
            if let Some(f) = joined(r).flatten() {
                failed.push(f);
            }
        }
        // In the league file's order, however they finished.
        failed.sort_by_key(|&(i, _)| i);
        match failed.is_empty() {
            true => Ok(()),
            false => Err(LeagueError::Start(
                failed.into_iter().map(|(_, f)| f).collect(),
            )),
        }
    };
    rt.block_on(async {
        tokio::select! {
            checked = check => checked,
            _ = stop.wait_for(|&s| s != 0) => Err(LeagueError::Interrupted),
        }
    })
}

/// A task's result (`None` if it was cancelled); a task that panicked
/// panics here too, as the same code would without the task (a bug must
/// not pass for a bot that started).
fn joined<T>(r: Result<T, tokio::task::JoinError>) -> Option<T> {
    match r {
        Ok(t) => Some(t),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => None,
    }
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    crate::host::allowed_cpus()
        .unwrap_or_else(|| (0..super::config::default_concurrency()).collect())
}

/// Pins the calling thread (and so the bot processes it spawns, which
/// inherit the mask) to one CPU: a game's referee and bots then share a
/// core and its caches, as fastchess's affinity option does.
fn pin_current_thread(cpu: usize) {
    crate::host::pin_current_thread(cpu);
}

/// The CPUs no worker is pinned to, where workers are pinned: the main
/// thread's (the writer's) while the games run.
fn spare_cpus(cpus: &[usize], workers: usize, no_affinity: bool) -> Vec<usize> {
    match no_affinity || workers >= cpus.len() {
        true => Vec::new(),
        false => cpus[workers..].to_vec(),
    }
}

/// What to do when a bot cannot start for the machine's reasons.
const MACHINE_LIMIT: &str = "This is the machine's limit, not the bot's fault: raise `ulimit -n` or the process limit, lower the concurrency, or free memory or disk, then run the same command again";

/// The last lines of a bot's stderr in `log` written from byte `from` on,
/// as the message of a bot that could not start ends (`arena run`,
/// `arena match`, `arena play`): `\n    its stderr ends (LOG):\n      ...`,
/// naming the log when `name_log` (it is kept); none if it said nothing.
pub async fn stderr_tail(log: &Path, from: u64, name_log: bool) -> Option<String> {
    let tail = crate::bot::log_tail(log, 20, from).await?;
    let at = match name_log {
        true => format!(" ({})", log.display()),
        false => String::new(),
    };
    Some(format!(
        "\n    its stderr ends{at}:\n      {}",
        crate::protocol::escape_lines(&tail).replace('\n', "\n      ")
    ))
}

/// After a bot's stderr, when it ran in its sandbox and stopped before
/// its hello was through (not when it could not be started at all): what
/// the sandbox hides from it (`arena run`, `arena match`, `arena play`).
pub fn sandbox_start_note(sandbox: crate::bot::Sandbox, e: &referee::StartError) -> String {
    match sandbox == crate::bot::Sandbox::On && matches!(e, referee::StartError::Handshake(_)) {
        true => format!("\n    note: {}", crate::bot::SANDBOX_START_NOTE),
        false => String::new(),
    }
}

/// Why a bot could not start, with what to do when it is the machine's
/// fault (the sandbox's error says it itself).
fn why_not_started(e: &referee::StartError) -> String {
    match e {
        referee::StartError::Spawn(crate::bot::BotError::Sandbox { .. }) => e.to_string(),
        e if e.is_harness() => format!("{e}. {MACHINE_LIMIT}"),
        e => e.to_string(),
    }
}

/// Bot processes a worker keeps alive between games (a 3-player game needs
/// 3); the others are ended and started again when needed.
pub const LIVE_BOTS_PER_WORKER: usize = 4;

enum WorkerMsg {
    /// A game is over: its record (its JSON lines, as one zstd frame) and row, to
    /// be committed together.
    Done {
        record: crate::results::records::Frame,
        row: Box<GameRow>,
        /// The game's place in the schedule.
        index: usize,
        detail: Option<String>,
        /// What the seats wrote on stderr, where it is kept (a ladder's
        /// games: `stderr_kb`).
        stderr: Vec<crate::results::stderr::SeatStderr>,
    },
    /// The harness failed on a game (it cannot be played at all, or its
    /// record cannot be written): nobody at the table is to blame.
    Failed { game_id: String, why: String },
    BotStarted {
        bot: String,
        worker: usize,
        restart: bool,
    },
}

struct Shared {
    t: Tournament,
    /// Where the next games come from.
    pairings: Box<dyn Pairings>,
    drain: Drain,
    layout: Layout,
    /// Per bot (by index), the stderr log it may still write in this
    /// league, shared by all its processes on all workers.
    budgets: Vec<StderrBudget>,
    cancel: tokio::sync::watch::Receiver<bool>,
}

impl Shared {
    /// The next game to play, for a worker (none once drained).
    fn next_game(&self) -> Option<ScheduledGame> {
        if self.drain.is_raised() {
            return None;
        }
        self.pairings.next()
    }
}

/// Bytes of stderr log each bot may write over a whole league (all its
/// processes, all workers, every resume); the rest is discarded.
pub const STDERR_PER_BOT: u64 = 8 << 20;

/// Runs (or resumes) a league. Returns when every game of the schedule (or
/// shard) is in games.csv, or when interrupted.
pub fn run(
    t: &Tournament,
    opts: &RunOptions,
    on_event: &mut dyn FnMut(&Event),
) -> Result<Summary, LeagueError> {
    tracing::info!(
        "league {}: {} bots, {} variants, {} at a time{}, sandbox {}",
        t.name,
        t.bots.len(),
        t.variants.len(),
        t.concurrency,
        opts.shard
            .map(|s| format!(", shard {}/{}", s.index, s.count))
            .unwrap_or_default(),
        t.sandbox.word()
    );
    let on_event = &mut |e: &Event| {
        trace(e);
        on_event(e)
    };
    let summary = run_logged(t, opts, on_event);
    match &summary {
        Ok(s) => tracing::info!(
            "league {}: {} after {} new games ({} of {} done)",
            t.name,
            match &s.end {
                RunEnd::Complete => "complete".to_string(),
                RunEnd::Interrupted => "interrupted (Ctrl-C or a signal)".to_string(),
                RunEnd::Stopped(Stop::Failed(why)) => format!("stopped ({why})"),
                RunEnd::Drained => "drained (its games in flight finished)".to_string(),
            },
            s.played,
            s.played + s.skipped,
            s.total
        ),
        // For the log file: the command line says it on stderr itself.
        Err(e) => tracing::error!(target: LOG_FILE_ONLY, "league {}: {e}", t.name),
    }
    summary
}

/// What is said before a league starts: more shards than seat-swap groups
/// (some hold no game), a ply cap no game can end within.
fn start_warnings(t: &Tournament, shard: Option<Shard>, games: usize) -> Vec<String> {
    let mut warnings: Vec<String> = shard
        .and_then(|s| too_many_shards(t, s, games))
        .into_iter()
        .collect();
    warnings.extend(few_plies(t));
    warnings
}

/// Below this ply cap hardly a game of any variant can end before it.
const FEW_PLIES: u32 = 10;

/// A warning for a ply cap so low that (nearly) every game is drawn at it,
/// decided by no bot: a knockout's matches then all go to the better seed.
fn few_plies(t: &Tournament) -> Option<String> {
    let knockout = matches!(t.format, super::config::Format::Knockout { .. });
    (t.max_plies < FEW_PLIES).then(|| {
        format!(
            "max_plies = {}: hardly any game can end within {} plies, so nearly every game will be drawn at the cap{}; raise max_plies (the default is {})",
            t.max_plies,
            t.max_plies,
            if knockout {
                " and every knockout match go to the better seed"
            } else {
                ""
            },
            crate::engine::DEFAULT_MAX_PLIES
        )
    })
}

/// The target of the log events that only the league's log file wants
/// (the command line shows the same on stderr its own way).
pub const LOG_FILE_ONLY: &str = "mancala_arena::league::log_file";

/// The league's own log (`arena run --log FILE`, `ARENA_LOG`): each event
/// as a line, forfeits and restarts at `info`, every game at `debug`. The
/// warnings go to the log file only: the console says each on stderr in
/// its own words (a raw log line there said it twice, glued to the
/// progress bar, and despite `--quiet`).
fn trace(e: &Event) {
    match e {
        Event::Building { bot, how } => tracing::info!("building {bot} {how}"),
        Event::SetAside { rows, path } => {
            tracing::warn!(
                target: LOG_FILE_ONLY,
                "repair: {} rows set aside in {}",
                rows.len(),
                path.display()
            )
        }
        Event::Started {
            total, done, dir, ..
        } => tracing::info!(
            "started: {done} of {total} games already done in {}",
            dir.display()
        ),
        Event::Finished { row, detail } => match row.offender {
            Some(seat) => tracing::info!(
                "forfeit {}: {} (seat {seat}) {}: {}",
                row.game_id,
                row.seats().get(seat as usize).copied().unwrap_or("?"),
                row.reason,
                detail.as_deref().unwrap_or("")
            ),
            None => tracing::debug!(
                "game {}: {:?} {:?} {} in {} plies",
                row.game_id,
                row.seats(),
                row.scores(),
                row.reason,
                row.plies
            ),
        },
        Event::BotStarted {
            bot,
            worker,
            restart,
        } => match restart {
            true => tracing::info!("restarted {bot} on worker {worker}"),
            false => tracing::info!("started {bot} on worker {worker}"),
        },
        Event::Ending { why } => tracing::info!("{why}; finishing the games in flight"),
        Event::Interrupted => tracing::warn!(
            target: LOG_FILE_ONLY,
            "interrupted: unfinished games rerun on resume"
        ),
        Event::Warning(w) => tracing::warn!(target: LOG_FILE_ONLY, "{w}"),
    }
}

/// What a league plays: a round-robin's fixed schedule, or a Swiss
/// paired round by round.
enum Games {
    RoundRobin(Schedule),
    Swiss(SwissPlan),
}

impl Games {
    fn of(t: &Tournament, shard: Option<Shard>) -> Result<Games, LeagueError> {
        let Some(plan) = SwissPlan::of(t) else {
            return Ok(Games::RoundRobin(Schedule::new(t, shard)));
        };
        if shard.is_some_and(|s| s.count > 1) && plan.is_knockout() {
            return Err(LeagueError::Format(format!(
                "league {}: a knockout cannot be sharded (each round's matches are between the winners of the round before, which the other shards play): run it without --shard, or use format = \"round-robin\"",
                t.name
            )));
        }
        if shard.is_some_and(|s| s.count > 1) {
            return Err(LeagueError::Format(format!(
                "league {}: a Swiss cannot be sharded (each round is paired from every result of the round before, which the other shards play): run it without --shard, or use format = \"round-robin\"",
                t.name
            )));
        }
        Ok(Games::Swiss(plan))
    }

    fn len(&self) -> usize {
        match self {
            Games::RoundRobin(s) => s.len(),
            Games::Swiss(p) => p.len(),
        }
    }
}

/// A warning when shard `s` of `t` (which holds `games`) is one of more
/// shards than the league has seat-swap groups: each group goes whole to
/// one shard, so some get none (a job array may mean that; a typo too).
fn too_many_shards(t: &Tournament, s: Shard, games: usize) -> Option<String> {
    let groups = match SwissPlan::of(t) {
        Some(_) => return None,
        None => Schedule::new(t, None).group_count(),
    };
    let here = match games {
        0 => "this shard holds no game: nothing to play here",
        _ => "this one holds some",
    };
    (s.count > groups || games == 0).then(|| {
        format!(
            "--shard {}/{}: the league's {} games come in {groups} seat-swap groups, each dealt whole to one shard, so only {} of {} shards hold games; {here}. A shard count of at most {groups} splits them all",
            s.index,
            s.count,
            total_games(t, None),
            groups.min(s.count),
            s.count
        )
    })
}

/// Games in league `t` (or its shard): what `arena run` counts.
pub fn total_games(t: &Tournament, shard: Option<Shard>) -> usize {
    match SwissPlan::of(t) {
        Some(p) => p.len(),
        None => Schedule::new(t, shard).len(),
    }
}

fn run_logged(
    t: &Tournament,
    opts: &RunOptions,
    on_event: &mut dyn FnMut(&Event),
) -> Result<Summary, LeagueError> {
    let games = Games::of(t, opts.shard)?;
    for w in start_warnings(t, opts.shard, games.len()) {
        on_event(&Event::Warning(w));
    }
    let dir = output_dir(t, opts.shard);
    let mut meta = league_meta(t, &games, &dir, opts.shard);
    meta.resume = opts.resume.clone();
    meta.bots_flag = opts.bots_flag.clone();
    if opts.shard.is_some_and(|s| s.count > 1) {
        folder::check_siblings(&dir, &meta)?;
    }
    // What sandboxed bots of killed runs left behind.
    crate::bot::sweep_leftovers();
    // Every live bot costs the referee descriptors (docs/league.md).
    if let Some(n) = crate::host::raise_open_files_limit() {
        tracing::debug!("open files limit: {n}");
    }
    let checking = Instant::now();
    // Without league.json (deleted, as its error advises when it cannot be
    // read), nothing compared this command's settings with those the rows
    // were played under: each row's opening is then compared too.
    let unbound = !Layout::new(&dir).league_json().exists();
    let mut store = open_store(&dir, &meta, on_event)?;
    let swiss = match &games {
        Games::RoundRobin(schedule) => {
            let expected = |id: &str| schedule.find(id).map(|g| expected_of(t, &g, unbound));
            check_store(&mut store, &expected, &|_| None, opts.repair, on_event)?;
            None
        }
        Games::Swiss(plan) => {
            // No games.csv yet (or one the check refuses): no rows.
            let state = SwissState::replay(plan, &store.rows().unwrap_or_default());
            let expected =
                |id: &str| swiss_game(plan, &state, id).map(|g| expected_of(t, &g, unbound));
            let unpaired = |id: &str| not_paired_yet(plan, &state, id);
            check_store(&mut store, &expected, &unpaired, opts.repair, on_event)?;
            Some(state)
        }
    };
    // Every row left is a game of this schedule, once (`check`).
    let done = store.take_done();
    let swiss = match (swiss, &games) {
        (Some(mut state), Games::Swiss(plan)) => {
            state.keep_only(plan, &done).map_err(LeagueError::Format)?;
            Some(state)
        }
        _ => None,
    };
    let skipped = done.len();
    let checked_in = checking.elapsed();
    let todo = games.len() - skipped;
    if todo > 0 {
        match prepare_bots(t, &mut store, opts, on_event) {
            Err(LeagueError::Interrupted) => {
                on_event(&Event::Interrupted);
                return Ok(Summary {
                    total: games.len(),
                    played: 0,
                    skipped,
                    end: RunEnd::Interrupted,
                    dir,
                });
            }
            prepared => prepared?,
        }
    }
    on_event(&Event::Started {
        total: games.len(),
        done: skipped,
        dir: dir.clone(),
        repaired_bytes: store.repaired_bytes,
        cut_record_bytes: store.cut_record_bytes,
        checked_in,
    });
    let total = games.len();
    let layout = store.layout().clone();
    let run = match games {
        Games::Swiss(plan) => {
            let state = swiss.unwrap_or_else(|| SwissState::new(&plan));
            let pairings = SwissPairings::new(plan, state);
            play_all(t, opts, pairings, todo, &mut store, &layout, on_event)?
        }
        Games::RoundRobin(schedule) => {
            let mut pairings = RoundRobin::new(schedule, done);
            if let Some(sprt) = &opts.sprt {
                pairings = pairings.with_sprt(sprt.clone());
            }
            play_all(t, opts, pairings, todo, &mut store, &layout, on_event)?
        }
    };
    let end = match (run.stop, store.sync()) {
        (Some(stop), _) => RunEnd::Stopped(stop),
        (None, Err(e)) => RunEnd::Stopped(Stop::Failed(format!(
            "the results could not be synced: {e}"
        ))),
        (None, Ok(())) if run.interrupted => {
            on_event(&Event::Interrupted);
            RunEnd::Interrupted
        }
        (None, Ok(())) if run.drained && run.played + skipped < total => RunEnd::Drained,
        (None, Ok(())) => RunEnd::Complete,
    };
    Ok(Summary {
        total,
        played: run.played,
        skipped,
        end,
        dir,
    })
}

/// The game of a Swiss with this id, if one of its paired rounds has it.
fn swiss_game(plan: &SwissPlan, state: &SwissState, id: &str) -> Option<ScheduledGame> {
    let (round, index) = plan.place(id)?;
    let pairing = state.rounds.get(round as usize - 1)?;
    let offset = index - (round as usize - 1) * plan.games_per_round();
    plan.game(round, pairing, offset)
        .filter(|g| g.game_id == id)
}

/// Why `id`, a game of a Swiss's or knockout's later round, is not in
/// the schedule yet: its round is paired once the rounds before it are
/// complete, and the last paired one is not (a row of it missing).
fn not_paired_yet(plan: &SwissPlan, state: &SwissState, id: &str) -> Option<String> {
    let (round, paired) = state.unpaired(plan, id)?;
    Some(format!(
        "a game of round {round}, which is not paired yet: a round is paired from the results of the rounds before it, and round {paired} lacks a game's row. Put the missing rows back, or run with --repair: the rows of the later rounds are then set aside and those rounds paired and played again"
    ))
}

/// What the results folder must hold for scheduled game `g` of `t`: its
/// opening too when `opening` (league.json was missing).
fn expected_of(t: &Tournament, g: &ScheduledGame, opening: bool) -> Expected {
    Expected {
        index: g.index,
        variant: t.variants[g.variant].key.clone(),
        seats: g.seats.iter().map(|&b| t.bots[b].name.clone()).collect(),
        seed: Some(g.seed),
        opening: opening.then(|| opening_of(t, g).join(" ")),
    }
}

/// Whether the Swiss `plan` of `t` is the league of the folder's `old`
/// league.json with only its rounds changed (its fingerprint with the
/// rounds league.json notes).
fn swiss_rounds_change(
    t: &Tournament,
    plan: &SwissPlan,
    old: &LeagueMeta,
) -> Option<folder::RoundsChange> {
    if !matches!(t.format, Format::Swiss { .. }) {
        return None;
    }
    let Some(folder::NotedFormat::Swiss { rounds: was }) = old.noted_format() else {
        return None;
    };
    let mut before = plan.clone();
    before.rounds = was;
    (swiss_fingerprint(t, &before) == old.fingerprint).then(|| folder::RoundsChange {
        fingerprint: old.fingerprint.clone(),
        was,
        now: plan.rounds,
    })
}

/// What `league.json` says of league `t` with schedule `games` in `dir`
/// (a folder of an older version keeps its fingerprint if it is the same
/// schedule's).
fn league_meta(t: &Tournament, games: &Games, dir: &Path, shard: Option<Shard>) -> LeagueMeta {
    let mut fingerprint = match games {
        Games::RoundRobin(games) => fingerprint(t, games),
        Games::Swiss(plan) => swiss_fingerprint(t, plan),
    };
    let old = folder::read_meta(dir).filter(|old| old.fingerprint != fingerprint);
    let mut rounds_change = None;
    match (old, games) {
        (Some(old), Games::RoundRobin(games))
            if old.fingerprint == legacy_fingerprint(t, games) =>
        {
            fingerprint = old.fingerprint;
        }
        (Some(old), Games::Swiss(plan)) => rounds_change = swiss_rounds_change(t, plan, &old),
        _ => {}
    }
    LeagueMeta {
        name: t.name.clone(),
        fingerprint,
        games: games.len(),
        shard: shard.map(|s| format!("{}/{}", s.index, s.count)),
        bots: t.bots.iter().map(|b| b.name.clone()).collect(),
        sandbox: Some(t.sandbox == Sandbox::On),
        played_under: Some(PlayedUnder {
            time_control: t
                .time
                .named()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            commands: t
                .bots
                .iter()
                .map(|b| (b.name.clone(), manifest::expand(&b.command)))
                .collect(),
            arena_version: env!("CARGO_PKG_VERSION").to_string(),
            // After the build: `ResultsDir::note_programs`.
            programs: Default::default(),
            settings: t
                .bots
                .iter()
                .map(|b| {
                    let limits = super::launch::Room::of(t).limits_for(b.limits);
                    (b.name.clone(), b.settings_note(limits))
                })
                .collect(),
            changes: Vec::new(),
        }),
        league: Some(league_fingerprint(t)),
        sprt: t.sprt.and_then(|c| serde_json::to_value(c).ok()),
        resume: None,
        bots_flag: None,
        rounds_change,
        openings_book: t.book.as_ref().map(|b| b.describe()),
        schedule: [
            ("rounds", t.rounds.to_string()),
            (
                "format",
                match &t.format {
                    Format::RoundRobin => "round-robin".to_string(),
                    Format::Swiss { rounds } => format!("swiss, {rounds} rounds"),
                    // The file's `seeds`, so that a change of them is named.
                    Format::Knockout { stage: 0, seeds } if !seeds.is_empty() => format!(
                        "knockout, seeds {}",
                        seeds
                            .iter()
                            .filter_map(|&b| t.bots.get(b).map(|b| b.name.as_str()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    Format::Knockout { stage: 0, .. } => "knockout".to_string(),
                    Format::Knockout { stage, .. } => {
                        format!("knockout, seeded by a swiss of {stage} rounds")
                    }
                },
            ),
            ("seed", t.seed.to_string()),
            ("openings", t.openings.to_string()),
            ("max_plies", t.max_plies.to_string()),
            (
                "variants",
                // As `--variants` names them (`tricala3`).
                t.variants
                    .iter()
                    .map(|v| match v.players {
                        2 => v.key.clone(),
                        n => format!("{}{n}", v.key),
                    })
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            (
                "gauntlet",
                t.gauntlet.clone().unwrap_or_else(|| "none".into()),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        // Each variant's game and options, so that a change of them is
        // named (`variant kisolo6`: `kisolo, columns = 6`).
        .chain(t.variants.iter().map(|v| {
            let options = v
                .options
                .iter()
                .map(|(k, v)| format!(", {k} = {v}"))
                .collect::<String>();
            (
                format!("{}{}", LeagueMeta::VARIANT_KEY, v.label()),
                format!("{}{options}", v.variant.name()),
            )
        }))
        .collect(),
    }
}

/// Opens the results folder (its warnings as events).
fn open_store(
    dir: &Path,
    meta: &LeagueMeta,
    on_event: &mut dyn FnMut(&Event),
) -> Result<ResultsDir, LeagueError> {
    let store = ResultsDir::open(dir, meta)?;
    for w in &store.warnings {
        on_event(&Event::Warning(w.clone()));
    }
    Ok(store)
}

/// Checks the folder's rows against the schedule (`expected`): rows it
/// does not account for stop the run, or with `repair` are set aside.
/// `unpaired`: why a row of a game the schedule cannot hold yet may still
/// be the league's (a Swiss round not paired yet), said in its place.
fn check_store(
    store: &mut ResultsDir,
    expected: &dyn Fn(&str) -> Option<Expected>,
    unpaired: &dyn Fn(&str) -> Option<String>,
    repair: bool,
    on_event: &mut dyn FnMut(&Event),
) -> Result<(), LeagueError> {
    if !repair {
        store.refuse_rows_gone()?;
    }
    let mut rejected = store.check(expected)?;
    for r in &mut rejected {
        if let Some(why) = unpaired(&r.row.game_id) {
            r.why = why;
        }
    }
    if !rejected.is_empty() {
        if !repair {
            return Err(LeagueError::Rejected {
                path: store.layout().games_csv(),
                rows: rejected,
            });
        }
        store.set_aside(&rejected)?;
        on_event(&Event::SetAside {
            rows: rejected,
            path: store.layout().rejected_csv(),
        });
    }
    Ok(())
}

/// Each bot's program files and their SHA-256 as they are now, by bot
/// name: what league.json's `played_under.programs` keeps.
pub fn programs_now(t: &Tournament) -> Programs {
    programs_hashed(t, |_| true)
}

/// [`programs_now`] of the bots without a build of their own: the
/// programs no bot's build changes, hashed before the run's builds (a
/// bot with a build is hashed after it, by the run).
pub fn programs_unbuilt(t: &Tournament) -> Programs {
    programs_hashed(t, |b| b.build.is_none())
}

/// The programs of the bots `which` keeps (each file read once).
fn programs_hashed(t: &Tournament, which: impl Fn(&BotSpec) -> bool) -> Programs {
    let mut seen = HashMap::new();
    t.bots
        .iter()
        .filter(|b| which(b))
        .map(|b| {
            let argv = manifest::expand(&b.command);
            let folder = super::launch::run_folder(b);
            (
                b.name.clone(),
                manifest::program_hashes(&argv, folder.as_deref(), &mut seen),
            )
        })
        .collect()
}

/// The programs league.json keeps after the builds: those `known`
/// (hashed before them, [`RunOptions::programs`]) that no build `made`,
/// the others hashed now.
fn programs_after_build(
    t: &Tournament,
    known: Option<&Programs>,
    made: &std::collections::BTreeSet<String>,
) -> Programs {
    let mut known = known.cloned().unwrap_or_default();
    known.retain(|bot, _| !made.contains(bot));
    let mut all = programs_hashed(t, |b| !known.contains_key(&b.name));
    all.extend(known);
    all
}

/// Before the first game: builds the bots, starts each once, and notes
/// their programs' hashes in league.json.
fn prepare_bots(
    t: &Tournament,
    store: &mut ResultsDir,
    opts: &RunOptions,
    on_event: &mut dyn FnMut(&Event),
) -> Result<(), LeagueError> {
    let mut made = Default::default();
    if !opts.no_build {
        // A signal during the builds ends them and the run, as one during
        // the games does.
        let stop = crate::host::stop_signals();
        made = super::build::build_bots_made(&t.bots, &Room::of(t), Some(&stop), on_event)?;
    }
    let programs = programs_after_build(t, opts.programs.as_ref(), &made);
    // Noted in league.json once every bot started: a resume whose bot
    // cannot start plays nothing, and its changes are not the league's
    // history (tried and reverted, they were noted as changes).
    check_bots_start(&t.bots, t.time.startup_ms, store.layout(), &Room::of(t))?;
    let mut warnings = store.note_played_under()?;
    warnings.extend(store.note_programs(programs)?);
    for w in warnings {
        on_event(&Event::Warning(w));
    }
    Ok(())
}

/// What the pipeline did ([`play_all`]).
#[derive(Clone, Debug)]
pub struct Played {
    /// Games committed.
    pub played: usize,
    /// Why it stopped before the games ran out, if it did.
    pub stop: Option<Stop>,
    /// Ctrl-C, SIGTERM or SIGHUP came: the games in flight were abandoned.
    pub interrupted: bool,
    /// The caller raised [`RunOptions::drain`], or the pairings ended
    /// before their last game: no game was started after.
    pub drained: bool,
}

/// The pipeline: workers take games from `pairings` and play them (at
/// most `todo`: the workers are no more), with their bots' logs in
/// `layout`; this thread commits each finished game to `store` in the
/// order they finish, tells `pairings`, and reports it.
pub fn play_all<S: Store>(
    t: &Tournament,
    opts: &RunOptions,
    pairings: impl Pairings + 'static,
    todo: usize,
    store: &mut S,
    layout: &Layout,
    on_event: &mut dyn FnMut(&Event),
) -> Result<Played, LeagueError> {
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let cancel_tx = Arc::new(cancel_tx);
    let signalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let signals = spawn_signal_watcher(cancel_tx.clone(), signalled.clone());
    let workers = t.concurrency.min(todo).max(1);
    let shared = Arc::new(Shared {
        t: t.clone(),
        pairings: Box::new(pairings),
        drain: opts.drain.clone(),
        layout: layout.clone(),
        budgets: t
            .bots
            .iter()
            .map(|b| {
                let used = layout.bot_logs_size(&b.name);
                StderrBudget::new(STDERR_PER_BOT.saturating_sub(used))
            })
            .collect(),
        cancel: cancel_rx,
    });
    // Bounded: when the disk (or the console) is slower than the workers,
    // they wait instead of queueing finished games in memory, and a Ctrl-C
    // is not followed by a long drain of games played before it. Under an
    // SPRT, two a worker: the games played on while the writer has not
    // yet counted the deciding one are at most three times the games at a
    // time (docs/ratings.md), not seventeen.
    let queued = match opts.sprt {
        Some(_) => 2,
        None => 16,
    };
    let (tx, rx) = mpsc::sync_channel::<WorkerMsg>(queued * workers);
    // The CPUs no other league or worker of this machine holds come first.
    let claim = (!opts.no_affinity).then(|| crate::host::claim_cpus(&allowed_cpus(), workers));
    let cpus = claim.as_ref().map_or_else(allowed_cpus, |c| c.cpus.clone());
    let handles = start_workers(&shared, workers, &cpus, opts.no_affinity, &tx)?;
    drop(tx);
    // With CPUs to spare (-j 1 on two CPUs), the writer keeps off the
    // workers' CPUs: woken by a worker, the kernel would otherwise often
    // run it on the worker's CPU, between the referee and its bots.
    let spare = spare_cpus(&cpus, workers, opts.no_affinity);
    if !spare.is_empty() {
        crate::host::pin_current_thread_to(&spare);
    }
    let committed = commit_all(rx, store, shared.pairings.as_ref(), on_event);
    if committed.stop.is_some() {
        let _ = cancel_tx.send(true);
    }
    for h in handles {
        let _ = h.join();
    }
    if !spare.is_empty() {
        crate::host::pin_current_thread_to(&cpus);
    }
    drop(signals);
    drop(claim);
    // A signal's doing only: the workers are also cancelled when a game
    // could not be committed (`committed.stop`), which is a failure, not
    // an interruption (a ladder's server stopped itself for good when its
    // store was out of reach for a moment).
    let interrupted = signalled.load(std::sync::atomic::Ordering::SeqCst);
    Ok(Played {
        played: committed.played,
        stop: committed.stop,
        interrupted,
        drained: shared.drain.is_raised() || committed.ended,
    })
}

/// Starts `workers` worker threads, each pinned to a CPU of `cpus` unless
/// `no_affinity` or there are more workers than CPUs.
fn start_workers(
    shared: &Arc<Shared>,
    workers: usize,
    cpus: &[usize],
    no_affinity: bool,
    tx: &mpsc::SyncSender<WorkerMsg>,
) -> Result<Vec<std::thread::JoinHandle<()>>, LeagueError> {
    (0..workers)
        .map(|w| {
            let shared = shared.clone();
            let tx = tx.clone();
            let cpu = (!no_affinity && workers <= cpus.len()).then(|| cpus[w % cpus.len()]);
            std::thread::Builder::new()
                .name(format!("league-worker-{w}"))
                .spawn(move || worker(w, cpu, &shared, &tx))
                .map_err(LeagueError::Runtime)
        })
        .collect()
}

/// What the writer did: the games committed, why it stopped early (if it
/// did), and whether the pairings ended before their last game.
struct Committed {
    played: usize,
    stop: Option<Stop>,
    ended: bool,
}

/// The writer: commits each finished game to `store` as it arrives (the
/// only commit point), tells `pairings`, syncs now and then and reports
/// it; stops at the first game that cannot be recorded or played.
fn commit_all<S: Store>(
    rx: mpsc::Receiver<WorkerMsg>,
    store: &mut S,
    pairings: &dyn Pairings,
    on_event: &mut dyn FnMut(&Event),
) -> Committed {
    let mut played = 0;
    let mut ended = false;
    let mut last_sync = Instant::now();
    for msg in arrivals(&rx) {
        match msg {
            WorkerMsg::Done {
                record,
                mut row,
                index,
                detail,
                stderr,
            } => {
                store.offer_stderr(index, stderr);
                if let Err(e) = store.commit(&record, &mut row, index) {
                    // Nothing more can be recorded: stop everything.
                    let why = format!("game {} could not be recorded: {e}", row.game_id);
                    let stop = Some(Stop::Failed(why));
                    return Committed {
                        played,
                        stop,
                        ended,
                    };
                }
                let ending = pairings.finished(index, &row);
                played += 1;
                on_event(&Event::Finished { row, detail });
                if let Some(why) = ending {
                    ended = true;
                    on_event(&Event::Ending { why });
                }
                if last_sync.elapsed() > Duration::from_secs(2) {
                    // A results file that cannot be synced, or is no
                    // longer in the folder, would lose every game from here
                    // on: stop now rather than at the end.
                    if let Err(e) = store.sync() {
                        let why = format!("the results could not be synced: {e}");
                        return Committed {
                            played,
                            stop: Some(Stop::Failed(why)),
                            ended,
                        };
                    }
                    last_sync = Instant::now();
                }
            }
            WorkerMsg::Failed { game_id, why } => {
                let stop = Some(Stop::Failed(format!("game {game_id}: {why}")));
                return Committed {
                    played,
                    stop,
                    ended,
                };
            }
            WorkerMsg::BotStarted {
                bot,
                worker,
                restart,
            } => on_event(&Event::BotStarted {
                bot,
                worker,
                restart,
            }),
        }
    }
    Committed {
        played,
        stop: None,
        ended,
    }
}

/// The workers' messages as they arrive, until every worker is gone.
/// While games finish quickly the writer looks for them every
/// [`LOOK_EVERY`] instead of sleeping until the next one: a worker that
/// sends to a writer asleep must wake it, a system call and a switch of
/// CPUs per game, the cost of a few decisions of an instant bot. After
/// [`QUIET`] without a game, it sleeps until the next, as slow games
/// need no more.
fn arrivals(rx: &mpsc::Receiver<WorkerMsg>) -> impl Iterator<Item = WorkerMsg> + '_ {
    let mut last = Instant::now();
    std::iter::from_fn(move || loop {
        match rx.try_recv() {
            Ok(msg) => {
                last = Instant::now();
                return Some(msg);
            }
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) if last.elapsed() < QUIET => {
                std::thread::sleep(LOOK_EVERY);
            }
            Err(mpsc::TryRecvError::Empty) => {
                let msg = rx.recv().ok();
                last = Instant::now();
                return msg;
            }
        }
    })
}

/// See [`arrivals`].
const LOOK_EVERY: Duration = Duration::from_millis(1);
/// See [`arrivals`].
const QUIET: Duration = Duration::from_millis(5);

/// Watches for Ctrl-C, SIGTERM and SIGHUP (a closed terminal or ssh
/// session) on its own thread and raises `signalled` and `cancel`, until
/// the league drops it.
fn spawn_signal_watcher(
    cancel: Arc<tokio::sync::watch::Sender<bool>>,
    signalled: Arc<std::sync::atomic::AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
    let watched = cancel.clone();
    crate::host::on_stop_signal(
        "league-signals",
        async move { watched.closed().await },
        move || {
            signalled.store(true, std::sync::atomic::Ordering::SeqCst);
            let _ = cancel.send(true);
        },
    )
    .ok()
}

fn worker(id: usize, cpu: Option<usize>, shared: &Shared, tx: &mpsc::SyncSender<WorkerMsg>) {
    if let Some(cpu) = cpu {
        pin_current_thread(cpu);
    }
    // This thread plays one game at a time, and nothing else.
    crate::bot::wait_in_place_on_this_thread();
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    rt.block_on(async {
        let mut cancel = shared.cancel.clone();
        let mut bots: HashMap<usize, BotPlayer> = HashMap::new();
        loop {
            if *cancel.borrow() {
                break;
            }
            let Some(game) = shared.next_game() else {
                if shared.drain.is_raised() || !shared.pairings.pending() {
                    break;
                }
                // A round's last games are in flight: the next round is
                // paired once they are committed.
                let wait = tokio::time::sleep(Duration::from_millis(50));
                tokio::select! {
                    _ = wait => continue,
                    _ = cancel.wait_for(|&c| c) => break,
                }
            };
            let play = play_one(id, shared, &game, &mut bots, tx);
            let msg = tokio::select! {
                msg = play => msg,
                _ = cancel.wait_for(|&c| c) => break,
            };
            // A bot killed by the signal that stops the whole job (the
            // run's stop follows, or came first): the game is unfinished.
            if killed_by_a_stop(&msg) {
                let stop = tokio::time::timeout(JOB_STOP_GRACE, cancel.wait_for(|&c| c));
                if stop.await.is_ok_and(|r| r.is_ok()) {
                    break;
                }
            }
            if tx.send(msg).is_err() {
                break;
            }
        }
        // All at once: each quit mostly waits for its bot to exit.
        let mut quitting = tokio::task::JoinSet::new();
        for (_, mut b) in bots.drain() {
            quitting.spawn(async move { b.quit().await });
        }
        while let Some(r) = quitting.join_next().await {
            joined(r);
        }
    });
}

/// How long a game a bot lost by being killed with a stop signal waits
/// for the run's own stop before it is committed.
const JOB_STOP_GRACE: Duration = Duration::from_secs(2);

/// Whether a finished game is a crash of a bot killed by a signal that
/// stops a whole job (SIGTERM, SIGINT, SIGHUP, SIGKILL: systemd, `scancel`,
/// `docker stop`, a shutdown), which the referee does not send a bot in a
/// game: if the run is stopped with it, the game is left unfinished, to be
/// played on resume, not charged to the bot (docs/league.md).
fn killed_by_a_stop(msg: &WorkerMsg) -> bool {
    let WorkerMsg::Done { row, detail, .. } = msg else {
        return false;
    };
    let detail = detail.as_deref().unwrap_or_default();
    row.reason == "crash"
        && [
            "signal 15, SIGTERM",
            "signal 2, SIGINT",
            "signal 1, SIGHUP",
            "signal 9, SIGKILL",
        ]
        .iter()
        .any(|s| detail.contains(s))
}

/// Plays one scheduled game on this worker, (re)starting its bots as needed.
async fn play_one(
    worker: usize,
    shared: &Shared,
    game: &ScheduledGame,
    bots: &mut HashMap<usize, BotPlayer>,
    tx: &mpsc::SyncSender<WorkerMsg>,
) -> WorkerMsg {
    // A game whose replies all come in place (`bot/stdout.rs`) never
    // gives the runtime a turn: give it one before each game, for the
    // tasks due (a bot between games paused, its stderr logged).
    tokio::task::yield_now().await;
    let t = &shared.t;
    let mut spec = game_spec(t, game);
    let start = Instant::now();
    let started_at = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    if let Err((seat, e)) = seat_bots(worker, shared, game, &mut spec, bots, tx).await {
        // Out of descriptors, processes, memory or disk: the machine's
        // fault. Nothing is committed and the league stops cleanly.
        if e.is_harness() {
            let name = &t.bots[game.seats[seat]].name;
            return WorkerMsg::Failed {
                game_id: game.game_id.clone(),
                why: format!("cannot start bot `{name}`: {}", why_not_started(&e)),
            };
        }
        let report = GameReport::unstarted(&spec, seat, e.kind(), e.to_string(), start.elapsed());
        tracing::warn!("{}: seat {seat} cannot start: {e}", game.game_id);
        let versions = versions_of(game, bots);
        return done(t, game, &spec, &report, &versions, &started_at);
    }
    let versions = versions_of(game, bots);
    let mut seats: Vec<BotPlayer> = game.seats.iter().filter_map(|b| bots.remove(b)).collect();
    let exits: Vec<u32> = seats.iter().map(BotPlayer::exits_between_games).collect();
    let result = {
        let mut refs: Vec<&mut dyn Player> =
            seats.iter_mut().map(|p| p as &mut dyn Player).collect();
        referee::play_game(&spec, &mut refs, &mut |_| {}).await
    };
    for ((&b, mut p), exits) in game.seats.iter().zip(seats).zip(exits) {
        if restarted_at_start(&t.bots[b].name, &mut p, exits, &mut spec) {
            let _ = tx.send(WorkerMsg::BotStarted {
                bot: t.bots[b].name.clone(),
                worker,
                restart: true,
            });
        }
        bots.insert(b, p);
    }
    match result {
        Ok(report) => done(t, game, &spec, &report, &versions, &started_at),
        // The schedule built an unplayable spec: a bug of ours, not the bots'.
        Err(e) => WorkerMsg::Failed {
            game_id: game.game_id.clone(),
            why: format!("cannot be played (a bug of the arena, not of a bot): {e}"),
        },
    }
}

/// Whether the referee started bot `name` (`p`, which had `exits` exits
/// between games before the game) again at the game's start without
/// charge (protocol.md): it had exited after its last game, or written
/// after its last game had ended, which the game's record notes, as a
/// restart before the game is noted ([`seat_bots`]).
fn restarted_at_start(name: &str, p: &mut BotPlayer, exits: u32, spec: &mut GameSpec) -> bool {
    let late = p.take_late_output();
    if let Some(line) = &late {
        spec.notes.push(format!(
            "{name} was restarted at this game's start: it wrote after its last game had ended: {line}"
        ));
    }
    late.is_some() || p.exits_between_games() > exits
}

/// The opening of a scheduled game of league `t`: its line of the
/// openings book, if the league has one, then `openings` random
/// decisions drawn from its seed ([`schedule::opening_after`]).
pub fn opening_of(t: &Tournament, game: &ScheduledGame) -> Vec<String> {
    let vspec = &t.variants[game.variant];
    let settings = vspec.settings(t.max_plies);
    let book = t
        .book
        .as_ref()
        .map_or(&[][..], |b| b.line(game.variant, game.variant_group));
    schedule::opening_after(vspec, &settings, game.seed, book, t.openings)
}

/// The referee's spec of a scheduled game of league `t`: its opening, the
/// league's time control, the bots' seed.
fn game_spec(t: &Tournament, game: &ScheduledGame) -> GameSpec {
    let vspec = &t.variants[game.variant];
    let settings = vspec.settings(t.max_plies);
    let opening = opening_of(t, game);
    GameSpec {
        game_id: game.game_id.clone(),
        variant: vspec.variant,
        settings,
        opening,
        names: game.seats.iter().map(|&b| t.bots[b].name.clone()).collect(),
        time: TimeControl {
            per_decision: if t.time.decision_ms > 0 {
                Duration::from_millis(t.time.decision_ms)
            } else {
                Duration::from_millis(t.time.watchdog_ms)
            },
            clock: (t.time.base_ms > 0).then(|| Clock {
                base: Duration::from_millis(t.time.base_ms),
                increment: Duration::from_millis(t.time.increment_ms),
            }),
        },
        watchdog: Duration::from_millis(t.time.watchdog_ms),
        notes: Vec::new(),
        seed: schedule::bot_seed(t.seed, &game.game_id),
    }
}

/// Makes sure every seat of `game` has a live bot in `bots`, (re)started
/// on this worker as needed (noted in `spec` when a bot's output between
/// games cost it its process). Fails with the first seat whose bot cannot
/// start, and why: it forfeits the game, unless the machine is to blame.
async fn seat_bots(
    worker: usize,
    shared: &Shared,
    game: &ScheduledGame,
    spec: &mut GameSpec,
    bots: &mut HashMap<usize, BotPlayer>,
    tx: &mpsc::SyncSender<WorkerMsg>,
) -> Result<(), (usize, referee::StartError)> {
    let t = &shared.t;
    for (seat, &b) in game.seats.iter().enumerate() {
        let restart = match bots.get_mut(&b) {
            Some(p) if p.needs_restart() => true,
            // Output after its last game's commit: not that game's, not
            // this one's. A new process, no charge, and a note.
            Some(p) => match p.quiet("between games") {
                Ok(()) => continue,
                Err(f) => {
                    let name = &t.bots[b].name;
                    // In the league's log too, where its author looks.
                    tracing::info!("{name} restarted before {}: {f}", game.game_id);
                    spec.notes
                        .push(format!("{name} was restarted before this game: {f}"));
                    true
                }
            },
            None => false,
        };
        if let Some(mut old) = bots.remove(&b) {
            old.kill();
        }
        // Bound the processes (and descriptors) a worker keeps alive: end
        // bots this game does not need.
        while bots.len() >= LIVE_BOTS_PER_WORKER {
            let Some(&idle) = bots.keys().find(|k| !game.seats.contains(k)) else {
                break;
            };
            if let Some(mut p) = bots.remove(&idle) {
                p.quit().await;
            }
        }
        let bot = &t.bots[b];
        let log = shared.layout.bot_log(&bot.name, worker);
        let from = std::fs::metadata(&log).map_or(0, |m| m.len());
        let mut launch = Room::of(t).launch_bot(bot, Some(log.clone()));
        launch.stderr_budget = Some(shared.budgets[b].clone());
        // A ladder keeps each game's stderr for the bot's owner.
        launch.capture = t.ladder.as_ref().and_then(|l| l.stderr_cap());
        let p = match BotPlayer::start(&launch, &timing(t.time.startup_ms)).await {
            Ok(p) => p,
            Err(mut e) => {
                // What it said as it failed (a program gone from its
                // folder: python's "can't open file"), in the forfeit's
                // detail, not only in its log.
                if let referee::StartError::Handshake(f) = &mut e {
                    if let Some(tail) = crate::bot::log_tail(&log, 2, from).await {
                        let tail = crate::protocol::escape_lines(tail.trim_end());
                        f.detail = format!(
                            "{}; its stderr ends: {}",
                            f.detail,
                            tail.replace('\n', " / ")
                        );
                    }
                }
                return Err((seat, e));
            }
        };
        bots.insert(b, p);
        let _ = tx.send(WorkerMsg::BotStarted {
            bot: bot.name.clone(),
            worker,
            restart,
        });
    }
    Ok(())
}

/// The hello `version` of each seat's bot, where it is running.
fn versions_of(game: &ScheduledGame, bots: &HashMap<usize, BotPlayer>) -> Vec<String> {
    game.seats
        .iter()
        .map(|b| {
            bots.get(b)
                .map(|p| p.info().version.clone())
                .unwrap_or_default()
        })
        .collect()
}

/// A finished game's record, serialized here on the worker, and its row,
/// for the main thread to commit.
fn done(
    t: &Tournament,
    game: &ScheduledGame,
    spec: &GameSpec,
    report: &GameReport,
    versions: &[String],
    started_at: &str,
) -> WorkerMsg {
    // Serialized and compressed here, on the worker: the writer only
    // appends.
    let mut record = Vec::with_capacity(4096);
    if let Err(e) = record::write_record_to(&mut record, spec, report) {
        return WorkerMsg::Failed {
            game_id: game.game_id.clone(),
            why: format!("its record cannot be serialized: {e}"),
        };
    }
    let record = match crate::results::records::encode(&record) {
        Ok(frame) => frame,
        Err(e) => {
            return WorkerMsg::Failed {
                game_id: game.game_id.clone(),
                why: format!("its record cannot be compressed: {e}"),
            }
        }
    };
    WorkerMsg::Done {
        record,
        row: Box::new(row_from_report(
            t,
            game,
            &spec.opening,
            report,
            versions,
            started_at,
        )),
        index: game.index,
        detail: report.detail.clone(),
        stderr: report.stderr.clone(),
    }
}

fn set_scores(row: &mut GameRow, scores: &[f64]) {
    row.score0 = scores.first().copied().unwrap_or(0.0);
    row.score1 = scores.get(1).copied().unwrap_or(0.0);
    row.score2 = scores.get(2).copied();
}

fn row_from_report(
    t: &Tournament,
    game: &ScheduledGame,
    opening: &[String],
    r: &GameReport,
    versions: &[String],
    started_at: &str,
) -> GameRow {
    let name = |seat: usize| {
        game.seats
            .get(seat)
            .map(|&b| t.bots[b].name.clone())
            .unwrap_or_default()
    };
    let version = |seat: usize| versions.get(seat).cloned().unwrap_or_default();
    // Thinking time by seat: the decisions it was asked for.
    let mut think_us = vec![0u64; game.seats.len()];
    for d in r.decisions.iter().filter(|d| !d.forced && !d.opening) {
        if let Some(t) = think_us.get_mut(d.seat) {
            *t += d.elapsed_us;
        }
    }
    let time = |seat: usize| think_us.get(seat).map(|&us| us as f64 / 1000.0);
    let mut row = GameRow {
        game_id: game.game_id.clone(),
        variant: t.variants[game.variant].key.clone(),
        players: game.seats.len() as u8,
        group: game.group.clone(),
        seat0: name(0),
        seat1: name(1),
        seat2: name(2),
        reason: r.reason.name().to_string(),
        offender: r.offender.map(|s| s as u8),
        plies: r.plies,
        duration_ms: r.duration.as_millis() as u64,
        seed: game.seed,
        opening: opening.join(" "),
        started_at: started_at.to_string(),
        version0: version(0),
        version1: version(1),
        version2: version(2),
        time0_ms: time(0),
        time1_ms: time(1),
        time2_ms: time(2),
        ..GameRow::default()
    };
    set_scores(&mut row, &r.scores);
    row
}

#[cfg(test)]
mod tests {
    use super::{programs_after_build, spare_cpus, Programs};

    #[test]
    fn programs_hashed_before_the_builds_are_kept_unless_a_build_made_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, format!("# {name}\n")).unwrap();
            p.display().to_string()
        };
        let (a, b) = (file("a.py"), file("b.py"));
        let src = format!(
            "name = \"t\"\nbots = [\n  {{ name = \"a\", command = [\"python3\", {a:?}] }},\n  {{ name = \"b\", command = [\"python3\", {b:?}], build = \"true\" }},\n]\n"
        );
        let t = crate::league::config::Tournament::parse(&dir.path().join("t.toml"), &src).unwrap();
        let before: Programs = [("a", &a), ("b", &b)]
            .into_iter()
            .map(|(bot, f)| (bot.to_string(), [(f.clone(), "before".to_string())].into()))
            .collect();
        let made = ["b".to_string()].into();
        let after = programs_after_build(&t, Some(&before), &made);
        // `a`'s taken as it was hashed (not read again), `b`'s read anew.
        assert_eq!(after["a"][&a], "before");
        assert_eq!(after["b"][&b].len(), 64, "{after:?}");
        let fresh = programs_after_build(&t, None, &Default::default());
        assert_eq!(fresh["a"][&a].len(), 64, "{fresh:?}");
        assert_eq!(fresh["b"], after["b"]);
    }

    /// A store that cannot take a game: the ladder's database out of reach.
    struct OutOfReach(crate::results::store::DoneSet);

    impl crate::results::store::Store for OutOfReach {
        type Error = std::io::Error;
        fn commit(
            &mut self,
            _: &crate::results::records::Frame,
            _: &mut crate::results::GameRow,
            _: usize,
        ) -> Result<(), std::io::Error> {
            Err(std::io::Error::other("the store is out of reach"))
        }
        fn sync(&mut self) -> Result<(), std::io::Error> {
            Ok(())
        }
        fn done(&self) -> &crate::results::store::DoneSet {
            &self.0
        }
        fn record(&self, _: &str) -> Result<String, std::io::Error> {
            Err(std::io::Error::other("no record"))
        }
    }

    /// A game that cannot be committed stops the pipeline as a failure,
    /// not as an interruption: the ladder's server, which plays through
    /// this pipeline, tries again after a failure but stops for good on an
    /// interruption (Ctrl-C, SIGTERM), and a database out of reach for
    /// its pool's 30 s stopped it, with exit status 0.
    #[test]
    fn a_game_that_cannot_be_committed_is_a_failure_not_an_interruption() {
        let dir = tempfile::tempdir().unwrap();
        let bot =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-python/bot.py");
        let src = format!(
            "name = \"t\"\nvariants = [\"filo\"]\nrounds = 1\nbots = [\n  {{ name = \"a\", command = [\"python3\", {bot:?}] }},\n  {{ name = \"b\", command = [\"python3\", {bot:?}] }},\n]\n"
        );
        let mut t =
            crate::league::config::Tournament::parse(&dir.path().join("t.toml"), &src).unwrap();
        t.concurrency = 1;
        let schedule = crate::league::schedule::Schedule::new(&t, None);
        let pairings = crate::league::pairings::RoundRobin::new(schedule, Default::default());
        let layout = crate::league::folder::Layout::new(dir.path().join("out"));
        std::fs::create_dir_all(layout.root()).unwrap();
        let mut store = OutOfReach(Default::default());
        let played = super::play_all(
            &t,
            &super::RunOptions::default(),
            pairings,
            usize::MAX,
            &mut store,
            &layout,
            &mut |_| {},
        )
        .unwrap();
        assert!(
            matches!(&played.stop, Some(super::Stop::Failed(why)) if why.contains("out of reach")),
            "{:?}",
            played.stop
        );
        assert!(!played.interrupted, "{played:?}");
        assert_eq!(played.played, 0);
    }

    #[test]
    fn the_writer_gets_the_cpus_no_worker_is_pinned_to() {
        assert_eq!(spare_cpus(&[0, 1], 1, false), vec![1]);
        assert_eq!(spare_cpus(&[2, 5, 7], 1, false), vec![5, 7]);
        assert!(spare_cpus(&[0, 1], 2, false).is_empty());
        assert!(spare_cpus(&[0, 1], 3, false).is_empty());
        assert!(spare_cpus(&[0, 1], 1, true).is_empty());
    }
}
