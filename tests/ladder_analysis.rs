//! A game's analysis on the ladder, on demand (issue 51, docs/ladder.md
//! "Analysis of a game"): the real `arena serve` on 127.0.0.1:0 plays
//! two owners' real bots; anyone reads `GET /api/games/ID/analysis`, only
//! an owner of one of the game's bots may ask for one (401 without a
//! token, 403 for another owner or a worker, 404 for no such game). Asked
//! for, it runs and is kept: a verdict per decision of the game's record,
//! the same as `arena analyse --no-exact` judges. In headless Chromium,
//! the owner asks from the game's page, which then shows each decision's
//! verdict beside it; a screenshot is written for a person to look at.
//! An owner past the ladder's `analyses_per_hour` is refused (429).

use crate::common;

use common::browser::{wait_for, Browser};
use common::ladder::{bot_copy, Server};
use serde_json::Value;
use std::time::Duration;

#[test]
fn an_owner_asks_for_a_games_analysis_and_its_page_shows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = Server::new(
        dir,
        "name = \"analysis-ladder\"\nseed = 3\nvariants = [\"hackaback\"]\nmax_plies = 200",
        "analyses_per_hour = 1\nanalysis_seconds = 2",
    );
    let alice = server.add_user("alice");
    let bob = server.add_user("bob");
    let carol = server.add_user("carol");
    let wtoken = server.add("--add-worker", "w1");
    server.start();
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "ra", &|t| t));
    server.submit_ok(&bob, &bot_copy(dir, "random-rust", "rb", &|t| t));
    let games = server.wait(
        "three finished games",
        Duration::from_millis(300),
        || server.json("/api/games?limit=10"),
        |v| v["games"].as_array().is_some_and(|g| g.len() >= 3),
    );
    let ids: Vec<String> = games["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["game_id"].as_str().unwrap().to_string())
        .collect();
    let (game, other, third) = (&ids[0], &ids[1], &ids[2]);
    let path = format!("/api/games/{game}/analysis");

    // Nothing yet; anyone may read that.
    let v = server.json(&path);
    assert_eq!(v["state"], "none", "{v}");
    // Asking: only an owner of one of the game's bots.
    let (s, body) = server.call("POST", &path, None, b"");
    assert_eq!(s, 401, "{body}");
    let (s, body) = server.call("POST", &path, Some(&carol), b"");
    assert_eq!(s, 403, "{body}");
    assert!(body.contains("is your bot"), "{body}");
    let (s, body) = server.call("POST", &path, Some(&wtoken), b"");
    assert_eq!(s, 403, "{body}");
    assert!(
        body.contains("a worker token cannot make an owner's requests"),
        "{body}"
    );
    let (s, body) = server.call("POST", "/api/games/game-999999/analysis", Some(&alice), b"");
    assert_eq!(s, 404, "{body}");
    assert_eq!(
        server.json(&path)["state"],
        "none",
        "a refusal starts nothing"
    );

    // Bob asks; it runs, then is kept.
    let (s, body) = server.call("POST", &path, Some(&bob), b"");
    assert!(s == 202 || s == 200, "{s}: {body}");
    let done = server.wait(
        "the analysis",
        Duration::from_millis(300),
        || server.json(&path),
        |v| v["state"] == "done",
    );
    // A verdict per decision of the record, each option the one played.
    let record = server.json(&format!("/api/games/{game}"));
    let played: Vec<&str> = record["record"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["type"].is_null() && d["option"].is_string())
        .map(|d| d["option"].as_str().unwrap())
        .collect();
    let verdicts = done["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), played.len(), "{done}");
    for (i, (v, p)) in verdicts.iter().zip(&played).enumerate() {
        assert_eq!(v["decision"], i + 1);
        assert_eq!(v["played"], *p, "decision {}", i + 1);
        // A search's estimate, or exact where every option ends the game.
        match v["source"].as_str() {
            Some("search") => assert!(v["played_value"]["depth"].is_u64(), "{v}"),
            Some("end") => assert!(v["played_value"]["result"].is_string(), "{v}"),
            _ => panic!("decision {}: {v}", i + 1),
        }
        assert!(v["played_value"]["score"].as_f64().is_some(), "{v}");
    }
    // Asked again: the kept analysis, not another run.
    let (s, body) = server.call("POST", &path, Some(&alice), b"");
    assert_eq!(s, 200, "{body}");
    let again: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(again["made_at"], done["made_at"]);

    // The game's page shows it beside each decision.
    let mut b = Browser::start();
    b.screen(1280, 1000, false);
    b.open(&format!("{}/games/{game}", server.url));
    b.wait(
        "the analysis in the viewer",
        &format!(
            "document.querySelectorAll('.advantage svg rect.adv').length === {}",
            verdicts.len()
        ),
    );
    let values = b.eval(
        "[...document.querySelectorAll('.decisions tbody td.value')].map(td => td.textContent)",
    );
    let values = values.as_array().unwrap();
    for (v, shown) in verdicts.iter().zip(values) {
        let pv = &v["played_value"];
        let want = match (pv["result"].as_str(), pv["plies"].as_u64()) {
            (Some(r), Some(p)) => format!("{r} in {p}"),
            (Some(r), None) => r.to_string(),
            _ => format!("{:.2}", pv["score"].as_f64().unwrap()),
        };
        assert_eq!(shown.as_str().unwrap(), want, "{v}");
    }
    let blunders = verdicts.iter().filter(|v| v["blunder"] == true).count();
    let marked = b.eval("document.querySelectorAll('.decisions tr.blunder').length");
    assert_eq!(marked, Value::from(blunders));
    b.wait(
        "the note that it is analysed",
        "document.getElementById('analysis-note').textContent.startsWith('Analysed ')",
    );
    let shot = b.screenshot("ladder-analysis");
    eprintln!("screenshot: {}", shot.display());

    // The other game, asked for from its page by its owner (the token
    // kept in the browser): the page shows it once it is done.
    b.open(&format!("{}/games/{other}", server.url));
    b.wait(
        "the page's analysis form",
        "!document.getElementById('analysis-form').hidden",
    );
    b.eval(&format!(
        "document.getElementById('analysis-token').value = {}; \
         document.getElementById('analysis-ask').click(); true",
        Value::from(alice.clone())
    ));
    wait_for("the other game analysed", || {
        let v = server.json(&format!("/api/games/{other}/analysis"));
        (v["state"] == "done").then_some(())
    });
    b.wait(
        "the page reloaded with the analysis",
        // The viewer is drawn before the note below it is parsed: a
        // reload caught between the two has no note yet.
        "document.querySelectorAll('.advantage svg rect.adv').length > 0 && \
         (document.getElementById('analysis-note')?.textContent ?? '').startsWith('Analysed ')",
    );

    // Alice asked for her one analysis of the hour (`analyses_per_hour =
    // 1`): a third is refused, saying when to ask again; Bob's own count
    // is his.
    let third_path = format!("/api/games/{third}/analysis");
    let (s, body) = server.call("POST", &third_path, Some(&alice), b"");
    assert_eq!(s, 429, "{body}");
    assert!(body.contains("analyses_per_hour"), "{body}");
    assert_eq!(server.json(&third_path)["state"], "none");
    // The count outlives a restart: the analyses kept are counted too.
    server.terminate();
    server.start();
    let (s, body) = server.call("POST", &third_path, Some(&alice), b"");
    assert_eq!(s, 429, "{body}");
    assert_eq!(server.json(&third_path)["state"], "none");
}
