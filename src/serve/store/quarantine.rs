//! The store's side of forged results (issue 47, item 7; docs/security.md
//! "Forged results"): a third `impl Db`. A worker's upload that ends in a
//! forfeit is held (`checking`) with its row and record in `rechecks`
//! until the server has played the game again up to the forfeit; then it
//! counts (`done`) or goes back to the queue (`pending`). A worker in
//! quarantine has its claims and uploads refused, its leases returned and
//! the games it had recorded held (`held`: out of the standings and the
//! exports) and played again under new ids.

use super::{now, seats_text, ticket, Db, DbError};

/// A reported forfeit waiting for its re-check.
#[derive(Clone, Debug)]
pub struct Recheck {
    /// The re-check's own id.
    pub id: i64,
    /// The ladder game's id.
    pub game_id: i64,
    pub worker_id: i64,
    /// The worker's name.
    pub worker: String,
    pub variant: usize,
    /// The versions by seat.
    pub seats: Vec<i64>,
    /// The forfeit's reason as reported (`timeout`, `crash`, ...).
    pub reason: String,
    /// The seat reported to have forfeited.
    pub offender: usize,
    /// The row as uploaded (JSON).
    pub row_json: String,
    /// The record as uploaded (compressed frame).
    pub record: Vec<u8>,
    /// Re-checks of it so far that found no fault.
    pub tries: i64,
}

/// One worker's forfeits re-checked so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecheckCounts {
    pub worker_id: i64,
    /// Re-checked (confirmed or not).
    pub checked: u64,
    /// Re-checked and not found again.
    pub not_reproduced: u64,
}

/// A worker as the workers' page lists it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct WorkerLine {
    pub name: String,
    pub jobs: i64,
    /// Unix seconds.
    pub last_seen: i64,
    /// Forfeits it reported that were re-checked, and of them those that
    /// did not come again; those waiting.
    pub forfeits_checked: u64,
    pub forfeits_not_reproduced: u64,
    pub forfeits_waiting: u64,
    /// Since when it is in quarantine (UTC), if it is, and why.
    pub quarantined_at: Option<String>,
    pub quarantine_reason: Option<String>,
    /// Its token was revoked.
    pub revoked: bool,
}

/// What putting a worker in quarantine did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quarantined {
    /// Its active leases returned: their games back in the queue.
    pub returned: usize,
    /// Its recorded games held (out of the standings) and queued again
    /// under new ids.
    pub held: usize,
}

impl Db {
    /// The oldest forfeit waiting for its re-check, if any.
    pub async fn next_recheck(&self) -> Result<Option<Recheck>, DbError> {
        type Row = (i64, i64, i64, String, String, i64, String, Vec<u8>, i64);
        let r: Option<Row> = sqlx::query_as(
            "SELECT r.id, r.game_id, r.worker_id, o.name, r.reason, r.offender, r.row_json, r.record, r.tries \
             FROM rechecks r JOIN owners o ON o.id = r.worker_id \
             WHERE r.state = 'waiting' ORDER BY r.id LIMIT 1",
        )
        .fetch_optional(self.pool())
        .await?;
        let Some((id, game_id, worker_id, worker, reason, offender, row_json, record, tries)) = r
        else {
            return Ok(None);
        };
        let Some((_, t)) = self.game_ticket(game_id).await? else {
            return Err(DbError::Conflict(format!(
                "re-check {id}: game {game_id} is not in the store"
            )));
        };
        Ok(Some(Recheck {
            id,
            game_id,
            worker_id,
            worker,
            variant: t.variant,
            seats: t.seats,
            reason,
            offender: usize::try_from(offender).unwrap_or(usize::MAX),
            row_json,
            record,
            tries,
        }))
    }

    /// A re-check found no fault but will be tried again (a timeout): its
    /// tries so far.
    pub async fn recheck_tried(&self, id: i64, tries: i64) -> Result<(), DbError> {
        sqlx::query("UPDATE rechecks SET tries = $2 WHERE id = $1")
            .bind(id)
            .bind(tries)
            .execute(self.write_pool())
            .await?;
        Ok(())
    }

    /// Re-check `r` found the fault again (`found` says what): in one
    /// transaction, its game is done with the row and record as uploaded.
    /// False when the game was no longer waiting (nothing changed).
    pub async fn confirm_recheck(&self, r: &Recheck, found: &str) -> Result<bool, DbError> {
        let mut tx = self.begin_write().await?;
        let sql = self.backend().finish_game_sql("state = 'checking'");
        let done = sqlx::query(&sql)
            .bind(r.game_id)
            .bind(now())
            .bind(&r.row_json)
            .bind(&r.record)
            .execute(&mut *tx)
            .await?;
        self.close_recheck(&mut tx, r.id, "confirmed", found)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Re-check `r` did not find the fault (`found` says what happened
    /// instead; `state`: `not_reproduced`, or `void` when the game could
    /// not be played again, which counts against nobody): in one
    /// transaction, its game goes back to the queue, first, to be played
    /// again (same seats, same seed).
    pub async fn reject_recheck(
        &self,
        r: &Recheck,
        state: &str,
        found: &str,
    ) -> Result<(), DbError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "UPDATE games SET state = 'pending', lease_id = NULL, replay = 1 \
             WHERE id = $1 AND state = 'checking'",
        )
        .bind(r.game_id)
        .execute(&mut *tx)
        .await?;
        self.close_recheck(&mut tx, r.id, state, found).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn close_recheck(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        id: i64,
        state: &str,
        found: &str,
    ) -> Result<(), DbError> {
        sqlx::query(
            "UPDATE rechecks SET state = $2, found = $3, checked_at = $4, tries = tries + 1 WHERE id = $1",
        )
        .bind(id)
        .bind(state)
        .bind(found)
        .bind(now())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Every worker's re-checked forfeits, counted.
    pub async fn recheck_counts(&self) -> Result<Vec<RecheckCounts>, DbError> {
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT worker_id, COUNT(*), \
             CAST(COALESCE(SUM(CASE WHEN state = 'not_reproduced' THEN 1 ELSE 0 END), 0) AS BIGINT) \
             FROM rechecks WHERE state IN ('confirmed', 'not_reproduced') GROUP BY worker_id ORDER BY worker_id",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(worker_id, checked, not)| RecheckCounts {
                worker_id,
                checked: checked.max(0) as u64,
                not_reproduced: not.max(0) as u64,
            })
            .collect())
    }

    /// The latest `most` counted games for the residual rule: who
    /// recorded each (`None`: the server), its variant, its versions by
    /// seat and its row (JSON). Bounded, so that the rule's memory and
    /// time do not grow with the ladder's games.
    pub async fn scored_games(
        &self,
        most: i64,
    ) -> Result<Vec<(Option<i64>, i64, String, String)>, DbError> {
        let rows: Vec<(Option<i64>, i64, String, String)> = sqlx::query_as(
            "SELECT l.worker_id, g.variant, g.seats, g.row_json FROM games g \
             LEFT JOIN leases l ON l.id = g.lease_id \
             WHERE g.state = 'done' AND g.row_json IS NOT NULL ORDER BY g.id DESC LIMIT $1",
        )
        .bind(most)
        .fetch_all(self.pool())
        .await?;
        Ok(rows)
    }

    /// Forfeits waiting for their re-check.
    pub async fn rechecks_waiting(&self) -> Result<i64, DbError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM rechecks WHERE state = 'waiting'")
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }

    /// Whether worker `owner` is in quarantine: since when and why.
    pub async fn quarantine_of(&self, owner: i64) -> Result<Option<(String, String)>, DbError> {
        let r: Option<(Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT quarantined_at, quarantine_reason FROM workers WHERE owner_id = $1",
        )
        .bind(owner)
        .fetch_optional(self.pool())
        .await?;
        Ok(r.and_then(|(at, why)| Some((at?, why.unwrap_or_default()))))
    }

    /// Workers in quarantine.
    pub async fn quarantined_count(&self) -> Result<i64, DbError> {
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM workers WHERE quarantined_at IS NOT NULL")
                .fetch_one(self.pool())
                .await?;
        Ok(n)
    }

    /// Puts worker `owner` in quarantine for `reason`, in one transaction:
    /// its active leases are returned (their games back in the queue), and
    /// every game it recorded is held (out of the standings and exports)
    /// and queued again, first, as a new game with the same seats and
    /// variant. `None` when it is in quarantine already or never
    /// registered (nothing changed).
    pub async fn quarantine(
        &self,
        owner: i64,
        reason: &str,
    ) -> Result<Option<Quarantined>, DbError> {
        let mut tx = self.begin_write().await?;
        let r = sqlx::query(
            "UPDATE workers SET quarantined_at = $2, quarantine_reason = $3 \
             WHERE owner_id = $1 AND quarantined_at IS NULL",
        )
        .bind(owner)
        .bind(now())
        .bind(reason)
        .execute(&mut *tx)
        .await?;
        if r.rows_affected() != 1 {
            return Ok(None);
        }
        let mut out = Quarantined::default();
        let active: Vec<(String, i64)> = sqlx::query_as(
            "SELECT id, game_id FROM leases WHERE worker_id = $1 AND state = 'active'",
        )
        .bind(owner)
        .fetch_all(&mut *tx)
        .await?;
        for (lease, game) in &active {
            sqlx::query("UPDATE leases SET state = 'expired' WHERE id = $1")
                .bind(lease)
                .execute(&mut *tx)
                .await?;
            let r = sqlx::query(
                "UPDATE games SET state = 'pending', lease_id = NULL, replay = 1 \
                 WHERE id = $1 AND state = 'playing' AND lease_id = $2",
            )
            .bind(game)
            .bind(lease)
            .execute(&mut *tx)
            .await?;
            out.returned += r.rows_affected() as usize;
        }
        let recorded: Vec<(i64, i64, String)> = sqlx::query_as(
            "SELECT g.id, g.variant, g.seats FROM games g JOIN leases l ON l.id = g.lease_id \
             WHERE l.worker_id = $1 AND g.state = 'done' ORDER BY g.id",
        )
        .bind(owner)
        .fetch_all(&mut *tx)
        .await?;
        let t = now();
        for (id, variant, seats) in &recorded {
            sqlx::query("UPDATE games SET state = 'held' WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            let again = ticket(*id, *variant, seats);
            sqlx::query(
                "INSERT INTO games (state, variant, seats, created_at, replay) VALUES ('pending', $1, $2, $3, 1)",
            )
            .bind(*variant)
            .bind(seats_text(&again.seats))
            .bind(&t)
            .execute(&mut *tx)
            .await?;
            out.held += 1;
        }
        tx.commit().await?;
        Ok(Some(out))
    }

    /// Releases worker `name` from quarantine (`arena serve LADDER
    /// --release-worker NAME`): it may claim and upload again; the games
    /// held stay held (they were played again). False when no worker of
    /// that name is in quarantine.
    pub async fn release_worker(&self, name: &str) -> Result<bool, DbError> {
        let r = sqlx::query(
            "UPDATE workers SET quarantined_at = NULL, quarantine_reason = NULL \
             WHERE quarantined_at IS NOT NULL AND owner_id IN (SELECT id FROM owners WHERE name = $1)",
        )
        .bind(name)
        .execute(self.write_pool())
        .await?;
        Ok(r.rows_affected() > 0)
    }

    /// Every registered worker, by name, for the workers' page.
    pub async fn worker_lines(&self) -> Result<Vec<WorkerLine>, DbError> {
        type Row = (
            String,
            i64,
            i64,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT o.name, w.jobs, w.last_seen, w.quarantined_at, w.quarantine_reason, o.revoked_at \
             FROM workers w JOIN owners o ON o.id = w.owner_id ORDER BY o.name",
        )
        .fetch_all(self.pool())
        .await?;
        let counts: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT o.name, r.state, COUNT(*) FROM rechecks r JOIN owners o ON o.id = r.worker_id \
             GROUP BY o.name, r.state",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(name, jobs, last_seen, at, why, revoked)| {
                let n = |state: &str| {
                    counts
                        .iter()
                        .filter(|(w, s, _)| *w == name && s == state)
                        .map(|c| c.2.max(0) as u64)
                        .sum::<u64>()
                };
                WorkerLine {
                    jobs,
                    last_seen,
                    forfeits_checked: n("confirmed") + n("not_reproduced"),
                    forfeits_not_reproduced: n("not_reproduced"),
                    forfeits_waiting: n("waiting"),
                    quarantined_at: at,
                    quarantine_reason: why,
                    revoked: revoked.is_some(),
                    name,
                }
            })
            .collect())
    }
}

/// Within `tx`, after its lease is closed: game `game` waits for its
/// re-check (`checking`), its row and record in `rechecks`. False when the
/// game was not being played under `lease` (nothing written then).
pub(super) async fn hold_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    (game, lease, worker): (i64, &str, i64),
    (reason, offender): (&str, usize),
    row_json: &str,
    record: &[u8],
) -> Result<bool, DbError> {
    let r = sqlx::query(
        "UPDATE games SET state = 'checking' WHERE id = $1 AND state = 'playing' AND lease_id = $2",
    )
    .bind(game)
    .bind(lease)
    .execute(&mut **tx)
    .await?;
    if r.rows_affected() != 1 {
        return Ok(false);
    }
    sqlx::query(
        "INSERT INTO rechecks (game_id, worker_id, lease_id, reason, offender, row_json, record, state, reported_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'waiting', $8)",
    )
    .bind(game)
    .bind(worker)
    .bind(lease)
    .bind(reason)
    .bind(offender as i64)
    .bind(row_json)
    .bind(record)
    .bind(now())
    .execute(&mut **tx)
    .await?;
    Ok(true)
}
