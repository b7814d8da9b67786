//! `arena replay`: one recorded game of a league played again with the same
//! bots (started as the league starts them), the same opening, time control
//! and seed, compared with its record decision by decision.

use super::play::runtime;
use crate::league::config::{RunSettings, Tournament};
use crate::league::folder::read_meta;
use crate::league::folder::Layout;
use crate::league::runner;
use crate::referee::{self, record, BotPlayer, DecisionRecord, Player};
use crate::results::file_safe;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// The league's tournament file (its bots, sandbox and limits), or
    /// its results folder: the league is then made again from the command
    /// recorded there (`arena run FILE ...` or `arena match ...`, run from
    /// the same working folder).
    file: PathBuf,
    /// The game to play again (a `game_id` of games.csv).
    game_id: String,
    /// The results folder that holds the game's record (default: the
    /// league's, as `arena run` writes it).
    #[arg(long)]
    results: Option<PathBuf>,
    /// Folder for the bots' stderr logs of the replay (default: discarded).
    #[arg(long)]
    logs: Option<PathBuf>,
}

/// Exit status 0: the replay made every decision of the record, and ended
/// the same; 1: it did not (the first difference is printed).
pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let (t, output) = league_of(&args.file)?;
    // A league's games.csv stands for its folder, as in `arena show`.
    let dir = match &args.results {
        Some(r) if r.is_file() => super::args::results_folder(
            r,
            "--results names the folder of the league's results, or its games.csv",
        )?,
        Some(r) => r.clone(),
        None => output,
    };
    if !dir.exists() {
        match &args.results {
            Some(_) => bail!("--results {}: no such folder", dir.display()),
            None => bail!(
                "{}: no such folder: league `{}` has not been run yet (`arena run {}` plays it), or its results are elsewhere (give --results DIR)",
                dir.display(),
                t.name,
                super::args::shell_word(&args.file.display().to_string())
            ),
        }
    }
    // Another league's folder, said as that: its game of the same id
    // would be replayed with this league's bots (when they are its too)
    // and found `same`.
    if let Some(other) = read_meta(&dir).filter(|m| m.name != t.name) {
        bail!(
            "{} holds the results of league `{}`, not of `{}` ({}): give `{}`'s own tournament file, or the results folder alone (`arena replay {} {}`)",
            dir.display(),
            other.name,
            t.name,
            args.file.display(),
            other.name,
            super::args::shell_word(&dir.display().to_string()),
            args.game_id
        );
    }
    let (at, text) = super::args::game_record(&dir, &args.game_id)?;
    let recorded = record::read_record(&text).with_context(|| at.path().display().to_string())?;
    let mut spec = recorded.spec.clone();
    spec.watchdog = Duration::from_millis(t.time.watchdog_ms);
    let mut seats = Vec::new();
    for name in &spec.names {
        let Some(bot) = t.bots.iter().find(|b| &b.name == name) else {
            bail!(
                "the game's bot `{name}` is not in {} any more",
                args.file.display()
            );
        };
        seats.push(bot.clone());
    }
    outln!(
        "replaying {} ({} {}p, game_start seed {}): {}",
        spec.game_id,
        spec.variant,
        spec.settings.players,
        spec.seed,
        spec.names.join(" vs ")
    );
    let league_dir = folder_of_record(at.path(), &dir);
    warn_changed_programs(&league_dir, &t, &spec.names);
    let rt = runtime()?;
    let report = rt.block_on(async {
        let mut players = Vec::new();
        for (seat, bot) in seats.iter().enumerate() {
            let log = args
                .logs
                .as_ref()
                .map(|d| d.join(format!("seat{seat}-{}.log", file_safe(&bot.name))));
            let (launch, timing) = runner::launch_alone(&t, bot, log);
            let p = BotPlayer::start(&launch, &timing)
                .await
                .with_context(|| format!("cannot start `{}`", bot.name))?;
            players.push(p);
        }
        let report = {
            let mut refs: Vec<&mut dyn Player> =
                players.iter_mut().map(|p| p as &mut dyn Player).collect();
            referee::play_game(&spec, &mut refs, &mut |_| {}).await
        };
        for p in &mut players {
            p.quit().await;
        }
        anyhow::Ok(report?)
    })?;
    let changed = || say_noted_changes(&league_dir, &spec.names);
    match first_difference(&recorded.decisions, &report.decisions) {
        None if report.reason.name() == recorded.reason => {
            outln!(
                "same: {} decisions, the same end ({}, scores {:?})",
                report.decisions.len(),
                recorded.reason,
                recorded.scores
            );
            Ok(ExitCode::SUCCESS)
        }
        None => {
            outln!(
                "different end: recorded {} {:?}, replayed {} {:?} ({})",
                recorded.reason,
                recorded.scores,
                report.reason.name(),
                report.scores,
                report.detail.as_deref().unwrap_or("")
            );
            changed();
            Ok(ExitCode::FAILURE)
        }
        Some(d) => {
            outln!("different: {d}");
            changed();
            outln!(
                "(the replay ended {} after {} decisions; a bot that draws its randomness from game_start's seed and does not depend on time replays exactly: docs/league.md, Reproducible leagues)",
                report.reason.name(),
                report.decisions.len()
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The results folder whose league.json notes the game whose record is in
/// `record` (its `games/`): a shard's, in a sharded league's folder `dir`.
fn folder_of_record(record: &Path, dir: &Path) -> PathBuf {
    record
        .parent()
        .and_then(Path::parent)
        .filter(|d| read_meta(d).is_some())
        .unwrap_or(dir)
        .to_path_buf()
}

/// Said before a replay: each of the game's bots (`names`) whose program
/// is not the one league `t` last ran in `dir` (league.json's hashes), so
/// that the replay may diverge from the record.
fn warn_changed_programs(dir: &Path, t: &Tournament, names: &[String]) {
    let Some(under) = read_meta(dir).and_then(|m| m.played_under) else {
        return;
    };
    let now = runner::programs_now(t);
    for name in names {
        let (Some(was), Some(files)) = (under.programs.get(name), now.get(name)) else {
            continue;
        };
        let changes = crate::league::folder::program_changes(was, files);
        if !changes.is_empty() {
            eprintln!(
                "warning: bot `{name}`'s program changed since its league last ran: {}; the replay plays the new one, and may diverge from the record",
                changes.join(", ")
            );
        }
    }
}

/// Said where a replay differs: each change of the game's bots (`names`)
/// that league.json in `dir` notes (a command or setting changed on a
/// resume, with when): a game played before it was played with the one
/// before.
fn say_noted_changes(dir: &Path, names: &[String]) {
    let Some(under) = read_meta(dir).and_then(|m| m.played_under) else {
        return;
    };
    for name in names {
        let tag = format!("bot `{name}`'s ");
        for c in under.changes.iter().filter(|c| c.contains(&tag)) {
            outln!(
                "the league noted a change of bot `{name}` ({c}): a game played before it was played with the one before; the replay played the league's current one"
            );
        }
    }
}

/// The commands a league.json records to make its league again.
#[derive(clap::Parser)]
#[command(name = "arena")]
struct Recorded {
    #[command(subcommand)]
    command: RecordedCommand,
}

#[derive(clap::Subcommand)]
enum RecordedCommand {
    Run(Box<super::run::RunArgs>),
    Match(Box<super::versus::MatchArgs>),
}

/// The league named by `file` and the folder of its results: a tournament
/// file and the folder it writes, or a results folder (or its
/// league.json) and the league its recorded command makes.
fn league_of(file: &Path) -> anyhow::Result<(Tournament, PathBuf)> {
    let folder = match file.file_name() {
        _ if file.is_dir() => file.to_path_buf(),
        // A results folder's own files stand for it (not a tournament
        // file to read as TOML).
        Some(n) if n == "league.json" || n == "games.csv" => {
            super::args::folder_of(file).to_path_buf()
        }
        // Another table or record is no tournament file either.
        Some(n)
            if [".csv", ".json", ".jsonl", ".zst", ".pgn"]
                .iter()
                .any(|e| n.to_string_lossy().ends_with(e)) =>
        {
            bail!(
                "{}: give the league's tournament file (.toml) or its results folder (or its games.csv), not another file",
                file.display()
            )
        }
        _ => {
            let t = Tournament::load_with(file, &RunSettings::default())?;
            let output = t.output.clone();
            return Ok((t, output));
        }
    };
    let json = Layout::new(&folder).league_json();
    // A sharded league's folder: its shards' league.json record the
    // command (each its own `--shard`, all the one league).
    let meta = read_meta(&folder).or_else(|| {
        crate::league::folder::shard_folders(&folder)
            .into_iter()
            .next()
            .map(|(_, m)| m)
    });
    let Some(meta) = meta else {
        // Why it does not read, where it is there (`arena status` says it
        // too).
        let why = match std::fs::read_to_string(&json) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => format!(" ({e})"),
            Ok(text) => serde_json::from_str::<serde_json::Value>(&text)
                .err()
                .map_or_else(
                    || " (it is not the league.json arena writes)".to_string(),
                    |e| format!(" ({e})"),
                ),
        };
        bail!(
            "{} is not a league's results folder: it has no readable {}{why}",
            folder.display(),
            json.display()
        );
    };
    let Some(line) = meta.resume else {
        bail!(
            "{} does not record the command that made its league (an older version wrote it): give the league's tournament file, and this folder with --results",
            json.display()
        );
    };
    let Some(words) = shlex::split(&line) else {
        bail!(
            "{} records `{line}`, whose quotes do not close: give the league's tournament file, and this folder with --results",
            json.display()
        );
    };
    let t = match <Recorded as clap::Parser>::try_parse_from(&words).map(|r| r.command) {
        Ok(RecordedCommand::Run(a)) => Tournament::load_with(&a.file, &a.settings())?,
        Ok(RecordedCommand::Match(a)) => super::versus::tournament(&a)?,
        // `arena run` or `arena match` with arguments this version does
        // not take: said as that, with clap's reason.
        Err(e) if matches!(words.get(1).map(String::as_str), Some("run" | "match")) => {
            let why = e.to_string();
            let why = why
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            bail!(
                "{} records `{line}`, which does not read as a command of this version: {why}",
                json.display()
            )
        }
        Err(_) => bail!(
            "{} records `{line}`, which is neither `arena run` nor `arena match`",
            json.display()
        ),
    };
    Ok((t, folder))
}

/// The first decision where the replay left the record, said plainly.
fn first_difference(recorded: &[DecisionRecord], replayed: &[DecisionRecord]) -> Option<String> {
    for (i, (a, b)) in recorded.iter().zip(replayed).enumerate() {
        if (a.seat, a.ply, &a.option) != (b.seat, b.ply, &b.option) {
            return Some(format!(
                "decision {} (ply {}, seat {}): recorded `{}`, replayed `{}` (seat {})",
                i + 1,
                a.ply,
                a.seat,
                a.option,
                b.option,
                b.seat
            ));
        }
    }
    match recorded.len().cmp(&replayed.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(format!(
            "the replay stopped after {} decisions; the record has {}",
            replayed.len(),
            recorded.len()
        )),
        std::cmp::Ordering::Less => Some(format!(
            "the replay went on past the record's {} decisions",
            recorded.len()
        )),
    }
}
