//! The ladder's store: owners, bots and their versions, games (row and
//! record), uploads and the server's claim, in SQLite (a file, WAL mode)
//! or PostgreSQL, through sqlx's `Any` driver, with embedded migrations
//! (`migrations/sqlite/`, `migrations/postgres/`, number for number). The
//! queries are plain SQL with `$N` parameters, which both read; the few
//! words where the dialects differ come from [`Backend`].

pub mod analysis;
pub mod browse;
pub mod events;
pub mod finished;
pub mod grace;
pub mod history;
pub mod leases;
pub mod open;
pub mod prune;
pub mod quarantine;
pub mod stderr;
pub mod tokens;
pub mod uploads;
pub mod variant_order;
pub mod version_tests;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyPool, ConnectOptions, Connection, Executor};
use std::borrow::Cow;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
pub use tokens::{new_token, token_hash};

/// Seconds without a heartbeat after which a server on another host is
/// taken for dead, and its claim on the database may be taken over.
pub const CLAIM_STALE_SECONDS: i64 = 30;

/// How often a server refreshes its heartbeat (well within
/// [`CLAIM_STALE_SECONDS`]).
pub const HEARTBEAT_SECONDS: u64 = 5;

/// Which database the store is in: the few places where the SQL differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The backend of a database URL (`sqlite:` or `postgres://`), or why
    /// it is neither.
    pub fn of_url(url: &str) -> Result<Backend, String> {
        if url.starts_with("sqlite:") {
            // Without a file, each of the store's connections would open
            // a database of its own (a temporary or an in-memory one):
            // the tables one makes, the next lacks.
            match Db::sqlite_path(url) {
                Some(_) => Ok(Backend::Sqlite),
                None => Err(format!(
                    "`{url}` names no file: give sqlite:PATH (the file is created if missing), or postgres://USER:PASSWORD@HOST:PORT/DATABASE"
                )),
            }
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else {
            Err(format!(
                "`{url}` is not a database URL: give sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE"
            ))
        }
    }

    /// The row lock that a read-then-write needs on PostgreSQL; SQLite
    /// locks the whole database at `BEGIN IMMEDIATE` and has no such words.
    /// `FOR UPDATE SKIP LOCKED` on PostgreSQL: a claim takes rows no
    /// other claim holds; nothing on SQLite, where `BEGIN IMMEDIATE`
    /// already lets one writer in at a time.
    pub(super) fn skip_locked(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }

    pub(super) fn for_update(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE",
        }
    }

    /// The statement that makes game `$1` done, if `state_is` holds of
    /// it: finish time `$2`, row `$3`, record `$4`, and the next place in
    /// the order games finished (`done_seq`, migration 11), given under a
    /// lock held until the transaction commits, so places are given in
    /// the order games become visible. SQLite has one writer at a time;
    /// PostgreSQL takes the next number from the one row of `done_order`,
    /// whose row lock the next finisher waits for.
    pub(super) fn finish_game_sql(self, state_is: &str) -> String {
        let set = "SET state = 'done', finished_at = $2, row_json = $3, record = $4";
        match self {
            Backend::Sqlite => format!(
                "UPDATE games {set}, done_seq = (SELECT COALESCE(MAX(done_seq), 0) + 1 FROM games) \
                 WHERE id = $1 AND {state_is}"
            ),
            Backend::Postgres => format!(
                "WITH next AS (UPDATE done_order SET n = n + 1 RETURNING n) \
                 UPDATE games {set}, done_seq = (SELECT n FROM next) WHERE id = $1 AND {state_is}"
            ),
        }
    }

    /// The database's clock, in unix seconds (one clock for every server
    /// of a database, whatever their hosts' clocks say).
    fn epoch(self) -> &'static str {
        match self {
            Backend::Sqlite => "CAST(strftime('%s', 'now') AS INTEGER)",
            Backend::Postgres => "CAST(EXTRACT(EPOCH FROM now()) AS BIGINT)",
        }
    }
}

/// An error of the store, with what was being done.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("database {url}: {source}")]
    Open { url: String, source: sqlx::Error },
    /// The first connection to a PostgreSQL server failed: where, and why
    /// (the URL without its password).
    #[error("could not connect to PostgreSQL at {at}: {why} (the store {url}): is PostgreSQL running there, and is that its address?")]
    Connect {
        at: String,
        why: String,
        url: String,
    },
    /// A database that holds another application's tables.
    #[error("{store}: holds tables that are not an arena ladder's ({tables}): it is another application's database, and this server adds no tables to it; give --db a new file or an empty database (or this ladder's own store)")]
    Foreign { store: String, tables: String },
    /// A SQLite file that is not a database, or a damaged one.
    #[error("{path}: not a readable ladder store ({why}): it is not opened. The server keeps no copies by itself: `arena serve LADDER.toml --backup FILE` writes one where FILE says. To restore one, stop every server on this store, move {path} aside (with its -wal and -shm files, if any) and copy the backup to {path}; without a backup, moving it aside starts an empty ladder")]
    Damaged { path: String, why: String },
    /// The store's folder, or its file, cannot be written by this user.
    #[error("{0}")]
    NotWritable(String),
    #[error("{0}")]
    BadUrl(String),
    #[error(
        "this server's claim on the database was taken over (its heartbeat was over {CLAIM_STALE_SECONDS} s old): stopping"
    )]
    Lost,
    #[error("database migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database: {0}")]
    Query(#[from] sqlx::Error),
    #[error(
        "another server already serves this database: pid {pid} on {host}, at http://{address} since {since}; stop it first (one server per database; a server on another host counts as stopped {CLAIM_STALE_SECONDS} s after its last heartbeat; `--pages-only` serves the pages beside it)"
    )]
    Taken {
        pid: i64,
        host: String,
        address: String,
        since: String,
    },
    #[error("{0}")]
    Conflict(String),
    /// A row holds what no version of the server writes.
    #[error("the store holds a row this server does not read: {0}")]
    Corrupt(String),
}

/// The migrations, by number, description and file name: one list, read
/// from `migrations/sqlite/` and `migrations/postgres/` alike.
macro_rules! migrations {
    ($dialect:literal) => {
        migrations!(@ $dialect;
            1, "ladder", "0001_ladder.sql";
            2, "server heartbeat", "0002_server_heartbeat.sql";
            3, "workers", "0003_workers.sql";
            4, "games by finish", "0004_games_by_finish.sql";
            5, "quarantine", "0005_quarantine.sql";
            6, "closed sets", "0006_closed_sets.sql";
            7, "version tests", "0007_version_tests.sql";
            8, "game stderr", "0008_game_stderr.sql";
            9, "events", "0009_events.sql";
            10, "game analysis", "0010_game_analysis.sql";
            11, "finish order", "0011_finish_order.sql";
            12, "variant order", "0012_variant_order.sql";
            13, "lease grant time", "0013_lease_grant_time.sql";
            14, "rating history", "0014_rating_history.sql";
            15, "played under", "0015_played_under.sql";
        )
    };
    (@ $dialect:literal; $($version:literal, $description:literal, $file:literal;)+) => {
        vec![$((
            $version,
            $description,
            include_str!(concat!("../../../migrations/", $dialect, "/", $file)),
        )),+]
    };
}

/// The number of the migration that adds the closed sets' checks: before
/// it runs, [`Db::open`] names the rows that break them.
const CLOSED_SETS_MIGRATION: i64 = 6;

/// The migrations of `backend`, in order, compiled in: the same numbers
/// in both folders.
fn migrator(backend: Backend) -> Migrator {
    let listed: Vec<(i64, &'static str, &'static str)> = match backend {
        Backend::Sqlite => migrations!("sqlite"),
        Backend::Postgres => migrations!("postgres"),
    };
    let migrations = listed
        .into_iter()
        .map(|(version, description, sql)| {
            Migration::new(
                version,
                Cow::Borrowed(description),
                MigrationType::Simple,
                Cow::Borrowed(sql),
                false,
            )
        })
        .collect();
    Migrator {
        migrations: Cow::Owned(migrations),
        ..Migrator::DEFAULT
    }
}

/// Rows that break a closed set, in a store the checks of migration
/// [`CLOSED_SETS_MIGRATION`] have not reached yet: each column's first
/// few, by id and word. Empty once the migration ran (the store keeps
/// them out since), or in a new store.
async fn rows_outside_closed_sets(pool: &AnyPool) -> Result<Vec<String>, DbError> {
    // A new store has neither table (the queries fail): nothing to name.
    let migrated: Option<(i64,)> =
        sqlx::query_as("SELECT version FROM _sqlx_migrations WHERE version = $1")
            .bind(CLOSED_SETS_MIGRATION)
            .fetch_optional(pool)
            .await
            .unwrap_or(None);
    if migrated.is_some() {
        return Ok(Vec::new());
    }
    if sqlx::query("SELECT 1 FROM leases LIMIT 1")
        .fetch_optional(pool)
        .await
        .is_err()
    {
        return Ok(Vec::new());
    }
    let mut bad = Vec::new();
    for (column, words) in closed_sets() {
        let Some((table, name)) = column.split_once('.') else {
            continue;
        };
        let allowed: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let sql = format!(
            "SELECT CAST(id AS TEXT), {name} FROM {table} WHERE {name} NOT IN ({}) LIMIT 5",
            allowed.join(", "),
        );
        let rows: Vec<(String, String)> = sqlx::query_as(&sql).fetch_all(pool).await?;
        bad.extend(rows.into_iter().map(|(id, word)| {
            format!(
                "{table} id {id}: {name} is `{word}`, not one of {}",
                words.join(", ")
            )
        }));
    }
    Ok(bad)
}

/// The first of `taken` that `name` would pass for without being it
/// ([`crate::text::look_of`], the rule of the ladder's bot names): an
/// owner, a worker or an event named `alice` where there is `Alice`.
pub fn look_alike<'a>(name: &str, taken: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let look = crate::text::look_of(name);
    taken
        .into_iter()
        .find(|t| *t != name && crate::text::look_of(t) == look)
}

/// What [`look_alike`] names, said in a refusal.
pub const LOOK_ALIKE: &str =
    "the same letters in another case, or written with other characters that look the same";

/// Now, UTC, ISO 8601 with milliseconds (as games.csv's `started_at`).
pub fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Seconds since the epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A closed set of words the store keeps in one column, as a Rust enum:
/// `ALL` (every word, in order), `as_str` (the word), `from_word` (the
/// word read back, [`DbError::Corrupt`] naming the column for any other)
/// and `Display`. The same sets are the `CHECK`s of migration 0006
/// (`migrations/*/0006_closed_sets.sql`), which a test holds equal.
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        pub enum $name:ident in $column:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in the order they are listed.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The column this set is kept in, as `table.column`.
            pub const COLUMN: &'static str = $column;

            /// The word the store keeps.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )+
                }
            }

            /// The value a stored word names.
            pub fn from_word(word: &str) -> Result<$name, DbError> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|s| s.as_str() == word)
                    .ok_or_else(|| {
                        DbError::Corrupt(format!(
                            "{} is `{word}`, not one of {}",
                            $column,
                            $name::ALL.iter().map(|s| format!("`{}`", s.as_str())).collect::<Vec<_>>().join(", ")
                        ))
                    })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

closed_set! {
    /// What a token may do: an owner's uploads and retires bots; a
    /// worker's claims and uploads games.
    pub enum Role in "owners.role" {
        Owner = "owner",
        Worker = "worker",
    }
}

closed_set! {
    /// Where a version is on its way to the ladder, and after: shown as
    /// its word in the API and the pages.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "lowercase")]
    pub enum VersionStatus in "versions.status" {
        /// Its upload is being unpacked and stored.
        Receiving = "receiving",
        /// Waiting for the intake.
        Queued = "queued",
        Building = "building",
        Checking = "checking",
        /// Playing: the bot's one entered version.
        Entered = "entered",
        /// Its build or check failed (or its upload could not be stored).
        Refused = "refused",
        /// Replaced by a newer version, or withdrawn by its owner.
        Retired = "retired",
    }
}

closed_set! {
    /// Where a game is: `Pending` in the queue the pairing rule fills,
    /// `Playing` once claimed (by the server, or a worker under a lease),
    /// `Checking` while a forfeit a worker reported is played again,
    /// `Done` once its row and record are in, `Held` when the worker that
    /// played it was quarantined (migrations 0001, 0003, 0005).
    pub enum GameState in "games.state" {
        Pending = "pending",
        Playing = "playing",
        Checking = "checking",
        Done = "done",
        Held = "held",
    }
}

closed_set! {
    /// A lease: `Active` until its game is uploaded (`Done`) or it runs
    /// out (`Expired`, its game back in the queue).
    pub enum LeaseState in "leases.state" {
        Active = "active",
        Done = "done",
        Expired = "expired",
    }
}

closed_set! {
    /// A forfeit's re-check: `Waiting`, then `Confirmed` (the fault came
    /// again) or `NotReproduced` (migration 0005).
    pub enum RecheckState in "rechecks.state" {
        Waiting = "waiting",
        Confirmed = "confirmed",
        NotReproduced = "not_reproduced",
    }
}

/// Every closed set the store keeps, as (`table.column`, its words): what
/// migration 0006's `CHECK`s allow, and what start-up looks for before it.
pub fn closed_sets() -> Vec<(&'static str, Vec<&'static str>)> {
    fn words<T: Copy>(all: &[T], word: fn(T) -> &'static str) -> Vec<&'static str> {
        all.iter().map(|&s| word(s)).collect()
    }
    vec![
        (Role::COLUMN, words(Role::ALL, Role::as_str)),
        (
            VersionStatus::COLUMN,
            words(VersionStatus::ALL, VersionStatus::as_str),
        ),
        (GameState::COLUMN, words(GameState::ALL, GameState::as_str)),
        (
            LeaseState::COLUMN,
            words(LeaseState::ALL, LeaseState::as_str),
        ),
        (
            RecheckState::COLUMN,
            words(RecheckState::ALL, RecheckState::as_str),
        ),
    ]
}

/// An owner (or a worker: `role`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub id: i64,
    pub name: String,
    pub role: Role,
}

/// A version of a bot, as the store has it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Version {
    pub id: i64,
    pub bot: String,
    pub owner: String,
    pub number: i64,
    pub status: VersionStatus,
    pub detail: String,
    #[serde(skip)]
    pub report: String,
    #[serde(skip)]
    pub folder: String,
    pub sha256: String,
    pub bytes: i64,
    pub created_at: String,
    pub updated_at: String,
}

impl Version {
    /// Its name in games and standings: `BOT@N` for version N.
    pub fn player(&self) -> String {
        player_name(&self.bot, self.number)
    }
}

/// The name of version `number` of `bot` in games and standings.
pub fn player_name(bot: &str, number: i64) -> String {
    format!("{bot}@{number}")
}

/// A game handed out: its id, variant (index in the ladder file) and
/// seats (version ids).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameTicket {
    pub id: i64,
    pub variant: usize,
    pub seats: Vec<i64>,
    /// The game whose seed, opening and group it plays: its own id, or,
    /// for the second game of a test's pair, the pair's first
    /// (`games.opening_of`, migration 0007).
    pub opening: i64,
}

impl GameTicket {
    /// The ticket playing the opening of game `of` (`None`: its own).
    pub fn with_opening(self, of: Option<i64>) -> GameTicket {
        GameTicket {
            opening: of.unwrap_or(self.id),
            ..self
        }
    }
}

/// The SQL that counts the bots of the owner `owner` (an SQL expression:
/// a parameter or a subquery) with a version entered or on its way: the
/// count `bots_per_owner` bounds.
fn live_bots_count(owner: &str) -> String {
    format!(
        "SELECT COUNT(DISTINCT b.id) FROM bots b JOIN versions v ON v.bot_id = b.id \
         WHERE b.owner_id = {owner} AND v.status IN {LIVE}"
    )
}

/// The statuses of a version that makes its bot one of its owner's bots
/// in the ladder (`bots_per_owner`): entered or on its way.
const LIVE: &str = "('queued', 'building', 'checking', 'entered')";

/// The detail of an entered version its owner retired.
pub const WITHDRAWN: &str = "withdrawn by its owner";

/// The detail of a version on its way (receiving, queued, building,
/// checking) when its owner retired the bot: it is never entered, nor
/// brought back.
pub const WITHDRAWN_UNENTERED: &str = "withdrawn by its owner before it was entered";

/// The detail of a version on its way when its owner's token was
/// revoked ([`Db::revoke_owner`]): it is never entered, nor brought back.
/// (No quote in it: it is written into SQL text.)
pub const REVOKED_UNENTERED: &str =
    "cancelled before it was entered: the token of its owner was revoked";

/// The statuses of a version on its way to the ladder.
const ON_ITS_WAY: &str = "('receiving', 'queued', 'building', 'checking')";

/// The condition on a row of `versions` that it is the latest version of
/// bot `$1` (but those withdrawn or revoked before they were entered) and was
/// retired by its owner: the one [`Db::reinstate`] brings back.
fn owner_retired_latest() -> String {
    format!(
        "status = 'retired' AND detail = '{WITHDRAWN}' AND id = \
         (SELECT MAX(v.id) FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = $1 \
          AND v.detail NOT IN ('{WITHDRAWN_UNENTERED}', '{REVOKED_UNENTERED}'))"
    )
}

/// What [`Db::retire`] did: the numbers of the bot's versions withdrawn,
/// entered ones and ones on their way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retirement {
    pub withdrawn: Vec<i64>,
    pub cancelled: Vec<i64>,
}

impl Retirement {
    /// Whether any version was withdrawn.
    pub fn changed(&self) -> bool {
        !self.withdrawn.is_empty() || !self.cancelled.is_empty()
    }
}

/// What [`Db::reinstate`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reinstated {
    /// The bot's latest version is entered again.
    Back,
    /// Its latest version is not one its owner retired: nothing to do.
    NotRetired,
    /// Its owner has `bots_per_owner` bots in the ladder already.
    AtLimit,
}

/// The store.
#[derive(Clone)]
pub struct Db {
    /// Reads, and the writes of other rooms of the store.
    pool: AnyPool,
    /// The writes of the games and the queue: on SQLite a pool of one
    /// connection, whose page cache no other write of the server's own
    /// empties ([`sqlite_pool`]); on PostgreSQL the same pool as `pool`.
    write: AnyPool,
    /// SQLite: the connection of the games' starts and finishes, held
    /// rather than pooled. A pool's connection goes back to it through a
    /// task of its own after each statement: a wake of another thread per
    /// statement, on the path of every game.
    games: Option<Arc<tokio::sync::Mutex<sqlx::AnyConnection>>>,
    backend: Backend,
    /// The ladder's `max_games`: no game is queued past that many in the
    /// store ([`Db::claim_games`]).
    max_games: Option<i64>,
}

const VERSION_COLUMNS: &str = "v.id AS id, b.name AS bot, o.name AS owner, v.number AS number, \
     v.status AS status, v.detail AS detail, v.report AS report, v.folder AS folder, \
     v.sha256 AS sha256, v.bytes AS bytes, v.created_at AS created_at, v.updated_at AS updated_at";

/// A version from a row of [`VERSION_COLUMNS`], read by name.
fn version_of(r: &sqlx::any::AnyRow) -> Result<Version, DbError> {
    use sqlx::Row;
    let status: String = r.try_get("status")?;
    Ok(Version {
        id: r.try_get("id")?,
        bot: r.try_get("bot")?,
        owner: r.try_get("owner")?,
        number: r.try_get("number")?,
        status: VersionStatus::from_word(&status)?,
        detail: r.try_get("detail")?,
        report: r.try_get("report")?,
        folder: r.try_get("folder")?,
        sha256: r.try_get("sha256")?,
        bytes: r.try_get("bytes")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// The settings of each SQLite connection ([`sqlite_pool`]). The WAL
/// file is cut back to 64 MiB whenever a checkpoint empties it
/// (`journal_size_limit`): readers that held a snapshot for long while
/// games were written had grown it to 1.8 GB, kept for good.
const SQLITE_PRAGMAS: &str = "PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000; \
     PRAGMA foreign_keys = ON; PRAGMA journal_size_limit = 67108864";

/// A pool of up to `connections` connections to the SQLite file of
/// `options`, with no ping before each query (a local file cannot drop a
/// connection, and the ping was one more round trip to SQLite's thread
/// per query, a tenth of the server's time per game), in `synchronous =
/// NORMAL` (in WAL mode that loses nothing when the process dies, kill
/// -9; only a power cut may lose the last commits).
async fn sqlite_pool(connections: u32, options: AnyConnectOptions) -> Result<AnyPool, sqlx::Error> {
    AnyPoolOptions::new()
        .max_connections(connections)
        .test_before_acquire(false)
        .after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute(SQLITE_PRAGMAS).await?;
                Ok(())
            })
        })
        // A connection given back still inside a transaction is closed,
        // and the pool opens another. A write refused for want of room
        // (SQLITE_FULL) may make SQLite roll the transaction back itself;
        // sqlx's ROLLBACK then fails and leaves the connection counting
        // a transaction, which would refuse every later `BEGIN` of the
        // store's one writing connection until the server restarts.
        .after_release(|conn, _| Box::pin(async move { Ok(!conn.is_in_transaction()) }))
        .connect_with(options)
        .await
}

impl Db {
    /// Opens the database at `url` (`sqlite:PATH`, created if missing, in
    /// WAL mode; or `postgres://...`, which must exist) and brings its
    /// schema up to date. Refused, before anything is written to it ([`open`]):
    /// a database that holds another application's tables, a damaged SQLite
    /// file, a folder this user cannot write; a PostgreSQL server that is
    /// not there is said at once.
    pub async fn open(url: &str) -> Result<Db, DbError> {
        let backend = Backend::of_url(url).map_err(DbError::BadUrl)?;
        let open = |source| DbError::Open {
            url: redact(url),
            source,
        };
        sqlx::any::install_default_drivers();
        let (pool, write, games) = match backend {
            Backend::Sqlite => {
                // `of_url` refused a URL without a file.
                let file = Db::sqlite_path(url).unwrap_or_default();
                let failed = |e| Db::sqlite_failure(file, url, e);
                let url = match url.contains('?') {
                    true => url.to_string(),
                    false => format!("{url}?mode=rwc"),
                };
                let options = AnyConnectOptions::from_str(&url).map_err(open)?;
                let mut first = <sqlx::AnyConnection as sqlx::Connection>::connect_with(&options)
                    .await
                    .map_err(failed)?;
                // Another application's file is left as it was: not even
                // its journal mode is changed.
                let foreign = Db::foreign_tables(&mut first, backend)
                    .await
                    .map_err(failed)?;
                if !foreign.is_empty() {
                    let shown = std::path::absolute(file)
                        .map_or_else(|_| file.to_string(), |p| p.display().to_string());
                    return Err(Db::foreign(shown, &foreign));
                }
                // WAL is a setting of the file, and switching to it needs
                // the file to itself: once, before the pool.
                first
                    .execute("PRAGMA journal_mode = WAL")
                    .await
                    .map_err(failed)?;
                sqlx::Connection::close(first).await.map_err(failed)?;
                // Readers (the pages, the exports) get a pool of their
                // own; every write goes through one connection. SQLite
                // writes one at a time anyway, and a connection drops
                // its page cache whenever another connection wrote, so
                // spreading the game's statements over four connections
                // made SQLite read its pages again for almost each one.
                let pool = sqlite_pool(4, options.clone()).await.map_err(failed)?;
                let write = sqlite_pool(1, options.clone()).await.map_err(failed)?;
                let mut games = <sqlx::AnyConnection as sqlx::Connection>::connect_with(&options)
                    .await
                    .map_err(failed)?;
                games.execute(SQLITE_PRAGMAS).await.map_err(failed)?;
                (pool, write, Some(Arc::new(tokio::sync::Mutex::new(games))))
            }
            Backend::Postgres => {
                let options = AnyConnectOptions::from_str(url).map_err(open)?;
                let mut first = Db::postgres_first(url, &options).await?;
                let foreign = Db::foreign_tables(&mut first, backend)
                    .await
                    .map_err(open)?;
                if !foreign.is_empty() {
                    return Err(Db::foreign(
                        format!("{} (its current schema)", redact(url)),
                        &foreign,
                    ));
                }
                sqlx::Connection::close(first).await.map_err(open)?;
                let pool = AnyPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(std::time::Duration::from_secs(30))
                    .connect_with(options)
                    .await
                    .map_err(open)?;
                (pool.clone(), pool, None)
            }
        };
        let bad = rows_outside_closed_sets(&pool).await?;
        if !bad.is_empty() {
            return Err(DbError::Corrupt(format!(
                "before its columns are checked (migration {CLOSED_SETS_MIGRATION}), the store must hold only the words a server writes; mend or delete these rows and start again:\n  {}",
                bad.join("\n  ")
            )));
        }
        migrator(backend).run(&pool).await?;
        Ok(Db {
            pool,
            write,
            games,
            backend,
            max_games: None,
        })
    }

    /// The same store, queueing no game once `max_games` games are in it
    /// (the ladder's `[ladder] max_games`; `None`: no limit).
    pub fn with_max_games(mut self, max_games: Option<u64>) -> Db {
        self.max_games = max_games.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        self
    }

    /// The most games this store queues (`[ladder] max_games`).
    pub fn max_games(&self) -> Option<i64> {
        self.max_games
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// A transaction that writes. On SQLite it takes the write lock at
    /// once (`BEGIN IMMEDIATE`), waiting for it as long as the busy
    /// timeout, instead of failing when a read turns into a write after
    /// another connection wrote. On PostgreSQL it is a plain `BEGIN`
    /// (read committed): the reads that a write depends on lock their
    /// rows (`FOR UPDATE`, [`Backend::for_update`]).
    pub async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, DbError> {
        Ok(match self.backend {
            Backend::Sqlite => self.write.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.write.begin().await?,
        })
    }

    /// The pool, for the queries of other rooms of the store.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The pool of the games' and the queue's writes: the claims, the
    /// starts and the finishes.
    pub fn write_pool(&self) -> &AnyPool {
        &self.write
    }

    /// The URL of the SQLite database of a ladder's results folder.
    pub fn default_url(folder: &Path) -> String {
        format!("sqlite:{}", folder.join("ladder.db").display())
    }

    /// Claims the database for this server (one server per database):
    /// refused while the server named in it is alive. On this host that
    /// is its pid; on another host, a heartbeat (the database's clock)
    /// newer than [`CLAIM_STALE_SECONDS`], which [`Db::heartbeat`]
    /// refreshes.
    pub async fn claim(&self, address: &str) -> Result<(), DbError> {
        let host = crate::host::host_name();
        let pid = std::process::id() as i64;
        let epoch = self.backend.epoch();
        let mut tx = self.begin_write().await?;
        // The row exists from here on, so that a second server starting
        // at the same moment waits on its lock (PostgreSQL) or on the
        // write lock (SQLite), then sees it.
        let inserted = sqlx::query(&format!(
            "INSERT INTO server (id, pid, host, address, started_at, heartbeat) \
             VALUES (1, $1, $2, $3, $4, {epoch}) ON CONFLICT (id) DO NOTHING"
        ))
        .bind(pid)
        .bind(&host)
        .bind(address)
        .bind(now())
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 1 {
            tx.commit().await?;
            return Ok(());
        }
        let (other, other_host, other_address, since, age): (i64, String, String, String, i64) =
            sqlx::query_as(&format!(
                "SELECT pid, host, address, started_at, {epoch} - heartbeat FROM server WHERE id = 1{}",
                self.backend.for_update()
            ))
            .fetch_one(&mut *tx)
            .await?;
        let alive = match other_host == host {
            true => other != pid && crate::host::process_alive(other as u32),
            false => age < CLAIM_STALE_SECONDS,
        };
        if alive {
            return Err(DbError::Taken {
                pid: other,
                host: other_host,
                address: other_address,
                since,
            });
        }
        sqlx::query(&format!(
            "UPDATE server SET pid = $1, host = $2, address = $3, started_at = $4, heartbeat = {epoch} \
             WHERE id = 1"
        ))
        .bind(pid)
        .bind(&host)
        .bind(address)
        .bind(now())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// What the ladder's games were played under when the last server
    /// started (JSON; empty before the first that kept it), and keeps
    /// `now` in its place. Called once this server holds the claim.
    pub async fn swap_played_under(&self, now: &str) -> Result<String, DbError> {
        let mut tx = self.begin_write().await?;
        let was: Option<(String,)> =
            sqlx::query_as("SELECT settings FROM played_under WHERE id = 1")
                .fetch_optional(&mut *tx)
                .await?;
        sqlx::query(
            "INSERT INTO played_under (id, settings) VALUES (1, $1) \
             ON CONFLICT (id) DO UPDATE SET settings = excluded.settings",
        )
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(was.map(|(s,)| s).unwrap_or_default())
    }

    /// Refreshes this server's heartbeat; [`DbError::Lost`] if its claim
    /// is no longer its own (another server took it over).
    pub async fn heartbeat(&self) -> Result<(), DbError> {
        let r = sqlx::query(&format!(
            "UPDATE server SET heartbeat = {} WHERE id = 1 AND pid = $1 AND host = $2",
            self.backend.epoch()
        ))
        .bind(std::process::id() as i64)
        .bind(crate::host::host_name())
        .execute(&self.pool)
        .await?;
        match r.rows_affected() {
            1 => Ok(()),
            _ => Err(DbError::Lost),
        }
    }

    /// Gives the claim up (a clean stop).
    pub async fn release(&self) -> Result<(), DbError> {
        sqlx::query("DELETE FROM server WHERE id = 1 AND pid = $1 AND host = $2")
            .bind(std::process::id() as i64)
            .bind(crate::host::host_name())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Adds an owner with the hash of their token, or gives a revoked
    /// owner of that name and role a new one (the same owner: their bots,
    /// versions and counts stay theirs): `true` then. Refused while the
    /// name's token works (it is revoked first), or when the name is
    /// another role's.
    pub async fn add_owner(
        &self,
        name: &str,
        token_hash: &str,
        role: Role,
    ) -> Result<bool, DbError> {
        let again = sqlx::query(
            "UPDATE owners SET token_hash = $2, revoked_at = NULL \
             WHERE name = $1 AND role = $3 AND revoked_at IS NOT NULL",
        )
        .bind(name)
        .bind(token_hash)
        .bind(role.as_str())
        .execute(&self.pool)
        .await?;
        if again.rows_affected() > 0 {
            return Ok(true);
        }
        let names: Vec<(String,)> = sqlx::query_as("SELECT name FROM owners")
            .fetch_all(&self.pool)
            .await?;
        if let Some(other) = look_alike(name, names.iter().map(|(n,)| n.as_str())) {
            return Err(DbError::Conflict(format!(
                "`{name}` looks like `{other}`, a name taken already: {LOOK_ALIKE}; choose another name"
            )));
        }
        let r = sqlx::query(
            "INSERT INTO owners (name, token_hash, role, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(name)
        .bind(token_hash)
        .bind(role.as_str())
        .bind(now())
        .execute(&self.pool)
        .await;
        match r {
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(DbError::Conflict(self.name_taken(name, role).await?))
            }
            r => r.map(|_| false).map_err(DbError::from),
        }
    }

    /// Why `name` cannot have a new token in `role`.
    async fn name_taken(&self, name: &str, role: Role) -> Result<String, DbError> {
        let held: Option<(String, Option<String>)> =
            sqlx::query_as("SELECT role, revoked_at FROM owners WHERE name = $1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
        Ok(match held {
            Some((other, _)) if other != role.as_str() => format!(
                "there is already {} {other} named `{name}` (a name keeps its role, revoked or not): choose another name",
                if other.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
            ),
            _ => format!(
                "there is already a user named `{name}` whose token works: to give them a new one (keeping their bots), `--revoke-user {name}` first, then add them again; or choose another name"
            ),
        })
    }

    /// Revokes an owner's token; false if there is no such owner. Their
    /// uploads still on their way (received, built or checked) are not
    /// entered: they were made with a token no longer trusted (a leaked
    /// one, most often). Their entered bots stay, as theirs. A worker's
    /// active leases end at once.
    pub async fn revoke_owner(&self, name: &str) -> Result<bool, DbError> {
        let mut tx = self.begin_write().await?;
        let t = now();
        // The name stays taken; the token hash is replaced so it matches
        // nothing.
        let r = sqlx::query(
            "UPDATE owners SET revoked_at = $2, token_hash = 'revoked:' || id WHERE name = $1",
        )
        .bind(name)
        .bind(&t)
        .execute(&mut *tx)
        .await?;
        let theirs = format!(
            "status IN {ON_ITS_WAY} AND bot_id IN \
             (SELECT b.id FROM bots b JOIN owners o ON o.id = b.owner_id WHERE o.name = $1)"
        );
        sqlx::query(&format!(
            "DELETE FROM version_tests WHERE status = 'waiting' AND new_version_id IN \
             (SELECT id FROM versions WHERE {theirs})"
        ))
        .bind(name)
        .execute(&mut *tx)
        .await?;
        sqlx::query(&format!(
            "UPDATE versions SET status = 'retired', detail = $2, updated_at = $3 WHERE {theirs}"
        ))
        .bind(name)
        .bind(REVOKED_UNENTERED)
        .bind(&t)
        .execute(&mut *tx)
        .await?;
        // A worker's leases end now rather than at their time (it can no
        // longer renew them, nor upload their games): the next claim's
        // sweep puts their games back in the queue.
        sqlx::query(
            "UPDATE leases SET expires = 0 WHERE state = 'active' AND worker_id IN \
             (SELECT id FROM owners WHERE name = $1)",
        )
        .bind(name)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(r.rows_affected() > 0)
    }

    /// The owner whose token has this hash, if any and not revoked.
    pub async fn owner_by_token(&self, token_hash: &str) -> Result<Option<Owner>, DbError> {
        let r: Option<(i64, String, String)> = sqlx::query_as(
            "SELECT id, name, role FROM owners WHERE token_hash = $1 AND revoked_at IS NULL",
        )
        .bind(token_hash)
        .fetch_optional(&self.pool)
        .await?;
        r.map(|(id, name, role)| {
            Ok(Owner {
                id,
                name,
                role: Role::from_word(&role)?,
            })
        })
        .transpose()
    }

    /// The owner of bot `name`, if the bot exists.
    pub async fn bot_owner(&self, name: &str) -> Result<Option<(i64, String)>, DbError> {
        Ok(sqlx::query_as(
            "SELECT o.id, o.name FROM bots b JOIN owners o ON o.id = b.owner_id WHERE b.name = $1",
        )
        .bind(name)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Every bot's name, with its owner's, retired ones included.
    pub async fn bot_names(&self) -> Result<Vec<(String, String)>, DbError> {
        Ok(sqlx::query_as(
            "SELECT b.name, o.name FROM bots b JOIN owners o ON o.id = b.owner_id ORDER BY b.id",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// How many of `owner`'s bots have a version entered or on its way.
    pub async fn live_bots_of(&self, owner: i64) -> Result<i64, DbError> {
        let (n,): (i64,) = sqlx::query_as(&live_bots_count("$1"))
            .bind(owner)
            .fetch_one(&self.pool)
            .await?;
        Ok(n)
    }

    /// Whether bot `name` has a version entered or on its way: one of
    /// the bots [`Db::live_bots_of`] counts.
    pub async fn bot_is_live(&self, name: &str) -> Result<bool, DbError> {
        let (n,): (i64,) = sqlx::query_as(&format!(
            "SELECT COUNT(*) FROM versions v JOIN bots b ON b.id = v.bot_id \
             WHERE b.name = $1 AND v.status IN {LIVE}"
        ))
        .bind(name)
        .fetch_one(&self.pool)
        .await?;
        Ok(n > 0)
    }

    /// Uploads by `owner` since `since` (unix seconds).
    pub async fn uploads_since(&self, owner: i64, since: i64) -> Result<i64, DbError> {
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM uploads WHERE owner_id = $1 AND at >= $2")
                .bind(owner)
                .bind(since)
                .fetch_one(&self.pool)
                .await?;
        Ok(n)
    }

    /// When `owner`'s upload number `nth` (from 0, oldest first) since
    /// `since` (unix seconds) was made, if there is one.
    pub async fn upload_at(
        &self,
        owner: i64,
        since: i64,
        nth: i64,
    ) -> Result<Option<i64>, DbError> {
        let at: Option<(i64,)> = sqlx::query_as(
            "SELECT at FROM uploads WHERE owner_id = $1 AND at >= $2 ORDER BY at LIMIT 1 OFFSET $3",
        )
        .bind(owner)
        .bind(since)
        .bind(nth)
        .fetch_optional(&self.pool)
        .await?;
        Ok(at.map(|(t,)| t))
    }

    /// Counts an upload of `bytes` by `owner`, now.
    pub async fn note_upload(&self, owner: i64, bytes: i64) -> Result<(), DbError> {
        sqlx::query("INSERT INTO uploads (owner_id, at, bytes) VALUES ($1, $2, $3)")
            .bind(owner)
            .bind(unix_now())
            .bind(bytes)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Creates version N+1 of bot `name` (and the bot, owned by `owner`,
    /// if new), `receiving` until its folder is in place
    /// (`folder_of(N)`) and the caller queues it. Returns the version.
    pub async fn new_version(
        &self,
        name: &str,
        owner: i64,
        folder_of: &(dyn Fn(i64) -> String + Sync),
        sha256: &str,
        bytes: i64,
    ) -> Result<Version, DbError> {
        let mut tx = self.begin_write().await?;
        // Made if new, then read with its row locked: two uploads of the
        // same bot at once number their versions one after the other.
        sqlx::query(
            "INSERT INTO bots (name, owner_id, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(owner)
        .bind(now())
        .execute(&mut *tx)
        .await?;
        let (bot_id, bot_owner): (i64, i64) = sqlx::query_as(&format!(
            "SELECT id, owner_id FROM bots WHERE name = $1{}",
            self.backend.for_update()
        ))
        .bind(name)
        .fetch_one(&mut *tx)
        .await?;
        if bot_owner != owner {
            return Err(DbError::Conflict(format!(
                "bot `{name}` belongs to another owner"
            )));
        }
        let (number,): (i64,) =
            sqlx::query_as("SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE bot_id = $1")
                .bind(bot_id)
                .fetch_one(&mut *tx)
                .await?;
        let t = now();
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO versions (bot_id, number, status, folder, sha256, bytes, created_at, updated_at) \
             VALUES ($1, $2, 'receiving', $3, $4, $5, $6, $6) RETURNING id",
        )
        .bind(bot_id)
        .bind(number)
        .bind(folder_of(number))
        .bind(sha256)
        .bind(bytes)
        .bind(&t)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        self.version(id)
            .await?
            .ok_or_else(|| DbError::Conflict(format!("version {id} vanished")))
    }

    /// Sets a version's status, with a one-line detail and (when given)
    /// its check-bot report. Entering a version retires the bot's others.
    pub async fn set_status(
        &self,
        id: i64,
        status: VersionStatus,
        detail: &str,
        report: Option<&str>,
    ) -> Result<(), DbError> {
        let mut tx = self.begin_write().await?;
        let t = now();
        if status == VersionStatus::Entered {
            sqlx::query(
                "UPDATE versions SET status = 'retired', detail = 'replaced by a newer version', updated_at = $2 \
                 WHERE bot_id = (SELECT bot_id FROM versions WHERE id = $1) AND id <> $1 AND status = 'entered'",
            )
            .bind(id)
            .bind(&t)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query(
            "UPDATE versions SET status = $2, detail = $3, report = COALESCE($4, report), updated_at = $5 WHERE id = $1",
        )
        .bind(id)
        .bind(status.as_str())
        .bind(detail)
        .bind(report)
        .bind(&t)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Versions left `receiving` by a server that stopped before their
    /// folder was in place: refused, to be uploaded again.
    pub async fn refuse_unreceived(&self) -> Result<(), DbError> {
        sqlx::query(
            "UPDATE versions SET status = 'refused', detail = 'the server stopped while receiving it: upload it again', \
             updated_at = $1 WHERE status = 'receiving'",
        )
        .bind(now())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Retires bot `name`: its entered versions withdrawn ([`WITHDRAWN`]),
    /// and those on their way too ([`WITHDRAWN_UNENTERED`]: the intake
    /// enters none of them, [`Db::set_on_its_way`],
    /// [`Db::enter_version`]), their tests dropped. One transaction.
    pub async fn retire(&self, name: &str) -> Result<Retirement, DbError> {
        let mut tx = self.begin_write().await?;
        let mut done = Retirement::default();
        let t = now();
        for (from, detail, into) in [
            ("('entered')", WITHDRAWN, &mut done.withdrawn),
            (ON_ITS_WAY, WITHDRAWN_UNENTERED, &mut done.cancelled),
        ] {
            let mine =
                format!("status IN {from} AND bot_id = (SELECT id FROM bots WHERE name = $1)");
            let rows: Vec<(i64, i64)> = sqlx::query_as(&format!(
                "SELECT id, number FROM versions WHERE {mine} ORDER BY number{}",
                self.backend.for_update()
            ))
            .bind(name)
            .fetch_all(&mut *tx)
            .await?;
            for (id, number) in rows {
                sqlx::query(
                    "UPDATE versions SET status = 'retired', detail = $2, updated_at = $3 WHERE id = $1",
                )
                .bind(id)
                .bind(detail)
                .bind(&t)
                .execute(&mut *tx)
                .await?;
                if detail == WITHDRAWN_UNENTERED {
                    sqlx::query(
                        "DELETE FROM version_tests WHERE new_version_id = $1 AND status = 'waiting'",
                    )
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                }
                into.push(number);
            }
        }
        tx.commit().await?;
        Ok(done)
    }

    /// Sets the status of version `id` while it is on its way (receiving,
    /// queued, building, checking): false, and nothing changed, once it is
    /// not (its owner retired the bot meanwhile, [`Db::retire`]).
    pub async fn set_on_its_way(
        &self,
        id: i64,
        status: VersionStatus,
        detail: &str,
        report: Option<&str>,
    ) -> Result<bool, DbError> {
        let r = sqlx::query(&format!(
            "UPDATE versions SET status = $2, detail = $3, report = COALESCE($4, report), updated_at = $5 \
             WHERE id = $1 AND status IN {ON_ITS_WAY}"
        ))
        .bind(id)
        .bind(status.as_str())
        .bind(detail)
        .bind(report)
        .bind(now())
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected() > 0)
    }

    /// Brings bot `name`'s latest version back in when its owner had
    /// retired it (not one replaced or refused), unless its owner has
    /// `limit` bots in the ladder already (`bots_per_owner`: a bot
    /// retired and brought back is one more, as a new one would be; the
    /// count and the change are one statement, so two at once cannot both
    /// pass it).
    pub async fn reinstate(&self, name: &str, limit: i64) -> Result<Reinstated, DbError> {
        let q = format!(
            "UPDATE versions SET status = 'entered', detail = '', updated_at = $2 \
             WHERE {} AND ({}) < $3",
            owner_retired_latest(),
            live_bots_count("(SELECT owner_id FROM bots WHERE name = $1)")
        );
        let r = sqlx::query(&q)
            .bind(name)
            .bind(now())
            .bind(limit)
            .execute(&self.pool)
            .await?;
        if r.rows_affected() > 0 {
            return Ok(Reinstated::Back);
        }
        // Not changed: at the limit, if it would have been otherwise.
        let q = format!(
            "SELECT COUNT(*) FROM versions WHERE {}",
            owner_retired_latest()
        );
        let (retired,): (i64,) = sqlx::query_as(&q).bind(name).fetch_one(&self.pool).await?;
        Ok(match retired {
            0 => Reinstated::NotRetired,
            _ => Reinstated::AtLimit,
        })
    }

    /// Sets where version `id`'s folder is (a ladder folder moved, or its
    /// store restored elsewhere with its `bots/`).
    pub async fn set_folder(&self, id: i64, folder: &str) -> Result<(), DbError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("UPDATE versions SET folder = $2 WHERE id = $1")
            .bind(id)
            .bind(folder)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// One version by id.
    pub async fn version(&self, id: i64) -> Result<Option<Version>, DbError> {
        let q = format!(
            "SELECT {VERSION_COLUMNS} FROM versions v JOIN bots b ON b.id = v.bot_id \
             JOIN owners o ON o.id = b.owner_id WHERE v.id = $1"
        );
        let r = sqlx::query(&q).bind(id).fetch_optional(&self.pool).await?;
        r.as_ref().map(version_of).transpose()
    }

    /// Versions by status (`None`: all), oldest first.
    pub async fn versions(&self, status: Option<VersionStatus>) -> Result<Vec<Version>, DbError> {
        let q = format!(
            "SELECT {VERSION_COLUMNS} FROM versions v JOIN bots b ON b.id = v.bot_id \
             JOIN owners o ON o.id = b.owner_id WHERE $1 IS NULL OR v.status = $1 ORDER BY v.id"
        );
        let rows = sqlx::query(&q)
            .bind(status.map(VersionStatus::as_str))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(version_of).collect()
    }

    /// The versions of bot `name`, oldest first.
    pub async fn versions_of(&self, name: &str) -> Result<Vec<Version>, DbError> {
        let q = format!(
            "SELECT {VERSION_COLUMNS} FROM versions v JOIN bots b ON b.id = v.bot_id \
             JOIN owners o ON o.id = b.owner_id WHERE b.name = $1 ORDER BY v.number"
        );
        let rows = sqlx::query(&q).bind(name).fetch_all(&self.pool).await?;
        rows.iter().map(version_of).collect()
    }

    /// Hands out a game, `playing`, of `variant` with `seats` (version
    /// ids); returns its id.
    pub async fn start_game(&self, variant: usize, seats: &[i64]) -> Result<i64, DbError> {
        let started = self.start_games(&[(variant, seats.to_vec())]).await?;
        started
            .first()
            .map(|t| t.id)
            .ok_or_else(|| DbError::Conflict("no game was started".into()))
    }

    /// Hands out the games `games` (variant, seats), `playing`, in one
    /// statement; returns their tickets, in the order of `games`.
    pub async fn start_games(
        &self,
        games: &[(usize, Vec<i64>)],
    ) -> Result<Vec<GameTicket>, DbError> {
        if games.is_empty() {
            return Ok(Vec::new());
        }
        let values: Vec<String> = (0..games.len())
            .map(|i| {
                format!(
                    "('playing', ${}, ${}, ${})",
                    3 * i + 1,
                    3 * i + 2,
                    3 * i + 3
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO games (state, variant, seats, created_at) VALUES {} RETURNING id, variant, seats",
            values.join(", ")
        );
        let t = now();
        let mut q = sqlx::query_as(&sql);
        for (variant, seats) in games {
            q = q
                .bind(*variant as i64)
                .bind(seats_text(seats))
                .bind(t.clone());
        }
        let rows: Vec<(i64, i64, String)> = match &self.games {
            Some(c) => q.fetch_all(&mut *c.lock().await).await?,
            None => q.fetch_all(&self.write).await?,
        };
        // RETURNING's order is the database's: match the rows back to
        // `games` (two equal games are interchangeable).
        let mut rows: Vec<GameTicket> = rows
            .into_iter()
            .map(|(id, variant, seats)| ticket(id, variant, &seats))
            .collect();
        let mut out = Vec::with_capacity(games.len());
        for (variant, seats) in games {
            let at = rows
                .iter()
                .position(|r| r.variant == *variant && r.seats == *seats)
                .ok_or_else(|| DbError::Conflict("a started game was not returned".into()))?;
            out.push(rows.swap_remove(at));
        }
        Ok(out)
    }

    /// The games handed out but never finished (cut off by a crash or a
    /// stop): they are played again, once, first.
    pub async fn unfinished_games(&self) -> Result<Vec<GameTicket>, DbError> {
        let rows: Vec<(i64, i64, String)> = sqlx::query_as(
            "SELECT id, variant, seats FROM games WHERE state = 'playing' ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, variant, seats)| ticket(id, variant, &seats))
            .collect())
    }

    /// Drops a game that was handed out but can no longer be played (one
    /// of its versions left the ladder).
    pub async fn drop_game(&self, id: i64) -> Result<(), DbError> {
        sqlx::query("DELETE FROM games WHERE id = $1 AND state = 'playing'")
            .bind(id)
            .execute(&self.write)
            .await?;
        Ok(())
    }

    /// Makes game `id` done with its row (JSON) and record; false, and
    /// nothing changed, if it was not `playing` (done already, or unknown).
    pub async fn finish_game(
        &self,
        id: i64,
        row_json: &str,
        record: &[u8],
    ) -> Result<bool, DbError> {
        let sql = self.backend.finish_game_sql("state = 'playing'");
        let q = sqlx::query(&sql)
            .bind(id)
            .bind(now())
            .bind(row_json)
            .bind(record);
        let r = match &self.games {
            Some(c) => q.execute(&mut *c.lock().await).await?,
            None => q.execute(&self.write).await?,
        };
        Ok(r.rows_affected() == 1)
    }

    /// Every finished game's row (JSON), in the order they finished.
    pub async fn done_rows(&self) -> Result<Vec<String>, DbError> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT row_json FROM games WHERE state = 'done' ORDER BY done_seq")
                .fetch_all(&self.pool)
                .await?;
        Ok(rows.into_iter().map(|(r,)| r).collect())
    }

    /// Where finished game `id` stands in the order they finished.
    pub async fn done_key(&self, id: i64) -> Result<Option<DoneKey>, DbError> {
        let r: Option<(i64,)> = sqlx::query_as(
            "SELECT done_seq FROM games WHERE id = $1 AND state = 'done' AND done_seq IS NOT NULL",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(r.map(|(seq,)| DoneKey { seq, id }))
    }

    /// The row (JSON) of finished game `id`.
    pub async fn done_row(&self, id: i64) -> Result<Option<String>, DbError> {
        let r: Option<(Option<String>,)> =
            sqlx::query_as("SELECT row_json FROM games WHERE id = $1 AND state = 'done'")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(r.and_then(|(j,)| j))
    }

    /// The record (compressed frame) of finished game `id`.
    pub async fn record(&self, id: i64) -> Result<Option<Vec<u8>>, DbError> {
        let r: Option<(Option<Vec<u8>>,)> =
            sqlx::query_as("SELECT record FROM games WHERE id = $1 AND state = 'done'")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(r.and_then(|(b,)| b))
    }

    /// A consistent copy of the database in `path` (SQLite's `VACUUM
    /// INTO`): the online backup of docs/ladder.md. A PostgreSQL database
    /// is backed up with its own tool, `pg_dump`: [`DbError::Conflict`]
    /// with the command.
    pub async fn backup(&self, path: &Path, url: &str) -> Result<(), DbError> {
        if self.backend == Backend::Postgres {
            return Err(DbError::Conflict(format!(
                "a PostgreSQL store is backed up with PostgreSQL's own tool, while it serves: \
                 pg_dump --format=custom --file={} '{}' (restore into an empty database with \
                 pg_restore --dbname=URL {})",
                path.display(),
                redact(url),
                path.display()
            )));
        }
        let existed = path.exists();
        let copied = async {
            sqlx::query("VACUUM INTO $1")
                .bind(path.display().to_string())
                .execute(&self.pool)
                .await?;
            // The copy is not this server's store: without this server's
            // claim in it, a server started on it (elsewhere, while this
            // one still runs) is not refused with this one's pid.
            let mut copy = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(path)
                .connect()
                .await?;
            sqlx::query("DELETE FROM server").execute(&mut copy).await?;
            copy.close().await?;
            Ok::<(), DbError>(())
        }
        .await;
        // A copy cut short (a full disk) would open as an empty ladder
        // without a word: it goes, with its journal (never a file that
        // was there before).
        if copied.is_err() && !existed {
            let journal = std::path::PathBuf::from(format!("{}-journal", path.display()));
            for p in [path.to_path_buf(), journal] {
                let _ = std::fs::remove_file(p);
            }
        }
        copied
    }

    /// Finished games, counted.
    pub async fn games_done(&self) -> Result<i64, DbError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM games WHERE state = 'done'")
            .fetch_one(&self.pool)
            .await?;
        Ok(n)
    }
}

/// A finished game's place in the order they finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DoneKey {
    /// Its place in the order games finished (`done_seq`): the order they
    /// became visible in, so a reader that goes on from a key misses none.
    pub seq: i64,
    /// Its id.
    pub id: i64,
}

/// A finished game: its place and its row (JSON).
pub struct Done {
    pub key: DoneKey,
    pub row_json: String,
}

/// `url` with its password, if any, replaced by `***` (for messages).
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((auth, host)) = rest.rsplit_once('@') else {
        return url.to_string();
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

/// Seats as stored: version ids, comma-separated.
pub(super) fn seats_text(seats: &[i64]) -> String {
    seats
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A game ticket from its columns.
pub(super) fn ticket(id: i64, variant: i64, seats: &str) -> GameTicket {
    GameTicket {
        id,
        variant: variant as usize,
        seats: seats.split(',').filter_map(|s| s.parse().ok()).collect(),
        opening: id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every status reads back from its word, and a word no server writes
    /// is refused with what it was.
    #[test]
    fn a_status_is_its_word_and_back() {
        for &s in VersionStatus::ALL {
            assert_eq!(VersionStatus::from_word(s.as_str()).unwrap(), s);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
        }
        let e = VersionStatus::from_word("Entered").unwrap_err().to_string();
        assert!(e.contains("`Entered`"), "{e}");
        assert_eq!(Role::from_word("worker").unwrap(), Role::Worker);
        assert!(Role::from_word("admin").is_err());
    }

    /// Every file of `migrations/DIALECT/` is run, in the order of its
    /// number (a migration written but not listed in [`migrator`] would
    /// never reach a store).
    #[test]
    fn every_migration_file_is_run() {
        for (backend, dir) in [(Backend::Sqlite, "sqlite"), (Backend::Postgres, "postgres")] {
            let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(dir);
            let mut files: Vec<String> = std::fs::read_dir(&folder)
                .expect("the migrations folder")
                .map(|e| {
                    e.expect("an entry")
                        .file_name()
                        .to_string_lossy()
                        .into_owned()
                })
                .filter(|f| f.ends_with(".sql"))
                .collect();
            files.sort();
            let run: Vec<(i64, String)> = migrator(backend)
                .migrations
                .iter()
                .map(|m| (m.version, m.sql.to_string()))
                .collect();
            assert_eq!(run.len(), files.len(), "{dir}: {files:?}");
            for ((version, sql), file) in run.iter().zip(&files) {
                let text = std::fs::read_to_string(folder.join(file)).expect("readable");
                assert!(file.starts_with(&format!("{version:04}_")), "{dir}/{file}");
                assert_eq!(*sql, text, "{dir}/{file} is not the migration {version}");
            }
        }
    }
}
