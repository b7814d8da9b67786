//! `arena rate` and `arena pgn` driven as real processes on the hand-made
//! CSVs of tests/data/ratings (see gen_reference.py there for league.csv and
//! its independently computed expected ratings, and reference.py for the
//! numpy/scipy reference of reference_expected.csv).

use crate::common;
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
        // The reference's standard error is the quasi-likelihood one
        // (φ-scaled Fisher); the interval takes the larger of it and the
        // bot's robust one (docs/ratings.md, "Extreme tables").
        assert!(
            (num(g, "elo_se_dispersion") - num(w, "elo_se")).abs() < 0.01,
            "{} se",
            w["bot"]
        );
        assert!(num(g, "elo_se") >= num(g, "elo_se_dispersion"));
    }
}

/// Runs `arena rate` with `args` and returns ratings.csv.
fn rate_table(args: &[&str]) -> Vec<HashMap<String, String>> {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["rate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", s(dir.path())]);
    let out = arena(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    read_table(&dir.path().join("ratings.csv"))
}

/// reference_expected.csv: case -> bot -> (elo, elo_se).
fn reference(case: &str) -> Vec<(String, f64, Option<f64>)> {
    read_table(&data("reference_expected.csv"))
        .into_iter()
        .filter(|r| r["case"] == case)
        .map(|r| {
            let se = r["elo_se"].parse().ok();
            (r["bot"].clone(), num(&r, "elo"), se)
        })
        .collect()
}

#[test]
fn matches_the_scipy_reference_plain_3_player_and_perfect_scores() {
    // Plain maximum likelihood (Ordo's model, -a 0) and its curvature
    // intervals; 3-player games as weighted pairs; perfect scores by
    // the half-point rule of Ordo's manual (the others rated without them, each placed as if one of
    // its games was a draw, the average over the others).
    for (case, file) in [
        ("league", "league.csv"),
        ("tricala3", "tricala3_league.csv"),
        ("perfect", "league_perfect.csv"),
    ] {
        let got = rate_table(&[s(&data(file))]);
        let want = reference(case);
        assert!(want.len() >= 5, "{case}");
        for (bot, elo, se) in want {
            let g = rating(&got, &bot, "all");
            assert!((num(g, "elo") - elo).abs() < 0.01, "{case} {bot} elo");
            if let Some(se) = se {
                // The quasi-likelihood standard error, which the reference
                // computes; `elo_se` is the larger of it and the robust one.
                let quasi = num(g, "elo_se_dispersion");
                assert!((quasi - se).abs() < 0.01, "{case} {bot} se");
                assert!(num(g, "elo_se") >= quasi, "{case} {bot}");
            }
        }
    }
    let got = rate_table(&[s(&data("league_perfect.csv"))]);
    assert_eq!(rating(&got, "zulu", "all")["flag"], "all_wins");
    assert_eq!(rating(&got, "yankee", "all")["flag"], "all_losses");
    assert_eq!(rating(&got, "alpha", "all")["flag"], "");
}

#[test]
fn perfect_scores_by_the_half_point_rule_closed_form() {
    // perfect_ordo.csv: alpha scored 6/8 against bravo (5 wins, 2 draws),
    // zulu won its 4 games against bravo, yankee lost its 4 against alpha.
    // By hand: alpha - bravo = 400 log10(6/2), centred on the two; zulu
    // expects 3.5 of its 4 points against bravo: bravo + 400 log10(7);
    // yankee 0.5 of 4 against alpha: alpha - 400 log10(7).
    // (Ordo 1.2.x places zulu at 321.9, or 300.9 with -D: docs/ratings.md.)
    let l = |x: f64| 400.0 * x.log10();
    let alpha = l(3.0) / 2.0;
    let got = rate_table(&[s(&data("perfect_ordo.csv"))]);
    for (bot, want, flag) in [
        ("alpha", alpha, ""),
        ("bravo", -alpha, ""),
        ("zulu", -alpha + l(7.0), "all_wins"),
        ("yankee", alpha - l(7.0), "all_losses"),
    ] {
        let g = rating(&got, bot, "all");
        assert!(
            (num(g, "elo") - want).abs() < 0.01,
            "{bot}: {} vs {want}",
            g["elo"]
        );
        assert_eq!(g["flag"], flag, "{bot}");
    }
}

/// A perfect winner is placed against the bot it beat, so its rating's
/// uncertainty is that bot's and the games between them together, as
/// their contrasts are: perfect_elsewhere.csv has X and Y at 1-1 (2
/// games) and Z winning its 30 games against Y, never meeting X. By hand
/// (the half-point rule: Z expects 29.5 of 30 against Y), the standard
/// error of Z - Y is 1 / (K sqrt(30 E (1 - E))), E = 29.5/30, and of
/// X - Y 1 / (K sqrt(2/4)). It gave Z - Y and Z - X the same error, as
/// if Z's place did not move with Y's rating. (`elo_se_dispersion`, the
/// model's error: `elo_se` takes the robust one where larger.)
#[test]
fn a_perfect_winners_error_is_measured_from_the_bot_it_beat() {
    let k = 10f64.ln() / 400.0;
    let e: f64 = 29.5 / 30.0;
    let zy = 1.0 / (k * (30.0 * e * (1.0 - e)).sqrt());
    let xy = 1.0 / (k * 0.5f64.sqrt());
    let file = data("perfect_elsewhere.csv");
    for (anchor, bot, want) in [
        ("Y=0", "Z", zy),
        ("Y=0", "X", xy),
        ("Z=0", "Y", zy),
        ("Z=0", "X", (zy * zy + xy * xy).sqrt()),
        ("X=0", "Z", (zy * zy + xy * xy).sqrt()),
    ] {
        let got = rate_table(&[s(&file), "--anchor", anchor]);
        let g = rating(&got, bot, "all");
        assert!(
            (num(g, "elo_se_dispersion") - want).abs() < 0.05,
            "--anchor {anchor}: {bot} {} vs {want}",
            g["elo_se_dispersion"]
        );
    }
}

/// Groups of bots that never met are listed one after the other, the
/// reference group (the anchor's) first: a rank never puts a bot above
/// one it cannot be compared with (two_groups.csv: A and B met, X, Y and
/// Z met; X, centred on the anchor's value, ranked above the anchor).
#[test]
fn groups_that_never_met_are_ranked_each_in_turn() {
    let got = rate_table(&[s(&data("two_groups.csv")), "--anchor", "A=100"]);
    let all: Vec<(&str, &str)> = got
        .iter()
        .filter(|r| r["variant"] == "all")
        .map(|r| (r["bot"].as_str(), r["rank"].as_str()))
        .collect();
    let (first, rest) = all.split_at(2);
    let mut first: Vec<&str> = first.iter().map(|(b, _)| *b).collect();
    first.sort_unstable();
    assert_eq!(first, ["A", "B"], "{all:?}");
    assert!(
        rest.iter().all(|(b, _)| ["X", "Y", "Z"].contains(b)),
        "{all:?}"
    );
}

#[test]
fn seat_advantage_matches_the_reference_within_its_prior() {
    // One variant, one seat parameter (Ordo's -W). Our seat parameter
    // carries one virtual draw at 0, which moves it by ~0.2 Elo here.
    let dir = tempfile::tempdir().unwrap();
    let out = arena(&[
        "rate",
        s(&data("league.csv")),
        "--variant",
        "filo",
        "--seat-advantage",
        "--out",
        s(dir.path()),
    ]);
    assert!(out.status.success());
    let got = read_table(&dir.path().join("ratings.csv"));
    let variants = read_table(&dir.path().join("variants.csv"));
    for (bot, elo, se) in reference("filo_seat") {
        if bot == "(seat)" {
            let v = variants.iter().find(|v| v["variant"] == "filo").unwrap();
            assert!((num(v, "seat_elo") - elo).abs() < 0.3, "seat");
            continue;
        }
        let g = rating(&got, &bot, "filo");
        assert!((num(g, "elo") - elo).abs() < 0.05, "{bot} elo");
        let quasi = num(g, "elo_se_dispersion");
        assert!((quasi - se.unwrap()).abs() < 0.05, "{bot} se");
        assert!(num(g, "elo_se") >= quasi, "{bot}");
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
        rating(&rows, "X", "tricala-3p")["games"],
        "6",
        "2-player rows filtered out"
    );
    // Filtered to one label, every table is that label's: no `all` rows
    // that would pass the variant off as the whole league.
    assert!(rows.iter().all(|r| r["variant"] == "tricala-3p"));
    let pairs = read_table(&dir.path().join("pairs.csv"));
    assert!(!pairs.is_empty() && pairs.iter().all(|r| r["variant"] == "tricala-3p"));
    // The league file's name of the variant means the same label.
    let out = arena(&[
        "rate",
        s(&data("tricala3.csv")),
        "--format",
        "csv",
        "--variant",
        "tricala3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().skip(1).all(|l| l.contains(",tricala-3p,")),
        "{text}"
    );
    assert!(text.lines().count() > 1, "{text}");
    // A game name that covers both player counts names both.
    let out = arena(&[
        "rate",
        s(&data("tricala3.csv")),
        "--out",
        d,
        "--variant",
        "tricala",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Standings: tricala+tricala-3p"));
    let rows = read_table(&dir.path().join("ratings.csv"));
    assert!(rows.iter().all(|r| r["variant"] != "all"));
    assert!(rows.iter().any(|r| r["variant"] == "tricala+tricala-3p"));
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
    // 3-player games alone: the error says they were read, and why none
    // is exported.
    let three = three_player_only(dir.path());
    let e = arena(&["pgn", s(&three)]);
    let e = String::from_utf8_lossy(&e.stderr);
    assert!(
        e.contains(&format!(
            "no 2-player games to export in {} (6 3-player games read",
            three.display()
        )),
        "{e}"
    );
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Event ").count(), 6);
    assert!(text.contains("[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]"));
    assert!(text.contains("[White \"Z\"]\n[Black \"X\"]\n[Result \"1/2-1/2\"]"));
    // g2, g3, g4 (seat 1 won) and t7.
    assert_eq!(text.matches("\n0-1\n").count(), 4);
    // A league's results folder stands for its games.csv, as in `arena
    // rate`; a folder without one is named.
    let league = dir.path().join("league");
    std::fs::create_dir_all(&league).unwrap();
    std::fs::copy(data("two.csv"), league.join("games.csv")).unwrap();
    let out = arena(&["pgn", s(&league)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_folder = String::from_utf8_lossy(&out.stdout);
    assert_eq!(from_folder.matches("[Event ").count(), 4, "{from_folder}");
    let out = arena(&["pgn", s(dir.path())]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is a folder without a games.csv"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The 3-player games of tricala3.csv alone, as `three.csv` in `dir`.
fn three_player_only(dir: &Path) -> PathBuf {
    let three: String = std::fs::read_to_string(data("tricala3.csv"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("game_id,") || l.contains(",3,"))
        .map(|l| format!("{l}\n"))
        .collect();
    write(dir, "three.csv", &three)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const HEADER: &str = "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening";

#[test]
fn bad_input_is_an_error_naming_file_line_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good =
        "g1,filo,2,p1,A,B,,1,0,,store,,30,100,7,\ng2,filo,2,p1,B,A,,0.5,0.5,,tie,,31,100,7,\n";
    let cases = [
        (
            "noheader.csv",
            good.to_string(),
            "noheader.csv:1: no header line",
        ),
        (
            "missing.csv",
            "game_id,variant,players\ng1,filo,2\n".to_string(),
            "missing.csv:1: missing columns `group`",
        ),
        (
            "types.csv",
            format!("{HEADER}\n{good}g3,filo,2,p1,A,B,,1,0,,store,,many,100,7,\n"),
            "types.csv:4: column `plies`: `many` is not a whole number",
        ),
        (
            "sum.csv",
            format!("{HEADER}\n{good}g3,filo,2,p1,A,B,,1,1,,store,,3,100,7,\n"),
            "sum.csv:4: scores must add up to 1",
        ),
        (
            "seat2.csv",
            format!("{HEADER}\ng3,tricala,3,s,X,Y,,1,0.5,0,store,,30,100,7,\n"),
            "seat2.csv:2: players is 3 but seat2 is empty",
        ),
        (
            "comma.csv",
            format!("{HEADER}\ng3,filo,2,p,A, the bot,B,,1,0,,store,,30,100,7,\n"),
            "comma.csv:2: 17 fields, the header has 16 (a comma in a name must be quoted)",
        ),
        ("empty.csv", String::new(), "no games to rate in"),
    ];
    for (name, text, want) in cases {
        let p = write(d, name, &text);
        let out = arena(&["rate", s(&p), "--out", s(d)]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    assert!(!d.join("ratings.csv").exists(), "no tables on error");
}

#[test]
fn accepted_variations_of_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows = "g1,filo,2,p1,\"A, the \"\"bot\"\"\",B,,1,0,,store,,30,100,7,\r\ng2,filo,2,p1,B,\"A, the \"\"bot\"\"\",,0.5,0.5,,tie,,31,100,7,\r\n";
    // BOM, CRLF, quoted names with commas and quotes, an extra column, a
    // torn last line, and a second shard repeating a row.
    let a = write(
        d,
        "a.csv",
        &format!(
            "\u{feff}{HEADER},note\r\n{}g3,filo,2,p2,A,B,,1,",
            rows.replace("\r\n", ",x\r\n")
        ),
    );
    let b = write(
        d,
        "b.csv",
        &format!("{HEADER}\n{}", rows.lines().next().unwrap().trim_end()),
    );
    let out = arena(&["rate", s(&a), s(&b), "--out", s(d), "--format", "csv"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("a.csv:4: skipped a torn last line"), "{err}");
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    let recs: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let a_row = recs
        .iter()
        .find(|x| &x[0] == "A, the \"bot\"" && &x[1] == "all")
        .unwrap();
    assert_eq!(
        &a_row[5], "2",
        "games: the duplicate counts once, the torn game not at all"
    );
}

#[test]
fn unknown_variant_and_anchor_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = arena(&[
        "rate",
        s(&data("tricala3.csv")),
        "--variant",
        "chess",
        "--out",
        s(dir.path()),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no games of variant `chess`") && err.contains("tricala-3p"),
        "{err}"
    );
    let out = arena(&[
        "rate",
        s(&data("two.csv")),
        "--anchor",
        "zed=100",
        "--out",
        s(dir.path()),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`zed`"));
    // An anchor past any rating is refused, not carried into the sums.
    let out = arena(&["rate", s(&data("two.csv")), "--anchor", "a=1e308"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("out of range") && err.contains("a=1e308"),
        "{err}"
    );
    // Said as written, not as its 309 digits.
    assert!(err.contains("--anchor: 1e308 is out of range"), "{err}");
    // An anchor without its bot is said to be that.
    let out = arena(&["rate", s(&data("two.csv")), "--anchor", "=5"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("names no bot"), "{err}");
    // --out of a file is refused as that, before anything is written.
    let file = write(dir.path(), "notes.txt", "mine\n");
    let out = arena(&["rate", s(&data("two.csv")), "--out", s(&file)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("that is a file"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
}

#[test]
fn json_and_csv_formats_are_well_formed() {
    let dir = tempfile::tempdir().unwrap();
    let d = s(dir.path());
    let out = arena(&[
        "rate",
        s(&data("league_perfect.csv")),
        "--out",
        d,
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    for r in v["report"]["overall"]["ratings"].as_array().unwrap() {
        for k in ["elo", "elo_low", "elo_high", "elo_se"] {
            assert!(r[k].as_f64().is_some_and(f64::is_finite), "{k}: {r}");
        }
    }
    let out = arena(&[
        "rate",
        s(&data("league.csv")),
        "--out",
        d,
        "--format",
        "csv",
    ]);
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        &header[..8],
        ["bot", "variant", "elo", "elo_low", "elo_high", "games", "score", "draws"]
    );
    assert!(r
        .records()
        .all(|x| x.is_ok_and(|x| x.len() == header.len())));
    for (f, first) in [
        (
            "pairs.csv",
            "variant,bot_a,bot_b,results,a_wins,draws,b_wins",
        ),
        (
            "variants.csv",
            "variant,players,games,draws,draw_rate,first_seat_score",
        ),
    ] {
        let text = std::fs::read_to_string(dir.path().join(f)).unwrap();
        assert!(text.starts_with(first), "{f}");
    }
}

/// A table is written beside its place and renamed over it once whole: a
/// write that fails part way (here the file size limit, as a full disk
/// would) leaves the tables there before, not half of one.
#[test]
fn a_table_cut_short_leaves_the_last_one_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    assert!(arena(&["rate", s(&data("league.csv")), "--out", s(&out)])
        .status
        .success());
    let before = std::fs::read_to_string(out.join("ratings.csv")).unwrap();
    assert!(before.len() > 2048, "{} bytes", before.len());
    // At most 1 KiB a file (`ulimit -f` counts blocks of 512 bytes): the
    // kernel stops the write of the first table part way.
    let cut = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -f 2 && exec "$@""#)
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_arena"))
        .args(["rate", s(&data("league.csv")), "--out", s(&out)])
        .output()
        .unwrap();
    assert!(!cut.status.success());
    assert_eq!(
        std::fs::read_to_string(out.join("ratings.csv")).unwrap(),
        before
    );
}

/// `rate` writes tables only where asked: `--out`, or `--write` into a
/// league's own folder when it rates that whole league; without them it
/// writes nothing and says so, and a `--variant` subset cannot `--write`,
/// so a league's tables are never replaced by a part of them.
#[test]
fn rate_writes_only_what_it_is_asked_to() {
    let dir = tempfile::tempdir().unwrap();
    let league = dir.path().join("league");
    std::fs::create_dir(&league).unwrap();
    std::fs::copy(data("league.csv"), league.join("games.csv")).unwrap();
    std::fs::write(
        league.join("league.json"),
        r#"{"name": "t", "fingerprint": "x", "games": 300}"#,
    )
    .unwrap();
    let games = league.join("games.csv");
    let out = arena(&["rate", s(&games)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("no files written"), "{err}");
    assert!(!league.join("ratings.csv").exists());
    let out = arena(&["rate", s(&games), "--write"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("wrote ") && err.contains("ratings.csv"),
        "{err}"
    );
    let whole = std::fs::read_to_string(league.join("ratings.csv")).unwrap();

    let out = arena(&["rate", s(&games), "--variant", "filo"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("no files written"), "{err}");
    let out = arena(&["rate", s(&games), "--variant", "filo", "--write"]);
    assert!(!out.status.success());
    assert_eq!(
        std::fs::read_to_string(league.join("ratings.csv")).unwrap(),
        whole
    );

    let loose = dir.path().join("loose.csv");
    std::fs::copy(data("league.csv"), &loose).unwrap();
    let out = arena(&["rate", s(&loose)]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no files written"));
    assert!(!dir.path().join("ratings.csv").exists());
}

/// A `--variant` that no game has is said the same way by `arena rate`
/// and `arena pgn`: the name, the files, the variants there.
#[test]
fn pgn_and_rate_say_alike_that_a_variant_is_not_there() {
    let games = data("league.csv");
    let want = format!(
        "no games of variant `fillo` in {}; the variants there are: filo, kisolo",
        games.display()
    );
    for command in ["rate", "pgn"] {
        let out = arena(&[command, s(&games), "--variant", "fillo"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command}: {err}");
        assert!(err.contains(&want), "{command}: {err}");
    }
    // A variant that is there still exports.
    let out = arena(&["pgn", s(&games), "--variant", "kisolo"]);
    assert!(out.status.success(), "{out:?}");
    // `arena pgn` exports 2-player games: a variant of 3-player games
    // alone (tricala here) is not listed as one it exports.
    let dir = tempfile::tempdir().unwrap();
    let two = data("two.csv");
    let three = three_player_only(dir.path());
    let out = arena(&["pgn", s(&two), s(&three), "--variant", "fillo"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains(&format!(
                "no games of variant `fillo` in {}, {}; the variants of its 2-player games there are: filo; of its 3-player games, which PGN does not hold (`arena rate` rates them): tricala-3p",
                two.display(),
                three.display()
            )),
        "{err}"
    );
}

/// On one terminal (stdout and stderr into one file, in the order they
/// were written) the standings come first and the line that says which
/// files were written comes last, with and without `--out`.
#[test]
fn rate_says_what_it_wrote_on_the_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("tables");
    let games = data("league.csv");
    for (i, extra) in [vec![], vec!["--out", s(&out_dir)]].into_iter().enumerate() {
        let log = dir.path().join(format!("terminal-{i}.txt"));
        let file = std::fs::File::create(&log).unwrap();
        let status = Command::new(env!("CARGO_BIN_EXE_arena"))
            .arg("rate")
            .arg(s(&games))
            .args(&extra)
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .status()
            .expect("the arena binary runs");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(status.success(), "{text}");
        assert!(text.starts_with("Standings: all variants"), "{text}");
        let last = text.lines().last().unwrap_or_default();
        assert!(last.starts_with("300 games rated; "), "{text}");
        let want = if extra.is_empty() {
            "no files written"
        } else {
            "wrote "
        };
        assert!(last.contains(want), "{text}");
    }
}

/// The streaming reader gives, byte for byte, what the version that held
/// every row in memory gave (its outputs are frozen in
/// tests/data/ratings/stream): the report as JSON, the four tables and the
/// PGN, on a league, its rows shuffled, a 3-player league, and a merge
/// with a rerun that shares group ids (groups of three and four games, no
/// pair) and repeats 20 rows (duplicates).
#[test]
fn streaming_gives_the_outputs_of_the_rows_in_memory() {
    let stream = data("stream");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let json = |args: &[&str]| {
        let out = arena(args);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let league = data("league.csv");
    let want = read(&stream.join("league.json"));
    assert!(json(&["rate", s(&league), "--format", "json"]) == want);
    let shuffled = stream.join("league_shuffled.csv");
    assert!(json(&["rate", s(&shuffled), "--format", "json"]) == want);
    let tricala = data("tricala3_league.csv");
    assert!(
        json(&["rate", s(&tricala), "--format", "json"])
            == read(&stream.join("tricala3_league.json"))
    );

    let dir = tempfile::tempdir().unwrap();
    let rerun = stream.join("league_rerun.csv");
    let out = arena(&[
        "rate",
        s(&league),
        s(&rerun),
        "--seat-advantage",
        "--format",
        "json",
        "--out",
        s(dir.path()),
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The groups of three and four games, named in a note.
    assert!(
        stderr.starts_with(
            "note: 51 seat-swap groups (filo-alpha-bravo-0, ...) hold more than two games"
        ) && stderr.contains("\n401 games rated (20 duplicate rows counted once)"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout) == read(&stream.join("merged.json")));
    for table in ["ratings.csv", "pairs.csv", "variants.csv", "crosstable.csv"] {
        let got = read(&dir.path().join(table));
        assert!(got == read(&stream.join("merged").join(table)), "{table}");
    }

    let pgn = dir.path().join("merged.pgn");
    let out = arena(&[
        "pgn",
        s(&league),
        s(&rerun),
        s(&data("tricala3.csv")),
        "-o",
        s(&pgn),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(read(&pgn) == read(&stream.join("merged.pgn")));
    assert!(!dir.path().join("merged.pgn.part").exists());
    let left = common::names_in(dir.path(), |n| n.starts_with(".merged.pgn."));
    assert!(left.is_empty(), "{left:?}");
}

/// An output that would overwrite a league's own files is refused, and
/// the file is left as it was: `pgn -o` onto its games.csv, `run --pgn`,
/// `--log` or `play --record` onto one, its records' dictionary, a Swiss's
/// notes or a file in its own folders.
#[test]
fn an_output_onto_a_leagues_own_files_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("games.csv");
    std::fs::copy(data("league.csv"), &csv).unwrap();
    let before = std::fs::read(&csv).unwrap();
    let out = arena(&["pgn", s(&csv), "-o", s(&csv)]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("-o") && said.contains("results"), "{said}");
    // A games.csv by its content, under another name.
    let copy = dir.path().join("mine.txt");
    std::fs::copy(&csv, &copy).unwrap();
    assert!(!arena(&["pgn", s(&csv), "-o", s(&copy)]).status.success());
    let file = dir.path().join("t.toml");
    let bots = r#"bots = [{ name = "a", command = ["sh"] }, { name = "b", command = ["sh"] }]"#;
    std::fs::write(&file, format!("name = \"t\"\n{bots}\n")).unwrap();
    for flag in ["--pgn", "--log"] {
        let out = arena(&["run", s(&file), flag, s(&csv), "--no-build"]);
        assert!(!out.status.success());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(flag), "{said}");
    }
    // A league.json and a record log under other names (hard links: a
    // file with two names), by what they hold.
    let json = dir.path().join("league.json");
    let meta = r#"{"name": "t", "fingerprint": "abc", "bots": []}"#;
    std::fs::write(&json, meta).unwrap();
    let linked = dir.path().join("hard.log");
    std::fs::hard_link(&json, &linked).unwrap();
    let log = dir.path().join("records.bin");
    std::fs::write(&log, [0x28, 0xb5, 0x2f, 0xfd, 0, 0]).unwrap();
    for (flag, target) in [("--pgn", &linked), ("--log", &linked), ("--pgn", &log)] {
        let out = arena(&["run", s(&file), flag, s(target), "--no-build"]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && said.contains("results"), "{said}");
    }
    // The records' dictionary (by name, and by what it holds), a Swiss's
    // notes, and a file in the league's own folders (a bot's stderr log).
    let dict = dir.path().join("games/records.zdict");
    std::fs::create_dir(dir.path().join("games")).unwrap();
    std::fs::write(&dict, [0x37, 0xa4, 0x30, 0xec, 1, 2]).unwrap();
    let dict_copy = dir.path().join("dict.bin");
    std::fs::copy(&dict, &dict_copy).unwrap();
    let swiss = dir.path().join("swiss.txt");
    std::fs::write(&swiss, "round 1\n").unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    let stderr_log = dir.path().join("logs/a-w0.log");
    std::fs::write(&stderr_log, "a's stderr\n").unwrap();
    for target in [&dict, &dict_copy, &swiss, &stderr_log] {
        let kept = std::fs::read(target).unwrap();
        for flag in ["--pgn", "--log"] {
            let out = arena(&["run", s(&file), flag, s(target), "--no-build"]);
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && said.contains("results"), "{said}");
        }
        let out = arena(&[
            "play",
            "--game",
            "kisolo",
            "--record",
            s(target),
            "random",
            "random",
        ]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && said.contains("results"), "{said}");
        assert_eq!(std::fs::read(target).unwrap(), kept, "{}", target.display());
    }
    assert_eq!(std::fs::read_to_string(&json).unwrap(), meta);
    assert_eq!(std::fs::read(&csv).unwrap(), before);
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

/// A row whose offender scored (a forfeit rated as the offender's win or
/// draw) is refused by every reader with its file and line.
#[test]
fn an_offender_that_scored_is_an_error_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "won.csv",
        &format!(
            "{HEADER}\ng1,filo,2,p1,A,B,,0,1,,store,,30,100,7,\ng2,filo,2,p1,B,A,,1,0,,timeout,0,31,100,7,\n"
        ),
    );
    for args in [
        vec!["rate", s(&p)],
        vec!["pgn", s(&p)],
        vec!["sprt", s(&p), "--elo0", "0", "--elo1", "5"],
    ] {
        let out = arena(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("won.csv:3: offender is seat0, which scored 1"),
            "{args:?}: {err}"
        );
    }
}

/// `arena pgn -o` of a folder is refused before anything is written (it
/// left a FOLDER.part of every game beside it); through a link, the file
/// linked to gets the games and the link stays a link (a rename replaced
/// it, as it would replace /dev/stdout or /dev/null run as root).
#[test]
fn pgn_out_of_a_folder_is_refused_and_a_link_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let folder = d.join("pgns");
    std::fs::create_dir(&folder).unwrap();
    let out = arena(&["pgn", s(&data("two.csv")), "-o", s(&folder)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("that is a folder"), "{err}");
    assert!(!d.join("pgns.part").exists(), "nothing left beside it");

    let real = write(d, "real.pgn", "old\n");
    let link = d.join("link.pgn");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = arena(&["pgn", s(&data("two.csv")), "-o", s(&link)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link is still a link");
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.starts_with("[Event "), "{text}");
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part") || n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // One of the files read, whatever its first line (a byte-order mark,
    // columns in another order): the PGN replaced it.
    let games = std::fs::read_to_string(data("two.csv")).unwrap();
    let mine = write(d, "mine.csv", &format!("\u{feff}{games}"));
    let out = arena(&["pgn", s(&mine), "-o", s(&mine)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("one of the files read"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        format!("\u{feff}{games}")
    );
}

/// `--out` of a league's results folder is refused for games that are not
/// that whole league's (another file, `--variant`): they replaced its own
/// tables, which `--write` refuses for the same games. Its whole
/// games.csv may be written there, as `--write` does.
#[test]
fn rate_out_of_another_leagues_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let league = dir.path().join("league");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/log-league");
    std::fs::create_dir(&league).unwrap();
    for f in ["games.csv", "league.json"] {
        std::fs::copy(from.join(f), league.join(f)).unwrap();
    }
    let tables = write(&league, "ratings.csv", "the league's own\n");
    let csv = league.join("games.csv");
    for args in [
        vec!["rate", s(&data("two.csv")), "--out", s(&league)],
        vec!["rate", s(&csv), "--variant", "filo", "--out", s(&league)],
    ] {
        let out = arena(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("that is a league's results folder"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&tables).unwrap(),
            "the league's own\n"
        );
    }
    let out = arena(&["rate", s(&csv), "--out", s(&league)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&tables)
        .unwrap()
        .starts_with("bot,"));
}

/// Two bots whose names PGN writes alike (`a"b` and `a'b`, quotes being
/// replaced) would be one player to Ordo and BayesElo: the export stops
/// and names both, leaving no file behind.
#[test]
fn pgn_refuses_two_bots_it_would_write_alike() {
    let dir = tempfile::tempdir().unwrap();
    let games = write(
        dir.path(),
        "games.csv",
        "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening\n\
         g1,filo,2,x,\"a\"\"b\",c,,1,0,,store,,10,5,1,\n\
         g2,filo,2,y,c,a'b,,1,0,,store,,10,5,1,\n",
    );
    let pgn = dir.path().join("games.pgn");
    let out = arena(&["pgn", s(&games), "-o", s(&pgn)]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{e}");
    assert!(
        e.contains("bots `a\"b` and `a'b` would both be written as `a'b`"),
        "{e}"
    );
    assert!(!pgn.exists() && !dir.path().join("games.pgn.part").exists());
    let left = common::names_in(dir.path(), |n| n.starts_with(".games.pgn."));
    assert!(left.is_empty(), "{left:?}");
}

/// An anchor in a group of bots that never met the largest group makes its
/// own group the reference: the anchor and its group are unflagged (the
/// anchor at its Elo, interval 0), the other group is `disconnected`,
/// centred on its own average at the anchor's Elo. And groups that never
/// met, each with every bot scoring against every other, need no
/// half-point rule: no note says they do.
#[test]
fn an_anchor_in_a_smaller_group_makes_it_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening\n",
    );
    let mut n = 0;
    let mut game = |a: &str, b: &str, s: &str| {
        n += 1;
        text.push_str(&format!("g{n},filo,2,x{n},{a},{b},,{s},,store,,10,5,1,\n"));
    };
    for (a, b) in [("a1", "a2"), ("a2", "a3"), ("a3", "a1"), ("b1", "b2")] {
        game(a, b, "1,0");
        game(b, a, "1,0");
        game(a, b, "0.5,0.5");
    }
    let games = write(dir.path(), "games.csv", &text);
    let out = arena(&["rate", s(&games), "--anchor", "b1=100", "--format", "csv"]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{e}");
    let csv = write(
        dir.path(),
        "ratings.csv",
        &String::from_utf8_lossy(&out.stdout),
    );
    let rows = read_table(&csv);
    let b1 = rating(&rows, "b1", "all");
    assert_eq!(b1["flag"], "");
    assert!((num(b1, "elo") - 100.0).abs() < 1e-9 && num(b1, "elo_se") == 0.0);
    assert_eq!(rating(&rows, "b2", "all")["flag"], "");
    let mean: f64 = ["a1", "a2", "a3"]
        .iter()
        .map(|b| {
            let r = rating(&rows, b, "all");
            assert_eq!(r["flag"], "disconnected", "{b}");
            num(r, "elo")
        })
        .sum::<f64>()
        / 3.0;
    assert!((mean - 100.0).abs() < 0.01, "{mean}");
    // Without the anchor the largest group is the reference.
    let out = arena(&["rate", s(&games)]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(table.contains("2 groups that never met"), "{table}");
    assert!(!table.contains("half-point rule"), "{table}");
    let b1 = table.lines().find(|l| l.contains(" b1 ")).unwrap();
    let a1 = table.lines().find(|l| l.contains(" a1 ")).unwrap();
    assert!(
        b1.ends_with("disconnected") && !a1.contains("disconnected"),
        "{table}"
    );
}

/// `two.csv`'s games as the games.csv of league `name` in `dir/name`,
/// their ids prefixed with `prefix` (the groups as they are).
fn league_of_two(dir: &Path, name: &str, prefix: &str) -> PathBuf {
    let text = std::fs::read_to_string(data("two.csv")).unwrap();
    let mut lines = text.lines();
    let mut csv = format!("{}\n", lines.next().unwrap());
    for l in lines {
        csv.push_str(&format!("{prefix}{l}\n"));
    }
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("games.csv"), csv).unwrap();
    let meta = format!(r#"{{"name": "{name}", "fingerprint": "fp-{name}", "games": 4}}"#);
    std::fs::write(folder.join("league.json"), meta).unwrap();
    folder.join("games.csv")
}

/// A game id twice in one file: the two rows in conflict are compared
/// (not the file's first row of that id with itself), so swapped scores
/// are named and never taken for timings, and the timings' advice never
/// says to give one of a file and itself.
#[test]
fn a_game_twice_in_one_file_is_judged_on_its_two_rows() {
    let dir = tempfile::tempdir().unwrap();
    let two = std::fs::read_to_string(data("two.csv")).unwrap();
    let write = |name: &str, extra: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("{two}{extra}\n")).unwrap();
        p
    };
    let swapped = write("swapped.csv", "g1,filo,2,p1,A,B,,0,1,,store,,30,100,7,");
    let o = arena(&["rate", s(&swapped)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains("swapped.csv:2 and ")
            && err.contains("swapped.csv:6: they differ in score0 (1.0 against 0.0) and score1 (0.0 against 1.0)")
            && !err.contains("timings"),
        "{err}"
    );
    let timed = write("timed.csv", "g1,filo,2,p1,A,B,,1,0,,store,,30,101,7,");
    let o = arena(&["rate", s(&timed)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains("they differ in duration_ms (100 against 101): its results agree and only the timings differ")
            && err.contains("delete one of the two rows from ")
            && !err.contains("give one of"),
        "{err}"
    );
}

/// A file whose bots are named `variant` and `bot` (a league refuses such
/// names) is rated, and writing its crosstable warns of the columns that
/// share a name.
#[test]
fn a_bot_named_as_a_crosstable_column_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let two = std::fs::read_to_string(data("two.csv"))
        .unwrap()
        .replace(",A,", ",variant,")
        .replace(",B,", ",bot,");
    let f = dir.path().join("g.csv");
    std::fs::write(&f, two).unwrap();
    let out = dir.path().join("o");
    let o = arena(&["rate", s(&f), "--out", s(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    for b in ["variant", "bot"] {
        assert!(
            err.contains(&format!(
                "warning: bot `{b}` has the name of one of crosstable.csv's fixed columns"
            )),
            "{err}"
        );
    }
    let o = arena(&["rate", s(&f)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && !err.contains("crosstable"), "{err}");
}

#[test]
fn pooled_leagues_whose_group_ids_collide_are_told() {
    let dir = tempfile::tempdir().unwrap();
    let a = league_of_two(dir.path(), "a", "");
    let b = league_of_two(dir.path(), "b", "b-");
    let out = dir.path().join("o");
    let o = arena(&["rate", s(&a), s(&b), "--out", s(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // p1 and p2 hold four games each: no pair counted, and a note says why.
    assert!(
        err.contains("note: 2 seat-swap groups (p1, ...) hold more than two games")
            && err.contains("files of different leagues whose group ids collide")
            && err.contains(
                "Rate each league alone, or give one file's group ids a prefix of their own"
            ),
        "{err}"
    );
    // One league alone: its pairs, and no note.
    let o = arena(&["rate", s(&a), "--out", s(&dir.path().join("one"))]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && !err.contains("seat-swap group"),
        "{err}"
    );
    // The same game id with other content in another league's file: the
    // error says they are of different leagues.
    let c = league_of_two(dir.path(), "c", "");
    let text = std::fs::read_to_string(&c)
        .unwrap()
        .replace(",1,0,,store,,30,", ",0,1,,store,,30,");
    std::fs::write(&c, text).unwrap();
    let o = arena(&["rate", s(&a), s(&c)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains("game_id `g1` appears twice with different content")
            && err.contains("the two files are of different leagues (`a` and `c`"),
        "{err}"
    );
    // Two copies of one league that differ: a conflict, and nothing said
    // of leagues.
    let copy = dir.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(c.with_file_name("league.json"), copy.join("league.json")).unwrap();
    std::fs::copy(&a, copy.join("games.csv")).unwrap();
    let o = arena(&["rate", s(&c), s(&copy.join("games.csv"))]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("appears twice") && !err.contains("different leagues"),
        "{err}"
    );
}

#[test]
fn a_bot_without_games_in_a_variant_has_no_score_or_draw_rate() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("games.csv");
    std::fs::write(
        &csv,
        "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening\n\
         g1,filo,2,p1,A,B,,1,0,,store,,30,100,7,\n\
         g2,filo,2,p1,B,A,,0.5,0.5,,tie,,31,100,7,\n\
         g3,kisolo,2,p2,A,C,,1,0,,store,,30,100,8,\n\
         g4,kisolo,2,p2,C,A,,0,1,,store,,30,100,8,\n",
    )
    .unwrap();
    let out = dir.path().join("o");
    let o = arena(&["rate", s(&csv), "--out", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = read_table(&out.join("ratings.csv"));
    let c = rating(&rows, "C", "filo");
    assert_eq!(c["games"], "0");
    assert_eq!((c["score"].as_str(), c["draw_rate"].as_str()), ("", ""));
    // With games: 0 is a score.
    let c = rating(&rows, "C", "kisolo");
    assert_eq!(
        (c["score"].as_str(), c["draw_rate"].as_str()),
        ("0.0000", "0.0000")
    );
}
