//! What a worker holds and has done: the leases of its games in hand and
//! on their way ([`Hand`]), and its counts for the console ([`Tally`]).

use crate::wire::worker::LeasedGame;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, OnceLock};

/// The leases a worker holds, by ladder id: the games claimed and not
/// finished (`playing`: in the queue or being played), and those finished
/// and not yet answered by the server (`sending`). The heartbeat renews
/// both; a worker that stops gives back the first.
#[derive(Default)]
pub(super) struct Hand {
    playing: Mutex<BTreeMap<usize, (String, String)>>,
    sending: Mutex<BTreeMap<usize, String>>,
}

impl Hand {
    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Games claimed.
    pub fn claimed(&self, games: &[LeasedGame]) {
        let mut playing = Self::lock(&self.playing);
        for g in games {
            playing.insert(g.id as usize, (g.game_id.clone(), g.lease.clone()));
        }
    }

    /// Game `index` finished: its game id and lease, now being sent.
    pub fn finished(&self, index: usize) -> Option<(String, String)> {
        let (game_id, lease) = Self::lock(&self.playing).remove(&index)?;
        Self::lock(&self.sending).insert(index, lease.clone());
        Some((game_id, lease))
    }

    /// Game `index` was answered (or spooled): its lease is no longer
    /// renewed.
    pub fn sent(&self, index: usize) {
        Self::lock(&self.sending).remove(&index);
    }

    /// Games in hand: claimed and not finished.
    pub fn in_hand(&self) -> usize {
        Self::lock(&self.playing).len()
    }

    /// Games held: claimed and not finished, or finished and not yet
    /// answered.
    pub fn held(&self) -> usize {
        Self::lock(&self.playing).len() + Self::lock(&self.sending).len()
    }

    /// Every lease held.
    pub fn leases(&self) -> Vec<String> {
        let mut all: Vec<String> = Self::lock(&self.playing)
            .values()
            .map(|(_, l)| l.clone())
            .collect();
        all.extend(Self::lock(&self.sending).values().cloned());
        all
    }

    /// Takes the leases of every game claimed and not finished, with
    /// their game ids.
    pub fn take_all_playing(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *Self::lock(&self.playing))
            .into_values()
            .collect()
    }

    /// Takes the leases of games `ids` if claimed and not finished, with
    /// their game ids.
    pub fn take_playing(&self, ids: &[usize]) -> Vec<(String, String)> {
        let mut playing = Self::lock(&self.playing);
        ids.iter().filter_map(|i| playing.remove(i)).collect()
    }
}

/// What the worker did, for its summary lines.
#[derive(Default)]
pub(super) struct Tally {
    pub played: AtomicU64,
    pub uploaded: AtomicU64,
    pub held: AtomicU64,
    pub refused: AtomicU64,
    pub spooled: AtomicU64,
    /// Games neither uploaded nor spooled.
    pub lost: AtomicU64,
    /// Why the first of them could not be spooled (the spool and the
    /// error): once set, the worker claims no more games.
    pub spool_failure: OnceLock<String>,
    /// The last claim failed (the server out of reach): the next
    /// failures of the spell are not said again.
    pub claims_failing: std::sync::atomic::AtomicBool,
    /// Milliseconds to add to this machine's clock to read the server's
    /// (0 within a second): the games' `started_at` are sent so.
    pub clock_offset_ms: std::sync::atomic::AtomicI64,
}

impl Tally {
    /// Whether a game could not be spooled.
    pub fn spool_failed(&self) -> bool {
        self.spool_failure.get().is_some()
    }
}
