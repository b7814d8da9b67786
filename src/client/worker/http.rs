//! A worker's requests to its server: JSON over HTTP with its token, and
//! what a failed one means ([`Call`]).

use std::time::Duration;

/// A failed request: the server answered with a refusal (status and its
/// message), answered that it is failing (5xx: there, but try again
/// later), that it cannot take the request now (408: the body came too
/// slowly; 429: this worker's share of the uploads is taken), or could
/// not be reached. All but a refusal are tried again later.
#[derive(Debug)]
pub(super) enum Call {
    Refused(u16, String),
    Failing(u16, String),
    Busy(u16, String),
    Unreachable(String),
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Call::Refused(s, m) => write!(f, "{s}: {m}"),
            Call::Failing(s, m) => write!(f, "the server is failing ({s}: {m})"),
            Call::Busy(s, m) => write!(f, "the server asks to try again later ({s}: {m})"),
            Call::Unreachable(m) => write!(f, "the server cannot be reached: {m}"),
        }
    }
}

/// The server, over HTTP.
#[derive(Clone)]
pub(super) struct Client {
    agent: ureq::Agent,
    pub server: String,
    auth: String,
    /// The worker's id, sent with every request
    /// ([`crate::wire::worker::INSTANCE_HEADER`]).
    instance: Option<String>,
}

impl Client {
    pub fn new(server: &str, token: &str) -> Client {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        Client {
            agent,
            server: server.trim_end_matches('/').to_string(),
            auth: format!("Bearer {token}"),
            instance: None,
        }
    }

    /// The same client, naming the worker `id` in every request.
    pub fn naming(self, id: String) -> Client {
        Client {
            instance: Some(id),
            ..self
        }
    }

    /// `req` with the token and the worker's id.
    fn headed<B>(&self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        let req = req.header("Authorization", &self.auth);
        match &self.instance {
            Some(id) => req.header(crate::wire::worker::INSTANCE_HEADER, id),
            None => req,
        }
    }

    /// POSTs `body` (as JSON) to `path`: the answer's bytes when 2xx.
    pub fn post(&self, path: &str, body: &impl serde::Serialize) -> Result<Vec<u8>, Call> {
        let body = serde_json::to_vec(body).map_err(|e| Call::Unreachable(e.to_string()))?;
        let r = self
            .headed(self.agent.post(&format!("{}{path}", self.server)))
            .header("Content-Type", "application/json")
            .send(&body[..]);
        Self::answer(r)
    }

    pub fn get(&self, path: &str) -> Result<Vec<u8>, Call> {
        let r = self
            .headed(self.agent.get(&format!("{}{path}", self.server)))
            .call();
        Self::answer(r)
    }

    fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<Vec<u8>, Call> {
        let mut resp = r.map_err(|e| Call::Unreachable(e.to_string()))?;
        let status = resp.status().as_u16();
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_vec()
            .map_err(|e| Call::Unreachable(e.to_string()))?;
        if (200..300).contains(&status) {
            return Ok(bytes);
        }
        let msg = crate::client::error_of(&bytes);
        // 5xx: the server is there but failing; try again later.
        if status >= 500 {
            return Err(Call::Failing(status, msg));
        }
        if matches!(status, 408 | 429) {
            return Err(Call::Busy(status, msg));
        }
        Err(Call::Refused(status, msg))
    }
}
