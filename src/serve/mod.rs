//! The ladder service (`arena serve`, docs/ladder.md): owners upload bots
//! over HTTP; each is unpacked, built and checked in the sandbox, entered,
//! and plays for ever through the league's own pipeline; ratings are
//! refitted in the background; pages, a JSON API and exports show it all.
//!
//! Rooms: `archive` (uploads, packed and unpacked safely), `db` (the
//! store: SQLite or PostgreSQL through sqlx), `intake` (an upload's way to the ladder),
//! `play` (the games: pairings and the store of the runner), `standings`
//! (the fits), `http` (the web layer, which validates and hands over);
//! `view` (`arena view`: a league's results folder served read-only, the
//! report's pages and any game on demand).

pub mod archive;
pub mod checking;
pub mod db;
pub mod finished;
pub mod grace;
pub mod http;
pub mod inbox;
pub mod intake;
pub mod leases;
pub mod limits;
pub mod pages;
pub mod pairing;
pub mod play;
pub mod queue;
pub mod remote;
pub mod standings;
pub mod state;
pub mod verify;
pub mod view;
pub mod workers;

use crate::league::config::Tournament;
use crate::results::GameRow;
use db::{Db, DbError, DoneKey};
use finished::Finished;
use state::{Ladder, Metrics};
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

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
    #[error("user name `{0}`: give 1 to 40 letters, digits, `.`, `_` or `-`")]
    BadUserName(String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let what = what.into();
    move |source| ServeError::Io { what, source }
}

/// The SHA-256 (hex) of a token: what the store keeps of it.
pub fn token_hash(token: &str) -> String {
    intake::hex_sha256(token.as_bytes())
}

/// A new random token: 32 bytes from the system's generator, in hex.
pub fn new_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
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
fn settings_of(
    t: &Tournament,
) -> Result<crate::league::config::ladder::LadderSettings, ServeError> {
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

/// `--add-user NAME`: a new owner; returns their token (shown once; only
/// its hash is kept).
pub fn add_user(t: &Tournament, db: Option<&str>, name: &str) -> Result<String, ServeError> {
    add_token(t, db, name, "owner")
}

/// `--add-worker NAME`: a new worker token (role `worker`: it claims and
/// uploads games, and cannot upload bots); returns it (shown once).
pub fn add_worker(t: &Tournament, db: Option<&str>, name: &str) -> Result<String, ServeError> {
    add_token(t, db, name, "worker")
}

/// A new token for `name` in `role`: only its hash is stored.
fn add_token(
    t: &Tournament,
    db: Option<&str>,
    name: &str,
    role: &str,
) -> Result<String, ServeError> {
    settings_of(t)?;
    if intake::name_problem(name).is_some() {
        return Err(ServeError::BadUserName(name.to_string()));
    }
    let token = new_token();
    runtime()?.block_on(async {
        let db = open_db(t, db).await?;
        db.add_owner(name, &token_hash(&token), role).await?;
        Ok::<_, ServeError>(())
    })?;
    Ok(token)
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
            .map_err(io(format!("cannot listen on {}", opts.bind)))?;
        let address = listener
            .local_addr()
            .map_err(io("the listening address"))?
            .to_string();
        let mut cut = 0;
        if !opts.pages_only {
            db.claim(&address).await?;
            db.refuse_unreceived().await?;
            cut = db.requeue_cut_off().await?;
            // Workers' leases that ran out while the server was down get
            // one lease time more: their spooled games still count.
            let graced = db.grace_leases(db::unix_now() + opts.lease_seconds).await?;
            if graced > 0 {
                tracing::info!(
                    "{graced} workers' leases given {} s more after the restart",
                    opts.lease_seconds
                );
            }
        }
        let variants = queue::variant_keys(&t);
        let mut played = std::collections::HashMap::new();
        let mut finished = Finished::default();
        let (to, read) = read_finished(&db, None, &mut |r| {
            queue::count_row(&variants, &mut played, &r);
            finished.add(&r);
        })
        .await?;
        (finished.read_to, finished.read) = (to, read);
        let workers = workers::Workers::new(
            &t,
            finished.games(),
            played,
            opts.lease_seconds,
            opts.ladder_text.clone(),
        );
        let (events, _) = tokio::sync::broadcast::channel(1024);
        let gates = inbox::Gates::of(&settings);
        let ladder = Arc::new(Ladder {
            t,
            settings,
            db,
            pages_only: opts.pages_only,
            rt: tokio::runtime::Handle::current(),
            finished: RwLock::new(finished),
            fit: RwLock::new(None),
            history: RwLock::new(Default::default()),
            roster_changed: AtomicBool::new(false),
            wake: (Mutex::new(0), Condvar::new()),
            stopping: AtomicBool::new(false),
            lost: AtomicBool::new(false),
            events,
            metrics: Metrics::default(),
            workers,
            gates,
        });
        ladder
            .metrics
            .games_replayed
            .store(cut, std::sync::atomic::Ordering::Relaxed);
        Ok::<_, ServeError>((ladder, listener))
    })?;
    let addr = listener.local_addr().map_err(io("the listening address"))?;
    tracing::info!("serving {} at http://{addr}", ladder.t.name);
    on_listen(addr);
    let spawn = |name: &str, f: fn(Arc<Ladder>)| {
        let l = ladder.clone();
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || f(l))
            .map_err(io(format!("cannot start the {name} thread")))
    };
    let _fitter = spawn("ladder-fit", standings::fit_forever)?;
    let player = match opts.pages_only {
        true => spawn("ladder-reread", reread_forever)?,
        false => {
            let _intake = spawn("ladder-intake", intake::intake_forever)?;
            rt.spawn(heartbeat_forever(ladder.clone()));
            spawn("ladder-play", play::play_forever)?
        }
    };
    let router = http::router(ladder.clone());
    let served = rt.block_on(serve_until_stopped(listener, router, ladder.clone()));
    wind_down(rt, &ladder, &player, opts.pages_only);
    served.map_err(io("the web server"))?;
    match ladder.lost.load(std::sync::atomic::Ordering::SeqCst) {
        true => Err(DbError::Lost.into()),
        false => Ok(()),
    }
}

/// Serves `router` on `listener` until the service stops (a signal, or
/// another part stopping it). The requests in flight then get
/// [`STOP_GRACE`] to finish; a live feed, a body that never comes or a
/// claim that waits do not hold the stop longer (issue 47).
async fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    ladder: Arc<Ladder>,
) -> std::io::Result<()> {
    use std::future::IntoFuture;
    let l = ladder.clone();
    let serve = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            stop_signal(&l).await;
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

/// The end of a stop, in bounded time: the service's parts told, the
/// player given a moment to let its games go (they are played again after
/// a restart), the store's claim released (within [`STOP_GRACE`]), and the
/// runtime shut down without waiting for what still runs (an upload's
/// unpacking, a request cut off); the intake's build, on a thread of its
/// own, ends with the process.
fn wind_down(
    rt: tokio::runtime::Runtime,
    ladder: &Ladder,
    player: &std::thread::JoinHandle<()>,
    pages_only: bool,
) {
    ladder.stop();
    let deadline = std::time::Instant::now() + Duration::from_secs(4);
    while !player.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if !pages_only {
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

/// Refreshes the server's heartbeat every [`db::HEARTBEAT_SECONDS`], so
/// that a server on another host sees its claim alive; stops the server
/// if the claim was taken over (it was taken for dead).
async fn heartbeat_forever(l: Arc<Ladder>) {
    while !l.is_stopping() {
        tokio::time::sleep(Duration::from_secs(db::HEARTBEAT_SECONDS)).await;
        match l.db.heartbeat().await {
            Ok(()) => {}
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
    *l.finished.write().unwrap_or_else(|p| p.into_inner()) = all;
    Ok(())
}

/// Waits for Ctrl-C or SIGTERM, or for the service to stop by itself.
async fn stop_signal(l: &Ladder) {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let sigterm = async {
        match term.as_mut() {
            Some(t) => {
                t.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    let stopped = async {
        while !l.is_stopping() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = sigterm => {}
        _ = stopped => {}
    }
}

/// Reads the games finished after `after` (from the first when `None`), a
/// page at a time, and passes each row to `each`; returns where it ended
/// (`after` when there was none) and how many it read. A row that does
/// not read is logged and left out (and counted).
async fn read_finished(
    db: &Db,
    after: Option<DoneKey>,
    each: &mut (dyn FnMut(GameRow) + Send),
) -> Result<(Option<DoneKey>, usize), DbError> {
    let mut to = after;
    let mut read = 0;
    loop {
        let page = db
            .done_page(to.as_ref(), 5_000, &Default::default())
            .await?;
        let Some(last) = page.last() else {
            return Ok((to, read));
        };
        to = Some(last.key.clone());
        read += page.len();
        for done in page {
            match serde_json::from_str::<GameRow>(&done.row_json) {
                Ok(r) => match crate::results::csvio::rateable(&r) {
                    Ok(()) => each(r),
                    // Named at every start: left out of the standings and
                    // the exports, which must rate as `arena rate` does.
                    Err(e) => tracing::error!(
                        "finished game {} ({}) has a row that cannot be rated, left out of the standings and exports: {e}",
                        done.key.id,
                        r.game_id.escape_debug()
                    ),
                },
                Err(e) => tracing::error!(
                    "finished game {} has a row that does not read: {e}",
                    done.key.id
                ),
            }
        }
    }
}
