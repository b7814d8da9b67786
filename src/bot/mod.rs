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
//!   Blank lines are skipped.
//! - [`BotProcess::stray_output`]: what the bot wrote without being asked,
//!   seen without waiting (buffered or already in the pipe), so that it is
//!   never taken for a later answer; [`BotProcess::has_exited`] through
//!   `&self` (waitid `WNOWAIT`).
//! - [`BotProcess::shutdown`]`(grace)`: close stdin, wait, SIGTERM the group,
//!   wait, SIGKILL the group. `Drop` SIGKILLs the group, so dropping a game
//!   future mid-game leaves no process behind. Every kill also reaches the
//!   descendants that left the group, found by [`TOKEN_VAR`] in their
//!   environment.
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
    /// Writing to the bot failed because nothing reads its stdin any more
    /// (it closed stdin or exited): EPIPE. `status` when already known.
    #[error("the bot closed its stdin ({})", describe_status(.status))]
    InputClosed { status: Option<ExitStatus> },
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
    /// `line` holds a complete line already returned (not a partial one
    /// left by a cancelled read).
    line_done: bool,
    max_line: usize,
    exited: Option<ExitStatus>,
    stdout_eof: bool,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    /// The value of [`TOKEN_VAR`] in the bot's environment, inherited by
    /// its descendants: finds the ones that left the process group.
    token: String,
}

/// Environment variable set for every bot process (and so inherited by its
/// children): `ARENA_BOT_TOKEN=<referee pid>-<serial>`. Descendants that
/// leave the bot's process group (`setsid`, `setpgid`) are found by it and
/// killed with the group.
pub const TOKEN_VAR: &str = "ARENA_BOT_TOKEN";

fn new_token() -> String {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
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
        let token = new_token();
        c.env(TOKEN_VAR, &token);
        #[cfg(target_os = "linux")]
        {
            // If the referee itself dies without cleaning up (kill -9, a
            // crash), the kernel kills the bot: no orphan keeps running.
            // (Its own children are reached by the group kill on every
            // ordinary exit path.) The signal follows the spawning thread,
            // so bots must be spawned from long-lived threads, as the
            // league's workers and the commands' main threads are.
            let parent = std::process::id() as libc::pid_t;
            // SAFETY: only async-signal-safe calls (prctl, getppid, _exit)
            // run between fork and exec.
            unsafe {
                c.pre_exec(move || {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                    Ok(())
                });
            }
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
            line_done: false,
            max_line: limits.max_line,
            exited: None,
            stdout_eof: false,
            stderr_task,
            token,
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
                // SIGPIPE is ignored in Rust programs, so a bot that
                // closed its stdin (or died) shows up here as EPIPE.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    Err(BotError::InputClosed { status: self.exit_status() })
                }
                Err(e) => Err(BotError::Io(e)),
            },
            _ = tokio::time::sleep_until(deadline) => Err(BotError::Timeout),
        }
    }

    /// Reads one line (without its newline) and returns it; the slice is
    /// valid until the next call. Returns when a line is complete, when the
    /// process exits (a line it completed before exiting is still
    /// returned), or at `deadline`. Blank lines (nothing but spaces, tabs
    /// and `\r`) are skipped: they are not messages.
    pub async fn read_line(&mut self, deadline: Instant) -> Result<&[u8], BotError> {
        loop {
            self.line.clear();
            self.overflow = false;
            self.line_done = false;
            self.read_line_inner(deadline).await?;
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
        use std::os::fd::AsRawFd;
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
        if !self.stdout_eof {
            let fd = self.stdout.get_ref().as_raw_fd();
            let mut buf = [0u8; 16 * 1024];
            let mut scanned = 0usize;
            while scanned < STRAY_SCAN {
                let mut pfd = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd, zero timeout.
                let ready = unsafe { libc::poll(&mut pfd, 1, 0) };
                if ready <= 0 || pfd.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) == 0 {
                    break;
                }
                // SAFETY: reads into a live buffer of the given length from
                // a descriptor we own; poll said it will not block.
                let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    break;
                }
                if n == 0 {
                    self.stdout_eof = true;
                    break;
                }
                let n = n as usize;
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

    /// True when the leader process has exited (even if nobody has reaped
    /// it yet). Does not reap it, so it works through `&self`.
    pub fn has_exited(&self) -> bool {
        if self.exited.is_some() || self.stdout_eof {
            return true;
        }
        // SAFETY: waitid with WNOWAIT only inspects our own child; the
        // siginfo is zeroed and written by the kernel.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let r = libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            // -1: not our child any more (already reaped): gone.
            r != 0 || info.si_pid() != 0
        }
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
        self.kill_all();
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

    /// Kills the whole process group at once (SIGKILL), and every process
    /// carrying this bot's token, without waiting.
    pub fn kill(&mut self) {
        self.kill_all();
        self.stdin = None;
    }

    /// The token of this bot's processes (see [`TOKEN_VAR`]).
    pub fn token(&self) -> &str {
        &self.token
    }

    fn kill_all(&self) {
        kill_group(self.pid, libc::SIGKILL);
        kill_tokened(&self.token);
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        // The group outlives its leader while any member lives; killing it
        // here reaches grandchildren that `kill_on_drop` would miss. The
        // leader itself is reaped by tokio's orphan queue.
        self.kill_all();
        if let Some(t) = self.stderr_task.take() {
            t.abort();
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

/// SIGKILLs every process (of this user, visible in /proc) whose
/// environment holds `TOKEN_VAR=token`: a bot's descendants that escaped
/// its process group. A few passes, so that a process forking while we
/// scan is caught too. Linux only (elsewhere: nothing).
pub fn kill_tokened(token: &str) {
    let needle = format!("{TOKEN_VAR}={token}\0").into_bytes();
    for _ in 0..3 {
        let pids = tokened_pids(&needle);
        if pids.is_empty() {
            return;
        }
        for pid in pids {
            // SAFETY: kill only sends a signal.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

/// Live processes whose environment holds `needle` (`VAR=value\0`).
fn tokened_pids(needle: &[u8]) -> Vec<u32> {
    let mut pids = Vec::new();
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || !process_alive(pid) {
            continue;
        }
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        // environ is NUL-separated; match at the start or after a NUL.
        let hit = env.starts_with(needle)
            || env
                .windows(needle.len() + 1)
                .any(|w| w[0] == 0 && &w[1..] == needle);
        if hit {
            pids.push(pid);
        }
    }
    pids
}

/// True while process `pid` exists and is not a zombie (Linux: /proc).
pub fn process_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, r)| r.split_whitespace().next());
    !matches!(state, None | Some("Z") | Some("X"))
}

/// True while any process carrying `token` lives (see [`TOKEN_VAR`]).
pub fn token_alive(token: &str) -> bool {
    !tokened_pids(format!("{TOKEN_VAR}={token}\0").as_bytes()).is_empty()
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

    #[tokio::test]
    async fn blank_lines_are_skipped() {
        let mut p = BotProcess::spawn(
            &sh("printf '\\n \\r\\n\\t\\nx\\r\\n'; sleep 100"),
            None,
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"x\r");
    }

    #[tokio::test]
    async fn stray_output_is_seen_without_waiting() {
        // Two lines in one write: the second is already buffered after the
        // first is read; blank lines alone are not stray.
        let mut p = BotProcess::spawn(
            &sh(
                "read a; printf 'one\\ntwo\\n'; read b; printf '\\n\\r\\n'; read c; exec sleep 100",
            ),
            None,
            &Limits::default(),
        )
        .unwrap();
        p.send_line(b"go\n", soon(5000)).await.unwrap();
        assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"one");
        assert_eq!(p.stray_output().unwrap(), Some(b"two\n".to_vec()));
        assert_eq!(p.stray_output().unwrap(), None);
        p.send_line(b"go\n", soon(5000)).await.unwrap();
        // Wait for the blank lines to arrive: a read skips them and times out.
        assert!(matches!(
            p.read_line(soon(100)).await,
            Err(BotError::Timeout)
        ));
        assert_eq!(p.stray_output().unwrap(), None);
        assert!(!p.has_exited());
    }

    #[tokio::test]
    async fn closed_stdout_and_exit_are_noticed() {
        let mut p =
            BotProcess::spawn(&sh("exec 1>&-; read a; exit 0"), None, &Limits::default()).unwrap();
        // The read sees end of file at once, although the process still runs.
        match p.read_line(soon(5000)).await {
            Err(BotError::Exited { .. }) => {}
            other => panic!("{other:?}"),
        }
        assert!(matches!(p.stray_output(), Err(BotError::Exited { .. })));
        let q = BotProcess::spawn(&sh("exit 0"), None, &Limits::default()).unwrap();
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while !q.has_exited() {
            assert!(std::time::Instant::now() < end, "exit not noticed");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn a_bot_that_does_not_read_cannot_block_a_write() {
        let mut p = BotProcess::spawn(&sh("exec sleep 100"), None, &Limits::default()).unwrap();
        // Far more than a pipe holds (64 KiB).
        let mut big = vec![b'x'; 1 << 20];
        big.push(b'\n');
        let t = std::time::Instant::now();
        assert!(matches!(
            p.send_line(&big, soon(100)).await,
            Err(BotError::Timeout)
        ));
        assert!(t.elapsed() < Duration::from_secs(3));
        let pid = p.pid();
        p.shutdown(Duration::from_millis(50)).await;
        wait_group_gone(pid).await;
    }

    #[tokio::test]
    async fn a_closed_stdin_is_a_broken_pipe_not_a_signal() {
        let mut p =
            BotProcess::spawn(&sh("exec 0<&-; exec sleep 100"), None, &Limits::default()).unwrap();
        // Until the shell has closed it, writes may still land in the pipe.
        let end = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            match p.send_line(b"x\n", soon(1000)).await {
                Ok(()) => {}
                Err(BotError::InputClosed { .. }) => break,
                Err(e) => panic!("{e:?}"),
            }
            assert!(std::time::Instant::now() < end, "EPIPE never seen");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn a_descendant_that_leaves_the_group_is_killed_too() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!(
            "setsid sh -c 'echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 100' & exec sleep 100",
            pidfile.display()
        );
        let mut p = BotProcess::spawn(&sh(&script), None, &Limits::default()).unwrap();
        let token = p.token().to_string();
        let end = std::time::Instant::now() + Duration::from_secs(5);
        let escaped: u32 = loop {
            if let Ok(s) = std::fs::read_to_string(&pidfile) {
                break s.trim().parse().unwrap();
            }
            assert!(std::time::Instant::now() < end, "no grandchild");
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        assert!(process_alive(escaped));
        assert!(token_alive(&token));
        let pid = p.pid();
        p.shutdown(Duration::from_millis(50)).await;
        wait_group_gone(pid).await;
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while process_alive(escaped) || token_alive(&token) {
            assert!(std::time::Instant::now() < end, "escaped grandchild alive");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
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
