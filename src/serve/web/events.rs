//! `/api/tournaments` and `/tournaments`: the ladder's events (docs/ladder.md
//! "Events"), live: each round's pairings (pairs, threes, byes), its
//! games and each entrant's points in it, and the standings with the
//! league Swiss's tie-breaks (score, Buchholz, Sonneborn-Berger, the
//! initial order), all replayed from the event's committed games.

use super::error::{ApiError, ApiResult, Shared};
use crate::league::swiss_games::SwissPlan;
use crate::serve::ladder::Ladder;
use crate::serve::schedule::event::{plan_of, replay};
use crate::serve::store::events::{Event, EventGame, EventStatus};
use crate::wire::worker::game_id;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/api/tournaments", get(events_api))
        .route("/api/tournaments/{name}", get(event_api))
        .route("/tournaments", get(events_page))
        .route("/tournaments/{name}", get(event_page))
}

/// An event in a listing.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EventSummary {
    #[serde(flatten)]
    pub event: Event,
    pub url: String,
}

/// `/api/tournaments`: the events, newest first.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EventsBody {
    pub events: Vec<EventSummary>,
}

/// One event, as replayed from its committed games.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EventBody {
    #[serde(flatten)]
    pub event: Event,
    pub url: String,
    /// Rounds whose every game is committed.
    pub rounds_finished: usize,
    pub games_done: usize,
    pub games_queued: usize,
    /// The rounds paired and queued so far, in order.
    pub round_list: Vec<RoundBody>,
    /// By rank: after the finished rounds.
    pub standings: Vec<StandingBody>,
}

/// A round: its pairing, when it was queued, its games, each entrant's
/// points once it is finished.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RoundBody {
    pub round: usize,
    pub paired_at: String,
    pub finished: bool,
    /// The 2-player tables, better-ranked first; with each one's points
    /// in the round once it is finished.
    pub pairs: Vec<TableBody>,
    pub bye: Option<String>,
    pub triples: Vec<TableBody>,
    pub bye3: Vec<String>,
    pub games: Vec<GameBody>,
}

/// A table of a round: its entrants and, once the round is finished,
/// each one's points in it (its share of the mini-match, averaged over
/// the variants).
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableBody {
    pub players: Vec<String>,
    pub points: Option<Vec<f64>>,
}

/// One of a round's games.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GameBody {
    /// Its ladder id (`game-N`: its page is `/games/game-N`).
    pub game_id: String,
    /// Its place in the Swiss (`s002-kisolo-t001-g0-o1`).
    pub event_game: String,
    pub state: String,
    pub seats: Vec<String>,
    pub scores: Option<Vec<f64>>,
    pub finished_at: Option<String>,
}

/// A line of the standings.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StandingBody {
    pub rank: usize,
    pub player: String,
    pub score: f64,
    pub buchholz: f64,
    pub sonneborn_berger: f64,
    pub byes: u32,
}

fn url_of(e: &Event) -> String {
    format!("/tournaments/{}", e.name)
}

/// The event named `name`, or 404.
async fn named(l: &Ladder, name: &str) -> ApiResult<Event> {
    l.db.event_named(name)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no event `{name}` (see /api/tournaments for the events)"
            ))
        })
}

/// Event `e` replayed from its games and stored rounds.
async fn body_of(l: &Ladder, e: Event) -> ApiResult<EventBody> {
    let games = l.db.event_games(e.id).await.map_err(ApiError::internal)?;
    let stored = l.db.event_rounds(e.id).await.map_err(ApiError::internal)?;
    let plan = plan_of(&l.t, &e);
    let state = replay(&plan, &games);
    let name = |b: usize| e.entrants.get(b).cloned().unwrap_or_default();
    let mut round_list = Vec::new();
    for (s, p) in stored.iter().zip(&state.rounds) {
        let r = s.round as usize;
        let points = state.round_points(r);
        let table = |players: Vec<usize>| TableBody {
            points: points.map(|pts| players.iter().map(|&b| pts[b]).collect()),
            players: players.into_iter().map(name).collect(),
        };
        round_list.push(RoundBody {
            round: r,
            paired_at: s.paired_at.clone(),
            finished: points.is_some(),
            pairs: p.pairs.iter().map(|&(a, b)| table(vec![a, b])).collect(),
            bye: p.bye.map(name),
            triples: p.triples.iter().map(|t| table(t.to_vec())).collect(),
            bye3: p.bye3.iter().map(|&b| name(b)).collect(),
            games: round_games(&plan, &e, r, p, &games),
        });
    }
    let standings = state
        .standings()
        .into_iter()
        .enumerate()
        .map(|(i, s)| StandingBody {
            rank: i + 1,
            player: name(s.bot),
            score: s.score,
            buchholz: s.buchholz,
            sonneborn_berger: s.sonneborn_berger,
            byes: state.history.byes(s.bot).0,
        })
        .collect();
    let done = games.iter().filter(|g| g.state == "done").count();
    Ok(EventBody {
        url: url_of(&e),
        rounds_finished: state.finished_rounds(),
        games_done: done,
        games_queued: games.len() - done,
        round_list,
        standings,
        event: e,
    })
}

/// Round `round`'s games among `games`, seats named as the Swiss placed
/// them (scores once done).
fn round_games(
    plan: &SwissPlan,
    e: &Event,
    round: usize,
    p: &crate::league::swiss::RoundPairing,
    games: &[EventGame],
) -> Vec<GameBody> {
    let per = plan.games_per_round();
    games
        .iter()
        .filter_map(|g| {
            let (r, index) = plan.place(&g.event_game)?;
            if r as usize != round {
                return None;
            }
            let placed = plan.game(r, p, index - (round - 1) * per)?;
            let row: Option<crate::results::GameRow> = g
                .row_json
                .as_deref()
                .and_then(|j| serde_json::from_str(j).ok());
            Some(GameBody {
                game_id: game_id(g.id),
                event_game: g.event_game.clone(),
                state: g.state.clone(),
                seats: placed
                    .seats
                    .iter()
                    .map(|&b| e.entrants.get(b).cloned().unwrap_or_default())
                    .collect(),
                scores: row.map(|r| r.scores()),
                finished_at: g.finished_at.clone(),
            })
        })
        .collect()
}

/// `GET /api/tournaments`: every event, newest first.
async fn events_api(State(l): Shared) -> ApiResult<Json<EventsBody>> {
    let events = l.db.events(false, 1000).await.map_err(ApiError::internal)?;
    Ok(Json(EventsBody {
        events: events
            .into_iter()
            .map(|e| EventSummary {
                url: url_of(&e),
                event: e,
            })
            .collect(),
    }))
}

/// `GET /api/tournaments/NAME`: one event's rounds and standings.
async fn event_api(State(l): Shared, Path(name): Path<String>) -> ApiResult<Json<EventBody>> {
    let e = named(&l, &name).await?;
    Ok(Json(body_of(&l, e).await?))
}

/// `GET /tournaments`: the events, running first.
async fn events_page(State(l): Shared) -> Response {
    let events = match l.db.events(false, 1000).await {
        Ok(e) => e,
        Err(e) => return super::pages::page_of_error(ApiError::internal(e)),
    };
    let running = events.iter().any(|e| e.status == EventStatus::Running);
    let (mut list, done): (Vec<Event>, Vec<Event>) = events
        .into_iter()
        .partition(|e| e.status == EventStatus::Running);
    list.extend(done);
    let list: Vec<EventSummary> = list
        .into_iter()
        .map(|e| EventSummary {
            url: url_of(&e),
            event: e,
        })
        .collect();
    super::pages::page(
        "events.html",
        &l,
        serde_json::json!({ "events": list, "running": running }),
    )
}

/// `GET /tournaments/NAME`: one event, refreshed while it runs.
async fn event_page(State(l): Shared, Path(name): Path<String>) -> Response {
    let body = match named(&l, &name).await {
        Ok(e) => body_of(&l, e).await,
        Err(e) => Err(e),
    };
    match body {
        Ok(b) => super::pages::page("event.html", &l, serde_json::json!({ "e": b })),
        Err(e) => super::pages::page_of_error(e),
    }
}
