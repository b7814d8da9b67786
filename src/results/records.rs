//! Where a game's record is, from its row (issue 16): a byte range of a
//! record log of the results folder's `games/` (`record_file`,
//! `record_offset`, `record_length`), or, for rows of older versions (those
//! columns empty), the file `games/GAME_ID.jsonl`. Read by the league, the
//! command line and the HTML report; written by the league
//! (`league::folder::records`).
//!
//! How a record is stored (issue 35): a log `records-NNNN.jsonl.zst` holds
//! one zstd frame per game, one after another, and a row's byte range is
//! its game's frame: each game is read alone, without the others, and
//! `zstd -dc -D games/records.zdict records-0000.jsonl.zst` gives the
//! JSON lines of the whole log. Every frame is compressed with the
//! dictionary [`DICTIONARY`] (its id is in each frame's header), at level
//! [`LEVEL`], with its content size and a checksum. Logs of earlier
//! versions (`records-NNNN.jsonl`) hold the JSON lines as they are, and
//! are read as they are.

use super::GameRow;
use std::cell::RefCell;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The zstd dictionary of the record frames, trained on records of format 2
/// (`benches/records-dict.sh`). Frames name its id (35035) in their
/// header; it never changes: another dictionary would be another id, and
/// readers would keep this one.
pub const DICTIONARY: &[u8] = include_bytes!("records-v2.zdict");

/// The id [`DICTIONARY`] carries (and every frame compressed with it).
pub const DICTIONARY_ID: u32 = 35035;

/// The file of `games/` that holds [`DICTIONARY`], for `zstd -D`: the
/// arena itself never reads it.
pub const DICTIONARY_FILE: &str = "records.zdict";

/// The zstd level of the record frames: zstd's default, chosen by
/// measurement (docs/league.md, "Game records"): higher levels save a few
/// percent for several times the CPU.
pub const LEVEL: i32 = 3;

/// The largest record a frame may say it holds: a frame that says more is
/// damaged (a record of a game of 10,000 plies is about 400 KB).
const MAX_RECORD: u64 = 256 << 20;

/// The name of log number `n` as this version writes it:
/// `records-0000.jsonl.zst`.
pub fn log_name(n: u32) -> String {
    format!("records-{n:04}.jsonl.zst")
}

/// The name of log number `n` as versions before issue 35 wrote it (plain
/// JSON lines): `records-0000.jsonl`.
pub fn plain_log_name(n: u32) -> String {
    format!("records-{n:04}.jsonl")
}

/// Whether `name` is a log's name, compressed or plain (and nothing else:
/// no folder, no `..`).
pub fn is_log_name(name: &str) -> bool {
    let name = name.strip_suffix(".zst").unwrap_or(name);
    name.strip_prefix("records-")
        .and_then(|r| r.strip_suffix(".jsonl"))
        .is_some_and(|n| n.len() >= 4 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the log `path` holds zstd frames (`.jsonl.zst`), not plain
/// JSON lines.
pub fn is_compressed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// One game's record as it is stored: a zstd frame, made by [`Encoder`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    bytes: Vec<u8>,
}

impl Frame {
    /// The frame's bytes, as written to a log.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Compresses records into frames; one per thread that writes records
/// (its zstd context and the loaded dictionary are reused).
pub struct Encoder {
    zstd: zstd::bulk::Compressor<'static>,
}

impl Encoder {
    pub fn new() -> std::io::Result<Encoder> {
        let mut zstd = zstd::bulk::Compressor::with_dictionary(LEVEL, DICTIONARY)?;
        zstd.include_checksum(true)?;
        zstd.include_contentsize(true)?;
        zstd.include_dictid(true)?;
        Ok(Encoder { zstd })
    }

    /// The frame of `record` (its JSON lines).
    pub fn encode(&mut self, record: &[u8]) -> std::io::Result<Frame> {
        Ok(Frame {
            bytes: self.zstd.compress(record)?,
        })
    }
}

thread_local! {
    static ENCODER: RefCell<Option<Encoder>> = const { RefCell::new(None) };
    static DECODER: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// The frame of `record`, by this thread's [`Encoder`].
pub fn encode(record: &[u8]) -> std::io::Result<Frame> {
    ENCODER.with(|e| {
        let mut e = e.borrow_mut();
        let enc = match &mut *e {
            Some(enc) => enc,
            None => e.insert(Encoder::new()?),
        };
        enc.encode(record)
    })
}

/// The record (its JSON lines) of `frame`, the bytes of one frame: an
/// error says what is wrong with it (torn, not a frame, damaged), the
/// caller where it is.
pub fn decode(frame: &[u8]) -> std::io::Result<Vec<u8>> {
    let bad = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    match zstd::zstd_safe::find_frame_compressed_size(frame) {
        Ok(n) if n == frame.len() => {}
        Ok(n) => {
            return Err(bad(format!(
                "not one zstd frame: a frame of {n} bytes, then {} more",
                frame.len() - n
            )))
        }
        Err(_) => {
            return Err(bad(format!(
                "not a whole zstd frame ({} bytes): torn or damaged",
                frame.len()
            )))
        }
    }
    let size = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n <= MAX_RECORD => n as usize,
        Ok(Some(n)) => return Err(bad(format!("the zstd frame says it holds {n} bytes"))),
        Ok(None) | Err(_) => return Err(bad("the zstd frame does not say its size".into())),
    };
    DECODER.with(|d| {
        let mut d = d.borrow_mut();
        let dec = match &mut *d {
            Some(dec) => dec,
            None => d.insert(zstd::bulk::Decompressor::with_dictionary(DICTIONARY)?),
        };
        let out = dec
            .decompress(frame, size)
            .map_err(|e| bad(format!("the zstd frame cannot be decompressed: {e}")))?;
        if out.len() != size {
            return Err(bad(format!(
                "the zstd frame gave {} bytes, it says {size}",
                out.len()
            )));
        }
        Ok(out)
    })
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

    /// The record's bytes (its JSON lines; decompressed, from a log of
    /// frames). A range past the end of its log is an error (checked before
    /// anything is allocated), and so is a frame that is torn or damaged:
    /// the error names the offset (the caller, the log).
    pub fn read(&self) -> std::io::Result<Vec<u8>> {
        let bytes = self.stored()?;
        match self {
            RecordAt::Log {
                path,
                offset,
                length,
            } if is_compressed(path) => decode(&bytes).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("the record at byte {offset} ({length} bytes): {e}"),
                )
            }),
            _ => Ok(bytes),
        }
    }

    /// The record's bytes as they are stored (a zstd frame in a log of
    /// frames).
    pub fn stored(&self) -> std::io::Result<Vec<u8>> {
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
