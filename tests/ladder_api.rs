//! The ladder's API keeps its word (issue 48, item 5), against the real
//! `arena serve` on 127.0.0.1:0 with Python bots uploaded by `arena
//! submit` and playing kisolo and 3-player Tricala: every games filter is
//! honoured (the rows it keeps are checked field by field here, and the
//! CSV export keeps the same rows), an unknown bot, version or game is a
//! 404, any other value a filter cannot take a 400 that names those it
//! can; the ladder file's variant names and the rows' are both taken; the
//! live feed numbers and names its events and resumes after
//! `Last-Event-ID`; `/health` counts the games in flight.

use crate::common;

use common::ladder::{python_bot, Server};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// A bot `fb` that plays at random, except in every fourth ladder game
/// (`game-N`, N a multiple of 4: never in check-bot's `check-N`), where
/// its first reply is an option that is never legal: it forfeits
/// (`illegal`) on the ladder and passes its check.
fn faulty_bot(dir: &Path) -> PathBuf {
    let folder = python_bot(dir, "random-python", "fb", "faulty");
    let script = std::fs::read_to_string(folder.join("bot.py")).unwrap();
    let script = script
        .replace(
            "        elif kind == \"game_start\":\n",
            "        elif kind == \"game_start\":\n            game = str(message.get(\"game_id\", \"\"))\n",
        )
        .replace(
            "            send({\"type\": \"reply\", \"option\": choose(message)})",
            "            if game.startswith(\"game-\") and int(game[5:]) % 4 == 0:\n                send({\"type\": \"reply\", \"option\": \"never-legal\"})\n            else:\n                send({\"type\": \"reply\", \"option\": choose(message)})",
        )
        .replace("def main():\n", "def main():\n    game = \"\"\n");
    assert!(
        script.contains("never-legal") && script.contains("game = str("),
        "{script}"
    );
    std::fs::write(folder.join("bot.py"), script).unwrap();
    folder
}

/// The ladder: kisolo and 3-player Tricala; `rp` in two versions (the
/// first retired by the second), `hp` and `rb`; returns the server once
/// games of both variants are in.
fn ladder(dir: &Path, db: Option<String>) -> Server {
    let mut server = Server::new(
        dir,
        "name = \"api\"\nseed = 3\nvariants = [\"kisolo\", \"tricala3\"]",
        "uploads_per_hour = 100",
    );
    server.db = db;
    let token = server.add_user("alice");
    server.start();
    server.submit_ok(&token, &python_bot(dir, "random-python", "rp", "one"));
    server.submit_ok(&token, &python_bot(dir, "heuristic-python", "hp", "x"));
    server.submit_ok(&token, &python_bot(dir, "random-python", "rb", "x"));
    server.submit_ok(&token, &faulty_bot(dir));
    server.wait(
        "games of rp@1",
        Duration::from_millis(300),
        || server.json("/api/games?bot=rp@1&limit=5"),
        |v| v["games"].as_array().is_some_and(|g| g.len() >= 5),
    );
    // A new version that replaces the old one at once (no test between
    // them): the old one is retired.
    server.submit_ok_with(
        &token,
        &python_bot(dir, "random-python", "rp", "two!"),
        &["--no-test"],
    );
    for variant in ["kisolo", "tricala3"] {
        server.wait(
            &format!("20 games of {variant} with rp@2"),
            Duration::from_millis(300),
            || server.json(&format!("/api/games?bot=rp@2&variant={variant}&limit=20")),
            |v| v["games"].as_array().is_some_and(|g| g.len() >= 20),
        );
    }
    server
}

fn ids(v: &Value) -> Vec<String> {
    v["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["game_id"].as_str().unwrap().to_string())
        .collect()
}

fn seats(g: &Value) -> Vec<String> {
    ["seat0", "seat1", "seat2"]
        .iter()
        .filter_map(|s| g[s].as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The seat of bot `bot` (any version) in `g`.
fn seat_of(g: &Value, bot: &str) -> usize {
    seats(g)
        .iter()
        .position(|s| s.rsplit_once('@').unwrap().0 == bot)
        .unwrap_or_else(|| panic!("{bot} is not seated in {g}"))
}

/// `GET path`'s status and error message, which must name every one of
/// `words`.
fn refused(server: &Server, path: &str, status: u16, words: &[&str]) {
    let (got, body) = server.call("GET", path, None, b"");
    assert_eq!(got, status, "{path}: {body}");
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    let message = v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{path}: {body}"));
    for w in words {
        assert!(message.contains(w), "{path}: `{w}` not in {message}");
    }
}

#[test]
fn the_games_filters_are_honoured_or_refused_and_the_feed_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    keeps_its_word(&ladder(tmp.path(), None));
}

/// The same on PostgreSQL (its own queries' words: the row comparison of
/// the pages, the leases counted).
#[test]
fn on_postgresql_the_games_filters_are_honoured_or_refused() {
    let Some(url) = common::postgres("on_postgresql_the_games_filters") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    keeps_its_word(&ladder(tmp.path(), Some(url)));
}

fn keeps_its_word(server: &Server) {
    unknown_bots_versions_and_games_are_404(server);
    values_a_filter_cannot_take_are_400_naming_those_it_can(server);
    each_filter_keeps_only_its_games(server);
    both_names_of_a_variant_are_taken(server);
    a_fault_leads_to_its_games(server);
    the_feed_names_numbers_and_resumes(server);
    let h = server.json("/health");
    assert_eq!(
        h["in_flight"].as_u64(),
        Some(h["in_flight_server"].as_u64().unwrap() + h["in_flight_workers"].as_u64().unwrap()),
        "{h}"
    );
}

fn unknown_bots_versions_and_games_are_404(server: &Server) {
    refused(server, "/api/games?bot=nosuch", 404, &["nosuch"]);
    refused(
        server,
        "/api/games?bot=rp@9",
        404,
        &["rp", "no version 9", "1, 2"],
    );
    refused(
        server,
        "/api/games?bot=rp&version=9",
        404,
        &["no version 9"],
    );
    refused(server, "/api/games?opponent=nosuch", 404, &["nosuch"]);
    refused(server, "/api/games?after=99999999", 404, &["99999999"]);
    refused(server, "/api/games.csv?bot=nosuch", 404, &["nosuch"]);
    refused(server, "/api/games.jsonl?bot=nosuch", 404, &["nosuch"]);
    refused(server, "/api/games.pgn?opponent=nosuch", 404, &["nosuch"]);
    refused(server, "/api/bots/nosuch", 404, &["nosuch"]);
    let (status, page) = server.call("GET", "/games?bot=nosuch", None, b"");
    assert_eq!(status, 404, "{page}");
    assert!(page.contains("no bot named `nosuch`"), "{page}");
    // A version's page, for a version the bot has not: 404 as its API
    // (it showed the bot's page).
    let (status, page) = server.call("GET", "/bots/rp@9", None, b"");
    assert_eq!(status, 404, "{page}");
    assert!(page.contains("no version `9`"), "{page}");
    let (status, page) = server.call("GET", "/bots/rp@2", None, b"");
    assert_eq!(status, 200, "{page}");
}

fn values_a_filter_cannot_take_are_400_naming_those_it_can(server: &Server) {
    let reasons = ["store", "max_plies", "timeout", "illegal", "crash"];
    for (path, words) in [
        (
            "/api/games?variant=chess",
            &["chess", "kisolo", "tricala-3p", "tricala3"][..],
        ),
        ("/api/games?result=win", &["needs `bot`"]),
        (
            "/api/games?bot=rp&result=maybe",
            &["maybe", "win", "draw", "loss"],
        ),
        ("/api/games?reason=checkmate", &reasons),
        (
            "/api/games?forfeit=sometimes",
            &["any", "none", "bot", "opponent"],
        ),
        ("/api/games?forfeit=bot", &["needs `bot`"]),
        ("/api/games?order=sideways", &["oldest", "newest"]),
        ("/api/games?limit=0", &["1 to 10000"]),
        ("/api/games?limit=many", &["1 to 10000"]),
        ("/api/games?after=yesterday", &["game-123"]),
        ("/api/games?version=1", &["needs `bot`"]),
        ("/api/games?bot=rp@1&version=1", &["version"]),
        ("/api/games?bot=rp&version=one", &["whole number"]),
        (
            "/api/games?colour=red",
            &["colour", "bot", "opponent", "variant", "forfeit"],
        ),
        ("/api/games?bot=rp&bot=hp", &["twice"]),
        ("/api/games.csv?variant=chess", &["kisolo"]),
        ("/api/games.jsonl?reason=checkmate", &["timeout"]),
        (
            "/api/standings?variant=chess",
            &["chess", "kisolo", "tricala-3p"],
        ),
        ("/api/standings?colour=red", &["variant"]),
    ] {
        refused(server, path, 400, words);
    }
    let (status, page) = server.call("GET", "/games?variant=chess", None, b"");
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("tricala-3p"), "{page}");
    let (status, page) = server.call("GET", "/?variant=chess", None, b"");
    assert_eq!(status, 400, "{page}");
}

fn each_filter_keeps_only_its_games(server: &Server) {
    // The 200 oldest games of rp: the filters below list oldest first, so
    // each of these is in their first pages whatever finishes meanwhile.
    let mine = server.wait(
        "200 games of rp",
        Duration::from_millis(300),
        || server.json("/api/games?bot=rp&limit=200"),
        |v| v["games"].as_array().is_some_and(|g| g.len() == 200),
    );
    let mine: Vec<Value> = mine["games"].as_array().unwrap().clone();
    assert_eq!(mine.len(), 200);
    let first: BTreeSet<String> = mine
        .iter()
        .map(|g| g["game_id"].as_str().unwrap().to_string())
        .collect();
    let of = |q: &str| -> Vec<Value> {
        let v = server.json(&format!("/api/games?{q}&limit=10000"));
        v["games"].as_array().unwrap().clone()
    };
    let within = |games: &[Value]| -> BTreeSet<String> {
        games
            .iter()
            .map(|g| g["game_id"].as_str().unwrap().to_string())
            .filter(|id| first.contains(id))
            .collect()
    };
    // bot: every game seats rp; a version: that one.
    assert!(mine
        .iter()
        .all(|g| seats(g).iter().any(|s| s.starts_with("rp@"))));
    for (q, version) in [("bot=rp@1", "rp@1"), ("bot=rp&version=2", "rp@2")] {
        let games = of(q);
        assert!(!games.is_empty(), "{q}");
        assert!(
            games
                .iter()
                .all(|g| seats(g).contains(&version.to_string())),
            "{q}"
        );
    }
    // opponent: every game seats both.
    let games = of("bot=rp&opponent=hp");
    assert!(!games.is_empty());
    assert!(games.iter().all(|g| {
        let s = seats(g);
        s.iter().any(|x| x.starts_with("rp@")) && s.iter().any(|x| x.starts_with("hp@"))
    }));
    // result: win, draw and loss split rp's games, each by its seat's score.
    let mut split = BTreeSet::new();
    for (word, keep) in [
        ("win", (|x: f64| x > 0.5) as fn(f64) -> bool),
        ("draw", |x: f64| x == 0.5),
        ("loss", |x: f64| x < 0.5),
    ] {
        let games = of(&format!("bot=rp&result={word}"));
        for g in &games {
            let seat = seat_of(g, "rp");
            let score = g[format!("score{seat}")].as_f64().unwrap();
            assert!(keep(score), "{word}: {g}");
        }
        let these = within(&games);
        assert!(split.is_disjoint(&these), "{word} overlaps");
        split.extend(these);
    }
    assert_eq!(split, first, "win, draw and loss do not cover rp's games");
    // forfeit: none and any split them; by the bot, its seat forfeited.
    let none = of("bot=rp&forfeit=none");
    let any = of("bot=rp&forfeit=any");
    assert!(none.iter().all(|g| g["offender"].is_null()));
    assert!(any.iter().all(|g| !g["offender"].is_null()));
    let (a, b) = (within(&none), within(&any));
    assert!(a.is_disjoint(&b));
    assert_eq!(a.union(&b).cloned().collect::<BTreeSet<_>>(), first);
    for g in of("bot=rp&forfeit=bot") {
        assert_eq!(
            g["offender"].as_u64(),
            Some(seat_of(&g, "rp") as u64),
            "{g}"
        );
    }
    // reason: each game ends for it.
    let reason = mine[0]["reason"].as_str().unwrap();
    let games = of(&format!("bot=rp&reason={reason}"));
    assert!(games.iter().any(|g| g["game_id"] == mine[0]["game_id"]));
    assert!(games.iter().all(|g| g["reason"] == reason));
    // order=newest: the latest first; `next` goes on from there.
    let newest = server.json("/api/games?bot=rp&order=newest&limit=5");
    let page2 = server.json(&format!(
        "/api/games?bot=rp&order=newest&limit=5&after={}",
        newest["next"].as_i64().unwrap()
    ));
    let (n1, n2) = (ids(&newest), ids(&page2));
    // The latest first (by when they finished): page 2 is what follows
    // page 1 in the whole listing, newer games on top of it meanwhile.
    let whole = ids(&server.json("/api/games?bot=rp&order=newest&limit=10000"));
    let at = whole
        .iter()
        .position(|id| *id == n1[4])
        .expect("page 1's last");
    assert_eq!(
        whole[at - 4..=at],
        n1[..],
        "page 1 is not in the listing's order"
    );
    assert_eq!(
        whole[at + 1..at + 6],
        n2[..],
        "page 2 does not follow page 1"
    );
    let oldest = ids(&server.json("/api/games?bot=rp&limit=10000"));
    let (a, b) = (whole.iter().position(|id| *id == n2[0]).unwrap(), at);
    assert!(
        oldest.iter().position(|id| *id == whole[a]) < oldest.iter().position(|id| *id == whole[b]),
        "newest is not oldest reversed"
    );
    // The CSV export keeps the same games as the API (it filtered
    // nothing before issue 48): rp's, in the same order.
    let (status, csv) = server.call("GET", "/api/games.csv?bot=rp&variant=kisolo", None, b"");
    assert_eq!(status, 200);
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let header = r.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(&row[col("variant")], "kisolo");
        assert!(
            ["seat0", "seat1", "seat2"]
                .iter()
                .any(|s| row[col(s)].starts_with("rp@")),
            "{row:?}"
        );
    }
    let listed = ids(&server.json("/api/games?bot=rp&variant=kisolo&limit=10000"));
    let exported: Vec<String> = rows.iter().map(|r| r[0].to_string()).collect();
    let n = exported.len().min(listed.len());
    assert_eq!(exported[..n], listed[..n]);
    let (_, all) = server.call("GET", "/api/games.csv", None, b"");
    assert!(
        all.lines().count() > csv.lines().count(),
        "the filter kept every row"
    );
    // An export that keeps no game (random bots never stall) is its
    // header alone (pandas and `arena rate` take an empty file for no
    // table), the same header.
    let (status, none) = server.call("GET", "/api/games.csv?bot=rp&reason=stall", None, b"");
    assert_eq!(status, 200, "{none}");
    assert_eq!(
        none.lines().collect::<Vec<_>>(),
        [all.lines().next().unwrap()]
    );
    assert_eq!(none.lines().next(), csv.lines().next());
}

fn both_names_of_a_variant_are_taken(server: &Server) {
    let a = server.json("/api/games?variant=tricala3&limit=50");
    let b = server.json("/api/games?variant=tricala-3p&limit=50");
    // Games finish meanwhile: the shorter is the start of the longer.
    let (ia, ib) = (ids(&a), ids(&b));
    let n = ia.len().min(ib.len());
    assert!(n >= 20 && ia[..n] == ib[..n], "{ia:?} against {ib:?}");
    assert!(a["games"]
        .as_array()
        .unwrap()
        .iter()
        .all(|g| g["players"] == 3));
    // `tricala` is the 2-player game alone, as in the standings, which
    // this ladder does not play (it named the 3-player games too, since
    // their rows' `variant` says `tricala`).
    let (status, body) = server.call("GET", "/api/games?variant=tricala", None, b"");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("tricala-3p (also tricala3)"), "{body}");
    let k = server.json("/api/games?variant=kisolo&limit=50");
    assert!(k["games"]
        .as_array()
        .unwrap()
        .iter()
        .all(|g| g["players"] == 2 && g["variant"] == "kisolo"));
    let s = server.wait(
        "the standings of tricala-3p",
        Duration::from_millis(300),
        || server.json("/api/standings?variant=tricala3"),
        |s| s["ratings"].as_array().is_some_and(|r| !r.is_empty()),
    );
    assert_eq!(s["variant"], "tricala-3p");
    let t = server.json("/api/standings?variant=tricala-3p");
    assert_eq!(t["variant"], "tricala-3p");
    // Each version's status: rp@1 retired by rp@2, once a fit has taken
    // in rp@2's games (the standings are the ladder's last fit).
    let all = server.wait(
        "rp@2 in the standings",
        Duration::from_millis(300),
        || server.json("/api/standings"),
        |s| {
            s["ratings"]
                .as_array()
                .is_some_and(|r| r.iter().any(|r| r["bot"] == "rp@2"))
        },
    );
    let status = |p: &str| {
        all["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["bot"] == p)
            .map(|r| r["status"].clone())
    };
    assert_eq!(status("rp@1"), Some(Value::from("retired")), "{all}");
    assert_eq!(status("rp@2"), Some(Value::from("entered")), "{all}");
}

/// fb's faults: counted on its page, each count a link to the games
/// browser with the filter that lists them; the API's listing has only
/// games fb forfeited for that reason.
fn a_fault_leads_to_its_games(server: &Server) {
    let faults = server.wait(
        "fb to forfeit",
        Duration::from_millis(300),
        || server.json("/api/bots/fb"),
        |v| v["faults"]["illegal"].as_u64().is_some_and(|n| n >= 2),
    );
    let counted = faults["faults"]["illegal"].as_u64().unwrap();
    let (status, page) = server.call("GET", "/bots/fb", None, b"");
    assert_eq!(status, 200);
    let link = "/games?bot=fb&amp;reason=illegal&amp;forfeit=bot";
    assert!(
        page.contains(&format!("<a href=\"{link}\">")),
        "no link to fb's faults: {page}"
    );
    let listed = server.json("/api/games?bot=fb&reason=illegal&forfeit=bot&limit=10000");
    let games = listed["games"].as_array().unwrap();
    assert!(
        games.len() as u64 >= counted,
        "{counted} counted, {} listed",
        games.len()
    );
    for g in games {
        assert_eq!(g["reason"], "illegal", "{g}");
        assert_eq!(g["offender"].as_u64(), Some(seat_of(g, "fb") as u64), "{g}");
        let n: u64 = g["game_id"].as_str().unwrap()[5..].parse().unwrap();
        assert_eq!(n % 4, 0, "{g}");
    }
    let (status, page) = server.call("GET", &link.replace("&amp;", "&"), None, b"");
    assert_eq!(status, 200);
    // The page is fetched after the list, and the ladder plays on
    // meanwhile: one of the games listed is on it (not always the first).
    let shown = games.iter().any(|g| {
        let id = g["game_id"].as_str().unwrap();
        page.contains(&format!(">{id}</a>"))
    });
    assert!(shown && page.contains("illegal (by fb@1)"), "{page}");
}

/// One event of the feed: (id, event, data).
type Event = (Option<u64>, Option<String>, String);

/// Listens to the feed (from after `last`), its events on a channel.
fn listen(server: &Server, last: Option<u64>) -> mpsc::Receiver<Event> {
    let (tx, rx) = mpsc::channel();
    let url = format!("{}/api/events", server.url);
    std::thread::spawn(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
        let mut req = agent.get(&url);
        if let Some(n) = last {
            req = req.header("Last-Event-ID", &n.to_string());
        }
        let Ok(resp) = req.call() else { return };
        let reader = std::io::BufReader::new(resp.into_body().into_reader());
        let (mut id, mut event) = (None, None);
        for line in reader.lines() {
            let Ok(line) = line else { return };
            if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("event:") {
                event = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("data:") {
                if tx
                    .send((id.take(), event.take(), v.trim().to_string()))
                    .is_err()
                {
                    return;
                }
            }
        }
    });
    rx
}

fn next_event(rx: &mpsc::Receiver<Event>) -> Event {
    rx.recv_timeout(Duration::from_secs(120))
        .expect("an event of the feed")
}

fn the_feed_names_numbers_and_resumes(server: &Server) {
    // Events as they come: numbered one after the other, named as their
    // `type` says.
    let rx = listen(server, None);
    let mut seen = Vec::new();
    while seen.len() < 6 {
        let (id, event, data) = next_event(&rx);
        let v: Value = serde_json::from_str(&data).unwrap();
        let id = id.expect("an id");
        assert_eq!(event.as_deref(), v["type"].as_str(), "{data}");
        seen.push((id, data));
    }
    for w in seen.windows(2) {
        assert_eq!(w[1].0, w[0].0 + 1, "the ids are not consecutive");
    }
    drop(rx);
    // Resumed after the second: the third, fourth, ... again, the same.
    let rx = listen(server, Some(seen[1].0));
    for (id, data) in &seen[2..] {
        let (got, _, d) = next_event(&rx);
        assert_eq!((got, &d), (Some(*id), data), "the resumed feed differs");
    }
    // Resumed from before the oldest kept: told that some were lost, if
    // so many events went by; else the kept ones from the first.
    let rx = listen(server, Some(0));
    let (id, event, _) = next_event(&rx);
    match event.as_deref() {
        Some("lost") => assert_eq!(id, None),
        _ => assert_eq!(id, Some(1), "the feed does not resume from its first event"),
    }
    let (status, body) = {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut r = agent
            .get(format!("{}/api/events", server.url))
            .header("Last-Event-ID", "yesterday")
            .call()
            .unwrap();
        (
            r.status().as_u16(),
            r.body_mut().read_to_string().unwrap_or_default(),
        )
    };
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("Last-Event-ID"), "{body}");
}

/// The first event `rx` gives within `secs` seconds (keep-alives are
/// not events).
fn event_within(rx: &mpsc::Receiver<Event>, secs: u64, what: &str) -> Event {
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("{what}: no event within {secs} s"))
}

/// A bot's rating history (the bot page's "rating over time") outlives a
/// restart of the server: it was held in memory only, and a restart began
/// it again from one point.
#[test]
fn the_rating_history_outlives_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = Server::new(
        dir,
        "name = \"history\"\nseed = 3\nvariants = [\"kisolo\"]",
        "uploads_per_hour = 100",
    );
    let token = server.add_user("alice");
    server.start();
    server.submit_ok(&token, &python_bot(dir, "random-python", "ra", "one"));
    server.submit_ok(&token, &python_bot(dir, "random-python", "rb", "two"));
    let history = |server: &Server| -> Vec<Value> {
        let v = server.json("/api/bots/ra");
        v["versions"][0]["history"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let before = common::browser::wait_for("three points of ra's history", || {
        let h = history(&server);
        (h.len() >= 3).then_some(h)
    });
    // One point more: those read were kept in the store by then (the
    // fitting thread keeps a fit's points before it fits again).
    common::browser::wait_for("a point more of ra's history", || {
        (history(&server).len() > before.len()).then_some(())
    });
    server.kill();
    server.start();
    let after = history(&server);
    assert!(after.len() >= before.len(), "{before:?} then {after:?}");
    assert_eq!(after[..before.len()], before[..], "{after:?}");
}

#[test]
fn a_feed_resumed_across_a_restart_of_the_server_is_told_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = Server::new(
        dir,
        "name = \"feed\"\nseed = 3\nvariants = [\"kisolo\"]",
        "uploads_per_hour = 100",
    );
    let token = server.add_user("alice");
    server.start();
    let rx = listen(&server, None);
    server.submit_ok(&token, &python_bot(dir, "random-python", "rp", "one"));
    let mut last = None;
    while let Ok((id, _, _)) = rx.recv_timeout(Duration::from_secs(1)) {
        last = id.or(last);
    }
    let last = last.expect("the upload's steps in the feed");
    drop(rx);
    server.kill();
    server.start();
    // A number of the earlier run, and one this run is far from: `lost`
    // at once, then this run's events.
    for (n, resume) in [last, 9_000_000_000_000_000].into_iter().enumerate() {
        let rx = listen(&server, Some(resume));
        let (id, event, _) = event_within(&rx, 20, &format!("resumed from {resume}"));
        assert_eq!(
            (id, event.as_deref()),
            (None, Some("lost")),
            "resumed from {resume}"
        );
        server.submit_ok(
            &token,
            &python_bot(dir, "random-python", &format!("rb{n}"), "x"),
        );
        let (id, _, data) = event_within(&rx, 60, "an event after `lost`");
        assert!(
            id.is_some_and(|id| id > last),
            "{id:?} after {last}: {data}"
        );
    }
}
