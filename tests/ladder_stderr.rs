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

mod common;

use common::ladder::Server;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ARENA: &str = env!("CARGO_BIN_EXE_arena");

/// A copy of the repository's bot folder `from`, named `name`, with
/// `edit` applied to each file's text.
fn bot_copy(dir: &Path, from: &str, name: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bots")
        .join(from);
    let to = dir.join("upload").join(name);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        if e.path().is_file() {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let text = text.replace(&format!("name = \"{from}\""), &format!("name = \"{name}\""));
            std::fs::write(to.join(e.file_name()), edit(text)).unwrap();
        }
    }
    to
}

/// `arena worker`, stopped (SIGKILL) when dropped.
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn worker(server: &Server, token: &str) -> Worker {
    let dir = server.dir.join("w");
    std::fs::create_dir_all(&dir).unwrap();
    Command::new(ARENA)
        .args(["worker", "--server", &server.url, "--token", token])
        .args(["-j", "1", "--cache"])
        .arg(dir.join("cache"))
        .current_dir(&dir)
        .stdout(Stdio::from(common::ladder::log_file(&dir.join("out.log"))))
        .stderr(Stdio::from(common::ladder::log_file(&dir.join("err.log"))))
        .spawn()
        .map(Worker)
        .unwrap()
}

/// A ladder of kisolo where alice's `chatty` (bots/chatty-python, each
/// request's line padded with `pad` dots) meets bob's `quiet`
/// (bots/random-rust), `stderr_kb` as given; played by a worker
/// (`--local-games 0`) or by the server. Returns the server, both tokens
/// and the first finished game's id and chatty's seat in it.
struct Played {
    server: Server,
    alice: String,
    bob: String,
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
    let w = by_worker.then(|| worker(&server, &wtoken));
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
