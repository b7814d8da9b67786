//! cgroup v2 limits with real processes: the bot's leaf, its limits, the
//! kernel stopping a fork bomb at `pids.max` and a memory hog at
//! `memory.max`, and the sweep of what dead referees left. Only on a
//! cgroup v2 host (scripts/cgroup2-vm-test.sh runs them in a VM, as root
//! and as a non-root organiser given a subtree); elsewhere each says it
//! was skipped.

use mancala_arena::bot::sandbox::cgroup::{self, Cgroup};
use mancala_arena::bot::Limits;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// True on a cgroup v2 host where arena has a subtree; else says why the
/// test is skipped.
fn v2_here(test: &str) -> bool {
    if !Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
        eprintln!("skipped {test}: this host does not mount cgroup v2");
        return false;
    }
    let m = cgroup::mechanism();
    if !m.starts_with("cgroup v2") {
        eprintln!("skipped {test}: {m}");
        return false;
    }
    true
}

fn limits(set: impl FnOnce(&mut Limits)) -> Limits {
    let mut l = Limits::new(1 << 16);
    set(&mut l);
    l
}

/// The leaf a cgroup's processes join.
fn leaf(g: &Cgroup) -> PathBuf {
    let procs = g.procs_files();
    assert_eq!(procs.len(), 1, "one leaf on cgroup v2: {procs:?}");
    let file = PathBuf::from(procs[0].to_str().unwrap());
    file.parent().unwrap().to_path_buf()
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_else(|e| panic!("{}/{file}: {e}", dir.display()))
}

/// The number after `key ` in a flat-keyed cgroup file.
fn keyed(dir: &Path, file: &str, key: &str) -> u64 {
    read(dir, file)
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {}/{file}", dir.display()))
}

/// Starts python3 `code` inside the cgroup (the shell joins, then execs).
fn run_in(g: &Cgroup, code: &str) -> std::process::Child {
    let procs = g.procs_files()[0].to_str().unwrap().to_string();
    Command::new("sh")
        .args(["-c", r#"echo 0 > "$1" && exec python3 -c "$2""#, "sh"])
        .args([&procs, code])
        .stdout(Stdio::piped())
        .spawn()
        .expect("sh")
}

/// Kills everything in the leaf (`cgroup.kill`) and waits until it is
/// empty.
fn kill_all(dir: &Path) {
    let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    let t = Instant::now();
    while !read(dir, "cgroup.procs").trim().is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the leaf did not empty"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_bot_leaf_has_its_limits_and_goes() {
    if !v2_here("a_bot_leaf_has_its_limits_and_goes") {
        return;
    }
    let m = cgroup::mechanism();
    eprintln!("mechanism: {m}");
    let l = limits(|l| {
        l.memory_mb = 96;
        l.processes = 17;
        l.cpus = 1;
    });
    let mut g = Cgroup::create(&format!("{}-limits", std::process::id()), &l).unwrap();
    let dir = leaf(&g);
    assert!(
        dir.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("arena-"),
        "{dir:?}"
    );
    assert_eq!(read(&dir, "memory.max").trim(), (96u64 << 20).to_string());
    // The bot's 17, and its keeper and init (cgroup::KEEPER_TASKS).
    assert_eq!(read(&dir, "pids.max").trim(), "19");
    if dir.join("memory.swap.max").exists() {
        assert_eq!(read(&dir, "memory.swap.max").trim(), "0");
    }
    // A quota of one CPU, or (a pinned thread) a cpuset.
    let cpu = std::fs::read_to_string(dir.join("cpu.max")).unwrap_or_default();
    let cpuset = std::fs::read_to_string(dir.join("cpuset.cpus")).unwrap_or_default();
    eprintln!(
        "{}: memory.max {} pids.max {} cpu.max {} cpuset.cpus {}",
        dir.display(),
        read(&dir, "memory.max").trim(),
        read(&dir, "pids.max").trim(),
        cpu.trim(),
        cpuset.trim()
    );
    assert!(
        cpu.trim() == "100000 100000" || !cpuset.trim().is_empty(),
        "{cpu:?} {cpuset:?}"
    );
    // No process lives in the subtree's top: the referee is in a leaf.
    let top = dir.parent().unwrap();
    assert_eq!(read(top, "cgroup.procs").trim(), "", "{}", top.display());
    g.remove();
    assert!(!dir.exists(), "{dir:?} was not removed");
}

#[test]
fn a_fork_bomb_meets_pids_max() {
    if !v2_here("a_fork_bomb_meets_pids_max") {
        return;
    }
    let l = limits(|l| l.processes = 20);
    let mut g = Cgroup::create(&format!("{}-forks", std::process::id()), &l).unwrap();
    let dir = leaf(&g);
    let bomb = r#"
import os, time
n = refused = 0
while refused < 20:
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        time.sleep(0.01)
        continue
    if pid == 0:
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.01)
    n += 1
print(n, refused, flush=True)
time.sleep(60)
"#;
    let mut child = run_in(&g, bomb);
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let current = keyed(&dir, "pids.events", "max");
    let now: u64 = read(&dir, "pids.current").trim().parse().unwrap();
    eprintln!(
        "fork bomb (pids.max 22): forked/refused {}; pids.current {now}, pids.events max {current}",
        line.trim()
    );
    assert!(current > 0, "the kernel refused no fork");
    // processes = 20: pids.max 22, the keeper and the init included.
    assert!(now <= 22, "{now} tasks under pids.max 22");
    kill_all(&dir);
    let _ = child.wait();
    g.remove();
    assert!(!dir.exists());
}

#[test]
fn a_memory_hog_meets_memory_max() {
    if !v2_here("a_memory_hog_meets_memory_max") {
        return;
    }
    let l = limits(|l| l.memory_mb = 64);
    let mut g = Cgroup::create(&format!("{}-memory", std::process::id()), &l).unwrap();
    let dir = leaf(&g);
    let hog = "x = []\nwhile True:\n    x.append(bytearray(1 << 20))\n";
    let t = Instant::now();
    let status = run_in(&g, hog).wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    eprintln!(
        "memory hog (memory.max 64 MiB): ended by signal {:?} after {:?}; memory.peak {}; memory.events oom_kill {}",
        status.signal(),
        t.elapsed(),
        std::fs::read_to_string(dir.join("memory.peak")).unwrap_or_default().trim(),
        keyed(&dir, "memory.events", "oom_kill")
    );
    assert_eq!(status.signal(), Some(9), "{status:?}");
    assert!(
        g.oom_killed(),
        "memory.events: {}",
        read(&dir, "memory.events")
    );
    g.remove();
    assert!(!dir.exists());
}

#[test]
fn left_overs_of_dead_referees_are_swept() {
    if !v2_here("left_overs_of_dead_referees_are_swept") {
        return;
    }
    let l = limits(|_| {});
    let g = Cgroup::create(&format!("{}-sweep", std::process::id()), &l).unwrap();
    let base = leaf(&g).parent().unwrap().to_path_buf();
    // The pid of a process that has ended.
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let mut made = vec![base.join(format!("arena-{pid}-1"))];
    // As root, a dead referee's own subtree at the top, with a bot leaf.
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 && base.parent() == Some(Path::new("/sys/fs/cgroup")) {
        let top = PathBuf::from(format!("/sys/fs/cgroup/arena-{pid}"));
        std::fs::create_dir(&top).unwrap();
        made.push(top.join(format!("arena-{pid}-2")));
        made.push(top);
    }
    for d in &made {
        let _ = std::fs::create_dir(d);
        assert!(d.exists(), "{d:?}");
    }
    let prefix = format!("arena-{pid}");
    cgroup::sweep(|name| name == prefix || name.starts_with(&format!("{prefix}-")));
    for d in &made {
        assert!(!d.exists(), "{d:?} was not swept");
    }
    assert!(leaf(&g).exists(), "a live bot's leaf was swept");
}
