//! Starting a bot: its own process group, piped stdin and stdout, stderr
//! drained into a capped log, a token in its environment, and death with the
//! referee.

use super::sandbox::{self, Jail};
use super::sink::LogSink;
use super::{sys, BotError, BotProcess, Launch, Sandbox};
use std::process::Stdio;
use tokio::io::{AsyncReadExt, BufReader};
use tokio::process::Command;

/// Environment variable set for every bot process (and so inherited by its
/// children): `ARENA_BOT_TOKEN=<referee pid>-<serial>`. Descendants that
/// leave the bot's process group (`setsid`, `setpgid`) are found by it and
/// killed with the group.
pub const TOKEN_VAR: &str = "ARENA_BOT_TOKEN";

/// Which of a bot's limits hold outside the sandbox ([`unsandboxed_limits`]),
/// as the `--sandbox off` and `sandbox = "off"` warnings say it.
pub const UNSANDBOXED_LIMITS: &str = "of their limits only the file size (file_size_mb, --file-size-mb: each file) and the memory as each process's data size (memory_mb, --memory-mb: a bot over it crashes) hold; processes and cpus do not";

/// Said after the stderr of a bot that could not start in its sandbox:
/// what it does not find there that it would outside (a file elsewhere, a
/// variable of the user's environment, a module beside its folder).
pub const SANDBOX_START_NOTE: &str = "in its sandbox a bot sees its own folder, its interpreter and the system's files only, read-only, with an environment of PATH, LANG, HOME, TMPDIR and its bot.toml's `env`: a file, variable or module it looks for elsewhere is not there (the same with `--sandbox off` tells whether that is why; docs/security.md, \"What a bot sees\")";

/// The rlimits a bot outside the sandbox gets (docs/security.md, "Limits
/// without the sandbox"): `RLIMIT_FSIZE` = `file_size_mb` and
/// `RLIMIT_DATA` = `memory_mb` (per process), within the shell's hard
/// limits. Not `RLIMIT_NPROC`: outside a user namespace it counts every
/// process of this user, the referee's and the other bots' included. A
/// build outside the sandbox is not limited so (a compiler may need more
/// than a bot's memory).
fn unsandboxed_limits(limits: &super::Limits) -> Vec<(libc::__rlimit_resource_t, u64)> {
    use super::sandbox::child::{data_size_limit, file_size_limit};
    vec![
        (libc::RLIMIT_FSIZE, file_size_limit(limits)),
        (libc::RLIMIT_DATA, data_size_limit(limits)),
    ]
}

pub(super) fn new_token() -> String {
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
    ///
    /// A program file "busy" (ETXTBSY) is tried again for a moment: a file
    /// just written (a bundle unpacked, a test's program) stays open for
    /// writing in any child another thread forked meanwhile, until that
    /// child execs.
    pub fn spawn(launch: &Launch) -> Result<BotProcess, BotError> {
        let mut tries = 0;
        loop {
            match Self::spawn_once(launch) {
                Err(BotError::Spawn { source, .. })
                    if source.raw_os_error() == Some(libc::ETXTBSY) && tries < 50 =>
                {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                r => return r,
            }
        }
    }

    fn spawn_once(launch: &Launch) -> Result<BotProcess, BotError> {
        let Launch {
            command: cmd,
            stderr_log,
            sandbox,
            ..
        } = launch;
        let log = stderr_log.as_deref().map(open_log).transpose()?;
        let token = new_token();
        let mut jail = match sandbox {
            Sandbox::Off => None,
            Sandbox::On => Some(Jail::new(launch, &token)?),
        };
        let mut c = match &jail {
            Some(j) => Command::new(j.program()),
            None => Command::new(&cmd.program),
        };
        c.args(&cmd.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if log.is_some() || launch.capture.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true);
        if let Some(dir) = &cmd.cwd {
            c.current_dir(dir);
        }
        // Before the sandbox's own set-up: in the sandbox, the bot's parent
        // is not the referee (see sandbox::child::isolate).
        //
        // A session of its own, no inherited descriptor, no core dump; and
        // if the referee itself dies without cleaning up (kill -9, a
        // crash), the kernel kills the bot: no orphan keeps running. (Its
        // own children are reached by the group kill on every ordinary exit
        // path.)
        sys::start_clean(c.as_std_mut());
        if *sandbox == Sandbox::Off && launch.building.is_none() {
            sys::limit_at_exec(c.as_std_mut(), unsandboxed_limits(&launch.limits));
        }
        if let Some(j) = jail.as_mut() {
            j.apply(c.as_std_mut());
        }
        for (k, v) in &cmd.env {
            c.env(k, v);
        }
        c.env(TOKEN_VAR, &token);
        let child = c.spawn().map_err(|source| {
            // On failure, `jail` is dropped: its scratch folder with it.
            // A missing working folder fails as a missing program does:
            // told apart here, where it failed.
            let no_folder = cmd
                .cwd
                .as_ref()
                .filter(|d| source.kind() == std::io::ErrorKind::NotFound && !d.is_dir());
            if let Some(dir) = no_folder {
                return BotError::NoFolder {
                    command: cmd.display(),
                    dir: std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
                };
            }
            // A script found, whose `#!` interpreter was not: said so,
            // not "no such file" of a file that is there.
            if source.kind() == std::io::ErrorKind::NotFound {
                if let Some((interpreter, crlf)) =
                    super::error::script_interpreter(&cmd.program, cmd.cwd.as_deref())
                {
                    return BotError::Interpreter {
                        command: cmd.display(),
                        on_host: std::path::Path::new(&interpreter).is_file(),
                        interpreter,
                        crlf,
                    };
                }
                // A link to nothing, a binary whose loader is missing:
                // exec's "no such file" of a file that `ls` shows.
                if let Some(why) = super::error::not_found_why(&cmd.program, cmd.cwd.as_deref()) {
                    return BotError::Spawn {
                        command: cmd.display(),
                        source: std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            format!("{source}: {why}"),
                        ),
                    };
                }
            }
            // A folder named as the program: exec says EACCES, which
            // reads as a file without its execute bit; said as it is.
            if source.kind() == std::io::ErrorKind::PermissionDenied {
                if let Some(folder) = super::error::program_folder(&cmd.program, cmd.cwd.as_deref())
                {
                    return BotError::Spawn {
                        command: cmd.display(),
                        source: super::error::folder_not_program(&folder),
                    };
                }
            }
            match sandbox::is_isolate_error(&source) && jail.is_some() {
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
        BotProcess::started(child, jail, token, log, launch)
    }

    /// A bot process just spawned: its pipes taken, its stderr drained to
    /// `log` (when kept) under the launch's limits, and kept in memory
    /// when captured ([`Launch::capture`]).
    fn started(
        mut child: tokio::process::Child,
        jail: Option<Jail>,
        token: String,
        log: Option<std::fs::File>,
        launch: &Launch,
    ) -> Result<BotProcess, BotError> {
        let Launch {
            limits,
            stderr_budget,
            ponder,
            capture,
            ..
        } = launch;
        let pid = child.id().unwrap_or(0);
        let stdin = child.stdin.take().map(super::stdin::Input::new);
        let stdout = match child.stdout.take() {
            Some(s) => s,
            None => {
                sys::kill_group(pid, libc::SIGKILL);
                return Err(BotError::Io(std::io::Error::other("no stdout pipe")));
            }
        };
        let stderr_seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let sink = log.map(|file| {
            LogSink::new(
                tokio::fs::File::from_std(file),
                limits.stderr_cap,
                stderr_budget.clone(),
            )
        });
        let mut captured = None;
        let stderr_task = match (child.stderr.take(), sink, *capture) {
            (Some(err), sink, Some(cap)) => {
                let c = match super::capture::Capture::new(err, cap, sink.is_some()) {
                    Ok(c) => c,
                    Err(e) => {
                        sys::kill_group(pid, libc::SIGKILL);
                        return Err(BotError::Io(e));
                    }
                };
                captured = Some(c.clone());
                let seen = stderr_seen.clone();
                Some(tokio::spawn(super::capture::drain_captured(c, sink, seen)))
            }
            (Some(err), Some(sink), None) => {
                Some(tokio::spawn(drain_stderr(err, sink, stderr_seen.clone())))
            }
            _ => None,
        };
        Ok(BotProcess {
            child,
            pid,
            stdin,
            stdout: BufReader::with_capacity(16 * 1024, super::stdout::Stdout::new(stdout)),
            line: Vec::with_capacity(256),
            overflow: false,
            line_done: false,
            max_line: limits.max_line,
            exited: None,
            stdout_eof: false,
            stderr_task,
            stderr_seen,
            capture: captured,
            token,
            jail,
            ponder: *ponder,
            pausing: Default::default(),
            main_pid: None,
        })
    }
}

/// The bot's stderr log at `path`, opened to append (its folder made).
fn open_log(path: &std::path::Path) -> Result<std::fs::File, BotError> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| BotError::Log {
            path: path.to_path_buf(),
            source,
        })
}

/// Removes what sandboxed bots of runs that no longer live left behind
/// (a referee killed with SIGKILL cleans nothing up): their scratch folders
/// and empty cgroups, all named after the referee's pid.
pub fn sweep_leftovers() {
    sandbox::sweep_leftovers(|name: &str, prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| pid != std::process::id() && !crate::host::process_alive(pid))
    });
}

/// Copies stderr into the log until EOF (see [`LogSink`]).
async fn drain_stderr(
    mut err: tokio::process::ChildStderr,
    mut log: LogSink,
    seen: std::sync::Arc<std::sync::atomic::AtomicU64>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match err.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        seen.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        log.write(&buf[..n]).await;
    }
    log.flush().await;
}
