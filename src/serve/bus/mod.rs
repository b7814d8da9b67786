//! The handles the service's parts share, each named for what it is and
//! handed only to the parts that use it: the wake-up and stop ([`Wake`]),
//! the live feed ([`Feed`]), the counters of `/metrics` ([`Metrics`]), the
//! last complete fit and the ratings' history ([`Fits`]), the way a
//! part's own thread runs a store query ([`Queries`]), and how fast each
//! worker plays ([`Paces`], `pace.rs`). Below every wing:
//! it imports nothing of the service.

mod pace;
pub use pace::Paces;

use crate::ratings::Report;
use crate::results::GameRow;
use crate::serve::store::history::HistoryChange;
use crate::serve::store::VersionStatus;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

/// Wakes the parts that wait (the player, the intake, the fitter) and
/// tells them all to stop.
#[derive(Debug, Default)]
pub struct Wake {
    /// Raised by every wake-up; a waiter returns when it changes.
    count: Mutex<u64>,
    cond: Condvar,
    /// Raised once, to stop every part.
    stopping: AtomicBool,
}

impl Wake {
    /// Wakes whoever waits in [`Wake::wait`].
    pub fn wake_all(&self) {
        let mut n = self.count.lock().unwrap_or_else(|p| p.into_inner());
        *n += 1;
        self.cond.notify_all();
    }

    /// Waits until woken, stopped, or `timeout` passes.
    pub fn wait(&self, timeout: Duration) {
        let n = self.count.lock().unwrap_or_else(|p| p.into_inner());
        let start = *n;
        let _ = self
            .cond
            .wait_timeout_while(n, timeout, |n| *n == start && !self.is_stopping());
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
}

/// An event of the live feed, as JSON with its kind in `type`.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FeedEvent<'a> {
    /// A version moved on its way (`status`, with what went wrong in
    /// `detail`), or its bot was retired or brought back (no `version`).
    Bot {
        bot: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<i64>,
        status: VersionStatus,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<&'a str>,
    },
    /// A finished game's row.
    Game { row: &'a GameRow },
    /// A new fit of the standings: over how many games, and when.
    Standings { games: usize, at: &'a str },
}

impl FeedEvent<'_> {
    /// Its kind, as `type` and the SSE `event:` field say it.
    pub fn kind(&self) -> &'static str {
        match self {
            FeedEvent::Bot { .. } => "bot",
            FeedEvent::Game { .. } => "game",
            FeedEvent::Standings { .. } => "standings",
        }
    }
}

/// An event as sent: its number (the SSE `id:`, one up from the last,
/// starting past any of the server's earlier runs: [`Feed::for_this_run`]),
/// its kind (`event:`) and its JSON (`data:`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sent {
    pub id: u64,
    pub kind: &'static str,
    pub json: Arc<str>,
}

/// The live feed: JSON events (`{"type": ...}`) for the pages' listeners
/// (Server-Sent Events), each numbered, the latest `capacity` of them
/// kept, so that a listener that lost its connection resumes after the
/// last one it had (`Last-Event-ID`).
#[derive(Clone, Debug)]
pub struct Feed {
    live: tokio::sync::broadcast::Sender<Sent>,
    /// The latest events, oldest first, and the next event's number.
    kept: Arc<Mutex<(std::collections::VecDeque<Sent>, u64)>>,
    capacity: usize,
}

/// Where a listener starts: the events it missed, and the live ones.
pub struct Subscription {
    /// The kept events after the one it asked to resume after.
    pub missed: Vec<Sent>,
    /// Whether events it asked for were no longer kept (it lost some).
    pub lost: bool,
    /// The number it had every event up to, as this run numbers them: the
    /// one it sent, or below every kept event when that number is not
    /// this run's.
    pub after: u64,
    pub live: tokio::sync::broadcast::Receiver<Sent>,
}

impl Feed {
    /// A feed that keeps the last `capacity` events, for slow listeners
    /// and for those that resume.
    pub fn new(capacity: usize) -> Feed {
        Feed::starting_at(capacity, 1)
    }

    /// [`Feed::new`] whose first event is numbered `first`.
    pub fn starting_at(capacity: usize, first: u64) -> Feed {
        Feed {
            live: tokio::sync::broadcast::channel(capacity).0,
            kept: Arc::new(Mutex::new((Default::default(), first.max(1)))),
            capacity,
        }
    }

    /// The server's feed: its first event numbered by the time it started,
    /// in milliseconds since 1970, times 1,000, so that a number of an
    /// earlier run is below every one of this run (unless that run sent
    /// 1,000 events a millisecond), and a listener resuming from it is
    /// told `lost` (docs/ladder.md, "The live feed"). Still below 2^53: a
    /// browser's number holds it.
    pub fn for_this_run(capacity: usize) -> Feed {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Feed::starting_at(capacity, ms.saturating_mul(1000))
    }

    /// Numbers `event`, keeps it and sends it to the listeners.
    pub fn announce(&self, event: FeedEvent<'_>) {
        let Ok(text) = serde_json::to_string(&event) else {
            return;
        };
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let sent = Sent {
            id: kept.1,
            kind: event.kind(),
            json: text.into(),
        };
        kept.1 += 1;
        if kept.0.len() == self.capacity {
            kept.0.pop_front();
        }
        kept.0.push_back(sent.clone());
        // Sent under the lock: a new listener takes the kept events and
        // its receiver at once, so that it misses none and has none twice.
        let _ = self.live.send(sent);
    }

    /// A finished game: its row.
    pub fn announce_game(&self, row: &GameRow) {
        self.announce(FeedEvent::Game { row });
    }

    /// A new listener, which had every event up to `last` (`None`: a new
    /// one, which starts with the next event).
    pub fn subscribe(&self, last: Option<u64>) -> Subscription {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let live = self.live.subscribe();
        let Some(last) = last else {
            return Subscription {
                missed: Vec::new(),
                lost: false,
                after: kept.1 - 1,
                live,
            };
        };
        let oldest = kept.0.front().map_or(kept.1, |e| e.id);
        // A number this run never sent (of another run, whose clock was
        // ahead): nothing of it is known, every kept event is news.
        let last = match last >= kept.1 {
            true => 0,
            false => last,
        };
        Subscription {
            missed: kept.0.iter().filter(|e| e.id > last).cloned().collect(),
            lost: last.saturating_add(1) < oldest,
            after: last,
            live,
        }
    }

    /// The kept events after `last` (for a listener that fell behind).
    pub fn since(&self, last: u64) -> Vec<Sent> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.0.iter().filter(|e| e.id > last).cloned().collect()
    }
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
    pub faults: Mutex<BTreeMap<String, u64>>,
}

/// The most points kept of one version's rating history: past it, every
/// other point is dropped.
pub const HISTORY_POINTS: usize = 400;

/// A complete fit of the ratings, with when and over how many games.
#[derive(Debug)]
pub struct Fit {
    pub report: Report,
    /// Games the fit saw.
    pub games: usize,
    /// The generation of the finished games it saw ([`crate::serve::store::finished::Finished::generation`]).
    pub generation: u64,
    /// When it finished (UTC, ISO 8601).
    pub at: String,
    /// How long it took.
    pub took: Duration,
}

/// The last complete fit, and each version's overall rating at each fit
/// since the server started: `[games, elo, low, high]` (at most
/// [`HISTORY_POINTS`], thinned).
#[derive(Debug, Default)]
pub struct Fits {
    last: RwLock<Option<Arc<Fit>>>,
    pub history: RwLock<HashMap<String, Vec<[f64; 4]>>>,
}

impl Fits {
    /// The last complete fit, if there was one.
    pub fn last(&self) -> Option<Arc<Fit>> {
        self.last.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Fits of none yet, with the history kept in the store (`history`,
    /// [`crate::serve::store::Db::rating_history`]).
    pub fn with_history(history: HashMap<String, Vec<[f64; 4]>>) -> Fits {
        Fits {
            last: RwLock::new(None),
            history: RwLock::new(history),
        }
    }

    /// `fit` is the last complete one; each rated version's place in it
    /// joins its history. Returns what changed in the history, for the
    /// store to keep.
    pub fn keep(&self, fit: Arc<Fit>) -> HistoryChange {
        let mut change = HistoryChange::default();
        let mut h = self.history.write().unwrap_or_else(|p| p.into_inner());
        for r in fit.report.overall.ratings.iter().filter(|r| r.rated) {
            let points = h.entry(r.bot.clone()).or_default();
            let point = [fit.games as f64, r.elo, r.elo_low, r.elo_high];
            // A fit of as many games as the last point's (after a
            // restart): in its place.
            match points.last_mut() {
                Some(last) if last[0] == point[0] => *last = point,
                _ => points.push(point),
            }
            change.added.push((r.bot.clone(), point));
            if points.len() > HISTORY_POINTS {
                let mut i = 0;
                let mut gone = Vec::new();
                points.retain(|p| {
                    i += 1;
                    let keep = i % 2 == 1;
                    if !keep {
                        gone.push(p[0] as i64);
                    }
                    keep
                });
                change.dropped.push((r.bot.clone(), gone));
            }
        }
        drop(h);
        *self.last.write().unwrap_or_else(|p| p.into_inner()) = Some(fit);
        change
    }
}

/// Runs store queries from a thread that is not one of the runtime's own
/// (the player, the intake, the fitter): it polls the query there, in the
/// runtime's context, and sleeps while the query waits. (A thread spawned
/// per query cost a fifth of the server's time per game.)
#[derive(Clone, Debug)]
pub struct Queries(pub tokio::runtime::Handle);

impl Queries {
    /// Runs `f` to its end on this thread. Unconstrained by tokio's
    /// cooperative budget: a caller inside another runtime's `block_on`
    /// (the league runner's slots) has that runtime's budget, and once a
    /// slot's many queries in one poll of its task spent it, tokio deferred
    /// the wake-up to that runtime, which never ran again: the slot slept
    /// for good (seen at the maintenance rate, issue 48).
    pub fn run<F: std::future::Future>(&self, f: F) -> F::Output {
        let _context = self.0.enter();
        block_on(tokio::task::coop::unconstrained(f))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn standings(feed: &Feed, n: usize) {
        feed.announce(FeedEvent::Standings {
            games: n,
            at: "now",
        });
    }

    #[test]
    fn a_listener_resumes_after_the_last_event_it_had() {
        let feed = Feed::new(4);
        for n in 0..3 {
            standings(&feed, n);
        }
        let s = feed.subscribe(Some(1));
        assert_eq!(s.missed.iter().map(|e| e.id).collect::<Vec<_>>(), [2, 3]);
        assert!(!s.lost);
        assert_eq!(s.missed[0].kind, "standings");
        assert_eq!(
            &*s.missed[0].json,
            r#"{"type":"standings","games":1,"at":"now"}"#
        );
        // A new listener starts with the next one.
        let mut fresh = feed.subscribe(None);
        assert!(fresh.missed.is_empty());
        standings(&feed, 3);
        assert_eq!(fresh.live.try_recv().map(|e| e.id), Ok(4));
        // Past the kept four, a resume says it lost some.
        for n in 4..8 {
            standings(&feed, n);
        }
        let s = feed.subscribe(Some(2));
        assert!(s.lost);
        assert_eq!(
            s.missed.iter().map(|e| e.id).collect::<Vec<_>>(),
            [5, 6, 7, 8]
        );
        assert!(!feed.subscribe(Some(4)).lost);
        assert_eq!(feed.since(7).len(), 1);
    }

    #[test]
    fn a_number_of_another_run_is_told_lost_and_gets_every_kept_event() {
        // An earlier run's number, below this run's first: lost.
        let feed = Feed::starting_at(4, 5000);
        let s = feed.subscribe(Some(307));
        assert!(s.lost && s.missed.is_empty());
        standings(&feed, 0);
        standings(&feed, 1);
        let s = feed.subscribe(Some(307));
        assert!(s.lost);
        assert_eq!(s.missed.len(), 2);
        // One ahead of this run's numbers: lost, and every kept event.
        let s = feed.subscribe(Some(9_000_000));
        assert!(s.lost);
        assert_eq!(
            s.missed.iter().map(|e| e.id).collect::<Vec<_>>(),
            [5000, 5001]
        );
        assert!(!feed.subscribe(Some(5000)).lost);
        // A run's first number is its start time's: past an earlier run's.
        let first = |f: &Feed| f.kept.lock().unwrap().1;
        let before = Feed::for_this_run(4);
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(first(&Feed::for_this_run(4)) > first(&before) + 1000);
        assert!(first(&before) < 1 << 53);
    }

    /// A slot of the league runner runs its queries from inside its own
    /// runtime's `block_on`, many in one poll while it waits for a game:
    /// past tokio's budget (128) a resource that deferred its wake-up to
    /// that runtime would leave the thread asleep for good. 1,000 locks of
    /// a tokio mutex from one poll all finish (the test hangs if not: it
    /// waits for them on another thread, for a minute at most).
    #[test]
    fn queries_from_inside_another_runtime_are_not_held_by_its_budget() {
        let server = tokio::runtime::Runtime::new().unwrap();
        let queries = Queries(server.handle().clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let slot = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let lock = tokio::sync::Mutex::new(0u32);
            slot.block_on(async {
                for _ in 0..1000 {
                    queries.run(async {
                        *lock.lock().await += 1;
                    });
                }
            });
            let _ = tx.send(lock.into_inner());
        });
        let n = rx.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(n, Ok(1000), "the queries did not all finish");
    }
}
