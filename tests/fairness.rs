//! Fairness between turns (docs/security.md, "No CPU between turns"): in
//! a test binary of its own, so that no other test of the suite loads the
//! machine while it measures.

use mancala_arena::results::{csvio, GameRow};
use std::path::Path;

mod common;
use common::{attack_bot, attack_lines};
use std::process::{Command, Stdio};

/// Runs the league file `text` in `dir`; its rows and the `ATTACK` lines
/// of the logs of `bot`.
fn league(dir: &Path, text: &str, bot: &str) -> (Vec<GameRow>, Vec<String>) {
    let file = dir.join("l.toml");
    std::fs::write(&file, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(["run", "--quiet", "--no-report"])
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = csvio::read_rows(&dir.join("out/games.csv")).unwrap();
    let lines = attack_lines(&dir.join("out"), &format!("{bot}-w"));
    (rows, lines)
}

/// Fairness: an honest bot that thinks for 30% of a 300 ms decision time
/// against a bot that leaves 4 children spinning, CPU pinning on, `-j 1`:
/// no timeout in 48 games, and its median thinking wall time within 1.25x
/// of the same bot's against a quiet opponent in the same run.
#[test]
fn a_hog_between_turns_steals_no_time_from_an_honest_bot() {
    let dir = tempfile::tempdir().unwrap();
    attack_bot(dir.path(), "honest");
    attack_bot(dir.path(), "hog");
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let text = format!(
        r#"
name = "fair"
bots = [
  {{ name = "honest", command = ["python3", "attack.py", "honest"], cwd = "honest", env = {{ THINK_MS = "90" }} }},
  {{ name = "hog", command = ["python3", "attack.py", "hog"], cwd = "hog" }},
  {{ name = "quiet", command = ["{bot}"] }},
]
variants = ["kisolo"]
gauntlet = "honest"
rounds = 12
max_plies = 16
concurrency = 1
output = "out"

[time_control]
decision_ms = 300
"#
    );
    let (rows, lines) = league(dir.path(), &text, "honest");
    assert_eq!(rows.len(), 48, "{rows:?}");
    let honest_faults: Vec<&GameRow> = rows
        .iter()
        .filter(|r| {
            r.offender
                .is_some_and(|s| [&r.seat0, &r.seat1][s as usize] == "honest")
        })
        .collect();
    assert!(honest_faults.is_empty(), "{honest_faults:?}");
    let median = |who: &str| {
        let mut v: Vec<f64> = lines
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("think wall ms vs {who}: ")))
            .map(|x| x.parse::<f64>().unwrap())
            .collect();
        assert!(v.len() >= 24, "{who}: {v:?}");
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (hog, quiet) = (median("hog"), median("quiet"));
    println!(
        "median thinking wall time: {hog:.1} ms against the hog, {quiet:.1} ms against a quiet bot"
    );
    assert!(
        hog <= 1.25 * quiet,
        "{hog} ms against the hog, {quiet} ms against a quiet bot"
    );
}
