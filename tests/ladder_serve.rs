//! `arena serve` and `arena submit`, as their users drive them: the real
//! binary on 127.0.0.1:0 with a temporary store, owners added with
//! `--add-user`, the shipped bots (Python, JavaScript, Rust) uploaded with
//! `arena submit` and playing as real processes, every request over real
//! HTTP. Bad input of each kind gets its status and message and writes
//! nothing outside the new bot's folder; kill -9 loses no finished game.

use crate::common;

use common::ladder::{bot_copy, Server};
use mancala_arena::serve::store::GameTicket;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A ladder of kisolo in `dir` with `[ladder]` settings `ladder` (TOML
/// lines).
fn new_server(dir: &Path, ladder: &str) -> Server {
    Server::new(
        dir,
        "name = \"test-ladder\"\nseed = 7\nvariants = [\"kisolo\"]",
        ladder,
    )
}

/// Waits (up to 3 minutes) until `ok` holds of `server`'s standings.
fn wait_standings(
    server: &Server,
    what: &str,
    ok: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    server.wait(
        what,
        Duration::from_millis(300),
        || server.json("/api/standings"),
        ok,
    )
}

/// The rated players of a standings document, with their Elo.
fn rated(s: &serde_json::Value) -> Vec<(String, f64, u64)> {
    s["ratings"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter(|r| r["rated"] == true)
                .map(|r| {
                    (
                        r["bot"].as_str().unwrap().to_string(),
                        r["elo"].as_f64().unwrap(),
                        r["games"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A Python bot folder named `name` whose bot.py is `code`.
fn python_bot(dir: &Path, name: &str, code: &str) -> PathBuf {
    let to = dir.join("upload").join(name);
    std::fs::create_dir_all(&to).unwrap();
    std::fs::write(
        to.join("bot.toml"),
        format!("name = \"{name}\"\ncommand = [\"python3\", \"bot.py\"]\n"),
    )
    .unwrap();
    std::fs::write(to.join("bot.py"), code).unwrap();
    to
}

/// `arena rate --format json` of the first `n` rows of `csv`: the overall
/// Elo by player.
fn rate_first(dir: &Path, csv: &str, n: usize) -> Vec<(String, f64)> {
    let lines: Vec<&str> = csv.lines().collect();
    let path = dir.join(format!("export-{n}.csv"));
    std::fs::write(&path, lines[..=n].join("\n") + "\n").unwrap();
    let out = common::arena(dir, &["rate", "--format", "json", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", common::text(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    r["report"]["overall"]["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["bot"].as_str().unwrap().to_string(),
                r["elo"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// `/api/games` lists the export's games in its order, from after a given
/// game, and only those of a bot or of a variant when asked (the games go
/// on meanwhile: each answer starts with what the snapshot before it
/// expects).
fn assert_games_pages_and_filters(server: &Server) {
    let ids = |v: &serde_json::Value| -> Vec<String> {
        v["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["game_id"].as_str().unwrap().to_string())
            .collect()
    };
    let snapshot = server.json("/api/games?limit=10000");
    let games = snapshot["games"].as_array().unwrap().clone();
    assert!(games.len() >= 4, "too few games: {}", games.len());
    let (_, csv) = server.call("GET", "/api/games.csv", None, b"");
    let exported: Vec<String> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect();
    let listed = ids(&snapshot);
    assert_eq!(
        listed,
        exported[..listed.len()],
        "the API and the export differ"
    );
    // The records' export: a record per game, in the same order (games
    // finish meanwhile: it starts with the rows read before it).
    let (status, jsonl) = server.call("GET", "/api/games.jsonl", None, b"");
    assert_eq!(status, 200);
    let recorded: Vec<String> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "game")
        .map(|v| v["game_id"].as_str().unwrap().to_string())
        .collect();
    assert!(
        recorded.len() >= exported.len() && recorded[..exported.len()] == exported[..],
        "the records' export differs: {recorded:?} against {exported:?}"
    );
    // PGN: the 2-player games, one `[Event` each.
    let (status, pgn) = server.call("GET", "/api/games.pgn", None, b"");
    assert_eq!(status, 200);
    let two_player = games.iter().filter(|g| g["players"] == 2).count();
    assert!(
        pgn.matches("[Event ").count() >= two_player,
        "the PGN export has fewer games than the 2-player games listed before it"
    );
    let starts_with = |what: &str, got: Vec<String>, want: Vec<String>| {
        assert!(
            got.len() >= want.len() && got[..want.len()] == want[..],
            "{what}: {got:?}, expected to start with {want:?}"
        );
    };
    let k = listed.len() / 2;
    starts_with(
        "after",
        ids(&server.json(&format!("/api/games?after={}&limit=3", &listed[k][5..]))),
        listed[k + 1..].iter().take(3).cloned().collect(),
    );
    let seat0 = games[0]["seat0"].as_str().unwrap();
    let bot = seat0.rsplit_once('@').unwrap().0;
    let seats = |g: &serde_json::Value| -> Vec<String> {
        ["seat0", "seat1", "seat2"]
            .iter()
            .filter_map(|s| g[s].as_str())
            .map(str::to_string)
            .collect()
    };
    for (query, keep) in [
        (
            format!("bot={bot}"),
            Box::new(|g: &serde_json::Value| {
                seats(g)
                    .iter()
                    .any(|s| s.rsplit_once('@').is_some_and(|(b, _)| b == bot))
            }) as Box<dyn Fn(&serde_json::Value) -> bool>,
        ),
        (
            format!("bot={seat0}"),
            Box::new(|g: &serde_json::Value| seats(g).iter().any(|s| s == seat0)),
        ),
        (
            "variant=kisolo".to_string(),
            Box::new(|g: &serde_json::Value| g["variant"] == "kisolo"),
        ),
    ] {
        let want: Vec<String> = games
            .iter()
            .filter(|g| keep(g))
            .map(|g| g["game_id"].as_str().unwrap().to_string())
            .collect();
        let got = ids(&server.json(&format!("/api/games?{query}&limit=10000")));
        starts_with(&query, got, want);
    }
}

/// The standings `s` equal `arena rate` of the export's first `games` rows.
/// Games go on meanwhile: two commits that end in the same moment can be
/// counted by a fit in the other order than the export lists them, so a
/// difference is looked at again with the next fit, up to five times.
fn assert_export_rates_the_same(server: &Server, s: &serde_json::Value) {
    let mut s = s.clone();
    for attempt in 1.. {
        match export_rates_the_same(server, &s) {
            Ok(()) => return,
            Err(why) if attempt < 5 => {
                eprintln!("attempt {attempt}: {why}; with the next fit");
                std::thread::sleep(Duration::from_secs(2));
                s = server.json("/api/standings");
            }
            Err(why) => panic!("{why}"),
        }
    }
}

/// Whether the standings `s` equal `arena rate` of the export's first
/// `games` rows; what differs, if not.
fn export_rates_the_same(server: &Server, s: &serde_json::Value) -> Result<(), String> {
    let (status, csv) = server.call("GET", "/api/games.csv", None, b"");
    assert_eq!(status, 200);
    let n = s["games"].as_u64().unwrap() as usize;
    assert!(
        csv.lines().count() > n,
        "the export has fewer games than the fit"
    );
    let theirs = rate_first(&server.dir, &csv, n);
    let ours: Vec<(String, f64)> = s["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["bot"].as_str().unwrap().to_string(),
                r["elo"].as_f64().unwrap(),
            )
        })
        .collect();
    if ours.len() != theirs.len() {
        return Err(format!("{ours:?} served, {theirs:?} by arena rate"));
    }
    for ((a, x), (b, y)) in ours.iter().zip(&theirs) {
        if a != b || (x - y).abs() >= 1e-6 {
            return Err(format!("{a}: {x} served, {b}: {y} by arena rate"));
        }
    }
    Ok(())
}

#[test]
fn bots_in_three_languages_are_entered_play_are_rated_replaced_and_a_failing_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "placement_games = 4");
    let alice = server.add_user("alice");
    let bob = server.add_user("bob");
    server.start();

    let mut expected = vec!["random-python@1", "random-rust@1"];
    let (code, out) = server.submit(
        &alice,
        &bot_copy(dir, "random-python", "random-python", &|t| t),
    );
    assert_eq!(code, 0, "{out}");
    for step in [
        "uploaded: random-python version 1: queued",
        "checking",
        "random-python version 1: entered",
    ] {
        assert!(out.contains(step), "no `{step}` in:\n{out}");
    }
    let (code, out) = server.submit(&bob, &bot_copy(dir, "random-rust", "random-rust", &|t| t));
    assert_eq!(code, 0, "{out}");
    if common::has_node() {
        let (code, out) = server.submit(&bob, &bot_copy(dir, "random-js", "random-js", &|t| t));
        assert_eq!(code, 0, "{out}");
        expected.push("random-js@1");
    } else {
        eprintln!("node is missing: the JavaScript bot is left out");
    }
    let s = wait_standings(&server, "every bot rated over 10 games", |s| {
        let r = rated(s);
        expected
            .iter()
            .all(|b| r.iter().any(|(n, _, g)| n == b && *g >= 10))
    });
    assert_export_rates_the_same(&server, &s);
    assert_games_pages_and_filters(&server);

    // A new version uploaded without a test replaces the old one: it is
    // entered, the old one retired, and its games stay.
    let (code, out) = server.submit_with(
        &alice,
        &bot_copy(dir, "random-python", "random-python", &|t| t),
        &["--no-test"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("random-python version 2: entered"), "{out}");
    let bot = server.json("/api/bots/random-python");
    let statuses: Vec<&str> = bot["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["retired", "entered"], "{bot}");
    let report = bot["versions"][1]["report"].as_str().unwrap();
    assert!(report.contains("all checks passed"), "{report}");
    // The public reports name no folder of the organiser's: the arena's
    // own binaries as the bot.toml says them.
    let rust = server.json("/api/bots/random-rust");
    let rust = rust["versions"][0]["report"].as_str().unwrap();
    assert!(rust.contains("checking `{bin_dir}/random-bot`"), "{rust}");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_arena")).parent().unwrap();
    for folder in [dir, bin_dir] {
        let folder = folder.display().to_string();
        for r in [report, rust] {
            assert!(!r.contains(&folder), "{folder} in {r}");
        }
    }
    let s = wait_standings(&server, "the new version rated, the old one kept", |s| {
        let r = rated(s);
        r.iter().any(|(n, _, g)| n == "random-python@2" && *g >= 4)
            && r.iter().any(|(n, _, _)| n == "random-python@1")
    });
    let old_games = |s: &serde_json::Value| {
        rated(s)
            .into_iter()
            .find(|(n, _, _)| n == "random-python@1")
            .map(|(_, _, g)| g)
    };
    let before = old_games(&s);
    std::thread::sleep(Duration::from_secs(3));
    let later = wait_standings(&server, "a later fit", |x| x["games"] != s["games"]);
    assert_eq!(old_games(&later), before, "the retired version still plays");

    // A bot that fails check-bot is refused with check-bot's report.
    let garbage = python_bot(
        dir,
        "garbage",
        "import sys\nfor line in sys.stdin:\n    print('not json', flush=True)\n",
    );
    let (code, out) = server.submit(&alice, &garbage);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("garbage version 1: refused"), "{out}");
    assert!(
        out.contains("FAIL  handshake"),
        "no check-bot report in:\n{out}"
    );
    let bots = server.json("/api/bots");
    let entry = bots["bots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bot"] == "garbage")
        .unwrap()
        .clone();
    assert_eq!(entry["latest"]["status"], "refused", "{entry}");
    assert!(!rated(&server.json("/api/standings"))
        .iter()
        .any(|(n, _, _)| n.starts_with("garbage")));

    // SIGTERM stops it within 5 s, and cleanly.
    let start = Instant::now();
    let status = server.terminate();
    assert!(status.success(), "{status:?}\n{}", server.log());
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

/// A gzip-compressed tar of `entries`: (path, kind, data or link target),
/// headers written by hand so that hostile names go in unchanged.
fn tar_gz(entries: &[(&str, u8, &[u8])]) -> Vec<u8> {
    let mut tar = Vec::new();
    for (path, kind, data) in entries {
        let mut h = [0u8; 512];
        h[..path.len()].copy_from_slice(path.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        h[108..115].copy_from_slice(b"0000000");
        h[116..123].copy_from_slice(b"0000000");
        let size = if *kind == b'0' { data.len() } else { 0 };
        h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
        h[136..147].copy_from_slice(b"00000000000");
        h[156] = *kind;
        if *kind == b'1' || *kind == b'2' {
            h[157..157 + data.len()].copy_from_slice(data);
        }
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        tar.extend_from_slice(&h);
        if size > 0 {
            tar.extend_from_slice(data);
            tar.resize(tar.len().div_ceil(512) * 512, 0);
        }
    }
    tar.extend_from_slice(&[0u8; 1024]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// Every file under `dir`, relative, but the store's own files.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                if !rel.starts_with("ladder.db") && !rel.starts_with("logs") {
                    out.push(rel);
                }
            }
        }
    }
    out.sort();
    out
}

/// Sends a request head announcing `length` bytes of body, none of them,
/// and reads the answer (the server must answer from the head alone,
/// without waiting for a gigabyte).
fn announce_body(url: &str, token: &str, length: u64) -> String {
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST /api/bots HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/gzip\r\nContent-Length: {length}\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"\n") {
            break;
        }
    }
    String::from_utf8_lossy(&answer).to_string()
}

#[test]
fn bad_input_gets_its_status_and_a_message_and_writes_nothing_outside_the_new_bots_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "uploads_per_hour = 12\nupload_mb = 1\nunpacked_mb = 2");
    let alice = server.add_user("alice");
    let bob = server.add_user("bob");
    server.start();
    let results = dir.join("results");
    let (code, out) = server.submit(
        &alice,
        &bot_copy(dir, "random-python", "random-python", &|t| t),
    );
    assert_eq!(code, 0, "{out}");
    let before = files_under(&results);
    let toml = b"name = \"x\"\ncommand = [\"python3\", \"bot.py\"]\n".as_slice();
    let bomb = {
        let zeros = vec![0u8; 8 << 20];
        tar_gz(&[("bot.toml", b'0', toml), ("big", b'0', &zeros)])
    };
    let script_name =
        b"name = \"<script>alert(1)</script>\"\ncommand = [\"python3\", \"bot.py\"]\n";
    // What is sent, by whom, and the status and words of the answer.
    type Case<'a> = (&'a str, Option<&'a str>, Vec<u8>, u16, &'a str);
    let cases: Vec<Case> = vec![
        (
            "no token",
            None,
            tar_gz(&[("bot.toml", b'0', toml)]),
            401,
            "Authorization",
        ),
        (
            "a wrong token",
            Some("0123"),
            tar_gz(&[("bot.toml", b'0', toml)]),
            401,
            "token",
        ),
        (
            "another owner's bot",
            Some(&bob),
            tar_gz(&[(
                "bot.toml",
                b'0',
                b"name = \"random-python\"\ncommand = [\"python3\", \"bot.py\"]\n",
            )]),
            403,
            "belongs to `alice`",
        ),
        (
            "a name that passes for another owner's bot",
            Some(&bob),
            tar_gz(&[(
                "bot.toml",
                b'0',
                b"name = \"RANDOM-PYTHON\"\ncommand = [\"python3\", \"bot.py\"]\n",
            )]),
            403,
            "looks like `random-python` (of `alice`)",
        ),
        ("a tar bomb", Some(&alice), bomb, 413, "MiB"),
        (
            "a path-traversal entry",
            Some(&alice),
            tar_gz(&[("bot.toml", b'0', toml), ("../../escaped", b'0', b"x")]),
            400,
            "../../escaped",
        ),
        (
            "a symbolic link to /etc",
            Some(&alice),
            tar_gz(&[("bot.toml", b'0', toml), ("etc", b'2', b"/etc")]),
            400,
            "etc",
        ),
        (
            "a bot.toml naming files outside its folder",
            Some(&alice),
            tar_gz(&[(
                "bot.toml",
                b'0',
                b"name = \"outside\"\ncommand = [\"python3\", \"../../../etc/passwd\"]\n",
            )]),
            400,
            "../../../etc/passwd",
        ),
        (
            "a bot named <script>",
            Some(&alice),
            tar_gz(&[("bot.toml", b'0', script_name)]),
            400,
            "bot name",
        ),
        (
            "not an archive",
            Some(&alice),
            b"hello".to_vec(),
            400,
            "gzip",
        ),
        (
            "a bot.toml without a name (the folder's is the server's own)",
            Some(&alice),
            tar_gz(&[("bot.toml", b'0', b"command = [\"python3\", \"bot.py\"]\n")]),
            400,
            "no `name`",
        ),
    ];
    for (what, token, body, status, says) in &cases {
        let (got, text) = server.call("POST", "/api/bots", *token, body);
        assert_eq!(got, *status, "{what}: {text}");
        let v: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what}: not one line of JSON ({e}): {text}"));
        let msg = v["error"].as_str().unwrap();
        assert!(msg.contains(says), "{what}: `{says}` not in {msg}");
        assert_eq!(text.lines().count(), 1, "{what}: {text}");
    }
    assert_eq!(files_under(&results), before, "a refused upload left files");
    // A path served, with another method: 405 in words, its Allow kept;
    // the scheme `bearer` in any case.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent
        .patch(&format!("{}/health", server.url))
        .send(b"".as_slice())
        .unwrap();
    assert_eq!(resp.status().as_u16(), 405);
    assert!(resp.headers().get("allow").is_some(), "no Allow header");
    let text = resp.body_mut().read_to_string().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["error"].as_str().unwrap().contains("PATCH"), "{text}");
    let mut resp = agent
        .delete(&format!("{}/api/bots/no-such-bot", server.url))
        .header("Authorization", &format!("bearer {alice}"))
        .call()
        .unwrap();
    let text = resp.body_mut().read_to_string().unwrap();
    assert_eq!(resp.status().as_u16(), 404, "{text}");
    assert!(!dir.join("escaped").exists() && !results.join("escaped").exists());

    // Retiring: another owner's bot is refused; malformed JSON says what
    // to send.
    let (got, text) = server.call("DELETE", "/api/bots/random-python", Some(&bob), b"");
    assert_eq!(got, 403, "{text}");
    let (got, text) = server.call(
        "PATCH",
        "/api/bots/random-python",
        Some(&alice),
        b"{\"active\": fals",
    );
    assert_eq!(got, 400, "{text}");
    assert!(text.contains("{\\\"active\\\": false}"), "{text}");
    let (got, text) = server.call(
        "PATCH",
        "/api/bots/random-python",
        Some(&alice),
        b"{\"active\": false}",
    );
    assert_eq!(got, 200, "{text}");
    assert_eq!(
        server.json("/api/bots/random-python")["versions"][0]["status"],
        "retired"
    );
    let (got, text) = server.call(
        "PATCH",
        "/api/bots/random-python",
        Some(&alice),
        b"{\"active\": true}",
    );
    assert_eq!(got, 200, "{text}");
    assert_eq!(
        server.json("/api/bots/random-python")["versions"][0]["status"],
        "entered"
    );

    // The escaped name: nowhere raw.
    for page in ["/", "/api/bots", "/bots/random-python"] {
        let (_, body) = server.call("GET", page, None, b"");
        assert!(!body.contains("<script>alert"), "{page} shows the name raw");
    }

    // A gigabyte announced: refused at once, unread.
    let answer = announce_body(&server.url, &alice, 1 << 30);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Too many uploads in an hour (12: one accepted and six refused above
    // count, and these).
    let small = tar_gz(&[(
        "bot.toml",
        b'0',
        b"name = \"late\"\ncommand = [\"python3\", \"bot.py\"]\n",
    )]);
    let mut last = (0, String::new());
    for _ in 0..12 {
        last = server.call("POST", "/api/bots", Some(&alice), &small);
        if last.0 == 429 {
            break;
        }
    }
    assert_eq!(last.0, 429, "{}", last.1);
    assert!(last.1.contains("an hour"), "{}", last.1);
}

/// What the store at `url` holds after a crash: how many games finished,
/// and those that were being played.
fn after_the_crash(rt: &tokio::runtime::Runtime, url: &str) -> (usize, Vec<GameTicket>) {
    rt.block_on(async {
        let store = mancala_arena::serve::store::Db::open(url).await.unwrap();
        (
            store.done_rows().await.unwrap().len(),
            store.unfinished_games().await.unwrap(),
        )
    })
}

/// After a restart: waits until every game `cut` off by the crash is
/// finished (played again first, but one can take longer than many
/// others), then for a fit that has them all; checks that each game is
/// in the export once. Returns that fit's standings.
fn assert_cut_games_played_again_once(server: &Server, cut: &[GameTicket]) -> serde_json::Value {
    let start = Instant::now();
    let finished = loop {
        let (_, csv) = server.call("GET", "/api/games.csv", None, b"");
        let have = |id: i64| csv.lines().any(|l| l.starts_with(&format!("game-{id},")));
        if cut.iter().all(|t| have(t.id)) {
            break csv.lines().count() - 1;
        }
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "cut games not played again:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    let s = wait_standings(server, "a fit with the cut games", |s| {
        s["games"].as_u64().unwrap_or(0) as usize >= finished
    });
    let (_, csv) = server.call("GET", "/api/games.csv", None, b"");
    let ids: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    let unique: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "a game is in the export twice");
    for t in cut {
        let id = format!("game-{}", t.id);
        assert_eq!(
            ids.iter().filter(|i| **i == id).count(),
            1,
            "{id}, cut off, is not there once"
        );
    }
    s
}

#[test]
fn kill_9_in_the_middle_of_games_loses_no_finished_game_and_plays_the_cut_ones_again_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let alice = server.add_user("alice");
    server.start();
    for bot in ["random-rust", "random-python"] {
        let (code, out) = server.submit(&alice, &bot_copy(dir, bot, bot, &|t| t));
        assert_eq!(code, 0, "{out}");
    }
    wait_standings(&server, "30 games", |s| {
        s["games"].as_u64().unwrap_or(0) >= 30
    });
    server.kill();
    // What the store holds after the crash: the finished games and those
    // that were being played.
    let db = dir.join("results/ladder.db");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (done, cut) = after_the_crash(&rt, &format!("sqlite:{}", db.display()));
    assert!(done >= 30);
    // Started again from another folder: the versions it entered (from
    // `ladder.toml`, a relative path) are found all the same.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    // An upload cut off by the kill, half spooled and half unpacked: gone
    // once the server is back.
    let incoming = dir.join("results/incoming");
    std::fs::create_dir_all(incoming.join("1-2/src")).unwrap();
    std::fs::write(incoming.join("1-3.upload"), b"half a body").unwrap();
    server.start_at(&elsewhere, "../ladder.toml", "127.0.0.1:0");
    let s = assert_cut_games_played_again_once(&server, &cut);
    assert_eq!(
        std::fs::read_dir(&incoming).unwrap().count(),
        0,
        "what the killed server was receiving is left"
    );
    let m = server.call("GET", "/metrics", None, b"").1;
    assert!(
        m.contains(&format!("arena_games_replayed_total {}", cut.len())),
        "{m}"
    );
    assert_export_rates_the_same(&server, &s);

    // The backup of docs/ladder.md, taken while it serves, is a store
    // that opens, with every game finished when it was taken.
    let copy = dir.join("backup.db");
    let out = common::arena(
        dir,
        &[
            "serve",
            server.file.to_str().unwrap(),
            "--backup",
            copy.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", common::text(&out));
    let backed_up = rt.block_on(async {
        let store = mancala_arena::serve::store::Db::open(&format!("sqlite:{}", copy.display()))
            .await
            .unwrap();
        store.done_rows().await.unwrap().len()
    });
    assert!(
        backed_up >= s["games"].as_u64().unwrap() as usize,
        "{backed_up} games backed up"
    );
    // A backup onto a disk too small for it fails, and leaves no file
    // behind: one cut short opened as an empty ladder without a word.
    let disk = dir.join("disk");
    std::fs::create_dir(&disk).unwrap();
    let script = r#"mount -t tmpfs -o size=8k tmpfs "$2" || exit 90
        "$0" serve "$1" --backup "$2/b.db" >/dev/null 2>&1; echo "rc $?"; ls -A "$2""#;
    let out = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script])
        .arg(env!("CARGO_BIN_EXE_arena"))
        .arg(&server.file)
        .arg(&disk)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    if out.status.code() != Some(90) {
        let listed: Vec<&str> = said.lines().collect();
        assert!(listed.first().is_some_and(|l| *l != "rc 0"), "{said}");
        assert_eq!(listed.len(), 1, "files left on the full disk: {said}");
    }
}

#[test]
fn on_postgresql_kill_9_loses_no_game_a_second_server_is_refused_and_a_pages_only_one_follows() {
    let test = "on_postgresql_kill_9_loses_no_game";
    let Some(url) = common::postgres(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    server.db = Some(url.clone());
    let alice = server.add_user("alice");
    server.start();
    for bot in ["random-rust", "random-python"] {
        let (code, out) = server.submit(&alice, &bot_copy(dir, bot, bot, &|t| t));
        assert_eq!(code, 0, "{out}");
    }
    wait_standings(&server, "20 games", |s| {
        s["games"].as_u64().unwrap_or(0) >= 20
    });
    // A second server on the same database is refused, naming the first.
    let out = common::arena(
        dir,
        &[
            "serve",
            server.file.to_str().unwrap(),
            "--db",
            &url,
            "--bind",
            "127.0.0.1:0",
        ],
    );
    assert!(!out.status.success());
    assert!(
        common::text(&out).contains("another server already serves this database"),
        "{}",
        common::text(&out)
    );
    server.kill();
    assert!(
        !dir.join("results/ladder.db").exists(),
        "a SQLite file was made"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (done, cut) = after_the_crash(&rt, &url);
    assert!(done >= 20);
    server.start();
    let s = assert_cut_games_played_again_once(&server, &cut);
    assert_export_rates_the_same(&server, &s);

    // A second process for the pages only: it sees the same games and
    // follows new ones, and takes no uploads.
    let mut pages = new_server(dir, "");
    pages.db = Some(url.clone());
    pages.extra = vec!["--pages-only".into()];
    std::fs::rename(dir.join("serve.log"), dir.join("serve-main.log")).unwrap();
    pages.start();
    let seen = server.json("/api/standings")["games"].as_u64().unwrap();
    wait_standings(&pages, "the main server's games", |p| {
        p["games"].as_u64().unwrap_or(0) >= seen
    });
    // Its live feed announces the main server's games as it reads them.
    let feed = format!("{}/api/events", pages.url);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok(resp) = ureq::get(&feed).call() else {
            return;
        };
        let reader = std::io::BufReader::new(resp.into_body().into_reader());
        for line in std::io::BufRead::lines(reader).map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no game in the pages-only feed:\n{}", pages.log()));
        if line.starts_with("data:") && line.contains("\"type\":\"game\"") {
            break;
        }
    }
    let (status, body) = pages.call("POST", "/api/bots", Some(&alice), b"x");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("pages only"), "{body}");
    let (status, body) = pages.call("DELETE", "/api/bots/random-rust", Some(&alice), b"");
    assert_eq!(status, 503, "{body}");

    // The backup of a PostgreSQL store is PostgreSQL's own: the command.
    let copy = dir.join("backup.dump");
    let out = common::arena(
        dir,
        &[
            "serve",
            server.file.to_str().unwrap(),
            "--db",
            &url,
            "--backup",
            copy.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    let text = common::text(&out);
    assert!(text.contains("pg_dump --format=custom"), "{text}");
    assert!(
        !text.contains(url.split('@').next().unwrap().rsplit(':').next().unwrap()),
        "the password is shown: {text}"
    );
}

/// A ladder file that turns the sandbox off is refused unless the
/// organiser says every owner is trusted: a ladder runs strangers' code.
#[test]
fn a_ladder_without_the_sandbox_needs_trust_bots() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tournaments/club-ladder.toml"),
    )
    .unwrap();
    let text = text.replacen("seed = 2026", "seed = 2026\nsandbox = \"off\"", 1);
    std::fs::write(tmp.path().join("open.toml"), text).unwrap();
    let out = common::arena(tmp.path(), &["serve", "open.toml", "--bind", "127.0.0.1:0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("open.toml: sandbox = \"off\"") && err.contains("--trust-bots"),
        "{err}"
    );
}

/// The ladder file's `variants` reordered and cut between two runs: each
/// game keeps its variant (the games browser's filter finds each game
/// under its own variant, and a variant back in the file finds its games
/// again), where the games kept their variant's place in the file and so
/// took another's.
#[test]
fn games_keep_their_variant_when_the_ladder_file_reorders_its_variants() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let top = |variants: &str| {
        format!("name = \"order\"\nseed = 9\nvariants = [{variants}]\nmax_plies = 300")
    };
    let mut server = Server::new(dir, &top("\"kisolo\", \"filo\""), "");
    let token = server.add_user("alice");
    server.start();
    server.submit_ok(&token, &bot_copy(dir, "random-rust", "ra", &|t| t));
    server.submit_ok(&token, &bot_copy(dir, "random-rust", "rb", &|t| t));
    let listed = |server: &Server, variant: &str| -> Vec<String> {
        let v = server.json(&format!("/api/games?variant={variant}&limit=200"));
        v["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["variant"].as_str().unwrap_or("?").to_string())
            .collect()
    };
    for variant in ["kisolo", "filo"] {
        server.wait(
            &format!("6 games of {variant}"),
            Duration::from_millis(300),
            || listed(&server, variant).len(),
            |n| *n >= 6,
        );
    }
    // The server started again with the file's variants `from` made `to`:
    // each variant of `shown` finds its 6 games or more, and only its
    // own; the log says `says`.
    let again = |server: &mut Server, (from, to): (&str, &str), shown: &[&str], says: &str| {
        assert!(server.terminate().success(), "{}", server.log());
        let text = std::fs::read_to_string(&server.file).unwrap();
        let changed = text.replace(
            &format!("variants = [{from}]"),
            &format!("variants = [{to}]"),
        );
        assert_ne!(changed, text);
        std::fs::write(&server.file, changed).unwrap();
        server.start();
        for variant in shown {
            let all = listed(server, variant);
            assert!(
                all.iter().all(|v| v == variant),
                "{variant}: {all:?}\n{}",
                server.log()
            );
            assert!(all.len() >= 6, "{variant}: {all:?}\n{}", server.log());
        }
        assert!(server.log().contains(says), "{}", server.log());
    };
    // Reordered, with a variant added in front.
    let (two, three) = (
        "\"kisolo\", \"filo\"",
        "\"hackaback\", \"filo\", \"kisolo\"",
    );
    again(
        &mut server,
        (two, three),
        &["kisolo", "filo"],
        "its games follow it",
    );
    // filo cut: its games are kept, found by its name, and found again
    // when it is back.
    let filo_gone = "filo is not in the ladder file any more";
    again(
        &mut server,
        (three, "\"kisolo\""),
        &["kisolo", "filo"],
        filo_gone,
    );
    again(
        &mut server,
        ("\"kisolo\"", two),
        &["kisolo", "filo"],
        "games renumbered",
    );
    // Cut where it was last, its number unmoved: said all the same.
    let log_before = server.log().len();
    again(
        &mut server,
        (two, "\"kisolo\""),
        &["kisolo", "filo"],
        filo_gone,
    );
    assert!(
        server.log()[log_before..].contains(filo_gone),
        "{}",
        server.log()
    );
}

/// SIGTERM as soon as the server says where it listens: a clean stop
/// (exit 0), not the process's death by the signal's default action (its
/// handler was set at the first wait, after the address was printed).
#[test]
fn sigterm_as_soon_as_the_server_listens_is_a_clean_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(tmp.path(), "");
    for _ in 0..3 {
        server.start();
        let status = server.terminate();
        assert!(status.success(), "{status}: {}", server.log());
    }
}

/// A ladder in `dir` where alice's two random bots `ra` and `rb` have
/// played a few games.
fn two_random_bots_playing(dir: &Path) -> Server {
    let mut server = new_server(dir, "");
    let alice = server.add_user("alice");
    server.start();
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "ra", &|t| t));
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "rb", &|t| t));
    server.wait(
        "a few games",
        Duration::from_millis(300),
        || server.csv_games().len(),
        |n| *n >= 4,
    );
    server
}

/// A ladder's folder moved (the server stopped, the folder renamed, the
/// server started from its new place) plays on: its versions' folders,
/// stored as absolute paths, are taken from the new place, and the log
/// says so, as it says the time control changed on the way. They were left pointing at the old place: no game could
/// start, while /health said ok.
#[test]
fn a_moved_ladder_plays_on_from_its_new_place() {
    let tmp = tempfile::tempdir().unwrap();
    let old = tmp.path().join("old");
    std::fs::create_dir(&old).unwrap();
    let mut server = two_random_bots_playing(&old);
    server.terminate();
    let new = tmp.path().join("new");
    std::fs::rename(&old, &new).unwrap();
    let mut moved = new_server(&new, "");
    // The organiser changed the time control on the way: said at start.
    let file = new.join("ladder.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("decision_ms = 5000"), "{text}");
    std::fs::write(
        &file,
        text.replace("decision_ms = 5000", "decision_ms = 4000"),
    )
    .unwrap();
    moved.start();
    let before = moved.csv_games().len();
    moved.wait(
        "games played from the new place",
        Duration::from_millis(300),
        || moved.csv_games().len(),
        |n| *n >= before + 4,
    );
    let log = moved.log();
    assert!(
        log.contains("2 versions' folders were not where the store said"),
        "{log}"
    );
    assert!(!log.contains("cannot start"), "{log}");
    assert!(
        log.contains("the ladder file changed how games are played since the last start (time_control.decision_ms `5000` -> `4000`)"),
        "{log}"
    );
}

/// A version whose built copy is gone (a cleaner of caches, a copy of
/// the ladder's store served elsewhere) is built again when the server
/// starts, or when the next epoch starts, and again each time it is found
/// gone: not started from its unbuilt folder to crash game after game.
#[test]
fn a_version_whose_built_copy_is_gone_is_built_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let alice = server.add_user("alice");
    server.start();
    let built = |t: String| {
        t.replace(
            "command = [\"python3\", \"bot.py\"]",
            "build = [\"cp\", \"bot.py\", \"built.py\"]\ncommand = [\"python3\", \"built.py\"]",
        )
    };
    let folder = bot_copy(dir, "random-python", "rb", &built);
    assert!(std::fs::read_to_string(folder.join("bot.toml"))
        .unwrap()
        .contains("built.py"));
    server.submit_ok(&alice, &folder);
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "ra", &|t| t));
    server.wait(
        "a few games",
        Duration::from_millis(300),
        || server.csv_games().len(),
        |n| *n >= 4,
    );
    server.terminate();
    let cache = dir.join("xdg-cache/mancala-arena/builds");
    let copies = std::fs::read_dir(&cache).unwrap().count();
    assert_eq!(copies, 1, "{}", cache.display());
    std::fs::remove_dir_all(&cache).unwrap();
    server.start();
    // None of the `more` games after `before` crashed.
    let no_crash_after = |before: usize, more: usize| {
        server.wait(
            "games after the built copy went",
            Duration::from_millis(300),
            || server.csv_games().len(),
            |n| *n >= before + more,
        );
        let (_, csv) = server.call("GET", "/api/games.csv", None, b"");
        let crashed: Vec<_> = csv
            .lines()
            .skip(1 + before)
            .filter(|r| r.contains(",crash,"))
            .map(str::to_string)
            .collect();
        assert!(crashed.is_empty(), "{crashed:?}");
    };
    no_crash_after(server.csv_games().len(), 6);
    let log = server.log();
    assert!(log.contains("its built copy is gone: built again"), "{log}");
    assert!(!log.contains("cannot start"), "{log}");
    // Gone again while the server runs: the next epoch (a version
    // entered) builds it again too, rather than start it from its unbuilt
    // folder.
    std::fs::remove_dir_all(&cache).unwrap();
    let before = server.csv_games().len();
    server.submit_ok(&alice, &bot_copy(dir, "random-rust", "rc", &|t| t));
    no_crash_after(before, 12);
    let log = server.log();
    assert_eq!(
        log.matches("its built copy is gone: built again").count(),
        2,
        "{log}"
    );
}

/// A version whose stored folder is removed by hand (an organiser's
/// mistake) leaves the ladder, said on its page, instead of losing game
/// after game as a crash of its bot: at most the games already started
/// when the folder went are charged.
#[test]
fn a_version_whose_folder_is_removed_leaves_the_ladder_and_is_not_charged_with_crashes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let server = two_random_bots_playing(dir);
    let folder = dir.join("results/bots/ra/v1");
    assert!(folder.join("bot.toml").is_file(), "{}", folder.display());
    std::fs::remove_dir_all(&folder).unwrap();
    let v = server.wait(
        "ra's version set aside",
        Duration::from_millis(300),
        || server.json("/api/bots/ra"),
        |v| v["versions"][0]["status"] == "refused",
    );
    let detail = v["versions"][0]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("stored folder is gone"), "{v}");
    // The games played before it left are committed first (up to 16 a
    // slot wait in the writer's queue: instant bots play hundreds a
    // second, and a count taken at once missed them); then time to play
    // more, if it still scheduled them.
    std::thread::sleep(Duration::from_secs(2));
    let before = server.csv_games().len();
    std::thread::sleep(Duration::from_secs(2));
    let (_, csv) = server.call("GET", "/api/games.csv", None, b"");
    let path = dir.join("export.csv");
    std::fs::write(&path, &csv).unwrap();
    let rows = mancala_arena::results::csvio::read_rows(&path).unwrap();
    let crashes = rows
        .iter()
        .filter(|r| {
            r.reason == "crash"
                && r.offender
                    .is_some_and(|o| r.seats()[usize::from(o)] == "ra@1")
        })
        .count();
    assert!(crashes <= 2, "{crashes} crashes charged to ra@1: {csv}");
    assert!(rows.len() <= before + 2, "games went on with ra@1: {csv}");
}

/// A store that refuses writes for a while (another process holds
/// SQLite's write lock past the busy timeout, as a full disk or a
/// database out of reach would refuse them) is said by `/health`
/// (`degraded`, with why) and `/metrics`, and the server goes on by
/// itself once writes go through again: it neither stops (a game it
/// could not commit used to stop it for good, with exit status 0) nor
/// needs a restart.
#[test]
fn a_store_that_refuses_writes_for_a_while_is_said_by_health_and_play_goes_on_after() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = two_random_bots_playing(dir);
    let health = server.json("/health");
    assert_eq!(health["status"], "ok", "{health}");
    assert!(health.get("store").is_none(), "{health}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = server.db_url();
    let mut lock = rt.block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query("BEGIN EXCLUSIVE")
            .execute(&mut c)
            .await
            .unwrap();
        c
    });
    // The busy timeout is 10 s, the heartbeat every 5 s.
    let degraded = server.wait(
        "/health to say the store refuses writes",
        Duration::from_millis(500),
        || server.json("/health"),
        |h| h["status"] == "degraded",
    );
    let why = degraded["store"].as_str().unwrap_or_default();
    assert!(why.contains("refuses writes for"), "{degraded}");
    assert!(why.contains("locked"), "{degraded}");
    let (_, metrics) = server.call("GET", "/metrics", None, b"");
    assert!(
        metrics.contains("arena_store_refusing_writes 1"),
        "{metrics}"
    );
    rt.block_on(async {
        sqlx::query("ROLLBACK").execute(&mut lock).await.unwrap();
    });
    drop(lock);
    server.wait(
        "/health to say ok again",
        Duration::from_millis(500),
        || server.json("/health"),
        |h| h["status"] == "ok" && h.get("store").is_none(),
    );
    // The games that could not be recorded went back to the queue: each
    // game `playing` as the store took writes again leaves that state
    // (played again and recorded). A game played but not yet committed,
    // or claimed ahead for a slot, is `playing` too for a moment, so the
    // test follows these games rather than count the state.
    let playing = || {
        rt.block_on(async {
            use sqlx::Connection;
            let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
            let ids: Vec<(i64,)> =
                sqlx::query_as("SELECT id FROM games WHERE state = 'playing' AND lease_id IS NULL")
                    .fetch_all(&mut c)
                    .await
                    .unwrap();
            ids.into_iter()
                .map(|(id,)| id)
                .collect::<std::collections::BTreeSet<i64>>()
        })
    };
    let cut_off = playing();
    let before = server.csv_games().len();
    server.wait(
        "games played after the store took writes again",
        Duration::from_millis(300),
        || server.csv_games().len(),
        |n| *n >= before + 4,
    );
    assert!(
        server.exited().is_none(),
        "the server stopped: {}",
        server.log()
    );
    let mut still = cut_off.clone();
    server.wait(
        "the games cut off by the outage to leave `playing`",
        Duration::from_millis(300),
        || {
            let now = playing();
            still.retain(|id| now.contains(id));
            match still.is_empty() {
                true => "none".to_string(),
                false => format!("{still:?} of {cut_off:?} still playing"),
            }
        },
        |s| s == "none",
    );
    // Nor do they stay in /health's count: it comes back to the server's
    // games in flight (2), with those played and waiting to be written
    // (a moment with instant bots), rather than keep the cut-off games.
    server.wait(
        "/health to count no cut-off game in flight",
        Duration::from_millis(100),
        || server.json("/health"),
        |h| h["in_flight_server"].as_u64() <= Some(2),
    );
    let log = server.log();
    assert!(log.contains("the store refuses writes"), "{log}");
    assert!(log.contains("the store takes writes again"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
    // The operator's log says, without asking, where the ladder serves
    // and what it entered.
    assert!(
        log.contains("serving ") && log.contains(": entered "),
        "{log}"
    );
}
