//! `arena check-bot [--game GAME]... BOT_COMMAND...`: the conformance
//! check a bot author runs before entering a league.
//!
//! The flags, the bot, the console and the exit status; the checks
//! themselves (build, handshake, one game per seat of every game against
//! the built-in random player, quit, latency) are
//! [`crate::league::check`]'s, shared with the ladder service. Each line is
//! printed as it comes, or one JSON document at the end (`--json`). Exit
//! status 1 on any failure.

use super::play::{interrupted, resolve_bot, runtime, BotArg};
use crate::engine::{Variant, DEFAULT_MAX_PLIES};
use crate::league::check::{self, CheckLine, CheckOptions, CheckReport};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    #[arg(long, default_value_t = 10_000, value_parser = super::args::whole_in::<u64>(1, u64::MAX))]
    startup_ms: u64,
    /// Ply cap of the test games, 1 to 10000000 as in a league.
    #[arg(long, default_value_t = DEFAULT_MAX_PLIES, value_parser = super::args::whole_in::<u32>(1, crate::league::config::MAX_MAX_PLIES.unsigned_abs()))]
    max_plies: u32,
    /// Append the bot's stderr to this file (default: discarded).
    #[arg(long, alias = "logs")]
    log: Option<PathBuf>,
    /// `off`: the bot without its sandbox (where Linux user namespaces are
    /// not available; docs/security.md).
    #[arg(long, value_enum, default_value_t)]
    sandbox: super::args::SandboxArg,
    #[command(flatten)]
    limits: super::args::LimitArgs,
    /// Seed of the test games: each sends the bot a seed derived from it
    /// and the game's id in `game_start`.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// One JSON document on stdout instead of the lines (for CI): the
    /// command, every check with its outcome, detail and notes, latency.
    #[arg(long)]
    json: bool,
    /// The bot: a folder under bots/ (or with a bot.toml), or its command
    /// line as separate words (`python3 my_bot.py`, after the options; a
    /// `--` before it, as in `-- python3 my_bot.py --depth 3`, is taken
    /// too).
    #[arg(required = true, trailing_var_arg = true, value_name = "BOT_COMMAND")]
    bot: Vec<String>,
}

/// `arena check-bot`: builds, starts and checks a bot game by game
/// ([`crate::league::check`]), printing each line as it comes, or one
/// JSON document at the end (`--json`).
pub fn run(args: CheckBotArgs) -> anyhow::Result<ExitCode> {
    let (mut cmd, asks, folder) = bot_of(&args)?;
    let games = args
        .game
        .iter()
        .map(|g| super::args::game_arg(g))
        .collect::<anyhow::Result<Vec<Variant>>>()?;
    // A log that cannot be written is the user's mistake, said before the
    // bot starts, not the bot's failure to start.
    if let Some(log) = &args.log {
        crate::files::open_to_append(log).with_context(|| {
            format!(
                "--log {}: cannot write the bot's stderr there",
                log.display()
            )
        })?;
    }
    // Without --log, stderr still goes to a file of our own, so that a bot
    // that fails is shown with the end of what it said.
    let own_log = args
        .log
        .is_none()
        .then(|| std::env::temp_dir().join(format!("arena-check-bot-{}.log", std::process::id())));
    let opts = CheckOptions {
        games,
        timeout_ms: args.timeout_ms,
        startup_ms: args.startup_ms,
        max_plies: args.max_plies,
        log: args.log.clone().or_else(|| own_log.clone()),
        sandbox: args.sandbox.sandbox(),
        limits: args.limits.settings(),
        seed: args.seed,
    };
    let json = args.json;
    let mut print = |line: &CheckLine| {
        if !json {
            outln!("{line}");
        }
    };
    // A bot folder is built first, as a league builds it; a signal during
    // the build ends the command as it ends any process.
    let report = check::check_build(&mut cmd, folder, &opts, &mut print);
    if !report.passed() {
        return Ok(finish(&report, json, &cmd.display()));
    }
    let rt = runtime()?;
    let checked = rt.block_on(async {
        tokio::select! {
            report = check::check_built(report, &cmd, asks, &opts, &mut print) => Ok(report),
            // Dropping the checks drops the bot: its process group dies.
            code = interrupted() => Err(code),
        }
    });
    if let Some(log) = own_log {
        let _ = std::fs::remove_file(log);
    }
    match checked {
        Ok(report) => Ok(finish(&report, json, &cmd.display())),
        Err(code) => {
            outln!("interrupted");
            Ok(code)
        }
    }
}

/// The end: the summary line, or the JSON document; exit status 1 on any
/// failure.
fn finish(report: &CheckReport, json: bool, command: &str) -> ExitCode {
    if json {
        let doc = report.to_json(command);
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        outln!("{}", report.summary());
    }
    match report.passed() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
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
        // A bot folder then options (`bots/x --game filo`): the folder is
        // the whole bot, and what follows it is taken as its words.
        let first = Path::new(&args.bot[0]);
        if first.join(crate::bot::manifest::MANIFEST).is_file() {
            bail!(
                "{} is a bot folder, which takes no further words (`{}`): give check-bot's options before the bot (`arena check-bot --game filo {}`)",
                first.display(),
                args.bot[1..].join(" "),
                first.display()
            );
        }
        if let Some(flag) = super::args::own_flag_among::<CheckBotArgs>(&args.bot[1..]) {
            errln!(
                "note: `{flag}` comes after the bot's command, so it goes to the bot as one of its own words, not to check-bot: give check-bot's options before the bot"
            );
        }
        let c = crate::bot::BotCommand::from_words(&args.bot)
            .ok_or_else(|| anyhow::anyhow!("empty bot command"))?;
        (c, Default::default(), None)
    })
}
