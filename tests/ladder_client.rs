//! The ladder's clients, `arena worker` and `arena submit`, where what
//! they are given or what they meet is wrong (docs/ladder.md, "Workers"
//! and "Quick start"): the real binary against the real `arena serve` on
//! 127.0.0.1:0. A worker's cache is its own (a second worker on it is
//! refused, naming the folder and the first one's pid; the lock goes with
//! the process); a worker whose spool cannot be written is refused at
//! start, and one whose spool fails later stops claiming, says so once
//! and counts the games lost; `--server` without `http://` is refused at
//! once by both clients; a worker stopped before it reached the server
//! says the server could not be reached, not that it refused; `arena
//! submit` of a path that is not a folder says so; and `arena submit`
//! waits out a server restarted while it checks the upload it received.
//! A newcomer's evening: submit hears a wrong token before a large upload,
//! packs within the ladder's own limits and says them, reads the bot.toml
//! (line and column) before anything is sent, says where nothing listens
//! and when a folder is the very one already uploaded; a worker's cache
//! that is a file is said as such.

use crate::common;

use common::ladder::{bot_copy, log_file, python_bot, Server, Worker};
use mancala_arena::serve::store::Db;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const ARENA: &str = env!("CARGO_BIN_EXE_arena");

/// How long anything here may take before the test fails (a loaded
/// machine): no assertion is on time, only this bound on waiting.
const PATIENCE: Duration = Duration::from_secs(180);

fn same(s: String) -> String {
    s
}

/// A ladder of kisolo in `dir` with more lines `more` after `[ladder]`'s.
fn new_server(dir: &Path, more: &str) -> Server {
    Server::new(
        dir,
        "name = \"client-ladder\"\nseed = 7\nvariants = [\"kisolo\"]\nmax_plies = 300",
        more,
    )
}

/// Starts `server` on `bind`, playing no game itself (only workers play).
fn start_on(server: &mut Server, bind: &str) {
    server.extra = ["--local-games", "0", "--lease-seconds", "60"]
        .map(String::from)
        .to_vec();
    let dir = server.dir.clone();
    server.start_at(&dir, "ladder.toml", bind);
}

/// `arena worker` of `server` with `token` and the cache `cache`, `-j 1`,
/// its output in `dir/NAME.out` and `dir/NAME.err`.
fn worker(server_url: &str, token: &str, cache: &Path, name: &str) -> Worker {
    let dir = cache.parent().unwrap();
    Command::new(ARENA)
        .args([
            "worker", "--server", server_url, "--token", token, "-j", "1",
        ])
        .arg("--cache")
        .arg(cache)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log_file(&dir.join(format!("{name}.out")))))
        .stderr(Stdio::from(log_file(&dir.join(format!("{name}.err")))))
        .spawn()
        .map(Worker)
        .unwrap()
}

/// What `name` printed (stdout, then stderr), in `dir`.
fn output(dir: &Path, name: &str) -> String {
    let read =
        |ext: &str| std::fs::read_to_string(dir.join(format!("{name}.{ext}"))).unwrap_or_default();
    format!("{}{}", read("out"), read("err"))
}

/// The exit status of `child` once it ends; fails the test (saying `what`
/// and `log()`) if it has not ended within [`PATIENCE`].
fn ended(child: &mut Child, what: &str, log: &dyn Fn() -> String) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {PATIENCE:?}:\n{}", log());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until `log()` holds `line`; fails the test after [`PATIENCE`], or
/// at once when `child` has ended first.
fn wait_for(child: &mut Child, line: &str, log: &dyn Fn() -> String) -> String {
    let start = Instant::now();
    loop {
        let text = log();
        if text.contains(line) {
            return text;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("ended ({status}) before saying `{line}`:\n{}", log());
        }
        assert!(
            start.elapsed() < PATIENCE,
            "`{line}` not said after {PATIENCE:?}:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `arena ARGS` in `dir`, which must end within [`PATIENCE`]: its exit
/// code and its output (stdout, then stderr).
fn arena_ended(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = dir.join("arena.out");
    let err = dir.join("arena.err");
    let mut child = Command::new(ARENA)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let log = || output(dir, "arena");
    let status = ended(&mut child, &format!("arena {args:?}"), &log);
    (status.code(), log())
}

/// `arena worker --server URL --token TOKEN --cache CACHE` in `dir`, which
/// must end within [`PATIENCE`] (a worker refused at its start): its exit
/// code and its output.
fn worker_ended(dir: &Path, url: &str, token: &str, cache: &Path) -> (Option<i32>, String) {
    let cache = cache.to_str().unwrap();
    arena_ended(
        dir,
        &[
            "worker", "--server", url, "--token", token, "--cache", cache,
        ],
    )
}

/// Sends SIGTERM to `child`.
fn terminate(child: &Child) {
    // SAFETY: signals a child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
}

#[test]
fn a_second_worker_on_a_cache_in_use_is_refused_naming_it_and_the_lock_goes_with_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let token = server.add("--add-worker", "wa");
    start_on(&mut server, "127.0.0.1:0");
    let cache = dir.join("cache");
    let mut first = worker(&server.url, &token, &cache, "first");
    wait_for(&mut first.0, "registered with", &|| output(dir, "first"));
    // The second, on the same cache: refused at start, before it
    // registers, naming the folder and the first one's pid.
    let url = server.url.clone();
    let (code, out) = worker_ended(dir, &url, &token, &cache);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains(&cache.display().to_string()), "{out}");
    assert!(out.contains("is the cache of another worker"), "{out}");
    assert!(out.contains(&format!("pid {}", first.0.id())), "{out}");
    assert!(!out.contains("registered with"), "{out}");
    assert!(first.0.try_wait().unwrap().is_none(), "the first one ended");
    // The first killed (SIGKILL, no cleanup of its own): the kernel
    // releases its lock, and a worker on the same cache starts.
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let mut next = worker(&server.url, &token, &cache, "next");
    wait_for(&mut next.0, "registered with", &|| output(dir, "next"));
}

#[test]
fn a_second_worker_with_a_running_ones_token_is_refused_and_takes_it_once_that_one_is_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let token = server.add("--add-worker", "wa");
    // A lease of 20 s: a worker not heard from for that long is gone.
    server.extra = ["--local-games", "0", "--lease-seconds", "20"]
        .map(String::from)
        .to_vec();
    server.start_at(dir, "ladder.toml", "127.0.0.1:0");
    let url = server.url.clone();
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let mut first = worker(&url, &token, &a.join("cache"), "first");
    wait_for(&mut first.0, "registered with", &|| output(&a, "first"));
    // Another process with the same token, on its own cache (another
    // machine): refused at its start, naming the token's holder.
    let (code, out) = worker_ended(dir, &url, &token, &b.join("cache"));
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("in use by another `arena worker`"), "{out}");
    assert!(
        out.contains("each worker needs a token of its own"),
        "{out}"
    );
    assert!(!out.contains("registered with"), "{out}");
    assert!(first.0.try_wait().unwrap().is_none(), "the first one ended");
    // The first killed and started again on its cache: the same worker,
    // registered at once.
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let mut again = worker(&url, &token, &a.join("cache"), "again");
    wait_for(&mut again.0, "registered with", &|| output(&a, "again"));
    again.0.kill().unwrap();
    again.0.wait().unwrap();
    // Gone for longer than a lease: the other cache's worker takes the
    // token (no bound on time here: a wait of more than the lease).
    std::thread::sleep(Duration::from_secs(21));
    let mut other = worker(&url, &token, &b.join("cache"), "other");
    wait_for(&mut other.0, "registered with", &|| output(&b, "other"));
}

/// Makes `spool` a folder this process's user cannot write in: a folder
/// of mode 0555 (as the tester found it, a spool owned by another user),
/// or for root, whom modes do not stop, a link to /sys, where no one
/// makes files.
fn unwritable_spool(spool: &Path) {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::symlink("/sys", spool).unwrap();
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(spool).unwrap();
        std::fs::set_permissions(spool, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
}

#[test]
fn a_worker_whose_spool_cannot_be_written_is_refused_at_start_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let token = server.add("--add-worker", "wa");
    start_on(&mut server, "127.0.0.1:0");
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let spool = cache.join("spool");
    unwritable_spool(&spool);
    let url = server.url.clone();
    let (code, out) = worker_ended(dir, &url, &token, &cache);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains(&format!("{}: the spool cannot be written", spool.display())),
        "{out}"
    );
    assert!(!out.contains("registered with"), "{out}");
    // Nothing was left in it (were it writable after all, a probe would
    // be there).
    assert!(
        std::fs::read_dir(&spool)
            .map(|d| d
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().starts_with(".probe")))
            .unwrap_or(true),
        "a probe left in {}",
        spool.display()
    );
}

/// The game ids of `out`'s lines `GAME: lost, ...`.
fn lost_lines(out: &str) -> usize {
    out.lines()
        .filter(|l| l.contains(": lost, it can be neither uploaded"))
        .count()
}

/// The number before ` lost (neither uploaded nor spooled)` in the last
/// summary line of `out`, if any.
fn lost_in_summary(out: &str) -> Option<u64> {
    let line = out.lines().rev().find(|l| l.starts_with("games: "))?;
    let (before, _) = line.split_once(" lost (neither uploaded nor spooled)")?;
    before.rsplit(' ').next()?.parse().ok()
}

/// A worker whose game ends while the server is gone and whose spool
/// fails then (its folder replaced by a file: what root cannot write
/// either) loses the game: it says so once, claims no more, returns or
/// leaves what it holds, counts the games lost in its last summary and
/// stops with an error naming the spool.
#[test]
fn a_worker_that_can_neither_upload_nor_spool_a_game_stops_claiming_and_counts_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let alice = server.add("--add-user", "alice");
    let token = server.add("--add-worker", "wa");
    start_on(&mut server, "127.0.0.1:0");
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "rand-a", &same));
    // 100 ms a decision: the server is gone before the game ends.
    let slow = |t: String| {
        t.replace("import json", "import json\nimport time")
            .replace(
                "    return random.choice",
                "    time.sleep(0.1)\n    return random.choice",
            )
    };
    server.submit_ok(&alice, &bot_copy(dir, "random-python", "slow-py", &slow));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let db = rt.block_on(Db::open(&server.db_url())).unwrap();
    let cache = dir.join("cache");
    let mut w = worker(&server.url, &token, &cache, "w");
    // A game uploaded (the bots fetched and built) and a lease active for
    // a moment (its claim's answer received): the worker holds a game.
    let start = Instant::now();
    let mut seen: Option<(String, Instant)> = None;
    loop {
        let leases = rt.block_on(db.leases()).unwrap();
        let done = leases.iter().any(|l| l.state.as_str() == "done");
        if let Some(l) = leases
            .iter()
            .find(|l| l.state.as_str() == "active")
            .filter(|_| done)
        {
            match &seen {
                Some((id, at)) if *id == l.id => {
                    if at.elapsed() >= Duration::from_millis(500) {
                        break;
                    }
                }
                _ => seen = Some((l.id.clone(), Instant::now())),
            }
        }
        assert!(
            start.elapsed() < PATIENCE,
            "no lease held:\n{}\n{}",
            output(dir, "w"),
            server.log()
        );
        assert!(w.0.try_wait().unwrap().is_none(), "{}", output(dir, "w"));
        std::thread::sleep(Duration::from_millis(20));
    }
    // The spool becomes a file, then the server dies (SIGKILL): the game
    // in hand can be neither uploaded nor spooled.
    let spool = cache.join("spool");
    std::fs::remove_dir_all(&spool).unwrap();
    std::fs::write(&spool, b"not a folder").unwrap();
    server.kill();
    // It stops by itself, with an error.
    let status = ended(&mut w.0, "the worker", &|| output(dir, "w"));
    let out = output(dir, "w");
    assert_eq!(status.code(), Some(2), "{out}");
    assert_eq!(lost_lines(&out), 1, "said once:\n{out}");
    assert!(out.contains("this worker claims no more games"), "{out}");
    let lost = lost_in_summary(&out).unwrap_or_else(|| panic!("no games lost counted:\n{out}"));
    assert!(lost >= 1, "{out}");
    let err = std::fs::read_to_string(dir.join("w.err")).unwrap();
    assert!(
        err.contains(&format!(
            "{lost} game(s) lost, neither uploaded nor spooled"
        )),
        "{err}"
    );
    assert!(err.contains(&spool.display().to_string()), "{err}");
    assert!(!out.contains("arena worker: stopped"), "{out}");
}

#[test]
fn a_server_without_http_is_refused_at_once_by_the_worker_and_by_submit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cache = dir.join("cache");
    let (code, out) = worker_ended(dir, "127.0.0.1:18080", "t", &cache);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("--server 127.0.0.1:18080: no scheme (did you mean http://127.0.0.1:18080?)"),
        "{out}"
    );
    assert!(!out.contains("cannot register"), "{out}");
    assert!(!cache.exists(), "the worker made its cache: {out}");
    // `arena submit` says the same, before it packs anything.
    let bot = python_bot(dir, "random-python", "rp", "x");
    let (code, out) = arena_ended(
        dir,
        &[
            "submit",
            "--server",
            "127.0.0.1:18080",
            "--token",
            "t",
            bot.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("--server 127.0.0.1:18080: no scheme (did you mean http://127.0.0.1:18080?)"),
        "{out}"
    );
    assert!(!out.contains("packed"), "{out}");
}

/// A port of 127.0.0.1 that nothing listens on (one the system gave out
/// and this test closed at once).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn a_worker_stopped_before_it_reached_the_server_says_it_could_not_be_reached() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let url = format!("http://127.0.0.1:{}", closed_port());
    let mut w = worker(&url, "t", &dir.join("cache"), "w");
    wait_for(
        &mut w.0,
        "cannot register: the server cannot be reached",
        &|| output(dir, "w"),
    );
    terminate(&w.0);
    let status = ended(&mut w.0, "the worker after SIGTERM", &|| output(dir, "w"));
    let out = output(dir, "w");
    assert_eq!(status.code(), Some(2), "{out}");
    assert!(
        out.contains(&format!(
            "stopped before registering with {url}: the server cannot be reached"
        )),
        "{out}"
    );
    assert!(!out.contains("refused this worker"), "{out}");
}

/// Another service at `--server` (an empty 404, as many servers answer an
/// unknown path) is named as not a ladder, in one line, and the worker
/// stops.
#[test]
fn a_worker_pointed_at_another_service_says_it_is_not_a_ladder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let other = std::thread::spawn(move || {
        use std::io::{Read, Write};
        // Every request it gets (at most a few) answered with an empty 404.
        for _ in 0..3 {
            let Ok((mut c, _)) = listener.accept() else {
                return;
            };
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = c.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let (code, out) = worker_ended(dir, &url, "t", &dir.join("cache"));
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("does not answer as an arena ladder (404: an empty answer, not an arena ladder's (is --server the ladder's address?))"),
        "{out}"
    );
    drop(other);
}

#[test]
fn submit_of_a_missing_path_or_a_file_says_which() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let url = format!("http://127.0.0.1:{}", closed_port());
    let (code, out) = arena_ended(
        dir,
        &["submit", "--server", &url, "--token", "t", "nosuchdir"],
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("nosuchdir: no such folder"), "{out}");
    assert!(!out.contains("no bot.toml"), "{out}");
    std::fs::write(dir.join("afile"), "name = \"x\"\n").unwrap();
    let (code, out) = arena_ended(dir, &["submit", "--server", &url, "--token", "t", "afile"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("afile: is a file, not a folder"), "{out}");
    assert!(!out.contains("no bot.toml"), "{out}");
}

/// Accepts a connection on `listener` (non-blocking); fails the test
/// after [`PATIENCE`], saying `what` and `log()`.
fn accept(
    listener: &std::net::TcpListener,
    what: &str,
    log: &dyn Fn() -> String,
) -> std::net::TcpStream {
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                return s;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{what}: {e}"),
        }
        assert!(start.elapsed() < PATIENCE, "{what}: none:\n{}", log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Python bot whose build connects to `127.0.0.1:PORT` and succeeds
/// only when it is sent `1`: the test holds the build as long as it likes.
fn gated_bot(dir: &Path, port: u16) -> PathBuf {
    let folder = python_bot(dir, "random-python", "gated", "gate");
    std::fs::write(
        folder.join("gate.py"),
        format!(
            "import socket, sys\n\
             s = socket.create_connection(('127.0.0.1', {port}))\n\
             sys.exit(0 if s.recv(1) == b'1' else 1)\n"
        ),
    )
    .unwrap();
    std::fs::write(
        folder.join("bot.toml"),
        "name = \"gated\"\nlanguage = \"python\"\nbuild = [\"python3\", \"gate.py\"]\ncommand = [\"python3\", \"bot.py\"]\n",
    )
    .unwrap();
    folder
}

/// `arena submit` waits for the check of an upload the server received;
/// the server is killed in the middle of its build and started again on
/// the same address: submit says once that the server cannot be reached
/// (and that the upload was received), asks again until it is back, and
/// ends with the verdict of the build the server takes again.
#[test]
fn submit_waits_out_a_server_restarted_while_it_builds_the_upload() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let gate = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    gate.set_nonblocking(true).unwrap();
    let port = gate.local_addr().unwrap().port();
    let mut server = new_server(dir, "[sandbox]\nbuild_network = true");
    server.env = vec![(
        "XDG_CACHE_HOME".into(),
        dir.join("xdg-cache").display().to_string(),
    )];
    let alice = server.add_user("alice");
    server.start();
    let bot = gated_bot(dir, port);
    let mut submit = Command::new(ARENA)
        .args(["submit", "--server", &server.url, "--token", &alice])
        .arg(&bot)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log_file(&dir.join("submit.out"))))
        .stderr(Stdio::from(log_file(&dir.join("submit.err"))))
        .spawn()
        .unwrap();
    let log = || format!("{}\n--- server:\n{}", output(dir, "submit"), server.log());
    // The upload answered, and its build under way (held at the gate).
    wait_for(&mut submit, "uploaded: gated version 1", &log);
    let held = accept(&gate, "the build's connection", &log);
    let address = server.url.trim_start_matches("http://").to_string();
    server.kill();
    drop(held);
    wait_for(&mut submit, "the server cannot be reached", &|| {
        output(dir, "submit")
    });
    // Back on the same address: it takes the build again, let through.
    let dir_owned = dir.to_path_buf();
    server.start_at(&dir_owned, "ladder.toml", &address);
    let log = || format!("{}\n--- server:\n{}", output(dir, "submit"), server.log());
    let mut again = accept(&gate, "the build taken again", &log);
    std::io::Write::write_all(&mut again, b"1").unwrap();
    drop(again);
    let status = ended(&mut submit, "arena submit", &log);
    let out = output(dir, "submit");
    assert_eq!(status.code(), Some(0), "{}", log());
    assert_eq!(
        out.matches("the server cannot be reached").count(),
        1,
        "said once:\n{out}"
    );
    assert!(
        out.contains("the upload was received (gated version 1)"),
        "{out}"
    );
    assert!(out.contains("is back"), "{out}");
    assert!(out.contains("gated version 1: entered"), "{out}");
}

/// A ladder whose file turns the sandbox off (served with `--trust-bots`)
/// is refused by a worker not told to trust its bots: the organiser's
/// trust is not the worker's machine's.
#[test]
fn a_worker_refuses_a_ladder_without_the_sandbox_unless_told_to_trust_its_bots() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = Server::new(
        dir,
        "name = \"open-ladder\"\nseed = 7\nvariants = [\"kisolo\"]\nsandbox = \"off\"",
        "",
    );
    let token = server.add("--add-worker", "wa");
    server.extra = ["--local-games", "0", "--trust-bots"]
        .map(String::from)
        .to_vec();
    let at = server.dir.clone();
    server.start_at(&at, "ladder.toml", "127.0.0.1:0");
    let url = server.url.clone();
    let cache = dir.join("cache");
    let (code, out) = worker_ended(dir, &url, &token, &cache);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("sandbox = \"off\"") && out.contains("--trust-bots"),
        "{out}"
    );
}

/// `len` bytes that gzip cannot shrink (xorshift), for folders of a size.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// `arena submit --no-wait` of `folder` with `token` to `url`, in `dir`.
fn submit_ended(dir: &Path, url: &str, token: &str, folder: &Path) -> (Option<i32>, String) {
    let folder = folder.to_str().unwrap();
    arena_ended(
        dir,
        &[
            "submit",
            "--no-wait",
            "--server",
            url,
            "--token",
            token,
            folder,
        ],
    )
}

/// A token the server refuses (unknown, or a worker's) on an upload of
/// some megabytes: the server answers before the body is read, and
/// submit waits for that answer (`Expect: 100-continue`) rather than
/// sending on into a closed connection (`Broken pipe`, which said nothing
/// of the token).
#[test]
fn submit_with_a_wrong_token_hears_the_refusal_before_a_large_upload() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let worker = server.add("--add-worker", "box");
    server.start();
    let bot = python_bot(dir, "random-python", "large", "x");
    std::fs::write(bot.join("weights.bin"), noise(14 << 20)).unwrap();
    let (code, out) = submit_ended(dir, &server.url, "0123456789abcdef", &bot);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("refused (401): unknown or revoked token"),
        "{out}"
    );
    let (code, out) = submit_ended(dir, &server.url, &worker, &bot);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("refused (403): this token is not an owner's"),
        "{out}"
    );
}

/// The ladder's own limits on an upload (`upload_mb`, here 1) are asked
/// of the server and said before anything is sent: a folder that packs
/// over them is refused by submit, with its size and the limit, instead
/// of being packed against the usual 16 MiB and uploaded to be refused.
#[test]
fn submit_packs_within_the_ladders_own_limits_and_says_them_before_the_upload() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "upload_mb = 1\nunpacked_mb = 8\nupload_files = 50");
    let alice = server.add_user("alice");
    server.start();
    let bot = python_bot(dir, "random-python", "heavy", "x");
    std::fs::write(bot.join("weights.bin"), noise(2 << 20)).unwrap();
    let (code, out) = submit_ended(dir, &server.url, &alice, &bot);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains(
            "this ladder takes uploads of up to 1 MiB packed, 8 MiB unpacked and 50 files"
        ),
        "{out}"
    );
    assert!(out.contains("over the limit of 1 MiB"), "{out}");
    assert!(!out.contains("uploaded"), "{out}");
    // Within them, it says them as it packs.
    std::fs::remove_file(bot.join("weights.bin")).unwrap();
    let (code, out) = submit_ended(dir, &server.url, &alice, &bot);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("KiB; this ladder takes uploads of up to 1 MiB packed"),
        "{out}"
    );
    assert!(out.contains("uploaded: heavy version 1"), "{out}");
}

/// A bot.toml the ladder would refuse is said by submit before anything
/// is packed or sent (an upload refused by the server counts against the
/// owner's hourly uploads): the folder, the line and column of a TOML
/// error, a missing `name`, a name the ladder does not take.
#[test]
fn submit_reads_the_bot_toml_first_naming_the_folder_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let alice = server.add_user("alice");
    server.start();
    let bot = python_bot(dir, "random-python", "typo", "x");
    for (toml, said) in [
        (
            "name = \"typo\"\nlanguage = python\ncommand = [\"python3\", \"bot.py\"]\n",
            "bot.toml: TOML parse error at line 2, column 12",
        ),
        (
            "language = \"python\"\ncommand = [\"python3\", \"bot.py\"]\n",
            "bot.toml has no `name`",
        ),
        (
            "name = \"my bot\"\nlanguage = \"python\"\ncommand = [\"python3\", \"bot.py\"]\n",
            "my bot",
        ),
    ] {
        std::fs::write(bot.join("bot.toml"), toml).unwrap();
        let (code, out) = submit_ended(dir, &server.url, &alice, &bot);
        assert_eq!(code, Some(2), "{out}");
        assert!(out.contains(said), "{out}");
        assert!(out.contains(&bot.display().to_string()), "{out}");
        assert!(out.contains("nothing was sent"), "{out}");
        assert!(!out.contains("packed"), "{out}");
    }
    assert_eq!(server.json("/api/bots")["bots"], serde_json::json!([]));
}

/// An address where nothing listens (a typo in the port, a server that
/// is down) is said before the folder is packed, with what to check.
#[test]
fn submit_to_a_port_where_nothing_listens_says_so_before_packing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let bot = python_bot(dir, "random-python", "rp", "x");
    let url = format!("http://127.0.0.1:{}", closed_port());
    let (code, out) = submit_ended(dir, &url, "t", &bot);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains(&url), "{out}");
    assert!(out.contains("nothing listens there"), "{out}");
    assert!(!out.contains("packed"), "{out}");
}

/// The same folder submitted twice: the second upload is said to be
/// the very one of the version before (nothing changed), and made all
/// the same.
#[test]
fn submit_of_the_same_folder_twice_says_nothing_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let alice = server.add_user("alice");
    server.start();
    let bot = python_bot(dir, "random-python", "twice", "x");
    let (code, out) = submit_ended(dir, &server.url, &alice, &bot);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("nothing changed"), "{out}");
    let (code, out) = submit_ended(dir, &server.url, &alice, &bot);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("this folder is the very one of twice version 1"),
        "{out}"
    );
    assert!(out.contains("uploaded: twice version 2"), "{out}");
    // With a token the server refuses, nothing is uploaded: not said to be.
    let (code, out) = submit_ended(dir, &server.url, "not-a-token", &bot);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("refused (401)") && !out.contains("very one"),
        "{out}"
    );
}

/// A `--cache` that is a file is said as such, not as `File exists`.
#[test]
fn a_worker_whose_cache_is_a_file_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cache = dir.join("cache");
    std::fs::write(&cache, "").unwrap();
    let url = format!("http://127.0.0.1:{}", closed_port());
    let (code, out) = worker_ended(dir, &url, "t", &cache);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains(&format!("{} is a file, not a folder", cache.display())),
        "{out}"
    );
}

/// A server that takes the connection and never answers (stuck, or not
/// a ladder): submit gives up on its `/health` before packing anything,
/// saying so and naming the address, instead of packing, uploading and
/// waiting out the upload's two minutes.
#[test]
fn submit_to_a_server_that_never_answers_says_so_before_packing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mute = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", mute.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while let Ok((s, _)) = mute.accept() {
            held.push(s);
        }
    });
    let bot = python_bot(dir, "random-python", "rp", "x");
    let (code, out) = submit_ended(dir, &url, "t", &bot);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains(&format!("asking {url}")), "{out}");
    assert!(out.contains("no answer in time"), "{out}");
    assert!(!out.contains("packed"), "{out}");
}
