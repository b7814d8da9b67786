//! What a worker checks of its cache folder before it registers. The
//! folder is its own: an OS lock (`flock`) on `CACHE/worker.lock`, held
//! while the worker runs and released by the kernel when its process
//! ends, however it ends; the file names its holder (`pid N on host H`),
//! for the refusal of a second worker. (As a league's results folder is
//! locked, `league::folder`'s `run.lock`: two workers on one cache would
//! send the same spooled games twice.) And its spool can be written: a
//! worker that cannot keep the games it cannot upload would lose them.

use super::error::WorkerError;
use crate::league::folder::{holder_is_gone, released_here, HeldHere};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// The lock file, in the cache folder.
pub(super) const LOCK_FILE: &str = "worker.lock";

/// The cache's lock, held until dropped.
#[derive(Debug)]
pub(super) struct CacheLock {
    _file: File,
    _held: HeldHere,
}

/// Takes the lock of `cache` (a folder that exists) and writes this
/// process's pid and host into it; refused, naming the folder and what
/// the file says of its holder, while another worker holds it.
pub(super) fn lock(cache: &Path) -> Result<CacheLock, WorkerError> {
    let path = cache.join(LOCK_FILE);
    let io = |source| WorkerError::Io {
        what: path.display().to_string(),
        source,
    };
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    // A worker killed a moment ago may leave processes that share its lock
    // while they die (a bot's keeper between fork and exec): when the
    // holder the file names is dead on this host, a few seconds more; as
    // when this process let go of it while a child it forked meanwhile
    // shares the open file until it execs.
    let key = path.canonicalize().unwrap_or_else(|_| path.clone());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match f.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = read_holder(&mut f);
                if (holder_is_gone(&holder) || released_here(&holder, &key))
                    && Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                return Err(WorkerError::CacheInUse {
                    dir: cache.to_path_buf(),
                    holder: match holder.as_str() {
                        "" => "its pid is not written yet".to_string(),
                        h => h.to_string(),
                    },
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
    }
    let me = format!(
        "pid {} on host {}\n",
        std::process::id(),
        crate::host::host_name()
    );
    f.set_len(0).map_err(io)?;
    f.seek(SeekFrom::Start(0)).map_err(io)?;
    f.write_all(me.as_bytes()).map_err(io)?;
    Ok(CacheLock {
        _file: f,
        _held: HeldHere::note(key),
    })
}

/// The file of the worker's id, in the cache folder.
pub(super) const INSTANCE_FILE: &str = "instance";

/// The worker's id ([`crate::wire::worker::INSTANCE_HEADER`]): the one
/// `cache` keeps, or a new random one written there. It is the cache's,
/// so a worker started again on its cache (after a kill -9 too) is the
/// same worker to the server, and one on another cache is another.
pub(super) fn instance(cache: &Path) -> Result<String, WorkerError> {
    let path = cache.join(INSTANCE_FILE);
    if let Ok(kept) = std::fs::read_to_string(&path) {
        let kept = kept.trim();
        if crate::wire::worker::is_instance(kept) {
            return Ok(kept.to_string());
        }
    }
    let id = format!("{:032x}", rand::random::<u128>());
    std::fs::write(&path, format!("{id}\n")).map_err(|source| WorkerError::Io {
        what: path.display().to_string(),
        source,
    })?;
    Ok(id)
}

/// What the lock file says of its holder, trimmed.
fn read_holder(f: &mut File) -> String {
    let mut holder = String::new();
    if f.seek(SeekFrom::Start(0)).is_ok() {
        let _ = f.read_to_string(&mut holder);
    }
    holder.trim().to_string()
}

/// Checks that the spool folder `spool` can be written: a file made and
/// removed in it.
pub(super) fn check_writable(spool: &Path) -> Result<(), WorkerError> {
    crate::files::check_writable(spool).map_err(|source| WorkerError::SpoolUnwritable {
        spool: spool.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_of_a_cache_is_refused_naming_the_folder_and_the_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let first = lock(tmp.path()).unwrap();
        let e = lock(tmp.path()).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&tmp.path().display().to_string()), "{text}");
        assert!(
            text.contains(&format!("pid {} on host", std::process::id())),
            "{text}"
        );
        drop(first);
        let _again = lock(tmp.path()).unwrap();
    }

    #[test]
    fn a_holder_is_gone_only_when_its_pid_on_this_host_is_dead() {
        let host = crate::host::host_name();
        assert!(!holder_is_gone(&format!(
            "pid {} on host {host}",
            std::process::id()
        )));
        assert!(!holder_is_gone("pid 1 on host some-other-host-name"));
        assert!(!holder_is_gone(""));
        // A child reaped: its pid is free.
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        if !crate::host::process_alive(pid) {
            assert!(holder_is_gone(&format!("pid {pid} on host {host}")));
        }
    }

    #[test]
    fn a_caches_instance_is_kept_and_another_cache_has_another() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let first = instance(a.path()).unwrap();
        assert!(crate::wire::worker::is_instance(&first), "{first}");
        assert_eq!(instance(a.path()).unwrap(), first);
        assert_ne!(instance(b.path()).unwrap(), first);
        // A file that is not an id (edited by hand) is replaced.
        std::fs::write(a.path().join(INSTANCE_FILE), "not an id!").unwrap();
        let again = instance(a.path()).unwrap();
        assert_ne!(again, first);
        assert_eq!(instance(a.path()).unwrap(), again);
    }

    #[test]
    fn a_spool_that_is_a_file_is_not_writable() {
        let tmp = tempfile::tempdir().unwrap();
        check_writable(tmp.path()).unwrap();
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        let file = tmp.path().join("spool");
        std::fs::write(&file, b"").unwrap();
        let e = check_writable(&file).unwrap_err().to_string();
        assert!(e.contains(&file.display().to_string()), "{e}");
    }
}
