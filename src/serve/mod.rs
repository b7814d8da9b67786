//! The ladder service (`arena serve`, docs/ladder.md): owners upload bots
//! over HTTP; each is unpacked, built and checked in the sandbox, entered,
//! and plays for ever through the league's own pipeline; ratings are
//! refitted in the background; pages, a JSON API and exports show it all.
//!
//! A small core that starts the parts and stops them, over wings laid out
//! by the way data flows. Every file here:
//!
//! - the core (this folder's own files; no wing imports them):
//!   - `mod.rs`: `arena serve` and its organiser's commands (`--add-user`,
//!     `--backup`, ...); the service assembled (each part handed what it
//!     uses), its threads started and stopped in one place ([`Parts`]);
//!   - `ladder.rs`: [`ladder::Ladder`], the core's own type: the parts and
//!     the handles they share, as the core and the web layer reach them;
//!   - `play.rs`: the server's own games, through the league's runner
//!     (`LadderPairings` and `DbStore`, the two seams);
//!   - `standings.rs`: the ratings refitted in the background;
//!   - `recheck.rs`: the forfeits workers report, played again on the
//!     server, and the workers that fail them put in quarantine;
//!   - `version_tests.rs`: the tests between versions judged by the SPRT
//!     as their games finish, and ended (the old version's fate);
//!   - `events.rs`: the events (a Swiss among the entered versions) moved
//!     on as their games are committed: each round queued once the round
//!     before is committed, the event ended after its last;
//!   - `analysis.rs`: a game's analysis asked for by an owner, judged by
//!     `crate::analyse` on a blocking thread within a budget, one at a
//!     time, and kept.
//! - `bus/`: the handles the parts share (wake-up and stop, live feed,
//!   counters, fits, store queries from a thread); imports nothing above;
//!   `pace.rs`: how fast each worker plays, learnt from its uploads (the
//!   size of the claims it is granted).
//! - `store/`: SQLite or PostgreSQL through sqlx, and SQL nowhere else:
//!   `mod.rs` (the store, its migrations, owners, bots, versions, games),
//!   `open.rs` (what opening a store makes sure of first: not another
//!   application's database, not a damaged file, a folder this user can
//!   write, a PostgreSQL server that answers), `leases.rs` (the queue's rows and the workers' leases), `grace.rs` (a
//!   restart's grace for the workers' leases, a stopping worker's leases
//!   given back), `finished.rs` (the finished games summed up for fits and
//!   exports), `quarantine.rs` (forfeits held for their re-check, workers
//!   in quarantine), `browse.rs` (the games browser's pages, the
//!   workers' counts), `tokens.rs`, `version_tests.rs` (the tests between
//!   versions, their pairs' games), `stderr.rs` (each bot's stderr per
//!   game), `prune.rs` (records past the retention pruned, rows kept),
//!   `uploads.rs` (a batch of workers' uploads committed in one
//!   transaction), `events.rs` (the events, their rounds as paired, their
//!   games), `analysis.rs` (the games' analyses), `variant_order.rs`
//!   (the variants' numbers kept across runs, the games renumbered when
//!   the ladder file's `variants` change), `history.rs` (the ratings'
//!   history, kept across restarts).
//! - `schedule/`: `pairing.rs` (the pure pairing rule), `queue.rs` (the
//!   scheduler that keeps the rule's picks in the store to be claimed),
//!   `version_test.rs` (the tests' pairs, queued beside them), `event.rs`
//!   (an event's rounds: a league Swiss replayed from its committed games).
//! - `intake/`: uploads in, versions out: `mod.rs` (an upload accepted,
//!   built, checked, entered), `inbox.rs` (uploads bounded at once, a body
//!   streamed to a file), `pool.rs` (which upload is built and checked
//!   next: fair between owners), `limits.rs` (the organiser's limits over
//!   a bot.toml's), `check.rs` (the upload's `check-bot`), `verify.rs` (a
//!   worker's uploaded game replayed and checked), `recheck.rs` (a reported
//!   forfeit played again up to its decision), `suspects.rs` (the pure
//!   rules that pick the workers to quarantine).
//! - `web/`: one file per resource, each a router, merged in `web/mod.rs`:
//!   `pages.rs`, `status.rs` (`/health`, `/metrics`), `bots.rs`, `games.rs`,
//!   `exports.rs`, `feed.rs`, `workers.rs`, `quarantine.rs`, `browse.rs`
//!   (the games browser and the listings' filters), `version_tests.rs`
//!   (the tests between versions), `events.rs` (the events' pages and
//!   API), `stderr.rs` (a game's stderr for its bots' owners),
//!   `analysis.rs` (a game's analysis, asked for by its bots' owners);
//!   `auth.rs`, `error.rs` and `variants.rs` (a variant as a request
//!   names it) below them; the pages' minijinja templates in
//!   `templates/`.
//!
//! What the server shares with its clients (the upload archive, the
//! worker protocol's words) is in [`crate::wire`]; the clients (`arena
//! worker`) in [`crate::client`]; `arena view` in [`crate::view`].

pub mod analysis;
pub mod bus;
pub mod events;
pub mod intake;
pub mod ladder;
pub mod play;
pub mod recheck;
pub mod schedule;
pub mod standings;
pub mod store;
pub mod version_tests;
pub mod web;

use crate::league::config::ladder::LadderSettings;
use crate::league::config::Tournament;
use bus::{Feed, Fits, Metrics, Queries, Wake};
use intake::inbox::Gates;
use intake::Intake;
use ladder::{Ladder, Workers};
use schedule::queue::Scheduler;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use store::finished::{read_finished, Finished};
use store::{new_token, token_hash, Db, DbError, Role};

/// Errors that stop the service, or a user command, with what to do.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}: this is not a ladder file: add a [ladder] table (docs/ladder.md)")]
    NotALadder(String),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("no user named `{0}`")]
    NoSuchUser(String),
    #[error(
        "no worker named `{0}` is in quarantine (the workers' page, /api/workers, lists them)"
    )]
    NotQuarantined(String),
    #[error("user name `{0}`: give 1 to 40 letters, digits, `.`, `_` or `-`")]
    BadUserName(String),
    #[error("event name `{0}`: give 1 to 40 letters, digits, `.`, `_` or `-`, starting with a letter or digit")]
    BadEventName(String),
    #[error("no event named `{0}` (/api/tournaments lists them)")]
    NoSuchEvent(String),
    #[error("event `{0}` is {1} already: only a running event is cancelled")]
    EventOver(String, String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let what = what.into();
    move |source| ServeError::Io { what, source }
}

/// How `arena serve` runs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Where to listen (loopback unless told otherwise).
    pub bind: SocketAddr,
    /// The store's URL; default `sqlite:` in the ladder's results folder.
    pub db: Option<String>,
    /// Serve the pages and the API's reads only, beside the ladder's own
    /// server on the same database: no claim, no games, no intake.
    pub pages_only: bool,
    /// The ladder file's text, sent to workers when they register.
    pub ladder_text: String,
    /// Games the server plays itself (`--local-games`; `None`: the file's
    /// `games_in_flight`; 0: only workers play).
    pub local_games: Option<usize>,
    /// How long a worker's lease lasts without a heartbeat
    /// (`--lease-seconds`).
    pub lease_seconds: i64,
}

/// The ladder's settings, or why `t` is not a ladder.
fn settings_of(t: &Tournament) -> Result<LadderSettings, ServeError> {
    t.ladder
        .clone()
        .ok_or_else(|| ServeError::NotALadder(t.name.clone()))
}

/// A runtime for the store and the web layer.
fn runtime() -> Result<tokio::runtime::Runtime, ServeError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("cannot start the async runtime"))
}

/// Opens the ladder's store (creating its folder).
async fn open_db(t: &Tournament, url: Option<&str>) -> Result<Db, ServeError> {
    std::fs::create_dir_all(&t.output).map_err(io(t.output.display().to_string()))?;
    let url = url.map_or_else(|| Db::default_url(&t.output), str::to_string);
    Ok(Db::open(&url).await?)
}

/// `--add-user NAME`: a new owner, or a new token for a revoked one (the
/// same owner, their bots kept); returns their token (shown once; only
/// its hash is kept) and whether they were there before.
pub fn add_user(
    t: &Tournament,
    db: Option<&str>,
    name: &str,
) -> Result<(String, bool), ServeError> {
    add_token(t, db, name, Role::Owner)
}

/// `--add-worker NAME`: a new worker token (role `worker`: it claims and
/// uploads games, and cannot upload bots), or a new token for a revoked
/// worker; returns it (shown once) and whether it was there before.
pub fn add_worker(
    t: &Tournament,
    db: Option<&str>,
    name: &str,
) -> Result<(String, bool), ServeError> {
    add_token(t, db, name, Role::Worker)
}

/// A new token for `name` in `role`: only its hash is stored. `true`
/// with it when `name` was revoked and is given a new token.
fn add_token(
    t: &Tournament,
    db: Option<&str>,
    name: &str,
    role: Role,
) -> Result<(String, bool), ServeError> {
    settings_of(t)?;
    if intake::name_problem(name).is_some() {
        return Err(ServeError::BadUserName(name.to_string()));
    }
    let token = new_token();
    let again = runtime()?.block_on(async {
        let db = open_db(t, db).await?;
        Ok::<_, ServeError>(db.add_owner(name, &token_hash(&token), role).await?)
    })?;
    Ok((token, again))
}

/// `--revoke-user NAME`: their token stops working at once.
pub fn revoke_user(t: &Tournament, db: Option<&str>, name: &str) -> Result<(), ServeError> {
    settings_of(t)?;
    runtime()?.block_on(async {
        let db = open_db(t, db).await?;
        match db.revoke_owner(name).await? {
            true => Ok(()),
            false => Err(ServeError::NoSuchUser(name.to_string())),
        }
    })
}

/// `--release-worker NAME`: a worker in quarantine may claim and upload
/// games again (docs/security.md, "Forged results").
pub fn release_worker(t: &Tournament, db: Option<&str>, name: &str) -> Result<(), ServeError> {
    settings_of(t)?;
    runtime()?.block_on(async {
        let db = open_db(t, db).await?;
        match db.release_worker(name).await? {
            true => Ok(()),
            false => Err(ServeError::NotQuarantined(name.to_string())),
        }
    })
}

/// `--start-swiss NAME`: an event (docs/ladder.md "Events"), a Swiss of
/// `rounds` rounds (default: log2 of the entrants, rounded up, plus 2,
/// as a league's) among the versions entered now, each pairing a
/// mini-match of `games_per_pairing` games per variant; its seed drawn
/// from the ladder's and its name. A running server plays it.
pub fn start_swiss(
    t: &Tournament,
    db: Option<&str>,
    name: &str,
    (rounds, games_per_pairing): (Option<u32>, u32),
) -> Result<store::events::Event, ServeError> {
    settings_of(t)?;
    if intake::name_problem(name).is_some() {
        return Err(ServeError::BadEventName(name.to_string()));
    }
    runtime()?.block_on(async {
        let db = open_db(t, db).await?;
        let entered = db
            .versions(Some(store::VersionStatus::Entered))
            .await?
            .len();
        let rounds = rounds.unwrap_or_else(|| (entered.max(1) as f64).log2().ceil() as u32 + 2);
        let spec = store::events::EventSpec {
            name: name.to_string(),
            rounds: i64::from(rounds),
            games_per_pairing: i64::from(games_per_pairing),
            seed: crate::league::schedule::group_seed(t.seed, &format!("event:{name}")),
        };
        Ok(db.start_event(&spec).await?)
    })
}

/// `--cancel-event NAME`: a running event ends `cancelled`, its pending
/// games dropped (its games played stay the ladder's).
pub fn cancel_event(t: &Tournament, db: Option<&str>, name: &str) -> Result<(), ServeError> {
    settings_of(t)?;
    runtime()?.block_on(async {
        let db = open_db(t, db).await?;
        let e = db
            .event_named(name)
            .await?
            .ok_or_else(|| ServeError::NoSuchEvent(name.to_string()))?;
        let why = "cancelled by the organiser";
        match db
            .end_event(e.id, store::events::EventStatus::Cancelled, why)
            .await?
        {
            true => Ok(()),
            false => Err(ServeError::EventOver(
                name.to_string(),
                e.status.to_string(),
            )),
        }
    })
}

/// `--backup FILE`: a consistent copy of the store, while it serves
/// (SQLite); for PostgreSQL, the `pg_dump` command that makes one.
pub fn backup(t: &Tournament, db: Option<&str>, to: &std::path::Path) -> Result<(), ServeError> {
    runtime()?.block_on(async {
        let url = db.map_or_else(|| Db::default_url(&t.output), str::to_string);
        let db = open_db(t, Some(&url)).await?;
        Ok(db.backup(to, &url).await?)
    })
}

/// `arena serve`: serves the ladder until Ctrl-C or SIGTERM; `on_listen`
/// is told the address once it listens.
pub fn serve(
    t: Tournament,
    opts: &ServeOptions,
    on_listen: &mut dyn FnMut(SocketAddr),
) -> Result<(), ServeError> {
    // The versions' folders are stored under it: absolute, so that a
    // server started again from another folder still finds them.
    let mut t = t;
    t.output = std::path::absolute(&t.output).map_err(io(t.output.display().to_string()))?;
    let mut settings = settings_of(&t)?;
    if let Some(n) = opts.local_games {
        settings.games_in_flight = n;
    }
    let rt = runtime()?;
    let (ladder, listener) = rt.block_on(async {
        let db = open_db(&t, opts.db.as_deref())
            .await?
            .with_max_games(settings.max_games);
        let listener = tokio::net::TcpListener::bind(opts.bind)
            .await
            .map_err(|e| io(crate::host::cannot_listen(opts.bind, &e))(e))?;
        let address = listener
            .local_addr()
            .map_err(io("the listening address"))?
            .to_string();
        let mut cut = 0;
        if !opts.pages_only {
            db.claim(&address).await?;
            db.refuse_unreceived().await?;
            number_variants(&db, &t).await?;
            rehome_versions(&db, &t).await?;
            note_played_under(&db, &t).await?;
            // What a server killed mid-upload left: bodies half spooled,
            // folders half unpacked. This server alone holds the store now.
            let left = clear_incoming(&t.output.join("incoming"));
            if left > 0 {
                tracing::info!("removed {left} uploads left half received by the server before");
            }
            cut = db.requeue_cut_off().await?;
            // Workers' leases that ran out while the server was down get
            // one lease time more: their spooled games still count.
            let graced = db
                .grace_leases(store::unix_now() + opts.lease_seconds)
                .await?;
            if graced > 0 {
                tracing::info!(
                    "{graced} workers' leases given {} s more after the restart",
                    opts.lease_seconds
                );
            }
        }
        let ladder = assemble(t, settings, opts, db).await?;
        ladder.metrics.games_replayed.store(cut, Ordering::Relaxed);
        ladder.note_played_out();
        Ok::<_, ServeError>((ladder, listener))
    })?;
    let addr = listener.local_addr().map_err(io("the listening address"))?;
    tracing::info!("serving {} at http://{addr}", ladder.t.name);
    let stop = rt.block_on(async { crate::host::Termination::listen() });
    on_listen(addr);
    let parts = Parts::start(&ladder, &rt)?;
    let router = web::router(ladder.clone());
    let served = rt.block_on(serve_until_stopped(listener, router, ladder.clone(), stop));
    wind_down(rt, &ladder, parts);
    served.map_err(io("the web server"))?;
    match ladder.lost.load(std::sync::atomic::Ordering::SeqCst) {
        true => Err(DbError::Lost.into()),
        false => Ok(()),
    }
}

/// Numbers the ladder file's variants in the store (`store/variant_order.rs`):
/// a variant the file moved or dropped keeps its games, and says so.
async fn number_variants(db: &Db, t: &Tournament) -> Result<(), ServeError> {
    let labels: Vec<String> = t.variants.iter().map(|v| v.label()).collect();
    let r = db.number_variants(&labels).await?;
    for (label, was, now) in r.moved.iter().filter(|(l, _, _)| labels.contains(l)) {
        tracing::warn!(
            "variant {label} is number {} of the ladder file's now, was {}: its games follow it",
            now + 1,
            was + 1
        );
    }
    // Said at each start, whether or not its number moved (the last of
    // the file's variants leaves without moving).
    for label in db
        .variant_labels()
        .await?
        .iter()
        .filter(|l| !labels.contains(l))
    {
        tracing::warn!(
            "variant {label} is not in the ladder file any more: its games are kept (listed, rated, exported, and found by `variant={label}`), its games not yet played dropped"
        );
    }
    if r.games > 0 {
        tracing::warn!("{} games renumbered to the ladder file's variants", r.games);
    }
    Ok(())
}

/// What the ladder file says its games are played under: the time
/// control, ply cap, limits, sandbox and each variant's options, by name.
fn played_under(t: &Tournament) -> std::collections::BTreeMap<String, String> {
    let limit = |v: Option<u64>| v.map_or("default".to_string(), |v| v.to_string());
    let mut out: std::collections::BTreeMap<String, String> = t
        .time
        .named()
        .into_iter()
        .map(|(k, v)| (format!("time_control.{k}"), v.to_string()))
        .collect();
    out.extend(
        [
            ("max_plies", t.max_plies.to_string()),
            ("limits.memory_mb", limit(t.limits.memory_mb)),
            ("limits.processes", limit(t.limits.processes)),
            ("limits.cpus", limit(t.limits.cpus.map(u64::from))),
            ("limits.file_size_mb", limit(t.limits.file_size_mb)),
            ("sandbox", t.sandbox.word().to_string()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    for v in &t.variants {
        let options: Vec<String> = v.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.insert(format!("variant {} options", v.label()), options.join(" "));
    }
    out
}

/// Says at start what the ladder file changed in how its games are played
/// since the last server started (a time control cut from 100 to 50 ms,
/// say): the games from now on are played under the new settings beside
/// those played under the old, in one rating, and the versions entered
/// were checked under the old; nothing else would tell the organiser or
/// the log's reader. The store keeps the settings for the next start.
async fn note_played_under(db: &Db, t: &Tournament) -> Result<(), ServeError> {
    let now = played_under(t);
    let json = serde_json::to_string(&now).unwrap_or_default();
    let was = db.swap_played_under(&json).await?;
    let Ok(was) = serde_json::from_str::<std::collections::BTreeMap<String, String>>(&was) else {
        // The first start that keeps them: nothing to compare.
        return Ok(());
    };
    let shown = |v: Option<&String>| v.map_or("(none)".to_string(), |v| format!("`{v}`"));
    let changed: Vec<String> = was
        .keys()
        .chain(now.keys().filter(|k| !was.contains_key(*k)))
        .filter(|k| was.get(*k) != now.get(*k))
        .map(|k| format!("{k} {} -> {}", shown(was.get(k)), shown(now.get(k))))
        .collect();
    if !changed.is_empty() {
        tracing::warn!(
            "the ladder file changed how games are played since the last start ({}): the games from now on are played under the new settings, beside those played before in one rating, and the versions entered were checked under the old ones (an owner's upload is checked under the new)",
            changed.join(", ")
        );
    }
    Ok(())
}

/// The versions' folders are stored as absolute paths: a ladder folder
/// moved (or its store restored elsewhere with its `bots/`) would leave
/// every version pointing at the old place: unplayable, or (a copy
/// served beside the ladder it was copied from) that ladder's folders,
/// built and removed under it. A version whose stored folder is not this
/// ladder's `bots/NAME/vN` while that is there is pointed at it, and the
/// number of them said.
async fn rehome_versions(db: &Db, t: &Tournament) -> Result<(), ServeError> {
    let mut moved = 0;
    for v in db.versions(None).await? {
        let here = t
            .output
            .join("bots")
            .join(&v.bot)
            .join(format!("v{}", v.number));
        if here.as_path() != std::path::Path::new(&v.folder) && here.is_dir() {
            db.set_folder(v.id, &here.display().to_string()).await?;
            moved += 1;
        }
    }
    if moved > 0 {
        tracing::warn!(
            "{moved} versions' folders were not where the store said (the ladder's folder moved, or its store restored elsewhere): taken from {}",
            t.output.join("bots").display()
        );
    }
    Ok(())
}

/// Removes everything in the ladder's `incoming` folder (uploads being
/// received or unpacked when a server stopped); returns how many entries.
fn clear_incoming(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let path = e.path();
        let gone = match e.file_type().is_ok_and(|t| t.is_dir()) {
            true => std::fs::remove_dir_all(&path),
            false => std::fs::remove_file(&path),
        };
        match gone {
            Ok(()) => removed += 1,
            Err(err) => tracing::warn!(
                "{}: left from before, cannot be removed: {err}",
                path.display()
            ),
        }
    }
    removed
}

/// The service over `db`, its parts handed what each uses: the finished
/// games read, the scheduler primed with what each version played.
async fn assemble(
    t: Tournament,
    settings: LadderSettings,
    opts: &ServeOptions,
    db: Db,
) -> Result<Arc<Ladder>, ServeError> {
    let variants = schedule::queue::variant_keys(&t);
    let mut played = std::collections::HashMap::new();
    let mut finished = Finished::default();
    let (to, read) = read_finished(&db, None, &mut |r| {
        schedule::queue::count_row(&variants, &mut played, &r);
        finished.add(&r);
    })
    .await?;
    (finished.read_to, finished.read) = (to, read);
    let fits = Arc::new(Fits::with_history(db.rating_history().await?));
    let sched = Arc::new(Scheduler::new(
        &t,
        &settings,
        opts.lease_seconds,
        (finished.games(), played),
        db.clone(),
        fits.clone(),
    ));
    let wake = Arc::new(Wake::default());
    let roster_changed = Arc::new(AtomicBool::new(false));
    let queries = Queries(tokio::runtime::Handle::current());
    let feed = Feed::for_this_run(1024);
    let metrics = Arc::new(Metrics::default());
    let entered = {
        let (flag, sched, wake) = (roster_changed.clone(), sched.clone(), wake.clone());
        Box::new(move || ladder::roster_changed(&flag, &sched, &wake))
    };
    let handles = intake::Handles {
        db: db.clone(),
        queries: queries.clone(),
        wake: wake.clone(),
        feed: feed.clone(),
        metrics: metrics.clone(),
    };
    let intake = Arc::new(Intake::new(t.clone(), settings.clone(), handles, entered));
    // Numbered after the file's (`Db::number_variants`).
    let gone_variants = db
        .variant_labels()
        .await?
        .into_iter()
        .enumerate()
        .filter(|(_, label)| !t.variants.iter().any(|v| v.label() == *label))
        .collect();
    let gates = Gates::of(&settings);
    Ok(Arc::new(Ladder {
        t,
        settings,
        db,
        pages_only: opts.pages_only,
        gone_variants,
        queries,
        finished: RwLock::new(finished),
        fits,
        roster_changed,
        wake,
        lost: AtomicBool::new(false),
        played_out: AtomicBool::new(false),
        store_fault: Default::default(),
        feed,
        metrics,
        sched,
        intake,
        workers: Workers::new(opts.lease_seconds, opts.ladder_text.clone()),
        gates,
        analyses: Default::default(),
    }))
}

/// The service's threads and tasks, started and stopped in one place: the
/// fitter; and the player, the intake and the heartbeat, or, serving the
/// pages only, the reader of the finished games.
struct Parts {
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Parts {
    fn start(ladder: &Arc<Ladder>, rt: &tokio::runtime::Runtime) -> Result<Parts, ServeError> {
        let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.to_string())
                .spawn(f)
                .map_err(io(format!("cannot start the {name} thread")))
        };
        let l = ladder.clone();
        let mut threads = vec![spawn(
            "ladder-fit",
            Box::new(move || standings::fit_forever(l)),
        )?];
        let l = ladder.clone();
        if ladder.pages_only {
            threads.push(spawn("ladder-reread", Box::new(move || reread_forever(l)))?);
        } else {
            let intake = ladder.intake.clone();
            threads.push(spawn(
                "ladder-intake",
                Box::new(move || intake::intake_forever(intake)),
            )?);
            rt.spawn(heartbeat_forever(ladder.clone()));
            threads.push(spawn(
                "ladder-play",
                Box::new(move || play::play_forever(l)),
            )?);
            let l = ladder.clone();
            threads.push(spawn(
                "ladder-recheck",
                Box::new(move || recheck::recheck_forever(l)),
            )?);
            let l = ladder.clone();
            threads.push(spawn(
                "ladder-tests",
                Box::new(move || version_tests::judge_forever(l)),
            )?);
            let l = ladder.clone();
            threads.push(spawn(
                "ladder-events",
                Box::new(move || events::run_forever(l)),
            )?);
        }
        Ok(Parts { threads })
    }

    /// Stops every part and joins each thread that ends within a few
    /// seconds. The games in flight are abandoned by the runner on the same
    /// signal and played again after a restart; a build or check still
    /// running is left to the process's end (its version is taken again).
    fn stop(self, ladder: &Ladder) {
        ladder.stop();
        let deadline = std::time::Instant::now() + Duration::from_secs(4);
        for t in self.threads {
            while !t.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let name = t.thread().name().unwrap_or("a part").to_string();
            match t.is_finished() {
                true => {
                    if t.join().is_err() {
                        tracing::error!("the {name} thread panicked");
                    }
                }
                false => tracing::warn!("the {name} thread had not stopped; leaving it"),
            }
        }
    }
}

/// The most connections the server keeps open at once: half its file
/// descriptors (its soft limit, raised to the hard one), the rest left
/// for its store, the uploads' files and the bots of the games it plays;
/// at most 16,384.
fn connections_most() -> usize {
    let fds = crate::host::raise_open_files_limit().unwrap_or(1024);
    usize::try_from(fds / 2)
        .unwrap_or(usize::MAX)
        .clamp(64, 16_384)
}

/// Serves `router` on `listener` until the service stops (a signal, or
/// another part stopping it). The requests in flight then get
/// [`STOP_GRACE`] to finish; a live feed, a body that never comes or a
/// claim that waits do not hold the stop longer (issue 47).
async fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    ladder: Arc<Ladder>,
    stop: crate::host::Termination,
) -> std::io::Result<()> {
    use std::future::IntoFuture;
    let l = ladder.clone();
    let settings = &ladder.settings;
    let refusals = web::JsonRefusals::new(
        listener,
        connections_most(),
        Duration::from_secs(settings.request_head_seconds),
        (settings.connections_per_address, settings.upload_mb),
    );
    let serve = axum::serve(refusals, router)
        .with_graceful_shutdown(async move {
            stop_signal(&l, stop).await;
            l.stop();
        })
        .into_future();
    let cut = async {
        while !ladder.is_stopping() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(STOP_GRACE).await;
    };
    tokio::select! {
        r = serve => r,
        () = cut => {
            tracing::warn!("requests still in flight {} s after the stop: cut off", STOP_GRACE.as_secs());
            Ok(())
        }
    }
}

/// The end of a stop, in bounded time: the service's parts stopped
/// ([`Parts::stop`]: the player's games in flight are played again after a
/// restart), the store's claim released (within [`STOP_GRACE`]), and the
/// runtime shut down without waiting for what still runs (an upload's
/// unpacking, a request cut off); the intake's build, on a thread of its
/// own, ends with the process.
fn wind_down(rt: tokio::runtime::Runtime, ladder: &Ladder, parts: Parts) {
    parts.stop(ladder);
    if !ladder.pages_only {
        let release =
            rt.block_on(async { tokio::time::timeout(STOP_GRACE, ladder.db.release()).await });
        if release.is_err() {
            tracing::warn!(
                "the store's claim was not released in time: the next server takes it over"
            );
        }
    }
    rt.shutdown_timeout(Duration::from_secs(1));
}

/// How long requests in flight (and the release of the store's claim) may
/// hold a stop.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// Refreshes the server's heartbeat every [`store::HEARTBEAT_SECONDS`], so
/// that a server on another host sees its claim alive; stops the server
/// if the claim was taken over (it was taken for dead).
async fn heartbeat_forever(l: Arc<Ladder>) {
    while !l.is_stopping() {
        tokio::time::sleep(Duration::from_secs(store::HEARTBEAT_SECONDS)).await;
        if l.is_stopping() {
            break;
        }
        let beat = l.db.heartbeat().await;
        l.note_store(beat.as_ref().err());
        match beat {
            Ok(()) => {}
            // The stop released the claim while this beat was on its way:
            // the claim was given up, not taken over.
            Err(DbError::Lost) if l.is_stopping() => break,
            Err(DbError::Lost) => {
                tracing::error!("{}", DbError::Lost);
                l.lost.store(true, std::sync::atomic::Ordering::SeqCst);
                l.stop();
            }
            Err(e) => tracing::warn!("the heartbeat was not written: {e}"),
        }
    }
}

/// `--pages-only`: reads the games finished since it last looked (every
/// 2 s at most), for the fitter and the pages. A game that finished a
/// moment earlier than the last one read but was stored later (another
/// process's clock) would be missed: when the counts then differ, it reads
/// them all again.
fn reread_forever(l: Arc<Ladder>) {
    while !l.is_stopping() {
        match l.query(l.db.games_done()) {
            Ok(n) if n as usize != l.games_done() => {
                if let Err(e) = reread(&l, n as usize) {
                    tracing::warn!("the finished games were not read: {e}");
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("the finished games were not counted: {e}"),
        }
        l.wait(Duration::from_secs(2));
    }
}

/// Reads the games finished since the last read (and announces them on
/// the live feed); when that does not make the `done` games of the store,
/// all of them again.
fn reread(l: &Ladder, done: usize) -> Result<(), DbError> {
    let from = l.finished().read_to.clone();
    let mut rows = Vec::new();
    let (to, read) = l.query(read_finished(&l.db, from, &mut |r| rows.push(r)))?;
    let mut f = l.finished.write().unwrap_or_else(|p| p.into_inner());
    for r in &rows {
        f.add(r);
    }
    f.read_to = to;
    f.read += read;
    let complete = f.read >= done;
    drop(f);
    // The live feed of the pages: the games new since the last read, as
    // the serving process announces its own.
    for r in &rows {
        l.announce_game(r);
    }
    if complete {
        return Ok(());
    }
    let mut all = Finished::default();
    let (to, read) = l.query(read_finished(&l.db, None, &mut |r| all.add(&r)))?;
    (all.read_to, all.read) = (to, read);
    l.replace_finished(all);
    Ok(())
}

/// Waits for Ctrl-C or SIGTERM, or for the service to stop by itself.
async fn stop_signal(l: &Ladder, stop: crate::host::Termination) {
    let stopped = async {
        while !l.is_stopping() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::select! {
        () = stop.wait() => {}
        _ = stopped => {}
    }
}
