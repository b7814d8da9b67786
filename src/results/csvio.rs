//! Reading `games.csv`: every problem is an error naming its file, line
//! and column; nothing a file contains can panic.
//!
//! What is accepted (docs/ratings.md, "Inputs and merging"):
//! - the header names the columns, in any order; every column of the
//!   first schema (`COLUMNS`) must be there (`seat2`, `score2`, `offender`
//!   and `opening` may be empty); the columns added since
//!   (`ADDED_COLUMNS`) are read when present and empty when not; unknown
//!   columns are ignored (new columns are added at the end of the schema);
//! - a UTF-8 byte-order mark, CRLF line endings, quoted fields (names with
//!   commas or quotes), blank lines;
//! - a last line without its newline that does not parse is a write torn
//!   by a crash (the league commits a game by its row's newline): it is
//!   skipped with a warning naming the file and line, never silently;
//! - an empty file (a league killed before its header) has no rows, with a
//!   warning; a header alone has no rows.

use super::GameRow;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {why}")]
    Row {
        path: PathBuf,
        line: u64,
        why: String,
    },
}

/// Something skipped or noticed while reading, with its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvWarning {
    pub path: PathBuf,
    pub line: u64,
    pub what: String,
}

impl std::fmt::Display for CsvWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.what)
    }
}

/// The rows of one file with the line each starts on, and the warnings.
#[derive(Clone, Debug, Default)]
pub struct CsvFile {
    pub rows: Vec<(u64, GameRow)>,
    pub warnings: Vec<CsvWarning>,
}

/// The columns of `games.csv`, in the order the league writes them.
pub const COLUMNS: &[&str] = &[
    "game_id",
    "variant",
    "players",
    "group",
    "seat0",
    "seat1",
    "seat2",
    "score0",
    "score1",
    "score2",
    "reason",
    "offender",
    "plies",
    "duration_ms",
    "seed",
    "opening",
];

/// Columns added after the first schema, at its end: written by the league,
/// read when present, empty when a file of an older version lacks them.
pub const ADDED_COLUMNS: &[&str] = &[
    "started_at",
    "version0",
    "version1",
    "version2",
    "time0_ms",
    "time1_ms",
    "time2_ms",
    "record_file",
    "record_offset",
    "record_length",
];

/// Every column, in the order the league writes them.
pub fn all_columns() -> impl Iterator<Item = &'static str> {
    COLUMNS.iter().chain(ADDED_COLUMNS).copied()
}

/// The header line this version writes: every column, comma-separated.
pub fn header_line() -> String {
    all_columns().collect::<Vec<_>>().join(",")
}

/// A header of this version's columns (some added column there) that
/// lacks one of them and names another like it: a mistyped header, whose
/// column would read as empty in every row (a record column: every row's
/// record "missing"). What to say, if so.
fn mistyped_added(names: &[String], index: &HashMap<&str, usize>) -> Option<String> {
    let missing: Vec<&str> = ADDED_COLUMNS
        .iter()
        .copied()
        .filter(|c| !index.contains_key(c))
        .collect();
    if missing.is_empty() || missing.len() == ADDED_COLUMNS.len() {
        return None;
    }
    let (n, c) = names
        .iter()
        .filter(|n| !all_columns().any(|c| c == n.as_str()))
        .find_map(|n| {
            missing
                .iter()
                .find(|c| c.eq_ignore_ascii_case(n))
                .copied()
                .or_else(|| crate::text::closest(n, missing.iter().copied()))
                .map(|c| (n, c))
        })?;
    Some(format!(
        "column `{n}` is not one of arena's, which lacks `{c}` here: did you mean `{c}`? (its values would be read as empty in every row; the columns are {})",
        header_line()
    ))
}

/// The columns in which two rows differ, with each row's field as
/// games.csv writes it: `(column, a's, b's)`, in the columns' order (what
/// a conflict of one game id names, docs/ratings.md, "Inputs and
/// merging").
pub fn differences(a: &GameRow, b: &GameRow) -> Vec<(&'static str, String, String)> {
    let (Some(x), Some(y)) = (csv_fields(a), csv_fields(b)) else {
        return Vec::new();
    };
    all_columns()
        .zip(x.iter().zip(y.iter()))
        .filter(|(_, (x, y))| x != y)
        .map(|(c, (x, y))| (c, x.to_string(), y.to_string()))
        .collect()
}

/// A row's fields as games.csv writes them, one per column.
fn csv_fields(row: &GameRow) -> Option<csv::StringRecord> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.serialize(row).ok()?;
    let bytes = w.into_inner().ok()?;
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes.as_slice())
        .records()
        .next()?
        .ok()
}

/// Reads every row of a results CSV. Any malformed row is an error with the
/// file and line; a torn last line is skipped (see the module doc).
pub fn read_rows(path: &Path) -> Result<Vec<GameRow>, CsvError> {
    Ok(read_file(path)?.rows.into_iter().map(|(_, r)| r).collect())
}

/// Reads a results CSV with line numbers and warnings (every row in memory:
/// `RowReader` reads one at a time).
pub fn read_file(path: &Path) -> Result<CsvFile, CsvError> {
    collect(RowReader::open(path)?)
}

/// The row of the results CSV at `path` that starts at byte `at` (as
/// [`RowReader::next_row_at`] gave it, on line `line`): its header and
/// that row read again, with the same checks. `None` when no row starts
/// there any more (the file was cut short).
pub fn row_at(path: &Path, at: u64, line: u64) -> Result<Option<GameRow>, CsvError> {
    use std::io::{BufRead, Seek};
    let io = |source| CsvError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
    let mut header = Vec::new();
    file.read_until(b'\n', &mut header).map_err(io)?;
    file.seek(std::io::SeekFrom::Start(at)).map_err(io)?;
    let mut reader = RowReader::new(path, header.chain(file))?;
    match reader.next_row() {
        Ok(row) => Ok(row.map(|(_, r)| r.clone())),
        // The messages name the line of the file, not of these two.
        Err(CsvError::Row { path, why, .. }) => Err(CsvError::Row { path, line, why }),
        Err(e) => Err(e),
    }
}

fn row_err(path: &Path, line: u64, why: impl Into<String>) -> CsvError {
    CsvError::Row {
        path: path.to_path_buf(),
        line,
        why: why.into(),
    }
}

/// Parses the bytes of a results CSV (`path` only names it in messages).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<CsvFile, CsvError> {
    collect(RowReader::new(path, bytes)?)
}

fn collect<R: Read>(mut reader: RowReader<R>) -> Result<CsvFile, CsvError> {
    let mut out = CsvFile::default();
    while let Some((line, row)) = reader.next_row()? {
        out.rows.push((line, row.clone()));
    }
    out.warnings = reader.take_warnings();
    Ok(out)
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The longest header line read: arena's is under 400 bytes, a file saved
/// by a spreadsheet with columns of its own a few KiB.
pub const MAX_HEADER_LINE: u64 = 1 << 20;

/// The longest row line read: a row's longest field is its opening (fewer
/// decisions than `max_plies`), far under this. A longer line is no row
/// (a binary file, or a tail of zeros left by a crash), and is not held
/// in memory to find out.
pub const MAX_ROW_LINE: u64 = 256 << 20;

/// What a file that is not a CSV at all is, by its first bytes (`head`,
/// which may be a part of the file): [`not_text`], or binary (a NUL byte
/// in its first line, as in `/dev/zero`). Its description, with what to
/// do; `None` for anything that may be text.
pub fn not_csv(head: &[u8]) -> Option<&'static str> {
    if let Some(what) = not_text(head) {
        return Some(what);
    }
    let first = head.split(|&b| b == b'\n').next().unwrap_or(head);
    first
        .contains(&0)
        .then_some("a binary file (NUL bytes in its first line), not a games.csv")
}

/// What a file is that is surely no text a league wrote, by its first
/// bytes: compressed (gzip, zstd, xz, bzip2, zip) or UTF-16. A header cut
/// short by a crash (zeros after it) is not among them.
pub fn not_text(head: &[u8]) -> Option<&'static str> {
    const KINDS: &[(&[u8], &str)] = &[
        (
            b"\x1F\x8B",
            "a gzip-compressed file, not a CSV: decompress it first (gunzip -k FILE)",
        ),
        (
            b"\x28\xB5\x2F\xFD",
            "a zstd-compressed file, not a CSV: decompress it first (zstd -d FILE)",
        ),
        (
            b"\xFD7zXZ\x00",
            "an xz-compressed file, not a CSV: decompress it first (unxz -k FILE)",
        ),
        (
            b"BZh",
            "a bzip2-compressed file, not a CSV: decompress it first (bunzip2 -k FILE)",
        ),
        (
            b"PK\x03\x04",
            "a zip archive, not a CSV: extract its games.csv first",
        ),
        (
            b"\xFF\xFE",
            "UTF-16 text, not UTF-8: save it as UTF-8 (iconv -f UTF-16 -t UTF-8)",
        ),
        (
            b"\xFE\xFF",
            "UTF-16 text, not UTF-8: save it as UTF-8 (iconv -f UTF-16 -t UTF-8)",
        ),
    ];
    if let Some((_, what)) = KINDS.iter().find(|(magic, _)| head.starts_with(magic)) {
        return Some(what);
    }
    let first = head.split(|&b| b == b'\n').next().unwrap_or(head);
    // UTF-16 without its mark: every other byte of ASCII text is a NUL.
    if first.len() >= 4
        && first.iter().skip(1).step_by(2).take(8).all(|&b| b == 0)
        && first.iter().step_by(2).take(8).all(|&b| b != 0)
    {
        return Some("UTF-16 text, not UTF-8: save it as UTF-8 (iconv -f UTF-16LE -t UTF-8)");
    }
    None
}

/// The bytes of a file after its byte-order mark, counting the lines as
/// they pass: `line_at(byte)` is the line of the first character at or
/// after `byte` that is not a line break, as if the whole file were in
/// memory (the csv reader's own line numbers miscount CRLF and blank
/// lines). Holds only the runs of line breaks the reader has read ahead.
struct Lines<R> {
    inner: R,
    /// Bytes read ahead (the head of the file) served before `inner`.
    head: Vec<u8>,
    head_at: usize,
    /// Bytes served so far.
    offset: u64,
    /// Bytes of the file never served (its byte-order mark): a served
    /// byte's place in the file is this much further.
    skipped: u64,
    /// Closed runs of CR/LF bytes not yet passed, with a newline:
    /// (start, newlines).
    runs: VecDeque<(u64, u64)>,
    /// The last run seen, maybe still growing: (start, end, newlines).
    open: Option<(u64, u64, u64)>,
    /// Newlines of the runs passed.
    passed: u64,
    last: Option<u8>,
    /// Bytes served since the last line break, and whether one was seen
    /// (the header's line is over).
    line_len: u64,
    past_header: bool,
    /// The longest header line and row line read ([`MAX_HEADER_LINE`],
    /// [`MAX_ROW_LINE`]).
    limits: (u64, u64),
}

impl<R: Read> Lines<R> {
    /// Reads the head of `inner` up to its first byte that is not white
    /// space; `None` when there is none (an empty file).
    fn new(mut inner: R) -> std::io::Result<Option<Self>> {
        let mut head = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let body = head.strip_prefix(BOM).unwrap_or(&head);
            if head.len() >= BOM.len() && body.iter().any(|b| !b.is_ascii_whitespace()) {
                break;
            }
            let n = match inner.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                if body.iter().all(|b| b.is_ascii_whitespace()) {
                    return Ok(None);
                }
                break;
            }
            head.extend_from_slice(&chunk[..n]);
        }
        let head_at = if head.starts_with(BOM) { BOM.len() } else { 0 };
        Ok(Some(Lines {
            inner,
            head,
            head_at,
            offset: 0,
            skipped: head_at as u64,
            runs: VecDeque::new(),
            open: None,
            passed: 0,
            last: None,
            line_len: 0,
            past_header: false,
            limits: (MAX_HEADER_LINE, MAX_ROW_LINE),
        }))
    }

    /// Notes the line breaks of `bytes`, the next bytes served: LF, CRLF
    /// and a lone CR each end a line, as they end a row for the reader
    /// (a CR counts, and the LF of its CRLF does not).
    fn scan(&mut self, bytes: &[u8]) {
        for i in memchr::memchr2_iter(b'\r', b'\n', bytes) {
            let at = self.offset + i as u64;
            let before = if i == 0 {
                self.last
            } else {
                Some(bytes[i - 1])
            };
            let nl = u64::from(bytes[i] == b'\r' || before != Some(b'\r'));
            match &mut self.open {
                Some(run) if run.1 == at => {
                    run.1 = at + 1;
                    run.2 += nl;
                }
                _ => {
                    if let Some((start, _, n)) = self.open.take() {
                        if n > 0 {
                            self.runs.push_back((start, n));
                        }
                    }
                    self.open = Some((at, at + 1, nl));
                }
            }
        }
        if let Some(&b) = bytes.last() {
            self.last = Some(b);
        }
        match memchr::memrchr2(b'\r', b'\n', bytes) {
            Some(i) => {
                self.past_header = true;
                self.line_len = (bytes.len() - i - 1) as u64;
            }
            None => self.line_len += bytes.len() as u64,
        }
        self.offset += bytes.len() as u64;
    }

    /// An error when the line being read has grown past what a line of
    /// its kind may hold ([`MAX_HEADER_LINE`], [`MAX_ROW_LINE`]): such a
    /// file (`/dev/zero`, a tail of zeros) would be read into memory
    /// whole, looking for the line's end.
    fn check_length(&self) -> std::io::Result<()> {
        let (limit, what) = match self.past_header {
            false => (self.limits.0, "the header line"),
            true => (self.limits.1, "a row"),
        };
        if self.line_len <= limit {
            return Ok(());
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "a line runs over {} without a line end, more than {what} may hold: this is not a games.csv (a binary file, or zeros left by a crash?)",
                match limit >> 20 {
                    0 => format!("{limit} bytes"),
                    mib => format!("{mib} MiB"),
                }
            ),
        ))
    }

    /// The line of the first byte at or after `byte` that is not CR or LF
    /// (positions only move forward).
    fn line_at(&mut self, byte: u64) -> u64 {
        let byte = byte.min(self.offset);
        while let Some(&(start, n)) = self.runs.front() {
            if start > byte {
                break;
            }
            self.passed += n;
            self.runs.pop_front();
        }
        let open = match self.open {
            Some((start, _, n)) if start <= byte => n,
            _ => 0,
        };
        1 + self.passed + open
    }

    /// Whether the bytes served so far end with a line end (LF, or the CR
    /// of a file whose lines end with a lone CR).
    fn ends_with_newline(&self) -> bool {
        matches!(self.last, Some(b'\n' | b'\r'))
    }
}

impl<R: Read> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = if self.head_at < self.head.len() {
            let n = (self.head.len() - self.head_at).min(buf.len());
            buf[..n].copy_from_slice(&self.head[self.head_at..self.head_at + n]);
            self.head_at += n;
            if self.head_at == self.head.len() {
                self.head = Vec::new();
                self.head_at = 0;
            }
            n
        } else {
            self.inner.read(buf)?
        };
        self.scan(&buf[..n]);
        self.check_length()?;
        Ok(n)
    }
}

/// Reads the rows of one results CSV one at a time, with the checks and
/// messages of the module doc, into one `GameRow` reused for every row:
/// memory does not grow with the file.
pub struct RowReader<R> {
    path: PathBuf,
    /// `None` for an empty file.
    reader: Option<csv::Reader<Lines<R>>>,
    names: Vec<String>,
    col: Vec<usize>,
    added: Vec<Option<usize>>,
    rec: csv::ByteRecord,
    row: GameRow,
    /// Where the last row returned starts in the file (a byte offset).
    at: u64,
    /// A row that did not parse: an error unless it is a torn last line.
    pending: Option<(u64, String)>,
    warnings: Vec<CsvWarning>,
}

impl RowReader<std::fs::File> {
    /// Opens a results CSV and reads its header.
    pub fn open(path: &Path) -> Result<Self, CsvError> {
        let file = std::fs::File::open(path).map_err(|source| CsvError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        RowReader::new(path, file)
    }
}

impl<R: Read> RowReader<R> {
    /// Reads the header of a results CSV from `input` (`path` only names it
    /// in messages).
    pub fn new(path: &Path, input: R) -> Result<Self, CsvError> {
        let io = |source| CsvError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut out = RowReader {
            path: path.to_path_buf(),
            reader: None,
            names: Vec::new(),
            col: Vec::new(),
            added: Vec::new(),
            rec: csv::ByteRecord::new(),
            row: GameRow::default(),
            at: 0,
            pending: None,
            warnings: Vec::new(),
        };
        let Some(lines) = Lines::new(input).map_err(io)? else {
            out.warnings.push(CsvWarning {
                path: path.to_path_buf(),
                line: 1,
                what: "empty file (no header line): no games".into(),
            });
            return Ok(out);
        };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if super::records::is_log_name(name) {
            // Compressed with its league's dictionary: `zstd -d` alone
            // would not make it a table either.
            return Err(row_err(
                path,
                1,
                "this is a league's log of game records (each game's moves), not a games table: give the results folder, or its games.csv",
            ));
        }
        if let Some(what) = not_csv(&lines.head[lines.head_at..]) {
            return Err(row_err(path, 1, format!("this is {what}")));
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(1 << 16)
            .from_reader(lines);

        // The header.
        let mut header = csv::ByteRecord::new();
        match reader.read_byte_record(&mut header) {
            Ok(true) => {}
            Ok(false) => return Ok(out),
            Err(e) => return Err(row_err(path, 1, format!("unreadable header: {e}"))),
        }
        let names: Vec<String> = header
            .iter()
            .map(|f| String::from_utf8_lossy(f).trim().to_string())
            .collect();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            if index.insert(n.as_str(), i).is_some() && all_columns().any(|c| c == n) {
                return Err(row_err(
                    path,
                    1,
                    format!("column `{n}` appears twice in the header"),
                ));
            }
        }
        let missing: Vec<&str> = COLUMNS
            .iter()
            .copied()
            .filter(|c| !index.contains_key(c))
            .collect();
        if !missing.is_empty() {
            // A spreadsheet's "CSV" in a locale whose decimal mark is a
            // comma separates its fields with semicolons or tabs.
            let other = [';', '\t']
                .into_iter()
                .find(|&c| names.len() == 1 && names[0].split(c).any(|n| n.trim() == "game_id"));
            let why = if let Some(c) = other {
                format!(
                    "the header's fields are separated by {}, not commas: save the table as comma-separated (a games.csv's columns are {})",
                    if c == ';' { "semicolons" } else { "tabs" },
                    COLUMNS.join(",")
                )
            } else if let Some(n) = names
                .iter()
                .find(|n| missing.iter().any(|c| c.eq_ignore_ascii_case(n)))
            {
                // A header written by hand or by a spreadsheet that
                // capitalised it.
                format!(
                    "column `{n}` must be written `{}`: the header's names are lower case ({})",
                    n.to_ascii_lowercase(),
                    COLUMNS.join(",")
                )
            } else if missing.len() == COLUMNS.len() {
                format!(
                    "no header line: the first line must name the columns; the header arena writes is `{}` (a file of an older version, or another tool's, may end after `opening`)",
                    header_line()
                )
            } else {
                format!(
                    "missing column{} `{}` in the header (the columns are {})",
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join("`, `"),
                    COLUMNS.join(",")
                )
            };
            return Err(row_err(path, 1, why));
        }
        if let Some(why) = mistyped_added(&names, &index) {
            return Err(row_err(path, 1, why));
        }
        out.col = COLUMNS.iter().map(|c| index[c]).collect();
        out.added = ADDED_COLUMNS
            .iter()
            .map(|c| index.get(c).copied())
            .collect();
        out.names = names;
        out.reader = Some(reader);
        Ok(out)
    }

    /// The next row and the line it starts on; `None` after the last.
    pub fn next_row(&mut self) -> Result<Option<(u64, &GameRow)>, CsvError> {
        let Some(reader) = self.reader.as_mut() else {
            return Ok(None);
        };
        let path = self.path.as_path();
        loop {
            let read = reader.read_byte_record(&mut self.rec);
            // A row that did not parse is an error when anything follows.
            if let (Some((line, why)), Ok(true) | Err(_)) = (&self.pending, &read) {
                return Err(row_err(path, *line, why.clone()));
            }
            match read {
                Err(e) => {
                    let at = e.position().map_or(u64::MAX, |p| p.byte());
                    let line = reader.get_mut().line_at(at);
                    return Err(row_err(path, line, format!("unreadable CSV: {e}")));
                }
                Ok(false) => {
                    if let Some((line, why)) = self.pending.take() {
                        if reader.get_ref().ends_with_newline() {
                            return Err(row_err(path, line, why));
                        }
                        self.warnings.push(CsvWarning {
                            path: path.to_path_buf(),
                            line,
                            what: format!(
                                "skipped a torn last line (no newline at the end: a run killed mid-write?): {why}"
                            ),
                        });
                    }
                    self.reader = None;
                    return Ok(None);
                }
                Ok(true) => {}
            }
            let rec = &self.rec;
            let at = rec.position().map_or(u64::MAX, |p| p.byte());
            let line = reader.get_mut().line_at(at);
            // Blank lines are skipped by the reader; a lone empty field too.
            if rec.len() == 1 && rec.get(0).is_some_and(|f| f.trim_ascii().is_empty()) {
                continue;
            }
            let names = &self.names;
            let parsed = if rec.len() == names.len()
                && rec
                    .iter()
                    .zip(names)
                    .all(|(f, n)| String::from_utf8_lossy(f).trim() == n)
            {
                Err("a second header line: two runs wrote to this file (one writer per results folder), or files were concatenated with their headers".to_string())
            } else if rec.len() < names.len() {
                Err(format!(
                    "{} fields, the header has {}",
                    rec.len(),
                    names.len()
                ))
            } else if rec.len() > names.len() {
                Err(format!(
                    "{} fields, the header has {} (a comma in a name must be quoted)",
                    rec.len(),
                    names.len()
                ))
            } else {
                parse_record(rec, &self.col, &mut self.row)
                    .and_then(|()| parse_added(&mut self.row, rec, &self.added))
            };
            match parsed {
                Ok(()) => {
                    self.at = at.saturating_add(reader.get_ref().skipped);
                    return Ok(Some((line, &self.row)));
                }
                Err(why) => self.pending = Some((line, why + &unclosed_quote(rec))),
            }
        }
    }

    /// The next row, the line it starts on and where it starts in the
    /// file (a byte offset for [`row_at`]).
    pub fn next_row_at(&mut self) -> Result<Option<(u64, u64, &GameRow)>, CsvError> {
        match self.next_row()? {
            Some((line, _)) => Ok(Some((line, self.at, &self.row))),
            None => Ok(None),
        }
    }

    /// The next row, swapped into `out` (whose old contents the reader
    /// reuses for the row after: no allocation per row when rows are
    /// handed on, as to another thread), and the line it starts on.
    pub fn next_row_into(&mut self, out: &mut GameRow) -> Result<Option<u64>, CsvError> {
        let line = match self.next_row()? {
            Some((line, _)) => line,
            None => return Ok(None),
        };
        std::mem::swap(&mut self.row, out);
        Ok(Some(line))
    }

    /// What was skipped so far (a torn last line, an empty file).
    pub fn take_warnings(&mut self) -> Vec<CsvWarning> {
        std::mem::take(&mut self.warnings)
    }
}

fn field<'a>(rec: &'a csv::ByteRecord, col: &[usize], k: usize) -> Result<&'a str, String> {
    let raw = rec.get(col[k]).unwrap_or(b"");
    std::str::from_utf8(raw).map_err(|_| format!("column `{}` is not valid UTF-8", COLUMNS[k]))
}

/// R's `write.csv` writes a missing value as `NA`: a field that may be
/// empty and is exactly `NA` is read as empty.
fn not_na(s: &str) -> &str {
    match s.trim() == "NA" {
        true => "",
        false => s,
    }
}

/// Sets `out` to column `k`, reusing its allocation.
fn text(rec: &csv::ByteRecord, col: &[usize], k: usize, out: &mut String) -> Result<(), String> {
    let s = field(rec, col, k)?;
    out.clear();
    out.push_str(s);
    Ok(())
}

/// The seed, column `k`: a whole number; one written as a float with an
/// exponent or a fraction (`2.00402232934386e+18`, as R or pandas write a
/// column they read as numbers) has lost its last digits, and is refused
/// saying so.
fn seed(rec: &csv::ByteRecord, col: &[usize], k: usize) -> Result<u64, String> {
    let s = field(rec, col, k)?.trim();
    if let Ok(n) = parse_number::<u64>(s) {
        return Ok(n);
    }
    if s.contains(['.', 'e', 'E']) && s.parse::<f64>().is_ok_and(f64::is_finite) {
        return Err(format!(
            "column `{}`: `{s}` is a seed written as a floating-point number, which has lost its last digits (a seed has up to 20; a float keeps 15 to 17): the table was read with the seed as a number. Read the column as text and save it again (pandas: `pd.read_csv(path, dtype={{\"seed\": str}})`; R: `read.csv(path, colClasses = c(seed = \"character\"))`), or take the rows from the league's own games.csv",
            COLUMNS[k]
        ));
    }
    Err(format!(
        "column `{}`: `{s}` is not a whole number >= 0",
        COLUMNS[k]
    ))
}

fn number<T: std::str::FromStr>(
    rec: &csv::ByteRecord,
    col: &[usize],
    k: usize,
    what: &str,
) -> Result<T, String> {
    let s = field(rec, col, k)?.trim();
    parse_number::<T>(s).map_err(|_| format!("column `{}`: `{s}` is not {what}", COLUMNS[k]))
}

/// `s` parsed, or the whole number it writes as a float ([`whole_float`],
/// [`whole_exponent`]).
fn parse_number<T: std::str::FromStr>(s: &str) -> Result<T, T::Err> {
    s.parse::<T>().or_else(|e| match whole_float(s) {
        Some(w) => w.parse::<T>(),
        None => whole_exponent(s).map_or(Err(e), |w| w.to_string().parse::<T>()),
    })
}

/// Below this, a whole number written with an exponent (`1e+05`) is
/// exact: R writes 15 significant digits (docs/ratings.md, "Inputs and
/// merging").
const EXACT_BELOW: f64 = 1e15;

/// The whole number >= 0 that `s` writes with an exponent, as R's
/// `write.csv` writes 100000 (`1e+05`), when it is below 10^15, where
/// those 15 digits are all of it; `None` otherwise (a 20-digit seed so
/// written has lost its last digits).
fn whole_exponent(s: &str) -> Option<u64> {
    if !s.contains(['e', 'E']) {
        return None;
    }
    let v = s.parse::<f64>().ok()?;
    // Exact: v is whole and below 10^15 < 2^53.
    ((0.0..EXACT_BELOW).contains(&v) && v.fract() == 0.0).then_some(v as u64)
}

/// The whole number `s` writes as a float (`1.0`, `12.00`): pandas writes
/// an integer column that has an empty field (`offender`) as floats when it
/// saves the table back (docs/league.md: a games.csv saved by pandas).
fn whole_float(s: &str) -> Option<&str> {
    let (whole, fraction) = s.split_once('.')?;
    let digits = !whole.is_empty() && whole.bytes().all(|b| b.is_ascii_digit());
    (digits && !fraction.is_empty() && fraction.bytes().all(|b| b == b'0')).then_some(whole)
}

fn optional<T: std::str::FromStr>(
    rec: &csv::ByteRecord,
    col: &[usize],
    k: usize,
    what: &str,
) -> Result<Option<T>, String> {
    if not_na(field(rec, col, k)?).trim().is_empty() {
        Ok(None)
    } else {
        number(rec, col, k, what).map(Some)
    }
}

/// Parses the columns of the first schema into `row` (every one of its
/// fields is set; its strings keep their allocations), then checks it.
fn parse_record(rec: &csv::ByteRecord, col: &[usize], row: &mut GameRow) -> Result<(), String> {
    const WHOLE: &str = "a whole number >= 0";
    const SCORE: &str = "a number";
    text(rec, col, 0, &mut row.game_id)?;
    text(rec, col, 1, &mut row.variant)?;
    row.players = number(rec, col, 2, "2 or 3")?;
    text(rec, col, 3, &mut row.group)?;
    text(rec, col, 4, &mut row.seat0)?;
    text(rec, col, 5, &mut row.seat1)?;
    text(rec, col, 6, &mut row.seat2)?;
    row.score0 = number(rec, col, 7, SCORE)?;
    row.score1 = number(rec, col, 8, SCORE)?;
    row.score2 = optional(rec, col, 9, SCORE)?;
    text(rec, col, 10, &mut row.reason)?;
    row.offender = optional(rec, col, 11, "a seat number (0, 1 or 2)")?;
    row.plies = number(rec, col, 12, WHOLE)?;
    row.duration_ms = number(rec, col, 13, WHOLE)?;
    row.seed = seed(rec, col, 14)?;
    text(rec, col, 15, &mut row.opening)?;
    // R's `NA`, where a field may be empty: the opening, and the third
    // seat of a 2-player game (a 3-player game's may be a bot so named).
    if row.opening == "NA" {
        row.opening.clear();
    }
    if row.players == 2 && row.seat2 == "NA" {
        row.seat2.clear();
    }
    check_row(row)
}

/// Sets the added columns of `row` from those a file has (`added[k]`: the
/// field of `ADDED_COLUMNS[k]`, if the header names it; else empty).
fn parse_added(
    row: &mut GameRow,
    rec: &csv::ByteRecord,
    added: &[Option<usize>],
) -> Result<(), String> {
    let get = |k: usize| -> Result<&str, String> {
        let Some(i) = added[k] else {
            return Ok("");
        };
        std::str::from_utf8(rec.get(i).unwrap_or(b""))
            .map(|s| not_na(s).trim())
            .map_err(|_| format!("column `{}` is not valid UTF-8", ADDED_COLUMNS[k]))
    };
    let time = |k: usize| -> Result<Option<f64>, String> {
        let s = get(k)?;
        if s.is_empty() {
            return Ok(None);
        }
        match s.parse::<f64>() {
            Ok(t) if t.is_finite() && t >= 0.0 => Ok(Some(t)),
            _ => Err(format!(
                "column `{}`: `{s}` is not a time in milliseconds (a number >= 0)",
                ADDED_COLUMNS[k]
            )),
        }
    };
    let set = |out: &mut String, s: &str| {
        out.clear();
        out.push_str(s);
    };
    set(&mut row.started_at, get(0)?);
    if !row.started_at.is_empty() {
        utc_time(&row.started_at)?;
        // One spelling for everything downstream (the report, PGN dates).
        if let Some(t) = referee_spelling(&row.started_at) {
            row.started_at = t;
        }
    }
    set(&mut row.version0, get(1)?);
    set(&mut row.version1, get(2)?);
    set(&mut row.version2, get(3)?);
    row.time0_ms = time(4)?;
    row.time1_ms = time(5)?;
    row.time2_ms = time(6)?;
    set(&mut row.record_file, get(7)?);
    let place = |k: usize| -> Result<Option<u64>, String> {
        match get(k)? {
            "" => Ok(None),
            s => parse_number(s).map(Some).map_err(|_| {
                format!(
                    "column `{}`: `{s}` is not a whole number >= 0",
                    ADDED_COLUMNS[k]
                )
            }),
        }
    };
    row.record_offset = place(8)?;
    row.record_length = place(9)?;
    Ok(())
}

/// A `started_at`, as the referee writes it: RFC 3339 in UTC, ending in
/// `Z` (or `+00:00`), from 1970 on; also as RFC 3339 allows it to be
/// spelt (§5.6: a space or a lower-case `t` between date and time, a
/// lower-case `z`; pandas writes `2026-12-06 18:57:02.681+00:00`). A time
/// with another offset (`+02:00`) or none would be read as UTC and be off
/// by hours: refused, saying which.
pub fn utc_time(s: &str) -> Result<std::time::SystemTime, String> {
    let respelt = referee_spelling(s);
    let t = respelt.as_deref().unwrap_or(s);
    humantime::parse_rfc3339(t).map_err(|_| {
        format!(
            "column `started_at`: `{}` is not a UTC time like 2026-11-23T16:05:09.123Z: {}",
            s.escape_debug(),
            why_not_utc(t)
        )
    })
}

/// `s` spelt as the referee writes a start (`...T...Z`), when it is
/// spelt otherwise as RFC 3339 allows: a space or `t` between date and
/// time, a lower-case `z`; with a space or `t`, a `+00:00` becomes `Z`
/// (pandas' spelling, respelt whole). `None` when there is nothing to
/// respell.
pub fn referee_spelling(s: &str) -> Option<String> {
    let (date, rest) = (s.get(..10)?, s.get(10..)?);
    let sep = rest.starts_with([' ', 't']);
    let lower_z = s.ends_with('z') && rest.starts_with('T');
    if !(sep || lower_z) {
        return None;
    }
    let time = rest.get(1..)?;
    let time = match (time.strip_suffix(['z', 'Z']), time.strip_suffix("+00:00")) {
        (Some(t), _) => t,
        (None, Some(t)) if sep => t,
        _ => return Some(format!("{date}T{time}")),
    };
    Some(format!("{date}T{time}Z"))
}

/// What makes `t` (as respelt) no UTC time of RFC 3339, in words.
fn why_not_utc(t: &str) -> String {
    let offset = t
        .len()
        .checked_sub(6)
        .and_then(|i| t.get(i..))
        .filter(|o| o.starts_with(['+', '-']) && o.as_bytes()[3] == b':');
    if let Some(o) = offset.filter(|o| *o != "+00:00") {
        return format!(
            "its offset is {o}, not UTC's (`Z` or `+00:00`): started_at is written in UTC, and a time elsewhere would be read hours off"
        );
    }
    let dated = t.len() > 10 && t.as_bytes()[4] == b'-' && t.as_bytes()[7] == b'-';
    let year = t.get(..4).and_then(|y| y.parse::<u32>().ok());
    if dated && year.is_some_and(|y| y < 1970) {
        return "it is before 1970".to_string();
    }
    if dated && offset.is_none() && !t.ends_with('Z') && t.get(10..11) == Some("T") {
        return "it has no time zone (`Z` at its end for UTC): a time without one would be read as UTC, perhaps hours off".to_string();
    }
    "it is not an RFC 3339 time (a date, `T` or a space, a time, then `Z`)".to_string()
}

/// Exactly: every multiple of 1/2 or 1/4 in [0, 1] is a binary fraction
/// that `0.75` or `0.750` reads as, so a score off by any amount
/// (`0.5000000001`) is a score that is not one, and would be rated as
/// what it says rather than as the draw it nearly is.
fn is_multiple_of(x: f64, step: f64) -> bool {
    (x / step).fract() == 0.0
}

/// Whether `row`, written to a games.csv, reads back: [`check_row`] and
/// the added columns' checks of the reader (`started_at` a UTC time, the
/// times numbers >= 0). A ladder leaves out of its exports and standings
/// the rows that would not (issue 47: the export always rates).
pub fn rateable(row: &GameRow) -> Result<(), String> {
    check_row(row)?;
    if !row.started_at.is_empty() {
        utc_time(&row.started_at)?;
    }
    let times = [row.time0_ms, row.time1_ms, row.time2_ms];
    for (seat, t) in times.iter().enumerate() {
        if let Some(t) = t.filter(|t| !(t.is_finite() && *t >= 0.0)) {
            return Err(format!(
                "column `time{seat}_ms`: `{t}` is not a time in milliseconds (a number >= 0)"
            ));
        }
    }
    Ok(())
}

/// The longest bot name a row may hold, in bytes.
pub const MAX_NAME: usize = 1024;

/// Semantic checks beyond the column types.
/// The `reason`s of a forfeit (README, games.csv): each names its
/// `offender`.
pub const FORFEIT_REASONS: &[&str] = &[
    "illegal",
    "timeout",
    "stall",
    "crash",
    "bad_json",
    "line_too_long",
    "protocol",
    "memory",
];

/// The `reason`s of a game ended by its rules or drawn (README,
/// games.csv): no `offender`.
pub const RULE_REASONS: &[&str] = &[
    "pieces",
    "escape",
    "no_moves",
    "captures",
    "corners",
    "tie",
    "stalemate",
    "store",
    "inner_row",
    "block",
    "max_plies",
    "perpetual",
    "repetition",
    "draw_claim",
];

/// What every bot name of a row must be: not empty, no line break or
/// invisible character, no white space around it, not too long.
fn check_names(seats: &[&str]) -> Result<(), String> {
    if let Some(s) = seats.iter().position(|s| s.trim().is_empty()) {
        return Err(format!("empty bot name in seat{s}"));
    }
    for (s, name) in seats.iter().enumerate() {
        check_label(&format!("the bot name in seat{s}"), name)?;
    }
    Ok(())
}

/// What a name a row gives (a bot's in a seat, a variant's; `what`
/// names it) must be, besides not empty: the league files and hellos
/// refuse the same.
fn check_label(what: &str, name: &str) -> Result<(), String> {
    // No line break or invisible character: one would break the tables.
    if let Some(c) = name.chars().find(|&c| crate::text::is_hidden(c)) {
        return Err(format!(
            "{what} holds the character {} (a line break or an invisible one), which no name may hold: mend the name",
            c.escape_unicode()
        ));
    }
    // Nor shows nothing (blanks, marks of no width): it would pass for
    // no one.
    if crate::text::shows_nothing(name) {
        return Err(format!(
            "{what} ({}) shows nothing (nothing but blanks or marks of no width), which no name may: mend the name",
            name.escape_unicode()
        ));
    }
    // Nor is read by R or pandas as a missing value, a boolean or a
    // number: the tables written from these rows (ratings.csv,
    // pairs.csv, ...) would lose the name there (`NA`), or make two one
    // (`1.1`, `1.10`); nor begins as a formula, which a spreadsheet
    // would run.
    if let Some(kind) = crate::text::csv_reads_as(name) {
        return Err(format!(
            "{what} (`{name}`) is what R and pandas read as {}, not as a name: the tables written from these rows would not name it; rename it in this file (a league or ladder refuses such a name)",
            kind.what()
        ));
    }
    if crate::text::formula_lead(name).is_some() {
        return Err(format!(
            "{what} (`{name}`) begins with `=`, `+`, `-` or `@`, which a spreadsheet opening the tables written from these rows would run as a formula; rename it in this file (a league or ladder refuses such a name)"
        ));
    }
    // Nor begins or ends with white space: `gr ` would be another name
    // than `gr`, shown alike.
    if name.trim() != name {
        return Err(format!(
            "{what} (`{name}`) begins or ends with white space, which no name may: mend the name"
        ));
    }
    // Names are short wherever the arena makes them (64 bytes); the
    // tables size their columns by the longest.
    if name.len() > MAX_NAME {
        return Err(format!(
            "{what} is {} bytes long, over the {MAX_NAME} a name may have",
            name.len()
        ));
    }
    Ok(())
}

pub fn check_row(row: &GameRow) -> Result<(), String> {
    if row.game_id.trim().is_empty() {
        return Err("empty game_id".into());
    }
    if row.variant.trim().is_empty() {
        return Err("empty variant".into());
    }
    check_label("the variant", &row.variant)?;
    if row.variant == super::ALL_LABEL {
        return Err(format!(
            "variant `{}` is the name of the ratings' table of every variant: rename the variant",
            row.variant
        ));
    }
    if !(2..=3).contains(&row.players) {
        return Err(format!("players must be 2 or 3, got {}", row.players));
    }
    // `X-3p` labels the 3-player games of variant X in the ratings.
    if row.players == 2 && row.variant.ends_with("-3p") {
        return Err(format!(
            "variant `{}` of a 2-player game: a name ending in `-3p` labels the 3-player games of `{}` in the ratings",
            row.variant,
            row.variant.trim_end_matches("-3p")
        ));
    }
    if row.players == 3 && row.seat2.trim().is_empty() {
        return Err("players is 3 but seat2 is empty".into());
    }
    if row.players == 3 && row.score2.is_none() {
        return Err("players is 3 but score2 is empty".into());
    }
    if row.players == 2 && (!row.seat2.is_empty() || row.score2.is_some()) {
        return Err("players is 2 but seat2 or score2 is not empty".into());
    }
    let seats = row.seats();
    check_names(&seats)?;
    // A bot has no result against itself: such a row would be rated as
    // nothing, or counted twice, and no league writes one.
    for (i, a) in seats.iter().enumerate() {
        if let Some(j) = seats[i + 1..].iter().position(|b| b == a) {
            return Err(format!(
                "seat{i} and seat{} are the same bot `{a}`: a bot cannot play itself (give each copy a name of its own)",
                i + 1 + j
            ));
        }
    }
    let scores = row.scores();
    if scores.iter().any(|s| !(0.0..=1.0).contains(s)) {
        return Err(format!("scores must lie in [0, 1], got {scores:?}"));
    }
    // 2 players: win 1, draw 1/2, loss 0. 3 players: the average of two
    // pairwise results, a multiple of 1/4.
    let step = if row.players == 2 { 0.5 } else { 0.25 };
    if scores.iter().any(|&s| !is_multiple_of(s, step)) {
        return Err(format!(
            "scores must be multiples of {step} for {} players (win 1, draw 0.5, loss 0{}), got {scores:?}",
            row.players,
            if row.players == 3 {
                ", averaged over the two opponents"
            } else {
                ""
            }
        ));
    }
    let total: f64 = scores.iter().sum();
    let expect = row.players as f64 / 2.0;
    if (total - expect).abs() > 1e-6 {
        return Err(format!(
            "scores must add up to {expect} for {} players, got {total}",
            row.players
        ));
    }
    if let Some(o) = row.offender {
        if o >= row.players {
            return Err(format!(
                "offender must be a seat (0..{}), got {o}",
                row.players - 1
            ));
        }
        // A forfeit makes its offender last (README, games.csv): a row
        // where it scores would rate the forfeit as its win or draw.
        let s = scores[usize::from(o)];
        if s != 0.0 {
            return Err(format!(
                "offender is seat{o}, which scored {s}: a seat that forfeits scores 0 (the scores or the offender are wrong)"
            ));
        }
    }
    // The reason and the offender tell one story: a forfeit names its
    // offender, a rule's end or a draw names none (a reason neither list
    // knows, another tool's, is taken as it is).
    let forfeit = FORFEIT_REASONS.contains(&row.reason.as_str());
    match (row.offender, forfeit) {
        (Some(o), false) if RULE_REASONS.contains(&row.reason.as_str()) => {
            return Err(format!(
                "reason `{}` is an end by the rules, not a forfeit, but offender is seat{o} (the reason or the offender is wrong)",
                row.reason
            ))
        }
        (None, true) => {
            return Err(format!(
                "reason `{}` is a forfeit, but no offender is given (the reason or the offender is missing)",
                row.reason
            ))
        }
        _ => {}
    }
    Ok(())
}

/// For a row that does not read: when its fields run over several lines,
/// the likely cause, a quote opened and never closed (the reader takes
/// every line up to the next quote, often the rest of the file, as one
/// field); nothing otherwise.
fn unclosed_quote(rec: &csv::ByteRecord) -> String {
    let breaks = rec.iter().flatten().filter(|b| **b == b'\n').count();
    match breaks {
        0 => String::new(),
        n => format!(
            "; its fields run over {} lines: a `\"` opened in it and not closed where the field ends makes the lines after it one field",
            n + 1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening";
    const R1: &str = "g1,filo,2,p1,A,B,,1,0,,store,,30,100,7,";
    const R2: &str = "g2,filo,2,p1,B,A,,0.5,0.5,,tie,,31,100,7,";

    fn ok(text: &str) -> CsvFile {
        parse(Path::new("t.csv"), text.as_bytes()).expect("accepted")
    }

    /// Two rows' differences are named by column, as games.csv writes
    /// each field, in the columns' order.
    #[test]
    fn differences_name_the_columns_as_written() {
        let a = GameRow::two_player("g", "filo", "p", "x", "y", 1.0);
        assert_eq!(differences(&a, &a), vec![]);
        let b = GameRow {
            version1: "1.1".into(),
            ..GameRow::two_player("g", "filo", "p", "x", "y", 0.0)
        };
        let a = GameRow {
            version1: "1.10".into(),
            ..a
        };
        let d = differences(&a, &b);
        let d: Vec<(&str, &str, &str)> = d.iter().map(|(c, x, y)| (*c, &x[..], &y[..])).collect();
        assert_eq!(
            d,
            [
                ("score0", "1.0", "0.0"),
                ("score1", "0.0", "1.0"),
                ("version1", "1.10", "1.1")
            ]
        );
    }

    fn err(text: &str) -> String {
        parse(Path::new("t.csv"), text.as_bytes())
            .expect_err("rejected")
            .to_string()
    }

    /// A start time with an offset other than UTC's, or none, would be
    /// read as UTC: refused, as a year before 1970 is.
    #[test]
    fn a_start_time_not_in_utc_is_refused() {
        let with = |at: &str| {
            let mut h = H.to_string();
            h.push_str(",started_at");
            format!("{h}\ng1,filo,2,p1,A,B,,1,0,,store,,30,100,7,,{at}\n")
        };
        ok(&with("2026-11-23T23:30:00.000Z"));
        ok(&with("2026-11-23T23:30:00+00:00"));
        for at in [
            "2026-11-23T23:30:00.000+02:00",
            "2026-11-23T23:30:00.000-05:00",
            "2026-11-23T23:30:00.000",
            "1800-01-01T00:00:00.000Z",
        ] {
            let e = err(&with(at));
            assert!(
                e.contains("is not a UTC time") && e.contains(at),
                "{at}: {e}"
            );
        }
    }

    /// R's `write.csv` writes `NA` for a missing value: read as empty
    /// wherever a field may be empty; a bot named `NA` (or `1.10`, or
    /// `=HYPERLINK(...)`) is refused, naming its line and seat: the tables
    /// written from the rows would lose it to R and pandas.
    #[test]
    fn r_na_is_read_as_empty_where_a_field_may_be_empty() {
        let h = format!("{H},started_at,version0,version1,version2,time0_ms,time1_ms,time2_ms,record_file,record_offset,record_length");
        let f = ok(&format!(
            "{h}\ng1,filo,2,p1,A,B,NA,1,0,NA,store,NA,30,100,7,NA,NA,NA,NA,NA,NA,NA,NA,NA,NA,NA\n"
        ));
        let r = &f.rows[0].1;
        assert_eq!((r.seat2.as_str(), r.score2, r.offender), ("", None, None));
        assert_eq!((r.opening.as_str(), r.started_at.as_str()), ("", ""));
        assert_eq!((r.version0.as_str(), r.version2.as_str()), ("", ""));
        assert_eq!((r.time0_ms, r.record_offset), (None, None));
        assert_eq!(r.record_file, "");
        // A 3-player game's third bot called NA, a bot called 1.10 or
        // a formula: refused, each naming its line and seat.
        for (seats, players, what) in [
            (
                "A,B,NA",
                "3",
                "seat2 (`NA`) is what R and pandas read as a missing value",
            ),
            (
                "1.10,B,",
                "2",
                "seat0 (`1.10`) is what R and pandas read as a number",
            ),
            (
                "A,=HYPERLINK(1),",
                "2",
                "seat1 (`=HYPERLINK(1)`) begins with `=`",
            ),
        ] {
            let score2 = if players == "3" { "0.5" } else { "" };
            let e = err(&format!(
                "{H}\ng1,tricala,{players},p1,{seats},0.5,0.5,{score2},tie,,30,100,7,\n"
            ));
            assert!(e.contains("t.csv:2") && e.contains(what), "{e}");
        }
        // Not where a value is needed.
        let e = err(&format!("{H}\ng1,filo,2,p1,A,B,,NA,0,,store,,30,100,7,\n"));
        assert!(
            e.contains("t.csv:2") && e.contains("column `score0`: `NA`"),
            "{e}"
        );
    }

    /// A seed written as a float (by R, or pandas) has lost its digits:
    /// refused, saying so and how to read the column as text.
    #[test]
    fn a_seed_written_as_a_float_is_refused_saying_why() {
        for seed in ["2.00402232934386e+18", "1.4947894042929054e19", "7.5"] {
            let e = err(&format!(
                "{H}\ng1,filo,2,p1,A,B,,1,0,,store,,30,100,{seed},\n"
            ));
            assert!(
                e.contains("t.csv:2")
                    && e.contains(&format!(
                        "column `seed`: `{seed}` is a seed written as a floating-point number"
                    ))
                    && e.contains("lost its last digits")
                    && e.contains(r#"dtype={"seed": str}"#)
                    && e.contains(r#"colClasses = c(seed = "character")"#),
                "{e}"
            );
        }
        let e = err(&format!("{H}\ng1,filo,2,p1,A,B,,1,0,,store,,30,100,x,\n"));
        assert!(
            e.contains("column `seed`: `x` is not a whole number >= 0"),
            "{e}"
        );
        // A whole float as pandas writes one (`7.0`) is still its number.
        let f = ok(&format!("{H}\ng1,filo,2,p1,A,B,,1,0,,store,,30,100,7.0,\n"));
        assert_eq!(f.rows[0].1.seed, 7);
    }

    /// Every whole-number column reads a whole number written as a float
    /// alike: `7.0` as pandas writes it, `1e+05` as R does (below 10^15,
    /// where R's 15 digits are all of it); a fraction is refused.
    #[test]
    fn whole_numbers_written_as_floats_are_read_alike_in_every_column() {
        let head = format!("{H},record_file,record_offset,record_length");
        let row = |plies: &str, dur: &str, seed: &str, off: &str| {
            format!("{head}\ng1,filo,2,p1,A,B,,1,0,,store,,{plies},{dur},{seed},,r.zst,{off},5\n")
        };
        let f = ok(&row("3e+01", "1e+05", "1.5E3", "2.0e6"));
        let r = &f.rows[0].1;
        assert_eq!(
            (r.plies, r.duration_ms, r.seed, r.record_offset),
            (30, 100_000, 1500, Some(2_000_000))
        );
        let f = ok(&row("30.0", "100.00", "7", "12.0"));
        let r = &f.rows[0].1;
        assert_eq!(
            (r.plies, r.duration_ms, r.record_offset),
            (30, 100, Some(12))
        );
        for (bad, col) in [
            (row("30", "1.5e+00", "7", "0"), "duration_ms"),
            (row("30", "100", "7", "1e+15"), "record_offset"),
            (row("30", "-1e+02", "7", "0"), "duration_ms"),
        ] {
            let e = err(&bad);
            assert!(e.contains(&format!("column `{col}`")), "{e}");
        }
    }

    /// RFC 3339's other spellings of a UTC time (a space or `t` between
    /// date and time, a lower-case `z`; pandas' `+00:00` after a space)
    /// are read, respelt as the referee writes them; a refusal says what
    /// is wrong.
    #[test]
    fn a_start_time_spelt_as_rfc_3339_allows_is_read_in_one_spelling() {
        let with =
            |at: &str| format!("{H},started_at\ng1,filo,2,p1,A,B,,1,0,,store,,30,100,7,,{at}\n");
        for (at, read) in [
            ("2026-12-06 18:57:02.681+00:00", "2026-12-06T18:57:02.681Z"),
            ("2026-12-06 18:57:02.681Z", "2026-12-06T18:57:02.681Z"),
            ("2026-12-06t18:57:02.681z", "2026-12-06T18:57:02.681Z"),
            ("2026-12-06T18:57:02z", "2026-12-06T18:57:02Z"),
            ("2026-12-06T18:57:02.681Z", "2026-12-06T18:57:02.681Z"),
            (
                "2026-12-06T18:57:02.681+00:00",
                "2026-12-06T18:57:02.681+00:00",
            ),
        ] {
            assert_eq!(ok(&with(at)).rows[0].1.started_at, read, "{at}");
        }
        for (at, why) in [
            (
                "2026-12-06 18:57:02.681+02:00",
                "its offset is +02:00, not UTC's",
            ),
            ("2026-12-06T18:57:02.681-05:00", "its offset is -05:00"),
            ("2026-12-06 18:57:02.681", "it has no time zone"),
            ("1969-12-31T23:59:59Z", "before 1970"),
            ("2026-12-06X18:57:02z", "not an RFC 3339 time"),
            ("yesterday", "not an RFC 3339 time"),
        ] {
            let e = err(&with(at));
            assert!(
                e.contains("t.csv:2")
                    && e.contains(at)
                    && e.contains(why)
                    && !e.contains("ending in `Z`"),
                "{at}: {e}"
            );
        }
    }

    /// A variant named as a table of the ratings (`all`; `X-3p` of a
    /// 2-player game) would be counted in that table: refused, named.
    #[test]
    fn a_variant_named_as_a_ratings_table_is_refused() {
        let e = err(&format!("{H}\ng1,all,2,p1,A,B,,1,0,,store,,30,100,7,\n"));
        assert!(
            e.contains("t.csv:2") && e.contains("variant `all` is the name of the ratings' table"),
            "{e}"
        );
        let e = err(&format!(
            "{H}\ng1,tricala-3p,2,p1,A,B,,1,0,,store,,30,100,7,\n"
        ));
        assert!(e.contains("labels the 3-player games of `tricala`"), "{e}");
    }

    /// A variant is a column's value in the tables as a bot's name is:
    /// one read as missing or a number, a formula, or holding a control
    /// character is refused, naming the line and the variant.
    #[test]
    fn a_variant_is_checked_as_a_name() {
        for (variant, why) in [
            ("NA", "as a missing value"),
            ("1.10", "as a number"),
            ("=cmd()", "run as a formula"),
            ("filo\u{1b}[2J", "holds the character"),
            (" filo", "begins or ends with white space"),
        ] {
            let e = err(&format!(
                "{H}\ng1,\"{variant}\",2,p1,A,B,,1,0,,store,,30,100,7,\n"
            ));
            assert!(
                e.contains("t.csv:2") && e.contains("the variant") && e.contains(why),
                "{variant:?}: {e}"
            );
        }
    }

    #[test]
    fn accepts_bom_crlf_quotes_extra_and_reordered_columns() {
        let f = ok(&format!("\u{feff}{H}\r\n{R1}\r\n{R2}\r\n"));
        assert_eq!(f.rows.len(), 2);
        assert_eq!(f.rows[1].0, 3);
        let f = ok(&format!("{H},comment\n{R1},x\n\n{R2},\"y, z\"\n"));
        assert_eq!(f.rows.len(), 2);
        assert_eq!(f.rows[1].0, 4, "line numbers count the blank line");
        let f = ok(&format!(
            "{H}\ng1,filo,2,p1,\"A, the \"\"bot\"\"\",B,,1,0,,store,,30,100,7,\"x y\"\n"
        ));
        assert_eq!(f.rows[0].1.seat0, "A, the \"bot\"");
        let f = ok("seat1,seat0,game_id,variant,players,group,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening\nB,A,g1,filo,2,p1,,1,0,,store,,30,100,7,\n");
        assert_eq!(
            (f.rows[0].1.seat0.as_str(), f.rows[0].1.seat1.as_str()),
            ("A", "B")
        );
        assert!(f.warnings.is_empty());
    }

    #[test]
    fn the_added_columns_are_read_when_present_and_checked() {
        // A file of the first schema: the added columns are empty.
        let f = ok(&format!("{H}\n{R1}\n"));
        assert_eq!(f.rows[0].1.started_at, "");
        assert_eq!(f.rows[0].1.time0_ms, None);
        let h = format!("{H},started_at,version0,version1,version2,time0_ms,time1_ms,time2_ms");
        let f = ok(&format!(
            "{h}\n{R1},2026-11-23T16:05:09.123Z,1.2,\"v,3\",,12.5,0,\n"
        ));
        let r = &f.rows[0].1;
        assert_eq!(r.started_at, "2026-11-23T16:05:09.123Z");
        assert_eq!((r.version0.as_str(), r.version1.as_str()), ("1.2", "v,3"));
        assert_eq!(
            (r.time0_ms, r.time1_ms, r.time2_ms),
            (Some(12.5), Some(0.0), None)
        );
        // Written back, the row reads the same.
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(r).unwrap();
        let again = ok(&String::from_utf8(w.into_inner().unwrap()).unwrap());
        assert_eq!(&again.rows[0].1, r);
        let e = err(&format!("{h}\n{R1},yesterday,,,,,,\n"));
        assert!(
            e.contains("t.csv:2: column `started_at`: `yesterday`"),
            "{e}"
        );
        let e = err(&format!("{h}\n{R1},,,,,-3,,\n"));
        assert!(e.contains("t.csv:2: column `time0_ms`: `-3`"), "{e}");
    }

    /// A file that is no CSV is named for what it is, at line 1: not
    /// "no header line" (issue: `arena rate` of a gzip or UTF-16 file).
    #[test]
    fn a_file_that_is_no_csv_is_named_for_what_it_is() {
        let utf16le: Vec<u8> = H.bytes().flat_map(|b| [b, 0]).collect();
        let cases: [(&[u8], &str); 5] = [
            (
                b"\x1f\x8b\x08\x00\x00,\n,x\n",
                "t.csv:1: this is a gzip-compressed file",
            ),
            (
                b"\x28\xb5\x2f\xfd\x00\n",
                "t.csv:1: this is a zstd-compressed file",
            ),
            (
                b"\xff\xfeg\x00a\x00",
                "t.csv:1: this is UTF-16 text, not UTF-8",
            ),
            (&utf16le, "t.csv:1: this is UTF-16 text, not UTF-8"),
            (
                &[0u8; 100],
                "t.csv:1: this is a binary file (NUL bytes in its first line)",
            ),
        ];
        for (bytes, want) in cases {
            let e = parse(Path::new("t.csv"), bytes)
                .expect_err(want)
                .to_string();
            assert!(e.starts_with(want), "{e}");
        }
        // A league's log of records is named as one, compressed or not:
        // `zstd -d` alone would not make it a table.
        for name in ["records-0000.jsonl.zst", "records-0003.jsonl"] {
            let e = parse(Path::new(name), b"\x28\xb5\x2f\xfd\x00\n")
                .expect_err(name)
                .to_string();
            assert!(
                e.contains(":1: this is a league's log of game records"),
                "{e}"
            );
        }
        // A NUL in a row (zeros a crash left at the end) is no such file.
        let mut zeros = format!("{H}\n{R1}\n").into_bytes();
        zeros.extend([0u8; 10]);
        assert_eq!(parse(Path::new("t.csv"), &zeros).unwrap().rows.len(), 1);
    }

    /// A line without its end is not read into memory for ever
    /// (`/dev/zero`, an endless stream): it is an error once it is longer
    /// than a header or a row may be.
    #[test]
    fn an_endless_line_is_an_error_not_all_memory() {
        let e = RowReader::new(Path::new("t.csv"), std::io::repeat(b'a'))
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("t.csv:1: unreadable header: a line runs over 1 MiB"),
            "{e}"
        );
        // A row's bound, made small here.
        let input = format!("{H}\n{R1}\n").into_bytes();
        let mut lines = Lines::new(std::io::Read::chain(
            input.as_slice(),
            std::io::repeat(b'x'),
        ))
        .unwrap()
        .unwrap();
        lines.limits.1 = 1000;
        let e = std::io::Read::read_to_end(&mut lines, &mut Vec::new()).unwrap_err();
        assert!(
            e.to_string().contains(
                "a line runs over 1000 bytes without a line end, more than a row may hold"
            ),
            "{e}"
        );
    }

    /// A line break or an invisible character in a bot's name (no league
    /// writes one) is refused with its line: it broke the tables' rows.
    #[test]
    fn a_name_with_a_line_break_or_hidden_character_is_refused() {
        for (name, c) in [("\"A\nB\"", "\\u{a}"), ("A\u{200b}", "\\u{200b}")] {
            let e = err(&format!(
                "{H}\n{R1}\ng3,filo,2,p2,{name},B,,1,0,,store,,30,100,7,\n"
            ));
            assert!(
                e.contains(&format!(
                    "t.csv:3: the bot name in seat0 holds the character {c}"
                )),
                "{e}"
            );
        }
    }

    /// A name that shows nothing (a braille blank, marks with no letter)
    /// would pass for no one.
    #[test]
    fn a_name_that_shows_nothing_is_refused() {
        for name in ["\u{2800}", "\u{301}\u{301}"] {
            let e = err(&format!(
                "{H}\n{R1}\ng3,filo,2,p2,{name},B,,1,0,,store,,30,100,7,\n"
            ));
            assert!(
                e.contains("t.csv:3: the bot name in seat0 (") && e.contains("shows nothing"),
                "{e}"
            );
        }
    }

    /// A name with white space around it would be another bot shown alike.
    #[test]
    fn a_name_with_white_space_around_it_is_refused() {
        for name in ["\"A \"", "\" A\"", "A  "] {
            let e = err(&format!(
                "{H}\n{R1}\ng3,filo,2,p2,B,{name},,1,0,,store,,30,100,7,\n"
            ));
            assert!(
                e.contains("t.csv:3: the bot name in seat1 (`")
                    && e.contains("begins or ends with white space"),
                "{e}"
            );
        }
    }

    /// A column added since the first schema, named twice, is refused as
    /// the first schema's are: not read from its last copy.
    #[test]
    fn an_added_column_named_twice_is_refused() {
        let e = err(&format!("{H},started_at,started_at\n{R1},,\n"));
        assert!(
            e.contains("t.csv:1: column `started_at` appears twice in the header"),
            "{e}"
        );
    }

    #[test]
    fn a_bot_in_two_seats_is_refused_with_its_line() {
        let e = err(&format!(
            "{H}\n{R1}\ng9,filo,2,p9,A,A,,1,0,,store,,30,100,7,\n"
        ));
        assert!(
            e.contains("t.csv:3: seat0 and seat1 are the same bot `A`"),
            "{e}"
        );
        let e = err(&format!(
            "{H}\ng9,tricala,3,p9,A,B,B,1,0.25,0.25,corners,,30,100,7,\n"
        ));
        assert!(
            e.contains("t.csv:2: seat1 and seat2 are the same bot `B`"),
            "{e}"
        );
    }

    /// Reads in pieces of `n` bytes: the reader's buffer refills land
    /// anywhere, inside CRLF pairs and runs of blank lines too.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn trickled(text: &str, n: usize) -> Result<CsvFile, String> {
        collect(
            RowReader::new(Path::new("t.csv"), Trickle(text.as_bytes(), n))
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn lines_and_errors_do_not_depend_on_how_the_bytes_arrive() {
        let texts = [
            format!("\u{feff}{H}\r\n\r\n{R1}\r\n\n\r\n{R2}\r\n"),
            format!("{H}\n\n\n{R1}\n \n{R2}"),
            format!("\n\n  {H}\n{R1}\n{R2}\n"),
            format!("{H}\ng1,filo,2,p1,\"A\nB\",B,,1,0,,store,,30,100,7,\n\n{R2}\n"),
            format!("{H}\n{R1}\n\r\ng2,filo,2,p1,B,A,,0.5,0."),
            format!("{H}\n{R1}\n\ng2,filo,2,p1,B,A,,0.5,0.\n{R2}\n"),
            format!("{H}\n{R1}\n{H}\n"),
            " \r\n\t\n".to_string(),
            format!("{H}\r\r{R1}\r\r\n{R2}\r"),
            format!("{H}\r{R1}\r{R2}x\r{R1}\r"),
        ];
        for text in &texts {
            let whole = parse(Path::new("t.csv"), text.as_bytes()).map_err(|e| e.to_string());
            let whole = whole.map(|f| (f.rows, f.warnings));
            for n in [1, 2, 3, 5, 64] {
                let piece = trickled(text, n).map(|f| (f.rows, f.warnings));
                assert_eq!(piece, whole, "{text:?} in pieces of {n}");
            }
        }
        let f = trickled(&texts[0], 1).expect("accepted");
        let f2 = trickled(&texts[8], 1).expect("accepted");
        assert_eq!(f2.rows.iter().map(|r| r.0).collect::<Vec<_>>(), [3, 5]);
        assert_eq!(f.rows.iter().map(|r| r.0).collect::<Vec<_>>(), [3, 6]);
        let e = trickled(&texts[5], 1).expect_err("rejected");
        assert!(e.starts_with("t.csv:4: 9 fields"), "{e}");
    }

    /// A file whose lines end with a lone CR (old Mac style) reads as the
    /// csv reader reads it, row by row, and its errors name the line the
    /// row is on, not line 1 (fuzzing found every row said to be on 1).
    #[test]
    fn lines_ending_with_a_lone_cr_are_counted() {
        let f = ok(&format!("{H}\r{R1}\r\r{R2}\r"));
        assert_eq!(f.rows.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 4]);
        let e = err(&format!("{H}\r{R1}\r{R2},x\r{R1}\r"));
        assert!(e.starts_with("t.csv:3: 17 fields"), "{e}");
        let e = err(&format!("{H}\r\n{R1}\n\r{R2},x\r\n{R1}\r"));
        assert!(e.starts_with("t.csv:4: 17 fields"), "{e}");
        // A bad last row with its line end is no torn write.
        let e = err(&format!("{H}\r{R1}\r{R2},x\r"));
        assert!(e.starts_with("t.csv:3: 17 fields"), "{e}");
    }

    #[test]
    fn empty_and_header_only_files_have_no_rows() {
        let f = ok("");
        assert!(f.rows.is_empty() && f.warnings.len() == 1);
        let f = ok(&format!("{H}\n"));
        assert!(f.rows.is_empty() && f.warnings.is_empty());
    }

    /// Every row read again from where `next_row_at` says it starts, in
    /// a file with a byte-order mark, CRLF line ends, blank lines and a
    /// quoted field across two lines (a group: a bot's name may hold no
    /// line break); a place past the end has no row.
    #[test]
    fn each_row_is_read_again_from_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.csv");
        let odd = R2.replacen(",p1,", ",\"p\n1\",", 1);
        let third = R1.replacen("g1", "g3", 1);
        let text = format!("\u{feff}{H}\r\n{R1}\r\n\r\n{odd}\n\n{third}\n");
        std::fs::write(&path, &text).unwrap();
        let mut r = RowReader::open(&path).unwrap();
        let mut seen = Vec::new();
        while let Some((line, at, row)) = r.next_row_at().unwrap() {
            seen.push((line, at, row.clone()));
        }
        assert_eq!(seen.len(), 3);
        for (line, at, row) in &seen {
            assert_eq!(
                row_at(&path, *at, *line).unwrap().as_ref(),
                Some(row),
                "line {line}"
            );
        }
        assert_eq!(seen[1].2.group, "p\n1");
        assert_eq!(row_at(&path, text.len() as u64, 9).unwrap(), None);
    }

    /// pandas saves an integer column with an empty field as floats
    /// (`offender` beside games without a forfeit): read as the whole
    /// numbers they are; a fraction is still refused.
    #[test]
    fn whole_numbers_written_as_floats_are_read() {
        let f = ok(&format!(
            "{H}\ng1,filo,2.0,p1,A,B,,0.0,1.0,,timeout,0.0,30.0,100.0,7.0,\n{R2}\n"
        ));
        let r = &f.rows[0].1;
        assert_eq!((r.players, r.offender, r.plies), (2, Some(0), 30));
        assert_eq!((r.duration_ms, r.seed), (100, 7));
        let e = err(&format!(
            "{H}\ng1,filo,2,p1,A,B,,0,1,,timeout,0.5,30,100,7,\n"
        ));
        assert!(
            e.contains("column `offender`: `0.5` is not a seat number"),
            "{e}"
        );
        // (`1.0e0`, whole, is read: `whole_numbers_written_as_floats_are_read_alike_in_every_column`.)
        for bad in ["1.", ".0", "1.5e0", "-1.0"] {
            let e = err(&format!(
                "{H}\ng1,filo,2,p1,A,B,,0,1,,store,,{bad},100,7,\n"
            ));
            assert!(e.contains("column `plies`"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_torn_last_line_is_skipped_with_a_warning() {
        let f = ok(&format!("{H}\n{R1}\ng2,filo,2,p1,B,A,,0.5,0."));
        assert_eq!(f.rows.len(), 1);
        assert_eq!(f.warnings[0].line, 3);
        assert!(f.warnings[0]
            .to_string()
            .starts_with("t.csv:3: skipped a torn"));
        // A complete last row without its newline is a row.
        assert_eq!(ok(&format!("{H}\n{R1}\n{R2}")).rows.len(), 2);
        // The same damage before the end is an error.
        let e = err(&format!("{H}\ng2,filo,2,p1,B,A,,0.5,0.\n{R1}\n"));
        assert!(e.starts_with("t.csv:2: 9 fields, the header has 16"), "{e}");
    }

    /// A header of this version's columns with one mistyped (a spreadsheet
    /// capitalised it, a hand edit) names it and the column meant: its
    /// values were read as empty in every row (a record column: every
    /// record "missing").
    #[test]
    fn a_mistyped_added_column_is_named() {
        let h = format!("{H},record_file,record_offset,Record_length");
        let e = err(&format!("{h}\n{R1},records-0000.jsonl.zst,0,10\n"));
        assert!(
            e.starts_with("t.csv:1: column `Record_length` is not one of arena's, which lacks `record_length` here: did you mean `record_length`?"),
            "{e}"
        );
        let h = format!("{H},record_file,record_ofset,record_length");
        let e = err(&format!("{h}\n{R1},records-0000.jsonl.zst,0,10\n"));
        assert!(e.contains("did you mean `record_offset`?"), "{e}");
        // An older file (none of the added columns) with a column of its
        // own is read as before.
        assert_eq!(ok(&format!("{H},notes\n{R1},x\n")).rows.len(), 1);
    }

    /// A quote opened in a name and never closed takes the lines after it
    /// as one field: the error says so, on the line the quote is on.
    #[test]
    fn an_unclosed_quote_is_named() {
        let open = R1.replacen(",A,", ",\"A,", 1);
        let e = err(&format!("{H}\n{open}\n{R2}\n{R1}\n"));
        assert!(e.starts_with("t.csv:2: "), "{e}");
        assert!(
            e.contains("run over 4 lines: a `\"` opened in it and not closed"),
            "{e}"
        );
        // One line's damage says nothing of quotes.
        let e = err(&format!("{H}\ng2,filo,2,p1,B,A,,0.5,0.\n{R1}\n"));
        assert!(!e.contains("quote") && !e.contains('"'), "{e}");
    }

    #[test]
    fn every_problem_names_its_line_and_column() {
        let cases: &[(String, &str)] = &[
            (format!("{R1}\n{R2}\n"), "t.csv:1: no header line"),
            (
                format!("{}\n{R1}\n", H.to_uppercase()),
                "t.csv:1: column `GAME_ID` must be written `game_id`: the header's names are lower case",
            ),
            (
                format!("{}\n", H.replace(',', ";")),
                "t.csv:1: the header's fields are separated by semicolons, not commas",
            ),
            (
                "game_id,variant,players,group,seat0,seat1,score0,score1,reason,plies\n".into(),
                "t.csv:1: missing columns `seat2`, `score2`, `offender`, `duration_ms`, `seed`, `opening`",
            ),
            (format!("{H},game_id\n"), "t.csv:1: column `game_id` appears twice"),
            (
                format!("{H}\n{R1}\n{H}\n{R2}\n"),
                "t.csv:3: a second header line: two runs wrote to this file",
            ),
            (
                format!("{H}\n{R1}\ng2,filo,two,p1,B,A,,0.5,0.5,,tie,,31,100,7,\n"),
                "t.csv:3: column `players`: `two` is not 2 or 3",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,1,0,,store,,-3,100,7,\n"),
                "t.csv:2: column `plies`: `-3` is not a whole number",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,0.5,1,,tie,,31,100,7,\n"),
                "t.csv:2: scores must add up to 1",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,0.7,0.3,,tie,,31,100,7,\n"),
                "t.csv:2: scores must be multiples of 0.5",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,0.5000000001,0.4999999999,,tie,,31,100,7,\n"),
                "t.csv:2: scores must be multiples of 0.5",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,NaN,NaN,,tie,,31,100,7,\n"),
                "t.csv:2: scores must lie in [0, 1]",
            ),
            (
                format!("{H}\ng3,tricala,3,s,X,Y,,1,0.5,,store,,30,100,7,\n"),
                "t.csv:2: players is 3 but seat2 is empty",
            ),
            (
                format!("{H}\ng3,tricala,3,s,X,Y,Z,1,0.5,,store,,30,100,7,\n"),
                "t.csv:2: players is 3 but score2 is empty",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,1,0,,store,5,31,100,7,\n"),
                "t.csv:2: offender must be a seat (0..1), got 5",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,1,0,,timeout,0,31,100,7,\n"),
                "t.csv:2: offender is seat0, which scored 1: a seat that forfeits scores 0",
            ),
            (
                format!("{H}\ng3,tricala,3,s,X,Y,Z,0.25,0.25,1,crash,2,30,100,7,\n"),
                "t.csv:2: offender is seat2, which scored 1",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,0,1,,no_moves,0,31,100,7,\n"),
                "t.csv:2: reason `no_moves` is an end by the rules, not a forfeit, but offender is seat0",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,0,1,,timeout,,31,100,7,\n"),
                "t.csv:2: reason `timeout` is a forfeit, but no offender is given",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,,,1,0,,store,,31,100,7,\n"),
                "t.csv:2: empty bot name in seat1",
            ),
            (
                format!("{H}\n,filo,2,p1,B,A,,1,0,,store,,31,100,7,\n"),
                "t.csv:2: empty game_id",
            ),
            (
                format!(
                    "{H}\ng2,filo,2,p1,{},A,,1,0,,store,,31,100,7,\n",
                    "b".repeat(70_000)
                ),
                "t.csv:2: the bot name in seat0 is 70000 bytes long, over the 1024",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,A,,1,0,,store,,31,100,7,,extra\n"),
                "t.csv:2: 17 fields, the header has 16",
            ),
            (
                format!("{H}\ng2,filo,2,p1,B,\"A,1,0,,store,,31,100,7,\n{R1}\n"),
                "t.csv:2:",
            ),
        ];
        for (text, want) in cases {
            let e = err(text);
            assert!(e.starts_with(want), "{e}\n  wanted: {want}");
        }
        let bad_utf8 = [
            H.as_bytes(),
            b"\n\xff\xfe,filo,2,p1,B,A,,1,0,,store,,30,100,7,\n",
        ]
        .concat();
        let e = parse(Path::new("t.csv"), &bad_utf8)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.csv:2: column `game_id` is not valid UTF-8"),
            "{e}"
        );
    }
}
