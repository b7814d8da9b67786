//! The ladder service's pages in a real browser: the real `arena` binary
//! serves a ladder (`arena serve` on 127.0.0.1:0, a temporary ladder file
//! and results folder), an owner submits shipped bots (`arena submit`),
//! they play, and headless Chromium shows the standings with ratings, a
//! game finished while the standings page is open added to it by the live
//! feed (Server-Sent Events, no reload), a game's board in the report's
//! viewer, and a bot's rating plot.
//!
//! Chromium is driven through the DevTools protocol over a pipe
//! (tests/common/browser.rs: `--remote-debugging-pipe`, commands on its
//! fd 3, answers on its fd 4), not `--dump-dom`: the
//! standings page holds its feed open, so the page never goes idle and
//! `--virtual-time-budget` never ends, while the protocol lets the test
//! read the open page's DOM as often as it likes. No crate is needed.
//!
//! Chromium is found or installed as in tests/report_html.rs. Nothing is
//! timed: every wait polls with a generous limit (a loaded 2-core machine
//! builds and checks the bots first), and the server and Chromium are
//! stopped by guards, also when a check fails.

use crate::common;

use common::browser::{wait_for, Browser, PATIENCE};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn arena() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arena"));
    c.stdin(Stdio::null());
    c
}

/// A running `arena serve`, stopped with SIGTERM when dropped.
struct Server {
    child: Child,
    url: String,
    dir: tempfile::TempDir,
}

impl Server {
    /// Starts a ladder of kisolo in a temporary folder, with one owner;
    /// returns it and the owner's token.
    fn start() -> (Server, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("ladder.toml"),
            "name = \"pages\"\nvariants = [\"kisolo\"]\noutput = \"results\"\n\
             [ladder]\ngames_in_flight = 2\nrefit_seconds = 1\nuploads_per_hour = 100\n\
             maintenance_games_per_hour = 100000000\n",
        )
        .unwrap();
        let added = arena()
            .current_dir(dir.path())
            .args(["serve", "ladder.toml", "--add-user", "alice"])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&added.stdout);
        assert!(
            added.status.success(),
            "--add-user: {out}{}",
            String::from_utf8_lossy(&added.stderr)
        );
        let token = out.lines().last().unwrap_or_default().trim().to_string();
        assert!(
            token.len() >= 32,
            "no token on --add-user's last line: {out}"
        );
        let log = std::fs::File::create(dir.path().join("serve.log")).unwrap();
        let mut child = arena()
            .current_dir(dir.path())
            .args(["serve", "ladder.toml", "--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut server = Server {
            child,
            url: String::new(),
            dir,
        };
        let deadline = Instant::now() + PATIENCE;
        while server.url.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(url) = line.split("listening on ").nth(1) {
                        server.url = url.trim().to_string();
                    }
                }
                Err(_) => panic!("arena serve did not listen: {}", server.log()),
            }
        }
        (server, token)
    }

    /// The server's log so far (its stderr).
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("serve.log")).unwrap_or_default()
    }

    /// `GET path` as JSON.
    fn json(&self, path: &str) -> Value {
        let url = format!("{}{path}", self.url);
        let text = ureq::get(&url)
            .call()
            .unwrap_or_else(|e| panic!("GET {url}: {e}"))
            .body_mut()
            .read_to_string()
            .unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {url}: {e}: {text}"))
    }

    /// `arena submit` of the shipped bots `names`, all at once (so that
    /// they are uploaded before the games begin, and race each other's
    /// writes to the store), each of which must be entered; returns their
    /// players (`NAME@VERSION`).
    fn submit(&self, token: &str, names: &[&str]) -> Vec<String> {
        let start = |name: &str| {
            let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("bots")
                .join(name);
            arena()
                .args(["submit", "--server", &self.url, "--token", token])
                .arg(&folder)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let running: Vec<(&str, Child)> = names.iter().map(|n| (*n, start(n))).collect();
        for (name, child) in running {
            let out = child.wait_with_output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success() && text.contains("entered"),
                "arena submit {name}: {text}\n{}",
                self.log()
            );
        }
        let bots = self.json("/api/bots");
        names
            .iter()
            .map(|n| {
                let b = bots["bots"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|b| b["bot"] == *n);
                b.and_then(|b| b["entered"].as_str())
                    .unwrap_or_else(|| panic!("{n} is not entered: {bots}"))
                    .to_string()
            })
            .collect()
    }

    /// SIGTERM, then waits for the server to stop; its exit status.
    fn stop(&mut self) -> Option<std::process::ExitStatus> {
        if let Ok(Some(s)) = self.child.try_wait() {
            return Some(s);
        }
        // SAFETY: signals the child this guard spawned and has not reaped.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The bots of the ladder: the shipped random players, the JavaScript one
/// where `node` is there.
fn bots() -> Vec<&'static str> {
    let mut bots = vec!["random-python", "random-rust"];
    if crate::common::has_node() {
        bots.push("random-js");
    }
    bots
}

/// One ladder for every check (a server per check would multiply the
/// bots' builds and games on a small machine): the standings with ratings,
/// the live feed, a game's board, a bot's plot; then SIGTERM stops it.
#[test]
fn the_ladder_pages_show_ratings_live_games_boards_and_plots() {
    let (mut server, token) = Server::start();
    let bots = bots();
    let players = server.submit(&token, &bots);
    wait_for("every bot to be rated", || {
        let s = server.json("/api/standings");
        let ratings = s["ratings"].as_array()?;
        players
            .iter()
            .all(|p| {
                ratings
                    .iter()
                    .any(|r| r["bot"] == **p && r["rated"] == true)
            })
            .then_some(())
    });
    let mut browser = Browser::start();
    standings_list_the_bots_with_ratings(&mut browser, &server, &players);
    a_finished_game_reaches_the_open_standings_page(&mut browser, &server);
    a_game_page_shows_the_board_and_steps(&mut browser, &server);
    a_bot_page_shows_its_rating_plot(&mut browser, &server, &players[0]);
    drop(browser);
    let status = server.stop();
    assert!(
        status.is_some_and(|s| s.success()),
        "arena serve did not stop cleanly on SIGTERM: {status:?}\n{}",
        server.log()
    );
}

/// (a) The standings table has a row per bot with its Elo, interval,
/// games and score as numbers.
fn standings_list_the_bots_with_ratings(b: &mut Browser, server: &Server, players: &[String]) {
    b.open(&format!("{}/", server.url));
    let rows = b.eval(
        "Array.from(document.querySelectorAll('#standings tbody tr'))\
         .map(tr => Array.from(tr.cells).map(td => td.textContent.trim()))",
    );
    let rows = rows.as_array().unwrap();
    for p in players {
        let row = rows
            .iter()
            .find(|r| r[1] == **p)
            .unwrap_or_else(|| panic!("no row for {p} in the standings: {rows:?}"));
        let num = |i: usize| -> f64 {
            let t = row[i].as_str().unwrap_or_default();
            t.trim_end_matches('%')
                .parse()
                .unwrap_or_else(|_| panic!("{p}'s cell {i} is not a number: {row:?}"))
        };
        let (elo, games) = (num(2), num(4));
        assert!(elo.abs() < 1000.0 && games > 0.0, "{row:?}");
        let (lo, hi) = row[3].as_str().unwrap().split_once(" … ").unwrap();
        let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
        assert!(lo <= elo && elo <= hi, "{row:?}");
        assert!((0.0..=100.0).contains(&num(5)), "{row:?}");
    }
}

/// (b) The standings page, open, gets the games finished after it loaded:
/// rows marked `fresh`, which only the feed's script makes (the page as
/// served has none), on top of the games list, for games the API knows,
/// with no reload (a mark left on the page's window is still there).
fn a_finished_game_reaches_the_open_standings_page(b: &mut Browser, server: &Server) {
    let url = format!("{}/", server.url);
    let html = ureq::get(&url)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(html.contains("<table id=\"games\">"), "{html}");
    assert!(
        !html.contains("<tr class=\"fresh\""),
        "the page as served has fresh rows"
    );
    // The page is open since (a); its newest game now, then a newer one.
    const TOP: &str = "(a => a && [a.textContent, a.getAttribute('href'), \
                       a.closest('tr').className])(document.querySelector('#games tbody tr a'))";
    let first = b.eval(&format!("window.loadedOnce = true; {TOP}"));
    let fresh = b.wait(
        "a new game from the live feed",
        &format!(
            "(t => t && t[0] !== {} && t[2] === 'fresh' && t)({TOP})",
            first[0]
        ),
    );
    assert_eq!(
        b.eval("window.loadedOnce === true"),
        true,
        "the page reloaded"
    );
    let id = fresh[0].as_str().unwrap();
    assert_eq!(fresh[1], json!(format!("/games/{id}")));
    let served = b.eval(
        "Array.from(document.querySelectorAll('#games tbody tr:not(.fresh) a')).map(a => a.textContent)",
    );
    assert!(
        !served.as_array().unwrap().iter().any(|x| x == id),
        "{id} was on the page as served"
    );
    assert!(
        ladder_id_known(server, id),
        "the feed's game {id} is not a finished game of the API"
    );
}

/// Whether `/api/games/ID` knows the finished game `id`.
fn ladder_id_known(server: &Server, id: &str) -> bool {
    server.json(&format!("/api/games/{id}"))["row"]["game_id"] == id
}

/// (c) A game's page: its row on top, the viewer's board drawn from the
/// engine's positions, the moves listed, and the end button steps to the
/// last decision.
fn a_game_page_shows_the_board_and_steps(b: &mut Browser, server: &Server) {
    let games = server.json("/api/games?limit=1");
    let row = &games["games"][0];
    let id = row["game_id"].as_str().unwrap();
    b.open(&format!("{}/games/{id}", server.url));
    b.wait(
        "the viewer's board",
        "document.querySelector('#game-view .board-svg')",
    );
    // Everything the page loaded came from the service itself.
    let elsewhere = b.eval(
        "performance.getEntriesByType('resource').map(e => e.name)\
         .filter(u => !u.startsWith(location.origin + '/'))",
    );
    assert_eq!(elsewhere, json!([]), "the game page loaded from elsewhere");
    let loaded = b.eval("performance.getEntriesByType('resource').map(e => e.name)");
    for asset in [
        "/assets/report.js",
        "/assets/report.css",
        "/index.js",
        "/chunk.js",
    ] {
        assert!(
            loaded
                .as_array()
                .unwrap()
                .iter()
                .any(|u| u.as_str().unwrap().ends_with(asset)),
            "{asset} not loaded: {loaded}"
        );
    }
    let errors = b.eval("document.getElementById('errors').textContent");
    assert_eq!(errors, "", "the viewer reported errors");
    assert_eq!(b.eval("document.getElementById('game-view').hidden"), false);
    let summary = b.eval("document.getElementById('game-row').textContent");
    let summary = summary.as_str().unwrap();
    assert!(
        summary.contains(row["seat0"].as_str().unwrap())
            && summary.contains(row["reason"].as_str().unwrap()),
        "{summary}"
    );
    // The board's numbers are the engine's: every one carries its value.
    let drawn = b.eval("document.querySelectorAll('#game-view .board-svg [data-k]').length");
    assert!(drawn.as_u64().unwrap() > 0, "nothing drawn on the board");
    let moves = b.eval("document.querySelectorAll('#game-view .decisions tbody tr').length");
    let n = moves.as_u64().unwrap();
    assert!(n > 0, "no moves listed");
    assert_eq!(
        b.eval("document.querySelector('#game-view .step').textContent"),
        json!(format!("decision 0 of {n}"))
    );
    b.eval("document.querySelector('#game-view .controls button[title^=\"end\"]').click()");
    assert_eq!(
        b.eval("document.querySelector('#game-view .step').textContent"),
        json!(format!("decision {n} of {n}"))
    );
    assert_eq!(
        b.eval("location.hash"),
        json!(format!("#game={id}&decision=end"))
    );
    // A link to a decision opens there (the page under its number).
    let number = id.trim_start_matches("game-");
    b.open(&format!(
        "{}/games/{number}#game={id}&decision=end",
        server.url
    ));
    b.wait(
        "the viewer at the game's end",
        &format!(
            "(document.querySelector('#game-view .step') || {{}}).textContent === 'decision {n} of {n}'"
        ),
    );
    // A seat's name leads to its bot's page on the ladder.
    let seat0 = row["seat0"].as_str().unwrap();
    let bot = seat0.split('@').next().unwrap();
    b.eval("document.querySelector('#game-view .seat a').click()");
    b.wait(
        "the seat's link to lead to its bot's page",
        &format!(
            "location.pathname.startsWith('/bots/{bot}') && document.readyState === 'complete' \
             && (document.querySelector('h2') || {{}}).textContent === '{bot}'"
        ),
    );
}

/// (d) A bot's page plots its rating over the ladder's games: a line with
/// at least two points, once the ladder has fitted twice with it.
fn a_bot_page_shows_its_rating_plot(b: &mut Browser, server: &Server, player: &str) {
    let bot = player.split('@').next().unwrap();
    wait_for("two points of rating history", || {
        let v = server.json(&format!("/api/bots/{bot}"));
        let entered = v["versions"]
            .as_array()?
            .iter()
            .find(|x| x["player"] == player)?;
        (entered["history"].as_array()?.len() >= 2).then_some(())
    });
    b.open(&format!("{}/bots/{bot}", server.url));
    // One line per version with a history, labelled with its player.
    let lines = b.eval(
        "Array.from(document.querySelectorAll('#rating-plot polyline'))\
         .map(l => [l.nextElementSibling && l.nextElementSibling.textContent, l.getAttribute('points')])",
    );
    let line = lines
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l[0] == player)
        .unwrap_or_else(|| panic!("no line of {player} in the rating plot: {lines}"));
    let points = line[1].as_str().unwrap();
    let xy: Vec<(f64, f64)> = points
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    assert!(xy.len() >= 2, "{points}");
    assert!(
        xy.iter().all(|(x, y)| x.is_finite() && y.is_finite()),
        "{points}"
    );
}
