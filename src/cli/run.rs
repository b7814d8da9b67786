//! `arena run`: run or resume a league from a tournament file (the file's
//! settings with the flags laid over them), show it on the console, then
//! print the standings and write the rating tables.

use super::console::{Console, Show};
use super::report::{Every, Live};
use crate::bot::Sandbox;
use crate::league::config::{RunSettings, Tournament};
use crate::league::folder::Layout;
use crate::league::pairings::SprtStop;
use crate::league::runner::{self, Drain, Event, RunEnd, RunOptions};
use crate::league::schedule::Shard;
use crate::ratings::sprt::{self, SprtConfig, SprtTracker};
use anyhow::Context;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
// `--rounds -1` is a bad number, not a flag named -1.
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// The tournament file (TOML), e.g. tournaments/demo.toml.
    pub file: PathBuf,
    /// Run only the K-th of N disjoint slices of the schedule (e.g. 2/4).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Games at a time, 1 to 1024 (default: the file's, else the number
    /// of CPUs; at most 4 per CPU without --force-concurrency).
    // Read as any whole number: the tournament's check says the range,
    // once, for a flag as for the file (see `rounds`).
    #[arg(long, short = 'j')]
    pub concurrency: Option<i64>,
    /// Allow more than 4 games at a time per CPU.
    #[arg(long)]
    pub force_concurrency: bool,
    /// Seat-swap groups per pairing and variant, 1 to 1000000 (a Swiss:
    /// its rounds, 1 to 1000; a knockout: refused, its rounds follow
    /// from its bots).
    // Any whole number here: `-1` and `0` get the same message, the
    // tournament's range check, not clap's u32 bounds for one of them.
    #[arg(long)]
    pub rounds: Option<i64>,
    /// Games per pairing and variant, 2 to 2000000 (even; 2 x rounds; a
    /// Swiss or a knockout: each mini-match's games, 2 to 2000).
    #[arg(long)]
    pub games_per_pairing: Option<i64>,
    /// The schedule's seed.
    #[arg(long, value_parser = super::args::whole)]
    pub seed: Option<u64>,
    /// Ply cap, 1 to 10000000 (a game reaching it is a draw, reason
    /// max_plies).
    #[arg(long)]
    pub max_plies: Option<i64>,
    /// Random opening decisions per seat-swap group, 0 to 1000.
    #[arg(long)]
    pub openings: Option<i64>,
    /// An openings book: one opening a line, `VARIANT: MOVE MOVE ...`
    /// (docs/league.md); `--openings` random decisions follow each line.
    #[arg(long, value_name = "FILE")]
    pub openings_file: Option<PathBuf>,
    /// The order the book's lines go to the groups: `sequential` (the
    /// default) or `random` (shuffled by the seed).
    #[arg(long, value_name = "ORDER")]
    pub openings_order: Option<String>,
    /// Comma-separated variants (filo, tricala, tricala3, hackaback, kisolo, diffusion).
    #[arg(long, value_delimiter = ',')]
    pub variants: Option<Vec<String>>,
    /// Keep only these bots of the file (comma-separated names). They keep
    /// the file's order: the SPRT's A (--sprt) is the first of them in the
    /// file, whatever their order here.
    #[arg(long, value_delimiter = ',')]
    pub bots: Option<Vec<String>>,
    /// Play only the pairings that include this bot.
    #[arg(long)]
    pub gauntlet: Option<String>,
    /// Results folder (default: results/NAME).
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Time for one decision in ms (0: none).
    #[arg(long, value_parser = super::args::whole)]
    pub decision_ms: Option<u64>,
    /// Per-game clock base in ms (0: no clock).
    #[arg(long, value_parser = super::args::whole)]
    pub base_ms: Option<u64>,
    /// Clock increment per turn in ms.
    #[arg(long, value_parser = super::args::whole)]
    pub increment_ms: Option<u64>,
    /// Time a bot has to answer the hello, in ms.
    #[arg(long, value_parser = super::args::whole)]
    pub startup_ms: Option<u64>,
    /// Wall-clock limit on a whole game, in ms.
    #[arg(long, value_parser = super::args::whole)]
    pub watchdog_ms: Option<u64>,
    /// `on` (the default: every bot in its sandbox) or `off` (bots run with
    /// the referee's user, environment and network; a warning each run).
    #[arg(long, value_name = "on|off")]
    pub sandbox: Option<String>,
    #[command(flatten)]
    pub limits: super::args::LimitArgs,
    /// Skip the bots' build commands, and cargo's bringing the shipped
    /// Rust bots up to date with the source `arena` was built from.
    #[arg(long)]
    pub no_build: bool,
    /// Do not pin workers to CPUs.
    #[arg(long)]
    pub no_affinity: bool,
    /// Set rows of games.csv that do not match the schedule (unknown or
    /// duplicate game ids, wrong seats, missing or incomplete records)
    /// aside in rejected.csv and play their games again.
    #[arg(long)]
    pub repair: bool,
    /// No progress: neither the bar (on a terminal) nor the line per game
    /// and per forfeit (elsewhere); only what is wrong with the run.
    #[arg(long)]
    pub quiet: bool,
    /// Also write the league's own log to FILE (appended): starts,
    /// restarts, forfeits with their detail, resumes, warnings, the end;
    /// every game too with `ARENA_LOG=debug`.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Print the standings every N finished games.
    #[arg(long, value_name = "N", value_parser = super::args::whole_in::<u64>(1, u64::MAX))]
    pub rating_interval: Option<u64>,
    /// Stop the league when the SPRT of its two bots decides:
    /// `elo0=E0,elo1=E1[,alpha=A,beta=B,model=normalized|logistic]`
    /// (overrides the file's `[sprt]`). A, the bot under test, is the
    /// first of the two in the file's `bots`; the order of --bots does not
    /// change it.
    #[arg(long, value_name = "SPEC")]
    pub sprt: Option<String>,
    /// Refresh the HTML report (report/index.html in the results folder)
    /// every N finished games (default: about every 30 s).
    #[arg(long, value_name = "N", value_parser = super::args::whole_in::<u64>(1, u64::MAX))]
    pub report_interval: Option<u64>,
    /// Write no HTML report.
    #[arg(long, conflicts_with = "report_interval")]
    pub no_report: bool,
    /// Let the bots think while the others do (the file's `ponder`).
    #[arg(long)]
    pub ponder: bool,
    /// Write the 2-player games as PGN (for Ordo or BayesElo) to FILE as
    /// they finish, after those the results folder already holds.
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,
}

impl RunArgs {
    /// The flags as settings laid over the file's; the tournament checks
    /// both with the same bounds.
    pub fn settings(&self) -> RunSettings {
        RunSettings {
            concurrency: self.concurrency,
            rounds: self.rounds,
            games_per_pairing: self.games_per_pairing,
            seed: self.seed,
            max_plies: self.max_plies,
            openings: self.openings,
            openings_file: self.openings_file.clone(),
            openings_order: self.openings_order.clone(),
            variants: self.variants.clone(),
            bots: self.bots.clone(),
            gauntlet: self.gauntlet.clone(),
            output: self.output.clone(),
            startup_ms: self.startup_ms,
            decision_ms: self.decision_ms,
            base_ms: self.base_ms,
            increment_ms: self.increment_ms,
            watchdog_ms: self.watchdog_ms,
            sandbox: self.sandbox.clone(),
            memory_mb: self.limits.memory_mb.map(u64::cast_signed),
            processes: self.limits.processes.map(u64::cast_signed),
            cpus: self.limits.cpus.map(i64::from),
            file_size_mb: self.limits.file_size_mb.map(u64::cast_signed),
            sprt: self.sprt.clone(),
            ponder: self.ponder.then_some(true),
        }
    }

    /// How to run the league, beyond what it is.
    fn how(&self) -> How {
        How {
            shard: self.shard,
            no_build: self.no_build,
            no_affinity: self.no_affinity,
            repair: self.repair,
            quiet: self.quiet,
            rating_interval: self.rating_interval,
            force_concurrency: self.force_concurrency,
            report_interval: self.report_interval,
            no_report: self.no_report,
            resume: Some(self.started_with()),
            pgn: self.pgn.clone(),
            bots_flag: self.bots.clone(),
            programs: None,
        }
    }

    /// The command that runs this league again as it was started, and so
    /// resumes it from any folder (`arena status` shows it): the file and
    /// every path absolute, every flag given but `--shard` (a shard's is
    /// added where needed) and `--repair` (a one-off).
    fn started_with(&self) -> String {
        // Absolute, `..` resolved by its words (the output folder may not
        // exist yet).
        let abs = |p: &std::path::Path| {
            let full = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            let mut out = std::path::PathBuf::new();
            for c in full.components() {
                match c {
                    std::path::Component::ParentDir => {
                        out.pop();
                    }
                    std::path::Component::CurDir => {}
                    c => out.push(c),
                }
            }
            out.display().to_string()
        };
        let mut a: Vec<String> = vec!["arena".into(), "run".into(), abs(&self.file)];
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                a.push(name.to_string());
                a.push(v);
            }
        };
        let s = |v: Option<u64>| v.map(|v| v.to_string());
        let list = |v: &Option<Vec<String>>| v.as_ref().map(|v| v.join(","));
        flag("-j", self.concurrency.map(|c| c.to_string()));
        flag("--rounds", self.rounds.map(|r| r.to_string()));
        flag(
            "--games-per-pairing",
            self.games_per_pairing.map(|r| r.to_string()),
        );
        flag("--seed", s(self.seed));
        flag("--max-plies", self.max_plies.map(|r| r.to_string()));
        flag("--openings", self.openings.map(|r| r.to_string()));
        flag("--openings-file", self.openings_file.as_deref().map(abs));
        flag("--openings-order", self.openings_order.clone());
        flag("--variants", list(&self.variants));
        flag("--bots", list(&self.bots));
        flag("--gauntlet", self.gauntlet.clone());
        flag("-o", self.output.as_deref().map(abs));
        flag("--decision-ms", s(self.decision_ms));
        flag("--base-ms", s(self.base_ms));
        flag("--increment-ms", s(self.increment_ms));
        flag("--startup-ms", s(self.startup_ms));
        flag("--watchdog-ms", s(self.watchdog_ms));
        flag("--sandbox", self.sandbox.clone());
        flag("--memory-mb", s(self.limits.memory_mb));
        flag("--processes", s(self.limits.processes));
        flag("--cpus", self.limits.cpus.map(|c| c.to_string()));
        flag("--file-size-mb", s(self.limits.file_size_mb));
        flag("--log", self.log.as_deref().map(abs));
        flag("--rating-interval", s(self.rating_interval));
        flag("--sprt", self.sprt.clone());
        flag("--report-interval", s(self.report_interval));
        flag("--pgn", self.pgn.as_deref().map(abs));
        for (on, name) in [
            (self.force_concurrency, "--force-concurrency"),
            (self.no_build, "--no-build"),
            (self.no_affinity, "--no-affinity"),
            (self.quiet, "--quiet"),
            (self.no_report, "--no-report"),
            (self.ponder, "--ponder"),
        ] {
            if on {
                a.push(name.to_string());
            }
        }
        super::args::shell_line(&a)
    }
}

/// How a league is run (`arena run`'s and `arena match`'s flags beyond the
/// tournament).
#[derive(Clone, Debug, Default)]
pub(super) struct How {
    pub shard: Option<Shard>,
    pub no_build: bool,
    pub no_affinity: bool,
    pub repair: bool,
    pub quiet: bool,
    pub rating_interval: Option<u64>,
    pub force_concurrency: bool,
    /// The HTML report's refresh (default: about every 30 s), or none.
    pub report_interval: Option<u64>,
    pub no_report: bool,
    /// The command that resumes this league when it is not `arena run
    /// FILE` (a match's own command line).
    pub resume: Option<String>,
    /// `--pgn FILE`: the games as PGN, written as they finish.
    pub pgn: Option<PathBuf>,
    /// `--bots A,B`: the file's bots kept (`arena run`).
    pub bots_flag: Option<Vec<String>>,
    /// The programs of the bots without a build, hashed before the run
    /// (`arena match`: [`runner::RunOptions::programs`]).
    pub programs: Option<runner::Programs>,
}

/// Games at a time per CPU that `run` accepts without
/// `--force-concurrency`.
const MAX_GAMES_PER_CPU: usize = 4;

/// Refuses more than [`MAX_GAMES_PER_CPU`] games at a time per CPU unless
/// `force`d: `setting` names the number and gives it, `lower` says what
/// to lower (`arena run`'s concurrency, `arena serve`'s games in flight).
pub(super) fn check_games_per_cpu(
    (setting, games): (&str, usize),
    lower: &str,
    force: bool,
) -> anyhow::Result<()> {
    let cap = MAX_GAMES_PER_CPU * crate::league::config::default_concurrency();
    if games > cap && !force {
        anyhow::bail!(
            "{setting} {games}: more than {MAX_GAMES_PER_CPU} games at a time per CPU ({cap} on this machine); each game runs its bots at once, and they would time out for want of CPU, not of skill. Lower {lower}, or add --force-concurrency"
        );
    }
    Ok(())
}

/// Refuses `--log` or `--pgn` naming a file the league reads (the
/// tournament file, its openings book: `book`, once known) or the other's
/// file: they would be overwritten or appended to.
pub(super) fn outputs_are_not_inputs(args: &RunArgs, book: Option<&Path>) -> anyhow::Result<()> {
    let mut inputs = vec![("the tournament file", args.file.as_path())];
    if let Some(b) = args.openings_file.as_deref().or(book) {
        inputs.push(("the openings book", b));
    }
    let outputs = [
        ("--log", args.log.as_deref()),
        ("--pgn", args.pgn.as_deref()),
    ];
    for (flag, path) in outputs {
        if let Some(p) = path {
            super::args::not_an_input((flag, p), &inputs, &outputs)?;
        }
    }
    Ok(())
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let t = Tournament::load_with(&args.file, &args.settings())?;
    outputs_are_not_inputs(&args, t.book.as_ref().map(|b| b.path.as_path()))?;
    if t.ladder.is_some() {
        anyhow::bail!(
            "{}: a ladder file (it has a [ladder] table): serve it with `arena serve {}`",
            args.file.display(),
            crate::text::shell_path(&args.file)
        );
    }
    run_league(&t, &args.how())
}

/// Runs (or resumes) league `t` on the console, then prints the standings
/// and writes the rating tables; with an SPRT, stops when it decides.
pub(super) fn run_league(t: &Tournament, how: &How) -> anyhow::Result<ExitCode> {
    let mut clock = Clock::new();
    let sprt = before_run(t, how)?;
    let opts = RunOptions {
        shard: how.shard,
        no_build: how.no_build,
        no_affinity: how.no_affinity,
        repair: how.repair,
        drain: Drain::default(),
        sprt: sprt.as_ref().map(|s| s.stop.clone()),
        resume: how.resume.clone(),
        bots_flag: how.bots_flag.clone(),
        programs: how.programs.clone(),
    };
    // The head-to-head lines' pairs, with the standings and at the end.
    let show = Show {
        bar: std::io::stderr().is_terminal(),
        quiet: how.quiet,
        rating_interval: how.rating_interval,
        head_to_head: head_to_head_pairs(t),
    };
    let every = match (how.no_report, how.report_interval) {
        (true, _) => None,
        (false, Some(n)) => Some(Every::Games(n)),
        (false, None) => Some(Every::Time(std::time::Duration::from_secs(30))),
    };
    let mut live = Live::new(every, &t.name);
    let summary = match sprt.as_ref().and_then(|s| s.stop.decided()) {
        // Decided in an earlier run: nothing more to play.
        Some(d) => {
            errln!(
                "league {}: the SPRT decided in an earlier run ({} after {} games); no game to play",
                t.name,
                d.decision,
                d.games
            );
            None
        }
        None => Some(play_on_console(t, &opts, how, show, &mut clock, &mut live)?),
    };
    let dir = runner::output_dir(t, how.shard);
    // A Ctrl-C stops at once: the report of a large league takes a while
    // to write (every new game's record is replayed), so it is left to
    // `arena report` (its page no longer says "running"), and a refresh
    // under way is abandoned. A Swiss's standings or a knockout's bracket
    // are quick to write: they are brought up to date.
    let interrupted = summary
        .as_ref()
        .is_some_and(|s| matches!(s.end, RunEnd::Interrupted));
    // A Swiss's standings or a knockout's bracket first: the report shows
    // it. Interrupted, a league stops whatever it could not write.
    let format = match format_text(t, &dir) {
        Err(e) if interrupted => {
            errln!("warning: {}", super::output::error_message(&e));
            None
        }
        f => f?,
    };
    let report = match interrupted {
        true => {
            live.interrupted(&dir);
            None
        }
        false => live.finish(&dir),
    };
    if let Some(code) = summary.as_ref().and_then(|s| stopped_early(s, how, &dir)) {
        return Ok(code);
    }
    let played = summary.as_ref().map_or(0, |s| s.played);
    let ends = Ends { report, format };
    closing_lines(t, how, &dir, &clock, played, ends, sprt.as_ref())?;
    Ok(ExitCode::SUCCESS)
}

/// What is checked before a league runs: a warning for `sandbox = "off"`,
/// the games at a time a machine can hold, and the SPRT (none with
/// `--shard`), made ready.
fn before_run(t: &Tournament, how: &How) -> anyhow::Result<Option<SprtRun>> {
    if let Some(p) = &how.pgn {
        super::args::not_a_results_file("--pgn", p)?;
    }
    if t.sandbox == Sandbox::Off {
        errln!(
            "warning: sandbox = \"off\": the bots run with this user's rights, environment and network, and can reach each other and the results; {} (docs/security.md)",
            crate::bot::UNSANDBOXED_LIMITS
        );
    }
    for w in short_times(&t.time) {
        errln!("warning: {w}");
    }
    // A league takes a bot.toml's limits as asked (a ladder caps them):
    // said, so that a stranger's bot.toml does not lift them unseen.
    for b in &t.bots {
        let raised = b.limits.raised_over_defaults(&t.limits);
        if !raised.is_empty() {
            errln!(
                "warning: bot {} asks in its bot.toml for more than the defaults: {}; granted (set them in the league file's [limits], or --memory-mb and the like, to cap them)",
                b.name,
                raised.join(", ")
            );
        }
    }
    // The file's value is named where it is, as its other errors are.
    let setting = match &t.concurrency_at {
        Some(at) => format!("{at}: `concurrency`"),
        None => "concurrency".to_string(),
    };
    check_games_per_cpu(
        (&setting, t.concurrency),
        "-j (or the file's `concurrency`)",
        how.force_concurrency,
    )?;
    // A resume under another SPRT (or none, or one added) is refused
    // before the earlier games are counted under it.
    let sprt = t.sprt.and_then(|c| serde_json::to_value(c).ok());
    crate::league::folder::LeagueMeta::check_sprt_of(
        &runner::output_dir(t, how.shard),
        &t.name,
        sprt.as_ref(),
    )?;
    Ok(match (&t.sprt, how.shard) {
        (Some(_), Some(_)) => anyhow::bail!(
            "an SPRT decides on all of a league's games as they finish: run it without --shard"
        ),
        (Some(c), None) => Some(SprtRun::new(t, *c)?),
        (None, _) => None,
    })
}

/// Times too short for any bot to keep (milliseconds taken for seconds?):
/// allowed, since a league of instant bots may want them, but said, since
/// every game may otherwise end in a forfeit without a word before.
fn short_times(time: &crate::league::config::TimeSettings) -> Vec<String> {
    let mut said = Vec::new();
    if time.startup_ms < 100 {
        said.push(format!(
            "startup_ms {} (--startup-ms): a bot has {} ms to start and answer its hello; a compiled one in the sandbox takes about 10 ms, an interpreted one 100 ms or more (300 ms on a loaded machine), so its games may all be forfeits",
            time.startup_ms, time.startup_ms
        ));
    }
    if time.base_ms == 0 && (1..10).contains(&time.decision_ms) {
        said.push(format!(
            "decision_ms {} (--decision-ms): {} ms a decision is about what a reply's round trip through the pipes takes on a loaded machine, so even an instant bot may time out",
            time.decision_ms, time.decision_ms
        ));
    }
    if time.watchdog_ms < 1_000 {
        said.push(format!(
            "watchdog_ms {} (--watchdog-ms): a whole game has {} ms, start-up included, so games may end as stalls",
            time.watchdog_ms, time.watchdog_ms
        ));
    }
    said
}

/// Bots that cannot start (an interpreter not installed, as `node` for the
/// demo's JavaScript bot), with how to play the league without them when
/// two bots or more are left: `--bots` naming the others.
fn leave_out_hint(e: runner::LeagueError, t: &Tournament) -> anyhow::Error {
    let runner::LeagueError::Start(failed) = &e else {
        return e.into();
    };
    let others: Vec<&str> = t
        .bots
        .iter()
        .map(|b| b.name.as_str())
        .filter(|n| !failed.iter().any(|f| f.bot == *n))
        .collect();
    // A league under way keeps its bots (`--bots` is refused on a
    // resume), and a machine's fault is no bot's to leave out.
    let under_way = runner::output_dir(t, None)
        .join("games.csv")
        .metadata()
        .is_ok_and(|m| m.len() > 0);
    if others.len() < 2 || under_way || failed.iter().all(|f| f.machine) {
        return e.into();
    }
    anyhow::anyhow!(
        "{e}\nto play the league without {}: add `--bots {}` to the command",
        match failed.as_slice() {
            [one] => format!("`{}`", one.bot),
            _ => "them".to_string(),
        },
        super::args::shell_word(&others.join(","))
    )
}

/// Plays the league's games with the console's progress, the live report
/// and the PGN file (`--pgn`) following them.
fn play_on_console(
    t: &Tournament,
    opts: &RunOptions,
    how: &How,
    show: Show,
    clock: &mut Clock,
    live: &mut Live,
) -> anyhow::Result<runner::Summary> {
    let mut console = Console::new(&t.name, t.concurrency, show);
    let mut pgn = match &how.pgn {
        Some(p) => Some(super::pgn::PgnLive::create(p, &t.name)?),
        None => None,
    };
    let summary = runner::run(t, opts, &mut |e| {
        clock.on_event(e);
        console.on_event(e);
        live.on_event(e);
        if let Some(p) = pgn.as_mut() {
            p.on_event(e);
        }
    })
    .map_err(|e| leave_out_hint(e, t))?;
    console.finish();
    if let Some(line) = pgn.and_then(super::pgn::PgnLive::finish) {
        errln!("{line}");
    }
    Ok(summary)
}

/// The lines after a league's games: where its files are, its report,
/// the head-to-head lines and the SPRT's verdict, counted from the rows
/// (this run's and earlier ones').
/// What a league's end wrote besides its tables: its report, and the
/// Swiss's or knockout's text with its path.
struct Ends {
    report: Option<PathBuf>,
    format: Option<(String, PathBuf)>,
}

fn closing_lines(
    t: &Tournament,
    how: &How,
    dir: &Path,
    clock: &Clock,
    played: usize,
    ends: Ends,
    sprt: Option<&SprtRun>,
) -> anyhow::Result<()> {
    let pairs = head_to_head_pairs(t);
    let games_csv = Layout::new(dir).games_csv();
    let games = rate_folder(dir, &games_csv)?;
    let total = runner::total_games(t, how.shard);
    let (elapsed, builds) = clock.words();
    // A shard's rows alone are refused by `arena rate` (a shard of a
    // league is named missing): the league's folder merges its shards.
    let rate_what = match (how.shard, dir.parent()) {
        (Some(_), Some(league)) => format!(
            "arena rate {} once every shard is done, or with --partial",
            crate::text::shell_path(league)
        ),
        _ => format!("arena rate {}", crate::text::shell_path(&games_csv)),
    };
    outln!(
        "{} of {total} games ({played} played now, in {elapsed:.1} s{builds}) in {}: games.csv, games/records-*.jsonl.zst, logs/, ratings.csv (per-variant tables: {rate_what}), pairs.csv, variants.csv, crosstable.csv",
        games,
        dir.display(),
    );
    if let Some(p) = ends.report {
        outln!("report: {}", p.display());
    }
    if let Some((text, path)) = ends.format {
        let file = path.file_name().unwrap_or_default().to_string_lossy();
        outln!("{text}{file}: {}", path.display());
    }
    if sprt.is_some() || !pairs.is_empty() {
        let rows = crate::results::csvio::read_rows(&games_csv)
            .with_context(|| format!("reading back {}", games_csv.display()))?;
        for line in super::console::head_to_head_lines(&rows, &pairs) {
            outln!("{line}");
        }
        if let Some(s) = sprt {
            outln!("{}", s.verdict(&rows)?);
        }
    }
    Ok(())
}

/// A Swiss's standings and rounds (or a knockout's bracket), from its
/// rows: written to swiss.txt (knockout.txt) in its folder, for the
/// report and the closing lines. None for a round-robin.
fn format_text(t: &Tournament, dir: &Path) -> anyhow::Result<Option<(String, PathBuf)>> {
    use crate::league::swiss_games::{report, SwissPlan, SwissState};
    let Some(plan) = SwissPlan::of(t) else {
        return Ok(None);
    };
    let games_csv = Layout::new(dir).games_csv();
    let rows = crate::results::csvio::read_rows(&games_csv)
        .with_context(|| format!("reading back {}", games_csv.display()))?;
    let text = report(&plan, &SwissState::replay(&plan, &rows));
    let path = dir.join(plan.report_file());
    crate::files::write_file(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(Some((text, path)))
}

/// When a run's games started, apart from the bots' builds before them (a
/// minute of cargo on a fresh machine is not the games' time).
struct Clock {
    started: std::time::Instant,
    games_from: Option<std::time::Instant>,
    built: bool,
}

impl Clock {
    fn new() -> Clock {
        Clock {
            started: std::time::Instant::now(),
            games_from: None,
            built: false,
        }
    }

    fn on_event(&mut self, e: &Event) {
        match e {
            Event::Building { .. } => self.built = true,
            Event::Started { .. } => self.games_from = Some(std::time::Instant::now()),
            _ => {}
        }
    }

    /// The games' seconds so far, and words on the bots' build before
    /// them (none for a build that found them up to date).
    fn words(&self) -> (f64, String) {
        let from = self.games_from.unwrap_or(self.started);
        let building = from.duration_since(self.started).as_secs_f64();
        let builds = match self.built && building >= 1.0 {
            true => format!(", after {building:.1} s building the bots"),
            false => String::new(),
        };
        (from.elapsed().as_secs_f64(), builds)
    }
}

/// The pairs a league's head-to-head lines are about: the two bots of a
/// two-bot league (a match), or a gauntlet's bot against each opponent.
fn head_to_head_pairs(t: &Tournament) -> Vec<(String, String)> {
    match (&t.gauntlet, t.bots.as_slice()) {
        (Some(g), bots) => bots
            .iter()
            .filter(|b| &b.name != g)
            .map(|b| (g.clone(), b.name.clone()))
            .collect(),
        (None, [a, b]) => vec![(a.name.clone(), b.name.clone())],
        (None, _) => Vec::new(),
    }
}

/// The SPRT of a league with `[sprt]` or `--sprt`: the first bot (A)
/// against the second, counted as the games finish (by the league's
/// pairings, which end when it decides), from the games an earlier run
/// recorded on.
struct SprtRun {
    config: SprtConfig,
    a: String,
    b: String,
    stop: SprtStop,
}

impl SprtRun {
    fn new(t: &Tournament, config: SprtConfig) -> anyhow::Result<SprtRun> {
        let (a, b) = match t.bots.as_slice() {
            [a, b] => (a.name.clone(), b.name.clone()),
            _ => anyhow::bail!("an SPRT needs a league of two bots"),
        };
        let mut tracker = SprtTracker::new(config, &a, &b);
        // A resume goes on from the games recorded, in the order they were.
        let csv = Layout::new(runner::output_dir(t, None)).games_csv();
        if csv.is_file() {
            let rows = crate::results::csvio::read_rows(&csv)
                .with_context(|| format!("reading {} to resume the SPRT", csv.display()))?;
            for r in &rows {
                tracker.add(r);
            }
        }
        Ok(SprtRun {
            config,
            a,
            b,
            stop: SprtStop::new(tracker),
        })
    }

    /// The SPRT over every recorded game, and when it decided.
    fn verdict(&self, rows: &[crate::results::GameRow]) -> anyhow::Result<String> {
        let report = sprt::evaluate(rows, &self.a, &self.b, &self.config)?;
        let decided = self.stop.decided();
        let mut text = crate::report::sprt::sprt_text(&report, decided.as_ref());
        if decided.is_none() {
            // A schedule does not grow in place: a resume with more rounds
            // is another schedule, refused (docs/ratings.md).
            text.push_str("the schedule ended before the SPRT decided: to test further, run it with more rounds (or --games) into another results folder (-o DIR), where it starts afresh; this folder's results stay as they are");
        }
        Ok(text.trim_end().to_string())
    }
}

/// Rates the league in `dir` from its games.csv (read back one row at a
/// time into counts: the memory of the tables does not grow with the
/// games, docs/ratings.md), writes the rating tables and prints the
/// standings. Returns the games read.
fn rate_folder(dir: &std::path::Path, games_csv: &std::path::Path) -> anyhow::Result<usize> {
    let opts = Default::default();
    let mut tally = crate::ratings::Tally::new(&opts);
    let mut rows = crate::results::csvio::RowReader::open(games_csv)
        .with_context(|| format!("reading back {}", games_csv.display()))?;
    let mut games = 0usize;
    while let Some((_, row)) = rows
        .next_row()
        .with_context(|| format!("reading back {}", games_csv.display()))?
    {
        tally.add(row);
        games += 1;
    }
    let rated = tally
        .report()
        .with_context(|| format!("rating {}", games_csv.display()))?;
    let tables = crate::report::tables::write_files(crate::report::tables::tables_of(rated), dir)
        .with_context(|| format!("writing rating tables in {}", dir.display()))?;
    outln!("{}", crate::report::tables::league_summary(&tables.report));
    Ok(games)
}

/// What to say when the league ended before its last game (interrupted or
/// stopped), and the exit code; `None` when it is complete or drained.
fn stopped_early(summary: &runner::Summary, how: &How, dir: &std::path::Path) -> Option<ExitCode> {
    let resume = || {
        errln!(
            "stopped after {} new games ({} of {} done). Run the same command again to resume.",
            summary.played,
            summary.played + summary.skipped,
            summary.total
        )
    };
    match &summary.end {
        RunEnd::Complete | RunEnd::Drained => None,
        RunEnd::Interrupted => {
            resume();
            if !how.no_report {
                errln!(
                    "the HTML report was not brought up to date (interrupted): arena report {} writes it",
                    crate::text::shell_path(dir)
                );
            }
            Some(ExitCode::from(crate::host::stopped_exit_code()))
        }
        RunEnd::Stopped(why) => {
            errln!("error: the league stopped: {why}");
            resume();
            Some(ExitCode::FAILURE)
        }
    }
}
