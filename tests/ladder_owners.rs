//! What an owner may do with their bots, against the real `arena serve`
//! on 127.0.0.1:0 (docs/ladder.md, "Owners, tokens and what they may
//! do"): `bots_per_owner` holds however a bot comes back; retiring a
//! bot withdraws its uploads on their way too.

use crate::common;

use common::ladder::{python_bot, Server};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A ladder of kisolo in `dir` with `[ladder]` settings `ladder`, its
/// builds in `dir/cache`.
fn new_server(dir: &Path, ladder: &str) -> Server {
    let mut server = Server::new(
        dir,
        "name = \"owners\"\nseed = 5\nvariants = [\"kisolo\"]",
        ladder,
    );
    server.env = vec![(
        "XDG_CACHE_HOME".into(),
        dir.join("cache").display().to_string(),
    )];
    server
}

/// The statuses of bot `bot`'s versions, oldest first.
fn statuses(server: &Server, bot: &str) -> Vec<String> {
    server.json(&format!("/api/bots/{bot}"))["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["status"].as_str().unwrap().to_string())
        .collect()
}

/// The bots with a version entered.
fn entered(server: &Server) -> Vec<String> {
    let all = server.json("/api/bots");
    let mut names: Vec<String> = all["bots"]
        .as_array()
        .unwrap_or_else(|| panic!("{all}"))
        .iter()
        .filter(|b| b["entered"].is_string())
        .map(|b| b["bot"].as_str().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn a_new_version_of_a_retired_bot_counts_against_bots_per_owner() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "bots_per_owner = 2\nuploads_per_hour = 100");
    let alice = server.add_user("alice");
    server.start();
    server.submit_ok(&alice, &python_bot(dir, "random-python", "a", "1"));
    server.submit_ok(&alice, &python_bot(dir, "random-python", "b", "1"));
    let (got, text) = server.call("DELETE", "/api/bots/a", Some(&alice), b"");
    assert_eq!(got, 200, "{text}");
    server.submit_ok(&alice, &python_bot(dir, "random-python", "c", "1"));
    let (got, text) = server.call("PATCH", "/api/bots/a", Some(&alice), b"{\"active\": true}");
    assert_eq!(got, 403, "{text}");
    // A new version of `a` would bring it back just the same: refused,
    // before it is built, saying the limit.
    let (code, out) = server.submit_with(&alice, &python_bot(dir, "random-python", "a", "22"), &[]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("its limit") && out.contains("`a` back"),
        "{out}"
    );
    assert_eq!(statuses(&server, "a"), ["retired"], "{out}");
    assert_eq!(entered(&server), ["b", "c"]);
    // Below the limit it comes back.
    let (got, text) = server.call("DELETE", "/api/bots/b", Some(&alice), b"");
    assert_eq!(got, 200, "{text}");
    server.submit_ok(&alice, &python_bot(dir, "random-python", "a", "333"));
    assert_eq!(statuses(&server, "a"), ["retired", "entered"]);
    assert_eq!(entered(&server), ["a", "c"]);
}

/// A copy of the shipped Python bot named `name` (its bytes told apart
/// by `extra`) whose build sleeps `secs` seconds.
fn slow_build(dir: &Path, name: &str, extra: &str, secs: &str) -> std::path::PathBuf {
    let to = python_bot(dir, "random-python", name, extra);
    std::fs::write(
        to.join("bot.toml"),
        format!("name = \"{name}\"\ncommand = [\"python3\", \"bot.py\"]\nbuild = [\"sleep\", \"{secs}\"]\n"),
    )
    .unwrap();
    to
}

/// `arena submit --no-wait` of `folder` (and `args`), which must succeed.
fn upload(server: &Server, token: &str, folder: &Path, args: &[&str]) {
    let (code, out) = server.submit_with(token, folder, &[&["--no-wait"], args].concat());
    assert_eq!(code, 0, "{out}");
}

/// Waits until bot `bot`'s version `number` is `status`.
fn wait_status(server: &Server, bot: &str, number: usize, status: &str) {
    server.wait(
        &format!("{bot}@{number} {status}"),
        Duration::from_millis(100),
        || statuses(server, bot).join(" "),
        |s| s.split(' ').nth(number - 1) == Some(status),
    );
}

#[test]
fn retiring_a_bot_withdraws_its_uploads_on_their_way() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "builds_at_once = 1\nuploads_per_hour = 100");
    let alice = server.add_user("alice");
    server.start();
    // A first upload, retired while it is built: withdrawn, never entered.
    upload(&server, &alice, &slow_build(dir, "d", "1", "3.5"), &[]);
    wait_status(&server, "d", 1, "building");
    let (got, text) = server.call("DELETE", "/api/bots/d", Some(&alice), b"");
    assert_eq!(got, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["changed"], true, "{text}");
    assert_eq!(v["active"], false, "{text}");
    assert_eq!(v["cancelled"], serde_json::json!([1]), "{text}");
    assert_eq!(v["withdrawn"], serde_json::json!([]), "{text}");
    // Entered, a new version uploaded untested, and the bot retired
    // while it waits: both withdrawn, neither plays.
    server.submit_ok(&alice, &python_bot(dir, "random-python", "b", "1"));
    upload(
        &server,
        &alice,
        &slow_build(dir, "b", "22", "3.5"),
        &["--no-test"],
    );
    upload(&server, &alice, &slow_build(dir, "d", "22", "1"), &[]);
    let (got, text) = server.call("PATCH", "/api/bots/b", Some(&alice), b"{\"active\": false}");
    assert_eq!(got, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["withdrawn"], serde_json::json!([1]), "{text}");
    assert_eq!(v["cancelled"], serde_json::json!([2]), "{text}");
    assert_eq!(statuses(&server, "b"), ["retired", "retired"]);
    // Once the builds before it are done (one at a time), d@2 is entered:
    // the two withdrawn versions stay out.
    wait_status(&server, "d", 2, "entered");
    assert_eq!(
        statuses(&server, "b"),
        ["retired", "retired"],
        "{}",
        server.log()
    );
    assert_eq!(
        statuses(&server, "d"),
        ["retired", "entered"],
        "{}",
        server.log()
    );
    let b = server.json("/api/bots/b");
    assert!(
        b["versions"][1]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("before it was entered")),
        "{b}"
    );
    // Retired again: nothing changes, said as such.
    let (got, text) = server.call("DELETE", "/api/bots/b", Some(&alice), b"");
    assert_eq!(got, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["changed"], false, "{text}");
    assert_eq!(v["active"], false, "{text}");
    // Brought back: its entered version, not the one never checked.
    let (got, text) = server.call("PATCH", "/api/bots/b", Some(&alice), b"{\"active\": true}");
    assert_eq!(got, 200, "{text}");
    assert_eq!(statuses(&server, "b"), ["entered", "retired"]);
}

#[test]
fn the_hourly_count_says_when_a_slot_frees_and_names_are_said_plainly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "uploads_per_hour = 1");
    let alice = server.add_user("alice");
    server.start();
    // An empty token is refused before anything is sent.
    let (code, out) = server.submit_with("", &python_bot(dir, "random-python", "a", "1"), &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("--token is empty"), "{out}");
    server.submit_ok(&alice, &python_bot(dir, "random-python", "a", "1"));
    // The hour's one upload made: 429, with when the next is taken.
    let (got, text) = server.call("POST", "/api/bots", Some(&alice), b"x");
    assert_eq!(got, 429, "{text}");
    assert!(text.contains("the next is taken in"), "{text}");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let r = agent
        .post(&format!("{}/api/bots", server.url))
        .header("Authorization", &format!("Bearer {alice}"))
        .send(b"x".as_slice())
        .unwrap();
    let secs: u64 = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no Retry-After: {:?}", r.headers()));
    assert!((3000..=3600).contains(&secs), "{secs}");
    // `arena submit` says it and stops, rather than waiting an hour.
    let start = std::time::Instant::now();
    let (code, out) = server.submit_with(&alice, &python_bot(dir, "random-python", "a", "22"), &[]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("the next is taken in"), "{out}");
    assert!(start.elapsed() < Duration::from_secs(30), "{out}");
    // A version's name where a bot's is asked for: said.
    let (got, text) = server.call("GET", "/api/bots/a@1", None, b"");
    assert_eq!(got, 404, "{text}");
    assert!(text.contains("without `@N`"), "{text}");
}

/// A refused upload leaves nothing on disk: its archive (`vN.tar.gz`) and
/// unpacked folder (`vN`) go once it is refused; its page still says why,
/// with check-bot's report, from the store. (Before, three refused 16 MB
/// uploads kept 203 MB.)
#[test]
fn a_refused_version_leaves_no_files_and_its_page_still_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "uploads_per_hour = 100");
    let alice = server.add_user("alice");
    server.start();
    let garbage = python_bot(dir, "random-python", "garbage", "1");
    std::fs::write(
        garbage.join("bot.py"),
        "import sys\nfor line in sys.stdin:\n    print('not json', flush=True)\n",
    )
    .unwrap();
    std::fs::write(garbage.join("ballast.bin"), vec![7u8; 3 << 20]).unwrap();
    let (code, out) = server.submit(&alice, &garbage);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("garbage version 1: refused"), "{out}");
    let v = server.wait(
        "version 1 refused",
        Duration::from_millis(300),
        || server.json("/api/bots/garbage"),
        |v| v["versions"][0]["status"] == "refused",
    );
    let report = v["versions"][0]["report"].as_str().unwrap_or_default();
    assert!(report.contains("FAIL  handshake"), "{v}");
    let bot = dir.join("results/bots/garbage");
    let left = server.wait(
        "the refused version's files removed",
        Duration::from_millis(300),
        || {
            let mut left: Vec<String> = std::fs::read_dir(&bot)
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            left.sort();
            left.join(", ")
        },
        |left: &String| left.is_empty(),
    );
    assert!(left.is_empty(), "{left}");
    // Its page still says why.
    let (status, page) = server.call("GET", "/bots/garbage", None, b"");
    assert_eq!(status, 200);
    assert!(page.contains("refused"), "{page}");
}
