//! Headless Chromium driven over the DevTools protocol, for the ladder's
//! browser tests (tests/ladder_browse.rs, tests/ladder_pages.rs): commands on Chromium's fd 3, answers on its fd 4, each one
//! JSON message ended by a NUL byte; no crate needed. A page's screenshot
//! is written to a PNG file for a person to look at.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long any one thing may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(180);

/// Polls `f` every quarter second until it gives a value; fails with
/// `what` after [`PATIENCE`].
pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "waited {PATIENCE:?} for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Headless Chromium with one page (its session); killed when dropped.
pub struct Browser {
    child: Child,
    to: std::io::PipeWriter,
    from: mpsc::Receiver<Value>,
    next: u64,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub fn start() -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let (child_in, to) = std::io::pipe().unwrap();
        let (from, child_out) = std::io::pipe().unwrap();
        let (r, w) = (child_in.as_raw_fd(), child_out.as_raw_fd());
        let mut cmd = Command::new(super::chromium("the ladder's browser tests"));
        cmd.args(super::CHROMIUM_FLAGS)
            .args(["--hide-scrollbars", "--remote-debugging-pipe"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: between fork and exec only async-signal-safe calls: the
        // pipe ends move above 10 first, so that placing them at 3 and 4
        // cannot close one another, then lose their close-on-exec.
        unsafe {
            cmd.pre_exec(move || {
                let a = libc::fcntl(r, libc::F_DUPFD, 10);
                let b = libc::fcntl(w, libc::F_DUPFD, 10);
                if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(a);
                libc::close(b);
                Ok(())
            });
        }
        let child = cmd.spawn().expect("chromium starts");
        drop((child_in, child_out));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut from = BufReader::new(from);
            let mut buf = Vec::new();
            while matches!(from.read_until(0, &mut buf), Ok(n) if n > 0) {
                buf.pop_if(|b| *b == 0);
                if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
                buf.clear();
            }
        });
        let mut b = Browser {
            child,
            to,
            from: rx,
            next: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = b.call("Target.createTarget", json!({ "url": "about:blank" }));
        let attached = b.call(
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        b.screen(1100, 900, false);
        b
    }

    /// Sends `method` (to the page once attached) and returns its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        match self.try_call(method, params) {
            Ok(v) => v,
            Err(e) => panic!("{method}: {e}"),
        }
    }

    /// Sends `method` and returns its result, or the error Chromium gave.
    fn try_call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("chromium takes a command");
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(v) = self.from.recv_timeout(left) else {
                panic!("chromium did not answer {method} in {PATIENCE:?}");
            };
            if v["id"] == id {
                return match v["error"].is_null() {
                    true => Ok(v["result"].clone()),
                    false => Err(v["error"].clone()),
                };
            }
        }
    }

    /// The value of a JavaScript expression in the page (a promise's
    /// value once it settles).
    pub fn eval(&mut self, expr: &str) -> Value {
        match self.try_eval(expr) {
            Ok(v) => v,
            Err(e) => panic!("Runtime.evaluate: {e}"),
        }
    }

    /// [`Browser::eval`], or Chromium's error or the expression's
    /// exception, as when the page navigated away while `expr` ran.
    fn try_eval(&mut self, expr: &str) -> Result<Value, Value> {
        let r = self.try_call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
        )?;
        match r["exceptionDetails"].is_null() {
            true => Ok(r["result"]["value"].clone()),
            false => Err(json!({ "expression": expr, "exception": r["exceptionDetails"] })),
        }
    }

    /// Polls `expr` until it is neither null, false nor 0. A page that
    /// navigates while `expr` runs (as a form sent on a change does) is
    /// polled again: it is not there yet.
    pub fn wait(&mut self, what: &str, expr: &str) -> Value {
        wait_for(what, || match self.try_eval(expr) {
            Ok(v) => (!(v.is_null() || v == false || v == 0)).then_some(v),
            Err(e)
                if [
                    "navigated or closed",
                    "Cannot find context",
                    "context was destroyed",
                ]
                .iter()
                .any(|m| e.to_string().contains(m)) =>
            {
                None
            }
            Err(e) => panic!("{what}: Runtime.evaluate: {e}"),
        })
    }

    /// Opens `url` and waits until its scripts ran (the load event).
    pub fn open(&mut self, url: &str) {
        let r = self.call("Page.navigate", json!({ "url": url }));
        assert!(r["errorText"].is_null(), "{url}: {}", r["errorText"]);
        self.wait(
            &format!("{url} to load"),
            &format!(
                "document.readyState === 'complete' && location.href.startsWith({})",
                json!(url.split('#').next().unwrap_or(url))
            ),
        );
    }

    /// The screen the page is shown on: `width` by `height` CSS pixels,
    /// as a phone when `mobile`.
    pub fn screen(&mut self, width: u32, height: u32, mobile: bool) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile }),
        );
    }

    /// Chooses `file` in the page's file input `selector`.
    pub fn choose_file(&mut self, selector: &str, file: &Path) {
        let doc = self.call("DOM.getDocument", json!({}));
        let node = self.call(
            "DOM.querySelector",
            json!({ "nodeId": doc["root"]["nodeId"], "selector": selector }),
        );
        self.call(
            "DOM.setFileInputFiles",
            json!({ "nodeId": node["nodeId"], "files": [file.display().to_string()] }),
        );
    }

    /// The whole page as a PNG in `target/tmp/screenshots/NAME.png`;
    /// returns its path.
    pub fn screenshot(&mut self, name: &str) -> PathBuf {
        let m = self.call("Page.getLayoutMetrics", json!({}));
        let size = &m["cssContentSize"];
        let (w, h) = (
            size["width"].as_f64().unwrap_or(1100.0).ceil(),
            size["height"].as_f64().unwrap_or(900.0).ceil().min(4000.0),
        );
        let shot = self.call(
            "Page.captureScreenshot",
            json!({
                "format": "png", "captureBeyondViewport": true,
                "clip": { "x": 0, "y": 0, "width": w, "height": h, "scale": 1 },
            }),
        );
        let png = base64_decode(shot["data"].as_str().expect("a screenshot"));
        assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (with padding) to bytes.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|c| *c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, c)| n | value(*c) << (18 - 6 * i));
        let keep = chunk.len() - 1;
        for i in 0..keep {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}
