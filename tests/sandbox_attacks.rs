//! The sandbox, proven by attack (docs/security.md, "Attacks and their
//! tests"): bots of tests/attack/attack.py try each way out in real
//! leagues, and each test fails if one works.

use mancala_arena::results::{csvio, GameRow};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;
use common::{attack_bot, attack_lines};

fn arena() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arena"));
    c.stdin(Stdio::null());
    c
}

fn attack_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/attack")
}

fn as_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs the league file `text` (written to `dir/l.toml`) and returns its
/// rows and every `ATTACK` line of the bot logs whose names start with
/// `log_prefix`.
fn league(
    dir: &Path,
    text: &str,
    args: &[&str],
    log_prefix: &str,
    env: &[(&str, &str)],
) -> (Vec<GameRow>, Vec<String>) {
    let file = dir.join("l.toml");
    std::fs::write(&file, text).unwrap();
    let mut c = arena();
    c.args(["run", "--quiet", "--no-report"])
        .args(args)
        .arg(&file);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = csvio::read_rows(&dir.join("out/games.csv")).unwrap();
    let lines = attack_lines(&dir.join("out"), log_prefix);
    (rows, lines)
}

/// The result of the finding `what` (its first), or a panic naming the
/// findings.
fn finding<'a>(lines: &'a [String], what: &str) -> &'a str {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(&format!("{what}: ")))
        .unwrap_or_else(|| panic!("no finding `{what}` in:\n{}", lines.join("\n")))
}

/// One probe bot against the random bot: an inherited descriptor, the
/// terminal, the keyrings, inotify, flock, vsock and inet sockets, ptrace,
/// unshare, mount, bpf, perf_event_open, userfaultfd and io_uring each find
/// nothing; /etc/shadow and, as root, a root-only file of its own folder
/// are unreadable; /proc shows no host-wide statistics; NoNewPrivs and a
/// seccomp filter are in force.
#[test]
fn a_probe_bot_finds_every_door_shut() {
    let dir = tempfile::tempdir().unwrap();
    let probe = attack_bot(dir.path(), "probe");
    let secret = dir.path().join("organiser-secret");
    std::fs::write(&secret, "organiser secret").unwrap();
    let root_only = probe.join("root-only.txt");
    std::fs::write(&root_only, "for root alone").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&root_only, std::fs::Permissions::from_mode(0o600)).unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let text = format!(
        r#"
name = "probe"
bots = [
  {{ name = "probe", command = ["python3", "attack.py", "probe"], cwd = "probe", env = {{ PROBE_FD = "9", PROBE_FILES = "/etc/shadow:/etc/gshadow:root-only.txt" }} }},
  {{ name = "r", command = ["{bot}"] }},
]
variants = ["kisolo"]
output = "out"
"#
    );
    // The organiser's descriptor 9, open on a file of theirs, and not
    // marked close-on-exec: the referee inherits it; no bot may.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&secret)
        .unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let path = dir.path().join("l.toml");
    std::fs::write(&path, &text).unwrap();
    let mut c = arena();
    c.args(["run", "--quiet", "--no-report"])
        .arg(&path)
        .stdout(Stdio::null());
    // SAFETY: dup2 is async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        c.pre_exec(move || {
            if libc::dup2(fd, 9) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = attack_lines(&dir.path().join("out"), "probe-w");
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "organiser secret",
        "the organiser's file was written through the inherited descriptor"
    );
    for what in [
        "inherited descriptor",
        "controlling terminal",
        "tiocsti",
        "session keyring",
        "user keyring",
        "inotify",
        "vsock",
        "inet socket",
        "ptrace",
        "unshare",
        "mount",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "io_uring",
        "read root-only.txt",
    ] {
        let got = finding(&lines, what);
        let root_file = what == "read root-only.txt";
        if root_file && !as_root() {
            println!("skipped: `{what}` (a root-only file is the organiser's own when not root)");
            continue;
        }
        assert!(got.starts_with("refused"), "{what}: {got}");
    }
    // Masked: empty or missing, never the real content.
    for f in ["/etc/shadow", "/etc/gshadow"] {
        let got = finding(&lines, &format!("read {f}"));
        assert!(
            got.starts_with("refused") || got == "open: b''",
            "{f}: {got}"
        );
    }
    assert_eq!(finding(&lines, "descriptors"), "0 1 2 3");
    // flock is answered "done" without a lock (the JVM needs it to
    // succeed): it passes no bit (two_colluding_bots_cannot_pass_a_bit).
    let flock = finding(&lines, "flock");
    assert!(
        flock.starts_with("open") || flock.starts_with("refused"),
        "{flock}"
    );
    for f in ["/proc/stat", "/proc/loadavg"] {
        assert_ne!(finding(&lines, f), "open", "{f}");
    }
    assert_eq!(finding(&lines, "no_new_privs"), "1");
    assert_eq!(finding(&lines, "seccomp"), "2");
}

/// An organiser with `~/bin` on `PATH` and a key in `~/.ssh`: the bot sees
/// nothing of the home folder.
#[test]
fn an_organisers_home_bin_on_path_exposes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    attack_bot(dir.path(), "probe");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = home.join(".ssh/id_rsa");
    std::fs::write(&key, "PRIVATE KEY").unwrap();
    let path = format!(
        "{}:{}",
        home.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let text = format!(
        r#"
name = "home"
bots = [
  {{ name = "probe", command = ["python3", "attack.py", "probe"], cwd = "probe", env = {{ PROBE_FILES = "{}:{}" }} }},
  {{ name = "r", command = ["{bot}"] }},
]
variants = ["kisolo"]
output = "out"
"#,
        key.display(),
        home.join("bin").display()
    );
    let (_, lines) = league(
        dir.path(),
        &text,
        &[],
        "probe-w",
        &[("PATH", &path), ("HOME", home.to_str().unwrap())],
    );
    for f in [
        key.display().to_string(),
        home.join("bin").display().to_string(),
    ] {
        let got = finding(&lines, &format!("read {f}"));
        assert!(got.starts_with("refused"), "{f}: {got}");
    }
}

/// Two bots of one author in the same game: the sender says "1" on every
/// channel it knows, the receiver looks for it on each; none carries it.
/// (The channels: flock and fcntl locks on a shared system file, the user
/// keyring, reads of a shared folder watched by inotify, a vsock port, an
/// abstract unix socket; docs/security.md lists them.)
#[test]
fn two_colluding_bots_cannot_pass_a_bit() {
    let dir = tempfile::tempdir().unwrap();
    attack_bot(dir.path(), "send");
    attack_bot(dir.path(), "recv");
    let text = r#"
name = "collude"
bots = [
  { name = "send", command = ["python3", "attack.py", "send"], cwd = "send" },
  { name = "recv", command = ["python3", "attack.py", "recv"], cwd = "recv" },
]
variants = ["kisolo"]
output = "out"
ponder = true
"#;
    let (rows, lines) = league(dir.path(), text, &[], "recv-w", &[]);
    assert!(rows.iter().all(|r| r.offender.is_none()), "{rows:?}");
    let received: Vec<&String> = lines.iter().filter(|l| l.starts_with("recv ")).collect();
    assert!(received.len() >= 6, "{lines:?}");
    for l in received {
        assert!(!l.contains(": open"), "a bit went through: {l}");
    }
}

/// Two bots in the same game under the default `ponder = false`: the
/// sender, at each odd request of its own, holds thousands of descriptors,
/// 128 MiB of memory and 2,000 files (inodes and dentries) and stays
/// paused holding them; at each even one it lets them go. The receiver
/// reads the host-wide counters at each of its requests (`file-nr`,
/// `inode-nr`, `dentry-state`, `meminfo`, `pressure/*`, `loadavg`, ...).
/// A bit passes if a counter reads differently while the sender holds and
/// while it does not: every counter must read the same at every request
/// (or be absent), so no bit passes, and `meminfo` states the bot's own
/// memory limit.
#[test]
fn two_colluding_bots_pass_no_bit_through_host_wide_counters() {
    let dir = tempfile::tempdir().unwrap();
    attack_bot(dir.path(), "hold");
    attack_bot(dir.path(), "count");
    let text = r#"
name = "counters"
bots = [
  { name = "hold", command = ["python3", "attack.py", "hold"], cwd = "hold" },
  { name = "count", command = ["python3", "attack.py", "count"], cwd = "count" },
]
variants = ["kisolo"]
output = "out"

# The sender's turns fill 128 MiB and make 10,000 files and descriptors:
# room for that on a loaded machine.
[time_control]
decision_ms = 10000
"#;
    let (rows, lines) = league(dir.path(), text, &[], "count-w", &[]);
    assert!(rows.iter().all(|r| r.offender.is_none()), "{rows:?}");
    let sent = attack_lines(&dir.path().join("out"), "hold-w");
    let held: Vec<&String> = sent.iter().filter(|l| l.contains(": 1 (")).collect();
    assert!(
        !held.is_empty() && sent.iter().any(|l| l.ends_with(": 0")),
        "the sender never said both 1 and 0: {sent:?}"
    );
    assert!(
        held.iter().all(|l| !l.contains("(0 descriptors")),
        "the sender held no descriptor: {held:?}"
    );
    let mut readings: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for l in &lines {
        if let Some((path, value)) = l
            .strip_prefix("counter ")
            .and_then(|rest| rest.split_once(": "))
        {
            readings.entry(path).or_default().push(value);
        }
    }
    assert!(
        readings.len() >= 10 && readings.values().all(|v| v.len() >= 4),
        "too few readings: {readings:?}"
    );
    let changed: Vec<String> = readings
        .iter()
        .filter_map(|(path, values)| {
            let distinct: std::collections::BTreeSet<&&str> = values.iter().collect();
            let mut two = distinct.iter().take(2);
            (distinct.len() > 1).then(|| {
                format!(
                    "{path}: {} readings, {} different ({:?} then {:?})",
                    values.len(),
                    distinct.len(),
                    two.next(),
                    two.next()
                )
            })
        })
        .collect();
    assert!(
        changed.is_empty(),
        "counters that changed while the receiver read them (a channel):\n{}",
        changed.join("\n")
    );
    let meminfo = readings["/proc/meminfo"][0];
    assert!(
        meminfo.starts_with("MemTotal:") && meminfo.contains(" 1048576 kB"),
        "meminfo does not state the bot's limit (1024 MiB): {meminfo}"
    );
}

/// A bot's mount table (/proc/self/mountinfo, /proc/mounts) names no host
/// path beyond what the bot is shown at that very place: no scratch folder
/// (named after the referee's pid), no source of a mask, no results folder.
/// Each mount's root (its source's path in its file system) is the tail
/// of where it is shown, or a file at the top of a tmpfs of the bot's own
/// (`/empty`, `/meminfo`) or of the devices (`/null`).
#[test]
fn a_bots_mount_table_names_no_host_path() {
    let dir = tempfile::tempdir().unwrap();
    attack_bot(dir.path(), "mounts");
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let text = format!(
        r#"
name = "mounts"
bots = [
  {{ name = "mounts", command = ["python3", "attack.py", "mounts"], cwd = "mounts" }},
  {{ name = "r", command = ["{bot}"] }},
]
variants = ["kisolo"]
output = "out"
"#
    );
    let (_, lines) = league(dir.path(), &text, &[], "mounts-w", &[]);
    let out = dir.path().join("out").canonicalize().unwrap();
    let scratch = std::env::temp_dir().join("arena-scratch-");
    let table: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("mountinfo: ") || l.starts_with("mounts: "))
        .collect();
    assert!(table.len() >= 10, "{lines:?}");
    for l in &table {
        for host in [
            "arena-scratch".to_string(),
            scratch.display().to_string(),
            out.display().to_string(),
        ] {
            assert!(!l.contains(&host), "the mount table names {host}: {l}");
        }
    }
    for l in table.iter().filter_map(|l| l.strip_prefix("mountinfo: ")) {
        let f: Vec<&str> = l.split(' ').collect();
        let (root, at) = (f[3], f[4]);
        let fstype = f.iter().skip_while(|x| **x != "-").nth(1).copied();
        let virtual_fs = matches!(fstype, Some("tmpfs" | "devtmpfs" | "proc"));
        let own = virtual_fs && root.matches('/').count() == 1;
        assert!(
            root == "/" || at.ends_with(root) || own,
            "a mount shows a host path as its source ({root} at {at}): {l}"
        );
    }
}

/// A bot.toml whose command names a file outside its folder (absolute,
/// relative with `..`, or through a symbolic link of its folder) is refused
/// before any game, with the bot.toml's name and line.
#[test]
fn a_bot_toml_naming_files_outside_its_folder_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join("bots/victim")).unwrap();
    std::fs::write(base.join("bots/victim/secret.txt"), "hunter2").unwrap();
    let outside = base.join("organiser-key");
    std::fs::write(&outside, "PRIVATE").unwrap();
    for (name, arg) in [
        ("absolute", outside.display().to_string()),
        ("dotdot", "../victim/secret.txt".to_string()),
        ("link", "peek/secret.txt".to_string()),
    ] {
        let folder = base.join("bots").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(attack_dir().join("attack.py"), folder.join("attack.py")).unwrap();
        std::os::unix::fs::symlink(base.join("bots/victim"), folder.join("peek")).unwrap();
        std::fs::write(
            folder.join("bot.toml"),
            format!(
                "name = \"{name}\"\n# a peek\ncommand = [\"python3\", \"attack.py\", \"{arg}\"]\n"
            ),
        )
        .unwrap();
        let league = base.join(format!("{name}.toml"));
        let bot = env!("CARGO_BIN_EXE_random-bot");
        std::fs::write(
            &league,
            format!(
                "name = \"{name}\"\nbots = [\"{name}\", {{ name = \"r\", command = [\"{bot}\"] }}]\nvariants = [\"filo\"]\noutput = \"out-{name}\"\n"
            ),
        )
        .unwrap();
        let out = arena()
            .args(["run", "--quiet", "--no-report"])
            .arg(&league)
            .current_dir(&base)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: {err}");
        let at = format!("bots/{name}/bot.toml:3: `command` argument `{arg}`");
        assert!(err.contains(&at), "{name}: {err}");
        assert!(err.contains("would not find it"), "{name}: {err}");
        let rows =
            csvio::read_rows(&base.join(format!("out-{name}/games.csv"))).unwrap_or_default();
        assert!(rows.is_empty(), "{name}: a game was played: {rows:?}");
    }
}

/// A bot folder `dir/name` whose build is tests/attack/build.py, run with
/// the given `[sandbox]` table; returns the league's stderr and the
/// findings the build wrote in its built copy (none when it made none).
/// The builds' copies go under `dir/cache`.
fn build_league(dir: &Path, name: &str, sandbox: &str, port: u16) -> (bool, String, Vec<String>) {
    let folder = dir.join("bots").join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(attack_dir().join("build.py"), folder.join("build.py")).unwrap();
    let bot_py = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bots/random-python/bot.py");
    std::fs::copy(bot_py, folder.join("bot.py")).unwrap();
    // Outside the temporary folder, which is the bot's own scratch folder
    // in its view.
    let mark = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("build-mark-{name}-{}", std::process::id()));
    std::fs::write(
        folder.join("bot.toml"),
        format!(
            "name = \"{name}\"\nbuild = [\"python3\", \"build.py\"]\ncommand = [\"python3\", \"bot.py\"]\n\
             [env]\nBUILD_MARK = \"{}\"\nBUILD_ORIGINAL = \"{}\"\nBUILD_PORT = \"{port}\"\n",
            mark.display(),
            folder.display()
        ),
    )
    .unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            "name = \"{name}\"\nbots = [\"{name}\", {{ name = \"r\", command = [\"{bot}\"] }}]\nvariants = [\"kisolo\"]\noutput = \"out-{name}\"\n{sandbox}\n"
        ),
    )
    .unwrap();
    let out = arena()
        .args(["run", "--quiet", "--no-report"])
        .arg(&file)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .unwrap();
    assert!(!mark.exists(), "the build wrote {}", mark.display());
    assert!(
        !folder.join("from-build.txt").exists() && !folder.join("built.txt").exists(),
        "the build wrote in the bot's own folder"
    );
    let builds = dir.join("cache/mancala-arena/builds");
    let findings = std::fs::read_dir(&builds)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}-"))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("built.txt")).ok())
        .flat_map(|t| t.lines().map(str::to_string).collect::<Vec<_>>())
        .collect();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), err, findings)
}

/// A bot's build runs in the sandbox, in a copy of its folder: it writes
/// there and nowhere else (not the host, not the bot's own folder), has no
/// network, and the bot then plays from the built copy. With `[sandbox]
/// build_network = true` the same build reaches the network.
#[test]
fn a_build_writes_only_its_copy_and_reaches_the_network_only_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();

    let (ok, err, findings) = build_league(&base, "closed", "", port);
    assert!(ok, "{err}");
    for what in ["write mark", "write original", "connect"] {
        let f = finding(&findings, what);
        assert!(f.starts_with("refused"), "{what}: {f}");
    }
    assert!(listener.accept().is_err(), "the build connected");
    let rows = csvio::read_rows(&base.join("out-closed/games.csv")).unwrap();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.offender.is_none()),
        "{rows:?}"
    );

    let (ok, err, findings) = build_league(&base, "open", "[sandbox]\nbuild_network = true", port);
    assert!(ok, "{err}");
    assert_eq!(finding(&findings, "connect"), "open", "{findings:?}");
    assert!(finding(&findings, "write mark").starts_with("refused"));
}

/// A build that runs past `[sandbox] build_seconds` is stopped, and the
/// league does not start, saying why.
#[test]
fn a_build_past_its_time_limit_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let folder = base.join("bots/slow");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("bot.toml"),
        "name = \"slow\"\nbuild = [\"sleep\", \"613\"]\ncommand = [\"python3\", \"bot.py\"]\n",
    )
    .unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let file = base.join("slow.toml");
    std::fs::write(
        &file,
        format!("name = \"slow\"\nbots = [\"slow\", {{ name = \"r\", command = [\"{bot}\"] }}]\nvariants = [\"kisolo\"]\noutput = \"out\"\n[sandbox]\nbuild_seconds = 1\n"),
    )
    .unwrap();
    let out = arena()
        .args(["run", "--quiet", "--no-report"])
        .arg(&file)
        .current_dir(&base)
        .env("XDG_CACHE_HOME", base.join("cache"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("`slow`")
            && err.contains("stopped after 1 s")
            && err.contains("build_seconds"),
        "{err}"
    );
    // The kernel ends what was left in the build's namespace: soon after.
    let gone = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        common::processes_with("sleep\u{0}613").is_empty()
    });
    assert!(gone, "the build is still running");
}
