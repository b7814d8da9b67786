//! `/api/standings` and `/api/games`: the ratings, the finished games
//! (filtered and paged) and one game with its record.

use super::error::{ApiError, ApiResult, Shared};
use super::pages;
use crate::serve::ladder::Ladder;
use crate::serve::store::{DbError, GameFilter};
use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/api/standings", get(standings))
        .route("/api/games", get(games))
        .route("/api/games/{id}", get(game))
}

#[derive(Deserialize)]
struct StandingsQuery {
    variant: Option<String>,
}

/// `GET /api/standings?variant=V`: the last complete fit's table.
async fn standings(
    State(l): Shared,
    Query(q): Query<StandingsQuery>,
) -> ApiResult<Json<pages::StandingsBody>> {
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
async fn games(State(l): Shared, Query(q): Query<GamesQuery>) -> ApiResult<Json<GamesBody>> {
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
            l.sched
                .keys
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
    let games = page
        .iter()
        .filter_map(|d| serde_json::from_str(&d.row_json).ok())
        .collect();
    Ok(Json(GamesBody { games }))
}

/// `/api/games`: a page of finished games' rows.
#[derive(serde::Serialize)]
struct GamesBody {
    games: Vec<crate::results::GameRow>,
}

/// `/api/games/ID`: a finished game's record (its JSON lines) and row.
#[derive(serde::Serialize)]
struct GameBody {
    record: Vec<serde_json::Value>,
    row: crate::results::GameRow,
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

/// `GET /api/games/ID`: a finished game's row and record.
async fn game(State(l): Shared, Path(id): Path<String>) -> ApiResult<Json<GameBody>> {
    match pages::game_of(&l, &id).await.map_err(ApiError::internal)? {
        Some((row, record)) => Ok(Json(GameBody { record, row })),
        None => Err(ApiError::not_found(format!("no finished game `{id}`"))),
    }
}
