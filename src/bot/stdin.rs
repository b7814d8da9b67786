//! The bot's stdin as the referee writes it: the pipe, and a watch on
//! it that says at once when the bot closed it (or exited).

use super::sys;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::process::ChildStdin;

/// The bot's stdin: the pipe written to, and a second descriptor of it
/// that the runtime watches for the moment its reader is gone (the bot
/// closed its stdin, or exited): a reply awaited while a request lies
/// unread in a pipe nobody reads any more is given up at once, not at
/// its deadline. Both are closed together (the bot sees end of file only
/// when both are).
pub struct Input {
    pub pipe: ChildStdin,
    /// `None` where it could not be made (the reply is then given up at
    /// its deadline, as before).
    watch: Option<AsyncFd<OwnedFd>>,
}

impl Input {
    pub fn new(pipe: ChildStdin) -> Input {
        // A pipe's write end is never readable: registered, it wakes the
        // runtime only with an error, which a pipe's writer gets when its
        // last reader closes.
        let watch = pipe
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| sys::watch(fd, Interest::ERROR));
        Input { pipe, watch }
    }

    /// The watch on the pipe's reader, where there is one.
    pub fn watch(&self) -> Option<&AsyncFd<OwnedFd>> {
        self.watch.as_ref()
    }
}

/// Returns once `watch`'s pipe has no reader; never without a watch.
pub async fn reader_gone(watch: Option<&AsyncFd<OwnedFd>>) {
    let Some(watch) = watch else {
        return std::future::pending().await;
    };
    loop {
        match watch.ready(Interest::ERROR).await {
            Ok(mut seen) => {
                if sys::reader_gone(watch.as_raw_fd()) {
                    return;
                }
                seen.clear_ready();
            }
            Err(_) => return std::future::pending().await,
        }
    }
}
