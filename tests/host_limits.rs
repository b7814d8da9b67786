//! The shell's own limits under `arena run`: a file size limit (`ulimit
//! -f`) below the bots' own, or reached by the league's files.

use crate::common::league::data_lines;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Two random bots, Kisolo only, `rounds` rounds, results in `dir/out`.
fn tournament(dir: &Path, rounds: u32) -> PathBuf {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let text = format!(
        r#"
name = "t"
seed = 3
bots = [
  {{ name = "a", command = ["{bot}"] }},
  {{ name = "b", command = ["{bot}"] }},
]
variants = ["kisolo"]
rounds = {rounds}
max_plies = 300
concurrency = 1
output = "out"
"#
    );
    let path = dir.join("t.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `arena run FILE --quiet --no-report` in bash after `limit`.
fn run_under(limit: &str, file: &Path) -> Output {
    crate::common::league::run_under(limit, file, &["--no-report"])
}

/// A hard file size limit below the bots' 64 MiB (a cluster's `ulimit
/// -f`) was taken for a machine without user namespaces: every bot
/// failed to start. The bots get the shell's limit, a warning says so,
/// and the league plays.
#[test]
fn a_hard_file_size_limit_below_the_bots_lets_them_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), 1);
    let out = run_under("ulimit -f 60000", &file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("user namespace"), "{stderr}");
    // Said once, in the console's words, not as a log's line.
    let said = "warning: this shell's hard limit on file size (`ulimit -f`) is 58.6 MiB";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    assert!(!stderr.contains("WARN"), "{stderr}");
    let csv = dir.path().join("out/games.csv");
    assert_eq!(data_lines(&csv), 2);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(!text.contains("forfeit"), "{text}");
}

/// A soft file size limit the league's files reach ended `arena run` by
/// SIGXFSZ without a word. It is an error naming the file and the limit,
/// as a full disk is, and the next run (the limit raised) finishes the
/// schedule with every game recorded once.
#[test]
fn a_file_size_limit_reached_is_an_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), 30);
    // 8 KiB: games.csv passes it within the schedule's 60 games.
    let out = run_under("ulimit -S -f 8", &file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "ended by a signal: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("ulimit -f"), "{stderr}");
    let csv = dir.path().join("out/games.csv");
    assert!(data_lines(&csv) < 60);
    let again = run_under("true", &file);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut ids: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next())
        .collect();
    assert_eq!(ids.len(), 60);
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 60, "a game recorded twice");
}
