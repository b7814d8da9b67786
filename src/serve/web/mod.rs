//! The web layer (axum): validates each request and hands it over: the
//! JSON API (`/api/...`, docs/ladder.md), the exports, the live feed
//! (Server-Sent Events), the pages, `/health` and `/metrics`. Every error
//! is a status and one line of JSON (`{"error": "..."}`) that says what to
//! do.
//!
//! One file per resource, each with its own `router()`, merged here with
//! one shared context (the service, [`Shared`]): `pages` (the HTML pages
//! and their assets), `status` (`/health`, `/metrics`), `bots` (uploads and
//! the bots' API), `games` (standings and games), `exports` (the games as
//! CSV, JSON lines, PGN), `feed` (the live feed), `workers` (the workers'
//! endpoints), `quarantine` (the workers' page and its re-checks),
//! `version_tests` (the tests between versions, `/tests`, `/api/tests`);
//! `events` (the events: a Swiss among the entered versions, `/tournaments`, `/api/tournaments`);
//! `stderr` (a game's stderr for its bots' owners); `analysis` (a game's
//! analysis, asked for by its bots' owners);
//! `browse` (the games browser, and the filters of every games listing);
//! `auth` (whose token), `error` (the refusals) and `variants` (a
//! variant as a request names it) below them.
//!
//! Over every route: the API's query parameters checked against what each
//! endpoint takes ([`API_PARAMETERS`]: any other, or one given twice, is a
//! 400 that names it), and axum's own refusals (a path or query an
//! extractor cannot read) sent as JSON like the others
//! ([`errors_as_json`]); hyper's, which come before any route, are
//! [`error::JsonRefusals`]'.

mod analysis;
mod auth;
mod bots;
mod browse;
pub mod error;
mod events;
mod exports;
mod feed;
mod games;
pub mod pages;
mod quarantine;
mod status;
mod stderr;
mod variants;
mod version_tests;
pub mod workers;

use crate::serve::ladder::Ladder;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
pub use error::{ApiError, ApiResult, JsonRefusals, Shared};
use std::sync::Arc;

/// The query parameters each endpoint of the API takes, by method and
/// route (`{...}`: any one segment); an endpoint of `/api/` not listed
/// takes none. The shipped pages and clients (`arena submit`, `arena
/// worker`) send no other.
pub const API_PARAMETERS: &[(&str, &str, &[&str])] = &[
    ("GET", "/api/standings", &["variant"]),
    ("GET", "/api/games", &browse::PARAMETERS),
    ("GET", "/api/games.csv", &browse::PARAMETERS),
    ("GET", "/api/games.jsonl", &browse::PARAMETERS),
    ("GET", "/api/games.pgn", &browse::PARAMETERS),
    ("GET", "/api/games/{id}/stderr", &["seat"]),
    ("GET", "/api/tests", &version_tests::LISTING_PARAMETERS),
    ("POST", "/api/bots", &version_tests::UPLOAD_PARAMETERS),
];

/// Whether `path` is the route `pattern`, segment by segment.
fn is_route(pattern: &str, path: &str) -> bool {
    let (mut p, mut q) = (pattern.split('/'), path.split('/'));
    loop {
        match (p.next(), q.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a.starts_with('{') && !b.is_empty() => continue,
            (Some(a), Some(b)) if a == b => continue,
            _ => return false,
        }
    }
}

/// The parameters the API's endpoint at `path` takes with `method`.
fn parameters_of(method: &Method, path: &str) -> &'static [&'static str] {
    let method = match *method {
        Method::HEAD => "GET",
        ref m => m.as_str(),
    };
    API_PARAMETERS
        .iter()
        .find(|(m, p, _)| *m == method && is_route(p, path))
        .map_or(&[], |(_, _, known)| known)
}

/// The query of a request to the API against what its endpoint takes: a
/// parameter it does not know, or one given twice, is a 400 that names it
/// (and those it knows). The endpoints' own checks of the values follow.
fn check_parameters(req: &Request) -> ApiResult<()> {
    let path = req.uri().path();
    let Some(query) = req.uri().query().filter(|_| path.starts_with("/api/")) else {
        return Ok(());
    };
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, m);
    let axum::extract::Query(pairs): axum::extract::Query<Vec<(String, String)>> =
        axum::extract::Query::try_from_uri(req.uri()).map_err(|e| {
            bad(format!(
                "the query `{query}` cannot be read: {}",
                e.body_text()
            ))
        })?;
    let known = parameters_of(req.method(), path);
    let mut seen: Vec<&str> = Vec::new();
    for (k, _) in &pairs {
        if !known.contains(&k.as_str()) {
            return Err(bad(match known.is_empty() {
                true => format!("unknown parameter `{k}`: {path} takes no parameters"),
                false => format!("unknown parameter `{k}`: {path} takes {}", known.join(", ")),
            }));
        }
        if seen.contains(&k.as_str()) {
            return Err(bad(format!("parameter `{k}` is given twice: give it once")));
        }
        seen.push(k);
    }
    Ok(())
}

/// [`check_parameters`], before the endpoint's handler.
async fn known_parameters(req: Request, next: Next) -> Response {
    match check_parameters(&req) {
        Ok(()) => next.run(req).await,
        // A page's refusal is a page; the API's and the feeds' are JSON.
        Err(e) if is_page(req.uri().path()) => pages::page_of_error(e),
        Err(e) => e.into_response(),
    }
}

/// Whether `path` is one of the HTML pages (not the JSON API, a feed, a
/// download or an asset).
fn is_page(path: &str) -> bool {
    !path.starts_with("/api/")
        && !path.starts_with("/assets/")
        && !path.ends_with(".js")
        && !path.ends_with(".csv")
        && !path.ends_with(".css")
        && path != "/health"
        && path != "/metrics"
}

/// An error answered in plain text (axum's own refusals: a path segment
/// that is not UTF-8, a query or a body its extractor cannot read) is sent
/// as every other refusal is: `{"error": "..."}`, its status and other
/// headers kept.
async fn errors_as_json(req: Request, next: Next) -> Response {
    let r = next.run(req).await;
    let plain = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/plain"));
    if !plain || !(r.status().is_client_error() || r.status().is_server_error()) {
        return r;
    }
    let (mut parts, body) = r.into_parts();
    let text = axum::body::to_bytes(body, 64 << 10)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let text = match text.is_empty() {
        // A JSON body past [`JSON_BODY_MOST`] (axum's words name no limit).
        _ if parts.status == StatusCode::PAYLOAD_TOO_LARGE => {
            format!(
                "the body is over {} KiB, the most a request's JSON may be",
                JSON_BODY_MOST >> 10
            )
        }
        true => parts
            .status
            .canonical_reason()
            .unwrap_or("refused")
            .to_string(),
        false => text,
    };
    let json = ApiError::new(
        parts.status,
        format!("{text}: see docs/ladder.md for the API"),
    )
    .into_response();
    let (json_parts, json_body) = json.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    for (k, v) in &json_parts.headers {
        parts.headers.insert(k, v.clone());
    }
    Response::from_parts(parts, json_body)
}

/// The most bytes of a request's JSON body (a worker's registration,
/// claim, heartbeat or release, an owner's change of a bot or decision
/// on a test): the longest of them, a heartbeat of
/// [`crate::wire::worker::LEASES_MOST`] leases, is under 40 KiB. Uploads
/// (bots, games) stream under limits of their own.
pub const JSON_BODY_MOST: usize = 64 << 10;

/// The service's routes.
pub fn router(ladder: Arc<Ladder>) -> Router {
    Router::new()
        .merge(pages::router())
        .merge(status::router())
        .merge(bots::router())
        .merge(games::router())
        .merge(exports::router())
        .merge(feed::router())
        .merge(workers::router())
        .merge(quarantine::router())
        .merge(version_tests::router())
        .merge(events::router())
        .merge(stderr::router())
        .merge(analysis::router())
        .merge(browse::router())
        .route_layer(middleware::from_fn(known_parameters))
        .fallback(|| async { ApiError::not_found("no such page: see docs/ladder.md for the API") })
        // A path served, with another method: said in words, as every
        // other refusal is (axum's own 405 has an empty body); its
        // `Allow` header is kept.
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            ApiError::new(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                format!("{method} is not served at this path (its Allow header says what is): see docs/ladder.md for the API"),
            )
        })
        .layer(DefaultBodyLimit::max(JSON_BODY_MOST))
        .layer(middleware::from_fn(errors_as_json))
        .with_state(ladder)
}
