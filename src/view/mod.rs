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

use crate::report::html::{
    on_demand_game, record_text, write_report, GameIndex, Options, Source, Texts, REPORT_CSS,
    REPORT_JS,
};
use crate::results::analysis;
use crate::results::records::RecordAt;
use axum::extract::{Path as UrlPath, State};
use axum::http::{header, StatusCode};
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
    fn refresh(&self, pages: bool) -> Result<Arc<GameIndex>, String> {
        let mut cur = self
            .current
            .lock()
            .map_err(|_| "the viewer's state is poisoned".to_string())?;
        let now = self.signature();
        if now != cur.seen || cur.index.is_empty() {
            let index = GameIndex::build(&self.opts.sources).map_err(|e| e.to_string())?;
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
            write_report(&self.opts.sources, &self.opts.pages, &opts)
                .map_err(|e| format!("writing the pages: {e}"))?;
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
/// apart from the ladder's (`serve::web::router`).
pub fn router(v: Arc<Viewed>) -> Router {
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
}

/// The report's script or style sheet.
fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

fn text(status: StatusCode, kind: &'static str, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, kind)], body).into_response()
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// `/`: the report's page, written again when the league has new games.
async fn index_page(State(v): State<Arc<Viewed>>) -> Response {
    let done = tokio::task::spawn_blocking(move || {
        v.refresh(true)?;
        std::fs::read_to_string(v.opts.pages.join("index.html")).map_err(|e| e.to_string())
    })
    .await;
    match done {
        Ok(Ok(html)) => text(StatusCode::OK, HTML, html),
        Ok(Err(e)) => {
            tracing::error!("arena view: {e}");
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "text/plain; charset=utf-8",
                format!("the report cannot be shown: {e}\n"),
            )
        }
        Err(_) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain; charset=utf-8",
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
            .map_err(io(format!("cannot listen on {bind}")))
    })?;
    let addr = listener.local_addr().map_err(io("the listening address"))?;
    let stop = rt.block_on(async { crate::host::Termination::listen() });
    on_listen(addr);
    let router = router(viewed);
    rt.block_on(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(stop.wait())
            .await
    })
    .map_err(io("serving"))
}
