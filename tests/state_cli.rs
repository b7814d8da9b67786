//! `arena state` driven through the real binary: the JSON document, the
//! error for an illegal move, the result once over, `--render`. Positions
//! are the hand-worked ones of the Kisolo rule tests (src/engine/kisolo.rs).

use serde_json::Value;
use std::process::{Command, Output};

fn arena(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(args)
        .output()
        .expect("the arena binary runs")
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn start_position_lists_the_compulsory_captures() {
    let v = json_of(&arena(&["state", "kisolo"]));
    assert_eq!(v["variant"], "kisolo");
    assert_eq!(v["players"], 2);
    assert_eq!(v["moves_applied"], 0);
    assert_eq!(v["to_decide"], 0);
    assert_eq!(v["decision"], "capture");
    let legal: Vec<&str> = v["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(legal, ["xi1", "xi2", "xi3", "xi4", "xi5", "xi6", "xi7"]);
    assert_eq!(v["result"], Value::Null);
    assert_eq!(v["state"]["columns"], 7);
    assert_eq!(v["state"]["ply"], 0);
    assert_eq!(v["history"], serde_json::json!([]));
}

/// 6 columns, `xi1`: the position worked by hand in the Kisolo tests.
#[test]
fn a_move_list_is_replayed() {
    let v = json_of(&arena(&[
        "state",
        "kisolo",
        "--option",
        "columns=6",
        "--moves",
        "xi1",
    ]));
    assert_eq!(v["moves_applied"], 1);
    assert_eq!(v["to_decide"], 1);
    assert_eq!(
        v["state"]["outer"][0],
        serde_json::json!([7, 7, 0, 1, 6, 2])
    );
    assert_eq!(
        v["state"]["inner"][0],
        serde_json::json!([7, 6, 6, 0, 6, 6])
    );
    assert_eq!(
        v["state"]["outer"][1],
        serde_json::json!([3, 3, 0, 0, 3, 0])
    );
    assert_eq!(
        v["state"]["inner"][1],
        serde_json::json!([3, 3, 0, 0, 3, 0])
    );
    // Seat 1's i1, i2, i5 (3 each) face seat 0's i6, i5, i2 (6 each).
    assert_eq!(v["legal"], serde_json::json!(["xi1", "xi2", "xi5"]));
    assert_eq!(
        v["history"],
        serde_json::json!([{"seat": 0, "ply": 0, "option": "xi1", "forced": false}])
    );
}

#[test]
fn an_illegal_move_names_its_position_and_the_legal_options() {
    let out = arena(&[
        "state",
        "kisolo",
        "--option",
        "columns=6",
        "--moves",
        "xi1 o1 xi2",
    ]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("move 2 `o1`"), "{err}");
    assert!(err.contains("legal options there: xi1 xi2 xi5"), "{err}");
}

/// A move that differs from a legal one where the eye cannot tell (a
/// zero-width space pasted with it, another case) says how; a negative
/// player count is named as that (it was taken for a flag, `-1`).
#[test]
fn a_move_written_otherwise_says_how_and_a_negative_count_is_named() {
    let out = arena(&["state", "diffusion", "--moves", "\u{200b}A"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("it holds U+200B, which is not ASCII"), "{err}");
    let out = arena(&["state", "kisolo", "--moves", "XI1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(`xi1` is legal: options are taken exactly"),
        "{err}"
    );
    // Where the engine would read it (Diffusion's letters in any case),
    // the command line takes options as the referee does: as listed.
    let out = arena(&["state", "diffusion", "--moves", "a"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("move 1 `a` is illegal")
            && err.contains("(`A` is legal: options are taken exactly"),
        "{err}"
    );
    // Commas separate moves as spaces do (as in `play --opening`).
    let v = json_of(&arena(&["state", "kisolo", "--moves", "xi1,xi1"]));
    assert_eq!(v["moves_applied"], 2);
    let out = arena(&["state", "kisolo", "--players", "-1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-1 is negative"), "{err}");
    assert!(!err.contains("unexpected argument"), "{err}");
}

#[test]
fn the_result_once_over_and_moves_after_it() {
    let v = json_of(&arena(&[
        "state",
        "kisolo",
        "--max-plies",
        "1",
        "--moves",
        "xi1",
    ]));
    assert_eq!(v["to_decide"], Value::Null);
    assert_eq!(v["decision"], "none");
    assert_eq!(v["legal"], serde_json::json!([]));
    assert_eq!(
        v["result"],
        serde_json::json!({"scores": [0.5, 0.5], "ranks": [0, 0], "reason": "max_plies"})
    );
    let out = arena(&["state", "kisolo", "--max-plies", "1", "--moves", "xi1 xi1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("move 2 `xi1`"), "{err}");
    assert!(err.contains("the game is over"), "{err}");
}

#[test]
fn render_prints_the_board_and_the_decision() {
    let out = arena(&["state", "kisolo", "--render", "--moves", "xi4"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("seat 0 o1..o7"), "{text}");
    assert!(text.contains("seat 1 to decide"), "{text}");
}

#[test]
fn bad_settings_are_errors() {
    for args in [
        &["state", "mancala"][..],
        &["state", "kisolo", "--option", "columns=9"],
        &["state", "kisolo", "--option", "columns"],
        &["state", "kisolo", "--players", "3"],
    ] {
        let out = arena(args);
        assert!(!out.status.success(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}
