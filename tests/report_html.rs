//! The HTML report in a real browser: a small league of real bots played
//! by the real `arena` binary (`arena run` writes the report at its end;
//! `arena report` writes it again, for a league, its shards, damaged
//! records), opened from disk in headless Chromium.
//!
//! Chromium runs as a plain command (`--headless --dump-dom`, with
//! `--virtual-time-budget` so that the page's scripts have run, and
//! `--enable-logging=stderr` so that every console message and uncaught
//! error shows on its stderr as a `CONSOLE` line) rather than through a
//! DevTools client crate: the checks need only the DOM after the scripts
//! ran and the console, the fragment (`#game=ID&step=end`) is how a user
//! lands on a game's last step, and a plain command adds no dependency.
//! The page's script also writes every error into `#errors`.
//!
//! The tests need Chromium (Debian package `chromium`): where it is
//! missing they install it once with `.ci/install-chromium` (as `.ci/run`
//! does; root or password-less sudo), and fail, saying what to install,
//! when that cannot be done: they are never skipped. `CHROMIUM` names
//! another binary. No timing is asserted: the machine may be busy.

use crate::common;

use common::copy_dir;
use common::dom::{self, at, attrs, between, drawn};
use common::league::arena;

use mancala_arena::results::records::RecordAt;
use mancala_arena::results::{csvio, GameRow};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const WHO: &str = "the report's browser tests";

/// The DOM of `url` after its scripts ran, and the console's messages.
fn open(url: &str, extra: &[&str]) -> (String, Vec<String>) {
    dom::dump(WHO, url, extra)
}

/// Opens `page` of the report in `dir` and checks that nothing went wrong
/// in the browser: no console message, no error shown on the page.
fn open_clean(report: &Path, fragment: &str) -> String {
    let url = format!(
        "file://{}{fragment}",
        report.join("index.html").canonicalize().unwrap().display()
    );
    dom::dump_clean(WHO, &url)
}

struct League {
    /// The league's folder (results of `arena run`).
    dir: PathBuf,
    rows: Vec<GameRow>,
    _keep: tempfile::TempDir,
}

const BOTS: [&str; 4] = ["greedy", "rand-a", "rand-b", "illegal"];

/// A small league of real bots over every variant (one of them sends an
/// illegal option at its first decision, for the forfeits), played once
/// for all the tests of this file; `arena run` writes its report at the
/// end.
fn league() -> &'static League {
    static LEAGUE: OnceLock<League> = OnceLock::new();
    LEAGUE.get_or_init(|| {
        let tmp = common::kept_tempdir();
        let random = env!("CARGO_BIN_EXE_random-bot");
        let greedy = env!("CARGO_BIN_EXE_greedy-bot");
        let illegal =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/broken/misbehave.py");
        let illegal = illegal.display();
        let file = tmp.path().join("t.toml");
        std::fs::write(
            &file,
            format!(
                r#"
name = "browser"
seed = 7
bots = [
  {{ name = "greedy", command = ["{greedy}"] }},
  {{ name = "rand-a", command = ["{random}"] }},
  {{ name = "rand-b", command = ["{random}"] }},
  {{ name = "illegal", command = ["python3", "{illegal}", "illegal"] }},
]
variants = ["filo", "tricala", "tricala3", "hackaback", "kisolo", "diffusion"]
rounds = 1
openings = 1
max_plies = 300
concurrency = 2
output = "out"
"#
            ),
        )
        .unwrap();
        let out = arena()
            .arg("run")
            .arg(&file)
            .arg("--quiet")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = tmp.path().join("out");
        assert!(
            stdout.contains("report: ") && dir.join("report/index.html").is_file(),
            "arena run wrote no report: {stdout}"
        );
        let rows = csvio::read_rows(&dir.join("games.csv")).unwrap();
        League {
            dir,
            rows,
            _keep: tmp,
        }
    })
}

/// `arena report ARGS...`: succeeds and prints the index's path.
fn report(args: &[&Path]) -> PathBuf {
    let out = arena().arg("report").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(path.is_file(), "no {}", path.display());
    path.parent().unwrap().to_path_buf()
}

#[test]
fn the_standings_list_every_bot_and_the_crosstable_links_to_the_games() {
    let l = league();
    let dir = l.dir.join("report");
    let dom = open_clean(&dir, "");
    // Every bot in the overall standings and in each variant's.
    let rows = attrs(&dom, "data-bot");
    for bot in BOTS {
        // all + 6 variant labels
        assert_eq!(
            rows.iter().filter(|b| *b == bot).count(),
            7,
            "{bot} in the standings: {rows:?}"
        );
        assert!(dom.contains(&format!("href=\"#bot={bot}\"")), "{bot}");
    }
    // Crosstable cells link to game lists; open one and find its games.
    let cell = between(&dom, "<td class=\"cell\"", "</td>");
    let href = attrs(cell, "href")
        .into_iter()
        .next()
        .expect("a crosstable cell with a link");
    assert!(href.starts_with("#games&"), "{href}");
    let list = open_clean(&dir, &href);
    let args: BTreeMap<&str, &str> = href
        .split('&')
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let want: BTreeSet<&str> = l
        .rows
        .iter()
        .filter(|r| {
            let seats = r.seats();
            seats.contains(&args["bot"]) && seats.contains(&args["vs"])
        })
        .map(|r| r.game_id.as_str())
        .collect();
    let view = between(&list, "<section id=\"games-view\"", "</section>");
    let shown: BTreeSet<String> = attrs(view, "href")
        .into_iter()
        .filter_map(|h| h.strip_prefix("#game=").map(str::to_string))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(
        shown,
        want.iter().map(|s| s.to_string()).collect(),
        "the games of {href}"
    );
    // A bot's page.
    let page = open_clean(&dir, "#bot=greedy");
    assert!(
        page.contains("id=\"bot-greedy\"")
            && !between(&page, "id=\"bot-greedy\"", ">").contains("hidden"),
        "greedy's page is not shown"
    );
}

/// Forfeits by bot and reason, each with the referee's detail and a link
/// to its game, whose viewer names the offender.
#[test]
fn forfeits_are_listed_with_their_detail_and_link_to_their_game() {
    let l = league();
    let dir = l.dir.join("report");
    let dom = open_clean(&dir, "#forfeits");
    let section = between(&dom, "<section id=\"forfeits\"", "</section>");
    let forfeits: Vec<&GameRow> = l.rows.iter().filter(|r| r.offender.is_some()).collect();
    assert!(!forfeits.is_empty());
    assert!(section.contains("illegal"), "{section}");
    let links: Vec<String> = attrs(section, "href")
        .into_iter()
        .filter(|h| h.starts_with("#game="))
        .collect();
    assert_eq!(links.len(), forfeits.len(), "{section}");
    let details: Vec<&str> = section
        .split("<td class=\"detail\">")
        .skip(1)
        .map(|d| &d[..d.find("</td>").unwrap_or(0)])
        .collect();
    assert_eq!(details.len(), forfeits.len());
    assert!(details.iter().all(|d| !d.trim().is_empty()), "{details:?}");
    let game = open_clean(&dir, &format!("{}&step=end", links[0]));
    assert!(
        game.contains("forfeit by illegal"),
        "{}",
        between(&game, "<div class=\"result\"", "</div></div>")
    );
}

/// The viewer at `#game=ID&step=end` (the old name of `&decision=`) draws
/// the record's final state, and half way (`&decision=K`) the position the
/// engine gives for the same moves (`arena state`): every number drawn
/// (data-k names its path in the state) equals theirs.
#[test]
fn the_viewer_shows_a_game_of_each_kind_half_way_and_at_its_end() {
    let l = league();
    let dir = l.dir.join("report");
    let mut labels = BTreeSet::new();
    for row in &l.rows {
        let label = if row.players == 3 {
            format!("{}-3p", row.variant)
        } else {
            row.variant.clone()
        };
        if row.offender.is_some() || !labels.insert(label.clone()) {
            continue;
        }
        let record = record_text(&l.dir, row);
        let decisions = record.lines().filter(|x| !x.contains("\"type\":")).count();
        let end: Value = serde_json::from_str(record.lines().last().unwrap()).unwrap();
        let state = &end["state"];
        let dom = open_clean(&dir, &format!("#game={}&step=end", row.game_id));
        assert!(
            dom.contains(&format!("decision {decisions} of {decisions}")),
            "{}: not at the last step",
            row.game_id
        );
        assert!(
            dom.contains(&format!("<span class=\"reason\">{}</span>", row.reason)),
            "{}: no reason",
            row.game_id
        );
        check_drawn(&dom, state, row, "the record's final state");
        board_labels(&dom, row);

        // Half way: the position `arena state` gives after the same moves.
        let header: Value = serde_json::from_str(record.lines().next().unwrap()).unwrap();
        let moves: Vec<String> = record
            .lines()
            .filter_map(|x| serde_json::from_str::<Value>(x).ok())
            .filter(|v| v.get("type").is_none())
            .map(|v| v["option"].as_str().unwrap().to_string())
            .collect();
        let k = moves.len() / 2;
        let mut cmd = arena();
        cmd.args(["state", &row.variant, "--players", &row.players.to_string()])
            .args(["--max-plies", &header["max_plies"].to_string()])
            .args(["--moves", &moves[..k].join(" ")]);
        for (key, v) in header["options"].as_object().unwrap() {
            cmd.args(["--option", &format!("{key}={}", v.as_str().unwrap())]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want: Value = serde_json::from_slice(&out.stdout).unwrap();
        let dom = open_clean(&dir, &format!("#game={}&decision={k}", row.game_id));
        assert!(
            dom.contains(&format!("decision {k} of {decisions}")),
            "{}: not at step {k}",
            row.game_id
        );
        check_drawn(
            &dom,
            &want["state"],
            row,
            &format!("arena state after {k} moves"),
        );
    }
    assert_eq!(labels.len(), 6, "{labels:?}");
}

/// The labels around a board say whose is what, without running into each
/// other: F.I.L.O's two sides on lines of their own with their bots,
/// Kisolo's rows by ring and bot, Diffusion's North and South bots and
/// whose large pit is West and East.
fn board_labels(dom: &str, row: &GameRow) {
    let texts: Vec<String> = dom
        .split("<text ")
        .skip(1)
        .map(|t| {
            let inner = t.split_once('>').map_or("", |(_, r)| r);
            let inner = inner.split("</text>").next().unwrap_or_default();
            // The tspans' own tags out: the text as shown.
            let mut shown = String::new();
            let mut in_tag = false;
            for c in inner.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => shown.push(c),
                    _ => {}
                }
            }
            let y = t.split("y=\"").nth(1).and_then(|r| r.split('"').next());
            format!("{}|{shown}", y.unwrap_or_default())
        })
        .collect();
    let has = |want: &str| texts.iter().any(|t| t.contains(want));
    let (a, b) = (&row.seat0, &row.seat1);
    match row.variant.as_str() {
        "filo" => {
            let white = texts
                .iter()
                .find(|t| t.contains(&format!("white ({a}): reserve")));
            let black = texts
                .iter()
                .find(|t| t.contains(&format!("black ({b}): reserve")));
            let y = |t: Option<&String>| t.and_then(|t| t.split('|').next().map(str::to_string));
            assert!(white.is_some() && black.is_some(), "{texts:?}");
            assert_ne!(
                y(white),
                y(black),
                "F.I.L.O's sides share a line: {texts:?}"
            );
        }
        "kisolo" => {
            for (ring, bot) in [("outer", a), ("inner", a), ("outer", b), ("inner", b)] {
                let short: String = bot.chars().take(13).collect();
                assert!(has(&format!("{ring}: {short}")), "{ring} {bot}: {texts:?}");
            }
        }
        "diffusion" => {
            assert!(
                has(&format!("North: {b}")) && has(&format!("South: {a}")),
                "{texts:?}"
            );
            assert!(has("North's") && has("South's"), "{texts:?}");
        }
        _ => {}
    }
}

/// The viewer's keys (End, arrows, Home), slider and buttons step through
/// the game, and a click on a column sorts the standings: a page holding
/// the report in a frame presses them (file:// pages may script each other
/// with --allow-file-access-from-files) and writes what the report shows
/// after each into its own DOM.
#[test]
fn the_viewer_steps_with_keys_slider_and_buttons_and_the_standings_sort() {
    let l = league();
    let row = l
        .rows
        .iter()
        .find(|r| r.offender.is_none() && r.variant == "tricala")
        .unwrap();
    let record = record_text(&l.dir, row);
    let n = record.lines().filter(|x| !x.contains("\"type\":")).count();
    assert!(n > 6);
    let tmp = tempfile::tempdir().unwrap();
    let index = l.dir.join("report/index.html").canonicalize().unwrap();
    let page = tmp.path().join("keys.html");
    std::fs::write(
        &page,
        format!(
            r#"<!DOCTYPE html><html><body>
<iframe id="f" width="1200" height="900" src="file://{}#game={}"></iframe>
<pre id="out"></pre>
<script>
const f = document.getElementById("f");
const log = [];
const doc = () => f.contentDocument;
const step = () => {{ const e = doc() && doc().querySelector(".step"); return e ? e.textContent : null; }};
function key(k) {{
  doc().dispatchEvent(new KeyboardEvent("keydown", {{ key: k, bubbles: true }}));
  log.push(k + ": " + step());
}}
function run() {{
  if (!step()) return setTimeout(run, 50);
  log.push("open: " + step());
  key("End"); key("ArrowLeft"); key("ArrowLeft"); key("Home"); key("ArrowRight");
  // An arrow typed in a text field moves its cursor, not the game.
  const field = doc().createElement("input");
  field.type = "text";
  doc().querySelector(".board-col").appendChild(field);
  field.dispatchEvent(new KeyboardEvent("keydown", {{ key: "ArrowLeft", bubbles: true }}));
  log.push("ArrowLeft in a text field: " + step());
  const slider = doc().querySelector("input[type=range]");
  slider.value = 5;
  slider.dispatchEvent(new Event("input"));
  log.push("slider: " + step());
  doc().querySelectorAll(".controls button")[3].click();
  log.push("last button: " + step());
  doc().querySelectorAll(".controls button")[1].click();
  log.push("previous button: " + step());
  // The overall standings, sorted by Elo up, then down.
  const table = doc().querySelector(".standings-table");
  const bots = () => Array.from(table.tBodies[0].rows).map((r) => r.dataset.bot).join(",");
  const before = bots();
  const elo = table.tHead.rows[0].cells[2];
  elo.click();
  const up = bots();
  elo.click();
  const down = bots();
  log.push("sorted: " + (up === before.split(",").reverse().join(",") && down === before));
  document.getElementById("out").textContent = log.join("\n");
}}
f.onload = run;
</script></body></html>"#,
            index.display(),
            row.game_id
        ),
    )
    .unwrap();
    let (dom, console) = open(
        &format!("file://{}", page.display()),
        &["--allow-file-access-from-files"],
    );
    assert!(console.is_empty(), "{}", console.join("\n"));
    let out = between(&dom, "<pre id=\"out\">", "</pre>");
    let want = [
        "open: decision 0 of N".to_string(),
        "End: decision N of N".into(),
        format!("ArrowLeft: decision {} of N", n - 1),
        format!("ArrowLeft: decision {} of N", n - 2),
        "Home: decision 0 of N".into(),
        "ArrowRight: decision 1 of N".into(),
        "ArrowLeft in a text field: decision 1 of N".into(),
        "slider: decision 5 of N".into(),
        "last button: decision N of N".into(),
        format!("previous button: decision {} of N", n - 1),
        "sorted: true".into(),
    ]
    .join("\n")
    .replace('N', &n.to_string());
    assert_eq!(
        out.trim_start_matches("<pre id=\"out\">")
            .trim_end_matches("</pre>"),
        want
    );
}

/// The page of a running league that was not written again for a long
/// while (its run killed with -9 leaves the mark "running") says how old
/// it is and where to look; a fresh one does not.
#[test]
fn a_running_page_not_written_for_long_says_how_old_it_is() {
    let l = league();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for (at, old) in [(now - 3600, true), (now, false)] {
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join("report");
        copy_dir(&l.dir.join("report"), &copy);
        let index = copy.join("index.html");
        let html = std::fs::read_to_string(&index).unwrap();
        // The marks a running league's page carries (view.rs, LIVE_NOTE
        // and the template's `stale`).
        let live = format!(
            ", <strong class=\"live\" id=\"running\">running</strong> (this page reloads itself)<span id=\"stale\" data-at=\"{at}\" hidden></span>. Generated "
        );
        assert!(html.contains(". Generated "));
        std::fs::write(&index, html.replacen(". Generated ", &live, 1)).unwrap();
        let (dom, console) = open(&format!("file://{}", index.display()), &[]);
        assert!(console.is_empty(), "{}", console.join("\n"));
        let said = dom.contains("minutes ago") && dom.contains("arena status");
        assert_eq!(
            said,
            old,
            "written at {at}: {}",
            between(&dom, "<p class=\"sub\">", "</p>")
        );
    }
}

/// An address whose %-escape is cut short (a link copied in part) opens
/// the game all the same: it threw "URI malformed", and the page showed
/// "script error" and no game.
#[test]
fn an_address_with_a_broken_escape_still_opens_the_game() {
    let l = league();
    let row = &l.rows[0];
    let index = l.dir.join("report/index.html").canonicalize().unwrap();
    let (dom, console) = open(
        &format!("file://{}#game={}&decision=%", index.display(), row.game_id),
        &[],
    );
    assert!(console.is_empty(), "{}", console.join("\n"));
    assert!(!dom.contains("script error"), "{dom}");
    assert!(dom.contains("class=\"step\""), "no viewer in {dom}");
}

/// The numbers drawn on the board of `dom` (data-k names each one's path
/// in the state) are those of `state`, and there are enough of them.
fn check_drawn(dom: &str, state: &Value, row: &GameRow, what: &str) {
    let shown = drawn(between(dom, "<div class=\"board\"", "</svg>"));
    let minimum = match row.variant.as_str() {
        "filo" => 8 + 6,
        "tricala" => 21 + 2 * row.players as usize,
        "hackaback" => 12 + 1,
        "kisolo" => 28,
        _ => 14,
    };
    assert!(
        shown.len() >= minimum,
        "{}: {} numbers drawn, want {minimum} at least",
        row.game_id,
        shown.len()
    );
    for (k, v) in &shown {
        let want = at(state, k).unwrap_or_else(|| panic!("{}: {k} is not in {what}", row.game_id));
        let got: Value = serde_json::from_str(v).unwrap();
        assert_eq!(
            &got, want,
            "{}: {k} drawn {got}, {what} says {want}",
            row.game_id
        );
    }
}

/// A damaged record and a missing one are notes in the report, not errors;
/// shards merge into one report in the league's folder.
#[test]
fn damaged_records_are_notes_and_shards_merge() {
    let l = league();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("league");
    copy_dir(&l.dir, &copy);
    std::fs::remove_dir_all(copy.join("report")).unwrap();
    let (a, b) = (&l.rows[0].game_id, &l.rows[1].game_id);
    // a's record damaged in its log (its second half overwritten); b's
    // row pointing past the end of the log.
    let ra = &l.rows[0];
    let half = ra.record_length.unwrap() / 2;
    let log = std::fs::OpenOptions::new()
        .write(true)
        .open(copy.join("games").join(&ra.record_file))
        .unwrap();
    std::os::unix::fs::FileExt::write_at(
        &log,
        &vec![b'#'; half as usize],
        ra.record_offset.unwrap() + half,
    )
    .unwrap();
    let mut csv_rows = csvio::read_rows(&copy.join("games.csv")).unwrap();
    csv_rows[1].record_offset = Some(1 << 40);
    let mut w = csv::Writer::from_path(copy.join("games.csv")).unwrap();
    for r in &csv_rows {
        w.serialize(r).unwrap();
    }
    drop(w);
    let dir = report(&[&copy]);
    assert_eq!(dir, copy.join("report"));
    let main = open_clean(&dir, "");
    assert!(
        main.contains("Records that could not be shown (2)"),
        "{}",
        between(&main, "<section id=\"damaged\"", "</section>")
    );
    // The damaged frame is named by its log and offset.
    let at = format!(
        "{}: the record at byte {}",
        ra.record_file,
        ra.record_offset.unwrap()
    );
    assert!(
        between(&main, "<section id=\"damaged\"", "</section>").contains(&at),
        "{}",
        between(&main, "<section id=\"damaged\"", "</section>")
    );
    for (id, row) in [(a, &l.rows[0]), (b, &l.rows[1])] {
        let dom = open_clean(&dir, &format!("#game={id}&step=end"));
        assert!(dom.contains("damaged-note"), "{id}: no note");
        // What its row says is shown all the same (it read ", players,
        // seed ." and a result without its reason).
        let said = format!(
            "{}, {} players, seed {}. ",
            row.variant, row.players, row.seed
        );
        assert!(dom.contains(&said), "{id}: not {said:?}");
        assert!(
            dom.contains(&format!("class=\"reason\">{}<", row.reason)),
            "{id}: no reason {}",
            row.reason
        );
    }

    // The same games as two shard folders: one report in their folder.
    let shards = tmp.path().join("sharded");
    let (one, two) = (shards.join("shard-1-of-2"), shards.join("shard-2-of-2"));
    copy_dir(&l.dir, &one);
    copy_dir(&l.dir, &two);
    let csv = std::fs::read_to_string(l.dir.join("games.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let (mut x, mut y) = (format!("{header}\n"), format!("{header}\n"));
    for (i, line) in lines.enumerate() {
        let half = if i % 2 == 0 { &mut x } else { &mut y };
        half.push_str(line);
        half.push('\n');
    }
    std::fs::write(one.join("games.csv"), x).unwrap();
    std::fs::write(two.join("games.csv"), y).unwrap();
    for d in [&one, &two] {
        let _ = std::fs::remove_file(d.join("league.json"));
        let _ = std::fs::remove_dir_all(d.join("report"));
    }
    for args in [vec![shards.as_path()], vec![one.as_path(), two.as_path()]] {
        let dir = report(&args);
        assert_eq!(dir, shards.join("report"));
        let index = std::fs::read_to_string(dir.join("games/index.js")).unwrap();
        for r in &l.rows {
            assert!(
                index.contains(&format!("[\"{}\",", r.game_id)),
                "{}",
                r.game_id
            );
        }
    }
    // Shard folders in different folders: a report where -o says, else
    // a refusal that asks for it.
    let apart = tmp.path().join("elsewhere/shard-2-of-2");
    copy_dir(&two, &apart);
    let out = arena().arg("report").args([&one, &apart]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--out DIR"), "{err}");
    let o = tmp.path().join("apart-report");
    let dir = report(&[one.as_path(), apart.as_path(), Path::new("-o"), o.as_path()]);
    assert_eq!(dir, o);
    let index = std::fs::read_to_string(dir.join("games/index.js")).unwrap();
    assert!(l
        .rows
        .iter()
        .all(|r| index.contains(&format!("[\"{}\",", r.game_id))));
    // Shards that overlap (the second holds every game again): each game
    // once, and the duplicates said, as `arena rate` says them.
    std::fs::write(two.join("games.csv"), &csv).unwrap();
    let _ = std::fs::remove_dir_all(shards.join("report"));
    let out = arena().arg("report").arg(&shards).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let halves = l.rows.len().div_ceil(2);
    assert!(
        err.contains(&format!("warning: {halves} duplicate rows")),
        "{err}"
    );
    // What is not a results folder is named.
    let out = arena()
        .arg("report")
        .arg(tmp.path().join("nothing"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing"));
}

/// A league.json that does not read (a hand edit gone wrong) is said,
/// with its path and what is wrong, rather than silently dropping the
/// league's name, scheduled games and SPRT verdict from the report.
#[test]
fn an_unreadable_league_json_is_a_warning_that_names_it() {
    let l = league();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("league");
    copy_dir(&l.dir, &copy);
    let meta = copy.join("league.json");
    let text = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(
        &meta,
        text.replacen("\"games\":", "\"games\": \"x\", \"was\":", 1),
    )
    .unwrap();
    let before = std::fs::read(copy.join("games.csv")).unwrap();
    let out = arena()
        .arg("report")
        .arg(&copy)
        .arg("-o")
        .arg(tmp.path().join("report"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("warning: {}: unreadable (", meta.display()))
            && err.contains(
                "`games`: invalid type: string \"x\", expected a whole number (0 or more)"
            ),
        "{err}"
    );
    assert_eq!(std::fs::read(copy.join("games.csv")).unwrap(), before);
}

/// The record of `row` in the results folder `dir`, where its row says.
fn record_text(dir: &Path, row: &GameRow) -> String {
    RecordAt::of(&dir.join("games"), row)
        .unwrap()
        .read_text()
        .unwrap()
}

/// A league of 1,000 bots (issue 34): each plays its four neighbours on a
/// ring, a seat-swap pair each, in Kisolo (4,000 games, no records). The
/// standings list every bot a page of rows at a time, a search
/// (`#standings&q=NAME`, what typing in the box gives) finds one in every
/// table, its page (a file of its own, loaded when first shown) holds its
/// row of results, and the crosstable shows the best 30 saying so.
#[test]
fn a_report_of_a_thousand_bots_pages_finds_one_and_shows_its_row() {
    const BOTS: usize = 1000;
    let dir = tempfile::tempdir().unwrap();
    let name = |i: usize| format!("bot{:04}", i % BOTS);
    let mut w = csv::Writer::from_path(dir.path().join("games.csv")).unwrap();
    let mut n = 0;
    for i in 0..BOTS {
        for d in [1, 2] {
            let (a, b) = (name(i), name(i + d));
            let group = format!("g{i}-{d}");
            // Bots with higher numbers are stronger, with draws now and then.
            for (k, (s0, s1)) in [(&a, &b), (&b, &a)].into_iter().enumerate() {
                let score0 = match (i + d + k) % 5 {
                    0 => 0.5,
                    _ if (s0 > s1) == ((i + k) % 7 != 0) => 1.0,
                    _ => 0.0,
                };
                let row = GameRow {
                    game_id: format!("{group}-o{k}"),
                    variant: "kisolo".into(),
                    players: 2,
                    group: group.clone(),
                    seat0: s0.clone(),
                    seat1: s1.clone(),
                    score0,
                    score1: 1.0 - score0,
                    reason: if score0 == 0.5 { "tie" } else { "store" }.into(),
                    plies: 10,
                    duration_ms: 1,
                    seed: 1,
                    ..GameRow::default()
                };
                w.serialize(&row).unwrap();
                n += 1;
            }
        }
    }
    w.flush().unwrap();
    drop(w);
    assert_eq!(n, 4 * BOTS);
    let out = report(&[dir.path()]);
    assert!(out.join("bots").is_dir(), "no bots/ folder in the report");

    // Every bot in the standings, 50 rows of each table shown, a pager.
    let dom = open_clean(&out, "");
    let rows = dom.matches("class=\"bot-row\"").count();
    assert_eq!(
        rows,
        2 * BOTS,
        "rows of the two tables (all variants, kisolo)"
    );
    let shown = dom
        .split("<tr class=\"bot-row\"")
        .skip(1)
        .filter(|r| !r[..r.find('>').unwrap()].contains("hidden"))
        .count();
    assert_eq!(shown, 2 * 50, "rows shown: the first 50 of each table");
    // Their interval bars only: the others are drawn when shown.
    assert_eq!(dom.matches("class=\"ibar\"").count(), 2 * 50);
    assert!(dom.contains("rows 1–50 of 1000"), "no pager");
    // The crosstable: the best 30, and a word on the others.
    let cross = between(&dom, "<section id=\"crosstable\"", "</section>");
    assert!(
        cross.contains("The 30 best of this table's 1000 bots"),
        "{}",
        &cross[..cross.len().min(2000)]
    );
    assert!(cross.matches("class=\"rowhead\"").count() <= 2 * 30);

    // A search finds one bot, in both tables, and hides the rest.
    let wanted = "bot0777";
    let dom = open_clean(&out, &format!("#standings&q={wanted}"));
    let visible: Vec<&str> = dom
        .split("<tr ")
        .skip(1)
        .filter(|r| {
            r.starts_with("class=\"bot-row\"") && !r[..r.find('>').unwrap()].contains("hidden")
        })
        .filter_map(|r| r.split("data-bot=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(visible, vec![wanted, wanted], "rows shown for the search");
    let row = between(&dom, &format!("data-bot=\"{wanted}\""), "</tr>");
    assert!(row.contains("class=\"ibar\""), "no interval bar: {row}");
    assert!(dom.contains("2 rows match"), "no count of matches");

    // Its page: its ratings and its row of results, against its four
    // neighbours (from its own file).
    let dom = open_clean(&out, &format!("#bot={wanted}"));
    let page = between(&dom, &format!("id=\"bot-{wanted}\""), "</section>");
    assert!(!page.is_empty(), "no page for {wanted}");
    assert!(
        !page[..page.find('>').unwrap()].contains("hidden"),
        "its page is hidden"
    );
    for opp in ["bot0775", "bot0776", "bot0778", "bot0779"] {
        assert!(
            page.contains(&format!("#bot={opp}\"")),
            "{opp} missing from {wanted}'s row"
        );
    }
    assert!(!page.contains("#bot=bot0780\""), "a bot it never met");
}
