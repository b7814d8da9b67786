//! Records past the retention (`[ladder] record_days`, issue 48 item 2):
//! the real `arena serve` with real bots plays a set of games; the first
//! half are made older than the retention in the store (their finish
//! times moved back, in the same order); the server started again prunes
//! their records at once, and keeps their rows, so that the export, the
//! standings and the other games' records do not change.

use crate::common;

use common::ladder::{bot_copy, Server};
use mancala_arena::serve::store::Db;
use std::time::Duration;

const GAMES: usize = 24;

/// The standings' (bot, elo, low, high, games), in their order.
fn table(server: &Server) -> Vec<(String, String, String, String, u64)> {
    let s = server.json("/api/standings");
    s["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["bot"].as_str().unwrap().to_string(),
                format!("{:.6}", r["elo"].as_f64().unwrap()),
                format!("{:.6}", r["elo_low"].as_f64().unwrap()),
                format!("{:.6}", r["elo_high"].as_f64().unwrap()),
                r["games"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Waits until the last fit has every game.
fn fitted(server: &Server) {
    server.wait(
        "a fit of every game",
        Duration::from_millis(300),
        || server.json("/api/standings")["games"].as_u64().unwrap_or(0),
        |&n| n == GAMES as u64,
    );
}

#[test]
fn records_past_the_retention_are_pruned_and_their_rows_and_the_ratings_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = Server::new(
        dir,
        "name = \"prune-ladder\"\nseed = 7\nvariants = [\"kisolo\"]\nmax_plies = 1000",
        &format!("max_games = {GAMES}\nrecord_days = 1"),
    );
    let alice = server.add_user("alice");
    server.start();
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "rand-a", &|t| t));
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "rand-b", &|t| t));
    server.submit_ok(&alice, &bot_copy(dir, "greedy-rust", "greedy", &|t| t));
    server.wait(
        "the set of games played",
        Duration::from_millis(300),
        || server.json("/health")["games"].as_u64().unwrap_or(0),
        |&n| n == GAMES as u64,
    );
    fitted(&server);
    // Said, since nothing else shows that the ladder starts no more game.
    assert_eq!(server.json("/health")["max_games_played"], true);
    let log = server.log();
    assert!(
        log.contains(&format!("has played its max_games ({GAMES})")),
        "{log}"
    );
    let ids = server.csv_games();
    assert_eq!(ids.len(), GAMES);
    let (_, csv_before) = server.call("GET", "/api/games.csv", None, b"");
    let table_before = table(&server);
    let games_before: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| server.json(&format!("/api/games/{id}")))
        .collect();
    assert!(games_before
        .iter()
        .all(|g| !g["record"].as_array().unwrap().is_empty()));
    assert!(server.terminate().success(), "{}", server.log());

    // The first half (in the order they finished) finished in 2000: older
    // than a day. Their order among all stays the same.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let db = rt.block_on(Db::open(&server.db_url())).unwrap();
    let old: Vec<i64> = ids[..GAMES / 2]
        .iter()
        .map(|id| id.trim_start_matches("game-").parse().unwrap())
        .collect();
    for id in &old {
        rt.block_on(
            sqlx::query(
                "UPDATE games SET finished_at = '2000' || substr(finished_at, 5) WHERE id = $1",
            )
            .bind(id)
            .execute(db.write_pool()),
        )
        .unwrap();
    }
    assert_eq!(rt.block_on(db.records_kept()).unwrap(), (GAMES as i64, 0));
    drop(db);

    server.start();
    let db = rt.block_on(Db::open(&server.db_url())).unwrap();
    let half = GAMES as i64 / 2;
    server.wait(
        "the old records pruned",
        Duration::from_millis(300),
        || {
            let (kept, pruned) = rt.block_on(db.records_kept()).unwrap();
            format!("{kept} kept, {pruned} pruned")
        },
        |s| *s == format!("{half} kept, {half} pruned"),
    );
    for id in &old {
        assert_eq!(rt.block_on(db.record(*id)).unwrap(), None, "game {id}");
    }
    fitted(&server);
    // The rows, the export and the ratings are as they were.
    let (_, csv_after) = server.call("GET", "/api/games.csv", None, b"");
    assert_eq!(csv_after, csv_before);
    assert_eq!(table(&server), table_before);
    for (i, (id, before)) in ids.iter().zip(&games_before).enumerate() {
        let after = server.json(&format!("/api/games/{id}"));
        assert_eq!(after["row"], before["row"], "{id}");
        if i < GAMES / 2 {
            assert_eq!(after["record"], serde_json::json!([]), "{id}");
        } else {
            assert_eq!(after["record"], before["record"], "{id}");
        }
    }
    // Every record left is in the JSONL export, and no other.
    let (_, jsonl) = server.call("GET", "/api/games.jsonl", None, b"");
    for (i, id) in ids.iter().enumerate() {
        let there = jsonl.contains(&format!("\"{id}\""));
        assert_eq!(there, i >= GAMES / 2, "{id} in the JSONL export: {there}");
    }
    // A pruned game's page still shows its row.
    let (status, page) = server.call("GET", &format!("/games/{}", ids[0]), None, b"");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(&ids[0]), "{page}");
    // No second prune of the same records, and no game added.
    assert_eq!(server.csv_games(), ids);
}
