//! `arena tables build` and `arena analyse` driven through the real binary
//! (issue 51): a game built to contain a losing move from a won position
//! (proved by the F.I.L.O solver, independently of the analysis) is
//! marked at that move; tables are built, read back by a second build and
//! rebuilt where a layer is missing; bad input is named.

use mancala_arena::ai::filo_solve;
use mancala_arena::engine::filo::Filo;
use mancala_arena::engine::{Rules, Settings};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::process::{Command, Output};

fn arena(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(args)
        .output()
        .expect("the arena binary runs")
}

fn stdout_of(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Can `seat` force a win from `g` (the ply cap off) within 8 plies? (A
/// short proof: the analysis proves it again in a few milliseconds.)
fn proved_win(g: &Filo, seat: usize) -> bool {
    if let Some(o) = g.outcome() {
        return !o.is_draw() && o.ranks[seat] == 0;
    }
    let root = filo_solve::decode(filo_solve::key(g)).expect("a position decodes");
    filo_solve::prove(&root, seat, 8, None).plies.is_some()
}

/// A random F.I.L.O game in which, at the first movement-phase decision
/// where the mover has a proved win and an option after which the
/// opponent has one, that option is played. Returns the moves up to that
/// one (the record ends there: the rest would only cost the test time)
/// and the 1-based number of the losing decision.
fn game_with_a_losing_move(seed: u64) -> Option<(Vec<String>, usize)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = Filo::new(&Settings::default()).expect("F.I.L.O sets up");
    let (mut moves, mut blunder) = (Vec::new(), None);
    let mut opts = Vec::new();
    while let Some(mover) = g.to_decide() {
        g.options(&mut opts);
        let mut pick = opts[rng.gen_range(0..opts.len())];
        if blunder.is_none() && g.reserve() == [0, 0] && opts.len() > 1 && proved_win(&g, mover) {
            let losing = opts.iter().copied().find(|&o| {
                let mut c = g.clone();
                c.apply(o).expect("a listed option applies");
                proved_win(&c, 1 - mover)
            });
            if let Some(o) = losing {
                pick = o;
                blunder = Some(moves.len() + 1);
                moves.push(g.notation(pick));
                break;
            }
        }
        moves.push(g.notation(pick));
        g.apply(pick).expect("a listed option applies");
    }
    Some((moves, blunder?))
}

fn write_record(path: &std::path::Path, moves: &[String]) {
    let mut g = Filo::new(&Settings::default()).expect("F.I.L.O sets up");
    let mut text = String::from(
        r#"{"type":"game","format":2,"game_id":"blunder-1","variant":"filo","players":2,"options":{},"max_plies":1000,"names":["a","b"],"time":{"per_decision_ms":1000},"opening":[],"seed":"0","notes":[]}"#,
    );
    text.push('\n');
    for m in moves {
        let seat = g.to_decide().expect("not over");
        text.push_str(&format!(
            "{{\"seat\":{seat},\"ply\":{},\"option\":\"{m}\"}}\n",
            g.plies()
        ));
        let o = g.parse(m).expect("notation");
        g.apply(o).expect("legal");
    }
    // The game is cut after the losing move: recorded as a draw at the
    // ply cap would be, the analysis does not read the end line's result.
    text.push_str(&format!(
        "{{\"type\":\"end\",\"scores\":[0.5,0.5],\"reason\":\"max_plies\",\"plies\":{}}}\n",
        g.plies()
    ));
    std::fs::write(path, text).expect("record written");
}

#[test]
fn analyse_marks_the_move_that_threw_a_won_filo_game_away() {
    let (moves, at) = (1..50)
        .find_map(game_with_a_losing_move)
        .expect("a random game with a losing move");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("game.jsonl");
    write_record(&path, &moves);
    let p = path.to_str().expect("utf-8 path");
    let json = stdout_of(&arena(&[
        "analyse",
        p,
        "--json",
        "--depth",
        "2",
        "--proof-ms",
        "50",
    ]));
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), moves.len(), "one line per decision");
    let v = &lines[at - 1];
    assert_eq!(v["decision"], at);
    assert_eq!(v["played"], moves[at - 1].as_str());
    assert_eq!(v["blunder"], true, "{v}");
    assert_eq!(v["source"], "solver", "{v}");
    assert_eq!(v["best_value"]["result"], "win", "{v}");
    assert_eq!(v["played_value"]["result"], "loss", "{v}");
    assert!(
        v["why"]
            .as_str()
            .is_some_and(|w| w.contains("win thrown away")),
        "{v}"
    );
    // The table says the same, at that decision.
    let table = stdout_of(&arena(&["analyse", p, "--depth", "2", "--proof-ms", "100"]));
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&at.to_string()))
        .expect("the decision's row");
    assert!(row.contains("?? win thrown away"), "{row}");
}

#[test]
fn tables_build_resumes_and_rebuilds_a_missing_layer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().to_str().expect("utf-8 path");
    let first = stdout_of(&arena(&[
        "tables",
        "build",
        "diffusion",
        "--seeds",
        "5",
        "--out",
        out,
        "--threads",
        "2",
    ]));
    assert!(
        first.contains("4 layers (4 built now, 0 read back)"),
        "{first}"
    );
    let n05 = dir.path().join("diffusion").join("n05.tbl");
    let bytes = std::fs::read(&n05).expect("the last layer");
    assert_eq!(&bytes[..8], b"ARENATB\x01");
    std::fs::remove_file(&n05).expect("removed");
    let again = stdout_of(&arena(&[
        "tables",
        "build",
        "diffusion",
        "--seeds",
        "5",
        "--out",
        out,
    ]));
    assert!(
        again.contains("4 layers (1 built now, 3 read back)"),
        "{again}"
    );
    assert_eq!(
        std::fs::read(&n05).expect("rebuilt"),
        bytes,
        "the same values again"
    );
}

#[test]
fn tricala_tables_build_from_two_stones_on_the_board() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().to_str().expect("utf-8 path");
    let built = stdout_of(&arena(&[
        "tables", "build", "tricala", "--seeds", "3", "--out", out,
    ]));
    // Two stones: 8 captured each (9 has won); three: 7 and 8.
    for layer in ["w1-b1-c8-8", "w2-b0-c8-8", "w2-b1-c7-8", "w1-b2-c8-7"] {
        assert!(built.contains(layer), "no {layer} in:\n{built}");
        let file = dir.path().join("tricala").join(format!("{layer}.tbl"));
        assert!(file.is_file(), "{}", file.display());
    }
    assert!(built.contains("11 layers (11 built now"), "{built}");
}

/// `arena tables coverage` of a real league's 2-player Tricala games; then
/// of the same folder with its records damaged: named as such, not as
/// missing.
#[test]
fn coverage_counts_tricala_games_and_names_records_that_do_not_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let out_s = out.to_str().expect("utf-8 path");
    let random = env!("CARGO_BIN_EXE_random-bot");
    stdout_of(&arena(&[
        "match",
        random,
        random,
        "--variants",
        "tricala",
        "--games",
        "4",
        "-j",
        "2",
        "--quiet",
        "--no-report",
        "-o",
        out_s,
    ]));
    let table = stdout_of(&arena(&["tables", "coverage", out_s, "--seeds", "6"]));
    let row = table
        .lines()
        .find(|l| l.starts_with("tricala"))
        .unwrap_or_else(|| panic!("no tricala row in:\n{table}"));
    assert_eq!(row.split_whitespace().nth(2), Some("4"), "{row}");
    let games = out.join("games");
    for f in std::fs::read_dir(&games).expect("the records' folder") {
        let path = f.expect("an entry").path();
        if path.to_string_lossy().ends_with(".jsonl.zst") {
            let len = std::fs::metadata(&path).expect("its size").len() as usize;
            std::fs::write(&path, vec![0x5a; len]).expect("damaged");
        }
    }
    let o = arena(&["tables", "coverage", out_s, "--seeds", "6"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("4 records do not read (the first, "), "{err}");
}

#[test]
fn bad_input_is_named() {
    let err = |args: &[&str]| {
        let o = arena(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert!(err(&["tables", "build", "kisolo"]).contains("seeds in play never fall"));
    assert!(err(&["tables", "build", "chess"]).contains("unknown game `chess`"));
    assert!(err(&["tables", "build", "tricala3"]).contains("3-player Tricala has no tables"));
    assert!(err(&[
        "tables",
        "build",
        "diffusion",
        "--seeds",
        "30",
        "--max-size",
        "1M"
    ])
    .contains("more than --max-size"));
    assert!(err(&["analyse", "no/such/file"]).contains("no such results folder or record file"));
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "not json\n").expect("written");
    assert!(err(&["analyse", bad.to_str().expect("utf-8")]).contains("not a game record"));
}
