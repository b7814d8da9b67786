//! What the parts of the service share: the ladder file, the store, the
//! finished games' rows (in memory, for fits and exports), the last
//! complete fit, the live feed and the counters of `/metrics`.

use super::db::{Db, DbError};
use super::finished::Finished;
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
    /// A second server for the pages only (`--pages-only`): it plays no
    /// games, takes no uploads and rereads the finished games' rows from
    /// the store.
    pub pages_only: bool,
    /// The runtime the store's queries run on.
    pub rt: tokio::runtime::Handle,
    /// The finished games, summed up (their rows are in the store).
    pub finished: RwLock<Finished>,
    /// The last complete fit.
    pub fit: RwLock<Option<Arc<Fit>>>,
    /// Each version's overall rating at each fit since the server started:
    /// `[games, elo, low, high]` (at most [`HISTORY_POINTS`], thinned).
    pub history: RwLock<std::collections::HashMap<String, Vec<[f64; 4]>>>,
    /// The entered versions changed: the games in flight finish, and play
    /// goes on with the new roster.
    pub roster_changed: AtomicBool,
    /// Wakes the player and the intake (a version was uploaded, entered
    /// or retired), and tells every part to stop. Finished games do not
    /// raise it: the fitter looks at the count twice a second.
    pub wake: (Mutex<u64>, Condvar),
    /// Raised once, to stop every part.
    pub stopping: AtomicBool,
    /// Raised when another server took this one's claim over: it stops,
    /// and says so.
    pub lost: AtomicBool,
    /// The live feed (JSON events, for Server-Sent Events).
    pub events: tokio::sync::broadcast::Sender<String>,
    pub metrics: Metrics,
    /// The queue's scheduler and what the workers' endpoints keep.
    pub workers: super::workers::Workers,
    /// How many uploads are handled at once ([`super::inbox`]).
    pub gates: super::inbox::Gates,
}

impl Ladder {
    /// Runs a store query from a thread that is not one of the runtime's
    /// own (the player, the intake, the fitter): it polls the query here,
    /// in the runtime's context, and sleeps while the query waits. (A
    /// thread spawned per query cost a fifth of the server's time per game.)
    pub fn query<T, F>(&self, f: F) -> Result<T, DbError>
    where
        F: std::future::Future<Output = Result<T, DbError>>,
    {
        let _context = self.rt.enter();
        block_on(f)
    }

    /// A version was entered or left: the games in flight finish, the
    /// queue rereads the roster, and play goes on with the new one.
    pub fn roster_changed_now(&self) {
        self.roster_changed.store(true, Ordering::SeqCst);
        self.workers.sched.roster_changed();
        self.wake_all();
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
        if self.events.receiver_count() > 0 {
            let _ = self.events.send(event.to_string());
        }
    }

    /// A finished game, to the live feed: its row (built only when a page
    /// listens).
    pub fn announce_game(&self, row: &crate::results::GameRow) {
        if self.events.receiver_count() > 0 {
            self.announce(serde_json::json!({"type": "game", "row": row}));
        }
    }

    /// The last complete fit, if there was one.
    pub fn last_fit(&self) -> Option<Arc<Fit>> {
        self.fit.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Games finished so far.
    pub fn games_done(&self) -> usize {
        self.finished().games()
    }

    /// The finished games, to read.
    pub fn finished(&self) -> std::sync::RwLockReadGuard<'_, Finished> {
        self.finished.read().unwrap_or_else(|p| p.into_inner())
    }

    /// A game finished (its row is in the store).
    pub fn finished_now(&self, row: &GameRow) {
        self.finished
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .add(row);
    }
}

/// Runs `f` to completion on this thread: polls it, and parks the thread
/// until its waker unparks it.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(out) = f.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}
