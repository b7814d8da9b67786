//! The ladder's clients, run on other machines than the server: `arena
//! worker` ([`worker`]: claims games, plays them through the league's own
//! pipeline, uploads them) and `arena submit` ([`submit`]: an owner's
//! upload, followed to its verdict). What they share with the server sits
//! below both, in [`crate::wire`].

pub mod submit;
pub mod worker;

/// The `error` of a server's JSON error body (`{"error": "..."}`), or the
/// body itself, trimmed.
pub fn error_of(body: &[u8]) -> String {
    if let Some(e) = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string))
    {
        return e;
    }
    // Another service at that address (a web server's page, an empty
    // 404): said in one line, as not a ladder's answer.
    let text = String::from_utf8_lossy(body);
    let first = text.trim().lines().next().unwrap_or("").trim();
    let shown: String = first.chars().take(120).collect();
    let more = if shown.len() < text.trim().len() {
        "…"
    } else {
        ""
    };
    match shown.is_empty() {
        true => "an empty answer, not an arena ladder's (is --server the ladder's address?)".into(),
        false => format!(
            "an answer that is not an arena ladder's (is --server the ladder's address?): {shown}{more}"
        ),
    }
}

/// A `--server` that is not a ladder's address.
#[derive(Debug, thiserror::Error)]
#[error("--server {given}: {why}; give http://HOST:PORT, as the organiser's `arena serve` prints it (`listening on http://...`; this arena speaks plain HTTP: for HTTPS, see docs/ladder.md, \"Operations\")")]
pub struct BadServer {
    pub given: String,
    pub why: String,
}

/// The ladder's address `given` (`--server` of `arena submit` and `arena
/// worker`), checked before anything is sent: `http://HOST[:PORT]`, with
/// a host and, when given, a port; returned without its trailing `/`.
pub fn server_url(given: &str) -> Result<String, BadServer> {
    let bad = |why: String| BadServer {
        given: given.to_string(),
        why,
    };
    let given_trimmed = given.trim();
    let Some(rest) = given_trimmed.strip_prefix("http://") else {
        let why = match given_trimmed.split_once("://") {
            Some(("https", _)) => "HTTPS is not spoken here".to_string(),
            Some((scheme, _)) => format!("`{scheme}://` is not a scheme this arena speaks"),
            None if given_trimmed.starts_with(['/', '.', '~']) => {
                "a path, not an address: the ladder is reached over HTTP".to_string()
            }
            None => format!(
                "no scheme (did you mean http://{}?)",
                given_trimmed.trim_end_matches('/')
            ),
        };
        return Err(bad(why));
    };
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() {
        return Err(bad("no host".into()));
    }
    let server = format!("http://{rest}");
    let server = server.as_str();
    let uri = ureq::http::Uri::try_from(server).map_err(|e| bad(format!("not a URL ({e})")))?;
    let Some(authority) = uri.authority().filter(|a| !a.host().is_empty()) else {
        return Err(bad("no host".into()));
    };
    // After an IPv6 address's `]`, if any: `:PORT`, a number.
    let tail = authority
        .as_str()
        .rsplit_once(']')
        .map_or(authority.as_str(), |(_, t)| t);
    if let Some((_, port)) = tail.rsplit_once(':') {
        if port.parse::<u16>().is_err() {
            return Err(bad(format!("`{port}` is not a port")));
        }
    }
    if uri.query().is_some() {
        return Err(bad("a query has no place in the ladder's address".into()));
    }
    // Every request names its own path (`/api/bots`, ...): one in the
    // address would be asked for in front of them, and answered 404.
    if !matches!(uri.path(), "" | "/") {
        return Err(bad(format!(
            "a path (`{}`) has no place in the ladder's address",
            uri.path()
        )));
    }
    Ok(server.to_string())
}

#[cfg(test)]
mod tests {
    use super::server_url;

    #[test]
    fn a_server_url_is_http_with_a_host() {
        assert_eq!(
            server_url("http://127.0.0.1:8080/").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(server_url("http://ladder").unwrap(), "http://ladder");
        assert_eq!(server_url("http://[::1]:80").unwrap(), "http://[::1]:80");
        for (given, why) in [
            (
                "127.0.0.1:18080",
                "no scheme (did you mean http://127.0.0.1:18080?)",
            ),
            ("https://ladder:443", "HTTPS is not spoken here"),
            ("ftp://ladder", "`ftp://` is not a scheme this arena speaks"),
            ("http://", "no host"),
            ("http://:8080", "no host"),
            ("http://ladder:80x", "`80x` is not a port"),
            ("http://ladder:99999", "`99999` is not a port"),
            (
                "http://ladder:8080/api",
                "a path (`/api`) has no place in the ladder's address",
            ),
            (
                "http://ladder:8080/bots/x/",
                "a path (`/bots/x`) has no place",
            ),
            ("/srv/ladder", "a path, not an address"),
            ("./ladder.toml", "a path, not an address"),
        ] {
            let e = server_url(given).unwrap_err();
            assert!(e.why.starts_with(why), "{given}: {e}");
            assert!(
                e.to_string().starts_with(&format!("--server {given}: ")),
                "{e}"
            );
        }
    }
}
