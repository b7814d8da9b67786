//! The sandbox: everything that shuts a bot process in, behind one type,
//! [`Jail`], that the bot runner asks for a prepared child and releases
//! when the process is gone (docs/security.md).
//!
//! Rooms:
//! - `view.rs`: what the bot sees of the file system, planned in ordinary
//!   code before the fork;
//! - `child.rs`: the child's side between fork and exec (namespaces, the
//!   keeper and the init, the root replayed from the plan),
//!   async-signal-safe only;
//! - `cgroup.rs`: kernel limits on memory, processes and CPU;
//! - `landlock.rs`: the file-system wall the kernel keeps (Landlock), raised
//!   in the child before exec;
//! - `seccomp.rs`: the system-call filter, raised last (its tests also run
//!   both walls together).
//!
//! Nothing outside this folder makes a namespace, a mount or a cgroup.

pub mod cgroup;
pub(super) mod child;
pub mod landlock;
pub mod seccomp;
mod view;

pub use child::{is_isolate_error, VIEW_FAILED};
pub use view::{
    find_on_path, outside_arguments, resolve_program, OutsideArgument, SCRATCH_IN_VIEW,
};

use super::error::BotError;
use super::launch::Launch;
use std::path::{Path, PathBuf};

/// The variables a sandboxed bot keeps from the referee's environment
/// (besides `HOME` and `TMPDIR`, which point at its scratch folder, and
/// `PATH`, which names what it sees: see [`view::Planned::path`]).
pub const SANDBOX_ENV: &[&str] = &["LANG"];

/// The users sandboxed bots run as when the referee runs as root, by
/// default: `count` user ids from `first`, far above any that a system or
/// a person is given, so that they own no file on the host. A league file
/// sets its own with `[sandbox] uid_range`.
pub const DEFAULT_UIDS: (u32, u32) = (3_000_000_000, 65_536);

/// One sandboxed process's share of the machine: its scratch folder (where
/// its root is built), its cgroups, and until it starts, what its child
/// sets up. Made by [`Jail::new`] before the spawn, applied to the command
/// by [`Jail::apply`], released when the process is gone.
#[derive(Debug)]
pub struct Jail {
    scratch: Option<PathBuf>,
    cgroup: Option<cgroup::Cgroup>,
    program: PathBuf,
    /// The name `program` is called by, when the command named it by a
    /// link ([`view::called_as`]).
    arg0: Option<PathBuf>,
    path: std::ffi::OsString,
    outside: Option<(u32, u32)>,
    setup: Option<child::Setup>,
    handoff: Option<Handoff>,
}

/// The referee's side of a build's folder (see [`child::Handoff`]): the
/// socket it comes on, and the child's end, to close once it is spawned.
#[derive(Debug)]
pub struct Handoff {
    pub ours: std::os::fd::OwnedFd,
    pub theirs: std::os::fd::OwnedFd,
}

impl Jail {
    /// Plans the sandbox of `launch`'s command: its view (see `view.rs`),
    /// its cgroups where they can be made, its user outside when the
    /// referee runs as root. `token` names the scratch folder and the
    /// cgroups.
    pub fn new(launch: &Launch, token: &str) -> Result<Jail, BotError> {
        let cmd = &launch.command;
        let limits = &launch.limits;
        let failed = |source| BotError::Sandbox {
            command: cmd.display(),
            source,
        };
        refuse_outside_arguments(launch)?;
        let range = launch.uids.unwrap_or(DEFAULT_UIDS);
        let outside = (as_root() && mapped(range)).then(|| pick_user(range));
        let dir = scratch_dir(token, outside).map_err(failed)?;
        let mut jail = Jail {
            scratch: Some(dir.clone()),
            cgroup: None,
            program: PathBuf::new(),
            arg0: None,
            path: Default::default(),
            outside: None,
            setup: None,
            handoff: None,
        };
        let tmp_bytes = limits.file_size_mb.saturating_mul(1 << 20);
        // On failure, `jail` is dropped: the scratch folder goes with it.
        let stage = dir.join("stage");
        if outside.is_some() {
            std::fs::create_dir(&stage).map_err(failed)?;
        }
        let folder = match launch.building {
            Some(b) => {
                let (ours, theirs) = socket_pair().map_err(failed)?;
                let mut options = format!("size={},nr_inodes={}", b.quota.bytes, b.quota.files);
                if let Some((uid, gid)) = outside {
                    options.push_str(&format!(",uid={uid},gid={gid}"));
                }
                let sock = std::os::fd::AsRawFd::as_raw_fd(&theirs);
                jail.handoff = Some(Handoff { ours, theirs });
                Some(view::BuildFolder { options, sock })
            }
            None => None,
        };
        let planned = view::plan(
            cmd,
            &dir.join("root"),
            outside.is_some().then_some(stage.as_path()),
            tmp_bytes,
            limits.memory_mb.saturating_mul(1 << 20),
            &launch.hidden,
            &launch.expose,
            folder,
        )
        .map_err(failed)?;
        jail.cgroup = cgroup::Cgroup::create(token, limits);
        let procs = jail
            .cgroup
            .as_ref()
            .map(|g| g.procs_files())
            .unwrap_or_default();
        // Without cgroups, each process's data (heap and private writable
        // mappings) and the processes of the bot's own user are bounded
        // instead.
        let (data, processes) = match jail.cgroup {
            Some(_) => (None, None),
            None => (
                Some(child::data_size_limit(limits)),
                // Counted in the bot's user namespace, which its keeper
                // entered before it forked the init and the bot: two more.
                Some(child::within_hard_limit(
                    libc::RLIMIT_NPROC,
                    ("processes", "-u"),
                    limits.processes.saturating_add(cgroup::KEEPER_TASKS),
                )),
            ),
        };
        refuse_not_executable(&planned.program, cmd)?;
        if let Some((uid, _)) = outside {
            let cwd = view::working_folder(cmd).map_err(failed)?;
            for (path, need, what) in [
                (cwd.as_path(), 0o001, "entered"),
                (planned.program.as_path(), 0o001, "run"),
            ] {
                closed_to_others(path, need, what, uid).map_err(failed)?;
            }
        }
        jail.arg0 = view::called_as(&planned.program, &cmd.program);
        jail.program = planned.program;
        jail.path = planned.path;
        jail.outside = outside;
        let network = launch.building.is_some_and(|b| b.network);
        let mut wall = landlock_wall();
        if launch.building.is_some() {
            let cwd = cmd.cwd.as_deref().and_then(|d| d.canonicalize().ok());
            wall = wall.writable(cwd.as_deref()).map_err(failed)?;
        }
        jail.setup = Some(child::Setup {
            cgroup_procs: procs,
            file_size: child::file_size_limit(limits),
            data,
            processes,
            outside,
            network,
            view: planned.plan,
            wall: match network {
                true => wall.with_network(),
                false => wall,
            },
            filter: match network {
                true => seccomp::network_filter(),
                false => seccomp::bot_filter(),
            },
        });
        Ok(jail)
    }

    /// The user and group the process runs as outside, when the referee
    /// runs as root (see [`DEFAULT_UIDS`]); `None`: the referee's own. A
    /// build's folder is given to that user before the build starts.
    pub fn user(&self) -> Option<(u32, u32)> {
        self.outside
    }

    /// A build's folder, to be handed over when the child starts (see
    /// [`child::Handoff`]); taken once.
    pub fn take_handoff(&mut self) -> Option<Handoff> {
        self.handoff.take()
    }

    /// The program to execute (see [`view::Planned::program`]).
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Sets `c` up to start in the sandbox: called by the name its command
    /// gave ([`view::called_as`]), its environment cleared to
    /// [`SANDBOX_ENV`], `PATH` to what it sees, `HOME` and `TMPDIR` at its
    /// scratch `/tmp`, and the namespaces and root that the child builds
    /// between fork and exec.
    pub fn apply(&mut self, c: &mut std::process::Command) {
        if let Some(name) = &self.arg0 {
            std::os::unix::process::CommandExt::arg0(c, name);
        }
        c.env_clear();
        for k in SANDBOX_ENV {
            if let Some(v) = std::env::var_os(k) {
                c.env(k, v);
            }
        }
        c.env("PATH", &self.path)
            .env("HOME", SCRATCH_IN_VIEW)
            .env("TMPDIR", SCRATCH_IN_VIEW);
        if let Some(setup) = self.setup.take() {
            child::isolate(c, setup);
        }
    }

    /// True when the kernel killed one of the bot's processes at its
    /// memory limit.
    pub fn over_memory(&self) -> bool {
        self.cgroup.as_ref().is_some_and(cgroup::Cgroup::oom_killed)
    }

    /// True when a fork or thread of the bot was refused at its process
    /// limit (its cgroup says so; without one, nothing can tell).
    pub fn at_process_limit(&self) -> bool {
        self.cgroup
            .as_ref()
            .is_some_and(cgroup::Cgroup::pids_max_hit)
    }

    /// Gives back what the process held: its scratch folder at once (the
    /// processes are dead or dying: what they still hold open goes with
    /// them), its cgroups once `exited` (they must be empty to go; until
    /// then they are kept, and read).
    pub fn release(&mut self, exited: bool) {
        if let Some(dir) = self.scratch.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some(g) = self.cgroup.as_mut() {
            if exited {
                g.remove();
            }
        }
    }
}

impl Drop for Jail {
    fn drop(&mut self) {
        self.release(false);
    }
}

/// Landlock's rules for a bot, as paths inside its root: everything
/// read-only, `/tmp` and the writable devices read-write.
fn landlock_wall() -> landlock::Wall {
    use landlock::{Access, Rule};
    let rule = |p: &std::ffi::CStr, access| Rule::new(p.to_owned(), access);
    landlock::Wall::new(vec![
        rule(c"/", Access::ReadOnly),
        rule(c"/tmp", Access::ReadWrite),
        rule(c"/dev/null", Access::ReadWrite),
        rule(c"/dev/zero", Access::ReadWrite),
        rule(c"/dev/full", Access::ReadWrite),
        rule(c"/dev/random", Access::ReadWrite),
        rule(c"/dev/urandom", Access::ReadWrite),
    ])
}

/// One line on the walls in force here besides the namespaces and the
/// view, for `arena bots` and `arena check-bot`.
pub fn walls() -> String {
    let filter = match seccomp::bot_filter() {
        Some(f) => format!(
            "a system-call filter ({} BPF instructions; EPERM for the rest)",
            f.len()
        ),
        None => "no system-call filter (it cannot be built for this machine)".to_string(),
    };
    format!("{filter}; {}", landlock_wall().describe())
}

/// Refuses a bot.toml's command whose arguments name files the bot would
/// not see (see [`outside_arguments`]), naming the bot.toml and the line
/// of its `command`.
fn refuse_outside_arguments(launch: &Launch) -> Result<(), BotError> {
    let cmd = &launch.command;
    let outside = outside_arguments(cmd, &launch.expose).map_err(|source| BotError::Sandbox {
        command: cmd.display(),
        source,
    })?;
    let Some(first) = outside.first() else {
        return Ok(());
    };
    let folder = cmd.cwd.clone().unwrap_or_default();
    let file = folder.join(crate::bot::manifest::MANIFEST);
    let (key, line) = match (
        launch.building,
        crate::bot::manifest::Manifest::load(&folder),
    ) {
        (Some(_), Ok(m)) => ("build", m.build_line.map(|l| format!(":{l}"))),
        (None, Ok(m)) => ("command", Some(format!(":{}", m.command_line))),
        (Some(_), Err(_)) => ("build", None),
        (None, Err(_)) => ("command", None),
    };
    let line = line.unwrap_or_default();
    let more = match outside.len() {
        1 => String::new(),
        n => format!(" ({} more such arguments)", n - 1),
    };
    Err(BotError::Refused(format!(
        "{}{line}: `{key}` argument `{}` leads to {}, which {}: a sandboxed bot would not find it (keep it in the bot's folder, or ask the organiser to list it in the league file's `[sandbox] expose`){more}",
        file.display(),
        first.arg,
        first.leads_to.display(),
        first.why
    )))
}

/// Fails, saying what to do, when `path` (a folder or a file outside the
/// system folders) lacks the permission bits `need` for others: a bot run
/// as `uid` (the referee is root) could not use it. (Its parents need not
/// be open: the view reaches them as root.)
fn closed_to_others(path: &Path, need: u32, what: &str, uid: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if !path.is_absolute() || view::in_system(path) {
        return Ok(());
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let mode = meta.permissions().mode();
    if mode & need == need {
        return Ok(());
    }
    Err(std::io::Error::other(format!(
        "{} (mode {:o}) cannot be {what} by the bot: as root, bots run as a user of their own (uid {uid}) that owns nothing, so what they use must be open to others (chmod o+rx {})",
        path.display(),
        mode & 0o7777,
        path.display()
    )))
}

/// A program file with no execute bit at all cannot be run by anyone: the
/// bot's fault (`crash`, as outside the sandbox, where exec says EACCES),
/// said with what to do, not taken for the sandbox's own failure. So is a
/// folder named as the program.
fn refuse_not_executable(program: &Path, cmd: &super::launch::BotCommand) -> Result<(), BotError> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(program) else {
        return Ok(());
    };
    if meta.is_dir() {
        return Err(BotError::Spawn {
            command: cmd.display(),
            source: crate::bot::error::folder_not_program(program),
        });
    }
    let mode = meta.permissions().mode();
    if !meta.is_file() || mode & 0o111 != 0 {
        return Ok(());
    }
    Err(BotError::Spawn {
        command: cmd.display(),
        source: std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} is not executable (mode {:o}): make it so (chmod +x), or run it through its interpreter (command = [\"python3\", \"bot.py\"])",
                program.display(),
                mode & 0o7777
            ),
        ),
    })
}

/// A connected pair of Unix stream sockets, closed on exec.
fn socket_pair() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: socketpair fills two descriptors we then own.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and ours alone.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

/// True when the referee runs as root.
fn as_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// True when every id of `range` (`first`, `count`) exists in this
/// process's user namespace (it does on a host; in a container or a user
/// namespace that maps root alone it does not, and the bots then run as
/// the referee's user there, which is no root of the host).
fn mapped((first, count): (u32, u32)) -> bool {
    let Ok(map) = std::fs::read_to_string("/proc/self/uid_map") else {
        return false;
    };
    let last = u64::from(first) + u64::from(count.max(1)) - 1;
    map.lines().any(|l| {
        let f: Vec<u64> = l.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        matches!(f.as_slice(), [inside, _, len] if *inside <= u64::from(first) && last < inside + len)
    })
}

/// The next user (and group) of `range` (`first`, `count`), in turn: two
/// bots running at once have different users.
fn pick_user((first, count): (u32, u32)) -> (u32, u32) {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % count.max(1);
    let id = first.saturating_add(n);
    (id, id)
}

/// Removes what sandboxed bots of runs that no longer live left behind (a
/// referee killed with SIGKILL cleans nothing up): their scratch folders
/// and empty cgroups, named after the referee's pid; `dead(name, prefix)`
/// says whether a name belongs to such a run.
pub fn sweep_leftovers(dead: impl Fn(&str, &str) -> bool) {
    if let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) {
        for e in dir.flatten() {
            if dead(&e.file_name().to_string_lossy(), "arena-scratch-") {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    cgroup::sweep(|name| dead(name, "arena-"));
}

/// A fresh folder for one sandboxed process, readable by it alone (by
/// `owner` where it runs as another user): `root/`, where its root is
/// built (its `/tmp` is a tmpfs of its own, in there; what is mounted over
/// masked paths comes from a tmpfs of its own too, `child::OwnFiles`).
fn scratch_dir(token: &str, owner: Option<(u32, u32)>) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = std::env::temp_dir().join(format!("arena-scratch-{token}"));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    let root = dir.join("root");
    std::fs::DirBuilder::new().mode(0o700).create(&root)?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid))?;
        std::os::unix::fs::chown(&root, Some(uid), Some(gid))?;
    }
    Ok(dir)
}
