//! A league's results folder, and the one place a game becomes part of the
//! results.
//!
//! [`Layout`] owns the folder's layout (no path strings elsewhere):
//! `games.csv` (one row per game), `games/GAME_ID.jsonl` (one record per
//! game), `logs/` (the bots' stderr), and `league.json`, which ties the
//! folder to one schedule so that a resume never mixes two leagues.
//!
//! [`ResultsDir::commit`]`(record, row)` is the only commit point, called by
//! one ordered writer (the league's main thread): the record is written
//! whole (a temporary file and a rename), then the row is appended and
//! flushed. A row therefore always has its whole record; a record without a
//! row is a game that is not done and will be played again. Any I/O error
//! is returned to the runner, which stops the league.
//!
//! On open, a torn last line (a run killed mid-write) is cut off; the games
//! whose rows are complete are done, every other game is (re)run.

use crate::results::{csvio, GameRow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Csv(#[from] csvio::CsvError),
    #[error("{path}: {why}")]
    Mismatch { path: PathBuf, why: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What `league.json` records about the schedule the folder belongs to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LeagueMeta {
    pub name: String,
    /// A hash of the schedule (ids, seats, variants, settings, seed).
    pub fingerprint: String,
    pub games: usize,
    #[serde(default)]
    pub shard: Option<String>,
}

/// Where everything lives in a results folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    pub fn new(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// One row per finished game.
    pub fn games_csv(&self) -> PathBuf {
        self.root.join("games.csv")
    }

    /// The folder of the game records.
    pub fn records(&self) -> PathBuf {
        self.root.join("games")
    }

    /// The record of one game.
    pub fn record(&self, game_id: &str) -> PathBuf {
        self.records().join(format!("{game_id}.jsonl"))
    }

    /// The folder of the bots' stderr logs.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The stderr log of `bot`'s processes on `worker`.
    pub fn bot_log(&self, bot: &str, worker: usize) -> PathBuf {
        self.logs()
            .join(format!("{}-w{worker}.log", file_safe(bot)))
    }

    /// The stderr log of `bot`'s start check before the games.
    pub fn check_log(&self, bot: &str) -> PathBuf {
        self.logs().join(format!("{}-check.log", file_safe(bot)))
    }

    /// What ties the folder to one schedule.
    pub fn league_json(&self) -> PathBuf {
        self.root.join("league.json")
    }
}

/// `name` with everything but letters, digits, `-`, `_` and `.` replaced by
/// `_`, for file names.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// An open results folder, written by one writer.
pub struct ResultsDir {
    layout: Layout,
    csv: csv::Writer<File>,
    done: BTreeSet<String>,
    /// Bytes cut off a torn last line on open (0 if the file was whole).
    pub repaired_bytes: u64,
}

impl ResultsDir {
    /// Opens (creating if needed) the folder for `meta`. Fails if the
    /// folder holds results of a different schedule.
    pub fn open(dir: &Path, meta: &LeagueMeta) -> Result<ResultsDir, StoreError> {
        let layout = Layout::new(dir);
        std::fs::create_dir_all(layout.records()).map_err(io(dir))?;
        std::fs::create_dir_all(layout.logs()).map_err(io(dir))?;
        let meta_path = layout.league_json();
        match std::fs::read_to_string(&meta_path) {
            Ok(text) => {
                let old: LeagueMeta =
                    serde_json::from_str(&text).map_err(|e| StoreError::Mismatch {
                        path: meta_path.clone(),
                        why: format!("unreadable ({e}); move the folder away to start afresh"),
                    })?;
                if old.fingerprint != meta.fingerprint {
                    return Err(StoreError::Mismatch {
                        path: meta_path,
                        why: format!(
                            "these results belong to a different schedule (the tournament file, its bots, seed or variants changed since league `{}` started). Resume needs the same file; to start afresh, choose another `output` or move {} away",
                            old.name,
                            dir.display()
                        ),
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let text =
                    serde_json::to_string_pretty(meta).map_err(|e| StoreError::Mismatch {
                        path: meta_path.clone(),
                        why: e.to_string(),
                    })?;
                write_atomically(&meta_path, text.as_bytes())?;
            }
            Err(e) => return Err(io(&meta_path)(e)),
        }

        let csv_path = layout.games_csv();
        let repaired_bytes = repair_torn_tail(&csv_path)?;
        let exists = csv_path.metadata().map(|m| m.len() > 0).unwrap_or(false);
        let mut done = BTreeSet::new();
        if exists {
            for row in csvio::read_rows(&csv_path)? {
                done.insert(row.game_id);
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&csv_path)
            .map_err(io(&csv_path))?;
        let csv = csv::WriterBuilder::new()
            .has_headers(!exists)
            .from_writer(file);
        Ok(ResultsDir {
            layout,
            csv,
            done,
            repaired_bytes,
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn is_done(&self, game_id: &str) -> bool {
        self.done.contains(game_id)
    }

    pub fn done_count(&self) -> usize {
        self.done.len()
    }

    /// Makes one finished game part of the results: writes its `record`
    /// (the bytes of `games/GAME_ID.jsonl`) whole, then appends its `row`
    /// and flushes it to the operating system. The game is done from here
    /// on; on error it is not, and the caller must stop.
    pub fn commit(&mut self, record: &[u8], row: &GameRow) -> Result<(), StoreError> {
        write_whole(&self.layout.record(&row.game_id), record, false)?;
        let path = self.layout.games_csv();
        self.csv.serialize(row).map_err(|e| StoreError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        self.csv.flush().map_err(io(&path))?;
        self.done.insert(row.game_id.clone());
        Ok(())
    }

    /// Flushes to stable storage (at the end, and now and then).
    pub fn sync(&mut self) -> Result<(), StoreError> {
        let path = self.layout.games_csv();
        self.csv.flush().map_err(io(&path))?;
        self.csv.get_ref().sync_data().map_err(io(&path))
    }

    /// Every row written so far, read back from the file.
    pub fn rows(&self) -> Result<Vec<GameRow>, StoreError> {
        Ok(csvio::read_rows(&self.layout.games_csv())?)
    }
}

/// Cuts a last line that has no newline (a write torn by a crash). Returns
/// the number of bytes removed.
pub fn repair_torn_tail(path: &Path) -> Result<u64, StoreError> {
    let mut f = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(path)(e)),
    };
    let len = f.metadata().map_err(io(path))?.len();
    if len == 0 {
        return Ok(0);
    }
    // Scan back from the end for the last newline.
    let mut pos = len;
    let mut buf = [0u8; 4096];
    loop {
        let start = pos.saturating_sub(buf.len() as u64);
        let n = (pos - start) as usize;
        f.seek(SeekFrom::Start(start)).map_err(io(path))?;
        f.read_exact(&mut buf[..n]).map_err(io(path))?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep < len {
                f.set_len(keep).map_err(io(path))?;
            }
            return Ok(len - keep);
        }
        if start == 0 {
            // Not even a whole header line: start the file afresh.
            f.set_len(0).map_err(io(path))?;
            return Ok(len);
        }
        pos = start;
    }
}

/// Writes a file via a temporary file, synced, and a rename, so that readers
/// never see half of it, even after a power cut.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_whole(path, bytes, true)
}

/// Writes a file via a temporary file and a rename, so that no reader and no
/// crash of ours ever leaves half of it. `durable`: sync the data before the
/// rename (a game record is not: games.csv is synced every few seconds, and
/// a sync per game would cost the league its throughput).
fn write_whole(path: &Path, bytes: &[u8], durable: bool) -> Result<(), StoreError> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(bytes).map_err(io(&tmp))?;
        if durable {
            f.sync_data().map_err(io(&tmp))?;
        }
    }
    std::fs::rename(&tmp, path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }

    fn meta(fp: &str) -> LeagueMeta {
        LeagueMeta {
            name: "t".into(),
            fingerprint: fp.into(),
            games: 3,
            shard: None,
        }
    }

    #[test]
    fn rows_survive_reopen_and_torn_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        s.commit(b"{}\n", &row("g1")).unwrap();
        s.commit(b"{}\n", &row("g2")).unwrap();
        drop(s);
        // A crash in the middle of the third row.
        let path = Layout::new(dir.path()).games_csv();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"g3,diffusion,2,g,a,b,,1,0").unwrap();
        drop(f);

        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert_eq!(s.repaired_bytes, 25);
        assert!(s.is_done("g1") && s.is_done("g2") && !s.is_done("g3"));
        s.commit(b"{}\n", &row("g3")).unwrap();
        assert!(Layout::new(dir.path()).record("g3").is_file());
        let rows = s.rows().unwrap();
        assert_eq!(
            rows.iter().map(|r| r.game_id.as_str()).collect::<Vec<_>>(),
            ["g1", "g2", "g3"]
        );
        assert_eq!(rows[0], row("g1"));
        // One header only.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("game_id").count(), 1);
    }

    #[test]
    fn a_record_that_cannot_be_written_commits_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        s.commit(b"{}\n", &row("g1")).unwrap();
        // A non-empty folder where g2's record should go.
        std::fs::create_dir_all(Layout::new(dir.path()).record("g2").join("x")).unwrap();
        let e = s.commit(b"{}\n", &row("g2")).unwrap_err().to_string();
        assert!(e.contains("g2.jsonl"), "{e}");
        assert!(!s.is_done("g2"));
        let ids: Vec<String> = s.rows().unwrap().into_iter().map(|r| r.game_id).collect();
        assert_eq!(ids, ["g1"]);
    }

    #[test]
    fn another_schedule_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(ResultsDir::open(dir.path(), &meta("x")).unwrap());
        let e = ResultsDir::open(dir.path(), &meta("y"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("different schedule"), "{e}");
    }
}
