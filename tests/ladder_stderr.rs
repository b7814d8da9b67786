//! Each bot's stderr per game, for its owner (issue 48, docs/ladder.md
//! "Each game's stderr"): the real `arena serve` on 127.0.0.1:0 and real
//! bots. `bots/chatty-python` writes a line at game start and one per
//! request naming the request's ply; its owner reads each line beside the
//! turn it was written in, through `GET /api/games/ID/stderr`, whether a
//! worker (`arena worker`, uploading it with the game) or the server
//! played the game; another owner is refused (403), and no token is 401.
//! With a cap of 1 KiB (`stderr_kb = 1`) and long lines, what is kept
//! stays under the cap and the rest is counted as truncated; a worker's
//! upload over the cap is refused (422).

use crate::common;

use common::ladder::{bot_copy, honest_game, Claimed, Honest, Server, Worker};
use std::path::Path;
use std::time::Duration;

/// A ladder of kisolo where alice's `chatty` (bots/chatty-python, each
/// request's line padded with `pad` dots) meets bob's `quiet`
/// (bots/random-rust), `stderr_kb` as given; played by a worker
/// (`--local-games 0`) or by the server. Returns the server, both tokens
/// and the first finished game's id and chatty's seat in it.
struct Played {
    server: Server,
    alice: String,
    bob: String,
    /// The worker's token.
    wtoken: String,
    game: String,
    seat: usize,
    _worker: Option<Worker>,
}

fn play(dir: &Path, by_worker: bool, stderr_kb: &str, pad: usize) -> Played {
    let mut server = Server::new(
        dir,
        "name = \"stderr-ladder\"\nseed = 3\nvariants = [\"kisolo\"]\nmax_plies = 200",
        stderr_kb,
    );
    let alice = server.add_user("alice");
    let bob = server.add_user("bob");
    let wtoken = server.add("--add-worker", "w1");
    if by_worker {
        server.extra = vec!["--local-games".into(), "0".into()];
    }
    server.start();
    let padded = move |t: String| t.replace("PAD = 0", &format!("PAD = {pad}"));
    server.submit_ok(&alice, &bot_copy(dir, "chatty-python", "chatty", &padded));
    server.submit_ok(&bob, &bot_copy(dir, "random-rust", "quiet", &|t| t));
    let w = by_worker.then(|| server.worker(&wtoken, "w", &[]));
    // A game of 20 plies or more: many lines.
    let long = |v: &serde_json::Value| {
        v["games"]
            .as_array()
            .and_then(|g| g.iter().find(|r| r["plies"].as_u64() >= Some(20)))
            .cloned()
    };
    let games = server.wait(
        "a finished game of 20 plies",
        Duration::from_millis(300),
        || server.json("/api/games?limit=100"),
        |v| long(v).is_some(),
    );
    let row = &long(&games).unwrap();
    let game = row["game_id"].as_str().unwrap().to_string();
    let seat = match row["seat0"].as_str().unwrap().starts_with("chatty@") {
        true => 0,
        false => 1,
    };
    Played {
        server,
        alice,
        bob,
        wtoken,
        game,
        seat,
        _worker: w,
    }
}

/// The owner reads the seat's lines, each beside its turn; another owner
/// and a worker are refused, no token is 401.
fn owner_reads_each_line_beside_its_turn(p: &Played) {
    let s = &p.server;
    let path = format!("/api/games/{}/stderr?seat={}", p.game, p.seat);
    let (status, body) = s.call("GET", &path, Some(&p.alice), b"");
    assert_eq!(status, 200, "{body}\n{}", s.log());
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let seat = &v["seats"][0];
    assert_eq!(seat["seat"], p.seat);
    assert!(seat["player"].as_str().unwrap().starts_with("chatty@"));
    let lines = seat["lines"].as_array().unwrap();
    assert!(lines.len() > 3, "{body}");
    // Its game_start line: at the start, or (when the first request went
    // out before the bot had written it) at its first turn. (Before it
    // may come what the bot wrote on the previous game's game_end: the
    // bot is stopped between games, and writes it once started again.)
    let start = format!("game_start {} seat {}", p.game, p.seat);
    let at = lines
        .iter()
        .position(|l| l["text"] == start.as_str())
        .unwrap_or_else(|| panic!("no `{start}`: {body}"));
    assert!(
        lines[at]["turn"] == "start" || lines[at]["turn"] == lines[at + 1]["turn"],
        "{body}"
    );
    // Every request's line sits at the ply the request named.
    let mut plies = 0;
    for l in lines {
        let text = l["text"].as_str().unwrap();
        if let Some(rest) = text.strip_prefix("ply ") {
            let ply: u64 = rest.split(':').next().unwrap().parse().unwrap();
            assert_eq!(l["turn"], ply, "{text} is beside turn {}", l["turn"]);
            plies += 1;
        }
    }
    assert!(plies > 1, "{body}");

    // Bob owns the other seat, not this one.
    let (status, body) = s.call("GET", &path, Some(&p.bob), b"");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("its owner's alone"), "{body}");
    // A worker's token is told it makes no owner's requests (it was
    // told the seat is not its bot).
    let (status, body) = s.call("GET", &path, Some(&p.wtoken), b"");
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("a worker token cannot make an owner's requests"),
        "{body}"
    );
    // Without a seat, bob gets his own: quiet wrote nothing.
    let (status, body) = s.call(
        "GET",
        &format!("/api/games/{}/stderr", p.game),
        Some(&p.bob),
        b"",
    );
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["seats"].as_array().unwrap().len(), 1, "{body}");
    assert_eq!(v["seats"][0]["seat"], 1 - p.seat, "{body}");
    assert_eq!(v["seats"][0]["lines"], serde_json::json!([]), "{body}");
    // The game's page has the owner's view (filled in by its script,
    // with the owner's token, from the API above).
    let (status, page) = s.call("GET", &format!("/games/{}", p.game), None, b"");
    assert_eq!(status, 200);
    assert!(page.contains("Your bot's stderr"), "{page}");
    assert!(page.contains("/stderr\""), "{page}");
    // No token; a seat the game lacks.
    let (status, _) = s.call("GET", &path, None, b"");
    assert_eq!(status, 401);
    let (status, body) = s.call(
        "GET",
        &format!("/api/games/{}/stderr?seat=2", p.game),
        Some(&p.alice),
        b"",
    );
    assert_eq!(status, 400, "{body}");
}

#[test]
fn a_worker_played_games_stderr_reaches_its_owner_beside_each_turn_and_no_one_else() {
    let tmp = tempfile::tempdir().unwrap();
    let p = play(tmp.path(), true, "", 0);
    owner_reads_each_line_beside_its_turn(&p);
}

#[test]
fn a_server_played_games_stderr_reaches_its_owner_beside_each_turn_and_no_one_else() {
    let tmp = tempfile::tempdir().unwrap();
    let p = play(tmp.path(), false, "", 0);
    owner_reads_each_line_beside_its_turn(&p);
}

/// With `stderr_kb = 1` and lines of 300 bytes, a worker keeps at most
/// 1 KiB of chatty's stderr per game and says how much it left out.
#[test]
fn the_cap_keeps_at_most_stderr_kb_per_game_and_marks_the_rest_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let p = play(tmp.path(), true, "stderr_kb = 1", 300);
    let path = format!("/api/games/{}/stderr?seat={}", p.game, p.seat);
    let (status, body) = p.server.call("GET", &path, Some(&p.alice), b"");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["cap_bytes"], 1024);
    let seat = &v["seats"][0];
    let kept: usize = seat["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap().len() + 1)
        .sum();
    assert!(kept <= 1024, "{kept} bytes kept: {body}");
    assert!(kept > 300, "{kept} bytes kept: {body}");
    assert!(seat["truncated_bytes"].as_u64().unwrap() > 300, "{body}");
}

/// The attack: a worker uploads a game with more stderr than the ladder's
/// cap (`stderr_kb = 1`), or a seat the game lacks: refused (422) without
/// a change; the same game with stderr under the cap is accepted, and its
/// owner reads it.
#[test]
fn a_workers_upload_with_more_stderr_than_the_cap_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = Server::new(
        dir,
        "name = \"stderr-ladder\"\nseed = 3\nvariants = [\"kisolo\"]\nmax_plies = 200",
        "stderr_kb = 1",
    );
    let alice = server.add_user("alice");
    let w = server.add("--add-worker", "w1");
    server.extra = vec!["--local-games".into(), "0".into()];
    server.start();
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "ra", &|t| t));
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "rb", &|t| t));
    let reg = serde_json::json!({
        "host": "test-host", "cores": 8, "jobs": 8, "arena_version": "0.1.0",
        "rules_version": mancala_arena::engine::RULES_VERSION,
        "record_format": mancala_arena::referee::record::FORMAT,
        "sandbox": ["namespaces"], "variants": ["kisolo"],
    });
    let (s, b) = server.call("POST", "/api/worker/register", Some(&w), reg.to_string());
    assert_eq!(s, 200, "{b}");
    let how = Honest {
        seed: 3,
        max_plies: 200,
        us: None,
        vary: false,
    };
    // A game claimed, played honestly: (its id, its upload with `stderr`).
    // Each refused upload ends its lease: each case claims again.
    let claim = || {
        let (s, b) = server.call("POST", "/api/worker/claim", Some(&w), r#"{"max":1}"#);
        assert_eq!(s, 200, "{b}");
        let Claimed {
            game_id,
            lease,
            players,
            ..
        } = Claimed::first_of(&b).unwrap_or_else(|| panic!("no game claimed: {b}"));
        let (row, lines) = honest_game(&game_id, &players, &how);
        let record = lines.join("\n") + "\n";
        let body = move |stderr: serde_json::Value| {
            serde_json::json!({"lease": lease, "row": row, "record": record, "stderr": stderr})
                .to_string()
        };
        (game_id, body)
    };
    let line = |turn: serde_json::Value, n: usize| serde_json::json!({"turn": turn, "text": "x".repeat(n)});
    for (stderr, says) in [
        (
            serde_json::json!([{"seat": 0, "lines": [line(0.into(), 600), line(2.into(), 600)]}]),
            "over the ladder's cap of 1024 bytes",
        ),
        (
            serde_json::json!([{"seat": 2, "lines": [line("start".into(), 10)]}]),
            "the game has 2 seats",
        ),
        (
            serde_json::json!([{"seat": 0, "lines": []}, {"seat": 0, "lines": []}]),
            "given twice",
        ),
    ] {
        let (game_id, body) = claim();
        let path = format!("/api/worker/games/{game_id}");
        let (s, b) = server.call("POST", &path, Some(&w), body(stderr));
        assert_eq!(s, 422, "{b}");
        assert!(b.contains(says), "{b}");
    }
    assert!(server.csv_games().is_empty(), "a refused upload counted");
    let (game_id, body) = claim();
    let (s, b) = server.call(
        "POST",
        &format!("/api/worker/games/{game_id}"),
        Some(&w),
        body(serde_json::json!([{"seat": 1, "lines": [line("end".into(), 1000)], "truncated_bytes": 77}])),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = server.call(
        "GET",
        &format!("/api/games/{game_id}/stderr?seat=1"),
        Some(&alice),
        b"",
    );
    assert_eq!(s, 200, "{b}");
    let v: serde_json::Value = serde_json::from_str(&b).unwrap();
    assert_eq!(v["seats"][0]["lines"][0]["turn"], "end", "{b}");
    assert_eq!(v["seats"][0]["truncated_bytes"], 77, "{b}");
}

/// The store keeps each seat's stderr per game, reads it back, and
/// deletes it with the records of the games finished before a time (the
/// pruning's hook, `delete_stderr_before`).
#[test]
fn the_store_keeps_stderr_per_game_and_seat_and_prunes_it_by_finish_time() {
    use mancala_arena::results::stderr::{SeatStderr, StderrLine, Turn};
    use mancala_arena::serve::store::{now, Db};
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", tmp.path().join("s.db").display());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = Db::open(&url).await.unwrap();
        let g = db.start_game(0, &[1, 2]).await.unwrap();
        assert!(db.finish_game(g, "{}", b"").await.unwrap());
        let seat = SeatStderr {
            seat: 1,
            lines: vec![StderrLine {
                turn: Turn::Ply(4),
                text: "thinking".into(),
            }],
            truncated_bytes: 3,
        };
        let empty = SeatStderr::default();
        db.keep_stderr(g, &[empty, seat.clone()]).await.unwrap();
        assert_eq!(db.stderr_of(g, 1).await.unwrap(), Some(seat));
        // Seat 0 wrote nothing: no row.
        assert_eq!(db.stderr_of(g, 0).await.unwrap(), None);
        assert_eq!(db.stderr_seats(g).await.unwrap().len(), 1);
        assert_eq!(
            db.delete_stderr_before("2000-01-01T00:00:00.000Z")
                .await
                .unwrap(),
            0
        );
        // A time after the game's finish.
        assert!(now().as_str() < "9999");
        assert_eq!(
            db.delete_stderr_before("9999-01-01T00:00:00.000Z")
                .await
                .unwrap(),
            1
        );
        assert_eq!(db.stderr_of(g, 1).await.unwrap(), None);
    });
}
