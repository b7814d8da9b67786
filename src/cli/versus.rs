//! `arena match BOT_A BOT_B [MORE...]`: a match of two bots (or a gauntlet
//! of the first against the others) with no tournament file. Each BOT is
//! named as in `arena play`: `random`, a folder under bots/, a folder with
//! a bot.toml, or a command line. The league it makes is an ordinary one:
//! results in results/match-A-vs-B/ (results/gauntlet-A/), resumed by the
//! same command, stopped early by `--sprt`.

use super::play::{resolve_bot, BotArg};
use super::run::{run_league, How};
use crate::league::config::{RunSettings, Tournament};
use crate::league::runner::Programs;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
// `--rounds -1` is a bad number, not a flag named -1.
#[command(allow_negative_numbers = true)]
pub struct MatchArgs {
    /// The bot under test, then its opponent(s): `random`, a bots/ folder
    /// name, a folder with a bot.toml, or a command line in quotes.
    #[arg(required = true, num_args = 2.., value_name = "BOT")]
    bots: Vec<String>,
    /// Comma-separated variants (default: the five games, 2 players).
    #[arg(long, value_delimiter = ',')]
    variants: Option<Vec<String>>,
    /// Games per opponent, rounded up to whole seat-swap groups over the
    /// variants (default: 200; 100,000 with --sprt, which stops earlier).
    #[arg(long, value_parser = super::args::whole)]
    games: Option<u64>,
    /// Stop as soon as the SPRT of the first bot against the second
    /// decides: `elo0=E0,elo1=E1[,alpha=A,beta=B,model=normalized|logistic]`.
    #[arg(long, value_name = "SPEC")]
    sprt: Option<String>,
    /// Games at a time (default: the number of CPUs).
    // Any whole number here, as on `arena run`: `-1` and `0` get the
    // league's range check, not clap's "invalid digit".
    #[arg(long, short = 'j')]
    concurrency: Option<i64>,
    /// The schedule's seed.
    #[arg(long, value_parser = super::args::whole)]
    seed: Option<u64>,
    /// Random opening decisions per seat-swap group (default 4; 0 with
    /// --openings-file, after whose lines they come).
    #[arg(long)]
    openings: Option<i64>,
    /// An openings book: each seat-swap group opens with a line of it,
    /// `VARIANT: MOVE MOVE ...` a line (docs/league.md).
    #[arg(long, value_name = "FILE")]
    openings_file: Option<PathBuf>,
    /// `sequential` (default) or `random`: the order of the book's lines.
    #[arg(long, value_name = "ORDER")]
    openings_order: Option<String>,
    /// Time for one decision in ms (0: none).
    #[arg(long, value_parser = super::args::whole)]
    decision_ms: Option<u64>,
    /// Per-game clock base in ms (0: no clock), as on `arena run`.
    #[arg(long, value_parser = super::args::whole)]
    base_ms: Option<u64>,
    /// Clock increment per turn in ms.
    #[arg(long, value_parser = super::args::whole)]
    increment_ms: Option<u64>,
    /// Print the standings and the head-to-head line every N finished
    /// games (the line is printed at the end in any case).
    #[arg(long, value_name = "N", value_parser = super::args::whole_in::<u64>(1, u64::MAX))]
    rating_interval: Option<u64>,
    /// Write the games as PGN (for Ordo or BayesElo) to FILE as they
    /// finish, after those of earlier runs of this match.
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// Results folder (default: results/match-A-vs-B; a gauntlet's
    /// results/gauntlet-A).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// `on` (default) or `off`.
    #[arg(long, value_name = "on|off")]
    sandbox: Option<String>,
    /// Skip the bots' build commands, and cargo's bringing the shipped
    /// Rust bots up to date with the source `arena` was built from.
    #[arg(long)]
    no_build: bool,
    /// No progress lines or bar.
    #[arg(long)]
    quiet: bool,
    /// Write no HTML report.
    #[arg(long)]
    no_report: bool,
    /// Let the bots think while the others do.
    #[arg(long)]
    ponder: bool,
}

/// The five games with 2 players.
const DEFAULT_VARIANTS: &[&str] = &["filo", "tricala", "hackaback", "kisolo", "diffusion"];

pub fn run(args: MatchArgs) -> anyhow::Result<ExitCode> {
    super::args::no_option_among_bots::<MatchArgs>("match", &args.bots)?;
    let mut t = tournament(&args)?;
    // Hashed once: the run keeps these in league.json.
    let programs = args
        .output
        .is_none()
        .then(|| elsewhere_if_another_bot(&mut t));
    run_league(
        &t,
        &How {
            programs,
            no_build: args.no_build,
            quiet: args.quiet,
            no_report: args.no_report,
            resume: Some(command_line()),
            rating_interval: args.rating_interval,
            pgn: args.pgn.clone(),
            ..Default::default()
        },
    )
}

/// A match's folder is named by its bots' names, and a bot on the
/// command line by its hello: a match of another program under a name
/// already played (two `bot.py` that say `mybot`, a bot edited since) is a
/// new match in the next free folder (`match-A-vs-B-2`), said so, not a
/// resume that shows the other program's games as this one's. A bot with
/// a build is compared by its command alone (its programs are hashed
/// after the build). Returns the programs of the bots without a build,
/// hashed to compare them, for the run to keep.
fn elsewhere_if_another_bot(t: &mut Tournament) -> Programs {
    use crate::league::folder::read_meta;
    let now = crate::league::runner::programs_unbuilt(t);
    let differs = |dir: &Path| {
        let under = read_meta(dir)?.played_under?;
        another_bot(t, &under, &now)
    };
    let Some((bot, why)) = differs(&t.output) else {
        return now;
    };
    let base = t.output.clone();
    let Some(fresh) = (2..)
        .map(|k| {
            let mut name = base.file_name().unwrap_or_default().to_os_string();
            name.push(format!("-{k}"));
            base.with_file_name(name)
        })
        .find(|p| !p.exists() || read_meta(p).is_some() && differs(p).is_none())
    else {
        return now;
    };
    eprintln!(
        "note: {} holds a match of another `{bot}` ({why}): this match is played in {} (--output names the folder)",
        base.display(),
        fresh.display()
    );
    t.output = fresh;
    now
}

/// The first bot of `t` that is not the one a match folder's
/// `played_under` names so (its command, or its program's files `now`),
/// with how it differs.
fn another_bot(
    t: &Tournament,
    under: &crate::league::folder::PlayedUnder,
    now: &Programs,
) -> Option<(String, String)> {
    t.bots.iter().find_map(|b| {
        let command = crate::bot::manifest::expand(&b.command);
        let was = under.commands.get(&b.name)?;
        if *was != command {
            return Some((
                b.name.clone(),
                format!("its command was {was:?}, now {command:?}"),
            ));
        }
        if b.build.is_some() {
            return None;
        }
        let changed =
            crate::league::folder::program_changes(under.programs.get(&b.name)?, now.get(&b.name)?);
        (!changed.is_empty()).then(|| {
            (
                b.name.clone(),
                format!("its program changed: {}", changed.join(", ")),
            )
        })
    })
}

/// The league a match's flags make: a tournament as if read from a file
/// `match.toml` in the working folder (bots/ and results/ found there).
pub(super) fn tournament(args: &MatchArgs) -> anyhow::Result<Tournament> {
    if args.sprt.is_some() && args.bots.len() > 2 {
        bail!("--sprt tests the first bot against one opponent: give two bots");
    }
    let mut bots = toml::value::Array::new();
    let mut names: Vec<String> = Vec::new();
    let sandbox = match args.sandbox.as_deref() {
        Some("off") => crate::bot::Sandbox::Off,
        _ => crate::bot::Sandbox::On,
    };
    let made = args
        .bots
        .iter()
        .map(|arg| bot_table(arg, sandbox))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // The same folder name twice (bots/x and ../old/x): number them. A
    // name a bot gave itself in its hello yields to those of the bots
    // given by folder or as the built-in (`random` is the built-in's).
    // A bot named as a fixed column of crosstable.csv (`bot`, as a
    // script `bot.py` is named), which a league refuses, is numbered too.
    let mut given: Vec<Option<String>> = vec![None; made.len()];
    for by_hello in [false, true] {
        for (i, (name, _, hello)) in made.iter().enumerate() {
            if *hello == by_hello {
                let unique = match crate::results::CROSSTABLE_KEYS.contains(&name.as_str()) {
                    true => super::args::unique_name(
                        name,
                        &[&names[..], std::slice::from_ref(name)].concat(),
                    ),
                    false => super::args::unique_name(name, &names),
                };
                names.push(unique.clone());
                given[i] = Some(unique);
            }
        }
    }
    names.clear();
    for ((_, mut table, _), name) in made.into_iter().zip(given.into_iter().flatten()) {
        table.insert("name".into(), name.clone().into());
        names.push(name);
        bots.push(table.into());
    }
    let variants: Vec<String> = args
        .variants
        .clone()
        .unwrap_or_else(|| DEFAULT_VARIANTS.iter().map(|v| v.to_string()).collect());
    let opponents = names.len() as u64 - 1;
    let games = args
        .games
        .unwrap_or(if args.sprt.is_some() { 100_000 } else { 200 });
    if games == 0 {
        bail!("--games 0: nothing to play");
    }
    // A round is one seat-swap group (2 games) per variant and opponent.
    let per_round = 2 * variants.len().max(1) as u64;
    let rounds = games.div_ceil(per_round);
    // The league's bound on its rounds, said as this command's games.
    let most = crate::league::config::MAX_ROUNDS.unsigned_abs();
    if rounds > most {
        bail!(
            "--games {games}: at most {} games per opponent over {} variant{} (a match plays at most {most} seat-swap groups of 2 games per variant); give fewer",
            most * per_round,
            variants.len(),
            if variants.len() == 1 { "" } else { "s" }
        );
    }
    let name = match names.as_slice() {
        [a, b] => format!("match-{a}-vs-{b}"),
        _ => format!("gauntlet-{}", names[0]),
    };
    let mut file = toml::Table::new();
    file.insert("name".into(), name.into());
    file.insert("bots".into(), bots.into());
    if args.openings_file.is_none() {
        file.insert("openings".into(), 4.into());
    }
    if opponents > 1 {
        file.insert("gauntlet".into(), names[0].clone().into());
    }
    let src = toml::to_string(&file).context("cannot write the match as a tournament")?;
    let flags = RunSettings {
        rounds: Some(rounds as i64),
        variants: Some(variants),
        concurrency: args.concurrency,
        seed: args.seed,
        openings: args.openings,
        openings_file: args.openings_file.clone(),
        openings_order: args.openings_order.clone(),
        decision_ms: args.decision_ms,
        base_ms: args.base_ms,
        increment_ms: args.increment_ms,
        output: args.output.clone(),
        sandbox: args.sandbox.clone(),
        sprt: args.sprt.clone(),
        ponder: args.ponder.then_some(true),
        ..Default::default()
    };
    // The tournament "file" lives in the working directory: bots/ and
    // results/ are found there, as for `arena play`.
    let mut t = Tournament::parse_with(Path::new("match.toml"), &src, &flags)?;
    // That file is made here: no line of it is the user's.
    for b in &mut t.bots {
        if b.origin
            .as_deref()
            .is_some_and(|o| o.starts_with("match.toml:"))
        {
            b.origin = None;
        }
    }
    Ok(t)
}

/// This process's command line, quoted for a shell where needed, with the
/// program as `arena`: how to run this match again (and so resume it).
fn command_line() -> String {
    std::iter::once("arena".to_string())
        .chain(
            std::env::args()
                .skip(1)
                .map(|a| super::args::shell_word(&a)),
        )
        .collect::<Vec<_>>()
        .join(" ")
}

/// A TOML array of strings.
fn list(v: &[String]) -> toml::Value {
    toml::Value::Array(v.iter().cloned().map(Into::into).collect())
}

/// A BOT argument as a tournament's bot table (without its name), the
/// name it suggests, and whether that is the name the bot gave itself in
/// its hello.
fn bot_table(
    arg: &str,
    sandbox: crate::bot::Sandbox,
) -> anyhow::Result<(String, toml::Table, bool)> {
    let mut t = toml::Table::new();
    // Named as `arena play` names its bots.
    let m = match resolve_bot(arg)? {
        BotArg::Random => {
            t.insert(
                "command".into(),
                list(&["{bin_dir}/random-bot".to_string()]),
            );
            return Ok(("random".into(), t, false));
        }
        BotArg::Command(_, _, Some(m)) => m,
        BotArg::Command(cmd, asks, None) => {
            let (script, t) = command_table(arg, t);
            // Named as it names itself, as a bot folder is by its folder.
            return Ok(match hello_name(&cmd, asks, sandbox) {
                Some(name) => (name, t, true),
                None => (script, t, false),
            });
        }
    };
    let folder = m
        .dir
        .canonicalize()
        .with_context(|| format!("bot folder {}", m.dir.display()))?;
    // Its folder's name, if that may name it; else (`dir with spaces`)
    // the name its bot.toml gives.
    let name = folder
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .filter(|n| usable(n))
        .unwrap_or_else(|| m.name.clone());
    t.insert("command".into(), list(&m.command));
    t.insert("cwd".into(), folder.to_string_lossy().to_string().into());
    if let Some(b) = &m.build {
        t.insert("build".into(), list(b));
    }
    if !m.env.is_empty() {
        let env: toml::Table = m
            .env
            .iter()
            .map(|(k, v)| (k.clone(), toml::Value::from(v.clone())))
            .collect();
        t.insert("env".into(), env.into());
    }
    let limits =
        toml::Value::try_from(m.limits).context("the bot's [limits] cannot be carried over")?;
    t.insert("limits".into(), limits);
    Ok((name, t, false))
}

/// The name a command-line bot gives in its hello, started once in its
/// sandbox for it, when that name is usable in results (letters, digits,
/// `-`, `_`, `.`); `None` when it does not start (the league's own check
/// then says why) or gives another.
fn hello_name(
    cmd: &crate::bot::BotCommand,
    asks: crate::bot::LimitSettings,
    sandbox: crate::bot::Sandbox,
) -> Option<String> {
    use crate::referee::player::{BotPlayer, Timing};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    rt.block_on(async {
        let room = crate::league::launch::Room {
            sandbox,
            ..Default::default()
        };
        let launch = room.launch(cmd.clone(), asks, None);
        let mut bot = BotPlayer::start(&launch, &Timing::default()).await.ok()?;
        let name = bot.info().name.clone();
        bot.quit().await;
        usable(&name).then_some(name)
    })
}

/// Whether `name` may name a bot of a match: a bot's name that may also
/// be part of the results folder's name (`match-A-vs-B`).
fn usable(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(crate::results::is_file_safe)
        && crate::bot::manifest::name_problem(name).is_none()
}

/// A command-line BOT (`python3 mybot.py`) as a bot table, named after the
/// last word that is a file (`mybot`), else the program: the name of a bot
/// whose hello gives none usable.
fn command_table(arg: &str, mut t: toml::Table) -> (String, toml::Table) {
    // Not empty and well quoted: `resolve_bot` refused anything else.
    let words = super::args::command_words(arg).unwrap_or_default();
    let named = words
        .iter()
        .rev()
        .find(|w| Path::new(w).is_file())
        .or(words.first())
        .map_or("", String::as_str);
    let name = crate::results::file_safe(
        &Path::new(named)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default(),
    );
    t.insert("command".into(), list(&words));
    (if name.is_empty() { "bot".into() } else { name }, t)
}
