//! Events on the ladder (issue 52, item 4; docs/ladder.md "Events"): a
//! fourth `impl Db`. An event is a Swiss among the versions entered when
//! the organiser started it (`arena serve --start-swiss`); each round is
//! stored as it was paired (`event_rounds`) with its games in the queue
//! (`games.event_id`, `games.event_game`: the game's place in the Swiss;
//! a seat-swap group's later games play its first's opening,
//! `games.opening_of`), and the event ends `finished`, or `cancelled`
//! when an entrant left the ladder (migration 0009).

use super::{now, seats_text, Db, DbError};
use sqlx::Row;

/// Where an event is (`events.status`; the migration's `CHECK` holds the
/// same words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventStatus {
    /// Playing its rounds.
    Running,
    /// Its last round is committed.
    Finished,
    /// One of its entrants left the ladder before its end.
    Cancelled,
}

impl EventStatus {
    pub const ALL: [EventStatus; 3] = [
        EventStatus::Running,
        EventStatus::Finished,
        EventStatus::Cancelled,
    ];

    /// The word the store and the API use.
    pub fn as_str(self) -> &'static str {
        match self {
            EventStatus::Running => "running",
            EventStatus::Finished => "finished",
            EventStatus::Cancelled => "cancelled",
        }
    }

    /// The status a stored word names.
    pub fn from_word(word: &str) -> Result<EventStatus, DbError> {
        EventStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == word)
            .ok_or_else(|| DbError::Corrupt(format!("events.status is `{word}`")))
    }
}

impl std::fmt::Display for EventStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An event as the store has it, with its entrants' ladder names.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Event {
    pub id: i64,
    pub name: String,
    /// `swiss` (the only format so far).
    pub format: String,
    pub status: EventStatus,
    pub rounds: i64,
    pub games_per_pairing: i64,
    /// The seed of its initial order (stored as the bits of a `u64`); a
    /// string of digits in JSON, as a row's seed (docs/ladder.md: a 64-bit
    /// seed is past what JavaScript's numbers hold).
    #[serde(serialize_with = "digits")]
    pub seed: u64,
    /// The entrants' version ids, in the order the Swiss numbers them.
    #[serde(skip)]
    pub entrant_ids: Vec<i64>,
    /// Their ladder names (`BOT@N`), in the same order.
    pub entrants: Vec<String>,
    /// Why it was cancelled; empty otherwise.
    pub detail: String,
    pub created_at: String,
    pub finished_at: Option<String>,
}

/// `n` as a JSON string of its digits.
fn digits<S: serde::Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(n)
}

/// What an organiser starts: a Swiss among the entered versions.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSpec {
    pub name: String,
    pub rounds: i64,
    pub games_per_pairing: i64,
    pub seed: u64,
}

/// A round as stored: its pairing (JSON) and when it was paired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRound {
    pub round: i64,
    pub pairing: String,
    pub paired_at: String,
}

/// One of an event's games: its ladder id, its place in the Swiss, its
/// state, and, once done, when it finished and its row (JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventGame {
    pub id: i64,
    pub event_game: String,
    pub state: String,
    pub finished_at: Option<String>,
    pub row_json: Option<String>,
}

/// A game of a round to queue: its place in the Swiss, variant, seats
/// (version ids) and the place of the game whose opening it plays (the
/// first of its seat-swap group), if not its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundGame {
    pub event_game: String,
    pub variant: usize,
    pub seats: Vec<i64>,
    pub opening_of: Option<String>,
}

const EVENT_COLUMNS: &str = "id, name, format, status, rounds, games_per_pairing, seed, entrants, \
     detail, created_at, finished_at";

impl Db {
    /// An event from a row of [`EVENT_COLUMNS`], its entrants named.
    async fn event_of(&self, r: &sqlx::any::AnyRow) -> Result<Event, DbError> {
        let status: String = r.try_get("status")?;
        let entrants: String = r.try_get("entrants")?;
        let ids: Vec<i64> = entrants
            .split(',')
            .map(|x| {
                x.parse()
                    .map_err(|_| DbError::Corrupt(format!("events.entrants is `{entrants}`")))
            })
            .collect::<Result<_, _>>()?;
        let mut names = Vec::with_capacity(ids.len());
        for id in &ids {
            let name: Option<(String, i64)> = sqlx::query_as(
                "SELECT b.name, v.number FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = $1",
            )
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
            let (bot, n) =
                name.ok_or_else(|| DbError::Corrupt(format!("event entrant {id} is no version")))?;
            names.push(super::player_name(&bot, n));
        }
        let seed: i64 = r.try_get("seed")?;
        Ok(Event {
            id: r.try_get("id")?,
            name: r.try_get("name")?,
            format: r.try_get("format")?,
            status: EventStatus::from_word(&status)?,
            rounds: r.try_get("rounds")?,
            games_per_pairing: r.try_get("games_per_pairing")?,
            seed: seed as u64,
            entrant_ids: ids,
            entrants: names,
            detail: r.try_get("detail")?,
            created_at: r.try_get("created_at")?,
            finished_at: r.try_get("finished_at")?,
        })
    }

    /// Starts event `spec` among the versions entered now (at least two,
    /// in the order of their ids). One transaction. Errors: a name taken
    /// ([`DbError::Conflict`]), fewer than two versions entered.
    pub async fn start_event(&self, spec: &EventSpec) -> Result<Event, DbError> {
        let mut tx = self.begin_write().await?;
        let taken: Option<(i64,)> = sqlx::query_as("SELECT id FROM events WHERE name = $1")
            .bind(&spec.name)
            .fetch_optional(&mut *tx)
            .await?;
        if taken.is_some() {
            return Err(DbError::Conflict(format!(
                "an event named `{}` exists already: give another name",
                spec.name
            )));
        }
        let names: Vec<(String,)> = sqlx::query_as("SELECT name FROM events")
            .fetch_all(&mut *tx)
            .await?;
        if let Some(other) = super::look_alike(&spec.name, names.iter().map(|(n,)| n.as_str())) {
            return Err(DbError::Conflict(format!(
                "an event named `{other}` exists already, and `{}` looks like it ({}): give another name",
                spec.name,
                super::LOOK_ALIKE
            )));
        }
        let ids: Vec<(i64,)> =
            sqlx::query_as("SELECT id FROM versions WHERE status = 'entered' ORDER BY id")
                .fetch_all(&mut *tx)
                .await?;
        if ids.len() < 2 {
            return Err(DbError::Conflict(format!(
                "a Swiss needs at least 2 entered versions; the ladder has {}",
                ids.len()
            )));
        }
        let entrants = seats_text(&ids.iter().map(|(i,)| *i).collect::<Vec<_>>());
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO events (name, format, status, rounds, games_per_pairing, seed, entrants, created_at) \
             VALUES ($1, 'swiss', 'running', $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(&spec.name)
        .bind(spec.rounds)
        .bind(spec.games_per_pairing)
        .bind(spec.seed as i64)
        .bind(&entrants)
        .bind(now())
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        self.event(id)
            .await?
            .ok_or_else(|| DbError::Conflict(format!("event {id} vanished")))
    }

    /// Every event, newest first (at most `limit`); only the running ones
    /// when `running`.
    pub async fn events(&self, running: bool, limit: i64) -> Result<Vec<Event>, DbError> {
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE ($1 = 0 OR status = 'running') ORDER BY id DESC LIMIT $2"
        );
        let rows = sqlx::query(&sql)
            .bind(i64::from(running))
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.push(self.event_of(r).await?);
        }
        Ok(out)
    }

    /// Event `id`.
    pub async fn event(&self, id: i64) -> Result<Option<Event>, DbError> {
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE id = $1");
        let r = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        match r {
            Some(r) => Ok(Some(self.event_of(&r).await?)),
            None => Ok(None),
        }
    }

    /// The event named `name`.
    pub async fn event_named(&self, name: &str) -> Result<Option<Event>, DbError> {
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE name = $1");
        let r = sqlx::query(&sql)
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        match r {
            Some(r) => Ok(Some(self.event_of(&r).await?)),
            None => Ok(None),
        }
    }

    /// Event `id`'s rounds as stored, in order.
    pub async fn event_rounds(&self, id: i64) -> Result<Vec<StoredRound>, DbError> {
        let rows: Vec<(i64, String, String)> = sqlx::query_as(
            "SELECT round, pairing, paired_at FROM event_rounds WHERE event_id = $1 ORDER BY round",
        )
        .bind(id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(round, pairing, paired_at)| StoredRound {
                round,
                pairing,
                paired_at,
            })
            .collect())
    }

    /// Event `id`'s games, in the order they were queued.
    pub async fn event_games(&self, id: i64) -> Result<Vec<EventGame>, DbError> {
        let rows = sqlx::query(
            "SELECT id, event_game, state, finished_at, row_json FROM games \
             WHERE event_id = $1 ORDER BY id",
        )
        .bind(id)
        .fetch_all(self.write_pool())
        .await?;
        rows.iter()
            .map(|r| {
                let place: Option<String> = r.try_get("event_game")?;
                Ok(EventGame {
                    id: r.try_get("id")?,
                    event_game: place.unwrap_or_default(),
                    state: r.try_get("state")?,
                    finished_at: r.try_get("finished_at")?,
                    row_json: r.try_get("row_json")?,
                })
            })
            .collect()
    }

    /// Event `id`'s games done so far.
    pub async fn event_games_done(&self, id: i64) -> Result<i64, DbError> {
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM games WHERE event_id = $1 AND state = 'done'")
                .bind(id)
                .fetch_one(self.write_pool())
                .await?;
        Ok(n)
    }

    /// Queues round `round` of running event `id`, paired as `pairing`
    /// (JSON), with its games `games`: the round stored and its games
    /// pending, in one transaction. False, and nothing changed, when the
    /// round is stored already or the event no longer runs. An event's
    /// round is queued whole, past the ladder's `max_games` (a round cut
    /// short could never end).
    pub async fn queue_event_round(
        &self,
        id: i64,
        round: i64,
        pairing: &str,
        games: &[RoundGame],
    ) -> Result<bool, DbError> {
        let mut tx = self.begin_write().await?;
        let sql = format!(
            "SELECT status FROM events WHERE id = $1{}",
            self.backend().for_update()
        );
        let status: Option<(String,)> = sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        let stored: Option<(i64,)> =
            sqlx::query_as("SELECT round FROM event_rounds WHERE event_id = $1 AND round = $2")
                .bind(id)
                .bind(round)
                .fetch_optional(&mut *tx)
                .await?;
        if status.is_none_or(|(s,)| s != "running") || stored.is_some() {
            return Ok(false);
        }
        let t = now();
        sqlx::query(
            "INSERT INTO event_rounds (event_id, round, pairing, paired_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(id)
        .bind(round)
        .bind(pairing)
        .bind(&t)
        .execute(&mut *tx)
        .await?;
        let mut firsts: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
        for g in games {
            let opening = match &g.opening_of {
                Some(first) => Some(*firsts.get(first.as_str()).ok_or_else(|| {
                    DbError::Conflict(format!(
                        "{} plays the opening of {first}, not queued before it",
                        g.event_game
                    ))
                })?),
                None => None,
            };
            let (gid,): (i64,) = sqlx::query_as(
                "INSERT INTO games (state, variant, seats, created_at, event_id, event_game, opening_of) \
                 VALUES ('pending', $1, $2, $3, $4, $5, $6) RETURNING id",
            )
            .bind(g.variant as i64)
            .bind(seats_text(&g.seats))
            .bind(&t)
            .bind(id)
            .bind(&g.event_game)
            .bind(opening)
            .fetch_one(&mut *tx)
            .await?;
            firsts.insert(g.event_game.as_str(), gid);
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Ends running event `id` with `status` (and `detail`, why), its
    /// games still pending dropped. False if it was not running.
    pub async fn end_event(
        &self,
        id: i64,
        status: EventStatus,
        detail: &str,
    ) -> Result<bool, DbError> {
        let mut tx = self.begin_write().await?;
        let r = sqlx::query(
            "UPDATE events SET status = $2, detail = $3, finished_at = $4 \
             WHERE id = $1 AND status = 'running'",
        )
        .bind(id)
        .bind(status.as_str())
        .bind(detail)
        .bind(now())
        .execute(&mut *tx)
        .await?;
        if r.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query("DELETE FROM games WHERE event_id = $1 AND state = 'pending'")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The running events one of whose entrants is no longer entered, as
    /// (event, that entrant's ladder name).
    pub async fn orphan_events(&self) -> Result<Vec<(i64, String)>, DbError> {
        let mut out = Vec::new();
        let running = self.events(true, i64::MAX).await?;
        if running.is_empty() {
            return Ok(out);
        }
        let entered: Vec<(i64,)> =
            sqlx::query_as("SELECT id FROM versions WHERE status = 'entered'")
                .fetch_all(self.pool())
                .await?;
        for e in running {
            let gone = e
                .entrant_ids
                .iter()
                .position(|v| !entered.iter().any(|(x,)| x == v));
            if let Some(i) = gone {
                out.push((e.id, e.entrants[i].clone()));
            }
        }
        Ok(out)
    }
}
