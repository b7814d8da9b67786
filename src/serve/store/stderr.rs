//! Each bot's stderr per game (issue 48), kept for its owner: a third
//! `impl Db`. One row per game and seat that wrote something (table
//! `game_stderr`, migration 0008), its lines by turn compressed
//! ([`crate::results::stderr::encode`]); read one seat at a time; deleted
//! with the games' records ([`Db::delete_stderr_before`]).

use super::prune::PerGame;
use super::{Db, DbError};
use crate::results::stderr::{self, SeatStderr};

/// What the store says of one seat's stderr without reading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StderrSummary {
    pub seat: usize,
    /// Bytes of text kept.
    pub bytes: u64,
    /// Bytes left out past the cap.
    pub truncated_bytes: u64,
}

impl Db {
    /// Keeps the stderr of game `id`'s seats (those given; an empty one is
    /// not stored). A seat stored already is replaced (a game played
    /// again after a crash keeps the last play's).
    pub async fn keep_stderr(&self, id: i64, seats: &[SeatStderr]) -> Result<(), DbError> {
        for s in seats.iter().filter(|s| !s.is_empty()) {
            let body = stderr::encode(s)
                .map_err(|e| DbError::Conflict(format!("the stderr of game {id}: {e}")))?;
            let q = sqlx::query(
                "INSERT INTO game_stderr (game_id, seat, bytes, truncated_bytes, body) \
                 VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (game_id, seat) DO UPDATE SET bytes = excluded.bytes, \
                 truncated_bytes = excluded.truncated_bytes, body = excluded.body",
            )
            .bind(id)
            .bind(s.seat as i64)
            .bind(s.kept_bytes() as i64)
            .bind(s.truncated_bytes as i64)
            .bind(body);
            match &self.games {
                Some(c) => q.execute(&mut *c.lock().await).await?,
                None => q.execute(&self.write).await?,
            };
        }
        Ok(())
    }

    /// The stderr of seat `seat` of game `id`, if it wrote any.
    pub async fn stderr_of(&self, id: i64, seat: usize) -> Result<Option<SeatStderr>, DbError> {
        let r: Option<(Vec<u8>,)> =
            sqlx::query_as("SELECT body FROM game_stderr WHERE game_id = $1 AND seat = $2")
                .bind(id)
                .bind(seat as i64)
                .fetch_optional(&self.pool)
                .await?;
        r.map(|(b,)| {
            stderr::decode(&b)
                .map_err(|e| DbError::Corrupt(format!("the stderr of game {id} seat {seat}: {e}")))
        })
        .transpose()
    }

    /// The seats of game `id` whose stderr is kept, with its sizes.
    pub async fn stderr_seats(&self, id: i64) -> Result<Vec<StderrSummary>, DbError> {
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT seat, bytes, truncated_bytes FROM game_stderr WHERE game_id = $1 ORDER BY seat",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(seat, bytes, truncated)| StderrSummary {
                seat: seat as usize,
                bytes: bytes as u64,
                truncated_bytes: truncated as u64,
            })
            .collect())
    }

    /// Deletes the stderr of every game that finished before `finished_at`
    /// (a time as [`super::now`] writes it): the pruning of old records
    /// reaches the stderr through this. Returns the rows deleted.
    pub async fn delete_stderr_before(&self, finished_at: &str) -> Result<u64, DbError> {
        self.delete_per_game_before(PerGame::Stderr, finished_at)
            .await
    }
}
