//! The analysis of a game in the viewer (issue 51, item 4), in headless
//! Chromium: a real league of two random bots is played by the real
//! `arena` binary; `arena analyse RESULTS GAME --save` keeps a game's
//! verdicts in the results folder; the report written then, and `arena
//! view` serving the folder, show beside each decision the value of the
//! option played and the best one, the blunders marked, and a graph of
//! who stands better, each checked against the saved verdicts. A game
//! analysed while `arena view` runs is shown too. Screenshots are written
//! to `target/tmp/screenshots/` for a person to look at.

use crate::common;

use common::browser::{wait_for, Browser};
use mancala_arena::results::{csvio, GameRow};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn arena() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arena"));
    c.stdin(Stdio::null());
    c
}

fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Three random bots, Hackaback, Kisolo and Tricala for three, two
/// rounds: 36 games.
fn league(tmp: &Path) -> (PathBuf, Vec<GameRow>) {
    let random = env!("CARGO_BIN_EXE_random-bot");
    let file = tmp.join("t.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "analysed"
seed = 5
bots = [
  {{ name = "ra", command = ["{random}"] }},
  {{ name = "rb", command = ["{random}"] }},
  {{ name = "rc", command = ["{random}"] }},
]
variants = ["hackaback", "kisolo", "tricala3"]
rounds = 2
openings = 1
max_plies = 120
concurrency = 2
output = "out"
"#
        ),
    )
    .unwrap();
    ok(arena()
        .arg("run")
        .arg(&file)
        .args(["--quiet", "--no-report"])
        .output()
        .unwrap());
    let out = tmp.join("out");
    let rows = csvio::read_rows(&out.join("games.csv")).unwrap();
    assert!(rows.len() >= 4, "{} games", rows.len());
    (out, rows)
}

/// `arena analyse OUT ID --save`, a shallow search (random bots give away
/// plenty); the verdicts as saved in the results folder.
fn analyse(out: &Path, id: &str) -> Vec<Value> {
    let printed = ok(arena()
        .arg("analyse")
        .arg(out)
        .arg(id)
        .args(["--save", "--json", "--no-exact", "--depth", "2"])
        .output()
        .unwrap());
    let saved = std::fs::read_to_string(out.join("analysis").join(format!("{id}.jsonl")))
        .expect("the analysis is saved in the results folder");
    assert_eq!(saved, printed, "the file holds the lines --json prints");
    saved
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A verdict's value as the viewer writes it (report.js `valueText`).
fn value_text(a: &Value) -> String {
    match (a["result"].as_str(), a["plies"].as_u64()) {
        (Some(r), Some(p)) => format!("{r} in {p}"),
        (Some(r), None) => r.to_string(),
        _ => format!(
            "{:.2}, depth {}",
            a["score"].as_f64().unwrap(),
            a["depth"].as_u64().unwrap()
        ),
    }
}

/// A verdict's value in the decisions' table (report.js `shortValue`).
fn short_text(a: &Value) -> String {
    match a["depth"].as_u64() {
        Some(_) if a["result"].is_null() => format!("{:.2}", a["score"].as_f64().unwrap()),
        _ => value_text(a),
    }
}

/// The 1-based numbers of the decisions marked as blunders.
fn blunders(verdicts: &[Value]) -> Vec<u64> {
    verdicts
        .iter()
        .filter(|v| v["blunder"] == Value::Bool(true))
        .map(|v| v["decision"].as_u64().unwrap())
        .collect()
}

/// Checks the game of `players` shown at `url` (which must be the
/// position after its first blunder, when it has one) against
/// `verdicts`.
fn check_shown(b: &mut Browser, url: &str, verdicts: &[Value], players: u8) {
    b.open(url);
    let n = verdicts.len();
    b.wait(
        "the game's analysis",
        &format!("document.querySelectorAll('.advantage svg rect.adv').length === {n}"),
    );
    // Beside each decision: the value of the option played, the best one
    // when it is another, and the blunders marked.
    let cells = b.eval(
        "[...document.querySelectorAll('.decisions tbody tr')].map(r => \
           [r.querySelector('td.value').textContent, r.querySelector('td.best').textContent, \
            r.classList.contains('blunder'), r.querySelector('.mark.blunder') !== null, \
            r.querySelector('td.value').title])",
    );
    let cells = cells.as_array().expect("the decisions' rows");
    assert_eq!(cells.len(), n, "a row per decision");
    for (v, c) in verdicts.iter().zip(cells) {
        let shown = |k: usize| c[k].as_str().unwrap_or_default().to_string();
        assert_eq!(
            shown(0),
            short_text(&v["played_value"]),
            "decision {}",
            v["decision"]
        );
        assert!(
            shown(4).starts_with(&format!("{}: ", value_text(&v["played_value"]))),
            "decision {}: {}",
            v["decision"],
            shown(4)
        );
        // The best option is named when it is another, of another value.
        let same = short_text(&v["best_value"]) == short_text(&v["played_value"]);
        let best = if v["best"] == v["played"] || same {
            String::new()
        } else {
            format!(
                "{} {}",
                v["best"].as_str().unwrap(),
                short_text(&v["best_value"])
            )
        };
        assert_eq!(shown(1), best, "decision {}", v["decision"]);
        let marked = v["blunder"] == Value::Bool(true);
        assert_eq!(c[2], Value::Bool(marked), "decision {}", v["decision"]);
        assert_eq!(c[3], Value::Bool(marked), "decision {}", v["decision"]);
    }
    // The graph: seat 0's expected score after each decision; with three
    // players, each decision's player's own.
    let shares = b.eval(
        "[...document.querySelectorAll('.advantage svg rect.adv')].map(r => Number(r.dataset.share))",
    );
    for (v, s) in verdicts.iter().zip(shares.as_array().unwrap()) {
        let score = v["played_value"]["score"].as_f64().unwrap();
        let want = match (players, v["seat"].as_u64()) {
            (3, _) | (_, Some(0)) => score,
            _ => 1.0 - score,
        };
        assert!(
            (s.as_f64().unwrap() - want).abs() < 1e-9,
            "decision {}: share {s}, want {want}",
            v["decision"]
        );
    }
    let errors = b.eval(
        "document.getElementById('errors') ? document.getElementById('errors').textContent : ''",
    );
    assert_eq!(errors, Value::String(String::new()), "errors on the page");
    // At the position after the first blunder: what it gave away.
    let Some(&first) = blunders(verdicts).first() else {
        return;
    };
    let first = first as usize;
    let v = &verdicts[first - 1];
    let last = b.wait(
        "the last decision's verdict",
        &format!(
            "document.querySelector('.analysis').dataset.step === '{first}' && \
             document.querySelector('.analysis .last').textContent"
        ),
    );
    let last = last.as_str().unwrap();
    for part in [
        v["played"].as_str().unwrap(),
        v["best"].as_str().unwrap(),
        v["why"].as_str().unwrap(),
        "??",
    ] {
        assert!(last.contains(part), "{part:?} not in {last:?}");
    }
    // One decision back: the best option at the blunder's decision.
    b.eval("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowLeft'}))");
    let due = b.wait(
        "the decision due",
        &format!(
            "document.querySelector('.analysis').dataset.step === '{}' && \
             document.querySelector('.advantage').dataset.step === '{}' && \
             document.querySelector('.analysis .due').textContent",
            first - 1,
            first - 1
        ),
    );
    let want = format!(
        "{} {}",
        v["best"].as_str().unwrap(),
        value_text(&v["best_value"])
    );
    assert!(due.as_str().unwrap().ends_with(&want), "{due} for {want}");
}

#[test]
fn the_viewer_shows_each_decisions_verdict_blunders_and_who_stands_better() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, rows) = league(tmp.path());
    // Two games with a blunder each (random bots give plenty away).
    let mut analysed = Vec::new();
    for row in rows.iter().filter(|r| r.players == 2) {
        let verdicts = analyse(&out, &row.game_id);
        if !blunders(&verdicts).is_empty() {
            analysed.push((row.game_id.clone(), verdicts));
        }
        if analysed.len() == 2 {
            break;
        }
    }
    assert_eq!(analysed.len(), 2, "two games of random bots with a blunder");
    let (id, verdicts) = &analysed[0];
    // A game of Tricala for three, each decision's player's score drawn.
    let three = rows
        .iter()
        .find(|r| r.players == 3)
        .expect("a 3-player game");
    let verdicts3 = analyse(&out, &three.game_id);
    // The report written now holds the analysed games, in its sample.
    ok(arena().arg("report").arg(&out).output().unwrap());
    let page = out.join("report").join("index.html");
    let mut b = Browser::start();
    b.screen(1280, 900, false);
    let first = blunders(verdicts)[0];
    check_shown(
        &mut b,
        &format!("file://{}#game={id}&decision={first}", page.display()),
        verdicts,
        2,
    );
    b.open(&format!(
        "file://{}#game={id}&decision={first}",
        page.display()
    ));
    b.wait(
        "the graph",
        "document.querySelector('.advantage svg') !== null",
    );
    let shot = b.screenshot("analysis-report");
    eprintln!("screenshot: {}", shot.display());
    check_shown(
        &mut b,
        &format!(
            "file://{}#game={}&decision={}",
            page.display(),
            three.game_id,
            blunders(&verdicts3).first().copied().unwrap_or(0)
        ),
        &verdicts3,
        3,
    );
    b.screenshot("analysis-report-3p");

    // `arena view`: the second game, analysed again (deeper) while it
    // runs, is shown with its new verdicts.
    let v = common::league::view(&out);
    let (id2, _) = &analysed[1];
    b.open(&format!("{}#game={id2}", v.url));
    b.wait(
        "the second game's analysis",
        "document.querySelectorAll('.advantage svg rect.adv').length > 0",
    );
    let again = wait_for("a deeper analysis with a blunder", || {
        let printed = ok(arena()
            .arg("analyse")
            .arg(&out)
            .arg(id2)
            .args(["--save", "--json", "--no-exact", "--depth", "3"])
            .output()
            .unwrap());
        let verdicts: Vec<Value> = printed
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (!blunders(&verdicts).is_empty()).then_some(verdicts)
    });
    let first2 = blunders(&again)[0];
    check_shown(
        &mut b,
        &format!("{}?again#game={id2}&decision={first2}", v.url),
        &again,
        2,
    );
    let depth = b.eval("document.querySelector('.decisions tbody td.value').title");
    assert!(
        depth.as_str().unwrap().contains("depth 3:"),
        "the new analysis is shown: {depth}"
    );
    b.screenshot("analysis-view");
}
