//! A bot's build (a bot.toml's `build`), run as its author's code, which
//! it is: in the sandbox, as the bot will run, but in a copy of the bot's
//! folder that the build may write (and nothing else), with the network
//! only where the league allows it, the bot's limits and a time limit.
//! The bot then runs from that built copy, read-only; its own folder is
//! never written (docs/security.md, "Builds").
//!
//! Built copies live in [`builds_root`], one per bot folder and build
//! command, so that every command that starts the bot later (`run`,
//! `replay`, `play`, `check-bot`) finds the same one ([`built`]).

use super::sandbox::Jail;
use super::{sys, BotError, Launch, Sandbox};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Lines of a failed build's output given in its error.
const TAIL_LINES: usize = 15;
/// Bytes of a build's output kept (the last ones).
const KEPT_OUTPUT: usize = 64 * 1024;

/// Why a build did not give a built copy.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("cannot copy {from} to the build folder {to}: {source}")]
    Copy {
        from: PathBuf,
        to: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Start(#[from] BotError),
    #[error("{status}\n{tail}")]
    Failed { status: String, tail: String },
    #[error("stopped after {limit_s} s, the build time limit (`[sandbox] build_seconds`)\n{tail}")]
    TimedOut { limit_s: u64, tail: String },
}

/// Where built copies are kept: `$XDG_CACHE_HOME/mancala-arena/builds`,
/// else `~/.cache/mancala-arena/builds`, else under the temporary folder.
pub fn builds_root() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("mancala-arena").join("builds")
}

/// The built copy of `folder` by the build command `argv`, if one was made.
pub fn built(folder: &Path, argv: &[String]) -> Option<PathBuf> {
    let at = copy_path(folder, argv)?;
    at.is_dir().then_some(at)
}

/// Where the built copy of `folder` by `argv` goes: named after the
/// folder, and a hash of its canonical path and the command.
fn copy_path(folder: &Path, argv: &[String]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let folder = folder.canonicalize().ok()?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let words =
        std::iter::once(folder.as_os_str().as_bytes()).chain(argv.iter().map(|a| a.as_bytes()));
    for w in words {
        for &b in w.iter().chain(&[0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    let name = folder
        .file_name()
        .map_or_else(|| "bot".into(), |n| n.to_string_lossy().into_owned());
    Some(builds_root().join(format!("{name}-{h:016x}")))
}

/// Runs the build `launch` (its command the build's, its `cwd` the bot's
/// folder) in a fresh copy of that folder, for at most `limit`; on success
/// the copy replaces the bot's built copy, and its path is returned.
pub fn build(launch: &Launch, limit: Duration) -> Result<PathBuf, BuildError> {
    let folder = launch
        .command
        .cwd
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let argv = launch.command.argv();
    let copy_err = |to: &Path| {
        let (from, to) = (folder.clone(), to.to_path_buf());
        move |source| BuildError::Copy { from, to, source }
    };
    let dest = copy_path(&folder, &argv).ok_or_else(|| BuildError::Copy {
        from: folder.clone(),
        to: builds_root(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such bot folder"),
    })?;
    let work = unique(&dest, "building");
    std::fs::create_dir_all(builds_root()).map_err(copy_err(&work))?;
    copy_tree(&folder, &work).map_err(copy_err(&work))?;
    let mut job = launch.clone();
    job.command.cwd = Some(work.clone());
    job.building.get_or_insert_with(Default::default);
    let outcome = run(&job, limit);
    if let Err(e) = outcome {
        let _ = std::fs::remove_dir_all(&work);
        return Err(e);
    }
    // The old copy is moved aside before the new one takes its name.
    let old = unique(&dest, "old");
    let had = std::fs::rename(&dest, &old).is_ok();
    let placed = std::fs::rename(&work, &dest);
    if had {
        let _ = std::fs::remove_dir_all(&old);
    }
    placed.map_err(copy_err(&dest))?;
    Ok(dest)
}

/// A name beside `dest` that no other build uses.
fn unique(dest: &Path, what: &str) -> PathBuf {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = dest.as_os_str().to_os_string();
    name.push(format!(".{what}-{}-{n}", std::process::id()));
    PathBuf::from(name)
}

/// Copies the folder `from` to `to` (made): folders, files (with their
/// modes) and symbolic links as they are; sockets, FIFOs and devices are
/// left out.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        }
    }
    let mode = std::fs::metadata(from)?.permissions();
    std::fs::set_permissions(to, mode)
}

/// Gives every entry under `dir` to `uid`:`gid` (the build's user outside,
/// when the referee runs as root).
fn give(dir: &Path, (uid, gid): (u32, u32)) -> std::io::Result<()> {
    std::os::unix::fs::lchown(dir, Some(uid), Some(gid))?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        match entry.file_type()?.is_dir() {
            true => give(&entry.path(), (uid, gid))?,
            false => std::os::unix::fs::lchown(entry.path(), Some(uid), Some(gid))?,
        }
    }
    Ok(())
}

/// Runs the build `job` to its end, or kills it at `limit`.
fn run(job: &Launch, limit: Duration) -> Result<(), BuildError> {
    let token = super::spawn::new_token();
    let cmd = &job.command;
    let mut jail = match job.sandbox {
        Sandbox::Off => None,
        Sandbox::On => Some(Jail::new(job, &token)?),
    };
    let cwd = cmd.cwd.clone().unwrap_or_default();
    if let Some(user) = jail.as_ref().and_then(Jail::user) {
        give(&cwd, user).map_err(|source| BuildError::Copy {
            from: cwd.clone(),
            to: cwd.clone(),
            source,
        })?;
    }
    let mut c = std::process::Command::new(match &jail {
        Some(j) => j.program(),
        None => Path::new(&cmd.program),
    });
    c.args(&cmd.args)
        .current_dir(&cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    sys::start_clean(&mut c);
    if let Some(j) = jail.as_mut() {
        j.apply(&mut c);
    }
    c.envs(cmd.env.iter().map(|(k, v)| (k, v)));
    let mut child = c.spawn().map_err(|source| BotError::Spawn {
        command: cmd.display(),
        source,
    })?;
    let output = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|mut r| {
        let out = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n @ 1..) = r.read(&mut buf) {
                if let Ok(mut o) = out.lock() {
                    o.extend_from_slice(&buf[..n]);
                    let over = o.len().saturating_sub(KEPT_OUTPUT);
                    o.drain(..over);
                }
            }
        })
    })
    .collect();
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => break None,
        }
    };
    // Whatever it left running goes: its group, and in the sandbox its
    // whole PID namespace with its first process.
    sys::kill_group(child.id(), libc::SIGKILL);
    let _ = child.kill();
    let _ = child.wait();
    for r in readers {
        let _ = r.join();
    }
    if let Some(j) = jail.as_mut() {
        j.release(true);
    }
    let tail = output.lock().map(|o| tail(&o)).unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(()),
        Some(s) => Err(BuildError::Failed {
            status: s.to_string(),
            tail,
        }),
        None => Err(BuildError::TimedOut {
            limit_s: limit.as_secs(),
            tail,
        }),
    }
}

/// The last [`TAIL_LINES`] lines of `output` (a build's, or a command's
/// that failed: what its error shows).
pub fn tail(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.lines().rev().take(TAIL_LINES).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_keeps_files_modes_and_links_and_leaves_fifos_out() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("bot");
        std::fs::create_dir_all(from.join("src")).unwrap();
        std::fs::write(from.join("src/a.c"), "int x;").unwrap();
        std::fs::write(from.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(from.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::os::unix::fs::symlink("src/a.c", from.join("link")).unwrap();
        let fifo = std::ffi::CString::new(from.join("pipe").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let to = dir.path().join("copy");
        copy_tree(&from, &to).unwrap();
        assert_eq!(
            std::fs::read_to_string(to.join("src/a.c")).unwrap(),
            "int x;"
        );
        let mode = std::fs::metadata(to.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(
            std::fs::read_link(to.join("link")).unwrap(),
            Path::new("src/a.c")
        );
        assert!(!to.join("pipe").exists());
    }

    #[test]
    fn each_folder_and_command_has_its_own_copy() {
        let dir = tempfile::tempdir().unwrap();
        let a = copy_path(dir.path(), &["make".into()]).unwrap();
        let b = copy_path(dir.path(), &["make".into(), "all".into()]).unwrap();
        assert_ne!(a, b);
        assert_eq!(a, copy_path(dir.path(), &["make".into()]).unwrap());
        assert!(copy_path(&dir.path().join("missing"), &[]).is_none());
    }

    #[test]
    fn the_tail_is_the_last_lines() {
        let out: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let t = tail(out.as_bytes());
        assert!(t.starts_with("line 25\n") && t.ends_with("line 39"), "{t}");
    }
}
