//! A bot's stderr kept in memory as lines (issue 48: each game's stderr
//! for the bot's owner), besides or instead of its log file.
//!
//! Each line carries the *mark* that was current when its first byte was
//! read: a number the caller sets ([`BotProcess::mark_stderr`]) and the
//! bot runner does not interpret (the referee sets the turn). Setting a
//! mark first reads what the pipe already holds, without waiting, under
//! the old mark: what a bot wrote before its reply on stdout is in the
//! pipe by the time the reply is read, so it is never charged to the next
//! turn, however late the drain task runs.
//!
//! At most `cap` bytes (each line and its newline), and at most
//! [`crate::bounded::STDERR_LINES_MOST`] lines, are kept between two
//! [`BotProcess::take_stderr`]; the rest is counted, not kept. Nothing is
//! allocated while the bot writes nothing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::net::unix::pipe;

/// One line of a bot's stderr (without its newline; invalid UTF-8
/// replaced, a final `\r` removed), with the mark it was read under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkedLine {
    pub mark: u32,
    pub text: String,
}

/// What [`BotProcess::take_stderr`] gives: the lines kept since the last
/// take, and the bytes written past the cap (not kept).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    pub lines: Vec<MarkedLine>,
    pub dropped: u64,
}

/// The lines being kept, shared by the drain task and the process.
#[derive(Debug)]
pub(super) struct Tap {
    cap: u64,
    pub(super) mark: u32,
    /// Bytes kept since the last take (each line's text and newline).
    kept: u64,
    dropped: u64,
    lines: Vec<MarkedLine>,
    /// The line being read: its bytes kept so far, its mark, and whether
    /// any byte of it came (kept or not).
    partial: Vec<u8>,
    partial_mark: u32,
    started: bool,
    /// Whether the bytes are also logged to a file ([`Tap::unlogged`]).
    logging: bool,
    /// Bytes read by [`Capture::sync`], which the drain task has yet to
    /// write to the log file (in order, before its own).
    unlogged: Vec<u8>,
}

impl Tap {
    pub(super) fn new(cap: u64, logging: bool) -> Tap {
        Tap {
            cap,
            mark: 0,
            kept: 0,
            dropped: 0,
            lines: Vec::new(),
            partial: Vec::new(),
            partial_mark: 0,
            started: false,
            logging,
            unlogged: Vec::new(),
        }
    }

    /// Takes `bytes` as the bot wrote them.
    pub(super) fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if !self.started {
                self.started = true;
                self.partial_mark = self.mark;
            }
            match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.add(&bytes[..i]);
                    self.end_line();
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.add(bytes);
                    break;
                }
            }
        }
    }

    /// Part of the current line: kept while the cap leaves room for it and
    /// its newline.
    fn add(&mut self, chunk: &[u8]) {
        let room = self
            .cap
            .saturating_sub(self.kept + 1)
            .saturating_sub(self.partial.len() as u64);
        let take = (chunk.len() as u64).min(room) as usize;
        self.partial.extend_from_slice(&chunk[..take]);
        self.dropped += (chunk.len() - take) as u64;
    }

    /// The current line is complete (or taken as it is).
    fn end_line(&mut self) {
        self.started = false;
        if self.kept >= self.cap {
            // Not even its newline fits (its text was not kept either).
            self.dropped += 1;
            return;
        }
        if self.lines.len() >= crate::bounded::STDERR_LINES_MOST {
            // As many lines as an upload may carry: the rest are left out.
            self.dropped += self.partial.len() as u64 + 1;
            self.partial.clear();
            return;
        }
        let mut text = String::from_utf8_lossy(&self.partial).into_owned();
        if text.ends_with('\r') {
            text.pop();
        }
        self.kept += self.partial.len() as u64 + 1;
        self.partial.clear();
        self.lines.push(MarkedLine {
            mark: self.partial_mark,
            text,
        });
    }

    pub(super) fn take(&mut self) -> Captured {
        // A line without its newline yet is taken as it is.
        if self.started && !self.partial.is_empty() {
            self.end_line();
        }
        self.kept = 0;
        Captured {
            lines: std::mem::take(&mut self.lines),
            dropped: std::mem::take(&mut self.dropped),
        }
    }
}

/// A bot's stderr pipe, read by the drain task and, without waiting, by
/// [`Capture::sync`]; both keep what they read in one [`Tap`].
#[derive(Clone, Debug)]
pub(super) struct Capture {
    pub(super) pipe: Arc<pipe::Receiver>,
    pub(super) tap: Arc<Mutex<Tap>>,
}

impl Capture {
    /// Captures the pipe `err` (as a pipe that both the drain task and
    /// [`Capture::sync`] read), keeping `cap` bytes per take.
    pub(super) fn new(
        err: tokio::process::ChildStderr,
        cap: u64,
        logging: bool,
    ) -> std::io::Result<Capture> {
        let pipe = pipe::Receiver::from_owned_fd(err.into_owned_fd()?)?;
        Ok(Capture {
            pipe: Arc::new(pipe),
            tap: Arc::new(Mutex::new(Tap::new(cap, logging))),
        })
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Tap> {
        self.tap.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads what the pipe holds now (at most 64 KiB, no waiting) into
    /// the tap, under the current mark. Read directly, not through the
    /// runtime's idea of whether the pipe is readable: a game whose replies
    /// are waited for in place (`stdout.rs`) may not give the runtime a
    /// turn between two marks, and what the bot wrote meanwhile must still
    /// be put under the turn it was written in.
    pub(super) fn sync(&self, tap: &mut Tap, seen: &AtomicU64) {
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 4096];
        for _ in 0..16 {
            match super::sys::read_ready(self.pipe.as_raw_fd(), &mut buf) {
                Ok(n) if n > 0 => {
                    seen.fetch_add(n as u64, Ordering::Relaxed);
                    tap.push(&buf[..n]);
                    if tap.logging {
                        tap.unlogged.extend_from_slice(&buf[..n]);
                    }
                }
                // Nothing more for now (`WouldBlock`), or its end.
                _ => break,
            }
        }
    }
}

/// Reads the captured pipe until its end: each read into the tap (under
/// its lock, so that [`Capture::sync`] never reorders the bytes), then to
/// the log, after what `sync` read before it.
pub(super) async fn drain_captured(
    capture: Capture,
    mut log: Option<super::sink::LogSink>,
    seen: Arc<AtomicU64>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if capture.pipe.readable().await.is_err() {
            break;
        }
        let read = {
            let mut tap = capture.lock();
            capture.pipe.try_read(&mut buf).map(|n| {
                tap.push(&buf[..n]);
                (n, std::mem::take(&mut tap.unlogged))
            })
        };
        let (n, before) = match read {
            Ok(got) => got,
            // Read by `sync` meanwhile: wait again.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(_) => break,
        };
        seen.fetch_add(n as u64, Ordering::Relaxed);
        if let Some(l) = log.as_mut() {
            l.write(&before).await;
            l.write(&buf[..n]).await;
        }
        if n == 0 {
            break;
        }
    }
    if let Some(mut l) = log {
        let rest = std::mem::take(&mut capture.lock().unlogged);
        l.write(&rest).await;
        l.flush().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(c: &Captured) -> Vec<(u32, &str)> {
        c.lines.iter().map(|l| (l.mark, l.text.as_str())).collect()
    }

    #[test]
    fn lines_keep_the_mark_of_their_first_byte() {
        let mut t = Tap::new(1000, false);
        t.push(b"one\ntw");
        t.mark = 5;
        t.push(b"o\r\nthree\n");
        t.push(b"four");
        let c = t.take();
        assert_eq!(
            texts(&c),
            vec![(0, "one"), (0, "two"), (5, "three"), (5, "four")]
        );
        assert_eq!(c.dropped, 0);
        assert_eq!(t.take(), Captured::default());
    }

    #[test]
    fn past_the_cap_bytes_are_counted_not_kept() {
        // 10 bytes: "abcd\n" (5), then "efgh" fits with its newline (5).
        let mut t = Tap::new(10, false);
        t.push(b"abcd\nefghij\nklm\n\n");
        let c = t.take();
        assert_eq!(texts(&c), vec![(0, "abcd"), (0, "efgh")]);
        // "ij" of the second line, then "klm\n" and "\n".
        assert_eq!(c.dropped, 2 + 4 + 1);
        // The next take has the whole cap again.
        t.push(b"0123456789ABC\n");
        let c = t.take();
        assert_eq!(texts(&c), vec![(0, "012345678")]);
        assert_eq!(c.dropped, 4);
    }

    #[test]
    fn past_the_most_lines_an_upload_carries_lines_are_counted_not_kept() {
        let most = crate::bounded::STDERR_LINES_MOST;
        let mut t = Tap::new(u64::MAX, false);
        t.push(&vec![b'\n'; most]);
        t.push(b"ab\nc\n");
        let c = t.take();
        assert_eq!(c.lines.len(), most);
        assert_eq!(c.dropped, 3 + 2);
        // The next take keeps lines again.
        t.push(b"d\n");
        assert_eq!(texts(&t.take()), vec![(0, "d")]);
    }
}
