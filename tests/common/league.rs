//! `arena run` of a league file, for the league tests (tests/league_run.rs,
//! tests/league_swiss.rs, tests/league_knockout.rs): the real binary, its
//! games.csv read as it grows, a run killed with SIGKILL part way, `arena
//! status` of its folder (text and JSON); and
//! `arena view` of its results (tests/report_view.rs,
//! tests/analysis_view.rs).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `arena` binary, with nothing on its stdin.
pub fn arena() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arena"));
    c.stdin(Stdio::null());
    c
}

/// `arena run FILE --quiet ARGS`, to its end.
pub fn run(file: &Path, args: &[&str]) -> Output {
    arena()
        .arg("run")
        .arg(file)
        .arg("--quiet")
        .args(args)
        .output()
        .unwrap()
}

/// `arena run FILE --quiet ARGS` in bash after `limit` (e.g. `ulimit -f
/// 60000`), to its end.
pub fn run_under(limit: &str, file: &Path, args: &[&str]) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!("{limit} && exec \"$0\" run \"$@\" --quiet"))
        .arg(env!("CARGO_BIN_EXE_arena"))
        .arg(file)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// [`run`], which must succeed (its stderr said if not).
pub fn run_ok(file: &Path, args: &[&str]) -> Output {
    let out = run(file, args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The rows of `csv` so far (0 before it exists).
pub fn data_lines(csv: &Path) -> usize {
    std::fs::read_to_string(csv)
        .map(|s| s.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

/// Waits (with a deadline, polling the file) until `csv` holds `n` rows.
pub fn wait_for_rows(child: &mut Child, csv: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while data_lines(csv) < n {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before {n} rows"
        );
        assert!(Instant::now() < deadline, "no {n} rows within the deadline");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `arena run FILE --quiet --output OUT`, killed with SIGKILL once its
/// games.csv holds `n` rows; the rows it holds then.
pub fn killed_after_rows(file: &Path, out: &Path, n: usize) -> usize {
    let csv = out.join("games.csv");
    let mut child = arena()
        .arg("run")
        .arg(file)
        .args(["--quiet", "--output", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_rows(&mut child, &csv, n);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    data_lines(&csv)
}

/// A running `arena view`, stopped when dropped.
pub struct View {
    child: Child,
    /// Its address, as it printed it (`http://127.0.0.1:PORT/`).
    pub url: String,
}

impl Drop for View {
    /// SIGTERM, so that it removes its pages' folder; SIGKILL if it has
    /// not stopped in a generous while.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `arena view DIR` on 127.0.0.1 port 0, once it says where it listens.
pub fn view(dir: &Path) -> View {
    view_of(&[dir])
}

/// `arena view DIRS...` on 127.0.0.1 port 0, once it says where it listens.
pub fn view_of(dirs: &[&Path]) -> View {
    let mut child = arena()
        .args(["view", "--no-open", "--bind", "127.0.0.1:0"])
        .args(dirs)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    View { child, url }
}

/// `arena status` of `dir`: its text and its `--json`.
pub fn status(dir: &Path) -> (String, serde_json::Value) {
    let o = arena().arg("status").arg(dir).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = arena()
        .args(["status", "--json"])
        .arg(dir)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&j.stdout).expect("status --json is JSON");
    (String::from_utf8_lossy(&o.stdout).to_string(), json)
}
