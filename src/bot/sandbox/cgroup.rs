//! Kernel limits for one bot process tree through cgroups: memory (the
//! kernel's OOM killer ends the tree at the limit, and the cgroup counts
//! it), processes (`pids.max`) and CPUs. A bot spawned by a thread pinned
//! to at most `cpus` CPUs (a league's workers are) is held to those CPUs
//! by a cpuset, which costs nothing per decision; otherwise a CFS quota of
//! `cpus` CPUs applies (the cpu controller's group scheduling costs about
//! 0.5 us per decision round trip, measured in BENCHMARKS.md).
//!
//! Two hierarchies:
//! - cgroup v1 (as root): one folder per controller, `arena-<token>`
//!   under this process's own cgroup of that controller;
//! - cgroup v2 (the unified hierarchy at `/sys/fs/cgroup`), as root or not:
//!   a subtree arena may use, found once ([`Tree`]): (a) the folder that
//!   the `ARENA_CGROUP` variable names (one the organiser was given); (b)
//!   as root, `/sys/fs/cgroup/arena-<pid>`, made for this run (and removed
//!   by the next run as root once empty); (c) its own
//!   cgroup when it is delegated to it (as under `systemd-run --user
//!   --scope -p Delegate=yes`). The referee leaves the subtree's top for
//!   the leaf `<subtree>/referee` when it lives there (no process may live
//!   in a cgroup that hands controllers to its children), and each bot
//!   gets the sibling leaf `<subtree>/arena-<token>`.
//!
//! Where no cgroup can be made, only rlimits apply: the file size, and the
//! memory as each process's data size (`RLIMIT_DATA`); [`mechanism`] says
//! which is in force, and why when no cgroup is.

use crate::bot::launch::Limits;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where the cgroup file systems are mounted.
const ROOT: &str = "/sys/fs/cgroup";

/// The variable that names a delegated cgroup v2 folder for arena's bots.
pub const SUBTREE_VAR: &str = "ARENA_CGROUP";

/// One bot's cgroups (one per controller on v1, one leaf on v2), removed
/// with the bot.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    /// The file whose `oom_kill N` line counts the bot's OOM kills.
    oom_events: Option<PathBuf>,
    /// The file whose `max N` line counts the forks refused at `pids.max`.
    pids_events: Option<PathBuf>,
}

/// The tasks of a bot's cgroups that are not the bot's: its keeper, which
/// joins them before it forks, and its namespace's init (docs/security.md,
/// "How it is done"). `pids.max` is the bot's `processes` plus these, so
/// that the limit a bot is told is all its own.
pub const KEEPER_TASKS: u64 = 2;

/// Where this process's cgroup of `controller` is (cgroup v1), if mounted.
fn own_dir(controller: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, names, path) = (f.next()?, f.next()?, f.next()?);
        names.split(',').any(|n| n == controller).then(|| {
            Path::new(ROOT)
                .join(controller)
                .join(path.trim_start_matches('/'))
        })
    })
}

/// True when `/sys/fs/cgroup` is the unified hierarchy (cgroup v2 only;
/// a hybrid host, whose controllers are all on v1, is not).
fn unified() -> bool {
    Path::new(ROOT).join("cgroup.controllers").exists()
}

/// This process's cgroup on the unified hierarchy (the `0::/path` line of
/// `/proc/self/cgroup`), as a folder.
fn own_v2() -> Result<PathBuf, String> {
    let text = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("/proc/self/cgroup has no cgroup v2 line (0::/path)")?;
    Ok(Path::new(ROOT).join(path.trim().trim_start_matches('/')))
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// The pids in a cgroup's `cgroup.procs`.
fn procs_in(dir: &Path) -> Result<Vec<u32>, String> {
    let text = std::fs::read_to_string(dir.join("cgroup.procs"))
        .map_err(|e| format!("cannot read {}/cgroup.procs: {e}", dir.display()))?;
    Ok(text.lines().filter_map(|l| l.trim().parse().ok()).collect())
}

/// The cgroup v2 subtree this referee makes its bots' cgroups in, found
/// and prepared once per process.
#[derive(Debug)]
struct Tree {
    /// The folder the bots' leaves are made in.
    base: PathBuf,
    /// How it was found, for [`mechanism`].
    how: &'static str,
    /// What `base/cgroup.controllers` offers.
    offered: Vec<String>,
    /// Whether the cpu and cpuset controllers are on for the leaves: each
    /// is turned on at its first use only (a bot of a pinned worker needs
    /// no cpu controller, whose group scheduling costs per decision).
    cpu: OnceLock<bool>,
    cpuset: OnceLock<bool>,
}

impl Tree {
    fn offers(&self, controller: &str) -> bool {
        self.offered.iter().any(|c| c == controller)
    }

    /// Turns `controller` on for the leaves when offered; true when on.
    fn enable(&self, controller: &'static str) -> bool {
        let cell = match controller {
            "cpu" => &self.cpu,
            _ => &self.cpuset,
        };
        *cell.get_or_init(|| {
            self.offers(controller)
                && std::fs::write(
                    self.base.join("cgroup.subtree_control"),
                    format!("+{controller}"),
                )
                .is_ok()
        })
    }
}

/// The subtree once found, or why there is none.
static TREE: OnceLock<Result<Tree, String>> = OnceLock::new();

/// The subtree, or why there is none (one line).
fn tree() -> &'static Result<Tree, String> {
    TREE.get_or_init(find_tree)
}

/// Finds the subtree: `ARENA_CGROUP` when set (then nothing else), else as
/// root a folder of its own at the top, else its own cgroup if delegated.
fn find_tree() -> Result<Tree, String> {
    let own = own_v2()?;
    let tree = |base: PathBuf, how, offered| Tree {
        base,
        how,
        offered,
        cpu: OnceLock::new(),
        cpuset: OnceLock::new(),
    };
    if let Some(given) = std::env::var_os(SUBTREE_VAR) {
        let base = PathBuf::from(given);
        return match prepare(&base, &own) {
            Ok(offered) => Ok(tree(base, "given by ARENA_CGROUP", offered)),
            Err(why) => Err(format!("{SUBTREE_VAR}={}: {why}", base.display())),
        };
    }
    let mut why = Vec::new();
    if is_root() {
        sweep_dead_runs();
        let base = Path::new(ROOT).join(format!("arena-{}", std::process::id()));
        let made = std::fs::create_dir(&base)
            .map_err(|e| format!("cannot make {}: {e}", base.display()))
            .and_then(|()| {
                // Our own folder needs the controllers from the top.
                std::fs::write(
                    Path::new(ROOT).join("cgroup.subtree_control"),
                    "+memory +pids",
                )
                .map_err(|e| format!("cannot enable memory and pids at {ROOT}: {e}"))?;
                // CPUs are limited where the top offers them.
                for cpu in ["+cpu", "+cpuset"] {
                    let _ = std::fs::write(Path::new(ROOT).join("cgroup.subtree_control"), cpu);
                }
                Ok(())
            })
            .and_then(|()| prepare(&base, &own));
        match made {
            Ok(offered) => return Ok(tree(base, "made as root", offered)),
            Err(w) => {
                let _ = std::fs::remove_dir(&base);
                why.push(format!("as root: {w}"));
            }
        }
    }
    match prepare(&own, &own) {
        Ok(offered) => Ok(tree(own, "arena's own cgroup, delegated", offered)),
        Err(w) => {
            why.push(format!(
                "its cgroup {}: {w} (run arena under `systemd-run --user --scope -p Delegate=yes`, or set {SUBTREE_VAR} to a delegated folder: docs/security.md)",
                own.display()
            ));
            Err(why.join("; "))
        }
    }
}

/// Removes the subtrees `arena-<pid>` at the top that referees which have
/// ended made as root (they cannot remove their own when they end), with
/// their empty leaves.
fn sweep_dead_runs() {
    let Ok(entries) = std::fs::read_dir(ROOT) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("arena-"))
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| p != std::process::id() && !crate::host::process_alive(p)) {
            remove_tree(&e.path());
        }
    }
}

/// Makes `base` ready for bot leaves: it must offer the memory and pids
/// controllers and hold no process but this one; this process moves into
/// the leaf `base/referee` when it lives in `base` itself (or, not being
/// root, outside the subtree: its bots could not join from there); then
/// memory and pids are turned on for the leaves. Returns what `base`
/// offers.
fn prepare(base: &Path, own: &Path) -> Result<Vec<String>, String> {
    let offered = std::fs::read_to_string(base.join("cgroup.controllers")).map_err(|e| {
        format!(
            "not a cgroup v2 folder ({}/cgroup.controllers: {e})",
            base.display()
        )
    })?;
    let offered: Vec<String> = offered.split_whitespace().map(String::from).collect();
    for need in ["memory", "pids"] {
        if !offered.iter().any(|c| c == need) {
            return Err(format!(
                "the {need} controller is not delegated to it (cgroup.controllers: '{}'; its parent must list {need} in cgroup.subtree_control)",
                offered.join(" ")
            ));
        }
    }
    let me = std::process::id();
    let procs = procs_in(base)?;
    let others = procs.iter().filter(|&&p| p != me).count();
    if others > 0 {
        return Err(format!(
            "{others} other process(es) live in it, so it cannot hand controllers to its children (move them into a leaf)"
        ));
    }
    if procs.contains(&me) || (!is_root() && !own.starts_with(base)) {
        let leaf = base.join("referee");
        if let Err(e) = std::fs::create_dir(&leaf) {
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(format!("cannot make {}: {e}", leaf.display()));
            }
        }
        std::fs::write(leaf.join("cgroup.procs"), me.to_string()).map_err(|e| {
            format!(
                "cannot move arena (in {}) into {}: {e}; a non-root arena must be started inside the folder it is given",
                own.display(),
                leaf.display()
            )
        })?;
    }
    std::fs::write(base.join("cgroup.subtree_control"), "+memory +pids").map_err(|e| {
        format!(
            "cannot enable memory and pids in {}/cgroup.subtree_control: {e}",
            base.display()
        )
    })?;
    Ok(offered)
}

impl Cgroup {
    /// Makes the cgroups of the bot `name` (unique) with `limits` written
    /// in: on cgroup v2 a leaf of the subtree, on v1 one folder per
    /// controller under this process's own. `None` where cgroups cannot be
    /// made here (then none is left half made; [`mechanism`] says why).
    pub fn create(name: &str, limits: &Limits) -> Option<Cgroup> {
        if unified() {
            Self::create_v2(tree().as_ref().ok()?, name, limits)
        } else {
            Self::create_v1(name, limits)
        }
    }

    /// The CPUs of this thread when it is pinned to at most `cpus` of
    /// them, as a cpuset list ("0,3").
    fn pinned(limits: &Limits) -> Option<String> {
        let cpus = crate::host::allowed_cpus().filter(|c| c.len() <= limits.cpus as usize)?;
        Some(
            cpus.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(","),
        )
    }

    /// The bot's leaf `arena-<name>` of the v2 subtree.
    fn create_v2(tree: &Tree, name: &str, limits: &Limits) -> Option<Cgroup> {
        let dir = tree.base.join(format!("arena-{name}"));
        std::fs::create_dir(&dir).ok()?;
        let mut made = Cgroup {
            dirs: vec![dir.clone()],
            oom_events: Some(dir.join("memory.events")),
            pids_events: Some(dir.join("pids.events")),
        };
        let mut files = vec![
            (
                "memory.max",
                limits.memory_mb.saturating_mul(1 << 20).to_string(),
            ),
            ("pids.max", pids_max(limits).to_string()),
        ];
        match Self::pinned(limits) {
            Some(cpus) if tree.enable("cpuset") => files.push(("cpuset.cpus", cpus)),
            _ if tree.enable("cpu") => files.push((
                "cpu.max",
                format!("{} 100000", u64::from(limits.cpus) * 100_000),
            )),
            _ => {}
        }
        for (file, value) in files {
            if std::fs::write(dir.join(file), value).is_err() {
                made.remove();
                return None;
            }
        }
        // No swap to hide in, where the kernel offers the knob.
        let _ = std::fs::write(dir.join("memory.swap.max"), "0");
        Some(made)
    }

    /// The bot's folders `arena-<name>` under our own v1 cgroups.
    fn create_v1(name: &str, limits: &Limits) -> Option<Cgroup> {
        let mut made = Cgroup {
            dirs: Vec::new(),
            oom_events: None,
            pids_events: None,
        };
        let bytes = limits.memory_mb.saturating_mul(1 << 20);
        let quota = u64::from(limits.cpus) * 100_000;
        let cpus = match (Self::pinned(limits), Self::parent_mems()) {
            (Some(pinned), Some(mems)) => (
                "cpuset",
                // cpuset.mems must be set before a process joins: the
                // parent's.
                vec![("cpuset.mems", mems), ("cpuset.cpus", pinned)],
            ),
            _ => (
                "cpu",
                vec![
                    ("cpu.cfs_period_us", "100000".into()),
                    ("cpu.cfs_quota_us", quota.to_string()),
                ],
            ),
        };
        let settings: [(&str, Vec<(&str, String)>); 3] = [
            ("memory", vec![("memory.limit_in_bytes", bytes.to_string())]),
            ("pids", vec![("pids.max", pids_max(limits).to_string())]),
            cpus,
        ];
        for (controller, files) in settings {
            let dir = own_dir(controller)?.join(format!("arena-{name}"));
            if std::fs::create_dir(&dir).is_err() {
                made.remove();
                return None;
            }
            made.dirs.push(dir.clone());
            for (file, value) in files {
                if std::fs::write(dir.join(file), &value).is_err() {
                    made.remove();
                    return None;
                }
            }
            if controller == "pids" {
                made.pids_events = Some(dir.join("pids.events"));
            }
            if controller == "memory" {
                // No swap to hide in, where the kernel offers the knob.
                let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), bytes.to_string());
                made.oom_events = Some(dir.join("memory.oom_control"));
            }
        }
        Some(made)
    }

    /// The memory nodes of our own v1 cpuset, which a new cpuset must copy.
    fn parent_mems() -> Option<String> {
        let mems = std::fs::read_to_string(own_dir("cpuset")?.join("cpuset.mems")).ok()?;
        Some(mems.trim().to_string())
    }

    /// The `cgroup.procs` files a process writes `0` into to join.
    pub fn procs_files(&self) -> Vec<CString> {
        self.dirs
            .iter()
            .filter_map(|d| {
                CString::new(d.join("cgroup.procs").into_os_string().into_encoded_bytes()).ok()
            })
            .collect()
    }

    /// True when the kernel killed a process of the bot at its memory
    /// limit (`oom_kill N` of v2's `memory.events`, v1's
    /// `memory.oom_control`).
    pub fn oom_killed(&self) -> bool {
        counted(self.oom_events.as_deref(), "oom_kill ")
    }

    /// True when a fork or thread of the bot was refused at its process
    /// limit (`max N` of `pids.events`, v1 and v2), where readable.
    pub fn pids_max_hit(&self) -> bool {
        counted(self.pids_events.as_deref(), "max ")
    }

    /// Removes the cgroups (they must be empty: call it when the bot's
    /// processes are dead).
    pub fn remove(&mut self) {
        for d in self.dirs.drain(..) {
            let _ = std::fs::remove_dir(d);
        }
        self.oom_events = None;
        self.pids_events = None;
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.remove();
    }
}

/// True when the events file `file` of a bot's cgroup has a line `key N`
/// with N > 0 (`oom_kill 1`, `max 3`); false where it is unreadable.
fn counted(file: Option<&Path>, key: &str) -> bool {
    let Some(text) = file.and_then(|f| std::fs::read_to_string(f).ok()) else {
        return false;
    };
    text.lines()
        .filter_map(|l| l.strip_prefix(key))
        .any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
}

/// The `pids.max` of a bot under `limits`: its own `processes`, its
/// keeper and its init ([`KEEPER_TASKS`]).
fn pids_max(limits: &Limits) -> u64 {
    limits.processes.saturating_add(KEEPER_TASKS)
}

/// Removes the empty cgroup `dir` and the empty ones under it, deepest
/// first (a cgroup's files cannot be removed, and need not be).
fn remove_tree(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Removes the (empty) bot cgroups whose name `left` says are left over:
/// on v1 under ours; on v2 in the subtree (`ARENA_CGROUP`, or our own
/// cgroup's) and, as root, the `arena-<pid>` subtrees of dead referees at
/// the top with what is in them.
pub fn sweep(left: impl Fn(&str) -> bool) {
    let places: Vec<PathBuf> = if unified() {
        let mut places = Vec::new();
        if let Some(given) = std::env::var_os(SUBTREE_VAR) {
            places.push(PathBuf::from(given));
        } else {
            if is_root() {
                places.push(PathBuf::from(ROOT));
            }
            // Before the subtree is prepared, our own cgroup is where (c)
            // would put the bots; after, the subtree says.
            match TREE.get().and_then(|t| t.as_ref().ok()) {
                Some(t) => places.push(t.base.clone()),
                None => places.extend(own_v2().ok()),
            }
        }
        places
    } else {
        ["memory", "pids", "cpu", "cpuset"]
            .into_iter()
            .filter_map(own_dir)
            .collect()
    };
    for dir in places {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            if left(&e.file_name().to_string_lossy()) && e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path());
            }
        }
    }
}

/// Which mechanism enforces the limits here (one line): cgroups when one
/// can be made, else the rlimits only, and why.
pub fn mechanism() -> &'static str {
    static SAID: OnceLock<String> = OnceLock::new();
    SAID.get_or_init(|| {
        let probe = Limits::new(64);
        let made = Cgroup::create(&format!("probe-{}", std::process::id()), &probe);
        let none = "rlimit (file size; memory as each process's data size) only: no cgroup can be made here (processes and CPU are not limited)";
        match (made, unified()) {
            (Some(_), false) => "cgroup v1 (memory, processes, CPUs: a cpuset where pinned, else a CFS quota) and rlimit (file size)".to_string(),
            (None, false) => format!("{none}: cgroup v1, which needs root"),
            (Some(_), true) => match tree() {
                Ok(t) => {
                    let cpu = match (t.offers("cpuset"), t.offers("cpu")) {
                        (true, true) => "CPUs: a cpuset where pinned, else a cpu.max quota",
                        (false, true) => "CPUs: a cpu.max quota",
                        (true, false) => "CPUs: a cpuset where pinned, else not limited",
                        (false, false) => "CPUs not limited (no cpu controller)",
                    };
                    format!(
                        "cgroup v2 at {} ({}): memory, pids, {cpu}; and rlimit (file size)",
                        t.base.display(),
                        t.how
                    )
                }
                Err(why) => format!("{none}: {why}"),
            },
            (None, true) => match tree() {
                Ok(t) => format!("{none}: cannot make a cgroup in {}", t.base.display()),
                Err(why) => format!("{none}: cgroup v2, but {why}"),
            },
        }
    })
}
