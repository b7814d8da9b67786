//! Tests between versions (docs/ladder.md "Tests between versions"), as an
//! owner drives them: the real `arena serve` on 127.0.0.1:0, bots that are
//! real processes (the crate's random and greedy players under one bot
//! name), `arena submit --test` waiting for the verdict. A version that is
//! stronger than the one it replaces ends its test with H1 (exit 0, the
//! old one retired); the same bot uploaded again ends with H0 (exit 1)
//! or undecided at its budget (exit 3), both as the SPRT of `arena sprt`
//! on the ladder's export says; the owner decides where the ladder leaves
//! it to them, and no one else may. The test page in headless Chromium,
//! with a screenshot under target/.
//!
//! The bounds are wide (elo0 0, elo1 100 normalized Elo): a pair's LLR
//! step is then about 0.08 at either hypothesis, so both tests end within
//! about a hundred games of instant bots.

use crate::common;

use common::browser::Browser;
use common::ladder::Server;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A bot folder `dir/upload/NAME-TAG` named `name` that runs the crate's
/// binary `bin` (`random-bot`, `greedy-bot`).
fn bot(dir: &Path, name: &str, tag: &str, bin: &str) -> PathBuf {
    let to = dir.join("upload").join(format!("{name}-{tag}"));
    std::fs::create_dir_all(&to).unwrap();
    std::fs::write(
        to.join("bot.toml"),
        format!(
            "name = \"{name}\"\nauthor = \"t\"\nlanguage = \"rust\"\ncommand = [\"{{bin_dir}}/{bin}\"]\n"
        ),
    )
    .unwrap();
    to
}

/// A ladder of kisolo whose tests have wide bounds and a budget of 400.
fn server(dir: &Path) -> Server {
    Server::new(
        dir,
        "name = \"tests\"\nseed = 11\nvariants = [\"kisolo\"]",
        "placement_games = 4\nuploads_per_hour = 100\ntest_elo0 = 0\ntest_elo1 = 100\ntest_max_games = 400",
    )
}

/// Field `field` of each version of bot `name`, oldest first (empty
/// where it is null).
fn of_versions(server: &Server, name: &str, field: &str) -> Vec<String> {
    let bot = server.json(&format!("/api/bots/{name}"));
    bot["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[field].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The `detail` of each version of bot `name`, oldest first.
fn details(server: &Server, name: &str) -> Vec<String> {
    of_versions(server, name, "detail")
}

/// The statuses of bot `name`'s versions, oldest first.
fn statuses(server: &Server, name: &str) -> Vec<String> {
    of_versions(server, name, "status")
}

/// The pooled pentanomial counts, LLR and verdict `arena sprt` prints
/// for `a` against `b` on `csv`.
fn arena_sprt(
    dir: &Path,
    csv: &Path,
    (a, b): (&str, &str),
    (alpha, beta): (f64, f64),
) -> (Vec<u64>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(dir)
        .args([
            "sprt",
            csv.to_str().unwrap(),
            "--elo0",
            "0",
            "--elo1",
            "100",
            "--alpha",
            &alpha.to_string(),
            "--beta",
            &beta.to_string(),
        ])
        .args(["--bots", &format!("{a},{b}")])
        .output()
        .unwrap();
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    let line = |start: &str| {
        text.lines()
            .map(str::trim_start)
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no `{start}` line in:\n{text}"))
            .to_string()
    };
    let penta = line("all ")
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap())
        .collect();
    let llr = line("LLR ").split_whitespace().nth(1).unwrap().to_string();
    let verdict = text.lines().last().unwrap_or_default().to_string();
    (penta, llr, verdict)
}

/// The test's state is `arena sprt`'s on the ladder's export cut at the
/// test's last counted game (the export is in the order games finished;
/// the ladder's own games of the two versions are single games, which
/// the pentanomial counts leave out): the same pairs, LLR and verdict.
fn assert_counts_as_arena_sprt(server: &Server, dir: &Path, t: &serde_json::Value) {
    let (_, csv) = server.call("GET", "/api/games.csv", None, b"");
    let last = t["last_game"].as_str().unwrap();
    let mut cut = String::new();
    for line in csv.lines() {
        cut.push_str(line);
        cut.push('\n');
        if line.starts_with(&format!("{last},")) {
            break;
        }
    }
    assert!(
        cut.contains(&format!("\n{last},")),
        "{last} not in the export"
    );
    let file = dir.join(format!("export-{}.csv", t["id"]));
    std::fs::write(&file, cut).unwrap();
    let (penta, llr, verdict) = arena_sprt(
        dir,
        &file,
        (
            t["new_player"].as_str().unwrap(),
            t["old_player"].as_str().unwrap(),
        ),
        (t["alpha"].as_f64().unwrap(), t["beta"].as_f64().unwrap()),
    );
    let api: Vec<u64> = t["penta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(api, penta, "{t}");
    assert_eq!(format!("{:.2}", t["llr"].as_f64().unwrap()), llr, "{t}");
    let want = match t["status"].as_str() {
        Some("h1") => "H1 accepted",
        Some("h0") => "H0 accepted",
        _ => "continue (no decision yet)",
    };
    assert_eq!(verdict, want, "{t}");
    // The export of the test's games alone (`?test=ID`), whole: the
    // same numbers, the games finished past the verdict not counted.
    let (status, only) = server.call(
        "GET",
        &format!("/api/games.csv?test={}", t["id"]),
        None,
        b"",
    );
    assert_eq!(status, 200, "{only}");
    assert!(only.lines().count() > 1, "{only}");
    let file = dir.join(format!("test-{}.csv", t["id"]));
    std::fs::write(&file, &only).unwrap();
    let (_, _, verdict_of_test) = arena_sprt(
        dir,
        &file,
        (
            t["new_player"].as_str().unwrap(),
            t["old_player"].as_str().unwrap(),
        ),
        (t["alpha"].as_f64().unwrap(), t["beta"].as_f64().unwrap()),
    );
    if ["h1", "h0"].contains(&t["status"].as_str().unwrap_or_default()) {
        let games = t["games"].as_i64().unwrap();
        // No game finished past the verdict (none was in flight): the
        // verdict alone; else where the LLR first left its bounds.
        let rows = only.lines().skip(1).filter(|l| !l.is_empty()).count();
        if rows as i64 == games {
            assert_eq!(verdict_of_test, want, "{only}");
        } else {
            let at = format!("{want} after {games} games (LLR {llr})");
            assert!(verdict_of_test.starts_with(&at), "{at}: {verdict_of_test}");
        }
    }
}

#[test]
fn a_stronger_version_passes_its_test_and_the_same_bot_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let (server, h1, twin) = tests_between_versions(tmp.path(), None);
    the_test_page_in_chromium(&server, h1, twin);
}

#[test]
fn on_postgresql_a_stronger_version_passes_its_test_and_the_same_bot_does_not() {
    let Some(url) = common::postgres("on_postgresql_tests_between_versions") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    tests_between_versions(tmp.path(), Some(url));
}

/// The two tests, the owner's decision and the listing, on a ladder in
/// `dir` with the store `db` (SQLite when `None`); the server, still
/// serving, and the ids of the stronger version's test and of the twin's.
fn tests_between_versions(dir: &Path, db: Option<String>) -> (Server, i64, i64) {
    let mut server = server(dir);
    server.db = db;
    let alice = server.add_user("alice");
    let bob = server.add_user("bob");
    server.start();

    // A first version is entered untested.
    server.submit_ok(&alice, &bot(dir, "climber", "v1", "random-bot"));
    let (code, out) = server.submit_with(
        &alice,
        &bot(dir, "climber", "v1b", "random-bot"),
        &["--test", "--elo0", "5", "--elo1", "1"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("refused (400)") && out.contains("elo0"),
        "{out}"
    );

    // The greedy player against the random one: H1, the old one retired.
    let (code, out) = server.submit_with(
        &alice,
        &bot(dir, "climber", "v2", "greedy-bot"),
        &["--test"],
    );
    assert_eq!(code, 0, "{out}\n{}", server.log());
    for said in [
        "climber version 2: entered",
        "climber version 2 against version 1",
        "LLR",
        "H1: version 2 is stronger",
    ] {
        assert!(out.contains(said), "no `{said}` in:\n{out}");
    }
    let id1 = server.json("/api/tests?bot=climber")["tests"][0]["id"]
        .as_i64()
        .unwrap();
    let t = server.json(&format!("/api/tests/{id1}"));
    assert_eq!(t["status"], "h1", "{t}");
    assert_eq!(t["old_fate"], "retired", "{t}");
    assert!(
        t["llr"].as_f64().unwrap() >= t["upper"].as_f64().unwrap(),
        "{t}"
    );
    // A clean sweep (every seat-swap pair won twice) has no finite Elo:
    // the API then says null, as `arena sprt` prints none.
    match t["elo"].as_f64() {
        Some(elo) => assert!(elo > 0.0, "{t}"),
        None => assert!(t["losses"] == 0 && t["draws"] == 0, "{t}"),
    }
    assert!(t["games"].as_i64().unwrap() <= 400, "{t}");
    // The refused upload made no version.
    assert_eq!(statuses(&server, "climber"), ["retired", "entered"]);
    // The new version no longer says its test runs.
    assert_eq!(
        details(&server, "climber")[1],
        format!("test {id1} ended h1: version 1 retired")
    );
    assert_counts_as_arena_sprt(&server, dir, &t);

    // The same bot again, its fate left to its owner: H0 or undecided.
    // Its alpha (the chance of a false H1) is asked for at 0.001, not the
    // ladder's 0.05: at 0.05 this test, on two stores, would fail about one
    // run in twenty by chance alone (seen once: [0,0,10,0,6]).
    server.submit_ok(&bob, &bot(dir, "twin", "v1", "random-bot"));
    let (code, out) = server.submit_with(
        &bob,
        &bot(dir, "twin", "v2", "random-bot"),
        &["--test", "--outcome", "owner", "--alpha", "0.001"],
    );
    // The client's own words last: a long log and table come first,
    // so that a tail of the failure still shows them.
    assert!(
        code == 1 || code == 3,
        "{}\n{}\nexit {code}: {out}",
        server.log(),
        server.call("GET", "/api/games.csv?bot=twin", None, b"").1
    );
    let id2 = server.json("/api/tests?bot=twin")["tests"][0]["id"]
        .as_i64()
        .unwrap();
    let t = server.json(&format!("/api/tests/{id2}"));
    match code {
        1 => assert_eq!(t["status"], "h0", "{t}"),
        _ => {
            assert_eq!(t["status"], "budget", "{t}");
            assert!(t["games"].as_i64().unwrap() >= 398, "{t}");
        }
    }
    assert!(out.contains("LLR"), "{out}");
    assert_eq!(t["old_fate"], "undecided", "{t}");
    assert_eq!(statuses(&server, "twin"), ["entered", "entered"]);
    assert_eq!(
        details(&server, "twin")[1],
        format!(
            "test {id2} ended {}: entered beside version 1 until its owner decides",
            t["status"].as_str().unwrap()
        )
    );
    assert_counts_as_arena_sprt(&server, dir, &t);

    // Only the owner decides, once.
    let keep = b"{\"old\": \"retire\"}";
    let decide2 = format!("/api/tests/{id2}/decide");
    let decide1 = format!("/api/tests/{id1}/decide");
    let (status, text) = server.call("POST", &decide2, Some(&alice), keep);
    assert_eq!(status, 403, "{text}");
    let (status, text) = server.call("POST", &decide2, None, keep);
    assert_eq!(status, 401, "{text}");
    let (status, text) = server.call("POST", &decide2, Some(&bob), b"{\"old\": \"maybe\"}");
    assert_eq!(status, 400, "{text}");
    let (status, text) = server.call("POST", &decide2, Some(&bob), keep);
    assert_eq!(status, 200, "{text}");
    assert_eq!(statuses(&server, "twin"), ["retired", "entered"]);
    assert_eq!(
        details(&server, "twin")[1],
        format!(
            "test {id2} ended {}: version 1 retired",
            t["status"].as_str().unwrap()
        )
    );
    let (status, text) = server.call("POST", &decide2, Some(&bob), keep);
    assert_eq!(status, 409, "{text}");
    let (status, text) = server.call("POST", &decide1, Some(&alice), keep);
    assert_eq!(status, 409, "{text}");

    // The listing and its filters.
    let ids = |q: &str| -> Vec<i64> {
        server.json(&format!("/api/tests{q}"))["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(""), [id2, id1]);
    assert_eq!(ids("?owner=alice"), [id1]);
    assert_eq!(ids("?bot=twin"), [id2]);
    assert_eq!(ids("?result=h1"), [id1]);
    assert_eq!(ids("?result=finished"), [id2, id1]);
    assert!(ids("?result=running").is_empty());
    let (status, text) = server.call("GET", "/api/tests?result=won", None, b"");
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("h1") && text.contains("budget"), "{text}");
    let (status, text) = server.call("GET", "/api/tests?colour=red", None, b"");
    assert_eq!(status, 400, "{text}");
    for missing in ["/api/tests/99", "/api/tests/x", "/tests/99"] {
        let (status, text) = server.call("GET", missing, None, b"");
        assert_eq!(status, 404, "{missing}: {text}");
        // A page's refusal is a page, the API's JSON.
        let page = !missing.starts_with("/api/");
        assert_eq!(
            text.starts_with("<!doctype html>"),
            page,
            "{missing}: {text}"
        );
    }
    let (status, text) = server.call("GET", "/tests?result=x", None, b"");
    assert_eq!(status, 400, "{text}");
    assert!(text.starts_with("<!doctype html>"), "{text}");
    (server, id1, id2)
}

/// The finished test's page and the listing filtered, as headless
/// Chromium renders them (driven by tests/common/browser.rs, which waits
/// for what it looks for); a screenshot of the test page under target/.
fn the_test_page_in_chromium(server: &Server, h1: i64, twin: i64) {
    let mut b = Browser::start();
    b.open(&format!("{}/tests/{h1}", server.url));
    let page = b.eval("document.documentElement.outerHTML");
    let page = page.as_str().unwrap_or_default();
    for said in [
        "H1: version 2 is stronger",
        "id=\"llr-mark\"",
        "Pentanomial pairs",
        "climber@2,climber@1",
        "the old version retired",
    ] {
        assert!(
            page.contains(said),
            "no `{said}` in the test page:\n{page}\n{}\n{}",
            server.log(),
            server.call("GET", &format!("/api/tests/{h1}"), None, b"").1
        );
    }
    b.screen(900, 900, false);
    let shot = b.screenshot("ladder_tests-test-page");
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 5000,
        "{}",
        shot.display()
    );
    b.open(&format!("{}/tests?bot=twin", server.url));
    let links = b.wait(
        "the listing's links",
        "[...document.querySelectorAll('a')].map(a => a.getAttribute('href')).join(' ') || null",
    );
    let links = links.as_str().unwrap_or_default();
    let has = |id: i64| links.split(' ').any(|l| l == format!("/tests/{id}"));
    assert!(has(twin) && !has(h1), "{links}");
}
