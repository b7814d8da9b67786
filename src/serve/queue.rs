//! The ladder's queue of games (issue 31, docs/ladder.md "Workers"): the
//! server's scheduler keeps a few `pending` games in the store, chosen by
//! the pairing rule ([`super::pairing`]): one per slot that plays (the
//! server's own games in flight plus the `-j` of every worker heard from
//! lately). The server's own games ([`super::play::LadderPairings`]) and
//! the workers (`POST /api/worker/claim`) both claim from it, through
//! [`claim`]: the top-up and the claim are one transaction. At most once a
//! second, or when the roster changed, the claim first does the queue's
//! housekeeping: it expires the leases past their time (their games go
//! back to the queue), drops the pending games of versions that left the
//! ladder, and rereads the roster and the workers' capacity. (Doing that
//! before every claim cost eight statements per game where two do.)

use super::db::{unix_now, DbError};
use super::leases::Claimed;
use super::pairing::{self, Entrant, LadderVariant, PairingConfig, Pick};
use super::play::Played;
use super::state::Ladder;
use crate::results::GameRow;
use rand::SeedableRng;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The scheduler's state: what each version has played, and the pairing
/// rule's random numbers.
pub struct Scheduler {
    /// By ladder name (`BOT@N`), from the finished games.
    pub played: std::sync::Mutex<HashMap<String, Played>>,
    /// Held while a claim tops the queue up (one at a time).
    queue: tokio::sync::Mutex<Queue>,
    /// Raised by [`Scheduler::roster_changed`]: the next claim rereads the
    /// roster first.
    stale: std::sync::atomic::AtomicBool,
    /// The queue as the server alone last left it.
    mirror: std::sync::Mutex<Mirror>,
}

/// The games pending or being played, as the last read of the store and
/// the server's own changes since leave them: while the server is alone
/// it is the only one to change the queue, so its claims need not read
/// the store before each pick. Any other change (a worker's claim, a
/// dropped game, the housekeeping) forgets it, and the next claim reads
/// the store again. A game finished elsewhere that it missed only biases
/// the pairing rule's picks (it counts as in flight) until then.
#[derive(Default)]
struct Mirror {
    /// The games and how many are pending, when known.
    queued: Option<(Vec<super::db::GameTicket>, usize)>,
}

/// What the top-up needs between two housekeepings.
struct Queue {
    /// The pairing rule's random numbers.
    rng: rand_chacha::ChaCha8Rng,
    /// The entered versions at the last housekeeping.
    roster: Vec<super::db::Version>,
    /// Pending games to keep: one per slot that plays.
    target: usize,
    /// When the last housekeeping ran.
    kept: Option<Instant>,
    /// Games the server alone started in one statement with the one it
    /// took, for its next claims (they are `playing` in the store: a
    /// crash before they are played replays them).
    ready: std::collections::VecDeque<super::db::GameTicket>,
}

/// The most games one claim adds to the queue.
const TOP_UP_MOST: usize = 256;

/// How often a claim does the queue's housekeeping.
const HOUSEKEEPING: Duration = Duration::from_secs(1);

impl Scheduler {
    /// A scheduler seeded from the ladder's seed and the number of games
    /// done, with what each version has `played` ([`count_row`]).
    pub fn new(seed: u64, games: usize, played: HashMap<String, Played>) -> Scheduler {
        let seed = crate::league::schedule::group_seed(seed, &format!("epoch:{games}"));
        Scheduler {
            played: std::sync::Mutex::new(played),
            queue: tokio::sync::Mutex::new(Queue {
                rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
                roster: Vec::new(),
                target: 0,
                kept: None,
                ready: std::collections::VecDeque::new(),
            }),
            stale: std::sync::atomic::AtomicBool::new(true),
            mirror: std::sync::Mutex::new(Mirror::default()),
        }
    }

    /// A version was entered or left: the next claim rereads the roster
    /// (and drops the pending games of one that left) before it tops up.
    pub fn roster_changed(&self) {
        self.stale.store(true, Ordering::SeqCst);
    }

    fn mirror(&self) -> std::sync::MutexGuard<'_, Mirror> {
        self.mirror.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets the queue as the server last left it: the next claim
    /// reads the store.
    pub fn forget_queue(&self) {
        self.mirror().queued = None;
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
    if let (Some((queued, _)), Some(id)) = (
        &mut l.workers.sched.mirror().queued,
        super::play::ladder_id(&row.game_id),
    ) {
        queued.retain(|t| t.id != id);
    }
    let mut played = l
        .workers
        .sched
        .played
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    count_row(&l.workers.variants, &mut played, row);
}

/// Claims up to `max` pending games of the variants `can_play` accepts,
/// for the server itself (`worker` is `None`) or for a worker under
/// leases ([`super::db::Db::claim_games`]), after topping the queue up with the
/// pairing rule's picks until there is one pending game per slot: the
/// picks are added in the claim's own transaction. The server alone (no
/// worker heard from lately, no `max_games`) with an empty queue starts
/// one pick per game in flight straight, `playing`, in one statement,
/// takes the first and keeps the others for its next claims.
pub async fn claim(
    l: &Ladder,
    worker: Option<(i64, i64)>,
    max: usize,
    can_play: &(dyn Fn(usize) -> bool + Sync),
) -> Result<Vec<Claimed>, DbError> {
    let mut q = l.workers.sched.queue.lock().await;
    if worker.is_none() {
        if let Some(t) = q.ready.iter().position(|t| can_play(t.variant)) {
            return Ok(q.ready.remove(t).map(claimed).into_iter().collect());
        }
    }
    let due = q.kept.is_none_or(|t| t.elapsed() >= HOUSEKEEPING);
    if due || l.workers.sched.stale.swap(false, Ordering::SeqCst) {
        housekeeping(l, &mut q).await?;
    }
    let known = l.workers.sched.mirror().queued.clone();
    let (queued, pending) = match known {
        Some(q) => q,
        None => {
            let q = l.db.queued_games().await?;
            l.workers.sched.mirror().queued = Some(q.clone());
            q
        }
    };
    // The server alone (no worker heard from lately, no cap) with nothing
    // queued: its picks are handed out at once, `playing`, one per game in
    // flight in one statement, instead of queue entries and a claim.
    let alone = worker.is_none()
        && pending == 0
        && q.target <= l.settings.games_in_flight
        && l.db.max_games().is_none();
    // At most a claim's worth of picks per claim: the queue fills over a
    // few claims, and no claim holds the queue's lock for long.
    let want = if alone {
        l.settings.games_in_flight.max(1)
    } else {
        q.target.saturating_sub(pending).min(TOP_UP_MOST)
    };
    let add = picks(l, &mut q, &queued, want);
    if alone {
        let add: Vec<_> = add.into_iter().filter(|(v, _)| can_play(*v)).collect();
        let started = l.db.start_games(&add).await?;
        if let Some((queued, _)) = &mut l.workers.sched.mirror().queued {
            queued.extend(started.iter().cloned());
        }
        q.ready.extend(started);
        return Ok(q.ready.pop_front().map(claimed).into_iter().collect());
    }
    l.workers.sched.forget_queue();
    l.db.claim_games(worker, max, can_play, &add).await
}

/// A game the server itself plays (no lease).
fn claimed(ticket: super::db::GameTicket) -> Claimed {
    Claimed {
        ticket,
        lease: None,
    }
}

/// Up to `n` games picked by the pairing rule, as (variant, seats), given
/// the games `queued` (pending or playing) already.
fn picks(
    l: &Ladder,
    q: &mut Queue,
    queued: &[super::db::GameTicket],
    n: usize,
) -> Vec<(usize, Vec<i64>)> {
    let mut add = Vec::new();
    if n == 0 {
        return add;
    }
    let mut in_flight: Vec<Pick> = queued
        .iter()
        .map(|t| Pick {
            variant: t.variant,
            seats: t.seats.iter().map(|&s| s as u64).collect(),
        })
        .collect();
    let entrants = entrants(l, &q.roster);
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
    for _ in 0..n {
        let Some(pick) = pairing::pick(&entrants, &variants, &config, &in_flight, &mut q.rng)
        else {
            break;
        };
        add.push((pick.variant, pick.seats.iter().map(|&s| s as i64).collect()));
        in_flight.push(pick);
    }
    add
}

/// The queue's housekeeping: expires the leases past their time, rereads
/// the roster, drops the pending games of versions no longer entered, and
/// sets the target from the server's games in flight and the `-j` of the
/// workers heard from lately.
async fn housekeeping(l: &Ladder, q: &mut Queue) -> Result<(), DbError> {
    q.kept = Some(Instant::now());
    l.workers.sched.forget_queue();
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
    q.roster = l.db.versions(Some("entered")).await?;
    let ids: Vec<i64> = q.roster.iter().map(|v| v.id).collect();
    let (queued, _) = l.db.queued_games().await?;
    l.db.drop_stale_pending(&queued, &ids).await?;
    let recent = unix_now() - 2 * l.workers.lease_seconds;
    let most = i64::from(l.settings.worker_jobs_max);
    let (jobs, _) = l.db.worker_capacity(recent, most).await?;
    q.target = l
        .settings
        .games_in_flight
        .saturating_add(usize::try_from(jobs).unwrap_or(0));
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
