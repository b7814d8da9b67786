//! Pages opened in headless Chromium as a plain command (`--headless
//! --dump-dom`, with `--virtual-time-budget` so that the page's scripts
//! have run, and `--enable-logging=stderr` so that every console message
//! and uncaught error shows on its stderr as a `CONSOLE` line), and what
//! the tests read in the DOM it prints: for tests/report_html.rs and
//! tests/report_view.rs.
#![allow(dead_code)]

use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The DOM of `url` after its scripts ran, and the console's messages;
/// `who` says which tests need Chromium (if it must be installed),
/// `extra` are more flags of Chromium.
pub fn dump(who: &str, url: &str, extra: &[&str]) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(super::chromium(who))
        .args(super::CHROMIUM_FLAGS)
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=20000",
            "--dump-dom",
        ])
        .args(extra)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // Read both pipes while it runs; give up (and fail) after a generous time.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(180);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish with {url} in 180 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dom = t_out.join().unwrap();
    let console = t_err
        .join()
        .unwrap()
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    assert!(dom.contains("</html>"), "no DOM from chromium for {url}");
    (dom, console)
}

/// The DOM of `url` after its scripts ran; fails on any console message
/// or error the page shows in `#errors`.
pub fn dump_clean(who: &str, url: &str) -> String {
    let (dom, console) = dump(who, url, &[]);
    assert!(
        console.is_empty(),
        "console at {url}:\n{}",
        console.join("\n")
    );
    assert!(
        !dom.contains("class=\"js-error\""),
        "errors shown at {url}: {}",
        between(&dom, "<div id=\"errors\"", "</div>")
    );
    dom
}

/// The part of `s` from the first `from` through the next `to` (to its
/// end when there is none; empty when there is no `from`).
pub fn between<'a>(s: &'a str, from: &str, to: &str) -> &'a str {
    let Some(i) = s.find(from) else { return "" };
    let rest = &s[i..];
    &rest[..rest.find(to).map_or(rest.len(), |j| j + to.len())]
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Every value of attribute `name` in `dom`, unescaped, in order.
pub fn attrs(dom: &str, name: &str) -> Vec<String> {
    let key = format!(" {name}=\"");
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(i) = rest.find(&key) {
        rest = &rest[i + key.len()..];
        let end = rest.find('"').unwrap_or(rest.len());
        out.push(unescape(&rest[..end]));
        rest = &rest[end..];
    }
    out
}

/// The (data-k, data-v) pairs of the elements of `dom` that carry them
/// (the numbers a board draws: the key of a state's value, its JSON).
pub fn drawn(dom: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(i) = rest.find(" data-k=\"") {
        // The tag holding it.
        let start = rest[..i].rfind('<').unwrap_or(0);
        let end = i + rest[i..].find('>').unwrap_or(rest.len() - i);
        let tag = &rest[start..end];
        let k = attrs(tag, "data-k");
        let v = attrs(tag, "data-v");
        if let (Some(k), Some(v)) = (k.first(), v.first()) {
            out.push((k.clone(), v.clone()));
        }
        rest = &rest[end..];
    }
    out
}

/// The value at a dotted path of a state (objects by key, arrays by
/// index).
pub fn at<'a>(state: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(state, |v, p| match v {
        Value::Object(m) => m.get(p),
        Value::Array(a) => a.get(p.parse::<usize>().ok()?),
        _ => None,
    })
}
