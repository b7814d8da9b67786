//! What an upload costs the server before it is looked at (issue 47): a
//! bounded number of uploads (owners' bots, workers' games) handled at
//! once, each past the bound refused (503, `Retry-After`) before a byte of
//! its body is read, and no one sender holding more than its share of
//! them ([`Gate`]); an owner's upload streamed to a file as it arrives,
//! never held in memory whole ([`spool`]); and every body bounded in time
//! ([`BODY_QUIET`], [`BODY_TIME`]), so that a sender who stops sending
//! frees its slot. What the upload holds is the intake's and the
//! workers' endpoints' business.

use futures_util::StreamExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Seconds a refused uploader is told to wait (`Retry-After`).
pub const RETRY_SECONDS: u32 = 5;

/// The longest an upload's body may go without a byte: past it the
/// upload is refused (408) and its slot freed. Without it a sender that
/// stopped half-way held a slot for as long as it kept the connection
/// open, and as many stopped uploads as slots held the intake shut.
pub const BODY_QUIET: Duration = Duration::from_secs(30);

/// The longest a whole body may take (a sender dripping a byte within
/// each [`BODY_QUIET`]): 16 MiB in it is 28 KiB/s.
pub const BODY_TIME: Duration = Duration::from_secs(600);

/// At most so many requests of one kind at once, and at most `share` of
/// them from one sender (an owner, a worker).
pub struct Gate {
    slots: Arc<Semaphore>,
    /// What the requests are, for the refusal (`uploads of bots`).
    what: &'static str,
    size: usize,
    /// The most slots one sender may hold.
    share: usize,
    /// The slots each sender holds.
    held: Arc<Mutex<HashMap<i64, usize>>>,
}

impl Gate {
    pub fn new(size: usize, share: usize, what: &'static str) -> Gate {
        Gate {
            slots: Arc::new(Semaphore::new(size)),
            what,
            size,
            share: share.clamp(1, size.max(1)),
            held: Arc::default(),
        }
    }

    /// A slot for `sender`, held until the permit is dropped; none free,
    /// or `sender` holding its share already: [`Busy`] (the web layer's
    /// 503 or 429, with `Retry-After`), at once.
    pub fn enter(&self, sender: i64) -> Result<Slot, Busy> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let mine = held.get(&sender).copied().unwrap_or(0);
        // A share of the whole gate is no share: the gate's own refusal.
        if mine >= self.share && self.share < self.size {
            return Err(Busy {
                message: match self.share {
                    1 => format!(
                        "an upload of yours is being received already: this server takes {} from one sender at a time; try again once it is answered",
                        self.what
                    ),
                    n => format!(
                        "{n} {} of yours are being received already, the most from one sender: try again once one is answered",
                        self.what
                    ),
                },
                mine: true,
            });
        }
        let permit = self.slots.clone().try_acquire_owned().map_err(|_| Busy {
            message: format!(
                "the server is handling {} {} already, its limit: try again in {RETRY_SECONDS} s",
                self.size, self.what
            ),
            mine: false,
        })?;
        held.insert(sender, mine + 1);
        Ok(Slot {
            permit: Some(permit),
            slots: self.slots.clone(),
            size: self.size,
            sender,
            held: self.held.clone(),
        })
    }
}

/// A slot of a [`Gate`], until dropped. The last one out hands the memory
/// the uploads freed back to the system: the allocator keeps freed memory
/// for the next request otherwise, and after a burst of large uploads the
/// server stayed at twice its size at rest (BENCHMARKS.md, issue 47).
pub struct Slot {
    permit: Option<OwnedSemaphorePermit>,
    slots: Arc<Semaphore>,
    size: usize,
    sender: i64,
    held: Arc<Mutex<HashMap<i64, usize>>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        {
            let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            match held.get_mut(&self.sender) {
                Some(n) if *n > 1 => *n -= 1,
                _ => {
                    held.remove(&self.sender);
                }
            }
        }
        drop(self.permit.take());
        if self.slots.available_permits() == self.size {
            crate::host::return_free_memory();
        }
    }
}

/// No slot of a [`Gate`]: every one is taken, or the sender holds its
/// share (`mine`); try again in [`RETRY_SECONDS`].
#[derive(Debug)]
pub struct Busy {
    pub message: String,
    pub mine: bool,
}

/// The gates of a ladder's uploads: owners' bots (`[ladder]
/// uploads_at_once`, one at a time from one owner) and workers' games
/// (`game_uploads_at_once`, at most half of them from one worker); and of
/// its exports (`exports_at_once`, from anyone: sender 0).
pub struct Gates {
    pub bots: Gate,
    pub games: Gate,
    pub exports: Gate,
    /// Listings of games filtered by a row's own field (result, reason,
    /// forfeit), which read up to 50,000 rows each: as many at once as
    /// exports, in a gate of their own.
    pub listings: Gate,
    /// Live feeds open (`feeds_at_once`), each held for as long as its
    /// listener stays.
    pub feeds: Gate,
}

impl Gates {
    pub fn of(s: &crate::league::config::ladder::LadderSettings) -> Gates {
        Gates {
            bots: Gate::new(s.uploads_at_once, 1, "uploads of bots"),
            games: Gate::new(
                s.game_uploads_at_once,
                s.game_uploads_at_once.div_ceil(2),
                "uploads of games",
            ),
            exports: Gate::new(s.exports_at_once, s.exports_at_once, "exports"),
            listings: Gate::new(
                s.exports_at_once,
                s.exports_at_once,
                "listings of games filtered by result, reason or forfeit",
            ),
            feeds: Gate::new(s.feeds_at_once, s.feeds_at_once, "live feeds"),
        }
    }
}

/// A request body written to a file: removed when dropped unless
/// [`Spooled::keep`] moved it away.
pub struct Spooled {
    pub path: PathBuf,
    pub len: u64,
    /// Lower-case hex SHA-256 of the bytes.
    pub sha256: String,
}

impl Spooled {
    /// Moves the file to `to` (same file system: a rename), and stops
    /// removing it.
    pub fn keep(mut self, to: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.path, to)?;
        self.path = PathBuf::new();
        Ok(())
    }
}

impl Drop for Spooled {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Why a body could not be spooled.
#[derive(Debug)]
pub enum SpoolError {
    /// Over `limit` bytes.
    TooLarge,
    /// The client went away or sent a broken body.
    Body(String),
    /// The body stopped coming ([`BODY_QUIET`]) or took too long
    /// ([`BODY_TIME`]): what the refusal says.
    Slow(String),
    /// The server's disk.
    Io(std::io::Error),
}

/// Streams `body` to a new file in folder `dir` (made if missing),
/// counting and hashing it as it comes; refused past `limit` bytes, with
/// at most `limit` written. The file is removed on any error.
pub async fn spool(body: axum::body::Body, dir: &Path, limit: u64) -> Result<Spooled, SpoolError> {
    use sha2::Digest;
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(SpoolError::Io)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut out = Spooled {
        path: dir.join(format!("{}-{nanos}.upload", std::process::id())),
        len: 0,
        sha256: String::new(),
    };
    let path = out.path.clone();
    let mut file = blocking(move || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    })
    .await?;
    let mut hash = sha2::Sha256::new();
    let mut chunks = Chunks::of(body);
    while let Some(chunk) = chunks.next().await? {
        out.len += chunk.len() as u64;
        if out.len > limit {
            return Err(SpoolError::TooLarge);
        }
        hash.update(&chunk);
        // The chunk itself goes to the write, not a copy: tokio's own
        // `File` copies each into a buffer of its own, and 40 uploads at
        // once took twice the memory (BENCHMARKS.md, issue 47).
        file =
            blocking(move || std::io::Write::write_all(&mut file, &chunk).map(|()| file)).await?;
    }
    out.sha256 = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(out)
}

/// Reads `body` whole into memory, refused past `limit` bytes or past
/// the time bounds ([`BODY_QUIET`], [`BODY_TIME`]): a worker's upload,
/// replayed from memory.
pub async fn read_body(body: axum::body::Body, limit: usize) -> Result<Vec<u8>, SpoolError> {
    let mut out = Vec::new();
    let mut chunks = Chunks::of(body);
    while let Some(chunk) = chunks.next().await? {
        if out.len() + chunk.len() > limit {
            return Err(SpoolError::TooLarge);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// A body's chunks as they come, each within [`BODY_QUIET`] of the last
/// and all within [`BODY_TIME`] of the first asked for.
struct Chunks {
    stream: axum::body::BodyDataStream,
    end: tokio::time::Instant,
}

impl Chunks {
    fn of(body: axum::body::Body) -> Chunks {
        Chunks {
            stream: body.into_data_stream(),
            end: tokio::time::Instant::now() + BODY_TIME,
        }
    }

    async fn next(&mut self) -> Result<Option<axum::body::Bytes>, SpoolError> {
        let quiet = tokio::time::Instant::now() + BODY_QUIET;
        match tokio::time::timeout_at(quiet.min(self.end), self.stream.next()).await {
            Err(_) if quiet < self.end => Err(SpoolError::Slow(format!(
                "no byte of it came for {} s",
                BODY_QUIET.as_secs()
            ))),
            Err(_) => Err(SpoolError::Slow(format!(
                "it did not arrive within {} s",
                BODY_TIME.as_secs()
            ))),
            Ok(None) => Ok(None),
            Ok(Some(chunk)) => chunk.map(Some).map_err(|e| SpoolError::Body(e.to_string())),
        }
    }
}

/// Runs file work `f` on tokio's blocking threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, SpoolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| SpoolError::Io(std::io::Error::other(e)))?
        .map_err(SpoolError::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gate of 4 with a share of 2: one sender gets two slots and is
    /// then told it holds its share (429), while others take the rest;
    /// full, anyone is told the server is busy (503); a slot dropped is
    /// free again, for its sender too.
    #[test]
    fn a_gate_keeps_each_senders_share_and_frees_slots_when_dropped() {
        let gate = Gate::new(4, 2, "uploads of games");
        let a1 = gate.enter(1).expect("a's first");
        let _a2 = gate.enter(1).expect("a's second");
        let mine = gate.enter(1).err().expect("a's third refused");
        assert!(mine.mine, "{mine:?}");
        assert!(
            mine.message.contains("2 uploads of games of yours"),
            "{mine:?}"
        );
        let _b1 = gate.enter(2).expect("b's first");
        let _c1 = gate.enter(3).expect("c's first");
        let full = gate.enter(4).err().expect("the fifth refused");
        assert!(!full.mine, "{full:?}");
        assert!(
            full.message.contains("handling 4 uploads of games already"),
            "{full:?}"
        );
        drop(a1);
        let _a3 = gate.enter(1).expect("a's slot free again");
        // A share is at least 1 and at most the gate's size.
        let one = Gate::new(2, 0, "uploads of bots");
        let _x = one.enter(7).expect("first");
        assert!(one.enter(7).err().expect("second refused").mine);
        let all = Gate::new(2, 9, "exports");
        let _y = all.enter(0).expect("first");
        let _z = all.enter(0).expect("second");
        assert!(!all.enter(0).err().expect("third refused").mine);
    }
}
