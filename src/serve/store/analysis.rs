//! A game's analysis kept in the store (issue 51): a fourth `impl Db`.
//! One row per game analysed (table `game_analysis`, migration 0010): the
//! verdicts as JSON lines, who asked and when; deleted with the games'
//! records ([`Db::prune`]).

use super::{now, Db, DbError};
use crate::results::analysis;
use serde_json::Value;

impl Db {
    /// Keeps the analysis of game `id` (JSON lines), asked for by owner
    /// `owner`; an analysis kept already is replaced.
    pub async fn keep_analysis(&self, id: i64, owner: i64, body: &str) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO game_analysis (game_id, owner_id, made_at, body) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (game_id) DO UPDATE SET owner_id = excluded.owner_id, \
             made_at = excluded.made_at, body = excluded.body",
        )
        .bind(id)
        .bind(owner)
        .bind(now())
        .bind(body)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    /// When the analyses kept that owner `owner` asked for were made, from
    /// `since` (an RFC 3339 time, as [`now`] writes them) on, oldest
    /// first: the part of their hourly count that outlives a restart.
    pub async fn analyses_made_since(
        &self,
        owner: i64,
        since: &str,
    ) -> Result<Vec<String>, DbError> {
        let rows: Vec<(String,)> = sqlx::query_as(
            "SELECT made_at FROM game_analysis WHERE owner_id = $1 AND made_at >= $2 ORDER BY made_at",
        )
        .bind(owner)
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|(t,)| t).collect())
    }

    /// The analysis of game `id`, if it has one: its verdicts (a JSON
    /// array, [`crate::results::analysis::parse`] of the lines kept) and
    /// when it was made.
    pub async fn analysis_of(&self, id: i64) -> Result<Option<(Value, String)>, DbError> {
        let row: Option<(String, String)> =
            sqlx::query_as("SELECT body, made_at FROM game_analysis WHERE game_id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        row.map(|(body, made_at)| {
            let verdicts = analysis::parse(&body)
                .map_err(|e| DbError::Corrupt(format!("the analysis of game {id}: {e}")))?;
            Ok((verdicts, made_at))
        })
        .transpose()
    }
}
