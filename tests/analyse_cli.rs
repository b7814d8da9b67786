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
    // The record, cut after the losing move, says a result its decisions
    // do not give: said, on stderr.
    let out = arena(&["analyse", p, "--depth", "2", "--proof-ms", "100"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("its end does not follow from its")
            && said.contains("but the game is not over"),
        "{said}"
    );
    // The table says the same, at that decision, and its header that the
    // result is only the record's.
    let table_says = |out: &Output, header_end: &str| {
        let table = stdout_of(out);
        let header = table.lines().next().unwrap_or_default();
        assert!(header.ends_with(header_end), "{table}");
        let row = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&at.to_string()))
            .expect("the decision's row");
        assert!(row.contains("?? win thrown away"), "{row}");
    };
    table_says(
        &out,
        "as recorded: not what its decisions give (see the warning)",
    );
    // The same record without its `end` line (a file cut short) is
    // analysed too, with a warning, and its header says it has no result.
    let text = std::fs::read_to_string(&path).expect("record read");
    let cut: String = text
        .lines()
        .filter(|l| !l.contains(r#""type":"end""#))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, cut).expect("cut record written");
    let out = arena(&["analyse", p, "--depth", "2", "--proof-ms", "100"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no `end` line (the record is cut short)"),
        "{said}"
    );
    table_says(
        &out,
        "no result: the record is cut short before its `end` line",
    );
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

    // A game of the league's games.csv, as `arena show` takes it; two
    // games' records in one file are named as such.
    let csv = out.join("games.csv");
    let text = std::fs::read_to_string(&csv).expect("games.csv");
    let ids: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next())
        .collect();
    let csv_s = csv.to_str().expect("utf-8 path");
    stdout_of(&arena(&["analyse", csv_s, ids[0], "--depth", "1"]));
    let mut two = String::new();
    for id in &ids[..2] {
        two.push_str(&stdout_of(&arena(&["show", out_s, id, "--json"])));
    }
    let both = dir.path().join("two.jsonl");
    std::fs::write(&both, two).expect("written");
    let e = failure(&["analyse", both.to_str().expect("utf-8")]);
    assert!(
        e.contains("a second `game` line: this file holds more than one game's record"),
        "{e}"
    );
    let e = failure(&["analyse", out_s, ids[0], "--tables", csv_s]);
    assert!(e.contains("is a file, not a folder"), "{e}");

    // A folder of one record file per game (an older league's), one of
    // whose records has a decision that is no option: that game is left
    // out, named with its file; the others are counted.
    let old = dir.path().join("old");
    std::fs::create_dir_all(old.join("games")).expect("old folder");
    let mut lines = text.lines();
    let mut csv_old = format!("{}\n", lines.next().expect("header"));
    for l in lines {
        let fields: Vec<&str> = l.split(',').collect();
        let n = fields.len();
        csv_old.push_str(&format!("{},,,\n", fields[..n - 3].join(",")));
    }
    std::fs::write(old.join("games.csv"), csv_old).expect("old games.csv");
    for (i, id) in ids.iter().enumerate() {
        let mut record = stdout_of(&arena(&["show", out_s, id, "--json"]));
        if i == 1 {
            let at = record.find("\"option\":\"").expect("a decision") + 10;
            let end = at + record[at..].find('"').expect("its end");
            record.replace_range(at..end, "NaN");
        }
        std::fs::write(old.join(format!("games/{id}.jsonl")), record).expect("a record");
    }
    let o = arena(&[
        "tables",
        "coverage",
        old.to_str().expect("utf-8"),
        "--seeds",
        "6",
    ]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains(&format!("{} in games/{}.jsonl: decision", ids[1], ids[1])),
        "{said}"
    );
    let row = said
        .lines()
        .find(|l| l.starts_with("tricala"))
        .expect("a tricala row");
    assert_eq!(row.split_whitespace().nth(2), Some("3"), "{row}");

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

/// Arena's exit code and stderr.
fn failure(args: &[&str]) -> String {
    let o = arena(args);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A built layer damaged in each way a user meets (cut short, a byte
/// flipped, emptied, a folder or a device in its place, another game's
/// file): the build stops naming the file and what is wrong, keeps it and
/// the other layers as they are, and builds again once it is deleted.
#[test]
fn tables_build_names_a_damaged_layer_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().to_str().expect("utf-8 path");
    let build = ["tables", "build", "diffusion", "--seeds", "4", "--out", out];
    stdout_of(&arena(&build));
    stdout_of(&arena(&[
        "tables",
        "build",
        "hackaback",
        "--seeds",
        "2",
        "--out",
        out,
    ]));
    let n03 = dir.path().join("diffusion").join("n03.tbl");
    let good = std::fs::read(&n03).expect("n03");
    let n04 = std::fs::read(dir.path().join("diffusion").join("n04.tbl")).expect("n04");
    let mut flipped = good.clone();
    flipped[100] ^= 0x10;
    let other = std::fs::read(dir.path().join("hackaback").join("w1-b01.tbl")).expect("w1-b01");
    let cases: [(&str, Option<Vec<u8>>, &str); 5] = [
        (
            "cut",
            Some(good[..100].to_vec()),
            "100 bytes long, expected 1520",
        ),
        ("flipped", Some(flipped), "checksum mismatch"),
        (
            "empty",
            Some(Vec::new()),
            "0 bytes: shorter than the 64-byte header",
        ),
        ("folder", None, "a folder, not a table file"),
        ("other game", Some(other), "says `hackaback` layer `w1-b01`"),
    ];
    for (what, bytes, why) in cases {
        match &bytes {
            Some(b) => std::fs::write(&n03, b).expect("damaged"),
            None => {
                std::fs::remove_file(&n03).expect("removed");
                std::fs::create_dir(&n03).expect("a folder in its place");
            }
        }
        let err = failure(&build);
        assert!(
            err.contains(&format!("{}: not a usable table file", n03.display())),
            "{what}: {err}"
        );
        assert!(err.contains(why), "{what}: {err}");
        assert!(
            err.contains("delete that file and run the build again"),
            "{what}: {err}"
        );
        match &bytes {
            Some(b) => assert_eq!(&std::fs::read(&n03).expect("kept"), b, "{what}"),
            None => std::fs::remove_dir(&n03).expect("the folder kept"),
        }
        std::fs::remove_file(&n03).ok();
        let again = stdout_of(&arena(&build));
        assert!(
            again.contains("3 layers (1 built now, 2 read back)"),
            "{what}: {again}"
        );
        assert_eq!(std::fs::read(&n03).expect("rebuilt"), good, "{what}");
    }
    std::fs::remove_file(&n03).expect("removed");
    std::os::unix::fs::symlink("/dev/zero", &n03).expect("a symlink to a device");
    assert!(failure(&build).contains("a special file, not a table file"));
    assert_eq!(
        std::fs::read(dir.path().join("diffusion").join("n04.tbl")).expect("n04"),
        n04
    );
}

/// Tables too small for any layer, and threads by the hundred thousand:
/// refused with the flag named, never a silent empty build or an abort.
#[test]
fn tables_build_refuses_sizes_that_hold_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().to_str().expect("utf-8 path");
    let b = |extra: &[&str]| {
        let mut args = vec!["tables", "build", "diffusion", "--out", out];
        args.extend_from_slice(extra);
        failure(&args)
    };
    let e = b(&["--seeds", "0"]);
    assert!(
        e.contains("--seeds 0: no diffusion table holds 0 seeds or fewer"),
        "{e}"
    );
    assert!(e.contains("(--seeds 2)"), "{e}");
    assert!(b(&["--seeds", "1"]).contains("--seeds 1: no diffusion table holds 1 seed or fewer"));
    // A file where the folder goes, or above it: named as --out's.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").expect("a file");
    for out in [file.clone(), file.join("sub")] {
        let e = failure(&[
            "tables",
            "build",
            "diffusion",
            "--seeds",
            "3",
            "--out",
            out.to_str().expect("utf-8"),
        ]);
        assert!(
            e.contains(&format!("{} is a file, not a folder", file.display())),
            "{e}"
        );
    }
    let e = b(&["--max-size", "0"]);
    assert!(
        e.contains("--max-size 0: no diffusion table fits in 0 bytes"),
        "{e}"
    );
    let e = b(&["--seeds", "2", "--threads", "100000"]);
    assert!(e.contains("--threads 100000: at most 1024"), "{e}");
    // Many threads for a small layer: one a chunk, and it builds.
    let built = stdout_of(&arena(&[
        "tables",
        "build",
        "diffusion",
        "--seeds",
        "3",
        "--threads",
        "1000",
        "--out",
        out,
    ]));
    assert!(built.contains("2 layers (2 built now"), "{built}");
}

/// A record of `game` written by `arena play` with the given players (the
/// built-in random ones).
fn record_of(dir: &std::path::Path, players: &[&str], game: &str) -> String {
    let path = dir.join(format!("{game}.jsonl"));
    let p = path.to_str().expect("utf-8 path");
    let players_n = players.len().to_string();
    let mut args = vec![
        "play",
        "--game",
        game,
        "--players",
        &players_n,
        "--seed",
        "3",
        "--record",
        p,
        "--",
    ];
    args.extend_from_slice(players);
    stdout_of(&arena(&args));
    p.to_string()
}

/// `arena analyse` with tables that are not there for the game (the
/// game's own folder given, another game's tables), a depth past the
/// search's, output to a full disk, a 3-player game with tables: each
/// named, never a silent analysis without them.
#[test]
fn analyse_names_tables_that_are_not_the_game_s_and_a_failed_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("t");
    let out_s = out.to_str().expect("utf-8 path");
    stdout_of(&arena(&[
        "tables",
        "build",
        "diffusion",
        "--seeds",
        "3",
        "--out",
        out_s,
    ]));
    let rec = record_of(dir.path(), &["random", "random"], "diffusion");
    let inner = out.join("diffusion");
    let e = failure(&[
        "analyse",
        &rec,
        "--depth",
        "1",
        "--tables",
        inner.to_str().expect("utf-8"),
    ]);
    assert!(e.contains("no diffusion tables there"), "{e}");
    assert!(
        e.contains(&format!(
            "give the folder above it, `arena tables build --out`'s (`{out_s}`)"
        )),
        "{e}"
    );
    let hack = dir.path().join("h");
    std::fs::create_dir_all(hack.join("hackaback")).expect("another game's tables");
    let e = failure(&[
        "analyse",
        &rec,
        "--depth",
        "1",
        "--tables",
        hack.to_str().expect("utf-8"),
    ]);
    assert!(
        e.contains(&format!(
            "expected the folder {}",
            hack.join("diffusion").display()
        )),
        "{e}"
    );
    let e = failure(&["analyse", &rec, "--depth", "65"]);
    assert!(e.contains("--depth 65: the search goes at most 64"), "{e}");
    // A layer lost below the largest one there: refused, naming it (the
    // positions in it were left to the search without a word), until a
    // build makes it again.
    let gap = dir.path().join("gap");
    let gap_s = gap.to_str().expect("utf-8");
    stdout_of(&arena(&[
        "tables",
        "build",
        "diffusion",
        "--seeds",
        "3",
        "--out",
        gap_s,
    ]));
    std::fs::remove_file(gap.join("diffusion/n02.tbl")).expect("a layer deleted");
    let e = failure(&["analyse", &rec, "--depth", "1", "--tables", gap_s]);
    assert!(
        e.contains("the diffusion tables lack 1 of the layers below their largest (3 seeds)")
            && e.contains("n02.tbl")
            && e.contains(&format!(
                "arena tables build diffusion --seeds 3 --out {gap_s}"
            )),
        "{e}"
    );
    stdout_of(&arena(&[
        "tables",
        "build",
        "diffusion",
        "--seeds",
        "3",
        "--out",
        gap_s,
    ]));
    stdout_of(&arena(&[
        "analyse", &rec, "--depth", "1", "--tables", gap_s,
    ]));
    stdout_of(&arena(&[
        "analyse", &rec, "--depth", "1", "--tables", out_s,
    ]));
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let o = Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(["analyse", &rec, "--depth", "1"])
        .stdout(full)
        .output()
        .expect("runs");
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("writing the analysis to standard output: No space left"),
        "{e}"
    );
    // Three players: the tables are the 2-player game's, so nothing is
    // exact but the end (`end`, not `tables`).
    let rec3 = record_of(dir.path(), &["random", "random", "random"], "tricala");
    let json = stdout_of(&arena(&[
        "analyse", &rec3, "--depth", "1", "--json", "--tables", out_s,
    ]));
    assert!(!json.contains("\"source\":\"tables\""), "{json}");
    assert!(json.contains("\"source\":\"end\""), "{json}");
}
