//! One bot process: spawn it in its own process group, write lines to its
//! stdin, read capped lines from its stdout with a deadline, drain its
//! stderr to a log, and kill the whole group when it is done.
//!
//! Owns processes and pipes only: it knows nothing of the rules, of JSON or
//! of games (see [`crate::protocol`] and [`crate::referee`]).
//!
//! API used by the referee and the league:
//! - [`BotCommand`]: program, args, working directory, environment.
//! - [`BotProcess::spawn`]`(&cmd, stderr_log, &limits)`: own process group
//!   (`setpgid`), piped stdin/stdout, stderr drained on its own task into the
//!   log file (capped at [`Limits::stderr_cap`] bytes, the rest discarded) or
//!   to `/dev/null`.
//! - [`BotProcess::send_line`] (one write per line, bounded by a deadline),
//!   [`BotProcess::read_line`] (one `select!` over line / exit / deadline;
//!   a line longer than [`Limits::max_line`] costs bounded memory and is
//!   [`BotError::LineTooLong`]).
//! - [`BotProcess::shutdown`]`(grace)`: close stdin, wait, SIGTERM the group,
//!   wait, SIGKILL the group. `Drop` SIGKILLs the group, so dropping a game
//!   future mid-game leaves no process behind.
//!
//! Everything here runs on the caller's tokio runtime (a `current_thread`
//! runtime per worker is the intended use); nothing blocks a thread.

pub mod manifest;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::Instant;

/// How to start a bot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BotCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Working directory (default: the referee's).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl BotCommand {
    /// A command from its words (`["python3", "bot.py"]`).
    pub fn from_words<S: AsRef<str>>(words: &[S]) -> Option<BotCommand> {
        let (first, rest) = words.split_first()?;
        Some(BotCommand {
            program: first.as_ref().to_string(),
            args: rest.iter().map(|s| s.as_ref().to_string()).collect(),
            cwd: None,
            env: Vec::new(),
        })
    }

    /// The command as one line for messages.
    pub fn display(&self) -> String {
        let mut s = self.program.clone();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Limits applied to one bot process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest line (bytes, newline excluded) accepted from the bot's stdout.
    pub max_line: usize,
    /// Bytes of stderr kept in the log; the rest is read and discarded.
    pub stderr_cap: u64,
    /// Time to answer the referee's hello.
    pub startup: Duration,
    /// Time given to exit after `quit` (then SIGTERM, the same again, SIGKILL).
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line: crate::protocol::DEFAULT_MAX_LINE,
            stderr_cap: 1 << 20,
            startup: Duration::from_secs(10),
            shutdown_grace: Duration::from_millis(500),
        }
    }
}

/// What went wrong talking to a bot process.
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("cannot open the stderr log {path}: {source}")]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no line before the deadline")]
    Timeout,
    /// The process exited (or closed its stdout, `status` then unknown).
    #[error("the bot exited ({})", describe_status(.status))]
    Exited { status: Option<ExitStatus> },
    /// A line longer than the limit; `start` holds its first bytes.
    #[error("line longer than {limit} bytes")]
    LineTooLong { limit: usize, start: Vec<u8> },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// "status 3", "signal 9", "unknown status".
pub fn describe_status(status: &Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("status {c}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "unknown status".into(),
        },
        None => "stdout closed".into(),
    }
}

/// A running bot process.
pub struct BotProcess {
    child: Child,
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The line being read (kept across cancelled reads).
    line: Vec<u8>,
    /// Bytes of the current over-long line already skipped.
    overflow: bool,
    max_line: usize,
    exited: Option<ExitStatus>,
    stdout_eof: bool,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for BotProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotProcess")
            .field("pid", &self.pid)
            .finish()
    }
}

impl BotProcess {
    /// Starts `cmd` in its own process group. With `stderr_log`, stderr is
    /// appended to that file (at most `limits.stderr_cap` bytes kept);
    /// without it, stderr goes to `/dev/null`. Must be called inside a tokio
    /// runtime.
    pub fn spawn(
        cmd: &BotCommand,
        stderr_log: Option<&Path>,
        limits: &Limits,
    ) -> Result<BotProcess, BotError> {
        let log = match stderr_log {
            Some(path) => {
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|source| BotError::Log {
                        path: path.to_path_buf(),
                        source,
                    })?;
                Some(f)
            }
            None => None,
        };
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if log.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .process_group(0)
            .kill_on_drop(true);
        if let Some(dir) = &cmd.cwd {
            c.current_dir(dir);
        }
        for (k, v) in &cmd.env {
            c.env(k, v);
        }
        let mut child = c.spawn().map_err(|source| BotError::Spawn {
            command: cmd.display(),
            source,
        })?;
        let pid = child.id().unwrap_or(0);
        let stdin = child.stdin.take();
        let stdout = match child.stdout.take() {
            Some(s) => s,
            None => {
                kill_group(pid, libc::SIGKILL);
                return Err(BotError::Io(std::io::Error::other("no stdout pipe")));
            }
        };
        let stderr_task = match (child.stderr.take(), log) {
            (Some(err), Some(file)) => Some(tokio::spawn(drain_stderr(
                err,
                tokio::fs::File::from_std(file),
                limits.stderr_cap,
            ))),
            _ => None,
        };
        Ok(BotProcess {
            child,
            pid,
            stdin,
            stdout: BufReader::with_capacity(16 * 1024, stdout),
            line: Vec::with_capacity(256),
            overflow: false,
            max_line: limits.max_line,
            exited: None,
            stdout_eof: false,
            stderr_task,
        })
    }

    /// The process id, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The exit status, if the process is known to have exited.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            if let Ok(Some(s)) = self.child.try_wait() {
                self.exited = Some(s);
            }
        }
        self.exited
    }

    /// Writes `line` (which must end with `\n`) to the bot's stdin in one
    /// write, giving up at `deadline` (a bot that does not read its stdin
    /// cannot block the referee).
    pub async fn send_line(&mut self, line: &[u8], deadline: Instant) -> Result<(), BotError> {
        let stdin = match self.stdin.as_mut() {
            Some(s) => s,
            None => return Err(BotError::Io(std::io::ErrorKind::BrokenPipe.into())),
        };
        tokio::select! {
            biased;
            r = stdin.write_all(line) => match r {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    Err(BotError::Exited { status: self.exit_status() })
                }
                Err(e) => Err(BotError::Io(e)),
            },
            _ = tokio::time::sleep_until(deadline) => Err(BotError::Timeout),
        }
    }

    /// Reads one line (without its newline) and returns it; the slice is
    /// valid until the next call. Returns when a line is complete, when the
    /// process exits (a line it completed before exiting is still
    /// returned), or at `deadline`.
    pub async fn read_line(&mut self, deadline: Instant) -> Result<&[u8], BotError> {
        self.line.clear();
        self.overflow = false;
        self.read_line_inner(deadline).await?;
        Ok(&self.line)
    }

    async fn read_line_inner(&mut self, deadline: Instant) -> Result<(), BotError> {
        if self.exited.is_none() && !self.stdout_eof {
            let r = tokio::select! {
                biased;
                r = fill_line(&mut self.stdout, &mut self.line, &mut self.overflow, self.max_line) => Some(r),
                s = self.child.wait() => {
                    if let Ok(s) = s {
                        self.exited = Some(s);
                    }
                    None
                }
                _ = tokio::time::sleep_until(deadline) => return Err(BotError::Timeout),
            };
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
                if self.exited.is_none() {
                    let grace = (Instant::now() + Duration::from_millis(100)).min(deadline);
                    if let Ok(Ok(s)) = tokio::time::timeout_at(grace, self.child.wait()).await {
                        self.exited = Some(s);
                    }
                }
                Err(BotError::Exited {
                    status: self.exited,
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

    /// Ends the process: closes its stdin, waits up to `grace` for it to
    /// exit, then SIGTERMs its group, waits `grace` again, and SIGKILLs the
    /// group (always, so that children it left behind die too). Returns the
    /// leader's exit status when known.
    pub async fn shutdown(&mut self, grace: Duration) -> Option<ExitStatus> {
        self.stdin = None;
        if self.exited.is_none() {
            if let Ok(Ok(s)) = tokio::time::timeout(grace, self.child.wait()).await {
                self.exited = Some(s);
            }
        }
        if self.exited.is_none() {
            kill_group(self.pid, libc::SIGTERM);
            if let Ok(Ok(s)) = tokio::time::timeout(grace, self.child.wait()).await {
                self.exited = Some(s);
            }
        }
        kill_group(self.pid, libc::SIGKILL);
        if self.exited.is_none() {
            if let Ok(s) = self.child.wait().await {
                self.exited = Some(s);
            }
        }
        if let Some(t) = self.stderr_task.take() {
            // The group is dead, so stderr reaches EOF unless a process
            // outside the group holds it; do not wait for that.
            let _ = tokio::time::timeout(grace, t).await;
        }
        self.exited
    }

    /// Kills the whole process group at once (SIGKILL), without waiting.
    pub fn kill(&mut self) {
        kill_group(self.pid, libc::SIGKILL);
        self.stdin = None;
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        // The group outlives its leader while any member lives; killing it
        // here reaches grandchildren that `kill_on_drop` would miss. The
        // leader itself is reaped by tokio's orphan queue.
        kill_group(self.pid, libc::SIGKILL);
        if let Some(t) = self.stderr_task.take() {
            t.abort();
        }
    }
}

/// Sends `sig` to the process group `pgid` (ignored when it is gone).
pub fn kill_group(pgid: u32, sig: i32) {
    if pgid > 1 {
        // SAFETY: killpg only sends a signal; a stale group id fails with
        // ESRCH, which we ignore.
        unsafe {
            libc::killpg(pgid as libc::pid_t, sig);
        }
    }
}

/// True while any live (non-zombie) process belongs to process group
/// `pgid` (Linux: reads /proc). Used by the tests to prove nothing is left.
pub fn group_alive(pgid: u32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold spaces: split after ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next();
        let _ppid = f.next();
        let pgrp = f.next().and_then(|p| p.parse::<u32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            return true;
        }
    }
    false
}

/// Reads into `line` up to the next newline. Bytes beyond `max` are read
/// and dropped (`overflow` set); the newline ends the line either way.
/// `Ok(true)`: newline seen; `Ok(false)`: EOF. Cancel-safe: the partial line
/// stays in `line`.
async fn fill_line(
    r: &mut BufReader<ChildStdout>,
    line: &mut Vec<u8>,
    overflow: &mut bool,
    max: usize,
) -> std::io::Result<bool> {
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(false);
        }
        let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let room = max.saturating_sub(line.len());
        if chunk.len() > room {
            line.extend_from_slice(&chunk[..room]);
            *overflow = true;
        } else {
            line.extend_from_slice(chunk);
        }
        let used = chunk.len() + usize::from(found);
        r.consume(used);
        if found {
            return Ok(true);
        }
        if *overflow {
            // No need to read a 100 MB line to its end: it has lost.
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

/// Copies stderr into the log until EOF, keeping at most `cap` bytes.
async fn drain_stderr(mut err: tokio::process::ChildStderr, mut log: tokio::fs::File, cap: u64) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut kept = 0u64;
    let mut log_ok = true;
    loop {
        let n = match err.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if log_ok && kept < cap {
            let take = (n as u64).min(cap - kept) as usize;
            if log.write_all(&buf[..take]).await.is_err() {
                log_ok = false;
            }
            kept += take as u64;
            if kept >= cap && log_ok {
                let _ = log
                    .write_all(b"\n[arena: stderr log cap reached; the rest is discarded]\n")
                    .await;
            }
        }
    }
    let _ = log.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> BotCommand {
        BotCommand::from_words(&["sh", "-c", script]).unwrap()
    }

    fn soon(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    #[tokio::test]
    async fn echo_round_trip() {
        let mut p = BotProcess::spawn(&sh("cat"), None, &Limits::default()).unwrap();
        p.send_line(b"hello\n", soon(5000)).await.unwrap();
        assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"hello");
        p.send_line(b"two\n", soon(5000)).await.unwrap();
        assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"two");
        let s = p.shutdown(Duration::from_millis(500)).await;
        assert_eq!(s.and_then(|s| s.code()), Some(0));
    }

    #[tokio::test]
    async fn last_line_before_exit_is_kept() {
        let mut p = BotProcess::spawn(&sh("echo bye; exit 3"), None, &Limits::default()).unwrap();
        assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"bye");
        match p.read_line(soon(5000)).await {
            Err(BotError::Exited { status }) => {
                assert_eq!(status.and_then(|s| s.code()), Some(3))
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn long_line_is_refused() {
        let limits = Limits {
            max_line: 100,
            ..Limits::default()
        };
        let mut p = BotProcess::spawn(
            &sh("head -c 1000000 /dev/zero | tr '\\0' x; sleep 100"),
            None,
            &limits,
        )
        .unwrap();
        match p.read_line(soon(10_000)).await {
            Err(BotError::LineTooLong { limit, start }) => {
                assert_eq!(limit, 100);
                assert!(start.iter().all(|&b| b == b'x'));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn silent_bot_times_out_and_group_dies() {
        let mut p =
            BotProcess::spawn(&sh("sleep 100 & sleep 100"), None, &Limits::default()).unwrap();
        let pid = p.pid();
        assert!(matches!(
            p.read_line(soon(50)).await,
            Err(BotError::Timeout)
        ));
        assert!(group_alive(pid));
        p.shutdown(Duration::from_millis(50)).await;
        wait_group_gone(pid).await;
    }

    #[tokio::test]
    async fn drop_kills_the_group() {
        let p = BotProcess::spawn(&sh("sleep 100 & sleep 100"), None, &Limits::default()).unwrap();
        let pid = p.pid();
        drop(p);
        wait_group_gone(pid).await;
    }

    #[tokio::test]
    async fn stderr_goes_to_capped_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("bot.log");
        let limits = Limits {
            stderr_cap: 1000,
            ..Limits::default()
        };
        let mut p = BotProcess::spawn(
            &sh("head -c 100000 /dev/zero >&2; echo done"),
            Some(&log),
            &limits,
        )
        .unwrap();
        assert_eq!(p.read_line(soon(10_000)).await.unwrap(), b"done");
        p.shutdown(Duration::from_millis(500)).await;
        let len = std::fs::metadata(&log).unwrap().len();
        assert!((1000..1200).contains(&len), "log length {len}");
    }

    /// Waits (with a deadline, not a fixed sleep) until the group is gone.
    pub(crate) async fn wait_group_gone(pid: u32) {
        let end = Instant::now() + Duration::from_secs(5);
        while group_alive(pid) {
            assert!(Instant::now() < end, "process group {pid} still alive");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
