//! `/api/events`: the live feed, as Server-Sent Events (a finished game,
//! a version's step from upload to entry).

use super::error::Shared;
use crate::serve::ladder::Ladder;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new().route("/api/events", get(events))
}

/// `GET /api/events`: the live feed: a `game` event per finished game, a
/// `standings` event per fit, a `bot` event per version's step (each data
/// line one JSON object with its `type`). A reader that falls behind
/// skips what it missed.
async fn events(
    State(l): Shared,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    use tokio::sync::broadcast::error::RecvError;
    let stream = futures_util::stream::unfold(l.feed.subscribe(), |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(s) => return Some((Ok(SseEvent::default().data(s)), rx)),
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
