//! The store's queue of games and its leases (issue 31, docs/ladder.md
//! "Workers"): a second `impl Db`. Pending games are rows; the server's
//! own games and the workers claim them in one transaction each (SQLite:
//! `BEGIN IMMEDIATE`, the database's one write lock; PostgreSQL:
//! `SELECT ... FOR UPDATE SKIP LOCKED` in the claim's select, marked
//! below). A worker's claim records a lease (id, worker, expiry); a lease
//! not renewed in time is expired and its game goes back to the queue; an
//! upload finishes a game only under its active lease, once.

use super::tokens::new_token;
use super::{now, seats_text, ticket, Db, DbError, GameState, GameTicket, LeaseState};
use crate::wire::worker::Registration;
use std::collections::HashMap;

/// A lease [`Db::expire_leases`] ended: its game, back in the queue, and
/// the worker that held it (its name, for the server's log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredLease {
    pub game: i64,
    pub worker: String,
}

/// What a heartbeat's renewal did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Renewal {
    /// Leases renewed.
    pub renewed: Vec<String>,
    /// Leases ended at the end of their life (lease, game): held too long,
    /// heartbeats or not.
    pub over_life: Vec<(String, i64)>,
}

/// A lease as the store has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub id: String,
    pub game_id: i64,
    pub worker_id: i64,
    pub state: LeaseState,
    /// Unix seconds.
    pub expires: i64,
}

/// A game claimed: the ticket, and the lease when a worker claimed it.
#[derive(Clone, Debug)]
pub struct Claimed {
    pub ticket: GameTicket,
    pub lease: Option<Lease>,
}

/// A new lease id: 16 random bytes in hex.
fn new_lease_id() -> String {
    new_token()[..32].to_string()
}

impl Db {
    /// At start-up: the games the server itself was playing when it
    /// stopped go back to the queue, first (`replay`); workers' leases
    /// stay (their workers may still be playing). Returns how many.
    pub async fn requeue_cut_off(&self) -> Result<u64, DbError> {
        let r = sqlx::query(
            "UPDATE games SET state = 'pending', replay = 1 WHERE state = 'playing' AND lease_id IS NULL",
        )
        .execute(self.write_pool())
        .await?;
        Ok(r.rows_affected())
    }

    /// The games pending or being played (the pairing rule's "in flight"),
    /// and how many of them are pending.
    pub async fn queued_games(&self) -> Result<(Vec<GameTicket>, usize), DbError> {
        let rows: Vec<(i64, i64, String, String)> = sqlx::query_as(
            "SELECT id, variant, seats, state FROM games WHERE state IN ('pending', 'playing') ORDER BY id",
        )
        .fetch_all(self.write_pool())
        .await?;
        let pending = rows
            .iter()
            .filter(|r| r.3 == GameState::Pending.as_str())
            .count();
        Ok((
            rows.iter().map(|(i, v, s, _)| ticket(*i, *v, s)).collect(),
            pending,
        ))
    }

    /// Drops the pending games that seat a version not in `entered` (it
    /// left the ladder), or are of a variant past the ladder's `variants`
    /// (removed from its file); returns how many.
    pub async fn drop_stale_pending(
        &self,
        queued: &[GameTicket],
        entered: &[i64],
        variants: usize,
    ) -> Result<usize, DbError> {
        let mut dropped = 0;
        for g in queued {
            if g.variant < variants && g.seats.iter().all(|s| entered.contains(s)) {
                continue;
            }
            let r = sqlx::query("DELETE FROM games WHERE id = $1 AND state = 'pending'")
                .bind(g.id)
                .execute(self.write_pool())
                .await?;
            dropped += r.rows_affected() as usize;
        }
        Ok(dropped)
    }

    /// Adds the pending games `add` (variant, seats), as many as the
    /// ladder's `max_games` leaves room for ([`Db::with_max_games`]), then
    /// claims up to `max` pending games, cut-off ones first, of the
    /// variants `can_play` accepts (by index): for the server itself when
    /// `worker` is `None`, else for worker `(id, lease seconds)` under one
    /// new lease per game. One transaction, and one server's claims run
    /// one at a time, so the ladder never has more than `max_games`. Games
    /// dropped because a version left do not count: they are deleted. (The
    /// count reads the whole table: a cost only where `max_games` is set.)
    pub async fn claim_games(
        &self,
        worker: Option<(i64, i64)>,
        max: usize,
        can_play: &(dyn Fn(usize) -> bool + Sync),
        add: &[(usize, Vec<i64>)],
    ) -> Result<Vec<Claimed>, DbError> {
        let mut tx = self.begin_write().await?;
        let room = match self.max_games() {
            Some(n) => {
                let (stored,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM games")
                    .fetch_one(&mut *tx)
                    .await?;
                usize::try_from(n - stored).unwrap_or(0)
            }
            None => add.len(),
        };
        let t = now();
        let add = &add[..room.min(add.len())];
        for chunk in add.chunks(CLAIM_CHUNK) {
            add_pending(&mut tx, chunk, &t).await?;
        }
        // PostgreSQL: `FOR UPDATE SKIP LOCKED`, so that claims in
        // parallel take different games.
        let sql = format!(
            "SELECT id, variant, seats, opening_of FROM games WHERE state = 'pending' ORDER BY replay DESC, id LIMIT $1{}",
            self.backend().skip_locked()
        );
        let rows: Vec<(i64, i64, String, Option<i64>)> = sqlx::query_as(&sql)
            .bind((max.max(1) * 8 + 64) as i64)
            .fetch_all(&mut *tx)
            .await?;
        let mut out = Vec::new();
        let unix = super::unix_now();
        for (id, variant, seats, opening) in rows {
            if out.len() >= max {
                break;
            }
            if !can_play(variant as usize) {
                continue;
            }
            let lease = worker.map(|(worker_id, seconds)| Lease {
                id: new_lease_id(),
                game_id: id,
                worker_id,
                state: LeaseState::Active,
                expires: unix + seconds,
            });
            out.push(Claimed {
                ticket: ticket(id, variant, &seats).with_opening(opening),
                lease,
            });
        }
        // A few statements for the lot, not two a game: each statement
        // is a round trip to the store's thread (SQLite) or server.
        for chunk in out.chunks(CLAIM_CHUNK) {
            mark_playing(&mut tx, chunk).await?;
            grant_leases(&mut tx, chunk, (t.as_str(), unix)).await?;
        }
        tx.commit().await?;
        Ok(out)
    }

    /// Expires the active leases past their time (`now`, unix seconds):
    /// their games go back to the queue. Returns each game's id and the
    /// worker that held it.
    pub async fn expire_leases(&self, now_unix: i64) -> Result<Vec<ExpiredLease>, DbError> {
        // A read first: most calls find none, and take no write lock.
        let (any,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM leases WHERE state = 'active' AND expires < $1")
                .bind(now_unix)
                .fetch_one(self.pool())
                .await?;
        if any == 0 {
            return Ok(Vec::new());
        }
        let mut tx = self.begin_write().await?;
        // PostgreSQL: the leases locked, so that an upload in between
        // either finishes first (and the lease is no longer active here)
        // or waits and finds it expired.
        let sql = format!(
            "SELECT id, game_id, (SELECT name FROM owners WHERE owners.id = leases.worker_id) \
             FROM leases WHERE state = 'active' AND expires < $1{}",
            self.backend().for_update()
        );
        let gone: Vec<(String, i64, Option<String>)> = sqlx::query_as(&sql)
            .bind(now_unix)
            .fetch_all(&mut *tx)
            .await?;
        for (lease, game, _) in &gone {
            sqlx::query("UPDATE leases SET state = 'expired' WHERE id = $1")
                .bind(lease)
                .execute(&mut *tx)
                .await?;
            requeue(&mut tx, *game, lease).await?;
        }
        tx.commit().await?;
        Ok(gone
            .into_iter()
            .map(|(_, game, worker)| ExpiredLease {
                game,
                worker: worker.unwrap_or_default(),
            })
            .collect())
    }

    /// Renews worker `worker`'s active leases among `leases` to
    /// `now + seconds`, except those granted `life` seconds ago or more:
    /// those are ended (expired, their games back in the queue) whatever
    /// the heartbeats, so that a worker cannot hold a game for ever
    /// without playing it. The others are lost (expired, done, or not its
    /// own). One transaction, two statements a chunk of leases: the life
    /// is compared in SQL with the grant's time (`granted_unix`, migration
    /// 0013; a lease without one is renewed), not read lease by lease.
    pub async fn renew_leases(
        &self,
        worker: i64,
        leases: &[String],
        now_unix: i64,
        seconds: i64,
        life: i64,
    ) -> Result<Renewal, DbError> {
        let mut out = Renewal::default();
        if !leases.is_empty() {
            let mut tx = self.begin_write().await?;
            let mut renewed = std::collections::HashSet::new();
            for chunk in leases.chunks(CLAIM_CHUNK) {
                let ids = placeholders(4, chunk.len());
                let mine = "worker_id = $1 AND state = 'active' AND expires >= $2";
                // Past their life first: ended, and not renewed below.
                let sql = format!(
                    "UPDATE leases SET state = 'expired' WHERE {mine} AND granted_unix <= $3 \
                     AND id IN ({ids}) RETURNING id, game_id"
                );
                let mut q = sqlx::query_as::<_, (String, i64)>(&sql)
                    .bind(worker)
                    .bind(now_unix)
                    .bind(now_unix.saturating_sub(life));
                for id in chunk {
                    q = q.bind(id);
                }
                let mut ended = q.fetch_all(&mut *tx).await?;
                for (lease, game) in &ended {
                    requeue(&mut tx, *game, lease).await?;
                }
                // In the order the heartbeat named them.
                ended.sort_by_key(|(lease, _)| chunk.iter().position(|x| x == lease));
                out.over_life.extend(ended);
                let sql = format!(
                    "UPDATE leases SET expires = $3 WHERE {mine} AND id IN ({ids}) RETURNING id"
                );
                let mut q = sqlx::query_as::<_, (String,)>(&sql)
                    .bind(worker)
                    .bind(now_unix)
                    .bind(now_unix.saturating_add(seconds));
                for id in chunk {
                    q = q.bind(id);
                }
                renewed.extend(q.fetch_all(&mut *tx).await?.into_iter().map(|r| r.0));
            }
            tx.commit().await?;
            out.renewed = leases
                .iter()
                .filter(|id| renewed.contains(*id))
                .cloned()
                .collect();
        }
        sqlx::query("UPDATE workers SET last_seen = $2 WHERE owner_id = $1")
            .bind(worker)
            .bind(now_unix)
            .execute(self.write_pool())
            .await?;
        Ok(out)
    }

    /// Lease `id`, if it was ever granted.
    pub async fn lease(&self, id: &str) -> Result<Option<Lease>, DbError> {
        let r = sqlx::query(&format!("SELECT {LEASE_COLUMNS} FROM leases WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        r.as_ref().map(lease_of).transpose()
    }

    /// Game `id`'s state and ticket, if it exists.
    pub async fn game_ticket(&self, id: i64) -> Result<Option<(GameState, GameTicket)>, DbError> {
        let r: Option<(i64, i64, String, String, Option<i64>)> =
            sqlx::query_as("SELECT id, variant, seats, state, opening_of FROM games WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        r.map(|(i, v, s, state, o)| {
            Ok((
                GameState::from_word(&state)?,
                ticket(i, v, &s).with_opening(o),
            ))
        })
        .transpose()
    }

    /// The state and ticket of each of games `ids` that exists, and the
    /// leases `leases` that exist, by id: a batch of uploads' look-ups in
    /// two statements a chunk rather than two a game.
    pub async fn uploads_of(
        &self,
        ids: &[i64],
        leases: &[&str],
    ) -> Result<
        (
            HashMap<i64, (GameState, GameTicket)>,
            HashMap<String, Lease>,
        ),
        DbError,
    > {
        let mut games = HashMap::new();
        for chunk in ids.chunks(CLAIM_CHUNK) {
            let sql = format!(
                "SELECT id, variant, seats, state, opening_of FROM games WHERE id IN ({})",
                placeholders(1, chunk.len())
            );
            let mut q = sqlx::query_as::<_, (i64, i64, String, String, Option<i64>)>(&sql);
            for id in chunk {
                q = q.bind(*id);
            }
            for (i, v, s, state, o) in q.fetch_all(self.pool()).await? {
                let t = ticket(i, v, &s).with_opening(o);
                games.insert(i, (GameState::from_word(&state)?, t));
            }
        }
        let mut found = HashMap::new();
        for chunk in leases.chunks(CLAIM_CHUNK) {
            let sql = format!(
                "SELECT {LEASE_COLUMNS} FROM leases WHERE id IN ({})",
                placeholders(1, chunk.len())
            );
            let mut q = sqlx::query(&sql);
            for id in chunk {
                q = q.bind(*id);
            }
            for r in q.fetch_all(self.pool()).await? {
                let lease = lease_of(&r)?;
                found.insert(lease.id.clone(), lease);
            }
        }
        Ok((games, found))
    }

    /// Records (or renews) worker `owner`'s registration.
    pub async fn register_worker(&self, owner: i64, r: &Registration) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO workers (owner_id, host, cores, jobs, arena_version, rules_version, sandbox, variants, registered_at, last_seen) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (owner_id) DO UPDATE SET host = $2, cores = $3, jobs = $4, arena_version = $5, \
             rules_version = $6, sandbox = $7, variants = $8, registered_at = $9, last_seen = $10",
        )
        .bind(owner)
        .bind(&r.host)
        .bind(r.cores)
        .bind(r.jobs)
        .bind(&r.arena_version)
        .bind(r.rules_version)
        .bind(r.sandbox.join(","))
        .bind(r.variants.join(","))
        .bind(now())
        .bind(super::unix_now())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Worker `owner`'s registered variants, if it registered.
    pub async fn worker_variants(&self, owner: i64) -> Result<Option<Vec<String>>, DbError> {
        let r: Option<(String,)> =
            sqlx::query_as("SELECT variants FROM workers WHERE owner_id = $1")
                .bind(owner)
                .fetch_optional(self.pool())
                .await?;
        Ok(r.map(|(v,)| v.split(',').map(str::to_string).collect()))
    }

    /// The games at once of the workers heard from since `since` (unix
    /// seconds), and how many workers that is.
    /// Each worker's `jobs` counts as at most `most` (a row registered
    /// before the bound, or forged in the store, cannot raise the target
    /// past it, nor overflow the sum).
    pub async fn worker_capacity(&self, since: i64, most: i64) -> Result<(i64, i64), DbError> {
        // The cast: PostgreSQL's SUM of a BIGINT is a NUMERIC.
        let (jobs, n): (i64, i64) = sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(CASE WHEN w.jobs > $2 THEN $2 WHEN w.jobs < 0 THEN 0 ELSE w.jobs END), 0) AS BIGINT), \
             COUNT(*) FROM workers w JOIN owners o ON o.id = w.owner_id \
             WHERE w.last_seen >= $1 AND o.revoked_at IS NULL",
        )
        .bind(since)
        .bind(most)
        .fetch_one(self.pool())
        .await?;
        Ok((jobs, n))
    }

    /// Worker `owner`'s registered `jobs` and its leases active at
    /// `now_unix` (a claim gives it at most the difference); `None`
    /// before it registered.
    pub async fn worker_load(
        &self,
        owner: i64,
        now_unix: i64,
    ) -> Result<Option<(i64, i64)>, DbError> {
        let jobs: Option<(i64,)> = sqlx::query_as("SELECT jobs FROM workers WHERE owner_id = $1")
            .bind(owner)
            .fetch_optional(self.pool())
            .await?;
        let Some((jobs,)) = jobs else {
            return Ok(None);
        };
        let (active,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM leases WHERE worker_id = $1 AND state = 'active' AND expires >= $2",
        )
        .bind(owner)
        .bind(now_unix)
        .fetch_one(self.pool())
        .await?;
        Ok(Some((jobs, active)))
    }

    /// The version whose upload has SHA-256 `sha` (the latest, if two
    /// uploads were the same bytes).
    pub async fn version_by_sha(&self, sha: &str) -> Result<Option<i64>, DbError> {
        let r: Option<(i64,)> =
            sqlx::query_as("SELECT MAX(id) FROM versions WHERE sha256 = $1 HAVING COUNT(*) > 0")
                .bind(sha)
                .fetch_optional(self.pool())
                .await?;
        Ok(r.map(|(id,)| id))
    }
}

impl Db {
    /// Every lease ever granted, oldest first (for an organiser's
    /// questions, and the tests).
    pub async fn leases(&self) -> Result<Vec<Lease>, DbError> {
        let r = sqlx::query(&format!(
            "SELECT {LEASE_COLUMNS} FROM leases ORDER BY granted_at, id"
        ))
        .fetch_all(self.pool())
        .await?;
        r.iter().map(lease_of).collect()
    }
}

/// The columns [`lease_of`] reads.
const LEASE_COLUMNS: &str = "id, game_id, worker_id, state, expires";

/// A lease from its row, read by column name.
fn lease_of(r: &sqlx::any::AnyRow) -> Result<Lease, DbError> {
    use sqlx::Row;
    let state: String = r.try_get("state")?;
    Ok(Lease {
        id: r.try_get("id")?,
        game_id: r.try_get("game_id")?,
        worker_id: r.try_get("worker_id")?,
        state: LeaseState::from_word(&state)?,
        expires: r.try_get("expires")?,
    })
}

/// The most games one statement of a claim names (a statement's
/// parameters are bounded: SQLite's 32,766, PostgreSQL's 65,535).
const CLAIM_CHUNK: usize = 256;

/// Within a claim's `tx`: its games are being played, each under its
/// lease (none for the server's own). One statement: `$N` placeholders
/// written out, as both stores read them (sqlx's query builder writes
/// `?` for any store).
async fn mark_playing(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    games: &[Claimed],
) -> Result<(), DbError> {
    if games.is_empty() {
        return Ok(());
    }
    let n = games.len();
    let cases: String = (0..n)
        .map(|i| format!(" WHEN ${} THEN ${}", 2 * i + 1, 2 * i + 2))
        .collect();
    let ids = placeholders(2 * n + 1, n);
    let sql = format!(
        "UPDATE games SET state = 'playing', lease_id = CASE id{cases} END WHERE id IN ({ids})"
    );
    let mut q = sqlx::query(&sql);
    for g in games {
        q = q
            .bind(g.ticket.id)
            .bind(g.lease.as_ref().map(|l| l.id.clone()));
    }
    for g in games {
        q = q.bind(g.ticket.id);
    }
    q.execute(&mut **tx).await?;
    Ok(())
}

/// Within a claim's `tx`: games `add` (variant, seats) join the queue,
/// pending, in one statement.
async fn add_pending(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    add: &[(usize, Vec<i64>)],
    at: &str,
) -> Result<(), DbError> {
    if add.is_empty() {
        return Ok(());
    }
    let rows: Vec<String> = (0..add.len())
        .map(|i| format!("('pending', ${}, ${}, $1)", 2 * i + 2, 2 * i + 3))
        .collect();
    let sql = format!(
        "INSERT INTO games (state, variant, seats, created_at) VALUES {}",
        rows.join(", ")
    );
    let mut q = sqlx::query(&sql).bind(at);
    for (variant, seats) in add {
        q = q.bind(*variant as i64).bind(seats_text(seats));
    }
    q.execute(&mut **tx).await?;
    Ok(())
}

/// `$from, $from+1, ...`: `n` placeholders.
fn placeholders(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Within a claim's `tx`: the leases of its games claimed by a worker,
/// granted at `at` (RFC 3339, and unix seconds), in one statement.
async fn grant_leases(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    games: &[Claimed],
    at: (&str, i64),
) -> Result<(), DbError> {
    let leases: Vec<&Lease> = games.iter().filter_map(|g| g.lease.as_ref()).collect();
    if leases.is_empty() {
        return Ok(());
    }
    let rows: Vec<String> = (0..leases.len())
        .map(|i| {
            let k = 4 * i;
            format!(
                "(${}, ${}, ${}, 'active', $1, $2, ${})",
                k + 3,
                k + 4,
                k + 5,
                k + 6
            )
        })
        .collect();
    let sql = format!(
        "INSERT INTO leases (id, game_id, worker_id, state, granted_at, granted_unix, expires) VALUES {}",
        rows.join(", ")
    );
    let mut q = sqlx::query(&sql).bind(at.0).bind(at.1);
    for l in leases {
        q = q
            .bind(l.id.clone())
            .bind(l.game_id)
            .bind(l.worker_id)
            .bind(l.expires);
    }
    q.execute(&mut **tx).await?;
    Ok(())
}

/// Within `tx`, the first step of uploads' commit (counted, or held for
/// their re-check): closes (`done`) each of `uploads`' leases (lease id,
/// game) that is `worker`'s, of that game, active and unexpired at
/// `now_unix`, in one statement a chunk. Returns those closed.
pub(super) async fn close_leases(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    uploads: &[(&str, i64)],
    worker: i64,
    now_unix: i64,
) -> Result<std::collections::HashSet<String>, DbError> {
    let mut closed = std::collections::HashSet::new();
    for chunk in uploads.chunks(CLAIM_CHUNK) {
        let pairs: Vec<String> = (0..chunk.len())
            .map(|i| format!("(${}, ${})", 2 * i + 3, 2 * i + 4))
            .collect();
        let sql = format!(
            "UPDATE leases SET state = 'done' WHERE worker_id = $1 AND state = 'active' \
             AND expires >= $2 AND (id, game_id) IN (VALUES {}) RETURNING id",
            pairs.join(", ")
        );
        let mut q = sqlx::query_as::<_, (String,)>(&sql)
            .bind(worker)
            .bind(now_unix);
        for (lease, game) in chunk {
            q = q.bind(*lease).bind(*game);
        }
        closed.extend(q.fetch_all(&mut **tx).await?.into_iter().map(|r| r.0));
    }
    Ok(closed)
}

/// Within `tx`, after its lease is closed: game `game` is done with its
/// row and record. False when it was not being played under `lease`.
pub(super) async fn finish_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    backend: super::Backend,
    game: i64,
    lease: &str,
    row_json: &str,
    record: &[u8],
) -> Result<bool, DbError> {
    let sql = backend.finish_game_sql("state = 'playing' AND lease_id = $5");
    let r = sqlx::query(&sql)
        .bind(game)
        .bind(now())
        .bind(row_json)
        .bind(record)
        .bind(lease)
        .execute(&mut **tx)
        .await?;
    Ok(r.rows_affected() == 1)
}

/// Game `game`, played under lease `lease`, back in the queue (in `tx`),
/// unless it is no longer that lease's.
pub(super) async fn requeue(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    game: i64,
    lease: &str,
) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE games SET state = 'pending', lease_id = NULL WHERE id = $1 AND state = 'playing' AND lease_id = $2",
    )
    .bind(game)
    .bind(lease)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
