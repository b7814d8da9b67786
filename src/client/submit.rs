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
    #[error("{what} {server}: {source}")]
    Unreachable {
        what: &'static str,
        server: String,
        source: Box<ureq::Error>,
    },
    /// The server answered, but not with what was asked.
    #[error("{server}: {message}")]
    Answer { server: String, message: String },
}

/// A ladder's address and an owner's token.
pub struct Ladder {
    agent: ureq::Agent,
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
    /// uploads (503 with `Retry-After`) is asked again after the time it
    /// gives, for up to 10 minutes; `busy` hears each wait (its reason
    /// and seconds).
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
            match retry {
                Some(secs) if status == 503 && start.elapsed() < Duration::from_secs(600) => {
                    let secs = secs.clamp(1, 60);
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

    /// `GET path` of the ladder's API, as JSON (an answer other than 200
    /// is an error with the server's message).
    pub fn get_json(&self, path: &str) -> Result<serde_json::Value, SubmitError> {
        let answer = |message: String| SubmitError::Answer {
            server: self.server.clone(),
            message,
        };
        let mut resp = self
            .agent
            .get(format!("{}{path}", self.server))
            .call()
            .map_err(|e| SubmitError::Unreachable {
                what: "asking",
                server: self.server.clone(),
                source: Box::new(e),
            })?;
        let body = resp.body_mut().read_to_string().unwrap_or_default();
        if resp.status().as_u16() != 200 {
            return Err(answer(format!("{path}: {}", error_of(body.as_bytes()))));
        }
        serde_json::from_str(&body).map_err(|e| answer(format!("{path} is not JSON: {e}")))
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
        let mut resp = self
            .agent
            .get(format!("{}/api/bots/{bot}", self.server))
            .call()
            .map_err(|e| SubmitError::Unreachable {
                what: "asking about the bot at",
                server: self.server.clone(),
                source: Box::new(e),
            })?;
        let body = resp.body_mut().read_to_string().unwrap_or_default();
        if resp.status().as_u16() != 200 {
            return Err(answer(error_of(body.as_bytes())));
        }
        let doc: serde_json::Value = serde_json::from_str(&body)
            .map_err(|e| answer(format!("the answer about {bot} is not JSON: {e}")))?;
        doc["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["version"].as_i64() == Some(number)))
            .cloned()
            .ok_or_else(|| answer(format!("does not list version {number} of {bot}")))
    }
}
