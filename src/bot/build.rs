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
use super::{sys, BotError, Launch, Quota, Sandbox};
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where a build learns of a stop signal: the signal seen, 0 while none
/// has come (`crate::host::stop_signals`).
pub type Stop = tokio::sync::watch::Receiver<i32>;

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
    /// A stop signal came while the build ran: it was killed, nothing kept.
    #[error("stopped by signal {signal} while it ran")]
    Interrupted { signal: i32 },
    #[error("{what}: over the build's quota of {} MiB and {} files and folders (`[sandbox] build_mb`, `build_files`; {how})\n{tail}", .quota.bytes >> 20, .quota.files)]
    OverQuota {
        what: String,
        quota: Quota,
        how: &'static str,
        tail: String,
    },
}

/// How a build's quota is kept, as its errors and the check report say
/// it: by the kernel (the sandbox's tmpfs), or checked after the build.
pub fn quota_kept(sandbox: Sandbox) -> &'static str {
    match sandbox {
        Sandbox::On => "a tmpfs of that size and inodes, kept by the kernel",
        Sandbox::Off => {
            "no kernel quota without the sandbox: the folder's size and files are checked after the build"
        }
    }
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
/// folder) in a fresh copy of that folder, for at most `limit`, or until
/// `stop` (where given) notes a signal; on success the copy replaces the
/// bot's built copy, and its path is returned.
pub fn build(launch: &Launch, limit: Duration, stop: Option<&Stop>) -> Result<PathBuf, BuildError> {
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
    sweep_left(&dest);
    let work = unique(&dest, "building");
    std::fs::create_dir_all(builds_root()).map_err(copy_err(&work))?;
    copy_tree(&folder, &work).map_err(copy_err(&work))?;
    let mut job = launch.clone();
    job.command.cwd = Some(work.clone());
    let quota = job.building.get_or_insert_with(Default::default).quota;
    let how = quota_kept(job.sandbox);
    let built = unique(&dest, "built");
    let outcome = run(&job, limit, stop).and_then(|folder| match folder {
        // The tmpfs the build wrote in: its files come out to the disk,
        // bounded again (hard links and sparse files count in full).
        Some(fd) => {
            let from = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
            let copied = copy_out(&from, &built, quota);
            drop(fd);
            copied.map_err(|what| BuildError::OverQuota {
                what,
                quota,
                how,
                tail: String::new(),
            })
        }
        // No sandbox, no tmpfs: the copy is measured after the build.
        None => match measure(&work, quota) {
            Ok(()) => std::fs::rename(&work, &built).map_err(copy_err(&built)),
            Err(what) => Err(BuildError::OverQuota {
                what,
                quota,
                how,
                tail: String::new(),
            }),
        },
    });
    let _ = std::fs::remove_dir_all(&work);
    if let Err(e) = outcome {
        let _ = std::fs::remove_dir_all(&built);
        return Err(e);
    }
    // The old copy is moved aside before the new one takes its name.
    let old = unique(&dest, "old");
    let had = std::fs::rename(&dest, &old).is_ok();
    let placed = std::fs::rename(&built, &dest);
    if had {
        let _ = std::fs::remove_dir_all(&old);
    }
    placed.map_err(copy_err(&dest))?;
    Ok(dest)
}

/// Removes the built copy of `folder` by `argv`, if there is one (its
/// version left the ladder, or a worker's cache evicts it).
pub fn remove_built(folder: &Path, argv: &[String]) {
    if let Some(at) = built(folder, argv) {
        let _ = std::fs::remove_dir_all(at);
    }
}

/// Deepest folder a build's output may nest.
const DEPTH_MAX: usize = 128;

/// Copies the build's output `from` (its tmpfs, through the descriptor's
/// path) to `to` (made): folders, regular files (modes without set-id
/// bits) and symbolic links, never more than `quota` in bytes (each file
/// in full, whatever it shares or skips) or in entries; what else it
/// made (FIFOs, sockets) is left out. What went wrong, if anything.
fn copy_out(from: &Path, to: &Path, quota: Quota) -> Result<(), String> {
    let mut left = (quota.bytes, quota.files);
    copy_bounded(from, to, &mut left, 0).map_err(|e| match e.kind() {
        std::io::ErrorKind::StorageFull => e.to_string(),
        _ => format!("its output could not be kept: {e}"),
    })
}

fn copy_bounded(
    from: &Path,
    to: &Path,
    left: &mut (u64, u64),
    depth: usize,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let full = |what: String| std::io::Error::new(std::io::ErrorKind::StorageFull, what);
    if depth > DEPTH_MAX {
        return Err(full(format!(
            "its output nests folders over {DEPTH_MAX} deep"
        )));
    }
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        left.1 = left
            .1
            .checked_sub(1)
            .ok_or_else(|| full("its output holds too many files and folders".into()))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_bounded(&src, &dst, left, depth + 1)?;
        } else if kind.is_file() {
            let mut input = std::fs::File::open(&src)?;
            let mut out = std::fs::File::create(&dst)?;
            let n = std::io::copy(&mut (&mut input).take(left.0 + 1), &mut out)?;
            left.0 = left
                .0
                .checked_sub(n)
                .ok_or_else(|| full("its output is too large".into()))?;
            let mode = entry.metadata()?.permissions().mode() & 0o777;
            out.set_permissions(std::fs::Permissions::from_mode(mode))?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        }
    }
    let mode = std::fs::metadata(from)?.permissions().mode() & 0o777;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
}

/// Checks a build's folder `dir` against `quota` after the build (where
/// no kernel keeps it): what is over, if anything.
fn measure(dir: &Path, quota: Quota) -> Result<(), String> {
    fn walk(dir: &Path, sum: &mut (u64, u64)) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            sum.1 += 1;
            if meta.is_dir() {
                walk(&entry.path(), sum)?;
            } else {
                sum.0 += std::os::unix::fs::MetadataExt::blocks(&meta) * 512;
            }
        }
        Ok(())
    }
    let mut sum = (0, 0);
    walk(dir, &mut sum).map_err(|e| format!("its folder could not be measured: {e}"))?;
    if sum.0 > quota.bytes || sum.1 > quota.files {
        return Err(format!(
            "its folder holds {} MiB in {} files and folders after the build",
            sum.0 >> 20,
            sum.1
        ));
    }
    Ok(())
}

/// The kinds of folder a build makes beside its built copy ([`unique`]).
const BESIDE: [&str; 3] = ["building", "built", "old"];

/// A name beside `dest` that no other build uses: `DEST.WHAT-HOST-PID-N`
/// (the host's name, so that a cache folder shared between machines
/// tells whose build made it).
fn unique(dest: &Path, what: &str) -> PathBuf {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = dest.as_os_str().to_os_string();
    name.push(format!(".{what}-{}-{}-{n}", host(), std::process::id()));
    PathBuf::from(name)
}

/// This machine's name as [`unique`] writes it in a file name.
fn host() -> String {
    crate::host::host_name()
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .collect()
}

/// Removes the folders beside `dest` ([`unique`]'s) that a build of this
/// machine left when its process was killed (`kill -9`, a power cut):
/// each could hold a build's whole quota. Those of a process still
/// running, or of another machine, are left alone.
fn sweep_left(dest: &Path) {
    let (Some(dir), Some(name)) = (dest.parent(), dest.file_name()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let name = name.to_string_lossy();
    let host = host();
    for e in entries.flatten() {
        let file = e.file_name();
        let file = file.to_string_lossy();
        let left = BESIDE.iter().find_map(|what| {
            let rest = file.strip_prefix(&format!("{name}.{what}-{host}-"))?;
            let (pid, n) = rest.split_once('-')?;
            n.parse::<u64>().ok()?;
            pid.parse::<u32>().ok()
        });
        if left.is_some_and(|pid| !crate::host::process_alive(pid)) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Copies the folder `from` to `to` (made): folders, files (with their
/// modes) and symbolic links as they are; sockets, FIFOs and devices are
/// left out.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    copy_into(from, to)?;
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

/// Starts the build `job`: its process, its sandbox, and in the sandbox
/// the tmpfs it builds in, filled with its folder's files by a thread of
/// ours while the child waits (see [`crate::bot::sandbox::Handoff`]).
fn start(
    job: &Launch,
    token: &str,
) -> Result<(std::process::Child, Option<Jail>, Option<OwnedFd>), BuildError> {
    let cmd = &job.command;
    let mut jail = match job.sandbox {
        Sandbox::Off => None,
        Sandbox::On => Some(Jail::new(job, token)?),
    };
    let cwd = cmd.cwd.clone().unwrap_or_default();
    let user = jail.as_ref().and_then(Jail::user);
    let handoff = jail.as_mut().and_then(Jail::take_handoff);
    let (theirs, filler) = match handoff {
        Some(h) => {
            let from = cwd.clone();
            let ours = h.ours;
            let filler = std::thread::spawn(move || fill(ours, &from, user));
            (Some(h.theirs), Some(filler))
        }
        None => (None, None),
    };
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
    let spawned = c.spawn();
    // The child has its end (or failed): ours goes, so that the filler
    // sees the end of the socket if the folder never comes.
    drop(theirs);
    let folder = match filler.map(|f| f.join()) {
        None => None,
        Some(Ok(Ok(folder))) => folder,
        Some(Ok(Err(source))) if source.kind() == std::io::ErrorKind::StorageFull => {
            return Err(BuildError::OverQuota {
                what: format!("its folder does not fit in the build's folder ({source})"),
                quota: job.building.map(|b| b.quota).unwrap_or_default(),
                how: quota_kept(job.sandbox),
                tail: String::new(),
            })
        }
        Some(Ok(Err(source))) => {
            return Err(BuildError::Copy {
                from: cwd.clone(),
                to: PathBuf::from("the build's tmpfs"),
                source,
            })
        }
        Some(Err(_)) => None,
    };
    let child = spawned.map_err(|source| BotError::Spawn {
        command: cmd.display(),
        source,
    })?;
    Ok((child, jail, folder))
}

/// The filler's side of the build's folder: takes the tmpfs's descriptor
/// from `sock`, copies the folder `from` into it (given to `user`, the
/// build's, when the referee is root), and says go; the descriptor, or
/// `None` when the child never sent it (it failed before).
fn fill(sock: OwnedFd, from: &Path, user: Option<(u32, u32)>) -> std::io::Result<Option<OwnedFd>> {
    let Some(folder) = receive_fd(&sock)? else {
        return Ok(None);
    };
    let at = PathBuf::from(format!("/proc/self/fd/{}", folder.as_raw_fd()));
    let filled = copy_into(from, &at).and_then(|()| match user {
        Some(u) => give_inside(&at, u),
        None => Ok(()),
    });
    let go: u8 = if filled.is_ok() { 1 } else { 0 };
    // SAFETY: one byte from the stack to a socket we own.
    unsafe { libc::write(sock.as_raw_fd(), (&go as *const u8).cast(), 1) };
    filled.map_err(|e| match e.raw_os_error() {
        Some(libc::ENOSPC) => std::io::Error::new(std::io::ErrorKind::StorageFull, e),
        _ => e,
    })?;
    Ok(Some(folder))
}

/// One descriptor received on `sock` (SCM_RIGHTS); `None` at its end.
fn receive_fd(sock: &OwnedFd) -> std::io::Result<Option<OwnedFd>> {
    use std::os::fd::FromRawFd;
    let mut byte = [0u8];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut room = [0u64; 8];
    // SAFETY: a zeroed msghdr pointing at our buffers; the kernel writes
    // at most msg_controllen bytes of control data into `room`.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = room.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&room) as _;
        let n = loop {
            let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break n;
            }
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let c = libc::CMSG_FIRSTHDR(&msg);
        if n == 0 || c.is_null() || (*c).cmsg_type != libc::SCM_RIGHTS {
            return Ok(None);
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>());
        Ok(Some(OwnedFd::from_raw_fd(fd)))
    }
}

/// Copies the folder `from` into the existing folder `to` (see
/// [`copy_tree`]).
fn copy_into(from: &Path, to: &Path) -> std::io::Result<()> {
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
    Ok(())
}

/// Gives what is inside `dir` (not `dir`) to `user` (see [`give`]).
fn give_inside(dir: &Path, user: (u32, u32)) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        match entry.file_type()?.is_dir() {
            true => give(&entry.path(), user)?,
            false => std::os::unix::fs::lchown(entry.path(), Some(user.0), Some(user.1))?,
        }
    }
    Ok(())
}

/// True when the build's tmpfs (`folder`) has no block or no inode left:
/// the build failed against its quota.
fn is_full(folder: &OwnedFd) -> bool {
    // SAFETY: fstatvfs fills a zeroed plain struct that we own.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        libc::fstatvfs(folder.as_raw_fd(), &mut st) == 0 && (st.f_bavail == 0 || st.f_favail == 0)
    }
}

/// Runs the build `job` to its end, or kills it at `limit`: the tmpfs it
/// built in when it ran in the sandbox.
fn run(job: &Launch, limit: Duration, stop: Option<&Stop>) -> Result<Option<OwnedFd>, BuildError> {
    let token = super::spawn::new_token();
    let (mut child, mut jail, folder) = start(job, &token)?;
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
    let (status, signal) = match wait(&mut child, Some(Instant::now() + limit), stop) {
        Waited::Exited(status) => (Some(status), 0),
        Waited::Stopped(signal) => (None, signal),
        Waited::Late | Waited::Failed(_) => (None, 0),
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
    if signal != 0 {
        return Err(BuildError::Interrupted { signal });
    }
    let tail = output.lock().map(|o| tail(&o)).unwrap_or_default();
    if status.is_none_or(|s| !s.success()) && folder.as_ref().is_some_and(is_full) {
        return Err(BuildError::OverQuota {
            what: "it filled its folder".into(),
            quota: job.building.map(|b| b.quota).unwrap_or_default(),
            how: quota_kept(job.sandbox),
            tail,
        });
    }
    match status {
        Some(s) if s.success() => Ok(folder),
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

/// How a child waited for by [`wait`] ended, or why the wait did.
#[derive(Debug)]
pub enum Waited {
    Exited(std::process::ExitStatus),
    /// Still running at the deadline.
    Late,
    /// Still running when the stop noted this signal.
    Stopped(i32),
    /// Its status could not be asked for.
    Failed(std::io::Error),
}

/// Waits for `child` to exit, until `deadline` (none: for good) or a
/// signal `stop` notes (where given), looking every 20 ms. The child is
/// left as it is: what to kill is the caller's.
pub fn wait(
    child: &mut std::process::Child,
    deadline: Option<Instant>,
    stop: Option<&Stop>,
) -> Waited {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Waited::Exited(status),
            Ok(None) if deadline.is_some_and(|d| Instant::now() >= d) => return Waited::Late,
            Ok(None) => match stop.map_or(0, |s| *s.borrow()) {
                0 => std::thread::sleep(Duration::from_millis(20)),
                signal => return Waited::Stopped(signal),
            },
            Err(e) => return Waited::Failed(e),
        }
    }
}

/// The last [`TAIL_LINES`] lines of `output` (a build's, or a command's
/// that failed: what its error shows), escaped as a bot's stderr is
/// ([`crate::protocol::escape_lines`]): no terminal escape sequence of
/// the build reaches the terminal.
pub fn tail(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.lines().rev().take(TAIL_LINES).collect();
    crate::protocol::escape_lines(&lines.into_iter().rev().collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A killed build's folders are swept before the next build of the
    /// bot; a running one's, another machine's and other names stay.
    #[test]
    fn folders_left_by_a_killed_build_of_this_machine_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("bot-0123");
        let me = std::process::id();
        // No process has a PID this high (the kernel's most is 2^22).
        let dead = 999_999_999;
        let h = host();
        let gone = [
            format!("bot-0123.building-{h}-{dead}-0"),
            format!("bot-0123.built-{h}-{dead}-3"),
            format!("bot-0123.old-{h}-{dead}-1"),
        ];
        let kept = [
            format!("bot-0123.building-{h}-{me}-0"),
            format!("bot-0123.building-{h}x-{dead}-0"),
            format!("bot-0123.building-{dead}-0"),
            format!("bot-0124.building-{h}-{dead}-0"),
            "bot-0123".to_string(),
        ];
        for d in gone.iter().chain(&kept) {
            std::fs::create_dir_all(dir.path().join(d).join("src")).unwrap();
        }
        sweep_left(&dest);
        for d in &gone {
            assert!(!dir.path().join(d).exists(), "{d} left");
        }
        for d in &kept {
            assert!(dir.path().join(d).exists(), "{d} swept");
        }
        // What `unique` names is what the sweep reads.
        let named = unique(&dest, "building");
        std::fs::create_dir_all(&named).unwrap();
        sweep_left(&dest);
        assert!(named.exists());
    }

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
    fn the_output_comes_out_bounded_hard_links_and_sparse_files_in_full() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("out");
        std::fs::create_dir_all(from.join("sub")).unwrap();
        std::fs::write(from.join("sub/one.bin"), vec![7u8; 1 << 20]).unwrap();
        std::fs::set_permissions(
            from.join("sub/one.bin"),
            std::fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
        let quota = Quota {
            bytes: 4 << 20,
            files: 50,
        };
        copy_out(&from, &dir.path().join("a"), quota).unwrap();
        let mode = std::fs::metadata(dir.path().join("a/sub/one.bin"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o755, "set-id bits are dropped");
        // Ten hard links of the same MiB take 1 MiB where they are, 10
        // once copied: over the quota.
        for i in 0..10 {
            std::fs::hard_link(from.join("sub/one.bin"), from.join(format!("l{i}"))).unwrap();
        }
        let err = copy_out(&from, &dir.path().join("b"), quota).unwrap_err();
        assert!(err.contains("too large"), "{err}");
        // A sparse file of 1 GiB likewise.
        let sparse = std::fs::File::create(dir.path().join("s")).unwrap();
        sparse.set_len(1 << 30).unwrap();
        let only = dir.path().join("sparse");
        std::fs::create_dir(&only).unwrap();
        std::fs::rename(dir.path().join("s"), only.join("s")).unwrap();
        let err = copy_out(&only, &dir.path().join("c"), quota).unwrap_err();
        assert!(err.contains("too large"), "{err}");
        // Too many entries.
        let many = dir.path().join("many");
        std::fs::create_dir(&many).unwrap();
        for i in 0..60 {
            std::fs::write(many.join(i.to_string()), "").unwrap();
        }
        let err = copy_out(&many, &dir.path().join("d"), quota).unwrap_err();
        assert!(err.contains("too many"), "{err}");
        // Without the sandbox, measured after the build.
        assert!(measure(&many, quota).unwrap_err().contains("60 files"));
        assert!(measure(&dir.path().join("a"), quota).is_ok());
    }

    #[test]
    fn the_tail_is_the_last_lines() {
        let out: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let t = tail(out.as_bytes());
        assert!(t.starts_with("line 25\n") && t.ends_with("line 39"), "{t}");
        // A build's escape sequences are shown, not obeyed.
        let t = tail(b"\x1b]0;PWNED\x07\x1b[2J\r\nok\n");
        assert_eq!(t, "\\u{1b}]0;PWNED\\u{7}\\u{1b}[2J\nok");
    }
}
