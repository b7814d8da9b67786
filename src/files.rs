//! Writing a file into place, the one way the crate does it: [`write_file`]
//! for bytes at hand, [`NewFile`] for a file written as it is made (a
//! table, a PGN export, a rewritten games.csv).
//!
//! The new content goes into a temporary file of its own beside the
//! target, `.NAME.PID.N.tmp`: hidden, named by the target's file name, this
//! process's id and a count of this process's temporary files, and created
//! only if no file has that name, so two writers of one file at once (two
//! threads, two processes) never write into each other's. Once whole it is
//! synced, renamed over the target and the folder synced: a reader sees the
//! old file or the new one, never part of one, and after a power cut the
//! folder holds one of them whole. A temporary file not committed (an
//! error, a panic) is removed; one a killed process left is removed by
//! [`sweep_leftovers`]. Below everything, as `host` is (whose
//! `process_alive` tells a dead writer's leftovers).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many temporary files this process has named: the `N` of their names.
static NAMED: AtomicU64 = AtomicU64::new(0);

/// The end of every temporary file's name.
const SUFFIX: &str = ".tmp";

/// The most bytes of the target's name a temporary name repeats, so that
/// the temporary name fits where the target's does (255 bytes a name).
const NAME_KEPT: usize = 200;

/// Writes `bytes` as the file `path`, whole or not at all (a
/// [`NewFile`]): on an error the file there before is left as it was and
/// no temporary file stays.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = NewFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// A file being written under a temporary name beside its target, put in
/// its place by [`commit`](NewFile::commit); dropped without a commit, it
/// is removed and the target stays as it was. Unbuffered: wrap it in a
/// `BufWriter` for small writes, and take it back out to commit.
#[derive(Debug)]
pub struct NewFile {
    target: PathBuf,
    temp: PathBuf,
    file: File,
    committed: bool,
}

impl NewFile {
    /// Creates the temporary file for `target` in `target`'s folder (which
    /// must be there).
    pub fn create(target: &Path) -> io::Result<NewFile> {
        let Some(name) = target.file_name() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a file's name",
            ));
        };
        let mut kept = name.to_string_lossy().into_owned();
        if kept.len() > NAME_KEPT {
            let mut end = NAME_KEPT;
            while !kept.is_char_boundary(end) {
                end -= 1;
            }
            kept.truncate(end);
        }
        let dir = target.parent().unwrap_or(Path::new(""));
        let pid = std::process::id();
        // Taken names (a leftover, another writer) are passed over.
        for _ in 0..1000 {
            let n = NAMED.fetch_add(1, Ordering::Relaxed);
            let mut temp = OsString::from(".");
            temp.push(&kept);
            temp.push(format!(".{pid}.{n}{SUFFIX}"));
            let temp = dir.join(temp);
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    return Ok(NewFile {
                        target: target.to_path_buf(),
                        temp,
                        file,
                        committed: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free temporary name beside it",
        ))
    }

    /// The file this one replaces when committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary file being written.
    pub fn temp(&self) -> &Path {
        &self.temp
    }

    /// Puts the file in its place: flushed and synced, renamed over the
    /// target, and the target's folder synced (so the rename outlasts a
    /// power cut). On an error before the rename the temporary file is
    /// removed and the target left as it was.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        self.file.sync_all()?;
        std::fs::rename(&self.temp, &self.target)?;
        self.committed = true;
        sync_folder(self.target.parent().unwrap_or(Path::new("")))
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Syncs a folder, so that a rename in it is on the disk. A file system
/// that cannot sync a folder (it says the call is invalid there) is taken
/// as having nothing to sync.
fn sync_folder(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        match File::open(dir).and_then(|d| d.sync_all()) {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::InvalidInput | io::ErrorKind::Unsupported
                ) => {}
            other => return other,
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The target's file name (as kept in the name) and the process id of a
/// temporary file's name, if `name` is one.
fn temp_owner(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix('.')?.strip_suffix(SUFFIX)?;
    let (rest, n) = rest.rsplit_once('.')?;
    let (target, pid) = rest.rsplit_once('.')?;
    n.parse::<u64>().ok()?;
    Some((target, pid.parse().ok()?))
}

/// Removes the temporary files in `dir` that processes no longer running
/// left (killed while writing), of the targets whose file name `of`
/// accepts. A running writer's are left alone.
pub fn sweep_leftovers(dir: &Path, of: impl Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((target, pid)) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        if of(target) && !crate::host::process_alive(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether a file can be made in folder `dir`: one made and removed
/// there (`.probe-PID`), the error of whichever step failed.
pub fn check_writable(dir: &Path) -> io::Result<()> {
    let probe = dir.join(format!(".probe-{}", std::process::id()));
    std::fs::write(&probe, b"").and_then(|()| std::fs::remove_file(&probe))
}

/// This user's own folder in the system's temporary folder,
/// `TMPDIR/arena-UID` (made, mode 0700): what `arena play` and `arena
/// bots` keep there by default. A fixed name there (`/tmp/arena-play`)
/// is the same for every user of the machine, and the first user's
/// folder refused the others' records. One that is a link, or another
/// user's, is refused, named.
pub fn own_temp_folder() -> io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: geteuid cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    let dir = std::env::temp_dir().join(format!("arena-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let m = std::fs::symlink_metadata(&dir)?;
    if !m.is_dir() || m.uid() != uid {
        return Err(io::Error::other(format!(
            "{} is not a folder of this user's (uid {uid}): remove it, or set TMPDIR to a folder of your own",
            dir.display()
        )));
    }
    Ok(dir)
}

/// What stops `dir` being a folder: it, or the nearest of its parents
/// that is there, is a file (`--record notes.txt/x`). `None` when it is a
/// folder or can be made one.
pub fn file_in_the_way(dir: &Path) -> Option<&Path> {
    let there = dir
        .ancestors()
        .find(|a| !a.as_os_str().is_empty() && std::fs::metadata(a).is_ok())?;
    (!there.is_dir()).then_some(there)
}

/// Opens `path` to append to it, its folder made if missing, and says why
/// not as the user would put it: a file where a folder is needed, a
/// folder where the file would be.
pub fn open_to_append(path: &Path) -> io::Result<std::fs::File> {
    if path.is_dir() {
        return Err(io::Error::other(format!(
            "{} is a folder: give a file's path",
            path.display()
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Some(file) = file_in_the_way(dir) {
            return Err(io::Error::other(format!(
                "{} is a file, not a folder",
                file.display()
            )));
        }
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_file_written_has_the_bytes_and_nothing_stays_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("league.json");
        write_file(&path, b"first").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        write_file(&path, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
        assert_eq!(names(dir.path()), ["league.json"]);
        // A file named as the old fixed temporary name is a file like any.
        let tmp = dir.path().join("x.tmp");
        write_file(&tmp, b"mine").unwrap();
        assert_eq!(std::fs::read(&tmp).unwrap(), b"mine");
        assert_eq!(names(dir.path()), ["league.json", "x.tmp"]);
    }

    #[test]
    fn a_streamed_file_is_there_only_once_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ratings.csv");
        std::fs::write(&path, b"old").unwrap();
        let mut f = NewFile::create(&path).unwrap();
        f.write_all(b"new ").unwrap();
        f.write_all(b"rows").unwrap();
        assert!(f.temp().exists());
        assert_eq!(f.target(), path);
        let name = f.temp().file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with(".ratings.csv."), "{name}");
        assert_eq!(temp_owner(&name), Some(("ratings.csv", std::process::id())));
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new rows");
        // Dropped without a commit (a failed write): the old file stays.
        let mut f = NewFile::create(&path).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), b"new rows");
        assert_eq!(names(dir.path()), ["ratings.csv"]);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a folder: the rename fails, the folder stays.
        let folder = dir.path().join("report");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("inside"), b"kept").unwrap();
        assert!(write_file(&folder, b"bytes").is_err());
        assert!(folder.is_dir());
        assert_eq!(std::fs::read(folder.join("inside")).unwrap(), b"kept");
        assert_eq!(names(dir.path()), ["report"]);
        // No folder to write in.
        assert!(write_file(&dir.path().join("gone/x.csv"), b"bytes").is_err());
        assert_eq!(names(dir.path()), ["report"]);
        // A folder that cannot be written (not for root, who may).
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        let path = locked.join("games.csv");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let root = std::fs::write(locked.join("probe"), b"").is_ok();
        if !root {
            assert!(write_file(&path, b"new").is_err());
            assert_eq!(std::fs::read(&path).unwrap(), b"old");
            assert_eq!(names(&locked), ["games.csv"]);
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Two writers of one file at once both succeed and the file is one of
    /// theirs, whole: with one fixed temporary name they wrote into the
    /// same file, or one renamed it away from under the other.
    #[test]
    fn two_threads_writing_one_file_at_once_leave_one_of_theirs_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("league.json");
        let contents: Vec<Vec<u8>> = [b'a', b'b'].iter().map(|&c| vec![c; 256 * 1024]).collect();
        let barrier = std::sync::Barrier::new(2);
        for _ in 0..20 {
            std::thread::scope(|s| {
                let writers: Vec<_> = contents
                    .iter()
                    .map(|bytes| {
                        let (path, barrier) = (&path, &barrier);
                        s.spawn(move || {
                            barrier.wait();
                            write_file(path, bytes)
                        })
                    })
                    .collect();
                for w in writers {
                    w.join().unwrap().unwrap();
                }
            });
            let got = std::fs::read(&path).unwrap();
            assert!(
                contents.contains(&got),
                "a file of {} bytes mixed",
                got.len()
            );
        }
        assert_eq!(names(dir.path()), ["league.json"]);
    }

    #[test]
    fn a_dead_writer_s_leftovers_are_swept_and_a_live_one_s_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join(format!(".n04.tbl.{}.0.tmp", u32::MAX));
        std::fs::write(&dead, b"cut").unwrap();
        let other = dir.path().join(format!(".x.csv.{}.3.tmp", u32::MAX));
        std::fs::write(&other, b"cut").unwrap();
        let ours = NewFile::create(&dir.path().join("n03.tbl")).unwrap();
        std::fs::write(dir.path().join(".plain.tmp"), b"a user's").unwrap();
        sweep_leftovers(dir.path(), |t| t.ends_with(".tbl"));
        assert!(!dead.exists());
        assert!(other.exists(), "not of a table");
        assert!(ours.temp().exists(), "this process's, running");
        assert!(dir.path().join(".plain.tmp").exists());
        assert_eq!(temp_owner(".plain.tmp"), None);
    }
}
