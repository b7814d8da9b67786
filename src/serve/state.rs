//! What the parts of the service share: the ladder file, the store, the
//! finished games' rows (in memory, for fits and exports), the last
//! complete fit, the live feed and the counters of `/metrics`.

use super::db::{Db, DbError};
use crate::league::config::ladder::LadderSettings;
use crate::league::config::Tournament;
use crate::ratings::Report;
use crate::results::GameRow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

/// The most points kept of one version's rating history: past it, every
/// other point is dropped.
pub const HISTORY_POINTS: usize = 400;

/// A complete fit of the ratings, with when and over how many games.
#[derive(Debug)]
pub struct Fit {
    pub report: Report,
    /// Games the fit saw.
    pub games: usize,
    /// When it finished (UTC, ISO 8601).
    pub at: String,
    /// How long it took.
    pub took: Duration,
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Metrics {
    pub games_played: AtomicU64,
    pub games_in_flight: AtomicU64,
    pub games_replayed: AtomicU64,
    pub builds: AtomicU64,
    pub builds_failed: AtomicU64,
    pub checks_failed: AtomicU64,
    pub uploads: AtomicU64,
    pub uploads_refused: AtomicU64,
    pub fits: AtomicU64,
    pub fit_micros: AtomicU64,
    /// Forfeits by reason (`timeout`, `crash`, ...).
    pub faults: Mutex<std::collections::BTreeMap<String, u64>>,
}

/// The ladder service's shared state.
pub struct Ladder {
    /// The ladder file: variants, time control, limits, sandbox, openings,
    /// and where its folder is (`output`). Its `bots` are empty.
    pub t: Tournament,
    pub settings: LadderSettings,
    pub db: Db,
    /// The runtime the store's queries run on.
    pub rt: tokio::runtime::Handle,
    /// Every finished game's row, in the order they finished.
    pub rows: RwLock<Vec<GameRow>>,
    /// The last complete fit.
    pub fit: RwLock<Option<Arc<Fit>>>,
    /// Each version's overall rating at each fit since the server started:
    /// `[games, elo, low, high]` (at most [`HISTORY_POINTS`], thinned).
    pub history: RwLock<std::collections::HashMap<String, Vec<[f64; 4]>>>,
    /// The entered versions changed: the games in flight finish, and play
    /// goes on with the new roster.
    pub roster_changed: AtomicBool,
    /// Wakes the player (a version was entered) and the fitter (games
    /// finished), and tells both to stop.
    pub wake: (Mutex<u64>, Condvar),
    /// Raised once, to stop every part.
    pub stopping: AtomicBool,
    /// The live feed (JSON events, for Server-Sent Events).
    pub events: tokio::sync::broadcast::Sender<String>,
    pub metrics: Metrics,
}

impl Ladder {
    /// Runs a store query from any thread, inside or outside a runtime: on
    /// a thread of its own, which blocks on the query.
    pub fn query<T: Send, F>(&self, f: F) -> Result<T, DbError>
    where
        F: std::future::Future<Output = Result<T, DbError>> + Send,
    {
        let rt = self.rt.clone();
        std::thread::scope(|s| {
            s.spawn(move || rt.block_on(f))
                .join()
                .unwrap_or_else(|_| Err(DbError::Conflict("a store query panicked".into())))
        })
    }

    /// Wakes whoever waits in [`Ladder::wait`].
    pub fn wake_all(&self) {
        let (m, c) = &self.wake;
        let mut n = m.lock().unwrap_or_else(|p| p.into_inner());
        *n += 1;
        c.notify_all();
    }

    /// Waits until woken or `timeout` passes.
    pub fn wait(&self, timeout: Duration) {
        let (m, c) = &self.wake;
        let n = m.lock().unwrap_or_else(|p| p.into_inner());
        let start = *n;
        let _ = c.wait_timeout_while(n, timeout, |n| *n == start && !self.is_stopping());
    }

    /// Whether the service is stopping.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Asks every part to stop.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.wake_all();
    }

    /// Sends `event` (`{"type": ...}`) to the live feed's listeners.
    pub fn announce(&self, event: serde_json::Value) {
        let _ = self.events.send(event.to_string());
    }

    /// The last complete fit, if there was one.
    pub fn last_fit(&self) -> Option<Arc<Fit>> {
        self.fit.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Games finished so far.
    pub fn games_done(&self) -> usize {
        self.rows.read().unwrap_or_else(|p| p.into_inner()).len()
    }
}
