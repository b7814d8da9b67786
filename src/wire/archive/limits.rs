//! What an archive may hold ([`Limits`]) and why one is refused
//! ([`ArchiveError`]): the words the packer, the unpacker and the reader
//! of its headers share.

use std::io;
use std::path::PathBuf;

pub(super) const MIB: u64 = 1 << 20;

/// What an uploaded (or packed) bot folder may weigh. The defaults fit any
/// bot written by hand with its data files; a ladder can set its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of the tar.gz itself, as uploaded.
    pub compressed_bytes: u64,
    /// Bytes of all files once unpacked (file contents only).
    pub unpacked_bytes: u64,
    /// Entries of the archive: files, folders and links.
    pub files: usize,
    /// Bytes of one entry's path inside the folder.
    pub path_bytes: usize,
    /// Folders deep of one entry's path (`a/b/c` is 3).
    pub path_depth: usize,
}

impl Default for Limits {
    /// 16 MiB compressed, 64 MiB unpacked, 2,000 entries, paths of at most
    /// 200 bytes and 16 levels.
    fn default() -> Limits {
        Limits {
            compressed_bytes: 16 * MIB,
            unpacked_bytes: 64 * MIB,
            files: 2000,
            path_bytes: 200,
            path_depth: 16,
        }
    }
}

/// Why a bot folder could not be packed or an upload could not be unpacked
/// or accepted. Each message names the entry (escaped, so an upload cannot
/// put control characters in a log) and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{dest}: the folder to unpack into already exists; unpack into a new folder")]
    DestExists { dest: PathBuf },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("not a gzip-compressed tar archive: {detail}; pack the bot's folder with `arena submit` or `tar czf`")]
    NotGzip { detail: String },
    #[error(
        "the archive is damaged or cut short: {detail}; pack the bot's folder again and resend it"
    )]
    Corrupt { detail: String },
    #[error("the archive is larger than {}: the limit of this ladder; leave build output and data the bot does not need out of its folder", size(*limit))]
    CompressedTooLarge { limit: u64 },
    #[error("the archive unpacks to more than {}: the limit of this ladder; leave build output and data the bot does not need out of its folder", size(*limit))]
    UnpackedTooLarge { limit: u64 },
    #[error("the archive holds more than {limit} files and folders: the limit of this ladder; leave what the bot does not need out of its folder")]
    TooManyFiles { limit: usize },
    #[error("entry {index}: {kind} of {}, over the limit of {} (read before any of it); pack the folder with `arena submit` or `tar czf`", size(*declared), size(*limit))]
    HeaderTooLarge {
        index: usize,
        kind: &'static str,
        declared: u64,
        limit: u64,
    },
    #[error("entry `{path}`: a path of {len} bytes, over the limit of {limit}; use shorter names")]
    PathTooLong {
        path: String,
        len: usize,
        limit: usize,
    },
    #[error("entry `{path}`: {depth} folders deep, over the limit of {limit}; flatten the folder")]
    PathTooDeep {
        path: String,
        depth: usize,
        limit: usize,
    },
    #[error("entry `{path}`: {why}; rename it")]
    BadName { path: String, why: &'static str },
    #[error("entry `{path}`: a name holding U+{code:04X}, a control or invisible character (a new line, an escape, a direction override), which would show it as another name in a terminal or a page; rename it")]
    HiddenCharacter { path: String, code: u32 },
    #[error("entry `{path}`: its name differs from `{first}` only in case, and a case-insensitive file system (macOS, Windows) takes the two for one; rename one of them")]
    CaseTwin { path: String, first: String },
    #[error("entry `{path}`: an absolute path; pack the folder itself, with paths relative to it")]
    Absolute { path: String },
    #[error("entry `{path}`: a path that leaves the bot's folder (`..`); pack the folder itself")]
    DotDot { path: String },
    #[error("entry `{path}`: a link to `{target}`, outside the bot's folder; only links inside the folder are accepted (relative, with `..` only at the start)")]
    LinkOutside { path: String, target: String },
    #[error("entry `{path}`: a hard link (to `{target}`); hard links are not accepted, store the file itself")]
    HardLink { path: String, target: String },
    #[error(
        "entry `{path}`: a device; only files, folders and links inside the folder are accepted"
    )]
    Device { path: String },
    #[error("entry `{path}`: a FIFO (named pipe); only files, folders and links inside the folder are accepted")]
    Fifo { path: String },
    #[error(
        "entry `{path}`: {kind}; only files, folders and links inside the folder are accepted"
    )]
    OtherType { path: String, kind: String },
    #[error("entry `{path}`: its path goes through a link; nothing is written through links, store the folder itself")]
    ThroughLink { path: String },
    #[error("entry `{path}`: {why}; each path may appear once")]
    Clash { path: String, why: &'static str },
    #[error("{folder}: no bot.toml in this folder; a bot's folder has its manifest at the top (see bots/random-python)")]
    NoManifest { folder: PathBuf },
    #[error("{folder}: {} of files, over the limit of {}; the largest: {largest}; leave build output and data the bot does not need out of its folder", size(*bytes), size(*limit))]
    FolderTooLarge {
        folder: PathBuf,
        bytes: u64,
        limit: u64,
        largest: String,
    },
    #[error("{folder}: more than {limit} files and folders, the limit of this ladder; leave what the bot does not need out of it")]
    FolderTooManyFiles { folder: PathBuf, limit: usize },
    #[error("{folder}: packs to {}, over the limit of {} for an upload; its largest files: {largest}; leave data the bot does not need out of it", size(*bytes), size(*limit))]
    PackedTooLarge {
        folder: PathBuf,
        bytes: u64,
        limit: u64,
        largest: String,
    },
    #[error("bot.toml: {message}")]
    Manifest { message: String },
    #[error("bot.toml `{key}`: `{value}` names a file outside the bot's folder; name files by their path inside the folder (as `bot.py`), programs on the PATH by bare name (as `python3`)")]
    ManifestPath { key: &'static str, value: String },
}

impl ArchiveError {
    /// Whether the refusal is about size or count (an HTTP 413, "Payload
    /// Too Large"), rather than what the archive holds.
    pub fn too_large(&self) -> bool {
        matches!(
            self,
            ArchiveError::CompressedTooLarge { .. }
                | ArchiveError::UnpackedTooLarge { .. }
                | ArchiveError::HeaderTooLarge { .. }
                | ArchiveError::TooManyFiles { .. }
                | ArchiveError::FolderTooLarge { .. }
                | ArchiveError::FolderTooManyFiles { .. }
                | ArchiveError::PackedTooLarge { .. }
        )
    }

    /// The HTTP status an upload refused for this reason gets: 413 for
    /// sizes and counts, 500 when the fault is the server's (its disk, a
    /// folder that exists), 400 for everything the archive got wrong.
    pub fn http_status(&self) -> u16 {
        match self {
            _ if self.too_large() => 413,
            ArchiveError::Io { .. } | ArchiveError::DestExists { .. } => 500,
            _ => 400,
        }
    }
}

/// `bytes` for a message: "64 MiB", "1.5 MiB", "300 KiB" or "12 bytes".
pub(super) fn size(bytes: u64) -> String {
    let (unit, name) = match bytes {
        b if b >= MIB => (MIB, "MiB"),
        b if b >= 1024 => (1024, "KiB"),
        _ => return format!("{bytes} bytes"),
    };
    let tenths = (bytes * 10 + unit / 2) / unit;
    match tenths % 10 {
        0 => format!("{} {name}", tenths / 10),
        t => format!("{}.{t} {name}", tenths / 10),
    }
}

/// Why one entry failed: refused, or the archive could not be read (which
/// the caller tells apart as damaged or over the compressed limit).
pub(super) enum Unpacking {
    Refused(ArchiveError),
    Read(io::Error),
}

impl From<ArchiveError> for Unpacking {
    fn from(e: ArchiveError) -> Unpacking {
        Unpacking::Refused(e)
    }
}
