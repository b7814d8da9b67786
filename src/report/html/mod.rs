//! The HTML report of a league: `report/index.html` and its files, one
//! folder that opens from disk (file://) and loads nothing from the
//! network.
//!
//! - `index.html`: standings, crosstables, per-variant statistics,
//!   forfeits and a page per bot, rendered here from the ratings
//!   (`crate::ratings::rate`, the same computation as the CSV tables) with
//!   the minijinja templates of `templates/`; the charts are a few SVG
//!   rectangles drawn by the template, so no chart library is needed.
//! - `report.js`, `report.css` (`assets/`): sortable tables, the game lists
//!   and the game viewer; the browser draws positions, it knows no rule.
//! - `bots/bNNNN.js`: each bot's page (its ratings and forfeits as HTML,
//!   its results against each opponent as data the script lays out: a
//!   short array per opponent and variant), loaded when it is first shown,
//!   so that `index.html` does not grow with the square of the bots; made
//!   and written one at a time.
//! - `games/index.js`: one line of summary per game, and
//!   `games/cNNNN-HASH.js`: the viewer data of a few hundred games each
//!   (every position replayed by the engine here and kept compactly, see
//!   `replay`; gzipped, in base64). Both are scripts that call a global
//!   function (`arenaIndex`, `arenaGamesZ`; `arenaGames` for one game
//!   served alone),
//!   loaded with a `<script>` element when a game list or a game is first
//!   shown: `fetch()` of a local file is blocked in browsers.
//!
//! A chunk's file name holds a hash of its games' rows (which say where
//! each record is) and of the record files of older versions,
//! so a refresh during a league rewrites only the chunks whose games
//! changed (in practice the last one) and the summaries.
//!
//! The rows are read once, one at a time, and never all held
//! (`write_report`; issue 34): each is counted by the ratings
//! (`ratings::Tally`, as `arena rate` counts them), by the page's counts
//! (`view::Counts`: the games, each label's lengths, the forfeits by bot
//! and reason and the first ones listed) and by the sample
//! (`sample::Sampler`, which holds only the rows its rule may still keep:
//! a few thousand at 1,000 bots, whatever the games). `--all-games` keeps
//! every row, as it needs every game's viewer data. `arena view`, which
//! finds any game by its id, keeps where each row is (`GameIndex`: 24
//! bytes a game) and reads it again when asked.
//!
//! Reads results rows and records only; a damaged record is a note in the
//! report, never a panic or an error.

mod replay;
pub mod sample;
mod view;
pub use view::{frag, Options};

use crate::ratings::{RateOptions, RatingError, Tally};
use crate::report::tables::{for_each_merged_from, TablesError};
use crate::results::records::RecordAt;
use crate::results::{analysis, csvio, file_safe, id_hash, GameRow};
use replay::{Chunk, GameMeta};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Games per chunk file of viewer data.
pub const CHUNK: usize = 250;

/// Bumped when the chunk format changes, so that old chunks are rebuilt.
const FORMAT: &str = "arena-report-3";

/// Errors of writing a report.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error(transparent)]
    Tables(#[from] TablesError),
    #[error(transparent)]
    Csv(#[from] csvio::CsvError),
    #[error(transparent)]
    Rating(#[from] RatingError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the report's template: {0}")]
    Template(#[from] minijinja::Error),
    #[error("no games yet in {0}")]
    NoGames(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> HtmlError + '_ {
    move |source| HtmlError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One results folder: its `games.csv`, its records' folder (`games/`:
/// the record logs, or a file per game in folders of older versions) and
/// its analyses' folder (`analysis/`, `results::analysis`).
#[derive(Clone, Debug)]
pub struct Source {
    pub games_csv: PathBuf,
    pub records: PathBuf,
    pub analysis: PathBuf,
}

impl Source {
    /// Where game `game_id`'s analysis is, if it has one.
    pub fn analysis_file(&self, game_id: &str) -> PathBuf {
        analysis::file_of(&self.analysis, game_id)
    }
}

/// What `write_report` did.
#[derive(Debug, Default)]
pub struct Written {
    pub index: PathBuf,
    pub games: usize,
    /// Games whose viewer data the report holds.
    pub shown: usize,
    /// Chunk files built now, and kept from an earlier report.
    pub chunks_built: usize,
    pub chunks_kept: usize,
    /// Games whose record is missing or damaged.
    pub damaged: usize,
    /// Lines skipped while reading games.csv.
    pub warnings: Vec<String>,
}

/// Writes the report of `sources` (one league, or its shards) into `out`
/// (`index.html` and its files; the folder is created). One pass over the
/// rows, which are never all in memory (except with `--all-games`).
pub fn write_report(sources: &[Source], out: &Path, opts: &Options) -> Result<Written, HtmlError> {
    let paths: Vec<PathBuf> = sources.iter().map(|s| s.games_csv.clone()).collect();
    let rate = RateOptions::default();
    let mut c = Collector::new(&rate, opts.all_games);
    c.analysed = sources
        .iter()
        .map(|s| analysis::analysed(&s.analysis))
        .collect();
    let t = std::time::Instant::now();
    let info = for_each_merged_from(&paths, |k, row| c.add(k, row))?;
    tracing::debug!(
        "report: {} rows read and counted in {:.2} s",
        c.counts.games(),
        t.elapsed().as_secs_f64()
    );
    let mut warnings: Vec<String> = info.warnings.iter().map(|w| w.to_string()).collect();
    if info.duplicates > 0 {
        // As `arena rate` says it: a game twice with the same content is
        // one game (shards may overlap), but the count is not hidden.
        warnings.push(format!(
            "{} duplicate rows (a game_id again, the same content) counted once",
            info.duplicates
        ));
    }
    c.write(sources, warnings, out, opts)
}

/// Where each game of a league's sources is, to read its row again when it
/// is asked for (`arena view`): each row's game id hash, source, byte and
/// line, sorted by hash: 24 bytes a game, where the rows themselves took
/// about 600 (issue 34). A game id read from several sources (a shard's
/// duplicates) is found in the first, as the report counts it.
#[derive(Debug, Default)]
pub struct GameIndex {
    places: Vec<Place>,
}

/// Where one row starts: in source `source`, at byte `at`, on line `line`.
#[derive(Clone, Copy, Debug)]
struct Place {
    hash: u64,
    at: u64,
    source: u32,
    line: u32,
}

impl GameIndex {
    /// Reads the rows of `sources` (one league, or its shards) once; a bad
    /// row is the error, with its file and line.
    pub fn build(sources: &[Source]) -> Result<GameIndex, HtmlError> {
        let mut places = Vec::new();
        for (k, s) in sources.iter().enumerate() {
            let mut reader = csvio::RowReader::open(&s.games_csv)?;
            while let Some((line, at, row)) = reader.next_row_at()? {
                places.push(Place {
                    hash: id_hash(&row.game_id),
                    at,
                    source: u32::try_from(k).unwrap_or(u32::MAX),
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                });
            }
        }
        // Stable: of one hash, the first source's rows first, in file order.
        places.sort_by_key(|p| p.hash);
        Ok(GameIndex { places })
    }

    /// No game indexed.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Game `id`'s row, read again from its file, and the source it is in;
    /// `None` when no source has it (or no longer has it where it was).
    pub fn find(
        &self,
        sources: &[Source],
        id: &str,
    ) -> Result<Option<(usize, GameRow)>, HtmlError> {
        let hash = id_hash(id);
        let first = self.places.partition_point(|p| p.hash < hash);
        // Every row of that hash in turn: two ids may share one.
        for p in self.places[first..].iter().take_while(|p| p.hash == hash) {
            let k = p.source as usize;
            let Some(s) = sources.get(k) else { continue };
            if let Some(row) = csvio::row_at(&s.games_csv, p.at, u64::from(p.line))? {
                if row.game_id == id {
                    return Ok(Some((k, row)));
                }
            }
        }
        Ok(None)
    }
}

/// What the report keeps of its rows as they are read, one at a time: the
/// ratings' counts (`ratings::Tally`, as `arena rate`), the page's counts
/// (`view::Counts`), and the rows of the games the viewer will hold (the
/// sample, chosen as it goes, `sample::Sampler`; or, with `--all-games`,
/// every row) with the source each was read from.
struct Collector<'a> {
    tally: Tally<'a>,
    counts: view::Counts,
    sampler: Option<sample::Sampler>,
    /// With `--all-games`: every row, and its source.
    all: Vec<(usize, GameRow)>,
    /// Per source, the games analysed (their files' stems), which the
    /// sample keeps.
    analysed: Vec<std::collections::HashSet<String>>,
}

impl<'a> Collector<'a> {
    fn new(rate: &'a RateOptions, all_games: bool) -> Self {
        Collector {
            tally: Tally::new(rate),
            counts: view::Counts::default(),
            sampler: (!all_games).then(sample::Sampler::default),
            all: Vec::new(),
            analysed: Vec::new(),
        }
    }

    /// Counts the next row, read from source `k`; may take it (leaving
    /// `row` with other allocations).
    fn add(&mut self, k: usize, row: &mut GameRow) {
        self.tally.add(row);
        let listed = self.counts.add(row);
        let analysed = || {
            self.analysed
                .get(k)
                .is_some_and(|a| !a.is_empty() && a.contains(&file_safe(&row.game_id)))
        };
        let kept = if listed {
            Some(sample::Why::Forfeit)
        } else {
            analysed().then_some(sample::Why::Analysed)
        };
        match &mut self.sampler {
            Some(s) => s.add(row, k, kept),
            None => self.all.push((k, std::mem::take(row))),
        }
    }

    /// Rates what was counted and writes the report.
    fn write(
        self,
        sources: &[Source],
        warnings: Vec<String>,
        out: &Path,
        opts: &Options,
    ) -> Result<Written, HtmlError> {
        let Collector {
            tally,
            counts,
            sampler,
            all,
            analysed: _,
        } = self;
        if counts.games() == 0 {
            let names: Vec<String> = sources
                .iter()
                .map(|s| s.games_csv.display().to_string())
                .collect();
            return Err(HtmlError::NoGames(names.join(", ")));
        }
        // The games the viewer holds (with their source and why they are in
        // the sample): all, or the sample (with the forfeits the page lists
        // one by one, so that their links lead to a game).
        let (chosen, whys): (Vec<(usize, GameRow)>, Vec<Option<sample::Why>>) = match sampler {
            Some(s) => s
                .finish()
                .into_iter()
                .map(|(_, w, r, k)| ((k, r), Some(w)))
                .unzip(),
            None => all.into_iter().map(|x| (x, None)).unzip(),
        };
        let (from, shown): (Vec<usize>, Vec<GameRow>) = chosen.into_iter().unzip();
        write_rated(
            tally,
            &counts,
            Shown {
                rows: &shown,
                from: &from,
                whys: &whys,
            },
            sources,
            warnings,
            out,
            opts,
        )
    }
}

/// The games the viewer holds: their rows, the source each was read from
/// and why each is in the sample.
struct Shown<'a> {
    rows: &'a [GameRow],
    from: &'a [usize],
    whys: &'a [Option<sample::Why>],
}

/// The report from the counts of every game (`tally`, `counts`) and the
/// games the viewer holds (`shown`).
#[allow(clippy::too_many_arguments)]
fn write_rated(
    tally: Tally,
    counts: &view::Counts,
    shown: Shown,
    sources: &[Source],
    warnings: Vec<String>,
    out: &Path,
    opts: &Options,
) -> Result<Written, HtmlError> {
    let mut written = Written {
        warnings,
        ..Default::default()
    };
    // The first-seat advantage with its interval, per variant label, from
    // the fit that models it (the standings stay those of ratings.csv),
    // from the same count of the games.
    let t = std::time::Instant::now();
    let (report, seat) = tally.report_with_seat_advantage()?;
    let step = |what: &str, t: &mut std::time::Instant| {
        tracing::debug!("report: {what} in {:.2} s", t.elapsed().as_secs_f64());
        *t = std::time::Instant::now();
    };
    let mut t = t;
    step("rated (with the seat-advantage fit)", &mut t);

    let games_dir = out.join("games");
    std::fs::create_dir_all(&games_dir).map_err(io(&games_dir))?;
    // Where each shown game's record is: its source's records folder.
    let place: HashMap<&str, usize> = shown
        .rows
        .iter()
        .zip(shown.from)
        .map(|(r, &k)| (r.game_id.as_str(), k))
        .collect();
    let record_of = |row: &GameRow| {
        let Some(s) = place
            .get(row.game_id.as_str())
            .and_then(|&k| sources.get(k))
        else {
            return (None, None);
        };
        (
            RecordAt::of(&s.records, row),
            Some(s.analysis_file(&row.game_id)),
        )
    };
    let (chunk_files, shown_metas) = viewer_chunks(
        shown.rows,
        &games_dir,
        &record_of,
        opts.threads,
        &mut written,
    )?;
    written.damaged = shown_metas.iter().filter(|m| m.note.is_some()).count();
    written.shown = shown.rows.len();
    step("viewer data", &mut t);

    let stamp = format!(
        "{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let index_js = games_dir.join("index.js");
    write_atomic(
        &index_js,
        game_index(shown.rows, &shown_metas, &chunk_files, shown.whys).as_bytes(),
    )?;
    remove_stale(&games_dir, &chunk_files);
    step("game index", &mut t);

    for (name, text) in [("report.js", REPORT_JS), ("report.css", REPORT_CSS)] {
        write_atomic(&out.join(name), text.as_bytes())?;
    }
    let note = (!opts.all_games).then(|| view::SampleNote {
        shown: shown.rows.len(),
        total: counts.games(),
        rule: sample::rule(),
    });
    let page = view::page(
        &report,
        Some(&seat),
        counts,
        shown.rows,
        &shown_metas,
        opts,
        &stamp,
        &written.warnings,
        note,
    );
    step("page model", &mut t);
    write_bot_pages(out, &view::BotPages::of(&report, &page), opts.threads)?;
    step("bots' pages", &mut t);
    let html = render(&page)?;
    let index = out.join("index.html");
    write_atomic(&index, html.as_bytes())?;
    step("index.html", &mut t);
    written.index = index;
    written.games = counts.games();
    Ok(written)
}

/// Marks the report in `out` as that of a league stopped before its end
/// (`arena run` interrupted, which leaves the report's refresh to `arena
/// report`): its page no longer says "running" nor reloads itself.
/// Returns whether there was such a mark; a report written as complete,
/// or none at all, is left as it is.
pub fn mark_stopped(out: &Path) -> Result<bool, HtmlError> {
    let index = out.join("index.html");
    let html = match std::fs::read_to_string(&index) {
        Ok(h) => h,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io(&index)(e)),
    };
    if !html.contains(view::LIVE_NOTE) {
        return Ok(false);
    }
    let html = html.replacen(view::LIVE_NOTE, view::STOPPED_NOTE, 1);
    write_atomic(&index, html.as_bytes())?;
    Ok(true)
}

/// Where a row's record is, and where its analysis would be.
type RecordOf<'a> = dyn Fn(&GameRow) -> (Option<RecordAt>, Option<PathBuf>) + Sync + 'a;

/// The viewer data of `rows` in `games_dir`, a chunk file per `CHUNK`
/// games: kept where their hash matches, built where missing, `threads`
/// at once (counted in `written`). Returns the chunks' names and every
/// game's meta.
fn viewer_chunks(
    rows: &[GameRow],
    games_dir: &Path,
    record_of: &RecordOf,
    threads: usize,
    written: &mut Written,
) -> Result<(Vec<String>, Vec<GameMeta>), HtmlError> {
    let mut chunk_files = Vec::new();
    let mut done: Vec<Option<Vec<GameMeta>>> = Vec::new();
    for (k, chunk) in rows.chunks(CHUNK).enumerate() {
        let name = chunk_name(k, chunk, record_of);
        let kept = std::fs::read(games_dir.join(format!("{name}.json")))
            .ok()
            .filter(|_| games_dir.join(format!("{name}.js")).is_file())
            .and_then(|b| serde_json::from_slice::<Vec<GameMeta>>(&b).ok())
            .filter(|m| m.len() == chunk.len());
        done.push(kept);
        chunk_files.push(name);
    }
    let todo: Vec<usize> = (0..done.len()).filter(|&k| done[k].is_none()).collect();
    written.chunks_kept = done.len() - todo.len();
    written.chunks_built = todo.len();
    let built = build_chunks(rows, &todo, &chunk_files, games_dir, record_of, threads)?;
    for (k, m) in built {
        done[k] = Some(m);
    }
    let metas: Vec<GameMeta> = done
        .into_iter()
        .zip(rows.chunks(CHUNK))
        .flat_map(|(m, chunk)| m.unwrap_or_else(|| vec![GameMeta::default(); chunk.len()]))
        .collect();
    Ok((chunk_files, metas))
}

/// The file name of chunk `k`: a hash of its rows, of the record files of
/// older versions and of the analysis files.
fn chunk_name(k: usize, chunk: &[GameRow], record_of: &RecordOf) -> String {
    let mut h = Fnv::new();
    h.write(FORMAT.as_bytes());
    for row in chunk {
        // The row names its record's place in a log, whose bytes never
        // change; a file of its own (older versions) by size and time.
        h.write(serde_json::to_string(row).unwrap_or_default().as_bytes());
        let (record, analysis) = record_of(row);
        let file = match record {
            Some(RecordAt::File(p)) => Some(p),
            _ => None,
        };
        for m in [file, analysis]
            .into_iter()
            .flatten()
            .filter_map(|p| std::fs::metadata(p).ok())
        {
            h.write(&m.len().to_le_bytes());
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            h.write(&t.map_or(0, |t| t.as_nanos()).to_le_bytes());
        }
    }
    format!("c{k:04}-{:016x}", h.finish())
}

/// Builds and writes the chunks `todo` (named `names`) on `threads`
/// threads at once; returns each one's metas.
fn build_chunks(
    rows: &[GameRow],
    todo: &[usize],
    names: &[String],
    games_dir: &Path,
    record_of: &RecordOf,
    threads: usize,
) -> Result<Vec<(usize, Vec<GameMeta>)>, HtmlError> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let built = std::sync::Mutex::new(Vec::new());
    let work = || -> Result<(), HtmlError> {
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&k) = todo.get(i) else {
                return Ok(());
            };
            let chunk = &rows[k * CHUNK..((k + 1) * CHUNK).min(rows.len())];
            let (text, m) = build_chunk(k, chunk, record_of);
            let name = &names[k];
            write_atomic(&games_dir.join(format!("{name}.js")), text.as_bytes())?;
            let meta_text = serde_json::to_vec(&m).unwrap_or_default();
            write_atomic(&games_dir.join(format!("{name}.json")), &meta_text)?;
            if let Ok(mut b) = built.lock() {
                b.push((k, m));
            }
        }
    };
    let threads = threads.clamp(1, todo.len().max(1));
    on_threads(threads, &work, games_dir, "building the viewer data")?;
    Ok(built.into_inner().unwrap_or_default())
}

/// Runs `work` on `threads` threads at once (each takes its share of a
/// common list); the first error, or a thread that panicked (`what` it
/// was doing, in `path`).
fn on_threads(
    threads: usize,
    work: &(dyn Fn() -> Result<(), HtmlError> + Sync),
    path: &Path,
    what: &str,
) -> Result<(), HtmlError> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(HtmlError::Io {
                        path: path.to_path_buf(),
                        source: std::io::Error::other(format!("a thread {what} failed")),
                    })
                })
            })
            .collect::<Result<Vec<()>, HtmlError>>()
    })?;
    Ok(())
}

/// The page from its template.
fn render(page: &view::Page) -> Result<String, minijinja::Error> {
    templates()?
        .get_template("index.html")?
        .render(minijinja::value::Serde(page))
}

fn templates() -> Result<minijinja::Environment<'static>, minijinja::Error> {
    let mut env = minijinja::Environment::new();
    env.add_template("index.html", include_str!("templates/index.html"))?;
    env.add_template("bot.html", include_str!("templates/bot.html"))?;
    Ok(env)
}

/// Each bot's page in its own file (`bots/bNNNN.js`, a script calling
/// `arenaBot` with its page's HTML and its results against each opponent
/// as data), made and written one at a time on each of `threads` threads,
/// and no file of a bot the report no longer has.
fn write_bot_pages(out: &Path, pages: &view::BotPages, threads: usize) -> Result<(), HtmlError> {
    /// A bot's file's data, serialized as it is written.
    #[derive(serde::Serialize)]
    struct BotFile<'b> {
        bot: &'b str,
        html: &'b str,
        labels: &'b [(String, String)],
        opponents: &'b [view::OppLine<'b>],
    }
    let dir = out.join("bots");
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let keep = std::sync::Mutex::new(BTreeSet::new());
    let work = || -> Result<(), HtmlError> {
        let env = templates()?;
        let template = env.get_template("bot.html")?;
        let mut text = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(b) = pages.page(k) else {
                return Ok(());
            };
            let html = template.render(minijinja::context! {
                b => minijinja::value::Serde(&b),
                confidence => format!("{:.0}%", crate::ratings::CONFIDENCE * 100.0),
            })?;
            text.clear();
            text.extend_from_slice(b"arenaBot(");
            let file = BotFile {
                bot: &b.bot,
                html: &html,
                labels: &b.labels,
                opponents: &b.opponents,
            };
            // Serializing into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut text, &file);
            text.extend_from_slice(b");\n");
            let path = out.join(&b.file);
            write_atomic(&path, &text)?;
            if let (Ok(mut keep), Some(name)) = (keep.lock(), path.file_name()) {
                keep.insert(name.to_string_lossy().into_owned());
            }
        }
    };
    let threads = threads.clamp(1, pages.bots().max(1));
    on_threads(threads, &work, &dir, "writing the bots' pages")?;
    let keep = keep.into_inner().unwrap_or_default();
    remove_files(&dir, |name| {
        name.starts_with('b') && name.ends_with(".js") && !keep.contains(name)
    });
    Ok(())
}

/// The viewer data of one chunk of games (a script calling `arenaGames`),
/// and each game's meta.
fn build_chunk(k: usize, rows: &[GameRow], record_of: &RecordOf) -> (String, Vec<GameMeta>) {
    let (body, metas) = chunk_body(k.into(), rows, &|row| {
        let (record, analysis) = record_of(row);
        Texts {
            record: record_text(record),
            analysis: analysis.and_then(|p| analysis::read(&p)),
        }
    });
    (gzip_script(k, &body), metas)
}

/// A chunk's data as a script that hands them over gzipped, in base64
/// (`arenaGamesZ(K, "...")`, which the page inflates with the browser's
/// `DecompressionStream`): the data's JSON (its length first, 4 bytes
/// little-endian) followed by its streams (`replay`), all inside the gzip.
fn gzip_script(k: usize, body: &ChunkData) -> String {
    use std::io::Write as _;
    let head = Value::Object(body.head.clone()).to_string();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = gz.write_all(&(head.len() as u32).to_le_bytes());
    let _ = gz.write_all(head.as_bytes());
    let _ = gz.write_all(&body.streams);
    let bytes = gz.finish().unwrap_or_default();
    format!("arenaGamesZ({k},\"{}\");\n", base64(&bytes))
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(c.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(c.get(2).copied().unwrap_or(0));
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= c.len() {
                out.push(char::from(ABC[(n >> shift) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A record's text: `Ok(None)` when it is missing, `Err(why)` when it is
/// there but cannot be read (a damaged frame, a range past the end of its
/// log), with why and where.
pub fn record_text(at: Option<RecordAt>) -> Result<Option<String>, String> {
    match at.map(|at| (at.read_text(), at)) {
        Some((Err(e), at)) if at.path().is_file() => Err(format!(
            "the record cannot be read: {}: {e}",
            at.path().display()
        )),
        Some((Ok(text), _)) => Ok(Some(text)),
        _ => Ok(None),
    }
}

/// What the viewer shows of a game beside its row.
#[derive(Clone)]
pub struct Texts {
    /// Its record's text: `Ok(None)` when it is missing, `Err(why)` when it
    /// is there but cannot be read.
    pub record: Result<Option<String>, String>,
    /// Its analysis (`results::analysis::read`): `None` when it has none,
    /// `Err(why)` when it cannot be read.
    pub analysis: Option<Result<Value, String>>,
}

/// A row's texts.
type TextOf<'a> = dyn Fn(&GameRow) -> Texts + 'a;

/// A chunk as the plain script `arenaGames(...)` (its streams in base64
/// as `data`), each record's text given by `text_of`.
fn build_chunk_of(k: Value, rows: &[GameRow], text_of: &TextOf) -> (String, Vec<GameMeta>) {
    let (mut body, metas) = chunk_body(k, rows, text_of);
    body.head
        .insert("data".into(), Value::from(base64(&body.streams)));
    (
        format!("arenaGames({});\n", Value::Object(body.head)),
        metas,
    )
}

/// A chunk's viewer data: its JSON (`chunk`, the tables, the streams'
/// lengths, `games`: each game's summary) and its streams' bytes.
struct ChunkData {
    head: serde_json::Map<String, Value>,
    streams: Vec<u8>,
}

/// What a game's row says of it, for the viewer of a game whose record
/// cannot be shown (its variant, seats, seed and result were blank).
fn from_row(g: &mut serde_json::Map<String, Value>, row: &GameRow) {
    g.insert("variant".into(), row.variant.clone().into());
    g.insert("players".into(), row.players.into());
    g.insert("names".into(), serde_json::json!(row.seats()));
    g.insert("seed".into(), row.seed.to_string().into());
    g.insert(
        "end".into(),
        serde_json::json!({
            "scores": row.scores(),
            "reason": row.reason,
            "offender": row.offender,
            "plies": row.plies,
        }),
    );
}

/// The viewer data of a chunk of games (`k` names it), each record's text
/// given by `text_of`, and each game's meta.
fn chunk_body(k: Value, rows: &[GameRow], text_of: &TextOf) -> (ChunkData, Vec<GameMeta>) {
    let mut chunk = Chunk::default();
    let mut games = Vec::with_capacity(rows.len());
    let mut metas = Vec::with_capacity(rows.len());
    for row in rows {
        let texts = text_of(row);
        let (mut data, meta) = match texts.record {
            Err(note) => replay::damaged(&row.game_id, note),
            Ok(text) => replay::game_data(&row.game_id, text.as_deref(), &mut chunk),
        };
        // A game whose record cannot be shown is still what its row says.
        if let Value::Object(g) = &mut data {
            if !g.contains_key("variant") {
                from_row(g, row);
            }
        }
        // Each decision's verdict, which the viewer shows beside it.
        if let (Value::Object(g), Some(a)) = (&mut data, texts.analysis) {
            match a {
                Ok(a) => g.insert("analysis".into(), a),
                Err(why) => g.insert("analysis_note".into(), why.into()),
            };
        }
        games.push(data);
        metas.push(meta);
    }
    let (tables, streams) = chunk.finish();
    // The keys in byte order (serde_json's map), so `chunk` comes first.
    let mut head = serde_json::Map::new();
    head.insert("chunk".into(), k);
    head.extend(tables);
    head.insert("games".into(), Value::Array(games));
    (ChunkData { head, streams }, metas)
}

/// The viewer's data for one game shown on a page of its own (the ladder
/// service's game page): the scripts the report loads from
/// `games/index.js` and its chunk file, with this game only.
#[derive(Clone, Debug)]
pub struct OneGame {
    /// A script calling `arenaIndex(...)` with this one game, in chunk 0.
    pub index: String,
    /// A script calling `arenaGames(...)`: the game replayed by the engine.
    pub chunk: String,
}

/// The viewer's data for `row`'s game from its record's text (`None`: the
/// record is missing, which the viewer shows as a note) and its analysis
/// if it has one, the index naming its chunk `chunk_name`. The same code
/// as the report's files, so the report's `report.js` shows it unchanged.
pub fn one_game(
    row: &GameRow,
    record: Option<&str>,
    analysis: Option<Value>,
    chunk_name: &str,
) -> OneGame {
    let rows = std::slice::from_ref(row);
    let (chunk, metas) = build_chunk_of(0.into(), rows, &|_| Texts {
        record: Ok(record.map(str::to_string)),
        analysis: analysis.clone().map(Ok),
    });
    OneGame {
        index: game_index(rows, &metas, &[chunk_name.to_string()], &[]),
        chunk,
    }
}

/// The viewer's data for a game the report does not hold, served on
/// demand by `arena view` (`games/one/ID`): a script calling
/// `arenaGames(...)` with this one game, in the chunk named `one:ID`,
/// replayed by the engine from its texts, as the report's chunks are.
pub fn on_demand_game(row: &GameRow, texts: Texts) -> String {
    let key = Value::from(format!("one:{}", row.game_id));
    build_chunk_of(key, std::slice::from_ref(row), &|_| texts.clone()).0
}

/// The report's script (`report.js`: tables, views, the game viewer).
pub const REPORT_JS: &str = include_str!("assets/report.js");

/// The report's style sheet (`report.css`).
pub const REPORT_CSS: &str = include_str!("assets/report.css");

/// `games/index.js`: every game the report holds in one line (ids, labels,
/// bots and reasons as indexes into tables; why it is in the sample, when
/// `whys` says).
fn game_index(
    rows: &[GameRow],
    metas: &[GameMeta],
    chunks: &[String],
    whys: &[Option<sample::Why>],
) -> String {
    let mut bots = Interner::default();
    let mut labels = Interner::default();
    let mut reasons = Interner::default();
    let games: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let seats: Vec<usize> = r.seats().iter().map(|b| bots.id(b)).collect();
            let damaged = metas.get(i).is_some_and(|m| m.note.is_some());
            json!([
                r.game_id,
                labels.id(&crate::ratings::variant_label(r)),
                seats,
                r.scores(),
                reasons.id(&r.reason),
                r.offender.map_or(-1, i64::from),
                r.plies,
                r.duration_ms,
                i / CHUNK,
                u8::from(damaged),
                whys.get(i).copied().flatten().map_or("", sample::Why::word),
            ])
        })
        .collect();
    let body = json!({
        "bots": bots.names,
        "labels": labels.names,
        "reasons": reasons.names,
        "chunks": chunks,
        "games": games,
    });
    format!("arenaIndex({body});\n")
}

#[derive(Default)]
struct Interner {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Interner {
    fn id(&mut self, s: &str) -> usize {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.names.push(s.to_string());
        self.index.insert(s.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }
}

/// Removes chunk files of earlier reports that no game refers to now.
fn remove_stale(dir: &Path, keep: &[String]) {
    let keep: BTreeSet<&str> = keep.iter().map(String::as_str).collect();
    remove_files(dir, |name| {
        let stem = name
            .strip_suffix(".js")
            .or_else(|| name.strip_suffix(".json"));
        stem.is_some_and(|s| s.starts_with('c') && s.contains('-') && !keep.contains(s))
    });
}

/// Removes the files of `dir` whose name is `stale`.
fn remove_files(dir: &Path, stale: impl Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if stale(&e.file_name().to_string_lossy()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Writes `path` into place ([`crate::files::write_file`]), so that a
/// browser reading the report meanwhile sees the old file or the new one;
/// two writers at once (a league's refresh, `arena report` by hand) each
/// have their own temporary file.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), HtmlError> {
    crate::files::write_file(path, bytes).map_err(io(path))
}

/// FNV-1a, 64 bits: a hash that stays the same across runs and builds.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_one() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    /// One game's scripts name it, its chunk, and say why a missing or
    /// unreadable record cannot be shown, as the report's files do.
    #[test]
    fn one_game_gives_the_index_and_chunk_of_that_game() {
        let row = GameRow {
            game_id: "game-7".into(),
            variant: "kisolo".into(),
            seat0: "a@1".into(),
            seat1: "b@1".into(),
            ..Default::default()
        };
        let g = one_game(&row, None, None, "here");
        let index = g.index.strip_prefix("arenaIndex(").unwrap();
        let index: Value =
            serde_json::from_str(index.trim_end().strip_suffix(");").unwrap()).unwrap();
        assert_eq!(index["chunks"], json!(["here"]));
        assert_eq!(index["games"][0][0], "game-7");
        assert_eq!(index["bots"], json!(["a@1", "b@1"]));
        assert_eq!(index["games"][0][9], 1, "a missing record is flagged");
        assert!(g.chunk.starts_with("arenaGames({\"chunk\":0"));
        assert!(g.chunk.contains("its record is missing"));
        let bad = one_game(&row, Some("not a record"), None, "here");
        assert!(
            bad.chunk.contains("the record cannot be read"),
            "{}",
            bad.chunk
        );
    }
}
