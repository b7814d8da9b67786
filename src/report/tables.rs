//! The rating tables: merges results files (shards of one league), runs the
//! ratings, writes `ratings.csv`, `pairs.csv` and `variants.csv`, renders
//! the standings text and exports PGN. The statistics themselves live in
//! `crate::ratings` (pure); this file only reads, merges, formats and writes.
//! Column meanings are documented in docs/ratings.md ("Output files").

use crate::files::NewFile;
use crate::ratings::{RatingError, Report, Standings, ALL, CONFIDENCE};
use crate::results::csvio::{CsvError, CsvWarning, RowReader};
use crate::results::{id_hash, GameRow};
use crate::text::{columns, pad_to};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Errors of reading, merging and writing the tables.
#[derive(Debug, thiserror::Error)]
pub enum TablesError {
    #[error(transparent)]
    Csv(#[from] CsvError),
    #[error(transparent)]
    Rating(#[from] RatingError),
    #[error("{0}")]
    Conflict(Box<Conflict>),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Write { path: PathBuf, source: csv::Error },
}

/// One game id with different content in two rows: where, and the rows.
#[derive(Debug, thiserror::Error)]
#[error(
    "game_id `{game_id}` appears twice with different content: {first} and {second}{}",
    differ_text(rows)
)]
pub struct Conflict {
    pub game_id: String,
    /// The two places, `file:line`.
    pub first: String,
    pub second: String,
    /// The two files (the first's, the second's).
    pub files: [PathBuf; 2],
    /// The two rows (the first, the second).
    pub rows: [GameRow; 2],
}

/// What two rows of one game id differ in, for [`TablesError::Conflict`]:
/// `: they differ in score0 (1.0 against 0.0) and ...`, each column's
/// field as games.csv writes it; a text column holding one number written
/// two ways (`1.10` and `1.1`) is said to be so (docs/ratings.md, "Inputs
/// and merging").
pub fn differ_text(rows: &[GameRow; 2]) -> String {
    let shown = |v: &str| match v {
        "" => "empty".to_string(),
        v => v.to_string(),
    };
    let parts: Vec<String> = crate::results::csvio::differences(&rows[0], &rows[1])
        .into_iter()
        .map(|(c, x, y)| {
            let same_number = matches!(
                (x.parse::<f64>(), y.parse::<f64>()),
                (Ok(p), Ok(q)) if p == q
            );
            let how = match same_number {
                true => ", one number written two ways: a round trip through pandas or a spreadsheet, which read it as a number?",
                false => "",
            };
            format!("{c} ({} against {}{how})", shown(&x), shown(&y))
        })
        .collect();
    match parts.split_last() {
        None => String::new(),
        Some((last, [])) => format!(": they differ in {last}"),
        Some((last, rest)) => format!(": they differ in {} and {last}", rest.join(", ")),
    }
}

/// A report's tables: what `tables_of` makes and `write_files` writes.
#[derive(Debug)]
pub struct Tables {
    pub report: Report,
    /// The standings text (overall, then one table per variant).
    pub standings: String,
    /// The files written.
    pub files: Vec<PathBuf>,
}

/// Rows merged from several files.
#[derive(Debug, Default)]
pub struct Merged {
    pub rows: Vec<GameRow>,
    /// Rows seen again with identical content (shards may overlap).
    pub duplicates: usize,
    /// What was skipped while reading (a torn last line, an empty file).
    pub warnings: Vec<CsvWarning>,
}

/// Merges the rows of several files, each row with the line it starts on:
/// a `game_id` seen again with identical content counts once; with
/// different content it is an error naming both places (`file:line`).
/// Returns the rows and the number of duplicates dropped.
pub fn merge(
    shards: Vec<(PathBuf, Vec<(u64, GameRow)>)>,
) -> Result<(Vec<GameRow>, usize), TablesError> {
    let mut seen: HashMap<String, (usize, String, PathBuf)> = HashMap::new();
    let mut out: Vec<GameRow> = Vec::new();
    let mut duplicates = 0;
    for (path, rows) in shards {
        for (line, row) in rows {
            match seen.get(&row.game_id) {
                Some((k, first, first_file)) => {
                    if out[*k] != row {
                        return Err(TablesError::Conflict(Box::new(Conflict {
                            game_id: row.game_id.clone(),
                            first: first.clone(),
                            second: format!("{}:{line}", path.display()),
                            files: [first_file.clone(), path],
                            rows: [out[*k].clone(), row],
                        })));
                    }
                    duplicates += 1;
                }
                None => {
                    let here = format!("{}:{line}", path.display());
                    seen.insert(row.game_id.clone(), (out.len(), here, path.clone()));
                    out.push(row);
                }
            }
        }
    }
    Ok((out, duplicates))
}

/// Reads and merges results files (see `merge`), every row in memory
/// (`for_each_merged` reads one at a time).
pub fn read_merged(paths: &[PathBuf]) -> Result<Merged, TablesError> {
    let mut rows = Vec::new();
    let info = for_each_merged(paths, |r| rows.push(r.clone()))?;
    Ok(Merged {
        rows,
        duplicates: info.duplicates,
        warnings: info.warnings,
    })
}

/// What `for_each_merged` found besides the games.
#[derive(Debug, Default)]
pub struct MergeInfo {
    /// Rows seen again with identical content (shards may overlap).
    pub duplicates: usize,
    /// What was skipped while reading (a torn last line, an empty file).
    pub warnings: Vec<CsvWarning>,
}

/// Reads results files one row at a time and gives `each` every game once,
/// as `merge` would keep it (a `game_id` seen again with identical content
/// counts once; with different content it is an error naming both places),
/// in the same order, except that a game is given only when it is sure to
/// be new: the rows whose id was seen before are settled by a second pass.
///
/// Memory: one 64-bit hash per distinct game id (about 9 to 18 bytes a
/// game with the hash table's slack), never the rows. A row whose id hash
/// was seen before (a duplicate, a conflict, or, with odds about
/// n^2 / 2^65 for n games, two ids of the same hash) is held back by its
/// place; if there are any, a second pass over the files compares each with
/// the first row of exactly its id, holding those first rows only: a
/// duplicate is dropped, a conflict is the error `merge` gives, and a row
/// that was new after all is given then (counts do not depend on order).
pub fn for_each_merged(
    paths: &[PathBuf],
    each: impl FnMut(&GameRow),
) -> Result<MergeInfo, TablesError> {
    let mut each = each;
    merge_files(paths, id_hash, |_, r| each(r))
}

/// `for_each_merged`, telling `each` which of `paths` each row was first
/// read from (its index), and lending the row mutably: `each` may take it
/// (`std::mem::swap` with a row of its own, whose allocations the reader
/// then reuses), as `arena report` keeps the rows of its sample.
pub fn for_each_merged_from(
    paths: &[PathBuf],
    each: impl FnMut(usize, &mut GameRow),
) -> Result<MergeInfo, TablesError> {
    merge_files(paths, id_hash, each)
}

/// Rows handed from the reading thread to the counting one at a time.
const BATCH: usize = 1024;

/// A batch of rows: `rows[..len]` of file `file`, starting on `lines`.
#[derive(Default)]
struct Batch {
    file: usize,
    len: usize,
    rows: Vec<GameRow>,
    lines: Vec<u64>,
}

/// Reads `paths` in order on a second thread and calls `each(file, line,
/// row)` for every row on this one, in order. The batches go round between
/// the two threads, so rows are parsed into reused memory. Returns what the
/// readers skipped; a bad row is the error, after the rows before it.
fn read_in_batches(
    paths: &[PathBuf],
    mut each: impl FnMut(usize, u64, &mut GameRow),
) -> Result<Vec<CsvWarning>, TablesError> {
    use std::sync::mpsc::sync_channel;
    let (full_tx, full_rx) = sync_channel::<Batch>(2);
    let (empty_tx, empty_rx) = sync_channel::<Batch>(4);
    for _ in 0..4 {
        // Cannot fail: the channel holds 4 and its receiver is alive.
        let _ = empty_tx.send(Batch::default());
    }
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || -> Result<Vec<CsvWarning>, TablesError> {
            let mut warnings = Vec::new();
            for (k, path) in paths.iter().enumerate() {
                let mut reader = RowReader::open(path)?;
                let mut more = true;
                while more {
                    // The counting side stopped: nothing more to read for.
                    let Ok(mut b) = empty_rx.recv() else {
                        return Ok(warnings);
                    };
                    (b.file, b.len) = (k, 0);
                    while b.len < BATCH {
                        if b.rows.len() == b.len {
                            b.rows.push(GameRow::default());
                            b.lines.push(0);
                        }
                        let got = reader.next_row_into(&mut b.rows[b.len]);
                        match got {
                            Ok(Some(line)) => {
                                b.lines[b.len] = line;
                                b.len += 1;
                            }
                            Ok(None) => {
                                more = false;
                                break;
                            }
                            Err(e) => {
                                // The rows before the bad one are counted.
                                let _ = full_tx.send(b);
                                return Err(e.into());
                            }
                        }
                    }
                    if full_tx.send(b).is_err() {
                        return Ok(warnings);
                    }
                }
                warnings.extend(reader.take_warnings());
            }
            Ok(warnings)
        });
        for mut b in full_rx {
            for i in 0..b.len {
                each(b.file, b.lines[i], &mut b.rows[i]);
            }
            // The reader may be done: then the batch is not needed.
            let _ = empty_tx.send(b);
        }
        match reader.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// `for_each_merged` with the id hash given (tests make it collide).
fn merge_files(
    paths: &[PathBuf],
    id_hash: fn(&str) -> u64,
    mut each: impl FnMut(usize, &mut GameRow),
) -> Result<MergeInfo, TablesError> {
    use std::collections::HashSet;
    type Seen = HashSet<u64, std::hash::BuildHasherDefault<crate::ratings::Fx>>;
    let mut seen = Seen::default();
    let mut held: HashSet<(usize, u64)> = HashSet::new();
    let mut held_ids: HashSet<String> = HashSet::new();
    // The first pass reads and checks the rows on a second thread (half the
    // time of `arena rate` is parsing), handing them over in batches.
    let warnings = read_in_batches(paths, |k, line, row| {
        if seen.insert(id_hash(&row.game_id)) {
            each(k, row);
        } else {
            held.insert((k, line));
            held_ids.insert(row.game_id.clone());
        }
    })?;
    let mut info = MergeInfo {
        warnings,
        ..MergeInfo::default()
    };
    if held.is_empty() {
        return Ok(info);
    }
    drop(seen);
    // The second pass: the first row of each held id, then every later one.
    let mut first: HashMap<String, (GameRow, String, usize)> = HashMap::new();
    for (k, path) in paths.iter().enumerate() {
        let mut reader = RowReader::open(path)?;
        while let Some((line, row)) = reader.next_row()? {
            if !held_ids.contains(&row.game_id) {
                continue;
            }
            let here = format!("{}:{line}", path.display());
            match first.get(&row.game_id) {
                None => {
                    first.insert(row.game_id.clone(), (row.clone(), here, k));
                    if held.contains(&(k, line)) {
                        each(k, &mut row.clone());
                    }
                }
                Some((f, _, _)) if f == row => info.duplicates += 1,
                Some((f, place, j)) => {
                    return Err(TablesError::Conflict(Box::new(Conflict {
                        game_id: row.game_id.clone(),
                        first: place.clone(),
                        second: here,
                        files: [paths[*j].clone(), path.clone()],
                        rows: [f.clone(), row.clone()],
                    })))
                }
            }
        }
    }
    Ok(info)
}

/// The tables of a report, not written yet.
pub fn tables_of(report: Report) -> Tables {
    Tables {
        standings: standings_text(&report),
        report,
        files: Vec::new(),
    }
}

/// The rating tables' files in a results folder, in the order
/// [`write_files`] writes them.
pub const FILES: [&str; 4] = ["ratings.csv", "pairs.csv", "variants.csv", "crosstable.csv"];

/// Writes the CSVs of `tables` into `dir` (created if missing).
pub fn write_files(mut tables: Tables, dir: &Path) -> Result<Tables, TablesError> {
    std::fs::create_dir_all(dir).map_err(|source| TablesError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    type File = std::io::BufWriter<NewFile>;
    type Table = fn(&Report, &mut csv::Writer<File>) -> csv::Result<()>;
    // Each written as it is formatted: a table of a million pairs is never
    // held in memory whole.
    let writers: [Table; 4] = [write_ratings, write_pairs, write_variants, write_crosstable];
    // Each is written beside its place and put in it once whole
    // ([`NewFile`]): a full disk leaves the last tables, not an empty or
    // half a file.
    for (name, write) in FILES.into_iter().zip(writers) {
        let path = dir.join(name);
        let io = |source| TablesError::Io {
            path: path.clone(),
            source,
        };
        let file = NewFile::create(&path).map_err(io)?;
        let mut w = csv::Writer::from_writer(std::io::BufWriter::with_capacity(1 << 16, file));
        write(&tables.report, &mut w)
            .and_then(|()| w.flush().map_err(csv::Error::from))
            .map_err(|source| TablesError::Write {
                path: path.clone(),
                source,
            })?;
        w.into_inner()
            .map_err(|e| io(e.into_error()))?
            .into_inner()
            .map_err(|e| io(e.into_error()))?
            .commit()
            .map_err(io)?;
        tables.files.push(path);
    }
    Ok(tables)
}

/// A table written by `write` into memory, as text.
fn in_memory(
    write: impl FnOnce(&mut csv::Writer<Vec<u8>>) -> csv::Result<()>,
) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    write(&mut w)?;
    to_string(w)
}

fn f(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return String::new();
    }
    let s = format!("{x:.decimals$}");
    // A small negative number rounds to `-0.00`: written as the 0 it is
    // (a reader of the CSV would see a sign where there is none).
    match s.strip_prefix('-') {
        Some(zero) if zero.bytes().all(|b| b == b'0' || b == b'.') => zero.to_string(),
        _ => s,
    }
}

fn opt(x: Option<f64>, decimals: usize) -> String {
    x.map_or(String::new(), |x| f(x, decimals))
}

fn reasons(m: &BTreeMap<String, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect::<Vec<_>>()
        .join(";")
}

fn to_string(w: csv::Writer<Vec<u8>>) -> Result<String, csv::Error> {
    let bytes = w
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Columns of `ratings.csv`.
pub const RATINGS_COLUMNS: &[&str] = &[
    "bot",
    "variant",
    "elo",
    "elo_low",
    "elo_high",
    "games",
    "score",
    "draws",
    "rank",
    "elo_se",
    "flag",
    "wins",
    "losses",
    "points",
    "draw_rate",
    "forfeits",
    "forfeit_reasons",
    "anchor",
    "reasons",
    "elo_se_dispersion",
];

/// `ratings.csv`: one row per bot per table (`all` first, then each
/// variant label), best first. Unrated bots have empty Elo cells.
pub fn ratings_csv(report: &Report) -> Result<String, csv::Error> {
    in_memory(|w| write_ratings(report, w))
}

fn write_ratings<W: std::io::Write>(report: &Report, w: &mut csv::Writer<W>) -> csv::Result<()> {
    w.write_record(RATINGS_COLUMNS)?;
    for st in std::iter::once(&report.overall).chain(&report.per_variant) {
        let mut rank = 0;
        for r in &st.ratings {
            let c = &r.count;
            let (elo, lo, hi, se, rk, se_dispersion) = if r.rated {
                rank += 1;
                (
                    f(r.elo, 2),
                    f(r.elo_low, 2),
                    f(r.elo_high, 2),
                    f(r.elo_se, 2),
                    rank.to_string(),
                    f(r.elo_se_dispersion, 2),
                )
            } else {
                Default::default()
            };
            // A bot without games in this table has no score or draw
            // rate (0/0): empty, as NA, not 0 (a mean would count it).
            let ratio = |x: f64| match c.games {
                0 => String::new(),
                _ => f(x, 4),
            };
            w.write_record([
                r.bot.as_str(),
                st.variant.as_str(),
                &elo,
                &lo,
                &hi,
                &c.games.to_string(),
                &ratio(c.score()),
                &c.draws.to_string(),
                &rk,
                &se,
                r.flag.as_str(),
                &c.wins.to_string(),
                &c.losses.to_string(),
                &f(c.points, 2),
                &ratio(c.draw_rate()),
                &c.forfeits.to_string(),
                &reasons(&c.forfeit_reasons),
                &st.anchor,
                &reasons(&c.reasons),
                &se_dispersion,
            ])?;
        }
    }
    Ok(())
}

/// Columns of `pairs.csv`.
pub const PAIRS_COLUMNS: &[&str] = &[
    "variant",
    "bot_a",
    "bot_b",
    "results",
    "a_wins",
    "draws",
    "b_wins",
    "a_score",
    "draw_rate",
    "pairs",
    "ll",
    "ld",
    "wl_dd",
    "wd",
    "ww",
    "penta_elo",
    "penta_elo_err",
    "elo_diff",
    "los",
];

/// `pairs.csv`: head-to-head per variant label, then `all`.
pub fn pairs_csv(report: &Report) -> Result<String, csv::Error> {
    in_memory(|w| write_pairs(report, w))
}

fn write_pairs<W: std::io::Write>(report: &Report, w: &mut csv::Writer<W>) -> csv::Result<()> {
    w.write_record(PAIRS_COLUMNS)?;
    for p in report.pairs() {
        let mut rec = vec![
            p.variant.clone(),
            p.bot_a.clone(),
            p.bot_b.clone(),
            p.results.to_string(),
            p.a_wins.to_string(),
            p.draws.to_string(),
            p.b_wins.to_string(),
            f(p.a_score(), 4),
            f(p.draw_rate(), 4),
            p.pairs().to_string(),
        ];
        rec.extend(p.penta.iter().map(|c| c.to_string()));
        rec.extend([
            opt(p.penta_elo, 2),
            opt(p.penta_elo_err, 2),
            opt(p.elo_diff, 2),
            opt(p.los, 4),
        ]);
        w.write_record(&rec)?;
    }
    Ok(())
}

/// `crosstable.csv`: per variant label (`all` first), one row per bot and
/// one column per opponent (bots in the order of the overall standings):
/// the row bot's score in % against that opponent over their pairwise
/// results; empty where they did not meet (and on the diagonal).
pub fn crosstable_csv(report: &Report) -> Result<String, csv::Error> {
    in_memory(|w| write_crosstable(report, w))
}

fn write_crosstable<W: std::io::Write>(report: &Report, w: &mut csv::Writer<W>) -> csv::Result<()> {
    let bots: Vec<&str> = report
        .overall
        .ratings
        .iter()
        .map(|r| r.bot.as_str())
        .collect();
    let mut header = crate::results::CROSSTABLE_KEYS.to_vec();
    header.extend(&bots);
    w.write_record(&header)?;
    let mut labels = vec![ALL.to_string()];
    labels.extend(report.per_variant.iter().map(|v| v.variant.clone()));
    labels.dedup();
    let column: HashMap<&str, usize> = bots.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let label_of: HashMap<&str, usize> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    // The row bot's score against each column bot it met, by label and
    // row, as (column, score) sorted by column: built once from the pairs
    // (the first pair of either orientation with results counts, as a scan
    // in order would find it), a few bytes per pair, not a map of names.
    let mut met: Vec<Vec<Vec<(usize, f64)>>> = vec![vec![Vec::new(); bots.len()]; labels.len()];
    for p in report.pairs().filter(|p| p.results > 0) {
        let (Some(&l), Some(&a), Some(&b)) = (
            label_of.get(p.variant.as_str()),
            column.get(p.bot_a.as_str()),
            column.get(p.bot_b.as_str()),
        ) else {
            continue;
        };
        met[l][a].push((b, p.a_score()));
        met[l][b].push((a, 1.0 - p.a_score()));
    }
    let mut rec: Vec<String> = Vec::with_capacity(bots.len() + 2);
    for (label, rows) in labels.iter().zip(&mut met) {
        for (a, row) in bots.iter().zip(rows.iter_mut()) {
            // Stable: of a column's scores the first pair's stays first.
            row.sort_by_key(|&(b, _)| b);
            row.dedup_by_key(|&mut (b, _)| b);
            rec.clear();
            rec.push(label.clone());
            rec.push(a.to_string());
            let mut next = row.iter().peekable();
            for b in 0..bots.len() {
                match next.next_if(|&&(c, _)| c == b) {
                    Some(&(_, s)) => rec.push(f(100.0 * s, 1)),
                    None => rec.push(String::new()),
                }
            }
            w.write_record(&rec)?;
            // The row is written: its memory goes back at once.
            *row = Vec::new();
        }
    }
    Ok(())
}

/// Columns of `variants.csv`.
pub const VARIANTS_COLUMNS: &[&str] = &[
    "variant",
    "players",
    "games",
    "draws",
    "draw_rate",
    "first_seat_score",
    "seat_elo",
    "seat_elo_low",
    "seat_elo_high",
    "plies_mean",
    "plies_median",
    "plies_min",
    "plies_max",
    "duration_ms_mean",
    "forfeits",
    "reasons",
];

/// `variants.csv`: one row per variant label.
pub fn variants_csv(report: &Report) -> Result<String, csv::Error> {
    in_memory(|w| write_variants(report, w))
}

fn write_variants<W: std::io::Write>(report: &Report, w: &mut csv::Writer<W>) -> csv::Result<()> {
    w.write_record(VARIANTS_COLUMNS)?;
    for v in &report.variants {
        let (s, lo, hi) = match v.seat_elo {
            Some((s, lo, hi)) => (f(s, 2), f(lo, 2), f(hi, 2)),
            None => Default::default(),
        };
        w.write_record([
            v.variant.clone(),
            v.players.to_string(),
            v.games.to_string(),
            v.draws.to_string(),
            f(v.draw_rate(), 4),
            f(v.first_seat_score, 4),
            s,
            lo,
            hi,
            f(v.plies_mean, 2),
            f(v.plies_median, 1),
            v.plies_min.to_string(),
            v.plies_max.to_string(),
            f(v.duration_ms_mean, 1),
            v.forfeits.to_string(),
            reasons(&v.reasons),
        ])?;
    }
    Ok(())
}

/// `x` to one decimal, never `-0.0`.
pub(crate) fn tenths(x: f64) -> String {
    match format!("{x:.1}") {
        z if z == "-0.0" => "0.0".into(),
        t => t,
    }
}

/// A score or draw share of bot count `c` in % to one decimal; `-` for a
/// bot without games in the table, as the console's other missing cells
/// (ratings.csv leaves it empty: 0/0 is no 0).
fn percent(c: &crate::ratings::BotCount, x: f64) -> String {
    match c.games {
        0 => "-".into(),
        _ => format!("{:.1}", 100.0 * x),
    }
}

/// The rank, Elo and +/- cells of a standings line; `rank` counts the rated
/// bots so far (an unrated bot gets `-` and no rank).
fn rank_cells(r: &crate::ratings::BotRating, rank: &mut usize) -> (String, String, String) {
    if !r.rated {
        return ("-".into(), "-".into(), "-".into());
    }
    *rank += 1;
    (
        rank.to_string(),
        tenths(r.elo),
        format!("{:.1}", (r.elo_high - r.elo_low) / 2.0),
    )
}

/// One standings table as text.
pub fn standings_table(st: &Standings) -> String {
    let title = if st.variant == ALL {
        "all variants".to_string()
    } else {
        st.variant.clone()
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Standings: {title} ({}; {:.0}% intervals)",
        st.anchor,
        CONFIDENCE * 100.0
    );
    let width = name_columns(st);
    let _ = writeln!(
        s,
        "{:>4}  {:<width$}  {:>8}  {:>7}  {:>6}  {:>7}  {:>6}  flag",
        "rank", "bot", "Elo", "+/-", "games", "score%", "draw%"
    );
    let mut rank = 0;
    for r in &st.ratings {
        let c = &r.count;
        let (rk, elo, pm) = rank_cells(r, &mut rank);
        let _ = writeln!(
            s,
            "{rk:>4}  {}  {elo:>8}  {pm:>7}  {:>6}  {:>7}  {:>6}  {}",
            pad_to(&r.bot, width),
            c.games,
            percent(c, c.score()),
            percent(c, c.draw_rate()),
            r.flag.as_str()
        );
    }
    for line in seat_advantage_lines(st) {
        let _ = writeln!(s, "{line}");
    }
    if st.regularized {
        let _ = writeln!(
            s,
            "note: the maximum-likelihood ratings do not exist for these results (someone won or lost \
             every game against a group of bots). Ratings inside each such group are its own \
             maximum-likelihood ratings; the groups are placed as if one game between them had been \
             a draw (the half-point rule of Ordo's manual). Flagged ratings rest on that rule."
        );
    }
    if st.groups > 1 {
        let _ = writeln!(
            s,
            "note: these bots form {} groups that never met, even through others; ratings of \
             different groups cannot be compared (flag `disconnected`, each group centred on its own).",
            st.groups
        );
    }
    s
}

/// The widest bot name of `st` in terminal columns, and at least the
/// header's `bot`.
fn name_columns(st: &Standings) -> usize {
    st.ratings
        .iter()
        .map(|r| columns(&r.bot))
        .max()
        .unwrap_or(3)
        .max(3)
}

/// The end of a league on one screen: one table (Elo and interval, games,
/// W-D-L, score, draws, forfeits by reason), each bot's Elo per variant,
/// and every note once.
pub fn league_summary(report: &Report) -> String {
    let st = &report.overall;
    let width = name_columns(st);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Standings ({}; {:.0}% intervals; W-D-L pairwise: one result per opponent per game)",
        st.anchor,
        CONFIDENCE * 100.0
    );
    let _ = writeln!(
        s,
        "{:>4}  {:<width$}  {:>8}  {:>7}  {:>6}  {:>11}  {:>6}  {:>6}  forfeits",
        "rank", "bot", "Elo", "+/-", "games", "W-D-L", "score%", "draw%"
    );
    let mut rank = 0;
    for r in &st.ratings {
        let (rk, elo, pm) = rank_cells(r, &mut rank);
        let c = &r.count;
        let wdl = format!("{}-{}-{}", c.wins, c.draws, c.losses);
        let forfeits = match c.forfeit_reasons.is_empty() {
            true => "-".to_string(),
            false => c
                .forfeit_reasons
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let _ = writeln!(
            s,
            "{rk:>4}  {}  {elo:>8}  {pm:>7}  {:>6}  {wdl:>11}  {:>6}  {:>6}  {forfeits}",
            pad_to(&r.bot, width),
            c.games,
            percent(c, c.score()),
            percent(c, c.draw_rate()),
        );
    }
    if report.per_variant.len() > 1 {
        elo_by_variant(&mut s, report, width);
    }
    // Each note once, with the tables it concerns.
    let tables: Vec<&Standings> = std::iter::once(st).chain(&report.per_variant).collect();
    let name = |t: &Standings| {
        if t.variant == ALL {
            "all variants".to_string()
        } else {
            t.variant.clone()
        }
    };
    let regularized: Vec<String> = tables
        .iter()
        .filter(|t| t.regularized)
        .map(|t| name(t))
        .collect();
    if !regularized.is_empty() {
        let _ = writeln!(
            s,
            "note ({}): someone won or lost every game against a group of bots, so the \
             maximum-likelihood ratings do not exist; the groups are placed as if one game between \
             them had been a draw (the half-point rule of Ordo's manual). Flagged ratings rest on that rule.",
            regularized.join(", ")
        );
    }
    let split: Vec<String> = tables
        .iter()
        .filter(|t| t.groups > 1)
        .map(|t| name(t))
        .collect();
    if !split.is_empty() {
        let _ = writeln!(
            s,
            "note ({}): some bots never met, even through others; ratings of different groups \
             cannot be compared.",
            split.join(", ")
        );
    }
    for line in seat_advantage_lines(st) {
        let _ = writeln!(s, "{line}");
    }
    s
}

/// The league summary's "Elo by variant" table: a row per bot of the
/// overall standings, a column per variant (`-` where it is not rated).
fn elo_by_variant(s: &mut String, report: &Report, width: usize) {
    let st = &report.overall;
    let labels: Vec<&str> = report
        .per_variant
        .iter()
        .map(|v| v.variant.as_str())
        .collect();
    let col = labels.iter().map(|l| l.len()).max().unwrap_or(6).max(7);
    let _ = write!(s, "\nElo by variant\n{:<width$}", "bot");
    for l in &labels {
        let _ = write!(s, "  {l:>col$}");
    }
    s.push('\n');
    // Each variant's rated bots by name (the first of a name), once.
    let by_bot: Vec<HashMap<&str, f64>> = report
        .per_variant
        .iter()
        .map(|v| {
            let mut m = HashMap::new();
            for x in v.ratings.iter().filter(|x| x.rated) {
                m.entry(x.bot.as_str()).or_insert(x.elo);
            }
            m
        })
        .collect();
    for r in &st.ratings {
        let _ = write!(s, "{}", pad_to(&r.bot, width));
        for v in &by_bot {
            let cell = v
                .get(r.bot.as_str())
                // Never `-0`.
                .map_or("-".into(), |elo| format!("{:.0}", elo.round() + 0.0));
            let _ = write!(s, "  {cell:>col$}");
        }
        s.push('\n');
    }
}

/// The first-seat advantage of each variant, fitted or unbounded, a line
/// each (under the standings and in the league summary).
fn seat_advantage_lines(st: &Standings) -> Vec<String> {
    st.seat_advantage
        .iter()
        .map(|(label, h, lo, hi)| {
            format!(
                "first-seat advantage {label}: {} Elo [{}, {}]",
                tenths(*h),
                tenths(*lo),
                tenths(*hi)
            )
        })
        .chain(seat_unbounded_lines(st))
        .collect()
}

/// One line per variant whose first seat won or lost (nearly) every game:
/// its seat advantage has no finite estimate (`Standings::seat_unbounded`).
pub fn seat_unbounded_lines(st: &Standings) -> Vec<String> {
    st.seat_unbounded
        .iter()
        .map(|(label, score)| {
            let why = match *score {
                s if s >= 0.99 => ": it won (nearly) every game".to_string(),
                s if s <= 0.01 => ": it lost (nearly) every game".to_string(),
                _ => ", but with the ratings fitted beside it the games leave it without bound: a bot that won from either seat is placed apart, and between the others one seat won every game, or the like".to_string(),
            };
            format!(
                "first-seat advantage {label}: unbounded (the first seat scored {:.1}%{why}), so no finite estimate exists; {label} is rated without one",
                100.0 * score,
            )
        })
        .collect()
}

/// The overall table, then one per variant label when there are several.
pub fn standings_text(report: &Report) -> String {
    let mut s = standings_table(&report.overall);
    if report.per_variant.len() > 1 {
        for st in &report.per_variant {
            s.push('\n');
            s.push_str(&standings_table(st));
        }
    }
    s
}

/// A tag value every PGN reader takes the same way: Ordo cuts a tag at the
/// first `"]` and does not unescape `\"`, so instead of escaping, a double
/// quote becomes `'`, a backslash `/` and a control character (a newline
/// in a quoted CSV field) a space.
pub fn pgn_value(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' => '\'',
            '\\' => '/',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// The 2-player games as PGN, and what was left out or renamed.
#[derive(Debug, Default)]
pub struct Pgn {
    pub text: String,
    /// Games written.
    pub games: usize,
    /// 3-player games (PGN holds two players per game).
    pub skipped: usize,
    /// Bot names changed by `pgn_value`: (name, as written).
    pub renamed: Vec<(String, String)>,
}

/// Exports the 2-player games as PGN (Event = `event`, the league's name,
/// Site, Date from `started_at`, Round = game_id, White = seat0, Black =
/// seat1, Result; then Variant, Termination = reason and, where the row
/// has its start, UTCDate and UTCTime), readable by Ordo and BayesElo: the
/// seven-tag roster first, then the result token as the whole movetext, a
/// blank line after each game. Forfeits are ordinary results (the offender
/// lost), as in our ratings.
pub fn to_pgn(rows: &[GameRow], event: &str) -> Pgn {
    let mut w = PgnWriter::new(Vec::new(), event);
    for r in rows {
        // Writing into memory cannot fail.
        let _ = w.add(r);
    }
    let (bytes, mut out) = w.finish();
    out.text = String::from_utf8_lossy(&bytes).into_owned();
    out
}

/// Writes PGN games one row at a time (see `to_pgn`) into `out`.
pub struct PgnWriter<W> {
    out: W,
    event: String,
    games: usize,
    skipped: usize,
    renamed: BTreeMap<String, String>,
}

impl<W: std::io::Write> PgnWriter<W> {
    pub fn new(out: W, event: &str) -> Self {
        PgnWriter {
            out,
            event: pgn_value(event),
            games: 0,
            skipped: 0,
            renamed: BTreeMap::new(),
        }
    }

    /// Writes one game (a 3-player game is counted and left out).
    pub fn add(&mut self, r: &GameRow) -> std::io::Result<()> {
        if r.players != 2 {
            self.skipped += 1;
            return Ok(());
        }
        let result = if r.score0 > r.score1 {
            "1-0"
        } else if r.score0 < r.score1 {
            "0-1"
        } else {
            "1/2-1/2"
        };
        let (white, black) = (pgn_value(&r.seat0), pgn_value(&r.seat1));
        for (name, v) in [(&r.seat0, &white), (&r.seat1, &black)] {
            if name != v && !self.renamed.contains_key(name) {
                self.renamed.insert(name.clone(), v.clone());
            }
        }
        // `started_at` is 2026-11-23T16:05:09.123Z (checked when read).
        let (date, utc) = match (r.started_at.get(..10), r.started_at.get(11..19)) {
            (Some(d), Some(t)) => (d.replace('-', "."), Some(t)),
            _ => ("????.??.??".to_string(), None),
        };
        write!(
            self.out,
            "[Event \"{}\"]\n[Site \"mancala-arena\"]\n[Date \"{date}\"]\n[Round \"{}\"]\n\
             [White \"{white}\"]\n[Black \"{black}\"]\n[Result \"{result}\"]\n\
             [Variant \"{}\"]\n[Termination \"{}\"]\n",
            self.event,
            pgn_value(&r.game_id),
            pgn_value(&r.variant),
            pgn_value(&r.reason),
        )?;
        if let Some(time) = utc {
            write!(self.out, "[UTCDate \"{date}\"]\n[UTCTime \"{time}\"]\n")?;
        }
        write!(self.out, "\n{result}\n\n")?;
        self.games += 1;
        Ok(())
    }

    /// Flushes the output (a game written is then on disk for readers).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// Games written so far.
    pub fn games(&self) -> usize {
        self.games
    }

    /// The output and the counts (`text` empty: it went to the output).
    /// The output written so far, to send on (a stream of pages).
    pub fn out_mut(&mut self) -> &mut W {
        &mut self.out
    }

    pub fn finish(self) -> (W, Pgn) {
        let pgn = Pgn {
            text: String::new(),
            games: self.games,
            skipped: self.skipped,
            renamed: self.renamed.into_iter().collect(),
        };
        (self.out, pgn)
    }
}

/// The report of a round robin of `n` bots (`b000`, ...) in one variant,
/// one game per pair: the better-numbered bot wins, except a draw between
/// neighbours (so that the ratings exist). Tests of what a table or page
/// of many bots costs start from it.
#[cfg(test)]
pub(crate) fn round_robin(n: usize) -> Report {
    let name = |i: usize| format!("b{i:03}");
    let mut rows = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let s = if j == i + 1 { 0.5 } else { 1.0 };
            let id = format!("{i}-{j}");
            rows.push(GameRow::two_player(&id, "filo", &id, &name(i), &name(j), s));
        }
    }
    crate::ratings::rate(&rows, &crate::ratings::RateOptions::default())
        .expect("a round robin with draws has ratings")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ratings::{rate, RateOptions};

    /// A number that rounds to zero is written without a sign.
    #[test]
    fn a_number_rounding_to_zero_has_no_sign() {
        assert_eq!(f(-0.001, 2), "0.00");
        assert_eq!(f(-0.0, 2), "0.00");
        assert_eq!(f(-0.006, 2), "-0.01");
        assert_eq!(f(-12.4, 0), "-12");
        assert_eq!(f(f64::NAN, 2), "");
    }

    fn row(id: &str, a: &str, b: &str, s: f64) -> GameRow {
        GameRow::two_player(id, "filo", id, a, b, s)
    }

    /// The line of `bot` in a league summary's standings.
    fn summary_line(text: &str, bot: &str) -> String {
        text.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(bot))
            .unwrap_or_else(|| panic!("no {bot}: {text}"))
            .to_string()
    }

    /// W-D-L and forfeits come from the rows; each note is printed once,
    /// naming its tables.
    #[test]
    fn the_league_summary_counts_results_and_forfeits_and_says_each_note_once() {
        let mut rows = vec![
            row("1", "x", "y", 1.0),
            row("2", "y", "x", 0.5),
            row("3", "x", "y", 1.0),
        ];
        let mut kisolo = row("4", "y", "x", 1.0);
        kisolo.variant = "kisolo".into();
        kisolo.reason = "timeout".into();
        kisolo.offender = Some(1);
        rows.push(kisolo);
        let report = rate(&rows, &RateOptions::default()).unwrap();
        let text = league_summary(&report);
        let line = |bot: &str| summary_line(&text, bot);
        assert!(
            line("x").contains(" 2-1-1 ") && line("x").ends_with("timeout 1"),
            "{text}"
        );
        assert!(
            line("y").contains(" 1-1-2 ") && line("y").ends_with(" -"),
            "{text}"
        );
        assert!(text.contains("Elo by variant"), "{text}");
        assert_eq!(text.matches("note (").count(), 1, "{text}");
        assert!(!text.contains(" -0 "), "{text}");
    }

    /// A bot without games (listed, unrated) has no score or draw share:
    /// `-` on the console, as its Elo, where ratings.csv leaves them empty.
    #[test]
    fn an_unrated_bot_has_no_score_or_draw_share_on_the_console() {
        let rows = vec![row("1", "x", "y", 1.0), row("2", "y", "x", 0.5)];
        let opts = RateOptions {
            extra_bots: vec!["idle".into()],
            ..RateOptions::default()
        };
        let report = rate(&rows, &opts).unwrap();
        let summary = league_summary(&report);
        let cells =
            |line: String| -> Vec<String> { line.split_whitespace().map(String::from).collect() };
        let want = ["-", "idle", "-", "-", "0", "0-0-0", "-", "-", "-"];
        assert_eq!(cells(summary_line(&summary, "idle")), want);
        let table = standings_table(&report.overall);
        assert_eq!(
            cells(summary_line(&table, "idle"))[..7],
            ["-", "idle", "-", "-", "0", "-", "-"]
        );
        assert!(summary_line(&summary, "x").contains(" 75.0 "), "{summary}");
    }

    /// One meaning of W-D-L, the report's: a 3-player game is one result
    /// against each opponent (the winner's two wins; the two others lose to
    /// it and draw with each other), as the draw % beside it counts.
    #[test]
    fn the_league_summary_counts_w_d_l_pairwise() {
        let three = |id: &str, seats: [&str; 3]| GameRow {
            game_id: id.into(),
            variant: "tricala".into(),
            players: 3,
            group: id.into(),
            seat0: seats[0].into(),
            seat1: seats[1].into(),
            seat2: seats[2].into(),
            score0: 1.0,
            score1: 0.25,
            score2: Some(0.25),
            reason: "normal".into(),
            ..GameRow::default()
        };
        let rows = vec![three("1", ["x", "y", "z"]), three("2", ["y", "z", "x"])];
        let report = rate(&rows, &RateOptions::default()).unwrap();
        let text = league_summary(&report);
        let line = |bot: &str| summary_line(&text, bot);
        assert!(text.contains("W-D-L pairwise"), "{text}");
        assert!(line("x").contains(" 2-1-1 "), "{text}");
        assert!(line("y").contains(" 2-1-1 "), "{text}");
        assert!(line("z").contains(" 0-2-2 "), "{text}");
    }

    /// Names wider or narrower on a terminal than their bytes (CJK
    /// characters take two columns, an accented letter one in two bytes)
    /// leave the columns after them straight, in each table of names.
    #[test]
    fn wide_and_accented_names_keep_the_tables_columns_straight() {
        let rows = vec![
            row("1", "囲碁ボット", "élan", 1.0),
            row("2", "élan", "x", 0.5),
            row("3", "x", "囲碁ボット", 0.0),
            row("4", "élan", "囲碁ボット", 1.0),
        ];
        let report = rate(&rows, &RateOptions::default()).unwrap();
        // The terminal column where each line's Elo cell ends.
        let ends = |text: &str, cell: &dyn Fn(&str) -> Option<usize>| -> Vec<usize> {
            text.lines()
                .filter(|l| ["囲碁ボット", "élan", "x "].iter().any(|n| l.contains(n)))
                .filter_map(cell)
                .collect()
        };
        let after_name = |l: &str| {
            // The column after the third field (rank, bot, Elo).
            let mut seen = 0;
            let mut in_field = false;
            for (i, c) in l.char_indices() {
                if c != ' ' && !in_field {
                    seen += 1;
                }
                in_field = c != ' ';
                if seen == 3 && !in_field {
                    return Some(columns(&l[..i]));
                }
            }
            None
        };
        for text in [league_summary(&report), standings_table(&report.overall)] {
            let e = ends(&text, &after_name);
            assert_eq!(e.len(), 3, "{text}");
            assert!(e.iter().all(|c| *c == e[0]), "{e:?}\n{text}");
        }
        assert_eq!(columns("囲碁ボット"), 10);
        assert_eq!(pad_to("élan", 6), "élan  ");
    }

    /// Each cell is the row bot's score against the column bot, the two
    /// cells of a pair adding up to 100; empty on the diagonal.
    #[test]
    fn the_crosstable_is_score_by_pair() {
        let rows = vec![
            row("1", "x", "y", 1.0),
            row("2", "y", "x", 0.5),
            row("3", "x", "y", 1.0),
            row("4", "y", "x", 1.0),
        ];
        let report = rate(&rows, &RateOptions::default()).unwrap();
        let text = crosstable_csv(&report).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "variant,bot,x,y");
        assert_eq!(lines[1], "all,x,,62.5");
        assert_eq!(lines[2], "all,y,37.5,");
    }

    /// Issue 34: the tables of a full round robin of 300 bots (44,850
    /// pairs, 90,000 cells per table), each cell checked against the
    /// closed form: the better-numbered bot won every game. Their cost is
    /// counted, not timed: the pairs they read
    /// ([`crate::ratings::pairs_read`]) are a few passes over the 89,700
    /// pairs, where a scan of the pairs per cell would read them all for
    /// each of 180,000 cells. (How long they take is measured in
    /// BENCHMARKS.md.)
    #[test]
    fn the_tables_of_300_bots_are_not_a_scan_per_cell() {
        let n = 300;
        let name = |i: usize| format!("b{i:03}");
        let report = round_robin(n);
        let before = crate::ratings::pairs_read();
        let text = crosstable_csv(&report).unwrap();
        ratings_csv(&report).unwrap();
        pairs_csv(&report).unwrap();
        variants_csv(&report).unwrap();
        league_summary(&report);
        let read = crate::ratings::pairs_read() - before;
        let pairs = report.pairs().len() as u64;
        assert_eq!(
            pairs,
            2 * 44_850,
            "the pairs of `all` and `filo`, each once"
        );
        assert!(
            read <= 3 * pairs,
            "the tables read {read} pairs: more than three passes over the {pairs}"
        );
        // 1 header + 300 rows for `all` and for `filo`.
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 2 * n);
        let header: Vec<&str> = lines[0].split(',').collect();
        let col = |b: &str| header.iter().position(|h| *h == b).unwrap();
        let cell = |a: usize, b: usize| {
            let line = lines
                .iter()
                .find(|l| l.starts_with(&format!("all,{},", name(a))))
                .unwrap();
            line.split(',').nth(col(&name(b))).unwrap().to_string()
        };
        assert_eq!(cell(0, 2), "100.0");
        assert_eq!(cell(2, 0), "0.0");
        assert_eq!(cell(7, 8), "50.0");
        assert_eq!(cell(5, 5), "");
    }

    #[test]
    fn merging_counts_a_duplicate_once_and_rejects_a_conflict() {
        let a = vec![(2, row("1", "x", "y", 1.0)), (3, row("2", "y", "x", 0.5))];
        let b = vec![(2, row("2", "y", "x", 0.5)), (3, row("3", "x", "y", 0.0))];
        let (merged, dups) = merge(vec![("a.csv".into(), a.clone()), ("b.csv".into(), b)]).unwrap();
        assert_eq!((merged.len(), dups), (3, 1));
        let c = vec![(2, row("2", "y", "x", 1.0))];
        let err = merge(vec![("a.csv".into(), a), ("c.csv".into(), c)]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("a.csv:3") && msg.contains("c.csv:2"), "{msg}");
        assert!(
            msg.ends_with(": they differ in score0 (0.5 against 1.0) and score1 (0.5 against 0.0)"),
            "{msg}"
        );
    }

    /// A version that went through pandas (`1.10` read as a number, written
    /// `1.1`) is named as one number written two ways.
    #[test]
    fn a_conflict_names_a_number_written_two_ways() {
        let a = row("1", "x", "y", 1.0);
        let b = GameRow {
            version0: "1.1".into(),
            version1: String::new(),
            ..a.clone()
        };
        let a = GameRow {
            version0: "1.10".into(),
            version1: "2".into(),
            ..a
        };
        assert_eq!(
            differ_text(&[a, b]),
            ": they differ in version0 (1.10 against 1.1, one number written two ways: a round trip through pandas or a spreadsheet, which read it as a number?) and version1 (2 against empty)"
        );
    }

    /// Rows read on the second thread arrive all, in order, with their
    /// files and lines, across batches and files; a bad row is the error
    /// after the rows before it.
    #[test]
    fn rows_read_in_batches_arrive_in_order_with_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        let head = crate::results::csvio::COLUMNS.join(",");
        let write = |name: &str, n: usize, bad_at: Option<usize>| {
            let mut text = format!("{head}\n");
            for i in 0..n {
                let players = if Some(i) == bad_at { "two" } else { "2" };
                text.push_str(&format!(
                    "{name}{i},filo,{players},p{i},x,y,,1,0,,store,,30,100,7,\n"
                ));
            }
            let p = dir.path().join(format!("{name}.csv"));
            std::fs::write(&p, text).unwrap();
            p
        };
        let (a, b) = (write("a", 2 * BATCH + 3, None), write("b", BATCH, None));
        let mut got = Vec::new();
        read_in_batches(&[a.clone(), b], |k, line, r| {
            got.push((k, line, r.game_id.clone()))
        })
        .unwrap();
        let want: Vec<_> = (0..2 * BATCH + 3)
            .map(|i| (0, i as u64 + 2, format!("a{i}")))
            .chain((0..BATCH).map(|i| (1, i as u64 + 2, format!("b{i}"))))
            .collect();
        assert_eq!(got, want);

        let bad = write("c", BATCH + 10, Some(BATCH + 5));
        let mut seen = 0;
        let e = read_in_batches(&[a, bad], |_, _, _| seen += 1).unwrap_err();
        assert!(
            e.to_string().contains(&format!("c.csv:{}", BATCH + 7)),
            "{e}"
        );
        assert_eq!(seen, 2 * BATCH + 3 + BATCH + 5);
    }

    /// Streamed, the files give the games, duplicates and conflicts of
    /// `merge`, also when every id hash collides (all settled exactly by
    /// the second pass).
    #[test]
    fn streaming_merges_as_merge_does_even_when_every_hash_collides() {
        let dir = tempfile::tempdir().unwrap();
        let head = crate::results::csvio::COLUMNS.join(",");
        let write = |name: &str, body: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, format!("{head}\n{body}")).unwrap();
            p
        };
        let a = write(
            "a.csv",
            "1,filo,2,p1,x,y,,1,0,,store,,30,100,7,\n2,filo,2,p1,y,x,,0.5,0.5,,tie,,31,100,7,\n",
        );
        let b = write(
            "b.csv",
            "2,filo,2,p1,y,x,,0.5,0.5,,tie,,31,100,7,\n3,kisolo,2,p2,x,y,,0,1,,store,,9,5,1,\n1,filo,2,p1,x,y,,1,0,,store,,30,100,7,\n",
        );
        let c = write("c.csv", "2,filo,2,p1,y,x,,1,0,,store,,31,100,7,\n");
        let files =
            |paths: &[&PathBuf]| -> Vec<PathBuf> { paths.iter().map(|p| (*p).clone()).collect() };
        let in_memory = |paths: &[PathBuf]| {
            let shards = paths
                .iter()
                .map(|p| (p.clone(), crate::results::csvio::read_file(p).unwrap().rows))
                .collect();
            merge(shards)
        };
        let collide: fn(&str) -> u64 = |_| 7;
        for hash in [id_hash, collide] {
            let paths = files(&[&a, &b]);
            let mut rows = Vec::new();
            let info = merge_files(&paths, hash, |_, r| rows.push(r.clone())).unwrap();
            let (want, dups) = in_memory(&paths).unwrap();
            let ids = |rows: &[GameRow]| {
                let mut v: Vec<String> = rows.iter().map(|r| r.game_id.clone()).collect();
                v.sort();
                v
            };
            assert_eq!(ids(&rows), ids(&want));
            assert_eq!((rows.len(), info.duplicates), (3, dups));
            assert_eq!(dups, 2);
            let paths = files(&[&a, &b, &c]);
            let err = merge_files(&paths, hash, |_, _| {})
                .unwrap_err()
                .to_string();
            let want = in_memory(&paths).unwrap_err().to_string();
            assert_eq!(err, want);
            assert!(err.contains("a.csv:3") && err.contains("c.csv:2"), "{err}");
        }
    }

    #[test]
    fn pgn_has_the_tags_ordo_reads() {
        let mut dated = row("g2", "y", "x", 0.0);
        dated.started_at = "2026-11-23T16:05:09.123Z".into();
        let out = to_pgn(
            &[
                row("g\"1", "x", "y", 0.5),
                dated,
                row("g3", "a \"q\" b\\c\nd", "x", 1.0),
            ],
            "demo",
        );
        let pgn = &out.text;
        assert_eq!((out.games, out.skipped), (3, 0));
        assert!(pgn.contains("[White \"x\"]\n[Black \"y\"]\n[Result \"1/2-1/2\"]\n"));
        assert!(pgn.contains("[White \"y\"]\n[Black \"x\"]\n[Result \"0-1\"]\n"));
        assert!(pgn.contains("[Round \"g'1\"]"));
        assert!(pgn.contains("[White \"a 'q' b/c d\"]"));
        assert_eq!(out.renamed.len(), 1);
        assert_eq!(pgn.matches("[Event \"demo\"]").count(), 3);
        assert_eq!(pgn.matches("[Variant \"filo\"]").count(), 3);
        assert_eq!(pgn.matches("[Date \"????.??.??\"]").count(), 2);
        assert!(pgn.contains(
            "[Date \"2026.11.23\"]\n[Round \"g2\"]\n[White \"y\"]\n[Black \"x\"]\n[Result \"0-1\"]\n\
             [Variant \"filo\"]\n[Termination \"store\"]\n[UTCDate \"2026.11.23\"]\n[UTCTime \"16:05:09\"]\n\n0-1\n\n"
        ));
        // Every game: seven tags, then ours, blank line, result, blank line.
        for game in pgn.split("[Event ").skip(1) {
            assert!(game.ends_with("\n\n"), "{game}");
            let game = format!("[Event {game}");
            let lines: Vec<&str> = game.trim_end().lines().collect();
            let tags = lines.len() - 2;
            assert!(tags == 9 || tags == 11, "{game}");
            assert!(lines[..tags]
                .iter()
                .all(|l| l.starts_with('[') && l.ends_with("\"]")));
            assert_eq!(lines[tags], "");
            assert!(["1-0", "0-1", "1/2-1/2"].contains(&lines[tags + 1]));
            assert!(lines[6].contains(lines[tags + 1]));
        }
    }

    #[test]
    fn tables_have_their_columns_and_one_row_per_bot() {
        let rows = vec![row("1", "x", "y", 1.0), row("2", "y", "x", 0.5)];
        let report = rate(&rows, &RateOptions::default()).unwrap();
        let r = ratings_csv(&report).unwrap();
        let lines: Vec<&str> = r.lines().collect();
        assert!(lines[0].starts_with("bot,variant,elo,elo_low,elo_high,games,score,draws"));
        // all + filo, two bots each.
        assert_eq!(lines.len(), 1 + 4);
        assert!(lines[1].starts_with("x,all,"));
        let p = pairs_csv(&report).unwrap();
        assert_eq!(p.lines().count(), 1 + 2);
        let v = variants_csv(&report).unwrap();
        assert!(v
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("filo,2,2,1,0.5000,0.7500"));
        let text = standings_text(&report);
        assert!(text.contains("rank") && text.contains("score%"));
    }
}
