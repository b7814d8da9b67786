//! `arena rate FILE.csv [MORE.csv ...]`: merges results files, prints the
//! standings, and writes `ratings.csv`, `pairs.csv` and `variants.csv`
//! where it is asked to (`--out DIR`), or into a league's own folder when
//! it rates that whole league; never over a league's tables from a subset
//! or a merge. Parsing and printing only; the work is in `report::tables`
//! and `ratings`. The files are read one row at a time into counts
//! (`ratings::Tally`): memory does not grow with the rows (docs/ratings.md,
//! "Inputs and merging").

use crate::league::schedule::Shard;
use crate::ratings::{Anchor, RateOptions, Tally};
use crate::report::tables::{for_each_merged, ratings_csv, tables_of, write_files};
use anyhow::{bail, Context};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// The standings as an aligned text table.
    #[default]
    Table,
    /// `ratings.csv` on standard output.
    Csv,
    /// The whole report (ratings, LOS, pairs, variants) as JSON.
    Json,
}

#[derive(clap::Args, Debug)]
pub struct RateArgs {
    /// Results CSVs (`games.csv`, or the shards of one league), or results
    /// folders (their games.csv is read).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Only this variant (`filo`, `tricala`, or a label such as `tricala-3p`,
    /// which a league file calls `tricala3`).
    #[arg(long)]
    variant: Option<String>,
    /// Fix one bot's rating, e.g. `--anchor random=0` (default: average = 0).
    #[arg(long, value_name = "BOT=ELO")]
    anchor: Option<String>,
    /// Fit a first-seat advantage per variant jointly with the ratings.
    #[arg(long)]
    seat_advantage: bool,
    /// Output on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Where to write the tables (ratings.csv, pairs.csv, variants.csv,
    /// crosstable.csv). Without it (or --write) nothing is written: a
    /// query only prints.
    #[arg(long, short = 'o', alias = "output")]
    out: Option<PathBuf>,
    /// Rewrite the league's own tables in its folder (beside league.json):
    /// only for a whole league's games.csv, without --variant.
    #[arg(long, conflicts_with = "out")]
    write: bool,
    /// Rate the shards given even when some of their league's shards are
    /// not among the files (they are named on stderr).
    #[arg(long)]
    partial: bool,
}

fn parse_anchor(s: &str) -> anyhow::Result<Anchor> {
    let Some((bot, elo)) = s.rsplit_once('=') else {
        bail!("--anchor wants BOT=ELO, got `{s}`");
    };
    // Said as written (`1e300`), not as its 301 digits.
    let written = elo.trim();
    let elo: f64 = written
        .parse()
        .with_context(|| format!("--anchor: `{elo}` is not a number"))?;
    if bot.trim().is_empty() {
        bail!("--anchor wants BOT=ELO, and `{s}` names no bot before its `=`");
    }
    if !elo.is_finite() {
        bail!("--anchor wants BOT=ELO with a finite ELO, got `{s}`");
    }
    // Beyond this, the ratings' sums lose every digit of the games.
    if elo.abs() > 100_000.0 {
        bail!("--anchor: {written} is out of range (Elo between -100000 and 100000), in `{s}`");
    }
    Ok(Anchor {
        bot: bot.to_string(),
        elo,
    })
}

/// The folder of the league that `args` rate whole: one games.csv beside
/// the league.json of a league that is not a shard, and no --variant.
fn whole_league(args: &RateArgs) -> Option<PathBuf> {
    let [file] = args.files.as_slice() else {
        return None;
    };
    if args.variant.is_some() || file.file_name()? != "games.csv" {
        return None;
    }
    let meta = super::args::meta_beside(file)?;
    meta.shard
        .is_none()
        .then(|| super::args::folder_of(file).to_path_buf())
}

/// The files to rate, checked (`args::results_inputs`): a league folder
/// stands for its games.csv; every shard of a sharded league must be there
/// (or `--partial`, with a warning naming those left out).
fn check_files(args: &mut RateArgs) -> anyhow::Result<()> {
    let doing = super::args::Doing {
        verb: "rate",
        ing: "rating",
    };
    args.files = super::args::results_inputs(&args.files, args.partial, doing)?;
    Ok(())
}

/// `--variant V` as games.csv labels it (`arena rate` and `arena pgn`):
/// a league file's name of a variant (`tricala3`) means its label
/// (`tricala-3p`); any other label is taken as it is.
pub(super) fn variant_filter(v: &str) -> String {
    match crate::league::config::parse_variant(v) {
        Ok(spec) if spec.players != 2 => spec.label(),
        _ => v.to_string(),
    }
}

/// The files read, for messages: `a.csv, b.csv` (`arena rate` and
/// `arena sprt`).
pub(super) fn files_text(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why `--variant v` kept no game of `files` (`arena rate` and `arena
/// pgn`): a misspelt or absent variant, and the variants (and labels)
/// `present` there.
pub(super) fn no_games_of_variant(v: &str, files: &[PathBuf], present: &[String]) -> anyhow::Error {
    anyhow::anyhow!(
        "no games of variant `{v}` in {}; the variants there are: {}",
        files_text(files),
        present.join(", ")
    )
}

/// Why `--anchor BOT=...` names no bot of the games rated: the bots
/// there (of `variant`, with a filter), and the one it most likely meant.
/// The files are read again: only on this error.
fn unknown_anchor(bot: &str, files: &[PathBuf], variant: Option<&str>) -> anyhow::Result<String> {
    let mut names = std::collections::BTreeSet::new();
    for_each_merged(files, |r| {
        if variant.is_none_or(|v| crate::ratings::matches_variant(r, v)) {
            for seat in [&r.seat0, &r.seat1, &r.seat2] {
                if !seat.is_empty() && !names.contains(seat.as_str()) {
                    names.insert(seat.clone());
                }
            }
        }
    })?;
    let mut msg = format!(
        "--anchor: bot `{bot}` does not appear in the games rated (the bots: {})",
        names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(c) = crate::text::closest(bot, names.iter().map(String::as_str)) {
        msg.push_str(&format!("; did you mean `{c}`?"));
    }
    Ok(msg)
}

/// `--out dir`, refused when `dir` is a league's results folder (or a
/// shard's) and the games rated are not its own games.csv, whole (no
/// `--variant`): the tables there are the league's own, and `--write`
/// refuses the same (a subset, a merge, another file). Refused always
/// when it is (or is inside) the folder a league keeps its records,
/// analyses or logs in (`args::league_place`, as `arena report -o`).
fn not_another_leagues(dir: PathBuf, args: &RateArgs) -> anyhow::Result<PathBuf> {
    if let Some(what @ super::args::LeaguePlace::Kept { .. }) = super::args::league_place(&dir) {
        bail!(
            "--out {}: that is {what}: the tables would be mixed with the league's own files; give a folder of its own",
            dir.display()
        );
    }
    if crate::league::folder::read_meta(&dir).is_none() {
        // The folder of a sharded league keeps the tables of its shards'
        // games together: those of games from elsewhere would replace them.
        let shards = crate::league::folder::shard_folders(&dir);
        let real = std::fs::canonicalize(&dir);
        let within = |f: &PathBuf| match (std::fs::canonicalize(f), &real) {
            (Ok(f), Ok(d)) => f.starts_with(d),
            _ => false,
        };
        if !shards.is_empty() && !args.files.iter().all(within) {
            bail!(
                "--out {}: that is the folder of a sharded league (its shard folders inside it), whose tables would be replaced by these of other games; give another folder",
                dir.display()
            );
        }
        return Ok(dir);
    }
    let own = crate::league::folder::Layout::new(&dir).games_csv();
    if let ([file], None) = (args.files.as_slice(), &args.variant) {
        if super::args::same_file(file, &own) {
            return Ok(dir);
        }
    }
    bail!(
        "--out {}: that is a league's results folder, whose tables are the league's own and would be replaced by these (other games, or a part of them); give another folder, or rate the league's whole games.csv with --write",
        dir.display()
    )
}

pub fn run(mut args: RateArgs) -> anyhow::Result<ExitCode> {
    check_files(&mut args)?;
    let anchor = args.anchor.as_deref().map(parse_anchor).transpose()?;
    let variant = args.variant.as_deref().map(variant_filter);
    let opts = RateOptions {
        variant: variant.clone(),
        anchor,
        seat_advantage: args.seat_advantage,
        extra_bots: Vec::new(),
        ..RateOptions::default()
    };
    // One row at a time: the rows are never all in memory.
    let mut tally = Tally::new(&opts);
    let merged =
        for_each_merged(&args.files, |r| tally.add(r)).map_err(super::args::merged_error)?;
    for w in &merged.warnings {
        eprintln!("warning: {w}");
    }
    if tally.seen() == 0 {
        bail!("no games to rate in {}", files_text(&args.files));
    }
    let (kept, seen) = (tally.kept(), tally.seen());
    let crowded = crowded_note(tally.crowded_groups());
    if let (0, Some(v)) = (kept, &variant) {
        return Err(no_games_of_variant(
            v,
            &args.files,
            &tally.variants_present(),
        ));
    }
    let report = match tally.report() {
        Ok(r) => r,
        Err(crate::ratings::RatingError::UnknownAnchor(bot)) => {
            bail!("{}", unknown_anchor(&bot, &args.files, variant.as_deref())?)
        }
        Err(e) => return Err(e.into()),
    };
    let tables = tables_of(report);
    let into = match (args.out.clone(), args.write, whole_league(&args)) {
        (Some(dir), _, _) if dir.exists() && !dir.is_dir() => bail!(
            "--out {}: that is a file; --out names the folder the tables go to",
            dir.display()
        ),
        (Some(dir), _, _) => Some(not_another_leagues(dir, &args)?),
        (None, true, Some(dir)) => Some(dir),
        (None, true, None) => bail!(
            "--write rewrites a league's own tables, so it takes one whole league's games.csv (or its folder) and no --variant; give --out DIR to write these tables elsewhere"
        ),
        (None, false, _) => None,
    };
    let (tables, wrote) = match into {
        Some(dir) => {
            for line in crosstable_keys_taken(&tables.report) {
                eprintln!("warning: {line}");
            }
            let t = write_files(tables, &dir)?;
            let names: Vec<String> = t.files.iter().map(|p| p.display().to_string()).collect();
            (t, format!("wrote {}", names.join(", ")))
        }
        None => (
            tables,
            "no files written (give --out DIR, or --write to rewrite a league's own tables)"
                .to_string(),
        ),
    };
    let dups = match merged.duplicates {
        0 => String::new(),
        n => format!(" ({n} duplicate rows counted once)"),
    };
    // The standings first, flushed, then stderr's lines: on a terminal
    // the last line says which files were written (docs/ratings.md).
    let out = match args.format {
        Format::Table => tables.standings.clone(),
        Format::Csv => ratings_csv(&tables.report)?,
        Format::Json => {
            let value = serde_json::json!({
                "report": tables.report,
                "los": tables.report.overall.los_matrix(),
            });
            format!("{}\n", serde_json::to_string_pretty(&value)?)
        }
    };
    super::output::emit(&out, "the standings")?;
    for line in crate::report::tables::seat_unbounded_lines(&tables.report.overall) {
        eprintln!("warning: {line}");
    }
    if let Some(note) = crowded {
        eprintln!("{note}");
    }
    if let Some(note) = unfinished(&args.files, seen) {
        eprintln!("{note}");
    }
    for note in records_lacking(&args.files) {
        eprintln!("{note}");
    }
    eprintln!("{kept} games rated{dups}; {wrote}");
    Ok(ExitCode::SUCCESS)
}

/// A warning for each bot named as one of crosstable.csv's fixed columns
/// (a league refuses such names; a file from elsewhere may hold them):
/// its column shares that name (docs/ratings.md, "Output files").
fn crosstable_keys_taken(report: &crate::ratings::Report) -> Vec<String> {
    report
        .overall
        .ratings
        .iter()
        .map(|r| r.bot.as_str())
        .filter(|b| crate::results::CROSSTABLE_KEYS.contains(b))
        .map(|b| format!("bot `{b}` has the name of one of crosstable.csv's fixed columns (`variant`, `bot`): crosstable.csv has two columns `{b}` (pandas reads the bot's as `{b}.1`)"))
        .collect()
}

/// A note when seat-swap groups hold more than two games (`crowded`: how
/// many, and the first's id): their games are rated, but none counts in a
/// pair of pairs.csv. A league writes two games a group; files of
/// different leagues whose group ids collide give more.
fn crowded_note((n, first): (u64, Option<&str>)) -> Option<String> {
    let first = first?;
    let (groups, hold) = match n {
        1 => ("1 seat-swap group".to_string(), "holds"),
        n => (format!("{n} seat-swap groups"), "hold"),
    };
    Some(format!(
        "note: {groups} ({first}{}) {hold} more than two games, and {} left out of the seat-swap pairs (pairs.csv's pairs and pentanomial counts; the games are rated): files of different leagues whose group ids collide? Rate each league alone, or give one file's group ids a prefix of their own",
        if n > 1 { ", ..." } else { "" },
        if n > 1 { "are" } else { "is" }
    ))
}

/// A note for each file that is a league's games.csv (beside its
/// league.json) with rows whose record is missing or cut short (its log
/// shorter than the row's place says; file sizes only, as `arena status`
/// checks them): the games are rated from their rows, but a resume
/// refuses those rows until `--repair` sets them aside.
fn records_lacking(files: &[PathBuf]) -> Vec<String> {
    use crate::league::folder::{Layout, RecordCheck};
    let mut notes = Vec::new();
    for f in files {
        if super::args::meta_beside(f).is_none() {
            continue;
        }
        let folder = super::args::folder_of(f);
        let mut check = RecordCheck::new(&Layout::new(folder));
        let Ok(mut rows) = crate::results::csvio::RowReader::open(f) else {
            continue;
        };
        let (mut lacking, mut first) = (0usize, None);
        while let Ok(Some((_, row))) = rows.next_row() {
            if let Some(why) = check.place(row) {
                lacking += 1;
                first.get_or_insert_with(|| format!("{}: {why}", row.game_id));
            }
        }
        if let Some(first) = first {
            notes.push(format!(
                "note: {lacking} rows of {} point at records that are missing or cut short (the first: {first}); their games are rated from their rows. `arena status {}` names them, and a run with --repair sets them aside to play them again",
                f.display(),
                crate::text::shell_path(folder)
            ));
        }
    }
    notes
}

/// A note when the files are leagues' games.csv (each beside its
/// league.json) holding fewer games than their schedules: ratings of a
/// league still running, or stopped part way, are the ratings so far.
fn unfinished(files: &[PathBuf], games: usize) -> Option<String> {
    let mut total = 0;
    let mut folders = Vec::new();
    // A league's schedule (or a shard's) counted once, however many
    // copies of its folder are given.
    let mut seen = std::collections::BTreeSet::new();
    for f in files {
        let meta = super::args::meta_beside(f)?;
        if seen.insert((meta.fingerprint.clone(), meta.shard.clone())) {
            total += meta.games;
            // A shard's folder: `arena status` of the league's folder
            // shows every shard.
            let folder = super::args::folder_of(f);
            let in_shard = meta.shard.is_some()
                && folder
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(Shard::of_folder_name)
                    .is_some();
            let league = match in_shard {
                true => folder.parent().unwrap_or(folder),
                false => folder,
            };
            let command = format!("arena status {}", crate::text::shell_path(league));
            if !folders.contains(&command) {
                folders.push(command);
            }
        }
    }
    (games < total).then(|| {
        format!(
            "note: {games} of the {total} games of the schedule are played ({} shows where the league stands): these are the ratings so far",
            folders.join("; ")
        )
    })
}
