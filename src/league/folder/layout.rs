//! Where everything lives in a results folder, and the folder's errors.

use crate::results::{csvio, file_safe};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}{}", unwritable_hint(source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Csv(#[from] csvio::CsvError),
    /// A row of games.csv that cannot be read, found when a run resumes
    /// (`--repair` sets aside rows it can read, not this).
    #[error("{0}. Correct that line of games.csv, or delete it (its game is then played again), and run the same command again")]
    Unreadable(csvio::CsvError),
    /// A games.csv whose header (its first line) does not read, found
    /// when a run resumes: nothing of it is touched.
    #[error("{0}. That is the header, the first line of the games.csv the league wrote: mend it (README.md, \"games.csv\", names every column), and run the same command again")]
    BadHeader(csvio::CsvError),
    #[error("{path}: {why}")]
    Mismatch { path: PathBuf, why: String },
    /// Another run holds the folder's lock.
    #[error("{dir} is in use by another run ({holder}); wait for it to end or stop it, or give this run another output folder")]
    Locked { dir: PathBuf, holder: String },
}

/// What to do when a results folder cannot be written at all.
fn unwritable_hint(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::ReadOnlyFilesystem => {
            " (the results folder is on a read-only file system: to resume the league, make it writable and run the same command again; to start it, give it another folder with -o DIR, or the file's `output`)"
        }
        std::io::ErrorKind::PermissionDenied => {
            " (this user may not write there: to resume the league, make it writable again (`chmod u+w`; `lsattr`, `chattr -i` for a file marked immutable) and run the same command again; to start it, give it another results folder with -o DIR, or the file's `output`)"
        }
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
            " (the disk is full: make room, and run the same command again; nothing recorded is lost)"
        }
        std::io::ErrorKind::FileTooLarge => {
            " (the file reached this shell's file size limit, `ulimit -f`: raise it, and run the same command again; nothing recorded is lost)"
        }
        _ => "",
    }
}

/// Turns an I/O error on `path` into a store error naming it.
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where everything lives in a results folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    pub fn new(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// One row per finished game.
    pub fn games_csv(&self) -> PathBuf {
        self.root.join("games.csv")
    }

    /// The folder of the game records: the record logs
    /// (`records-NNNN.jsonl.zst`, and `records-NNNN.jsonl` of earlier
    /// versions), the frames' dictionary (`records.zdict`), and the files
    /// of older versions (`GAME_ID.jsonl`); `results::records::RecordAt` says which holds a
    /// row's record.
    pub fn records(&self) -> PathBuf {
        self.root.join("games")
    }

    /// The folder of the games' analyses (`arena analyse --save`,
    /// `results::analysis`).
    pub fn analysis(&self) -> PathBuf {
        self.root.join(crate::results::analysis::FOLDER)
    }

    /// The folder of the bots' stderr logs.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The stderr log of `bot`'s processes on `worker`.
    pub fn bot_log(&self, bot: &str, worker: usize) -> PathBuf {
        self.logs()
            .join(format!("{}-w{worker}.log", file_safe(bot)))
    }

    /// Bytes in `bot`'s stderr logs of the games (all workers).
    pub fn bot_logs_size(&self, bot: &str) -> u64 {
        let prefix = format!("{}-w", file_safe(bot));
        let Ok(dir) = std::fs::read_dir(self.logs()) else {
            return 0;
        };
        // BOT-wN.log exactly: bot `a` must not count `a-wolf-w0.log`.
        let ours = |name: &str| {
            name.strip_prefix(&prefix)
                .and_then(|r| r.strip_suffix(".log"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        dir.flatten()
            .filter(|e| ours(&e.file_name().to_string_lossy()))
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    }

    /// The stderr log of `bot`'s start check before the games.
    pub fn check_log(&self, bot: &str) -> PathBuf {
        self.logs().join(format!("{}-check.log", file_safe(bot)))
    }

    /// What ties the folder to one schedule.
    pub fn league_json(&self) -> PathBuf {
        self.root.join("league.json")
    }

    /// The lock a run holds on the folder; it holds the run's pid and host.
    pub fn lock(&self) -> PathBuf {
        self.root.join("run.lock")
    }

    /// Rows set aside by `--repair`, with why.
    pub fn rejected_csv(&self) -> PathBuf {
        self.root.join("rejected.csv")
    }

    /// The record bytes a resume cut from plain logs of earlier versions
    /// (records without a row), kept.
    pub fn uncommitted_records(&self) -> PathBuf {
        self.root.join("uncommitted-records.jsonl")
    }

    /// The frames a resume cut from the logs of frames (records without a
    /// row, the last perhaps torn), kept as they were.
    pub fn uncommitted_frames(&self) -> PathBuf {
        self.root.join("uncommitted-records.jsonl.zst")
    }
}
