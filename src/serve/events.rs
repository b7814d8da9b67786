//! The events on the ladder, moved on (docs/ladder.md "Events"): a few
//! times a second, each running event whose committed games changed is
//! replayed ([`crate::serve::schedule::event::advance`]): its next round
//! paired and queued once the round before is committed, or the event
//! ended after its last. An event one of whose entrants left the ladder
//! is cancelled.

use super::ladder::Ladder;
use super::schedule::event::{advance, Advanced};
use super::store::events::EventStatus;
use super::store::DbError;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Moves the running events on until the service stops.
pub fn run_forever(l: Arc<Ladder>) {
    // Per event, its games done when last looked at (`-1`: not yet).
    let mut seen: HashMap<i64, i64> = HashMap::new();
    while !l.is_stopping() {
        if let Err(e) = run_all(&l, &mut seen) {
            tracing::warn!("the events were not moved on: {e}");
        }
        l.wait(Duration::from_millis(250));
    }
}

/// One look: orphans cancelled, each running event with new committed
/// games advanced.
fn run_all(l: &Ladder, seen: &mut HashMap<i64, i64>) -> Result<(), DbError> {
    for (id, gone) in l.query(l.db.orphan_events())? {
        let why = format!("{gone} left the ladder");
        if l.query(l.db.end_event(id, EventStatus::Cancelled, &why))? {
            tracing::info!("event {id} cancelled: {why}");
            l.sched.forget_queue();
        }
    }
    let running = l.query(l.db.events(true, i64::MAX))?;
    seen.retain(|id, _| running.iter().any(|e| e.id == *id));
    for e in running {
        let done = l.query(l.db.event_games_done(e.id))?;
        if seen.get(&e.id) == Some(&done) {
            continue;
        }
        match l.query(advance(&l.db, &l.t, &e)) {
            Ok(Advanced::Queued(round)) => {
                tracing::info!("event `{}`: round {round} paired and queued", e.name);
                l.sched.forget_queue();
                l.wake_all();
            }
            Ok(Advanced::Finished) => {
                tracing::info!("event `{}`: finished", e.name);
            }
            Ok(Advanced::Nothing) => {}
            // Said once per change of its games, not at every look.
            Err(err) => tracing::error!("event `{}`: {err}", e.name),
        }
        seen.insert(e.id, done);
    }
    Ok(())
}
