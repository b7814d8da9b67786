//! The command line: what the user typed -> validated settings -> the library.
//! One file per subcommand; `anyhow` lives here and nowhere below.

/// `println!` that does not panic when stdout is gone (`| head`, a closed
/// terminal): the commands that play bots ignore SIGPIPE (a bot that
/// closes its stdin must be an error, not the referee's death), so a
/// closed stdout is a write error, and a league goes on without it.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `println!` for a command whose output is its product (a list, a
/// table): a write error other than a reader gone ends the command with
/// an error naming `what` it was writing (see [`output::emit`]).
macro_rules! emitln {
    ($what:expr; $($arg:tt)*) => {
        $crate::cli::output::emit(&format!("{}\n", format_args!($($arg)*)), $what)?
    };
}

/// `eprintln!` that does not panic when stderr is gone (see [`outln!`]).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod analyse;
mod args;
mod bots;
mod check_bot;
mod console;
mod output;
mod pgn;
mod play;
mod rate;
mod replay;
mod report;
mod run;
mod serve;
mod show;
mod sprt;
mod state;
mod status;
mod submit;
mod tables;
mod versus;
mod view;
mod worker;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Referee, league runner and ratings for mancala-family bot games.
#[derive(Parser, Debug)]
#[command(name = "arena", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    // Boxed: its many flags make it the largest command by far.
    /// Run a league from a tournament file (resumes an interrupted run).
    #[command(after_help = EX_RUN)]
    Run(Box<run::RunArgs>),
    /// Play one game live in the terminal and write its record.
    #[command(after_help = EX_PLAY)]
    Play(play::PlayArgs),
    /// Rate bots from one or more results CSVs.
    #[command(after_help = EX_RATE)]
    Rate(rate::RateArgs),
    /// Check that a bot follows the protocol, game by game.
    #[command(after_help = EX_CHECK_BOT)]
    CheckBot(check_bot::CheckBotArgs),
    /// Replay a move list and print the state, legal options and result as JSON.
    #[command(after_help = EX_STATE)]
    State(state::StateArgs),
    /// List the bots under bots/, whether each builds and starts.
    #[command(after_help = EX_BOTS)]
    Bots(bots::BotsArgs),
    /// Export 2-player games of results CSVs as PGN for Ordo or BayesElo.
    #[command(after_help = EX_PGN)]
    Pgn(pgn::PgnArgs),
    /// Play one recorded game of a league again, with the same bots and
    /// seed, and say whether it came out the same, decision by decision.
    #[command(after_help = EX_REPLAY)]
    Replay(replay::ReplayArgs),
    /// Print one recorded game: every decision, who made it and of which
    /// kind, the result; with --board, the board after every turn.
    #[command(after_help = EX_SHOW)]
    Show(show::ShowArgs),
    /// Every shard of a league: games done, running or not, last write,
    /// time left, and which shards to start (again).
    #[command(after_help = EX_STATUS)]
    Status(status::StatusArgs),
    /// Sequential probability ratio test of one bot against another on a
    /// results file (pentanomial seat-swap pairs, as fastchess): H0 or H1
    /// accepted, or no decision yet.
    #[command(after_help = EX_SPRT)]
    Sprt(sprt::SprtArgs),
    /// A match of two bots, or a gauntlet of the first against the others,
    /// without a tournament file; with --sprt it stops when the SPRT
    /// decides.
    #[command(after_help = EX_MATCH)]
    #[command(name = "match")]
    Match(versus::MatchArgs),
    /// Write a league's HTML report (standings, crosstables, variants,
    /// forfeits, a viewer for a sample of the games, or every game with
    /// --all-games) into RESULTS/report/.
    #[command(after_help = EX_REPORT)]
    Report(report::ReportArgs),
    /// Serve a ladder: owners upload bots over HTTP, which are built,
    /// checked, entered and play for ever; standings, pages and an API.
    #[command(after_help = EX_SERVE)]
    Serve(serve::ServeArgs),
    /// Upload a bot folder to a ladder (`arena serve`) and wait for its
    /// verdict: entered, or refused with why.
    #[command(after_help = EX_SUBMIT)]
    Submit(submit::SubmitArgs),
    /// Serve a league's results folder read-only on loopback: the report's
    /// pages and any game's viewer on demand; opens the browser.
    #[command(after_help = EX_VIEW)]
    View(view::ViewArgs),
    /// Play a ladder's games on this machine: claim them from the server
    /// (`arena serve`), play them in the sandbox, upload them.
    #[command(after_help = EX_WORKER)]
    Worker(worker::WorkerArgs),
    /// Build endgame tables: every position of a game with up to N seeds
    /// in play, its exact value (docs/tables.md).
    #[command(after_help = EX_TABLES)]
    Tables(tables::TablesArgs),
    /// Judge every decision of a recorded game: the best option, the value
    /// of the one played (exact where tables or the solver reach), blunders.
    #[command(after_help = EX_ANALYSE)]
    Analyse(analyse::AnalyseArgs),
}

/// The examples that end each subcommand's help, as ripgrep's and cargo's
/// do (README has more).
const EX_RUN: &str = "Examples:\n  arena run tournaments/demo.toml                     # run the demo league, or resume it\n  arena run my.toml --rounds 40 -j 2 -o results/long  # more rounds, 2 games at a time, into another folder\n  arena run my.toml --shard 2/4                       # the 2nd of 4 slices (one per machine)";
const EX_PLAY: &str = "Examples:\n  arena play --game kisolo -- random \"python3 my_bot.py\"              # your bot against the built-in random player\n  arena play --game tricala --players 3 -- greedy-rust random random  # 3-player Tricala with bots of bots/";
const EX_RATE: &str = "Examples:\n  arena rate results/demo                                     # the standings of a league (printed only)\n  arena rate results/big/shard-*/games.csv --out results/big  # the shards of one league, tables written\n  arena rate results/demo --variant kisolo --format csv       # one variant, as CSV for pandas";
const EX_CHECK_BOT: &str = "Examples:\n  arena check-bot -- python3 my_bot.py         # every check, every variant\n  arena check-bot --game kisolo -- bots/mybot  # a bot folder (built first), one game\n  arena check-bot --json -- ./my_bot           # one JSON document for CI";
const EX_STATE: &str = "Examples:\n  arena state kisolo --moves \"\"                             # the start: seat to decide, legal options\n  arena state tricala --players 3 --moves \"3b 4c\" --render  # a 3-player position as a board";
const EX_BOTS: &str = "Examples:\n  arena bots                   # the bots of bots/, built and started once each\n  arena bots --no-check --all  # every manifest, test bots included, without starting any";
const EX_PGN: &str = "Examples:\n  arena pgn results/demo/games.csv -o demo.pgn       # every 2-player game, for Ordo or BayesElo\n  arena pgn results/demo/games.csv --variant kisolo  # one variant, on standard output";
const EX_REPLAY: &str = "Examples:\n  arena replay tournaments/demo.toml r002-kisolo-p004-o1                     # play a game of the demo again: `same`, or the first difference\n  arena replay my.toml r001-filo-p000-o0 --results results/big/shard-1-of-4  # a game of a shard\n  arena replay results/match-mybot-vs-greedy-rust r001-filo-p000-o0          # a game of a match (no tournament file)";
const EX_SHOW: &str = "Examples:\n  arena show results/demo r002-kisolo-p004-o1          # a game, decision by decision\n  arena show results/demo r002-kisolo-p004-o1 --board  # with the board after every turn";
const EX_STATUS: &str = "Examples:\n  arena status results/demo                 # every shard: done, running, time left, and how to resume\n  arena status results/match-a-vs-b --json  # the same for scripts (`finished`, `sprt`, each shard's `start`)";
const EX_SPRT: &str = "Examples:\n  arena sprt results/match-new-vs-old --elo0 0 --elo1 10                # is the first bot 10 nElo stronger?\n  arena sprt results/league/games.csv --elo0 0 --elo1 5 --bots new,old  # two bots of a larger league";
const EX_MATCH: &str = "Examples:\n  arena match mybot-new mybot --sprt elo0=0,elo1=10                      # until the SPRT decides\n  arena match greedy-rust random-rust --games 40 --variants kisolo,filo  # 40 games, 20 a variant\n  arena match mybot random-rust greedy-rust --games 20                   # a gauntlet of mybot against two others";
const EX_REPORT: &str = "Examples:\n  arena report results/demo                       # writes results/demo/report/index.html\n  arena report results/big/shard-* -o report-big  # the shards of one league, elsewhere\n  arena report results/demo --all-games           # a viewer for every game, not a sample";
const EX_SERVE: &str = "Examples:\n  arena serve tournaments/club-ladder.toml --add-user alice         # prints alice's token, once\n  arena serve tournaments/club-ladder.toml                          # the ladder on http://127.0.0.1:8080\n  arena serve tournaments/club-ladder.toml --backup ladder-copy.db  # a consistent copy of the store";
const EX_SUBMIT: &str = "Examples:\n  arena submit --server http://127.0.0.1:8080 --token TOKEN bots/mybot       # upload and wait for the verdict\n  arena submit --server http://host:8080 --token TOKEN bots/mybot --no-wait  # upload only\n  arena submit --server http://host:8080 --token TOKEN bots/mybot --test     # then wait for its test: exit 0 on H1, 1 on H0, 3 no verdict";
const EX_VIEW: &str = "Examples:\n  arena view results/demo                                         # serve the demo's results, open the browser\n  arena view results/big/shard-* --no-open --bind 127.0.0.1:8000  # the shards of a league, on a fixed port";
const EX_TABLES: &str = "Examples:\n  arena tables build diffusion                # as many seeds as fit 1 GB, into tables/diffusion/\n  arena tables build hackaback --seeds 8      # up to 8 seeds in play (a killed build resumes)";
const EX_ANALYSE: &str = "Examples:\n  arena analyse results/demo r002-hackaback-p004-o1        # a table of every decision, blunders marked\n  arena analyse game.jsonl --time-ms 200 --json           # a record file, 200 ms a decision, JSON lines";
const EX_WORKER: &str = "Examples:\n  arena worker --server http://host:8080 --token TOKEN                                # play the ladder's games here, one at a time\n  arena worker --server http://host:8080 --token TOKEN -j 4 --cache /var/cache/arena  # 4 at a time, with its cache elsewhere";

/// Entry point of the `arena` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    crate::host::file_size_limit_as_error();
    if !cli.command.plays_bots() {
        end_quietly_when_the_reader_goes();
    } else {
        // A referee stopped (Ctrl-Z, SIGSTOP) charges no bot for the stop.
        crate::host::watch_stops();
    }
    let log_file = match &cli.command {
        Command::Run(a) => a.log.clone(),
        _ => None,
    };
    if let Some(Err(e)) = log_file
        .as_deref()
        .map(|p| args::not_a_results_file("--log", p))
    {
        errln!("error: {}", output::error_message(&e));
        return ExitCode::from(2);
    }
    // Before the log is opened: not the league's own file (the book a
    // league file names is checked once the file is read, before any
    // line is logged).
    if let Command::Run(a) = &cli.command {
        if let Err(e) = run::outputs_are_not_inputs(a, None) {
            errln!("error: {}", output::error_message(&e));
            return ExitCode::from(2);
        }
    }
    // A service's log keeps its times; a command's console reads as its
    // other lines do.
    let plain = !matches!(cli.command, Command::Serve(_) | Command::Worker(_));
    if let Err(e) = init_tracing(log_file.as_deref(), plain) {
        errln!("error: {}", output::error_message(&e));
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Run(a) => run::run(*a),
        Command::Play(a) => play::run(a),
        Command::Rate(a) => rate::run(a),
        Command::CheckBot(a) => check_bot::run(a),
        Command::State(a) => state::run(a),
        Command::Bots(a) => bots::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Show(a) => show::run(a),
        Command::Status(a) => status::run(a),
        Command::Match(a) => versus::run(a),
        Command::Pgn(a) => pgn::run(a),
        Command::Sprt(a) => sprt::run(a),
        Command::Report(a) => report::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Submit(a) => submit::run(a),
        Command::View(a) => view::run(a),
        Command::Worker(a) => worker::run(a),
        Command::Tables(a) => tables::run(a),
        Command::Analyse(a) => analyse::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            errln!("error: {}", output::error_message(&e));
            ExitCode::from(2)
        }
    }
}

impl Command {
    /// The commands that start bots and write to their pipes, or talk to
    /// a peer over a socket: a bot or a peer that goes away is an error,
    /// not SIGPIPE. (A worker killed by it when a bot exited between two
    /// games: the quit it was sent found no reader.)
    fn plays_bots(&self) -> bool {
        matches!(
            self,
            Command::Run(_)
                | Command::Play(_)
                | Command::CheckBot(_)
                | Command::Bots(_)
                | Command::Replay(_)
                | Command::Match(_)
                | Command::Serve(_)
                | Command::View(_)
                | Command::Worker(_)
                | Command::Submit(_)
        )
    }
}

/// The commands that only read files end as Unix filters do when their
/// reader goes away (`arena pgn games.csv | head`): SIGPIPE back to its
/// default, which Rust sets to ignored. (The commands that play bots keep
/// it ignored, see [`outln!`].)
fn end_quietly_when_the_reader_goes() {
    crate::host::default_sigpipe();
}

/// A warning on the console as arena's other lines are written
/// (`warning: MESSAGE`, `error: MESSAGE`), not as a log's line.
struct Plain;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut w: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let word = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            tracing::Level::INFO => "note",
            _ => "debug",
        };
        write!(w, "{word}: ")?;
        ctx.field_format().format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

/// Warnings (or what `ARENA_LOG` asks, e.g. `ARENA_LOG=info`) on stderr,
/// and the arena's notes too for `serve` and `worker` (not `plain`);
/// with `log_file` (`arena run --log FILE`), the league's own log there
/// too, at `info` (or `ARENA_LOG`'s level), appended.
fn init_tracing(log_file: Option<&std::path::Path>, plain: bool) -> anyhow::Result<()> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{fmt, EnvFilter, Layer};
    let level = |default: &str| {
        EnvFilter::try_from_env("ARENA_LOG").unwrap_or_else(|_| EnvFilter::new(default))
    };
    // No colour codes in a log file, a pipe or a batch job's output.
    let stderr = fmt::layer()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    // The console's words (`warning: ...`) unless ARENA_LOG asks for a
    // log's lines (time, level, module), as `serve` and `worker` write.
    let stderr = match plain && std::env::var_os("ARENA_LOG").is_none() {
        false => stderr.boxed(),
        true => stderr.event_format(Plain).boxed(),
    }
    .with_filter(tracing_subscriber::filter::filter_fn(|m| {
        m.target() != crate::league::runner::LOG_FILE_ONLY
    }))
    // A service's operator sees what it does (where it serves, versions
    // entered, workers registered) without asking; a command, only what
    // went wrong.
    .with_filter(level(match plain {
        true => "warn",
        false => "warn,mancala_arena=info",
    }));
    let file = match log_file {
        Some(path) => {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| anyhow::anyhow!("--log {}: {e}", path.display()))?;
            Some(
                fmt::layer()
                    .with_ansi(false)
                    .with_writer(std::sync::Mutex::new(f))
                    .with_filter(level("info")),
            )
        }
        None => None,
    };
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
    Ok(())
}
