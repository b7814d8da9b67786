//! Starting a bot: its own process group, piped stdin and stdout, stderr
//! drained into a capped log, a token in its environment, and death with the
//! referee.

use super::{sys, BotError, BotProcess, Launch, Sandbox, StderrBudget, SANDBOX_ENV};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

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

impl BotProcess {
    /// Starts `launch.command` in its own process group. With a stderr log,
    /// stderr is appended to that file (at most `limits.stderr_cap` bytes
    /// kept); without one, stderr goes to `/dev/null`. Must be called inside
    /// a tokio runtime, from a long-lived thread (the parent-death signal
    /// follows the spawning thread).
    pub fn spawn(launch: &Launch) -> Result<BotProcess, BotError> {
        let Launch {
            command: cmd,
            stderr_log,
            limits,
            stderr_budget,
            sandbox,
            hidden,
        } = launch;
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
                        path: path.clone(),
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
        let token = new_token();
        let scratch = match sandbox {
            Sandbox::Off => None,
            Sandbox::On => {
                let dir = scratch_dir(&token).map_err(|source| BotError::Sandbox {
                    command: cmd.display(),
                    source,
                })?;
                c.env_clear();
                for k in SANDBOX_ENV {
                    if let Some(v) = std::env::var_os(k) {
                        c.env(k, v);
                    }
                }
                let home = super::view::SCRATCH_IN_VIEW;
                c.env("HOME", home).env("TMPDIR", home);
                Some(dir)
            }
        };
        for (k, v) in &cmd.env {
            c.env(k, v);
        }
        c.env(TOKEN_VAR, &token);
        // If the referee itself dies without cleaning up (kill -9, a crash),
        // the kernel kills the bot: no orphan keeps running. (Its own
        // children are reached by the group kill on every ordinary exit
        // path.)
        sys::die_with_parent(c.as_std_mut());
        // After die_with_parent: in the sandbox the bot's parent is not the
        // referee (see isolate).
        let cgroup = match &scratch {
            Some(dir) => {
                let tmp_bytes = limits.file_size_mb.saturating_mul(1 << 20);
                let view = super::view::plan(cmd, &dir.join("root"), tmp_bytes, hidden).map_err(
                    |source| {
                        let _ = std::fs::remove_dir_all(dir);
                        BotError::Sandbox {
                            command: cmd.display(),
                            source,
                        }
                    },
                )?;
                let cgroup = super::cgroup::Cgroup::create(&token, limits);
                let procs = cgroup.as_ref().map(|g| g.procs_files()).unwrap_or_default();
                // Without a memory cgroup, each process's data (heap and
                // private writable mappings) is bounded instead.
                let data = match cgroup {
                    Some(_) => None,
                    None => Some(limits.memory_mb.saturating_mul(1 << 20)),
                };
                sys::isolate(
                    c.as_std_mut(),
                    procs,
                    limits.file_size_mb.saturating_mul(1 << 20),
                    data,
                    view,
                );
                cgroup
            }
            None => None,
        };
        let mut child = c.spawn().map_err(|source| {
            if let Some(dir) = &scratch {
                let _ = std::fs::remove_dir_all(dir);
            }
            match sys::is_isolate_error(&source) && scratch.is_some() {
                true => BotError::Sandbox {
                    command: cmd.display(),
                    source,
                },
                false => BotError::Spawn {
                    command: cmd.display(),
                    source,
                },
            }
        })?;
        let pid = child.id().unwrap_or(0);
        let stdin = child.stdin.take();
        let stdout = match child.stdout.take() {
            Some(s) => s,
            None => {
                sys::kill_group(pid, libc::SIGKILL);
                return Err(BotError::Io(std::io::Error::other("no stdout pipe")));
            }
        };
        let stderr_seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let stderr_task = match (child.stderr.take(), log) {
            (Some(err), Some(file)) => Some(tokio::spawn(drain_stderr(
                err,
                tokio::fs::File::from_std(file),
                limits.stderr_cap,
                stderr_budget.clone(),
                stderr_seen.clone(),
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
            stderr_seen,
            token,
            scratch,
            cgroup,
        })
    }
}

/// Removes what sandboxed bots of runs that no longer live left behind
/// (a referee killed with SIGKILL cleans nothing up): their scratch folders
/// and empty cgroups, all named after the referee's pid.
pub fn sweep_leftovers() {
    let dead = |name: &str, prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| pid != std::process::id() && !crate::host::process_alive(pid))
    };
    if let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) {
        for e in dir.flatten() {
            if dead(&e.file_name().to_string_lossy(), "arena-scratch-") {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    super::cgroup::sweep(|name| dead(name, "arena-"));
}

/// A fresh folder for one sandboxed process, readable by it alone: `root/`,
/// where its root is built (its `/tmp` is a tmpfs of its own, in there).
fn scratch_dir(token: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = std::env::temp_dir().join(format!("arena-scratch-{token}"));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir.join("root"))?;
    Ok(dir)
}

/// Copies stderr into the log until EOF, keeping at most `cap` bytes of
/// this process and no more than `budget` allows; the rest is read and
/// discarded (a note in the log says so).
async fn drain_stderr(
    mut err: tokio::process::ChildStderr,
    mut log: tokio::fs::File,
    cap: u64,
    budget: Option<StderrBudget>,
    seen: std::sync::Arc<std::sync::atomic::AtomicU64>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut kept = 0u64;
    let mut open = true;
    loop {
        let n = match err.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        seen.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        if !open {
            continue;
        }
        let want = (n as u64).min(cap - kept);
        let take = match &budget {
            Some(b) => b.take(want),
            None => want,
        };
        if take > 0 && log.write_all(&buf[..take as usize]).await.is_err() {
            open = false;
            continue;
        }
        kept += take;
        if take < n as u64 {
            let why = if kept >= cap {
                "this process's stderr log cap is reached"
            } else {
                "this bot's stderr budget for the league is spent"
            };
            let note = format!("\n[arena: {why}; the rest is discarded]\n");
            let _ = log.write_all(note.as_bytes()).await;
            open = false;
        }
    }
    let _ = log.flush().await;
}
