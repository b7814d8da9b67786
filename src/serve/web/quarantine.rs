//! The workers as the public sees them (issue 47, item 7; docs/security.md
//! "Forged results"): `GET /api/workers` (JSON) and `GET /workers` (a
//! page), one line per worker with its forfeits re-checked and whether it
//! is in quarantine; and the re-checks' and quarantine's lines of
//! `/metrics`. Its host and token are not shown.

use super::error::{ApiError, ApiResult, Shared};
use crate::serve::ladder::Ladder;
use axum::extract::State;
use axum::response::Html;
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

/// `GET /api/workers`: `{"workers": [{"name", "jobs", "last_seen",
/// "forfeits_checked", "forfeits_not_reproduced", "forfeits_waiting",
/// "quarantined_at", "quarantine_reason", "revoked"}]}`, by name.
async fn list(State(l): Shared) -> ApiResult<Json<serde_json::Value>> {
    let lines = l.db.worker_lines().await.map_err(ApiError::internal)?;
    Ok(Json(serde_json::json!({ "workers": lines })))
}

/// `GET /workers`: the same, as a table.
async fn page(State(l): Shared) -> ApiResult<Html<String>> {
    let esc = super::pages::html_escape;
    let lines = l.db.worker_lines().await.map_err(ApiError::internal)?;
    let mut rows = String::new();
    for w in &lines {
        let state = match (&w.quarantined_at, w.revoked) {
            (Some(at), _) => format!(
                "<b>in quarantine</b> since {}: {}",
                esc(at),
                esc(w.quarantine_reason.as_deref().unwrap_or(""))
            ),
            (None, true) => "revoked".to_string(),
            (None, false) => "playing".to_string(),
        };
        rows.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{state}</td></tr>\n",
            esc(&w.name),
            w.jobs,
            w.forfeits_checked,
            w.forfeits_not_reproduced,
            w.forfeits_waiting
        ));
    }
    Ok(Html(format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{} · workers</title></head><body>\n\
         <h1>Workers</h1>\n<p><a href=\"/\">standings</a></p>\n\
         <table>\n<tr><th>worker</th><th>-j</th><th>forfeits re-checked</th><th>not found again</th><th>waiting</th><th>state</th></tr>\n{rows}</table>\n\
         </body></html>\n",
        esc(&l.t.name)
    )))
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
