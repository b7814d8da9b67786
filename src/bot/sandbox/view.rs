//! What a sandboxed bot sees of the file system: a root of its own, built
//! for each process before it starts (docs/security.md, "What a bot sees").
//!
//! The organiser decides it, never the bot: the system folders (`/usr`,
//! `/etc` less its secrets, `/opt`, `/bin`, `/lib` and the like); the bot's
//! own folder; the installation of the one program its command starts, as
//! the organiser's `PATH` resolves it (an interpreter's prefix, a pyenv or
//! nvm version folder; a program alone where it has none); and what the
//! league file lists under `[sandbox] expose`. All read-only. Command
//! arguments and `env` values reach the bot as written but never widen
//! the view: [`outside_arguments`] finds the arguments that name a file the
//! bot would not see, for the caller to refuse before any game.
//!
//! Writable: `/tmp`, a tmpfs of the process's own (at most `file_size_mb`,
//! in memory, gone with it), also its `HOME` and `TMPDIR`. Besides: a
//! `/proc` of its own PID namespace without the host-wide files
//! ([`PROC_MASKED`], [`PROC_EMPTIED`]), its host-wide counters replaced by
//! the bot's own values ([`proc_replaced`]: no channel between two bots
//! through them), `/proc/sys` read-only, and the devices `null`, `zero`,
//! `full`, `random`, `urandom`. What is mounted over a masked path comes
//! from a tmpfs of the bot's own (`child::OwnFiles`), so that its mount
//! table names no host path but those it is shown.
//!
//! Never shown: sockets, FIFOs and device files inside shown folders (an
//! empty file is mounted over each); files under `/etc` that are not
//! world-readable, and the system's secrets ([`ETC_SECRETS`]); the folders
//! the caller hides (the league's results), as an empty folder. Symbolic
//! links are shown as they are and resolve inside the bot's root, where
//! only what is shown exists: a link that leads out of the view dangles.
//!
//! Everything is planned here, in ordinary code, before the fork; the
//! child only replays the plan (`child::RootPlan`).

use super::child::{self, MountStep, RootPlan};
use crate::bot::launch::BotCommand;
use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The system folders every bot sees, read-only (those that exist).
pub const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Files and folders under `/etc` that are never shown, whatever their
/// mode (besides everything there that is not world-readable).
pub const ETC_SECRETS: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "security/opasswd",
    "ssl/private",
];

/// Host-wide files of `/proc` that a bot's own `/proc` does not show (an
/// empty file is mounted over each): CPU, memory and I/O statistics of the
/// whole machine, kernel symbols and timers.
pub const PROC_MASKED: &[&str] = &[
    "stat",
    "loadavg",
    "uptime",
    "diskstats",
    "vmstat",
    "interrupts",
    "softirqs",
    "schedstat",
    "zoneinfo",
    "buddyinfo",
    "pagetypeinfo",
    "slabinfo",
    "kallsyms",
    "timer_list",
    "sched_debug",
    "keys",
    "key-users",
    "swaps",
    "partitions",
    "sysrq-trigger",
    "kcore",
    "locks",
];

/// Host-wide folders of `/proc` that a bot's own `/proc` shows empty (an
/// empty read-only tmpfs is mounted over each): the machine's pressure
/// stall figures (`pressure/cpu`, `memory`, `io`), the file systems'
/// statistics (`fs/ext4/*/mb_groups`: its free blocks), the quota
/// counters.
pub const PROC_EMPTIED: &[&str] = &["pressure", "fs", "sys/fs/quota"];

/// The host-wide counters of `/proc` that a bot's own `/proc` replaces with
/// values of its own (a read-only file mounted over each), each with its
/// content: what one bot does to them (open descriptors, make inodes and
/// dentries, take memory) would be seen by another running at the same
/// time, a channel between the two. `meminfo` states the bot's memory
/// limit (`memory_bytes`), as lxcfs does, as its total, free and available
/// memory (the host's total where that is less); the rest are constants
/// (no descriptor, inode or dentry in use; `file-nr` keeps the host's
/// `file-max`, a setting; `entropy_avail` is 256 on every kernel since
/// 5.18). None changes while the bot runs.
pub fn proc_replaced(memory_bytes: u64) -> Vec<(&'static str, Vec<u8>)> {
    let setting = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    let host_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(u64::MAX);
    let file_max = setting("/proc/sys/fs/file-max").unwrap_or(i64::MAX as u64);
    vec![
        ("meminfo", meminfo((memory_bytes / 1024).min(host_kb))),
        ("sys/fs/file-nr", format!("0\t0\t{file_max}\n").into_bytes()),
        ("sys/fs/inode-nr", b"0\t0\n".to_vec()),
        ("sys/fs/inode-state", b"0\t0\t0\t0\t0\t0\t0\n".to_vec()),
        ("sys/fs/dentry-state", b"0\t0\t45\t0\t0\t0\n".to_vec()),
        ("sys/fs/aio-nr", b"0\n".to_vec()),
        ("sys/kernel/pty/nr", b"0\n".to_vec()),
        ("sys/kernel/random/entropy_avail", b"256\n".to_vec()),
    ]
}

/// A `/proc/meminfo` of `total_kb` kB, all of it free and available, no
/// swap, nothing cached (the fields that programs read, in the kernel's
/// layout).
fn meminfo(total_kb: u64) -> Vec<u8> {
    let mut out = String::new();
    for (key, kb) in [
        ("MemTotal:", total_kb),
        ("MemFree:", total_kb),
        ("MemAvailable:", total_kb),
        ("Buffers:", 0),
        ("Cached:", 0),
        ("SwapCached:", 0),
        ("Active:", 0),
        ("Inactive:", 0),
        ("Active(anon):", 0),
        ("Inactive(anon):", 0),
        ("Active(file):", 0),
        ("Inactive(file):", 0),
        ("Unevictable:", 0),
        ("Mlocked:", 0),
        ("SwapTotal:", 0),
        ("SwapFree:", 0),
        ("Dirty:", 0),
        ("Writeback:", 0),
        ("AnonPages:", 0),
        ("Mapped:", 0),
        ("Shmem:", 0),
        ("Slab:", 0),
        ("SReclaimable:", 0),
        ("SUnreclaim:", 0),
        ("CommitLimit:", total_kb),
        ("Committed_AS:", 0),
    ] {
        out.push_str(&format!("{key:<16}{kb:>8} kB\n"));
    }
    out.push_str(
        "HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n",
    );
    out.into_bytes()
}

/// The devices every bot may open.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// Where the bot's scratch folder appears, as `HOME` and `TMPDIR`.
pub const SCRATCH_IN_VIEW: &str = "/tmp";

/// `PATH` inside the sandbox after the program's own `bin` (if any).
const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Most entries walked in one shown folder to find the sockets, FIFOs and
/// devices to hide; a larger folder is refused (keep bots small).
const WALK_MAX: usize = 200_000;

/// The view of one sandboxed process, ready for the child.
#[derive(Debug)]
pub struct Planned {
    pub plan: RootPlan,
    /// The program to execute: the one the organiser's `PATH` resolves
    /// the command's first word to (its real file), or the word itself
    /// when nothing does (the exec then fails as it would outside).
    pub program: PathBuf,
    /// `PATH` inside: the program's installation's `bin`, then the
    /// system's.
    pub path: OsString,
}

/// What the view shows before it becomes mount steps.
#[derive(Default)]
struct Shown {
    /// Folders shown read-only at their own path (canonical).
    dirs: Vec<PathBuf>,
    /// Files shown read-only at their own path (canonical).
    files: Vec<PathBuf>,
    /// Paths inside shown folders with an empty file (or folder) mounted
    /// over them.
    masked_files: Vec<PathBuf>,
    masked_dirs: Vec<PathBuf>,
}

impl Shown {
    fn covers(&self, p: &Path) -> bool {
        self.dirs.iter().any(|d| p.starts_with(d)) || self.files.iter().any(|f| f == p)
    }

    /// Shows a folder unless it is covered already; drops the folders it
    /// covers. Never `/` or a folder that holds the temporary folder
    /// (other bots' scratch folders are there). False when it cannot be
    /// shown.
    fn add_dir(&mut self, dir: &Path, temp: &Path) -> bool {
        let Ok(dir) = dir.canonicalize() else {
            return false;
        };
        if !dir.is_dir() || temp.starts_with(&dir) {
            return false;
        }
        if !self.covers(&dir) {
            self.dirs.retain(|d| !d.starts_with(&dir));
            self.dirs.push(dir);
        }
        true
    }

    fn add_file(&mut self, file: &Path) {
        let Ok(file) = file.canonicalize() else {
            return;
        };
        if file.is_file() && !self.covers(&file) {
            self.files.push(file);
        }
    }
}

/// The folder a command runs in, canonical: its `cwd`, else the referee's.
pub(super) fn working_folder(cmd: &BotCommand) -> std::io::Result<PathBuf> {
    let referee_cwd = std::env::current_dir()?;
    let cwd = match &cmd.cwd {
        Some(c) => referee_cwd.join(c),
        None => referee_cwd,
    };
    Ok(cwd.canonicalize().unwrap_or(cwd))
}

/// True when the command runs in a folder that holds a bot.toml: a bot
/// author's command, whose arguments never widen the view.
fn from_bot_toml(cwd: &Path) -> bool {
    cwd.join(crate::bot::manifest::MANIFEST).is_file()
}

/// True for `/`, the organiser's home folder or one above it, and a
/// folder that holds the temporary folder: never shown whole.
fn too_wide(p: &Path, temp: &Path) -> bool {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    p.parent().is_none() || temp.starts_with(p) || home.is_some_and(|h| h.starts_with(p))
}

/// The symbolic links met on the way along the absolute path `p`, each
/// with its target, then those along the targets (at most 8 deep).
fn links_on_the_way(p: &Path, out: &mut Vec<(PathBuf, PathBuf)>, depth: usize) {
    let mut at = PathBuf::from("/");
    let mut parts = p.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n),
        _ => None,
    });
    while let Some(part) = parts.next() {
        at.push(part);
        let Ok(target) = std::fs::read_link(&at) else {
            continue;
        };
        if !out.iter().any(|(l, _)| *l == at) {
            out.push((at.clone(), target.clone()));
        }
        if depth < 8 {
            let mut next = match at.parent() {
                Some(up) => up.join(&target),
                None => target,
            };
            next.extend(parts);
            links_on_the_way(&next, out, depth + 1);
        }
        return;
    }
}

/// The bot's own folder, shown read-only: the folder its command runs in
/// (a bot.toml's folder, a league entry's `cwd`, the folder a command is
/// typed in), unless that is too wide to show (see [`too_wide`]): the bot
/// then sees an empty working folder.
fn bot_folder(cwd: &Path, temp: &Path) -> Option<PathBuf> {
    (!too_wide(cwd, temp)).then(|| cwd.to_path_buf())
}

fn temp_folder() -> PathBuf {
    std::env::temp_dir()
        .canonicalize()
        .unwrap_or_else(|_| std::env::temp_dir())
}

/// The canonical paths a bot may be pointed at: its own folder and what is
/// exposed.
fn granted(cmd: &BotCommand, expose: &[PathBuf]) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
    let cwd = working_folder(cmd)?;
    let temp = temp_folder();
    let mut out: Vec<PathBuf> = bot_folder(&cwd, &temp).into_iter().collect();
    out.extend(expose.iter().filter_map(|e| e.canonicalize().ok()));
    Ok((cwd, out))
}

/// An argument of a command that names a file the bot would not see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutsideArgument {
    /// The argument as written.
    pub arg: String,
    /// Where it leads (canonical).
    pub leads_to: PathBuf,
    /// Why the bot would not see it.
    pub why: &'static str,
}

/// The arguments of a bot.toml's command `cmd` that name an existing file
/// or folder outside
/// the bot's own folder, the system folders and `expose` (absolute, with
/// `..`, or through a symbolic link), or a secret of the system: the bot
/// would not find them in its sandbox, so the caller refuses the command
/// before any game and says where it was written.
pub fn outside_arguments(
    cmd: &BotCommand,
    expose: &[PathBuf],
) -> std::io::Result<Vec<OutsideArgument>> {
    let (cwd, granted) = granted(cmd, expose)?;
    let mut out = Vec::new();
    if !from_bot_toml(&cwd) {
        // The organiser's own command: what it names is shown.
        return Ok(out);
    }
    for arg in &cmd.args {
        let p = cwd.join(arg);
        if std::fs::symlink_metadata(&p).is_err() {
            continue;
        }
        let Ok(real) = p.canonicalize() else {
            // A dangling link: nothing outside is reached through it.
            continue;
        };
        let why = if etc_masked(&real) {
            Some("is a secret of the system, never shown to a bot")
        } else if granted.iter().any(|g| real.starts_with(g)) || in_system(&real) {
            None
        } else {
            Some("is outside the bot's folder and what the league file's `[sandbox] expose` lists")
        };
        if let Some(why) = why {
            out.push(OutsideArgument {
                arg: arg.clone(),
                leads_to: real,
                why,
            });
        }
    }
    Ok(out)
}

/// True when `p` (canonical) is under a system folder shown to every bot.
pub(super) fn in_system(p: &Path) -> bool {
    SYSTEM
        .iter()
        .any(|s| p.starts_with(s) && Path::new(s).is_dir() && !is_link(Path::new(s)))
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// True when `p` (canonical) is under `/etc` and hidden from bots.
fn etc_masked(p: &Path) -> bool {
    let masks = etc_masks();
    masks.files.iter().any(|f| f == p) || masks.dirs.iter().any(|d| p.starts_with(d))
}

/// Plans the root of a sandboxed process of `cmd`: built at `root` (an
/// empty folder), with a fresh tmpfs of at most `tmp_bytes` as its
/// writable `/tmp` (memory of its own, counted against its memory limit,
/// gone with it: a bot cannot fill the disk), `expose` shown read-only
/// besides the bot's own view, and the folders `hidden` emptied if it
/// would see them; its `/proc/meminfo` states `memory_bytes` (see
/// [`proc_replaced`]). `stage`, where the child will run as another user,
/// is a folder to stage the binds' sources in (see `Steps`).
/// `building`: the process is a build, whose working folder is then a
/// tmpfs handed to the referee (see [`child::Handoff`]), its one writable
/// folder besides `/tmp`.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    cmd: &BotCommand,
    root: &Path,
    stage: Option<&Path>,
    tmp_bytes: u64,
    memory_bytes: u64,
    hidden: &[PathBuf],
    expose: &[PathBuf],
    building: Option<BuildFolder>,
) -> std::io::Result<Planned> {
    let temp = temp_folder();
    let cwd = working_folder(cmd)?;
    let (mut shown, mut links) = system_view(&temp);
    let program = resolve_program(&cmd.program, &cwd);
    let mut bin = None;
    for exe in std::iter::once(program.clone()).chain(interpreter(&program, &cwd)) {
        match installation(&exe, &temp) {
            Some(prefix) if shown.add_dir(&prefix, &temp) => {
                bin.get_or_insert(exe.parent().map(Path::to_path_buf));
            }
            _ if exe.is_absolute() && !in_system(&exe) => shown.add_file(&exe),
            _ => {}
        }
    }
    if let Some(own) = bot_folder(&cwd, &temp) {
        shown.add_dir(&own, &temp);
    }
    // A command that is not a bot.toml's was written by the organiser (a
    // league file's entry, a command line): what its arguments name is
    // shown, as the organiser chose. A bot.toml's arguments never widen
    // the view.
    let mut symlinks = Vec::new();
    if !from_bot_toml(&cwd) {
        show_arguments(cmd, &cwd, &temp, &mut shown, &mut symlinks);
    }
    for e in expose {
        match e.is_dir() {
            true => shown.add_dir(e, &temp),
            false => {
                shown.add_file(e);
                true
            }
        };
    }
    let files = std::mem::take(&mut shown.files);
    for f in files {
        shown.add_file(&f);
    }
    mask_specials(&mut shown)?;
    let masks = etc_masks();
    if shown.covers(Path::new("/etc")) {
        shown.masked_files.extend(masks.files.iter().cloned());
        shown.masked_dirs.extend(masks.dirs.iter().cloned());
    }
    let mut path = OsString::new();
    if let Some(Some(b)) = bin {
        path.push(b.as_os_str());
        path.push(":");
    }
    path.push(SYSTEM_PATH);
    // Links on the way to what the organiser's arguments name, made in the
    // view too (unless a shown folder holds them already), so that the path
    // as written leads to the shown one.
    for (link, target) in symlinks {
        if !shown.covers(&link) && !links.iter().any(|(_, l)| *l == link) {
            links.push((target, link));
        }
    }
    // A build writes in its own folder (a copy made for it), and nowhere
    // else: that folder is bound on its own, last, whatever shows it.
    if building.is_some() && !shown.dirs.contains(&cwd) {
        shown.dirs.push(cwd.clone());
    }
    let plan = Steps::new(root, stage, memory_bytes)?.build(
        &shown,
        &links,
        hidden,
        (&cwd, building),
        tmp_bytes,
    )?;
    Ok(Planned {
        plan,
        program,
        path,
    })
}

/// The system's folders shown (those of [`SYSTEM`] that are folders), and
/// the links among them (`/bin` -> `usr/bin`), as (target, link).
fn system_view(temp: &Path) -> (Shown, Vec<(PathBuf, PathBuf)>) {
    let mut shown = Shown::default();
    let mut links = Vec::new();
    for s in SYSTEM {
        let p = Path::new(s);
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(p) {
                    links.push((target, p.to_path_buf()));
                }
            }
            Ok(m) if m.is_dir() => {
                shown.add_dir(p, temp);
            }
            _ => {}
        }
    }
    (shown, links)
}

/// What the organiser's command's arguments name, shown (a folder, or a
/// file with its folder where that is not too wide), and the links on the
/// way to an absolute one gathered in `symlinks`.
fn show_arguments(
    cmd: &BotCommand,
    cwd: &Path,
    temp: &Path,
    shown: &mut Shown,
    symlinks: &mut Vec<(PathBuf, PathBuf)>,
) {
    for arg in &cmd.args {
        let p = cwd.join(arg);
        let Ok(real) = p.canonicalize() else { continue };
        if etc_masked(&real) || too_wide(&real, temp) {
            continue;
        }
        if real.is_dir() {
            shown.add_dir(&real, temp);
        } else if real.is_file()
            && !real
                .parent()
                .is_some_and(|up| !too_wide(up, temp) && shown.add_dir(up, temp))
        {
            shown.add_file(&real);
        }
        if p.is_absolute() {
            links_on_the_way(&p, symlinks, 0);
        }
    }
}

/// Mount steps in the making. Where the child will run as another user
/// (the referee is root), each bind's source is first mounted, while the
/// child is still root, on a staging folder of the scratch folder
/// (`stage`), which that user can reach (the source may lie under a folder
/// it cannot search, such as `/root`): the bind then reads the staged
/// copy.
struct Steps {
    root: PathBuf,
    steps: Vec<MountStep>,
    made: Vec<PathBuf>,
    stage: Option<PathBuf>,
    staged: Vec<(CString, CString)>,
    /// The folder of the bot's own files (see `child::OwnFiles`) and
    /// each file's name and content: the empty file mounted over what is
    /// masked, then the counters of [`proc_replaced`].
    own: PathBuf,
    own_files: Vec<(String, Vec<u8>)>,
    handed: Option<child::Handoff>,
    empty: CString,
    /// Each replaced counter's path under `/proc`, and the name of its
    /// own file.
    replaced: Vec<(&'static str, String)>,
}

/// The folder under the new root where the bot's own files are written
/// while the root is built (it is gone before the bot starts).
const OWN_FILES: &str = ".arena-own";
/// A build's folder as [`plan`] is asked for it: the tmpfs's options
/// (`size=`, `nr_inodes=`) and the socket it is handed over on (see
/// [`child::Handoff`]).
#[derive(Debug)]
pub struct BuildFolder {
    pub options: String,
    pub sock: std::os::fd::RawFd,
}

impl Steps {
    fn new(root: &Path, stage: Option<&Path>, memory_bytes: u64) -> std::io::Result<Steps> {
        let own = root.join(OWN_FILES);
        let mut own_files = vec![("empty".to_string(), Vec::new())];
        let mut replaced = Vec::new();
        for (p, content) in proc_replaced(memory_bytes) {
            let name = p.replace('/', "-");
            replaced.push((p, name.clone()));
            own_files.push((name, content));
        }
        Ok(Steps {
            root: root.to_path_buf(),
            steps: Vec::new(),
            made: Vec::new(),
            stage: stage.map(Path::to_path_buf),
            staged: Vec::new(),
            empty: c_path(&own.join("empty"))?,
            own,
            own_files,
            replaced,
            handed: None,
        })
    }

    /// The path a bind of `p` reads: `p`, or its staged copy.
    fn source(&mut self, p: &Path) -> std::io::Result<CString> {
        let Some(stage) = &self.stage else {
            return c_path(p);
        };
        let at = stage.join(self.staged.len().to_string());
        match p.is_dir() {
            true => std::fs::create_dir(&at)?,
            false => {
                std::fs::File::create(&at)?;
            }
        }
        let at = c_path(&at)?;
        self.staged.push((c_path(p)?, at.clone()));
        Ok(at)
    }

    /// `p` under the new root.
    fn at(&self, p: &Path) -> std::io::Result<CString> {
        c_path(&self.root.join(p.strip_prefix("/").unwrap_or(p)))
    }

    /// The folders on the way to `p`, made empty in the new root.
    fn make_dirs(&mut self, p: &Path) -> std::io::Result<()> {
        let mut sofar = PathBuf::from("/");
        for c in p.components() {
            if let Component::Normal(n) = c {
                sofar.push(n);
                if !self.made.contains(&sofar) {
                    self.made.push(sofar.clone());
                    let at = self.at(&sofar)?;
                    self.steps.push(MountStep::Dir(at));
                }
            }
        }
        Ok(())
    }

    fn bind(&mut self, src: &Path, read_only: bool) -> std::io::Result<()> {
        let dst = self.at(src)?;
        let from = self.source(src)?;
        self.steps.push(MountStep::Bind {
            src: from,
            name: c_path(src)?,
            dst,
            read_only: read_only.then(|| child::locked_flags(src)),
        });
        Ok(())
    }

    /// A build's working folder `p`: a fresh tmpfs handed to the referee
    /// (who fills it), mounted while the child is still root and bound
    /// like the other staged sources where it will run as another user
    /// (then owned by that user), else mounted in place.
    fn hand(&mut self, p: &Path, b: BuildFolder) -> std::io::Result<()> {
        let dst = self.at(p)?;
        let Some(stage) = &self.stage else {
            let options = CString::new(format!("mode=0755,{}", b.options))?;
            self.steps.push(MountStep::Handed(child::Handoff {
                at: dst,
                options,
                sock: b.sock,
            }));
            return Ok(());
        };
        let at = stage.join("build");
        std::fs::create_dir(&at)?;
        let at = c_path(&at)?;
        self.handed = Some(child::Handoff {
            at: at.clone(),
            options: CString::new(format!("mode=0755,{}", b.options))?,
            sock: b.sock,
        });
        self.steps.push(MountStep::Bind {
            src: at,
            name: c_path(p)?,
            dst,
            read_only: None,
        });
        Ok(())
    }

    fn mask_file(&mut self, p: &Path) -> std::io::Result<()> {
        let dst = self.at(p)?;
        self.steps.push(MountStep::Mask {
            src: self.empty.clone(),
            dst,
        });
        Ok(())
    }

    fn build(
        mut self,
        shown: &Shown,
        links: &[(PathBuf, PathBuf)],
        hidden: &[PathBuf],
        (cwd, mut building): (&Path, Option<BuildFolder>),
        tmp_bytes: u64,
    ) -> std::io::Result<RootPlan> {
        // The scratch folder first: what is shown below /tmp is mounted on
        // top of it.
        let tmp = Path::new(SCRATCH_IN_VIEW);
        self.make_dirs(tmp)?;
        let options = CString::new(format!("mode=0700,size={}", tmp_bytes.max(4096)))
            .map_err(std::io::Error::other)?;
        let dst = self.at(tmp)?;
        self.steps.push(MountStep::Scratch { dst, options });
        for (target, link) in links {
            if let Some(up) = link.parent() {
                self.make_dirs(up)?;
            }
            let link = self.at(link)?;
            self.steps.push(MountStep::Symlink {
                target: c_path(target)?,
                link,
            });
        }
        let mounts = child::mount_points();
        for dir in &shown.dirs {
            self.make_dirs(dir)?;
            match building.take_if(|_| dir == cwd) {
                Some(b) => self.hand(dir, b)?,
                None => self.bind(dir, true)?,
            }
            // Mounts inside it are bound with it, and made read-only too.
            for m in mounts
                .iter()
                .filter(|m| m.starts_with(dir) && m.as_path() != dir.as_path())
            {
                let dst = self.at(m)?;
                self.steps.push(MountStep::ReadOnly {
                    dst,
                    flags: child::locked_flags(m),
                });
            }
        }
        for file in &shown.files {
            if let Some(up) = file.parent() {
                self.make_dirs(up)?;
            }
            let at = self.at(file)?;
            self.steps.push(MountStep::File(at));
            self.bind(file, true)?;
        }
        for f in &shown.masked_files {
            self.mask_file(f)?;
        }
        for d in shown.masked_dirs.iter().chain(
            hidden
                .iter()
                .map(|h| h.canonicalize().unwrap_or_else(|_| h.clone()))
                .filter(|h| h.is_dir() && shown.covers(h))
                .collect::<Vec<_>>()
                .iter(),
        ) {
            let at = self.at(d)?;
            self.steps.push(MountStep::Empty(at));
        }
        self.devices()?;
        self.proc()?;
        // The working folder exists in the view even when nothing shows it
        // (an empty folder, so that relative paths in the command resolve).
        if !shown.covers(cwd) {
            self.make_dirs(cwd)?;
        }
        let files = self
            .own_files
            .iter()
            .map(|(name, content)| Ok((c_path(&self.own.join(name))?, content.clone())))
            .collect::<std::io::Result<_>>()?;
        Ok(RootPlan {
            root: c_path(&self.root)?,
            own: child::OwnFiles {
                dir: c_path(&self.own)?,
                files,
            },
            steps: self.steps,
            cwd: c_path(cwd)?,
            stage: self.staged,
            handed: self.handed,
        })
    }

    fn devices(&mut self) -> std::io::Result<()> {
        self.make_dirs(Path::new("/dev"))?;
        for d in DEVICES {
            let dev = Path::new("/dev").join(d);
            if dev.exists() {
                let at = self.at(&dev)?;
                self.steps.push(MountStep::File(at));
                self.bind(&dev, false)?;
            }
        }
        for (link, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            let link = self.at(&Path::new("/dev").join(link))?;
            self.steps.push(MountStep::Symlink {
                target: c_path(Path::new(target))?,
                link,
            });
        }
        Ok(())
    }

    /// The bot's own `/proc`, without the host-wide files and folders,
    /// its host-wide counters replaced by the bot's own, `/proc/sys`
    /// read-only.
    fn proc(&mut self) -> std::io::Result<()> {
        self.make_dirs(Path::new("/proc"))?;
        let at = self.at(Path::new("/proc"))?;
        let mut hide = Vec::new();
        for f in PROC_MASKED {
            let p = Path::new("/proc").join(f);
            if p.exists() {
                hide.push(MountStep::Mask {
                    src: self.empty.clone(),
                    dst: self.at(&p)?,
                });
            }
        }
        for (path, name) in &self.replaced {
            let p = Path::new("/proc").join(path);
            if p.is_file() {
                hide.push(MountStep::Mask {
                    src: c_path(&self.own.join(name))?,
                    dst: self.at(&p)?,
                });
            }
        }
        for f in PROC_EMPTIED {
            let p = Path::new("/proc").join(f);
            if p.is_dir() {
                hide.push(MountStep::Empty(self.at(&p)?));
            }
        }
        let sys = self.at(Path::new("/proc/sys"))?;
        self.steps.push(MountStep::Proc {
            dst: at,
            masks: hide,
            sys,
        });
        Ok(())
    }
}

/// Finds the special files (sockets, FIFOs, devices) in the shown folders
/// and masks them. The system folders are packaged, and hold none where
/// sockets live (`/run`, `/var` are not shown): only `/etc` and `/opt` of
/// them are walked. Walks are cached for the life of the process.
fn mask_specials(shown: &mut Shown) -> std::io::Result<()> {
    let skip = [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    ];
    let dirs: Vec<PathBuf> = shown
        .dirs
        .iter()
        .filter(|d| !skip.iter().any(|s| d.starts_with(s)))
        .cloned()
        .collect();
    for d in dirs {
        let found = specials(&d)?;
        shown.masked_files.extend(found.iter().cloned());
    }
    Ok(())
}

/// The sockets, FIFOs and device files under `dir` (not following links).
fn specials(dir: &Path) -> std::io::Result<Arc<Vec<PathBuf>>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Vec<PathBuf>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(dir).cloned()) {
        return Ok(hit);
    }
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > WALK_MAX {
                return Err(std::io::Error::other(format!(
                    "{} holds more than {WALK_MAX} files: too many to show to a bot",
                    dir.display()
                )));
            }
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_socket() || t.is_fifo() || t.is_char_device() || t.is_block_device() {
                found.push(e.path());
            }
        }
    }
    let found = Arc::new(found);
    if let Ok(mut c) = cache.lock() {
        c.insert(dir.to_path_buf(), found.clone());
    }
    Ok(found)
}

/// What of `/etc` is never shown.
struct EtcMasks {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

/// `/etc`'s secrets: [`ETC_SECRETS`], every file and folder there that is
/// not world-readable (a folder also not world-searchable), and the SSH
/// host keys. Read once per process.
fn etc_masks() -> &'static EtcMasks {
    static MASKS: OnceLock<EtcMasks> = OnceLock::new();
    MASKS.get_or_init(|| {
        let mut m = EtcMasks {
            files: Vec::new(),
            dirs: Vec::new(),
        };
        let etc = Path::new("/etc");
        let mut stack = vec![etc.to_path_buf()];
        let mut seen = 0usize;
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                seen += 1;
                if seen > WALK_MAX {
                    break;
                }
                let p = e.path();
                let Ok(meta) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                let t = meta.file_type();
                if t.is_symlink() {
                    continue;
                }
                let mode = meta.permissions().mode();
                let rel = p.strip_prefix(etc).unwrap_or(&p);
                let named = ETC_SECRETS.iter().any(|s| rel == Path::new(s))
                    || (rel.starts_with("ssh")
                        && rel
                            .file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("ssh_host_") && n.ends_with("_key")));
                if t.is_dir() {
                    if named || mode & 0o005 != 0o005 {
                        m.dirs.push(p);
                    } else {
                        stack.push(p);
                    }
                } else if named
                    || mode & 0o004 == 0
                    || t.is_socket()
                    || t.is_fifo()
                    || t.is_char_device()
                    || t.is_block_device()
                {
                    m.files.push(p);
                }
            }
        }
        m
    })
}

/// The name to give a program the sandbox executes by its real file
/// (`program`, from [`resolve_program`]) when the command named it by
/// another (`word`): the link beside the real file that bears the
/// command's name (`~/.cargo/bin/cargo` for `~/.cargo/bin/rustup`), as
/// a multi-call program (rustup's proxies, busybox) acts by the name it
/// is called by; a path, so that an interpreter finds its installation
/// from it. `None` when the names agree or there is no such link.
pub fn called_as(program: &Path, word: &str) -> Option<PathBuf> {
    let name = Path::new(word).file_name()?;
    if program.file_name() == Some(name) {
        return None;
    }
    let link = program.parent()?.join(name);
    link.exists().then_some(link)
}

/// The program a command's first word names, as the organiser's `PATH`
/// resolves it from `cwd`: a path as it is (relative to `cwd`), a name
/// through `PATH`; a version manager's shim (pyenv, nodenv, rbenv, asdf:
/// a file in a folder named `shims`) through the manager's own `which`,
/// run in `cwd` so that a local version file counts. The real file, or
/// the word itself when nothing resolves it.
pub fn resolve_program(program: &str, cwd: &Path) -> PathBuf {
    let found = if program.contains('/') {
        Some(cwd.join(program))
    } else {
        find_on_path(program)
    };
    let Some(found) = found else {
        return PathBuf::from(program);
    };
    let found = match found.parent().and_then(Path::file_name) {
        Some(n) if n == "shims" => through_shim(&found, program, cwd).unwrap_or(found),
        _ => found,
    };
    found.canonicalize().unwrap_or(found)
}

/// The executable file that `program` (a name, no `/`) names through the
/// absolute folders of the organiser's `PATH`, if any.
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .filter(|d| d.is_absolute())
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
    })
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What a version manager's shim `shim` would run for `program` in `cwd`:
/// `<manager> which <program>`, the manager named after the folder that
/// holds `shims` (`~/.pyenv`: `pyenv`). Cached for the life of the process.
fn through_shim(shim: &Path, program: &str, cwd: &Path) -> Option<PathBuf> {
    /// (shim, folder) -> what the manager runs there.
    type Resolved = HashMap<(PathBuf, PathBuf), Option<PathBuf>>;
    static CACHE: OnceLock<Mutex<Resolved>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (shim.to_path_buf(), cwd.to_path_buf());
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let top = shim.parent()?.parent()?;
    let name = top
        .file_name()?
        .to_str()?
        .trim_start_matches('.')
        .to_string();
    let manager = ["bin", "libexec"]
        .iter()
        .map(|d| top.join(d).join(&name))
        .find(|p| is_executable(p))
        .unwrap_or_else(|| PathBuf::from(&name));
    let out = std::process::Command::new(manager)
        .args(["which", program])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            is_executable(&p).then_some(p)
        });
    if let Ok(mut c) = cache.lock() {
        c.insert(key, out.clone());
    }
    out
}

/// The interpreter a script names on its `#!` line (through `env`, as the
/// organiser's `PATH` resolves it), if it is a script.
fn interpreter(program: &Path, cwd: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let first = words.next()?;
    match Path::new(first).file_name() {
        Some(n) if n == "env" => {
            let name = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
            Some(resolve_program(name, cwd))
        }
        _ => Some(resolve_program(first, cwd)),
    }
}

/// The installation that holds `exe` (canonical), to be shown whole: the
/// folder above its `bin` or `sbin` when that folder has a `lib` beside
/// (an interpreter's prefix: a pyenv or nvm version, a virtualenv, a JDK),
/// and is not too wide to show (see [`too_wide`]: `/`, the organiser's home
/// folder or one above it).
/// `None`: the program alone is shown (a `~/.cargo/bin` tool, a program in
/// `~/bin`).
fn installation(exe: &Path, temp: &Path) -> Option<PathBuf> {
    let up = exe.parent()?;
    if !matches!(up.file_name()?.to_str()?, "bin" | "sbin") {
        return None;
    }
    let prefix = up.parent()?;
    let has_lib = ["lib", "lib64"].iter().any(|l| prefix.join(l).is_dir());
    (!too_wide(prefix, temp) && has_lib).then(|| prefix.to_path_buf())
}

fn c_path(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("a path with a NUL byte: {}", p.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command naming a link to a multi-call program (`cargo` ->
    /// `rustup`) calls the real file by the link's path; the same name,
    /// or no such link, by nothing else.
    #[test]
    fn a_link_to_a_multi_call_program_is_called_by_its_name() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("rustup");
        std::fs::write(&real, "").unwrap();
        std::os::unix::fs::symlink(&real, t.path().join("cargo")).unwrap();
        assert_eq!(called_as(&real, "cargo"), Some(t.path().join("cargo")));
        assert_eq!(
            called_as(&real, "/elsewhere/cargo"),
            Some(t.path().join("cargo"))
        );
        assert_eq!(called_as(&real, "rustup"), None);
        assert_eq!(called_as(&real, "rustc"), None);
        // Resolved as the sandbox resolves it: the real file.
        let cwd = t.path();
        assert_eq!(
            resolve_program("./cargo", cwd),
            real.canonicalize().unwrap()
        );
    }

    #[test]
    fn sh_is_on_path_and_nonsense_is_not() {
        assert!(find_on_path("sh").is_some());
        assert!(find_on_path("no-such-program-anywhere").is_none());
    }

    fn shown_of(planned: &Planned) -> Vec<String> {
        planned
            .plan
            .steps
            .iter()
            .filter_map(|s| match s {
                MountStep::Bind {
                    name,
                    read_only: Some(_),
                    ..
                } => Some(name.to_str().unwrap().to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn arguments_never_widen_the_view_and_are_found_outside() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("bots/me")).unwrap();
        std::fs::create_dir_all(base.join("bots/victim")).unwrap();
        std::fs::write(base.join("bots/victim/secret.txt"), "s").unwrap();
        std::fs::write(base.join("bots/me/bot.py"), "").unwrap();
        std::fs::write(
            base.join("bots/me/bot.toml"),
            "command = \"python3 bot.py\"",
        )
        .unwrap();
        std::os::unix::fs::symlink(base.join("bots/victim"), base.join("bots/me/peek")).unwrap();
        std::fs::create_dir_all(base.join("bots/me/results")).unwrap();
        let cmd = BotCommand {
            program: "python3".into(),
            args: vec![
                "bot.py".into(),
                "../victim/secret.txt".into(),
                "peek/secret.txt".into(),
                "/etc/shadow".into(),
                "/usr".into(),
            ],
            cwd: Some(base.join("bots/me")),
            env: vec![],
        };
        let root = base.join("root");
        let planned = plan(
            &cmd,
            &root,
            None,
            1 << 20,
            1 << 30,
            &[base.join("bots/me/results")],
            &[],
            None,
        )
        .unwrap();
        let shown = shown_of(&planned);
        assert!(
            shown.contains(&base.join("bots/me").display().to_string()),
            "{shown:?}"
        );
        assert!(!shown.iter().any(|s| s.contains("victim")), "{shown:?}");
        assert!(shown.contains(&"/usr".to_string()), "{shown:?}");
        let outside = outside_arguments(&cmd, &[]).unwrap();
        let args: Vec<&str> = outside.iter().map(|o| o.arg.as_str()).collect();
        let mut want = vec!["../victim/secret.txt", "peek/secret.txt"];
        if Path::new("/etc/shadow").exists() {
            want.push("/etc/shadow");
        }
        assert_eq!(args, want);
        // What the league exposes may be named.
        let outside = outside_arguments(&cmd, &[base.join("bots/victim")]).unwrap();
        assert!(
            outside.iter().all(|o| o.arg == "/etc/shadow"),
            "{outside:?}"
        );
        let emptied = planned
            .plan
            .steps
            .iter()
            .filter(|s| matches!(s, MountStep::Empty(p) if p.to_str().unwrap().ends_with("bots/me/results")))
            .count();
        assert_eq!(emptied, 1);
    }

    #[test]
    fn sockets_and_fifos_in_the_bot_folder_are_masked() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let me = base.join("me");
        std::fs::create_dir_all(&me).unwrap();
        let _sock = std::os::unix::net::UnixListener::bind(me.join("host.sock")).unwrap();
        let fifo = c_path(&me.join("pipe")).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let cmd = BotCommand {
            program: "true".into(),
            args: vec![],
            cwd: Some(me.clone()),
            env: vec![],
        };
        let planned = plan(
            &cmd,
            &base.join("root"),
            None,
            1 << 20,
            1 << 30,
            &[],
            &[],
            None,
        )
        .unwrap();
        let masked: Vec<String> = planned
            .plan
            .steps
            .iter()
            .filter_map(|s| match s {
                MountStep::Mask { dst, .. } => Some(dst.to_str().unwrap().to_string()),
                _ => None,
            })
            .collect();
        for name in ["host.sock", "pipe"] {
            assert!(
                masked.iter().any(|m| m.ends_with(name)),
                "{name}: {masked:?}"
            );
        }
    }

    #[test]
    fn a_program_in_the_home_folders_bin_shows_itself_only() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join("bin")).unwrap();
        std::fs::create_dir_all(home.join("lib")).unwrap();
        std::fs::create_dir_all(home.join(".venv/bin")).unwrap();
        std::fs::create_dir_all(home.join(".venv/lib")).unwrap();
        // `home` stands for the organiser's home here: an installation
        // must have a lib beside its bin and not be the home folder.
        assert_eq!(
            installation(&home.join(".venv/bin/python"), &temp_folder()),
            Some(home.join(".venv"))
        );
        assert_eq!(
            installation(&home.join(".cargo/bin/tool"), &temp_folder()),
            None
        );
        assert_eq!(
            installation(Path::new("/usr/bin/python3"), &temp_folder()),
            Some(PathBuf::from("/usr"))
        );
    }

    /// What is mounted over masked paths comes from the bot's own files
    /// (never a host path, which its mount table would name), and its
    /// `/proc` counters are its own: `meminfo` states its memory limit.
    #[test]
    fn masks_come_from_the_bots_own_files_and_its_counters_are_its_own() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let cmd = BotCommand {
            program: "true".into(),
            args: vec![],
            cwd: Some(base.clone()),
            env: vec![],
        };
        let root = base.join("root");
        let planned = plan(&cmd, &root, None, 1 << 20, 256 << 20, &[], &[], None).unwrap();
        let own = root.join(OWN_FILES);
        assert_eq!(planned.plan.own.dir.as_bytes(), own.as_os_str().as_bytes());
        let mut masks = Vec::new();
        for step in &planned.plan.steps {
            match step {
                MountStep::Mask { src, dst } => masks.push((src, dst)),
                MountStep::Proc { masks: m, .. } => {
                    for s in m {
                        if let MountStep::Mask { src, dst } = s {
                            masks.push((src, dst));
                        }
                    }
                }
                _ => {}
            }
        }
        let files: Vec<&[u8]> = planned
            .plan
            .own
            .files
            .iter()
            .map(|(p, _)| p.as_bytes())
            .collect();
        for (src, dst) in &masks {
            assert!(files.contains(&src.as_bytes()), "{src:?} over {dst:?}");
        }
        let over = |p: &str| {
            let dst = root.join(p);
            masks
                .iter()
                .find(|(_, d)| d.as_bytes() == dst.as_os_str().as_bytes())
                .map(|(src, _)| src.to_str().unwrap().to_string())
        };
        if Path::new("/proc/meminfo").exists() {
            let src = over("proc/meminfo").expect("meminfo is replaced");
            let (_, content) = planned
                .plan
                .own
                .files
                .iter()
                .find(|(p, _)| p.to_str().unwrap() == src)
                .unwrap();
            let text = String::from_utf8_lossy(content);
            assert!(text.starts_with("MemTotal:         262144 kB\n"), "{text}");
        }
        if Path::new("/proc/sys/fs/file-nr").exists() {
            assert!(over("proc/sys/fs/file-nr").is_some());
        }
    }

    #[test]
    fn the_root_and_the_temporary_folder_are_never_shown() {
        let cmd = BotCommand {
            program: "true".into(),
            args: vec!["/".into(), std::env::temp_dir().display().to_string()],
            cwd: Some(PathBuf::from("/")),
            env: vec![],
        };
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let planned = plan(
            &cmd,
            &base.join("r"),
            None,
            1 << 20,
            1 << 30,
            &[],
            &[],
            None,
        )
        .unwrap();
        let shown = shown_of(&planned);
        assert!(
            !shown.iter().any(|s| s == "/" || s.starts_with("/tmp")),
            "{shown:?}"
        );
    }
}
