//! Leases across a restart and a worker's stop (issue 47: faults of the
//! ladder itself replay games for nothing): a server that starts again
//! gives the workers' active leases a grace of one lease time, so that a
//! game a worker finished while the server was down (and kept in its
//! spool) is accepted if nobody else played it; and a worker that stops
//! returns its leases at once, so that their games go back to the queue
//! without waiting for the leases to expire. A third `impl Db`.

use super::{Db, DbError};

impl Db {
    /// At start-up: every active lease expires no sooner than `until`
    /// (unix seconds). Returns how many were extended.
    pub async fn grace_leases(&self, until: i64) -> Result<u64, DbError> {
        let r =
            sqlx::query("UPDATE leases SET expires = $1 WHERE state = 'active' AND expires < $1")
                .bind(until)
                .execute(self.write_pool())
                .await?;
        Ok(r.rows_affected())
    }

    /// Worker `worker` gives back its active leases among `leases`: each
    /// expires now, and its game goes back to the queue. Returns the games'
    /// ids.
    pub async fn return_leases(&self, worker: i64, leases: &[String]) -> Result<Vec<i64>, DbError> {
        let mut tx = self.begin_write().await?;
        let mut games = Vec::new();
        for id in leases {
            let sql = format!(
                "SELECT game_id FROM leases WHERE id = $1 AND worker_id = $2 AND state = 'active'{}",
                self.backend().for_update()
            );
            let found: Option<(i64,)> = sqlx::query_as(&sql)
                .bind(id)
                .bind(worker)
                .fetch_optional(&mut *tx)
                .await?;
            let Some((game,)) = found else {
                continue;
            };
            sqlx::query("UPDATE leases SET state = 'expired' WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            super::leases::requeue(&mut tx, game, id).await?;
            games.push(game);
        }
        tx.commit().await?;
        Ok(games)
    }
}
