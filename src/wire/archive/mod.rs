//! A bot folder as a tar.gz: [`pack`] makes one for upload (`arena submit`),
//! [`unpack`] writes an uploaded one to a fresh folder without trusting it,
//! and [`check_manifest`] refuses a bot.toml that names files outside its
//! folder.
//!
//! Unpacking is where the danger is: the archive comes from anyone with an
//! account. Every size is counted while streaming (compressed bytes read,
//! bytes written, entries, path length and depth), so a gzip or tar bomb
//! stops with at most the limit written; only regular files, folders and
//! symbolic links that stay inside the folder are accepted; nothing is
//! written through a link; and on any refusal the half-written folder is
//! removed. No HTTP here: the service maps an error to a status with
//! [`ArchiveError::http_status`].
//!
//! Links: hard links are always refused (they can only name another entry,
//! and refusing them keeps the rule simple). A symbolic link is accepted
//! when its target is relative and made of `..` components first (no more of
//! them than the folders above the link) and then names only: `lib/x ->
//! ../share/x` is accepted, `x -> /etc`, `x -> ../../..` and `x -> a/../..`
//! are not. Because an entry is never written through a link and every link
//! sits in a real folder, following any chain of such links never leaves
//! the folder (a link's `..` climbs real folders only; a lexical check that
//! allowed `..` after a name would let `d -> .` and `e -> d/d/..` escape).

use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

mod headers;
mod limits;

use limits::{size, Unpacking, MIB};
pub use limits::{ArchiveError, Limits};
#[cfg(test)]
mod tests;

/// What [`unpack`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unpacked {
    /// Regular files written.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// A path from an archive or a folder, fit for a message: control
/// characters escaped, backquotes made quotes.
fn shown(path: &str) -> String {
    path.escape_debug().to_string().replace('`', "'")
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> ArchiveError {
    let what = what.into();
    move |source| ArchiveError::Io { what, source }
}

/// The normal components of an entry's path, after checking it is UTF-8,
/// without NUL, relative, without `..`, and within the length and depth
/// limits. `.` and empty components (`a//b`, a trailing `/`) are dropped;
/// an empty result is the folder itself.
fn entry_path(raw: &[u8], limits: &Limits) -> Result<Vec<String>, ArchiveError> {
    let lossy = shown(&String::from_utf8_lossy(raw));
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err(ArchiveError::BadName {
            path: lossy,
            why: "a name that is not UTF-8",
        });
    };
    if text.contains('\0') {
        return Err(ArchiveError::BadName {
            path: lossy,
            why: "a name with a NUL byte",
        });
    }
    // A new line, an escape, a direction override (U+202E): the name
    // would show as another in a terminal, a log or a page.
    if let Some(c) = text.chars().find(|&c| crate::text::is_hidden(c)) {
        return Err(ArchiveError::HiddenCharacter {
            path: lossy,
            code: u32::from(c),
        });
    }
    if text.len() > limits.path_bytes {
        return Err(ArchiveError::PathTooLong {
            path: lossy,
            len: text.len(),
            limit: limits.path_bytes,
        });
    }
    if text.starts_with('/') {
        return Err(ArchiveError::Absolute { path: lossy });
    }
    let mut parts = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(ArchiveError::DotDot { path: lossy }),
            name => parts.push(name.to_string()),
        }
    }
    if parts.len() > limits.path_depth {
        return Err(ArchiveError::PathTooDeep {
            path: lossy,
            depth: parts.len(),
            limit: limits.path_depth,
        });
    }
    Ok(parts)
}

/// Whether a link at `parts` (its path's components) to `target` stays in
/// the folder by the rule of the module's doc: relative, `..` only before
/// any name, no more of them than the folders above the link.
fn link_inside(parts: &[String], target: &str) -> bool {
    if target.is_empty() || target.starts_with('/') || target.contains('\0') {
        return false;
    }
    let mut ups = 0;
    let mut named = false;
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." if named => return false,
            ".." => ups += 1,
            _ => named = true,
        }
    }
    ups < parts.len()
}

/// Counts what goes through it and fails past `limit`: the compressed side
/// of [`unpack`]. The count is shared so that the caller can tell this
/// refusal from the decoder's errors, whatever they wrap it in.
struct Counted<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
    limit: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        if self.read.get() > self.limit {
            return Err(io::Error::other("over the compressed limit"));
        }
        Ok(n)
    }
}

/// Unpacks a gzip-compressed tar archive from `reader` into `dest`, which
/// must not exist yet (it is created; its parent must exist). Streams: sizes
/// are checked as they are read and written, never after. Files get mode
/// 0755 when the archive gives their owner the execute bit, else 0644;
/// folders 0755; owners and times in the archive are ignored. On any
/// refusal `dest` is removed and the error names the entry.
pub fn unpack(reader: impl Read, dest: &Path, limits: &Limits) -> Result<Unpacked, ArchiveError> {
    match fs::symlink_metadata(dest) {
        Ok(_) => {
            return Err(ArchiveError::DestExists {
                dest: dest.to_path_buf(),
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(format!("{}", dest.display()))(e)),
    }
    fs::create_dir(dest).map_err(io_err(format!("creating {}", dest.display())))?;
    let done = unpack_into(reader, dest, limits);
    if done.is_err() {
        let _ = fs::set_permissions(dest, fs::Permissions::from_mode(0o755));
        let _ = fs::remove_dir_all(dest);
    }
    done
}

/// [`unpack`] into the folder it created; the caller removes it on error.
fn unpack_into(
    mut reader: impl Read,
    dest: &Path,
    limits: &Limits,
) -> Result<Unpacked, ArchiveError> {
    fs::set_permissions(dest, fs::Permissions::from_mode(0o755))
        .map_err(io_err(format!("{}", dest.display())))?;
    let read = std::rc::Rc::new(std::cell::Cell::new(0));
    // The gzip magic first, for a plain message when the upload is not one.
    let mut magic = [0u8; 2];
    let got = read_full(&mut reader, &mut magic).map_err(|e| ArchiveError::NotGzip {
        detail: e.to_string(),
    })?;
    if got < 2 || magic != [0x1f, 0x8b] {
        return Err(ArchiveError::NotGzip {
            detail: "it does not start as gzip does".into(),
        });
    }
    let counted = Counted {
        inner: io::Cursor::new(magic).chain(reader),
        read: read.clone(),
        limit: limits.compressed_bytes,
    };
    // The tar stream itself is bounded too, whatever its entries declare.
    let tar_read = std::rc::Rc::new(std::cell::Cell::new(0));
    let tar_limit = headers::stream_limit(limits);
    let decoded = Counted {
        inner: GzDecoder::new(io::BufReader::new(counted)),
        read: tar_read.clone(),
        limit: tar_limit,
    };
    let over = |e: io::Error| match () {
        _ if read.get() > limits.compressed_bytes => ArchiveError::CompressedTooLarge {
            limit: limits.compressed_bytes,
        },
        _ if tar_read.get() > tar_limit => ArchiveError::UnpackedTooLarge {
            limit: limits.unpacked_bytes,
        },
        // The decoder's message may quote a name from the archive.
        _ => ArchiveError::Corrupt {
            detail: shown(&e.to_string()),
        },
    };
    let refused = |e: Unpacking| match e {
        Unpacking::Refused(e) => e,
        Unpacking::Read(e) => over(e),
    };
    let mut archive = tar::Archive::new(decoded);
    let mut out = Unpacked { files: 0, bytes: 0 };
    let mut entries = 0usize;
    let mut pending = headers::Pending::default();
    let mut twins = CaseTwins::default();
    // Raw: the headers that describe the next entry come as entries of
    // their own, and `headers` bounds them before reading them.
    for (index, entry) in archive.entries().map_err(over)?.raw(true).enumerate() {
        let mut entry = entry.map_err(over)?;
        if pending.take(&mut entry, index + 1).map_err(refused)? {
            continue;
        }
        entries += 1;
        if entries > limits.files {
            return Err(ArchiveError::TooManyFiles {
                limit: limits.files,
            });
        }
        let names = pending.names(&entry, index + 1).map_err(refused)?;
        unpack_entry(&mut entry, &names, dest, limits, (&mut out, &mut twins)).map_err(refused)?;
    }
    if pending.waiting() {
        return Err(ArchiveError::Corrupt {
            detail: "the archive ends with headers that describe no entry".into(),
        });
    }
    let gz = archive.into_inner();
    check_end(gz.inner).map_err(|e| match e {
        Unpacking::Refused(e) => e,
        Unpacking::Read(e) => over(e),
    })?;
    Ok(out)
}

/// After the tar's end: zeros only, the padding `tar` writes (at most
/// 1 MiB of them), to the end of the gzip stream, which is read so that
/// its checksum is checked; then nothing at all. Tools disagree on what
/// else may follow (GNU tar `--ignore-zeros` reads a second archive
/// after the first, `gunzip` a second gzip stream after the first),
/// so what the server unpacks would not be what the author's or a
/// reviewer's tools show: refused (docs/security.md).
fn check_end<R: io::BufRead>(mut gz: GzDecoder<R>) -> Result<(), Unpacking> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut padding = 0u64;
    loop {
        let n = read_once(&mut gz, &mut buf)?;
        if n == 0 {
            break;
        }
        if buf[..n].iter().any(|&b| b != 0) {
            return Err(ArchiveError::Corrupt {
                detail: "data after the end of the tar archive (a second archive appended, or garbage), where only its padding of zeros may be".into(),
            }
            .into());
        }
        padding += n as u64;
        if padding > MIB {
            return Err(ArchiveError::Corrupt {
                detail: "more than 1 MiB of data after the end of the tar archive".into(),
            }
            .into());
        }
    }
    let mut after = gz.into_inner();
    let more = after.fill_buf().map_err(Unpacking::Read)?;
    if !more.is_empty() {
        return Err(ArchiveError::Corrupt {
            detail: "data after the end of the gzip stream (a second stream appended, or garbage)"
                .into(),
        }
        .into());
    }
    Ok(())
}

/// The paths an archive (or a folder to pack) names, and the folders
/// above them, by their lower case: a second path that differs from one
/// only in case (`README` and `readme`, `Src/a` and `src/b`) is refused,
/// since a case-insensitive file system (macOS's, Windows') holds one
/// where the archive has two, and which one it keeps is the unpacking
/// tool's choice (docs/security.md).
#[derive(Default)]
struct CaseTwins(std::collections::HashMap<String, String>);

impl CaseTwins {
    /// Refuses path `parts` when it or a folder above it is the twin of
    /// one seen before.
    fn check(&mut self, parts: &[String]) -> Result<(), ArchiveError> {
        let mut path = String::new();
        for part in parts {
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(part);
            match self.0.get(&path.to_lowercase()) {
                Some(first) if *first != path => {
                    return Err(ArchiveError::CaseTwin {
                        path: shown(&path),
                        first: shown(first),
                    })
                }
                Some(_) => {}
                None => {
                    self.0.insert(path.to_lowercase(), path.clone());
                }
            }
        }
        Ok(())
    }
}

/// One read of `reader` into `buf` (again when interrupted): how much
/// it gave, 0 at the end.
fn read_once(reader: &mut impl Read, buf: &mut [u8]) -> Result<usize, Unpacking> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r.map_err(Unpacking::Read),
        }
    }
}

/// Reads until `buf` is full or the end; how much was read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Checks and writes one entry, counted in `out`, its path among those
/// the archive named before (`twins`).
fn unpack_entry<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    names: &headers::Names,
    dest: &Path,
    limits: &Limits,
    (out, twins): (&mut Unpacked, &mut CaseTwins),
) -> Result<(), Unpacking> {
    let raw = names.path.clone();
    let parts = entry_path(&raw, limits)?;
    let path = shown(&parts.join("/"));
    let kind = entry.header().entry_type();
    let target = || {
        let t = names.link.as_deref().unwrap_or_default();
        shown(&String::from_utf8_lossy(t))
    };
    use tar::EntryType as T;
    if !kept_kind(kind, &path, target)? {
        return Ok(());
    }
    twins.check(&parts)?;
    if parts.is_empty() {
        // `./` itself: the folder exists already.
        return match kind {
            T::Directory => Ok(()),
            _ => Err(ArchiveError::Clash {
                path: shown(&String::from_utf8_lossy(&raw)),
                why: "not a folder, yet it names the folder itself",
            }
            .into()),
        };
    }
    let at = make_parents(dest, &parts, &path)?;
    let existing = fs::symlink_metadata(&at).ok().map(|m| m.file_type());
    match kind {
        T::Directory => match existing {
            Some(t) if t.is_dir() => Ok(()),
            Some(_) => Err(ArchiveError::Clash {
                path,
                why: "a folder where the archive already put a file or link",
            }
            .into()),
            None => Ok(make_dir(&at)?),
        },
        T::Symlink => {
            let link = names.link.as_deref().unwrap_or_default();
            write_link(link, &parts, &at, existing.is_some(), path, target)
        }
        _ => {
            // Anything there already is a clash. A file twice is an
            // archive appended to (`tar -r`), whose copies tools disagree
            // on which is the bot's.
            if let Some(t) = existing {
                return Err(ArchiveError::Clash {
                    path,
                    why: match t.is_file() {
                        true => "a second copy of a file the archive already holds (an archive appended to)",
                        false => "a file where the archive already put a folder or link",
                    },
                }
                .into());
            }
            // The declared size first: a bomb in one entry is refused before
            // a byte of it is written (the count while writing is the guard).
            if out.bytes.saturating_add(entry.size()) > limits.unpacked_bytes {
                return Err(ArchiveError::UnpackedTooLarge {
                    limit: limits.unpacked_bytes,
                }
                .into());
            }
            let mode = match entry.header().mode() {
                Ok(m) if m & 0o100 != 0 => 0o755,
                _ => 0o644,
            };
            write_file(entry, &at, mode, &path, limits, out)
        }
    }
}

/// Whether an entry of `kind` is unpacked (`false`: skipped, as pax
/// global headers, which `git archive` writes and which only carry
/// metadata); hard links, devices, fifos and other types are refused.
fn kept_kind(
    kind: tar::EntryType,
    path: &str,
    target: impl Fn() -> String,
) -> Result<bool, Unpacking> {
    use tar::EntryType as T;
    let path = path.to_string();
    match kind {
        T::XGlobalHeader => Ok(false),
        T::Link => Err(ArchiveError::HardLink {
            path,
            target: target(),
        }
        .into()),
        T::Char | T::Block => Err(ArchiveError::Device { path }.into()),
        T::Fifo => Err(ArchiveError::Fifo { path }.into()),
        T::Regular | T::Continuous | T::Directory | T::Symlink => Ok(true),
        other => Err(ArchiveError::OtherType {
            path,
            kind: format!("an entry of tar type {:?}", other.as_byte() as char),
        }
        .into()),
    }
}

/// Writes a symbolic link entry at `at`: only to a place inside the
/// folder, and only where nothing is yet.
fn write_link(
    link: &[u8],
    parts: &[String],
    at: &Path,
    taken: bool,
    path: String,
    target: impl Fn() -> String,
) -> Result<(), Unpacking> {
    let text = std::str::from_utf8(link).unwrap_or("\0");
    if !link_inside(parts, text) {
        return Err(ArchiveError::LinkOutside {
            path,
            target: target(),
        }
        .into());
    }
    if taken {
        return Err(ArchiveError::Clash {
            path,
            why: "a link where the archive already put something",
        }
        .into());
    }
    std::os::unix::fs::symlink(text, at).map_err(io_err(format!("writing entry `{path}`")))?;
    Ok(())
}

/// Makes the folders above an entry (`dest` joined with all but the last of
/// `parts`) and returns the entry's place; refuses a path through a link
/// or a file.
fn make_parents(dest: &Path, parts: &[String], path: &str) -> Result<PathBuf, ArchiveError> {
    let mut at = dest.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        if i + 1 == parts.len() {
            break;
        }
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(ArchiveError::ThroughLink { path: path.into() })
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(ArchiveError::Clash {
                    path: path.into(),
                    why: "its path goes through a file of the archive",
                })
            }
            Err(_) => make_dir(&at)?,
        }
    }
    Ok(at)
}

/// Makes one folder, mode 0755 whatever the umask.
fn make_dir(at: &Path) -> Result<(), ArchiveError> {
    fs::create_dir(at).map_err(io_err(format!("creating {}", at.display())))?;
    fs::set_permissions(at, fs::Permissions::from_mode(0o755))
        .map_err(io_err(format!("{}", at.display())))
}

/// Writes a regular file's contents, counting them against the unpacked
/// limit before each write (so at most the limit is ever written). The file
/// is created new (`O_EXCL`: never through a link).
fn write_file(
    entry: &mut impl Read,
    at: &Path,
    mode: u32,
    path: &str,
    limits: &Limits,
    out: &mut Unpacked,
) -> Result<(), Unpacking> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(at)
        .map_err(io_err(format!("writing entry `{path}`")))?;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = read_once(entry, &mut buf)?;
        if n == 0 {
            break;
        }
        if out.bytes + n as u64 > limits.unpacked_bytes {
            return Err(ArchiveError::UnpackedTooLarge {
                limit: limits.unpacked_bytes,
            }
            .into());
        }
        file.write_all(&buf[..n])
            .map_err(io_err(format!("writing entry `{path}`")))?;
        out.bytes += n as u64;
    }
    drop(file);
    fs::set_permissions(at, fs::Permissions::from_mode(mode))
        .map_err(io_err(format!("writing entry `{path}`")))?;
    out.files += 1;
    Ok(())
}

/// Folders [`pack`] leaves out wherever they are: version control data and
/// build output (`.git`, Rust's `target`, Python's `__pycache__`). The
/// service builds the bot itself; `node_modules` is kept, since a
/// JavaScript bot may ship its dependencies.
pub const SKIPPED: [&str; 3] = [".git", "target", "__pycache__"];

/// The folder at a bot folder's top that [`pack`] leaves out when it holds
/// results of `arena` (its default output, `results/NAME`, when the
/// author plays the bot from its own folder): [`local_results`].
pub const RESULTS: &str = "results";

/// Whether `dir` holds the results of `arena` runs: a `games.csv` in it,
/// or in a folder of its own.
fn is_results_folder(dir: &Path) -> bool {
    let games = |d: &Path| d.join("games.csv").is_file();
    games(dir) || fs::read_dir(dir).is_ok_and(|list| list.flatten().any(|e| games(&e.path())))
}

/// The folder of `arena`'s results that [`pack`] leaves out of `folder`,
/// if there is one (for a note to the author).
pub fn local_results(folder: &Path) -> Option<PathBuf> {
    let dir = folder.join(RESULTS);
    (fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) && is_results_folder(&dir)).then_some(dir)
}

/// One thing [`pack`] puts in the archive.
struct Item {
    /// Its path inside the folder, `/`-separated.
    rel: String,
    full: PathBuf,
    kind: ItemKind,
}

enum ItemKind {
    Dir,
    File { len: u64, exec: bool },
    Link(String),
}

/// Packs a bot folder for upload: a tar.gz (gzip level 6) of every file,
/// folder and link under `folder` but [`SKIPPED`] (and [`local_results`]),
/// sorted by path, with
/// owners 0, times 0 and modes 0644 / 0755, so that the same folder packs
/// to the same bytes. The folder needs a bot.toml at its top; links must
/// stay inside it (the module's rule); the limits that [`unpack`] will
/// apply are checked first, so an oversize folder is refused before any
/// upload, naming its largest files.
pub fn pack(folder: &Path, limits: &Limits) -> Result<Vec<u8>, ArchiveError> {
    let manifest = folder.join(crate::bot::manifest::MANIFEST);
    if !manifest.is_file() {
        return Err(ArchiveError::NoManifest {
            folder: folder.to_path_buf(),
        });
    }
    let mut items = Vec::new();
    walk(folder, folder, &mut Vec::new(), limits, &mut items)?;
    let mut twins = CaseTwins::default();
    for item in &items {
        let parts: Vec<String> = item.rel.split('/').map(str::to_string).collect();
        twins.check(&parts)?;
    }
    let total: u64 = items
        .iter()
        .map(|i| match i.kind {
            ItemKind::File { len, .. } => len,
            _ => 0,
        })
        .sum();
    if total > limits.unpacked_bytes {
        return Err(ArchiveError::FolderTooLarge {
            folder: folder.to_path_buf(),
            bytes: total,
            limit: limits.unpacked_bytes,
            largest: largest(&items),
        });
    }
    let gz = GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    let mut tar = tar::Builder::new(gz);
    let mut written = 0u64;
    for item in &items {
        append(&mut tar, item, limits, &mut written)?;
    }
    let failed = io_err(format!("packing {}", folder.display()));
    let bytes = tar
        .into_inner()
        .and_then(|gz| gz.finish())
        .map_err(failed)?;
    if bytes.len() as u64 > limits.compressed_bytes {
        return Err(ArchiveError::PackedTooLarge {
            folder: folder.to_path_buf(),
            bytes: bytes.len() as u64,
            limit: limits.compressed_bytes,
            largest: largest(&items),
        });
    }
    Ok(bytes)
}

/// The three largest files of a folder, for a message.
fn largest(items: &[Item]) -> String {
    let mut files: Vec<(u64, &str)> = items
        .iter()
        .filter_map(|i| match i.kind {
            ItemKind::File { len, .. } => Some((len, i.rel.as_str())),
            _ => None,
        })
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let named: Vec<String> = files
        .iter()
        .take(3)
        .map(|(len, rel)| format!("{} ({})", shown(rel), size(*len)))
        .collect();
    named.join(", ")
}

/// Lists `dir` (inside `root`, at `parts`) into `items`, sorted, checking
/// each path and link as [`unpack`] will and the count of entries.
fn walk(
    root: &Path,
    dir: &Path,
    parts: &mut Vec<String>,
    limits: &Limits,
    items: &mut Vec<Item>,
) -> Result<(), ArchiveError> {
    let listing = fs::read_dir(dir).map_err(io_err(format!("reading {}", dir.display())))?;
    let mut names = Vec::new();
    for e in listing {
        names.push(
            e.map_err(io_err(format!("reading {}", dir.display())))?
                .file_name(),
        );
    }
    names.sort();
    for name in names {
        let full = dir.join(&name);
        let Some(name) = name.to_str().map(str::to_string) else {
            return Err(ArchiveError::BadName {
                path: shown(&full.to_string_lossy()),
                why: "a name that is not UTF-8",
            });
        };
        let meta = fs::symlink_metadata(&full).map_err(io_err(format!("{}", full.display())))?;
        let t = meta.file_type();
        if t.is_dir() && SKIPPED.contains(&name.as_str()) {
            continue;
        }
        if parts.is_empty() && name == RESULTS && is_results_folder(&full) {
            continue;
        }
        parts.push(name);
        let rel = parts.join("/");
        entry_path(rel.as_bytes(), limits)?;
        if items.len() >= limits.files {
            return Err(ArchiveError::FolderTooManyFiles {
                folder: root.to_path_buf(),
                limit: limits.files,
            });
        }
        let kind = if t.is_dir() {
            ItemKind::Dir
        } else if t.is_file() {
            ItemKind::File {
                len: meta.len(),
                exec: meta.permissions().mode() & 0o100 != 0,
            }
        } else if t.is_symlink() {
            let target = fs::read_link(&full).map_err(io_err(format!("{}", full.display())))?;
            let target = target.to_string_lossy().to_string();
            if !link_inside(parts, &target) {
                return Err(ArchiveError::LinkOutside {
                    path: shown(&rel),
                    target: shown(&target),
                });
            }
            ItemKind::Link(target)
        } else {
            let path = shown(&rel);
            return Err(match () {
                _ if t.is_fifo() => ArchiveError::Fifo { path },
                _ if t.is_char_device() || t.is_block_device() => ArchiveError::Device { path },
                _ => ArchiveError::OtherType {
                    path,
                    kind: "a socket".into(),
                },
            });
        };
        let is_dir = matches!(kind, ItemKind::Dir);
        items.push(Item {
            rel,
            full: full.clone(),
            kind,
        });
        if is_dir {
            walk(root, &full, parts, limits, items)?;
        }
        parts.pop();
    }
    Ok(())
}

/// Appends one item with a normalised header. A file is read whole (it is
/// at most the unpacked limit) and counted again, in case it grew since the
/// walk.
fn append(
    tar: &mut tar::Builder<GzEncoder<Vec<u8>>>,
    item: &Item,
    limits: &Limits,
    written: &mut u64,
) -> Result<(), ArchiveError> {
    let failed = || io_err(format!("packing {}", item.full.display()));
    let mut h = tar::Header::new_gnu();
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    match &item.kind {
        ItemKind::Dir => {
            h.set_entry_type(tar::EntryType::Directory);
            h.set_mode(0o755);
            h.set_size(0);
            tar.append_data(&mut h, format!("{}/", item.rel), io::empty())
                .map_err(failed())
        }
        ItemKind::Link(target) => {
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_mode(0o777);
            h.set_size(0);
            tar.append_link(&mut h, &item.rel, target).map_err(failed())
        }
        ItemKind::File { exec, .. } => {
            let mut data = Vec::new();
            fs::File::open(&item.full)
                .and_then(|f| f.take(limits.unpacked_bytes + 1).read_to_end(&mut data))
                .map_err(failed())?;
            *written += data.len() as u64;
            if *written > limits.unpacked_bytes {
                return Err(ArchiveError::UnpackedTooLarge {
                    limit: limits.unpacked_bytes,
                });
            }
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(if *exec { 0o755 } else { 0o644 });
            h.set_size(data.len() as u64);
            tar.append_data(&mut h, &item.rel, data.as_slice())
                .map_err(failed())
        }
    }
}

/// Checks an unpacked bot folder's bot.toml: it must be there and load (the
/// crate's own reader, [`crate::bot::manifest::Manifest::load`]), and its
/// `command` and `build` must not name files outside the folder: no word
/// (nor the value of a `--flag=value` word) that is an absolute path or has
/// a `..` component. Programs named bare (`python3`, `node`) are found on
/// the PATH and are fine, and so are `{bin_dir}/NAME` and `{arena}`: the
/// arena's own programs (the reference bots). This is a courtesy check with
/// a clear message at upload; the sandbox is what keeps a bot in its folder.
pub fn check_manifest(dir: &Path) -> Result<(), ArchiveError> {
    use crate::bot::manifest::{Manifest, ManifestError};
    let m = Manifest::load(dir).map_err(|e| ArchiveError::Manifest {
        message: match e {
            ManifestError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound => {
                "not found at the top of the bot's folder; put the manifest there".into()
            }
            ManifestError::Invalid { message, .. } => message,
            ManifestError::InvalidAt { line, message, .. } => {
                format!("{}:{line}: {message}", crate::bot::manifest::MANIFEST)
            }
            other => other.to_string(),
        },
    })?;
    let keys = [("command", Some(&m.command)), ("build", m.build.as_ref())];
    for (key, words) in keys {
        for word in words.into_iter().flatten() {
            if !word_inside(word) {
                return Err(ArchiveError::ManifestPath {
                    key,
                    value: shown(word),
                });
            }
        }
    }
    Ok(())
}

/// Whether a command's word names nothing outside the bot's folder (see
/// [`check_manifest`]).
fn word_inside(word: &str) -> bool {
    if word == "{arena}" {
        return true;
    }
    if let Some(name) = word.strip_prefix("{bin_dir}/") {
        return !name.is_empty() && !name.contains('/') && name != "..";
    }
    let value = word.split_once('=').map_or(word, |(_, v)| v);
    [word, value]
        .iter()
        .all(|w| !w.starts_with('/') && !w.split('/').any(|p| p == ".."))
}
