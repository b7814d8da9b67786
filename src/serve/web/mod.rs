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
use axum::Router;
pub use error::{ApiError, ApiResult, Shared};
use std::sync::Arc;

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
        .with_state(ladder)
}
