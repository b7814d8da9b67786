//! The ladder's pages of issue 48 in a real browser: the real `arena
//! serve` (127.0.0.1:0) with kisolo and 3-player Tricala, Python bots
//! uploaded by `arena submit` and one through the upload form itself, a
//! real `arena worker` playing beside the server, and headless Chromium
//! (tests/common/browser.rs) showing: the upload form's live steps to
//! the verdict; the standings of one variant, the retired version left
//! out and then shown marked; the games browser with a filter chosen in
//! its form; the workers page with the worker's games; the rating chart's
//! axes and labels; and a page on a phone-width screen that does not
//! scroll sideways. Each check leaves a screenshot in
//! target/tmp/screenshots/ for a person to look at.

use crate::common;

use common::browser::{wait_for, Browser};
use common::ladder::{python_bot, Server};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// The rows of table `selector` as the page shows them: each cell's text.
fn rows(b: &mut Browser, selector: &str) -> Vec<Vec<String>> {
    let v = b.eval(&format!(
        "Array.from(document.querySelectorAll({})).map(tr => Array.from(tr.cells).map(td => td.textContent.trim()))",
        json!(format!("{selector} tbody tr"))
    ));
    serde_json::from_value(v).unwrap()
}

#[test]
fn the_browser_shows_uploads_variants_games_workers_and_charts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = Server::new(
        dir,
        "name = \"browse\"\nseed = 5\nvariants = [\"kisolo\", \"tricala3\"]",
        "uploads_per_hour = 100",
    );
    let token = server.add_user("alice");
    let w1 = server.add("--add-worker", "w1");
    server.start();
    server.submit_ok(&token, &python_bot(dir, "random-python", "rp", "one"));
    server.submit_ok(&token, &python_bot(dir, "heuristic-python", "hp", "x"));
    let _worker = server.worker(&w1, "w1", &[]);
    let mut b = Browser::start();

    the_upload_form_enters_a_bot(&mut b, &server, &token, dir);
    // rp's second version retires its first.
    // A new version that replaces the old one at once (no test between
    // them): the old one is retired.
    server.submit_ok_with(
        &token,
        &python_bot(dir, "random-python", "rp", "two!"),
        &["--no-test"],
    );
    server.wait(
        "3-player games rated with rp@2",
        Duration::from_millis(500),
        || server.json("/api/standings?variant=tricala3"),
        |s| {
            s["ratings"]
                .as_array()
                .is_some_and(|r| r.iter().any(|x| x["bot"] == "rp@2" && x["rated"] == true))
        },
    );
    standings_per_variant_without_then_with_retired(&mut b, &server);
    the_games_browser_filters(&mut b, &server);
    the_workers_page_shows_the_worker(&mut b, &server);
    the_rating_chart_has_axes_and_apart_labels(&mut b, &server);
    a_phone_width_screen_does_not_scroll_sideways(&mut b, &server);
}

/// The upload form: a token and a .tar.gz chosen, sent; its steps listed
/// as they happen, to `entered` and a link to the bot's page.
fn the_upload_form_enters_a_bot(b: &mut Browser, server: &Server, token: &str, dir: &Path) {
    let folder = python_bot(dir, "random-python", "formbot", "by the form");
    let packed = mancala_arena::wire::archive::pack(&folder, &Default::default()).unwrap();
    let file = dir.join("formbot.tar.gz");
    std::fs::write(&file, packed).unwrap();
    b.open(&format!("{}/upload", server.url));
    b.eval(&format!(
        "document.getElementById('token').value = {}",
        json!(token)
    ));
    b.choose_file("#archive", &file);
    b.eval("document.getElementById('send').click()");
    let verdict = b.wait(
        "the upload form's verdict",
        "(v => v && v.textContent)(document.querySelector('#steps li.verdict'))",
    );
    let steps: Vec<String> = serde_json::from_value(
        b.eval("Array.from(document.querySelectorAll('#steps li')).map(li => li.textContent)"),
    )
    .unwrap();
    assert!(
        verdict.as_str().unwrap().starts_with("entered"),
        "{steps:?}\n{}",
        server.log()
    );
    assert!(
        steps[0].starts_with("uploading formbot.tar.gz"),
        "{steps:?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s == "uploaded: formbot version 1: queued"),
        "{steps:?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("formbot version 1: checking")),
        "{steps:?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("formbot version 1: entered")),
        "{steps:?}"
    );
    assert_eq!(
        b.eval("document.querySelector('#steps li.verdict a').getAttribute('href')"),
        "/bots/formbot"
    );
    let bots = server.json("/api/bots");
    assert!(
        bots["bots"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["bot"] == "formbot" && x["entered"] == "formbot@1"),
        "{bots}"
    );
    let shot = b.screenshot("upload-form");
    eprintln!("screenshot: {}", shot.display());
    // A wrong token: refused, and said so.
    b.eval("document.getElementById('token').value = 'not-a-token'");
    b.eval("document.getElementById('send').click()");
    let refused = b.wait(
        "the refusal of a wrong token",
        "(v => v && v.textContent.startsWith('refused') && v.textContent)(document.querySelector('#steps li.verdict'))",
    );
    assert!(
        refused.as_str().unwrap().starts_with("refused (401)"),
        "{refused}"
    );
}

/// `/?variant=tricala3`: that variant's table, the selector on it; rp@1
/// (retired) out of it, then shown, marked and unranked.
fn standings_per_variant_without_then_with_retired(b: &mut Browser, server: &Server) {
    b.open(&format!("{}/?variant=tricala3", server.url));
    assert_eq!(
        b.eval("document.getElementById('variant').value"),
        "tricala-3p"
    );
    let api = server.json("/api/standings?variant=tricala-3p");
    let table = rows(b, "#standings");
    assert!(!table.is_empty());
    for row in &table {
        let line = api["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["bot"] == row[1].as_str())
            .unwrap_or_else(|| panic!("{row:?} is not in the API's tricala-3p table: {api}"));
        assert_eq!(line["status"], "entered", "{row:?}");
    }
    let ranks: Vec<&str> = table.iter().map(|r| r[0].as_str()).collect();
    let want: Vec<String> = (1..=table.len()).map(|n| n.to_string()).collect();
    assert_eq!(ranks, want);
    assert!(!table.iter().any(|r| r[1].starts_with("rp@1")), "{table:?}");
    let shot = b.screenshot("standings-tricala-3p");
    eprintln!("screenshot: {}", shot.display());
    // The overall table, choosing in the form; then the retired shown.
    b.eval("(s => { s.value = 'all'; s.dispatchEvent(new Event('change', {bubbles: true})); })(document.getElementById('variant'))");
    b.wait(
        "the overall table",
        "location.search.includes('variant=all') && document.readyState === 'complete'",
    );
    assert!(!rows(b, "#standings")
        .iter()
        .any(|r| r[1].starts_with("rp@1")));
    b.eval("document.getElementById('show-retired').click()");
    b.wait(
        "the retired versions shown",
        "location.search.includes('retired=show') && document.readyState === 'complete'",
    );
    let table = rows(b, "#standings");
    let old = table
        .iter()
        .find(|r| r[1].starts_with("rp@1"))
        .unwrap_or_else(|| panic!("rp@1 is not shown: {table:?}"));
    assert_eq!(old[0], "–");
    assert_eq!(old[1], "rp@1retired");
    assert_eq!(
        b.eval("document.querySelector('#standings tr[data-bot=\"rp@1\"]').className"),
        "retired"
    );
    let shot = b.screenshot("standings-all-with-retired");
    eprintln!("screenshot: {}", shot.display());
}

/// `/games`: a filter chosen in the form (hp's kisolo games against
/// formbot); every row is one, each its link; paging goes on.
fn the_games_browser_filters(b: &mut Browser, server: &Server) {
    wait_for("kisolo games of hp against formbot", || {
        let v = server.json("/api/games?bot=hp&opponent=formbot&variant=kisolo&limit=3");
        (v["games"].as_array()?.len() >= 3).then_some(())
    });
    b.open(&format!("{}/games", server.url));
    b.eval(
        "const f = document.getElementById('filters'); f.bot.value = 'hp'; f.opponent.value = 'formbot'; \
         f.variant.value = 'kisolo'; f.querySelector('button').click();",
    );
    b.wait(
        "the filtered games",
        "location.search.includes('opponent=formbot') && document.readyState === 'complete'",
    );
    let listed = rows(b, "#games-list");
    assert!(!listed.is_empty() && listed.len() <= 50);
    for row in &listed {
        assert_eq!(row[1], "kisolo", "{row:?}");
        assert!(
            row[2].contains("hp@1") && row[2].contains("formbot@1"),
            "{row:?}"
        );
    }
    // All of them (the API's most): more than a page's worth of games
    // may finish between the page's load and this request.
    let api =
        server.json("/api/games?bot=hp&opponent=formbot&variant=kisolo&order=newest&limit=10000");
    let api_ids: Vec<&str> = api["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["game_id"].as_str().unwrap())
        .collect();
    // Games finish meanwhile: the page's list is the API's from its first.
    let first = api_ids
        .iter()
        .position(|id| *id == listed[0][0])
        .expect("the page's first game in the API's list");
    for (row, id) in listed.iter().zip(&api_ids[first..]) {
        assert_eq!(row[0], *id);
    }
    let shot = b.screenshot("games-browser-filtered");
    eprintln!("screenshot: {}", shot.display());
    // A forfeit count on a bot's page leads to its games (none here: the
    // link's filter is checked by the API test); a refused filter is said.
    b.open(&format!("{}/games?bot=hp&result=maybe", server.url));
    let error = b.eval("document.getElementById('games-error').textContent");
    assert!(
        error.as_str().unwrap().contains("win, draw, loss"),
        "{error}"
    );
}

/// `/workers`: the worker's line: host, cores, jobs, games played.
fn the_workers_page_shows_the_worker(b: &mut Browser, server: &Server) {
    let line = wait_for("w1 to have played", || {
        let v = server.json("/api/workers");
        let w = v["workers"]
            .as_array()?
            .iter()
            .find(|w| w["name"] == "w1")?
            .clone();
        (w["games_played"].as_i64()? > 0).then_some(w)
    });
    assert_eq!(line["jobs"], 1);
    // /health counts the worker's game in flight beside the server's.
    wait_for("/health to count the worker's game", || {
        let h = server.json("/health");
        let (all, own, leased) = (
            h["in_flight"].as_u64()?,
            h["in_flight_server"].as_u64()?,
            h["in_flight_workers"].as_u64()?,
        );
        (leased >= 1 && all == own + leased).then_some(())
    });
    assert!(line["cores"].as_i64().unwrap() >= 1, "{line}");
    b.open(&format!("{}/workers", server.url));
    let table = rows(b, "#workers");
    let row = table
        .iter()
        .find(|r| r[0] == "w1")
        .unwrap_or_else(|| panic!("{table:?}"));
    assert_eq!(row[1], line["host"].as_str().unwrap());
    assert_eq!(row[3], "1");
    assert!(row[5].parse::<i64>().unwrap() > 0, "{row:?}");
    assert_eq!(row[6], "0", "{row:?}");
    assert!(["playing", "idle"].contains(&row[11].as_str()), "{row:?}");
    let shot = b.screenshot("workers");
    eprintln!("screenshot: {}", shot.display());
}

/// A bot's page: the chart's axes have round ticks with labels, and the
/// versions' names at the lines' ends do not overlap.
fn the_rating_chart_has_axes_and_apart_labels(b: &mut Browser, server: &Server) {
    wait_for("two points of rp@2's history", || {
        let v = server.json("/api/bots/rp");
        let n = v["versions"]
            .as_array()?
            .iter()
            .filter(|x| x["history"].as_array().is_some_and(|h| h.len() >= 2))
            .count();
        (n >= 2).then_some(())
    });
    b.open(&format!("{}/bots/rp", server.url));
    let ticks: Vec<Vec<String>> = serde_json::from_value(b.eval(
        "['.xtick', '.ytick'].map(c => Array.from(document.querySelectorAll('#rating-plot ' + c)).map(t => t.textContent))",
    ))
    .unwrap();
    for axis in &ticks {
        assert!(axis.len() >= 3, "{ticks:?}");
        let values: Vec<f64> = axis
            .iter()
            .map(|t| t.trim_end_matches('k').parse().unwrap())
            .collect();
        let step = values[1] - values[0];
        assert!(step > 0.0);
        assert!(
            values.windows(2).all(|w| (w[1] - w[0] - step).abs() < 1e-9),
            "{axis:?}"
        );
    }
    // No two labels' boxes meet (ticks and line names alike).
    let overlaps = b.eval(
        "(() => { const t = Array.from(document.querySelectorAll('#rating-plot text')).map(e => [e.textContent, e.getBoundingClientRect()]);\
          const out = []; for (let i = 0; i < t.length; i++) for (let j = i + 1; j < t.length; j++) {\
          const a = t[i][1], b = t[j][1]; if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) out.push([t[i][0], t[j][0]]); }\
          return out; })()",
    );
    assert_eq!(overlaps, json!([]), "labels overlap");
    let names: Vec<String> = serde_json::from_value(b.eval(
        "Array.from(document.querySelectorAll('#rating-plot .line-label')).map(t => t.textContent)",
    ))
    .unwrap();
    assert!(
        names.contains(&"rp@1".to_string()) && names.contains(&"rp@2".to_string()),
        "{names:?}"
    );
    let shot = b.screenshot("bot-rating-chart");
    eprintln!("screenshot: {}", shot.display());
}

/// On a 390-pixel-wide phone, the pages fit: only a table scrolls inside
/// itself.
fn a_phone_width_screen_does_not_scroll_sideways(b: &mut Browser, server: &Server) {
    b.screen(390, 844, true);
    for page in ["/", "/games?bot=rp", "/workers", "/upload", "/bots/rp"] {
        b.open(&format!("{}{page}", server.url));
        let (page_w, screen_w): (f64, f64) = serde_json::from_value::<(f64, f64)>(
            b.eval("[document.documentElement.scrollWidth, window.innerWidth]"),
        )
        .unwrap();
        assert!(
            page_w <= screen_w + 1.0,
            "{page}: {page_w} px wide on a {screen_w} px screen"
        );
    }
    b.open(&format!("{}/games?bot=rp", server.url));
    let shot = b.screenshot("phone-games");
    eprintln!("screenshot: {}", shot.display());
    b.screen(1100, 900, false);
}
