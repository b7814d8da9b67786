//! `arena check-bot [--game GAME]... -- BOT_COMMAND...`: the conformance
//! check a bot author runs before entering a league.
//!
//! Owns the list of checks and their report. Checks, each printed as PASS or
//! FAIL with the exact message: the handshake; one game per seat of every
//! game (3-player Tricala included) against the built-in random player; the
//! quit message (the bot must exit with status 0). Then the reply latency
//! (median, p99). Exit status 1 on any failure.

use super::play::{interrupted, resolve_bot, runtime, settings, BotArg};
use crate::engine::{Variant, DEFAULT_MAX_PLIES};
use crate::referee::Timing;
use crate::referee::{self, BotPlayer, GameSpec, Player, RandomPlayer, TimeControl};
use anyhow::bail;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
// `--rounds -1` is a bad number, not a flag named -1.
#[command(allow_negative_numbers = true)]
pub struct CheckBotArgs {
    /// Check only this game (repeatable; default: every game).
    #[arg(long)]
    game: Vec<String>,
    /// Time for one decision, in milliseconds (0: no limit per decision,
    /// only the game's watchdog).
    #[arg(long, alias = "decision-ms", default_value_t = 5000)]
    timeout_ms: u64,
    /// Time to answer the hello, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    startup_ms: u64,
    /// Ply cap of the test games.
    #[arg(long, default_value_t = DEFAULT_MAX_PLIES)]
    max_plies: u32,
    /// Append the bot's stderr to this file (default: discarded).
    #[arg(long, alias = "logs")]
    log: Option<PathBuf>,
    /// `off`: the bot without its sandbox (where Linux user namespaces are
    /// not available; docs/security.md).
    #[arg(long, value_enum, default_value_t)]
    sandbox: super::SandboxArg,
    #[command(flatten)]
    limits: super::LimitArgs,
    /// Seed of the test games: each sends the bot a seed derived from it
    /// and the game's id in `game_start`.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// One JSON document on stdout instead of the lines (for CI): the
    /// command, every check with its outcome, detail and notes, latency.
    #[arg(long)]
    json: bool,
    /// The bot: a folder under bots/ (or with a bot.toml), or its command
    /// line as separate words (`-- python3 my_bot.py`).
    #[arg(last = true, required = true, value_name = "BOT_COMMAND")]
    bot: Vec<String>,
}

/// The checks' outcomes: printed as they come, or kept for one JSON
/// document at the end (`--json`).
struct Checks {
    failed: usize,
    json: bool,
    checks: Vec<serde_json::Value>,
    info: Vec<String>,
    latency: Option<serde_json::Value>,
}

impl Checks {
    fn new(json: bool) -> Checks {
        Checks {
            failed: 0,
            json,
            checks: Vec::new(),
            info: Vec::new(),
            latency: None,
        }
    }
    fn outcome(&mut self, what: &str, pass: bool, msg: &str) {
        if self.json {
            self.checks.push(serde_json::json!({
                "check": what, "pass": pass, "detail": msg, "notes": []
            }));
        } else {
            outln!("{}  {what}: {msg}", if pass { "PASS" } else { "FAIL" });
        }
    }
    fn pass(&mut self, what: &str, msg: &str) {
        self.outcome(what, true, msg);
    }
    fn fail(&mut self, what: &str, msg: &str) {
        self.failed += 1;
        self.outcome(what, false, msg);
    }
    /// A note on the check just made (indented under it).
    fn note(&mut self, msg: &str) {
        match self.checks.last_mut() {
            Some(last) if self.json => {
                if let Some(notes) = last["notes"].as_array_mut() {
                    notes.push(msg.into());
                }
            }
            _ if self.json => self.info.push(msg.to_string()),
            _ => outln!("      {}", msg.replace('\n', "\n      ")),
        }
    }
    /// A line about the run as a whole.
    fn info(&mut self, msg: &str) {
        match self.json {
            true => self.info.push(msg.to_string()),
            false => outln!("{msg}"),
        }
    }
    /// The end: the summary line, or the JSON document.
    fn finish(&self, command: &str) -> ExitCode {
        if self.json {
            let doc = serde_json::json!({
                "command": command,
                "passed": self.failed == 0,
                "failed": self.failed,
                "checks": self.checks,
                "latency_ms": self.latency,
                "info": self.info,
            });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        } else if self.failed == 0 {
            outln!("all checks passed");
        } else {
            outln!("{} check(s) failed", self.failed);
        }
        match self.failed {
            0 => ExitCode::SUCCESS,
            _ => ExitCode::from(1),
        }
    }
}

/// `arena check-bot`: builds, starts and checks a bot game by game.
pub fn run(args: CheckBotArgs) -> anyhow::Result<ExitCode> {
    let (mut cmd, asks, folder) = bot_of(&args)?;
    let mut c = Checks::new(args.json);
    // A bot folder is built first, as a league builds it.
    if !build_folder(&mut c, folder, &args, &mut cmd) {
        return Ok(c.finish(&cmd.display()));
    }
    let variants: Vec<Variant> = if args.game.is_empty() {
        Variant::ALL.to_vec()
    } else {
        args.game
            .iter()
            .map(|g| g.parse())
            .collect::<Result<_, _>>()?
    };
    let timing = Timing {
        startup: Duration::from_millis(args.startup_ms),
        ..Timing::default()
    };
    // Without --log, stderr still goes to a file of our own, so that a bot
    // that fails is shown with the end of what it said.
    let own_log = args
        .log
        .is_none()
        .then(|| std::env::temp_dir().join(format!("arena-check-bot-{}.log", std::process::id())));
    let room = crate::league::launch::Room {
        sandbox: args.sandbox.sandbox(),
        limits: args.limits.settings(),
        hide: None,
        ..Default::default()
    };
    let launch = room.launch(
        cmd.clone(),
        asks,
        args.log.clone().or_else(|| own_log.clone()),
    );
    c.info(&format!("checking `{}`", cmd.display()));
    say_sandbox(&mut c, &launch);
    let rt = runtime()?;
    let subject = Subject {
        launch: &launch,
        timing: &timing,
        since: 0,
    };
    let checks = check_games(c, &args, subject, variants);
    let failed = rt.block_on(async {
        tokio::select! {
            failed = checks => Ok(failed),
            // Dropping the checks drops the bot: its process group dies.
            code = interrupted() => Err(code),
        }
    });
    if let Some(log) = own_log {
        let _ = std::fs::remove_file(log);
    }
    match failed {
        Ok(c) => Ok(c.finish(&cmd.display())),
        Err(code) => {
            outln!("interrupted");
            Ok(code)
        }
    }
}

/// The bot under check: how it starts, and where its current process's
/// stderr begins in its log (shared by every restart).
struct Subject<'a> {
    launch: &'a crate::bot::Launch,
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
        crate::bot::log_tail(log, 20, self.since)
            .await
            .map(|t| format!("its stderr ends:\n  {}", t.replace('\n', "\n  ")))
    }

    /// Starts a bot process and checks its handshake; when it fails, notes
    /// the end of its stderr.
    async fn start(&mut self, c: &mut Checks) -> Option<BotPlayer> {
        self.since = self.log_len();
        let t0 = std::time::Instant::now();
        let b = BotPlayer::start(self.launch, self.timing).await;
        let bot = handshake(c, b, t0.elapsed());
        if bot.is_none() {
            if let Some(t) = self.tail().await {
                c.note(&t);
            }
        }
        bot
    }
}

/// The checks after the build: the handshake, one game per seat of each of
/// `variants` (the bot restarted after a fault or an exit), the quit and
/// the latency.
async fn check_games(
    mut c: Checks,
    args: &CheckBotArgs,
    mut subject: Subject<'_>,
    variants: Vec<Variant>,
) -> Checks {
    let Some(mut bot) = subject.start(&mut c).await else {
        return c;
    };
    let mut latencies: Vec<u64> = Vec::new();
    let mut game_no = 0;
    for variant in variants {
        for &n in variant.player_counts() {
            for seat in 0..n {
                game_no += 1;
                let what = format!("{variant} {n}p seat {seat}");
                let spec = match check_spec(args, variant, n, game_no) {
                    Ok(spec) => spec,
                    Err(e) => {
                        c.fail(&what, &e.to_string());
                        continue;
                    }
                };
                let report = against_randoms(&spec, &mut bot, n, seat, game_no).await;
                let faulted = matches!(&report, Ok(r) if r.offender == Some(seat));
                if judge(&mut c, &what, report, seat, &mut latencies) {
                    if let Some(t) = subject.tail().await {
                        c.note(&t);
                    }
                }
                if bot.needs_restart() {
                    bot.kill();
                    if faulted {
                        c.note("restarting the bot (after a fault, a fresh process plays the next game)");
                    } else {
                        c.note("the bot exited after its game: the referee reuses one process for many games, so exit only on `quit` (protocol.md); a league restarts it without charge if it sees the exit in time, else the next game is a `crash`. Restarting it");
                    }
                    match subject.start(&mut c).await {
                        Some(b) => bot = b,
                        None => return c,
                    }
                }
            }
        }
    }
    let grace = subject.timing.shutdown_grace;
    quit_and_latency(&mut c, &mut bot, &mut latencies, grace).await;
    c
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
/// last request; then the latency of its replies (microseconds).
async fn quit_and_latency(
    c: &mut Checks,
    bot: &mut BotPlayer,
    latencies: &mut [u64],
    grace: Duration,
) {
    let left = bot.quit_report().await;
    if let Some(bytes) = &left.stray {
        c.fail(
            "stray output",
            &format!(
                "after its last request the bot wrote, unasked: {}",
                crate::protocol::truncate(bytes, 200)
            ),
        );
    }
    if left.clean {
        c.pass("quit", "exited with status 0");
    } else {
        c.fail(
            "quit",
            &format!("did not exit with status 0 within {:?} of quit", grace),
        );
    }
    if !latencies.is_empty() {
        latencies.sort_unstable();
        let median = latencies[latencies.len() / 2];
        let p99 = latencies[(latencies.len() * 99 / 100).min(latencies.len() - 1)];
        c.latency = Some(serde_json::json!({
            "replies": latencies.len(),
            "median": median as f64 / 1000.0,
            "p99": p99 as f64 / 1000.0,
        }));
        c.info(&format!(
            "latency over {} replies: median {:.2} ms, p99 {:.2} ms",
            latencies.len(),
            median as f64 / 1000.0,
            p99 as f64 / 1000.0
        ));
    }
}

/// Game `game_no` of the check: `variant` with `n` players, under the
/// flags' time per decision and ply cap.
fn check_spec(
    args: &CheckBotArgs,
    variant: Variant,
    n: usize,
    game_no: u64,
) -> anyhow::Result<GameSpec> {
    let mut spec = GameSpec::new(
        format!("check-{game_no}"),
        variant,
        settings(n, args.max_plies, &[])?,
    );
    spec.time = TimeControl {
        // 0: no limit but the watchdog, as everywhere.
        per_decision: match args.timeout_ms {
            0 => spec.watchdog,
            ms => Duration::from_millis(ms),
        },
        clock: None,
    };
    spec.seed = crate::league::schedule::bot_seed(args.seed, &spec.game_id);
    Ok(spec)
}

/// Records the result of one check game for the bot in `seat`: passed
/// (its decisions' times join `latencies`) or failed, and why. True when
/// the bot crashed: the end of its stderr is then worth showing.
fn judge(
    c: &mut Checks,
    what: &str,
    report: Result<referee::GameReport, referee::SpecError>,
    seat: usize,
    latencies: &mut Vec<u64>,
) -> bool {
    match report {
        Err(e) => c.fail(what, &format!("cannot play: {e}")),
        Ok(r) if r.offender == Some(seat) => {
            c.fail(
                what,
                &format!(
                    "{} at ply {}: {}",
                    r.reason,
                    r.plies,
                    r.detail.as_deref().unwrap_or("")
                ),
            );
            if r.reason == crate::referee::EndReason::Forfeit(crate::referee::ForfeitKind::Crash) {
                if r.detail.as_deref().is_some_and(|d| d.contains("status 0")) {
                    c.note("it exited by itself (status 0): the referee reuses one process for many games, so exit only on `quit` (protocol.md)");
                }
                return true;
            }
        }
        Ok(r) => {
            latencies.extend(
                r.decisions
                    .iter()
                    .filter(|d| d.seat == seat && !d.forced && !d.opening)
                    .map(|d| d.elapsed_us),
            );
            c.pass(
                what,
                &format!("{} plies, {} (score {})", r.plies, r.reason, r.scores[seat]),
            );
        }
    }
    false
}

/// The bot to check: a BOT argument (`resolve_bot`) or a command line of
/// several words; what its bot.toml asks for; its folder's manifest.
fn bot_of(
    args: &CheckBotArgs,
) -> anyhow::Result<(
    crate::bot::BotCommand,
    crate::bot::LimitSettings,
    Option<Box<crate::bot::manifest::Manifest>>,
)> {
    Ok(if args.bot.len() == 1 {
        match resolve_bot(&args.bot[0])? {
            BotArg::Command(c, asks, folder) => (c, asks, folder),
            BotArg::Random => bail!("`random` is the built-in player; give a bot to check"),
        }
    } else {
        let c = crate::bot::BotCommand::from_words(&args.bot)
            .ok_or_else(|| anyhow::anyhow!("empty bot command"))?;
        (c, Default::default(), None)
    })
}

/// Runs the build command of the bot's folder, if it has one, as a league
/// would (in the sandbox, in a copy of the folder), and points `cmd` at
/// the built copy; false when it fails.
fn build_folder(
    c: &mut Checks,
    folder: Option<Box<crate::bot::manifest::Manifest>>,
    args: &CheckBotArgs,
    cmd: &mut crate::bot::BotCommand,
) -> bool {
    if let Some(m) = folder.filter(|m| m.build.is_some()) {
        let spec = crate::league::config::BotSpec::from_manifest(*m);
        let words = crate::bot::manifest::expand(spec.build.as_deref().unwrap_or_default());
        let what = format!("`{}`", words.join(" "));
        let room = crate::league::launch::Room {
            sandbox: args.sandbox.sandbox(),
            limits: args.limits.settings(),
            ..Default::default()
        };
        let bots = std::slice::from_ref(&spec);
        match crate::league::build::build_bots(bots, &room, &mut |_| {}) {
            Ok(()) => {
                cmd.cwd = crate::league::launch::run_folder(&spec);
                let dir = cmd.cwd.as_deref().unwrap_or(std::path::Path::new("."));
                c.pass(
                    "build",
                    &format!(
                        "{what}, in the sandbox; the bot runs from {}",
                        dir.display()
                    ),
                );
            }
            Err(e) => {
                c.fail("build", &format!("{what}: {e}"));
                return false;
            }
        }
    }
    true
}

/// What the bot is given in its sandbox, when it has one.
fn say_sandbox(c: &mut Checks, launch: &crate::bot::Launch) {
    if launch.sandbox == crate::bot::Sandbox::On {
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
    c: &mut Checks,
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
                    "{} {} {} ({cost})",
                    i.name,
                    i.version,
                    match i.author.trim() {
                        "" => "(no author in its hello)".to_string(),
                        a => format!("by {a}"),
                    }
                ),
            );
            Some(b)
        }
        Err(e) => {
            c.fail("handshake", &e.fault().to_string());
            None
        }
    }
}
