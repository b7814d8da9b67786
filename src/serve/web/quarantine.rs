//! The workers as the public sees them (issue 47, item 7; docs/security.md
//! "Forged results"; issue 48): `GET /api/workers` (JSON) and `GET
//! /workers` (a page), one line per worker: its host and cores, jobs,
//! games in flight and played, uploads refused, when it was last heard
//! from, its forfeits re-checked and whether it is in quarantine; and the
//! re-checks' and quarantine's lines of `/metrics`. Its token is not
//! shown.

use super::error::{ApiError, ApiResult, Shared};
use crate::serve::ladder::Ladder;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/api/workers", get(list))
        .route("/workers", get(page))
}

/// A worker's line: who it is and where (its host and cores, as it
/// registered), its jobs and games in flight, games played, uploads
/// refused since the server started, when it was last heard from, its
/// forfeits re-checked and whether it is in quarantine.
#[derive(serde::Serialize)]
struct WorkerBody {
    name: String,
    host: String,
    cores: i64,
    jobs: i64,
    in_flight: i64,
    games_played: i64,
    refusals: u64,
    /// Unix seconds, and as UTC.
    last_seen: i64,
    last_seen_at: String,
    forfeits_checked: u64,
    forfeits_not_reproduced: u64,
    forfeits_waiting: u64,
    quarantined_at: Option<String>,
    quarantine_reason: Option<String>,
    revoked: bool,
    /// `playing`, `idle` (not heard from for two lease times), `in
    /// quarantine` or `revoked`.
    state: &'static str,
}

/// Every worker's line, by name.
async fn worker_bodies(l: &Ladder) -> Result<Vec<WorkerBody>, crate::serve::store::DbError> {
    let now = crate::serve::store::unix_now();
    let lines = l.db.worker_lines().await?;
    let counts = l.db.worker_counts(now).await?;
    let refused = l
        .workers
        .refused_by
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(lines
        .into_iter()
        .map(|w| {
            let c = counts
                .iter()
                .find(|c| c.name == w.name)
                .cloned()
                .unwrap_or_default();
            let state = if w.quarantined_at.is_some() {
                "in quarantine"
            } else if w.revoked {
                "revoked"
            } else if now - w.last_seen > 2 * l.workers.lease_seconds {
                "idle"
            } else {
                "playing"
            };
            WorkerBody {
                refusals: refused.get(&w.name).copied().unwrap_or(0),
                host: c.host,
                cores: c.cores,
                jobs: w.jobs,
                in_flight: c.in_flight,
                games_played: c.played,
                last_seen: w.last_seen,
                last_seen_at: humantime::format_rfc3339_seconds(
                    std::time::UNIX_EPOCH
                        + std::time::Duration::from_secs(w.last_seen.max(0) as u64),
                )
                .to_string(),
                forfeits_checked: w.forfeits_checked,
                forfeits_not_reproduced: w.forfeits_not_reproduced,
                forfeits_waiting: w.forfeits_waiting,
                quarantined_at: w.quarantined_at,
                quarantine_reason: w.quarantine_reason,
                revoked: w.revoked,
                state,
                name: w.name,
            }
        })
        .collect())
}

/// `GET /api/workers`: `{"workers": [{"name", "host", "cores", "jobs",
/// "in_flight", "games_played", "refusals", "last_seen", "last_seen_at",
/// "forfeits_checked", "forfeits_not_reproduced", "forfeits_waiting",
/// "quarantined_at", "quarantine_reason", "revoked", "state"}]}`, by name.
async fn list(State(l): Shared) -> ApiResult<Json<serde_json::Value>> {
    let lines = worker_bodies(&l).await.map_err(ApiError::internal)?;
    Ok(Json(serde_json::json!({ "workers": lines })))
}

/// `GET /workers`: the same, as a table.
async fn page(State(l): Shared) -> ApiResult<Response> {
    let lines = worker_bodies(&l).await.map_err(ApiError::internal)?;
    let total: i64 = lines.iter().map(|w| w.in_flight).sum();
    Ok(super::pages::page(
        "workers.html",
        &l,
        serde_json::json!({ "workers": lines, "in_flight": total }),
    ))
}

/// The re-checks' and quarantine's lines of `/metrics`.
pub async fn metrics_text(l: &Ladder) -> String {
    let w = &l.workers;
    let quarantined = l.db.quarantined_count().await.unwrap_or(0);
    let waiting = l.db.rechecks_waiting().await.unwrap_or(0);
    let mut out = format!(
        "# HELP arena_workers_quarantined Workers in quarantine (their claims and uploads refused).\n\
         # TYPE arena_workers_quarantined gauge\narena_workers_quarantined {quarantined}\n\
         # HELP arena_worker_quarantines_total Workers put in quarantine since the server started.\n\
         # TYPE arena_worker_quarantines_total counter\narena_worker_quarantines_total {}\n\
         # HELP arena_forfeits_held Workers' forfeits waiting for their re-check, not counted yet.\n\
         # TYPE arena_forfeits_held gauge\narena_forfeits_held {waiting}\n\
         # HELP arena_worker_forfeits_held_total Workers' uploads ending in a forfeit, held for a re-check.\n\
         # TYPE arena_worker_forfeits_held_total counter\narena_worker_forfeits_held_total {}\n\
         # HELP arena_forfeit_rechecks_total Workers' forfeits played again on the server, by outcome.\n\
         # TYPE arena_forfeit_rechecks_total counter\n",
        w.quarantines.load(Ordering::Relaxed),
        w.held.load(Ordering::Relaxed),
    );
    for (outcome, n) in w.rechecks.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        out.push_str(&format!(
            "arena_forfeit_rechecks_total{{outcome=\"{outcome}\"}} {n}\n"
        ));
    }
    out
}
