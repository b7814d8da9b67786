//! The folder's lock (`run.lock`): one writer at a time, named by pid and
//! host.

use super::layout::{io, Layout, StoreError};
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Mutex;

/// The locks this process holds, by the lock file's canonical path.
static HELD: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// A folder's lock, held until dropped (the kernel also releases it when
/// the process ends).
#[derive(Debug)]
pub(super) struct Lock {
    _file: File,
    /// The folder itself, locked too: `run.lock` may be deleted (a
    /// cleaner, a hand), and a second run would then lock a new file of
    /// that name; the folder cannot be swapped under a run.
    _folder: File,
    _held: HeldHere,
}

/// Who holds a folder whose `run.lock` was deleted while its run ran.
const DELETED_HOLDER: &str = "a run whose run.lock was deleted while it ran";

/// The folder's own lock, taken after `run.lock`'s: `Err(Ok(()))` when
/// another run holds it (its `run.lock` was deleted while it ran).
fn lock_folder(layout: &Layout) -> Result<File, Result<(), StoreError>> {
    let root = layout.root();
    let dir = File::open(root).map_err(|e| Err(io(root)(e)))?;
    match dir.try_lock() {
        Ok(()) => Ok(dir),
        Err(std::fs::TryLockError::WouldBlock) => Err(Ok(())),
        Err(std::fs::TryLockError::Error(e)) => Err(Err(io(root)(e))),
    }
}

/// This process's note that it holds the lock file at a path (a results
/// folder's, a worker's cache's), until dropped: see [`released_here`].
#[derive(Debug)]
pub struct HeldHere(PathBuf);

impl HeldHere {
    pub fn note(path: PathBuf) -> HeldHere {
        if let Ok(mut held) = HELD.lock() {
            held.insert(path.clone());
        }
        HeldHere(path)
    }
}

impl Drop for HeldHere {
    fn drop(&mut self) {
        if let Ok(mut held) = HELD.lock() {
            held.remove(&self.0);
        }
    }
}

/// Whether this process holds the lock at `path` itself (as opposed to a
/// child forked from it, which shares its open files until it execs).
fn held_here(path: &PathBuf) -> bool {
    HELD.lock().is_ok_and(|h| h.contains(path))
}

/// Whether the lock file at `path`, whose holder is named `holder`, was
/// let go of by this process and is held only by a child it forked
/// meanwhile (sharing the open file until it execs, a moment): worth a
/// moment's wait, not a refusal.
pub fn released_here(holder: &str, path: &PathBuf) -> bool {
    holder_is_me(holder) && !held_here(path)
}

/// Takes the folder's lock (an OS lock on `run.lock`, released by the
/// kernel when this process ends) and writes our pid and host into it.
pub(super) fn lock(layout: &Layout) -> Result<Lock, StoreError> {
    let path = layout.lock();
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io(&path))?;
    let key = path.canonicalize().unwrap_or_else(|_| path.clone());
    // A run killed a moment ago may leave processes that still share its
    // lock while they die (a bot's keeper between fork and exec): when the
    // holder named in the file is dead on this host, wait a little. The
    // same holds for a lock this process let go of while a child it forked
    // meanwhile (a bot's keeper, for another folder) still shares the open
    // file: the file names this process, which does not hold it any more.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match f.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                f.seek(SeekFrom::Start(0)).map_err(io(&path))?;
                let _ = f.read_to_string(&mut holder);
                if (holder_is_gone(&holder) || released_here(&holder, &key))
                    && std::time::Instant::now() < deadline
                {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    continue;
                }
                let holder = match holder.trim() {
                    "" => "its pid and host are not written yet".to_string(),
                    h => h.to_string(),
                };
                return Err(StoreError::Locked {
                    dir: layout.root().to_path_buf(),
                    holder,
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e)),
        }
    }
    let folder = loop {
        match lock_folder(layout) {
            Ok(dir) => break dir,
            Err(Err(e)) => return Err(e),
            // As above: a run killed (or a lock let go of) a moment ago,
            // a child forked meanwhile sharing the folder's descriptor
            // until it execs or dies.
            Err(Ok(_)) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(Ok(_)) => {
                return Err(StoreError::Locked {
                    dir: layout.root().to_path_buf(),
                    holder: DELETED_HOLDER.to_string(),
                })
            }
        }
    };
    let me = format!("pid {} on host {}\n", std::process::id(), host_name());
    f.set_len(0).map_err(io(&path))?;
    f.seek(SeekFrom::Start(0)).map_err(io(&path))?;
    f.write_all(me.as_bytes()).map_err(io(&path))?;
    Ok(Lock {
        _file: f,
        _folder: folder,
        _held: HeldHere::note(key),
    })
}

/// Whether a run holds the folder's lock now, and what `run.lock` says
/// of its holder (`pid N on host H`). Tested by taking the lock for an
/// instant: a run starting in that instant waits for it (see `lock`).
pub fn lock_holder(layout: &Layout) -> Option<String> {
    let path = layout.lock();
    if let Ok(mut f) = OpenOptions::new().read(true).write(true).open(&path) {
        match f.try_lock() {
            Ok(()) => {
                let _ = f.unlock();
            }
            Err(_) => {
                let mut holder = String::new();
                let _ = f.read_to_string(&mut holder);
                return Some(holder.trim().to_string());
            }
        }
    }
    // No run.lock held: a run may hold the folder all the same (its
    // run.lock deleted while it ran, perhaps made anew since).
    match lock_folder(layout) {
        Err(Ok(())) => Some(DELETED_HOLDER.to_string()),
        _ => None,
    }
}

/// True when the lock's holder ("pid N on host H") is a process of this
/// host that is no longer alive (a worker's cache is locked the same way).
pub fn holder_is_gone(holder: &str) -> bool {
    holder_on_this_host(holder).is_some_and(|pid| !crate::host::process_alive(pid))
}

/// The pid of the lock's holder ("pid N on host H") when it is a process
/// of this host stopped by a signal (SIGSTOP, Ctrl-Z): it holds the folder
/// and plays nothing until it is continued.
pub fn holder_paused(holder: &str) -> Option<u32> {
    let pid = holder_on_this_host(holder)?;
    matches!(crate::host::process_state(pid)?, 'T' | 't').then_some(pid)
}

/// Whether the lock's holder is this process.
fn holder_is_me(holder: &str) -> bool {
    holder_on_this_host(holder) == Some(std::process::id())
}

/// The pid of the lock's holder ("pid N on host H") when H is this host.
fn holder_on_this_host(holder: &str) -> Option<u32> {
    let mut words = holder.split_whitespace();
    let pid = match (words.next(), words.next()) {
        (Some("pid"), Some(n)) => n.parse::<u32>().ok(),
        _ => None,
    };
    let host = holder.rsplit(" on host ").next().map(str::trim);
    match (pid, host) {
        (Some(pid), Some(h)) if h == host_name() => Some(pid),
        _ => None,
    }
}

/// This machine's name, for the lock.
pub(super) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}
