//! The web layer (axum): validates each request and hands it over: the
//! JSON API (`/api/...`, docs/ladder.md), the exports, the live feed
//! (Server-Sent Events), the pages, `/health` and `/metrics`. Every error
//! is a status and one line of JSON (`{"error": "..."}`) that says what to
//! do.

use super::db::{DbError, GameFilter, Owner};
use super::intake::{self, Upload};
use super::pages;
use super::state::Ladder;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A refusal: a status and what to do, sent as one line of JSON.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds to wait before trying again (`Retry-After`), on a 503 of a
    /// full server.
    pub retry_after: Option<u32>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
    fn internal(e: impl std::fmt::Display) -> ApiError {
        tracing::error!("{e}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the server failed: {e}"),
        )
    }
    fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, what)
    }
}

impl From<intake::Refusal> for ApiError {
    fn from(r: intake::Refusal) -> ApiError {
        ApiError::new(r.status, r.message)
    }
}

impl From<super::inbox::Busy> for ApiError {
    fn from(b: super::inbox::Busy) -> ApiError {
        ApiError {
            retry_after: Some(super::inbox::RETRY_SECONDS),
            ..ApiError::new(StatusCode::SERVICE_UNAVAILABLE, b.message)
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message }).to_string() + "\n";
        let mut r = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(s));
        }
        r
    }
}

type ApiResult<T> = Result<T, ApiError>;
type Shared = State<Arc<Ladder>>;

/// The service's routes.
pub fn router(ladder: Arc<Ladder>) -> Router {
    Router::new()
        .route("/", get(pages::standings_page))
        .route("/bots/{name}", get(pages::bot_page))
        .route("/games/{id}", get(pages::game_page))
        .route("/games/{id}/index.js", get(pages::game_index_js))
        .route("/games/{id}/chunk.js", get(pages::game_chunk_js))
        .route("/assets/report.js", get(pages::report_js))
        .route("/assets/report.css", get(pages::report_css))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/api/bots", post(upload).get(bots))
        .route("/api/bots/{name}", get(bot).delete(retire).patch(change))
        .route("/api/bots/{name}/log", get(bot_log))
        .route("/api/standings", get(standings))
        .route("/api/games", get(games))
        .route("/api/games.csv", get(games_csv))
        .route("/api/games.jsonl", get(games_jsonl))
        .route("/api/games.pgn", get(games_pgn))
        .route("/api/games/{id}", get(game))
        .route("/api/events", get(events))
        .merge(super::workers::routes())
        .fallback(|| async { ApiError::not_found("no such page: see docs/ladder.md for the API") })
        .with_state(ladder)
}

/// The owner a request's `Authorization: Bearer TOKEN` names, refused
/// (403) for a worker's token.
pub async fn owner_of(ladder: &Ladder, headers: &HeaderMap) -> ApiResult<Owner> {
    let o = bearer_owner(ladder, headers).await?;
    if o.role != "owner" {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "this token is not an owner's: it cannot upload or retire bots",
        ));
    }
    Ok(o)
}

/// Whoever a request's `Authorization: Bearer TOKEN` names (an owner or a
/// worker, by `role`); 401 without a valid token.
pub async fn bearer_owner(ladder: &Ladder, headers: &HeaderMap) -> ApiResult<Owner> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "no token: send `Authorization: Bearer TOKEN` (the organiser gives you one with `arena serve LADDER.toml --add-user NAME`)",
        ));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "the Authorization header is not `Bearer TOKEN`",
            )
        })?;
    match ladder
        .db
        .owner_by_token(&super::token_hash(token))
        .await
        .map_err(ApiError::internal)?
    {
        Some(o) => Ok(o),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unknown or revoked token: ask the organiser for a new one",
        )),
    }
}

async fn health(State(l): Shared) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "status": "ok",
        "games": l.games_done(),
        "in_flight": l.metrics.games_in_flight.load(Ordering::Relaxed),
    }))
}

/// `/metrics`, in Prometheus' text format.
async fn metrics(State(l): Shared) -> impl IntoResponse {
    let m = &l.metrics;
    let mut out = String::new();
    let mut put = |name: &str, help: &str, kind: &str, value: String| {
        out.push_str(&format!(
            "# HELP arena_{name} {help}\n# TYPE arena_{name} {kind}\narena_{name} {value}\n"
        ));
    };
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed).to_string();
    put(
        "games_played_total",
        "Games finished since the server started.",
        "counter",
        get(&m.games_played),
    );
    put(
        "games_in_flight",
        "Games being played.",
        "gauge",
        get(&m.games_in_flight),
    );
    put(
        "games_replayed_total",
        "Games cut off by a crash and played again.",
        "counter",
        get(&m.games_replayed),
    );
    put(
        "games_done",
        "Finished games in the ladder.",
        "gauge",
        l.games_done().to_string(),
    );
    put(
        "builds_total",
        "Bot versions built.",
        "counter",
        get(&m.builds),
    );
    put(
        "builds_failed_total",
        "Bot versions whose build failed.",
        "counter",
        get(&m.builds_failed),
    );
    put(
        "checks_failed_total",
        "Bot versions that failed check-bot.",
        "counter",
        get(&m.checks_failed),
    );
    put(
        "uploads_total",
        "Uploads accepted.",
        "counter",
        get(&m.uploads),
    );
    put(
        "uploads_refused_total",
        "Uploads refused.",
        "counter",
        get(&m.uploads_refused),
    );
    put("fits_total", "Rating fits.", "counter", get(&m.fits));
    put(
        "fit_seconds",
        "How long the last rating fit took.",
        "gauge",
        format!("{:.6}", m.fit_micros.load(Ordering::Relaxed) as f64 / 1e6),
    );
    let queued = l.db.versions(Some("queued")).await.map_or(0, |v| v.len());
    put(
        "versions_queued",
        "Uploads waiting for their build and check.",
        "gauge",
        queued.to_string(),
    );
    out.push_str(&super::workers::metrics_text(&l));
    out.push_str(
        "# HELP arena_faults_total Forfeits by reason.\n# TYPE arena_faults_total counter\n",
    );
    for (reason, n) in m.faults.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        out.push_str(&format!("arena_faults_total{{reason=\"{reason}\"}} {n}\n"));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}

/// Refuses a change on a server that shows pages only (`--pages-only`):
/// changes go to the ladder's own server.
fn writable(l: &Ladder) -> ApiResult<()> {
    match l.pages_only {
        false => Ok(()),
        true => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "this server shows the ladder's pages only (--pages-only): upload and change bots on the ladder's own server",
        )),
    }
}

/// `POST /api/bots`: a bot folder as tar.gz, from its owner. The token
/// is checked before the body is read, and a body announced over the
/// limit is refused from the head alone.
async fn upload(
    State(l): Shared,
    req: axum::extract::Request,
) -> ApiResult<(StatusCode, Json<serde_json::Value>)> {
    writable(&l)?;
    let owner = owner_of(&l, req.headers()).await?;
    let limit = (l.settings.upload_mb << 20) as usize;
    let too_large = || {
        l.metrics.uploads_refused.fetch_add(1, Ordering::Relaxed);
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the upload is over this ladder's limit of {} MiB: leave build output and data out of the folder",
                l.settings.upload_mb
            ),
        )
    };
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    // The owner's hourly count and a slot first, then the body, to a
    // file as it comes.
    intake::check_rate(&l, &owner).await.inspect_err(|_| {
        l.metrics.uploads_refused.fetch_add(1, Ordering::Relaxed);
    })?;
    let _slot = l.gates.bots.enter()?;
    let spooled = super::inbox::spool(req.into_body(), &intake::incoming_dir(&l), limit as u64)
        .await
        .map_err(|e| match e {
            super::inbox::SpoolError::TooLarge => too_large(),
            super::inbox::SpoolError::Body(e) => {
                l.metrics.uploads_refused.fetch_add(1, Ordering::Relaxed);
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("the upload's body did not arrive whole: {e}"),
                )
            }
            super::inbox::SpoolError::Io(e) => ApiError::internal(e),
        })?;
    let r = intake::accept(&l, &owner, Upload { file: spooled }).await;
    if r.is_err() {
        l.metrics.uploads_refused.fetch_add(1, Ordering::Relaxed);
    }
    let v = r?;
    l.metrics.uploads.fetch_add(1, Ordering::Relaxed);
    Ok((
        StatusCode::ACCEPTED,
        Json(serde_json::json!({
            "bot": v.bot,
            "version": v.number,
            "player": v.player(),
            "status": v.status,
            "url": format!("/api/bots/{}", v.bot),
        })),
    ))
}

/// `DELETE /api/bots/NAME`: its owner retires it.
async fn retire(
    State(l): Shared,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    writable(&l)?;
    let owner = owner_of(&l, &headers).await?;
    check_owner(&l, &owner, &name).await?;
    let retired = l.db.retire(&name).await.map_err(ApiError::internal)?;
    if retired {
        l.roster_changed_now();
        l.announce(serde_json::json!({"type": "bot", "bot": name, "status": "retired"}));
    }
    Ok(Json(serde_json::json!({ "bot": name, "retired": retired })))
}

/// `PATCH /api/bots/NAME` with `{"active": false}` (retire it) or
/// `{"active": true}` (its latest version back in, after its owner
/// retired it): the owner's switch.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BotChange {
    active: bool,
}

async fn change(
    State(l): Shared,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    writable(&l)?;
    let owner = owner_of(&l, &headers).await?;
    let change: BotChange = serde_json::from_slice(&body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "the body is not the JSON expected ({e}): send {{\"active\": false}} to retire the bot, or {{\"active\": true}} to bring its latest version back"
            ),
        )
    })?;
    check_owner(&l, &owner, &name).await?;
    let changed = match change.active {
        false => l.db.retire(&name).await,
        true => l.db.reinstate(&name).await,
    }
    .map_err(ApiError::internal)?;
    if changed {
        l.roster_changed_now();
        let status = if change.active { "entered" } else { "retired" };
        l.announce(serde_json::json!({"type": "bot", "bot": name, "status": status}));
    }
    Ok(Json(
        serde_json::json!({ "bot": name, "active": change.active, "changed": changed }),
    ))
}

/// Refuses unless `owner` owns bot `name` (404 when there is no such bot).
async fn check_owner(l: &Ladder, owner: &Owner, name: &str) -> ApiResult<()> {
    match l.db.bot_owner(name).await.map_err(ApiError::internal)? {
        None => Err(ApiError::not_found(format!("no bot named `{name}`"))),
        Some((id, _)) if id == owner.id => Ok(()),
        Some((_, other)) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "bot `{name}` belongs to `{other}`: you can replace or retire only your own bots"
            ),
        )),
    }
}

/// `GET /api/bots`: every bot, its latest version and its standing.
async fn bots(State(l): Shared) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(
        pages::bots_json(&l).await.map_err(ApiError::internal)?,
    ))
}

/// `GET /api/bots/NAME`: the bot's versions (with their check-bot
/// reports), ratings, results by opponent and recent games.
async fn bot(State(l): Shared, Path(name): Path<String>) -> ApiResult<Json<serde_json::Value>> {
    match pages::bot_json(&l, &name)
        .await
        .map_err(ApiError::internal)?
    {
        Some(v) => Ok(Json(v)),
        None => Err(ApiError::not_found(format!("no bot named `{name}`"))),
    }
}

/// `GET /api/bots/NAME/log`: the stderr of the bot's latest version, to
/// its owner only (the last 64 KiB).
async fn bot_log(
    State(l): Shared,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> ApiResult<impl IntoResponse> {
    let owner = owner_of(&l, &headers).await?;
    check_owner(&l, &owner, &name).await?;
    let versions = l.db.versions_of(&name).await.map_err(ApiError::internal)?;
    let Some(v) = versions.last() else {
        return Err(ApiError::not_found(format!("bot `{name}` has no version")));
    };
    let text = log_tail(&l, &v.player(), 64 << 10);
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text))
}

/// The end (`most` bytes at most per file) of each stderr log of version
/// `player`: its check's, then each game worker's, each under its name.
fn log_tail(l: &Ladder, player: &str, most: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let layout = crate::league::folder::Layout::new(l.t.output.clone());
    let prefix = crate::league::folder::file_safe(player);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(layout.logs())
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.strip_prefix(&prefix))
                        .is_some_and(|rest| rest.starts_with("-w") || rest == "-check.log")
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::new();
    for f in files {
        let Ok(mut file) = std::fs::File::open(&f) else {
            continue;
        };
        let len = file.metadata().map_or(0, |m| m.len());
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(most)));
        let mut buf = Vec::new();
        let _ = file.take(most).read_to_end(&mut buf);
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push_str(&format!(
            "==> {name} <==\n{}\n",
            String::from_utf8_lossy(&buf)
        ));
    }
    out
}

#[derive(Deserialize)]
struct StandingsQuery {
    variant: Option<String>,
}

/// `GET /api/standings?variant=V`: the last complete fit's table.
async fn standings(
    State(l): Shared,
    Query(q): Query<StandingsQuery>,
) -> ApiResult<Json<serde_json::Value>> {
    pages::standings_json(&l, q.variant.as_deref())
        .map(Json)
        .map_err(ApiError::not_found)
}

#[derive(Deserialize)]
struct GamesQuery {
    bot: Option<String>,
    variant: Option<String>,
    after: Option<i64>,
    limit: Option<usize>,
}

/// `GET /api/games?bot=&variant=&after=&limit=`: finished games' rows, in
/// the order they finished; `after` a ladder game id; `bot` a bot's name
/// (any of its versions) or one version (`BOT@N`); `variant` a variant's
/// name or label. Read from the store: one page of at most 10,000.
async fn games(
    State(l): Shared,
    Query(q): Query<GamesQuery>,
) -> ApiResult<Json<serde_json::Value>> {
    let limit = q.limit.unwrap_or(100).min(10_000);
    let after = match q.after {
        Some(id) => l.db.done_key(id).await.map_err(ApiError::internal)?,
        None => None,
    };
    let mut only = GameFilter::default();
    if let Some(b) = q.bot.as_deref() {
        only.versions = Some(versions_named(&l, b).await.map_err(ApiError::internal)?);
    }
    if let Some(v) = q.variant.as_deref() {
        only.variants = Some(
            l.workers
                .variants
                .iter()
                .enumerate()
                .filter(|(_, (name, players))| {
                    let row = crate::results::GameRow {
                        variant: name.clone(),
                        players: *players as u8,
                        ..Default::default()
                    };
                    crate::ratings::matches_variant(&row, v)
                })
                .map(|(i, _)| i)
                .collect(),
        );
    }
    let page =
        l.db.done_page(after.as_ref(), limit, &only)
            .await
            .map_err(ApiError::internal)?;
    let out: Vec<crate::results::GameRow> = page
        .iter()
        .filter_map(|d| serde_json::from_str(&d.row_json).ok())
        .collect();
    Ok(Json(serde_json::json!({ "games": out })))
}

/// The versions that `name` names: every version of bot `name`, or the
/// one version `BOT@N`.
async fn versions_named(l: &Ladder, name: &str) -> Result<Vec<i64>, DbError> {
    let mut ids: Vec<i64> = l.db.versions_of(name).await?.iter().map(|v| v.id).collect();
    if let Some((bot, n)) = name.rsplit_once('@') {
        ids.extend(
            l.db.versions_of(bot)
                .await?
                .iter()
                .filter(|v| v.number.to_string() == n)
                .map(|v| v.id),
        );
    }
    Ok(ids)
}

/// Rows a page of an export holds.
const EXPORT_PAGE: usize = 2_000;

/// A response body fed by `produce`, which sends its chunks as it makes
/// them (the exports: a page of the store at a time, never every row at
/// once). An error after the first chunk can only cut the body short: it
/// is logged.
fn streamed<F, Fut>(l: Arc<Ladder>, what: &'static str, produce: F) -> axum::body::Body
where
    F: FnOnce(Arc<Ladder>, tokio::sync::mpsc::Sender<Vec<u8>>) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
    let work = produce(l, tx);
    tokio::spawn(async move {
        if let Err(e) = work.await {
            tracing::error!("the export {what} was cut short: {e}");
        }
    });
    axum::body::Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), rx))
    }))
}

/// Writes one page of rows as the export's bytes.
type PageWriter<'a> = dyn FnMut(&[crate::results::GameRow]) -> Result<Vec<u8>, String> + Send + 'a;

/// The finished games, a page of the store at a time, in the order they
/// finished.
struct Pages<'a> {
    l: &'a Ladder,
    after: Option<super::db::DoneKey>,
}

impl<'a> Pages<'a> {
    fn new(l: &'a Ladder) -> Self {
        Pages { l, after: None }
    }

    /// The next page; `None` after the last.
    async fn next(&mut self) -> Result<Option<Vec<super::db::Done>>, String> {
        let page = self
            .l
            .db
            .done_page(self.after.as_ref(), EXPORT_PAGE, &GameFilter::default())
            .await
            .map_err(|e| e.to_string())?;
        self.after = page.last().map(|d| d.key.clone());
        Ok(self.after.is_some().then_some(page))
    }
}

/// Sends every finished game's row, a page of the store at a time, each
/// page written by `write`; stops when the reader went away.
async fn send_rows(
    l: &Ladder,
    tx: &tokio::sync::mpsc::Sender<Vec<u8>>,
    write: &mut PageWriter<'_>,
) -> Result<(), String> {
    let mut pages = Pages::new(l);
    while let Some(page) = pages.next().await? {
        let rows: Vec<crate::results::GameRow> = page
            .iter()
            .map(|d| {
                serde_json::from_str(&d.row_json)
                    .map_err(|e| format!("game {}: its row does not read: {e}", d.key.id))
            })
            .collect::<Result<_, _>>()?;
        if tx.send(write(&rows)?).await.is_err() {
            break;
        }
    }
    Ok(())
}

/// `GET /api/games.csv`: every finished game, as a league's games.csv
/// (same columns; the record columns empty: records are in the database).
async fn games_csv(State(l): Shared) -> impl IntoResponse {
    let body = streamed(l, "games.csv", |l, tx| async move {
        let mut header = true;
        send_rows(&l, &tx, &mut |rows| {
            // A row that would not read back (a store written before its
            // fields were checked) is left out, as from the standings.
            let rows: Vec<_> = rows
                .iter()
                .filter(|r| crate::results::csvio::rateable(r).is_ok())
                .collect();
            if rows.is_empty() {
                return Ok(Vec::new());
            }
            let mut w = csv::WriterBuilder::new()
                .has_headers(std::mem::take(&mut header))
                .from_writer(Vec::new());
            for r in rows {
                w.serialize(r).map_err(|e| e.to_string())?;
            }
            w.into_inner().map_err(|e| e.to_string())
        })
        .await
    });
    ([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], body)
}

/// `GET /api/games.jsonl`: every finished game's record, one after the
/// other, as `arena replay` reads them.
async fn games_jsonl(State(l): Shared) -> impl IntoResponse {
    let body = streamed(l, "games.jsonl", |l, tx| async move {
        let mut pages = Pages::new(&l);
        while let Some(page) = pages.next().await? {
            let mut out = Vec::new();
            for d in &page {
                if let Some(frame) = l.db.record(d.key.id).await.map_err(|e| e.to_string())? {
                    out.extend(crate::results::records::decode(&frame).map_err(|e| e.to_string())?);
                }
            }
            if tx.send(out).await.is_err() {
                break;
            }
        }
        Ok(())
    });
    ([(header::CONTENT_TYPE, "application/x-ndjson")], body)
}

/// `GET /api/games.pgn`: every finished 2-player game in PGN, as `arena
/// pgn` writes it.
async fn games_pgn(State(l): Shared) -> impl IntoResponse {
    let event = l.t.name.clone();
    let body = streamed(l, "games.pgn", |l, tx| async move {
        let mut w = crate::report::tables::PgnWriter::new(Vec::new(), &event);
        send_rows(&l, &tx, &mut |rows| {
            for r in rows {
                w.add(r).map_err(|e| e.to_string())?;
            }
            Ok(std::mem::take(w.out_mut()))
        })
        .await
    });
    ([(header::CONTENT_TYPE, "application/x-chess-pgn")], body)
}

/// `GET /api/games/ID`: a finished game's row and record.
async fn game(State(l): Shared, Path(id): Path<String>) -> ApiResult<Json<serde_json::Value>> {
    match pages::game_of(&l, &id).await.map_err(ApiError::internal)? {
        Some((row, record)) => Ok(Json(serde_json::json!({ "row": row, "record": record }))),
        None => Err(ApiError::not_found(format!("no finished game `{id}`"))),
    }
}

/// `GET /api/events`: the live feed: a `game` event per finished game, a
/// `standings` event per fit, a `bot` event per version's step (each data
/// line one JSON object with its `type`). A reader that falls behind
/// skips what it missed.
async fn events(
    State(l): Shared,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    use tokio::sync::broadcast::error::RecvError;
    let stream = futures_util::stream::unfold(l.events.subscribe(), |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(s) => return Some((Ok(SseEvent::default().data(s)), rx)),
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
