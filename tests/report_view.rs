//! The report at a million games (issue 33) in a real browser: a league of
//! three real random bots over the six variants, with more games per
//! pairing than the report's sample keeps, played by the real `arena`
//! binary. The report written at its end holds a sample: its links lead to
//! games it can show, and a game it left out says why and how to see it.
//! `arena view` serves the same folder on 127.0.0.1 port 0 and shows any
//! game, replayed by the engine on demand, at a given decision, with the
//! legal options `arena state` lists there; it sees games added while it
//! runs.
//!
//! Chromium runs as in tests/report_html.rs (`--headless --dump-dom`, the
//! console on stderr: tests/common/dom.rs); `common::chromium` finds or
//! installs it. Nothing is timed: waits poll with a generous limit.

use crate::common;

use common::dom::{self, at, attrs, between};
use common::league::{arena, view, view_of};
use mancala_arena::results::{csvio, GameRow};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// The DOM of `url` after its scripts ran; fails on any console message
/// or error shown on the page.
fn open(url: &str) -> String {
    dom::dump_clean("the report's sample and view tests", url)
}

/// The (data-k, data-v) pairs of the board's drawn numbers.
fn drawn(dom: &str) -> Vec<(String, Value)> {
    dom::drawn(dom)
        .into_iter()
        .map(|(k, v)| (k, serde_json::from_str(&v).unwrap()))
        .collect()
}

fn label(row: &GameRow) -> String {
    if row.players == 3 {
        format!("{}-3p", row.variant)
    } else {
        row.variant.clone()
    }
}

struct League {
    dir: PathBuf,
    rows: Vec<GameRow>,
    /// The ids of the games the report's viewer holds (games/index.js).
    sampled: BTreeSet<String>,
    _keep: tempfile::TempDir,
}

/// Three random bots, six variants, five rounds: ten games per pairing of
/// a 2-player variant and thirty of Tricala for three, more than the
/// sample keeps of each; `arena run` writes the report at its end.
fn league() -> &'static League {
    static LEAGUE: OnceLock<League> = OnceLock::new();
    LEAGUE.get_or_init(|| {
        let tmp = common::kept_tempdir();
        let random = env!("CARGO_BIN_EXE_random-bot");
        let file = tmp.path().join("t.toml");
        std::fs::write(
            &file,
            format!(
                r#"
name = "sampled"
seed = 11
bots = [
  {{ name = "ra", command = ["{random}"] }},
  {{ name = "rb", command = ["{random}"] }},
  {{ name = "rc", command = ["{random}"] }},
]
variants = ["filo", "tricala", "tricala3", "hackaback", "kisolo", "diffusion"]
rounds = 5
openings = 1
max_plies = 300
concurrency = 2
output = "out"
"#
            ),
        )
        .unwrap();
        let out = arena()
            .arg("run")
            .arg(&file)
            .arg("--quiet")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::text(&out));
        let dir = tmp.path().join("out");
        let rows = csvio::read_rows(&dir.join("games.csv")).unwrap();
        let index = std::fs::read_to_string(dir.join("report/games/index.js")).unwrap();
        let index: Value = serde_json::from_str(
            index
                .trim_end()
                .strip_prefix("arenaIndex(")
                .and_then(|s| s.strip_suffix(");"))
                .unwrap(),
        )
        .unwrap();
        let sampled = index["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g[0].as_str().unwrap().to_string())
            .collect();
        League {
            dir,
            rows,
            sampled,
            _keep: tmp,
        }
    })
}

/// A damaged record among a sampled report's games is counted among
/// those (the only records read), and said so.
#[test]
fn damaged_records_of_a_sample_are_counted_among_its_games() {
    let l = league();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("copy");
    let cp = Command::new("cp")
        .arg("-r")
        .arg(&l.dir)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(cp.success());
    let mut rows = l.rows.clone();
    let k = rows
        .iter()
        .position(|r| l.sampled.contains(&r.game_id))
        .unwrap();
    rows[k].record_offset = Some(1 << 40);
    let mut w = csv::Writer::from_path(copy.join("games.csv")).unwrap();
    for r in &rows {
        w.serialize(r).unwrap();
    }
    drop(w);
    let out = arena()
        .arg("report")
        .arg(&copy)
        .arg("-o")
        .arg(tmp.path().join("report"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let among = format!(
        "note: 1 game(s) whose record is missing or damaged among the {} games in the viewer",
        l.sampled.len()
    );
    assert!(err.contains(&among), "{err}");
}

fn file_url(dir: &Path, fragment: &str) -> String {
    format!(
        "file://{}{fragment}",
        dir.join("report/index.html")
            .canonicalize()
            .unwrap()
            .display()
    )
}

/// The default report holds a sample and says so (how many of how many,
/// and the rule); every game link of the main page and of the game list
/// leads to a game it shows; a game it left out says why and names
/// `arena view`.
#[test]
fn the_sampled_report_links_to_viewable_games_and_says_why_others_are_not_in_it() {
    let l = league();
    assert!(
        l.sampled.len() < l.rows.len() && !l.sampled.is_empty(),
        "{} of {} games sampled",
        l.sampled.len(),
        l.rows.len()
    );
    let main = open(&file_url(&l.dir, ""));
    let shown = format!("class=\"sample-shown\">{}<", l.sampled.len());
    let total = format!("class=\"sample-total\">{}<", l.rows.len());
    assert!(
        main.contains(&shown) && main.contains(&total),
        "no sample note"
    );
    assert!(main.contains("most recent games of each pairing"));
    assert!(main.contains("arena view RESULTS"));

    let list = open(&file_url(&l.dir, "#games"));
    assert!(
        list.contains("sample-note"),
        "the game list names the sample"
    );
    let mut linked: Vec<String> = attrs(&main, "href")
        .into_iter()
        .chain(attrs(&list, "href"))
        .filter_map(|h| h.strip_prefix("#game=").map(str::to_string))
        .collect();
    linked.sort();
    linked.dedup();
    assert!(!linked.is_empty(), "no link to a game");
    for id in &linked {
        assert!(
            l.sampled.contains(id),
            "{id} is linked but not in the report"
        );
    }
    // Open one linked game per variant label.
    let mut labels = BTreeSet::new();
    for row in l.rows.iter().filter(|r| linked.contains(&r.game_id)) {
        if !labels.insert(label(row)) {
            continue;
        }
        let dom = open(&file_url(
            &l.dir,
            &format!("#game={}&decision=end", row.game_id),
        ));
        let n = row.plies;
        assert!(
            dom.contains("<div class=\"board\"") && dom.contains(" of "),
            "{}: no board",
            row.game_id
        );
        assert!(
            !dom.contains("not-in-sample"),
            "{} (plies {n})",
            row.game_id
        );
        if labels.len() == 2 {
            break;
        }
    }
    let left = l
        .rows
        .iter()
        .find(|r| !l.sampled.contains(&r.game_id))
        .unwrap();
    let dom = open(&file_url(&l.dir, &format!("#game={}", left.game_id)));
    let note = between(&dom, "class=\"note not-in-sample\"", "</p>");
    assert!(note.contains(&left.game_id), "{note}");
    assert!(note.contains("is not in this report"), "{note}");
    assert!(note.contains("chosen by this rule"), "{note}");
    assert!(note.contains("arena view RESULTS"), "{note}");
}

/// The status and body of GET `url` (plain HTTP/1.1, the connection
/// closed after it).
fn get(url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(180))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_string())
}

/// The moves of a record, in order.
fn moves_of(record: &str) -> (Value, Vec<String>) {
    let header: Value = serde_json::from_str(record.lines().next().unwrap()).unwrap();
    let moves = record
        .lines()
        .filter_map(|x| serde_json::from_str::<Value>(x).ok())
        .filter(|v| v.get("type").is_none() || v["type"] == "decision")
        .filter_map(|v| v["option"].as_str().map(str::to_string))
        .collect();
    (header, moves)
}

/// `arena state` of `row`'s game after `moves`.
fn state_after(row: &GameRow, header: &Value, moves: &[String]) -> Value {
    let mut cmd = arena();
    cmd.args(["state", &row.variant, "--players", &row.players.to_string()])
        .args(["--max-plies", &header["max_plies"].to_string()])
        .args(["--moves", &moves.join(" ")]);
    for (key, v) in header["options"].as_object().unwrap() {
        cmd.args(["--option", &format!("{key}={}", v.as_str().unwrap())]);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", common::text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `arena view` shows a game of each variant that the static report left
/// out, at a given decision (the board is `arena state`'s position after
/// as many moves, the legal options shown are its `legal`) and at a given
/// ply.
#[test]
fn arena_view_serves_a_left_out_game_of_each_variant_with_its_legal_options() {
    let l = league();
    let v = view(&l.dir);
    let mut left: BTreeMap<String, &GameRow> = BTreeMap::new();
    for row in &l.rows {
        if !l.sampled.contains(&row.game_id) && row.plies >= 4 {
            left.entry(label(row)).or_insert(row);
        }
    }
    assert_eq!(left.len(), 6, "{:?}", left.keys());
    for row in left.values() {
        let record = common::record_text(&l.dir, row);
        let (header, moves) = moves_of(&record);
        let k = moves.len() / 2;
        let want = state_after(row, &header, &moves[..k]);
        let dom = open(&format!("{}#game={}&decision={k}", v.url, row.game_id));
        assert!(
            dom.contains(&format!("decision {k} of {}", moves.len())),
            "{}: not at decision {k}",
            row.game_id
        );
        let board = between(&dom, "<div class=\"board\"", "</svg>");
        let shown = drawn(board);
        assert!(
            shown.len() >= 10,
            "{}: {} numbers",
            row.game_id,
            shown.len()
        );
        for (key, got) in &shown {
            assert_eq!(
                Some(got),
                at(&want["state"], key),
                "{}: {key} at decision {k}",
                row.game_id
            );
        }
        let legal: Vec<String> = attrs(
            between(&dom, "<div class=\"legal\"", "</div>"),
            "data-option",
        );
        let want_legal: Vec<String> = serde_json::from_value(want["legal"].clone()).unwrap();
        assert_eq!(legal, want_legal, "{}: legal options at {k}", row.game_id);
        assert!(!want_legal.is_empty());
        let link = between(&dom, "<a class=\"permalink\"", "</a>");
        assert!(
            link.contains(&format!("#game={}&amp;decision={k}", row.game_id)),
            "{link}"
        );
    }
    // At a ply: the first position at that ply.
    let row = left["kisolo"];
    let (header, moves) = moves_of(&common::record_text(&l.dir, row));
    let ply = 3;
    let want = state_after(row, &header, &moves[..3]);
    assert_eq!(want["state"]["ply"], ply, "kisolo: one ply a move");
    let dom = open(&format!("{}#game={}&ply={ply}", v.url, row.game_id));
    assert!(dom.contains("decision 3 of "), "not at ply {ply}");
    let legal: Vec<String> = attrs(
        between(&dom, "<div class=\"legal\"", "</div>"),
        "data-option",
    );
    assert_eq!(
        legal,
        serde_json::from_value::<Vec<String>>(want["legal"].clone()).unwrap()
    );
}

/// A results folder `dir` (made if missing) with the games.csv `csv` and
/// a copy of the records of the league in `from`.
fn results_folder(from: &Path, dir: &Path, csv: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("games.csv"), csv).unwrap();
    let status = Command::new("cp")
        .arg("-r")
        .arg(from.join("games"))
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
}

/// `arena view` of a league still running: before its first game, a page
/// that looks again; a game added to games.csv after the view started is
/// served, and the main page counts it.
#[test]
fn arena_view_sees_games_added_while_it_runs() {
    let l = league();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("league");
    let csv = std::fs::read_to_string(l.dir.join("games.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let half = lines.len() / 2;
    // Not one game finished yet: a page that says so and looks again (it
    // was a 500, "the report cannot be shown").
    results_folder(&l.dir, &dir, &(lines[0].to_string() + "\n"));
    let v = view(&dir);
    let (code, page) = get(&v.url);
    assert_eq!(code, 200, "{page}");
    assert!(
        page.contains("No game of this league is finished yet"),
        "{page}"
    );
    assert!(page.contains("http-equiv=\"refresh\""), "{page}");
    std::fs::write(dir.join("games.csv"), lines[..half].join("\n") + "\n").unwrap();
    let (code, page) = get(&v.url);
    assert_eq!(code, 200);
    assert!(page.contains(&format!("class=\"sample-total\">{}<", half - 1)));
    let late = &l.rows[l.rows.len() - 1].game_id;
    let (code, body) = get(&format!("{}games/one/{late}", v.url));
    assert_eq!(code, 404, "{body}");
    assert!(body.starts_with("//"));

    std::fs::write(dir.join("games.csv"), &csv).unwrap();
    let (code, body) = get(&format!("{}games/one/{late}", v.url));
    assert_eq!(code, 200, "{body}");
    assert!(
        body.starts_with(&format!("arenaGames({{\"chunk\":\"one:{late}\"")),
        "{}",
        &body[..80]
    );
    assert!(body.contains("\"decisions\""));
    let (_, page) = get(&v.url);
    assert!(page.contains(&format!("class=\"sample-total\">{}<", l.rows.len())));
    // Only the report's own scripts are served from its folders.
    let (code, _) = get(&format!("{}games/..%2F..%2Fgames.csv", v.url));
    assert_eq!(code, 404);
}

/// `arena view` of two results folders of one league that share a game
/// (as copies made by hand may): the page counts each game once, and a game of
/// either shard, the shared one and none other are served (each found by
/// where its row is, read again when asked).
#[test]
fn arena_view_serves_the_games_of_every_shard_once() {
    let l = league();
    let tmp = tempfile::tempdir().unwrap();
    let csv = std::fs::read_to_string(l.dir.join("games.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let half = lines.len() / 2;
    for (name, rows) in [("s0", &lines[1..=half]), ("s1", &lines[half..])] {
        let text = format!("{}\n{}\n", lines[0], rows.join("\n"));
        results_folder(&l.dir, &tmp.path().join("league").join(name), &text);
    }
    let league = tmp.path().join("league");
    let v = view_of(&[&league.join("s0"), &league.join("s1")]);
    let (code, page) = get(&v.url);
    assert_eq!(code, 200);
    let total = format!("class=\"sample-total\">{}<", l.rows.len());
    assert!(page.contains(&total), "not {total}");
    let shared = &l.rows[half - 1].game_id;
    for id in [
        &l.rows[0].game_id,
        shared,
        &l.rows[l.rows.len() - 1].game_id,
    ] {
        let (code, body) = get(&format!("{}games/one/{id}", v.url));
        assert_eq!(code, 200, "{id}: {body}");
        assert!(
            body.starts_with(&format!("arenaGames({{\"chunk\":\"one:{id}\"")),
            "{id}: {}",
            &body[..body.len().min(80)]
        );
        assert!(body.contains("\"decisions\""), "{id}");
    }
    let (code, _) = get(&format!("{}games/one/{shared}x", v.url));
    assert_eq!(code, 404);
}

/// `arena view` listens on loopback only.
#[test]
fn arena_view_refuses_an_address_off_this_machine() {
    let l = league();
    let out = arena()
        .args(["view", "--no-open", "--bind", "0.0.0.0:0"])
        .arg(&l.dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        common::text(&out).contains("loopback only"),
        "{}",
        common::text(&out)
    );
}
