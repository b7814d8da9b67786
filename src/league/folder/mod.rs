//! A league's results folder, and the one place a game becomes part of the
//! results.
//!
//! [`Layout`] owns the folder's layout (no path strings elsewhere):
//! `games.csv` (one row per game), `games/records-NNNN.jsonl.zst` (the
//! record logs, a zstd frame per game, see [`records`]; plain
//! `records-NNNN.jsonl` logs and `games/GAME_ID.jsonl` in folders of older
//! versions), `logs/` (the bots' stderr), and `league.json`, which ties the
//! folder to one schedule so that a resume never mixes two leagues.
//!
//! [`ResultsDir::commit`]`(record, row)` is the only commit point, called by
//! one ordered writer (the league's main thread): the record is appended to
//! the record log, then the row, which says where the record is, is
//! appended and flushed. A row therefore always has its whole record; a
//! record without a row is a game that is not done and will be played
//! again (its bytes are cut from the log on resume). Any I/O error is
//! returned to the runner, which stops the league.
//!
//! On open, a torn last line (a run killed mid-write) is cut off;
//! [`ResultsDir::check`] then reads the rows once, one at a time: the
//! games whose rows are complete and match the schedule are done (a bit
//! each, [`DoneSet`]), every other game is (re)run.
//!
//! The rooms: `layout` (paths and errors), `meta` (league.json, read by
//! everyone through [`read_meta`]), `lock`, `records` (the record logs),
//! `rows` (reading and checking games.csv), `shards`; this file opens and
//! writes the folder. None of them imports this file.

mod layout;
mod lock;
mod meta;
pub mod records;
mod rows;
mod shards;

use crate::files::NewFile;
use crate::league::schedule::Shard;
pub use crate::results::store::DoneSet;
use crate::results::store::Store;
use crate::results::{csvio, GameRow};
pub(crate) use layout::io;
pub use layout::{Layout, StoreError};
use lock::lock;
pub use lock::{holder_is_gone, holder_paused, lock_holder, released_here, HeldHere};
pub use meta::{read_meta, LeagueMeta, NotedFormat, PlayedUnder, RoundsChange};
use records::{Frame, RecordAt};
use rows::{append_to, header_of, record_problem, Header, RowAppender};
pub use rows::{repair_torn_tail, scan_rows, write_atomically, Expected, Rejected};
pub use shards::{
    check_one_league, check_siblings, league_shards, one_league, shard_dirs, shard_folders,
    sibling_shards, Gathered,
};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::path::Path;

/// An open results folder, written by one writer: the run that holds its
/// lock.
pub struct ResultsDir {
    layout: Layout,
    /// Held open for the whole run: the kernel releases the lock when the
    /// process ends, however it ends.
    _lock: lock::Lock,
    csv: RowAppender,
    /// The record log appended to, opened at the first commit.
    log: Option<records::Appender>,
    /// A log is rolled once it holds this many bytes.
    roll_bytes: u64,
    /// The games with a row that `check` accepted (and those committed
    /// since), by schedule index: the one set of done games.
    done: DoneSet,
    /// Bytes cut off a torn last line on open (0 if the file was whole).
    pub repaired_bytes: u64,
    /// Bytes of records without a row cut off the record logs by `check`
    /// (or, when it refused rows, by `set_aside`).
    pub cut_record_bytes: u64,
    /// Per record log, the end of its last record with a row, as `check`
    /// found it; used (and emptied) by the cut.
    committed_ends: HashMap<String, u64>,
    /// What changed since the league started that does not stop a resume.
    pub warnings: Vec<String>,
    /// How this run plays the games otherwise than the league's last run
    /// (the sandbox, a bot's command or settings): noted in league.json
    /// once it plays ([`ResultsDir::note_played_under`]).
    noted: Option<meta::Noted>,
    /// The league.json to write once the rows pass `check` (or are set
    /// aside): the folder had games but none ([`meta::Settled`]).
    unwritten: Option<LeagueMeta>,
    /// Bytes of the record logs found with no games.csv beside them (it
    /// was deleted): the run refuses them unless `--repair`
    /// ([`ResultsDir::refuse_rows_gone`]).
    orphaned_record_bytes: u64,
}

impl ResultsDir {
    /// Opens (creating if needed) the folder for `meta` and locks it for
    /// this run. Fails if another run holds it, or if it holds results of a
    /// different schedule.
    pub fn open(dir: &Path, meta: &LeagueMeta) -> Result<ResultsDir, StoreError> {
        let layout = Layout::new(dir);
        refuse_foreign_folder(&layout)?;
        make_folder(&layout.records())?;
        make_folder(&layout.logs())?;
        let lock = lock(&layout)?;
        sweep_leftovers(&layout);
        let meta::Settled {
            warnings,
            noted,
            unwritten,
        } = meta::settle(&layout, meta)?;

        let csv_path = layout.games_csv();
        // A run makes games.csv as it opens the folder: record logs holding
        // games with no games.csv beside them mean it was deleted (or moved
        // away), and every game of those logs would be played again.
        let orphaned = match std::fs::symlink_metadata(&csv_path) {
            Err(_) => records::logs(&layout.records())
                .iter()
                .filter_map(|(_, p)| std::fs::metadata(p).ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum(),
            Ok(_) => 0,
        };
        refuse_a_file_not_csv(&csv_path)?;
        let tail = repair_torn_tail(&csv_path)?;
        let exists = csv_path.metadata().map(|m| m.len() > 0).unwrap_or(false);
        if exists {
            // Its header read before anything is appended under it.
            csvio::RowReader::open(&csv_path).map_err(|e| match e {
                e @ csvio::CsvError::Row { .. } => StoreError::BadHeader(e),
                e => StoreError::Csv(e),
            })?;
        }
        let csv = RowAppender::open(&csv_path, !exists)?;
        let header = match exists {
            true => header_of(&csv_path),
            false => Header::Ours,
        };
        let mut store = ResultsDir {
            layout,
            _lock: lock,
            csv,
            log: None,
            roll_bytes: records::ROLL_BYTES,
            done: DoneSet::default(),
            repaired_bytes: tail.cut,
            cut_record_bytes: 0,
            committed_ends: HashMap::new(),
            warnings,
            noted,
            unwritten,
            orphaned_record_bytes: orphaned,
        };
        if tail.completed {
            store.warnings.push(format!(
                "{}: its last row had no newline at the end: one was added, and the row kept",
                csv_path.display()
            ));
        }
        match header {
            Header::Ours => {}
            Header::Older => {
                // New rows carry the added columns: the header must name them.
                let rows = store.rewrite(&BTreeSet::new())?;
                store.warnings.push(format!(
                    "{}: added the columns {} of this version; its {rows} earlier rows have them empty",
                    csv_path.display(),
                    csvio::ADDED_COLUMNS.join(", "),
                ));
            }
            Header::Other(others) => {
                // New rows are appended in this version's order: the rows
                // there are rewritten in it first (read by their columns'
                // names), the file as it was kept beside.
                // A name no earlier rewrite took (games.csv.orig, then
                // games.csv.orig.2, ...): each keeps columns of its own.
                let kept = (1..)
                    .map(|n| match n {
                        1 => csv_path.with_extension("csv.orig"),
                        n => csv_path.with_extension(format!("csv.orig.{n}")),
                    })
                    .find(|p| std::fs::symlink_metadata(p).is_err())
                    .unwrap_or_else(|| csv_path.with_extension("csv.orig"));
                std::fs::copy(&csv_path, &kept).map_err(io(&kept))?;
                // Refused (a row it cannot read): the file is as it was,
                // and no copy of it is left beside it.
                let rows = store.rewrite(&BTreeSet::new()).inspect_err(|_| {
                    let _ = std::fs::remove_file(&kept);
                })?;
                let dropped = match others.is_empty() {
                    true => String::new(),
                    false => format!(
                        " without the columns arena does not write ({})",
                        others
                            .iter()
                            .map(|c| match c.trim().is_empty() {
                                true => "an unnamed column: pandas' index?".to_string(),
                                false => format!("`{c}`"),
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                store.warnings.push(format!(
                    "{}: its columns were not arena's, in arena's order (a file saved by a spreadsheet or pandas?): its {rows} rows rewritten in arena's order{dropped}; the file as it was is {}",
                    csv_path.display(),
                    kept.display(),
                ));
            }
        }
        Ok(store)
    }

    /// Reads games.csv once, row by row, and checks each row against the
    /// schedule: a game id the schedule does not hold, a game id seen
    /// twice (every copy: which one is true cannot be told), a variant or
    /// seats other than the schedule's, or a record that is not there (its
    /// log too short, its file missing). Only the last row's record is
    /// read and compared with its row: a resume costs one pass over the
    /// rows, not a read of every record. The rows that pass are the done
    /// games ([`ResultsDir::done`]); the bytes of the record logs after the
    /// last record with a row are cut. Returns the rows that fail, with
    /// their lines.
    pub fn check(
        &mut self,
        schedule: &dyn Fn(&str) -> Option<Expected>,
    ) -> Result<Vec<Rejected>, StoreError> {
        let csv_path = self.layout.games_csv();
        let games = self.layout.records();
        let mut done = DoneSet::default();
        let mut seen = DoneSet::default();
        let mut twice: HashSet<String> = HashSet::new();
        let mut rejected: Vec<Rejected> = Vec::new();
        let mut ends: HashMap<String, u64> = HashMap::new();
        // Each log's length, by name, looked up once.
        let mut lens: HashMap<String, Option<u64>> = HashMap::new();
        let mut last: Option<(u64, GameRow)> = None;
        scan_rows(&csv_path, &mut |line, row| {
            let place = place_problem(&games, row, &mut lens, &mut ends);
            let expected = schedule(&row.game_id);
            let why = match &expected {
                None => Some("the schedule has no game with this id".to_string()),
                Some(e) if !seen.insert(e.index) => {
                    twice.insert(row.game_id.clone());
                    None
                }
                Some(e) if e.variant != row.variant => Some(format!(
                    "the schedule plays {} in this game, the row says {}",
                    e.variant, row.variant
                )),
                Some(e) if e.seats.iter().map(String::as_str).ne(row.seats()) => Some(format!(
                    "the schedule seats {} in this game, the row says {}",
                    e.seats.join(", "),
                    row.seats().join(", ")
                )),
                Some(Expected { seed: Some(s), .. }) if *s != row.seed => Some(format!(
                    "the schedule's seed of this game is {s}, the row says {}: a game of a league of another seed",
                    row.seed
                )),
                Some(Expected {
                    opening: Some(o), ..
                }) if *o != row.opening => Some(format!(
                    "the schedule opens this game with `{o}`, the row with `{}`: a game of a league of other openings",
                    row.opening
                )),
                Some(_) => place,
            };
            match (why, expected) {
                (Some(why), _) => rejected.push(Rejected {
                    line,
                    row: row.clone(),
                    why,
                }),
                (None, Some(e)) => {
                    if !twice.contains(&row.game_id) {
                        done.insert(e.index);
                        last = Some((line, row.clone()));
                    }
                }
                (None, None) => {}
            }
            Ok(())
        })
        .map_err(|e| match e {
            StoreError::Csv(e) => StoreError::Unreadable(e),
            e => e,
        })?;
        if !twice.is_empty() {
            reject_copies(&csv_path, &twice, schedule, &mut done, &mut rejected)?;
            if last
                .as_ref()
                .is_some_and(|(_, r)| twice.contains(&r.game_id))
            {
                last = None;
            }
        }
        // The last row's record, read whole: the one a crash could have
        // torn (any other was followed by a row written after it).
        if let Some((line, row)) = last {
            let why = RecordAt::of(&games, &row).and_then(|at| record_problem(&at, &row));
            if let Some(why) = why {
                if let Some(e) = schedule(&row.game_id) {
                    done.remove(e.index);
                }
                rejected.push(Rejected { line, row, why });
            }
        }
        rejected.sort_by_key(|r| r.line);
        self.done = done;
        self.committed_ends = ends;
        // With rows refused, the run may stop here: nothing is changed
        // until they are set aside.
        if rejected.is_empty() {
            self.cut_uncommitted()?;
            self.write_unwritten()?;
        }
        Ok(rejected)
    }

    /// The refusal of a folder whose games.csv is gone while its record
    /// logs hold games: a resume would play them all again, unsaid.
    pub fn refuse_rows_gone(&self) -> Result<(), StoreError> {
        if self.orphaned_record_bytes == 0 {
            return Ok(());
        }
        // The empty games.csv `open` made goes again: the next run must
        // find it missing too, not take the folder for one without games.
        let csv = self.layout.games_csv();
        if std::fs::metadata(&csv).is_ok_and(|m| m.len() == 0) {
            let _ = std::fs::remove_file(&csv);
        }
        Err(StoreError::Mismatch {
            path: csv,
            why: format!(
                "missing, while the record logs in {} hold {} bytes of games: without their rows those games would all be played again. Put games.csv back (from a backup, or where it was moved), and run the same command again; or, to play them again, run it with --repair (the records are kept in {})",
                self.layout.records().display(),
                self.orphaned_record_bytes,
                self.layout.uncommitted_frames().display()
            ),
        })
    }

    /// Writes the league.json that `open` left unwritten, if any.
    fn write_unwritten(&mut self) -> Result<(), StoreError> {
        match self.unwritten.take() {
            Some(meta) => meta::write_meta(&self.layout.league_json(), &meta),
            None => Ok(()),
        }
    }

    /// Cuts the bytes of the record logs after the last record with a row
    /// (as `check` found them), kept aside ([`records::cut_uncommitted`]).
    fn cut_uncommitted(&mut self) -> Result<(), StoreError> {
        let ends = std::mem::take(&mut self.committed_ends);
        self.cut_record_bytes += records::cut_uncommitted(
            &self.layout.records(),
            &|name| ends.get(name).copied().unwrap_or(0),
            (
                &self.layout.uncommitted_records(),
                &self.layout.uncommitted_frames(),
            ),
        )?;
        Ok(())
    }

    /// Sets `rejected` rows aside: appends them, with why, to
    /// `rejected.csv`, and rewrites games.csv without them (a temporary
    /// file and a rename), so that their games are played again.
    pub fn set_aside(&mut self, rejected: &[Rejected]) -> Result<(), StoreError> {
        if rejected.is_empty() {
            return Ok(());
        }
        // What `check` left for this moment: the run goes on.
        self.cut_uncommitted()?;
        self.write_unwritten()?;
        let path = self.layout.rejected_csv();
        let fresh = !path.exists();
        let mut out = append_to(&path, false)?;
        let err = |e: csv::Error| StoreError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        };
        if fresh {
            let mut header: Vec<&str> = csvio::all_columns().collect();
            header.push("rejected_because");
            out.write_record(&header).map_err(err)?;
        }
        for r in rejected {
            out.serialize((&r.row, &r.why)).map_err(err)?;
        }
        out.flush().map_err(io(&path))?;

        let lines: BTreeSet<u64> = rejected.iter().map(|r| r.line).collect();
        self.rewrite(&lines).map(|_| ())
    }

    /// Writes games.csv anew under the current header without the rows
    /// on lines `skip` (a [`NewFile`] put in its place; rows read and
    /// written one at a time), and appends to the new file from now.
    /// Returns the rows kept. On any failure games.csv is untouched: the
    /// half-written copy goes.
    fn rewrite(&mut self, skip: &BTreeSet<u64>) -> Result<usize, StoreError> {
        let csv_path = self.layout.games_csv();
        let err = |p: &Path, e: csv::Error| StoreError::Io {
            path: p.to_path_buf(),
            source: std::io::Error::other(e),
        };
        let file = NewFile::create(&csv_path).map_err(io(&csv_path))?;
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(std::io::BufWriter::with_capacity(1 << 20, file));
        w.write_record(csvio::all_columns())
            .map_err(|e| err(&csv_path, e))?;
        let mut kept = 0;
        scan_rows(&csv_path, &mut |line, row| {
            if !skip.contains(&line) {
                w.serialize(row).map_err(|e| err(&csv_path, e))?;
                kept += 1;
            }
            Ok(())
        })?;
        w.into_inner()
            .map_err(|e| io(&csv_path)(e.into_error()))?
            .into_inner()
            .map_err(|e| io(&csv_path)(e.into_error()))?
            .commit()
            .map_err(io(&csv_path))?;
        self.csv = RowAppender::open(&csv_path, false)?;
        Ok(kept)
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The games done: those whose rows `check` accepted, and those
    /// committed since.
    pub fn done(&self) -> &DoneSet {
        &self.done
    }

    /// Takes the set of done games (for the runner's workers, which pass
    /// over them); the folder's set is empty afterwards.
    pub fn take_done(&mut self) -> DoneSet {
        std::mem::take(&mut self.done)
    }

    /// Starts a new record log once one holds `bytes` (for tests).
    pub fn roll_logs_at(&mut self, bytes: u64) {
        self.roll_bytes = bytes;
    }

    /// Notes in league.json how this run plays the games otherwise than
    /// the league's last run (the sandbox turned off or on, a bot's command
    /// or settings changed), before its first game: a resume that plays
    /// none leaves league.json as it was. Returns the warnings that say it.
    pub fn note_played_under(&mut self) -> Result<Vec<String>, StoreError> {
        let Some(noted) = self.noted.take() else {
            return Ok(Vec::new());
        };
        meta::write_meta(&self.layout.league_json(), &noted.meta)?;
        Ok(noted.warnings)
    }

    /// Keeps the bots' program hashes in `league.json` the first time, and
    /// on a resume says which bots' files changed since (a warning each:
    /// their games from now on are played by the new programs).
    pub fn note_programs(
        &mut self,
        now: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    ) -> Result<Vec<String>, StoreError> {
        let path = self.layout.league_json();
        let Some(mut meta) = read_meta(self.layout.root()) else {
            return Ok(Vec::new());
        };
        let Some(under) = meta.played_under.as_mut() else {
            return Ok(Vec::new());
        };
        let mut warnings = Vec::new();
        let mut notes = Vec::new();
        if under.programs.is_empty() {
            under.programs = now;
            meta::write_meta(&path, &meta)?;
            return Ok(warnings);
        }
        for (bot, files) in &now {
            let Some(was) = under.programs.get(bot) else {
                continue;
            };
            let changed = program_changes(was, files);
            if !changed.is_empty() {
                warnings.push(format!(
                    "bot `{bot}`'s program changed since league `{}` last ran: {}; its games from now on are played by the new one (league.json notes the change)",
                    meta.name,
                    changed.join(", ")
                ));
                let at = meta::change_time();
                notes.push(format!(
                    "{at}: bot `{bot}`'s program: {}",
                    changed.join(", ")
                ));
            }
        }
        // Said once: the programs from now on, and the change noted.
        if !notes.is_empty() {
            under.programs.extend(now);
            under.changes.extend(notes);
            meta::write_meta(&path, &meta)?;
        }
        Ok(warnings)
    }

    /// Makes one finished game part of the results: appends its `record`
    /// (its JSON lines as one zstd frame) to the record log, notes where in `row`
    /// (`record_file`, `record_offset`, `record_length`), then appends the
    /// row and flushes it to the operating system. The game is done from
    /// here on; on error it is not (the log is cut back to where the
    /// record began), and the caller must stop. `index`: the game's place
    /// in the schedule.
    pub fn commit(
        &mut self,
        record: &Frame,
        row: &mut GameRow,
        index: usize,
    ) -> Result<RecordAt, StoreError> {
        let length = record.bytes().len() as u64;
        let log = match &mut self.log {
            Some(log) => log,
            None => self.log.insert(records::Appender::open(
                &self.layout.records(),
                self.roll_bytes,
            )?),
        };
        let (file, offset) = log.append(record)?;
        let at = RecordAt::Log {
            path: self.layout.records().join(&file),
            offset,
            length,
        };
        row.record_file = file;
        row.record_offset = Some(offset);
        row.record_length = Some(length);
        self.csv.append(row)?;
        self.done.insert(index);
        Ok(at)
    }

    /// Flushes to stable storage (at the end, and now and then): the record
    /// log first, then games.csv, so that no synced row lacks its record.
    /// Each file is also checked to be still where the run opened it: a
    /// games.csv or record log deleted, moved or replaced meanwhile (`rm -r
    /// games/`) would take every row or record written since with it, so
    /// that is an error naming the file, and the run stops within seconds
    /// instead of playing on into a file nobody can see.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        if let Some(log) = &self.log {
            log.sync()?;
            log.still_in_place()?;
        }
        self.csv.sync()?;
        self.csv.still_in_place()
    }

    /// Every row written so far, read back from the file.
    pub fn rows(&self) -> Result<Vec<GameRow>, StoreError> {
        Ok(csvio::read_rows(&self.layout.games_csv())?)
    }
}

/// Why the record place `row` names does not hold a record, if it does not.
/// A row of this version is checked against its log's length alone (`lens`,
/// each log looked up once), and raises the committed end of its log in
/// `ends`.
fn place_problem(
    games: &Path,
    row: &GameRow,
    lens: &mut HashMap<String, Option<u64>>,
    ends: &mut HashMap<String, u64>,
) -> Option<String> {
    match (row, row.record_offset, row.record_length) {
        // A row of this version: its range must lie in its log (no
        // path built, no allocation but a log's first sight).
        (r, Some(offset), Some(length))
            if !r.record_file.is_empty() && records::is_log_name(&r.record_file) =>
        {
            let len = match lens.get(&r.record_file) {
                Some(len) => *len,
                None => {
                    let len = std::fs::metadata(games.join(&r.record_file))
                        .ok()
                        .filter(|m| m.is_file())
                        .map(|m| m.len());
                    lens.insert(r.record_file.clone(), len);
                    len
                }
            };
            match offset.checked_add(length) {
                Some(end) if len.is_some_and(|len| end <= len) => {
                    // The log is committed up to this record's end.
                    match ends.get_mut(&r.record_file) {
                        Some(e) => *e = (*e).max(end),
                        None => {
                            ends.insert(r.record_file.clone(), end);
                        }
                    }
                    None
                }
                _ => RecordAt::of(games, r)
                    .and_then(|at| at.problem(&mut |p| std::fs::metadata(p).ok().map(|m| m.len()))),
            }
        }
        (r, ..) => match RecordAt::of(games, r) {
            None => {
                Some("its record_file, record_offset and record_length name no record".to_string())
            }
            Some(at) => at.problem(&mut |p| std::fs::metadata(p).ok().map(|m| m.len())),
        },
    }
}

/// Makes the results folder's sub-folder `path` (and the folder itself)
/// if missing. A file in its place is named as such, with what to do,
/// rather than as the kernel's `File exists` on the results folder.
fn make_folder(path: &Path) -> Result<(), StoreError> {
    match std::fs::create_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) => match path.metadata() {
            Ok(m) if !m.is_dir() => Err(StoreError::Mismatch {
                path: path.to_path_buf(),
                why: "is a file where the league keeps a folder of its own: move or rename it, and run the same command again".to_string(),
            }),
            _ => Err(io(path)(e)),
        },
    }
}

/// What a reader of a results folder that no run holds (`arena status`)
/// finds of the records its rows name, checked as a resume checks them: a
/// row's record place against its log's length, and the last row's record
/// read whole (the one a crash could have torn).
pub struct RecordCheck {
    games: std::path::PathBuf,
    lens: HashMap<String, Option<u64>>,
    ends: HashMap<String, u64>,
}

impl RecordCheck {
    pub fn new(layout: &Layout) -> RecordCheck {
        RecordCheck {
            games: layout.records(),
            lens: HashMap::new(),
            ends: HashMap::new(),
        }
    }

    /// Why the record `row` names is not there (its log missing or shorter
    /// than the row says), if it is not; a resume refuses such a row.
    pub fn place(&mut self, row: &GameRow) -> Option<String> {
        place_problem(&self.games, row, &mut self.lens, &mut self.ends)
    }

    /// Why the record of `row` does not back it (read whole: cut short,
    /// damaged, another game's or another result), if it does not.
    pub fn whole(&self, row: &GameRow) -> Option<String> {
        RecordAt::of(&self.games, row).and_then(|at| record_problem(&at, row))
    }
}

/// The temporary file league.json was written through before
/// `crate::files`.
const LEGACY_TMP: &str = "league.tmp";

/// Removes what killed runs left in the folder, now that it is this
/// run's: the temporary files of its own files (league.json, games.csv)
/// whose writers are no longer running, and an older version's temporary
/// league.json ([`LEGACY_TMP`]). Another command's (a report's tables,
/// perhaps on another machine of a shared folder) are not the run's to
/// judge.
fn sweep_leftovers(layout: &Layout) {
    let own = |p: std::path::PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let own = [own(layout.league_json()), own(layout.games_csv())];
    crate::files::sweep_leftovers(layout.root(), |t| own.iter().flatten().any(|n| n == t));
    let _ = std::fs::remove_file(layout.root().join(LEGACY_TMP));
}

/// Names a results folder's own files and folders may have before its
/// league.json: what a run makes first, and a Swiss's or knockout's notes.
const OWN_NAMES: &[&str] = &[
    "games",
    "logs",
    "run.lock",
    // league.json's temporary file before `crate::files` (which hides
    // its own): a run killed while writing the first league.json left
    // it, and the next run removes it.
    LEGACY_TMP,
    "report",
    "rejected.csv",
    "swiss.txt",
    "knockout.txt",
    crate::results::analysis::FOLDER,
];

/// Refuses a games.csv that is no CSV at all (compressed, UTF-16:
/// [`csvio::not_text`]) before anything touches it: the repair of a torn
/// last line would otherwise cut or complete a "line" of it.
fn refuse_a_file_not_csv(path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(path)(e)),
    };
    let mut head = Vec::with_capacity(8192);
    file.take(8192).read_to_end(&mut head).map_err(io(path))?;
    match csvio::not_text(&head) {
        None => Ok(()),
        Some(what) => Err(StoreError::Mismatch {
            path: path.to_path_buf(),
            why: format!("this is {what}. Nothing was changed: put back the games.csv the league wrote (or move this file away to start the league afresh), and run the same command again"),
        }),
    }
}

/// Refuses a folder that is there, holds no league (no league.json, no
/// games.csv) and holds files of its own: `-o ~` or `output = "."` would
/// write games.csv, games/ and logs/ among them, and replace any of the
/// same names. A new folder, an empty one (hidden files aside), or one a
/// run began are taken.
fn refuse_foreign_folder(layout: &Layout) -> Result<(), StoreError> {
    let dir = layout.root();
    let refuse = |why: &str| StoreError::Mismatch {
        path: dir.to_path_buf(),
        why: why.to_string(),
    };
    if dir.as_os_str().is_empty() {
        return Err(refuse(
            "is no folder's name (it is empty): give the results' folder (-o, or the file's `output`)",
        ));
    }
    if layout.league_json().exists() || layout.games_csv().exists() {
        return Ok(());
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // A new folder, unless the path goes back up (`..`) out of a
        // folder still to be made: made, it leads into one that is there
        // (`new/..` is the current folder), whatever it holds.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match climbs_out_of_a_new_folder(dir) {
                true => Err(refuse(
                    "goes back up (`..`) out of a folder that does not exist yet, into one that does: name the results' folder without `..` after a new one",
                )),
                false => Ok(()),
            };
        }
        // Said when the folder is made or read.
        Err(_) => return Ok(()),
    };
    let mut foreign: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !OWN_NAMES.contains(&n.as_str()))
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    // A league split into shards: its folder holds their folders only.
    let split = |n: &String| Shard::of_folder_name(n).map(|s| s.count);
    if let Some(count) = foreign.first().and_then(split) {
        if foreign.iter().all(|n| split(n) == Some(count)) {
            return Err(refuse(&format!(
                "holds the results of a league split in {count} shards ({}): run each with --shard K/{count}, as it was started (`arena status {}` shows which shards to start)",
                foreign.join(", "),
                crate::text::shell_path(dir)
            )));
        }
    }
    let shown = foreign.len().min(3);
    Err(StoreError::Mismatch {
        path: dir.to_path_buf(),
        why: format!(
            "holds no league's results but {} file(s) of its own ({}{}): a league's results go into a folder of their own; give a new or empty folder (-o, or the file's `output`)",
            foreign.len(),
            foreign[..shown].join(", "),
            if foreign.len() > shown { ", ..." } else { "" }
        ),
    })
}

/// Whether `dir` has a `..` after a folder that does not exist: made with
/// its parents, such a path ends in a folder that was there before.
fn climbs_out_of_a_new_folder(dir: &Path) -> bool {
    let mut at = std::path::PathBuf::new();
    let mut missing = false;
    for c in dir.components() {
        if missing && c == std::path::Component::ParentDir {
            return true;
        }
        at.push(c);
        missing = missing || std::fs::symlink_metadata(&at).is_err();
    }
    false
}

/// Every copy of a game with two rows or more (`twice`) is rejected, and
/// the game is not done: a second pass over the rows.
fn reject_copies(
    csv_path: &Path,
    twice: &HashSet<String>,
    schedule: &dyn Fn(&str) -> Option<Expected>,
    done: &mut DoneSet,
    rejected: &mut Vec<Rejected>,
) -> Result<(), StoreError> {
    // Every copy of a game with two rows: a second pass over them.
    let mut copies: HashMap<String, Vec<(u64, GameRow)>> = HashMap::new();
    scan_rows(csv_path, &mut |line, row| {
        if twice.contains(&row.game_id) {
            copies
                .entry(row.game_id.clone())
                .or_default()
                .push((line, row.clone()));
        }
        Ok(())
    })?;
    for (id, rows) in copies {
        if let Some(e) = schedule(&id) {
            done.remove(e.index);
        }
        for (line, row) in &rows {
            rejected.retain(|r| r.line != *line);
            rejected.push(Rejected {
                line: *line,
                row: row.clone(),
                why: format!("game {id} has {} rows", rows.len()),
            });
        }
    }
    Ok(())
}

/// The results folder as the pipeline's store.
impl Store for ResultsDir {
    type Error = StoreError;

    fn commit(
        &mut self,
        record: &Frame,
        row: &mut GameRow,
        index: usize,
    ) -> Result<(), StoreError> {
        ResultsDir::commit(self, record, row, index).map(|_| ())
    }

    fn sync(&mut self) -> Result<(), StoreError> {
        ResultsDir::sync(self)
    }

    fn done(&self) -> &DoneSet {
        ResultsDir::done(self)
    }

    fn record(&self, game_id: &str) -> Result<String, StoreError> {
        records::find_record(&self.layout, game_id).map(|(_, text)| text)
    }
}

/// What changed in a bot's program files from `was` to `now` (each path
/// with its SHA-256, as league.json keeps them): "FILE (sha256 OLD… ->
/// NEW…)" for a file whose content changed, "FILE (new)" for one not
/// seen before.
pub fn program_changes(
    was: &std::collections::BTreeMap<String, String>,
    now: &std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    now.iter()
        .filter(|(f, h)| was.get(*f).is_some_and(|old| old != *h))
        .map(|(f, h)| {
            let old = &was[f];
            format!(
                "{f} (sha256 {}… -> {}…)",
                &old[..old.len().min(12)],
                &h[..h.len().min(12)]
            )
        })
        .chain(
            now.iter()
                // A path not seen before may be the same file named
                // from another working folder (paths are kept as the
                // command gave them): new only if its content is.
                .filter(|(f, h)| !was.contains_key(*f) && !was.values().any(|old| old == *h))
                .map(|(f, _)| format!("{f} (new)")),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::lock::host_name;
    use super::*;
    use std::fs::OpenOptions;
    use std::io::Write;

    fn row(id: &str) -> GameRow {
        GameRow {
            game_id: id.into(),
            variant: "diffusion".into(),
            players: 2,
            group: "g".into(),
            seat0: "a".into(),
            seat1: "b".into(),
            seat2: String::new(),
            score0: 1.0,
            score1: 0.0,
            score2: None,
            reason: "block".into(),
            offender: None,
            plies: 12,
            duration_ms: 3,
            seed: 9,
            opening: "G H".into(),
            ..Default::default()
        }
    }

    fn meta(fp: &str) -> LeagueMeta {
        LeagueMeta {
            name: "t".into(),
            fingerprint: fp.into(),
            games: 3,
            shard: None,
            bots: vec!["a".into(), "b".into()],
            sandbox: Some(true),
            played_under: None,
            league: None,
            sprt: None,
            resume: None,
            bots_flag: None,
            openings_book: None,
            schedule: Default::default(),
            rounds_change: None,
        }
    }

    /// The games `g1`..`g9` of a schedule of diffusion games, a vs b.
    fn schedule(id: &str) -> Option<Expected> {
        let n: usize = id.strip_prefix('g')?.parse().ok()?;
        (1..=9).contains(&n).then(|| Expected {
            index: n,
            variant: "diffusion".into(),
            seats: vec!["a".into(), "b".into()],
            seed: None,
            opening: None,
        })
    }

    fn index(id: &str) -> usize {
        schedule(id).unwrap().index
    }

    /// A record of `r` as the referee writes it: its game line first, its
    /// end line last.
    fn record(r: &GameRow) -> Vec<u8> {
        format!(
            "{{\"type\":\"game\",\"game_id\":\"{}\"}}\n{{\"type\":\"decision\"}}\n{{\"type\":\"end\",\"scores\":[{},{}],\"reason\":\"{}\"}}\n",
            r.game_id, r.score0, r.score1, r.reason
        )
        .into_bytes()
    }

    /// The record of `r` as a league commits it: one zstd frame.
    fn frame(r: &GameRow) -> Frame {
        crate::results::records::encode(&record(r)).unwrap()
    }

    fn commit(s: &mut ResultsDir, id: &str) -> GameRow {
        let mut r = row(id);
        s.commit(&frame(&r), &mut r, index(id)).unwrap();
        r
    }

    /// `commit` says where the record went: the place its row names, which
    /// the store reads back.
    #[test]
    fn a_commit_returns_where_its_record_is() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        commit(&mut s, "g1");
        let mut r = row("g2");
        let at = ResultsDir::commit(&mut s, &frame(&r), &mut r, index("g2")).unwrap();
        assert_eq!(Some(at.clone()), RecordAt::of(&s.layout().records(), &r));
        assert_eq!(at.read().unwrap(), record(&r));
        let text = Store::record(&s, "g2").unwrap();
        assert_eq!(text.as_bytes(), record(&r).as_slice());
        assert!(Store::done(&s).contains(index("g2")));
    }

    #[test]
    fn rows_survive_reopen_and_torn_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let g1 = commit(&mut s, "g1");
        commit(&mut s, "g2");
        drop(s);
        // A crash in the middle of the third row.
        let path = Layout::new(dir.path()).games_csv();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"g3,diffusion,2,g,a,b,,1,0").unwrap();
        drop(f);

        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert_eq!(s.repaired_bytes, 25);
        assert!(s.check(&schedule).unwrap().is_empty());
        let done = s.done();
        assert!(done.contains(1) && done.contains(2) && !done.contains(3));
        assert_eq!(done.len(), 2);
        let g3 = commit(&mut s, "g3");
        assert!(s.done().contains(3));
        // One log, the frames one after another; each row says where.
        let g2 = row("g2");
        assert_eq!(
            (g3.record_file.as_str(), g3.record_offset),
            (
                "records-0000.jsonl.zst",
                Some((frame(&g1).bytes().len() + frame(&g2).bytes().len()) as u64)
            )
        );
        assert_eq!(g3.record_length, Some(frame(&g3).bytes().len() as u64));
        // The dictionary is there for `zstd -D`.
        assert_eq!(
            std::fs::read(dir.path().join("games/records.zdict")).unwrap(),
            crate::results::records::DICTIONARY
        );
        let rows = s.rows().unwrap();
        assert_eq!(
            rows.iter().map(|r| r.game_id.as_str()).collect::<Vec<_>>(),
            ["g1", "g2", "g3"]
        );
        assert_eq!(rows[0], g1);
        for r in &rows {
            let at = RecordAt::of(&Layout::new(dir.path()).records(), r).unwrap();
            assert_eq!(at.read().unwrap(), record(r));
        }
        // One header only.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("game_id").count(), 1);
    }

    /// A results folder of two committed games, closed; and its games.csv.
    fn two_games() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        commit(&mut s, "g1");
        commit(&mut s, "g2");
        drop(s);
        let path = Layout::new(dir.path()).games_csv();
        (dir, path)
    }

    /// A games.csv without a newline at all is either a header torn as
    /// it was written (started afresh) or lines ending in `\r` alone:
    /// those are refused, every byte kept, not cut as one torn line.
    #[test]
    fn a_file_without_newlines_is_cut_only_when_it_is_a_torn_header() {
        let (dir, path) = two_games();
        let cr_only = std::fs::read_to_string(&path).unwrap().replace('\n', "\r");
        std::fs::write(&path, &cr_only).unwrap();
        let e = ResultsDir::open(dir.path(), &meta("x"))
            .err()
            .expect("refused");
        assert!(e.to_string().contains("has no newline"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), cr_only);

        std::fs::write(&path, "game_id,variant,pla").unwrap();
        let s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert_eq!(s.repaired_bytes, 19);
    }

    #[test]
    fn a_whole_last_row_without_its_newline_is_kept() {
        let (dir, path) = two_games();
        // Saved by an editor that drops the last newline.
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.trim_end_matches('\n')).unwrap();

        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert_eq!(s.repaired_bytes, 0);
        assert!(
            s.warnings.iter().any(|w| w.contains("no newline")),
            "{:?}",
            s.warnings
        );
        assert!(s.check(&schedule).unwrap().is_empty());
        assert!(s.done().contains(1) && s.done().contains(2));
        commit(&mut s, "g3");
        let rows = s.rows().unwrap();
        assert_eq!(
            rows.iter().map(|r| r.game_id.as_str()).collect::<Vec<_>>(),
            ["g1", "g2", "g3"]
        );
        drop(s);

        // Torn inside its last field (the record's length cut short): it
        // has every field, so it is kept whole, and the check of its
        // record sets it aside to be played again.
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &text[..text.len() - 2]).unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let rejected = s.check(&schedule).unwrap();
        assert_eq!(
            rejected
                .iter()
                .map(|r| r.row.game_id.as_str())
                .collect::<Vec<_>>(),
            ["g3"]
        );
        assert!(!s.done().contains(3));
    }

    #[test]
    fn a_record_that_cannot_be_written_commits_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        s.roll_logs_at(1);
        commit(&mut s, "g1");
        // A non-empty folder where the next log should go.
        let next = Layout::new(dir.path())
            .records()
            .join("records-0001.jsonl.zst");
        std::fs::create_dir_all(next.join("x")).unwrap();
        let mut g2 = row("g2");
        let e = s
            .commit(&frame(&g2), &mut g2, index("g2"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("records-0001.jsonl.zst"), "{e}");
        assert!(!s.done().contains(index("g2")));
        let ids: Vec<String> = s.rows().unwrap().into_iter().map(|r| r.game_id).collect();
        assert_eq!(ids, ["g1"]);
    }

    #[test]
    fn a_second_writer_is_refused_with_the_holders_pid_and_host() {
        let dir = tempfile::tempdir().unwrap();
        let first = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let e = ResultsDir::open(dir.path(), &meta("x"))
            .err()
            .unwrap()
            .to_string();
        let me = format!("pid {} on host {}", std::process::id(), host_name());
        assert!(
            e.contains("in use by another run") && e.contains(&me),
            "{e}"
        );
        assert!(e.contains(&dir.path().display().to_string()), "{e}");
        drop(first);
        // Released with its holder: the next run opens it.
        ResultsDir::open(dir.path(), &meta("x")).unwrap();
    }

    /// Every problem a resume finds in one pass over the rows, the record
    /// logs' torn tail cut, and `--repair`'s setting aside.
    #[test]
    fn rows_are_checked_against_the_schedule_and_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        commit(&mut s, "g1");
        commit(&mut s, "g2");
        commit(&mut s, "g2");
        let mut wrong_seats = row("g3");
        wrong_seats.seat1 = "z".into();
        s.commit(&frame(&wrong_seats), &mut wrong_seats, 3).unwrap();
        let mut forged = row("forged");
        s.commit(&frame(&forged), &mut forged, 0).unwrap();
        // g4: a row of an older version whose record file is gone; g6: a
        // row pointing past the end of the log.
        s.csv.append(&row("g4")).unwrap();
        let mut past = row("g6");
        (past.record_file, past.record_offset, past.record_length) =
            ("records-0000.jsonl.zst".into(), Some(1 << 20), Some(10));
        s.csv.append(&past).unwrap();
        // g5 last, its record says another result.
        let mut other_result = row("g5");
        let rec = frame(&other_result);
        other_result.reason = "illegal".into();
        other_result.offender = Some(1);
        s.commit(&rec, &mut other_result, 5).unwrap();
        drop(s);
        // A record whose row was never written: a run killed between them,
        // half-way through its frame.
        let log = layout.records().join("records-0000.jsonl.zst");
        let committed = std::fs::metadata(&log).unwrap().len();
        let torn = frame(&row("g7"));
        let torn = &torn.bytes()[..torn.bytes().len() / 2];
        let mut f = OpenOptions::new().append(true).open(&log).unwrap();
        f.write_all(torn).unwrap();
        drop(f);

        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let rejected = s.check(&schedule).unwrap();
        // Rows refused: nothing changed yet (the run may stop here).
        assert_eq!(s.cut_record_bytes, 0);
        assert_eq!(
            std::fs::metadata(&log).unwrap().len(),
            committed + torn.len() as u64
        );
        assert!(!layout.uncommitted_frames().exists());
        let got: Vec<(u64, &str)> = rejected
            .iter()
            .map(|r| (r.line, r.row.game_id.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (3, "g2"),
                (4, "g2"),
                (5, "g3"),
                (6, "forged"),
                (7, "g4"),
                (8, "g6"),
                (9, "g5")
            ]
        );
        let whys: Vec<&str> = rejected.iter().map(|r| r.why.as_str()).collect();
        assert!(
            whys[0].contains("2 rows") && whys[1].contains("2 rows"),
            "{whys:?}"
        );
        assert!(
            whys[2].contains("seats a, b") && whys[2].contains("a, z"),
            "{whys:?}"
        );
        assert!(whys[3].contains("no game with this id"), "{whys:?}");
        assert!(whys[4].contains("g4.jsonl"), "{whys:?}");
        assert!(whys[5].contains("past the end"), "{whys:?}");
        assert!(whys[6].contains("illegal"), "{whys:?}");
        assert_eq!(s.done().len(), 1, "g1 only");

        s.set_aside(&rejected).unwrap();
        // Set aside: the run goes on, and the torn frame is cut.
        assert_eq!(s.cut_record_bytes, torn.len() as u64);
        assert_eq!(std::fs::metadata(&log).unwrap().len(), committed);
        // Kept aside as they were.
        assert_eq!(std::fs::read(layout.uncommitted_frames()).unwrap(), torn);
        commit(&mut s, "g2");
        let ids: Vec<String> = s.rows().unwrap().into_iter().map(|r| r.game_id).collect();
        assert_eq!(ids, ["g1", "g2"]);
        let set_aside = csvio::read_file(&layout.rejected_csv()).unwrap().rows;
        assert_eq!(set_aside.len(), 7);
        let text = std::fs::read_to_string(layout.rejected_csv()).unwrap();
        assert!(
            text.starts_with("game_id,") && text.contains(",rejected_because\n"),
            "{text}"
        );
        assert!(text.contains("no game with this id"), "{text}");
        drop(s);
        // The repaired folder checks clean, and keeps the records' places.
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert!(s.check(&schedule).unwrap().is_empty());
        assert_eq!((s.done().len(), s.cut_record_bytes), (2, 0));
        for r in s.rows().unwrap() {
            let at = RecordAt::of(&layout.records(), &r).unwrap();
            assert_eq!(at.read().unwrap(), record(&r));
        }
    }

    /// A folder written before issue 35 (a plain log, `records-0000.jsonl`)
    /// resumes: its rows are read from the plain log, its torn tail is cut
    /// to `uncommitted-records.jsonl`, and new games go to a new log of
    /// frames, never to the plain one.
    #[test]
    fn a_folder_of_plain_logs_resumes_into_a_log_of_frames() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let plain = layout.records().join("records-0000.jsonl");
        let mut text = Vec::new();
        for id in ["g1", "g2"] {
            let mut r = row(id);
            let rec = record(&r);
            (r.record_file, r.record_offset, r.record_length) = (
                "records-0000.jsonl".into(),
                Some(text.len() as u64),
                Some(rec.len() as u64),
            );
            text.extend_from_slice(&rec);
            s.csv.append(&r).unwrap();
        }
        text.extend_from_slice(b"{\"type\":\"game\",\"game_id\":\"g3\"");
        std::fs::write(&plain, &text).unwrap();
        drop(s);

        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert!(s.check(&schedule).unwrap().is_empty());
        assert_eq!(s.done().len(), 2);
        assert_eq!(
            std::fs::read_to_string(layout.uncommitted_records()).unwrap(),
            "{\"type\":\"game\",\"game_id\":\"g3\""
        );
        let g3 = commit(&mut s, "g3");
        assert_eq!(
            (g3.record_file.as_str(), g3.record_offset),
            ("records-0001.jsonl.zst", Some(0))
        );
        drop(s);
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert!(s.check(&schedule).unwrap().is_empty());
        let g4 = commit(&mut s, "g4");
        assert_eq!(g4.record_file, "records-0001.jsonl.zst");
        for r in s.rows().unwrap() {
            assert_eq!(
                Store::record(&s, &r.game_id).unwrap().as_bytes(),
                record(&r)
            );
        }
    }

    /// A damaged frame is an error naming its log and offset, for a reader
    /// and for a resume (the last row's frame is read whole); the frames
    /// around it still read.
    #[test]
    fn a_damaged_frame_is_named_by_its_log_and_offset() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let rows: Vec<GameRow> = ["g1", "g2", "g3"]
            .iter()
            .map(|id| commit(&mut s, id))
            .collect();
        drop(s);
        let log = Layout::new(dir.path())
            .records()
            .join("records-0000.jsonl.zst");
        let mut bytes = std::fs::read(&log).unwrap();
        for r in &rows[1..] {
            let mid = (r.record_offset.unwrap() + r.record_length.unwrap() / 2) as usize;
            bytes[mid] ^= 0x55;
        }
        std::fs::write(&log, &bytes).unwrap();

        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let e = Store::record(&s, "g2").unwrap_err().to_string();
        let at = format!("at byte {}", rows[1].record_offset.unwrap());
        assert!(
            e.contains("records-0000.jsonl.zst") && e.contains(&at),
            "{e}"
        );
        assert_eq!(
            Store::record(&s, "g1").unwrap().as_bytes(),
            record(&rows[0])
        );
        let rejected = s.check(&schedule).unwrap();
        assert_eq!(rejected.len(), 1);
        let why = &rejected[0].why;
        let at = format!("at byte {}", rows[2].record_offset.unwrap());
        assert!(
            rejected[0].row.game_id == "g3"
                && why.contains("records-0000.jsonl.zst")
                && why.contains(&at),
            "{why}"
        );
    }

    /// Rows scanned one at a time are the rows read whole, with the same
    /// lines, quoted newlines included.
    #[test]
    fn rows_scanned_one_at_a_time_are_the_rows_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.csv");
        let mut w = csv::Writer::from_path(&path).unwrap();
        for k in 0..40 {
            let mut r = row(&format!("g{k}"));
            r.version0 = if k % 7 == 3 {
                "v\n\"2\",\n".into()
            } else {
                "1".into()
            };
            w.serialize(&r).unwrap();
        }
        drop(w);
        let whole = csvio::read_file(&path).unwrap().rows;
        let mut got = Vec::new();
        scan_rows(&path, &mut |line, r| {
            got.push((line, r.clone()));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, whole);
        // A broken row names the file's own line.
        let text = std::fs::read_to_string(&path).unwrap();
        let broken = text.replacen("g30,diffusion,2", "g30,diffusion,two", 1);
        std::fs::write(&path, broken).unwrap();
        let line = whole.iter().find(|(_, r)| r.game_id == "g30").unwrap().0;
        let e = scan_rows(&path, &mut |_, _| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("games.csv:{line}: column `players`")),
            "{e}"
        );
    }

    #[test]
    fn a_done_set_holds_a_bit_per_game() {
        let mut d = DoneSet::default();
        assert!(d.insert(3) && d.insert(1_000_000) && !d.insert(3));
        assert!(d.contains(3) && d.contains(1_000_000) && !d.contains(4));
        assert_eq!(d.len(), 2);
        d.remove(3);
        d.remove(3);
        d.remove(7_000_000);
        assert!(!d.contains(3));
        assert_eq!(d.len(), 1);
        assert!(d.bits.len() <= 1_000_000 / 64 + 1);
    }

    /// A row in the folder's games.csv (its content does not matter here:
    /// only that a game was played under the league.json there).
    fn one_game_played(dir: &Path) {
        use std::io::Write;
        let path = Layout::new(dir).games_csv();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        if std::fs::metadata(&path).unwrap().len() == 0 {
            let header: Vec<&str> = csvio::COLUMNS
                .iter()
                .chain(csvio::ADDED_COLUMNS)
                .copied()
                .collect();
            writeln!(f, "{}", header.join(",")).unwrap();
        }
        writeln!(f, "g1").unwrap();
    }

    #[test]
    fn another_schedule_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(ResultsDir::open(dir.path(), &meta("x")).unwrap());
        // Before any game, the folder is not bound: another league takes it.
        drop(ResultsDir::open(dir.path(), &meta("y")).unwrap());
        drop(ResultsDir::open(dir.path(), &meta("x")).unwrap());
        one_game_played(dir.path());
        let e = ResultsDir::open(dir.path(), &meta("y"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("different schedule"), "{e}");
    }

    /// A Swiss's changed `games_per_pairing` is named as the file's key
    /// (league.json's `rounds` are its seat-swap groups, not the file's
    /// `rounds`, which are the Swiss's), and its changed rounds as
    /// `rounds`; a knockout's reordered `seeds` are named.
    #[test]
    fn a_swiss_or_knockout_change_is_named_by_the_files_keys() {
        let with = |fp: &str, settings: &[(&str, &str)]| {
            let mut m = meta(fp);
            m.resume = Some("arena run s.toml".into());
            m.schedule = settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            m
        };
        let refused = |before: LeagueMeta, after: LeagueMeta| {
            let dir = tempfile::tempdir().unwrap();
            drop(ResultsDir::open(dir.path(), &before).unwrap());
            one_game_played(dir.path());
            ResultsDir::open(dir.path(), &after)
                .err()
                .unwrap()
                .to_string()
        };
        let swiss = [("format", "swiss, 4 rounds"), ("rounds", "2")];
        let e = refused(
            with("x", &swiss),
            with("y", &[("format", "swiss, 4 rounds"), ("rounds", "3")]),
        );
        assert!(
            e.contains("`games_per_pairing` was 4, now 6 (the file's `games_per_pairing`, or --games-per-pairing 4 as it was started)"),
            "{e}"
        );
        let e = refused(
            with("x", &swiss),
            with("y", &[("format", "swiss, 6 rounds"), ("rounds", "2")]),
        );
        assert!(
            e.contains(
                "(the file's format = \"swiss\" with `rounds`, or --rounds 4 as it was started)"
            ),
            "{e}"
        );
        let e = refused(
            with("x", &[("format", "knockout, seeds a, b")]),
            with("y", &[("format", "knockout, seeds b, a")]),
        );
        assert!(
            e.contains("`seeds` in the order a, b as it was started"),
            "{e}"
        );
    }

    /// A folder of other files is not taken for results; a new one, an
    /// empty one and one a league began are.
    #[test]
    fn a_folder_of_other_files_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        std::fs::write(dir.path().join(".hidden"), "").unwrap();
        let e = ResultsDir::open(dir.path(), &meta("x"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("1 file(s) of its own (notes.txt)"), "{e}");
        assert!(!dir.path().join("games.csv").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
            "mine"
        );
        let empty = tempfile::tempdir().unwrap();
        std::fs::write(empty.path().join(".gitkeep"), "").unwrap();
        drop(ResultsDir::open(empty.path(), &meta("x")).unwrap());
        drop(ResultsDir::open(empty.path(), &meta("x")).unwrap());
        drop(ResultsDir::open(&empty.path().join("new"), &meta("x")).unwrap());
    }

    /// Another league's folder is said to be that, not a change of bots.
    #[test]
    fn another_leagues_folder_is_named_as_its() {
        let dir = tempfile::tempdir().unwrap();
        drop(ResultsDir::open(dir.path(), &meta("x")).unwrap());
        one_game_played(dir.path());
        let mut other = meta("y");
        other.name = "club".into();
        other.bots = vec!["c".into(), "d".into()];
        let e = ResultsDir::open(dir.path(), &other)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("holds the results of `t`, not of `club`") && !e.contains("bots changed"),
            "{e}"
        );
    }

    #[test]
    fn a_bots_logs_are_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let l = Layout::new(dir.path());
        std::fs::create_dir_all(l.logs()).unwrap();
        std::fs::write(l.bot_log("a", 0), "12345").unwrap();
        std::fs::write(l.bot_log("a", 11), "123").unwrap();
        std::fs::write(l.bot_log("a-wolf", 0), "1234567").unwrap();
        std::fs::write(l.check_log("a"), "12").unwrap();
        assert_eq!(l.bot_logs_size("a"), 8);
        assert_eq!(l.bot_logs_size("a-wolf"), 7);
        assert_eq!(l.bot_logs_size("b"), 0);
    }

    /// `bots = "all"` and a new folder under bots/: the error says which
    /// bots changed and exactly how to resume.
    #[test]
    fn changed_bots_are_named_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        drop(ResultsDir::open(dir.path(), &meta("x")).unwrap());
        one_game_played(dir.path());
        let mut more = meta("y");
        more.bots.push("newcomer".into());
        let e = ResultsDir::open(dir.path(), &more)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("new: newcomer; gone: none"), "{e}");
        assert!(e.contains("move the new bot folders out of bots/"), "{e}");
        assert!(e.contains(r#"bots = ["a", "b"]"#), "{e}");
    }
}
