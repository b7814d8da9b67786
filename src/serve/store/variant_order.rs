//! The variants' numbers across runs (migration 12, `variant_order`): a
//! game keeps its variant as a number, its place in the ladder file's
//! `variants`, and a file reordered or cut between two runs would give
//! every game of a moved variant another variant (the games browser's
//! filter, the workers' scores by variant, a pending game played as
//! another). At each start the store numbers the file's variants 0, 1,
//! ... and those it knew but the file no longer has after them, and
//! renumbers the games to match. Another `impl Db`.

use super::{Db, DbError};

/// What [`Db::number_variants`] changed: each variant whose number moved
/// (its label, the number before, the number now), and how many games
/// were renumbered.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Renumbered {
    pub moved: Vec<(String, i64, i64)>,
    pub games: u64,
}

/// The label under which a number no variant was recorded for is kept: a
/// store from before migration 12 whose file lost a variant still has its
/// games, under a number the first start cannot name.
fn unnamed(idx: i64) -> String {
    format!("#{idx}")
}

impl Db {
    /// Numbers `labels` (the ladder file's variants, in order) 0, 1, ...,
    /// then the variants the store knew that the file no longer has, in
    /// their order; renumbers the games to match. One transaction. The
    /// first start after migration 12 takes the file's order as the
    /// store's (there is nothing else to go by), and names any other
    /// number its games hold `#N`, so that no later number meets it.
    pub async fn number_variants(&self, labels: &[String]) -> Result<Renumbered, DbError> {
        let mut tx = self.begin_write().await?;
        let stored: Vec<(i64, String)> =
            sqlx::query_as("SELECT idx, label FROM variant_order ORDER BY idx")
                .fetch_all(&mut *tx)
                .await?;
        let mut known = stored.clone();
        if known.is_empty() {
            known = (0..).zip(labels.iter().cloned()).collect();
            let held: Vec<(i64,)> = sqlx::query_as(
                "SELECT DISTINCT variant FROM games WHERE variant >= $1 ORDER BY variant",
            )
            .bind(labels.len() as i64)
            .fetch_all(&mut *tx)
            .await?;
            known.extend(held.into_iter().map(|(i,)| (i, unnamed(i))));
        }
        let mut order: Vec<String> = labels.to_vec();
        for (_, label) in &known {
            if !order.contains(label) {
                order.push(label.clone());
            }
        }
        let moved: Vec<(String, i64, i64)> = known
            .iter()
            .filter_map(|(old, label)| {
                let now = order.iter().position(|l| l == label)? as i64;
                (now != *old).then(|| (label.clone(), *old, now))
            })
            .collect();
        let mut games = 0;
        if !moved.is_empty() {
            // One statement, so that no number is taken twice on the way.
            let cases: String = moved
                .iter()
                .map(|(_, old, now)| format!(" WHEN {old} THEN {now}"))
                .collect();
            let olds: Vec<String> = moved.iter().map(|(_, old, _)| old.to_string()).collect();
            let sql = format!(
                "UPDATE games SET variant = CASE variant{cases} ELSE variant END WHERE variant IN ({})",
                olds.join(", ")
            );
            games = sqlx::query(&sql).execute(&mut *tx).await?.rows_affected();
        }
        let wanted: Vec<(i64, String)> = (0..).zip(order).collect();
        if stored != wanted {
            sqlx::query("DELETE FROM variant_order")
                .execute(&mut *tx)
                .await?;
            for (i, label) in &wanted {
                sqlx::query("INSERT INTO variant_order (idx, label) VALUES ($1, $2)")
                    .bind(i)
                    .bind(label)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(Renumbered { moved, games })
    }

    /// The variants' labels by number, as the last start numbered them:
    /// the ladder file's, then those it no longer has.
    pub async fn variant_labels(&self) -> Result<Vec<String>, DbError> {
        let rows: Vec<(String,)> = sqlx::query_as("SELECT label FROM variant_order ORDER BY idx")
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(|(l,)| l).collect())
    }
}
