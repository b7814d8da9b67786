//! What a hostile (or careless) organiser gives `arena serve`, each
//! through the real binary: another application's database, a PostgreSQL
//! server that is not there, `--db sqlite:` without a file, a damaged
//! store, a results folder it cannot write, a backup copy served beside
//! its original, a ladder file that names bots; and the requests the API
//! refuses (a path too long, a path that is not UTF-8, a parameter it
//! does not take or one given twice), each with a JSON body that says so.

use crate::common::{self, ladder::Server};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// `dir/ladder.toml`, a ladder of one variant with its results in
/// `dir/results` (as [`Server::new`] writes it).
fn ladder(dir: &Path) -> Server {
    Server::new(
        dir,
        "name = \"hostile\"\nseed = 7\nvariants = [\"kisolo\"]",
        "",
    )
}

/// `arena serve ladder.toml ARGS...` in `dir`: (success, what it printed).
fn serve(dir: &Path, args: &[&str]) -> (bool, String) {
    let mut all = vec!["serve", "ladder.toml"];
    all.extend_from_slice(args);
    let out = common::arena(dir, &all);
    (out.status.success(), common::text(&out))
}

/// Runs `f` with a connection to the SQLite file `path` (created if
/// missing), outside the server.
fn with_sqlite<T>(path: &Path, f: impl AsyncFnOnce(&mut sqlx::SqliteConnection) -> T) -> T {
    use sqlx::{ConnectOptions, Connection};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .connect()
            .await
            .unwrap();
        let r = f(&mut c).await;
        c.close().await.unwrap();
        r
    })
}

/// The names of the tables of the SQLite file `path`.
fn sqlite_tables(path: &Path) -> Vec<String> {
    with_sqlite(path, async |c| {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .fetch_all(&mut *c)
                .await
                .unwrap();
        rows.into_iter().map(|(n,)| n).collect()
    })
}

/// Another application's SQLite file is refused, naming it and a few of
/// its tables, and left as it was (no table of ours, not even its journal
/// mode changed); an empty file is taken as a new store.
#[test]
fn another_applications_sqlite_file_is_refused_and_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    ladder(tmp.path());
    let file = tmp.path().join("crm.db");
    with_sqlite(&file, async |c| {
        for t in [
            "customers",
            "invoices",
            "notes",
            "orders",
            "payments",
            "staff",
        ] {
            sqlx::query(&format!("CREATE TABLE {t} (id INTEGER PRIMARY KEY)"))
                .execute(&mut *c)
                .await
                .unwrap();
        }
    });
    let before = sqlite_tables(&file);
    let url = format!("sqlite:{}", file.display());
    let (ok, text) = serve(tmp.path(), &["--db", &url, "--add-user", "alice"]);
    assert!(!ok, "{text}");
    assert!(text.contains(&file.display().to_string()), "{text}");
    assert!(
        text.contains("holds tables that are not an arena ladder's")
            && text.contains("`customers`")
            && text.contains("and 1 more"),
        "{text}"
    );
    assert_eq!(sqlite_tables(&file), before, "the file was changed");
    let mode: String = with_sqlite(&file, async |c| {
        let (m,): (String,) = sqlx::query_as("PRAGMA journal_mode")
            .fetch_one(&mut *c)
            .await
            .unwrap();
        m
    });
    assert_ne!(mode, "wal", "its journal mode was changed");

    let empty = tmp.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let url = format!("sqlite:{}", empty.display());
    let (ok, text) = serve(tmp.path(), &["--db", &url, "--add-user", "alice"]);
    assert!(ok, "an empty file is a new store: {text}");
    let (ok, text) = serve(tmp.path(), &["--db", &url, "--add-user", "bob"]);
    assert!(ok, "the ladder's own store is taken again: {text}");
}

/// The same on PostgreSQL: a database whose schema holds another
/// application's tables is refused, and nothing is added to it.
#[test]
fn another_applications_postgres_schema_is_refused() {
    let Some(url) = common::postgres("another_applications_postgres_schema_is_refused") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    ladder(tmp.path());
    let tables = |sql: Option<&str>| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            use sqlx::Connection;
            sqlx::any::install_default_drivers();
            let mut c = sqlx::AnyConnection::connect(&url).await.unwrap();
            if let Some(sql) = sql {
                sqlx::query(sql).execute(&mut c).await.unwrap();
            }
            let rows: Vec<(String,)> = sqlx::query_as(
                "SELECT CAST(table_name AS TEXT) FROM information_schema.tables \
                 WHERE table_schema = current_schema() ORDER BY 1",
            )
            .fetch_all(&mut c)
            .await
            .unwrap();
            rows.into_iter().map(|(n,)| n).collect::<Vec<_>>()
        })
    };
    let before = tables(Some("CREATE TABLE accounts (id BIGINT PRIMARY KEY)"));
    assert_eq!(before, ["accounts"]);
    let (ok, text) = serve(tmp.path(), &["--db", &url, "--add-user", "alice"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("holds tables that are not an arena ladder's (`accounts`)"),
        "{text}"
    );
    assert_eq!(tables(None), before, "the database was changed");
}

/// A PostgreSQL URL where nothing listens is said at once, with the
/// address and the cause, and without the password (it waited 30 s for
/// the pool, then said only "pool timed out").
#[test]
fn a_postgres_server_that_is_not_there_is_said_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    ladder(tmp.path());
    // A port nothing listens on: one the system just gave, closed again.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://arena:hunter2@127.0.0.1:{port}/ladder");
    let start = Instant::now();
    let (ok, text) = serve(tmp.path(), &["--db", &url, "--add-user", "alice"]);
    let took = start.elapsed();
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "could not connect to PostgreSQL at 127.0.0.1:{port}: connection refused"
        )),
        "{text}"
    );
    assert!(
        !text.contains("hunter2"),
        "the password was printed: {text}"
    );
    assert!(!text.contains("timed out"), "{text}");
    // A refused connection fails at once; the bound is far from it, and
    // below the pool's 30 s.
    assert!(took < Duration::from_secs(20), "took {took:?}: {text}");
}

/// `--db sqlite:` names no file (each connection would open a database
/// of its own, and the second would lack the first's tables): refused,
/// naming the flag.
#[test]
fn a_sqlite_url_without_a_file_is_refused_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    ladder(tmp.path());
    for url in ["sqlite:", "sqlite://", "sqlite::memory:"] {
        let (ok, text) = serve(tmp.path(), &["--db", url, "--add-user", "alice"]);
        assert!(!ok, "{url}: {text}");
        assert!(
            text.contains("--db") && text.contains("names no file"),
            "{url}: {text}"
        );
        assert!(!text.contains("no such table"), "{url}: {text}");
    }
}

/// A store that is not a database, or a truncated one, is refused with
/// how to restore a backup (the server makes none by itself:
/// `--backup FILE` writes one where the organiser says).
#[test]
fn a_damaged_store_is_refused_with_how_to_restore_a_backup() {
    let tmp = tempfile::tempdir().unwrap();
    ladder(tmp.path());
    for name in ["alice", "bob", "carol"] {
        let (ok, text) = serve(tmp.path(), &["--add-user", name]);
        assert!(ok, "{text}");
    }
    let store = tmp.path().join("results/ladder.db");
    let whole = std::fs::read(&store).unwrap();
    assert!(whole.len() > 8192, "{} bytes", whole.len());
    let garbage: Vec<u8> = (0..65536u32).map(|i| (i * 7919 % 251) as u8).collect();
    for (what, bytes) in [("garbage", &garbage[..]), ("truncated", &whole[..4096])] {
        std::fs::write(&store, bytes).unwrap();
        for side in ["ladder.db-wal", "ladder.db-shm"] {
            let _ = std::fs::remove_file(tmp.path().join("results").join(side));
        }
        let (ok, text) = serve(tmp.path(), &["--add-user", "dave"]);
        assert!(!ok, "{what}: {text}");
        assert!(
            text.contains(&store.display().to_string())
                && text.contains("not a readable ladder store")
                && text.contains("--backup FILE")
                && text.contains("To restore one"),
            "{what}: {text}"
        );
    }
}

/// A results folder this user cannot write is named as such, not as
/// SQLite's "attempt to write a readonly database". As root (which may
/// write anything) the server runs as `nobody`, through setpriv.
#[test]
fn a_results_folder_that_cannot_be_written_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ladder");
    std::fs::create_dir(&dir).unwrap();
    ladder(&dir);
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let run = |args: &[&str]| {
        let mut c = match root {
            true => {
                let mut c = std::process::Command::new("setpriv");
                c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
                    .arg(env!("CARGO_BIN_EXE_arena"));
                c
            }
            false => std::process::Command::new(env!("CARGO_BIN_EXE_arena")),
        };
        c.args(["serve", "ladder.toml"])
            .args(args)
            .current_dir(&dir)
            .stdin(std::process::Stdio::null())
            .output()
    };
    if root {
        // nobody reaches the ladder through the temporary folder.
        for d in [tmp.path(), dir.as_path()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
    }
    let Ok(out) = run(&["--add-user", "alice"]) else {
        eprintln!("SKIPPED: a_results_folder_that_cannot_be_written_is_named: no setpriv");
        return;
    };
    assert!(out.status.success(), "{}", common::text(&out));
    let results = dir.join("results");
    // As a stopped server leaves it: the journal written into the store,
    // its -wal and -shm files gone (while they are there, SQLite writes
    // through them, folder or not).
    with_sqlite(&results.join("ladder.db"), async |c| {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&mut *c)
            .await
            .unwrap();
    });
    assert!(!results.join("ladder.db-wal").exists());
    std::fs::set_permissions(&results, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = run(&["--add-user", "bob"]).unwrap();
    std::fs::set_permissions(&results, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = common::text(&out);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "{}: the store's folder is not writable",
            results.display()
        )),
        "{text}"
    );
    assert!(!text.contains("readonly database"), "{text}");
}

/// A `--backup` copy is served beside its original (a server started on
/// the copy while the original's server runs), since the copy does not
/// carry the original's claim.
#[test]
fn a_backup_copy_does_not_carry_the_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("first");
    std::fs::create_dir(&first).unwrap();
    let mut server = ladder(&first);
    server.add_user("alice");
    server.start();
    let copy = tmp.path().join("copy.db");
    let (ok, text) = serve(&first, &["--backup", copy.to_str().unwrap()]);
    assert!(ok, "{text}");
    let second = tmp.path().join("second");
    std::fs::create_dir(&second).unwrap();
    let mut other = ladder(&second);
    other.db = Some(format!("sqlite:{}", copy.display()));
    other.start();
    let health = other.json("/health");
    assert_eq!(health["status"], "ok", "{health}");
    assert_eq!(server.json("/health")["status"], "ok");
}

/// `--backup` into a folder that does not exist names the folder and
/// what to do (it gave SQLite's own "unable to open database file").
#[test]
fn a_backup_into_a_missing_folder_names_the_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = ladder(tmp.path());
    let missing = tmp.path().join("no-such-folder");
    let to = missing.join("copy.db");
    let (ok, text) = serve(tmp.path(), &["--backup", to.to_str().unwrap()]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "the backup's folder {} does not exist",
            missing.display()
        )) && text.contains("mkdir -p"),
        "{text}"
    );
    assert!(!missing.exists());
}

/// A ladder file that names bots is refused at its line: a ladder's bots
/// are uploaded (the file's `bots` were ignored).
#[test]
fn a_ladder_file_that_names_bots_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("ladder.toml"),
        "name = \"l\"\nvariants = [\"kisolo\"]\nbots = [\"random-rust\", \"greedy-rust\"]\n[ladder]\n",
    )
    .unwrap();
    let (ok, text) = serve(tmp.path(), &["--add-user", "alice"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("ladder.toml:3: `bots`") && text.contains("uploaded by their owners"),
        "{text}"
    );
    assert!(!tmp.path().join("results").exists(), "{text}");
}

/// `request` sent as it is to the server at `url`: the status, the
/// content type and the body of its answer.
fn raw(url: &str, request: &[u8]) -> (u16, String, String) {
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(request).unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer).to_string();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let kind = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    (status, kind, body.to_string())
}

/// The `error` of a JSON refusal, which it must be.
fn error_of(what: &str, kind: &str, body: &str) -> String {
    assert_eq!(kind, "application/json", "{what}: {body}");
    let v: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{what}: {e}: {body}"));
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: {body}"))
        .to_string()
}

/// Requests the API refuses, each with a JSON body: a path too long for
/// the HTTP layer (414, which had no body), a path that is not UTF-8 (it
/// was text), a parameter given twice (the standings took it, the games
/// refused it: both refuse it now), a parameter an endpoint does not take
/// (some ignored it), named with those it takes. What the shipped pages
/// and clients send is taken.
#[test]
fn the_apis_refusals_are_json_and_name_the_parameter() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = ladder(tmp.path());
    server.start();
    let long = format!(
        "GET /api/{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(100_000)
    );
    let (status, kind, body) = raw(&server.url, long.as_bytes());
    assert_eq!(status, 414, "{body}");
    assert!(error_of("414", &kind, &body).contains("too long"), "{body}");
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let (status, kind, body) = raw(&server.url, get("/api/bots/%ff").as_bytes());
    assert_eq!(status, 400, "{body}");
    assert!(error_of("%ff", &kind, &body).contains("UTF-8"), "{body}");

    for path in [
        "/api/standings?variant=kisolo&variant=kisolo",
        "/api/games?variant=kisolo&variant=kisolo",
        "/api/games.csv?variant=kisolo&variant=kisolo",
        "/api/tests?bot=a&bot=b",
        "/api/games/1/stderr?seat=0&seat=1",
    ] {
        let (status, kind, body) = raw(&server.url, get(path).as_bytes());
        assert_eq!(status, 400, "{path}: {body}");
        let e = error_of(path, &kind, &body);
        assert!(e.contains("given twice") && e.contains('`'), "{path}: {e}");
    }
    for (path, takes) in [
        ("/api/standings?colour=red", "takes variant"),
        ("/api/bots?colour=red", "takes no parameters"),
        ("/api/bots/someone?colour=red", "takes no parameters"),
        ("/api/games/1?colour=red", "takes no parameters"),
        ("/api/tournaments?colour=red", "takes no parameters"),
        ("/api/workers?colour=red", "takes no parameters"),
        ("/api/games/1/stderr?colour=red", "takes seat"),
        ("/api/tests?colour=red", "takes owner, bot, result, limit"),
        (
            "/api/games.pgn?colour=red",
            "takes bot, version, opponent, variant, test, result, reason, forfeit, order, after, limit",
        ),
    ] {
        let (status, kind, body) = raw(&server.url, get(path).as_bytes());
        assert_eq!(status, 400, "{path}: {body}");
        let e = error_of(path, &kind, &body);
        assert!(
            e.contains("unknown parameter `colour`") && e.contains(takes),
            "{path}: {e}"
        );
    }
    // Both Content-Length and Transfer-Encoding, in either order: refused
    // naming the two (hyper read the body by the second, and no route
    // could see the first).
    for framing in [
        "Content-Length: 5\r\nTransfer-Encoding: chunked",
        "transfer-encoding: chunked\r\ncontent-length: 5",
    ] {
        let request =
            format!("POST /api/worker/heartbeat HTTP/1.1\r\nHost: x\r\n{framing}\r\n\r\n0\r\n\r\n");
        let (status, kind, body) = raw(&server.url, request.as_bytes());
        assert_eq!(status, 400, "{framing}: {body}");
        let e = error_of(framing, &kind, &body);
        assert!(
            e.contains("both Content-Length and Transfer-Encoding"),
            "{framing}: {e}"
        );
    }
    // A Content-Length past what hyper holds (2^64 - 3): 413 naming the
    // upload limit, as one under it but over the limit is (hyper said
    // 400 "malformed", or 431 "headers too large").
    for length in ["18446744073709551615", "99999999999999999999"] {
        let request =
            format!("POST /api/bots HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n");
        let (status, kind, body) = raw(&server.url, request.as_bytes());
        assert_eq!(status, 413, "{length}: {body}");
        let e = error_of(length, &kind, &body);
        assert!(e.contains("at most 16 MiB"), "{length}: {e}");
    }
    // What the pages (standings.html) and `arena submit` ask.
    for path in [
        "/api/standings?variant=kisolo",
        "/api/tests?bot=x&limit=1000",
    ] {
        server.json(path);
    }
}

/// More games at once than 4 a CPU, from the file's `games_in_flight` or
/// from `--local-games`: refused as `arena run` refuses such a
/// concurrency, naming the setting (the bots would lose on time for want
/// of CPU); `--force-concurrency` lets it through. `--add-user` does not
/// play, and is not refused.
#[test]
fn more_games_in_flight_than_four_a_cpu_are_refused_naming_the_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let over = (4 * cpus + 1).to_string();
    let mut server = Server::new(
        dir,
        "name = \"busy\"\nseed = 7\nvariants = [\"kisolo\"]",
        "",
    );
    let file = std::fs::read_to_string(&server.file).unwrap();
    let busier = file.replace("games_in_flight = 2", &format!("games_in_flight = {over}"));
    assert_ne!(busier, file);
    std::fs::write(&server.file, busier).unwrap();
    server.add_user("alice");
    // Whatever happens, it ends: a server that was not refused is stopped.
    let ended = |args: &[&str]| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
            .args(["serve", "ladder.toml", "--bind", "127.0.0.1:0"])
            .args(args)
            .current_dir(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        (out.status.success(), common::text(&out))
    };
    let (ok, text) = ended(&[]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "games_in_flight {over}: more than 4 games at a time per CPU"
        )),
        "{text}"
    );
    let (ok, text) = ended(&["--local-games", &over]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!("--local-games {over}: more than 4"))
            && text.contains("Lower --local-games, or add --force-concurrency"),
        "{text}"
    );
    assert!(!text.contains("Lower the [ladder] table's"), "{text}");
    // Forced, or within the bound through --local-games: it serves.
    for extra in [vec!["--force-concurrency"], vec!["--local-games", "1"]] {
        server.extra = extra.into_iter().map(String::from).collect();
        server.start();
        assert_eq!(server.json("/health")["status"], "ok", "{}", server.log());
        server.kill();
    }
}
