//! The rows of games.csv: reading them one at a time, checking them
//! against the schedule and their records, the done set, torn tails.

use super::layout::{io, StoreError};
use crate::results::records::RecordAt;
use crate::results::{csvio, GameRow};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// What the schedule says a game is: its variant and its bots by seat,
/// its seed, and its opening where it is to be compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The game's place in the schedule.
    pub index: usize,
    pub variant: String,
    pub seats: Vec<String>,
    /// The seed its row must carry (its seat-swap group's), if known.
    pub seed: Option<u64>,
    /// Its opening as the row writes it (decisions joined by spaces), when
    /// it is to be compared: drawn again for each row, so only where
    /// league.json, which would have refused other settings, was missing.
    pub opening: Option<String>,
}

/// A row of games.csv the schedule does not account for.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    /// Its line in games.csv.
    pub line: u64,
    pub row: GameRow,
    pub why: String,
}

/// How the header of the results CSV at `path` stands against this
/// version's columns, which new rows are appended under.
#[derive(Debug, PartialEq)]
pub(super) enum Header {
    /// This version's columns, in order (a byte-order mark aside).
    Ours,
    /// A start of them: a folder of an older version.
    Older,
    /// Other columns, or ours in another order (a file rewritten by a
    /// spreadsheet or pandas): the names that are not ours.
    Other(Vec<String>),
}

/// Reads the header line of the results CSV at `path` (`Ours` if there is
/// none to read).
pub(super) fn header_of(path: &Path) -> Header {
    let Ok(mut r) = csv::ReaderBuilder::new().has_headers(true).from_path(path) else {
        return Header::Ours;
    };
    let Ok(names) = r.headers() else {
        return Header::Ours;
    };
    let names: Vec<&str> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if i == 0 {
                n.trim_start_matches('\u{feff}')
            } else {
                n
            }
        })
        .map(str::trim)
        .collect();
    let ours: Vec<&str> = csvio::all_columns().collect();
    if names == ours {
        Header::Ours
    } else if names.len() < ours.len() && names[..] == ours[..names.len()] {
        Header::Older
    } else {
        let others = names.iter().filter(|n| !ours.contains(n));
        Header::Other(others.map(|n| n.to_string()).collect())
    }
}

/// A CSV writer appending to `path` (created if needed), with a header
/// line first when `header`.
pub(super) fn append_to(path: &Path, header: bool) -> Result<csv::Writer<File>, StoreError> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io(path))?;
    Ok(csv::WriterBuilder::new()
        .has_headers(header)
        .from_writer(file))
}

/// games.csv, appended to a whole row at a time. The league commits a game
/// by its row's newline, so a row is one `write_all` of its line (the
/// header line with the first row of a new file); if that fails (a full
/// disk), the file is cut back to where the row started. A torn row would
/// otherwise stay at the end, and one torn inside its last field (a record
/// length cut to its first digit) still parses.
pub(super) struct RowAppender {
    path: PathBuf,
    file: File,
    /// The file's length: where the next row starts.
    len: u64,
    /// Whether the header line is still to be written (a new file).
    header: bool,
}

impl RowAppender {
    /// Appends to `path` (created if needed), with a header line first when
    /// `header`.
    pub(super) fn open(path: &Path, header: bool) -> Result<RowAppender, StoreError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io(path))?;
        let len = file.metadata().map_err(io(path))?.len();
        Ok(RowAppender {
            path: path.to_path_buf(),
            file,
            len,
            header,
        })
    }

    /// Appends `row`'s line.
    pub(super) fn append(&mut self, row: &GameRow) -> Result<(), StoreError> {
        let path = &self.path;
        let mut line = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::with_capacity(256));
        let written = match self.header {
            true => line.write_record(csvio::all_columns()),
            false => Ok(()),
        }
        .and_then(|()| line.serialize(row));
        let line = written
            .and_then(|()| line.into_inner().map_err(|e| e.into_error().into()))
            .map_err(|e| StoreError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other(e),
            })?;
        if let Err(e) = self.file.write_all(&line) {
            let _ = self.file.set_len(self.len);
            return Err(io(path)(e));
        }
        self.len += line.len() as u64;
        self.header = false;
        Ok(())
    }

    /// Syncs the file to stable storage.
    pub(super) fn sync(&self) -> Result<(), StoreError> {
        self.file.sync_data().map_err(io(&self.path))
    }

    /// Fails unless the path still names the file being appended to.
    pub(super) fn still_in_place(&self) -> Result<(), StoreError> {
        still_in_place(&self.file, &self.path)
    }
}

/// Fails, naming `path`, unless `path` still names `file` (the same file,
/// not deleted): a file deleted, moved or replaced while a run appends to
/// it takes what is written since with it.
pub(super) fn still_in_place(file: &File, path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata().map_err(io(path))?;
    let same = match std::fs::metadata(path) {
        Ok(now) => now.dev() == open.dev() && now.ino() == open.ino() && open.nlink() > 0,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(io(path)(e)),
    };
    match same {
        true => Ok(()),
        false => Err(StoreError::Mismatch {
            path: path.to_path_buf(),
            why: "was deleted, moved or replaced while this run was writing it, so what the run wrote to it since is lost. Put it back if it was moved, and run the same command again: a resume plays again the games whose rows or records are gone (rows whose record is missing are named, and --repair sets them aside)".to_string(),
        }),
    }
}

/// A record's first line (its `game` line) parsed; null when it is not
/// JSON.
pub(super) fn game_line(text: &str) -> serde_json::Value {
    text.lines()
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_default()
}

/// Why the record of `row`'s game does not back the row, if it does not:
/// missing, without its `end` line, or with another result.
pub(super) fn record_problem(at: &RecordAt, row: &GameRow) -> Option<String> {
    let path = at.path();
    let text = match at.read() {
        Ok(t) => String::from_utf8_lossy(&t).into_owned(),
        Err(e) => return Some(format!("its record {}: {e}", path.display())),
    };
    let first = game_line(&text);
    if first["type"] != "game" || first["game_id"] != row.game_id.as_str() {
        return Some(format!(
            "its record in {} does not start with the game line of {}",
            path.display(),
            row.game_id
        ));
    }
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let end: serde_json::Value = match serde_json::from_str(last) {
        Ok(v) => v,
        Err(_) => return Some(format!("its record {} is incomplete", path.display())),
    };
    if end["type"] != "end" {
        return Some(format!("its record {} has no end line", path.display()));
    }
    let scores: Vec<f64> = end["scores"]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
        .unwrap_or_default();
    let same_scores = scores.len() == row.scores().len()
        && scores
            .iter()
            .zip(row.scores())
            .all(|(a, b)| (a - b).abs() < 1e-9);
    if end["reason"] != row.reason.as_str() || !same_scores {
        return Some(format!(
            "its record {} ends {} {:?}, the row says {} {:?}",
            path.display(),
            end["reason"],
            scores,
            row.reason,
            row.scores()
        ));
    }
    None
}

/// What `repair_torn_tail` did to a last line without its newline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tail {
    /// Bytes cut off: a row torn by a crash.
    pub cut: u64,
    /// Whether the line was a whole row (as many fields as the header: a
    /// file saved by an editor or a script without a last newline), given
    /// its newline and kept. Its record is checked as the last row's is.
    pub completed: bool,
}

/// Cuts a last line that has no newline (a write torn by a crash), unless
/// it has as many fields as the header line: that one is given its newline
/// (a row torn inside its last field also has them all, and the resume's
/// check of the last row's record sets it aside, kept in rejected.csv).
pub fn repair_torn_tail(path: &Path) -> Result<Tail, StoreError> {
    let mut f = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Tail::default()),
        Err(e) => return Err(io(path)(e)),
    };
    let len = f.metadata().map_err(io(path))?.len();
    if len == 0 {
        return Ok(Tail::default());
    }
    let cut = |cut| Tail {
        cut,
        completed: false,
    };
    // Scan back from the end for the last newline.
    let mut pos = len;
    let mut buf = [0u8; 4096];
    loop {
        let start = pos.saturating_sub(buf.len() as u64);
        let n = (pos - start) as usize;
        f.seek(SeekFrom::Start(start)).map_err(io(path))?;
        f.read_exact(&mut buf[..n]).map_err(io(path))?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let whole = start + i as u64 + 1;
            if whole < len && is_whole_row(&mut f, whole, len).map_err(io(path))? {
                // Kept: the line is given its newline.
                f.seek(SeekFrom::End(0)).map_err(io(path))?;
                f.write_all(b"\n").map_err(io(path))?;
                return Ok(Tail {
                    cut: 0,
                    completed: true,
                });
            }
            if whole < len {
                f.set_len(whole).map_err(io(path))?;
            }
            return Ok(cut(len - whole));
        }
        if start == 0 {
            // Not even a whole header line: a header torn as it was
            // written, and the file is started afresh. Anything else
            // without a newline (lines that end in `\r` alone, another
            // file) is not cut: it may hold every row.
            let header = csvio::header_line();
            if len > header.len() as u64 || !header.as_bytes().starts_with(&buf[..n]) {
                return Err(StoreError::Mismatch {
                    path: path.to_path_buf(),
                    why: format!(
                        "has no newline (`\\n`) in its {len} bytes, and is not the start of a header torn as it was written: its lines end otherwise (in `\\r` alone, as some editors save them?). Nothing was cut. Give its lines `\\n` endings (`tr '\\r' '\\n'`), and run the same command again"
                    ),
                });
            }
            f.set_len(0).map_err(io(path))?;
            return Ok(cut(len));
        }
        pos = start;
    }
}

/// Whether the last line (from `from` to `len`) is a whole row: not blank,
/// and as many fields as the header line. A last line longer than any row
/// is not.
fn is_whole_row(f: &mut File, from: u64, len: u64) -> std::io::Result<bool> {
    const LONGEST: u64 = 1 << 20;
    if len - from > LONGEST {
        return Ok(false);
    }
    let mut tail = vec![0u8; (len - from) as usize];
    f.seek(SeekFrom::Start(from))?;
    f.read_exact(&mut tail)?;
    if tail.iter().all(u8::is_ascii_whitespace) {
        return Ok(false);
    }
    f.seek(SeekFrom::Start(0))?;
    let mut header = Vec::new();
    std::io::BufReader::new(&mut *f)
        .take(LONGEST)
        .read_until(b'\n', &mut header)?;
    let fields = |line: &[u8]| {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line)
            .byte_records()
            .next()
            .and_then(Result::ok)
            .map(|r| r.len())
    };
    let header = fields(&header);
    Ok(header.is_some() && header == fields(&tail))
}

/// Writes a file into place ([`crate::files::write_file`]: a temporary
/// file of its own beside it, synced, renamed over it, and the folder
/// synced), so that readers never see half of it, even after a power cut;
/// an error names the file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    crate::files::write_file(path, bytes).map_err(io(path))
}

/// Calls `each(line, row)` for every row of the results CSV at `path`, in
/// order, one row at a time (`csvio::RowReader`): memory stays bounded
/// whatever the rows, every row is checked as `arena rate` checks it, and
/// an error names the file's own line. A missing file has no rows.
pub fn scan_rows(
    path: &Path,
    each: &mut dyn FnMut(u64, &GameRow) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut rows = match csvio::RowReader::open(path) {
        Ok(r) => r,
        Err(csvio::CsvError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(())
        }
        Err(e) => return Err(e.into()),
    };
    while let Some((line, row)) = rows.next_row()? {
        each(line, row)?;
    }
    Ok(())
}
