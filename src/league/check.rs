//! The conformance check of one bot: what `arena check-bot` runs before a
//! bot author enters a league, and what the ladder service runs on an
//! uploaded bot before it is entered.
//!
//! The checks, each a PASS or a FAIL with the exact message: the build (a
//! bot folder whose bot.toml has one, built as a league builds it); the
//! handshake; one game per seat of every game asked for (3-player Tricala
//! included) against the built-in random player; then games of what a
//! league, a match or the ladder may send that those do not (a field and a
//! message type the protocol does not name, a per-game clock, Kisolo on 6
//! and 8 columns: [`Probe`]), each failure said as what the bot choked
//! on; the quit (the bot must exit with status 0; later than a league
//! waits, a warning). Then the reply latency (median, p99).
//!
//! No console here: each line goes to the caller's `on_line` as it happens
//! (the command prints it, the service streams it), and the whole is a
//! [`CheckReport`], which gives the command's text and its `--json`
//! document.
//!
//! Two ways in:
//! - [`check_bot`], one async fn for a caller inside a tokio runtime (the
//!   service): the blocking build runs on the runtime's blocking pool;
//! - [`check_build`] (blocking) then [`check_built`] (async), for a caller
//!   that builds before it starts a runtime (the command: a Ctrl-C during
//!   the build ends it as any signal ends a plain process).
//!
//! The async part needs a runtime with I/O, timers and processes enabled
//! (`enable_all`); its future is `Send`. Dropping it drops the bot: its
//! process group dies.

use super::config::BotSpec;
use super::launch::{run_folder, Room};
use crate::bot::manifest::{self, Manifest};
use crate::bot::{BotCommand, Launch, LimitSettings, Sandbox};
use crate::engine::{Game, Settings, Variant, DEFAULT_MAX_PLIES};
use crate::referee::{
    self, BotPlayer, Clock, GameSpec, Player, RandomPlayer, TimeControl, Timing, Unknown,
};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What check-bot tells the author of a bot that exited at a game's first
/// request, was started again (as one that left after its last game is)
/// and exited there again.
const CRASHED_AT_FIRST_REQUEST: &str = "the bot exited at this game's first request; the referee started it again at no charge (a bot may have left after its last game: protocol.md), and it exited there again: that is the crash above (the stderr shown may hold both processes' last words)";

/// What check-bot tells the author of a bot that exits after its games.
const EXITED_AFTER_GAME: &str = "the bot was gone before it played a game (it exited, or closed its pipes, after its hello, its last reply of a game or its last game, or exited at its first request of a game): the referee reuses one process for many games, so exit only on `quit` (protocol.md); a league starts it again at no charge, once a game, if it left before playing that game, else that game is a `crash`";

/// How to check a bot (the flags of `arena check-bot`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// The games to check, one game per seat of each; empty: every game.
    pub games: Vec<Variant>,
    /// Time for one decision, in milliseconds (0: no limit per decision,
    /// only the game's watchdog).
    pub timeout_ms: u64,
    /// Time to answer the hello, in milliseconds.
    pub startup_ms: u64,
    /// Ply cap of the test games.
    pub max_plies: u32,
    /// Where the bot's stderr is appended (none: discarded, and a failure
    /// is shown without the end of what the bot said). Every restart
    /// shares it; each failure shows its own process's part.
    pub log: Option<PathBuf>,
    /// The bot in its sandbox, or not.
    pub sandbox: Sandbox,
    /// Limits that override what the bot's bot.toml asks for.
    pub limits: LimitSettings,
    /// Seed of the test games: each sends the bot a seed derived from it
    /// and the game's id in `game_start`.
    pub seed: u64,
}

impl Default for CheckOptions {
    /// The command's defaults: every game, 5 s a decision, 10 s to start,
    /// the engines' ply cap, no log, in the sandbox.
    fn default() -> CheckOptions {
        CheckOptions {
            games: Vec::new(),
            timeout_ms: 5000,
            startup_ms: 10_000,
            max_plies: DEFAULT_MAX_PLIES,
            log: None,
            sandbox: Sandbox::On,
            limits: LimitSettings::default(),
            seed: 0,
        }
    }
}

/// One line of a check's report, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckLine {
    /// A check made: its name, whether it passed, and what was seen.
    Outcome {
        check: String,
        pass: bool,
        detail: String,
    },
    /// A note on the check just made (printed indented under it).
    Note(String),
    /// A line about the run as a whole.
    Info(String),
}

impl fmt::Display for CheckLine {
    /// The line as `arena check-bot` prints it (a note of several lines
    /// indented on each).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckLine::Outcome {
                check,
                pass,
                detail,
            } => {
                let word = if *pass { "PASS" } else { "FAIL" };
                write!(f, "{word}  {check}: {detail}")
            }
            CheckLine::Note(msg) => write!(f, "      {}", msg.replace('\n', "\n      ")),
            CheckLine::Info(msg) => f.write_str(msg),
        }
    }
}

/// The latency of the bot's replies in the check games (its own decisions
/// only: not forced moves nor openings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Latency {
    /// How many replies were timed.
    pub replies: usize,
    /// Their median, in microseconds.
    pub median_us: u64,
    /// Their 99th percentile, in microseconds.
    pub p99_us: u64,
}

/// What a check found: every line, how many checks failed, the latency.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// The lines, in the order they happened.
    pub lines: Vec<CheckLine>,
    /// How many checks failed.
    pub failed: usize,
    /// The latency of the replies, when the bot made any.
    pub latency: Option<Latency>,
}

impl CheckReport {
    /// Every check passed: the bot may be entered.
    pub fn passed(&self) -> bool {
        self.failed == 0
    }

    /// The closing line: `all checks passed` or `N check(s) failed`.
    pub fn summary(&self) -> String {
        match self.failed {
            0 => "all checks passed".to_string(),
            n => format!("{n} check(s) failed"),
        }
    }

    /// The report as `arena check-bot` prints it: every line, then the
    /// summary, each ending with a newline.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for line in &self.lines {
            s.push_str(&line.to_string());
            s.push('\n');
        }
        s.push_str(&self.summary());
        s.push('\n');
        s
    }

    /// The document of `arena check-bot --json` for the bot `command`:
    /// every check with its outcome, detail and notes (a note before any
    /// check is an info line), the latency in milliseconds, the info lines.
    pub fn to_json(&self, command: &str) -> serde_json::Value {
        let mut checks: Vec<serde_json::Value> = Vec::new();
        let mut info: Vec<String> = Vec::new();
        for line in &self.lines {
            match line {
                CheckLine::Outcome {
                    check,
                    pass,
                    detail,
                } => checks.push(serde_json::json!({
                    "check": check, "pass": pass, "detail": detail, "notes": []
                })),
                CheckLine::Note(msg) => match checks.last_mut() {
                    Some(last) => {
                        if let Some(notes) = last["notes"].as_array_mut() {
                            notes.push(msg.as_str().into());
                        }
                    }
                    None => info.push(msg.clone()),
                },
                CheckLine::Info(msg) => info.push(msg.clone()),
            }
        }
        let latency = self.latency.map(|l| {
            serde_json::json!({
                "replies": l.replies,
                "median": l.median_us as f64 / 1000.0,
                "p99": l.p99_us as f64 / 1000.0,
            })
        });
        serde_json::json!({
            "command": command,
            "passed": self.passed(),
            "failed": self.failed,
            "checks": checks,
            "latency_ms": latency,
            "info": info,
        })
    }
}

/// What the caller is told of each line as it happens.
pub type OnLine<'f> = &'f mut (dyn FnMut(&CheckLine) + Send + 'f);

/// Checks the bot started by `cmd` (its bot.toml asks for `asks`; `folder`:
/// its folder's manifest, whose build, if any, runs first): the whole
/// check, each line given to `on_line` as it happens. For a caller inside
/// a tokio runtime: the build runs on its blocking pool
/// (`spawn_blocking`), the games on the runtime.
pub async fn check_bot(
    mut cmd: BotCommand,
    asks: LimitSettings,
    folder: Option<Box<Manifest>>,
    opts: &CheckOptions,
    on_line: OnLine<'_>,
) -> CheckReport {
    let mut c = Checker::new(CheckReport::default(), on_line);
    let (sandbox, limits) = (opts.sandbox, opts.limits);
    let built = tokio::task::spawn_blocking(move || build(folder, sandbox, limits))
        .await
        .unwrap_or_else(|e| Some(Err(format!("the build stopped: {e}"))));
    if !c.built(built, &mut cmd) {
        return c.report;
    }
    after_build(c, &cmd, asks, opts).await
}

/// The first check alone: runs the build of the bot's folder, if its
/// bot.toml has one, as a league would (in the sandbox, in a copy of the
/// folder), and points `cmd` at the built copy. Blocking: it waits for
/// the build. The report so far (nothing without a build); go on with
/// [`check_built`] when it passed.
pub fn check_build(
    cmd: &mut BotCommand,
    folder: Option<Box<Manifest>>,
    opts: &CheckOptions,
    on_line: OnLine<'_>,
) -> CheckReport {
    let mut c = Checker::new(CheckReport::default(), on_line);
    c.built(build(folder, opts.sandbox, opts.limits), cmd);
    c.report
}

/// The checks after the build (the handshake, the games, the quit, the
/// latency) of the bot started by `cmd`, its bot.toml asking for `asks`,
/// added to `report` (what [`check_build`] gave).
pub async fn check_built(
    report: CheckReport,
    cmd: &BotCommand,
    asks: LimitSettings,
    opts: &CheckOptions,
    on_line: OnLine<'_>,
) -> CheckReport {
    after_build(Checker::new(report, on_line), cmd, asks, opts).await
}

/// The report being made, and who hears of each line.
struct Checker<'f> {
    report: CheckReport,
    on_line: OnLine<'f>,
    /// How the bot's plain games ended where it was at fault: a probe's
    /// game that ends the same way is that fault again, not the probe's.
    plain_faults: Vec<(usize, referee::EndReason)>,
}

impl<'f> Checker<'f> {
    fn new(report: CheckReport, on_line: OnLine<'f>) -> Checker<'f> {
        Checker {
            report,
            on_line,
            plain_faults: Vec::new(),
        }
    }
    fn line(&mut self, line: CheckLine) {
        (self.on_line)(&line);
        self.report.lines.push(line);
    }
    fn outcome(&mut self, what: &str, pass: bool, msg: &str) {
        self.line(CheckLine::Outcome {
            check: what.to_string(),
            pass,
            detail: msg.to_string(),
        });
    }
    fn pass(&mut self, what: &str, msg: &str) {
        self.outcome(what, true, msg);
    }
    fn fail(&mut self, what: &str, msg: &str) {
        self.report.failed += 1;
        self.outcome(what, false, msg);
    }
    /// A note on the check just made.
    fn note(&mut self, msg: &str) {
        self.line(CheckLine::Note(msg.to_string()));
    }
    /// A line about the run as a whole.
    fn info(&mut self, msg: &str) {
        self.line(CheckLine::Info(msg.to_string()));
    }

    /// Records the build's outcome (see [`build`]) and points `cmd` at the
    /// built copy; false when the build failed.
    fn built(
        &mut self,
        built: Option<Result<(Option<PathBuf>, String), String>>,
        cmd: &mut BotCommand,
    ) -> bool {
        match built {
            None => true,
            Some(Ok((dir, msg))) => {
                cmd.cwd = dir;
                self.pass("build", &msg);
                true
            }
            Some(Err(msg)) => {
                self.fail("build", &msg);
                false
            }
        }
    }
}

/// Runs the build command of the bot's folder, if it has one, as a league
/// would (in the sandbox, in a copy of the folder). None without a build;
/// else the folder the bot runs from and the PASS detail, or the FAIL
/// detail.
fn build(
    folder: Option<Box<Manifest>>,
    sandbox: Sandbox,
    limits: LimitSettings,
) -> Option<Result<(Option<PathBuf>, String), String>> {
    let m = folder.filter(|m| m.build.is_some())?;
    let spec = BotSpec::from_manifest(*m);
    let words = manifest::expand(spec.build.as_deref().unwrap_or_default());
    let what = format!("`{}`", crate::bot::shown_words(&words));
    let room = Room {
        sandbox,
        limits,
        ..Default::default()
    };
    let bots = std::slice::from_ref(&spec);
    Some(
        match super::build::build_bots(bots, &room, None, &mut |_| {}) {
            Ok(()) => {
                let dir = run_folder(&spec);
                let shown = dir
                    .as_deref()
                    .unwrap_or(Path::new("."))
                    .display()
                    .to_string();
                Ok((
                    dir,
                    format!("{what}, in the sandbox; the bot runs from {shown}"),
                ))
            }
            Err(e) => Err(format!("{what}: {e}")),
        },
    )
}

/// The checks after the build: says what is checked and how, then plays.
async fn after_build(
    mut c: Checker<'_>,
    cmd: &BotCommand,
    asks: LimitSettings,
    opts: &CheckOptions,
) -> CheckReport {
    // As long to exit after `quit` as to start, and at least two seconds,
    // not a league's half second: the check judges the exit, and a Python
    // bot on a loaded machine can take more than 2 s to end (a ladder's
    // check once failed a random player so under a loaded test run).
    let startup = Duration::from_millis(opts.startup_ms);
    let timing = Timing {
        startup,
        shutdown_grace: startup.max(Duration::from_secs(2)),
    };
    let room = Room {
        sandbox: opts.sandbox,
        limits: opts.limits,
        hide: None,
        ..Default::default()
    };
    let launch = room.launch(cmd.clone(), asks, opts.log.clone());
    c.info(&format!("checking `{}`", cmd.display()));
    say_sandbox(&mut c, &launch);
    let variants = match opts.games.is_empty() {
        true => Variant::ALL.to_vec(),
        false => opts.games.clone(),
    };
    let subject = Subject {
        launch: &launch,
        timing: &timing,
        since: 0,
    };
    check_games(c, opts, subject, variants).await
}

/// The bot under check: how it starts, and where its current process's
/// stderr begins in its log (shared by every restart).
struct Subject<'a> {
    launch: &'a Launch,
    timing: &'a Timing,
    since: u64,
}

impl Subject<'_> {
    /// The size of the bot's stderr log so far.
    fn log_len(&self) -> u64 {
        self.launch
            .stderr_log
            .as_deref()
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len())
    }

    /// The end of the current process's stderr, after a failed start or a
    /// crash.
    async fn tail(&self) -> Option<String> {
        let log = self.launch.stderr_log.as_deref()?;
        crate::bot::log_tail(log, 20, self.since).await.map(|t| {
            let t = crate::protocol::escape_lines(&t);
            format!("its stderr ends:\n  {}", t.replace('\n', "\n  "))
        })
    }

    /// Starts a bot process and checks its handshake; when it fails, notes
    /// the end of its stderr.
    async fn start(&mut self, c: &mut Checker<'_>) -> Option<BotPlayer> {
        self.since = self.log_len();
        let t0 = std::time::Instant::now();
        let b = BotPlayer::start(self.launch, self.timing).await;
        let bot = handshake(c, b, t0.elapsed());
        if bot.is_none() {
            // It ran (it wrote on stderr): what the sandbox hides from it
            // may be why it stopped.
            if let Some(t) = self.tail().await {
                c.note(&t);
                if self.launch.sandbox == crate::bot::Sandbox::On {
                    c.note(crate::bot::SANDBOX_START_NOTE);
                }
            }
        }
        bot
    }
}

/// The handshake, one game per seat of each of `variants` (the bot
/// restarted after a fault or an exit), the games of what a league may
/// send beyond them ([`probes`]), the quit and the latency.
async fn check_games(
    mut c: Checker<'_>,
    opts: &CheckOptions,
    mut subject: Subject<'_>,
    variants: Vec<Variant>,
) -> CheckReport {
    let Some(mut bot) = subject.start(&mut c).await else {
        return c.report;
    };
    let mut games: Vec<CheckGame> = variants
        .iter()
        .flat_map(|&v| {
            v.player_counts().iter().flat_map(move |&n| {
                (0..n).map(move |seat| CheckGame {
                    variant: v,
                    n,
                    seat,
                    probe: Probe::Plain,
                })
            })
        })
        .collect();
    let plain = games.len();
    let mut passed: Vec<CheckGame> = Vec::new();
    let mut latencies: Vec<u64> = Vec::new();
    let mut exits = Exits::default();
    let mut last = String::new();
    let mut game_no = 0;
    while let Some(&g) = games.get(game_no) {
        game_no += 1;
        last = format!("game {game_no} ({})", g.name());
        let spec = check_spec(opts, g, game_no as u64);
        bot.send_unknown(g.probe.unknown());
        let sent = bot.unknown_messages_sent();
        let report = against_randoms(&spec, &mut bot, g.n, g.seat, game_no as u64).await;
        bot.send_unknown(Unknown::Nothing);
        let faulted = match &report {
            Ok(r) if r.offender == Some(g.seat) => Some(r.reason.name()),
            _ => None,
        };
        if report.is_ok() && faulted.is_none() && g.probe == Probe::Plain {
            passed.push(g);
        }
        let sent = bot.unknown_messages_sent().saturating_sub(sent);
        if judge(&mut c, g, report, sent, &mut latencies) {
            if let Some(t) = subject.tail().await {
                c.note(&t);
            }
        }
        // It wrote after a game's end, too late to be charged there
        // (a league starts it again, at no charge): a fault all the
        // same.
        if let Some(late) = bot.take_late_output() {
            c.fail(
                "stray output",
                &format!("after a game ended (after game_end, before the next game's first request) the bot wrote, unasked: {late} (write nothing to stdout between games; a league starts the bot again before its next game, at no charge)"),
            );
        }
        if game_no == plain {
            games.extend(probes(&mut c, &passed, &variants));
        }
        let restart = bot.needs_restart();
        exits.after_game(&mut c, &bot, faulted, restart, &last);
        let after_last = game_no == games.len();
        match between_games(&mut c, &mut subject, &mut bot, faulted, after_last).await {
            Some(gone) => exits.gone_after_last |= gone,
            None => return c.report,
        }
    }
    exits.say_count(&mut c);
    let gone = exits.gone_after_last.then_some(last.as_str());
    let quit = Quit {
        grace: subject.timing.shutdown_grace,
        timeout_ms: opts.timeout_ms,
        gone_after: gone,
    };
    if !quit_and_latency(&mut c, &mut bot, &mut latencies, quit).await {
        // Why it ended as it did, in its own words (a traceback at the
        // end of its input, say).
        if let Some(t) = subject.tail().await {
            c.note(&t);
        }
    }
    c.report
}

/// After a game (`faulted`: the bot's fault in it, if any; `after_last`:
/// the last game of the check): a bot that needs it started again, or,
/// after the last game, whether it is gone before quit is sent. `None`
/// when it cannot be started again (the check ends).
async fn between_games(
    c: &mut Checker<'_>,
    subject: &mut Subject<'_>,
    bot: &mut BotPlayer,
    faulted: Option<&str>,
    after_last: bool,
) -> Option<bool> {
    let restart = bot.needs_restart();
    // Gone after the last game's end, before quit: the quit's check
    // says so, of this process (a fresh one would quit cleanly).
    if restart && faulted.is_none() && after_last {
        Some(true)
    } else if restart {
        bot.kill();
        if faulted.is_some() {
            c.note("restarting the bot (after a fault, a fresh process plays the next game)");
        }
        *bot = subject.start(c).await?;
        Some(false)
    } else if after_last {
        // Does it end by itself soon after its last game_end (a crash
        // in its handler of it, an exit there), before quit is sent?
        // Looked at after a moment, the time a script takes to print
        // a traceback and exit.
        tokio::time::sleep(SETTLE.min(subject.timing.shutdown_grace)).await;
        Some(bot.needs_restart())
    } else {
        Some(false)
    }
}

/// A game of the check: `variant` with `n` players, the bot in `seat`, the
/// built-in random player in the others, and what it is sent beyond a
/// plain game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CheckGame {
    variant: Variant,
    n: usize,
    seat: usize,
    probe: Probe,
}

impl CheckGame {
    /// The game in the report's words: `filo 2p seat 0`, and the columns
    /// of a Kisolo that has other than 7.
    fn name(&self) -> String {
        let columns = match self.probe {
            Probe::Columns(n) => format!(", {n} columns"),
            _ => String::new(),
        };
        format!("{} {}p seat {}{columns}", self.variant, self.n, self.seat)
    }
}

/// What a game of the check sends beyond a plain game: what a league, a
/// match or the ladder may send a bot that the plain games do not
/// (protocol.md: "A bot must ignore fields and message types it does not
/// know", the per-game clock; docs/rules/kisolo.md: the columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    /// Nothing.
    Plain,
    /// A field the protocol does not name in every request.
    Field,
    /// A message of a type the protocol does not name before every
    /// request of the game but its first.
    MessageType,
    /// A per-game clock: `time.base_ms` and `time.increment_ms` in
    /// game_start, `time_left_ms` in every request.
    Clock,
    /// Kisolo on this many columns, not 7 (a league's `columns` option).
    Columns(u8),
}

/// The ply cap of the games of unknown fields and messages and of the
/// clock: each is about what the bot is sent, which the first few
/// requests show, so they cost the check little.
const PROBE_PLIES: u32 = 24;

impl Probe {
    /// What the bot is sent beyond the protocol's messages of today.
    fn unknown(self) -> Unknown {
        match self {
            Probe::Field => Unknown::Field,
            Probe::MessageType => Unknown::MessageType,
            _ => Unknown::Nothing,
        }
    }

    /// The check's name, for all but a plain game (whose name is the
    /// game's).
    fn check(self) -> Option<String> {
        match self {
            Probe::Plain => None,
            Probe::Field => Some("unknown field".into()),
            Probe::MessageType => Some("unknown message type".into()),
            Probe::Clock => Some("game clock".into()),
            Probe::Columns(n) => Some(format!("kisolo {n} columns")),
        }
    }

    /// What the bot met, as it is told when it failed on it (after what
    /// it did: "crashed on"), with what protocol.md or the rules say.
    fn met(self) -> String {
        let unknown = crate::protocol::UNKNOWN;
        match self {
            Probe::Plain => "a game".into(),
            Probe::Field => format!("a request holding a field it does not know (`{unknown}`); protocol.md: a bot must ignore unknown fields"),
            Probe::MessageType => format!("a message of a type it does not know (`{{\"type\":\"{unknown}\"}}`, sent before a request); protocol.md: a bot must ignore message types it does not know"),
            Probe::Clock => "a game with a per-game clock (`time.base_ms` and `time.increment_ms` in game_start, `time_left_ms` in each request); protocol.md: answer within `timeout_ms`, the smaller of the time for a decision and the clock".into(),
            Probe::Columns(n) => format!("Kisolo on {n} columns (`\"options\":{{\"columns\":\"{n}\"}}` in game_start, `state.columns`); docs/rules/kisolo.md: a league may play it on 6, 7 or 8 columns"),
        }
    }
}

/// The games that check what a league may send beyond the plain games
/// (see [`Probe`]), each after a plain game of its kind passed, so that
/// its failure is what it sends: an unknown field, an unknown message
/// type and a clock in short games of the first 2-player game that
/// passed; Kisolo on 6 and 8 columns (where this build plays them), one
/// seat each, if a Kisolo game on 7 passed. What cannot be checked is
/// said.
fn probes(c: &mut Checker<'_>, passed: &[CheckGame], variants: &[Variant]) -> Vec<CheckGame> {
    let mut games = Vec::new();
    match passed.iter().find(|g| g.n == 2) {
        Some(&g) => games.extend(
            [Probe::Field, Probe::MessageType, Probe::Clock].map(|probe| CheckGame { probe, ..g }),
        ),
        None => c.info("unknown fields and message types and a game clock not checked: no 2-player game passed"),
    }
    if !variants.contains(&Variant::Kisolo) {
        return games;
    }
    let columns: Vec<u8> = [6, 8]
        .into_iter()
        .filter(|&n| Game::new(Variant::Kisolo, &columns(2, n)).is_ok())
        .collect();
    match passed.iter().find(|g| g.variant == Variant::Kisolo) {
        Some(_) => games.extend(columns.iter().enumerate().map(|(i, &n)| CheckGame {
            variant: Variant::Kisolo,
            n: 2,
            seat: i % 2,
            probe: Probe::Columns(n),
        })),
        None if !columns.is_empty() => {
            c.info("kisolo on 6 and 8 columns not checked: no kisolo game on 7 columns passed")
        }
        None => {}
    }
    games
}

/// The settings of a game of `n` players on `columns` columns (Kisolo's
/// option).
fn columns(n: usize, columns: u8) -> Settings {
    let mut settings = Settings::with_players(n);
    settings
        .options
        .insert("columns".to_string(), columns.to_string());
    settings
}

/// The bot's exits between games (after a game's end, before the next
/// game or quit), told once, however often.
#[derive(Default)]
struct Exits {
    /// How many were seen, and where the first was.
    seen: u32,
    first: String,
    /// [`BotPlayer::exits_between_games`] so far.
    restarts: u32,
    /// It was gone after the last game's end, before quit.
    gone_after_last: bool,
}

impl Exits {
    /// After game `game` (its words): the bot found gone before it
    /// (started again at its start) or after it (`restart`, without a
    /// fault: the process ended).
    fn after_game(
        &mut self,
        c: &mut Checker<'_>,
        bot: &BotPlayer,
        faulted: Option<&str>,
        restart: bool,
        game: &str,
    ) {
        let restarted = bot.exits_between_games() > self.restarts;
        self.restarts = bot.exits_between_games();
        let gone = match (restarted, faulted) {
            // Started again at this game's first request, where it
            // exited, and exited there again: the crash above. (A crash
            // after replies of the second process is said as any fault.)
            (true, Some("crash")) if bot.asked_in_game() <= 1 => {
                return c.note(CRASHED_AT_FIRST_REQUEST)
            }
            // Or the second process failed otherwise.
            (true, Some(kind)) => return c.note(&format!(
                "the bot exited at this game's first request; the referee started it again at no charge (a bot may have left after its last game: protocol.md), and the second process's fault is the `{kind}` above; the first one's exit is in the stderr shown, if it said anything"
            )),
            (true, None) => format!("before {game} started"),
            (false, None) if restart => format!("after game_end of {game}"),
            _ => return,
        };
        self.seen += 1;
        if self.seen == 1 {
            c.note(&format!(
                "{EXITED_AFTER_GAME} (first gone {gone}; said once)"
            ));
            self.first = gone;
        }
    }

    /// How often in all, when more than once.
    fn say_count(&self, c: &mut Checker<'_>) {
        if self.seen > 1 {
            c.info(&format!(
                "the bot was gone between games {} times in all (the first {}: see the note there)",
                self.seen, self.first
            ));
        }
    }
}

/// How long after its last game the bot is given to end by itself, if it
/// does, before quit is sent. A wait, not a look at the pipes: its stdin
/// can tell a bot that exited with the quit still unread, but not one that
/// exits on game_end having read the quit ahead with it (a buffered reader
/// takes both from the pipe in one read, if the quit came at once), which
/// would look like a clean quit, nor whether a bot asleep after game_end
/// waits for its next line or is about to exit (`exit_late_after_game`).
const SETTLE: Duration = Duration::from_millis(500);

/// How the quit is judged.
struct Quit<'a> {
    /// Time the bot has to exit after quit.
    grace: Duration,
    /// check-bot's time for a decision.
    timeout_ms: u64,
    /// The game after whose end the bot was gone before quit was sent.
    gone_after: Option<&'a str>,
}

/// Plays check game `spec` (number `game_no`) of `n` players, the bot in
/// `seat` and the built-in random player in the others.
async fn against_randoms(
    spec: &GameSpec,
    bot: &mut BotPlayer,
    n: usize,
    seat: usize,
    game_no: u64,
) -> Result<referee::GameReport, referee::SpecError> {
    let mut randoms: Vec<RandomPlayer> = (0..n)
        .map(|s| RandomPlayer::new(format!("random-{s}"), game_no * 7 + s as u64))
        .collect();
    let mut ps: Vec<&mut dyn Player> = randoms
        .iter_mut()
        .take(n - 1)
        .map(|r| r as &mut dyn Player)
        .collect();
    ps.insert(seat, bot);
    referee::play_game(spec, &mut ps, &mut |_| {}).await
}

/// The last checks: the bot quits cleanly with nothing unasked after its
/// last request; then the latency of its replies (microseconds). Returns
/// whether it quit cleanly.
async fn quit_and_latency(
    c: &mut Checker<'_>,
    bot: &mut BotPlayer,
    latencies: &mut [u64],
    quit: Quit<'_>,
) -> bool {
    let Quit {
        grace,
        timeout_ms,
        gone_after,
    } = quit;
    let left = bot.quit_report().await;
    if let Some(bytes) = &left.stray {
        // A process never asked anything wrote it before any request.
        let when = match (left.at_quit, left.asked) {
            // Read after quit was sent, though it may have been written
            // before it arrived: after game_end.
            (true, _) => "after its last game ended (after game_end or on quit; write nothing to stdout then) the bot wrote, unasked",
            // Nothing was there at its last game's end (the referee
            // looks after the last reply): written after it, on game_end
            // most likely.
            (false, true) => "after its last game ended (after its last reply and the referee's look at the game's end: on game_end, most likely; write nothing to stdout then) the bot wrote, unasked",
            (false, false) => "before any request (none was sent to it since it last started) the bot wrote, unasked",
        };
        // Its last newline says nothing.
        let shown = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        c.fail(
            "stray output",
            &format!("{when}: {}", crate::protocol::truncate(shown, 200)),
        );
    }
    if let Some(game) = gone_after {
        // Gone already: its end is no quit. A clean exit between games
        // is what a league forgives (started again at no charge): said,
        // not failed; a crash there is a fault of the bot's all the same.
        let exited = match left.status {
            Some(status) => format!("exited ({})", crate::bot::describe_status(&Some(status))),
            None => "exited".to_string(),
        };
        let said = format!("{exited} after game_end of {game}, before quit was sent: read on after game_end and exit only on {{\"type\":\"quit\"}} (protocol.md)");
        match left.status.is_some_and(|s| s.success()) {
            true => c.note(&format!("quit not judged: the bot {said}")),
            false => c.fail("quit", &said),
        }
    } else if left.clean {
        c.pass("quit", "exited with status 0");
        // Within check-bot's grace, which is longer than a league's.
        let league = Timing::default().shutdown_grace;
        if let Some(took) = left.took.filter(|&t| t > league) {
            c.note(&format!(
                "warning: it took {:.2} s to exit after quit; a league, a match and the ladder wait {:.1} s, then close its stdin, SIGTERM its processes half a second later and SIGKILL them half a second after that, cutting short what it does on its way out: on {{\"type\":\"quit\"}} exit at once (protocol.md)",
                took.as_secs_f64(),
                league.as_secs_f64()
            ));
        }
    } else {
        let why = match left.status {
            Some(status) if left.gone_before => format!(
                "it had already ended ({}) before quit was sent: exit only after quit (protocol.md)",
                crate::bot::describe_status(&Some(status))
            ),
            None if left.gone_before => {
                "its stdin was closed before quit was sent: read until quit, then exit".to_string()
            }
            Some(status) => format!(
                "ended with {} at quit, where status 0 is wanted: on {{\"type\":\"quit\"}} stop reading and exit 0 (protocol.md)",
                crate::bot::describe_status(&Some(status))
            ),
            None => format!(
                "did not exit within {grace:?} of quit: on {{\"type\":\"quit\"}} stop reading and exit with status 0 (protocol.md); a bot that reads on past it, or works on, is ended by force (its stdin closed, then SIGTERM, then SIGKILL)"
            ),
        };
        c.fail("quit", &why);
    }
    say_latency(c, latencies, timeout_ms);
    left.clean && gone_after.is_none()
}

/// The latency of the bot's replies (microseconds), and a warning when
/// any took longer than a league's default time for a decision, which
/// check-bot's own (`timeout_ms`) may exceed: there it would forfeit.
fn say_latency(c: &mut Checker<'_>, latencies: &mut [u64], timeout_ms: u64) {
    if latencies.is_empty() {
        return;
    }
    latencies.sort_unstable();
    let l = Latency {
        replies: latencies.len(),
        median_us: latencies[latencies.len() / 2],
        p99_us: latencies[(latencies.len() * 99 / 100).min(latencies.len() - 1)],
    };
    c.report.latency = Some(l);
    c.info(&format!(
        "latency over {} replies: median {:.2} ms, p99 {:.2} ms",
        l.replies,
        l.median_us as f64 / 1000.0,
        l.p99_us as f64 / 1000.0
    ));
    let league_ms = super::config::TimeSettings::default().decision_ms;
    let over = latencies
        .iter()
        .filter(|&&us| us > league_ms * 1000)
        .count();
    if over > 0 {
        let slowest = latencies[latencies.len() - 1];
        let here = match timeout_ms {
            0 => "no limit a decision here".to_string(),
            ms => format!("{ms} ms here"),
        };
        c.info(&format!(
            "warning: {over} of {} replies took longer than {league_ms} ms (the slowest {:.2} ms): leagues, matches and the ladder allow {league_ms} ms a decision by default (`decision_ms`), where each of them would forfeit the game on time; check-bot allowed {here} (--timeout-ms)",
            l.replies,
            slowest as f64 / 1000.0
        ));
    }
}

/// Game `game_no` of the check, `g`, under the options' time per decision
/// and ply cap (the probes' own, shorter, for an unknown field, message
/// or a clock).
fn check_spec(opts: &CheckOptions, g: CheckGame, game_no: u64) -> GameSpec {
    let mut settings = match g.probe {
        Probe::Columns(n) => columns(g.n, n),
        _ => Settings::with_players(g.n),
    };
    settings.max_plies = match g.probe {
        Probe::Field | Probe::MessageType | Probe::Clock => opts.max_plies.min(PROBE_PLIES),
        Probe::Plain | Probe::Columns(_) => opts.max_plies,
    };
    let mut spec = GameSpec::new(format!("check-{game_no}"), g.variant, settings);
    // 0: no limit but the watchdog, as everywhere.
    let per_decision = match opts.timeout_ms {
        0 => spec.watchdog,
        ms => Duration::from_millis(ms),
    };
    // A clock of a dozen decisions' time: each request's `timeout_ms`
    // stays the time for a decision, and `time_left_ms` more.
    let clock = (g.probe == Probe::Clock).then(|| Clock {
        base: per_decision.saturating_mul(12).min(spec.watchdog),
        increment: Duration::from_millis(100),
    });
    spec.time = TimeControl {
        per_decision,
        clock,
    };
    spec.seed = super::schedule::bot_seed(opts.seed, &spec.game_id);
    spec
}

/// Records the result of check game `g` for the bot: passed (its
/// decisions' times join `latencies`) or failed, and why; a probe's
/// failure said as what the bot failed on (`sent`: the messages of an
/// unknown type it was sent in the game). True when the bot crashed: the
/// end of its stderr is then worth showing.
fn judge(
    c: &mut Checker<'_>,
    g: CheckGame,
    report: Result<referee::GameReport, referee::SpecError>,
    sent: u32,
    latencies: &mut Vec<u64>,
) -> bool {
    let seat = g.seat;
    let what = g.probe.check().unwrap_or_else(|| g.name());
    // A probe's detail says which game it was.
    let game = match g.probe {
        Probe::Plain => String::new(),
        _ => format!("{}: ", g.name()),
    };
    match report {
        Err(e) => c.fail(&what, &format!("{game}cannot play: {e}")),
        Ok(r) if r.offender == Some(seat) => {
            let fault = format!(
                "{} at ply {}: {}",
                r.reason,
                r.plies,
                r.detail.as_deref().unwrap_or("")
            );
            match g.probe {
                Probe::Plain => {
                    c.plain_faults.push((seat, r.reason));
                    c.fail(&what, &fault);
                }
                // The plain game of this seat ended so too, or another
                // one did and the bot had answered requests of this game
                // (which carried the probe's feature) before: the feature
                // is not what to look at.
                _ if c.plain_faults.contains(&(seat, r.reason))
                    || (c.plain_faults.iter().any(|(_, f)| *f == r.reason)
                        && own_decisions(&r, seat).next().is_some()) =>
                {
                    c.fail(
                    &what,
                    &format!(
                        "{game}{fault} (the fault of the plain games above, not this probe's: mend that first)"
                    ),
                    )
                }
                probe => c.fail(
                    &what,
                    &format!("{} {}; {game}{fault}", failed_on(r.reason), probe.met()),
                ),
            }
            if r.reason == referee::EndReason::Forfeit(referee::ForfeitKind::Crash) {
                if r.detail.as_deref().is_some_and(|d| d.contains("status 0")) {
                    c.note("it exited by itself (status 0): the referee reuses one process for many games, so exit only on `quit` (protocol.md)");
                }
                return true;
            }
        }
        Ok(r) => {
            latencies.extend(own_decisions(&r, seat).map(|d| d.elapsed_us));
            let sent = match g.probe {
                Probe::MessageType => format!(", sent {sent} time(s)"),
                _ => String::new(),
            };
            c.pass(
                &what,
                &format!(
                    "{game}{} plies, {} (score {}){sent}",
                    r.plies, r.reason, r.scores[seat]
                ),
            );
        }
    }
    false
}

/// The decisions `seat` made itself in the game of `r` (not forced, not
/// the opening's).
fn own_decisions(
    r: &referee::GameReport,
    seat: usize,
) -> impl Iterator<Item = &crate::referee::DecisionRecord> {
    r.decisions
        .iter()
        .filter(move |d| d.seat == seat && !d.forced && !d.opening)
}

/// What a bot that ended a game with `reason` (a forfeit of its own) did,
/// as a verb before what it met: "crashed on".
fn failed_on(reason: referee::EndReason) -> &'static str {
    use referee::ForfeitKind as K;
    match reason {
        referee::EndReason::Forfeit(K::Crash) => "crashed on",
        referee::EndReason::Forfeit(K::Memory) => "ran out of memory on",
        referee::EndReason::Forfeit(K::Timeout | K::Stall) => "timed out on",
        referee::EndReason::Forfeit(K::BadJson) => "wrote a line that is not JSON on",
        referee::EndReason::Forfeit(K::LineTooLong) => "wrote a line too long on",
        referee::EndReason::Forfeit(K::Protocol) => "broke the protocol on",
        referee::EndReason::Forfeit(K::Illegal) => "answered an option that is not legal on",
        referee::EndReason::Rules(_) | referee::EndReason::Unplayable => "failed on",
    }
}

/// What the bot is given in its sandbox, when it has one.
fn say_sandbox(c: &mut Checker<'_>, launch: &Launch) {
    if launch.sandbox == Sandbox::On {
        let l = &launch.limits;
        c.info(&format!(
            "sandbox: on; limits: {} MiB memory, {} processes, {} CPU(s), {} MiB files, by {}",
            l.memory_mb,
            l.processes,
            l.cpus,
            l.file_size_mb,
            crate::bot::sandbox::cgroup::mechanism()
        ));
        c.info(&format!("walls: {}", crate::bot::sandbox::walls()));
    }
}

/// The check of the bot's start (spawn and hello) and what it cost.
fn handshake(
    c: &mut Checker<'_>,
    bot: Result<BotPlayer, referee::StartError>,
    took: Duration,
) -> Option<BotPlayer> {
    match bot {
        Ok(b) => {
            let i = b.info();
            let cost = match took.as_millis() {
                ms if ms >= 1000 => format!(
                    "started in {ms} ms: paid again at every restart after a fault, and by every league worker"
                ),
                ms => format!("started in {ms} ms"),
            };
            c.pass(
                "handshake",
                &format!(
                    "{}{} {} ({cost})",
                    i.name,
                    match i.version.trim() {
                        "" => String::new(),
                        v => format!(" {v}"),
                    },
                    match i.author.trim() {
                        "" => "(no author in its hello)".to_string(),
                        a => format!("by {a}"),
                    }
                ),
            );
            Some(b)
        }
        Err(e) => {
            c.fail("handshake", &not_started(&e));
            None
        }
    }
}

/// Why the bot did not start or shake hands: a fault of the bot's, by its
/// kind (`crash: exited (status 3)`); or, when no process of it ever ran,
/// what stopped it (its configuration refused, its program or folder
/// missing), not called a crash.
fn not_started(e: &referee::StartError) -> String {
    use crate::bot::BotError;
    match e {
        referee::StartError::Spawn(BotError::Refused(why)) => {
            format!("refused before it started: its configuration cannot run as written: {why}")
        }
        referee::StartError::Spawn(e) => format!("did not start: {e}"),
        referee::StartError::Handshake(f) => f.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Game;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    /// The options of these tests: one game (the first this build plays),
    /// no sandbox (these tests run where user namespaces may not be).
    fn one_game() -> CheckOptions {
        let v = Variant::ALL
            .into_iter()
            .find(|&v| Game::new(v, &Settings::with_players(2)).is_ok())
            .expect("no game engine in this build");
        CheckOptions {
            games: vec![v],
            sandbox: Sandbox::Off,
            ..CheckOptions::default()
        }
    }

    /// Checks `cmd` (folder `folder`) from inside a runtime, as the service
    /// does; the report and the lines `on_line` saw.
    async fn check(
        cmd: BotCommand,
        folder: Option<Box<Manifest>>,
        opts: &CheckOptions,
    ) -> (CheckReport, Vec<CheckLine>) {
        let mut seen = Vec::new();
        let mut on_line = |l: &CheckLine| seen.push(l.clone());
        let asks = folder.as_ref().map(|m| m.limits).unwrap_or_default();
        let report = check_bot(cmd, asks, folder, opts, &mut on_line).await;
        (report, seen)
    }

    #[tokio::test]
    async fn the_shipped_python_bot_passes_and_the_text_has_its_lines() {
        let m = Manifest::load(&root().join("bots/random-python")).unwrap();
        let (report, seen) = check(m.command(), Some(Box::new(m)), &one_game()).await;
        let text = report.text();
        assert!(report.passed(), "{text}");
        assert_eq!(seen, report.lines);
        let passes: Vec<String> = seen
            .iter()
            .filter(|l| matches!(l, CheckLine::Outcome { pass: true, .. }))
            .map(|l| l.to_string())
            .collect();
        // The handshake, two seats at least, the quit.
        assert!(passes.len() >= 4, "{text}");
        assert!(passes[0].starts_with("PASS  handshake: "), "{text}");
        assert_eq!(
            passes.last().map(String::as_str),
            Some("PASS  quit: exited with status 0")
        );
        let mut from = 0;
        for p in &passes {
            let at = text[from..].find(&format!("{p}\n"));
            assert!(at.is_some(), "{p} missing or out of order in:\n{text}");
            from += at.unwrap_or(0) + p.len();
        }
        assert!(text.starts_with("checking `python3 bot.py`\n"), "{text}");
        assert!(text.ends_with("\nall checks passed\n"), "{text}");
        let latency = report.latency.expect("no latency");
        assert!(latency.replies > 0 && latency.median_us <= latency.p99_us);
        let doc = report.to_json("python3 bot.py");
        assert_eq!(doc["passed"], true);
        assert_eq!(doc["checks"].as_array().map(Vec::len), Some(passes.len()));
    }

    #[tokio::test]
    async fn a_bot_replying_garbage_fails_with_the_detail() {
        let script = root().join("bots/broken/misbehave.py");
        let words = ["python3", script.to_str().unwrap(), "not_json"];
        let cmd = BotCommand::from_words(&words).unwrap();
        let (report, seen) = check(cmd, None, &one_game()).await;
        let text = report.text();
        assert!(!report.passed(), "{text}");
        assert_eq!(seen, report.lines);
        let fail = seen.iter().find_map(|l| match l {
            CheckLine::Outcome {
                pass: false,
                check,
                detail,
            } => Some((check.clone(), detail.clone())),
            _ => None,
        });
        let (check, detail) = fail.unwrap_or_else(|| panic!("no FAIL:\n{text}"));
        assert!(check.ends_with("2p seat 0"), "{text}");
        assert!(detail.starts_with("bad_json at ply"), "{text}");
        assert!(
            text.contains(&format!("FAIL  {check}: {detail}\n")),
            "{text}"
        );
        let summary = format!("{} check(s) failed", report.failed);
        assert!(text.ends_with(&format!("\n{summary}\n")), "{text}");
        assert_eq!(report.to_json("x")["failed"], report.failed);
    }

    /// A build that fails is the only check: the bot is not started.
    #[test]
    fn a_failed_build_stops_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let toml = "name = \"b\"\ncommand = [\"true\"]\nbuild = [\"sh\", \"-c\", \"exit 3\"]\n";
        std::fs::write(dir.path().join("bot.toml"), toml).unwrap();
        let m = Manifest::load(dir.path()).unwrap();
        let mut cmd = m.command();
        let mut seen = Vec::new();
        let mut on_line = |l: &CheckLine| seen.push(l.clone());
        let report = check_build(&mut cmd, Some(Box::new(m)), &one_game(), &mut on_line);
        assert_eq!(report.failed, 1);
        assert_eq!(seen, report.lines);
        let [CheckLine::Outcome {
            check,
            pass: false,
            detail,
        }] = &report.lines[..]
        else {
            panic!("{:?}", report.lines);
        };
        assert_eq!(check, "build");
        assert!(detail.starts_with("`sh -c exit 3`: "), "{detail}");
    }

    /// Replies slower than a league's default time for a decision, which
    /// check-bot's 5 s let pass, are warned of: how many, the slowest,
    /// and the league's default; none slower, no warning.
    #[test]
    fn replies_slower_than_a_leagues_default_are_warned_of() {
        let mut said = Vec::new();
        let mut on_line = |l: &CheckLine| said.push(l.to_string());
        let mut c = Checker::new(CheckReport::default(), &mut on_line);
        say_latency(&mut c, &mut [1_000, 2_500_000, 300, 2_000_000], 5000);
        say_latency(&mut c, &mut [1_000, 2_000_000], 5000);
        drop(c);
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(
            said[1].starts_with("warning: 1 of 4 replies took longer than 2000 ms (the slowest 2500.00 ms): leagues, matches and the ladder allow 2000 ms"),
            "{said:?}"
        );
        assert!(
            said[1].ends_with("check-bot allowed 5000 ms here (--timeout-ms)"),
            "{said:?}"
        );
    }

    /// The text and the JSON document of a report: a note goes under the
    /// check before it (into its notes), or among the info lines when no
    /// check came before it.
    #[test]
    fn text_and_json_of_a_report() {
        let report = CheckReport {
            lines: vec![
                CheckLine::Note("early".into()),
                CheckLine::Info("checking `b`".into()),
                CheckLine::Outcome {
                    check: "handshake".into(),
                    pass: false,
                    detail: "crash".into(),
                },
                CheckLine::Info("between".into()),
                CheckLine::Note("its stderr ends:\n  oops".into()),
            ],
            failed: 1,
            latency: Some(Latency {
                replies: 3,
                median_us: 1500,
                p99_us: 2250,
            }),
        };
        assert_eq!(
            report.text(),
            "      early\nchecking `b`\nFAIL  handshake: crash\nbetween\n      its stderr ends:\n        oops\n1 check(s) failed\n"
        );
        let expected = serde_json::json!({
            "command": "b",
            "passed": false,
            "failed": 1,
            "checks": [{
                "check": "handshake", "pass": false, "detail": "crash",
                "notes": ["its stderr ends:\n  oops"],
            }],
            "latency_ms": {"replies": 3, "median": 1.5, "p99": 2.25},
            "info": ["early", "checking `b`", "between"],
        });
        assert_eq!(report.to_json("b"), expected);
        let empty = CheckReport::default();
        assert_eq!(empty.text(), "all checks passed\n");
        assert_eq!(empty.to_json("b")["latency_ms"], serde_json::Value::Null);
    }

    /// The games of what a league may send copy a 2-player game that
    /// passed (an unknown field, message type, a clock), and Kisolo's
    /// columns follow a Kisolo game that passed; without one, what is
    /// not checked is said.
    #[test]
    fn probes_follow_a_passed_game_of_their_kind() {
        let mut said = Vec::new();
        let mut on_line = |l: &CheckLine| said.push(l.to_string());
        let mut c = Checker::new(CheckReport::default(), &mut on_line);
        let plain = |variant, n, seat| CheckGame {
            variant,
            n,
            seat,
            probe: Probe::Plain,
        };
        let tricala = [plain(Variant::Tricala, 3, 0)];
        assert_eq!(probes(&mut c, &tricala, &[Variant::Tricala]), []);
        let passed = [plain(Variant::Tricala, 3, 1), plain(Variant::Filo, 2, 1)];
        let got = probes(&mut c, &passed, &Variant::ALL);
        let probe = |probe| CheckGame {
            probe,
            ..plain(Variant::Filo, 2, 1)
        };
        assert_eq!(
            got[..3],
            [
                probe(Probe::Field),
                probe(Probe::MessageType),
                probe(Probe::Clock)
            ]
        );
        let on_6 = Game::new(Variant::Kisolo, &columns(2, 6)).is_ok();
        assert_eq!(got.len(), 3, "{got:?}");
        drop(c);
        let mut expected = vec![
            "unknown fields and message types and a game clock not checked: no 2-player game passed",
        ];
        if on_6 {
            expected
                .push("kisolo on 6 and 8 columns not checked: no kisolo game on 7 columns passed");
        }
        assert_eq!(said, expected);
        let mut on_line = |_: &CheckLine| {};
        let mut c = Checker::new(CheckReport::default(), &mut on_line);
        let got = probes(&mut c, &[plain(Variant::Kisolo, 2, 1)], &[Variant::Kisolo]);
        if on_6 {
            assert_eq!(got[3].probe, Probe::Columns(6));
            assert_eq!((got[3].seat, got[4].seat), (0, 1));
            assert_eq!(got[4].probe, Probe::Columns(8));
            assert_eq!(got[4].name(), "kisolo 2p seat 1, 8 columns");
        }
    }

    /// The service may spawn the check on a multi-thread runtime.
    #[test]
    fn the_check_is_a_send_future() {
        fn send<T: Send>(_: &T) {}
        let opts = CheckOptions::default();
        let mut on_line = |_: &CheckLine| {};
        let fut = check_bot(
            BotCommand::default(),
            LimitSettings::default(),
            None,
            &opts,
            &mut on_line,
        );
        send(&fut);
    }
}
