//! Containment: ending a bot and everything it started. The process group
//! is killed as a whole; descendants that left it are found by the token in
//! their environment; the leader is reaped.

use super::{sys, BotProcess, PAUSE_AFTER, PAUSE_BETWEEN_GAMES, RAN_PAUSED_LIMIT, TOKEN_VAR};
use crate::host::process_alive;
use std::process::ExitStatus;
use std::time::Duration;

pub use super::sys::kill_group;

impl BotProcess {
    /// The exit status, if the process is known to have exited.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            if let Ok(Some(s)) = self.child.try_wait() {
                self.exited = Some(s);
            }
        }
        self.exited
    }

    /// The exit status, waiting up to `grace` for it: for a process that
    /// closed its stdout and is on its way out.
    pub async fn exit_status_within(&mut self, grace: Duration) -> Option<ExitStatus> {
        if self.exit_status().is_none() {
            if let Ok(Ok(s)) = tokio::time::timeout(grace, self.child.wait()).await {
                self.exited = Some(s);
            }
        }
        self.exited
    }

    /// True when the leader process has exited (even if nobody has reaped
    /// it yet). Does not reap it, so it works through `&self`.
    pub fn has_exited(&self) -> bool {
        if self.exited.is_some() || self.stdout_eof {
            return true;
        }
        sys::child_has_exited(self.pid)
    }

    /// Stops every process of the bot (SIGSTOP to its process group, which
    /// none of its processes can leave in the sandbox) until
    /// [`BotProcess::resume`], so that it uses no CPU while another bot
    /// thinks. `force`: now; else only when the bot's main process is
    /// idle (asleep: waiting for its next message), so that a bot is not
    /// stopped halfway through writing. True when it is paused, may
    /// ponder, or has exited.
    pub fn pause(&mut self, force: bool) -> bool {
        if self.ponder || self.has_exited() {
            return true;
        }
        let main = self.main_pid();
        let mut state = self.pausing.lock().unwrap_or_else(|e| e.into_inner());
        state.stop(self.pid, main, force)
    }

    /// Pauses the bot in the background, unless a line is sent to it
    /// first: for a bot between games, whose processes must not run while
    /// other games are played. From [`PAUSE_AFTER`] on, as soon as its main
    /// process is idle, and by force after [`PAUSE_BETWEEN_GAMES`]: a bot
    /// may exit after `game_end` (it is then restarted without charge,
    /// protocol.md), and is given that long to; one busy for longer
    /// (spinning between games) would take the CPU of other games.
    pub fn pause_later(&mut self) {
        if self.ponder || self.has_exited() {
            return;
        }
        let main = self.main_pid();
        let pid = self.pid;
        let pausing = self.pausing.clone();
        let generation = pausing.lock().map(|s| s.generation).unwrap_or(0);
        tokio::spawn(async move {
            tokio::time::sleep(PAUSE_AFTER).await;
            let force_at = tokio::time::Instant::now() + PAUSE_BETWEEN_GAMES;
            loop {
                {
                    let mut state = pausing.lock().unwrap_or_else(|e| e.into_inner());
                    if state.generation != generation {
                        return;
                    }
                    match main.and_then(|m| state.main_state(m)) {
                        // Gone, or on its way out.
                        None | Some('Z' | 'X') => return,
                        Some('S') => {
                            state.stop_now(pid, main);
                            return;
                        }
                        Some(_) if tokio::time::Instant::now() >= force_at => {
                            state.stop_now(pid, main);
                            return;
                        }
                        Some(_) => {}
                    }
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        });
    }

    /// The bot's main process: in the sandbox, the only child of the
    /// only child (its namespace's init) of the keeper (the process the
    /// referee started).
    fn main_pid(&mut self) -> Option<u32> {
        if self.main_pid.is_none() {
            self.main_pid = match self.jail.is_some() {
                true => crate::host::first_child(self.pid).and_then(crate::host::first_child),
                false => Some(self.pid),
            };
        }
        self.main_pid
    }

    /// Lets a paused bot run again (SIGCONT to its process group), and
    /// calls off a pause to come; every line sent to the bot does this
    /// first.
    pub fn resume(&mut self) {
        let mut state = self.pausing.lock().unwrap_or_else(|e| e.into_inner());
        state.generation += 1;
        if state.paused {
            state.note_cpu_since_stop();
            kill_group(self.pid, libc::SIGCONT);
            state.paused = false;
        }
    }

    /// The CPU time the bot's main process used while it was paused, once
    /// it is more than [`RAN_PAUSED_LIMIT`] (then counted from zero again):
    /// a stopped process uses none, so it arranged a SIGCONT for itself (a
    /// POSIX timer's signal, a signal on its descriptors' events) to think
    /// on another's turn or between its games. Its children's time is not
    /// seen (docs/security.md).
    pub fn ran_while_paused(&mut self) -> Option<Duration> {
        let mut state = self.pausing.lock().unwrap_or_else(|e| e.into_inner());
        (state.ran_paused > RAN_PAUSED_LIMIT).then(|| {
            let ticks = std::mem::take(&mut state.ran_paused);
            crate::host::CLOCK_TICK * u32::try_from(ticks).unwrap_or(u32::MAX)
        })
    }

    /// Ends the process: closes its stdin, waits up to `grace` for it to
    /// exit, then SIGTERMs its group, waits `grace` again, and SIGKILLs the
    /// group (always, so that children it left behind die too). Returns the
    /// leader's exit status when known.
    pub async fn shutdown(&mut self, grace: Duration) -> Option<ExitStatus> {
        // A paused bot could not exit by itself.
        self.resume();
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
        self.remove_scratch();
        if let Some(t) = self.stderr_task.take() {
            // The group is dead, so stderr reaches EOF unless a process
            // outside the group holds it; do not wait for that.
            let _ = tokio::time::timeout(grace, t).await;
        }
        self.exited
    }

    /// Kills the whole process group at once (SIGKILL), and every process
    /// carrying this bot's token outside the sandbox, without waiting.
    pub fn kill(&mut self) {
        self.kill_all();
        self.stdin = None;
    }

    /// Gives back the sandbox's share (see [`super::sandbox::Jail::release`]).
    fn remove_scratch(&mut self) {
        let exited = self.exited.is_some();
        if let Some(j) = self.jail.as_mut() {
            j.release(exited);
        }
    }

    /// SIGKILLs the group, and outside the sandbox every process carrying
    /// the token. In the sandbox the token's scan of every process in
    /// /proc (two reads each) is not needed: the bot is in a PID namespace
    /// of its own, which no descendant can leave, and the kernel kills
    /// every process of a namespace when its init dies (from the group's
    /// SIGKILL, from its keeper's death, its parent-death signal, or as
    /// it exits after the bot: `sandbox/child.rs`).
    pub(super) fn kill_all(&self) {
        kill_group(self.pid, libc::SIGKILL);
        if self.jail.is_none() {
            kill_tokened(&self.token);
        }
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        // The group outlives its leader while any member lives; killing it
        // here reaches grandchildren that `kill_on_drop` would miss. The
        // leader itself is reaped by tokio's orphan queue.
        self.kill_all();
        self.remove_scratch();
        if let Some(t) = self.stderr_task.take() {
            t.abort();
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
            sys::kill(pid, libc::SIGKILL);
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

impl super::Pausing {
    /// Stops the process group `pid` (SIGSTOP) unless it is stopped
    /// already: at once with `force`, else only when its main process
    /// `main` is idle. True when it is stopped.
    fn stop(&mut self, pid: u32, main: Option<u32>, force: bool) -> bool {
        if !self.paused && (force || main.is_some_and(|m| self.main_state(m) == Some('S'))) {
            self.stop_now(pid, main);
        }
        self.paused
    }

    /// Stops the process group `pid` (SIGSTOP), noting the main
    /// process's CPU time (when its stat file is open).
    fn stop_now(&mut self, pid: u32, main: Option<u32>) {
        kill_group(pid, libc::SIGSTOP);
        self.paused = true;
        if let Some(main) = main {
            self.open_stat(main);
        }
        self.cpu_at_stop = self.main_cpu();
    }

    /// At a resume: adds the CPU time the main process used since it was
    /// stopped to [`Pausing::ran_paused`](super::Pausing).
    fn note_cpu_since_stop(&mut self) {
        let Some(before) = self.cpu_at_stop.take() else {
            return;
        };
        if let Some(now) = self.main_cpu() {
            self.ran_paused += now.saturating_sub(before);
        }
    }

    /// The main process's CPU time now (clock ticks), read through its
    /// stat file kept open; `None` if it is not open or the process is
    /// gone.
    fn main_cpu(&self) -> Option<u64> {
        let mut buf = [0u8; 512];
        crate::host::cpu_ticks_in_stat(self.read_stat(&mut buf)?)
    }

    /// The start of the main process's /proc/PID/stat, as much as `buf`
    /// holds, read through the file kept open (one system call).
    fn read_stat<'b>(&self, buf: &'b mut [u8]) -> Option<&'b [u8]> {
        use std::os::unix::fs::FileExt;
        let n = self.stat.as_ref()?.read_at(buf, 0).ok()?;
        Some(&buf[..n])
    }

    /// Opens the main process `main`'s /proc/PID/stat once, to be kept.
    fn open_stat(&mut self, main: u32) {
        if self.stat.is_none() {
            self.stat = std::fs::File::open(format!("/proc/{main}/stat")).ok();
        }
    }

    /// The state letter of the bot's main process `main` (`S`: asleep,
    /// waiting for its next message), read through its /proc/PID/stat
    /// kept open; `None` once it is gone (a read of the stat of a reaped
    /// process fails, so a later process given the same pid is never
    /// taken for it).
    fn main_state(&mut self, main: u32) -> Option<char> {
        self.open_stat(main);
        // The state is within the first few dozen bytes: after the pid
        // and the command name, at most 16 bytes long.
        let mut buf = [0u8; 128];
        crate::host::state_in_stat(self.read_stat(&mut buf)?)
    }
}

/// True while any process carrying `token` lives (see [`TOKEN_VAR`]).
pub fn token_alive(token: &str) -> bool {
    !tokened_pids(format!("{TOKEN_VAR}={token}\0").as_bytes()).is_empty()
}

/// True while any live (non-zombie) process belongs to process group
/// `pgid` (Linux: reads /proc). Used by the tests to prove nothing is left.
pub fn group_alive(pgid: u32) -> bool {
    crate::host::group_processes(pgid)
        .iter()
        .any(|(_, state)| !matches!(state, 'Z' | 'X'))
}
