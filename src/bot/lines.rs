//! Lines to and from a bot: one write per line under a deadline, capped
//! line reads that survive cancellation, and output the bot wrote unasked.

use super::stdin::reader_gone;
use super::stdout::Stdout;
use super::{sys, BotError, BotProcess};
use std::os::fd::AsRawFd;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::time::Instant;

/// How long a write that met a closed stdin waits for the bot's exit
/// status (a bot whose stdin closed on its way out: see
/// [`BotProcess::send_line`]). Spent only on that fault, and not at all
/// when the status is already known; [`OUTPUT_CLOSED_GRACE`] when its
/// stdout is closed too.
pub const INPUT_CLOSED_GRACE: Duration = Duration::from_secs(1);

/// How long the end of a bot's stdout (or its stdin closed while its
/// answer is awaited) waits for its exit status: one that closed its pipes
/// is gone or about to be (an exit closes every file at once), or has
/// closed them for good, and is not waited for longer.
pub const OUTPUT_CLOSED_GRACE: Duration = Duration::from_millis(100);

impl BotProcess {
    /// Writes `line` (which must end with `\n`) to the bot's stdin in one
    /// write, giving up at `deadline` (a bot that does not read its stdin
    /// cannot block the referee).
    pub async fn send_line(&mut self, line: &[u8], deadline: Instant) -> Result<(), BotError> {
        // A paused bot runs again to read what it is sent.
        self.resume();
        let stdin = match self.stdin.as_mut() {
            Some(s) => &mut s.pipe,
            None => return Err(BotError::Io(std::io::ErrorKind::BrokenPipe.into())),
        };
        tokio::select! {
            biased;
            r = stdin.write_all(line) => match r {
                Ok(()) => Ok(()),
                // SIGPIPE is ignored in Rust programs, so a bot that
                // closed its stdin (or died) shows up here as EPIPE. Its
                // exit, if it is on its way out (an interpreter shutting
                // down after closing its files, a sandbox's keeper still
                // to reap it), is waited for a moment: the fault then says
                // how it ended, not only that its stdin was closed.
                // One that closed its stdout as well is not waited for as
                // long: it has left, or will say nothing more.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    let output_closed = self.stdout_closed_now();
                    let grace = match output_closed {
                        true => OUTPUT_CLOSED_GRACE,
                        false => INPUT_CLOSED_GRACE,
                    };
                    Err(BotError::InputClosed {
                        status: self.exit_status_within(grace).await,
                        output_closed,
                    })
                }
                Err(e) => Err(BotError::Io(e)),
            },
            _ = tokio::time::sleep_until(deadline) => Err(BotError::Timeout),
        }
    }

    /// Bytes written to the bot's stdin that it has not read yet; `None`
    /// once its stdin is closed (or where the pipe cannot say). What is
    /// still there when the bot has exited, it never read.
    pub fn unread_input(&self) -> Option<usize> {
        sys::unread_bytes(self.stdin.as_ref()?.pipe.as_raw_fd())
    }

    /// Whether the bot closed its stdin: nothing reads the pipe any more,
    /// so what is in it (a request written just before the close) will
    /// never be read.
    pub fn input_closed(&self) -> bool {
        self.stdin
            .as_ref()
            .is_some_and(|s| sys::reader_gone(s.pipe.as_raw_fd()))
    }

    /// Whether a read or a look at the pipe has met the end of the bot's
    /// stdout: every process that could write to it has closed it.
    pub fn stdout_closed(&self) -> bool {
        self.stdout_eof
    }

    /// The bot's exit status, waited for [`OUTPUT_CLOSED_GRACE`] at most
    /// (and not past `deadline`): one whose pipes closed is gone or about
    /// to be.
    async fn exit_status_soon(&mut self, deadline: Instant) -> Option<std::process::ExitStatus> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.exit_status_within(OUTPUT_CLOSED_GRACE.min(left)).await
    }

    /// Whether the bot's stdout is closed, as the pipe says now (no process
    /// holds its write end), whatever is still in it to read.
    fn stdout_closed_now(&self) -> bool {
        self.stdout_eof || sys::writer_gone(self.stdout.get_ref().as_raw_fd())
    }

    /// Whether the bot's stderr is read (logged or kept); when it is not,
    /// it goes to /dev/null and [`stderr_bytes`](Self::stderr_bytes)
    /// stays 0 whatever the bot wrote.
    pub fn stderr_read(&self) -> bool {
        self.stderr_task.is_some()
    }

    /// Bytes the bot has written to stderr so far (0 when not logged).
    pub fn stderr_bytes(&self) -> u64 {
        self.stderr_seen.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The bytes of a line that had begun but not ended when the last
    /// [`read_line`](Self::read_line) gave up (at a timeout): what a bot
    /// that forgot its newline sent.
    pub fn partial_line(&self) -> Option<&[u8]> {
        (!self.line_done && !self.overflow && !self.line.is_empty()).then_some(&self.line[..])
    }

    /// Reads one line (without its newline) and returns it; the slice is
    /// valid until the next call. Returns when a line is complete, when the
    /// process exits (a line it completed before exiting is still
    /// returned), when it closes its stdin with what it was sent still
    /// unread ([`BotError::InputGone`]: it will never answer), or at
    /// `deadline`. Blank lines (nothing but spaces, tabs
    /// and `\r`) are skipped: they are not messages, and they do not move
    /// the deadline: a bot flooding them times out on time.
    pub async fn read_line(&mut self, deadline: Instant) -> Result<&[u8], BotError> {
        self.read_line_as(deadline, false).await
    }

    /// [`read_line`](Self::read_line) for the answer to a request: given
    /// up as soon as the bot closes its stdin, read to its end or not
    /// ([`BotError::InputGone`]): a bot that can be sent nothing more
    /// cannot play on (protocol.md: a closed stdin is a crash), and its
    /// answer, if it comes, would change nothing.
    pub async fn read_reply(&mut self, deadline: Instant) -> Result<&[u8], BotError> {
        self.read_line_as(deadline, true).await
    }

    /// `strict`: see [`read_reply`](Self::read_reply).
    async fn read_line_as(&mut self, deadline: Instant, strict: bool) -> Result<&[u8], BotError> {
        let mut skipped = false;
        loop {
            // A pipe that always has data never lets the deadline's timer
            // win the select below: after a blank line, check the clock
            // ourselves. (Not before the first read: a reply that is
            // already there is not refused for the referee's own delay.)
            if skipped && Instant::now() >= deadline {
                return Err(BotError::Timeout);
            }
            skipped = true;
            self.line.clear();
            self.overflow = false;
            self.line_done = false;
            self.read_line_inner(deadline, strict).await?;
            if !is_blank(&self.line) {
                self.line_done = true;
                return Ok(&self.line);
            }
        }
    }

    /// Output the bot wrote without being asked, looked at without waiting:
    /// whatever is buffered or already in the pipe. Blank lines are dropped
    /// silently; anything else is returned (its first [`STRAY_KEEP`] bytes)
    /// and discarded, so that it can never be taken for the answer to a
    /// later question. At most [`STRAY_SCAN`] bytes are examined per call (a
    /// bot flooding blank lines cannot keep the referee here).
    ///
    /// `Ok(None)`: nothing (or only blank lines). `Err(Exited)`: the bot
    /// closed its stdout (end of file), whether or not it still runs.
    pub fn stray_output(&mut self) -> Result<Option<Vec<u8>>, BotError> {
        self.stray(true)
    }

    /// [`stray_output`](Self::stray_output) without a system call in the
    /// usual case: what the last read brought in beyond its line (a second
    /// line in the same write, say), and what is in the pipe if the
    /// runtime has already seen it readable (it has, when output came
    /// while the referee waited for anything else: the other seats' moves).
    /// Before a request, this is the check folded into the next read: a
    /// line written unasked that is in the pipe unseen is read in the
    /// reply's place, and what follows it is then seen here, or by the
    /// full check at the game's end.
    pub fn stray_buffered(&mut self) -> Result<Option<Vec<u8>>, BotError> {
        self.stray(false)
    }

    /// What the pipe holds if the runtime already knows it is readable; no
    /// system call (and nothing read) when it does not. End of file sets
    /// `stdout_eof`.
    fn read_if_known_ready(&mut self) -> &[u8] {
        use std::task::{Context, Poll, Waker};
        use tokio::io::AsyncBufRead;
        let mut cx = Context::from_waker(Waker::noop());
        match std::pin::Pin::new(&mut self.stdout).poll_fill_buf(&mut cx) {
            Poll::Ready(Ok([])) => {
                self.stdout_eof = true;
                &[]
            }
            Poll::Ready(Ok(_)) => self.stdout.buffer(),
            Poll::Ready(Err(_)) | Poll::Pending => &[],
        }
    }

    fn stray(&mut self, look_in_pipe: bool) -> Result<Option<Vec<u8>>, BotError> {
        let mut kept: Vec<u8> = Vec::new();
        let mut stray = false;
        let mut note = |bytes: &[u8], kept: &mut Vec<u8>| {
            if !is_blank_run(bytes) {
                stray = true;
            }
            let room = STRAY_KEEP.saturating_sub(kept.len());
            kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        };
        // A line cut by a cancelled read (only after a timeout, when the
        // process is about to be replaced anyway).
        if !self.line_done && !self.overflow && !self.line.is_empty() {
            let partial = std::mem::take(&mut self.line);
            note(&partial, &mut kept);
        }
        let buffered = self.stdout.buffer().len();
        if buffered > 0 {
            let bytes = self.stdout.buffer().to_vec();
            note(&bytes, &mut kept);
            self.stdout.consume(buffered);
        }
        if !look_in_pipe && !self.stdout_eof {
            let ready = self.read_if_known_ready();
            let n = ready.len();
            if n > 0 {
                let bytes = ready.to_vec();
                note(&bytes, &mut kept);
                self.stdout.consume(n);
            }
        }
        if look_in_pipe && !self.stdout_eof {
            let fd = self.stdout.get_ref().as_raw_fd();
            // The usual case, nothing there, costs one poll and no buffer.
            let mut buf = Vec::new();
            let mut scanned = 0usize;
            while scanned < STRAY_SCAN {
                if !sys::poll_readable(fd) {
                    break;
                }
                buf.resize(16 * 1024, 0);
                let n = match sys::read_ready(fd, &mut buf) {
                    Ok(0) => {
                        self.stdout_eof = true;
                        break;
                    }
                    Ok(n) => n,
                    Err(_) => break,
                };
                scanned += n;
                note(&buf[..n], &mut kept);
            }
        }
        if stray {
            // Leading blank bytes carry no information.
            let start = kept
                .iter()
                .position(|&b| !matches!(b, b'\n' | b'\r' | b' ' | b'\t'))
                .unwrap_or(0);
            return Ok(Some(kept.split_off(start)));
        }
        if self.stdout_eof {
            return Err(BotError::Exited {
                status: self.exit_status(),
            });
        }
        Ok(None)
    }

    async fn read_line_inner(&mut self, deadline: Instant, strict: bool) -> Result<(), BotError> {
        if self.exited.is_none() && !self.stdout_eof {
            // A quick reply is waited for in place where the thread
            // allows it (`stdout.rs`), then through the runtime.
            self.stdout.get_mut().arm(deadline.into_std());
            let mut watch = self.stdin.as_ref().and_then(|s| s.watch());
            // The time the referee spends stopped is not the bot's.
            let (mut deadline, mut stopped) = (deadline, crate::host::stopped());
            let mut looked_again = false;
            let r = loop {
                let r = tokio::select! {
                    biased;
                    r = fill_line(&mut self.stdout, &mut self.line, &mut self.overflow, self.max_line) => Some(r),
                    s = self.child.wait() => {
                        if let Ok(s) = s {
                            self.exited = Some(s);
                        }
                        None
                    }
                    () = reader_gone(watch), if watch.is_some() => {
                        // Its stdin closed. With nothing of ours left
                        // unread in it, the bot may still write what it
                        // was asked for (its hello, or its last words
                        // at quit): wait on, without the watch, unless
                        // a reply was awaited.
                        watch = None;
                        let fd = self.stdin.as_ref().map(|s| s.pipe.as_raw_fd());
                        let unread = fd.and_then(sys::unread_bytes).unwrap_or(0) > 0;
                        if !unread && !strict {
                            continue;
                        }
                        self.stdout.get_mut().disarm();
                        // On its way out, perhaps: how it ended, if it
                        // does at once.
                        let status = self.exit_status_soon(deadline).await;
                        return Err(BotError::InputGone { status, unread });
                    }
                    _ = tokio::time::sleep_until(deadline) => {
                        // What the pipe held when the time ran out, looked
                        // at before anything else.
                        let fd = self.stdout.get_ref().as_raw_fd();
                        let waiting = sys::unread_bytes(fd).unwrap_or(0) > 0;
                        // A stop ended just now: its SIGCONT's handler may
                        // run a moment after this thread woke.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        let now = crate::host::stopped();
                        if now > stopped {
                            deadline += now - stopped;
                            stopped = now;
                            continue;
                        }
                        // And a reply that was in the pipe when the time
                        // ran out, its wake-up handled after the timer's
                        // (a loaded machine; a stop), is taken; one written
                        // after it is not (protocol.md: a reply already
                        // waiting when the deadline passes).
                        if waiting && !looked_again {
                            looked_again = true;
                            continue;
                        }
                        self.stdout.get_mut().disarm();
                        return Err(BotError::Timeout);
                    }
                };
                break r;
            };
            self.stdout.get_mut().disarm();
            if let Some(r) = r {
                return self.finish_line(r, deadline).await;
            }
        }
        // The process has exited: take a line it completed before exiting,
        // waiting briefly for data still in the pipe (a grandchild holding
        // the pipe open must not keep us here).
        if !self.stdout_eof {
            let grace = Instant::now() + Duration::from_millis(20);
            let r = tokio::select! {
                biased;
                r = fill_line(&mut self.stdout, &mut self.line, &mut self.overflow, self.max_line) => Some(r),
                _ = tokio::time::sleep_until(grace.min(deadline)) => None,
            };
            if let Some(r) = r {
                return self.finish_line(r, deadline).await;
            }
        }
        Err(BotError::Exited {
            status: self.exit_status(),
        })
    }

    /// Turns the result of [`fill_line`] (`Ok(true)`: a complete line;
    /// `Ok(false)`: end of file) into ours. At end of file, waits briefly
    /// for the exit status.
    async fn finish_line(
        &mut self,
        r: std::io::Result<bool>,
        deadline: Instant,
    ) -> Result<(), BotError> {
        match r {
            Ok(true) if self.overflow => Err(self.too_long()),
            Ok(true) => Ok(()),
            Ok(false) => {
                self.stdout_eof = true;
                if self.overflow {
                    return Err(self.too_long());
                }
                Err(BotError::Exited {
                    status: self.exit_status_soon(deadline).await,
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(self.too_long()),
            Err(e) => Err(BotError::Io(e)),
        }
    }

    fn too_long(&mut self) -> BotError {
        let start = self.line[..self.line.len().min(200)].to_vec();
        BotError::LineTooLong {
            limit: self.max_line,
            start,
        }
    }
}

/// Bytes of unsolicited output kept for the record.
pub const STRAY_KEEP: usize = 256;
/// Bytes of unsolicited output examined per [`BotProcess::stray_output`].
pub const STRAY_SCAN: usize = 1 << 20;

/// A line with nothing but spaces, tabs and `\r` (CRLF line endings).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Bytes that hold nothing but blank lines.
fn is_blank_run(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|&b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// Reads into `line` up to the next newline. Bytes beyond `max` are read
/// and dropped (`overflow` set); the newline ends the line either way. A
/// `\r` before the newline (a CRLF ending) does not count towards `max`,
/// as the newline does not.
/// `Ok(true)`: newline seen; `Ok(false)`: EOF. Cancel-safe: the partial line
/// stays in `line`.
async fn fill_line(
    r: &mut BufReader<Stdout>,
    line: &mut Vec<u8>,
    overflow: &mut bool,
    max: usize,
) -> std::io::Result<bool> {
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(false);
        }
        if line.is_empty() && !*overflow {
            // Blank lines before a message cost one scan of the buffer, not
            // a call each: all those in the buffer come back as one blank
            // line, and the caller checks its deadline before reading on.
            let blank = buf
                .iter()
                .position(|&b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
                .unwrap_or(buf.len());
            if let Some(end) = buf[..blank].iter().rposition(|&b| b == b'\n') {
                r.consume(end + 1);
                return Ok(true);
            }
        }
        let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        // One byte more than `max`: room for the `\r` of a CRLF ending.
        let room = (max + 1).saturating_sub(line.len());
        if chunk.len() > room {
            line.extend_from_slice(&chunk[..room]);
            *overflow = true;
        } else {
            line.extend_from_slice(chunk);
        }
        let used = chunk.len() + usize::from(found);
        r.consume(used);
        if found {
            if line.len() > max && line.last() != Some(&b'\r') {
                *overflow = true;
            }
            return Ok(true);
        }
        if *overflow {
            // No need to read a 100 MB line to its end: it has lost.
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

impl BotProcess {
    /// What the bot writes on stderr from now on is marked `mark` (what it
    /// wrote before, and is in the pipe already, keeps the mark before).
    /// Nothing when its stderr is not captured ([`crate::bot::Launch::capture`]).
    pub fn mark_stderr(&mut self, mark: u32) {
        if let Some(c) = &self.capture {
            let mut tap = c.lock();
            c.sync(&mut tap, &self.stderr_seen);
            tap.mark = mark;
        }
    }

    /// The stderr lines kept since the last take (what the pipe holds now
    /// included), and the bytes past the cap; `None` when its stderr is
    /// not captured.
    pub fn take_stderr(&mut self) -> Option<super::Captured> {
        let c = self.capture.as_ref()?;
        let mut tap = c.lock();
        c.sync(&mut tap, &self.stderr_seen);
        Some(tap.take())
    }
}
