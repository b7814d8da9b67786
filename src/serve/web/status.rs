//! `/health` (is the service up, how many games) and `/metrics` (the
//! counters, in Prometheus' text format).

use super::error::Shared;
use crate::serve::ladder::Ladder;
use crate::serve::store::VersionStatus;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(metrics))
}

/// `/health`: up, with the games finished and in flight: every game
/// being played, the server's own and the workers' (their leases active
/// now), and each part.
#[derive(serde::Serialize)]
struct Health {
    games: usize,
    in_flight: u64,
    in_flight_server: u64,
    in_flight_workers: u64,
    /// `ok`, or `degraded` while the store refuses writes (`store`).
    status: &'static str,
    /// While the store refuses writes: for how long and why (the games,
    /// the uploads and the workers' claims fail meanwhile).
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<String>,
    /// True once the ladder has played its `max_games` (it starts no
    /// other game); left out before, and without a `max_games`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    max_games_played: bool,
    /// The ladder's limits on an owner's upload, so that `arena submit`
    /// packs against them and says so before sending anything.
    uploads: UploadLimits,
}

/// `/health`'s `uploads`: the ladder's `upload_mb`, `unpacked_mb` and
/// `upload_files`.
#[derive(serde::Serialize)]
struct UploadLimits {
    upload_mb: u64,
    unpacked_mb: u64,
    upload_files: usize,
}

async fn health(State(l): Shared) -> Json<Health> {
    let server = l.metrics.games_in_flight.load(Ordering::Relaxed);
    let workers = workers_in_flight(&l).await;
    let store = l
        .store_fault()
        .map(|(secs, e)| format!("refuses writes for {secs} s: {e}"));
    Json(Health {
        games: l.games_done(),
        in_flight: server + workers,
        in_flight_server: server,
        in_flight_workers: workers,
        status: if store.is_some() { "degraded" } else { "ok" },
        store,
        max_games_played: l.played_out.load(Ordering::Relaxed),
        uploads: UploadLimits {
            upload_mb: l.settings.upload_mb,
            unpacked_mb: l.settings.unpacked_mb,
            upload_files: l.settings.upload_files,
        },
    })
}

/// The games the workers are playing now (0 when the store cannot say:
/// `/health` still answers, and the log says why).
async fn workers_in_flight(l: &Ladder) -> u64 {
    match l.db.leased_in_flight(crate::serve::store::unix_now()).await {
        Ok(n) => n.max(0) as u64,
        Err(e) => {
            tracing::error!("/health: the workers' games in flight: {e}");
            0
        }
    }
}

/// `/metrics`, in Prometheus' text format.
async fn metrics(State(l): Shared) -> impl IntoResponse {
    let m = &l.metrics;
    let leased = workers_in_flight(&l).await;
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
        "Games the server itself is playing.",
        "gauge",
        get(&m.games_in_flight),
    );
    put(
        "worker_games_in_flight",
        "Games the workers are playing (their leases active now).",
        "gauge",
        leased.to_string(),
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
        "store_refusing_writes",
        "1 while the store refuses the server's writes (the last heartbeat was refused), else 0.",
        "gauge",
        u8::from(l.store_fault().is_some()).to_string(),
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
    let queued =
        l.db.versions(Some(VersionStatus::Queued))
            .await
            .map_or(0, |v| v.len());
    put(
        "versions_queued",
        "Uploads waiting for their build and check.",
        "gauge",
        queued.to_string(),
    );
    out.push_str(&super::workers::metrics_text(&l));
    out.push_str(&super::quarantine::metrics_text(&l).await);
    out.push_str(
        "# HELP arena_faults_total Forfeits by reason.\n# TYPE arena_faults_total counter\n",
    );
    for (reason, n) in m.faults.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        out.push_str(&format!("arena_faults_total{{reason=\"{reason}\"}} {n}\n"));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
