//! The folder's lock (`run.lock`): one writer at a time, named by pid and
//! host.

use super::layout::{io, Layout, StoreError};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};

/// Takes the folder's lock (an OS lock on `run.lock`, released by the
/// kernel when this process ends) and writes our pid and host into it.
pub(super) fn lock(layout: &Layout) -> Result<File, StoreError> {
    let path = layout.lock();
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io(&path))?;
    // A run killed a moment ago may leave processes that still share its
    // lock while they die (a bot's keeper between fork and exec): when the
    // holder named in the file is dead on this host, wait a little.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match f.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                f.seek(SeekFrom::Start(0)).map_err(io(&path))?;
                let _ = f.read_to_string(&mut holder);
                if holder_is_gone(&holder) && std::time::Instant::now() < deadline {
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
    let me = format!("pid {} on host {}\n", std::process::id(), host_name());
    f.set_len(0).map_err(io(&path))?;
    f.seek(SeekFrom::Start(0)).map_err(io(&path))?;
    f.write_all(me.as_bytes()).map_err(io(&path))?;
    Ok(f)
}

/// True when the lock's holder ("pid N on host H") is a process of this
/// host that is no longer alive.
/// Whether a run holds the folder's lock now, and what `run.lock` says
/// of its holder (`pid N on host H`). Tested by taking the lock for an
/// instant: a run starting in that instant waits for it (see `lock`).
pub fn lock_holder(layout: &Layout) -> Option<String> {
    let path = layout.lock();
    let mut f = OpenOptions::new().read(true).write(true).open(&path).ok()?;
    match f.try_lock() {
        Ok(()) => {
            let _ = f.unlock();
            None
        }
        Err(_) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            Some(holder.trim().to_string())
        }
    }
}

fn holder_is_gone(holder: &str) -> bool {
    let mut words = holder.split_whitespace();
    let pid = match (words.next(), words.next()) {
        (Some("pid"), Some(n)) => n.parse::<u32>().ok(),
        _ => None,
    };
    let host = holder.rsplit(" on host ").next().map(str::trim);
    match (pid, host) {
        (Some(pid), Some(h)) => h == host_name() && !crate::host::process_alive(pid),
        _ => false,
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
