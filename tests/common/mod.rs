//! Helpers shared by the integration tests.

pub mod browser;
pub mod dom;
pub mod ladder;
pub mod league;

use mancala_arena::engine::{Game, Settings, Variant};

/// Live (not zombie) processes whose command line holds `word`. A bot in
/// its sandbox knows only its own namespace's pids, so what it leaves
/// behind is found by its command line.
#[allow(dead_code)]
pub fn processes_with(word: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmd).contains(word) && mancala_arena::host::process_alive(pid) {
            found.push(pid);
        }
    }
    found
}

/// Whether `node` runs here: README asks for it (the JavaScript example
/// bot), and a test that plays that bot leaves it out, saying so, where
/// it is not installed.
#[allow(dead_code)]
pub fn has_node() -> bool {
    let there = std::process::Command::new("node")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !there {
        eprintln!("note: `node` is not installed: the JavaScript example bot is left out");
    }
    there
}

/// The misbehaving test bot (bots/broken/misbehave.py), for the league
/// files the tests write.
#[allow(dead_code)]
pub fn misbehave_py() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bots/broken/misbehave.py")
}

/// The record of `row` in the results folder `dir`, read where its row says
/// it is (a record log, or a file of its own in older folders).
#[allow(dead_code)]
pub fn record_text(dir: &std::path::Path, row: &mancala_arena::results::GameRow) -> String {
    mancala_arena::results::records::RecordAt::of(&dir.join("games"), row)
        .expect("the row names a record")
        .read_text()
        .expect("the record reads")
}

/// A bot folder `dir/name` holding a copy of the attack bots' script
/// (tests/attack/attack.py).
#[allow(dead_code)]
pub fn attack_bot(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let script =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/attack/attack.py");
    std::fs::copy(script, folder.join("attack.py")).unwrap();
    folder
}

/// Every `ATTACK` finding (the prefix cut) in the bot logs of the results
/// folder `out` whose names start with `prefix`.
#[allow(dead_code)]
pub fn attack_lines(out: &std::path::Path, prefix: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for e in std::fs::read_dir(out.join("logs")).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with(prefix) {
            let text = std::fs::read_to_string(e.path()).unwrap();
            lines.extend(
                text.lines()
                    .filter_map(|l| l.strip_prefix("ATTACK "))
                    .map(str::to_string),
            );
        }
    }
    lines
}

/// `arena ARGS...` run in `dir`, stdin closed, to its end.
#[allow(dead_code)]
pub fn arena(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the arena binary runs")
}

/// What a command printed: stdout, then stderr.
#[allow(dead_code)]
pub fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The flags every test's headless Chromium runs with: no sandbox of
/// its own (the tests may run as root), no GPU, and nothing that reaches
/// the network on its own.
pub const CHROMIUM_FLAGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// A temporary folder for a static (a league shared by a file's tests):
/// a static is never dropped, so its folder is never removed, and is made
/// under the build's own `target/tmp` rather than the system's /tmp.
#[allow(dead_code)]
pub fn kept_tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder in target/tmp")
}

/// The Chromium binary: `CHROMIUM`, else `chromium` (or its other names)
/// on PATH, installed by `.ci/install-chromium` when there is none. None
/// after that is a failure that says what to install; `who` names the
/// tests that need it.
#[allow(dead_code)]
pub fn chromium(who: &str) -> std::path::PathBuf {
    static FOUND: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return std::path::PathBuf::from(p);
    }
    let find = || {
        let path = std::env::var_os("PATH").unwrap_or_default();
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
            .find(|p| p.is_file())
    };
    let found = FOUND.get_or_init(|| {
        find().or_else(|| {
            let script =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/install-chromium");
            let installed = std::process::Command::new("bash")
                .arg(&script)
                .stdin(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            installed.then(find).flatten()
        })
    });
    match found {
        Some(p) => p.clone(),
        None => panic!(
            "{who} need headless Chromium, found none and could not install it \
             with .ci/install-chromium (it needs root or password-less sudo on Debian/Ubuntu): \
             apt-get install chromium, or set CHROMIUM=/path/to/chromium"
        ),
    }
}

/// The throw-away cluster's folder, as `.ci/postgres` names it:
/// `ARENA_PG_DIR`, else `${TMPDIR:-/tmp}/arena-pg-UID`.
fn pg_dir() -> std::path::PathBuf {
    if let Ok(d) = std::env::var("ARENA_PG_DIR") {
        return d.into();
    }
    let tmp = std::env::var("TMPDIR")
        .ok()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "/tmp".into());
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    std::path::Path::new(&tmp).join(format!("arena-pg-{uid}"))
}

/// The users' lock of the throw-away cluster (`DIR.users`), held shared
/// by each test process that uses the cluster, from before it is started
/// to the process's exit.
static PG_USERS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// Marks this process as a user of the throw-away cluster, and has it
/// stopped at the process's exit when this is the last user and the tests
/// started it (`.ci/postgres` marks such a cluster; one started by hand
/// is left alone): `cargo test` leaves no server running.
fn use_throwaway_cluster() -> Result<(), String> {
    use std::os::fd::IntoRawFd;
    let dir = pg_dir();
    let path = std::path::PathBuf::from(format!("{}.users", dir.display()));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let fd = f.into_raw_fd();
    // SAFETY: fd is an open descriptor this process owns (kept to exit).
    if unsafe { libc::flock(fd, libc::LOCK_SH) } != 0 {
        return Err(format!(
            "{}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    PG_USERS.store(fd, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: registers a function of no arguments that does not unwind.
    unsafe { libc::atexit(stop_throwaway_cluster) };
    Ok(())
}

/// At exit: the last user of a cluster the tests started stops it
/// (`.ci/postgres stop`). Another test process still using it holds the
/// lock shared, and stops it itself when it ends.
extern "C" fn stop_throwaway_cluster() {
    let fd = PG_USERS.load(std::sync::atomic::Ordering::SeqCst);
    // SAFETY: fd is the lock's descriptor, open until exit.
    let last = unsafe {
        libc::flock(fd, libc::LOCK_UN);
        libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) == 0
    };
    if !last || !pg_dir().join("started-by-tests").exists() {
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/postgres");
    let _ = std::process::Command::new("bash")
        .arg(&script)
        .arg("stop")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status();
    // SAFETY: as above.
    unsafe { libc::flock(fd, libc::LOCK_UN) };
}

/// A fresh PostgreSQL database for one test: `Some(URL)`, or `None` when
/// `ARENA_SKIP_PG=1` (the test then passes, saying so). The cluster is
/// `ARENA_TEST_PG`'s, else the throw-away one of `.ci/postgres start`
/// (run here, installing PostgreSQL where it can, and stopped when the
/// last test process using it ends); a failure says what to run. Each
/// call makes a database of its own on that cluster, so that the test
/// binaries running at once do not meet.
#[allow(dead_code)]
pub fn postgres(test: &str) -> Option<String> {
    static BASE: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    if std::env::var("ARENA_TEST_PG").is_err()
        && std::env::var("ARENA_SKIP_PG").as_deref() == Ok("1")
    {
        eprintln!("SKIPPED: {test}: the PostgreSQL tests were skipped (ARENA_SKIP_PG=1)");
        return None;
    }
    let base = BASE.get_or_init(|| {
        if let Ok(url) = std::env::var("ARENA_TEST_PG") {
            return Ok(url);
        }
        use_throwaway_cluster()?;
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/postgres");
        let out = std::process::Command::new("bash")
            .arg(&script)
            .arg("start")
            .env("ARENA_PG_BY_TESTS", "1")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        match text.trim().strip_prefix("ARENA_TEST_PG=") {
            Some(url) if out.status.success() => Ok(url.to_string()),
            _ => Err(format!("{}: {}", out.status, text)),
        }
    });
    let base = match base {
        Ok(b) => b,
        Err(e) => panic!(
            "{test} needs PostgreSQL: ARENA_TEST_PG is not set and `.ci/postgres start` failed ({e}); \
             run `bash .ci/postgres start` and export the ARENA_TEST_PG=... it prints, \
             or set ARENA_SKIP_PG=1 to skip the PostgreSQL tests"
        ),
    };
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let name = format!(
        "arena_{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use sqlx::{Connection, Executor};
        sqlx::any::install_default_drivers();
        let mut c = sqlx::AnyConnection::connect(base)
            .await
            .unwrap_or_else(|e| panic!("{test}: cannot connect to ARENA_TEST_PG: {e}"));
        c.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .unwrap_or_else(|e| panic!("{test}: CREATE DATABASE {name}: {e}"));
        let _ = c.close().await;
    });
    let (head, _) = base
        .rsplit_once('/')
        .expect("a database URL ends in /DATABASE");
    Some(format!("{head}/{name}"))
}

/// `len` legal moves of `variant` from its start that leave the game on:
/// the first one from the `first`-th legal option on, then the first that
/// does.
#[allow(dead_code)]
pub fn book_line(variant: Variant, first: usize, len: usize) -> String {
    let mut g = Game::new(variant, &Settings::with_players(2)).unwrap();
    let mut moves = Vec::new();
    for i in 0..len {
        let legal = g.legal();
        let skip = if i == 0 { first } else { 0 };
        let (m, next) = (0..legal.len())
            .map(|k| legal[(skip + k) % legal.len()].clone())
            .find_map(|m| {
                let mut t = g.clone();
                (t.play(&m).is_ok() && t.outcome().is_none()).then_some((m, t))
            })
            .expect("a move that leaves the game on");
        g = next;
        moves.push(m);
    }
    moves.join(" ")
}

/// The names of the entries of `dir` that `keep` accepts (what a failed
/// or finished write must not leave behind).
#[allow(dead_code)]
pub fn names_in(dir: &std::path::Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| keep(n))
        .collect()
}

/// Copies folder `from` to `to`, with every folder inside it.
#[allow(dead_code)]
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}
