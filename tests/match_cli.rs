//! `arena match` and the SPRT of a running league, end to end: the real
//! binary, the real greedy and random bots (their games reproducible from
//! the protocol's seeds), real files.

use mancala_arena::results::csvio;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn arena(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the arena binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const GREEDY: &str = env!("CARGO_BIN_EXE_greedy-bot");
const RANDOM: &str = env!("CARGO_BIN_EXE_random-bot");

/// Greedy against random: H1 (greedy is 20 Elo stronger) is accepted long
/// before the 1,000 games; the games in flight are finished and recorded,
/// no other starts; the same command again plays nothing more.
#[test]
fn a_match_stops_when_the_sprt_accepts_h1_and_stays_decided() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "match",
        GREEDY,
        RANDOM,
        "--sprt",
        "elo0=0,elo1=20",
        "--games",
        "1000",
        "-j",
        "2",
        "--quiet",
    ];
    let o = arena(dir.path(), &args);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("SPRT greedy-bot vs random-bot"), "{out}");
    assert!(out.trim_end().contains("\nH1 accepted"), "{out}");
    let csv = dir
        .path()
        .join("results/match-greedy-bot-vs-random-bot/games.csv");
    let rows = csvio::read_rows(&csv).unwrap();
    assert!(rows.len() < 1000, "stopped early: {} games", rows.len());
    // Decided after some game; then only the games in flight: the two
    // being played, and those finished but not yet counted, which wait in
    // the runner's queue of twice the games at a time (a first version of
    // this test allowed only the two, and failed once in CI with 3).
    let decided: usize = out
        .split("decided after ")
        .nth(1)
        .map(|s| s.split(' ').next().unwrap().parse().unwrap())
        .unwrap_or(rows.len());
    let in_flight = 2 + 2 * 2;
    assert!(
        rows.len() >= decided && rows.len() <= decided + in_flight,
        "{out}"
    );

    let again = arena(dir.path(), &args);
    let out = text(&again);
    assert!(again.status.success(), "{out}");
    assert!(
        out.contains("the SPRT decided in an earlier run (H1 accepted"),
        "{out}"
    );
    assert_eq!(csvio::read_rows(&csv).unwrap().len(), rows.len());
}

/// Two copies of the random bot: no difference, so H0 (against a large
/// elo1) is accepted; the same-named bots are told apart.
#[test]
fn equal_bots_get_h0_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let o = arena(
        dir.path(),
        &[
            "match",
            RANDOM,
            RANDOM,
            "--sprt",
            "elo0=0,elo1=150,model=logistic",
            "--games",
            "2000",
            "--quiet",
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("SPRT random-bot vs random-bot-2"), "{out}");
    assert!(out.trim_end().contains("\nH0 accepted"), "{out}");
}

/// A league file's `[sprt]` needs two bots; the error names the file and
/// line, and what to do.
#[test]
fn an_sprt_of_three_bots_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("three.toml");
    std::fs::write(
        &file,
        format!(
            r#"name = "three"
bots = [
  {{ name = "a", command = ["{RANDOM}"] }},
  {{ name = "b", command = ["{RANDOM}"] }},
  {{ name = "c", command = ["{GREEDY}"] }},
]
[sprt]
elo0 = 0
elo1 = 5
"#
        ),
    )
    .unwrap();
    let o = arena(dir.path(), &["run", "three.toml"]);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("three.toml:7") && out.contains("this league has 3 bots"),
        "{out}"
    );
    // --bots keeps two: then it runs (a handful of games).
    let o = arena(
        dir.path(),
        &[
            "run",
            "three.toml",
            "--bots",
            "a,c",
            "--rounds",
            "1",
            "--quiet",
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("SPRT a vs c"), "{out}");
    assert!(
        out.contains("the schedule ended before the SPRT decided"),
        "{out}"
    );
}
