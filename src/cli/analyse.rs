//! `arena analyse RESULTS GAME_ID` or `arena analyse RECORD_FILE`: every
//! decision of a recorded game judged (src/analyse/): the best option
//! found, the value of the one played, blunders marked; as a table, or
//! as JSON lines with `--json`.

use crate::ai::alphabeta::MAX_DEPTH;
use crate::analyse::{analyse, mark_applied, Params, Verdict};
use crate::league::folder::{write_atomically, Layout};
use crate::referee::record;
use crate::results::analysis;
use anyhow::{bail, Context};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
// `--depth -1` is a bad number, not a flag named -1.
#[command(allow_negative_numbers = true)]
pub struct AnalyseArgs {
    /// A results folder (then a game_id of its games.csv), or a game's
    /// record file (`arena play --record`).
    source: PathBuf,
    /// The game, when SOURCE is a results folder.
    game_id: Option<String>,
    /// Search depth in decisions where nothing exact reaches (default 4,
    /// or as deep as --time-ms allows).
    #[arg(long, value_parser = super::args::whole)]
    depth: Option<u64>,
    /// Search time per decision, in ms (iterative deepening).
    #[arg(long, value_parser = super::args::whole)]
    time_ms: Option<u64>,
    /// An estimated score this much below the best option's (scores run
    /// from 0 to 1) marks a blunder; an exact result thrown away always
    /// does.
    #[arg(long, default_value_t = 0.15)]
    threshold: f64,
    /// The endgame tables folder (`arena tables build --out`); default
    /// `tables` when it exists.
    #[arg(long)]
    tables: Option<PathBuf>,
    /// Estimates only: neither the tables nor the F.I.L.O solver.
    #[arg(long)]
    no_exact: bool,
    /// F.I.L.O: the solver's time per proof, in ms (each option of a
    /// decision takes one or two).
    #[arg(long, default_value_t = 200, value_parser = super::args::whole)]
    proof_ms: u64,
    /// One JSON object per decision instead of a table.
    #[arg(long)]
    json: bool,
    /// Keep the analysis in the results folder (`analysis/GAME_ID.jsonl`,
    /// the `--json` lines), where `arena report` and `arena view` show it
    /// beside the game's decisions.
    #[arg(long)]
    save: bool,
}

pub fn run(args: AnalyseArgs) -> anyhow::Result<ExitCode> {
    if !(0.0..=1.0).contains(&args.threshold) {
        bail!(
            "--threshold {}: a score difference between 0 and 1",
            args.threshold
        );
    }
    if args.depth == Some(0) {
        bail!("--depth 0: search at least one decision deep");
    }
    if args.time_ms == Some(0) {
        bail!("--time-ms 0: give at least 1 (ms of search per decision), or leave it out to search --depth decisions deep");
    }
    if args.proof_ms == 0 {
        bail!("--proof-ms 0: give at least 1 (ms per proof of the F.I.L.O solver), or --no-exact to run no solver");
    }
    if let Some(d) = args.depth.filter(|&d| d > u64::from(MAX_DEPTH)) {
        bail!("--depth {d}: the search goes at most {MAX_DEPTH} decisions deep");
    }
    if args.save && !args.source.is_dir() {
        bail!(
            "--save keeps the analysis in a results folder: {} is not one (give RESULTS GAME_ID)",
            args.source.display()
        );
    }
    if args.save {
        // Before the analysis (which may take minutes), not after it.
        can_keep_analyses(&args.source)?;
    }
    let (text, origin) = source_record(&args)?;
    let (rec, whole) = record::read_record_or_cut(&text)
        .with_context(|| format!("{origin}: not a game record"))?;
    let tables = args.tables.clone().or_else(|| {
        let d = PathBuf::from("tables");
        d.is_dir().then_some(d)
    });
    if let Some(t) = args.tables.as_ref().filter(|t| !t.is_dir()) {
        match t.exists() {
            true => bail!(
                "--tables {}: is a file, not a folder: give the folder `arena tables build` wrote",
                t.display()
            ),
            false => bail!("--tables {}: no such folder", t.display()),
        }
    }
    check_tables_for(&args, &rec.spec)?;
    let params = Params {
        // At most MAX_DEPTH: checked above.
        depth: args.depth.map(|d| u32::try_from(d).unwrap_or(MAX_DEPTH)),
        time: args.time_ms.map(Duration::from_millis),
        threshold: args.threshold,
        tables,
        exact: !args.no_exact,
        proof_time: Duration::from_millis(args.proof_ms),
    };
    let moves: Vec<String> = rec.decisions.iter().map(|d| d.option.clone()).collect();
    let spec = &rec.spec;
    let end = match whole {
        true => warn_of_its_end(&rec, &moves, &origin),
        false => {
            errln!(
                "warning: {origin}: game `{}`: no `end` line (the record is cut short): its {} decisions are analysed, and it has no result",
                spec.game_id,
                moves.len()
            );
            End::Missing
        }
    };
    let mut verdicts = analyse(spec.variant, &spec.settings, &moves, &params)
        .with_context(|| format!("{origin}: game `{}`", spec.game_id))?;
    mark_applied(&mut verdicts, rec.decisions.iter().map(|d| d.applied()));
    let mut lines = String::new();
    for v in &verdicts {
        let _ = writeln!(lines, "{}", serde_json::to_string(v)?);
    }
    if args.save {
        let layout = Layout::new(&args.source);
        let dir = layout.analysis();
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = analysis::file_of(&dir, &spec.game_id);
        write_atomically(&path, lines.as_bytes())?;
        eprintln!(
            "analysis of {} saved in {}: `arena report {}` or `arena view {}` shows it",
            spec.game_id,
            path.display(),
            crate::text::shell_path(&args.source),
            crate::text::shell_path(&args.source)
        );
    }
    let mut out = String::new();
    if args.json {
        out = lines;
    } else {
        table(&mut out, &rec, &verdicts, end);
    }
    super::output::emit(&out, "the analysis")?;
    Ok(ExitCode::SUCCESS)
}

/// The text of the record `args` names, and where it was read: a game of
/// a results folder (or of a league's games.csv or league.json, as
/// `arena show` takes them), or a record file.
fn source_record(args: &AnalyseArgs) -> anyhow::Result<(String, String)> {
    // A league's games.csv or league.json with a game_id: its folder, as
    // `arena show` takes it.
    let league_file = args.source.is_file()
        && args.game_id.is_some()
        && args
            .source
            .file_name()
            .is_some_and(|n| n == "games.csv" || n == "league.json");
    Ok(if args.source.is_dir() || league_file {
        let Some(id) = &args.game_id else {
            bail!(
                "{} is a results folder: give a game_id of its games.csv too",
                args.source.display()
            );
        };
        let folder = match league_file {
            true => super::args::folder_of(&args.source),
            false => args.source.as_path(),
        };
        let (at, text) = super::args::game_record(folder, id)?;
        (text, at.path().display().to_string())
    } else if args.source.is_file() {
        if let Some(id) = &args.game_id {
            bail!(
                "{} is a record file: it holds one game, so no game_id (`{id}`)",
                args.source.display()
            );
        }
        (
            record_file(&args.source)?,
            args.source.display().to_string(),
        )
    } else if args.source.exists() {
        bail!(
            "{}: neither a results folder nor a record file (a regular file)",
            args.source.display()
        );
    } else {
        bail!(
            "{}: no such results folder or record file",
            args.source.display()
        );
    })
}

/// The text of the record file `path`: a league's log of records (many
/// games, compressed or not), a zstd file or any other file that is not
/// text is named as what it is, not as a UTF-8 stream error or a record
/// that does not parse.
fn record_file(path: &std::path::Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if crate::results::records::is_log_name(name) {
        let folder = path
            .parent()
            .and_then(|games| games.parent())
            .map_or("RESULTS".to_string(), |d| d.display().to_string());
        bail!(
            "{} is a league's log of records (many games), not one game's record: give the league's results folder and a game_id (`arena analyse {} GAME_ID`)",
            path.display(),
            super::args::shell_word(&folder)
        );
    }
    if bytes.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        bail!(
            "{} is a zstd-compressed file, not a game record: decompress it first (zstd -d FILE)",
            path.display()
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not a game record: not UTF-8 text (at byte offset {}; a record is the JSON lines `arena play --record` or `arena show --json` writes)",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// `--tables DIR` given for a 2-player game that has tables: they must
/// be there as `DIR/VARIANT/` (a folder of another game's tables, or the
/// game's own folder given for DIR, would otherwise give nothing exact
/// without a word).
fn check_tables_for(args: &AnalyseArgs, spec: &crate::referee::GameSpec) -> anyhow::Result<()> {
    let Some(dir) = &args.tables else {
        return Ok(());
    };
    if args.no_exact || !crate::tables::tabled(spec.variant) || spec.settings.players != 2 {
        return Ok(());
    }
    let want = dir.join(spec.variant.name());
    if want.is_dir() {
        use crate::tables::{diffusion, gaps, hackaback, tricala};
        let (lacking, top) = match spec.variant {
            crate::engine::Variant::Diffusion => gaps::<diffusion::DiffusionTable>(dir),
            crate::engine::Variant::Hackaback => gaps::<hackaback::HackabackTable>(dir),
            _ => gaps::<tricala::TricalaTable>(dir),
        };
        let Some(first) = lacking.first() else {
            return Ok(());
        };
        bail!(
            "--tables {}: the {} tables lack {} of the layers below their largest ({top} seeds), {}{}: positions there would be judged by a search and not exactly, without a word; build them again with: arena tables build {} --seeds {top} --out {}",
            dir.display(),
            spec.variant,
            lacking.len(),
            first.display(),
            if lacking.len() > 1 { " and others" } else { "" },
            spec.variant,
            dir.display()
        );
    }
    let hint = if dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| crate::tables::TABLED.iter().any(|v| v.name() == n))
    {
        format!(
            "; give the folder above it, `arena tables build --out`'s (`{}`)",
            dir.parent()
                .map_or(String::new(), |p| p.display().to_string())
        )
    } else {
        String::new()
    };
    bail!(
        "--tables {}: no {} tables there (expected the folder {}){hint}",
        dir.display(),
        spec.variant,
        want.display()
    )
}

/// Whether the results folder `results` can keep an analysis (its
/// `analysis/` folder made and written in); the error says where not.
fn can_keep_analyses(results: &std::path::Path) -> anyhow::Result<()> {
    let dir = Layout::new(results).analysis();
    std::fs::create_dir_all(&dir)
        .and_then(|()| crate::files::check_writable(&dir))
        .with_context(|| {
            format!(
                "--save: the analysis could not be kept in {} (a read-only folder?); nothing was analysed",
                dir.display()
            )
        })
}

/// What a record's `end` line says of its decisions.
#[derive(Clone, Copy)]
enum End {
    /// The result its decisions give.
    Follows,
    /// Another (the record cut short before its end, or its result
    /// edited): said in a warning.
    Differs,
    /// Nothing: the record has no `end` line.
    Missing,
}

/// A record's end is what its decisions (`moves`) give; one cut short,
/// or whose result was edited, is analysed as its decisions are, with a
/// warning that its end says otherwise. A decision that cannot be played
/// is the analysis's to name.
fn warn_of_its_end(rec: &record::Recorded, moves: &[String], origin: &str) -> End {
    let spec = &rec.spec;
    let replayed = crate::engine::Game::new(spec.variant, &spec.settings)
        .ok()
        .and_then(|mut game| moves.iter().all(|m| game.play(m).is_ok()).then_some(game));
    let Some(why) = replayed.and_then(|game| record::end_problem(rec, &game)) else {
        return End::Follows;
    };
    errln!(
        "warning: {origin}: game `{}`: its end does not follow from its {} decisions ({why}): the decisions are analysed, not the end's result",
        spec.game_id,
        moves.len()
    );
    End::Differs
}

/// The analysis as a table; `end`: whether the record's result is what
/// its decisions give (else the header says it is only recorded, or that
/// there is none).
fn table(out: &mut String, rec: &record::Recorded, verdicts: &[Verdict], end: End) {
    let spec = &rec.spec;
    let result = format!("result {:?} ({})", rec.scores, rec.reason);
    let _ = writeln!(
        out,
        "{} ({}): {}; {}",
        spec.game_id,
        spec.variant,
        spec.names.join(" vs "),
        match end {
            End::Follows => result,
            End::Differs =>
                format!("{result} as recorded: not what its decisions give (see the warning)"),
            End::Missing => "no result: the record is cut short before its `end` line".into(),
        }
    );
    let _ = writeln!(
        out,
        "{:>4} {:>4} {:>4} {:<9} {:<8} {:<16} {:<8} {:<16} {:<7} blunder",
        "#", "ply", "seat", "kind", "played", "value", "best", "value", "source"
    );
    for v in verdicts {
        let _ = writeln!(
            out,
            "{:>4} {:>4} {:>4} {:<9} {:<8} {:<16} {:<8} {:<16} {:<7} {}",
            v.decision,
            v.ply,
            v.seat,
            v.kind,
            v.played,
            v.played_value.text(),
            v.best,
            v.best_value.text(),
            v.source,
            match (&v.why, v.applied) {
                (Some(why), _) => format!("?? {why}"),
                (None, Some(how)) => format!("({how}: not a player's)"),
                (None, None) => String::new(),
            }
        );
    }
    let blunders: Vec<String> = verdicts
        .iter()
        .filter(|v| v.blunder)
        .map(|v| format!("#{} (seat {}, {})", v.decision, v.seat, v.played))
        .collect();
    let _ = writeln!(
        out,
        "blunders: {}{}",
        blunders.len(),
        if blunders.is_empty() {
            String::new()
        } else {
            format!(": {}", blunders.join(", "))
        }
    );
}
