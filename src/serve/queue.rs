//! The ladder's queue of games (issue 31, docs/ladder.md "Workers"): the
//! server's scheduler keeps a few `pending` games in the store, chosen by
//! the pairing rule ([`super::pairing`]): one per slot that plays (the
//! server's own games in flight plus the `-j` of every worker heard from
//! lately). The server's own games ([`super::play::LadderPairings`]) and
//! the workers (`POST /api/worker/claim`) both claim from it. Each refill
//! first expires the leases past their time (their games go back to the
//! queue) and drops the pending games of versions that left the ladder.

use super::db::{unix_now, DbError};
use super::pairing::{self, Entrant, LadderVariant, PairingConfig, Pick};
use super::play::Played;
use super::state::Ladder;
use crate::results::GameRow;
use rand::SeedableRng;
use std::collections::HashMap;
use std::sync::atomic::Ordering;

/// The scheduler's state: what each version has played, and the pairing
/// rule's random numbers.
pub struct Scheduler {
    /// By ladder name (`BOT@N`), from the finished games.
    pub played: std::sync::Mutex<HashMap<String, Played>>,
    /// Held while a refill runs (one refill at a time).
    rng: tokio::sync::Mutex<rand_chacha::ChaCha8Rng>,
}

impl Scheduler {
    /// A scheduler seeded from the ladder's seed and the games done, with
    /// the counts of `rows`.
    pub fn new(seed: u64, rows: &[GameRow], variants: &[(String, usize)]) -> Scheduler {
        let mut played = HashMap::new();
        for r in rows {
            count_row(variants, &mut played, r);
        }
        let seed = crate::league::schedule::group_seed(seed, &format!("epoch:{}", rows.len()));
        Scheduler {
            played: std::sync::Mutex::new(played),
            rng: tokio::sync::Mutex::new(rand_chacha::ChaCha8Rng::seed_from_u64(seed)),
        }
    }
}

/// The ladder's variants as (key, players), to count rows by.
pub fn variant_keys(l: &crate::league::config::Tournament) -> Vec<(String, usize)> {
    l.variants
        .iter()
        .map(|v| (v.variant.to_string(), v.players))
        .collect()
}

/// Counts `row` in `played`: a game, a seat and a variant per seat.
pub fn count_row(
    variants: &[(String, usize)],
    played: &mut HashMap<String, Played>,
    row: &GameRow,
) {
    let variant = variants
        .iter()
        .position(|(v, p)| *v == row.variant && *p == row.players as usize);
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

/// A finished game (the server's or a worker's) counts for the pairing
/// rule.
pub fn note_finished(l: &Ladder, row: &GameRow) {
    let mut played = l
        .workers
        .sched
        .played
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    count_row(&l.workers.variants, &mut played, row);
}

/// Tops the queue up: expires the leases past their time, drops pending
/// games of versions no longer entered, then adds the pairing rule's
/// picks until there is one pending game per slot.
pub async fn refill(l: &Ladder) -> Result<(), DbError> {
    let mut rng = l.workers.sched.rng.lock().await;
    let expired = l.db.expire_leases(unix_now()).await?;
    if !expired.is_empty() {
        l.workers
            .leases_expired
            .fetch_add(expired.len() as u64, Ordering::Relaxed);
        tracing::warn!(
            "leases expired, back in the queue: {}",
            expired
                .iter()
                .map(|g| super::play::game_id(*g))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let roster = l.db.versions(Some("entered")).await?;
    let ids: Vec<i64> = roster.iter().map(|v| v.id).collect();
    let (mut queued, mut pending) = l.db.queued_games().await?;
    if l.db.drop_stale_pending(&queued, &ids).await? > 0 {
        (queued, pending) = l.db.queued_games().await?;
    }
    let recent = unix_now() - 2 * l.workers.lease_seconds;
    let (jobs, _) = l.db.worker_capacity(recent).await?;
    let target = l.settings.games_in_flight + jobs.max(0) as usize;
    if pending >= target {
        return Ok(());
    }
    let mut in_flight: Vec<Pick> = queued
        .iter()
        .map(|t| Pick {
            variant: t.variant,
            seats: t.seats.iter().map(|&s| s as u64).collect(),
        })
        .collect();
    let entrants = entrants(l, &roster);
    let variants: Vec<LadderVariant> =
        l.t.variants
            .iter()
            .map(|v| LadderVariant { players: v.players })
            .collect();
    let config = PairingConfig {
        random_share: l.settings.random_share,
        placement_width: l.settings.placement_width,
        placement_games: l.settings.placement_games,
        ..PairingConfig::default()
    };
    for _ in pending..target {
        let Some(pick) = pairing::pick(&entrants, &variants, &config, &in_flight, &mut *rng) else {
            break;
        };
        let seats: Vec<i64> = pick.seats.iter().map(|&s| s as i64).collect();
        l.db.add_pending(pick.variant, &seats).await?;
        in_flight.push(pick);
    }
    Ok(())
}

/// The roster as the pairing rule sees it: ratings of the last fit, and
/// what each has played.
fn entrants(l: &Ladder, roster: &[super::db::Version]) -> Vec<Entrant> {
    let fit = l.last_fit();
    let played = l
        .workers
        .sched
        .played
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    roster
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
        .collect()
}
