//! `/api/events`: the live feed, as Server-Sent Events (a finished game,
//! a fit of the standings, a version's step from upload to entry), each
//! with its number (`id:`) and kind (`event:`), resumed after a break
//! from `Last-Event-ID`.

use super::error::{ApiError, ApiResult, Shared};
use crate::serve::bus::{Sent, Subscription};
use crate::serve::ladder::Ladder;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::routing::get;
use axum::Router;
use std::collections::VecDeque;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new().route("/api/events", get(events))
}

/// An event as SSE: `id:`, `event:` and `data:`.
fn sse(e: &Sent) -> SseEvent {
    SseEvent::default()
        .id(e.id.to_string())
        .event(e.kind)
        .data(&*e.json)
}

/// What a listener's stream holds between two events.
struct Listener {
    sub: Subscription,
    /// Whether `event: lost` is to be sent next (before `queue`).
    lost: bool,
    /// Kept events still to send, before the live ones: the feed's own
    /// (their JSON shared, not copied), each written out as SSE only
    /// when its turn comes. (Written out at once, a listener resuming
    /// from `Last-Event-ID: 0` that read nothing held a copy of every kept
    /// event, up to 1,024 of them, for as long as it stayed.)
    queue: VecDeque<Sent>,
    /// The last event's number sent.
    last: u64,
    feed: crate::serve::bus::Feed,
    /// Its place among `[ladder] feeds_at_once`, for as long as it stays.
    _slot: crate::serve::intake::inbox::Slot,
}

/// `GET /api/events`: the live feed: `event: game` per finished game
/// (`{"type": "game", "row": ...}`), `event: standings` per fit, `event:
/// bot` per version's step; each `data:` line one JSON object with its
/// `type`, each event numbered (`id:`). A listener that sends
/// `Last-Event-ID: N` (as a browser's EventSource does when it
/// reconnects) first gets the events after N that the server still keeps
/// (the latest 1,024), preceded by `event: lost` when some of those it
/// missed are no longer kept, or when N is not one of this run's (the
/// numbers of a run start past those of the earlier ones:
/// [`Feed::for_this_run`](crate::serve::bus::Feed::for_this_run)). A
/// listener that falls behind gets what it missed from the same ring, or
/// `event: lost`. At most `[ladder] feeds_at_once` listeners at once: one
/// more is answered 503 with `Retry-After`.
async fn events(
    State(l): Shared,
    headers: HeaderMap,
) -> ApiResult<Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>>> {
    let last = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "Last-Event-ID is not an event's number: send the `id:` of the last event you had",
                    )
                })?,
        ),
    };
    let slot = l.gates.feeds.enter(0)?;
    let mut sub = l.feed.subscribe(last);
    let lost = sub.lost;
    let last = sub.missed.last().map_or(sub.after, |e| e.id);
    let queue: VecDeque<Sent> = std::mem::take(&mut sub.missed).into();
    let listener = Listener {
        sub,
        lost,
        queue,
        last,
        feed: l.feed.clone(),
        _slot: slot,
    };
    let stream = futures_util::stream::unfold(listener, |mut me| async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            if std::mem::take(&mut me.lost) {
                return Some((Ok(lost_event()), me));
            }
            if let Some(e) = me.queue.pop_front() {
                return Some((Ok(sse(&e)), me));
            }
            match me.sub.live.recv().await {
                // Sent before the listener's kept events ended: had already.
                Ok(e) if e.id <= me.last => continue,
                Ok(e) => {
                    me.last = e.id;
                    return Some((Ok(sse(&e)), me));
                }
                Err(RecvError::Lagged(_)) => {
                    let missed = me.feed.since(me.last);
                    if missed.first().is_some_and(|e| e.id > me.last + 1) {
                        me.lost = true;
                    }
                    if let Some(e) = missed.last() {
                        me.last = e.id;
                    }
                    me.queue.extend(missed);
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// `event: lost`: events the listener missed are no longer kept (reload
/// what they would have told).
fn lost_event() -> SseEvent {
    SseEvent::default().event("lost").data(r#"{"type":"lost"}"#)
}
