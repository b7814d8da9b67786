//! A bot's stderr log file, capped per process and by the league's budget
//! per bot; written by the stderr drains (`spawn.rs`, `capture.rs`).

use super::launch::StderrBudget;
use tokio::io::AsyncWriteExt;

/// A bot's stderr log: at most `cap` bytes of this process, and no more
/// than `budget` allows; the rest is discarded (a note in the log says
/// so).
pub(super) struct LogSink {
    file: tokio::fs::File,
    cap: u64,
    kept: u64,
    budget: Option<StderrBudget>,
    open: bool,
}

impl LogSink {
    pub(super) fn new(file: tokio::fs::File, cap: u64, budget: Option<StderrBudget>) -> LogSink {
        LogSink {
            file,
            cap,
            kept: 0,
            budget,
            open: true,
        }
    }

    /// Appends what the cap and the budget allow of `bytes`.
    pub(super) async fn write(&mut self, bytes: &[u8]) {
        if !self.open || bytes.is_empty() {
            return;
        }
        let n = bytes.len() as u64;
        let want = n.min(self.cap - self.kept);
        let take = match &self.budget {
            Some(b) => b.take(want),
            None => want,
        };
        if take > 0 && self.file.write_all(&bytes[..take as usize]).await.is_err() {
            self.open = false;
            return;
        }
        self.kept += take;
        if take < n {
            let why = if self.kept >= self.cap {
                "this process's stderr log cap is reached"
            } else {
                "this bot's stderr budget for the league is spent"
            };
            let note = format!("\n[arena: {why}; the rest is discarded]\n");
            let _ = self.file.write_all(note.as_bytes()).await;
            self.open = false;
        }
    }

    pub(super) async fn flush(&mut self) {
        let _ = self.file.flush().await;
    }
}
