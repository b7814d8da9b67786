//! Kernel limits for one bot process tree through cgroup v1 (as root):
//! memory (the kernel's OOM killer ends the tree at the limit, and the
//! cgroup counts it), processes (pids.max) and CPUs. A bot spawned by a
//! thread pinned to at most `cpus` CPUs (a league's workers are) is held
//! to those CPUs by a cpuset, which costs nothing per decision; otherwise
//! a CFS quota of `cpus` CPUs applies (the cpu controller's group
//! scheduling costs about 0.5 us per decision round trip, measured in
//! BENCHMARKS.md).
//! Where no cgroup can be made (not root, cgroup v2 not delegated), only
//! rlimits apply: the file size, and the memory as each process's data
//! size (`RLIMIT_DATA`); [`mechanism`] says which is in force.

use crate::bot::Limits;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// One bot's cgroups, one per controller, removed with the bot.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    memory: Option<PathBuf>,
}

/// Where this process's cgroup of `controller` is (cgroup v1), if mounted.
fn own_dir(controller: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, names, path) = (f.next()?, f.next()?, f.next()?);
        names.split(',').any(|n| n == controller).then(|| {
            Path::new("/sys/fs/cgroup")
                .join(controller)
                .join(path.trim_start_matches('/'))
        })
    })
}

impl Cgroup {
    /// Makes the cgroups of the bot `name` (unique) under this process's
    /// own, with `limits` written in. `None` where cgroups cannot be made
    /// here (then none is left half made).
    pub fn create(name: &str, limits: &Limits) -> Option<Cgroup> {
        let mut made = Cgroup {
            dirs: Vec::new(),
            memory: None,
        };
        let bytes = limits.memory_mb.saturating_mul(1 << 20);
        let quota = u64::from(limits.cpus) * 100_000;
        let pinned = crate::host::allowed_cpus().filter(|c| c.len() <= limits.cpus as usize);
        let cpus = match (pinned, Self::parent_mems()) {
            (Some(pinned), Some(mems)) => (
                "cpuset",
                vec![
                    // Must be set before a process joins: the parent's.
                    ("cpuset.mems", mems),
                    (
                        "cpuset.cpus",
                        pinned
                            .iter()
                            .map(usize::to_string)
                            .collect::<Vec<_>>()
                            .join(","),
                    ),
                ],
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
            ("pids", vec![("pids.max", limits.processes.to_string())]),
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
            if controller == "memory" {
                // No swap to hide in, where the kernel offers the knob.
                let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), bytes.to_string());
                made.memory = Some(dir);
            }
        }
        Some(made)
    }

    /// The memory nodes of our own cpuset, which a new cpuset must copy.
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
    /// limit.
    pub fn oom_killed(&self) -> bool {
        let Some(dir) = &self.memory else {
            return false;
        };
        let Ok(text) = std::fs::read_to_string(dir.join("memory.oom_control")) else {
            return false;
        };
        text.lines()
            .filter_map(|l| l.strip_prefix("oom_kill "))
            .any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
    }

    /// Removes the cgroups (they must be empty: call it when the bot's
    /// processes are dead).
    pub fn remove(&mut self) {
        for d in self.dirs.drain(..) {
            let _ = std::fs::remove_dir(d);
        }
        self.memory = None;
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes the (empty) bot cgroups under ours whose name `left` says are
/// left over.
pub fn sweep(left: impl Fn(&str) -> bool) {
    for controller in ["memory", "pids", "cpu", "cpuset"] {
        let Some(dir) = own_dir(controller) else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            if left(&e.file_name().to_string_lossy()) {
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
}

/// Which mechanism enforces the limits here: cgroups when one can be made,
/// else the file-size rlimit only.
pub fn mechanism() -> &'static str {
    let probe = Limits::new(64);
    match Cgroup::create(&format!("probe-{}", std::process::id()), &probe) {
        Some(_) => "cgroup v1 (memory, processes, CPUs: a cpuset where pinned, else a CFS quota) and rlimit (file size)",
        None => "rlimit (file size; memory as each process's data size) only: no cgroup can be made here (processes and CPU are not limited)",
    }
}
