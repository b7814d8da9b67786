//! `/api/games/ID/analysis` (issue 51): a finished game's analysis, every
//! decision judged (`crate::serve::analysis`). Anyone reads it (the game
//! and its record are public); an owner of one of the game's bots asks
//! for it with their token, and the server computes it within its budget.

use super::auth::{owner_of, writable};
use super::error::{ApiError, ApiResult, Shared};
use super::pages::{finished_row, game_text};
use super::stderr::owns;
use crate::serve::analysis::{Refused, Standing, WINDOW};
use crate::serve::ladder::Ladder;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new().route("/api/games/{id}/analysis", get(read).post(ask))
}

/// Seconds to wait before asking again while another game's analysis runs.
const RETRY_SECONDS: u32 = 5;

/// No such finished game: 404.
fn no_game(id: &str) -> ApiError {
    ApiError::not_found(format!("no finished game `{id}`"))
}

/// The analysis kept for game `n`: its verdicts and when it was made.
async fn kept(l: &Ladder, n: i64) -> ApiResult<Option<(Value, String)>> {
    l.db.analysis_of(n).await.map_err(ApiError::internal)
}

/// Where game `n`'s analysis stands: (status, body): 202 while it runs,
/// else 200.
async fn standing(l: &Ladder, n: i64, game_id: &str) -> ApiResult<(StatusCode, Json<Value>)> {
    if let Some((verdicts, made_at)) = kept(l, n).await? {
        return Ok((
            StatusCode::OK,
            Json(json!({
                "game_id": game_id, "state": "done", "made_at": made_at,
                "source": "search", "verdicts": verdicts,
            })),
        ));
    }
    let body = match l.analyses.standing(n) {
        Standing::Running => {
            json!({ "game_id": game_id, "state": "running", "budget_seconds": l.settings.analysis_seconds })
        }
        Standing::Failed(why) => json!({ "game_id": game_id, "state": "failed", "why": why }),
        Standing::None => json!({
            "game_id": game_id, "state": "none",
            "hint": "an owner of one of the game's bots asks for it: POST with their token",
        }),
    };
    let status = match body["state"] == "running" {
        true => StatusCode::ACCEPTED,
        false => StatusCode::OK,
    };
    Ok((status, Json(body)))
}

/// `GET /api/games/ID/analysis` (200): `state` `done` (with `verdicts`,
/// one per decision, as `arena analyse --json` prints them), `running`,
/// `failed` (with `why`) or `none`.
async fn read(State(l): Shared, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let (n, row) = finished_row(&l, &id)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| no_game(&id))?;
    Ok(standing(&l, n, &row.game_id).await?.1)
}

/// `POST /api/games/ID/analysis`: an owner of one of the game's bots asks
/// for its analysis; 202 while it runs (ask `GET` again), 200 when it is
/// there already. 401 without a token, 403 for anyone else, 409 when the
/// game's record was pruned, 503 (`Retry-After`) while another game's
/// analysis runs.
async fn ask(
    State(l): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    // An analysis is work and a write: the ladder's own server's
    // (docs/ladder.md, --pages-only).
    writable(&l)?;
    let who = owner_of(&l, &headers).await?;
    let (n, row, record) = game_text(&l, &id)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| no_game(&id))?;
    let players: Vec<String> = row.seats().iter().map(|s| s.to_string()).collect();
    let mut mine = false;
    for p in &players {
        mine |= owns(&l, &who, p).await?;
    }
    if !mine {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "none of {}'s seats ({}) is your bot: a game's analysis is asked for by its bots' owners",
                row.game_id,
                players.join(", ")
            ),
        ));
    }
    if kept(&l, n).await?.is_some() {
        return standing(&l, n, &row.game_id).await;
    }
    if record.is_empty() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "{}'s record was pruned (the ladder keeps records for record_days): nothing to analyse",
                row.game_id
            ),
        ));
    }
    let db = l.db.clone();
    let owner = who.id;
    let per_hour = l.settings.analyses_per_hour;
    let budget = Duration::from_secs(l.settings.analysis_seconds);
    if per_hour == 0 {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "this ladder analyses no games (its analyses_per_hour is 0)",
        ));
    }
    // The analyses kept count too: the count in memory starts empty
    // when the server does.
    let hour_ago = std::time::SystemTime::now() - WINDOW;
    let made =
        l.db.analyses_made_since(
            owner,
            &humantime::format_rfc3339_millis(hour_ago).to_string(),
        )
        .await
        .map_err(ApiError::internal)?;
    let started = match made.first() {
        Some(oldest) if made.len() >= per_hour as usize => {
            let oldest = humantime::parse_rfc3339(oldest).unwrap_or(hour_ago);
            Err(Refused::Limited(
                oldest.duration_since(hour_ago).unwrap_or_default(),
            ))
        }
        _ => Ok(()),
    };
    let started = started.and_then(|()| {
        l.analyses.start(
            n,
            (owner, per_hour),
            budget,
            record,
            move |lines| async move {
                db.keep_analysis(n, owner, &lines)
                    .await
                    .map_err(|e| format!("keeping it: {e}"))
            },
        )
    });
    match started {
        Ok(()) => {}
        Err(Refused::Busy) => {
            return Err(ApiError {
                retry_after: Some(RETRY_SECONDS),
                ..ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "another game's analysis is running: ask again in a few seconds",
                )
            })
        }
        Err(Refused::Limited(wait)) => {
            let secs = u32::try_from(wait.as_secs() + 1).unwrap_or(u32::MAX);
            return Err(ApiError {
                retry_after: Some(secs),
                ..ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!(
                        "you asked for {per_hour} analyses in the last hour, the ladder's analyses_per_hour: ask again in {secs} s"
                    ),
                )
            });
        }
    }
    standing(&l, n, &row.game_id).await
}
