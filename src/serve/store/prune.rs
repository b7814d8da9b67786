//! Pruning (docs/ladder.md, "Retention"): what the store keeps of a
//! finished game past the organiser's retention (`[ladder] record_days`).
//! Its row stays, so the standings, the exports' rows and `arena rate` of
//! them do not change; its record (the moves, for the replay and
//! `/api/games.jsonl`) is deleted, and so are each bot's stderr of it
//! (`game_stderr`) and its analysis (`game_analysis`). One function,
//! [`Db::prune`], with one step per kind of thing kept per game.

use super::{Db, DbError};

/// How many games one statement prunes: a long prune is many short
/// transactions, so that it never holds SQLite's one write lock for long.
const PRUNE_BATCH: i64 = 1000;

/// What one prune deleted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Records deleted (their games' rows kept).
    pub records: u64,
    /// Seats' stderr deleted ([`Db::delete_stderr_before`]).
    pub stderr: u64,
    /// Games' analyses deleted (`game_analysis`).
    pub analyses: u64,
}

/// A table that keeps something per game beyond its row (its `game_id`),
/// deleted with the game's record.
#[derive(Clone, Copy, Debug)]
pub(super) enum PerGame {
    /// `game_stderr`: each bot's stderr.
    Stderr,
    /// `game_analysis`: the game's analysis.
    Analysis,
}

impl PerGame {
    fn table(self) -> &'static str {
        match self {
            PerGame::Stderr => "game_stderr",
            PerGame::Analysis => "game_analysis",
        }
    }
}

impl Db {
    /// Deletes what the store keeps of the games finished before `before`
    /// (RFC 3339, as `finished_at`: `2026-11-27T08:00:00.000Z`) beyond their
    /// rows: their records and their bots' stderr. Games held, pending or playing are not touched,
    /// nor is a forfeit's record waiting for its re-check (`rechecks`).
    /// Space freed in a SQLite file is reused by the next games (the file
    /// does not shrink).
    pub async fn prune(&self, before: &str) -> Result<Pruned, DbError> {
        let mut pruned = Pruned::default();
        loop {
            let r = sqlx::query(
                "UPDATE games SET record = NULL WHERE id IN (SELECT id FROM games \
                 WHERE state = 'done' AND finished_at < $1 AND record IS NOT NULL \
                 ORDER BY finished_at, id LIMIT $2)",
            )
            .bind(before)
            .bind(PRUNE_BATCH)
            .execute(&self.write)
            .await?;
            pruned.records += r.rows_affected();
            if r.rows_affected() < PRUNE_BATCH as u64 {
                break;
            }
        }
        pruned.stderr = self.delete_stderr_before(before).await?;
        pruned.analyses = self
            .delete_per_game_before(PerGame::Analysis, before)
            .await?;
        Ok(pruned)
    }

    /// Deletes `what`'s rows of every game that finished before
    /// `finished_at` (a time as [`super::now`] writes it); returns how
    /// many.
    pub(super) async fn delete_per_game_before(
        &self,
        what: PerGame,
        finished_at: &str,
    ) -> Result<u64, DbError> {
        let r = sqlx::query(&format!(
            "DELETE FROM {} WHERE game_id IN \
             (SELECT id FROM games WHERE state = 'done' AND finished_at < $1)",
            what.table()
        ))
        .bind(finished_at)
        .execute(&self.write)
        .await?;
        Ok(r.rows_affected())
    }

    /// Finished games whose record is kept, and those whose record was
    /// pruned.
    pub async fn records_kept(&self) -> Result<(i64, i64), DbError> {
        let (kept, pruned): (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(CASE WHEN record IS NULL THEN 0 ELSE 1 END), 0), \
             COALESCE(SUM(CASE WHEN record IS NULL THEN 1 ELSE 0 END), 0) \
             FROM games WHERE state = 'done'",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok((kept, pruned))
    }
}

/// The `finished_at` before which records are pruned, `days` days before
/// `now` (RFC 3339 with milliseconds, as the store writes it).
pub fn cutoff(now: std::time::SystemTime, days: u64) -> String {
    let back = std::time::Duration::from_secs(days.saturating_mul(86_400));
    let at = now
        .checked_sub(back)
        .filter(|t| *t >= std::time::UNIX_EPOCH)
        .unwrap_or(std::time::UNIX_EPOCH);
    humantime::format_rfc3339_millis(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn the_cutoff_is_days_back_in_the_stores_format() {
        let now = UNIX_EPOCH + Duration::from_secs(86_400 * 20 + 5);
        assert_eq!(cutoff(now, 14), "1970-01-07T00:00:05.000Z");
        // Further back than the epoch: the epoch (nothing is that old).
        assert_eq!(cutoff(now, 100), "1970-01-01T00:00:00.000Z");
        // It sorts as text as the times do.
        assert!(cutoff(now, 14) < cutoff(now, 13));
    }
}
