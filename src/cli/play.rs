//! `arena play --game GAME [--players N] BOT...`: one game live in the
//! terminal (the board after each turn, who decided what, timings), and its
//! record as JSON lines.
//!
//! Owns the command line of `play` and how a BOT argument is understood
//! (shared with `check-bot`); the game itself is the referee's.

use crate::bot::manifest::{Manifest, MANIFEST};
use crate::bot::BotCommand;
use crate::engine::Settings;
use crate::referee::{
    self, record, BotPlayer, Clock, Event, GameSpec, Player, RandomPlayer, TimeControl, Timing,
};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
// `--rounds -1` is a bad number, not a flag named -1.
#[command(allow_negative_numbers = true)]
pub struct PlayArgs {
    /// The game: filo, tricala, hackaback, kisolo, diffusion.
    #[arg(long)]
    game: String,
    /// Number of players (default: the number of BOTs given).
    #[arg(long)]
    players: Option<usize>,
    /// A game option KEY=VALUE (repeatable), e.g. `columns=6` for Kisolo.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Ply cap (reaching it is a draw, `max_plies`), 1 to 10000000 as in
    /// a league.
    #[arg(long, default_value_t = crate::engine::DEFAULT_MAX_PLIES, value_parser = super::args::whole_in::<u32>(1, crate::league::config::MAX_MAX_PLIES.unsigned_abs()))]
    max_plies: u32,
    /// Decisions applied before the bots take over, space-separated as in
    /// games.csv and `state --moves` ("D K"; commas are accepted too).
    #[arg(long)]
    opening: Option<String>,
    /// Time for one decision, in milliseconds (0: no limit per decision,
    /// only the game's watchdog).
    #[arg(long, alias = "decision-ms", default_value_t = 5000)]
    timeout_ms: u64,
    /// Per-game clock: base time in milliseconds (default, or 0: no clock,
    /// as in a league).
    #[arg(long)]
    base_ms: Option<u64>,
    /// Per-game clock: increment per decision in milliseconds.
    #[arg(long, default_value_t = 0)]
    increment_ms: u64,
    /// Wall-clock limit for the whole game, in seconds.
    #[arg(long, default_value_t = 600, value_parser = super::args::whole_in::<u64>(1, u64::MAX))]
    watchdog_s: u64,
    /// Where to write the game record: a file, or a folder to write
    /// GAME_ID.jsonl into (default: the system's temporary folder, under
    /// arena-UID/play/, UID your user id; the path is printed).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Folder for the bots' stderr logs (default: a file of the system's
    /// temporary folder, removed after the game; a bot that cannot start,
    /// or that forfeits, is shown with its last lines either way).
    #[arg(long, alias = "log")]
    logs: Option<PathBuf>,
    /// The game's seed: sent to the bots in `game_start` (a bot that draws
    /// its randomness from it plays the same game again), and the seed of
    /// the built-in random players: the same seed, the same game, so give
    /// another for another game.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Do not print the board.
    #[arg(long)]
    quiet: bool,
    /// `off`: bots without their sandbox (where Linux user namespaces are
    /// not available; docs/security.md).
    #[arg(long, value_enum, default_value_t)]
    sandbox: super::args::SandboxArg,
    #[command(flatten)]
    limits: super::args::LimitArgs,
    /// The players, by seat: `random` (built in), a folder under bots/ (or
    /// any folder with a bot.toml; its `build`, if any, is run first, into
    /// a copy of the folder), or a command line in one argument
    /// (`"python3 my_bot.py"`, split as a shell splits it: `"python3 'my
    /// bot.py'"`).
    #[arg(required = true, value_name = "BOT")]
    bots: Vec<String>,
}

/// Who won, in words: `winner: NAME (seat S)`, or who shared first place.
fn outcome(names: &[String], scores: &[f64]) -> String {
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let first: Vec<String> = scores
        .iter()
        .enumerate()
        .filter(|(_, &s)| s == best)
        .map(|(i, _)| format!("{} (seat {i})", names.get(i).map_or("?", |n| n.as_str())))
        .collect();
    match first.as_slice() {
        [one] => format!("winner: {one}"),
        all if all.len() == scores.len() => format!("draw: {}", all.join(", ")),
        shared => format!("shared first place: {}", shared.join(", ")),
    }
}

/// What a BOT argument names.
pub(super) enum BotArg {
    Random,
    /// A command, with the limits its bot.toml asks for, and the bot.toml
    /// itself when the argument named a bot folder.
    Command(BotCommand, crate::bot::LimitSettings, Option<Box<Manifest>>),
}

/// Understands a BOT argument: `random`, a bots/ folder name, a folder with
/// a bot.toml, a program's path (spaces and all), or a command line split
/// as a shell splits it ([`super::args::command_words`]).
pub(super) fn resolve_bot(arg: &str) -> anyhow::Result<BotArg> {
    // `"greedy-rust "` from a script is the bot greedy-rust, not a
    // command line naming a program of that name.
    let arg = arg.trim();
    if arg == "random" {
        return Ok(BotArg::Random);
    }
    for dir in [Path::new("bots").join(arg), PathBuf::from(arg)] {
        if dir.join(MANIFEST).is_file() {
            let m = Manifest::load(&dir)?;
            return Ok(BotArg::Command(m.command(), m.limits, Some(Box::new(m))));
        }
    }
    if Path::new(arg).is_dir() {
        bail!(
            "{arg} is a folder without a {MANIFEST}: give a bot folder (one with a {MANIFEST}) or the command that starts the bot (`python3 path/to/bot.py`)"
        );
    }
    // A program's path with spaces in it (`dir with spaces/my bot.py`),
    // there as a file: one word, not split as a shell would.
    let words = match arg.contains(char::is_whitespace) && Path::new(arg).is_file() {
        true => vec![arg.to_string()],
        false => super::args::command_words(arg)?,
    };
    if let [word] = words.as_slice() {
        if !word.contains('/') && crate::bot::sandbox::find_on_path(word).is_none() {
            bail!("{}", not_a_bot(word));
        }
    }
    match BotCommand::from_words(&words) {
        Some(c) => Ok(BotArg::Command(c, Default::default(), None)),
        None => bail!("empty bot command"),
    }
}

/// Why the one word `word` is no bot: not a folder of ./bots, not a
/// program on PATH; with the bot names it could have meant, or where bots/
/// was looked for.
fn not_a_bot(word: &str) -> String {
    // A program in the current folder is not looked for there (PATH is).
    if Path::new(word).is_file() {
        let interpreter = match Path::new(word).extension().and_then(|e| e.to_str()) {
            Some("py") => "python3 ",
            Some("js" | "mjs" | "cjs") => "node ",
            _ => "",
        };
        return match interpreter {
            "" => format!(
                "`{word}` is a file here, but a program is looked for on PATH: give `./{word}`"
            ),
            i => format!(
                "`{word}` is a file here, but a program is looked for on PATH: give the command in quotes, `\"{i}{word}\"` (or `./{word}` if it is executable and starts with `#!`)"
            ),
        };
    }
    let bots = Path::new("bots");
    let here = std::env::current_dir().unwrap_or_default();
    let names: Vec<String> = std::fs::read_dir(bots)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(MANIFEST).is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut msg = format!(
        "`{word}` is neither a bot folder under bots/ ({}) nor a program on PATH",
        here.join(bots).display()
    );
    match crate::text::closest(word, names.iter().map(String::as_str)) {
        Some(c) => msg.push_str(&format!("; did you mean `{c}`?")),
        None if names.is_empty() => msg.push_str(
            ": bot names are looked up in bots/ of the current folder; run arena from the folder that holds bots/ (the repository), or give a bot folder's path (path/to/bots/NAME)",
        ),
        None => msg.push_str(&format!("; the bots there: {}", names.join(", "))),
    }
    msg
}

/// Parses `KEY=VALUE` game options into settings.
pub(super) fn settings(
    players: usize,
    max_plies: u32,
    options: &[String],
) -> anyhow::Result<Settings> {
    let mut s = Settings::with_players(players);
    s.max_plies = max_plies;
    s.options = super::args::game_options(options)?;
    Ok(s)
}

/// A current-thread runtime, as the league uses.
pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    super::args::no_option_among_bots::<PlayArgs>("play", &args.bots)?;
    if let Some(p) = args.record.as_deref().filter(|p| !p.is_dir()) {
        super::args::not_a_results_file("--record", p)?;
    }
    let variant = super::args::game_arg(&args.game).map_err(|e| anyhow::anyhow!("--game: {e}"))?;
    let players = args.players.unwrap_or(args.bots.len());
    if players != args.bots.len() {
        bail!(
            "--players {players}, but {} given",
            match args.bots.len() {
                1 => "1 BOT".to_string(),
                n => format!("{n} BOTs"),
            }
        );
    }
    // Named by its seed, not by this process: the bots that draw their
    // randomness from the game id too (the Rust random bot) play the same
    // game again under the same seed.
    let mut spec = GameSpec::new(
        format!("play-{}-{}", variant.name(), args.seed),
        variant,
        settings(players, args.max_plies, &args.options)?,
    );
    // The game's settings and its opening are checked before any bot
    // starts, and a bad one is told at the flag it came from.
    let mut game = match crate::engine::Game::new(variant, &spec.settings) {
        Ok(g) => g,
        Err(e) => {
            let flag = match e.to_string().contains("`players`") {
                true if args.players.is_some() => "--players",
                true => "the BOTs (one a seat)",
                false => "--option",
            };
            bail!("{flag}: {e}");
        }
    };
    spec.opening = args
        .opening
        .iter()
        .flat_map(|o| crate::engine::move_words(o))
        .map(String::from)
        .collect();
    for (i, o) in spec.opening.iter().enumerate() {
        super::state::play_listed(&mut game, o)
            .map_err(|e| anyhow::anyhow!("--opening: move {} {e}", i + 1))?;
    }
    spec.seed = args.seed;
    if args.increment_ms > 0 && args.base_ms.unwrap_or(0) == 0 {
        bail!(
            "--increment-ms {} is added to a per-game clock after each reply, and there is none: give --base-ms too (the clock at the start), or leave --increment-ms out (each decision then has --timeout-ms)",
            args.increment_ms
        );
    }
    spec.time = TimeControl {
        // 0: no limit per decision but the game's watchdog, as a league's
        // `decision_ms = 0` (the bots are sent the real limit, never 0).
        per_decision: match args.timeout_ms {
            0 => Duration::from_secs(args.watchdog_s),
            ms => Duration::from_millis(ms),
        },
        // 0: no clock, as a league's `base_ms = 0`.
        clock: args.base_ms.filter(|&b| b > 0).map(|b| Clock {
            base: Duration::from_millis(b),
            increment: Duration::from_millis(args.increment_ms),
        }),
    };
    spec.watchdog = Duration::from_secs(args.watchdog_s);
    // Two plays of one seed at once keep a record each.
    let file_name = format!("{}-{}.jsonl", spec.game_id, std::process::id());
    let record_path = match &args.record {
        Some(p) if p.is_dir() => p.join(&file_name),
        Some(p) => p.clone(),
        None => crate::files::own_temp_folder()
            .with_context(|| "cannot keep the game's record (give --record FILE)".to_string())?
            .join("play")
            .join(&file_name),
    };
    can_write(&record_path)?;
    let room = crate::league::launch::Room {
        sandbox: args.sandbox.sandbox(),
        limits: args.limits.settings(),
        hide: None,
        ..Default::default()
    };
    let seats = args
        .bots
        .iter()
        .enumerate()
        .map(|(seat, arg)| built_bot(seat, arg, &room))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let rt = runtime()?;
    rt.block_on(async {
        tokio::select! {
            r = play(&args, &room, seats, &spec, &record_path) => r,
            code = interrupted() => {
                // Dropping the game drops the bots: their groups are killed.
                errln!("interrupted");
                Ok(code)
            }
        }
    })
}

/// Waits for SIGINT, SIGTERM or SIGHUP (a closed terminal) and returns the
/// exit code to use (128 + the signal). The caller drops its bots when
/// this wins, which kills their process groups: without it the default
/// action would end the referee at once and leave the bots' children
/// running. If the handlers cannot be installed, never returns.
pub(super) async fn interrupted() -> ExitCode {
    use tokio::signal::unix::{signal, Signal, SignalKind};
    async fn recv(s: &mut std::io::Result<Signal>) {
        match s {
            Ok(s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    }
    let mut int = signal(SignalKind::interrupt());
    let mut term = signal(SignalKind::terminate());
    let mut hup = signal(SignalKind::hangup());
    let number = tokio::select! {
        _ = recv(&mut int) => libc::SIGINT,
        _ = recv(&mut term) => libc::SIGTERM,
        _ = recv(&mut hup) => libc::SIGHUP,
    };
    ExitCode::from(128 + number as u8)
}

/// Fails before the game when its record could not be written after it
/// (a folder that cannot be made, a file that cannot be opened); leaves
/// nothing behind that was not there.
fn can_write(path: &Path) -> anyhow::Result<()> {
    let cannot = || format!("cannot write the game's record to {}", path.display());
    let existed = path.exists();
    crate::files::open_to_append(path).with_context(cannot)?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// The stderr logs `arena play` keeps of its own (without --logs), so
/// that a bot that cannot start is shown with the end of what it said;
/// removed when the game is over.
#[derive(Default)]
struct OwnLogs(Vec<PathBuf>);

impl OwnLogs {
    /// Seat `seat`'s log: in --logs, or one of our own.
    fn of(&mut self, logs: Option<&Path>, seat: usize) -> PathBuf {
        match logs {
            Some(d) => d.join(format!("seat{seat}.log")),
            None => {
                let own = std::env::temp_dir()
                    .join(format!("arena-play-{}-seat{seat}.log", std::process::id()));
                self.0.push(own.clone());
                own
            }
        }
    }
}

impl Drop for OwnLogs {
    fn drop(&mut self) {
        for log in &self.0 {
            let _ = std::fs::remove_file(log);
        }
    }
}

/// Where a bot seat's stderr goes: its log, and the log's size when the
/// bot started (a log of --logs is appended to).
type SeatLog = Option<(PathBuf, u64)>;

/// The bot of seat `seat`'s argument, built first when it is a bot folder
/// whose bot.toml has a `build` (in the sandbox of `room`, as `arena
/// match` and `arena check-bot` build it): its command then runs from the
/// built copy, never from the folder as it is.
fn built_bot(seat: usize, arg: &str, room: &crate::league::launch::Room) -> anyhow::Result<BotArg> {
    let bot = resolve_bot(arg)?;
    let BotArg::Command(_, asks, Some(m)) = &bot else {
        return Ok(bot);
    };
    if m.build.is_none() {
        return Ok(bot);
    }
    let (asks, spec) = (
        *asks,
        crate::league::config::BotSpec::from_manifest((**m).clone()),
    );
    let stop = crate::host::stop_signals();
    crate::league::build::build_own(&spec, room, Some(&stop), &mut |_| {
        errln!(
            "seat {seat}: building {} (its bot.toml's build: {})",
            spec.name,
            spec.build.as_deref().unwrap_or_default().join(" ")
        );
    })
    .map_err(|e| anyhow::anyhow!("seat {seat}: {e}"))?;
    Ok(BotArg::Command(
        crate::league::launch::command(&spec),
        asks,
        Some(m.clone()),
    ))
}

/// The players of `arena play`'s seats, in order, with their logs: a
/// seeded random player, or a bot command started (in the sandbox, under
/// the limits asked) and introduced by its hello. A bot that cannot start
/// is said with the end of its stderr, as `arena check-bot` and `arena
/// match` say it.
async fn seat_bots(
    args: &PlayArgs,
    room: &crate::league::launch::Room<'_>,
    seats: Vec<BotArg>,
    own: &mut OwnLogs,
) -> anyhow::Result<(Vec<Box<dyn Player>>, Vec<SeatLog>)> {
    let mut bots: Vec<Box<dyn Player>> = Vec::new();
    let mut logs = Vec::new();
    for (seat, bot) in seats.into_iter().enumerate() {
        match bot {
            BotArg::Random => {
                bots.push(Box::new(RandomPlayer::new(
                    format!("random-{seat}"),
                    args.seed.wrapping_add(seat as u64),
                )));
                logs.push(None);
            }
            BotArg::Command(cmd, asks, _) => {
                let log = own.of(args.logs.as_deref(), seat);
                // A log of --logs is appended to: this start's lines follow.
                let since = std::fs::metadata(&log).map_or(0, |m| m.len());
                let launch = room.launch(cmd.clone(), asks, Some(log.clone()));
                let b = match BotPlayer::start(&launch, &Timing::default()).await {
                    Ok(b) => b,
                    Err(e) => {
                        let mut tail =
                            crate::league::runner::stderr_tail(&log, since, args.logs.is_some())
                                .await
                                .unwrap_or_default();
                        tail += &crate::league::runner::sandbox_start_note(room.sandbox, &e);
                        // The error's own words carry its cause: not
                        // its source again.
                        bail!("seat {seat}: `{}`: {e}{tail}", cmd.display());
                    }
                };
                let i = b.info();
                // Version and author as the hello gave them, if it did.
                let mut who = i.name.clone();
                for (pre, part) in [(" ", &i.version), (" by ", &i.author)] {
                    if !part.is_empty() {
                        who = format!("{who}{pre}{part}");
                    }
                }
                outln!("seat {seat}: {who} (pid {})", b.pid());
                bots.push(Box::new(b));
                logs.push(Some((log, since)));
            }
        }
    }
    Ok((bots, logs))
}

async fn play(
    args: &PlayArgs,
    room: &crate::league::launch::Room<'_>,
    seats: Vec<BotArg>,
    spec: &GameSpec,
    record_path: &Path,
) -> anyhow::Result<ExitCode> {
    // Kept to the end of the game (the bots write them), then removed.
    let mut own_logs = OwnLogs::default();
    let (mut bots, logs) = seat_bots(args, room, seats, &mut own_logs).await?;
    let quiet = args.quiet;
    let mut last_ply = u32::MAX;
    // The kind of the decision about to be made (`W` is a colour or a
    // direction in Tricala).
    let mut kind = "";
    // The same bot in two seats: numbered, as `arena match` numbers it.
    let mut names: Vec<String> = Vec::new();
    for b in &bots {
        names.push(super::args::unique_name(b.name(), &names));
    }
    if !spec.names.is_empty() {
        names = spec.names.clone();
    }
    let spec = &GameSpec {
        names: names.clone(),
        ..spec.clone()
    };
    let mut show = |e: &Event<'_>| match e {
        Event::Started { game, .. } => {
            outln!(
                "{} {}: {}",
                spec.variant,
                crate::engine::players_text(spec.settings.players),
                names.join(" vs ")
            );
            if !quiet {
                outln!("{}", game.render());
            }
            last_ply = game.plies();
            kind = game.decision_kind();
        }
        Event::Decided { decision: d, game } => {
            let how = if d.forced {
                "forced".to_string()
            } else if d.opening {
                "opening".to_string()
            } else {
                format!("{:.1} ms", d.elapsed_us as f64 / 1000.0)
            };
            let who = names.get(d.seat).map_or("?", |s| s.as_str());
            outln!(
                "ply {:>3}  seat {} {:<16} {:<10} {:<8} {}",
                d.ply,
                d.seat,
                who,
                kind,
                d.option,
                how
            );
            if !quiet && game.plies() != last_ply {
                outln!("{}", game.render());
            }
            last_ply = game.plies();
            kind = game.decision_kind();
        }
        Event::Forfeit { seat, fault } => {
            outln!("seat {seat} forfeits: {fault}");
        }
        Event::Ended { .. } => {}
    };
    let report = {
        let mut ps: Vec<&mut dyn Player> = bots
            .iter_mut()
            .map(|b| &mut **b as &mut dyn Player)
            .collect();
        referee::play_game(spec, &mut ps, &mut show).await?
    };
    // What a bot at fault said on stderr (a traceback), as check-bot
    // shows it: without --logs, its log is gone once the game is over.
    let at_fault = report.offender.and_then(|o| logs.get(o)?.as_ref());
    if let Some((log, since)) = at_fault {
        let tail = crate::league::runner::stderr_tail(log, *since, args.logs.is_some()).await;
        if let Some(tail) = tail {
            outln!("{}", tail.trim_start_matches('\n'));
        }
    }
    let scores: Vec<String> = report.scores.iter().map(|s| format!("{s}")).collect();
    outln!("{}", outcome(&report.names, &report.scores));
    outln!(
        "result: {} ({}{}) after {} plies in {:.2} s",
        scores.join("-"),
        report.reason,
        report
            .offender
            .map(|o| format!(", seat {o}: {}", report.detail.as_deref().unwrap_or("")))
            .unwrap_or_default(),
        report.plies,
        report.duration.as_secs_f64()
    );
    record::write_record(record_path, spec, &report)
        .with_context(|| format!("cannot write {}", record_path.display()))?;
    outln!("record: {}", record_path.display());
    for (seat, b) in bots.iter_mut().enumerate() {
        // Output after the game's end is a fault (protocol.md) that costs
        // no game here; a league starts such a bot again before each of
        // its games. Said, so that its author learns of it.
        let stray = b.quit_with_report().await.and_then(|r| r.stray);
        if let Some(bytes) = stray {
            errln!(
                "note: seat {seat} ({}) wrote `{}` that the referee no longer read as a reply (written after game_end or on quit, or a reply it stopped waiting for: late, after the bot closed its stdin, or the rest of a line it refused): a bot writes nothing but its replies, so a league starts it again before each game (protocol.md)",
                b.name(),
                crate::protocol::shown_line(&bytes, 120)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
