//! A hostile bot against the HTML report and `arena view` (a helper's
//! probe): every string a bot controls reaches the pages (its name in the
//! league file, its hello's version and author, an illegal option quoted
//! in its forfeit's detail, its stderr), each one markup that would add an
//! element `id="pwned..."` or end a `<script>` if it were not escaped. The
//! report is opened in headless Chromium (tests/common/dom.rs) from disk
//! and through `arena view`; no element of the bot's is in the DOM.
//!
//! `arena view` listens on 127.0.0.1, which the web pages the user visits
//! can reach too: it answers only requests whose `Host` names it (a page
//! that rebinds its own name to 127.0.0.1 would send its own), refuses
//! what another site's page asks for (a `<script>` of the league's data,
//! tried in Chromium from a page of its own), sends no CORS header, and
//! serves nothing outside its pages whatever the URL.

use crate::common;

use common::dom;
use common::league::{run_ok, view};
use mancala_arena::report::html::frag;
use mancala_arena::results::csvio;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// The bot's name in the league file: markup (no quote or comma, which a
/// league file refuses).
const NAME: &str = "<b id=pwned-name>n</b></script><!--";

/// The hostile bot: plays legal options, but its hello's version and
/// author, its stderr and its second reply of each game (an illegal
/// option, quoted in the forfeit's detail) are markup.
const BOT: &str = r#"
import json, random, sys
P = "</script><script>document.body.id=`pwned-s`</script><!--\u2028\u2029<b id=pwned-o></b>"
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
n = 0
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("type")
    if t == "hello":
        send({"type": "hello", "name": "evil", "version": "<b id=pwned-v></b></script>",
              "author": "</script><b id=pwned-a></b>"})
    elif t == "game_start":
        n = 0
        random.seed(m.get("seed"))
    elif t == "request":
        n += 1
        sys.stderr.write("stderr " + P + "\n")
        sys.stderr.flush()
        send({"type": "reply", "option": P if n == 2 else random.choice(m["legal"])})
    elif t == "quit":
        break
"#;

struct League {
    dir: PathBuf,
    /// A game the hostile bot forfeited by its illegal option.
    forfeited: String,
    _keep: tempfile::TempDir,
}

/// The hostile bot against the random bot: one round of Kisolo, two
/// games, both forfeited by the hostile bot; the report written at its end.
fn league() -> &'static League {
    static LEAGUE: OnceLock<League> = OnceLock::new();
    LEAGUE.get_or_init(|| {
        let tmp = common::kept_tempdir();
        let bot = tmp.path().join("evil.py");
        std::fs::write(&bot, BOT).unwrap();
        let random = env!("CARGO_BIN_EXE_random-bot");
        let file = tmp.path().join("t.toml");
        std::fs::write(
            &file,
            format!(
                r#"
name = "hostile"
seed = 3
bots = [
  {{ name = "{NAME}", command = ["python3", "{}"] }},
  {{ name = "rand", command = ["{random}"] }},
]
variants = ["kisolo"]
rounds = 1
openings = 1
max_plies = 100
concurrency = 1
output = "out"
"#,
                bot.display()
            ),
        )
        .unwrap();
        run_ok(&file, &[]);
        let dir = tmp.path().join("out");
        let rows = csvio::read_rows(&dir.join("games.csv")).unwrap();
        let forfeited = rows
            .iter()
            .find(|r| {
                let by = r
                    .offender
                    .and_then(|o| r.seats().get(usize::from(o)).copied());
                r.reason == "illegal" && by == Some(NAME)
            })
            .unwrap_or_else(|| panic!("no forfeit by the hostile bot: {rows:?}"))
            .game_id
            .clone();
        League {
            dir,
            forfeited,
            _keep: tmp,
        }
    })
}

/// The DOM of `url` after its scripts ran, which must hold no element of
/// the bot's (and no console message or error shown).
fn open_clean(url: &str) -> String {
    let dom = dom::dump_clean("the hostile bot's report tests", url);
    assert!(
        !dom.contains("id=\"pwned"),
        "the bot's markup is an element at {url}: {}",
        dom::between(&dom, "id=\"pwned", ">")
    );
    dom
}

/// Each view of the report (the main page, the bot's page, the game list
/// and the forfeited game, at its forfeit), from disk and through `arena
/// view`, shows the bot's strings as text, never as markup.
#[test]
fn a_hostile_bots_strings_stay_text_in_the_report_and_the_viewer() {
    let l = league();
    let csv = std::fs::read_to_string(l.dir.join("games.csv")).unwrap();
    assert!(
        csv.contains("pwned-v"),
        "the version is in games.csv: {csv}"
    );
    let index = l.dir.join("report/index.html");
    let file = format!("file://{}", index.display());
    let main = open_clean(&file);
    // The strings did reach the page, as text.
    assert!(main.contains("&lt;b id=pwned-name&gt;"), "{main}");
    assert!(main.contains("&lt;b id=pwned-o&gt;"), "{main}");
    let game = format!("#game={}", frag(&l.forfeited));
    for fragment in [
        format!("#bot={}", frag(NAME)),
        "#games".to_string(),
        game.clone(),
        format!("{game}&decision=3"),
    ] {
        let dom = open_clean(&format!("{file}{fragment}"));
        assert!(dom.contains("pwned-name"), "{fragment}: {dom}");
    }
    let v = view(&l.dir);
    let dom = open_clean(&format!("{}{game}", v.url));
    assert!(dom.contains("pwned-name"), "{dom}");
}

/// A response: its status, its head (lower case) and its body.
struct Answer {
    status: u16,
    head: String,
    body: String,
}

/// GET `path` of the server at `addr` (`127.0.0.1:PORT`) with the header
/// lines `headers` (`Host` among them, or none), the connection closed
/// after it.
fn get(addr: &str, path: &str, headers: &[String]) -> Answer {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(180))).unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("Connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    s.read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8_lossy(&bytes).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Answer {
        status: head.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0),
        head: head.to_ascii_lowercase(),
        body: body.to_string(),
    }
}

/// `127.0.0.1:PORT` of a view's URL.
fn addr_of(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches('/')
}

/// DNS rebinding: a request whose `Host` names another host (a web site's
/// name resolving to 127.0.0.1), or no host, is refused with a 421 and
/// nothing of the league; `127.0.0.1:PORT`, `localhost:PORT` and
/// `[::1]:PORT` are served. No answer carries a CORS header; each says
/// `nosniff`.
#[test]
fn arena_view_answers_only_requests_that_name_it() {
    let l = league();
    let v = view(&l.dir);
    let addr = addr_of(&v.url);
    let port = addr.rsplit(':').next().unwrap();
    let one = format!("/games/one/{}", frag(&l.forfeited));
    let paths = ["/", "/games/index.js", one.as_str(), "/report.js"];
    for host in [
        addr.to_string(),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        for path in paths {
            let a = get(addr, path, &[format!("Host: {host}")]);
            assert_eq!(a.status, 200, "{host} {path}: {}{}", a.head, a.body);
            assert!(!a.head.contains("access-control-"), "{host}: {}", a.head);
            assert!(a.head.contains("x-content-type-options: nosniff"));
        }
    }
    for host in [
        vec![format!("Host: evil.example:{port}")],
        vec![format!("Host: 127.0.0.1.evil.example:{port}")],
        vec!["Host: 127.0.0.1:1".to_string()],
        vec![],
    ] {
        for path in paths {
            let a = get(addr, path, &host);
            assert_eq!(a.status, 421, "{host:?} {path}: {}{}", a.head, a.body);
            assert!(a.body.contains("Host"), "{}", a.body);
            assert!(!a.body.contains("kisolo") && !a.body.contains("pwned"));
            assert!(!a.head.contains("access-control-"), "{}", a.head);
        }
    }
}

/// Another site's page that includes the league's data with `<script>`
/// elements of its own (a page opened from disk, here, is another site)
/// reads nothing in Chromium: the requests, which the browser says are
/// cross-site, are refused (403), as one that says so by hand; a link
/// from another site still opens the report.
#[test]
fn arena_view_refuses_another_sites_page() {
    let l = league();
    let v = view(&l.dir);
    let addr = addr_of(&v.url);
    let host = format!("Host: {addr}");
    // The user opened the report: its pages are written.
    assert_eq!(get(addr, "/", std::slice::from_ref(&host)).status, 200);
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("evil.html");
    let one = format!("games/one/{}", frag(&l.forfeited));
    let mut html = String::from(
        "<!DOCTYPE html><html><body><pre id=\"stolen\"></pre><script>\
         function put(s) { document.getElementById(\"stolen\").append(s + \"\\n\"); }\
         window.arenaIndex = (d) => put(\"STOLEN index \" + d.games.length);\
         window.arenaGames = (d) => put(\"STOLEN game \" + d.games.length);\
         </script>",
    );
    for file in ["games/index.js", one.as_str()] {
        html.push_str(&format!(
            "<script src=\"{}{file}\" onerror=\"put('refused {file}')\"></script>",
            v.url
        ));
    }
    html.push_str("</body></html>");
    std::fs::write(&page, html).unwrap();
    let (dom, _) = dom::dump(
        "the hostile bot's report tests",
        &format!("file://{}", page.display()),
        &[],
    );
    let stolen = dom::between(&dom, "<pre id=\"stolen\">", "</pre>");
    assert!(!stolen.contains("STOLEN"), "{stolen}");
    assert!(stolen.contains("refused games/index.js"), "{stolen}");
    assert!(stolen.contains(&format!("refused {one}")), "{stolen}");
    let by = |site: &str, mode: &str| {
        vec![
            host.clone(),
            format!("Sec-Fetch-Site: {site}"),
            format!("Sec-Fetch-Mode: {mode}"),
        ]
    };
    for site in ["cross-site", "same-site"] {
        let a = get(addr, "/games/index.js", &by(site, "no-cors"));
        assert_eq!(a.status, 403, "{site}: {}{}", a.head, a.body);
        assert!(!a.body.contains("arenaIndex"), "{}", a.body);
        assert_eq!(get(addr, "/", &by(site, "navigate")).status, 200);
    }
    let own = get(addr, "/games/index.js", &by("same-origin", "no-cors"));
    assert_eq!(own.status, 200, "{}", own.body);
    assert!(own.body.starts_with("arenaIndex("), "{}", own.body);
}

/// No URL reaches a file outside the view's pages (the results folder's
/// games.csv, its records, a file of this machine): dot segments, encoded
/// slashes and dots, NUL bytes, a game id that is a path, a very long URL;
/// the view still answers after them.
#[test]
fn arena_view_serves_nothing_outside_its_pages() {
    let l = league();
    // A script beside the results folder, which a traversal would reach.
    let secret = l.dir.parent().unwrap().join("secret.js");
    std::fs::write(&secret, "secret()").unwrap();
    let v = view(&l.dir);
    let addr = addr_of(&v.url);
    let host = [format!("Host: {addr}")];
    assert_eq!(get(addr, "/", &host).status, 200);
    let long = format!("/games/{}.js", "a".repeat(100_000));
    let paths = [
        "/../games.csv",
        "/games/../../games.csv",
        "/games/..%2f..%2fgames.csv",
        "/games/..%2F..%2F..%2Fsecret.js",
        "/games/%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.js",
        "/bots/..%2f..%2f..%2fsecret.js",
        "/bots/%2fetc%2fpasswd",
        "/games/%2Fetc%2Fhostname.js",
        "/games/index.js%00.csv",
        "/games/..js",
        "/games/one/..%2f..%2fgames.csv",
        "/games/one/%2e%2e",
        "/games/one/%00",
        "/games/one/%ff",
        "//etc/passwd",
        "/report.js/../../games.csv",
        "/games.csv",
        "/league.json",
        long.as_str(),
    ];
    for path in paths {
        let a = get(addr, path, &host);
        assert!(
            [400, 404, 414, 431].contains(&a.status),
            "{}: {}{}",
            &path[..path.len().min(80)],
            a.head,
            a.body
        );
        for leak in ["game_id,", "secret()", "root:", "\"bots\""] {
            assert!(!a.body.contains(leak), "{path}: {}", a.body);
        }
    }
    assert_eq!(get(addr, "/games/index.js", &host).status, 200);
    let _ = std::fs::remove_file(&secret);
}
