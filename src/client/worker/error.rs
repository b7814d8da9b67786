//! What stops a worker, as values: the server refused it, its cache or
//! spool cannot be had, the server's answers are not the protocol's.

use std::path::PathBuf;

/// An error that stops the worker.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("the server refused this worker: {0}")]
    Refused(String),
    /// Its registration was answered by something else than a ladder (as
    /// `arena submit` says it).
    #[error("{server} does not answer as an arena ladder ({why}); check --server: it is the address the organiser's `arena serve` prints")]
    NotALadder { server: String, why: String },
    /// Stopped (Ctrl-C, SIGTERM) while the server could not be reached
    /// or was failing: it refused nothing.
    #[error("stopped before registering with {server}: {why}")]
    NotRegistered { server: String, why: String },
    #[error("{dir} is the cache of another worker, which is running ({holder}); stop it, or give this one another --cache")]
    CacheInUse { dir: PathBuf, holder: String },
    #[error("{spool}: the spool cannot be written ({source}): a game this worker could not upload would be lost; make the folder writable for this user, or give the worker another --cache")]
    SpoolUnwritable {
        spool: PathBuf,
        source: std::io::Error,
    },
    #[error("{lost} game(s) lost, neither uploaded nor spooled: the spool cannot be written ({why}); their leases expire and the server plays them again. Make the spool writable, then start the worker again")]
    SpoolFailed { lost: u64, why: String },
    #[error("--cache {cache}: {path} is a file, not a folder; give the worker a folder for its cache (it is made when missing), or move the file away")]
    NotAFolder { cache: PathBuf, path: PathBuf },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("the ladder file the server sent: {0}")]
    Ladder(String),
    #[error("the server's answer to {what} is not what a worker expects: {why}")]
    Protocol { what: String, why: String },
}

pub(super) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> WorkerError {
    let what = what.into();
    move |source| WorkerError::Io { what, source }
}
