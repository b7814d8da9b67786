//! The core's own type: the service as its core starts it and the web
//! layer reaches it. It owns the parts and the handles they share; no wing
//! imports it (each wing is handed the handles it uses: `bus`).

use super::bus::{Feed, Fit, Fits, Metrics, Queries, Wake};
use super::intake::Intake;
use super::schedule::queue::Scheduler;
use super::store::finished::Finished;
use super::store::{Db, DbError};
use crate::league::config::ladder::LadderSettings;
use crate::league::config::Tournament;
use crate::results::GameRow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// The ladder service.
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
    /// The variants the store has games of that the ladder file no
    /// longer plays, with their numbers (after the file's): their games
    /// are kept, listed and found by name.
    pub gone_variants: Vec<(usize, String)>,
    /// How the core's threads run the store's queries.
    pub queries: Queries,
    /// The finished games, summed up (their rows are in the store).
    pub finished: RwLock<Finished>,
    /// The last complete fit and the ratings' history.
    pub fits: Arc<Fits>,
    /// The entered versions changed: the games in flight finish, and play
    /// goes on with the new roster.
    pub roster_changed: Arc<AtomicBool>,
    /// Wakes the player, the intake and the fitter (a version was
    /// uploaded, entered or retired), and tells every part to stop.
    /// Finished games do not raise it: the fitter looks at the count twice
    /// a second.
    pub wake: Arc<Wake>,
    /// Raised when another server took this one's claim over: it stops,
    /// and says so.
    pub lost: AtomicBool,
    /// Raised once the ladder has played its `max_games`, said then in the
    /// log (and by `/health`).
    pub played_out: AtomicBool,
    /// Since when, and why, the store has refused the server's heartbeat
    /// (a full disk, a database out of reach); `None` once a heartbeat
    /// is written again. `/health` and `/metrics` say it.
    pub store_fault: Mutex<Option<(std::time::Instant, String)>>,
    /// The live feed (JSON events, for Server-Sent Events).
    pub feed: Feed,
    pub metrics: Arc<Metrics>,
    /// The queue's scheduler: the pairing rule's picks, claimed by the
    /// server's own games and the workers.
    pub sched: Arc<Scheduler>,
    /// Uploads in, versions out.
    pub intake: Arc<Intake>,
    /// What the workers' endpoints keep.
    pub workers: Workers,
    /// How many uploads are handled at once ([`super::intake::inbox`]).
    pub gates: super::intake::inbox::Gates,
    /// The games' analyses asked for by their owners, one at a time.
    pub analyses: Arc<super::analysis::Analyses>,
}

/// What the service keeps for its workers.
pub struct Workers {
    /// How long a lease lasts without a heartbeat (`--lease-seconds`).
    pub lease_seconds: i64,
    /// The ladder file's text, sent to workers at register: they play
    /// its variants, time control, limits and sandbox.
    pub ladder_text: String,
    /// Games uploaded by workers and accepted.
    pub uploads: AtomicU64,
    /// Uploads refused, by kind.
    pub refused: Mutex<BTreeMap<&'static str, u64>>,
    /// Uploads refused since the server started, by worker (`/workers`).
    pub refused_by: Mutex<BTreeMap<String, u64>>,
    /// Uploads ending in a forfeit, held for their re-check.
    pub held: AtomicU64,
    /// Forfeits re-checked, by outcome (`confirmed`, `not_reproduced`,
    /// `void`).
    pub rechecks: Mutex<BTreeMap<&'static str, u64>>,
    /// Workers put in quarantine since the server started.
    pub quarantines: AtomicU64,
    /// How fast each worker plays: a claim's size.
    pub pace: crate::serve::bus::Paces,
    /// The workers (owner ids) registered with this server since it
    /// started: a worker registered with an earlier run claims only after
    /// registering again, so that it plays the ladder file as it is now.
    pub registered: Mutex<std::collections::HashMap<i64, Registrant>>,
}

/// The process that registered a worker's token with this server run.
#[derive(Clone, Debug)]
pub struct Registrant {
    /// The id its cache keeps ([`crate::wire::worker::INSTANCE_HEADER`]);
    /// `None` for a worker that does not say it.
    pub instance: Option<String>,
    pub host: String,
    /// When it last registered, claimed or sent a heartbeat.
    pub heard: std::time::Instant,
}

impl Workers {
    pub fn new(lease_seconds: i64, ladder_text: String) -> Workers {
        Workers {
            lease_seconds,
            ladder_text,
            uploads: AtomicU64::new(0),
            refused: Mutex::new(BTreeMap::new()),
            refused_by: Mutex::new(BTreeMap::new()),
            held: AtomicU64::new(0),
            rechecks: Mutex::new(BTreeMap::new()),
            quarantines: AtomicU64::new(0),
            pace: Default::default(),
            registered: Mutex::new(std::collections::HashMap::new()),
        }
    }
}

impl Ladder {
    /// Notes how the store took the last heartbeat: `Some(e)`, refused
    /// (kept from the first refusal on, logged once); `None`, written.
    pub fn note_store(&self, refused: Option<&DbError>) {
        let mut fault = self.store_fault.lock().unwrap_or_else(|p| p.into_inner());
        match (refused, fault.as_ref()) {
            (Some(DbError::Lost), _) => {}
            (Some(e), None) => {
                tracing::error!(
                    "the store refuses writes: {e}; /health says so until a write goes through"
                );
                *fault = Some((std::time::Instant::now(), e.to_string()));
            }
            (Some(e), Some((since, _))) => *fault = Some((*since, e.to_string())),
            (None, Some((since, _))) => {
                tracing::warn!(
                    "the store takes writes again, after {} s",
                    since.elapsed().as_secs()
                );
                *fault = None;
            }
            (None, None) => {}
        }
    }

    /// `/health`'s word on the store: how long it has refused writes, and
    /// its last error, or `None`.
    pub fn store_fault(&self) -> Option<(u64, String)> {
        let fault = self.store_fault.lock().unwrap_or_else(|p| p.into_inner());
        fault
            .as_ref()
            .map(|(since, e)| (since.elapsed().as_secs(), e.clone()))
    }

    /// Runs a store query from one of the core's threads ([`Queries`]).
    pub fn query<T, F>(&self, f: F) -> Result<T, DbError>
    where
        F: std::future::Future<Output = Result<T, DbError>>,
    {
        self.queries.run(f)
    }

    /// A version was entered or left: the games in flight finish, the
    /// queue rereads the roster, and play goes on with the new one.
    pub fn roster_changed_now(&self) {
        roster_changed(&self.roster_changed, &self.sched, &self.wake);
    }

    /// Wakes whoever waits in [`Ladder::wait`].
    pub fn wake_all(&self) {
        self.wake.wake_all();
    }

    /// Waits until woken or `timeout` passes.
    pub fn wait(&self, timeout: Duration) {
        self.wake.wait(timeout);
    }

    /// Whether the service is stopping.
    pub fn is_stopping(&self) -> bool {
        self.wake.is_stopping()
    }

    /// Asks every part to stop.
    pub fn stop(&self) {
        self.wake.stop();
    }

    /// Sends `event` (`{"type": ...}`) to the live feed's listeners.
    pub fn announce(&self, event: crate::serve::bus::FeedEvent<'_>) {
        self.feed.announce(event);
    }

    /// A finished game, to the live feed.
    pub fn announce_game(&self, row: &GameRow) {
        self.feed.announce_game(row);
        self.note_played_out();
    }

    /// Says once, in the log, that the ladder has played its `max_games`:
    /// it starts no other game, which nothing else shows.
    pub fn note_played_out(&self) {
        let Some(max) = self.settings.max_games else {
            return;
        };
        if self.games_done() as u64 >= max && !self.played_out.swap(true, Ordering::SeqCst) {
            tracing::warn!(
                "the ladder has played its max_games ({max}): it starts no other game (raise max_games in the ladder file, or remove it, and restart to play on)"
            );
        }
    }

    /// The last complete fit, if there was one.
    pub fn last_fit(&self) -> Option<Arc<Fit>> {
        self.fits.last()
    }

    /// Games finished so far.
    pub fn games_done(&self) -> usize {
        self.finished().games()
    }

    /// The finished games, to read.
    pub fn finished(&self) -> std::sync::RwLockReadGuard<'_, Finished> {
        self.finished.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The finished games, read again whole (`all`): a new generation,
    /// which the standings refit at once.
    pub fn replace_finished(&self, mut all: Finished) {
        let mut f = self.finished.write().unwrap_or_else(|p| p.into_inner());
        all.generation = f.generation + 1;
        *f = all;
    }

    /// A game finished (its row is in the store).
    pub fn finished_now(&self, row: &GameRow) {
        self.finished
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .add(row);
    }
}

/// The roster changed: the player's epoch ends (`flag`), the scheduler
/// rereads the roster before its next pick, and the waiting parts wake.
pub fn roster_changed(flag: &AtomicBool, sched: &Scheduler, wake: &Wake) {
    flag.store(true, Ordering::SeqCst);
    sched.roster_changed();
    wake.wake_all();
}
