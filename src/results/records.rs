//! Where a game's record is, from its row (issue 16): a byte range of a
//! record log of the results folder's `games/` (`record_file`,
//! `record_offset`, `record_length`), or, for rows of older versions (those
//! columns empty), the file `games/GAME_ID.jsonl`. Read by the league, the
//! command line and the HTML report; written by the league
//! (`league::folder::records`).

use super::GameRow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The name of log number `n`: `records-0000.jsonl`.
pub fn log_name(n: u32) -> String {
    format!("records-{n:04}.jsonl")
}

/// Whether `name` is a log's name (and nothing else: no folder, no `..`).
pub fn is_log_name(name: &str) -> bool {
    name.strip_prefix("records-")
        .and_then(|r| r.strip_suffix(".jsonl"))
        .is_some_and(|n| n.len() >= 4 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Where one game's record is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordAt {
    /// `length` bytes at `offset` of a record log.
    Log {
        path: PathBuf,
        offset: u64,
        length: u64,
    },
    /// A file of its own (`games/GAME_ID.jsonl`, older versions).
    File(PathBuf),
}

impl RecordAt {
    /// Where `row`'s record is, in the records folder `games`; `None` for
    /// a row that names no valid place (a game id or log name that could
    /// reach outside the folder, or a log without its offset).
    pub fn of(games: &Path, row: &GameRow) -> Option<RecordAt> {
        if row.record_file.is_empty() {
            let id = &row.game_id;
            if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
                return None;
            }
            return Some(RecordAt::File(games.join(format!("{id}.jsonl"))));
        }
        if !is_log_name(&row.record_file) {
            return None;
        }
        Some(RecordAt::Log {
            path: games.join(&row.record_file),
            offset: row.record_offset?,
            length: row.record_length?,
        })
    }

    /// The file the record is in.
    pub fn path(&self) -> &Path {
        match self {
            RecordAt::Log { path, .. } | RecordAt::File(path) => path,
        }
    }

    /// The record's bytes. A range past the end of its log is an error
    /// (checked before anything is allocated).
    pub fn read(&self) -> std::io::Result<Vec<u8>> {
        match self {
            RecordAt::File(p) => std::fs::read(p),
            RecordAt::Log {
                path,
                offset,
                length,
            } => {
                let mut f = File::open(path)?;
                let len = f.metadata()?.len();
                if offset.checked_add(*length).is_none_or(|end| end > len) {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!(
                            "the record's bytes {offset}..+{length} lie past the end of the log ({len} bytes)"
                        ),
                    ));
                }
                f.seek(SeekFrom::Start(*offset))?;
                let mut buf = vec![0; *length as usize];
                f.read_exact(&mut buf)?;
                Ok(buf)
            }
        }
    }

    /// The record as text.
    pub fn read_text(&self) -> std::io::Result<String> {
        String::from_utf8(self.read()?).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "the record is not UTF-8")
        })
    }

    /// Whether the record is there without reading it: its log is long
    /// enough, or its file exists and is not empty. `Some(why)` if not.
    pub fn problem(&self, log_len: &mut dyn FnMut(&Path) -> Option<u64>) -> Option<String> {
        match self {
            RecordAt::File(p) => match std::fs::metadata(p) {
                Ok(m) if m.is_file() && m.len() > 0 => None,
                Ok(_) => Some(format!("its record {} is empty", p.display())),
                Err(e) => Some(format!("its record {}: {e}", p.display())),
            },
            RecordAt::Log {
                path,
                offset,
                length,
            } => match log_len(path) {
                None => Some(format!("its record log {} is missing", path.display())),
                Some(len) if offset.checked_add(*length).is_none_or(|e| e > len) => Some(format!(
                    "its record ({} bytes at {offset}) lies past the end of {} ({len} bytes)",
                    length,
                    path.display()
                )),
                Some(_) => None,
            },
        }
    }
}
