//! A Swiss league end to end (docs/league.md, "Swiss"): the real `arena`
//! binary, real bot processes (the Rust random bot, reproducible through
//! the seed of `game_start`), real files. A run killed with SIGKILL in the
//! middle of a round and resumed pairs every round as a run left alone;
//! what a Swiss cannot do (shards) and bad `format` values are errors that
//! name the file, the line and the key.

use crate::common;

use common::league::{killed_after_rows, run, run_ok, status};
use mancala_arena::results::{csvio, GameRow};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Seven random bots, four Swiss rounds over two 2-player variants and
/// 3-player Tricala: 24 games a round (3 pairs x 2 games x 2 variants, 2
/// threes x 6 seat orders), a bye each round in both.
fn write_swiss(dir: &Path, extra: &str) -> PathBuf {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let bots: Vec<String> = "abcdefg"
        .chars()
        .map(|c| format!("{{ name = \"{c}\", command = [\"{bot}\"] }}"))
        .collect();
    let text = format!(
        "name = \"s\"\nformat = \"swiss\"\nseed = 5\nbots = [{}]\nvariants = [\"filo\", \"kisolo\", \"tricala3\"]\nrounds = 4\nopenings = 2\nmax_plies = 300\nconcurrency = 2\noutput = \"out\"\n{extra}\n",
        bots.join(", ")
    );
    let path = dir.join("s.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn rows(csv: &Path) -> Vec<GameRow> {
    csvio::read_rows(csv).unwrap()
}

/// Each game by id: its variant, seats, scores, seed and opening.
fn by_id(rows: &[GameRow]) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for r in rows {
        let key = format!(
            "{} {:?} {:?} {} {}",
            r.variant,
            r.seats(),
            r.scores(),
            r.seed,
            r.opening
        );
        assert!(
            m.insert(r.game_id.clone(), key).is_none(),
            "{} twice",
            r.game_id
        );
    }
    m
}

/// The 2-player tables of each round, from the rows: round -> pairs.
fn pairs_by_round(rows: &[GameRow]) -> BTreeMap<String, BTreeSet<(String, String)>> {
    let mut m: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.players == 2) {
        let round = r.game_id[..4].to_string();
        let mut p = [r.seat0.clone(), r.seat1.clone()];
        p.sort();
        let [a, b] = p;
        m.entry(round).or_default().insert((a, b));
    }
    m
}

#[test]
fn a_swiss_killed_mid_round_and_resumed_pairs_as_one_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_swiss(dir.path(), "");
    let whole = dir.path().join("whole");
    let out = run_ok(&file, &["--output", whole.to_str().unwrap()]);
    let expected = rows(&whole.join("games.csv"));
    assert_eq!(expected.len(), 4 * 24);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Swiss: 4 of 4 rounds finished"), "{stdout}");
    let table = std::fs::read_to_string(whole.join("swiss.txt")).unwrap();
    assert!(table.contains("round 4:"), "{table}");
    // `arena status`: over, led by the table's first.
    let first = table
        .lines()
        .nth(2)
        .and_then(|l| l.split_whitespace().nth(1));
    let (text, json) = status(&whole);
    assert!(
        text.contains("swiss: 4 of 4 rounds finished; leading with "),
        "{text}"
    );
    let leaders = json["format_state"]["leaders"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(leaders.first().and_then(|l| l.as_str()), first, "{json}");

    // Seven bots, four rounds: no pair meets twice, no bot sits out twice.
    let rounds = pairs_by_round(&expected);
    assert_eq!(rounds.len(), 4);
    let mut met = BTreeSet::new();
    for (round, pairs) in &rounds {
        assert_eq!(pairs.len(), 3, "{round}");
        for p in pairs {
            assert!(met.insert(p.clone()), "{p:?} met again in {round}");
        }
    }
    let byes: Vec<&str> = table
        .lines()
        .filter_map(|l| l.split(", bye ").nth(1))
        .filter_map(|rest| rest.split(';').next())
        .collect();
    assert_eq!(byes.len(), 4, "{table}");
    assert_eq!(byes.iter().collect::<BTreeSet<_>>().len(), 4, "{table}");

    // The same league killed in the middle of round 2, then resumed.
    let cut = dir.path().join("cut");
    let csv = cut.join("games.csv");
    let done = killed_after_rows(&file, &cut, 30);
    assert!(
        done < 48,
        "killed after round 2 ended ({done} rows): nothing tested"
    );
    // Mid round 2: where it stands, and round 1's leaders (a round gives
    // at most 1 point).
    let (text, json) = status(&cut);
    let state = &json["format_state"];
    assert_eq!(state["format"], "swiss", "{json}");
    assert_eq!(
        (state["round"].as_u64(), state["finished"].as_u64()),
        (Some(2), Some(1))
    );
    let points = state["leaders_points"].as_f64().unwrap_or(0.0);
    assert!(points > 0.0 && points <= 1.0, "{json}");
    let leaders: Vec<&str> = state["leaders"]
        .as_array()
        .map_or(vec![], |l| l.iter().filter_map(|b| b.as_str()).collect());
    assert!(
        text.contains(&format!(
            "swiss: round 2 of 4 (1 finished); leading with {points:.2} points: {}\n",
            leaders.join(", ")
        )),
        "{text}"
    );
    assert!(json["shards"][0]["done"].is_u64(), "{json}");
    run_ok(&file, &["--output", cut.to_str().unwrap()]);
    let got = rows(&csv);
    assert_eq!(by_id(&got), by_id(&expected));
    assert_eq!(pairs_by_round(&got), rounds);
    assert_eq!(
        std::fs::read_to_string(cut.join("swiss.txt")).unwrap(),
        table
    );
}

#[test]
fn a_swiss_cannot_be_sharded_and_bad_format_values_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_swiss(dir.path(), "");
    let out = run(&file, &["--shard", "1/2"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a Swiss cannot be sharded"), "{err}");

    let bad = |extra: &str, want: &str| {
        let file = write_swiss(dir.path(), extra);
        let out = run(&file, &[]);
        assert!(!out.status.success(), "{extra}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{extra}: {err}");
        assert!(err.contains("s.toml:"), "{extra}: {err}");
    };
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("format = \"swiss\"", "format = \"swis\""),
    )
    .unwrap();
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s.toml:2: `format`: must be \"round-robin\" (the default), \"swiss\" or \"knockout\", got \"swis\"; did you mean \"swiss\"?"),
        "{err}"
    );
    bad("games_per_pairing = 3", "`games_per_pairing`: must be even");
    bad("gauntlet = \"a\"", "`format`: a Swiss pairs every bot");
    let file = write_swiss(dir.path(), "");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("rounds = 4", "rounds = 0")).unwrap();
    let err = String::from_utf8_lossy(&run(&file, &[]).stderr).to_string();
    assert!(
        err.contains("`rounds`: must be between 1 and 1000, got 0"),
        "{err}"
    );
}

/// The Swiss of `write_swiss` in `dir`, its file set to 2 of its 4 rounds
/// and run: its file, the file's text as written (4 rounds) and its
/// games.csv.
fn two_rounds_played(dir: &Path) -> (PathBuf, String, PathBuf) {
    let file = write_swiss(dir, "");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("rounds = 4", "rounds = 2")).unwrap();
    run_ok(&file, &[]);
    (file, text, dir.join("out/games.csv"))
}

/// A Swiss's `rounds` raised in its file extends the league on resume: the
/// rounds played stay byte for byte, the new one is paired after them;
/// fewer rounds are refused naming the key and both values.
#[test]
fn a_swiss_with_more_rounds_resumes_after_its_rounds_and_fewer_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (file, text, csv) = two_rounds_played(dir.path());
    let before = std::fs::read(&csv).unwrap();
    assert_eq!(rows(&csv).len(), 2 * 24);

    std::fs::write(&file, text.replace("rounds = 4", "rounds = 3")).unwrap();
    let out = run_ok(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`rounds` raised from 2 to 3"), "{err}");
    let after = std::fs::read(&csv).unwrap();
    assert!(after.starts_with(&before), "rounds 1-2 rewritten");
    let got = rows(&csv);
    assert_eq!(got.len(), 3 * 24);
    assert_eq!(
        got.iter()
            .filter(|r| r.game_id.starts_with("s003-"))
            .count(),
        24
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Swiss: 3 of 3 rounds finished"), "{stdout}");

    std::fs::write(&file, text.replace("rounds = 4", "rounds = 2")).unwrap();
    let out = run(&file, &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`rounds` was 3, now 2"), "{err}");
    assert_eq!(std::fs::read(&csv).unwrap(), after);
}

/// Round 1's results edited (every score swapped): round 2's rows stand
/// on a pairing the results no longer give, so the league is not
/// complete though every row is there (`arena status` said `complete`
/// with 24 of 48 games done while `arena run` refused the rows).
#[test]
fn a_swiss_whose_rows_are_not_its_pairings_is_not_complete() {
    let dir = tempfile::tempdir().unwrap();
    run_ok(&write_swiss(dir.path(), ""), &[]);
    let csv = dir.path().join("out/games.csv");
    let all = std::fs::read_to_string(&csv).unwrap();
    let swapped: Vec<String> = all
        .lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            if l.starts_with("s001-") {
                f.swap(7, 8);
            }
            f.join(",")
        })
        .collect();
    std::fs::write(&csv, swapped.join("\n") + "\n").unwrap();
    let (text, json) = status(&dir.path().join("out"));
    assert!(!json["format_state"]["unpaired"].is_null(), "{json}");
    assert_ne!(json["shards"][0]["state"], "complete", "{json}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("resume it (") && l.ends_with(" --repair")),
        "{text}"
    );
}

/// A row of round 1 deleted: the rows of round 2, paired from round 1's
/// results, are named as a round not paired yet (not as games the
/// schedule does not hold), with what to do; `--repair` plays the missing
/// game and round 2 again.
#[test]
fn a_row_missing_from_an_early_round_names_the_later_rounds_rows_as_unpaired() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _, csv) = two_rounds_played(dir.path());
    let all = std::fs::read_to_string(&csv).unwrap();
    let first = all.lines().position(|l| l.starts_with("s001-")).unwrap();
    let kept: Vec<&str> = all
        .lines()
        .enumerate()
        .filter(|&(i, _)| i != first)
        .map(|(_, l)| l)
        .collect();
    std::fs::write(&csv, kept.join("\n") + "\n").unwrap();
    // `arena status` says so, and resumes with --repair.
    let (text, json) = status(&dir.path().join("out"));
    assert_eq!(
        json["format_state"]["unpaired"],
        serde_json::json!({"rows": 24, "lacking": 1}),
        "{json}"
    );
    assert_eq!(json["shards"][0]["done"], 23, "{json}");
    assert!(
        text.contains("23 of 48 games done (47.9%), and 24 rows of rounds not paired yet")
            && text.contains(" 23/48 ")
            && text.contains(
                "round 1 lacks a game's row, and 24 rows of the rounds after it stand on it"
            )
            && text
                .lines()
                .any(|l| l.starts_with("resume it (") && l.ends_with(" --repair")),
        "{text}"
    );
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("a game of round 2, which is not paired yet")
            && err.contains("round 1 lacks a game's row")
            && !err.contains("the schedule has no game with this id"),
        "{err}"
    );
    run_ok(&file, &["--repair"]);
    assert_eq!(rows(&csv).len(), 2 * 24);
}
