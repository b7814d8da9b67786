//! `arena match` and the SPRT of a running league, end to end: the real
//! binary, the real greedy and random bots (their games reproducible from
//! the protocol's seeds), real files.

use mancala_arena::results::csvio;

use crate::common;
use common::{arena, text};

const GREEDY: &str = env!("CARGO_BIN_EXE_greedy-bot");
const RANDOM: &str = env!("CARGO_BIN_EXE_random-bot");

/// `arena match A B --games 2 --variants kisolo --quiet --no-report`
/// (one seat-swap group) in `dir`.
fn two_kisolo_games(dir: &std::path::Path, a: &str, b: &str) -> std::process::Output {
    let args = [
        "match",
        a,
        b,
        "--games",
        "2",
        "--variants",
        "kisolo",
        "--quiet",
        "--no-report",
    ];
    arena(dir, &args)
}

/// A match has no tournament file: `arena replay` takes its results folder
/// and makes the league again from the command recorded there.
#[test]
fn a_matchs_game_is_replayed_from_its_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    let o = two_kisolo_games(dir.path(), GREEDY, RANDOM);
    assert!(o.status.success(), "{}", text(&o));
    let folder = "results/match-greedy-rust-vs-random-rust";
    // Named as the README names it, without a `./`.
    let out = text(&o);
    assert!(out.contains(&format!(" in {folder}: games.csv")), "{out}");
    assert!(!out.contains("./results"), "{out}");
    let rows = csvio::read_rows(&dir.path().join(folder).join("games.csv")).unwrap();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        let o = arena(dir.path(), &["replay", folder, &row.game_id]);
        let out = text(&o);
        assert!(o.status.success(), "{out}");
        assert!(out.contains("same: "), "{out}");
    }
    let o = arena(dir.path(), &["replay", "results", &rows[0].game_id]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("is not a league's results folder"),
        "{}",
        text(&o)
    );
}

/// `bot.py` in `dir`: a Python bot that says `name` in its hello and
/// plays the first legal option.
fn write_bot_py(dir: &std::path::Path, name: &str) {
    let text = r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": NAME}), flush=True)
    elif m["type"] == "request":
        print(json.dumps({"type": "reply", "option": m["legal"][0]}), flush=True)
    elif m["type"] == "quit":
        break
"#;
    std::fs::write(
        dir.join("bot.py"),
        text.replace("NAME", &format!("{name:?}")),
    )
    .unwrap();
}

/// A command-line bot that names itself `random` in its hello takes the
/// number, not the built-in player given beside it by that name.
#[test]
fn a_bot_named_as_the_built_in_player_yields_its_name() {
    let dir = tempfile::tempdir().unwrap();
    write_bot_py(dir.path(), "random");
    let o = two_kisolo_games(dir.path(), "python3 bot.py", "random");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("results/match-random-2-vs-random:"), "{out}");
}

/// A script `bot.py` whose hello gives no name usable in results would
/// be the bot `bot`, a fixed column of crosstable.csv that a league
/// refuses: it is `bot-2`.
#[test]
fn a_bot_named_as_a_crosstable_column_takes_a_number() {
    let dir = tempfile::tempdir().unwrap();
    write_bot_py(dir.path(), "my bot");
    let o = two_kisolo_games(dir.path(), "python3 bot.py", "random");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("results/match-bot-2-vs-random:"), "{out}");
}

/// A bot folder whose name is no bot's name (`dir with spaces`) plays
/// under the name its bot.toml gives (it was refused as `match.toml:1:
/// name`, a file the user never wrote); and a bot program's path with
/// spaces in it, given as one argument, is one word, not split.
#[test]
fn a_bot_folder_or_program_with_spaces_in_its_path_plays() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("dir with spaces");
    std::fs::create_dir(&folder).unwrap();
    write_bot_py(&folder, "spacey");
    std::fs::write(
        folder.join("bot.toml"),
        "name = \"spacey\"\ncommand = [\"python3\", \"bot.py\"]\n",
    )
    .unwrap();
    let o = two_kisolo_games(dir.path(), "dir with spaces", "random");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("results/match-spacey-vs-random:"), "{out}");
    let script = folder.join("my bot.py");
    std::fs::rename(folder.join("bot.py"), &script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let text_of = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, format!("#!/usr/bin/env python3\n{text_of}")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = arena(
        dir.path(),
        &[
            "check-bot",
            "--game",
            "kisolo",
            "--",
            script.to_str().unwrap(),
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
}

/// Two programs that say the same name in their hello, or one program
/// edited since, are two matches: the second is played in the next free
/// folder, said so, not resumed as the first with its games shown as its
/// own; the same program again resumes its own folder.
#[test]
fn a_match_of_another_program_under_the_same_name_is_a_new_match() {
    let dir = tempfile::tempdir().unwrap();
    let bot = |pick: &str| {
        format!(
            r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({{"type": "hello", "name": "mybot"}}), flush=True)
    elif m["type"] == "request":
        print(json.dumps({{"type": "reply", "option": m["legal"][{pick}]}}), flush=True)
    elif m["type"] == "quit":
        break
"#
        )
    };
    std::fs::create_dir_all(dir.path().join("a")).unwrap();
    std::fs::create_dir_all(dir.path().join("b")).unwrap();
    std::fs::write(dir.path().join("a/bot.py"), bot("0")).unwrap();
    std::fs::write(dir.path().join("b/bot.py"), bot("-1")).unwrap();
    let play = |cmd: &str| {
        let o = two_kisolo_games(dir.path(), cmd, "random");
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    let first = play("python3 a/bot.py");
    assert!(first.contains("results/match-mybot-vs-random:"), "{first}");
    let other = play("python3 b/bot.py");
    assert!(
        other.contains(
            "note: results/match-mybot-vs-random holds a match of another `mybot` (its command was"
        ) && other.contains("2 of 2 games (2 played now")
            && other.contains("results/match-mybot-vs-random-2:"),
        "{other}"
    );
    // The first program again: its own folder, resumed.
    let again = play("python3 a/bot.py");
    assert!(
        !again.contains("note:") && again.contains("results/match-mybot-vs-random:"),
        "{again}"
    );
    // Edited: a new match, in the next free folder.
    std::fs::write(dir.path().join("a/bot.py"), bot("1")).unwrap();
    let edited = play("python3 a/bot.py");
    assert!(
        edited.contains("(its program changed:")
            && edited.contains("results/match-mybot-vs-random-3:"),
        "{edited}"
    );
}

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
    assert!(out.contains("SPRT greedy-rust vs random-rust"), "{out}");
    assert!(out.trim_end().contains("\nH1 accepted"), "{out}");
    // Never a `continue` beside the decision, whatever the games in
    // flight did to the LLR.
    assert!(!out.contains("no decision yet"), "{out}");
    let csv = dir
        .path()
        .join("results/match-greedy-rust-vs-random-rust/games.csv");
    let rows = csvio::read_rows(&csv).unwrap();
    assert!(rows.len() < 1000, "stopped early: {} games", rows.len());
    // Decided after some game; then only the games in flight: the two
    // being played, and those finished but not yet counted, which wait in
    // the runner's queue of twice the games at a time (a first version of
    // this test allowed only the two, and failed once in CI with 3).
    let decided: usize = out
        .split(" accepted after ")
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
    assert!(out.contains("SPRT random-rust vs random-rust-2"), "{out}");
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

/// What a cutechess or fastchess user reaches for (issue 32, item 12): the
/// head-to-head line at each rating interval and at the end, counted from
/// the games themselves; the clock flags of `arena run`; PGN written as the
/// match plays, which a resume carries on with every game in it.
#[test]
fn a_match_prints_its_head_to_head_line_writes_pgn_as_it_plays_and_takes_a_clock() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("m.pgn");
    let args = |games: &str| {
        [
            "match",
            GREEDY,
            RANDOM,
            "--variants",
            "kisolo,filo",
            "--games",
            games,
            "-j",
            "2",
            "--rating-interval",
            "4",
            "--base-ms",
            "60000",
            "--increment-ms",
            "250",
            "--pgn",
            "m.pgn",
            "--no-report",
        ]
        .map(String::from)
    };
    let o = arena(dir.path(), &args("8").each_ref().map(String::as_str));
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let folder = dir.path().join("results/match-greedy-rust-vs-random-rust");
    let rows = csvio::read_rows(&folder.join("games.csv")).unwrap();
    assert_eq!(rows.len(), 8, "{out}");
    // The line's W-D-L is greedy's, from the rows.
    let (mut w, mut d, mut l) = (0, 0, 0);
    for r in &rows {
        let s = if r.seat0 == "greedy-rust" {
            r.score0
        } else {
            r.score1
        };
        match s {
            1.0 => w += 1,
            0.5 => d += 1,
            _ => l += 1,
        }
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = "greedy-rust vs random-rust: 8 games, score ";
    let end = stdout
        .lines()
        .find(|x| x.starts_with(line))
        .unwrap_or_else(|| panic!("no head-to-head line on stdout: {out}"));
    assert!(end.contains(&format!("W-D-L {w}-{d}-{l}, ")), "{end}");
    for part in ["draws ", "Elo ", "LOS ", "pairs LL-LD-(WL+DD)-WD-WW "] {
        assert!(end.contains(part), "{end}");
    }
    // 4 seat-swap pairs, counted in the pentanomial.
    let penta: u64 = end
        .rsplit(' ')
        .next()
        .unwrap()
        .split('-')
        .map(|c| c.parse::<u64>().unwrap())
        .sum();
    assert_eq!(penta, 4, "{end}");
    // At each interval too (on stderr, with the standings).
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("greedy-rust vs random-rust: 4 games, score "),
        "{stderr}"
    );
    // The clock reached the league (and so the games and their resume).
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("league.json")).unwrap())
            .unwrap();
    let clock = &meta["played_under"]["time_control"];
    assert_eq!(
        (clock["base_ms"].as_u64(), clock["increment_ms"].as_u64()),
        (Some(60000), Some(250)),
        "{meta}"
    );
    // PGN: every game, as the rows say.
    let text_pgn = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text_pgn.matches("[Result ").count(), 8, "{text_pgn}");
    for r in &rows {
        assert!(
            text_pgn.contains(&format!("[Round \"{}\"]", r.game_id)),
            "{} missing: {text_pgn}",
            r.game_id
        );
    }

    // Run again (as a resume does): nothing left to play, and the PGN,
    // written afresh, holds the games of the earlier run.
    std::fs::write(&pgn, "stale").unwrap();
    let o = arena(dir.path(), &args("8").each_ref().map(String::as_str));
    assert!(o.status.success(), "{}", text(&o));
    let again = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(again, text_pgn);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(end),
        "{}",
        text(&o)
    );

    // Another number of games is another match: refused, with the command
    // that resumes this one (a match has no league file to name).
    let o = arena(dir.path(), &args("16").each_ref().map(String::as_str));
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("belong to another match"), "{out}");
    assert!(
        out.contains("resumes with the command that started it: arena match "),
        "{out}"
    );
    assert!(out.contains("--games 8 "), "{out}");
    // The changed setting is said as a match gives it: --games, no file.
    assert!(
        out.contains("(the match's --games: --games 8 as it was started)"),
        "{out}"
    );
    assert!(
        !out.contains("the file's") && !out.contains("--rounds"),
        "{out}"
    );
}

/// A match resumed under another `--sprt` (or none) is refused, naming
/// what changed and the command that resumes it.
#[test]
fn a_match_resumed_under_another_sprt_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let args = |sprt: Option<&'static str>| {
        let mut a = vec![
            "match",
            GREEDY,
            RANDOM,
            "--variants",
            "kisolo",
            "--games",
            "1000",
            "-j",
            "2",
            "--quiet",
            "--no-report",
        ];
        if let Some(s) = sprt {
            a.extend(["--sprt", s]);
        }
        a
    };
    let o = arena(dir.path(), &args(Some("elo0=0,elo1=50")));
    assert!(o.status.success(), "{}", text(&o));
    let o = arena(dir.path(), &args(Some("elo0=0,elo1=30")));
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("started (elo1 was 50, now 30; it was started with --sprt elo0=0,elo1=50,")
            && out.contains("To resume, use the command that started it: arena match"),
        "{out}"
    );
    let o = arena(dir.path(), &args(None));
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("this run has none"), "{out}");
}
