//! What [`super::Db::open`] makes sure of before it writes anything to a
//! database, and its failures said as what the organiser can do about
//! them: a SQLite URL that names a file, a database that holds another
//! application's tables (refused: the store's migrations would add theirs
//! into it), a damaged SQLite file (with how to restore a backup), a
//! folder or file this user cannot write, and a PostgreSQL server that is
//! not there (said at once, with its address, rather than after the
//! pool's acquire timeout).

use super::{migrator, redact, Backend, Db, DbError};
use sqlx::any::AnyConnectOptions;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// How long the first connection to a PostgreSQL server may take before
/// the server is said not to answer: a refused connection fails at once;
/// this is for a host that drops the connection's packets (a firewall), far
/// above what a server under load takes to accept one.
pub const CONNECT_SECONDS: u64 = 10;

/// The most table names a refusal of another application's database lists.
const NAMED_TABLES: usize = 5;

/// `HOST:PORT` of a PostgreSQL URL (PostgreSQL's port, 5432, when it
/// gives none), for messages: never its user or password.
pub fn postgres_address(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.is_empty() { "localhost" } else { host };
    let has_port = match host.strip_prefix('[') {
        Some(v6) => v6.contains("]:"),
        None => host.contains(':'),
    };
    match has_port {
        true => host.to_string(),
        false => format!("{host}:5432"),
    }
}

/// The tables the store's migrations make, and sqlx's own record of them:
/// any other table in a database is another application's.
fn arena_tables(backend: Backend) -> BTreeSet<String> {
    let mut names = BTreeSet::from(["_sqlx_migrations".to_string()]);
    for m in migrator(backend).iter() {
        let words: Vec<&str> = m.sql.split_whitespace().collect();
        for (i, pair) in words.windows(2).enumerate() {
            if !(pair[0].eq_ignore_ascii_case("CREATE") && pair[1].eq_ignore_ascii_case("TABLE")) {
                continue;
            }
            let mut at = i + 2;
            if words.get(at).is_some_and(|w| w.eq_ignore_ascii_case("IF")) {
                at += 3; // IF NOT EXISTS
            }
            if let Some(w) = words.get(at) {
                let name = w.split('(').next().unwrap_or(w);
                names.insert(name.trim_matches('"').to_ascii_lowercase());
            }
        }
    }
    names
}

/// The tables of the database `conn` is connected to (its current schema,
/// on PostgreSQL), without SQLite's own.
async fn tables_of(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
) -> Result<Vec<String>, sqlx::Error> {
    let sql = match backend {
        Backend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_' ORDER BY name"
        }
        Backend::Postgres => {
            "SELECT CAST(table_name AS TEXT) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1"
        }
    };
    let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&mut *conn).await?;
    Ok(rows.into_iter().map(|(n,)| n).collect())
}

/// Why this user cannot write the SQLite store `file`, if they cannot: its
/// folder missing or not writable (SQLite writes its journal beside the
/// store, `-wal` and `-shm`, even to read it), or the file read-only.
pub fn not_writable(file: &Path) -> Option<String> {
    let folder = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let shown = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let folder_shown = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
    if !folder.is_dir() {
        return Some(format!(
            "{}: no such folder, for the store {}: make it, or give --db sqlite:PATH in a folder that exists",
            folder_shown.display(),
            shown.display()
        ));
    }
    if !may_write(folder) {
        return Some(format!(
            "{}: the store's folder is not writable by this user, and SQLite writes its journal there, beside the store {} (its -wal and -shm files), even to read it: make the folder writable (chmod u+w), or give --db sqlite:PATH in a writable folder",
            folder_shown.display(),
            shown.display()
        ));
    }
    if file.exists() && !may_write(file) {
        return Some(format!(
            "{}: the store is read-only for this user: make it writable (chmod u+w), or serve a copy of it",
            shown.display()
        ));
    }
    None
}

/// Whether this process may write `path` (access(2), which also says so
/// of a read-only file system).
fn may_write(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// What [`Db::open`] calls (associated functions, so that the store's
/// file names this one by nothing but `mod open`).
impl Db {
    /// The file a SQLite URL names (`sqlite:PATH` or `sqlite://PATH`, without
    /// its `?options`); `None` when it names none: an empty path, or an
    /// in-memory database.
    pub(super) fn sqlite_path(url: &str) -> Option<&str> {
        let rest = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))?;
        let (path, options) = rest.split_once('?').unwrap_or((rest, ""));
        let memory = path == ":memory:" || options.split('&').any(|o| o == "mode=memory");
        (!path.is_empty() && !memory).then_some(path)
    }

    /// The tables of the database that are not an arena ladder's, before
    /// anything is written to it: none in a new database, or in a ladder's
    /// store; the others' names otherwise. A store that a newer server
    /// migrated (migrations past this one's) is let through: its newer tables
    /// are the ladder's, and the migrator says that it is newer.
    pub(super) async fn foreign_tables(
        conn: &mut sqlx::AnyConnection,
        backend: Backend,
    ) -> Result<Vec<String>, sqlx::Error> {
        let tables = tables_of(conn, backend).await?;
        if tables.iter().any(|t| t == "_sqlx_migrations") {
            let (newest,): (i64,) = sqlx::query_as(
                "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM _sqlx_migrations",
            )
            .fetch_one(&mut *conn)
            .await?;
            let ours = migrator(backend)
                .iter()
                .map(|m| m.version)
                .max()
                .unwrap_or(0);
            if newest > ours {
                return Ok(Vec::new());
            }
        }
        let ours = arena_tables(backend);
        Ok(tables
            .into_iter()
            .filter(|t| !ours.contains(&t.to_ascii_lowercase()))
            .collect())
    }

    /// [`DbError::Foreign`] for the database `store` that holds `tables`
    /// (a few named, and how many more).
    pub(super) fn foreign(store: String, tables: &[String]) -> DbError {
        let mut named: Vec<String> = tables
            .iter()
            .take(NAMED_TABLES)
            .map(|t| format!("`{t}`"))
            .collect();
        if tables.len() > NAMED_TABLES {
            named.push(format!("and {} more", tables.len() - NAMED_TABLES));
        }
        DbError::Foreign {
            store,
            tables: named.join(", "),
        }
    }

    /// A failure to open or first read the SQLite store `file` (of `url`),
    /// said as what to do: a damaged file or one that is not a database
    /// ([`DbError::Damaged`], with how to restore a backup), a folder or file
    /// this user cannot write ([`DbError::NotWritable`]); else as it came.
    pub(super) fn sqlite_failure(file: &str, url: &str, e: sqlx::Error) -> DbError {
        let db = e.as_database_error();
        let code = db
            .and_then(|d| d.code())
            .and_then(|c| c.parse::<i64>().ok());
        let shown = std::path::absolute(file)
            .map_or_else(|_| file.to_string(), |p| p.display().to_string());
        // SQLite's primary result codes: CORRUPT, NOTADB; READONLY, CANTOPEN.
        match code.map(|c| c & 0xff) {
            Some(11 | 26) => DbError::Damaged {
                path: shown,
                why: db.map_or_else(|| e.to_string(), |d| d.message().to_string()),
            },
            Some(8 | 14) => match not_writable(Path::new(file)) {
                Some(why) => DbError::NotWritable(why),
                None => DbError::Open {
                    url: redact(url),
                    source: e,
                },
            },
            _ => DbError::Open {
                url: redact(url),
                source: e,
            },
        }
    }

    /// The first connection to the PostgreSQL server of `url`, on its own, so
    /// that a server that is not there is said at once with its cause
    /// ([`DbError::Connect`]: refused, no such host, no answer within
    /// [`CONNECT_SECONDS`]), where the pool would retry until its acquire
    /// timeout and say only that it timed out.
    pub(super) async fn postgres_first(
        url: &str,
        options: &AnyConnectOptions,
    ) -> Result<sqlx::AnyConnection, DbError> {
        let connect = <sqlx::AnyConnection as sqlx::Connection>::connect_with(options);
        let why = match tokio::time::timeout(Duration::from_secs(CONNECT_SECONDS), connect).await {
            Ok(Ok(c)) => return Ok(c),
            Err(_) => format!("no answer in {CONNECT_SECONDS} s"),
            Ok(Err(sqlx::Error::Io(e))) => match e.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                _ => e.to_string(),
            },
            Ok(Err(e @ (sqlx::Error::Tls(_) | sqlx::Error::Protocol(_)))) => e.to_string(),
            // The server answered: a refused password, a database missing.
            Ok(Err(e)) => {
                return Err(DbError::Open {
                    url: redact(url),
                    source: e,
                })
            }
        };
        Err(DbError::Connect {
            at: postgres_address(url),
            why,
            url: redact(url),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sqlite_url_names_its_file_or_none() {
        assert_eq!(
            Db::sqlite_path("sqlite:results/ladder.db"),
            Some("results/ladder.db")
        );
        assert_eq!(
            Db::sqlite_path("sqlite:///tmp/l.db?mode=rwc"),
            Some("/tmp/l.db")
        );
        assert_eq!(Db::sqlite_path("sqlite:"), None);
        assert_eq!(Db::sqlite_path("sqlite://"), None);
        assert_eq!(Db::sqlite_path("sqlite:?mode=rwc"), None);
        assert_eq!(Db::sqlite_path("sqlite::memory:"), None);
        assert_eq!(Db::sqlite_path("sqlite:x.db?mode=memory"), None);
        assert_eq!(Db::sqlite_path("postgres://h/db"), None);
    }

    #[test]
    fn a_postgres_address_is_its_host_and_port_only() {
        assert_eq!(
            postgres_address("postgres://u:pw@db.example:6543/l"),
            "db.example:6543"
        );
        assert_eq!(postgres_address("postgres://u:p@ss@h/l"), "h:5432");
        assert_eq!(
            postgres_address("postgresql://[::1]:5433/l?x=1"),
            "[::1]:5433"
        );
        assert_eq!(postgres_address("postgres://[::1]/l"), "[::1]:5432");
        assert_eq!(postgres_address("postgres:///l"), "localhost:5432");
    }

    #[test]
    fn the_arena_tables_are_those_the_migrations_make() {
        for backend in [Backend::Sqlite, Backend::Postgres] {
            let t = arena_tables(backend);
            for name in [
                "_sqlx_migrations",
                "owners",
                "games",
                "server",
                "leases",
                "game_analysis",
                "rating_history",
            ] {
                assert!(t.contains(name), "{backend:?}: {name} in {t:?}");
            }
            assert!(!t.contains("if") && !t.contains("table"), "{t:?}");
        }
    }
}
