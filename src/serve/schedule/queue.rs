//! The ladder's queue of games (issue 31, docs/ladder.md "Workers"): the
//! server's scheduler keeps a few `pending` games in the store, chosen by
//! the pairing rule ([`super::pairing`]): one per slot that plays (the
//! server's own games in flight plus the `-j` of every worker heard from
//! lately). The server's own games ([`crate::serve::play::LadderPairings`]) and
//! the workers (`POST /api/worker/claim`) both claim from it, through
//! [`claim`]: the top-up and the claim are one transaction. At most once a
//! second, or when the roster changed, the claim first does the queue's
//! housekeeping: it expires the leases past their time (their games go
//! back to the queue), drops the pending games of versions that left the
//! ladder, and rereads the roster and the workers' capacity. (Doing that
//! before every claim cost eight statements per game where two do.)
//!
//! The ladder's time is shared between versions by their measured time per
//! game (each version's clock, [`pairing::clock`]: the time its own moves
//! used since it joined, over its time per game), so that a slow version
//! plays at the pace of the fast ones. Once every version is placed and no
//! test between versions runs ([`super::version_test`]), the ladder plays at the
//! organiser's maintenance rate (`[ladder] maintenance_games_per_hour`)
//! instead of as fast as its slots allow. The housekeeping also prunes the
//! records past the retention (`[ladder] record_days`,
//! [`crate::serve::store::Db::prune`]).

use super::pairing::{self, Entrant, LadderVariant, PairingConfig, Pick};
use crate::league::config::ladder::LadderSettings;
use crate::league::config::Tournament;
use crate::results::GameRow;
use crate::serve::bus::Fits;
use crate::serve::store::leases::{Claimed, ExpiredLease};
use crate::serve::store::{prune, unix_now, Db, DbError, GameTicket, Version, VersionStatus};
use rand::SeedableRng;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one version has played, for the pairing rule.
#[derive(Clone, Debug, Default)]
pub struct Played {
    pub games: u64,
    pub seats: Vec<u64>,
    pub variants: Vec<u64>,
    /// Seconds its own moves took over all its games (each game counted
    /// as at least a millisecond): over `games`, its time per game.
    pub secs: f64,
}

impl Played {
    /// Its measured seconds per game (`None` before its first game).
    pub fn secs_per_game(&self) -> Option<f64> {
        (self.games > 0).then(|| self.secs / self.games as f64)
    }
}

/// The seconds seat `seat`'s bot thought in `row` (at least a millisecond:
/// an instant bot's game still costs something).
fn own_secs(row: &GameRow, seat: usize) -> f64 {
    let ms = match seat {
        0 => row.time0_ms,
        1 => row.time1_ms,
        _ => row.time2_ms,
    };
    ms.unwrap_or(0.0).max(1.0) / 1000.0
}

/// A version's place in the time share since it joined it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Share {
    /// The lowest clock when it joined.
    base: f64,
    /// Seconds its own moves took since.
    used_secs: f64,
}

/// The maintenance rate, as a bucket of games: it fills at the rate, up
/// to one game per slot, and each game started takes one.
#[derive(Clone, Debug)]
struct Bucket {
    games: f64,
    at: Instant,
}

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
    /// The store of the queue and the leases.
    db: Db,
    /// The last complete fit: the entrants' ratings.
    fits: Arc<Fits>,
    /// Pending games to keep for the server's own slots (the file's
    /// `games_in_flight`, or `--local-games`).
    games_in_flight: usize,
    /// The pairing rule's settings, from the ladder file.
    pairing: PairingConfig,
    /// The ladder's variants, as the pairing rule and the rows name them.
    variants: Vec<LadderVariant>,
    /// The ladder's variants as (key, players), to count rows by.
    pub keys: Vec<(String, usize)>,
    /// How long a worker's lease lasts without a heartbeat: a worker heard
    /// from in twice that counts in the target.
    lease_seconds: i64,
    /// The most games one worker counts for in the target (`[ladder]
    /// worker_jobs_max`), whatever it registered with.
    worker_jobs_max: u32,
    /// Leases expired (their games back in the queue).
    pub leases_expired: AtomicU64,
    /// Whether a test between versions ran at the last housekeeping: its
    /// pairs are then queued before each claim ([`super::version_test`]),
    /// and the ladder plays as fast as its slots allow, not at the
    /// maintenance rate.
    tests_running: std::sync::atomic::AtomicBool,
    /// The ladder's 2-player variants (indexes), which tests play.
    test_variants: Vec<usize>,
    /// Each entered version's place in the time share, by ladder name.
    shares: std::sync::Mutex<HashMap<String, Share>>,
    /// The maintenance rate (`[ladder] maintenance_games_per_hour`).
    maintenance_per_hour: f64,
    /// Days a finished game's record is kept (`[ladder] record_days`).
    record_days: u64,
    /// Raised while every version is placed, no test runs and the
    /// maintenance rate allows no game now: the server's slots wait.
    resting: std::sync::atomic::AtomicBool,
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
    queued: Option<(Vec<GameTicket>, usize)>,
}

/// What the top-up needs between two housekeepings.
struct Queue {
    /// The pairing rule's random numbers.
    rng: rand_chacha::ChaCha8Rng,
    /// The entered versions at the last housekeeping.
    roster: Vec<Version>,
    /// Pending games to keep: one per slot that plays.
    target: usize,
    /// When the last housekeeping ran.
    kept: Option<Instant>,
    /// Games the server alone started in one statement with the one it
    /// took, for its next claims (they are `playing` in the store: a
    /// crash before they are played replays them).
    ready: std::collections::VecDeque<GameTicket>,
    /// The maintenance rate's games to start.
    bucket: Bucket,
    /// When the records were last pruned.
    pruned: Option<Instant>,
    /// The clocks at the last housekeeping: to see whether the server
    /// was away since (stopped, its machine suspended, its clock moved).
    clocks: Option<Clocks>,
}

/// The server's clocks, read together at a housekeeping.
#[derive(Clone, Copy)]
struct Clocks {
    unix: std::time::SystemTime,
    monotonic: Instant,
    stopped: Duration,
}

impl Clocks {
    fn now() -> Clocks {
        Clocks {
            unix: std::time::SystemTime::now(),
            monotonic: Instant::now(),
            stopped: crate::host::stopped(),
        }
    }

    /// How long the server was away between `before` and `self`: stopped
    /// (SIGSTOP, Ctrl-Z: the stop watch's count), or its wall clock ahead
    /// of its monotonic one (the machine suspended, or the clock set
    /// forward). Meanwhile no worker's heartbeat was read.
    fn away_since(&self, before: &Clocks) -> Duration {
        let wall = self.unix.duration_since(before.unix).unwrap_or_default();
        let ran = self.monotonic.duration_since(before.monotonic);
        wall.saturating_sub(ran) + self.stopped.saturating_sub(before.stopped)
    }
}

/// How long the server may be away before the workers' leases are given
/// a lease time more ([`Clocks::away_since`]).
const AWAY_GRACE_AFTER: Duration = Duration::from_secs(2);

/// The most games one claim adds to the queue.
const TOP_UP_MOST: usize = 256;

/// How often a claim does the queue's housekeeping.
const HOUSEKEEPING: Duration = Duration::from_secs(1);

/// How often the housekeeping prunes the records past their retention.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

impl Scheduler {
    /// The scheduler of ladder `t` (`settings`, its `[ladder]` table, with
    /// the server's own games in flight), seeded from the ladder's seed and
    /// the number of games done, with what each version has `played`
    /// ([`count_row`]); it claims from `db`, with the ratings of `fits`.
    pub fn new(
        t: &Tournament,
        settings: &LadderSettings,
        lease_seconds: i64,
        (games, played): (usize, HashMap<String, Played>),
        db: Db,
        fits: Arc<Fits>,
    ) -> Scheduler {
        let seed = crate::league::schedule::group_seed(t.seed, &format!("epoch:{games}"));
        Scheduler {
            db,
            fits,
            games_in_flight: settings.games_in_flight,
            pairing: PairingConfig {
                random_share: settings.random_share,
                placement_width: settings.placement_width,
                placement_games: settings.placement_games,
                lead: settings.pace_lead,
                ..PairingConfig::default()
            },
            variants: t
                .variants
                .iter()
                .map(|v| LadderVariant { players: v.players })
                .collect(),
            keys: variant_keys(t),
            lease_seconds,
            worker_jobs_max: settings.worker_jobs_max,
            leases_expired: AtomicU64::new(0),
            tests_running: std::sync::atomic::AtomicBool::new(false),
            test_variants: (0..t.variants.len())
                .filter(|&v| t.variants[v].players == 2)
                .collect(),
            shares: std::sync::Mutex::new(HashMap::new()),
            maintenance_per_hour: settings.maintenance_games_per_hour as f64,
            record_days: settings.record_days,
            resting: std::sync::atomic::AtomicBool::new(false),
            played: std::sync::Mutex::new(played),
            queue: tokio::sync::Mutex::new(Queue {
                rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
                roster: Vec::new(),
                target: 0,
                kept: None,
                ready: std::collections::VecDeque::new(),
                bucket: Bucket {
                    games: 0.0,
                    at: Instant::now(),
                },
                pruned: None,
                clocks: None,
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

    /// After the server's own games stopped on a failure, none of them in
    /// flight: those it was playing, and those it had started for its
    /// next claims (`ready`), go back to the queue, first; returns how
    /// many.
    pub async fn requeue_unrecorded(&self) -> Result<u64, DbError> {
        let mut q = self.queue.lock().await;
        let n = self.db.requeue_cut_off().await?;
        q.ready.clear();
        self.forget_queue();
        Ok(n)
    }

    /// Forgets the queue as the server last left it: the next claim
    /// reads the store.
    pub fn forget_queue(&self) {
        self.mirror().queued = None;
    }

    /// Whether the ladder is at its maintenance rate with no game to start
    /// now (every version placed, no test running): a slot that finds the
    /// queue empty waits rather than gives up.
    pub fn resting(&self) -> bool {
        self.resting.load(Ordering::SeqCst)
    }

    /// How long a slot that found nothing at the maintenance rate waits
    /// before it claims again: until the rate gives the next game (at
    /// least 250 ms, at most 5 s).
    pub fn rest(&self) -> Duration {
        let secs = 3600.0 / self.maintenance_per_hour.max(1.0);
        Duration::from_secs_f64(secs.clamp(0.25, 5.0))
    }

    fn shares(&self) -> std::sync::MutexGuard<'_, HashMap<String, Share>> {
        self.shares.lock().unwrap_or_else(|p| p.into_inner())
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
        p.secs += own_secs(row, seat);
        if let Some(v) = variant {
            if p.variants.len() <= v {
                p.variants.resize(v + 1, 0);
            }
            p.variants[v] += 1;
        }
    }
}

impl Scheduler {
    /// A finished game (the server's or a worker's) counts for the pairing
    /// rule.
    pub fn note_finished(&self, row: &GameRow) {
        if let (Some((queued, _)), Some(id)) = (
            &mut self.mirror().queued,
            crate::wire::worker::ladder_id(&row.game_id),
        ) {
            queued.retain(|t| t.id != id);
        }
        let mut played = self.played.lock().unwrap_or_else(|p| p.into_inner());
        count_row(&self.keys, &mut played, row);
        let mut shares = self.shares();
        for (seat, name) in row.seats().into_iter().enumerate() {
            if let Some(s) = shares.get_mut(name) {
                s.used_secs += own_secs(row, seat);
            }
        }
    }

    /// Claims up to `max` pending games of the variants `can_play` accepts,
    /// for the server itself (`worker` is `None`) or for a worker under
    /// leases ([`crate::serve::store::Db::claim_games`]), after topping the queue up with the
    /// pairing rule's picks until there is one pending game per slot: the
    /// picks are added in the claim's own transaction. The server alone (no
    /// worker heard from lately, no `max_games`) with an empty queue starts
    /// one pick per game in flight straight, `playing`, in one statement,
    /// takes the first and keeps the others for its next claims.
    pub async fn claim(
        &self,
        worker: Option<(i64, i64)>,
        max: usize,
        can_play: &(dyn Fn(usize) -> bool + Sync),
    ) -> Result<Vec<Claimed>, DbError> {
        let mut q = self.queue.lock().await;
        if worker.is_none() {
            if let Some(t) = q.ready.iter().position(|t| can_play(t.variant)) {
                return Ok(q.ready.remove(t).map(claimed).into_iter().collect());
            }
        }
        let due = q.kept.is_none_or(|t| t.elapsed() >= HOUSEKEEPING);
        if due || self.stale.swap(false, Ordering::SeqCst) {
            self.housekeeping(&mut q).await?;
        }
        if self.tests_running.load(Ordering::SeqCst)
            && super::version_test::top_up(&self.db, &self.test_variants, q.target).await? > 0
        {
            self.forget_queue();
        }
        let known = self.mirror().queued.clone();
        let (queued, pending) = match known {
            Some(q) => q,
            None => {
                let q = self.db.queued_games().await?;
                self.mirror().queued = Some(q.clone());
                q
            }
        };
        // The server alone (no worker heard from lately, no cap) with nothing
        // queued: its picks are handed out at once, `playing`, one per game in
        // flight in one statement, instead of queue entries and a claim.
        let alone = worker.is_none()
            && pending == 0
            && q.target <= self.games_in_flight
            && self.db.max_games().is_none();
        // At most a claim's worth of picks per claim: the queue fills over a
        // few claims, and no claim holds the queue's lock for long.
        // A worker's claim of a batch (issue 49) finds its batch pending.
        let batch = if worker.is_some() { max } else { 0 };
        let want = if alone {
            self.games_in_flight.max(1)
        } else {
            q.target.max(batch).saturating_sub(pending).min(TOP_UP_MOST)
        };
        let add = self.picks(&mut q, &queued, want);
        if alone {
            let add: Vec<_> = add.into_iter().filter(|(v, _)| can_play(*v)).collect();
            let started = self.db.start_games(&add).await?;
            if let Some((queued, _)) = &mut self.mirror().queued {
                queued.extend(started.iter().cloned());
            }
            q.ready.extend(started);
            return Ok(q.ready.pop_front().map(claimed).into_iter().collect());
        }
        self.forget_queue();
        self.db.claim_games(worker, max, can_play, &add).await
    }
}

/// Expired leases for the log, by worker: `w1: game-3, game-7; w2:
/// game-5`, so that the organiser sees whose heartbeats stopped.
fn expired_by_worker(expired: &[ExpiredLease]) -> String {
    let mut by: Vec<(&str, Vec<i64>)> = Vec::new();
    for e in expired {
        match by.iter_mut().find(|(w, _)| *w == e.worker) {
            Some((_, games)) => games.push(e.game),
            None => by.push((&e.worker, vec![e.game])),
        }
    }
    by.iter()
        .map(|(w, games)| {
            let name = if w.is_empty() { "(unknown worker)" } else { w };
            format!("{name}: {}", crate::wire::worker::game_ids(games))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A game the server itself plays (no lease).
fn claimed(ticket: GameTicket) -> Claimed {
    Claimed {
        ticket,
        lease: None,
    }
}

impl Scheduler {
    /// Up to `n` games picked by the pairing rule, as (variant, seats), given
    /// the games `queued` (pending or playing) already.
    fn picks(&self, q: &mut Queue, queued: &[GameTicket], n: usize) -> Vec<(usize, Vec<i64>)> {
        let mut add = Vec::new();
        let entrants = self.entrants(&q.roster);
        // A set of `max_games` (an event, a test run) is played at full
        // speed: the maintenance rate is for a ladder that plays for ever.
        let busy = self.db.max_games().is_some()
            || entrants.iter().any(|e| e.in_placement(&self.pairing))
            || self.tests_running.load(Ordering::SeqCst);
        let n = if busy {
            q.bucket.games = q.target.max(1) as f64;
            q.bucket.at = Instant::now();
            n
        } else {
            let allowed = maintenance(&mut q.bucket, self.maintenance_per_hour, q.target, n);
            self.resting.store(allowed == 0 && n > 0, Ordering::SeqCst);
            allowed
        };
        if busy {
            self.resting.store(false, Ordering::SeqCst);
        }
        if n == 0 {
            return add;
        }
        let mut in_flight = pairing::InFlight::default();
        for t in queued {
            in_flight.add(&Pick {
                variant: t.variant,
                seats: t.seats.iter().map(|&s| s as u64).collect(),
            });
        }
        for _ in 0..n {
            let Some(pick) = pairing::pick(
                &entrants,
                &self.variants,
                &self.pairing,
                &in_flight,
                &mut q.rng,
            ) else {
                break;
            };
            add.push((pick.variant, pick.seats.iter().map(|&s| s as i64).collect()));
            in_flight.add(&pick);
        }
        add
    }

    /// The queue's housekeeping: expires the leases past their time, rereads
    /// the roster, drops the pending games of versions no longer entered, and
    /// sets the target from the server's games in flight and the `-j` of the
    /// workers heard from lately.
    async fn housekeeping(&self, q: &mut Queue) -> Result<(), DbError> {
        q.kept = Some(Instant::now());
        self.forget_queue();
        // A server that was away (stopped, suspended) read no heartbeat
        // meanwhile: the workers' leases are given a lease time more, as
        // after a restart, before any of them is taken for expired (a
        // server stopped for longer than a lease expired every worker's
        // lease at its first claim after, and their games were played
        // again).
        let clocks = Clocks::now();
        if let Some(away) = q.clocks.map(|before| clocks.away_since(&before)) {
            if away >= AWAY_GRACE_AFTER {
                let graced = self
                    .db
                    .grace_leases(unix_now() + self.lease_seconds)
                    .await?;
                tracing::warn!(
                    "the server was away for {} s (stopped or suspended): {graced} workers' leases given {} s more",
                    away.as_secs(),
                    self.lease_seconds
                );
            }
        }
        q.clocks = Some(clocks);
        let expired = self.db.expire_leases(unix_now()).await?;
        if !expired.is_empty() {
            self.leases_expired
                .fetch_add(expired.len() as u64, Ordering::Relaxed);
            tracing::warn!(
                "leases expired (no heartbeat in time), back in the queue: {}",
                expired_by_worker(&expired)
            );
        }
        q.roster = self.db.versions(Some(VersionStatus::Entered)).await?;
        let tests = !self.db.running_tests().await?.is_empty();
        self.tests_running.store(tests, Ordering::SeqCst);
        let ids: Vec<i64> = q.roster.iter().map(|v| v.id).collect();
        let (queued, _) = self.db.queued_games().await?;
        // A game of a variant the ladder file no longer has (removed
        // between two runs of the server) can never be claimed: dropped
        // as a game of a version that left is, or it would hold its place
        // in the queue for ever.
        let gone = queued
            .iter()
            .filter(|g| g.variant >= self.variants.len())
            .count();
        let dropped = self
            .db
            .drop_stale_pending(&queued, &ids, self.variants.len())
            .await?;
        if dropped > 0 && gone > 0 {
            tracing::warn!(
                "{gone} games queued of variants this ladder file no longer has: dropped once pending"
            );
        }
        let recent = unix_now() - 2 * self.lease_seconds;
        let most = i64::from(self.worker_jobs_max);
        let (jobs, _) = self.db.worker_capacity(recent, most).await?;
        q.target = self
            .games_in_flight
            .saturating_add(usize::try_from(jobs).unwrap_or(0));
        self.join_shares(&q.roster);
        if q.pruned.is_none_or(|t| t.elapsed() >= PRUNE_EVERY) {
            q.pruned = Some(Instant::now());
            let before = prune::cutoff(std::time::SystemTime::now(), self.record_days);
            let pruned = self.db.prune(&before).await?;
            if pruned.records > 0 {
                tracing::info!(
                    "pruned the records of {} games finished before {before} (their rows kept)",
                    pruned.records
                );
            }
        }
        Ok(())
    }

    /// The time share follows the roster: a version that left leaves it,
    /// and one that entered joins it at the lowest clock of those in it
    /// (it is owed the ladder's time from now on, not its past).
    fn join_shares(&self, roster: &[Version]) {
        let played = self.played.lock().unwrap_or_else(|p| p.into_inner());
        let mut shares = self.shares();
        let names: Vec<String> = roster.iter().map(|v| v.player()).collect();
        shares.retain(|name, _| names.contains(name));
        let floor = shares
            .iter()
            .map(|(name, s)| share_clock(s, played.get(name)))
            .min_by(f64::total_cmp)
            .unwrap_or(0.0);
        for name in names {
            shares.entry(name).or_insert(Share {
                base: floor,
                used_secs: 0.0,
            });
        }
    }

    /// The roster as the pairing rule sees it: ratings of the last fit, and
    /// what each has played.
    fn entrants(&self, roster: &[Version]) -> Vec<Entrant> {
        let fit = self.fits.last();
        let played = self.played.lock().unwrap_or_else(|p| p.into_inner());
        let shares = self.shares();
        roster
            .iter()
            .map(|v| {
                let name = v.player();
                let p = played.get(&name).cloned().unwrap_or_default();
                let listed = fit.as_ref().and_then(|f| f.report.overall.get(&name));
                let rating = listed.filter(|r| r.rated);
                let clock = shares
                    .get(&name)
                    .map_or(0.0, |s| share_clock(s, played.get(&name)));
                Entrant {
                    id: v.id as u64,
                    elo: rating.map(|r| r.elo),
                    half_width: rating.map(|r| (r.elo_high - r.elo_low) / 2.0),
                    games: p.games,
                    fit_games: listed.map_or(0, |r| r.count.games),
                    seat_counts: p.seats,
                    variant_games: p.variants,
                    clock,
                }
            })
            .collect()
    }
}

/// A version's clock in the time share: where it joined plus the seconds
/// its moves took since over its measured seconds per game (none measured
/// yet: where it joined).
fn share_clock(s: &Share, played: Option<&Played>) -> f64 {
    match played.and_then(Played::secs_per_game) {
        Some(per_game) => pairing::clock(s.base, s.used_secs, per_game),
        None => s.base,
    }
}

/// How far ahead a worker's claim leases games for its slots (issue 49):
/// its batch is what each slot plays in this time at its recent pace.
pub const CLAIM_AHEAD: Duration = Duration::from_secs(2);

/// How many of `want` games the maintenance rate (`per_hour`) lets start
/// now: the bucket fills at the rate, up to one game per slot (`slots`)
/// or the rate's worth of [`CLAIM_AHEAD`] where that is more (so that a
/// ladder whose rate is higher than its slots' claims can take still
/// leases a worker's batch in one claim, not a slot's game at a time), and
/// each game started takes one.
fn maintenance(bucket: &mut Bucket, per_hour: f64, slots: usize, want: usize) -> usize {
    let now = Instant::now();
    let filled = now.duration_since(bucket.at).as_secs_f64() * per_hour / 3600.0;
    let ahead = per_hour / 3600.0 * CLAIM_AHEAD.as_secs_f64();
    bucket.games = (bucket.games + filled).min((slots.max(1) as f64).max(ahead));
    bucket.at = now;
    let n = (bucket.games.floor() as usize).min(want);
    bucket.games -= n as f64;
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_leases_are_logged_by_worker() {
        let e = |game, worker: &str| ExpiredLease {
            game,
            worker: worker.into(),
        };
        let text = expired_by_worker(&[e(3, "w1"), e(5, "w2"), e(7, "w1")]);
        assert_eq!(text, "w1: game-3, game-7; w2: game-5");
        assert_eq!(expired_by_worker(&[e(4, "")]), "(unknown worker): game-4");
    }

    #[test]
    fn the_maintenance_bucket_fills_at_the_rate_up_to_the_slots() {
        let start = Instant::now();
        let mut b = Bucket {
            games: 0.0,
            at: start,
        };
        // 3600 an hour: one a second. Nothing yet.
        assert_eq!(maintenance(&mut b, 3600.0, 4, 8), 0);
        // Ten seconds later: the four slots' worth, not ten.
        b.at = start - Duration::from_secs(10);
        assert_eq!(maintenance(&mut b, 3600.0, 4, 8), 4);
        assert_eq!(maintenance(&mut b, 3600.0, 4, 8), 0);
        // 2.5 seconds: two games, half a game left over.
        b.at = Instant::now() - Duration::from_millis(2500);
        assert_eq!(maintenance(&mut b, 3600.0, 4, 8), 2);
        assert!((b.games - 0.5).abs() < 0.01, "{b:?}");
        // No more than asked.
        b.games = 3.0;
        b.at = Instant::now();
        assert_eq!(maintenance(&mut b, 3600.0, 4, 1), 1);
        // A rate of 36,000 an hour: 20 games in the two seconds a claim
        // looks ahead, so a worker's batch of 20 at once, not 4.
        b.games = 0.0;
        b.at = Instant::now() - Duration::from_secs(10);
        assert_eq!(maintenance(&mut b, 36_000.0, 4, 64), 20);
        assert_eq!(maintenance(&mut b, 36_000.0, 4, 64), 0);
    }

    #[test]
    fn a_row_counts_each_seats_own_time() {
        let keys = vec![("kisolo".to_string(), 2)];
        let mut played = HashMap::new();
        let mut row = GameRow::two_player("game-1", "kisolo", "g1", "slow@1", "fast@1", 1.0);
        row.time0_ms = Some(5000.0);
        row.time1_ms = Some(0.0);
        count_row(&keys, &mut played, &row);
        count_row(&keys, &mut played, &row);
        assert_eq!(played["slow@1"].secs_per_game(), Some(5.0));
        // An instant bot's game counts a millisecond.
        assert_eq!(played["fast@1"].secs_per_game(), Some(0.001));
        assert_eq!(Played::default().secs_per_game(), None);
        // Two games of its usual length since it joined at 3: a clock of 5.
        let s = Share {
            base: 3.0,
            used_secs: 10.0,
        };
        assert_eq!(share_clock(&s, played.get("slow@1")), 5.0);
        assert_eq!(share_clock(&s, None), 3.0);
    }
}
