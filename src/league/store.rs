//! A league's results folder: `games.csv` (appended and flushed row by row),
//! `games/GAME_ID.jsonl` records, `logs/`, and `league.json`, which ties
//! the folder to one schedule so that a resume never mixes two leagues.
//!
//! Owns crash safety: a row is the commit point of a game. On open, a torn
//! last line (a run killed mid-write) is cut off; the games whose rows are
//! complete are done, every other game is (re)run.

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

/// An open results folder.
pub struct Store {
    dir: PathBuf,
    csv: csv::Writer<File>,
    done: BTreeSet<String>,
    /// Bytes cut off a torn last line on open (0 if the file was whole).
    pub repaired_bytes: u64,
}

pub const GAMES_CSV: &str = "games.csv";

impl Store {
    /// Opens (creating if needed) the folder for `meta`. Fails if the
    /// folder holds results of a different schedule.
    pub fn open(dir: &Path, meta: &LeagueMeta) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir.join("games")).map_err(io(dir))?;
        std::fs::create_dir_all(dir.join("logs")).map_err(io(dir))?;
        let meta_path = dir.join("league.json");
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

        let csv_path = dir.join(GAMES_CSV);
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
        Ok(Store {
            dir: dir.to_path_buf(),
            csv,
            done,
            repaired_bytes,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn is_done(&self, game_id: &str) -> bool {
        self.done.contains(game_id)
    }

    pub fn done_count(&self) -> usize {
        self.done.len()
    }

    /// Appends one finished game and flushes it to the operating system: the
    /// game is done from here on.
    pub fn append(&mut self, row: &GameRow) -> Result<(), StoreError> {
        let path = self.dir.join(GAMES_CSV);
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
        let path = self.dir.join(GAMES_CSV);
        self.csv.flush().map_err(io(&path))?;
        self.csv.get_ref().sync_data().map_err(io(&path))
    }

    /// Path of a game's record.
    pub fn record_path(dir: &Path, game_id: &str) -> PathBuf {
        dir.join("games").join(format!("{game_id}.jsonl"))
    }

    /// Every row written so far, read back from the file.
    pub fn rows(&self) -> Result<Vec<GameRow>, StoreError> {
        Ok(csvio::read_rows(&self.dir.join(GAMES_CSV))?)
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

/// Writes a file via a temporary file and a rename, so that readers never
/// see half of it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(bytes).map_err(io(&tmp))?;
        f.sync_data().map_err(io(&tmp))?;
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
        let mut s = Store::open(dir.path(), &meta("x")).unwrap();
        s.append(&row("g1")).unwrap();
        s.append(&row("g2")).unwrap();
        drop(s);
        // A crash in the middle of the third row.
        let path = dir.path().join(GAMES_CSV);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"g3,diffusion,2,g,a,b,,1,0").unwrap();
        drop(f);

        let mut s = Store::open(dir.path(), &meta("x")).unwrap();
        assert_eq!(s.repaired_bytes, 25);
        assert!(s.is_done("g1") && s.is_done("g2") && !s.is_done("g3"));
        s.append(&row("g3")).unwrap();
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
    fn another_schedule_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path(), &meta("x")).unwrap());
        let e = Store::open(dir.path(), &meta("y"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("different schedule"), "{e}");
    }
}
