//! An owner's side of a ladder (`arena submit`): the upload of a packed
//! bot folder (`POST /api/bots`, asked again while the server is busy),
//! the live feed that tells each step of its version, and the version as
//! the bot's page gives it. What is printed, and when to stop, is the
//! command line's business (`cli/submit.rs`).

use super::error_of;
use std::io::BufRead;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What went wrong talking to a ladder.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The server could not be reached, or the connection broke.
    #[error("{what} {server}: {source}{}", unreachable_hint(source))]
    Unreachable {
        what: &'static str,
        server: String,
        source: Box<ureq::Error>,
    },
    /// The server, or a proxy in front of it, answered that it is not
    /// there for now (502, 503, 504: restarting, say).
    #[error("{server}: {status}: {message}")]
    Unavailable {
        server: String,
        status: u16,
        message: String,
    },
    /// The server answered, but not with what was asked.
    #[error("{server}: {message}")]
    Answer { server: String, message: String },
}

/// What to do about a server that could not be reached, after its error:
/// nothing listening (a typo in the port, a server that is down), a host
/// that does not resolve, a connection cut while the upload was sent, a
/// server that did not answer in time.
fn unreachable_hint(e: &ureq::Error) -> &'static str {
    use std::io::ErrorKind;
    match e {
        ureq::Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => {
            " (nothing listens there: is the ladder running, and is this its address and port? The organiser's `arena serve` prints it: `listening on http://...`)"
        }
        ureq::Error::ConnectionFailed => {
            " (is the ladder running, and is this its address and port?)"
        }
        ureq::Error::HostNotFound => " (no such host: check the address)",
        ureq::Error::Io(io)
            if matches!(
                io.kind(),
                ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::UnexpectedEof
            ) =>
        {
            " (the server closed the connection: it stopped, or a proxy in front of it cut the request)"
        }
        ureq::Error::Timeout(_) => " (no answer in time: the server is busy or stuck)",
        _ => "",
    }
}

/// How long [`Ladder::upload`] waits for the server's go-ahead (`100
/// Continue`) before it sends the body all the same: `arena serve`
/// answers at once, with the go-ahead or a refusal (a token, a limit, the
/// hourly count, a full queue) that is then heard rather than cut short.
const AWAIT_GO_AHEAD: Duration = Duration::from_secs(10);

/// How long [`Ladder::health`] waits for `/health`'s answer.
const QUICK_ANSWER: Duration = Duration::from_secs(30);

/// The limits of an upload, as `/health` gives a ladder's (`uploads`:
/// `upload_mb`, `unpacked_mb`, `upload_files`); `None` from a server that
/// does not say them (an older one).
pub fn limits_of(health: &serde_json::Value) -> Option<crate::wire::archive::Limits> {
    let u = &health["uploads"];
    Some(crate::wire::archive::Limits {
        compressed_bytes: u["upload_mb"].as_u64()?.checked_mul(1 << 20)?,
        unpacked_bytes: u["unpacked_mb"].as_u64()?.checked_mul(1 << 20)?,
        files: usize::try_from(u["upload_files"].as_u64()?).ok()?,
        ..crate::wire::archive::Limits::default()
    })
}

impl SubmitError {
    /// Whether asking again later may be answered: the server could not be
    /// reached, or said it is not there for now.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            SubmitError::Unreachable { .. } | SubmitError::Unavailable { .. }
        )
    }
}

/// The first pause of [`patiently`], doubled after each try.
const FIRST_PAUSE: Duration = Duration::from_secs(1);

/// The longest pause of [`patiently`].
const LONGEST_PAUSE: Duration = Duration::from_secs(10);

/// `ask`, asked again while the server cannot be reached or is not
/// there for now ([`SubmitError::is_transient`]: restarting, say),
/// after a pause that doubles from 1 s to 10 s, until `deadline`;
/// then its last error. `lost` hears the first such error of a spell
/// and the time left, `back` the end of the spell.
pub fn patiently<T>(
    deadline: Instant,
    lost: &mut dyn FnMut(&SubmitError, Duration),
    back: &mut dyn FnMut(),
    ask: &mut dyn FnMut() -> Result<T, SubmitError>,
) -> Result<T, SubmitError> {
    let mut pause = FIRST_PAUSE;
    let mut down = false;
    loop {
        match ask() {
            Ok(v) => {
                if down {
                    back();
                }
                return Ok(v);
            }
            Err(e) if e.is_transient() => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(e);
                }
                if !down {
                    lost(&e, left);
                    down = true;
                }
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            Err(e) => return Err(e),
        }
    }
}

/// A ladder's address and an owner's token.
pub struct Ladder {
    agent: ureq::Agent,
    /// For `/health`, which a ladder answers at once: a server that
    /// takes the connection and says nothing is given up on sooner.
    quick: ureq::Agent,
    server: String,
    token: String,
}

/// The server's answer to an upload: its HTTP status and body.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    /// The `error` of a JSON error body, or the body itself.
    pub fn error(&self) -> String {
        error_of(self.body.as_bytes())
    }
}

impl Ladder {
    /// The ladder at `server` (`http://HOST:PORT`), as the owner of
    /// `token`. Its HTTP client hands 4xx and 5xx answers back as answers
    /// (their body says what was wrong).
    pub fn new(server: &str, token: &str) -> Ladder {
        Ladder {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(120)))
                .timeout_await_100(Some(AWAIT_GO_AHEAD))
                .build()
                .into(),
            quick: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(QUICK_ANSWER))
                .build()
                .into(),
            server: server.trim_end_matches('/').to_string(),
            token: token.to_string(),
        }
    }

    /// The server's address, without a trailing `/`.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// POSTs an upload (a bot folder as tar.gz). A server busy with other
    /// uploads (503 with `Retry-After`), or with another of this owner's
    /// (429 with `Retry-After`: one at a time from one owner; the hourly
    /// count's 429 has none), is asked again after the time it gives, for
    /// up to 10 minutes; `busy` hears each wait (its reason and seconds).
    pub fn upload(
        &self,
        bytes: &[u8],
        busy: &mut dyn FnMut(&str, u64),
    ) -> Result<Answer, SubmitError> {
        self.upload_with(&[], bytes, busy)
    }

    /// [`Ladder::upload`] with the upload's query `query` (its test's
    /// words: `test`, `elo0`, `elo1`, `alpha`, `beta`, `max_games`,
    /// `outcome`).
    pub fn upload_with(
        &self,
        query: &[(&str, String)],
        bytes: &[u8],
        busy: &mut dyn FnMut(&str, u64),
    ) -> Result<Answer, SubmitError> {
        let start = Instant::now();
        loop {
            let mut req = self.agent.post(format!("{}/api/bots", self.server));
            for (k, v) in query {
                req = req.query(*k, v);
            }
            let mut resp = req
                .header("Authorization", format!("Bearer {}", self.token))
                // A refusal before the body (a token, the size, the
                // hourly count, a full queue) is then an answer, not a
                // connection cut in the middle of the body.
                .header("Expect", "100-continue")
                .content_type("application/gzip")
                .send(bytes)
                .map_err(|e| SubmitError::Unreachable {
                    what: "uploading to",
                    server: self.server.clone(),
                    source: Box::new(e),
                })?;
            let status = resp.status().as_u16();
            let retry = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let body = resp.body_mut().read_to_string().unwrap_or_default();
            // A wait of over a minute (the hourly count) is said, not
            // waited out.
            match retry {
                Some(secs)
                    if matches!(status, 503 | 429)
                        && secs <= 60
                        && start.elapsed() < Duration::from_secs(600) =>
                {
                    let secs = secs.max(1);
                    busy(&error_of(body.as_bytes()), secs);
                    std::thread::sleep(Duration::from_secs(secs));
                }
                _ => return Ok(Answer { status, body }),
            }
        }
    }

    /// The ladder's live feed, read on a thread of its own: each event's
    /// JSON; returns once subscribed (or after 10 s: a feed that cannot be
    /// had is no reason not to upload, the steps are then read from the
    /// bot's page).
    pub fn listen(&self) -> mpsc::Receiver<serde_json::Value> {
        let (tx, rx) = mpsc::channel();
        let url = format!("{}/api/events", self.server);
        std::thread::spawn(move || {
            // No time limit: the feed lasts as long as the wait.
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into();
            let Ok(resp) = agent.get(&url).call() else {
                return;
            };
            // Subscribed: the caller may upload now.
            let _ = tx.send(serde_json::Value::Null);
            let reader = std::io::BufReader::new(resp.into_body().into_reader());
            for line in reader.lines() {
                let Ok(line) = line else {
                    return;
                };
                if let Some(data) = line.strip_prefix("data:") {
                    if let Ok(v) = serde_json::from_str(data.trim()) {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let _ = rx.recv_timeout(Duration::from_secs(10));
        rx
    }

    /// `GET path`: the body of a 200 answer. Any other answer is the
    /// server's message (prefixed with `prefix`), as
    /// [`SubmitError::Unavailable`] for 502, 503 and 504; `what` says what
    /// was asked when the server cannot be reached.
    fn get(&self, path: &str, what: &'static str, prefix: &str) -> Result<String, SubmitError> {
        self.get_on(&self.agent, path, what, prefix)
    }

    /// [`Ladder::get`] through `agent`.
    fn get_on(
        &self,
        agent: &ureq::Agent,
        path: &str,
        what: &'static str,
        prefix: &str,
    ) -> Result<String, SubmitError> {
        let unreachable = |e: ureq::Error| SubmitError::Unreachable {
            what,
            server: self.server.clone(),
            source: Box::new(e),
        };
        let mut resp = agent
            .get(format!("{}{path}", self.server))
            .call()
            .map_err(unreachable)?;
        let status = resp.status().as_u16();
        match resp.body_mut().read_to_string() {
            Ok(body) if status == 200 => Ok(body),
            // A body cut off (the server gone meanwhile) is a connection's
            // failure, not an answer.
            Err(e) if status == 200 => Err(unreachable(e)),
            body => {
                let message = format!("{prefix}{}", error_of(body.unwrap_or_default().as_bytes()));
                Err(match status {
                    502..=504 => SubmitError::Unavailable {
                        server: self.server.clone(),
                        status,
                        message,
                    },
                    _ => SubmitError::Answer {
                        server: self.server.clone(),
                        message,
                    },
                })
            }
        }
    }

    /// `GET path` of the ladder's API, as JSON (an answer other than 200
    /// is an error with the server's message).
    pub fn get_json(&self, path: &str) -> Result<serde_json::Value, SubmitError> {
        let body = self.get(path, "asking", &format!("{path}: "))?;
        serde_json::from_str(&body).map_err(|e| SubmitError::Answer {
            server: self.server.clone(),
            message: format!("{path} is not JSON: {e}"),
        })
    }

    /// What the server at this address is, asked before anything is
    /// packed: `/health`'s answer, which an arena ladder gives as JSON with
    /// its `status`; anything else is said to be no ladder.
    pub fn health(&self) -> Result<serde_json::Value, SubmitError> {
        let not_a_ladder = |why: String| {
            SubmitError::Answer {
            server: self.server.clone(),
            message: format!(
                "does not answer as an arena ladder ({why}); check --server: it is the address the organiser's `arena serve` prints"
            ),
        }
        };
        let body = match self.get_on(&self.quick, "/health", "asking", "GET /health: ") {
            Err(SubmitError::Answer { message, .. }) => return Err(not_a_ladder(message)),
            other => other?,
        };
        match serde_json::from_str::<serde_json::Value>(&body) {
            Ok(v) if v["status"].is_string() => Ok(v),
            _ => Err(not_a_ladder("GET /health is not its answer".into())),
        }
    }

    /// The test of version `number` of `bot` (`/api/tests?bot=BOT`), if
    /// one started.
    pub fn test_of(
        &self,
        bot: &str,
        number: i64,
    ) -> Result<Option<serde_json::Value>, SubmitError> {
        let doc = self.get_json(&format!("/api/tests?bot={bot}&limit=1000"))?;
        Ok(doc["tests"].as_array().and_then(|ts| {
            ts.iter()
                .find(|t| t["new_version"].as_i64() == Some(number))
                .cloned()
        }))
    }

    /// Version `number` of `bot`, as `/api/bots/BOT` gives it.
    pub fn version(&self, bot: &str, number: i64) -> Result<serde_json::Value, SubmitError> {
        let answer = |message: String| SubmitError::Answer {
            server: self.server.clone(),
            message,
        };
        let body = self.get(&format!("/api/bots/{bot}"), "asking about the bot at", "")?;
        let doc: serde_json::Value = serde_json::from_str(&body)
            .map_err(|e| answer(format!("the answer about {bot} is not JSON: {e}")))?;
        doc["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["version"].as_i64() == Some(number)))
            .cloned()
            .ok_or_else(|| answer(format!("does not list version {number} of {bot}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn down() -> SubmitError {
        SubmitError::Unavailable {
            server: "http://ladder".into(),
            status: 502,
            message: "restarting".into(),
        }
    }

    #[test]
    fn patiently_asks_again_through_a_spell_said_once_and_not_past_its_deadline() {
        let (mut lost, mut back, mut asked) = (0, 0, 0);
        let got = patiently(
            Instant::now() + Duration::from_secs(600),
            &mut |e, _| {
                assert!(e.is_transient());
                lost += 1
            },
            &mut || back += 1,
            &mut || {
                asked += 1;
                match asked {
                    1 | 2 => Err(down()),
                    _ => Ok(asked),
                }
            },
        );
        assert_eq!(got.unwrap(), 3);
        assert_eq!((lost, back), (1, 1));
        // An answer that is not a moment's: at once.
        let mut asked = 0;
        let got: Result<(), _> = patiently(
            Instant::now() + Duration::from_secs(600),
            &mut |_, _| panic!("not a spell"),
            &mut || panic!("not a spell"),
            &mut || {
                asked += 1;
                Err(SubmitError::Answer {
                    server: "http://ladder".into(),
                    message: "no such bot".into(),
                })
            },
        );
        assert!(!got.unwrap_err().is_transient());
        assert_eq!(asked, 1);
        // Past the deadline: the last error.
        let got: Result<(), _> = patiently(Instant::now(), &mut |_, _| {}, &mut || {}, &mut || {
            Err(down())
        });
        assert!(got.unwrap_err().is_transient());
    }
}
