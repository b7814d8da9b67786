//! The ratings' history kept in the store (table `rating_history`,
//! migration 0014): each version's overall rating at each complete fit,
//! as [`crate::serve::bus::Fits`] holds it, so that a restart keeps the
//! bot pages' "rating over time". A fifth `impl Db`.

use super::{Db, DbError};
use std::collections::HashMap;

/// One point of a version's history: `[games, elo, low, high]`.
pub type Point = [f64; 4];

/// What one fit changed in the history: the points added (one a rated
/// version), and those thinned out (by version, their game counts).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct HistoryChange {
    pub added: Vec<(String, Point)>,
    pub dropped: Vec<(String, Vec<i64>)>,
}

impl Db {
    /// Writes `change` in one transaction: a point of a game count kept
    /// already (a fit of as many games) is replaced. Points that are not
    /// finite are not kept (the store's columns are numbers).
    pub async fn note_rating_history(&self, change: &HistoryChange) -> Result<(), DbError> {
        if change.added.is_empty() && change.dropped.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        for (player, p) in &change.added {
            if !p.iter().all(|x| x.is_finite()) {
                continue;
            }
            sqlx::query(
                "INSERT INTO rating_history (player, games, elo, low, high) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (player, games) DO UPDATE SET elo = excluded.elo, low = excluded.low, \
                 high = excluded.high",
            )
            .bind(player)
            .bind(p[0] as i64)
            .bind(p[1])
            .bind(p[2])
            .bind(p[3])
            .execute(&mut *tx)
            .await?;
        }
        for (player, games) in &change.dropped {
            for g in games {
                sqlx::query("DELETE FROM rating_history WHERE player = $1 AND games = $2")
                    .bind(player)
                    .bind(g)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Every version's history, by version, in the order of its games.
    pub async fn rating_history(&self) -> Result<HashMap<String, Vec<Point>>, DbError> {
        let rows: Vec<(String, i64, f64, f64, f64)> = sqlx::query_as(
            "SELECT player, games, elo, low, high FROM rating_history ORDER BY player, games",
        )
        .fetch_all(self.pool())
        .await?;
        let mut out: HashMap<String, Vec<Point>> = HashMap::new();
        for (player, games, elo, low, high) in rows {
            out.entry(player)
                .or_default()
                .push([games as f64, elo, low, high]);
        }
        Ok(out)
    }
}
