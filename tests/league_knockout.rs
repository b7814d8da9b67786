//! A knockout league end to end (docs/league.md, "Knockout"): the real
//! `arena` binary, six real random-bot processes, real files. The bracket
//! read back from games.csv has the seeded shape (byes to seeds 1 and 2,
//! winners on points, a drawn match to the better seed); a run killed
//! with SIGKILL and resumed plays the same bracket as a run left alone;
//! sharding and bad knockout settings are errors that say why.

use crate::common;

use common::league::{killed_after_rows, run, run_ok, status};
use mancala_arena::results::{csvio, GameRow};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Six random bots seeded a to f, two 2-player variants, 4 games a match
/// and variant: 8 games a match, 5 matches (2 + 2 + the final).
fn write_knockout(dir: &Path, extra: &str) -> PathBuf {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let bots: Vec<String> = "abcdef"
        .chars()
        .map(|c| format!("{{ name = \"{c}\", command = [\"{bot}\"] }}"))
        .collect();
    let text = format!(
        "name = \"k\"\nformat = \"knockout\"\nseed = 9\nbots = [{}]\nvariants = [\"filo\", \"kisolo\"]\ngames_per_pairing = 4\nopenings = 2\nmax_plies = 300\nconcurrency = 2\noutput = \"out\"\n{extra}\n",
        bots.join(", ")
    );
    let path = dir.join("k.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const SEEDED: &str = "seeds = [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\"]";

/// Each round's matches with each bot's points: round -> pair -> points.
type Bracket = BTreeMap<String, BTreeMap<(String, String), BTreeMap<String, f64>>>;

fn bracket(rows: &[GameRow]) -> Bracket {
    let mut m: Bracket = BTreeMap::new();
    for r in rows {
        let round = r.game_id[..4].to_string();
        let mut p = [r.seat0.clone(), r.seat1.clone()];
        p.sort();
        let [a, b] = p;
        let points = m.entry(round).or_default().entry((a, b)).or_default();
        for (bot, s) in r.seats().into_iter().zip(r.scores()) {
            *points.entry(bot.to_string()).or_default() += s;
        }
    }
    m
}

/// The winner of a match: more points, else the better seed (earlier
/// letter, as seeded).
fn winner(pair: &(String, String), points: &BTreeMap<String, f64>) -> String {
    let (a, b) = pair;
    if points[b] > points[a] {
        b.clone()
    } else {
        a.clone()
    }
}

fn pair(a: &str, b: &str) -> (String, String) {
    let mut p = [a.to_string(), b.to_string()];
    p.sort();
    let [a, b] = p;
    (a, b)
}

/// `arena report DIR`'s page.
fn reported(dir: &Path) -> String {
    let out = common::arena(dir, &["report", "."]);
    assert!(out.status.success(), "{}", common::text(&out));
    std::fs::read_to_string(dir.join("report/index.html")).unwrap()
}

#[test]
fn a_seeded_knockout_has_its_bracket_and_a_resume_after_sigkill_plays_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_knockout(dir.path(), SEEDED);
    let whole = dir.path().join("whole");
    let out = run_ok(&file, &["--output", whole.to_str().unwrap()]);
    let expected = csvio::read_rows(&whole.join("games.csv")).unwrap();
    assert_eq!(expected.len(), 5 * 8);
    let b = bracket(&expected);
    let rounds: Vec<&BTreeMap<_, _>> = b.values().collect();
    assert_eq!(rounds.len(), 3, "{b:?}");
    // Round 1: seeds 3-6 and 4-5; seeds 1 and 2 have byes.
    let r1: BTreeSet<_> = rounds[0].keys().cloned().collect();
    assert_eq!(r1, BTreeSet::from([pair("c", "f"), pair("d", "e")]));
    let w = |r: &BTreeMap<(String, String), BTreeMap<String, f64>>, a: &str, b: &str| {
        let p = pair(a, b);
        winner(&p, &r[&p])
    };
    let (de, cf) = (w(rounds[0], "d", "e"), w(rounds[0], "c", "f"));
    // Round 2: seed 1 meets the winner of 4-5, seed 2 the winner of 3-6.
    let r2: BTreeSet<_> = rounds[1].keys().cloned().collect();
    assert_eq!(r2, BTreeSet::from([pair("a", &de), pair("b", &cf)]));
    let (top, bottom) = (w(rounds[1], "a", &de), w(rounds[1], "b", &cf));
    let r3: BTreeSet<_> = rounds[2].keys().cloned().collect();
    assert_eq!(r3, BTreeSet::from([pair(&top, &bottom)]));
    let champion = w(rounds[2], &top, &bottom);
    // Each match: 4 games in each variant, each bot twice in each seat.
    for r in &expected {
        assert!(["filo", "kisolo"].contains(&r.variant.as_str()));
    }
    let text = std::fs::read_to_string(whole.join("knockout.txt")).unwrap();
    assert!(text.contains("Knockout: 3 of 3 rounds finished"), "{text}");
    assert!(text.contains(&format!("champion: {champion}\n")), "{text}");
    assert!(text.contains("; byes: a, b"), "{text}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&text), "{stdout}");
    // `arena status`: over, with its champion.
    let (said, json) = status(&whole);
    assert!(
        said.contains(&format!(
            "knockout: 3 of 3 rounds finished, over; champion: {champion}\n"
        )),
        "{said}"
    );
    assert_eq!(
        json["format_state"]["champion"].as_str(),
        Some(champion.as_str())
    );
    // The report shows the bracket as the league wrote it.
    let page = std::fs::read_to_string(whole.join("report/index.html")).unwrap();
    assert!(
        page.contains("<h2>Bracket</h2>"),
        "no bracket in the report"
    );
    assert!(
        page.contains(&format!("champion: {champion}\n")),
        "the report's bracket is not knockout.txt's"
    );
    // ... worked out from games.csv, not copied from knockout.txt (which
    // an edit, or a kill before the run's end, leaves wrong or missing).
    let other = ["a", "b", "c", "d", "e", "f"]
        .into_iter()
        .find(|b| *b != champion)
        .unwrap();
    let lie = text.replace(
        &format!("champion: {champion}"),
        &format!("champion: {other}"),
    );
    std::fs::write(whole.join("knockout.txt"), lie).unwrap();
    let page = reported(&whole);
    assert!(page.contains(&format!("champion: {champion}\n")), "{page}");
    assert!(!page.contains(&format!("champion: {other}\n")), "{page}");

    // The same league killed before its last games, then resumed.
    let cut = dir.path().join("cut");
    let csv = cut.join("games.csv");
    let done = killed_after_rows(&file, &cut, 10);
    assert!(
        done < 40,
        "killed after the final ({done} rows): nothing tested"
    );
    // Mid bracket: its round and stage, and six, four or two bots in.
    let (said, json) = status(&cut);
    let state = &json["format_state"];
    let finished = state["finished"].as_u64().unwrap_or(9) as usize;
    let stage = ["quarter-final", "semi-final", "final"][finished];
    assert!(
        said.contains(&format!(
            "knockout: round {} of 3, {stage} ({finished} finished); still in: ",
            finished + 1
        )),
        "{said}"
    );
    let still_in = state["still_in"].as_array().map_or(0, Vec::len);
    assert_eq!(still_in, [6, 4, 2][finished], "{json}");
    // The report of the killed league has its bracket so far, as status.
    assert!(!cut.join("knockout.txt").exists());
    let page = reported(&cut);
    assert!(page.contains("<h2>Bracket</h2>"), "{page}");
    assert!(
        page.contains(&format!("Knockout: {finished} of 3 rounds finished")),
        "{page}"
    );
    run_ok(&file, &["--output", cut.to_str().unwrap()]);
    let got = csvio::read_rows(&csv).unwrap();
    assert_eq!(got.len(), 40);
    assert_eq!(bracket(&got), b);
    assert_eq!(
        std::fs::read_to_string(cut.join("knockout.txt")).unwrap(),
        text
    );
}

#[test]
fn a_knockout_cannot_be_sharded_and_bad_settings_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_knockout(dir.path(), "");
    let out = run(&file, &["--shard", "1/2"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a knockout cannot be sharded"), "{err}");

    let bad = |extra: &str, want: &str| {
        let file = write_knockout(dir.path(), extra);
        let out = run(&file, &[]);
        assert!(!out.status.success(), "{extra}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{extra}: {err}");
        assert!(err.contains("k.toml:"), "{extra}: {err}");
    };
    bad(
        "seeds = [\"a\", \"b\", \"x\"]",
        "`seeds`: \"x\" is not one of the league's bots",
    );
    bad("seeds = [\"a\", \"a\"]", "`seeds`: \"a\" is seeded twice");
    bad("seeds = [\"a\", \"b\"]", "`seeds`: bot \"c\" has no seed");
    bad(
        "rounds = 3",
        "`rounds`: a knockout's rounds follow from its bots",
    );
    bad(
        "seeding = \"swiss\"\nseeds = [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\"]",
        "`seeding`: seeding = \"swiss\" seeds the bracket by a first Swiss: leave `seeds` out",
    );
    bad(
        "gauntlet = \"a\"",
        "`format`: a knockout pairs the bots by its bracket",
    );
    // A first stage's rounds under seeding = "seeds" (no stage) were
    // dropped in silence.
    bad(
        "seeding = \"seeds\"\nseeding_rounds = 3",
        "`seeding_rounds`: a first stage's rounds need seeding = \"swiss\"; the file's seeding = \"seeds\" (line 11)",
    );
    bad(
        "seeding = \"swis\"",
        "got \"swis\"; did you mean \"swiss\"?",
    );
    let file = write_knockout(dir.path(), "");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("\"kisolo\"", "\"tricala3\"")).unwrap();
    let err = String::from_utf8_lossy(&run(&file, &[]).stderr).to_string();
    assert!(
        err.contains("a knockout match is between two bots"),
        "{err}"
    );
}

/// A knockout seeded by a first Swiss stage (`seeding = "swiss"`): two
/// Swiss rounds of all six bots (no rematch), then the bracket seeded by
/// their standings (the two byes to the best scores, every seed's score
/// at least the next one's), its matches won on points or by the better
/// seed; killed with SIGKILL during the stage and resumed, it plays the
/// same stage and bracket.
#[test]
fn a_knockout_seeded_by_a_first_swiss_stage_plays_the_bracket_of_its_standings() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_knockout(dir.path(), "seeding = \"swiss\"\nseeding_rounds = 2");
    let whole = dir.path().join("whole");
    run_ok(&file, &["--output", whole.to_str().unwrap()]);
    let rows = csvio::read_rows(&whole.join("games.csv")).unwrap();
    // The stage: 2 rounds of 3 pairs x 8 games; the bracket: 5 matches.
    assert_eq!(rows.len(), 2 * 3 * 8 + 5 * 8);
    let b = bracket(&rows);
    let rounds: Vec<&BTreeMap<_, _>> = b.values().collect();
    assert_eq!(rounds.len(), 2 + 3, "{b:?}");
    let (s1, s2): (BTreeSet<_>, BTreeSet<_>) = (
        rounds[0].keys().cloned().collect(),
        rounds[1].keys().cloned().collect(),
    );
    assert_eq!((s1.len(), s2.len()), (3, 3), "{b:?}");
    assert!(s1.is_disjoint(&s2), "a rematch in the stage: {b:?}");
    // Each bot's score after the stage: a round is worth 1 point, its
    // share of its 8 games' points.
    let mut score: BTreeMap<String, f64> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.game_id.starts_with("s001") || r.game_id.starts_with("s002"))
    {
        for (bot, s) in r.seats().into_iter().zip(r.scores()) {
            *score.entry(bot.to_string()).or_default() += s / 8.0;
        }
    }
    let text = std::fs::read_to_string(whole.join("knockout.txt")).unwrap();
    assert!(text.contains("Knockout: 5 of 5 rounds finished"), "{text}");
    assert!(text.contains("seeding: a Swiss of 2 rounds"), "{text}");
    let seeds: Vec<String> = text
        .lines()
        .find_map(|l| l.strip_prefix("seeds: "))
        .unwrap_or_else(|| panic!("no seeds in:\n{text}"))
        .split(", ")
        .map(|s| s.split_once(' ').unwrap().1.to_string())
        .collect();
    assert_eq!(seeds.len(), 6, "{text}");
    for w in seeds.windows(2) {
        assert!(
            score[&w[0]] >= score[&w[1]],
            "seeds {seeds:?} by score {score:?}"
        );
    }
    // The bracket of those seeds: 3-6 and 4-5, then 1 and 2 meet their
    // winners, then the final.
    let s = |i: usize| seeds[i - 1].as_str();
    let seed_of = |b: &str| seeds.iter().position(|x| x == b).unwrap();
    let win = |r: &BTreeMap<(String, String), BTreeMap<String, f64>>, a: &str, b: &str| {
        let pts = &r[&pair(a, b)];
        match (pts[a], pts[b]) {
            (x, y) if x > y => a.to_string(),
            (x, y) if y > x => b.to_string(),
            _ if seed_of(a) < seed_of(b) => a.to_string(),
            _ => b.to_string(),
        }
    };
    let r3: BTreeSet<_> = rounds[2].keys().cloned().collect();
    assert_eq!(r3, BTreeSet::from([pair(s(3), s(6)), pair(s(4), s(5))]));
    let (de, cf) = (win(rounds[2], s(4), s(5)), win(rounds[2], s(3), s(6)));
    let r4: BTreeSet<_> = rounds[3].keys().cloned().collect();
    assert_eq!(r4, BTreeSet::from([pair(s(1), &de), pair(s(2), &cf)]));
    let (top, bottom) = (win(rounds[3], s(1), &de), win(rounds[3], s(2), &cf));
    let r5: BTreeSet<_> = rounds[4].keys().cloned().collect();
    assert_eq!(r5, BTreeSet::from([pair(&top, &bottom)]));
    let champion = win(rounds[4], &top, &bottom);
    assert!(text.contains(&format!("champion: {champion}\n")), "{text}");

    // Killed during the stage's second round, then resumed.
    let cut = dir.path().join("cut");
    let done = killed_after_rows(&file, &cut, 30);
    assert!(
        done < 48,
        "killed after the stage ({done} rows): nothing tested"
    );
    run_ok(&file, &["--output", cut.to_str().unwrap()]);
    let got = csvio::read_rows(&cut.join("games.csv")).unwrap();
    assert_eq!(bracket(&got), b);
    assert_eq!(
        std::fs::read_to_string(cut.join("knockout.txt")).unwrap(),
        text
    );
}

/// A ply cap no game ends within: warned at the start; every game drawn,
/// so the match goes to the better seed, which knockout.txt, the report
/// and status say (not a bare "0.50 - 0.50").
#[test]
fn a_match_drawn_at_a_low_ply_cap_is_said_to_go_through_on_seed() {
    let dir = tempfile::tempdir().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let file = dir.path().join("k.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"k\"\nformat = \"knockout\"\nseeds = [\"b\", \"a\"]\nbots = [{{ name = \"a\", command = [\"{bot}\"] }}, {{ name = \"b\", command = [\"{bot}\"] }}]\nvariants = [\"kisolo\"]\ngames_per_pairing = 2\nmax_plies = 3\nconcurrency = 1\noutput = \"out\"\n"
        ),
    )
    .unwrap();
    let out = run_ok(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: max_plies = 3: hardly any game can end within 3 plies"),
        "{err}"
    );
    let whole = dir.path().join("out");
    let text = std::fs::read_to_string(whole.join("knockout.txt")).unwrap();
    assert!(
        text.contains("round 1: b 0.50 - 0.50 a (b through on seed)\n"),
        "{text}"
    );
    let page = std::fs::read_to_string(whole.join("report/index.html")).unwrap();
    assert!(page.contains("(b through on seed)"), "{page}");
    let (said, json) = status(&whole);
    assert!(
        said.contains("\nthrough on seed (drawn matches): b over a (round 1)\n"),
        "{said}"
    );
    assert_eq!(json["format_state"]["on_seed"][0], "b over a (round 1)");
}
