//! What an upload costs the server before it is looked at (issue 47): a
//! bounded number of uploads (owners' bots, workers' games) handled at
//! once, each past the bound refused (503, `Retry-After`) before a byte of
//! its body is read ([`Gate`]); and an owner's upload streamed to a file
//! as it arrives, never held in memory whole ([`spool`]). What the upload
//! holds is the intake's and the workers' endpoints' business.

use futures_util::StreamExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Seconds a refused uploader is told to wait (`Retry-After`).
pub const RETRY_SECONDS: u32 = 5;

/// At most so many requests of one kind at once.
pub struct Gate {
    slots: Arc<Semaphore>,
    /// What the requests are, for the refusal (`uploads of bots`).
    what: &'static str,
    size: usize,
}

impl Gate {
    pub fn new(size: usize, what: &'static str) -> Gate {
        Gate {
            slots: Arc::new(Semaphore::new(size)),
            what,
            size,
        }
    }

    /// A slot, held until the permit is dropped; none free: [`Busy`]
    /// (the web layer's 503 with `Retry-After`), at once.
    pub fn enter(&self) -> Result<Slot, Busy> {
        let permit = self.slots.clone().try_acquire_owned().map_err(|_| Busy {
            message: format!(
                "the server is handling {} {} already, its limit: try again in {RETRY_SECONDS} s",
                self.size, self.what
            ),
        })?;
        Ok(Slot {
            permit: Some(permit),
            slots: self.slots.clone(),
            size: self.size,
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
}

impl Drop for Slot {
    fn drop(&mut self) {
        drop(self.permit.take());
        if self.slots.available_permits() == self.size {
            crate::host::return_free_memory();
        }
    }
}

/// Every slot of a [`Gate`] is taken: try again in [`RETRY_SECONDS`].
#[derive(Debug)]
pub struct Busy {
    pub message: String,
}

/// The gates of a ladder's uploads: owners' bots (`[ladder]
/// uploads_at_once`) and workers' games (`game_uploads_at_once`).
pub struct Gates {
    pub bots: Gate,
    pub games: Gate,
}

impl Gates {
    pub fn of(s: &crate::league::config::ladder::LadderSettings) -> Gates {
        Gates {
            bots: Gate::new(s.uploads_at_once, "uploads of bots"),
            games: Gate::new(s.game_uploads_at_once, "uploads of games"),
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
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| SpoolError::Body(e.to_string()))?;
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

/// Runs file work `f` on tokio's blocking threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, SpoolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| SpoolError::Io(std::io::Error::other(e)))?
        .map_err(SpoolError::Io)
}
