//! The bot's stdout as the referee reads it: through the runtime's
//! reactor, or, on a thread that allows it, waited for in place.
//!
//! An instant bot answers within tens of microseconds. Waiting for that
//! answer through the runtime costs a read that finds nothing, the
//! reactor's `epoll_wait`, a timer for the deadline set and cancelled,
//! and the task woken and polled again: as much work again as the two
//! pipe round trips themselves (BENCHMARKS.md, "`arena run` against the
//! harness"). On a thread that runs one game at a time (a league's
//! worker, a ladder's slot), nothing else is due in the next millisecond,
//! so the reply is first waited for on this thread (read at once, then
//! after a yield, then in `poll(2)`), for at most [`WAIT_IN_PLACE`], and
//! only then through the reactor.

use std::cell::Cell;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::ChildStdout;

/// The longest a reply is waited for in place before the runtime takes
/// over (see the module's text).
pub const WAIT_IN_PLACE: Duration = Duration::from_millis(1);

thread_local! {
    static IN_PLACE: Cell<bool> = const { Cell::new(false) };
}

/// Lets the bots read on this thread wait for their replies in place (see
/// the module's text). For a thread whose runtime has nothing else to do
/// while a bot thinks: a league's worker, a ladder's slot.
pub fn wait_in_place_on_this_thread() {
    IN_PLACE.with(|c| c.set(true));
}

/// A bot's stdout: tokio's pipe, read directly while a wait in place is
/// armed ([`Stdout::arm`]).
pub struct Stdout {
    pipe: ChildStdout,
    /// Until when a read may wait in place; `None`: through the reactor.
    until: Option<Instant>,
}

impl Stdout {
    pub fn new(pipe: ChildStdout) -> Stdout {
        Stdout { pipe, until: None }
    }

    pub fn as_raw_fd(&self) -> RawFd {
        self.pipe.as_raw_fd()
    }

    /// Arms a wait in place for the next read, up to [`WAIT_IN_PLACE`]
    /// and never past `deadline`, where this thread allows it.
    pub fn arm(&mut self, deadline: Instant) {
        if IN_PLACE.with(Cell::get) {
            self.until = Some((Instant::now() + WAIT_IN_PLACE).min(deadline));
        }
    }

    /// Calls off a wait in place not used.
    pub fn disarm(&mut self) {
        self.until = None;
    }

    /// One read while armed: what the pipe holds, waiting for it in
    /// `poll(2)` until the armed instant. `None`: nothing came by then
    /// (the wait is disarmed, the reactor takes over).
    ///
    /// The pipe does not block, so the reply is read at once: most replies
    /// are there at the first look (the bot ran as soon as the request's
    /// write woke it; 82% in the throughput league), and a look with
    /// `poll` first would be one more system call each. When the reply is
    /// not there yet, this thread first gives its CPU away (`sched_yield`):
    /// the bot the request woke, pinned to the same CPU, runs and replies,
    /// and the read after finds the reply. Only then does it wait in
    /// `poll`: a poll that sleeps arms a timer for its timeout and cancels
    /// it on waking, and on a virtual machine each reprogramming of the
    /// CPU's timer is an exit to the host: in the throughput league 56,000
    /// timers and 33,500 reprogrammings a run without the yield, 5,000 and
    /// 7,400 with it, 2-3% of its time (BENCHMARKS.md, "an eighth look").
    fn read_in_place(&mut self, buf: &mut ReadBuf<'_>) -> Option<std::io::Result<()>> {
        let until = self.until?;
        let mut yielded = false;
        loop {
            let room = buf.initialize_unfilled();
            match super::sys::read_ready(self.as_raw_fd(), room) {
                Ok(n) => {
                    buf.advance(n);
                    return Some(Ok(()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Some(Err(e)),
            }
            if !yielded {
                super::sys::yield_cpu();
                yielded = true;
                continue;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || !super::sys::poll_readable_within(self.as_raw_fd(), left) {
                self.until = None;
                return None;
            }
        }
    }
}

impl AsyncRead for Stdout {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if let Some(r) = this.read_in_place(buf) {
            return Poll::Ready(r);
        }
        Pin::new(&mut this.pipe).poll_read(cx, buf)
    }
}
