//! Events on the ladder (docs/ladder.md "Events"; issue 52, item 4), as
//! an organiser runs one: the real `arena serve` on 127.0.0.1:0 playing
//! its own games with real bot processes (the crate's seeded random
//! player under five bot names), `arena serve --start-swiss` against the
//! same store, and the server killed with SIGKILL in the middle of a
//! round and started again. The event's rounds, pairings, byes and
//! standings are checked against the league's own Swiss
//! (`league::swiss_games`) replayed from the ladder's export of the same
//! games, and its page and API show them.

use crate::common;

use common::ladder::Server;
use mancala_arena::league::config::Tournament;
use mancala_arena::league::swiss_games::{SwissPlan, SwissState};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A bot folder `dir/upload/NAME` named `name` that runs the crate's
/// random player.
fn bot(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join("upload").join(name);
    std::fs::create_dir_all(&to).unwrap();
    std::fs::write(
        to.join("bot.toml"),
        format!(
            "name = \"{name}\"\nauthor = \"t\"\nlanguage = \"rust\"\ncommand = [\"{{bin_dir}}/random-bot\"]\n"
        ),
    )
    .unwrap();
    to
}

/// A ladder of kisolo whose versions are placed after two games, and
/// which then plays its own games at one a second (the event's games
/// go as fast as the server's two slots allow).
fn server(dir: &Path) -> Server {
    let server = Server::new(
        dir,
        "name = \"events\"\nseed = 5\nvariants = [\"kisolo\"]",
        "placement_games = 2\nplacement_width = 10000\nuploads_per_hour = 100",
    );
    let text = std::fs::read_to_string(&server.file).unwrap().replace(
        "maintenance_games_per_hour = 100000000",
        "maintenance_games_per_hour = 3600",
    );
    std::fs::write(&server.file, text).unwrap();
    server
}

/// The rounds' pairs of an event's API body, by name.
fn pairs_of(e: &serde_json::Value) -> Vec<Vec<Vec<String>>> {
    e["round_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    t["players"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| p.as_str().unwrap().to_string())
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The league's Swiss over the ladder's export: the rows of the event's
/// games in `/api/games.csv`, under their places in the Swiss.
fn league_swiss(server: &Server, dir: &Path, e: &serde_json::Value) -> (SwissPlan, SwissState) {
    let (_, csv) = server.call("GET", "/api/games.csv", None, b"");
    let file = dir.join("export.csv");
    std::fs::write(&file, csv).unwrap();
    let rows = mancala_arena::results::csvio::read_rows(&file).unwrap();
    let places: HashMap<String, String> = e["round_list"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["games"].as_array().unwrap().iter())
        .map(|g| {
            (
                g["game_id"].as_str().unwrap().to_string(),
                g["event_game"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let placed: Vec<_> = rows
        .into_iter()
        .filter_map(|mut r| {
            r.game_id = places.get(&r.game_id)?.clone();
            Some(r)
        })
        .collect();
    let t = Tournament::load(&server.file).unwrap();
    let entrants: Vec<String> = e["entrants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let plan = SwissPlan::swiss(
        &t,
        entrants,
        e["rounds"].as_u64().unwrap() as u32,
        (e["games_per_pairing"].as_u64().unwrap() / 2) as usize,
        e["seed"].as_str().unwrap().parse().unwrap(),
    );
    let state = SwissState::replay(&plan, &placed);
    (plan, state)
}

/// No rematch, one bye a round and never twice to one version, each
/// round paired after the last game of the round before was committed,
/// and every game of a finished event done.
fn assert_rounds_are_swiss(e: &serde_json::Value) {
    let rounds = e["round_list"].as_array().unwrap();
    assert_eq!(rounds.len(), 3, "{e}");
    let mut met = HashSet::new();
    let mut byes = HashSet::new();
    let mut last_finish = String::new();
    for (i, r) in rounds.iter().enumerate() {
        assert_eq!(r["round"], i + 1, "{r}");
        for p in &pairs_of(e)[i] {
            let mut key = p.clone();
            key.sort();
            assert!(met.insert(key), "round {}: a rematch {p:?} in {e}", i + 1);
        }
        let bye = r["bye"].as_str().expect("five versions: a bye each round");
        assert!(byes.insert(bye.to_string()), "a second bye for {bye}: {e}");
        let paired = r["paired_at"].as_str().unwrap();
        assert!(
            paired >= last_finish.as_str(),
            "round {} paired at {paired}, before round {}'s last game finished at {last_finish}",
            i + 1,
            i
        );
        let games = r["games"].as_array().unwrap();
        // Two tables, a mini-match of 20 games each.
        assert_eq!(games.len(), 40, "{r}");
        for g in games {
            assert_eq!(g["state"], "done", "{g}");
        }
        last_finish = games
            .iter()
            .map(|g| g["finished_at"].as_str().unwrap().to_string())
            .max()
            .unwrap();
        assert_eq!(r["finished"], true, "{r}");
    }
}

/// The API's standings and pairings are the league Swiss's of the same
/// games; each round hands out 3 points (two tables and a bye).
fn assert_standings_are_the_leagues(server: &Server, dir: &Path, e: &serde_json::Value) {
    let (plan, state) = league_swiss(server, dir, e);
    assert_eq!(state.finished_rounds(), 3);
    let want_pairs: Vec<Vec<Vec<String>>> = state
        .rounds
        .iter()
        .map(|r| {
            r.pairs
                .iter()
                .map(|&(a, b)| vec![plan.bots[a].clone(), plan.bots[b].clone()])
                .collect()
        })
        .collect();
    assert_eq!(pairs_of(e), want_pairs, "{e}");
    let api = e["standings"].as_array().unwrap();
    let want = state.standings();
    assert_eq!(api.len(), want.len(), "{e}");
    for (a, w) in api.iter().zip(&want) {
        assert_eq!(a["player"], plan.bots[w.bot], "{e}");
        for (k, v) in [
            ("score", w.score),
            ("buchholz", w.buchholz),
            ("sonneborn_berger", w.sonneborn_berger),
        ] {
            assert!((a[k].as_f64().unwrap() - v).abs() < 1e-9, "{k}: {a} vs {v}");
        }
    }
    let total: f64 = want.iter().map(|s| s.score).sum();
    assert!((total - 9.0).abs() < 1e-9, "{total}: {e}");
}

/// The page and the listing show the event: its standings in rank
/// order, each round's tables and bye.
fn assert_pages_show_it(server: &Server, e: &serde_json::Value) {
    let (status, page) = server.call("GET", "/tournaments/cup", None, b"");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("id=\"standings\""), "{page}");
    let mut at = 0;
    for s in e["standings"].as_array().unwrap() {
        let p = s["player"].as_str().unwrap();
        let found = page[at..]
            .find(&format!("<td>{p}</td>"))
            .unwrap_or_else(|| panic!("{p} not in rank order on the page:\n{page}"));
        at += found;
    }
    for (i, r) in e["round_list"].as_array().unwrap().iter().enumerate() {
        assert!(page.contains(&format!("id=\"round-{}\"", i + 1)), "{page}");
        assert!(
            page.contains(&format!("bye: {}", r["bye"].as_str().unwrap())),
            "{page}"
        );
        for p in &pairs_of(e)[i] {
            assert!(page.contains(&p.join(" – ")), "{p:?} not on:\n{page}");
        }
    }
    let (status, list) = server.call("GET", "/tournaments", None, b"");
    assert_eq!(status, 200);
    assert!(
        list.contains(">cup</a>") && list.contains("result-finished"),
        "{list}"
    );
    let api = server.json("/api/tournaments");
    assert_eq!(api["events"][0]["name"], "cup", "{api}");
    let (status, body) = server.call("GET", "/api/tournaments/nope", None, b"");
    assert_eq!(status, 404, "{body}");
}

#[test]
fn a_swiss_event_plays_its_rounds_through_the_queue_and_survives_a_kill() {
    let tmp = tempfile::tempdir().unwrap();
    swiss_event(tmp.path(), None);
}

#[test]
fn on_postgresql_a_swiss_event_plays_its_rounds_and_survives_a_kill() {
    let Some(url) = common::postgres("on_postgresql_a_swiss_event") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    swiss_event(tmp.path(), Some(url));
}

/// The event of five versions, three rounds and mini-matches of 20
/// games, killed mid-round, on a ladder in `dir` with the store `db`
/// (SQLite when `None`).
fn swiss_event(dir: &Path, db: Option<String>) {
    let mut server = server(dir);
    server.db = db;
    let owner = server.add_user("olga");
    server.start();
    for name in ["ant", "bee", "cat", "dog", "eel"] {
        server.submit_ok(&owner, &bot(dir, name));
    }
    let (file, db) = (server.file.to_str().unwrap().to_string(), server.db_url());
    // `arena serve LADDER --db URL FLAG ARGS...`, the organiser's command.
    let organiser = |flag: &str, args: &[&str]| {
        let mut all = vec!["serve", &file, "--db", &db, flag];
        all.extend(args);
        common::arena(dir, &all)
    };

    // Bad requests are refused, naming the problem; nothing is started.
    let out = organiser("--start-swiss", &["cup", "--games-per-pairing", "3"]);
    assert!(!out.status.success(), "{}", common::text(&out));
    assert!(
        common::text(&out).contains("must be even"),
        "{}",
        common::text(&out)
    );
    let out = organiser("--start-swiss", &["bad name"]);
    assert!(
        common::text(&out).contains("event name `bad name`"),
        "{}",
        common::text(&out)
    );
    assert_eq!(
        server.json("/api/tournaments")["events"],
        serde_json::json!([])
    );

    let out = organiser(
        "--start-swiss",
        &["cup", "--rounds", "3", "--games-per-pairing", "20"],
    );
    let said = common::text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("event `cup` started: a Swiss of 3 rounds among 5 versions"),
        "{said}"
    );
    let out = organiser("--start-swiss", &["cup"]);
    assert!(
        common::text(&out).contains("exists already"),
        "{}",
        common::text(&out)
    );

    // Killed in the middle of a round past the first: some of its games
    // committed, not all.
    let before = server.wait(
        "a round past the first in play",
        Duration::from_millis(50),
        || server.json("/api/tournaments/cup"),
        |e| {
            let rounds = e["round_list"].as_array().unwrap();
            let Some(last) = rounds.last() else {
                return false;
            };
            let done = last["games"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|g| g["state"] == "done")
                .count();
            e["rounds_finished"].as_u64() >= Some(1) && last["finished"] == false && done >= 1
        },
    );
    server.kill();
    server.start();
    let after = server.wait(
        "the event finished",
        Duration::from_millis(300),
        || server.json("/api/tournaments/cup"),
        |e| e["status"] == "finished",
    );
    // The restart pairs every round paired before the kill the same.
    let k = before["round_list"].as_array().unwrap().len();
    assert_eq!(
        pairs_of(&before)[..],
        pairs_of(&after)[..k],
        "{before}\n{after}"
    );
    assert_rounds_are_swiss(&after);
    assert_standings_are_the_leagues(&server, dir, &after);
    assert_pages_show_it(&server, &after);
    assert!(!server.log().contains("stored as"), "{}", server.log());
    // A second event, cancelled by the organiser: its pending games are
    // dropped; a finished event cannot be.
    let out = organiser(
        "--start-swiss",
        &["cup2", "--rounds", "2", "--games-per-pairing", "200"],
    );
    assert!(out.status.success(), "{}", common::text(&out));
    let out = organiser("--cancel-event", &["cup2"]);
    assert!(out.status.success(), "{}", common::text(&out));
    let out = organiser("--cancel-event", &["cup"]);
    assert!(
        common::text(&out).contains("event `cup` is finished already"),
        "{}",
        common::text(&out)
    );
    let e = server.wait(
        "cup2 cancelled, nothing of it queued",
        Duration::from_millis(300),
        || server.json("/api/tournaments/cup2"),
        |e| e["games_queued"] == 0,
    );
    assert_eq!(
        (&e["status"], &e["detail"]),
        (
            &serde_json::json!("cancelled"),
            &serde_json::json!("cancelled by the organiser")
        ),
        "{e}"
    );
    // The event's games count in the ladder's ratings like any game.
    let s = server.wait(
        "the event's games in the standings",
        Duration::from_millis(300),
        || server.json("/api/standings"),
        |s| s["games"].as_u64().unwrap_or(0) >= 120,
    );
    assert!(s["games"].as_u64().unwrap() >= 120, "{s}");
}
