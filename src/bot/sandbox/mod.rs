//! The sandbox: everything that shuts a bot process in, behind one type,
//! [`Jail`], that the bot runner asks for a prepared child and releases
//! when the process is gone (docs/security.md).
//!
//! Rooms:
//! - `view.rs`: what the bot sees of the file system, planned in ordinary
//!   code before the fork;
//! - `child.rs`: the child's side between fork and exec (namespaces, the
//!   keeper, the root replayed from the plan), async-signal-safe only;
//! - `cgroup.rs`: kernel limits on memory, processes and CPU.
//!
//! Nothing outside this folder makes a namespace, a mount or a cgroup.

pub mod cgroup;
mod child;
pub mod landlock;
pub mod seccomp;
mod view;

pub use child::{is_isolate_error, VIEW_FAILED};
pub use view::SCRATCH_IN_VIEW;

use super::{BotError, Launch};
use std::path::PathBuf;

/// The variables a sandboxed bot keeps from the referee's environment
/// (besides `HOME` and `TMPDIR`, which point at its scratch folder).
pub const SANDBOX_ENV: &[&str] = &["PATH", "LANG"];

/// One sandboxed process's share of the machine: its scratch folder (where
/// its root is built) and its cgroups. Made by [`Jail::prepare`] before
/// the spawn, released when the process is gone.
#[derive(Debug)]
pub struct Jail {
    scratch: Option<PathBuf>,
    cgroup: Option<cgroup::Cgroup>,
}

impl Jail {
    /// Prepares `c` to start `launch`'s command in the sandbox: its
    /// environment cleared to [`SANDBOX_ENV`] (with `HOME` and `TMPDIR` at
    /// its scratch `/tmp`), its cgroups made where they can be, and the
    /// namespaces and root that the child builds between fork and exec.
    /// `token` names the scratch folder and the cgroups.
    pub fn prepare(
        launch: &Launch,
        c: &mut std::process::Command,
        token: &str,
    ) -> Result<Jail, BotError> {
        let cmd = &launch.command;
        let limits = &launch.limits;
        let failed = |source| BotError::Sandbox {
            command: cmd.display(),
            source,
        };
        let dir = scratch_dir(token).map_err(failed)?;
        let mut jail = Jail {
            scratch: Some(dir.clone()),
            cgroup: None,
        };
        c.env_clear();
        for k in SANDBOX_ENV {
            if let Some(v) = std::env::var_os(k) {
                c.env(k, v);
            }
        }
        c.env("HOME", SCRATCH_IN_VIEW)
            .env("TMPDIR", SCRATCH_IN_VIEW);
        let tmp_bytes = limits.file_size_mb.saturating_mul(1 << 20);
        // On failure, `jail` is dropped: the scratch folder goes with it.
        let view = view::plan(cmd, &dir.join("root"), tmp_bytes, &launch.hidden).map_err(failed)?;
        jail.cgroup = cgroup::Cgroup::create(token, limits);
        let procs = jail
            .cgroup
            .as_ref()
            .map(|g| g.procs_files())
            .unwrap_or_default();
        // Without a memory cgroup, each process's data (heap and private
        // writable mappings) is bounded instead.
        let data = match jail.cgroup {
            Some(_) => None,
            None => Some(limits.memory_mb.saturating_mul(1 << 20)),
        };
        child::isolate(c, procs, tmp_bytes, data, view);
        Ok(jail)
    }

    /// True when the kernel killed one of the bot's processes at its
    /// memory limit.
    pub fn over_memory(&self) -> bool {
        self.cgroup.as_ref().is_some_and(cgroup::Cgroup::oom_killed)
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
