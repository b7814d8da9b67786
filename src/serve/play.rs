//! The ladder's games, played for ever through the league's own pipeline
//! ([`crate::league::runner::play_all`]) and sandbox: in epochs, one per
//! roster of entered versions. Each epoch's [`LadderPairings`] claims the
//! server's own games from the queue ([`super::queue`]) that the workers
//! claim from too: first the games a crash cut off (same seats, same
//! seed), then the pairing rule's picks ([`super::pairing`]); it ends when
//! the roster changes, and the next epoch starts with the new one. [`DbStore`] is the
//! runner's `Store`: each finished game goes into the database in one
//! transaction, and only then counts.

use super::intake::spec_of;
use super::ladder::Ladder;
use super::store::{DbError, GameTicket, Version, VersionStatus};
use crate::league::config::BotSpec;
use crate::league::folder::{DoneSet, Layout};
use crate::league::pairings::Pairings;
use crate::league::runner::{play_all, Event, RunOptions, Stop};
use crate::league::schedule::ScheduledGame;
use crate::results::records::Frame;
use crate::results::stderr::SeatStderr;
use crate::results::store::Store;
use crate::results::GameRow;
use crate::wire::worker::{ladder_id, scheduled_as};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Plays until the service stops: one epoch per roster of entered
/// versions; waits while fewer than two are entered, or while the server
/// plays no games itself (`--local-games 0`: only workers play).
pub fn play_forever(ladder: Arc<Ladder>) {
    let layout = Layout::new(ladder.t.output.clone());
    let mut failed_builds = std::collections::HashSet::new();
    while !ladder.is_stopping() {
        ladder.roster_changed.store(false, Ordering::SeqCst);
        let roster = match ladder.query(ladder.db.versions(Some(VersionStatus::Entered))) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!("cannot read the roster: {e}");
                ladder.wait(Duration::from_secs(5));
                continue;
            }
        };
        let (roster, specs) = startable(roster);
        rebuild_missing(&ladder.t, &specs, &mut failed_builds);
        let playable = ladder.t.variants.iter().any(|v| v.players <= roster.len());
        if !playable || ladder.settings.games_in_flight == 0 {
            ladder.wait(Duration::from_secs(5));
            continue;
        }
        let mut t = ladder.t.clone();
        t.bots = specs;
        t.concurrency = ladder.settings.games_in_flight;
        let pairings = LadderPairings {
            ladder: ladder.clone(),
            roster: roster.clone(),
        };
        let mut store = DbStore {
            ladder: ladder.clone(),
            done: DoneSet::default(),
            stderr: None,
        };
        let opts = RunOptions::default();
        let mut on_event = |e: &Event| on_event(&ladder, e);
        let before = ladder.games_done();
        let played = play_all(
            &t,
            &opts,
            pairings,
            usize::MAX,
            &mut store,
            &layout,
            &mut on_event,
        );
        // None of the server's games is in flight now, whether or not each
        // was counted out (a game that could not be recorded was not).
        ladder.metrics.games_in_flight.store(0, Ordering::Relaxed);
        match played {
            Ok(p) if p.interrupted => ladder.stop(),
            Ok(p) => {
                if let Some(Stop::Failed(why)) = &p.stop {
                    tracing::error!("the ladder's games stopped: {why}; starting again in 5 s");
                    ladder.wait(Duration::from_secs(5));
                    requeue_unrecorded(&ladder);
                } else if ladder.games_done() == before
                    && !ladder.roster_changed.load(Ordering::SeqCst)
                {
                    // Nothing to claim (the workers hold every game the
                    // pairing rule offers): a moment before trying again.
                    ladder.wait(Duration::from_millis(500));
                }
            }
            Err(e) => {
                tracing::error!("the ladder's games cannot run: {e}; trying again in 5 s");
                ladder.wait(Duration::from_secs(5));
            }
        }
    }
}

/// After the server's games stopped on a failure (a full disk): the games
/// it was playing then, never recorded, go back to the queue, first, as a
/// restart sends them (they stayed `playing`, taking their places in
/// flight, until one). No game of the server's is in flight here.
fn requeue_unrecorded(ladder: &Ladder) {
    match ladder.query(ladder.sched.requeue_unrecorded()) {
        Ok(0) => {}
        Ok(n) => {
            ladder
                .metrics
                .games_replayed
                .fetch_add(n, Ordering::Relaxed);
            tracing::warn!("{n} games that could not be recorded go back to the queue");
        }
        Err(e) => {
            tracing::error!("the games that could not be recorded stay in flight for now: {e}")
        }
    }
}

/// Builds again each entered version (of `specs`) whose built copy is
/// gone (removed by hand, by a cleaner of caches, by a copy of this
/// ladder's store served elsewhere without its `bots/`), rather than
/// start it from its unbuilt folder to crash game after game. Each time
/// its copy is found gone, at the start of an epoch; but a version whose
/// build failed again (`failed`) is not tried again in this server's
/// life: it is logged, and its games then go as they would.
fn rebuild_missing(
    t: &crate::league::config::Tournament,
    specs: &[BotSpec],
    failed: &mut std::collections::HashSet<String>,
) {
    let room = crate::league::launch::Room::of(t);
    for spec in specs {
        if spec.build.is_none()
            || spec.cwd.is_none()
            || crate::league::launch::built_copy(spec).is_some()
            || failed.contains(&spec.name)
        {
            continue;
        }
        tracing::warn!("{}: its built copy is gone: built again", spec.name);
        let built = crate::league::build::build_own(spec, &room, None, &mut |_| {});
        if let Err(e) = &built {
            tracing::error!("{}: cannot be built again: {e}", spec.name);
        }
        if built.is_err() || crate::league::launch::built_copy(spec).is_none() {
            failed.insert(spec.name.clone());
        }
    }
}

/// The entered versions whose bot.toml still reads, with their specs;
/// the others are logged and left out.
fn startable(roster: Vec<Version>) -> (Vec<Version>, Vec<BotSpec>) {
    let mut keep = Vec::new();
    let mut specs = Vec::new();
    for v in roster {
        match spec_of(&v) {
            Ok(s) => {
                specs.push(s);
                keep.push(v);
            }
            Err(e) => tracing::error!("{} cannot start: {e}", v.player()),
        }
    }
    (keep, specs)
}

/// Reports the runner's events: finished games to the feed and the
/// counters, the rest to the log.
fn on_event(ladder: &Ladder, e: &Event) {
    match e {
        Event::Finished { row, .. } => {
            ladder.metrics.games_played.fetch_add(1, Ordering::Relaxed);
            if row.offender.is_some() {
                let mut f = ladder
                    .metrics
                    .faults
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                *f.entry(row.reason.clone()).or_default() += 1;
            }
            ladder.announce_game(row);
        }
        Event::Warning(w) => tracing::warn!("{w}"),
        Event::BotStarted {
            bot,
            worker,
            restart: true,
        } => tracing::info!("{bot} restarted on worker {worker}"),
        _ => {}
    }
}

/// The ladder's source of games for one epoch (one roster): the server's
/// own claims from the queue ([`super::queue`]), cut-off games first.
pub struct LadderPairings {
    ladder: Arc<Ladder>,
    /// The epoch's versions; a game's seats index into it.
    roster: Vec<Version>,
}

impl LadderPairings {
    /// The roster index of version `id`.
    fn seat_of(&self, id: i64) -> Option<usize> {
        self.roster.iter().position(|v| v.id == id)
    }

    /// Drops claimed game `id`, which can no longer be played (a version
    /// of it left the ladder).
    fn drop_ticket(&self, id: i64) {
        self.ladder.sched.forget_queue();
        if let Err(e) = self.ladder.query(self.ladder.db.drop_game(id)) {
            tracing::error!("cannot drop game {id}: {e}");
        }
    }

    /// Claims one game from the queue (topped up first), if there is one.
    fn claim(&self) -> Result<Option<GameTicket>, DbError> {
        let variants = self.ladder.t.variants.len();
        let mut c = self
            .ladder
            .query(self.ladder.sched.claim(None, 1, &|v| v < variants))?;
        Ok(c.pop().map(|c| c.ticket))
    }
}

impl Pairings for LadderPairings {
    fn next(&self) -> Option<ScheduledGame> {
        let mut empty = 0;
        loop {
            if self.ladder.is_stopping() || self.ladder.roster_changed.load(Ordering::SeqCst) {
                return None;
            }
            let ticket = match self.claim() {
                Ok(Some(t)) => t,
                // The maintenance rate allows no game now: the slot waits
                // for it (woken at once when the roster changes).
                Ok(None) if self.ladder.sched.resting() => {
                    self.ladder.wait(self.ladder.sched.rest());
                    continue;
                }
                // The workers hold every game for now: a moment, a few
                // times, before this thread of the epoch gives up.
                Ok(None) if empty < 10 => {
                    empty += 1;
                    self.ladder.wait(Duration::from_millis(200));
                    continue;
                }
                Ok(None) => return None,
                Err(e) => {
                    // While the store refuses writes, its note said so
                    // once (and /health says so): not again at each claim.
                    match self.ladder.store_fault() {
                        None => tracing::error!("cannot claim a game: {e}"),
                        Some(_) => tracing::debug!("cannot claim a game: {e}"),
                    }
                    return None;
                }
            };
            let seats: Option<Vec<usize>> =
                ticket.seats.iter().map(|&id| self.seat_of(id)).collect();
            let fits = self
                .ladder
                .t
                .variants
                .get(ticket.variant)
                .is_some_and(|v| v.players == ticket.seats.len());
            // A version whose stored folder is gone (removed by hand)
            // cannot start: the organiser's fault, not a crash to charge
            // its bot with game after game. It leaves the ladder, said so
            // on its page, and its games with it.
            if let Some(v) = seats
                .iter()
                .flatten()
                .map(|&i| &self.roster[i])
                .find(|v| !std::path::Path::new(&v.folder).is_dir())
            {
                let detail =
                    "its stored folder is gone from the server (removed by hand?): upload it again";
                tracing::error!("{} leaves the ladder: {detail} ({})", v.player(), v.folder);
                if let Err(e) = self.ladder.query(self.ladder.db.set_status(
                    v.id,
                    VersionStatus::Refused,
                    detail,
                    None,
                )) {
                    tracing::error!("cannot set {} aside: {e}", v.player());
                }
                self.ladder.roster_changed_now();
                self.drop_ticket(ticket.id);
                continue;
            }
            match seats {
                Some(seats) if fits => {
                    self.ladder
                        .metrics
                        .games_in_flight
                        .fetch_add(1, Ordering::Relaxed);
                    return Some(scheduled_as(
                        self.ladder.t.seed,
                        ticket.id,
                        ticket.opening,
                        ticket.variant,
                        seats,
                    ));
                }
                // A version of it left the ladder: it can no longer be
                // played.
                _ => self.drop_ticket(ticket.id),
            }
        }
    }

    fn finished(&self, _index: usize, row: &GameRow) -> Option<String> {
        self.ladder
            .metrics
            .games_in_flight
            .fetch_sub(1, Ordering::Relaxed);
        self.ladder.sched.note_finished(row);
        None
    }

    fn total(&self) -> usize {
        usize::MAX
    }
}

/// The runner's store for the ladder: the database.
pub struct DbStore {
    ladder: Arc<Ladder>,
    done: DoneSet,
    /// The stderr offered for the next commit, by its game's index.
    stderr: Option<(usize, Vec<SeatStderr>)>,
}

impl Store for DbStore {
    type Error = DbError;

    /// One transaction: the row (as JSON) and the compressed record; then
    /// the row joins those in memory.
    fn commit(&mut self, record: &Frame, row: &mut GameRow, index: usize) -> Result<(), DbError> {
        let json = serde_json::to_string(&*row)
            .map_err(|e| DbError::Conflict(format!("a row that is not JSON: {e}")))?;
        let id = index as i64;
        let fresh = self
            .ladder
            .query(self.ladder.db.finish_game(id, &json, record.bytes()))?;
        if !fresh {
            return Err(DbError::Conflict(format!(
                "game {id} was not being played: it is done already or was dropped"
            )));
        }
        self.ladder.finished_now(row);
        self.done.insert(index);
        if let Some((_, seats)) = self.stderr.take().filter(|(i, _)| *i == index) {
            // The game counts already: stderr that cannot be kept is
            // said in the log, and the games go on.
            if let Err(e) = self.ladder.query(self.ladder.db.keep_stderr(id, &seats)) {
                tracing::error!("the stderr of game {id} cannot be kept: {e}");
            }
        }
        Ok(())
    }

    fn offer_stderr(&mut self, index: usize, stderr: Vec<SeatStderr>) {
        self.stderr = Some((index, stderr));
    }

    /// Each commit is durable when it returns (SQLite's WAL).
    fn sync(&mut self) -> Result<(), DbError> {
        Ok(())
    }

    fn done(&self) -> &DoneSet {
        &self.done
    }

    fn record(&self, game_id: &str) -> Result<String, DbError> {
        let id = ladder_id(game_id)
            .ok_or_else(|| DbError::Conflict(format!("`{game_id}` is not a ladder game")))?;
        let frame = self
            .ladder
            .query(self.ladder.db.record(id))?
            .ok_or_else(|| DbError::Conflict(format!("no record of game {id}")))?;
        let bytes = crate::results::records::decode(&frame)
            .map_err(|e| DbError::Conflict(format!("the record of game {id}: {e}")))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
