//! Tests between versions (issue 48, item 1; docs/ladder.md "Tests
//! between versions"): a third `impl Db`. A test is asked for with an
//! upload (`waiting`), starts when its version is entered beside the
//! version it would replace (`running`), gets its games as seat-swapped
//! pairs in the queue (`games.test_id`, the second of a pair playing the
//! first's opening: `games.opening_of`), keeps its last evaluation for
//! the pages, and ends `h1`, `h0`, `budget` or `cancelled`, the old
//! version retired, kept, or left to its owner (migration 0007).

use super::{now, seats_text, Db, DbError};
use sqlx::Row;

/// Where a test is (`version_tests.status`; the migration's `CHECK`
/// holds the same words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    /// Asked for with an upload; starts when the version is entered.
    Waiting,
    /// Playing its pairs.
    Running,
    /// The new version is `elo1` stronger (the LLR reached its upper
    /// bound).
    H1,
    /// It is not (the lower bound).
    H0,
    /// Its budget of games was played with no decision.
    Budget,
    /// One of its versions left the ladder before a decision.
    Cancelled,
}

impl TestStatus {
    pub const ALL: [TestStatus; 6] = [
        TestStatus::Waiting,
        TestStatus::Running,
        TestStatus::H1,
        TestStatus::H0,
        TestStatus::Budget,
        TestStatus::Cancelled,
    ];

    /// The word the store and the API use.
    pub fn as_str(self) -> &'static str {
        match self {
            TestStatus::Waiting => "waiting",
            TestStatus::Running => "running",
            TestStatus::H1 => "h1",
            TestStatus::H0 => "h0",
            TestStatus::Budget => "budget",
            TestStatus::Cancelled => "cancelled",
        }
    }

    /// The status a stored word names.
    pub fn from_word(word: &str) -> Result<TestStatus, DbError> {
        TestStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == word)
            .ok_or_else(|| DbError::Corrupt(format!("version_tests.status is `{word}`")))
    }

    /// Whether the test is over.
    pub fn is_final(self) -> bool {
        !matches!(self, TestStatus::Waiting | TestStatus::Running)
    }
}

impl std::fmt::Display for TestStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an upload asks of its test: the SPRT's bounds and error rates,
/// its budget, and what becomes of the old version.
#[derive(Clone, Debug, PartialEq)]
pub struct TestSpec {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub max_games: i64,
    /// `retire-on-h1`, `keep-both` or `owner`.
    pub outcome: String,
}

/// A test as the store has it, with its versions' names.
#[derive(Clone, Debug, serde::Serialize)]
pub struct VersionTest {
    pub id: i64,
    pub bot: String,
    pub owner: String,
    /// The new version's number and id.
    pub new_version: i64,
    #[serde(skip)]
    pub new_version_id: i64,
    /// The old version's (`None` while waiting).
    pub old_version: Option<i64>,
    #[serde(skip)]
    pub old_version_id: Option<i64>,
    pub status: TestStatus,
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub max_games: i64,
    pub outcome: String,
    /// `retired`, `kept` or `undecided` once over; empty before.
    pub old_fate: String,
    pub games_queued: i64,
    /// The last evaluation: games of the two versions in the test,
    /// pentanomial counts from the new version's side `[LL, LD, WL+DD,
    /// WD, WW]`, its wins, draws and losses, the LLR, and the
    /// pentanomial Elo with its 95% half-width.
    pub games: i64,
    pub penta: [i64; 5],
    pub wins: i64,
    pub draws: i64,
    pub losses: i64,
    pub llr: f64,
    pub elo: Option<f64>,
    pub elo_err: Option<f64>,
    /// The last game counted (`game-ID`): at a verdict, the one that made
    /// the LLR reach its bound.
    pub last_game: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
}

impl VersionTest {
    /// The new version's ladder name (`BOT@N`).
    pub fn new_player(&self) -> String {
        super::player_name(&self.bot, self.new_version)
    }

    /// The old version's ladder name, once the test runs.
    pub fn old_player(&self) -> Option<String> {
        self.old_version.map(|n| super::player_name(&self.bot, n))
    }
}

/// A test's evaluation, as [`Db::record_test`] keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct TestState {
    pub games: i64,
    pub penta: [i64; 5],
    pub wins: i64,
    pub draws: i64,
    pub losses: i64,
    pub llr: f64,
    pub elo: Option<f64>,
    pub elo_err: Option<f64>,
    pub last_game: Option<String>,
}

/// Which tests a listing shows: `None` keeps all.
#[derive(Clone, Debug, Default)]
pub struct TestFilter {
    pub owner: Option<String>,
    pub bot: Option<String>,
    pub statuses: Option<Vec<TestStatus>>,
}

const TEST_COLUMNS: &str = "t.id AS id, b.name AS bot, o.name AS owner, nv.number AS new_version, \
     t.new_version_id AS new_version_id, ov.number AS old_version, t.old_version_id AS old_version_id, \
     t.status AS status, t.elo0 AS elo0, t.elo1 AS elo1, t.alpha AS alpha, t.beta AS beta, \
     t.max_games AS max_games, t.outcome AS outcome, t.old_fate AS old_fate, \
     t.games_queued AS games_queued, t.games AS games, t.penta AS penta, t.wins AS wins, \
     t.draws AS draws, t.losses AS losses, t.llr AS llr, t.elo AS elo, t.elo_err AS elo_err, t.last_game AS last_game, \
     t.created_at AS created_at, t.started_at AS started_at, t.finished_at AS finished_at";

const TEST_FROM: &str = "FROM version_tests t JOIN versions nv ON nv.id = t.new_version_id \
     JOIN bots b ON b.id = nv.bot_id JOIN owners o ON o.id = b.owner_id \
     LEFT JOIN versions ov ON ov.id = t.old_version_id";

/// A test from a row of [`TEST_COLUMNS`], read by name.
fn test_of(r: &sqlx::any::AnyRow) -> Result<VersionTest, DbError> {
    let status: String = r.try_get("status")?;
    let penta: String = r.try_get("penta")?;
    let mut p = [0i64; 5];
    let parts: Vec<i64> = penta.split(',').filter_map(|x| x.parse().ok()).collect();
    if parts.len() != 5 {
        return Err(DbError::Corrupt(format!(
            "version_tests.penta is `{penta}`, not five counts"
        )));
    }
    p.copy_from_slice(&parts);
    Ok(VersionTest {
        id: r.try_get("id")?,
        bot: r.try_get("bot")?,
        owner: r.try_get("owner")?,
        new_version: r.try_get("new_version")?,
        new_version_id: r.try_get("new_version_id")?,
        old_version: r.try_get("old_version")?,
        old_version_id: r.try_get("old_version_id")?,
        status: TestStatus::from_word(&status)?,
        elo0: r.try_get("elo0")?,
        elo1: r.try_get("elo1")?,
        alpha: r.try_get("alpha")?,
        beta: r.try_get("beta")?,
        max_games: r.try_get("max_games")?,
        outcome: r.try_get("outcome")?,
        old_fate: r.try_get("old_fate")?,
        games_queued: r.try_get("games_queued")?,
        games: r.try_get("games")?,
        penta: p,
        wins: r.try_get("wins")?,
        draws: r.try_get("draws")?,
        losses: r.try_get("losses")?,
        llr: r.try_get("llr")?,
        elo: r.try_get("elo")?,
        elo_err: r.try_get("elo_err")?,
        last_game: r.try_get("last_game")?,
        created_at: r.try_get("created_at")?,
        started_at: r.try_get("started_at")?,
        finished_at: r.try_get("finished_at")?,
    })
}

/// A running test as the scheduler sees it: its versions, the games it
/// has queued and its budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningTest {
    pub id: i64,
    pub new_version_id: i64,
    pub old_version_id: i64,
    pub games_queued: i64,
    pub max_games: i64,
}

/// What [`Db::enter_version`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entering {
    /// Entered, replacing the bot's other versions.
    Alone,
    /// Entered beside the bot's version `old`, test `test` started.
    Beside { test: i64, old: i64 },
    /// Not entered: its owner withdrew it while it was checked.
    Withdrawn,
}

impl Db {
    /// Asks for a test of version `version` (just uploaded): `waiting`
    /// until it is entered ([`Db::enter_version`]).
    pub async fn ask_test(&self, version: i64, spec: &TestSpec) -> Result<i64, DbError> {
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO version_tests (new_version_id, status, elo0, elo1, alpha, beta, max_games, outcome, created_at) \
             VALUES ($1, 'waiting', $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(version)
        .bind(spec.elo0)
        .bind(spec.elo1)
        .bind(spec.alpha)
        .bind(spec.beta)
        .bind(spec.max_games)
        .bind(&spec.outcome)
        .bind(now())
        .fetch_one(self.pool())
        .await?;
        Ok(id)
    }

    /// Enters version `id` (its check passed, `report`): beside the
    /// bot's latest entered version, with its test started, when a test
    /// was asked for and there is such a version; otherwise replacing the
    /// bot's other versions (retired), its test dropped. One transaction.
    /// Returns the test started, as (test id, old version's number), or
    /// that the version was withdrawn by its owner while it was checked
    /// ([`Db::retire`]): then nothing changes.
    pub async fn enter_version(&self, id: i64, report: &str) -> Result<Entering, DbError> {
        let mut tx = self.begin_write().await?;
        let t = now();
        // The version's row locked, and still being checked.
        let checking = sqlx::query(
            "UPDATE versions SET updated_at = $2 WHERE id = $1 AND status = 'checking'",
        )
        .bind(id)
        .bind(&t)
        .execute(&mut *tx)
        .await?;
        if checking.rows_affected() == 0 {
            return Ok(Entering::Withdrawn);
        }
        let asked: Option<(i64,)> = sqlx::query_as(
            "SELECT id FROM version_tests WHERE new_version_id = $1 AND status = 'waiting'",
        )
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let old: Option<(i64, i64)> = sqlx::query_as(
            "SELECT id, number FROM versions WHERE bot_id = (SELECT bot_id FROM versions WHERE id = $1) \
             AND id <> $1 AND status = 'entered' ORDER BY number DESC LIMIT 1",
        )
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let started = match (asked, old) {
            (Some((test,)), Some((old_id, old_number))) => {
                sqlx::query(
                    "UPDATE version_tests SET status = 'running', old_version_id = $2, started_at = $3 WHERE id = $1",
                )
                .bind(test)
                .bind(old_id)
                .bind(&t)
                .execute(&mut *tx)
                .await?;
                Some((test, old_number))
            }
            (asked, _) => {
                if let Some((test,)) = asked {
                    sqlx::query("DELETE FROM version_tests WHERE id = $1")
                        .bind(test)
                        .execute(&mut *tx)
                        .await?;
                }
                sqlx::query(
                    "UPDATE versions SET status = 'retired', detail = 'replaced by a newer version', updated_at = $2 \
                     WHERE bot_id = (SELECT bot_id FROM versions WHERE id = $1) AND id <> $1 AND status = 'entered'",
                )
                .bind(id)
                .bind(&t)
                .execute(&mut *tx)
                .await?;
                None
            }
        };
        let detail = match started {
            Some((test, old)) => format!("entered beside version {old}: test {test} runs"),
            None => String::new(),
        };
        sqlx::query(
            "UPDATE versions SET status = 'entered', detail = $2, report = $3, updated_at = $4 WHERE id = $1",
        )
        .bind(id)
        .bind(&detail)
        .bind(report)
        .bind(&t)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(match started {
            Some((test, old)) => Entering::Beside { test, old },
            None => Entering::Alone,
        })
    }

    /// The tests `only` keeps, newest first, at most `limit`.
    pub async fn version_tests(
        &self,
        only: &TestFilter,
        limit: i64,
    ) -> Result<Vec<VersionTest>, DbError> {
        let statuses = only.statuses.as_ref().map(|s| {
            s.iter()
                .map(|x| format!("'{}'", x.as_str()))
                .collect::<Vec<_>>()
        });
        let mut sql = format!(
            "SELECT {TEST_COLUMNS} {TEST_FROM} WHERE t.status <> 'waiting' \
             AND ($1 IS NULL OR o.name = $1) AND ($2 IS NULL OR b.name = $2)"
        );
        // The statuses are this file's own words, written as such.
        if let Some(list) = statuses {
            match list.is_empty() {
                true => sql.push_str(" AND 1 = 0"),
                false => sql.push_str(&format!(" AND t.status IN ({})", list.join(", "))),
            }
        }
        sql.push_str(" ORDER BY t.id DESC LIMIT $3");
        let rows = sqlx::query(&sql)
            .bind(only.owner.as_deref())
            .bind(only.bot.as_deref())
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(test_of).collect()
    }

    /// Test `id`, waiting or not.
    pub async fn version_test(&self, id: i64) -> Result<Option<VersionTest>, DbError> {
        let sql = format!("SELECT {TEST_COLUMNS} {TEST_FROM} WHERE t.id = $1");
        let r = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        r.as_ref().map(test_of).transpose()
    }

    /// The running tests, oldest first, as the scheduler sees them.
    pub async fn running_tests(&self) -> Result<Vec<RunningTest>, DbError> {
        let rows: Vec<(i64, i64, Option<i64>, i64, i64)> = sqlx::query_as(
            "SELECT id, new_version_id, old_version_id, games_queued, max_games FROM version_tests \
             WHERE status = 'running' ORDER BY id",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, n, o, q, m)| {
                o.map(|o| RunningTest {
                    id,
                    new_version_id: n,
                    old_version_id: o,
                    games_queued: q,
                    max_games: m,
                })
            })
            .collect())
    }

    /// The tests' games pending or being played, by test.
    pub async fn test_games_in_flight(
        &self,
    ) -> Result<std::collections::HashMap<i64, i64>, DbError> {
        let rows: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT test_id, COUNT(*) FROM games WHERE state IN ('pending', 'playing') \
             AND test_id IS NOT NULL GROUP BY test_id",
        )
        .fetch_all(self.write_pool())
        .await?;
        Ok(rows.into_iter().collect())
    }

    /// Queues `pairs` (test, variant, new version, old version): two
    /// pending games each, the new version first in the first and second
    /// in the second, which plays the first's opening. Within the
    /// ladder's `max_games`, as the other games. One transaction; returns
    /// the games queued.
    pub async fn queue_test_pairs(
        &self,
        pairs: &[(i64, usize, i64, i64)],
    ) -> Result<usize, DbError> {
        let mut tx = self.begin_write().await?;
        let mut room = pairs.len();
        if let Some(n) = self.max_games() {
            let (stored,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM games")
                .fetch_one(&mut *tx)
                .await?;
            room = room.min(usize::try_from((n - stored) / 2).unwrap_or(0));
        }
        let t = now();
        for &(test, variant, new, old) in pairs.iter().take(room) {
            let (first,): (i64,) = sqlx::query_as(
                "INSERT INTO games (state, variant, seats, created_at, test_id) \
                 VALUES ('pending', $1, $2, $3, $4) RETURNING id",
            )
            .bind(variant as i64)
            .bind(seats_text(&[new, old]))
            .bind(&t)
            .bind(test)
            .fetch_one(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO games (state, variant, seats, created_at, test_id, opening_of) \
                 VALUES ('pending', $1, $2, $3, $4, $5)",
            )
            .bind(variant as i64)
            .bind(seats_text(&[old, new]))
            .bind(&t)
            .bind(test)
            .bind(first)
            .execute(&mut *tx)
            .await?;
            sqlx::query("UPDATE version_tests SET games_queued = games_queued + 2 WHERE id = $1")
                .bind(test)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(2 * room)
    }

    /// Test `id`'s finished games as (place in the order games finished,
    /// row JSON), in that order, past place `after` (all when `None`): a
    /// reader going on from its last game misses none ([`DoneKey`]).
    ///
    /// [`DoneKey`]: super::DoneKey
    pub async fn test_rows(
        &self,
        id: i64,
        after: Option<i64>,
    ) -> Result<Vec<(i64, String)>, DbError> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT done_seq, row_json FROM games WHERE test_id = $1 AND state = 'done' \
             AND row_json IS NOT NULL AND done_seq IS NOT NULL \
             AND ($2 IS NULL OR done_seq > $2) ORDER BY done_seq",
        )
        .bind(id)
        .bind(after)
        .fetch_all(self.pool())
        .await?;
        Ok(rows)
    }

    /// Keeps test `id`'s last evaluation.
    pub async fn record_test(&self, id: i64, s: &TestState) -> Result<(), DbError> {
        let penta = s
            .penta
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        // An absent Elo is written as the literal NULL, not bound: sqlx's
        // `Any` binds a missing f64 as a float4 NULL, and PostgreSQL then
        // keeps float4 for that parameter of the cached statement and
        // refuses the next call's 8-byte value ("incorrect binary data
        // format in bind parameter 9").
        let mut sql = String::from(
            "UPDATE version_tests SET games = $2, penta = $3, wins = $4, draws = $5, \
             losses = $6, llr = $7, last_game = $8",
        );
        let mut n = 8;
        for (column, value) in [("elo", s.elo), ("elo_err", s.elo_err)] {
            match value {
                Some(_) => {
                    n += 1;
                    sql.push_str(&format!(", {column} = ${n}"));
                }
                None => sql.push_str(&format!(", {column} = NULL")),
            }
        }
        sql.push_str(" WHERE id = $1");
        let mut q = sqlx::query(&sql)
            .bind(id)
            .bind(s.games)
            .bind(penta)
            .bind(s.wins)
            .bind(s.draws)
            .bind(s.losses)
            .bind(s.llr)
            .bind(s.last_game.as_deref());
        for v in [s.elo, s.elo_err].into_iter().flatten() {
            q = q.bind(v);
        }
        q.execute(self.pool()).await?;
        Ok(())
    }

    /// Ends running test `id` with `status`, the old version's fate
    /// `fate` (`retired`: it is retired, with `why`), and its games still
    /// pending dropped. One transaction; false if it was not running.
    pub async fn finish_test(
        &self,
        id: i64,
        status: TestStatus,
        fate: &str,
        why: &str,
    ) -> Result<bool, DbError> {
        let mut tx = self.begin_write().await?;
        let t = now();
        let r = sqlx::query(
            "UPDATE version_tests SET status = $2, old_fate = $3, finished_at = $4 \
             WHERE id = $1 AND status = 'running'",
        )
        .bind(id)
        .bind(status.as_str())
        .bind(fate)
        .bind(&t)
        .execute(&mut *tx)
        .await?;
        if r.rows_affected() == 0 {
            return Ok(false);
        }
        if fate == "retired" {
            retire_old(&mut tx, id, why, &t).await?;
        }
        tell_new_version(&mut tx, id, &t).await?;
        sqlx::query("DELETE FROM games WHERE test_id = $1 AND state = 'pending'")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The owner's decision at the end of test `id` whose old version's
    /// fate is `undecided`: `retire` it (with `why`) or keep it. False,
    /// and nothing changed, when there is nothing to decide.
    pub async fn decide_test(&self, id: i64, retire: bool, why: &str) -> Result<bool, DbError> {
        let mut tx = self.begin_write().await?;
        let t = now();
        let r = sqlx::query(
            "UPDATE version_tests SET old_fate = $2 WHERE id = $1 AND old_fate = 'undecided'",
        )
        .bind(id)
        .bind(if retire { "retired" } else { "kept" })
        .execute(&mut *tx)
        .await?;
        if r.rows_affected() == 0 {
            return Ok(false);
        }
        if retire {
            retire_old(&mut tx, id, why, &t).await?;
        }
        tell_new_version(&mut tx, id, &t).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Running tests one of whose versions is no longer entered:
    /// cancelled, their pending games dropped; waiting tests whose
    /// version was refused: dropped. Returns the tests cancelled.
    pub async fn cancel_orphan_tests(&self) -> Result<Vec<i64>, DbError> {
        let gone: Vec<(i64,)> = sqlx::query_as(
            "SELECT t.id FROM version_tests t JOIN versions nv ON nv.id = t.new_version_id \
             JOIN versions ov ON ov.id = t.old_version_id \
             WHERE t.status = 'running' AND (nv.status <> 'entered' OR ov.status <> 'entered')",
        )
        .fetch_all(self.pool())
        .await?;
        let mut out = Vec::new();
        for (id,) in gone {
            if self.finish_test(id, TestStatus::Cancelled, "", "").await? {
                out.push(id);
            }
        }
        sqlx::query(
            "DELETE FROM version_tests WHERE status = 'waiting' AND new_version_id IN \
             (SELECT id FROM versions WHERE status IN ('refused', 'retired'))",
        )
        .execute(self.pool())
        .await?;
        Ok(out)
    }
}

/// The new version of test `id`, still entered, told how its test ended
/// and what became of the old version (its detail said "test N runs").
async fn tell_new_version(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    id: i64,
    t: &str,
) -> Result<(), DbError> {
    let row: Option<(String, String, i64, i64)> = sqlx::query_as(
        "SELECT t.status, t.old_fate, ov.number, t.new_version_id FROM version_tests t \
         JOIN versions ov ON ov.id = t.old_version_id WHERE t.id = $1",
    )
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?;
    let Some((status, fate, old, new_id)) = row else {
        return Ok(());
    };
    let detail = match (status.as_str(), fate.as_str()) {
        ("cancelled", _) => format!("test {id} cancelled"),
        (_, "retired") => format!("test {id} ended {status}: version {old} retired"),
        (_, "undecided") => {
            format!(
                "test {id} ended {status}: entered beside version {old} until its owner decides"
            )
        }
        _ => format!("test {id} ended {status}: entered beside version {old}, which is kept"),
    };
    sqlx::query(
        "UPDATE versions SET detail = $2, updated_at = $3 WHERE id = $1 AND status = 'entered'",
    )
    .bind(new_id)
    .bind(&detail)
    .bind(t)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Retires test `id`'s old version, if still entered, saying `why`.
async fn retire_old(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    id: i64,
    why: &str,
    t: &str,
) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE versions SET status = 'retired', detail = $2, updated_at = $3 \
         WHERE status = 'entered' AND id = (SELECT old_version_id FROM version_tests WHERE id = $1)",
    )
    .bind(id)
    .bind(why)
    .bind(t)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
