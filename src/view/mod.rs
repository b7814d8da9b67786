//! `arena view RESULTS`: a league's results folder (or its shards) served
//! read-only on loopback (issue 33): the pages of the HTML report
//! (`report::html`, the same files `arena report` writes, kept in a
//! folder of their own so that the results folder is never written), and
//! any game's viewer data replayed by the engine on demand from its record
//! (`games/one/ID`, `report::html::on_demand_game`), so a report that
//! holds a sample of a million games still shows every one. The report's
//! script and style sheet are the report's own (`report::html`'s
//! `REPORT_JS`, `REPORT_CSS`): one viewer for the report, the ladder and
//! this. A room of its own, beside the report: no ladder here.
//!
//! A league still running is read again when its games.csv changes: the
//! pages are rewritten when the main page is asked for, and a game not
//! known yet is looked for in the rows as they are now. So is a league
//! whose analysis folder changed (`arena analyse --save`): the viewer
//! shows each analysed game's verdicts beside its decisions.
//!
//! Loopback is not private from the web pages the user visits (`guard`):
//! a page may rebind its own host name to 127.0.0.1 and read the league
//! as its own site (DNS rebinding), or include the league's data files,
//! scripts calling a global function, with `<script>` elements of its own.
//! So a request must name this server in its `Host` (a loopback address or
//! `localhost`, with the port listened on; 421 otherwise), and one that
//! the browser says another site's page made (`Sec-Fetch-Site`) is refused
//! unless it is a navigation (403). No CORS header is sent.

use crate::report::html::{
    on_demand_game, record_text, write_report, GameIndex, Options, Source, Texts, REPORT_CSS,
    REPORT_JS,
};
use crate::results::analysis;
use crate::results::records::RecordAt;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Why `arena view` could not serve: what it was doing, and the cause.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct ViewError {
    what: String,
    source: std::io::Error,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ViewError {
    let what = what.into();
    move |source| ViewError { what, source }
}

/// What `arena view` serves.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// The league's sources (its folder, or its shards).
    pub sources: Vec<Source>,
    /// The league's name (the pages' title) and its scheduled games.
    pub title: String,
    pub scheduled: Option<usize>,
    /// Where the pages are written (a folder of the viewer's own).
    pub pages: PathBuf,
    /// Where to listen; a loopback address only.
    pub bind: SocketAddr,
}

/// The served league: its sources and where their rows were last.
pub struct Viewed {
    opts: ViewOptions,
    current: Mutex<Current>,
}

/// Where the rows were, with the games.csv files' sizes and times then.
/// The rows themselves are read again when a game is asked for: a league
/// of 10 M games is 240 MB of index, not the rows' 6 GB.
#[derive(Default)]
struct Current {
    seen: Vec<Option<(u64, SystemTime)>>,
    index: Arc<GameIndex>,
    /// The pages were written from the rows as they were then.
    written: bool,
}

impl Viewed {
    /// A viewer of `opts.sources`; nothing is read until asked.
    pub fn new(opts: ViewOptions) -> Viewed {
        Viewed {
            opts,
            current: Mutex::new(Current::default()),
        }
    }

    /// The games.csv files' sizes and times, and the analysis folders'
    /// (an analysis saved is a file renamed into its folder).
    fn signature(&self) -> Vec<Option<(u64, SystemTime)>> {
        self.opts
            .sources
            .iter()
            .flat_map(|s| [&s.games_csv, &s.analysis])
            .map(|path| {
                let m = std::fs::metadata(path).ok()?;
                Some((m.len(), m.modified().ok()?))
            })
            .collect()
    }

    /// Where the rows are, indexed again when a games.csv changed; with
    /// `pages`, the report's pages are written from the rows too when they
    /// are not yet (`report::html::write_report`, one row at a time).
    fn refresh(&self, pages: bool) -> Result<Arc<GameIndex>, Unshown> {
        let mut cur = self
            .current
            .lock()
            .map_err(|_| Unshown::Failed("the viewer's state is poisoned".to_string()))?;
        let now = self.signature();
        if now != cur.seen || cur.index.is_empty() {
            let index =
                GameIndex::build(&self.opts.sources).map_err(|e| Unshown::Failed(e.to_string()))?;
            *cur = Current {
                seen: now,
                index: Arc::new(index),
                written: false,
            };
        }
        if pages && !cur.written {
            let opts = Options {
                title: self.opts.title.clone(),
                scheduled: self.opts.scheduled,
                threads: 1,
                on_demand: true,
                ..Default::default()
            };
            write_report(&self.opts.sources, &self.opts.pages, &opts).map_err(|e| match e {
                crate::report::html::HtmlError::NoGames(_) => Unshown::NoGames,
                e => Unshown::Failed(format!("writing the pages: {e}")),
            })?;
            cur.written = true;
        }
        Ok(cur.index.clone())
    }

    /// The viewer's script of game `id`, or why there is none (404).
    fn game_script(&self, id: &str) -> Result<Option<String>, String> {
        let sources = &self.opts.sources;
        let find = |index: Arc<GameIndex>| index.find(sources, id).map_err(|e| e.to_string());
        let mut found = find(self.refresh(false)?)?;
        if found.is_none() {
            // A game that finished since: the rows once more.
            found = find(self.refresh(false)?)?;
        }
        let Some((k, row)) = found else {
            return Ok(None);
        };
        // As the report's chunks: a record that is there but cannot be
        // read is noted with why and where; one not there is missing.
        let source = sources.get(k);
        let texts = Texts {
            record: record_text(source.and_then(|s| RecordAt::of(&s.records, &row))),
            analysis: source.and_then(|s| analysis::read(&s.analysis_file(&row.game_id))),
        };
        Ok(Some(on_demand_game(&row, texts)))
    }
}

/// The view's routes: the report's pages at `/` (`index.html`, its
/// `games/` and `bots/` files), its script and style sheet, and
/// `games/one/ID`, any game's viewer data on demand. A router of its own,
/// apart from the ladder's (`serve::web::router`); every request passes
/// `guard` first, which knows the `port` listened on.
pub fn router(v: Arc<Viewed>, port: u16) -> Router {
    Router::new()
        .route("/", get(index_page))
        .route("/index.html", get(index_page))
        .route("/report.js", get(|| async { asset(JS, REPORT_JS) }))
        .route(
            "/report.css",
            get(|| async { asset("text/css; charset=utf-8", REPORT_CSS) }),
        )
        .route("/games/one/{id}", get(one_game))
        .route("/games/{file}", get(games_file))
        .route("/bots/{file}", get(bots_file))
        .with_state(v)
        .layer(middleware::from_fn_with_state(port, guard))
}

/// Lets in only what this machine's user asked for (the module's doc says
/// why): a request whose `Host` names this server (421 otherwise) and
/// that no other site's page made, a navigation apart (403 otherwise).
/// Every answer says `nosniff`: none is read as another kind than it says.
async fn guard(State(port): State<u16>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok());
    let mut r = if !host.is_some_and(|h| names_this_server(h, port)) {
        text(
            StatusCode::MISDIRECTED_REQUEST,
            PLAIN,
            format!(
                "arena view answers requests for 127.0.0.1:{port}, localhost:{port} or [::1]:{port} only: this one names another host in its Host header\n"
            ),
        )
    } else if from_another_site(req.headers()) {
        text(
            StatusCode::FORBIDDEN,
            PLAIN,
            "arena view answers this machine's user only: this request was made by another site's page\n".into(),
        )
    } else {
        next.run(req).await
    };
    r.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// Whether a `Host` header names this server, listening on `port`:
/// `localhost`, or a loopback address (`127.0.0.1`, `[::1]`), with that
/// port (left out only when it is 80, as browsers leave it). A host name
/// of a web site that resolves to 127.0.0.1 is not this server.
fn names_this_server(host: &str, port: u16) -> bool {
    let (name, given) = match host.strip_prefix('[') {
        // An IPv6 address in brackets, then `:PORT` or nothing.
        Some(rest) => match rest.split_once(']') {
            Some((name, "")) => (name, None),
            Some((name, tail)) => match tail.strip_prefix(':') {
                Some(p) => (name, Some(p)),
                None => return false,
            },
            None => return false,
        },
        None => match host.split_once(':') {
            Some((name, p)) => (name, Some(p)),
            None => (host, None),
        },
    };
    let port_ok = match given {
        Some(p) => p.parse::<u16>().is_ok_and(|p| p == port),
        None => port == 80,
    };
    let loopback = name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    port_ok && loopback
}

/// Whether the browser says another site's page made this request (a
/// `<script>` or an image of its page, a fetch): `Sec-Fetch-Site` is
/// `cross-site` or `same-site` (another port of this machine), and it is
/// not a navigation (a link followed), which shows the page to the user
/// only. A request without it (not a browser's, or an old one) passes:
/// the `Host` check still holds.
fn from_another_site(headers: &HeaderMap) -> bool {
    let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    matches!(value("sec-fetch-site"), Some("cross-site" | "same-site"))
        && value("sec-fetch-mode") != Some("navigate")
}

/// The report's script or style sheet.
fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

fn text(status: StatusCode, kind: &'static str, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, kind)], body).into_response()
}

const HTML: &str = "text/html; charset=utf-8";
const PLAIN: &str = "text/plain; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// Why the report's pages cannot be shown.
#[derive(Debug, thiserror::Error)]
enum Unshown {
    /// The league has no finished game yet (it just started).
    #[error("no game is finished yet")]
    NoGames,
    #[error("{0}")]
    Failed(String),
}

impl From<Unshown> for String {
    fn from(e: Unshown) -> String {
        e.to_string()
    }
}

/// `/`: the report's page, written again when the league has new games.
async fn index_page(State(v): State<Arc<Viewed>>) -> Response {
    let done = tokio::task::spawn_blocking(move || {
        v.refresh(true)?;
        std::fs::read_to_string(v.opts.pages.join("index.html"))
            .map_err(|e| Unshown::Failed(e.to_string()))
    })
    .await;
    match done {
        Ok(Ok(html)) => text(StatusCode::OK, HTML, html),
        // A league just started: a page that looks again, not an error.
        Ok(Err(Unshown::NoGames)) => text(
            StatusCode::OK,
            HTML,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"5\"><link rel=\"icon\" href=\"data:,\"><title>no game yet</title></head><body><p>No game of this league is finished yet: this page looks again every 5 seconds.</p></body></html>\n".into(),
        ),
        Ok(Err(e)) => {
            tracing::error!("arena view: {e}");
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                PLAIN,
                format!("the report cannot be shown: {e}\n"),
            )
        }
        Err(_) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            PLAIN,
            "the report cannot be shown\n".into(),
        ),
    }
}

/// `/games/one/ID`: the viewer's data of any game of the league, replayed
/// now (a script calling `arenaGames`); a script comment when there is no
/// such game (nothing of the request is echoed into a script).
async fn one_game(State(v): State<Arc<Viewed>>, UrlPath(id): UrlPath<String>) -> Response {
    let done = tokio::task::spawn_blocking(move || v.game_script(&id)).await;
    match done {
        Ok(Ok(Some(js))) => text(StatusCode::OK, JS, js),
        Ok(Ok(None)) => text(StatusCode::NOT_FOUND, JS, "// no such game\n".into()),
        Ok(Err(e)) => {
            tracing::error!("arena view: {e}");
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                JS,
                "// the game cannot be shown: see the viewer's output\n".into(),
            )
        }
        Err(_) => text(StatusCode::INTERNAL_SERVER_ERROR, JS, "// failed\n".into()),
    }
}

/// `/games/FILE`: a file the report wrote (`index.js`, a chunk).
async fn games_file(State(v): State<Arc<Viewed>>, UrlPath(file): UrlPath<String>) -> Response {
    written_file(&v.opts.pages.join("games"), &file)
}

/// `/bots/FILE`: a bot's page.
async fn bots_file(State(v): State<Arc<Viewed>>, UrlPath(file): UrlPath<String>) -> Response {
    written_file(&v.opts.pages.join("bots"), &file)
}

/// A script the report wrote in `dir`: only a plain name ending in `.js`
/// (no path, no dot file), so that nothing outside the pages is served.
fn written_file(dir: &Path, name: &str) -> Response {
    let plain = name.ends_with(".js")
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !plain {
        return text(StatusCode::NOT_FOUND, JS, "// no such file\n".into());
    }
    match std::fs::read_to_string(dir.join(name)) {
        Ok(body) => text(StatusCode::OK, JS, body),
        Err(_) => text(StatusCode::NOT_FOUND, JS, "// no such file\n".into()),
    }
}

/// Serves `opts` until Ctrl-C or SIGTERM; `on_listen` is told the address.
/// Refuses an address that is not loopback: the view is for this machine.
pub fn view(opts: ViewOptions, on_listen: &mut dyn FnMut(SocketAddr)) -> Result<(), ViewError> {
    if !opts.bind.ip().is_loopback() {
        return Err(ViewError {
            what: format!(
                "--bind {}: arena view listens on loopback only (127.0.0.1 or ::1)",
                opts.bind
            ),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        });
    }
    std::fs::create_dir_all(&opts.pages).map_err(io(opts.pages.display().to_string()))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("cannot start the async runtime"))?;
    let bind = opts.bind;
    let viewed = Arc::new(Viewed::new(opts));
    let listener = rt.block_on(async {
        tokio::net::TcpListener::bind(bind)
            .await
            .map_err(|e| io(crate::host::cannot_listen(bind, &e))(e))
    })?;
    let addr = listener.local_addr().map_err(io("the listening address"))?;
    let stop = rt.block_on(async { crate::host::Termination::listen() });
    on_listen(addr);
    let router = router(viewed, addr.port());
    rt.block_on(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(stop.wait())
            .await
    })
    .map_err(io("serving"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This server's loopback names with its port pass; another host (a
    /// rebound name), another port, a missing port or a mangled one not.
    #[test]
    fn a_host_names_this_server_by_a_loopback_name_and_its_port() {
        for ok in [
            "127.0.0.1:8090",
            "localhost:8090",
            "LocalHost:8090",
            "[::1]:8090",
            "127.0.0.2:8090",
        ] {
            assert!(names_this_server(ok, 8090), "{ok}");
        }
        for bad in [
            "evil.example:8090",
            "evil.example",
            "127.0.0.1.evil.example:8090",
            "localhost.evil.example:8090",
            "127.0.0.1:8091",
            "127.0.0.1",
            "localhost",
            "[::1]",
            "[::1]8090",
            "[::1:8090",
            "127.0.0.1:8090:1",
            "127.0.0.1:",
            "",
            "10.0.0.1:8090",
            "[::ffff:10.0.0.1]:8090",
        ] {
            assert!(!names_this_server(bad, 8090), "{bad}");
        }
        assert!(names_this_server("localhost", 80));
        assert!(names_this_server("[::1]", 80));
    }

    /// Another site's subresource is refused; its navigation, this site's
    /// own requests and a request without the header pass.
    #[test]
    fn another_sites_requests_are_told_by_sec_fetch_site() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, HeaderValue::from_static(v));
            }
            h
        };
        for site in ["cross-site", "same-site"] {
            let h = headers(&[("sec-fetch-site", site), ("sec-fetch-mode", "no-cors")]);
            assert!(from_another_site(&h), "{site}");
            let h = headers(&[("sec-fetch-site", site), ("sec-fetch-mode", "navigate")]);
            assert!(!from_another_site(&h), "{site} navigation");
        }
        for site in ["same-origin", "none"] {
            let h = headers(&[("sec-fetch-site", site), ("sec-fetch-mode", "no-cors")]);
            assert!(!from_another_site(&h), "{site}");
        }
        assert!(!from_another_site(&HeaderMap::new()));
    }
}
