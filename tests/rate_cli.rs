//! `arena rate` and `arena pgn` driven as real processes on the hand-made
//! CSVs of tests/data/ratings (see gen_reference.py there for league.csv and
//! its independently computed expected ratings).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ratings")
        .join(name)
}

fn arena(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(args)
        .output()
        .expect("the arena binary runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// `ratings.csv` as bot/variant -> column -> cell.
fn read_table(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).expect("readable csv");
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn rating<'a>(
    rows: &'a [HashMap<String, String>],
    bot: &str,
    variant: &str,
) -> &'a HashMap<String, String> {
    rows.iter()
        .find(|r| r["bot"] == bot && r["variant"] == variant)
        .unwrap_or_else(|| panic!("no row for {bot}/{variant}"))
}

fn num(r: &HashMap<String, String>, col: &str) -> f64 {
    r[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = {:?}", r[col]))
}

#[test]
fn two_bots_closed_form_and_standings() {
    let dir = tempfile::tempdir().unwrap();
    let out = arena(&["rate", s(&data("two.csv")), "--out", s(dir.path())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rank") && text.contains("+/-") && text.contains("score%"));
    // A scored 3 of 4: elo_A - elo_B = 400 log10(3), split around 0.
    let rows = read_table(&dir.path().join("ratings.csv"));
    let half = 200.0 * 3f64.log10();
    assert!((num(rating(&rows, "A", "all"), "elo") - half).abs() < 0.01);
    assert!((num(rating(&rows, "B", "all"), "elo") + half).abs() < 0.01);
    let b = rating(&rows, "B", "all");
    assert_eq!(b["forfeits"], "1");
    assert_eq!(b["forfeit_reasons"], "timeout:1");
    for f in ["pairs.csv", "variants.csv"] {
        assert!(dir.path().join(f).exists());
    }
    let pairs = read_table(&dir.path().join("pairs.csv"));
    let all = pairs.iter().find(|p| p["variant"] == "all").unwrap();
    // Pairs p1 (A: W, W) and p2 (A: L, W): WW = 1, WL+DD = 1.
    assert_eq!((all["ww"].as_str(), all["wl_dd"].as_str()), ("1", "1"));
}

#[test]
fn league_matches_the_independent_python_reference() {
    let dir = tempfile::tempdir().unwrap();
    let out = arena(&["rate", s(&data("league.csv")), "--out", s(dir.path())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = read_table(&dir.path().join("ratings.csv"));
    let want = read_table(&data("league_expected.csv"));
    assert_eq!(want.len(), 6);
    for w in &want {
        let g = rating(&got, &w["bot"], "all");
        assert!(
            (num(g, "elo") - num(w, "elo")).abs() < 0.01,
            "{} elo",
            w["bot"]
        );
        assert!(
            (num(g, "elo_se") - num(w, "elo_se")).abs() < 0.01,
            "{} se",
            w["bot"]
        );
    }
}

#[test]
fn shards_merge_to_the_same_tables_as_one_file() {
    let text = std::fs::read_to_string(data("league.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let body: Vec<&str> = lines.collect();
    let dir = tempfile::tempdir().unwrap();
    // Two shards that overlap by 20 identical rows, in a different order.
    let a: Vec<&str> = body[..160].to_vec();
    let mut b: Vec<&str> = body[140..].to_vec();
    b.reverse();
    let (pa, pb) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    std::fs::write(&pa, format!("{header}\n{}\n", a.join("\n"))).unwrap();
    std::fs::write(&pb, format!("{header}\n{}\n", b.join("\n"))).unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    assert!(arena(&["rate", s(&data("league.csv")), "--out", s(&one)])
        .status
        .success());
    let out = arena(&["rate", s(&pa), s(&pb), "--out", s(&two)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["ratings.csv", "pairs.csv", "variants.csv"] {
        let x = std::fs::read_to_string(one.join(f)).unwrap();
        let y = std::fs::read_to_string(two.join(f)).unwrap();
        assert_eq!(x, y, "{f} differs");
    }
}

#[test]
fn conflicting_duplicates_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = arena(&[
        "rate",
        s(&data("two.csv")),
        s(&data("conflict.csv")),
        "--out",
        s(dir.path()),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("g3") && err.contains("two.csv:4") && err.contains("conflict.csv:2"),
        "{err}"
    );
}

#[test]
fn malformed_rows_name_their_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for (file, line) in [("malformed_score.csv", 3), ("malformed_columns.csv", 4)] {
        let out = arena(&[
            "rate",
            s(&data("two.csv")),
            s(&data(file)),
            "--out",
            s(dir.path()),
        ]);
        assert!(!out.status.success(), "{file} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{file}:{line}")), "{file}: {err}");
        assert!(
            !dir.path().join("ratings.csv").exists(),
            "no tables on error"
        );
    }
    let out = arena(&["rate", s(&data("missing.csv"))]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.csv"));
}

#[test]
fn perfect_scores_are_finite_and_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let out = arena(&["rate", s(&data("perfect.csv")), "--out", s(dir.path())]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("had been a draw"));
    let rows = read_table(&dir.path().join("ratings.csv"));
    let champ = rating(&rows, "champ", "all");
    let chump = rating(&rows, "chump", "all");
    assert_eq!(champ["flag"], "all_wins");
    assert_eq!(chump["flag"], "all_losses");
    for r in [champ, chump] {
        for c in ["elo", "elo_low", "elo_high"] {
            assert!(num(r, c).is_finite());
        }
    }
    assert!(num(champ, "elo") > num(chump, "elo"));
}

#[test]
fn formats_anchor_and_variant_filter() {
    let dir = tempfile::tempdir().unwrap();
    let d = s(dir.path());
    let out = arena(&[
        "rate",
        s(&data("two.csv")),
        "--out",
        d,
        "--format",
        "json",
        "--anchor",
        "B=1000",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let ratings = v["report"]["overall"]["ratings"].as_array().unwrap();
    let b = ratings.iter().find(|r| r["bot"] == "B").unwrap();
    assert!((b["elo"].as_f64().unwrap() - 1000.0).abs() < 1e-9);
    assert!(v["los"].is_array());

    let out = arena(&["rate", s(&data("two.csv")), "--out", d, "--format", "csv"]);
    assert!(String::from_utf8_lossy(&out.stdout)
        .starts_with("bot,variant,elo,elo_low,elo_high,games,score,draws"));

    let out = arena(&[
        "rate",
        s(&data("two.csv")),
        "--out",
        d,
        "--anchor",
        "nobody=5",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nobody"));

    let out = arena(&[
        "rate",
        s(&data("tricala3.csv")),
        "--out",
        d,
        "--variant",
        "tricala-3p",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = read_table(&dir.path().join("ratings.csv"));
    assert_eq!(
        rating(&rows, "X", "all")["games"],
        "6",
        "2-player rows filtered out"
    );
    assert!(rows.iter().all(|r| r["variant"] != "tricala"));
    let out = arena(&[
        "rate",
        s(&data("two.csv")),
        "--out",
        d,
        "--variant",
        "diffusion",
    ]);
    assert!(!out.status.success());
}

#[test]
fn pgn_export_has_one_game_per_two_player_row() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let out = arena(&[
        "pgn",
        s(&data("two.csv")),
        s(&data("tricala3.csv")),
        "-o",
        s(&pgn),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("6 3-player"));
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Event ").count(), 6);
    assert!(text.contains("[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]"));
    assert!(text.contains("[White \"Z\"]\n[Black \"X\"]\n[Result \"1/2-1/2\"]"));
    // g2, g3, g4 (seat 1 won) and t7.
    assert_eq!(text.matches("\n0-1\n").count(), 4);
}
