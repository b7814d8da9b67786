//! The commit of a batch of workers' uploads (issue 49): a fourth `impl
//! Db`, on top of the leases' ([`super::leases`]) and the held forfeits'
//! ([`super::quarantine`]) own steps.

use super::leases::{close_leases, finish_in};
use super::quarantine::hold_in;
use super::{Db, DbError};

/// An upload checked by the replay, to commit ([`Db::commit_uploads`]):
/// its game and lease, its row (JSON) and compressed record, and the
/// forfeit it ends in (reason, offender's seat), held for its re-check.
#[derive(Clone, Debug)]
pub struct Checked {
    pub game: i64,
    pub lease: String,
    pub row_json: String,
    pub record: Vec<u8>,
    pub forfeit: Option<(String, usize)>,
}

impl Db {
    /// Commits the checked uploads `games` of `worker` in one transaction
    /// (one sync to disk for the lot; a single upload is a batch of one),
    /// each on its own terms: its lease closed, then the game finished
    /// with its row and record, or, when it ends in a forfeit, held for
    /// its re-check. True for each game counted or held, false for each
    /// whose lease was no longer active and unexpired at `now_unix`
    /// (nothing of it changed).
    pub async fn commit_uploads(
        &self,
        worker: i64,
        now_unix: i64,
        games: &[Checked],
    ) -> Result<Vec<bool>, DbError> {
        let mut tx = self.begin_write().await?;
        let mut out = Vec::with_capacity(games.len());
        let leases: Vec<(&str, i64)> = games.iter().map(|g| (g.lease.as_str(), g.game)).collect();
        let mut closed = close_leases(&mut tx, &leases, worker, now_unix).await?;
        for g in games {
            let lease = g.lease.as_str();
            // Taken, so that a game sent twice in one batch counts once.
            if !closed.remove(lease) {
                out.push(false);
                continue;
            }
            let fresh = match &g.forfeit {
                Some((reason, seat)) => {
                    hold_in(
                        &mut tx,
                        (g.game, lease, worker),
                        (reason, *seat),
                        &g.row_json,
                        &g.record,
                    )
                    .await?
                }
                None => {
                    finish_in(
                        &mut tx,
                        self.backend(),
                        g.game,
                        lease,
                        &g.row_json,
                        &g.record,
                    )
                    .await?
                }
            };
            if !fresh {
                // Its lease closed above is opened again: nothing of this
                // game changes.
                sqlx::query("UPDATE leases SET state = 'active' WHERE id = $1")
                    .bind(lease)
                    .execute(&mut *tx)
                    .await?;
            }
            out.push(fresh);
        }
        tx.commit().await?;
        Ok(out)
    }
}
