//! What a sandboxed bot sees of the file system: a root of its own, built
//! for each process before it starts (docs/security.md).
//!
//! Read-only: the system folders (`/usr`, `/etc`, `/opt`, and `/bin`, `/lib`
//! and the like, as folders or as the links they are), each folder on
//! `PATH` (with the installation that holds it when it is named `bin` or
//! `shims`: a pyenv, a virtualenv, `~/.cargo`), the bot's working folder
//! when its command names one, the program when it is named by a path, and
//! the folder of every argument that names an existing file (the script and
//! its neighbours). Writable: `/tmp`, a tmpfs of the process's own (at most
//! `file_size_mb`, in memory, gone with it), also its `HOME` and `TMPDIR`. Besides: a `/proc` of its own
//! PID namespace (no other process in it) and the devices `null`, `zero`,
//! `full`, `random`, `urandom`. Nothing else: no other bot's folder, no
//! home folder, no results.
//!
//! Where one of those folders holds a folder the caller hides (the league's
//! results), an empty read-only folder is mounted over it. A folder that
//! holds the system's temporary folder (`/`, `/tmp`) is never shown: the
//! other bots' scratch folders are there.
//!
//! Everything is planned here, in ordinary code, before the fork; the child
//! only replays the plan (`sys::RootPlan`).

use super::child::{self as sys, MountStep, RootPlan};
use crate::bot::BotCommand;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// The system folders every bot sees, read-only (those that exist).
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// The devices every bot may open.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// Where the bot's scratch folder appears, as `HOME` and `TMPDIR`.
pub const SCRATCH_IN_VIEW: &str = "/tmp";

/// The folders of a bot's view, before they become mount steps.
struct Exposed {
    /// Folders shown read-only at their own path (canonical).
    dirs: Vec<PathBuf>,
    /// Files shown read-only at their own path (canonical).
    files: Vec<PathBuf>,
}

impl Exposed {
    fn covers(&self, p: &Path) -> bool {
        self.dirs.iter().any(|d| p.starts_with(d))
    }

    /// Adds a folder unless it is already covered; drops the folders it
    /// covers. Never `/` or a folder that holds the temporary folder.
    /// False when it cannot be shown.
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
        if file.is_file() && !self.files.contains(&file) {
            self.files.push(file);
        }
    }
}

/// Plans the root of a sandboxed process of `cmd`: built at `root` (an
/// empty folder), with a fresh tmpfs of at most `tmp_bytes` as its
/// writable `/tmp` (memory of its own, counted against its memory limit,
/// gone with it: a bot cannot fill the disk), and the folders `hidden`
/// emptied if it would see them.
pub fn plan(
    cmd: &BotCommand,
    root: &Path,
    tmp_bytes: u64,
    hidden: &[PathBuf],
) -> std::io::Result<RootPlan> {
    let temp = std::env::temp_dir()
        .canonicalize()
        .unwrap_or_else(|_| std::env::temp_dir());
    let referee_cwd = std::env::current_dir()?;
    let cwd = match &cmd.cwd {
        Some(c) if c.is_absolute() => c.clone(),
        Some(c) => referee_cwd.join(c),
        None => referee_cwd,
    };
    let cwd = cwd.canonicalize().unwrap_or(cwd);

    let mut ex = Exposed {
        dirs: Vec::new(),
        files: Vec::new(),
    };
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
                ex.add_dir(p, &temp);
            }
            _ => {}
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if !dir.is_absolute() {
                continue;
            }
            let installation = matches!(
                dir.file_name().and_then(|n| n.to_str()),
                Some("bin" | "shims")
            );
            match (installation, dir.parent()) {
                (true, Some(up)) if up.parent().is_some() => ex.add_dir(up, &temp),
                _ => ex.add_dir(&dir, &temp),
            };
        }
    }
    if cmd.cwd.is_some() {
        ex.add_dir(&cwd, &temp);
    }
    if cmd.program.contains('/') {
        // A program in an installation's `bin` (a virtualenv's python)
        // needs the installation; anything else, only itself.
        let program = cwd.join(&cmd.program);
        let installation = program
            .parent()
            .filter(|up| up.file_name().is_some_and(|n| n == "bin"))
            .and_then(Path::parent)
            .filter(|top| top.parent().is_some());
        if !installation.is_some_and(|top| ex.add_dir(top, &temp)) {
            ex.add_file(&program);
        }
    }
    for arg in &cmd.args {
        let p = cwd.join(arg);
        if p.is_dir() {
            ex.add_dir(&p, &temp);
        } else if p.is_file() {
            // The script's folder; the script alone when its folder cannot
            // be shown (a script in /tmp).
            if !p.parent().is_some_and(|up| ex.add_dir(up, &temp)) {
                ex.add_file(&p);
            }
        }
    }
    let files = std::mem::take(&mut ex.files);
    ex.files = files.into_iter().filter(|f| !ex.covers(f)).collect();
    // The paths the command names, as it names them: a link on the way
    // (`/srv/bot -> /data/bots/x`) is made in the view too, so that the
    // given path leads where the shown (real) one is.
    let mut named: Vec<PathBuf> = cmd
        .args
        .iter()
        .chain(std::iter::once(&cmd.program).filter(|p| p.contains('/')))
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.exists())
        .collect();
    named.extend(cmd.cwd.iter().filter(|c| c.is_absolute()).cloned());
    let mut symlinks = Vec::new();
    for p in &named {
        links_on_the_way(p, &mut symlinks, 0);
    }

    let at = |p: &Path| c_path(&root.join(p.strip_prefix("/").unwrap_or(p)));
    let mut steps = Vec::new();
    let mut made: Vec<PathBuf> = Vec::new();
    let mut make_dirs = |steps: &mut Vec<MountStep>, p: &Path| -> std::io::Result<()> {
        let mut sofar = PathBuf::from("/");
        for c in p.components() {
            if let Component::Normal(n) = c {
                sofar.push(n);
                if !made.contains(&sofar) {
                    made.push(sofar.clone());
                    steps.push(MountStep::Dir(at(&sofar)?));
                }
            }
        }
        Ok(())
    };
    // The scratch folder first: what is shown below /tmp (a script there)
    // is mounted on top of it.
    let tmp = Path::new(SCRATCH_IN_VIEW);
    make_dirs(&mut steps, tmp)?;
    steps.push(MountStep::Scratch {
        dst: at(tmp)?,
        options: CString::new(format!("mode=0700,size={}", tmp_bytes.max(4096)))
            .map_err(std::io::Error::other)?,
    });
    for (target, link) in &links {
        steps.push(MountStep::Symlink {
            target: c_path(target)?,
            link: at(link)?,
        });
    }
    let mounts = sys::mount_points();
    for dir in &ex.dirs {
        make_dirs(&mut steps, dir)?;
        steps.push(MountStep::Bind {
            src: c_path(dir)?,
            dst: at(dir)?,
            read_only: Some(sys::locked_flags(dir)),
        });
        // Mounts inside it are bound with it, and made read-only too.
        for m in mounts
            .iter()
            .filter(|m| m.starts_with(dir) && m.as_path() != dir.as_path())
        {
            steps.push(MountStep::ReadOnly {
                dst: at(m)?,
                flags: sys::locked_flags(m),
            });
        }
    }
    for file in &ex.files {
        if let Some(up) = file.parent() {
            make_dirs(&mut steps, up)?;
        }
        steps.push(MountStep::File(at(file)?));
        steps.push(MountStep::Bind {
            src: c_path(file)?,
            dst: at(file)?,
            read_only: Some(sys::locked_flags(file)),
        });
    }
    for (link, target) in &symlinks {
        // Inside a shown folder it is shown already; the system's links
        // are made above. (A canonical path never passes through a link,
        // so no folder was made at its place.)
        if ex.covers(link) || links.iter().any(|(_, l)| l == link) {
            continue;
        }
        if let Some(up) = link.parent() {
            make_dirs(&mut steps, up)?;
        }
        steps.push(MountStep::Symlink {
            target: c_path(target)?,
            link: at(link)?,
        });
    }
    for h in hidden {
        let h = h.canonicalize().unwrap_or_else(|_| h.clone());
        if h.is_dir() && ex.covers(&h) {
            steps.push(MountStep::Empty(at(&h)?));
        }
    }
    make_dirs(&mut steps, Path::new("/dev"))?;
    for d in DEVICES {
        let dev = Path::new("/dev").join(d);
        if dev.exists() {
            steps.push(MountStep::File(at(&dev)?));
            steps.push(MountStep::Bind {
                src: c_path(&dev)?,
                dst: at(&dev)?,
                read_only: None,
            });
        }
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        steps.push(MountStep::Symlink {
            target: c_path(Path::new(target))?,
            link: at(&Path::new("/dev").join(link))?,
        });
    }
    make_dirs(&mut steps, Path::new("/proc"))?;
    steps.push(MountStep::Proc(at(Path::new("/proc"))?));
    // The working folder exists in the view even when nothing shows it (an
    // empty folder, so that relative paths in the command resolve).
    if !ex.covers(&cwd) {
        make_dirs(&mut steps, &cwd)?;
    }
    Ok(RootPlan {
        root: c_path(root)?,
        steps,
        cwd: c_path(&cwd)?,
    })
}

/// The symbolic links met on the way along the absolute path `p`, each with
/// its target, then those along the targets (at most 8 deep).
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

    fn dirs_of(plan: &RootPlan, root: &Path) -> Vec<String> {
        plan.steps
            .iter()
            .filter_map(|s| match s {
                MountStep::Bind {
                    dst,
                    read_only: Some(_),
                    ..
                } => Some(
                    Path::new(dst.to_str().unwrap())
                        .strip_prefix(root)
                        .unwrap()
                        .display()
                        .to_string(),
                ),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_bot_sees_its_folder_and_the_script_folder_but_not_the_hidden_one() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("bots/me")).unwrap();
        std::fs::create_dir_all(base.join("bots/other")).unwrap();
        std::fs::create_dir_all(base.join("lib/shared")).unwrap();
        std::fs::write(base.join("lib/shared/run.py"), "").unwrap();
        std::fs::create_dir_all(base.join("bots/me/results")).unwrap();
        let cmd = BotCommand {
            program: "python3".into(),
            args: vec![
                "bot.py".into(),
                base.join("lib/shared/run.py").display().to_string(),
            ],
            cwd: Some(base.join("bots/me")),
            env: vec![],
        };
        let root = base.join("root");
        let plan = plan(&cmd, &root, 1 << 20, &[base.join("bots/me/results")]).unwrap();
        let shown = dirs_of(&plan, &root);
        let rel = |p: &str| {
            base.join(p)
                .strip_prefix("/")
                .unwrap()
                .display()
                .to_string()
        };
        assert!(shown.contains(&rel("bots/me")), "{shown:?}");
        assert!(shown.contains(&rel("lib/shared")), "{shown:?}");
        assert!(!shown.iter().any(|s| s.contains("other")), "{shown:?}");
        assert!(shown.contains(&"usr".to_string()), "{shown:?}");
        let emptied: Vec<_> = plan
            .steps
            .iter()
            .filter_map(|s| match s {
                MountStep::Empty(p) => Some(p.to_str().unwrap().to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(
            emptied,
            vec![root.join(rel("bots/me/results")).display().to_string()]
        );
        assert_eq!(
            plan.cwd.to_str().unwrap(),
            base.join("bots/me").to_str().unwrap()
        );
    }

    /// A script named through a link is reached through the same link in
    /// the view.
    #[test]
    fn a_link_on_the_way_to_the_script_is_made_in_the_view() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("real/bot")).unwrap();
        std::fs::write(base.join("real/bot/bot.py"), "").unwrap();
        std::fs::create_dir(base.join("links")).unwrap();
        std::os::unix::fs::symlink(base.join("real/bot"), base.join("links/bot")).unwrap();
        let script = base.join("links/bot/bot.py");
        let cmd = BotCommand {
            program: "python3".into(),
            args: vec![script.display().to_string()],
            cwd: None,
            env: vec![],
        };
        let root = base.join("root");
        let plan = plan(&cmd, &root, 1 << 20, &[]).unwrap();
        let link = root.join(base.join("links/bot").strip_prefix("/").unwrap());
        assert!(
            plan.steps.iter().any(|s| matches!(s,
                MountStep::Symlink { target, link: l }
                    if l.to_str().ok() == link.to_str() && target.to_str().ok() == base.join("real/bot").to_str())),
            "{:?}",
            plan.steps
        );
        assert!(dirs_of(&plan, &root)
            .iter()
            .any(|d| d.ends_with("real/bot")));
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
        let plan = plan(&cmd, &t.path().join("r"), 1 << 20, &[]).unwrap();
        let shown = dirs_of(&plan, &t.path().join("r"));
        assert!(
            !shown.iter().any(|s| s.is_empty() || s == "tmp"),
            "{shown:?}"
        );
    }
}
