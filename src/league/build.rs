//! Before a league's first game, the bots are built. Two kinds of build:
//!
//! - a bot's own (its bot.toml's or league entry's `build`) is its
//!   author's code: it runs in the sandbox, in a copy of the bot's folder,
//!   and the bot then runs from that copy ([`crate::bot::build`]);
//! - this package's binaries that bots name as `{bin_dir}/NAME` (the
//!   shipped Rust bots) are the organiser's own program, built from the
//!   source `arena` was built from, by cargo, as `arena` itself was.

use super::config::BotSpec;
use super::events::{Event, LeagueError};
use super::launch::Room;
use crate::bot::build::{wait, BuildError, Stop, Waited};
use crate::bot::manifest;
use std::path::{Path, PathBuf};

/// The binaries of this package that a bot may name as `{bin_dir}/NAME`.
pub const PACKAGE_BINARIES: &[&str] = &[
    "random-bot",
    "greedy-bot",
    "search-bot",
    "alphabeta-bot",
    "filo-solve",
];

/// Builds what `bots` need: this package's binaries they name, then each
/// bot's own build, in the sandbox of `room`. A signal that `stop` notes
/// (where given) kills the build under way and ends them all:
/// [`LeagueError::Interrupted`], nothing of that build kept.
pub fn build_bots(
    bots: &[BotSpec],
    room: &Room<'_>,
    stop: Option<&Stop>,
    on_event: &mut dyn FnMut(&Event),
) -> Result<(), LeagueError> {
    build_bots_made(bots, room, stop, on_event).map(drop)
}

/// [`build_bots`], returning the names of the bots whose programs the
/// builds may have changed (to hash after them): each bot built by its
/// own build, and each that names a package binary when cargo was run to
/// bring those up to date.
pub fn build_bots_made(
    bots: &[BotSpec],
    room: &Room<'_>,
    stop: Option<&Stop>,
    on_event: &mut dyn FnMut(&Event),
) -> Result<std::collections::BTreeSet<String>, LeagueError> {
    let cargo_ran = build_package_binaries(bots, stop, on_event)?;
    let mut made: std::collections::BTreeSet<String> = bots
        .iter()
        .filter(|b| cargo_ran && package_binary(b).is_some())
        .map(|b| b.name.clone())
        .collect();
    for b in bots {
        if build_own(b, room, stop, on_event)? {
            made.insert(b.name.clone());
        }
    }
    Ok(made)
}

/// Runs bot `b`'s own build (its bot.toml's `build`), in the sandbox of
/// `room`, into the built copy its command then runs from
/// ([`super::launch::run_folder`]). False when it has none.
pub fn build_own(
    b: &BotSpec,
    room: &Room<'_>,
    stop: Option<&Stop>,
    on_event: &mut dyn FnMut(&Event),
) -> Result<bool, LeagueError> {
    let Some(launch) = room.launch_build(b) else {
        return Ok(false);
    };
    on_event(&Event::Building {
        bot: b.name.clone(),
        how: String::new(),
    });
    crate::bot::build::build(&launch, room.build_limit(), stop).map_err(|e| match e {
        BuildError::Interrupted { .. } => LeagueError::Interrupted,
        e => LeagueError::Build {
            bot: b.name.clone(),
            command: launch.command.argv(),
            dir: b.cwd.clone().unwrap_or_else(|| PathBuf::from(".")),
            why: e.to_string(),
        },
    })?;
    Ok(true)
}

/// The package binary that bot `b` names as its program
/// (`{bin_dir}/NAME`), if it does.
fn package_binary(b: &BotSpec) -> Option<&'static str> {
    let name = b.command.first()?.strip_prefix("{bin_dir}/")?;
    PACKAGE_BINARIES.iter().copied().find(|n| *n == name)
}

/// The package binaries that `bots` name as their program, each once, in
/// the order of [`PACKAGE_BINARIES`].
fn named_package_binaries(bots: &[BotSpec]) -> Vec<&'static str> {
    let named: Vec<&str> = bots.iter().filter_map(package_binary).collect();
    PACKAGE_BINARIES
        .iter()
        .copied()
        .filter(|n| named.contains(n))
        .collect()
}

/// Brings the package binaries that `bots` name up to date with `cargo
/// build` (a no-op when they are), in the profile of the running `arena`.
/// Where the source `arena` was built from is gone (an installed binary)
/// or cargo is missing, nothing is built: the binaries are what they are,
/// and a missing one is reported when its bot cannot start. True when
/// cargo ran.
fn build_package_binaries(
    bots: &[BotSpec],
    stop: Option<&Stop>,
    on_event: &mut dyn FnMut(&Event),
) -> Result<bool, LeagueError> {
    let names = named_package_binaries(bots);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    if names.is_empty() || !source.is_file() || !built_by_cargo_here() {
        return Ok(false);
    }
    let bin_dir = PathBuf::from(&manifest::expand(&["{bin_dir}".to_string()])[0]);
    if let Some(root) = source.parent() {
        if newer_than_the_source(&bin_dir, &names, root) {
            return Ok(false);
        }
    }
    let how = format!(
        "cargo build in {}: its source is newer than {}",
        source.parent().unwrap_or(&source).display(),
        bin_dir.display()
    );
    let named: Vec<&str> = bots
        .iter()
        .filter(|b| package_binary(b).is_some())
        .map(|b| b.name.as_str())
        .collect();
    on_event(&Event::Building {
        bot: named.join(", "),
        how,
    });
    let mut argv = manifest::expand(&[
        "cargo".into(),
        "build".into(),
        "--quiet".into(),
        "--profile".into(),
        "{cargo_profile}".into(),
        "--manifest-path".into(),
    ]);
    argv.push(source.to_string_lossy().into_owned());
    for n in &names {
        argv.extend(["--bin".to_string(), n.to_string()]);
    }
    let failed = |why: String| LeagueError::Build {
        bot: names.join(", "),
        command: argv.clone(),
        dir: source.parent().map(Path::to_path_buf).unwrap_or_default(),
        why,
    };
    let mut cargo = std::process::Command::new(&argv[0]);
    cargo
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // Where a stop is watched, in a process group of its own, so that the
    // stop takes cargo and the compilers it started with it; else in
    // ours, so that a Ctrl-C at the terminal reaches it as it does us.
    if stop.is_some() {
        std::os::unix::process::CommandExt::process_group(&mut cargo, 0);
    }
    let mut child = match cargo.spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(failed(e.to_string())),
    };
    let stderr = child.stderr.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = std::io::Read::read_to_end(&mut s, &mut all);
            all
        })
    });
    let status = match wait(&mut child, None, stop) {
        Waited::Exited(status) => Ok(status),
        Waited::Failed(e) => Err(e),
        Waited::Stopped(_) | Waited::Late => {
            crate::bot::kill_group(child.id(), libc::SIGKILL);
            let _ = child.wait();
            return Err(LeagueError::Interrupted);
        }
    };
    let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    match status {
        Ok(s) if s.success() => Ok(true),
        Ok(s) => Err(failed(format!("{s}\n{}", crate::bot::build::tail(&stderr)))),
        Err(e) => Err(failed(e.to_string())),
    }
}

/// True when each of the binaries `names` in `bin_dir` is newer than
/// every file of the package's source in `root` (`src/`, `migrations/`,
/// Cargo.toml, Cargo.lock): then cargo has nothing to bring up to date. Asking it anyway is not free: under `cargo test` the binaries
/// were built with the dev-dependencies' features, and `cargo build`
/// without them compiled the whole crate a second time in a fresh clone.
fn newer_than_the_source(bin_dir: &Path, names: &[&str], root: &Path) -> bool {
    fn newest(path: &Path, newest_so_far: &mut std::time::SystemTime) -> std::io::Result<()> {
        let meta = std::fs::metadata(path)?;
        if meta.is_dir() {
            for entry in std::fs::read_dir(path)? {
                newest(&entry?.path(), newest_so_far)?;
            }
        } else {
            *newest_so_far = (*newest_so_far).max(meta.modified()?);
        }
        Ok(())
    }
    let mut source = std::time::SystemTime::UNIX_EPOCH;
    for part in ["src", "migrations", "Cargo.toml", "Cargo.lock"] {
        let path = root.join(part);
        if path.exists() && newest(&path, &mut source).is_err() {
            return false;
        }
    }
    names.iter().all(|n| {
        std::fs::metadata(bin_dir.join(n))
            .and_then(|m| m.modified())
            .is_ok_and(|built| built > source)
    })
}

/// True when the running `arena` lives in a cargo target folder of the
/// source it was built from (`cargo run`, `cargo test`), so that cargo
/// builds the package's binaries beside it; false for an installed copy
/// (`cargo install` puts it in `~/.cargo/bin`), which is left as it is.
fn built_by_cargo_here() -> bool {
    let bin_dir = PathBuf::from(&manifest::expand(&["{bin_dir}".to_string()])[0]);
    let targets = [
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target")),
    ];
    targets
        .into_iter()
        .flatten()
        .filter_map(|t| t.canonicalize().ok())
        .any(|t| bin_dir.canonicalize().is_ok_and(|b| b.starts_with(&t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Binaries built after the last change of the source are up to
    /// date; a source file changed after them, or a missing binary, is not.
    #[test]
    fn binaries_newer_than_every_source_file_need_no_cargo() {
        let dir = tempfile::tempdir().unwrap();
        let (root, bin) = (dir.path().join("pkg"), dir.path().join("bin"));
        std::fs::create_dir_all(root.join("src/engine")).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let set = |path: &Path, secs: u64| {
            let f = std::fs::File::options()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            f.set_modified(t).unwrap();
        };
        set(&root.join("Cargo.toml"), 1_000);
        set(&root.join("src/engine/filo.rs"), 2_000);
        set(&bin.join("random-bot"), 3_000);
        assert!(newer_than_the_source(&bin, &["random-bot"], &root));
        assert!(!newer_than_the_source(
            &bin,
            &["random-bot", "greedy-bot"],
            &root
        ));
        set(&root.join("src/engine/filo.rs"), 4_000);
        assert!(!newer_than_the_source(&bin, &["random-bot"], &root));
    }

    fn spec(command: &str) -> BotSpec {
        BotSpec {
            name: "b".into(),
            command: vec![command.into()],
            cwd: None,
            env: Default::default(),
            build: None,
            limits: Default::default(),
            origin: None,
        }
    }

    #[test]
    fn only_package_binaries_named_through_bin_dir_are_built() {
        let bots = [
            spec("{bin_dir}/random-bot"),
            spec("{bin_dir}/greedy-bot"),
            spec("{bin_dir}/random-bot"),
            spec("{bin_dir}/mine"),
            spec("/elsewhere/search-bot"),
        ];
        assert_eq!(named_package_binaries(&bots), ["random-bot", "greedy-bot"]);
    }
}
