//! The ladder's store (src/serve/store/mod.rs) on both of its databases: each
//! test runs once on a temporary SQLite file and once on PostgreSQL (a
//! database of its own on `ARENA_TEST_PG`'s cluster, or on the throw-away
//! one of `.ci/postgres start`; `ARENA_SKIP_PG=1` skips that half).

use crate::common;

use mancala_arena::serve::store::{
    browse::{Order, SeatFilter},
    Backend, Db, DbError, Done, DoneKey, Reinstated, Role, VersionStatus,
};
use std::future::Future;

/// Runs `f` on a fresh store of `backend`.
fn with_store<F, Fut>(test: &str, backend: Backend, f: F)
where
    F: FnOnce(Db) -> Fut,
    Fut: Future<Output = ()>,
{
    let tmp = tempfile::tempdir().unwrap();
    let url = match backend {
        Backend::Sqlite => format!("sqlite:{}", tmp.path().join("ladder.db").display()),
        Backend::Postgres => match common::postgres(test) {
            Some(u) => u,
            None => return,
        },
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = Db::open(&url).await.unwrap();
        assert_eq!(db.backend(), backend);
        f(db).await;
    });
}

/// One test per backend: `NAME_sqlite` and `NAME_postgres`.
macro_rules! both {
    ($name:ident, $sqlite:ident, $postgres:ident) => {
        #[test]
        fn $sqlite() {
            with_store(stringify!($sqlite), Backend::Sqlite, $name);
        }
        #[test]
        fn $postgres() {
            with_store(stringify!($postgres), Backend::Postgres, $name);
        }
    };
}

async fn owners_and_tokens(db: Db) {
    if db.backend() == Backend::Sqlite {
        // SQLite's settings, which the `Any` driver does not carry: set
        // on every connection of the pool (docs/ladder.md).
        for (pragma, want) in [
            ("journal_mode", "wal"),
            ("synchronous", "1"),
            ("busy_timeout", "10000"),
            ("foreign_keys", "1"),
        ] {
            let mut conns = Vec::new();
            for _ in 0..3 {
                let mut c = db.pool().acquire().await.unwrap();
                let got: String = match pragma {
                    "journal_mode" => {
                        sqlx::query_as::<_, (String,)>("PRAGMA journal_mode")
                            .fetch_one(&mut *c)
                            .await
                            .unwrap()
                            .0
                    }
                    _ => sqlx::query_as::<_, (i64,)>(&format!("PRAGMA {pragma}"))
                        .fetch_one(&mut *c)
                        .await
                        .unwrap()
                        .0
                        .to_string(),
                };
                assert_eq!(got, want, "PRAGMA {pragma}");
                conns.push(c);
            }
        }
    }
    db.add_owner("alice", "hash-a", Role::Owner).await.unwrap();
    db.add_owner("bob", "hash-b", Role::Owner).await.unwrap();
    match db.add_owner("alice", "hash-c", Role::Owner).await {
        Err(DbError::Conflict(m)) => assert!(m.contains("already a user named `alice`"), "{m}"),
        other => panic!("a second alice: {other:?}"),
    }
    let alice = db.owner_by_token("hash-a").await.unwrap().unwrap();
    assert_eq!(
        (alice.name.as_str(), alice.role.as_str()),
        ("alice", "owner")
    );
    assert!(db.owner_by_token("hash-c").await.unwrap().is_none());
    assert!(db.revoke_owner("alice").await.unwrap());
    assert!(!db.revoke_owner("nobody").await.unwrap());
    assert!(db.owner_by_token("hash-a").await.unwrap().is_none());
    assert!(db.owner_by_token("hash-b").await.unwrap().is_some());
    // A revoked owner who lost their token is given a new one: the same
    // owner (their bots are theirs still), the old token still useless;
    // not as a worker, and not while the new one works.
    match db.add_owner("alice", "hash-w", Role::Worker).await {
        Err(DbError::Conflict(m)) => assert!(m.contains("already an owner named `alice`"), "{m}"),
        other => panic!("alice as a worker: {other:?}"),
    }
    assert!(db.add_owner("alice", "hash-d", Role::Owner).await.unwrap());
    let again = db.owner_by_token("hash-d").await.unwrap().unwrap();
    assert_eq!((again.id, again.name.as_str()), (alice.id, "alice"));
    assert!(db.owner_by_token("hash-a").await.unwrap().is_none());
    match db.add_owner("alice", "hash-e", Role::Owner).await {
        Err(DbError::Conflict(m)) => assert!(m.contains("--revoke-user alice"), "{m}"),
        other => panic!("alice again while her token works: {other:?}"),
    }
    assert!(!db.add_owner("carol", "hash-f", Role::Owner).await.unwrap());
    // A name another's passes for (another case), owner or worker: refused,
    // naming the first.
    for (name, role) in [("Alice", Role::Owner), ("CAROL", Role::Worker)] {
        match db.add_owner(name, "hash-g", role).await {
            Err(DbError::Conflict(m)) => assert!(
                m.contains(&format!("`{name}` looks like `{}`", name.to_lowercase())),
                "{m}"
            ),
            other => panic!("{name} beside its look-alike: {other:?}"),
        }
    }
    let bob = db.owner_by_token("hash-b").await.unwrap().unwrap();
    assert_eq!(db.uploads_since(bob.id, 0).await.unwrap(), 0);
    db.note_upload(bob.id, 1234).await.unwrap();
    db.note_upload(bob.id, 10).await.unwrap();
    assert_eq!(db.uploads_since(bob.id, 0).await.unwrap(), 2);
    assert_eq!(db.uploads_since(bob.id, i64::MAX).await.unwrap(), 0);
}
both!(
    owners_and_tokens,
    owners_and_tokens_sqlite,
    owners_and_tokens_postgres
);

async fn versions_lifecycle(db: Db) {
    db.add_owner("alice", "a", Role::Owner).await.unwrap();
    db.add_owner("bob", "b", Role::Owner).await.unwrap();
    let alice = db.owner_by_token("a").await.unwrap().unwrap();
    let bob = db.owner_by_token("b").await.unwrap().unwrap();
    let folder = |n: i64| format!("bots/x/{n}");
    let v1 = db
        .new_version("x", alice.id, &folder, "s1", 10)
        .await
        .unwrap();
    assert_eq!((v1.number, v1.status.as_str()), (1, "receiving"));
    assert_eq!(
        (v1.owner.as_str(), v1.folder.as_str()),
        ("alice", "bots/x/1")
    );
    match db.new_version("x", bob.id, &folder, "s2", 10).await {
        Err(DbError::Conflict(m)) => assert!(m.contains("another owner"), "{m}"),
        other => panic!("bob's upload of alice's bot: {other:?}"),
    }
    assert_eq!(db.bot_owner("x").await.unwrap().unwrap().1, "alice");
    assert!(db.bot_owner("y").await.unwrap().is_none());
    db.set_status(v1.id, VersionStatus::Entered, "", Some("report 1"))
        .await
        .unwrap();
    assert_eq!(db.live_bots_of(alice.id).await.unwrap(), 1);
    let v2 = db
        .new_version("x", alice.id, &folder, "s3", 20)
        .await
        .unwrap();
    assert_eq!(v2.number, 2);
    // A server that stopped while receiving: refused at the next start.
    db.refuse_unreceived().await.unwrap();
    assert_eq!(
        db.version(v2.id).await.unwrap().unwrap().status,
        VersionStatus::Refused
    );
    let v3 = db
        .new_version("x", alice.id, &folder, "s4", 30)
        .await
        .unwrap();
    db.set_status(v3.id, VersionStatus::Entered, "", None)
        .await
        .unwrap();
    let all = db.versions_of("x").await.unwrap();
    let states: Vec<(i64, &str)> = all.iter().map(|v| (v.number, v.status.as_str())).collect();
    assert_eq!(states, [(1, "retired"), (2, "refused"), (3, "entered")]);
    assert_eq!(all[0].report, "report 1");
    assert_eq!(all[0].detail, "replaced by a newer version");
    assert_eq!(
        db.versions(Some(VersionStatus::Entered))
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(db.versions(None).await.unwrap().len(), 3);
    assert_eq!(db.retire("x").await.unwrap().withdrawn, [3]);
    assert!(!db.retire("x").await.unwrap().changed());
    assert!(db
        .versions(Some(VersionStatus::Entered))
        .await
        .unwrap()
        .is_empty());
    // At its owner's limit, a retired bot stays out: it would be one
    // more, as a new one.
    assert_eq!(db.reinstate("x", 0).await.unwrap(), Reinstated::AtLimit);
    assert_eq!(db.reinstate("x", 1).await.unwrap(), Reinstated::Back);
    assert_eq!(db.reinstate("x", 1).await.unwrap(), Reinstated::NotRetired);
    assert_eq!(
        db.versions(Some(VersionStatus::Entered)).await.unwrap()[0].player(),
        "x@3"
    );
}
both!(
    versions_lifecycle,
    versions_lifecycle_sqlite,
    versions_lifecycle_postgres
);

/// A token revoked while an upload made with it is on its way: that
/// version is never entered (it was made with a token no longer trusted),
/// its entered bots stay, and another owner's upload is untouched.
async fn a_revoked_owners_uploads_on_their_way_are_not_entered(db: Db) {
    db.add_owner("alice", "a", Role::Owner).await.unwrap();
    db.add_owner("bob", "b", Role::Owner).await.unwrap();
    let alice = db.owner_by_token("a").await.unwrap().unwrap();
    let bob = db.owner_by_token("b").await.unwrap().unwrap();
    // A version of bot `bot` by `owner`, set to `status`.
    let version = |bot: &'static str, owner: i64, sha: &'static str, status| {
        let db = db.clone();
        async move {
            let folder = |n: i64| format!("bots/{bot}/{n}");
            let v = db.new_version(bot, owner, &folder, sha, 10).await.unwrap();
            db.set_status(v.id, status, "", None).await.unwrap();
            v
        }
    };
    version("x", alice.id, "s1", VersionStatus::Entered).await;
    let v2 = version("x", alice.id, "s2", VersionStatus::Checking).await;
    let theirs = version("y", bob.id, "s3", VersionStatus::Checking).await;
    assert!(db.revoke_owner("alice").await.unwrap());
    let v2 = db.version(v2.id).await.unwrap().unwrap();
    assert_eq!(v2.status, VersionStatus::Retired);
    assert!(v2.detail.contains("revoked"), "{}", v2.detail);
    // The intake's last step finds it gone, and enters nothing.
    assert_eq!(
        db.enter_version(v2.id, "report").await.unwrap(),
        mancala_arena::serve::store::version_tests::Entering::Withdrawn
    );
    let entered: Vec<String> = db
        .versions(Some(VersionStatus::Entered))
        .await
        .unwrap()
        .iter()
        .map(|v| v.player())
        .collect();
    assert_eq!(entered, ["x@1"]);
    assert_eq!(
        db.version(theirs.id).await.unwrap().unwrap().status,
        VersionStatus::Checking
    );
}
both!(
    a_revoked_owners_uploads_on_their_way_are_not_entered,
    a_revoked_owners_uploads_on_their_way_are_not_entered_sqlite,
    a_revoked_owners_uploads_on_their_way_are_not_entered_postgres
);

async fn games_start_finish_unfinished_drop(db: Db) {
    let g1 = db.start_game(0, &[3, 4]).await.unwrap();
    let g2 = db.start_game(1, &[4, 5, 6]).await.unwrap();
    let g3 = db.start_game(0, &[5, 3]).await.unwrap();
    assert!(g1 < g2 && g2 < g3);
    let record = vec![0u8, 1, 2, 255, 0, 7];
    assert!(db.finish_game(g2, "{\"g\":2}", &record).await.unwrap());
    // Once only.
    assert!(!db.finish_game(g2, "{\"g\":2}", &record).await.unwrap());
    assert!(!db.finish_game(9999, "{}", &record).await.unwrap());
    assert_eq!(db.record(g2).await.unwrap().unwrap(), record);
    assert!(db.record(g1).await.unwrap().is_none());
    let cut = db.unfinished_games().await.unwrap();
    let cut: Vec<(i64, usize, Vec<i64>)> = cut
        .into_iter()
        .map(|t| (t.id, t.variant, t.seats))
        .collect();
    assert_eq!(cut, [(g1, 0, vec![3, 4]), (g3, 0, vec![5, 3])]);
    db.drop_game(g1).await.unwrap();
    // A finished game is not dropped.
    db.drop_game(g2).await.unwrap();
    assert_eq!(db.unfinished_games().await.unwrap().len(), 1);
    assert!(db.finish_game(g3, "{\"g\":3}", b"").await.unwrap());
    assert_eq!(db.games_done().await.unwrap(), 2);
    // Rows in the order the games finished, not by id, even within one
    // millisecond.
    let g4 = db.start_game(0, &[1, 2]).await.unwrap();
    let g5 = db.start_game(0, &[2, 1]).await.unwrap();
    assert!(db.finish_game(g5, "{\"g\":5}", b"x").await.unwrap());
    assert!(db.finish_game(g4, "{\"g\":4}", b"y").await.unwrap());
    assert_eq!(
        db.done_rows().await.unwrap(),
        ["{\"g\":2}", "{\"g\":3}", "{\"g\":5}", "{\"g\":4}"]
    );
}
both!(
    games_start_finish_unfinished_drop,
    games_sqlite,
    games_postgres
);

/// `n` new games of the same seats, by id.
async fn start_games(db: &Db, n: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(db.start_game(0, &[1, 2]).await.unwrap());
    }
    ids
}

/// Every finished game's id, in the order they finished.
async fn done_ids(db: &Db) -> Vec<i64> {
    db.games_page(None, Order::Oldest, 10_000, &SeatFilter::default())
        .await
        .unwrap()
        .iter()
        .map(|d| d.key.id)
        .collect()
}

/// A reader that goes on from the last game it saw (`/api/games?after=`,
/// the standings) sees every game that finishes after it: games finished
/// in the reverse of their ids, many in one millisecond, each come after
/// the one before.
async fn a_reader_going_on_from_its_last_game_misses_none(db: Db) {
    let all = SeatFilter::default();
    let ids = start_games(&db, 40).await;
    let mut last = None;
    for &id in ids.iter().rev() {
        assert!(db.finish_game(id, "{}", b"").await.unwrap());
        let new = db
            .games_page(last.as_ref(), Order::Oldest, 100, &all)
            .await
            .unwrap();
        let got: Vec<i64> = new.iter().map(|d| d.key.id).collect();
        assert_eq!(got, [id], "after {last:?}");
        last = Some(new[0].key.clone());
        assert_eq!(db.done_key(id).await.unwrap(), last);
    }
    let order = done_ids(&db).await;
    assert_eq!(order, ids.iter().rev().copied().collect::<Vec<_>>());

    // Finishers at once, on the store's connections, and a reader going
    // on from its last game all along: it reads every game, in the order
    // of the whole list at the end.
    let ids = start_games(&db, 200).await;
    let finishers: Vec<_> = ids
        .chunks(25)
        .map(|chunk| {
            let (db, chunk) = (db.clone(), chunk.to_vec());
            tokio::spawn(async move {
                for id in chunk.into_iter().rev() {
                    assert!(db.finish_game(id, "{}", b"").await.unwrap());
                }
            })
        })
        .collect();
    let mut read = order;
    let mut last = db.done_key(read[read.len() - 1]).await.unwrap();
    fn more(read: &mut Vec<i64>, last: &mut Option<DoneKey>, page: Vec<Done>) -> bool {
        if let Some(d) = page.last() {
            *last = Some(d.key.clone());
        }
        read.extend(page.iter().map(|d| d.key.id));
        !page.is_empty()
    }
    while !finishers.iter().all(|f| f.is_finished()) {
        let page = db
            .games_page(last.as_ref(), Order::Oldest, 7, &all)
            .await
            .unwrap();
        more(&mut read, &mut last, page);
    }
    for f in finishers {
        f.await.unwrap();
    }
    loop {
        let page = db
            .games_page(last.as_ref(), Order::Oldest, 100, &all)
            .await
            .unwrap();
        if !more(&mut read, &mut last, page) {
            break;
        }
    }
    let order = done_ids(&db).await;
    assert_eq!(order.len(), 240);
    assert_eq!(read, order, "the reader missed or repeated games");
}
both!(
    a_reader_going_on_from_its_last_game_misses_none,
    reader_going_on_sqlite,
    reader_going_on_postgres
);

/// A bot's games against an opponent: one seat the bot's, another the
/// opponent's; a bot against itself (its versions against each other)
/// is two seats of its own, not one seat counted twice.
async fn games_against_an_opponent_take_two_seats(db: Db) {
    // Versions 1 and 2 are one bot's, 3 another's.
    let seats: [&[i64]; 6] = [&[1, 2], &[1, 3], &[3, 2], &[1, 1], &[3, 1, 2], &[11, 21]];
    let mut ids = Vec::new();
    for s in seats {
        let id = db.start_game(0, s).await.unwrap();
        assert!(db.finish_game(id, "{}", b"").await.unwrap());
        ids.push(id);
    }
    let page = |versions: &[i64], against: &[i64]| {
        let only = SeatFilter {
            versions: Some(versions.to_vec()),
            against: Some(against.to_vec()),
            variants: None,
            test: None,
        };
        let db = db.clone();
        async move {
            db.games_page(None, Order::Oldest, 100, &only)
                .await
                .unwrap()
                .iter()
                .map(|d| d.key.id)
                .collect::<Vec<_>>()
        }
    };
    let of = |which: &[usize]| which.iter().map(|&i| ids[i]).collect::<Vec<_>>();
    assert_eq!(page(&[1, 2], &[3]).await, of(&[1, 2, 4]));
    assert_eq!(page(&[1, 2], &[1, 2]).await, of(&[0, 3, 4]));
    assert_eq!(page(&[1], &[1, 2]).await, of(&[0, 3, 4]));
    assert_eq!(page(&[2], &[2]).await, of(&[]));
    assert_eq!(page(&[3], &[1, 2]).await, of(&[1, 2, 4]));
}
both!(
    games_against_an_opponent_take_two_seats,
    games_against_sqlite,
    games_against_postgres
);

async fn games_started_together_come_back_in_order(db: Db) {
    // Two equal games among them: either id may go to either.
    let games = vec![
        (1, vec![7, 8, 9]),
        (0, vec![8, 7]),
        (0, vec![7, 8]),
        (0, vec![8, 7]),
    ];
    let started = db.start_games(&games).await.unwrap();
    let got: Vec<(usize, Vec<i64>)> = started
        .iter()
        .map(|t| (t.variant, t.seats.clone()))
        .collect();
    assert_eq!(got, games);
    let mut ids: Vec<i64> = started.iter().map(|t| t.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{started:?}");
    // Each is `playing`, as the tickets say.
    let mut cut = db.unfinished_games().await.unwrap();
    let mut want = started.clone();
    cut.sort_by_key(|t| t.id);
    want.sort_by_key(|t| t.id);
    assert_eq!(cut, want);
    assert!(db.start_games(&[]).await.unwrap().is_empty());
}
both!(
    games_started_together_come_back_in_order,
    games_together_sqlite,
    games_together_postgres
);

async fn max_games_caps_the_queue(db: Db) {
    // Games added to the queue, none claimed.
    let add = |db: &Db, n: usize| {
        let db = db.clone();
        async move {
            db.claim_games(None, 0, &|_| true, &vec![(0, vec![1, 2]); n])
                .await
                .unwrap();
            db.queued_games().await.unwrap()
        }
    };
    // No limit: as many as asked.
    assert_eq!(add(&db, 1).await.1, 1);
    let db = db.with_max_games(Some(3));
    assert_eq!(add(&db, 1).await.1, 2);
    // Three games in the store: no fourth, however many are asked for.
    for n in [2, 1, 5] {
        assert_eq!(add(&db, n).await.1, 3);
    }
    let (queued, pending) = db.queued_games().await.unwrap();
    assert_eq!((queued.len(), pending), (3, 3));
    // A game dropped (its version left) makes room for one more.
    assert_eq!(
        db.drop_stale_pending(&queued[..1], &[], 1).await.unwrap(),
        1
    );
    assert_eq!(add(&db, 2).await.1, 3);
    // Its versions entered, a game stays while its variant is the file's,
    // and goes once the file has fewer variants (variant 0 of none).
    let (queued, _) = db.queued_games().await.unwrap();
    assert_eq!(
        db.drop_stale_pending(&queued[..1], &[1, 2], 1)
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        db.drop_stale_pending(&queued[..1], &[1, 2], 0)
            .await
            .unwrap(),
        1
    );
    assert_eq!(db.queued_games().await.unwrap().1, 2);
}
both!(
    max_games_caps_the_queue,
    max_games_sqlite,
    max_games_postgres
);

async fn one_server_per_database(db: Db) {
    db.claim("127.0.0.1:1").await.unwrap();
    db.heartbeat().await.unwrap();
    // The same process again (a restart in the same process) may.
    db.claim("127.0.0.1:2").await.unwrap();
    // A live process on this host holds it: pid 1 is always alive.
    sqlx::query("UPDATE server SET pid = 1")
        .execute(db.pool())
        .await
        .unwrap();
    match db.claim("127.0.0.1:3").await {
        Err(e @ DbError::Taken { .. }) => {
            let m = e.to_string();
            assert!(m.contains("pid 1 on") && m.contains("127.0.0.1:2"), "{m}");
        }
        other => panic!("a second server: {other:?}"),
    }
    // Not ours any more: the heartbeat says so.
    assert!(matches!(db.heartbeat().await, Err(DbError::Lost)));
    // On another host: alive while its heartbeat is recent...
    sqlx::query("UPDATE server SET host = 'elsewhere', pid = 99999999")
        .execute(db.pool())
        .await
        .unwrap();
    assert!(matches!(
        db.claim("127.0.0.1:4").await,
        Err(DbError::Taken { .. })
    ));
    // ...and taken over once it is 30 s old.
    sqlx::query("UPDATE server SET heartbeat = heartbeat - 31")
        .execute(db.pool())
        .await
        .unwrap();
    db.claim("127.0.0.1:5").await.unwrap();
    db.heartbeat().await.unwrap();
    db.release().await.unwrap();
    assert!(matches!(db.heartbeat().await, Err(DbError::Lost)));
}
both!(
    one_server_per_database,
    one_server_per_database_sqlite,
    one_server_per_database_postgres
);

/// Each closed set (a version's status, a token's role, a game's, a
/// lease's and a forfeit's re-check's state) is checked by the store itself: every word the server
/// writes goes in, any other word is refused on insert and on update,
/// written straight in SQL past the server's enums (issue 46).
async fn closed_sets_take_only_their_words(db: Db) {
    let pool = db.pool().clone();
    let t = "2026-01-01T00:00:00.000Z";
    sqlx::query(
        "INSERT INTO owners (name, token_hash, role, created_at) VALUES ('o', 'h', 'worker', $1)",
    )
    .bind(t)
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("INSERT INTO bots (name, owner_id, created_at) SELECT 'b', id, $1 FROM owners")
        .bind(t)
        .execute(&pool)
        .await
        .unwrap();
    // One row of each table with `WORD` in its closed column.
    let insert = |column: &str, n: usize| -> String {
        match column {
            "owners.role" => format!(
                "INSERT INTO owners (name, token_hash, role, created_at) VALUES ('o{n}', 'h{n}', $1, '{t}')"
            ),
            "versions.status" => format!(
                "INSERT INTO versions (bot_id, number, status, folder, sha256, bytes, created_at, updated_at) \
                 SELECT id, {n}, $1, 'f', 's', 0, '{t}', '{t}' FROM bots"
            ),
            "games.state" => format!(
                "INSERT INTO games (state, variant, seats, created_at) VALUES ($1, 0, '1,2', '{t}')"
            ),
            "leases.state" => format!(
                "INSERT INTO leases (id, game_id, worker_id, state, granted_at, expires) \
                 SELECT 'l{n}', (SELECT MIN(id) FROM games), MIN(id), $1, '{t}', 0 FROM owners"
            ),
            "rechecks.state" => format!(
                "INSERT INTO rechecks (game_id, worker_id, lease_id, reason, offender, row_json, record, state, reported_at) \
                 SELECT (SELECT MIN(id) FROM games), MIN(id), 'l{n}', 'crash', 0, '{{}}', '', $1, '{t}' FROM owners"
            ),
            other => panic!("a closed set this test does not know: {other}"),
        }
    };
    let sets = mancala_arena::serve::store::closed_sets();
    assert_eq!(sets.len(), 5, "{sets:?}");
    let mut n = 0;
    for (column, words) in &sets {
        for word in words {
            n += 1;
            sqlx::query(&insert(column, n))
                .bind(*word)
                .execute(&pool)
                .await
                .unwrap_or_else(|e| panic!("{column} = {word} refused: {e}"));
        }
        n += 1;
        let refused = sqlx::query(&insert(column, n))
            .bind("Forged")
            .execute(&pool)
            .await
            .expect_err(&format!("{column} took a word no server writes"));
        let (table, name) = column.split_once('.').unwrap();
        assert!(
            refused
                .to_string()
                .contains(&format!("{table}_{name}_closed"))
                || refused
                    .to_string()
                    .contains(&format!("{column} must be one of")),
            "{column}: {refused}"
        );
        let updated = sqlx::query(&format!("UPDATE {table} SET {name} = 'Forged'"))
            .execute(&pool)
            .await;
        assert!(
            updated.is_err(),
            "{column} was updated to a word no server writes"
        );
    }
}
both!(
    closed_sets_take_only_their_words,
    closed_sets_take_only_their_words_sqlite,
    closed_sets_take_only_their_words_postgres
);

/// A store written before the closed sets were checked, holding words no
/// server writes, is not half-migrated: the server names each bad row
/// (table, id, column, word) and stops, and starts once they are mended.
#[test]
fn a_store_with_rows_outside_the_closed_sets_is_named_before_it_is_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", tmp.path().join("ladder.db").display());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = Db::open(&url).await.unwrap();
        let pool = db.pool().clone();
        // the store as migration 5 left it: no triggers, no record of 6.
        let triggers: Vec<(String,)> =
            sqlx::query_as("SELECT name FROM sqlite_master WHERE type = 'trigger'")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(triggers.len(), 10, "{triggers:?}");
        for (name,) in triggers {
            sqlx::query(&format!("DROP TRIGGER {name}"))
                .execute(&pool)
                .await
                .unwrap();
        }
        sqlx::query("DELETE FROM _sqlx_migrations WHERE version = 6")
            .execute(&pool)
            .await
            .unwrap();
        db.add_owner("alice", "a", Role::Owner).await.unwrap();
        sqlx::query("UPDATE owners SET role = 'admin'")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO games (state, variant, seats, created_at) VALUES ('lost', 0, '1,2', 't')",
        )
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;
        drop(db);
        let said = match Db::open(&url).await {
            Err(e) => e.to_string(),
            Ok(_) => panic!("a store with bad rows was opened"),
        };
        for part in [
            "owners id 1: role is `admin`",
            "games id 1: state is `lost`",
            "mend or delete these rows",
        ] {
            assert!(said.contains(part), "no `{part}` in: {said}");
        }
        let fix = sqlx::SqlitePool::connect(&url).await.unwrap();
        sqlx::query("UPDATE owners SET role = 'owner'")
            .execute(&fix)
            .await
            .unwrap();
        sqlx::query("DELETE FROM games WHERE state = 'lost'")
            .execute(&fix)
            .await
            .unwrap();
        fix.close().await;
        let db = Db::open(&url).await.expect("the mended store opens");
        let refused = sqlx::query("UPDATE owners SET role = 'admin'")
            .execute(db.pool())
            .await;
        assert!(
            refused.is_err(),
            "migration 6 ran once the rows were mended"
        );
    });
}

/// A write refused for want of room (SQLITE_FULL: a full disk; here
/// SQLite's page limit on the store's one writing connection) does not
/// leave that connection stuck in its failed transaction: once there is
/// room again, the next write goes through. (Before, SQLite had rolled
/// the transaction back itself, sqlx's ROLLBACK then failed, and every
/// later write was "begin_with at non-zero transaction depth" until the
/// server was restarted.)
#[test]
fn a_write_refused_for_want_of_room_leaves_the_store_writable_once_there_is_room() {
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", tmp.path().join("ladder.db").display());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = Db::open(&url).await.unwrap();
        let w = db.write_pool().clone();
        sqlx::query("CREATE TABLE filler (b TEXT)")
            .execute(&w)
            .await
            .unwrap();
        let (pages,): (i64,) = sqlx::query_as("PRAGMA page_count")
            .fetch_one(&w)
            .await
            .unwrap();
        sqlx::query(&format!("PRAGMA max_page_count = {}", pages + 2))
            .fetch_all(&w)
            .await
            .unwrap();
        let mut refused = None;
        for _ in 0..50 {
            let mut tx = db.begin_write().await.unwrap();
            let r = sqlx::query("INSERT INTO filler (b) VALUES ($1)")
                .bind("x".repeat(20_000))
                .execute(&mut *tx)
                .await;
            let r = match r {
                Ok(_) => tx.commit().await,
                Err(e) => Err(e),
            };
            if let Err(e) = r {
                refused = Some(e.to_string());
                break;
            }
        }
        let refused = refused.expect("the page limit was never reached");
        assert!(refused.contains("full"), "{refused}");
        sqlx::query("PRAGMA max_page_count = 1073741823")
            .fetch_all(&w)
            .await
            .unwrap();
        for _ in 0..3 {
            let mut tx = db.begin_write().await.expect("a write after room was made");
            sqlx::query("INSERT INTO filler (b) VALUES ('y')")
                .execute(&mut *tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
        }
        db.add_owner("alice", "a", Role::Owner).await.unwrap();
    });
}

#[test]
fn a_url_of_neither_kind_is_refused_with_what_to_give() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    match rt.block_on(Db::open("mysql://x@y/z")) {
        Err(e) => {
            let m = e.to_string();
            assert!(
                m.contains("sqlite:PATH") && m.contains("postgres://"),
                "{m}"
            );
        }
        Ok(_) => panic!("a MySQL URL opened"),
    }
}

/// The name the test harness gives test `f` of this file: its path in the
/// test binary, without the binary's name.
fn test_name(f: &str) -> String {
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    match module {
        "" => f.to_string(),
        m => format!("{m}::{f}"),
    }
}

/// `cargo test` leaves no PostgreSQL server running (issue 50, 2): the
/// test binary run again for one PostgreSQL test, with no `ARENA_TEST_PG` and
/// a throw-away cluster folder of its own, starts the cluster, and when it
/// ends the cluster is stopped and its folder gone.
#[test]
fn the_tests_stop_the_postgres_cluster_they_start() {
    if std::env::var("ARENA_SKIP_PG").as_deref() == Ok("1") {
        eprintln!("SKIPPED: the PostgreSQL tests were skipped (ARENA_SKIP_PG=1)");
        return;
    }
    // Under /tmp itself: as root the cluster belongs to `postgres`, who
    // cannot enter a private temporary folder.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::path::PathBuf::from(format!(
        "/tmp/arena-pg-stop-test-{}-{nanos}",
        std::process::id()
    ));
    /// Stops and removes what a failed run left.
    struct Leftovers(std::path::PathBuf);
    impl Drop for Leftovers {
        fn drop(&mut self) {
            let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/postgres");
            if self.0.exists() {
                let _ = std::process::Command::new("bash")
                    .arg(script)
                    .arg("stop")
                    .env("ARENA_PG_DIR", &self.0)
                    .output();
            }
            for end in ["lock", "users"] {
                let _ = std::fs::remove_file(format!("{}.{end}", self.0.display()));
            }
        }
    }
    let _leftovers = Leftovers(dir.clone());
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_name("owners_and_tokens_postgres"),
            "--test-threads",
            "1",
        ])
        .env_remove("ARENA_TEST_PG")
        .env("ARENA_PG_DIR", &dir)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.contains("1 passed"),
        "the PostgreSQL test failed: {said}"
    );
    assert!(
        said.contains("running on 127.0.0.1"),
        "no cluster was started: {said}"
    );
    let running = common::processes_with(&dir.display().to_string());
    assert!(
        running.is_empty() && !dir.exists(),
        "the cluster in {} still runs (pids {running:?}) after its tests ended: {said}",
        dir.display()
    );
}

async fn events_rounds_and_their_games(db: Db) {
    use mancala_arena::serve::store::events::{EventSpec, EventStatus, RoundGame};
    db.add_owner("alice", "a", Role::Owner).await.unwrap();
    let alice = db.owner_by_token("a").await.unwrap().unwrap();
    let spec = EventSpec {
        name: "cup".into(),
        rounds: 2,
        games_per_pairing: 2,
        seed: u64::MAX - 3,
    };
    // Fewer than two entered versions: refused, nothing started.
    match db.start_event(&spec).await {
        Err(DbError::Conflict(m)) => assert!(m.contains("at least 2"), "{m}"),
        other => panic!("an event of no versions: {other:?}"),
    }
    let mut ids = Vec::new();
    for bot in ["x", "y", "z"] {
        let folder = |n: i64| format!("bots/{bot}/{n}");
        let v = db
            .new_version(bot, alice.id, &folder, bot, 10)
            .await
            .unwrap();
        db.set_status(v.id, VersionStatus::Entered, "", None)
            .await
            .unwrap();
        ids.push(v.id);
    }
    let e = db.start_event(&spec).await.unwrap();
    assert_eq!(e.entrant_ids, ids);
    assert_eq!(e.entrants, ["x@1", "y@1", "z@1"]);
    assert_eq!((e.status, e.seed), (EventStatus::Running, u64::MAX - 3));
    match db.start_event(&spec).await {
        Err(DbError::Conflict(m)) => assert!(m.contains("exists already"), "{m}"),
        other => panic!("a second `cup`: {other:?}"),
    }
    let cup = EventSpec {
        name: "Cup".into(),
        ..spec.clone()
    };
    match db.start_event(&cup).await {
        Err(DbError::Conflict(m)) => assert!(
            m.contains("an event named `cup` exists already, and `Cup` looks like it"),
            "{m}"
        ),
        other => panic!("`Cup` beside `cup`: {other:?}"),
    }
    // Round 1: a seat-swapped pair, the second playing the first's opening.
    let games = vec![
        RoundGame {
            event_game: "s001-kisolo-t000-g0-o0".into(),
            variant: 0,
            seats: vec![ids[0], ids[1]],
            opening_of: None,
        },
        RoundGame {
            event_game: "s001-kisolo-t000-g0-o1".into(),
            variant: 0,
            seats: vec![ids[1], ids[0]],
            opening_of: Some("s001-kisolo-t000-g0-o0".into()),
        },
    ];
    assert!(db.queue_event_round(e.id, 1, "{}", &games).await.unwrap());
    // Stored once: a second queueing of round 1 changes nothing.
    assert!(!db.queue_event_round(e.id, 1, "{}", &games).await.unwrap());
    let rounds = db.event_rounds(e.id).await.unwrap();
    assert_eq!((rounds.len(), rounds[0].round), (1, 1));
    let claimed = db.claim_games(None, 8, &|_| true, &[]).await.unwrap();
    assert_eq!(claimed.len(), 2, "{claimed:?}");
    let (first, second) = (&claimed[0].ticket, &claimed[1].ticket);
    assert_eq!((first.opening, second.opening), (first.id, first.id));
    assert_eq!(second.seats, [ids[1], ids[0]]);
    assert!(db.finish_game(first.id, "{\"g\":1}", b"").await.unwrap());
    assert_eq!(db.event_games_done(e.id).await.unwrap(), 1);
    let listed = db.event_games(e.id).await.unwrap();
    assert_eq!(listed[0].event_game, "s001-kisolo-t000-g0-o0");
    assert_eq!(listed[0].row_json.as_deref(), Some("{\"g\":1}"));
    assert!(listed[0].finished_at.is_some());
    assert_eq!(
        (listed[1].state.as_str(), listed[1].row_json.as_deref()),
        ("playing", None)
    );
    // An entrant leaves: the event is an orphan, and ends cancelled.
    assert!(db.orphan_events().await.unwrap().is_empty());
    assert!(db.retire("z").await.unwrap().changed());
    assert_eq!(
        db.orphan_events().await.unwrap(),
        [(e.id, "z@1".to_string())]
    );
    assert!(db
        .end_event(e.id, EventStatus::Cancelled, "z@1 left the ladder")
        .await
        .unwrap());
    assert!(!db.end_event(e.id, EventStatus::Finished, "").await.unwrap());
    let e = db.event_named("cup").await.unwrap().unwrap();
    assert_eq!(
        (e.status, e.detail.as_str()),
        (EventStatus::Cancelled, "z@1 left the ladder")
    );
    assert!(e.finished_at.is_some());
    assert!(!db.queue_event_round(e.id, 2, "{}", &games).await.unwrap());
    assert_eq!(db.events(true, 10).await.unwrap().len(), 0);
    assert_eq!(db.events(false, 10).await.unwrap().len(), 1);
}
both!(
    events_rounds_and_their_games,
    events_sqlite,
    events_postgres
);

/// The variants' numbers across runs (migration 12): a ladder file whose
/// `variants` are reordered or cut keeps each game's variant.
async fn games_keep_their_variant_when_the_file_reorders_or_cuts_it(db: Db) {
    let labels = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let first = labels(&["kisolo", "filo", "tricala-3p"]);
    // A game of variant 5 from before the store named its variants.
    db.claim_games(None, 0, &|_| true, &[(5, vec![1, 2])])
        .await
        .unwrap();
    // The first start takes the file's order, and names the number it
    // cannot (`#5`), after the file's.
    let r = db.number_variants(&first).await.unwrap();
    assert_eq!(r.moved, vec![("#5".to_string(), 5, 3)]);
    assert_eq!(r.games, 1);
    // A game of each of the file's variants.
    db.claim_games(
        None,
        0,
        &|_| true,
        &[(0, vec![1, 2]), (1, vec![1, 2]), (2, vec![1, 2, 3])],
    )
    .await
    .unwrap();
    let variants = || async {
        let (mut q, _) = db.queued_games().await.unwrap();
        q.sort_by_key(|t| t.id);
        q.iter().map(|t| t.variant).collect::<Vec<_>>()
    };
    assert_eq!(variants().await, vec![3, 0, 1, 2]);
    // Nothing changed: nothing moves.
    let r = db.number_variants(&first).await.unwrap();
    assert_eq!((r.moved.len(), r.games), (0, 0));
    // Reordered and cut: each game keeps its variant under its new number;
    // filo's, gone from the file, comes after the file's (and `#5` after
    // it), out of the file's range.
    let r = db
        .number_variants(&labels(&["tricala-3p", "kisolo"]))
        .await
        .unwrap();
    assert_eq!(
        r.moved,
        vec![
            ("kisolo".to_string(), 0, 1),
            ("filo".to_string(), 1, 2),
            ("tricala-3p".to_string(), 2, 0),
        ]
    );
    assert_eq!(variants().await, vec![3, 1, 2, 0]);
    // filo back in the file, where it was: its game is filo's again.
    let r = db.number_variants(&first).await.unwrap();
    assert_eq!(r.games, 3);
    assert_eq!(variants().await, vec![3, 0, 1, 2]);
}
both!(
    games_keep_their_variant_when_the_file_reorders_or_cuts_it,
    variant_order_sqlite,
    variant_order_postgres
);

/// A worker revoked (a rogue one) holds its games no longer: its active
/// leases end at once, and the next sweep puts their games back in the
/// queue, rather than at the end of their lease time.
async fn a_revoked_workers_leases_end_at_once(db: Db) {
    use mancala_arena::serve::store::GameState;
    assert!(!db.add_owner("w1", "hash-w1", Role::Worker).await.unwrap());
    assert!(!db.add_owner("w2", "hash-w2", Role::Worker).await.unwrap());
    let w1 = db.owner_by_token("hash-w1").await.unwrap().unwrap();
    let w2 = db.owner_by_token("hash-w2").await.unwrap().unwrap();
    let seats = vec![(0, vec![1, 2])];
    let rogue = db
        .claim_games(Some((w1.id, 600)), 1, &|_| true, &seats)
        .await
        .unwrap();
    let honest = db
        .claim_games(Some((w2.id, 600)), 1, &|_| true, &seats)
        .await
        .unwrap();
    let now = rogue[0].lease.as_ref().unwrap().expires - 600;
    assert!(db.expire_leases(now).await.unwrap().is_empty());
    assert!(db.revoke_owner("w1").await.unwrap());
    let expired = db.expire_leases(now).await.unwrap();
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert_eq!(
        (expired[0].game, expired[0].worker.as_str()),
        (rogue[0].ticket.id, "w1")
    );
    let (state, _) = db.game_ticket(rogue[0].ticket.id).await.unwrap().unwrap();
    assert_eq!(state, GameState::Pending);
    let (state, _) = db.game_ticket(honest[0].ticket.id).await.unwrap().unwrap();
    assert_eq!(state, GameState::Playing);
}
both!(
    a_revoked_workers_leases_end_at_once,
    revoked_worker_leases_sqlite,
    revoked_worker_leases_postgres
);

/// A worker that claims a game and only renews its lease by heartbeat
/// (never plays it) holds it until the lease's life is over, not for
/// ever: then its next heartbeat ends the lease, the game goes back to
/// the queue and the renewal says so (the server counts it against the
/// worker). Before, each heartbeat gave it another lease time.
async fn a_lease_held_by_heartbeats_alone_ends_at_its_life(db: Db) {
    use mancala_arena::serve::store::{GameState, LeaseState};
    assert!(!db.add_owner("w1", "hash-w1", Role::Worker).await.unwrap());
    let w = db.owner_by_token("hash-w1").await.unwrap().unwrap();
    let claimed = db
        .claim_games(Some((w.id, 60)), 1, &|_| true, &[(0, vec![1, 2])])
        .await
        .unwrap();
    let lease = claimed[0].lease.clone().unwrap();
    let game = claimed[0].ticket.id;
    let life = 780;
    let start = lease.expires - 60;
    // Heartbeats every 20 s, up to its life: each renews it.
    let mut t = start;
    while t + 20 < start + life {
        t += 20;
        let r = db
            .renew_leases(w.id, std::slice::from_ref(&lease.id), t, 60, life)
            .await
            .unwrap();
        assert_eq!(r.renewed, vec![lease.id.clone()], "at +{} s", t - start);
        assert!(r.over_life.is_empty());
    }
    // Past it: ended, whatever the heartbeat, its game back in the queue.
    let r = db
        .renew_leases(
            w.id,
            std::slice::from_ref(&lease.id),
            start + life + 5,
            60,
            life,
        )
        .await
        .unwrap();
    assert!(r.renewed.is_empty(), "{r:?}");
    assert_eq!(r.over_life, vec![(lease.id.clone(), game)]);
    let l = db.lease(&lease.id).await.unwrap().unwrap();
    assert_eq!(l.state, LeaseState::Expired);
    let (state, _) = db.game_ticket(game).await.unwrap().unwrap();
    assert_eq!(state, GameState::Pending);
    // Counted once: the next heartbeat finds it lost, not over its life.
    let r = db
        .renew_leases(
            w.id,
            std::slice::from_ref(&lease.id),
            start + life + 10,
            60,
            life,
        )
        .await
        .unwrap();
    assert!(r.renewed.is_empty() && r.over_life.is_empty(), "{r:?}");
}
both!(
    a_lease_held_by_heartbeats_alone_ends_at_its_life,
    lease_life_sqlite,
    lease_life_postgres
);

/// A page of finished games is read along the finish order's index, on
/// SQLite, whatever its bound, order and seats: SQLite took the index of
/// states for `state = 'done'` and sorted every finished game for each
/// page (0.5 s a page at 230,000 games), so that four anonymous listings
/// filtered by a row's field (`/api/games?reason=timeout`, up to a
/// hundred pages each) held the store for a minute.
#[test]
fn a_page_of_games_follows_the_finish_order_and_sorts_nothing() {
    use mancala_arena::serve::store::browse::page_sql;
    with_store("page_plan", Backend::Sqlite, |db| async move {
        for s in [&[1i64, 2][..], &[2, 1]] {
            let id = db.start_game(0, s).await.unwrap();
            assert!(db.finish_game(id, "{}", b"").await.unwrap());
        }
        let filters = [
            SeatFilter::default(),
            SeatFilter {
                versions: Some(vec![1]),
                against: None,
                variants: Some(vec![0]),
                test: None,
            },
            SeatFilter {
                versions: Some(vec![1]),
                against: Some(vec![2]),
                variants: None,
                test: None,
            },
        ];
        for only in &filters {
            for order in [Order::Oldest, Order::Newest] {
                for from in [false, true] {
                    let sql = format!("EXPLAIN QUERY PLAN {}", page_sql(from, order, only));
                    let mut q = sqlx::query_as::<_, (i64, i64, i64, String)>(&sql).bind(500i64);
                    if from {
                        q = q.bind(1i64);
                    }
                    let plan: Vec<String> = q
                        .fetch_all(db.pool())
                        .await
                        .unwrap()
                        .into_iter()
                        .map(|r| r.3)
                        .collect();
                    let plan = plan.join("; ");
                    assert!(
                        plan.contains("games_by_done") && !plan.contains("TEMP B-TREE"),
                        "{order:?}, from {from}, {only:?}: {plan}"
                    );
                }
            }
        }
    });
}

/// Every connection to a SQLite store cuts the WAL file back to 64 MiB
/// when a checkpoint empties it: a probe's long readers, while games were
/// written, had grown it to 1.8 GB, which stayed on the disk for good.
#[test]
fn a_sqlite_stores_wal_is_cut_back_after_checkpoints() {
    with_store("wal_limit", Backend::Sqlite, |db| async move {
        for _ in 0..3 {
            let (limit,): (i64,) = sqlx::query_as("PRAGMA journal_size_limit")
                .fetch_one(db.pool())
                .await
                .unwrap();
            assert_eq!(limit, 64 << 20);
        }
    });
}
