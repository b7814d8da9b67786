//! `GET /api/games/ID/stderr`: what a bot wrote on stderr during one game
//! (issue 48), each line with the turn it was written in, for the bot's
//! owner only (their token); anyone else is refused (401 without a token,
//! 403 with another's).

use super::auth::owner_of;
use super::error::{ApiError, ApiResult, Shared};
use super::pages::finished_row;
use crate::results::stderr::StderrLine;
use crate::serve::ladder::Ladder;
use crate::serve::store::{Owner, Role};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new().route("/api/games/{id}/stderr", get(stderr))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StderrQuery {
    seat: Option<String>,
}

/// `/api/games/ID/stderr`: the seats asked for.
#[derive(Serialize)]
pub struct StderrBody {
    pub game_id: String,
    /// The most kept per seat and game, bytes (the ladder's `stderr_kb`).
    pub cap_bytes: u64,
    pub seats: Vec<SeatBody>,
}

/// One seat's stderr in a game.
#[derive(Serialize)]
pub struct SeatBody {
    pub seat: usize,
    /// The version that sat there (`BOT@N`).
    pub player: String,
    /// Its lines, in the order written; `turn` is `"start"`, a ply (the
    /// `ply` of the request it was deciding), or `"end"`.
    pub lines: Vec<StderrLine>,
    /// Bytes it wrote past the cap, not kept (0: nothing left out).
    pub truncated_bytes: u64,
}

/// `GET /api/games/ID/stderr?seat=N`: seat N's stderr in finished game
/// ID, when the caller's token owns the bot that sat there (403
/// otherwise); without `seat`, every seat of the game the caller owns
/// (403 when none). A seat that wrote nothing has no lines.
async fn stderr(
    State(l): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<StderrQuery>,
) -> ApiResult<Json<StderrBody>> {
    let who = owner_of(&l, &headers).await?;
    let (n, row) = finished_row(&l, &id)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::not_found(format!("no finished game `{id}`")))?;
    let players: Vec<String> = row.seats().iter().map(|s| s.to_string()).collect();
    let asked: Vec<usize> = match q.seat.as_deref() {
        Some(s) => vec![seat_of(s, players.len())?],
        None => (0..players.len()).collect(),
    };
    let mut seats = Vec::new();
    for seat in asked {
        let player = &players[seat];
        if !owns(&l, &who, player).await? {
            if q.seat.is_some() {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!(
                        "seat {seat} of {} is `{player}`, not your bot: a bot's stderr is its owner's alone",
                        row.game_id
                    ),
                ));
            }
            continue;
        }
        let kept = l.db.stderr_of(n, seat).await.map_err(ApiError::internal)?;
        let (lines, truncated_bytes) =
            kept.map_or((Vec::new(), 0), |k| (k.lines, k.truncated_bytes));
        seats.push(SeatBody {
            seat,
            player: player.clone(),
            lines,
            truncated_bytes,
        });
    }
    if seats.is_empty() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "none of {}'s seats ({}) is your bot: a bot's stderr is its owner's alone",
                row.game_id,
                players.join(", ")
            ),
        ));
    }
    Ok(Json(StderrBody {
        game_id: row.game_id,
        cap_bytes: l
            .t
            .ladder
            .as_ref()
            .and_then(|s| s.stderr_cap())
            .unwrap_or(0),
        seats,
    }))
}

/// The seat `text` names, of a game of `players` seats.
fn seat_of(text: &str, players: usize) -> ApiResult<usize> {
    match text.parse::<usize>() {
        Ok(s) if s < players => Ok(s),
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "seat `{}`: give a seat of the game, 0 to {}",
                crate::protocol::truncate(text.as_bytes(), 40),
                players.saturating_sub(1)
            ),
        )),
    }
}

/// Whether owner `who` (an owner's token, not a worker's) owns the bot of
/// `player` (`BOT@N`).
pub(super) async fn owns(l: &Ladder, who: &Owner, player: &str) -> ApiResult<bool> {
    if who.role != Role::Owner {
        return Ok(false);
    }
    let bot = player.rsplit_once('@').map_or(player, |(b, _)| b);
    Ok(l.db
        .bot_owner(bot)
        .await
        .map_err(ApiError::internal)?
        .is_some_and(|(id, _)| id == who.id))
}
