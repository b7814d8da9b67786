//! `arena sprt` driven as a real process on games.csv files written here
//! with known pentanomial counts. The expected LLRs come from
//! tests/data/sprt/llr_reference.py (an independent solution of the
//! published formula), not from the crate.

use std::fmt::Write;
use std::path::Path;
use std::process::{Command, Output};

fn arena(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(args)
        .output()
        .expect("the arena binary runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

const HEADER: &str = "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening\n";

fn row(csv: &mut String, variant: &str, group: &str, s0: &str, s1: &str, score0: f64) {
    let id = csv.lines().count();
    let _ = writeln!(
        csv,
        "g{id},{variant},2,{group},{s0},{s1},,{score0},{},,store,,40,5,7,",
        1.0 - score0
    );
}

/// Per variant, from `new`'s side: LL 20, LD 45, WL 25, DD 50, WD 25, WW 5,
/// so pentanomial [20, 45, 75, 25, 5]; over filo and kisolo [40, 90, 150,
/// 50, 10], 340 pairs. Plus a lone game of an incomplete group (new wins)
/// and a 3-player game with a third bot.
fn league_csv() -> String {
    let mut csv = HEADER.to_string();
    let kinds: [((f64, f64), usize); 6] = [
        ((0.0, 0.0), 20),
        ((0.0, 0.5), 45),
        ((1.0, 0.0), 25),
        ((0.5, 0.5), 50),
        ((1.0, 0.5), 25),
        ((1.0, 1.0), 5),
    ];
    for v in ["filo", "kisolo"] {
        let mut g = 0;
        for ((first, second), n) in kinds {
            for _ in 0..n {
                let group = format!("{v}-{g}");
                g += 1;
                // new in seat 0, then in seat 1 (score0 is old's there).
                row(&mut csv, v, &group, "new", "old", first);
                row(&mut csv, v, &group, "old", "new", 1.0 - second);
            }
        }
    }
    row(&mut csv, "filo", "filo-lone", "new", "old", 1.0);
    csv.push_str("t3,tricala,3,tri-0,new,old,carol,0.5,0.5,0.5,tie,,30,5,7,\n");
    csv
}

fn write(dir: &Path, csv: &str) -> std::path::PathBuf {
    let p = dir.join("games.csv");
    std::fs::write(&p, csv).unwrap();
    p
}

/// The words of the output line that starts with `start`.
fn line_words(out: &str, start: &str) -> Vec<String> {
    out.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in\n{out}"))
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "exit {:?}\n{text}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn two_bots_counts_and_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), &league_csv());

    // Logistic: LLR -3.0042 (reference) <= -2.94: H0 accepted.
    let out = ok(&arena(&[
        "sprt",
        s(&file),
        "--elo0",
        "0",
        "--elo1",
        "5",
        "--model",
        "logistic",
    ]));
    assert!(out.starts_with("SPRT new vs old: H0 new - old = 0, H1 new - old = 5 (logistic Elo), alpha 0.05, beta 0.05\n"), "{out}");
    assert!(out.contains("LLR -3.00  bounds (-2.94, 2.94)\n"), "{out}");
    // 681 games, per variant W 25 (WL) + 25 (WD) + 2*5 (WW), D 45 + 2*50
    // + 25, L 2*20 + 45 + 25; and the lone win. Score 291/681.
    assert!(
        out.contains(
            "games 681  new: W 121 D 340 L 220 (42.7%); 340 seat-swap pairs counted (680 games)"
        ),
        "{out}"
    );
    assert_eq!(
        line_words(&out, "pairs from new's side"),
        ["pairs", "from", "new's", "side", "LL", "LD", "WL+DD", "WD", "WW"]
    );
    assert_eq!(
        line_words(&out, "  all"),
        ["all", "40", "90", "150", "50", "10"]
    );
    assert_eq!(
        line_words(&out, "  filo"),
        ["filo", "20", "45", "75", "25", "5"]
    );
    assert_eq!(
        line_words(&out, "  kisolo"),
        ["kisolo", "20", "45", "75", "25", "5"]
    );
    assert!(out.contains("not counted: 1 games outside whole seat-swap pairs (in W/D/L, not in the LLR); 1 3-player games\n"), "{out}");
    // Mean pair score 145/340: -400 log10(340/145 - 1) = -51.5 Elo.
    assert!(out.contains("\nElo -51.5 +/- "), "{out}");
    // The LLR first passed its lower bound at the 480th game: said, with
    // the games after it (as `arena run` says where a league stopped).
    assert!(
        out.ends_with("\nH0 accepted after 480 games (LLR -2.95), where the LLR first left its bounds; the 201 games after them are counted above (LLR -3.00 with them)\n"),
        "{out}"
    );

    // Normalized (the default): LLR -2.1064: no decision yet. A folder is
    // read through its games.csv.
    let out = ok(&arena(&[
        "sprt",
        s(dir.path()),
        "--elo0",
        "0",
        "--elo1",
        "5",
    ]));
    assert!(out.contains("(normalized Elo)"), "{out}");
    assert!(out.contains("LLR -2.11  bounds (-2.94, 2.94)\n"), "{out}");
    assert!(out.ends_with("continue (no decision yet)\n"), "{out}");

    // From old's side the counts turn around: [10, 50, 150, 90, 40],
    // logistic LLR 2.7697 >= ln(0.9/0.1) = 2.197: H1 accepted.
    let out = ok(&arena(&[
        "sprt",
        s(&file),
        "--elo0",
        "0",
        "--elo1",
        "5",
        "--model",
        "logistic",
        "--alpha",
        "0.1",
        "--beta",
        "0.1",
        "--bots",
        "old,new",
    ]));
    assert!(out.contains("LLR 2.77  bounds (-2.20, 2.20)\n"), "{out}");
    assert_eq!(
        line_words(&out, "  all"),
        ["all", "10", "50", "150", "90", "40"]
    );
    assert!(out.contains("games 681  old: W 220 D 340 L 121"), "{out}");
    assert!(
        out.ends_with("\nH1 accepted after 308 games (LLR 2.20), where the LLR first left its bounds; the 373 games after them are counted above (LLR 2.77 with them)\n"),
        "{out}"
    );

    // Negative bounds are numbers, not options.
    let out = ok(&arena(&["sprt", s(&file), "--elo0", "-5", "--elo1", "0"]));
    assert!(out.contains("H0 new - old = -5, H1 new - old = 0"), "{out}");
}

#[test]
fn three_bots_need_bots_and_bad_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = league_csv();
    row(&mut csv, "filo", "c-1", "carol", "new", 1.0);
    row(&mut csv, "filo", "c-1", "new", "carol", 0.0);
    let file = write(dir.path(), &csv);

    let out = arena(&["sprt", s(&file), "--elo0", "0", "--elo1", "5"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("3 bots have 2-player games here (carol, new, old): name the two to test with --bots A,B"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    // Named, the other pairing is left out and said so.
    let out = ok(&arena(&[
        "sprt",
        s(&file),
        "--elo0",
        "0",
        "--elo1",
        "5",
        "--bots",
        "new,old",
    ]));
    assert_eq!(
        line_words(&out, "  all"),
        ["all", "40", "90", "150", "50", "10"]
    );
    assert!(out.contains("; 2 games of other pairings\n"), "{out}");

    let refused = |args: &[&str], want: &str| {
        let mut all = vec!["sprt", s(&file)];
        all.extend_from_slice(args);
        let out = arena(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    };
    refused(
        &["--elo0", "0", "--elo1", "5", "--bots", "new,ghost"],
        "bot `ghost` has no 2-player games here; the bots are: carol, new, old",
    );
    // Two bots of the file that never played each other: no test, not
    // "no decision yet".
    refused(
        &["--elo0", "0", "--elo1", "5", "--bots", "carol,old"],
        "`carol` and `old` never met in a 2-player game",
    );
    refused(
        &["--elo0", "0", "--elo1", "5", "--bots", "new"],
        "--bots wants two bot names as A,B",
    );
    // Told by the flags that gave them.
    refused(
        &["--elo0", "5", "--elo1", "0"],
        "--elo0 5 must be less than --elo1 0",
    );
    refused(
        &["--elo0", "0", "--elo1", "5", "--beta", "0.5"],
        "--beta 0.5: must be between 0 and 0.5",
    );
    refused(
        &["--elo0", "0", "--elo1", "500"],
        "--elo1 500: must be within",
    );
    let empty = dir.path().join("empty.csv");
    std::fs::write(&empty, HEADER).unwrap();
    let out = arena(&["sprt", s(&empty), "--elo0", "0", "--elo1", "5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no games in"));
}

/// `--bots A,B` where a bot's name holds a comma: the names in the games
/// say where to cut.
#[test]
fn bots_whose_names_hold_a_comma_can_be_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = HEADER.to_string();
    for g in 0..10 {
        let group = format!("p{g}");
        row(&mut csv, "filo", &group, "\"new,fast\"", "old", 1.0);
        row(&mut csv, "filo", &group, "old", "\"new,fast\"", 0.5);
        row(&mut csv, "filo", &group, "third", "old", 0.5);
    }
    let file = write(dir.path(), &csv);
    let sprt = |bots: &str| {
        arena(&[
            "sprt",
            s(&file),
            "--elo0",
            "0",
            "--elo1",
            "5",
            "--bots",
            bots,
        ])
    };
    let out = ok(&sprt("new,fast,old"));
    assert!(out.starts_with("SPRT new,fast vs old:"), "{out}");
    let out = ok(&sprt("old,new,fast"));
    assert!(out.starts_with("SPRT old vs new,fast:"), "{out}");
    // A cut that names no pair is told as the first cut's unknown bot.
    let bad = sprt("new,slow,old");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("`new`"), "{err}");
}

/// `league_csv`'s games as the two shards of league `demo` in `dir`
/// (shard-1-of-2 and shard-2-of-2, each with its league.json): the rows
/// alternately in one and the other, a group's two games together.
fn sharded(dir: &Path) -> [std::path::PathBuf; 2] {
    let csv = league_csv();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    let mut parts = [HEADER.to_string(), HEADER.to_string()];
    for (i, pair) in rows.chunks(2).enumerate() {
        for r in pair {
            parts[i % 2].push_str(r);
            parts[i % 2].push('\n');
        }
    }
    [0, 1].map(|i| {
        let d = dir.join(format!("shard-{}-of-2", i + 1));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("games.csv"), &parts[i]).unwrap();
        let meta = format!(
            r#"{{"name": "demo", "fingerprint": "f{i}", "games": {}, "shard": "{}/2", "bots": ["new", "old"]}}"#,
            parts[i].lines().count() - 1,
            i + 1
        );
        std::fs::write(d.join("league.json"), meta).unwrap();
        d
    })
}

#[test]
fn sprt_and_pgn_of_a_sharded_league_want_every_shard() {
    let dir = tempfile::tempdir().unwrap();
    let whole = write(dir.path(), &league_csv());
    let league = dir.path().join("demo");
    let [one, two] = sharded(&league);
    let flags = ["--elo0", "0", "--elo1", "5", "--bots", "new,old"];
    let expected = ok(&arena(&[&["sprt", s(&whole)][..], &flags].concat()));
    // One shard alone: refused, as `arena rate` refuses it.
    let shard = one.join("games.csv");
    for args in [
        [&["sprt", s(&shard)][..], &flags].concat(),
        vec!["pgn", s(&shard)],
        vec!["rate", s(&shard)],
    ] {
        let (cmd, o) = (args[0], arena(&args));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success()
                && err.contains("league `demo` has 2 shards and shard 2/2 is not among the files"),
            "{cmd}: {err}"
        );
    }
    // --partial: the shard, with a warning.
    let o = arena(&[&["sprt", s(&one), "--partial"][..], &flags].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && err.contains("warning: testing part of league `demo`"),
        "{err}"
    );
    let o = arena(&["pgn", s(&one), "--partial"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && err.contains("warning: exporting part of league `demo`"),
        "{err}"
    );
    // Every shard (their folders, or the league's): the whole file's test.
    for args in [vec![s(&one), s(&two)], vec![s(&league)]] {
        let o = arena(&[&["sprt"][..], &args, &flags].concat());
        assert_eq!(ok(&o), expected, "{args:?}");
        let o = arena(&[&["pgn"][..], &args].concat());
        let pgn = ok(&o);
        assert_eq!(pgn.matches("[Result ").count(), 681, "{args:?}");
    }
}

/// `league_csv` with a `started_at` column: game k started 2 s after game
/// k - 1 (rows listed as `order` gives them).
fn timed_csv(order: impl Fn(&mut Vec<String>)) -> String {
    let csv = league_csv();
    let mut rows: Vec<String> = csv
        .lines()
        .skip(1)
        .enumerate()
        .map(|(k, l)| {
            let t = std::time::UNIX_EPOCH
                + std::time::Duration::from_secs(1_796_000_000 + 2 * k as u64);
            format!("{l},{}", humantime::format_rfc3339_millis(t))
        })
        .collect();
    order(&mut rows);
    format!(
        "{}started_at\n{}\n",
        HEADER.trim_end().to_string() + ",",
        rows.join("\n")
    )
}

#[test]
fn rows_out_of_the_order_of_play_are_told() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--elo0", "0", "--elo1", "5", "--bots", "new,old"];
    let said = "note: the test reads the rows in file order";
    // As a league writes them: in order, or several at a time (a game
    // finished before the one started just before it).
    let in_order = timed_csv(|_| {});
    let several = timed_csv(|rows| {
        for pair in rows.chunks_mut(2) {
            pair.reverse();
        }
    });
    for csv in [in_order, several] {
        let file = write(dir.path(), &csv);
        let o = arena(&[&["sprt", s(&file)][..], &flags].concat());
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains(said), "{err}");
    }
    // Sorted backwards: the note, naming the first row out of order.
    let file = write(dir.path(), &timed_csv(|rows| rows.reverse()));
    let o = arena(&[&["sprt", s(&file)][..], &flags].concat());
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(said) && err.contains("not in the order they were played"),
        "{err}"
    );
}
