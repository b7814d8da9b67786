//! The game records of a results folder: append-only record logs, and
//! where each game's record is (issues 16 and 35).
//!
//! A league appends every record, as one zstd frame
//! ([`crate::results::records::Frame`]), to a log in `games/`:
//! `games/records-0000.jsonl.zst`, then `records-0001.jsonl.zst` once the
//! current one holds [`ROLL_BYTES`], and so on. A log is the frames one
//! after another, nothing else, so that `zstd -dc -D games/records.zdict`
//! gives its JSON lines (each record starting with its `game` line and
//! ending with its `end` line, the lines of `referee::record`). A game's
//! row in games.csv says where its record is: `record_file` (the log's
//! name), `record_offset` (the byte its frame starts at) and
//! `record_length` (the frame's bytes). The row is the index: no other
//! file has to agree with games.csv.
//!
//! Logs of versions before issue 35 are plain JSON lines
//! (`records-NNNN.jsonl`), the row's range the record's lines; they are
//! read as they are and never appended to: a resume starts the next
//! number as a log of frames. Rows of older versions still have the three
//! columns empty: their record is the file `games/GAME_ID.jsonl`, which
//! every reader here still finds.
//!
//! Crash safety (`ResultsDir::commit`): a record is appended before its
//! row, and a log is synced before games.csv is; so a row always points at
//! whole bytes, and bytes after the last row's record are a record whose
//! row was never written (a frame torn by `kill -9`, say), cut on resume.

use super::layout::{io, Layout, StoreError};
use crate::results::records::{is_compressed, DICTIONARY, DICTIONARY_FILE};
pub use crate::results::records::{is_log_name, log_name, plain_log_name, Frame, RecordAt};
use crate::results::{csvio, GameRow};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};

/// A log is rolled (the next one started) once it holds this many bytes.
pub const ROLL_BYTES: u64 = 1 << 30;

/// The logs of `games` (the folder), in order: `records-0000.jsonl.zst`
/// (or `records-0000.jsonl`, plain, of an earlier version), then number 1,
/// ... up to the first missing number. Found by their names, without
/// listing a folder that may hold a million files of an older version.
pub fn logs(games: &Path) -> Vec<(u32, PathBuf)> {
    (0u32..)
        .map_while(|n| {
            [log_name(n), plain_log_name(n)]
                .into_iter()
                .map(|name| games.join(name))
                .find(|p| p.exists())
                .map(|p| (n, p))
        })
        .collect()
}

/// Writes `games/records.zdict` (the dictionary of the frames, for
/// `zstd -D`) if it is not there or not this dictionary.
fn write_dictionary(games: &Path) -> Result<(), StoreError> {
    let path = games.join(DICTIONARY_FILE);
    if std::fs::read(&path).is_ok_and(|b| b == DICTIONARY) {
        return Ok(());
    }
    super::rows::write_atomically(&path, DICTIONARY)
}

/// The log the league appends to: the last one, opened at its end.
pub struct Appender {
    games: PathBuf,
    number: u32,
    name: String,
    file: File,
    len: u64,
    roll: u64,
}

impl Appender {
    /// Opens the last log of `games` (or the first, created), to append
    /// to; a new one is started once a log holds `roll` bytes, and after a
    /// plain log of an earlier version. Writes `games/records.zdict`.
    pub fn open(games: &Path, roll: u64) -> Result<Appender, StoreError> {
        write_dictionary(games)?;
        let number = match logs(games).last() {
            None => 0,
            Some((n, path)) if is_compressed(path) => *n,
            Some((n, _)) => n + 1,
        };
        Appender::open_number(games, number, roll)
    }

    fn open_number(games: &Path, number: u32, roll: u64) -> Result<Appender, StoreError> {
        let name = log_name(number);
        let path = games.join(&name);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        let len = file.metadata().map_err(io(&path))?.len();
        Ok(Appender {
            games: games.to_path_buf(),
            number,
            name,
            file,
            len,
            roll,
        })
    }

    /// Appends one record's frame (in one write), returning its log's name
    /// and its offset. On error the log is cut back to where the frame
    /// started.
    pub fn append(&mut self, frame: &Frame) -> Result<(String, u64), StoreError> {
        let record = frame.bytes();
        if self.len >= self.roll && self.len > 0 {
            self.file.sync_data().map_err(io(&self.path()))?;
            *self = Appender::open_number(&self.games, self.number + 1, self.roll)?;
        }
        let offset = self.len;
        if let Err(e) = self.file.write_all(record) {
            let _ = self.file.set_len(offset);
            return Err(io(&self.path())(e));
        }
        self.len += record.len() as u64;
        Ok((self.name.clone(), offset))
    }

    /// Syncs the log to stable storage (before games.csv is).
    pub fn sync(&self) -> Result<(), StoreError> {
        self.file.sync_data().map_err(io(&self.path()))
    }

    /// Fails unless the log is still where it was opened (not deleted with
    /// `games/`, moved or replaced).
    pub fn still_in_place(&self) -> Result<(), StoreError> {
        super::rows::still_in_place(&self.file, &self.path())
    }

    fn path(&self) -> PathBuf {
        self.games.join(&self.name)
    }
}

/// Cuts every log of `games` to `committed(name)` bytes, the end of its
/// last record that has a row: the bytes after it are records whose rows
/// were never written (a run killed between the two writes, a frame torn
/// half-way; or rows lost from games.csv). They are appended first, as
/// they are, to `aside.0` (from plain logs: JSON lines) or `aside.1` (from
/// logs of frames: frames, the last perhaps torn), so nothing recorded is
/// lost, and synced there before any log is cut. Returns the bytes cut.
pub fn cut_uncommitted(
    games: &Path,
    committed: &dyn Fn(&str) -> u64,
    aside: (&Path, &Path),
) -> Result<u64, StoreError> {
    let mut tails = Vec::new();
    for (_, path) in logs(games) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let end = committed(&name);
        let meta = std::fs::metadata(&path).map_err(io(&path))?;
        // Not a file: nothing to cut (appending to it fails, naming it).
        let len = if meta.is_file() { meta.len() } else { continue };
        if len > end {
            tails.push((path, end, len));
        }
    }
    if tails.is_empty() {
        return Ok(0);
    }
    // Each log opened for writing first: one that cannot be cut (read-only)
    // stops everything before a byte is copied aside, so that a run
    // started again does not copy the same bytes twice.
    let writable = tails
        .iter()
        .map(|(path, _, _)| OpenOptions::new().write(true).open(path).map_err(io(path)))
        .collect::<Result<Vec<File>, _>>()?;
    for (path, end, _) in &tails {
        let aside = if is_compressed(path) {
            aside.1
        } else {
            aside.0
        };
        let mut out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(aside)
            .map_err(io(aside))?;
        let mut f = File::open(path).map_err(io(path))?;
        f.seek(std::io::SeekFrom::Start(*end)).map_err(io(path))?;
        std::io::copy(&mut f, &mut out).map_err(io(aside))?;
        out.sync_all().map_err(io(aside))?;
    }
    let mut cut = 0;
    for ((path, end, len), f) in tails.into_iter().zip(writable) {
        f.set_len(end).map_err(io(&path))?;
        cut += len - end;
    }
    Ok(cut)
}

/// The row of `game_id` in the results CSV `csv` (its first one), found
/// by reading the file line by line (no row but that one is parsed) when
/// `game_id` is its first column, as a league writes it. A file whose
/// columns are in another order, whose line of that game does not read
/// alone (a damaged row), with a quote before that line (a quoted field
/// may hold a line break, and a line inside it is no row), or where no
/// line starts with the game (lines that end with a lone CR, a game that
/// is not there) is read row by row as every reader reads it: a row that
/// does not read is then the error, with its line, not "no such game".
pub fn find_row(csv: &Path, game_id: &str) -> Result<Option<GameRow>, StoreError> {
    let f = File::open(csv).map_err(io(csv))?;
    let mut r = std::io::BufReader::with_capacity(1 << 20, f);
    let mut header = Vec::new();
    r.read_until(b'\n', &mut header).map_err(io(csv))?;
    let names = header.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&header);
    if !(names.starts_with(b"game_id,") || names.starts_with(b"\"game_id\",")) {
        return scan_for_row(csv, game_id);
    }
    let plain = format!("{game_id},");
    let quoted = format!("\"{game_id}\",");
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line).map_err(io(csv))? == 0 {
            return scan_for_row(csv, game_id);
        }
        let rest = [&plain, &quoted]
            .iter()
            .find_map(|p| line.strip_prefix(p.as_bytes()));
        if memchr::memchr(b'"', rest.unwrap_or(&line)).is_some() {
            return scan_for_row(csv, game_id);
        }
        if rest.is_none() {
            continue;
        }
        let mut text = header.clone();
        text.extend_from_slice(&line);
        let Ok(f) = csvio::parse(csv, &text) else {
            return scan_for_row(csv, game_id);
        };
        if let Some((_, row)) = f.rows.into_iter().find(|(_, r)| r.game_id == game_id) {
            return Ok(Some(row));
        }
    }
}

/// [`find_row`] by reading every row up to that game's.
fn scan_for_row(csv: &Path, game_id: &str) -> Result<Option<GameRow>, StoreError> {
    let mut rows = csvio::RowReader::open(csv)?;
    while let Some((_, row)) = rows.next_row()? {
        if row.game_id == game_id {
            return Ok(Some(row.clone()));
        }
    }
    Ok(None)
}

/// Whether the last line of `csv` is cut short (no newline at its end)
/// and begins with `game_id`'s field: a row readers skip as torn.
fn torn_last_row_is(csv: &Path, game_id: &str) -> bool {
    use std::io::{Read, SeekFrom};
    let Ok(mut f) = File::open(csv) else {
        return false;
    };
    let Ok(len) = f.seek(SeekFrom::End(0)) else {
        return false;
    };
    let from = len.saturating_sub(1 << 16);
    let mut tail = Vec::new();
    if f.seek(SeekFrom::Start(from)).is_err() || f.read_to_end(&mut tail).is_err() {
        return false;
    }
    if tail.ends_with(b"\n") {
        return false;
    }
    // No line break in the tail: the header alone, or a line too long
    // for a row.
    let Some(at) = memchr::memrchr(b'\n', &tail) else {
        return false;
    };
    let last = &tail[at + 1..];
    [format!("{game_id},"), format!("\"{game_id}\",")]
        .iter()
        .any(|p| last.starts_with(p.as_bytes()))
}

/// The record of `game_id` in the results folder `layout`: its row's
/// place (or, for a game without a row, a file of an older version), and
/// its text. A games.csv that does not read up to the game's row is the
/// error, unless the game has a file of its own.
pub fn find_record(layout: &Layout, game_id: &str) -> Result<(RecordAt, String), StoreError> {
    let csv = layout.games_csv();
    if game_id.trim().is_empty() {
        return Err(StoreError::Mismatch {
            path: csv,
            why: "the game id given is empty: give one of games.csv's `game_id`s".into(),
        });
    }
    let without_row = || GameRow {
        game_id: game_id.to_string(),
        ..GameRow::default()
    };
    // Said when no record is found either: "no row in games.csv" of a
    // folder without one sent the user looking for a row.
    let mut no_csv = false;
    let row = match find_row(&csv, game_id) {
        Ok(Some(row)) => row,
        Ok(None) => without_row(),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            no_csv = true;
            without_row()
        }
        Err(e) => match RecordAt::of(&layout.records(), &without_row()) {
            Some(at) if at.path().is_file() => without_row(),
            _ => return Err(e),
        },
    };
    let at = RecordAt::of(&layout.records(), &row).ok_or_else(|| StoreError::Mismatch {
        path: csv.clone(),
        why: format!("game `{game_id}` names no valid record place"),
    })?;
    if row.record_file.is_empty() && !at.path().is_file() {
        let torn = !no_csv && torn_last_row_is(&csv, game_id);
        return Err(StoreError::Mismatch {
            path: csv,
            why: match no_csv {
                false if torn => format!(
                    "game `{game_id}` has only a torn row, the last line of games.csv cut short (a run stopped while it wrote it): no game of it is kept here, and a resume plays it again"
                ),
                false => format!("no game `{game_id}` here (no row in games.csv, no record file)"),
                true => format!(
                    "no such file, and no record file of game `{game_id}`: is this a league's results folder?"
                ),
            },
        });
    }
    let text = at.read_text().map_err(io(at.path()))?;
    // The row's place must hold its own game, not a neighbour's.
    if let Some(other) = super::rows::game_line(&text)["game_id"].as_str() {
        if other != game_id {
            return Err(StoreError::Mismatch {
                path: csv,
                why: format!(
                    "the record that game `{game_id}`'s row points to ({}) is game `{other}`'s: the row's record_file, record_offset or record_length is wrong",
                    at.path().display()
                ),
            });
        }
    }
    Ok((at, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::records::encode;

    #[test]
    fn names_of_logs_and_only_them() {
        assert_eq!(log_name(3), "records-0003.jsonl.zst");
        assert_eq!(plain_log_name(3), "records-0003.jsonl");
        for good in [
            "records-0003.jsonl",
            "records-12345.jsonl",
            "records-0003.jsonl.zst",
        ] {
            assert!(is_log_name(good), "{good}");
        }
        for bad in [
            "records-03.jsonl",
            "../records-0000.jsonl",
            "records-000a.jsonl",
            "x.jsonl",
            "records-0000.zst",
            "records-0000.jsonl.zst.zst",
            "records.zdict",
        ] {
            assert!(!is_log_name(bad), "{bad}");
        }
        let row = GameRow {
            game_id: "g".into(),
            record_file: "../../etc/passwd".into(),
            record_offset: Some(0),
            record_length: Some(3),
            ..GameRow::default()
        };
        assert_eq!(RecordAt::of(Path::new("games"), &row), None);
    }

    #[test]
    fn appends_roll_and_read_back_by_place() {
        let dir = tempfile::tempdir().unwrap();
        let recs = ["{\"a\":1}\n", "{\"b\":22}\n", "{\"c\":333}\n"];
        let frames: Vec<Frame> = recs.iter().map(|r| encode(r.as_bytes()).unwrap()).collect();
        let roll = frames[0].bytes().len() as u64 + 1;
        let mut a = Appender::open(dir.path(), roll).unwrap();
        let mut places = Vec::new();
        for (rec, frame) in recs.iter().zip(&frames) {
            let (file, offset) = a.append(frame).unwrap();
            places.push((file, offset, rec, frame.bytes().len() as u64));
        }
        // The first holds less than `roll`: the second goes there too.
        assert_eq!(places[0].0, "records-0000.jsonl.zst");
        assert_eq!(places[1].0, "records-0000.jsonl.zst");
        assert_eq!(places[2].0, "records-0001.jsonl.zst");
        assert_eq!((places[1].1, places[2].1), (roll - 1, 0));
        for (file, offset, rec, length) in &places {
            let at = RecordAt::Log {
                path: dir.path().join(file),
                offset: *offset,
                length: *length,
            };
            assert_eq!(at.read_text().unwrap(), **rec);
        }
        // Reopened, it appends to the last log, or rolls it if full.
        drop(a);
        let x = encode(b"x\n").unwrap();
        let mut a = Appender::open(dir.path(), 1 << 20).unwrap();
        let at = frames[2].bytes().len() as u64;
        assert_eq!(a.append(&x).unwrap(), ("records-0001.jsonl.zst".into(), at));
        drop(a);
        let mut a = Appender::open(dir.path(), 1).unwrap();
        assert_eq!(a.append(&x).unwrap(), ("records-0002.jsonl.zst".into(), 0));
        // A range past the end is an error, not an allocation.
        let at = RecordAt::Log {
            path: dir.path().join("records-0000.jsonl.zst"),
            offset: 4,
            length: u64::MAX - 1,
        };
        assert!(at.read().is_err());
        assert!(at
            .problem(&mut |p| std::fs::metadata(p).ok().map(|m| m.len()))
            .is_some());
        // A range that is not one whole frame is an error naming its offset.
        let at = RecordAt::Log {
            path: dir.path().join("records-0000.jsonl.zst"),
            offset: 0,
            length: places[0].3 + 3,
        };
        let e = at.read().unwrap_err().to_string();
        assert!(
            e.contains("at byte 0") && e.contains("not one zstd frame"),
            "{e}"
        );
        let at = RecordAt::Log {
            path: dir.path().join("records-0000.jsonl.zst"),
            offset: 0,
            length: places[0].3 - 2,
        };
        let e = at.read().unwrap_err().to_string();
        assert!(e.contains("torn or damaged"), "{e}");
    }

    /// A plain log of an earlier version is read as it is, and never
    /// appended to: the next number is a log of frames.
    #[test]
    fn after_a_plain_log_comes_a_log_of_frames() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(plain_log_name(0)), "{\"a\":1}\n").unwrap();
        let at = RecordAt::Log {
            path: dir.path().join(plain_log_name(0)),
            offset: 0,
            length: 8,
        };
        assert_eq!(at.read_text().unwrap(), "{\"a\":1}\n");
        let mut a = Appender::open(dir.path(), 1 << 30).unwrap();
        let x = encode(b"x\n").unwrap();
        assert_eq!(a.append(&x).unwrap(), ("records-0001.jsonl.zst".into(), 0));
        let names: Vec<PathBuf> = logs(dir.path()).into_iter().map(|(_, p)| p).collect();
        assert_eq!(
            names,
            [
                dir.path().join("records-0000.jsonl"),
                dir.path().join("records-0001.jsonl.zst")
            ]
        );
    }

    #[test]
    fn uncommitted_bytes_are_cut_and_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(plain_log_name(0)), "whole\ntorn").unwrap();
        std::fs::write(dir.path().join(log_name(1)), "frame+torn").unwrap();
        let aside = dir.path().join("aside.jsonl");
        let frames = dir.path().join("aside.jsonl.zst");
        let cut = cut_uncommitted(
            dir.path(),
            &|name| match name {
                "records-0000.jsonl" => 6,
                "records-0001.jsonl.zst" => 5,
                _ => 0,
            },
            (&aside, &frames),
        )
        .unwrap();
        assert_eq!(cut, 4 + 5);
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), "torn");
        assert_eq!(std::fs::read_to_string(&frames).unwrap(), "+torn");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(plain_log_name(0))).unwrap(),
            "whole\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(log_name(1))).unwrap(),
            "frame"
        );
    }

    /// `find_row` finds a game's row as every reader of games.csv reads
    /// it: in a file whose lines end with a lone CR (the rows read, the
    /// line-by-line search saw one line), and not on a line inside a
    /// quoted field of the row before (which is no row at all).
    #[test]
    fn find_row_reads_rows_as_the_csv_reader_does() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("games.csv");
        let h = "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening";
        let r1 = "g1,filo,2,p1,A,B,,1,0,,store,,30,100,7,";
        let r2 = "g2,filo,2,p1,B,A,,0.5,0.5,,tie,,31,100,7,";
        std::fs::write(&csv, format!("{h}\r{r1}\r{r2}\r")).unwrap();
        let row = find_row(&csv, "g2").unwrap().expect("found");
        assert_eq!(row.seat0, "B");
        // g1's opening holds a line that looks like a row of g2.
        let fake = "g2,filo,2,p1,C,D,,1,0,,store,,9,9,9,";
        std::fs::write(&csv, format!("{h}\n{r1}\"x\n{fake}\"\n{r2}\n")).unwrap();
        let row = find_row(&csv, "g2").unwrap().expect("found");
        assert_eq!((row.seat0.as_str(), row.plies), ("B", 31));
        assert_eq!(find_row(&csv, "g3").unwrap(), None);
    }
}
