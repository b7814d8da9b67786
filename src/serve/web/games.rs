//! `/api/standings` and `/api/games`: the ratings, the finished games
//! (filtered and paged) and one game with its record.

use super::browse;
use super::error::{ApiError, ApiResult, Shared};
use super::pages;
use crate::serve::ladder::Ladder;
use crate::serve::store::browse::Order;
use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/api/standings", get(standings))
        .route("/api/games", get(games))
        .route("/api/games/{id}", get(game))
}

/// `GET /api/standings?variant=V`: the last complete fit's table; any
/// other parameter is a 400.
async fn standings(
    State(l): Shared,
    Query(q): Query<Vec<(String, String)>>,
) -> ApiResult<Json<pages::StandingsBody>> {
    let mut variant = None;
    for (k, v) in &q {
        match k.as_str() {
            "variant" => variant = Some(v.as_str()),
            _ => {
                return Err(ApiError::new(
                    axum::http::StatusCode::BAD_REQUEST,
                    format!("unknown parameter `{k}`: the standings take `variant` only"),
                ))
            }
        }
    }
    pages::standings_json(&l, variant).await.map(Json)
}

/// `GET /api/games?bot=&version=&opponent=&variant=&result=&reason=&forfeit=&order=&after=&limit=`:
/// finished games' rows, in the order they finished (`order=newest`: the
/// latest first), at most `limit` (100 by default, 10,000 at most), and
/// `next`, the game to list `after` for more (null at the end). The
/// filters are [`browse`]'s: a refused one is a 400 that names what it
/// can be, an unknown bot, version or game a 404.
async fn games(
    State(l): Shared,
    Query(q): Query<Vec<(String, String)>>,
) -> ApiResult<Json<GamesBody>> {
    let f = browse::filter_of(&l, &q, Order::Oldest, 100).await?;
    let page = browse::listed(&l, &f).await?;
    Ok(Json(GamesBody {
        games: page.games,
        next: page.next.map(|k| k.id),
    }))
}

/// `/api/games`: a page of finished games' rows, and the game to list
/// after for the next page.
#[derive(serde::Serialize)]
struct GamesBody {
    games: Vec<crate::results::GameRow>,
    next: Option<i64>,
}

/// `/api/games/ID`: a finished game's record (its JSON lines) and row.
#[derive(serde::Serialize)]
struct GameBody {
    record: Vec<serde_json::Value>,
    row: crate::results::GameRow,
}

/// `GET /api/games/ID`: a finished game's row and record.
async fn game(State(l): Shared, Path(id): Path<String>) -> ApiResult<Json<GameBody>> {
    match pages::game_of(&l, &id).await.map_err(ApiError::internal)? {
        Some((row, record)) => Ok(Json(GameBody { record, row })),
        None => Err(ApiError::not_found(format!("no finished game `{id}`"))),
    }
}
