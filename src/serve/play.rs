//! The ladder's games, played for ever through the league's own pipeline
//! ([`crate::league::runner::play_all`]) and sandbox: in epochs, one per
//! roster of entered versions. Each epoch's [`LadderPairings`] hands out
//! first the games a crash cut off (same seats, same seed), then the
//! pairing rule's picks ([`super::pairing`]); it ends when the roster
//! changes, and the next epoch starts with the new one. [`DbStore`] is the
//! runner's `Store`: each finished game goes into the database in one
//! transaction, and only then counts.

use super::db::{DbError, GameTicket, Version};
use super::pairing::{self, Entrant, LadderVariant, PairingConfig, Pick};
use super::state::Ladder;
use crate::league::config::BotSpec;
use crate::league::folder::{DoneSet, Layout};
use crate::league::pairings::Pairings;
use crate::league::runner::{play_all, Event, RunOptions, Stop};
use crate::league::schedule::{group_seed, ScheduledGame};
use crate::results::records::Frame;
use crate::results::store::Store;
use crate::results::GameRow;
use rand::SeedableRng;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What one version has played, for the pairing rule.
#[derive(Clone, Debug, Default)]
pub struct Played {
    pub games: u64,
    pub seats: Vec<u64>,
    pub variants: Vec<u64>,
}

/// The game id of ladder game `id` in rows and records.
pub fn game_id(id: i64) -> String {
    format!("game-{id}")
}

/// The ladder game id of a row's `game_id`.
pub fn ladder_id(game_id: &str) -> Option<i64> {
    game_id.strip_prefix("game-")?.parse().ok()
}

/// The bot of an entered version, as the runner starts it: its bot.toml
/// in its folder, under its ladder name (`BOT@N`).
pub fn spec_of(v: &Version) -> Result<BotSpec, crate::bot::manifest::ManifestError> {
    let m = crate::bot::manifest::Manifest::load(std::path::Path::new(&v.folder))?;
    let mut spec = BotSpec::from_manifest(m);
    spec.name = v.player();
    Ok(spec)
}

/// Plays until the service stops: one epoch per roster of entered
/// versions; waits while fewer than two are entered.
pub fn play_forever(ladder: Arc<Ladder>) {
    let layout = Layout::new(ladder.t.output.clone());
    let mut played: HashMap<String, Played> = counts(&ladder);
    while !ladder.is_stopping() {
        ladder.roster_changed.store(false, Ordering::SeqCst);
        let roster = match ladder.query(ladder.db.versions(Some("entered"))) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!("cannot read the roster: {e}");
                ladder.wait(Duration::from_secs(5));
                continue;
            }
        };
        let (roster, specs) = startable(roster);
        let playable = ladder.t.variants.iter().any(|v| v.players <= roster.len());
        if !playable || ladder.settings.games_in_flight == 0 {
            ladder.wait(Duration::from_secs(5));
            continue;
        }
        let unfinished = match ladder.query(ladder.db.unfinished_games()) {
            Ok(u) => u,
            Err(e) => {
                tracing::error!("cannot read the unfinished games: {e}");
                Vec::new()
            }
        };
        let mut t = ladder.t.clone();
        t.bots = specs;
        t.concurrency = ladder.settings.games_in_flight;
        let pairings = LadderPairings::new(ladder.clone(), &roster, unfinished, &played);
        let shared = pairings.played.clone();
        let mut store = DbStore {
            ladder: ladder.clone(),
            done: DoneSet::default(),
        };
        let opts = RunOptions::default();
        let mut on_event = |e: &Event| on_event(&ladder, e);
        match play_all(
            &t,
            &opts,
            pairings,
            usize::MAX,
            &mut store,
            &layout,
            &mut on_event,
        ) {
            Ok(p) if p.interrupted => ladder.stop(),
            Ok(p) => {
                if let Some(Stop::Failed(why)) = &p.stop {
                    tracing::error!("the ladder's games stopped: {why}; starting again in 5 s");
                    ladder.wait(Duration::from_secs(5));
                }
            }
            Err(e) => {
                tracing::error!("the ladder's games cannot run: {e}; trying again in 5 s");
                ladder.wait(Duration::from_secs(5));
            }
        }
        played = shared.lock().unwrap_or_else(|p| p.into_inner()).clone();
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

/// What each version has played so far, from the finished games' rows.
fn counts(ladder: &Ladder) -> HashMap<String, Played> {
    let mut out: HashMap<String, Played> = HashMap::new();
    let rows = ladder.rows.read().unwrap_or_else(|p| p.into_inner());
    for row in rows.iter() {
        count_row(ladder, &mut out, row);
    }
    out
}

/// Counts `row` in `played`: a game, a seat and a variant per seat.
fn count_row(ladder: &Ladder, played: &mut HashMap<String, Played>, row: &GameRow) {
    let variant =
        ladder.t.variants.iter().position(|v| {
            v.variant.to_string() == row.variant && v.players == row.players as usize
        });
    for (seat, name) in row.seats().into_iter().enumerate() {
        let p = played.entry(name.to_string()).or_default();
        p.games += 1;
        if p.seats.len() <= seat {
            p.seats.resize(seat + 1, 0);
        }
        p.seats[seat] += 1;
        if let Some(v) = variant {
            if p.variants.len() <= v {
                p.variants.resize(v + 1, 0);
            }
            p.variants[v] += 1;
        }
    }
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
            ladder.announce(serde_json::json!({"type": "game", "row": row}));
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

/// The ladder's source of games for one epoch (one roster).
pub struct LadderPairings {
    ladder: Arc<Ladder>,
    /// The epoch's versions; a game's seats index into it.
    roster: Vec<Version>,
    /// Games cut off by a crash, to play first.
    unfinished: Mutex<VecDeque<GameTicket>>,
    /// What each version (by ladder name) has played.
    played: Arc<Mutex<HashMap<String, Played>>>,
    /// Games handed out and not finished, by id.
    in_flight: Mutex<HashMap<i64, Pick>>,
    rng: Mutex<rand_chacha::ChaCha8Rng>,
}

impl LadderPairings {
    fn new(
        ladder: Arc<Ladder>,
        roster: &[Version],
        unfinished: Vec<GameTicket>,
        played: &HashMap<String, Played>,
    ) -> LadderPairings {
        let seed = group_seed(ladder.t.seed, &format!("epoch:{}", ladder.games_done()));
        LadderPairings {
            ladder,
            roster: roster.to_vec(),
            unfinished: Mutex::new(unfinished.into()),
            played: Arc::new(Mutex::new(played.clone())),
            in_flight: Mutex::new(HashMap::new()),
            rng: Mutex::new(rand_chacha::ChaCha8Rng::seed_from_u64(seed)),
        }
    }

    /// The roster index of version `id`.
    fn seat_of(&self, id: i64) -> Option<usize> {
        self.roster.iter().position(|v| v.id == id)
    }

    /// The next game cut off by a crash whose versions are all in the
    /// roster; the others can no longer be played and are dropped.
    fn next_unfinished(&self) -> Option<ScheduledGame> {
        let mut q = self.unfinished.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(ticket) = q.pop_front() {
            let seats: Option<Vec<usize>> =
                ticket.seats.iter().map(|&id| self.seat_of(id)).collect();
            let fits = self
                .ladder
                .t
                .variants
                .get(ticket.variant)
                .is_some_and(|v| v.players == ticket.seats.len());
            match seats {
                Some(seats) if fits => {
                    self.ladder
                        .metrics
                        .games_replayed
                        .fetch_add(1, Ordering::Relaxed);
                    self.note_in_flight(&ticket);
                    return Some(self.scheduled(ticket.id, ticket.variant, seats));
                }
                _ => {
                    if let Err(e) = self.ladder.query(self.ladder.db.drop_game(ticket.id)) {
                        tracing::error!("cannot drop game {}: {e}", ticket.id);
                    }
                }
            }
        }
        None
    }

    fn note_in_flight(&self, t: &GameTicket) {
        let pick = Pick {
            variant: t.variant,
            seats: t.seats.iter().map(|&s| s as u64).collect(),
        };
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(t.id, pick);
        self.ladder
            .metrics
            .games_in_flight
            .fetch_add(1, Ordering::Relaxed);
    }

    /// The pairing rule's next pick, from the last fit and the counts.
    fn pick(&self) -> Option<Pick> {
        let fit = self.ladder.last_fit();
        let played = self.played.lock().unwrap_or_else(|p| p.into_inner());
        let entrants: Vec<Entrant> = self
            .roster
            .iter()
            .map(|v| {
                let name = v.player();
                let p = played.get(&name).cloned().unwrap_or_default();
                let listed = fit.as_ref().and_then(|f| f.report.overall.get(&name));
                let rating = listed.filter(|r| r.rated);
                Entrant {
                    id: v.id as u64,
                    elo: rating.map(|r| r.elo),
                    half_width: rating.map(|r| (r.elo_high - r.elo_low) / 2.0),
                    games: p.games,
                    fit_games: listed.map_or(0, |r| r.count.games),
                    seat_counts: p.seats,
                    variant_games: p.variants,
                }
            })
            .collect();
        drop(played);
        let variants: Vec<LadderVariant> = self
            .ladder
            .t
            .variants
            .iter()
            .map(|v| LadderVariant { players: v.players })
            .collect();
        let config = PairingConfig {
            random_share: self.ladder.settings.random_share,
            placement_width: self.ladder.settings.placement_width,
            placement_games: self.ladder.settings.placement_games,
            ..PairingConfig::default()
        };
        let in_flight: Vec<Pick> = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
        pairing::pick(&entrants, &variants, &config, &in_flight, &mut *rng)
    }

    /// Game `id` as the runner takes it.
    fn scheduled(&self, id: i64, variant: usize, seats: Vec<usize>) -> ScheduledGame {
        let game_id = game_id(id);
        ScheduledGame {
            index: id as usize,
            group: game_id.clone(),
            group_index: 0,
            round: 0,
            variant,
            seats,
            seed: group_seed(self.ladder.t.seed, &game_id),
            variant_group: id as usize,
            game_id,
        }
    }
}

impl Pairings for LadderPairings {
    fn next(&self) -> Option<ScheduledGame> {
        if self.ladder.is_stopping() || self.ladder.roster_changed.load(Ordering::SeqCst) {
            return None;
        }
        if let Some(g) = self.next_unfinished() {
            return Some(g);
        }
        let pick = self.pick()?;
        let seats: Vec<i64> = pick.seats.iter().map(|&s| s as i64).collect();
        let id = match self
            .ladder
            .query(self.ladder.db.start_game(pick.variant, &seats))
        {
            Ok(id) => id,
            Err(e) => {
                tracing::error!("cannot record a new game: {e}");
                return None;
            }
        };
        let ticket = GameTicket {
            id,
            variant: pick.variant,
            seats: seats.clone(),
        };
        self.note_in_flight(&ticket);
        let seats = seats.iter().filter_map(|&s| self.seat_of(s)).collect();
        Some(self.scheduled(id, pick.variant, seats))
    }

    fn finished(&self, index: usize, row: &GameRow) -> Option<String> {
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(index as i64));
        self.ladder
            .metrics
            .games_in_flight
            .fetch_sub(1, Ordering::Relaxed);
        let mut played = self.played.lock().unwrap_or_else(|p| p.into_inner());
        count_row(&self.ladder, &mut played, row);
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
        self.ladder
            .rows
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(row.clone());
        self.done.insert(index);
        Ok(())
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
