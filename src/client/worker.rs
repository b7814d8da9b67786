//! `arena worker`'s library (issue 31, docs/ladder.md "Workers"): a
//! ladder's client that plays games on another machine. It registers,
//! then plays in epochs ([`Epochs`]): claims games (the server decides how
//! many, from the worker's `-j` and its games' pace), fetches each bot
//! version it lacks as a bundle addressed by its SHA-256 (checked, cached,
//! built once per hash by the league's build in the ladder's sandbox), and
//! plays them through the same pipeline and sandbox as `arena run`
//! ([`crate::league::runner::play_all`], with its own `Pairings`, the
//! claimed games topped up by claims as they go, and `Store`, the
//! server): the bots stay up from game to game while the epoch lasts.
//! A heartbeat renews the leases held; an uploader's thread sends the
//! finished games in batches (issue 49), so play never waits for the
//! server. A game whose upload cannot reach the server waits in a spool
//! on disk and is sent when the server is back, or discarded when its
//! lease has gone. The console says what happens once, and every few
//! seconds sums up the games.
//!
//! The cache folder is the worker's own (a lock in it, [`cache`]), and its
//! spool is checked to be writable before the worker registers; a game
//! that can be neither uploaded nor spooled is lost, counted, and stops
//! the worker's claims: it finishes the games being played, returns the
//! others and stops with an error.

use crate::league::config::{BotSpec, RunSettings, Tournament};
use crate::league::folder::{DoneSet, Layout};
use crate::league::pairings::Pairings;
use crate::league::runner::{play_all, Event, LeagueError, RunOptions};
use crate::league::schedule::ScheduledGame;
use crate::results::GameRow;
use crate::wire::worker::{ClaimRequest, Granted, LeasedGame, Leases, Registered, Registration};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod cache;
mod error;
mod hand;
mod http;
mod upload;

use error::io;
pub use error::WorkerError;
use hand::{Hand, Tally};
use http::{Call, Client};

/// How `arena worker` runs.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// The server's URL (`http://host:port`).
    pub server: String,
    /// The worker's token (`arena serve LADDER.toml --add-worker NAME`).
    pub token: String,
    /// Games at once.
    pub jobs: usize,
    /// Bundles, builds, logs and the spool.
    pub cache: PathBuf,
    /// The most the bundles and their built copies take (`--cache-mb`):
    /// past it, those used least recently go ([`evict`]).
    pub cache_bytes: u64,
    /// Plays a ladder file that turns the sandbox off (`--trust-bots`).
    pub trust_bots: bool,
}

/// The server's answer to `what`, as the protocol's type.
fn json<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, WorkerError> {
    serde_json::from_slice(bytes).map_err(|e| WorkerError::Protocol {
        what: what.into(),
        why: e.to_string(),
    })
}

/// Makes the folder `path` of the cache `cache`, as `create_dir_all`
/// does; a file in its place (or in place of a folder above it) is said
/// as such, rather than as the system's `File exists`.
fn make_folder(cache: &Path, path: &Path) -> Result<(), WorkerError> {
    std::fs::create_dir_all(path).map_err(|e| {
        let file = path
            .ancestors()
            .find(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_dir()));
        match file {
            Some(file) => WorkerError::NotAFolder {
                cache: cache.to_path_buf(),
                path: file.to_path_buf(),
            },
            None => io(path.display().to_string())(e),
        }
    })
}

/// Runs the worker until `stop` is raised (Ctrl-C, SIGTERM, SIGHUP); each line
/// of what it does goes to `say`: what happens once (registered, a bot
/// fetched, a game refused or spooled), and every few seconds a summary
/// of the games played and uploaded ([`summarise`]).
pub fn run(
    opts: &WorkerOptions,
    stop: Arc<AtomicBool>,
    say: &(dyn Fn(&str) + Sync),
) -> Result<(), WorkerError> {
    make_folder(&opts.cache, &opts.cache)?;
    // Held until the worker ends: one worker per cache.
    let _lock = cache::lock(&opts.cache)?;
    let client = Client::new(&opts.server, &opts.token).naming(cache::instance(&opts.cache)?);
    for d in ["bundles", "spool", "results"] {
        make_folder(&opts.cache, &opts.cache.join(d))?;
    }
    let spool = opts.cache.join("spool");
    cache::check_writable(&spool)?;
    let tally = Arc::new(Tally::default());
    let (t, lease_seconds) = register(&client, opts, &stop, say, &tally)?;
    let hand = Arc::new(Hand::default());
    let quit = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::sync_channel(4096);
    let every = Duration::from_millis((lease_seconds as u64 * 1000 / 3).max(500));
    let (notes, heard) = std::sync::mpsc::channel::<String>();
    // The console's last summary comes once the uploader is done: its
    // counts are final then.
    let console_open = notes.clone();
    std::thread::scope(|s| {
        let up = s.spawn(|| upload::uploader(&client, &spool, rx, &hand, &tally, say));
        let beat = s.spawn(|| heartbeat(&client, &hand, &quit, every));
        let console = s.spawn(|| summarise(&tally, &hand, &spool, heard, say));
        let played = Epochs {
            client: &client,
            opts,
            t: std::cell::RefCell::new(t),
            hand: &hand,
            tally: &tally,
            stop: &stop,
            notes,
            say,
        }
        .play(tx);
        // The uploader sends what is left, then the spool; the
        // heartbeat renews their leases meanwhile.
        let _ = up.join();
        drop(console_open);
        quit.store(true, Ordering::SeqCst);
        let _ = beat.join();
        let _ = console.join();
        played
    })?;
    if let Some(why) = tally.spool_failure.get() {
        return Err(WorkerError::SpoolFailed {
            lost: tally.lost.load(Ordering::Relaxed),
            why: why.clone(),
        });
    }
    evict(&opts.cache, opts.cache_bytes, &[], say);
    Ok(())
}

/// Sleeps `d`, or less when `stop` is raised.
fn pause(stop: &AtomicBool, d: Duration) {
    sleep_until(stop, d, Duration::from_millis(100), || false);
}

/// Sleeps `d`, or less when `stop` is raised or `done` holds, looking
/// every `step`.
fn sleep_until(stop: &AtomicBool, d: Duration, step: Duration, done: impl Fn() -> bool) {
    let end = std::time::Instant::now() + d;
    while !stop.load(Ordering::SeqCst) && !done() && std::time::Instant::now() < end {
        std::thread::sleep(step.min(d));
    }
}

/// Registers (again, until the server answers): the ladder file it sends,
/// read, and the lease time.
fn register(
    client: &Client,
    opts: &WorkerOptions,
    stop: &AtomicBool,
    say: &(dyn Fn(&str) + Sync),
    tally: &Tally,
) -> Result<(Tournament, i64), WorkerError> {
    let cores = crate::host::allowed_cpus().map_or(1, |c| c.len()) as i64;
    let reg = Registration {
        host: crate::host::host_name(),
        cores,
        jobs: opts.jobs as i64,
        arena_version: env!("CARGO_PKG_VERSION").into(),
        rules_version: crate::engine::RULES_VERSION as i64,
        record_format: crate::referee::record::FORMAT,
        sandbox: vec![
            "namespaces".into(),
            "seccomp".into(),
            "landlock".into(),
            crate::bot::sandbox::cgroup::mechanism().into(),
        ],
        variants: crate::engine::Variant::ALL
            .iter()
            .map(|v| v.name().to_string())
            .collect(),
    };
    let mut failing: Option<String> = None;
    let answer: Registered = loop {
        let asked = std::time::SystemTime::now();
        match client.post("/api/worker/register", &reg) {
            Ok(b) => {
                let answer: Registered = json(&b, "register")?;
                note_clock(&answer, asked, tally, say);
                break answer;
            }
            // An answer, but not a ladder's (a gateway's 502 to 504 may
            // be a proxy whose ladder is restarting: tried again).
            Err(e @ (Call::Refused(..) | Call::Failing(..)))
                if !matches!(e, Call::Failing(502..=504, _)) && !is_ladder(client) =>
            {
                return Err(WorkerError::NotALadder {
                    server: client.server.clone(),
                    why: e.to_string(),
                })
            }
            Err(Call::Refused(s, m)) => return Err(WorkerError::Refused(format!("{s}: {m}"))),
            Err(e) if stop.load(Ordering::SeqCst) => {
                return Err(WorkerError::NotRegistered {
                    server: client.server.clone(),
                    why: e.to_string(),
                })
            }
            Err(e) => {
                // Said once, until the server answers otherwise.
                let why = e.to_string();
                if failing.as_ref() != Some(&why) {
                    say(&format!("cannot register: {why}; trying again every 2 s"));
                    failing = Some(why);
                }
                pause(stop, Duration::from_secs(2));
            }
        }
    };
    if answer.protocol < crate::wire::worker::PROTOCOL {
        return Err(WorkerError::Refused(format!(
            "the server at {} speaks worker protocol {} (arena {}), older than this worker's {} (arena {}), which uploads games in batches: run a worker of the server's arena version, or upgrade the server",
            client.server,
            answer.protocol.max(1),
            answer.accepts.arena_version,
            crate::wire::worker::PROTOCOL,
            env!("CARGO_PKG_VERSION")
        )));
    }
    let text = &answer.ladder;
    let file = opts.cache.join("ladder.toml");
    std::fs::write(&file, text).map_err(io(format!(
        "writing the ladder's file into the cache, {}",
        file.display()
    )))?;
    // The ladder's openings book comes with it: its `openings_file` names
    // a file of the server's, read here from the cache in its place.
    let mut flags = RunSettings::default();
    if let Some(book) = &answer.book {
        let path = opts.cache.join("openings.txt");
        std::fs::write(&path, book).map_err(io(path.display().to_string()))?;
        flags.openings_file = Some(path);
    }
    let mut t = Tournament::parse_with(&file, text, &flags)
        .map_err(|e| WorkerError::Ladder(e.to_string()))?;
    t.output = opts.cache.join("results");
    // The server's organiser may trust its owners; this machine's need not.
    if t.sandbox == crate::bot::Sandbox::Off && !opts.trust_bots {
        return Err(WorkerError::Ladder(
            "it says sandbox = \"off\": its owners' bots would run with this user's rights on this machine; run the worker with --trust-bots only if you trust every owner of the ladder".into(),
        ));
    }
    let lease_seconds = answer.lease_seconds.max(1);
    say(&format!(
        "registered with {} as `{}`: ladder {}, leases of {lease_seconds} s, -j {}",
        client.server, answer.worker, t.name, opts.jobs
    ));
    Ok((t, lease_seconds))
}

/// Whether the server answers `/health` as an arena ladder does (JSON
/// with its `status`, as `arena submit` asks); one that cannot be
/// reached is taken to be one (asked again later).
fn is_ladder(client: &Client) -> bool {
    match client.get("/health") {
        Ok(b) => {
            serde_json::from_slice::<serde_json::Value>(&b).is_ok_and(|v| v["status"].is_string())
        }
        Err(Call::Unreachable(_)) => true,
        Err(_) => false,
    }
}

/// How far this machine's clock is from the server's, from the time the
/// server said in its answer to a registration sent at `asked` (taken at
/// the request's middle): kept in `tally` when over a second, and said.
/// The server refuses a game that starts in its future, so a worker whose
/// clock runs ahead would play every game for nothing.
fn note_clock(
    answer: &Registered,
    asked: std::time::SystemTime,
    tally: &Tally,
    say: &(dyn Fn(&str) + Sync),
) {
    let Some(server) = answer
        .server_time
        .as_deref()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
    else {
        return;
    };
    let now = std::time::SystemTime::now();
    let middle = asked + now.duration_since(asked).unwrap_or_default() / 2;
    let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    let offset = match server.duration_since(middle) {
        Ok(ahead) => ms(ahead),
        Err(e) => -ms(e.duration()),
    };
    let offset = if offset.abs() > 1000 { offset } else { 0 };
    let before = tally.clock_offset_ms.swap(offset, Ordering::Relaxed);
    if offset != 0 && (offset - before).abs() > 1000 {
        say(&format!(
            "this machine's clock is {:.1} s {} the server's: the games' start times are sent on the server's clock (set this clock right: NTP)",
            offset.abs() as f64 / 1000.0,
            if offset < 0 { "ahead of" } else { "behind" }
        ));
    }
}

/// Claims up to `max` games.
fn claim(client: &Client, max: usize) -> Result<Vec<LeasedGame>, Call> {
    let b = client.post("/api/worker/claim", &ClaimRequest { max })?;
    let granted: Granted = serde_json::from_slice(&b)
        .map_err(|e| Call::Unreachable(format!("the server's answer to a claim: {e}")))?;
    Ok(granted.games)
}

/// The folder of the bot in bundle `sha`, fetched, checked and unpacked
/// the first time, and built once (a `SHA.built` mark beside it).
fn bundle(
    client: &Client,
    cache: &Path,
    t: &Tournament,
    sha: &str,
    player: &str,
    say: &(dyn Fn(&str) + Sync),
) -> Result<BotSpec, String> {
    let dir = cache.join("bundles").join(sha);
    if !dir.is_dir() {
        let bytes = client
            .get(&format!("/api/worker/bundles/{sha}"))
            .map_err(|e| format!("bundle {sha} of {player}: {e}"))?;
        let got = crate::wire::hex_sha256(&bytes);
        if got != sha {
            return Err(format!(
                "bundle of {player}: its SHA-256 is {got}, not {sha}: not used"
            ));
        }
        let tmp = cache.join("bundles").join(format!("{sha}.tmp"));
        let _ = std::fs::remove_dir_all(&tmp);
        crate::wire::archive::unpack(&bytes[..], &tmp, &crate::wire::archive::Limits::default())
            .map_err(|e| format!("bundle of {player}: {e}"))?;
        std::fs::rename(&tmp, &dir).map_err(|e| format!("bundle of {player}: {e}"))?;
        say(&format!("fetched {player} (bundle {})", &sha[..12]));
    }
    let m = crate::bot::manifest::Manifest::load(&dir).map_err(|e| format!("{player}: {e}"))?;
    let mut spec = BotSpec::from_manifest(m);
    spec.name = player.to_string();
    let mark = cache.join("bundles").join(format!("{sha}.built"));
    if !mark.exists() {
        let room = crate::league::launch::Room::of(t);
        // Ctrl-C or SIGTERM kills the build under way (and what it forked):
        // the worker does not wait out a build's time limit to stop.
        let signals = crate::host::stop_signals();
        crate::league::build::build_bots(
            std::slice::from_ref(&spec),
            &room,
            Some(&signals),
            &mut |e| say_building(say, e),
        )
        .map_err(|e| match e {
            LeagueError::Interrupted => format!("the build of {player} stopped: the worker stops"),
            e => e.to_string(),
        })?;
        std::fs::write(&mark, b"").map_err(|e| format!("{}: {e}", mark.display()))?;
        say(&format!("built {player}"));
    }
    // Its last use, for the cache's bound ([`evict`]).
    let _ = std::fs::File::options()
        .append(true)
        .open(&mark)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
    Ok(spec)
}

/// Says a build of this package's binaries that the bots' `{bin_dir}`
/// commands name (a worker run from a checkout whose source is newer than
/// its binaries: `cargo build`, which the games wait for). A bot's own
/// build is said once done (`built ...`).
fn say_building(say: &dyn Fn(&str), e: &Event) {
    if let Event::Building { bot, how } = e {
        if !how.is_empty() {
            say(&format!("building {bot} ({how}) ..."));
        }
    }
}

/// A bundle in the cache: its SHA-256, when it was last used, and what it
/// takes (its folder and its built copy).
struct Cached {
    sha: String,
    used: std::time::SystemTime,
    bytes: u64,
    built: Option<PathBuf>,
}

/// Bytes taken on disk under `path` (its files' blocks).
fn disk_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let own = std::os::unix::fs::MetadataExt::blocks(&meta) * 512;
    match meta.is_dir() {
        true => std::fs::read_dir(path)
            .map(|d| d.flatten().map(|e| disk_bytes(&e.path())).sum::<u64>())
            .unwrap_or(0)
            .saturating_add(own),
        false => own,
    }
}

/// The bundles in `cache` with what each takes, least recently used first.
fn cached(cache: &Path) -> Vec<Cached> {
    let dir = cache.join("bundles");
    let mut all: Vec<Cached> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let sha = e.file_name().to_str()?.to_string();
            let folder = e.path();
            let used = std::fs::metadata(dir.join(format!("{sha}.built")))
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            let built = crate::bot::manifest::Manifest::load(&folder)
                .ok()
                .and_then(|m| {
                    let argv = crate::bot::manifest::expand(m.build.as_deref()?);
                    crate::bot::build::built(&folder, &argv)
                });
            let bytes = disk_bytes(&folder) + built.as_deref().map_or(0, disk_bytes);
            Some(Cached {
                sha,
                used,
                bytes,
                built,
            })
        })
        .collect();
    all.sort_by_key(|c| c.used);
    all
}

/// Keeps the bundles in `cache` and their built copies within `bound`
/// bytes: removes those used least recently, but never those of `keep`
/// (the games in hand need them). Each removal is said. Returns the bytes
/// the bundles take after.
fn evict(cache: &Path, bound: u64, keep: &[String], say: &(dyn Fn(&str) + Sync)) -> u64 {
    let all = cached(cache);
    let mut total: u64 = all.iter().map(|c| c.bytes).sum();
    for c in all {
        if total <= bound {
            break;
        }
        if keep.contains(&c.sha) {
            continue;
        }
        let dir = cache.join("bundles");
        if let Some(b) = &c.built {
            let _ = std::fs::remove_dir_all(b);
        }
        let _ = std::fs::remove_file(dir.join(format!("{}.built", c.sha)));
        let _ = std::fs::remove_dir_all(dir.join(&c.sha));
        total = total.saturating_sub(c.bytes);
        say(&format!(
            "evicted bundle {} from the cache ({} KiB; the cache's bound is {} MiB)",
            &c.sha[..c.sha.len().min(12)],
            c.bytes >> 10,
            bound >> 20
        ));
    }
    total
}

/// How often the console says what the worker did.
const SUMMARY_EVERY: Duration = Duration::from_secs(5);

/// The console: the lines `heard` brings, at once, and every
/// [`SUMMARY_EVERY`] a summary of the games played and uploaded (when
/// any were), until every sender is gone; then a last summary.
fn summarise(
    tally: &Tally,
    hand: &Hand,
    spool: &Path,
    heard: std::sync::mpsc::Receiver<String>,
    say: &(dyn Fn(&str) + Sync),
) {
    let mut last = std::time::Instant::now();
    let mut played_then = 0;
    let line = |played_then: u64, secs: f64| {
        let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let played = n(&tally.played);
        let lost = match n(&tally.lost) {
            0 => String::new(),
            l => format!(", {l} lost (neither uploaded nor spooled)"),
        };
        format!(
            "games: {played} played ({:.1}/s), {} uploaded, {} held as forfeits, {} refused, {} in the spool, {} in hand{lost}",
            (played - played_then) as f64 / secs.max(0.001),
            n(&tally.uploaded),
            n(&tally.held),
            n(&tally.refused),
            upload::spooled_files(spool).len(),
            hand.in_hand()
        )
    };
    loop {
        match heard.recv_timeout(Duration::from_millis(250)) {
            Ok(l) => say(&l),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if last.elapsed() >= SUMMARY_EVERY {
            let played = tally.played.load(Ordering::Relaxed);
            if played != played_then {
                say(&line(played_then, last.elapsed().as_secs_f64()));
            }
            played_then = played;
            last = std::time::Instant::now();
        }
    }
    if tally.played.load(Ordering::Relaxed) > 0 {
        say(&line(played_then, last.elapsed().as_secs_f64()));
    }
    // Games the server could not take before the stop: where they wait.
    let left = upload::spooled_files(spool).len();
    if left > 0 {
        let cache = spool.parent().unwrap_or(spool);
        say(&format!(
            "{left} finished games stay in {}: start the worker again with --cache {} to upload them (they count if their leases have not been given to another worker meanwhile)",
            spool.display(),
            cache.display()
        ));
    }
}

/// Renews the leases held, every `every`, until `quit`.
fn heartbeat(client: &Client, hand: &Hand, quit: &AtomicBool, every: Duration) {
    let mut last = std::time::Instant::now();
    while !quit.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        if last.elapsed() < every {
            continue;
        }
        last = std::time::Instant::now();
        let ids = hand.leases();
        // Holding none, it still says it is there: the server keeps its
        // token for it ([`crate::wire::worker::INSTANCE_HEADER`]).
        if ids.is_empty() {
            let _ = client.post("/api/worker/heartbeat", &Leases { leases: Vec::new() });
        }
        for chunk in ids.chunks(crate::wire::worker::LEASES_MOST) {
            let _ = client.post(
                "/api/worker/heartbeat",
                &Leases {
                    leases: chunk.to_vec(),
                },
            );
        }
    }
}

/// What a worker asks for in a claim: the server decides how many it
/// gets (from its `-j` and its games' pace).
const CLAIM_ASK: usize = 256;

/// The worker's play: epochs, each one run of the league's pipeline
/// ([`play_all`]) with the bots of the games in hand, fed by claims as
/// its games go ([`Feed`]), until a claimed game seats a bot the epoch
/// lacks (the next epoch fetches it) or the worker stops.
struct Epochs<'a> {
    client: &'a Client,
    opts: &'a WorkerOptions,
    /// The ladder file as the server gave it at the last registration.
    t: std::cell::RefCell<Tournament>,
    hand: &'a Arc<Hand>,
    tally: &'a Arc<Tally>,
    stop: &'a Arc<AtomicBool>,
    /// Lines for the console, from any thread.
    notes: std::sync::mpsc::Sender<String>,
    say: &'a (dyn Fn(&str) + Sync),
}

/// A claim that failed (the server out of reach), said once a spell: the
/// first failure of several in a row, each a couple of seconds apart.
fn claim_failed(tally: &Tally, notes: &std::sync::mpsc::Sender<String>, e: &dyn std::fmt::Display) {
    if !tally.claims_failing.swap(true, Ordering::SeqCst) {
        let _ = notes.send(format!(
            "cannot claim games: {e}; trying again every 2 s (said once, until the server answers)"
        ));
    }
}

/// A claim answered: after failed ones, said so.
fn claim_answered(tally: &Tally, notes: &std::sync::mpsc::Sender<String>) {
    if tally.claims_failing.swap(false, Ordering::SeqCst) {
        let _ = notes.send("the server answers claims again".to_string());
    }
}

/// Why an epoch's feed stopped claiming.
enum Halt {
    /// The server asks the worker to register again (409).
    Register(String),
    /// The token is revoked or not a worker's (401, 403).
    Refused(String),
}

impl Epochs<'_> {
    /// Plays until the worker stops; `tx` takes the finished games to the
    /// uploader.
    fn play(self, tx: std::sync::mpsc::SyncSender<upload::Spooled>) -> Result<(), WorkerError> {
        let say = |l: &str| {
            let _ = self.notes.send(l.to_string());
        };
        let layout = Layout::new(self.t.borrow().output.clone());
        let mut queue: VecDeque<LeasedGame> = VecDeque::new();
        let mut roster: Vec<(String, String)> = Vec::new();
        // A game lost (neither uploaded nor spooled): no more claims.
        while !self.stop.load(Ordering::SeqCst) && !self.tally.spool_failed() {
            if queue.is_empty() {
                match claim(self.client, CLAIM_ASK) {
                    Ok(games) => {
                        claim_answered(self.tally, &self.notes);
                        self.hand.claimed(&games);
                        queue.extend(games);
                    }
                    Err(e) => {
                        if let Some(h) = halt_of(&e) {
                            self.halt(h)?;
                        } else {
                            claim_failed(self.tally, &self.notes, &e);
                            pause(self.stop, Duration::from_secs(2));
                        }
                        continue;
                    }
                }
                if queue.is_empty() {
                    pause(self.stop, Duration::from_secs(1));
                    continue;
                }
            }
            let (t, index) = self.bots(&mut queue, &mut roster);
            if queue.is_empty() || self.stop.load(Ordering::SeqCst) {
                continue;
            }
            let feed = Arc::new(Feed {
                client: self.client.clone(),
                queue: Mutex::new(std::mem::take(&mut queue)),
                later: Mutex::new(Vec::new()),
                index,
                seed: t.seed,
                jobs: self.opts.jobs,
                stop: self.stop.clone(),
                halt: Mutex::new(None),
                claiming: AtomicBool::new(false),
                claimer: Mutex::new(None),
                last_claim: Mutex::new(LastClaim {
                    at: std::time::Instant::now(),
                    mark: 0,
                    full: false,
                    dry: 0,
                }),
                hand: self.hand.clone(),
                tally: self.tally.clone(),
                notes: self.notes.clone(),
            });
            let mut store = upload::Upload {
                tx: tx.clone(),
                spool: self.opts.cache.join("spool"),
                hand: self.hand,
                tally: self.tally,
                done: DoneSet::default(),
                say: &say,
                stderr: None,
            };
            let played = play_all(
                &t,
                &RunOptions::default(),
                Fed(feed.clone()),
                usize::MAX,
                &mut store,
                &layout,
                &mut |e| match e {
                    Event::Warning(w) => say(w),
                    e => say_building(&say, e),
                },
            );
            queue = feed.left();
            let stopped = played
                .as_ref()
                .map_or(true, |p| p.stop.is_some() || p.interrupted);
            if let Err(e) = &played {
                say(&format!("the games stopped: {e}"));
            } else if let Ok(Some(s)) = played.as_ref().map(|p| p.stop.as_ref()) {
                say(&format!("the games stopped: {s}"));
            }
            let halt = feed.halt.lock().unwrap_or_else(|p| p.into_inner()).take();
            // Stopped (SIGTERM) or failed: the games not played go back to
            // the queue at once, rather than when their leases expire.
            if stopped || self.stop.load(Ordering::SeqCst) || halt.is_some() {
                self.give_back(&mut queue, true);
            }
            if let Some(h) = halt {
                self.halt(h)?;
            }
            if stopped && !self.stop.load(Ordering::SeqCst) {
                pause(self.stop, Duration::from_secs(2));
            }
        }
        self.give_back(&mut queue, true);
        Ok(())
    }

    /// Acts on a halt: registers again, or stops the worker.
    fn halt(&self, h: Halt) -> Result<(), WorkerError> {
        match h {
            Halt::Register(m) => {
                (self.say)(&format!("claim refused ({m}): registering again"));
                // The ladder file as it is now: the next games are played
                // under it (a file changed while the server was down).
                let (t, _) = register(self.client, self.opts, self.stop, self.say, self.tally)?;
                *self.t.borrow_mut() = t;
                Ok(())
            }
            Halt::Refused(m) => Err(WorkerError::Refused(m)),
        }
    }

    /// The epoch's ladder: the bots of the games in `queue` and those of
    /// the last epoch (`roster`) still in the cache, each fetched and
    /// built the first time; the games whose bot cannot be had are given
    /// back. The cache is kept within its bound first, but for the bots
    /// of the games in hand. Returns the ladder and the roster's index by
    /// player.
    fn bots(
        &self,
        queue: &mut VecDeque<LeasedGame>,
        roster: &mut Vec<(String, String)>,
    ) -> (Tournament, BTreeMap<String, usize>) {
        let seats = |games: &mut dyn Iterator<Item = &LeasedGame>| -> Vec<(String, String)> {
            games
                .flat_map(|c| c.seats.iter().map(|s| (s.player.clone(), s.sha256.clone())))
                .collect()
        };
        let mut wanted = seats(&mut queue.iter());
        let shas = |w: &[(String, String)]| w.iter().map(|(_, s)| s.clone()).collect::<Vec<_>>();
        let (cache, bound) = (&self.opts.cache, self.opts.cache_bytes);
        let mut tight = evict(cache, bound, &shas(&wanted), self.say) > bound;
        if tight {
            // The cache cannot hold the bots of every game in hand: this
            // epoch plays those of the first game's bots only, and keeps
            // only them.
            wanted = seats(&mut queue.iter().take(1));
            tight = evict(cache, bound, &shas(&wanted), self.say) > bound;
        }
        let mut t = self.t.borrow().clone();
        t.bots.clear();
        t.concurrency = self.opts.jobs.max(1);
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        let mut failed: Vec<String> = Vec::new();
        let kept = roster.iter().filter(|(_, sha)| {
            let b = cache.join("bundles");
            !tight && b.join(sha).is_dir() && b.join(format!("{sha}.built")).exists()
        });
        let all: Vec<(String, String)> = wanted.iter().chain(kept).cloned().collect();
        for (player, sha) in all {
            if index.contains_key(&player) || failed.contains(&player) {
                continue;
            }
            if self.stop.load(Ordering::SeqCst) {
                // Stopping: no more fetches or builds; the games in hand
                // go back to the server.
                failed.push(player);
                continue;
            }
            match bundle(self.client, &self.opts.cache, &t, &sha, &player, self.say) {
                Ok(spec) => {
                    t.bots.push(spec);
                    index.insert(player, t.bots.len() - 1);
                }
                Err(e) => {
                    (self.say)(&e);
                    failed.push(player);
                }
            }
        }
        *roster = index
            .keys()
            .filter_map(|p| all_sha(&wanted, roster, p).map(|s| (p.clone(), s)))
            .collect();
        let (bad, ok): (Vec<LeasedGame>, Vec<LeasedGame>) = std::mem::take(queue)
            .into_iter()
            .partition(|g| g.seats.iter().any(|s| failed.contains(&s.player)));
        *queue = ok.into();
        let mut bad: VecDeque<LeasedGame> = bad.into();
        self.give_back(&mut bad, false);
        (t, index)
    }

    /// Gives back the leases of the games in `queue` (`POST
    /// /api/worker/release`), or with `all` those of every game claimed
    /// and not finished: their games go back to the server's queue.
    fn give_back(&self, queue: &mut VecDeque<LeasedGame>, all: bool) {
        let ids: Vec<usize> = queue.drain(..).map(|g| g.id as usize).collect();
        let left = match all {
            true => self.hand.take_all_playing(),
            false => self.hand.take_playing(&ids),
        };
        if left.is_empty() {
            return;
        }
        for part in left.chunks(crate::wire::worker::LEASES_MOST) {
            let leases: Vec<String> = part.iter().map(|(_, l)| l.clone()).collect();
            let games = listed(part.iter().map(|(g, _)| g.as_str()));
            match self.client.post("/api/worker/release", &Leases { leases }) {
                Ok(_) => (self.say)(&format!("returned to the server: {games}")),
                Err(e) => (self.say)(&format!(
                    "{games}: not returned ({e}): left to their leases' expiry"
                )),
            }
        }
    }
}

/// Games' ids for a line of the console: the first few, and how many more.
fn listed<'a>(ids: impl ExactSizeIterator<Item = &'a str>) -> String {
    const SHOWN: usize = 8;
    let n = ids.len();
    let mut line = ids.take(SHOWN).collect::<Vec<_>>().join(", ");
    if n > SHOWN {
        line.push_str(&format!(" and {} more", n - SHOWN));
    }
    line
}

/// The bundle hash of `player` among `wanted` and the last `roster`.
fn all_sha(
    wanted: &[(String, String)],
    roster: &[(String, String)],
    player: &str,
) -> Option<String> {
    wanted
        .iter()
        .chain(roster)
        .find(|(p, _)| p == player)
        .map(|(_, s)| s.clone())
}

/// What a refused claim means for the worker, if it is not a moment's.
fn halt_of(e: &Call) -> Option<Halt> {
    match e {
        Call::Refused(409, m) => Some(Halt::Register(m.clone())),
        // A token revoked or not a worker's: nothing to try again.
        Call::Refused(status @ (401 | 403), m) => Some(Halt::Refused(format!("{status}: {m}"))),
        _ => None,
    }
}

/// An epoch's games: the claimed games in hand, in order, topped up by a
/// claim when they run low (one thread claims at a time, beside the
/// slots rather than on a game's way to one; the server decides how many
/// it grants). A claimed game that seats a bot the epoch
/// lacks waits for the next epoch (`later`): the epoch ends once the games
/// it can play are played.
struct Feed {
    client: Client,
    queue: Mutex<VecDeque<LeasedGame>>,
    later: Mutex<Vec<LeasedGame>>,
    /// The epoch's bots by player.
    index: BTreeMap<String, usize>,
    seed: u64,
    jobs: usize,
    stop: Arc<AtomicBool>,
    halt: Mutex<Option<Halt>>,
    claiming: AtomicBool,
    /// The thread of the last claim made while games were left.
    claimer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// The last claim.
    last_claim: Mutex<LastClaim>,
    hand: Arc<Hand>,
    tally: Arc<Tally>,
    notes: std::sync::mpsc::Sender<String>,
}

/// When the last claim was made, what it granted, and whether in full.
#[derive(Clone, Copy)]
struct LastClaim {
    at: std::time::Instant,
    /// The games of the last claim that granted any: the next claim
    /// comes when half of them are played.
    mark: usize,
    /// All it asked for ([`CLAIM_ASK`]): the server may have more at once.
    full: bool,
    /// Claims in a row that granted nothing.
    dry: u32,
}

/// How long a claim that granted nothing waits before the next, while
/// the worker holds games (played, or being uploaded): the server grants
/// more as their uploads are committed. Doubled at each claim in a row
/// that grants nothing, up to [`DRY_RETRY`], the wait of a worker that
/// holds none.
const HELD_RETRY: Duration = Duration::from_millis(25);

/// How long a claim that granted nothing waits at most before the next.
const DRY_RETRY: Duration = Duration::from_secs(1);

/// The runner's `Pairings` of an epoch: its [`Feed`].
struct Fed(Arc<Feed>);

impl Feed {
    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The games left when the epoch ends: those it could not play first,
    /// then those in hand (a claim still under way is waited for).
    fn left(&self) -> VecDeque<LeasedGame> {
        if let Some(h) = Self::lock(&self.claimer).take() {
            let _ = h.join();
        }
        let mut left: VecDeque<LeasedGame> = Self::lock(&self.later).drain(..).collect();
        left.extend(Self::lock(&self.queue).drain(..));
        left
    }

    /// Sleeps `d`, or less when games came (another slot's claim) or the
    /// worker stops.
    fn wait_for_games(&self, d: Duration) {
        sleep_until(&self.stop, d, Duration::from_millis(5), || {
            !Self::lock(&self.queue).is_empty()
        });
    }

    /// The roster index of each seat of `g`, if the epoch has them all.
    fn seats(&self, g: &LeasedGame) -> Option<Vec<usize>> {
        g.seats
            .iter()
            .map(|s| self.index.get(&s.player).copied())
            .collect()
    }

    /// Claims more games when those in hand are fewer than half the last
    /// grant (or than the slots), at once after a claim granted in full
    /// and else at most every 200 ms, unless none are left (`empty`):
    /// while games are left, on a thread of its own, so that no slot waits
    /// for the claim's round trip; when none are, at once. False when
    /// nothing came and none are left.
    fn refill(self: &Arc<Self>, empty: bool) -> bool {
        if !empty {
            let last = *Self::lock(&self.last_claim);
            let queued = Self::lock(&self.queue).len();
            let low = queued < self.jobs.max(last.mark / 2);
            if low
                && (last.full || last.at.elapsed() >= Duration::from_millis(200))
                && !self.claiming.swap(true, Ordering::SeqCst)
            {
                let f = Arc::clone(self);
                let h = std::thread::spawn(move || {
                    f.claim_more(false);
                });
                // The one before has ended: `claiming` was clear.
                *Self::lock(&self.claimer) = Some(h);
            }
            return true;
        }
        if self.claiming.swap(true, Ordering::SeqCst) {
            // Another thread is claiming: a moment.
            std::thread::sleep(Duration::from_millis(20));
            return true;
        }
        self.claim_more(true)
    }

    /// One claim, `claiming` set by the caller and cleared here: true when
    /// games came. `empty`: none are left, so a failure is said and waited
    /// out.
    fn claim_more(&self, empty: bool) -> bool {
        let got = claim(&self.client, CLAIM_ASK);
        {
            // A claim that finds the worker at its share keeps the last
            // grant's mark, so the next comes when half of that is played
            // rather than when none is left.
            let mut last = Self::lock(&self.last_claim);
            let granted = got.as_ref().map_or(0, |g| g.len());
            *last = LastClaim {
                at: std::time::Instant::now(),
                mark: granted.max(last.mark * usize::from(!empty)),
                full: granted >= CLAIM_ASK,
                dry: match granted {
                    0 => last.dry.saturating_add(1),
                    _ => 0,
                },
            };
        }
        let more = match got {
            Ok(games) => {
                claim_answered(&self.tally, &self.notes);
                self.hand.claimed(&games);
                let any = !games.is_empty();
                Self::lock(&self.queue).extend(games);
                any
            }
            Err(e) => {
                match halt_of(&e) {
                    Some(h) => *Self::lock(&self.halt) = Some(h),
                    None if empty => {
                        claim_failed(&self.tally, &self.notes, &e);
                        pause(&self.stop, Duration::from_secs(2));
                    }
                    None => {}
                }
                false
            }
        };
        self.claiming.store(false, Ordering::SeqCst);
        more
    }
}

impl Pairings for Fed {
    fn next(&self) -> Option<ScheduledGame> {
        let f = &self.0;
        loop {
            if f.stop.load(Ordering::SeqCst)
                || Feed::lock(&f.halt).is_some()
                || f.tally.spool_failed()
            {
                return None;
            }
            let mut next = None;
            {
                let mut q = Feed::lock(&f.queue);
                while let Some(g) = q.pop_front() {
                    match f.seats(&g) {
                        Some(seats) => {
                            next = Some(crate::wire::worker::scheduled_as(
                                f.seed,
                                g.id,
                                g.opening_of.unwrap_or(g.id),
                                g.variant,
                                seats,
                            ));
                            break;
                        }
                        None => Feed::lock(&f.later).push(g),
                    }
                }
            }
            if let Some(game) = next {
                if Feed::lock(&f.later).is_empty() {
                    Feed::refill(&self.0, false);
                }
                return Some(game);
            }
            // New bots: the next epoch.
            if !Feed::lock(&f.later).is_empty() {
                return None;
            }
            if !Feed::refill(&self.0, true) {
                // Nothing granted: while the worker holds games, the
                // server grants more as their uploads are committed.
                let dry = Feed::lock(&f.last_claim).dry;
                let wait = match f.hand.held() {
                    0 => DRY_RETRY,
                    _ => HELD_RETRY
                        .saturating_mul(1 << dry.saturating_sub(1).min(6))
                        .min(DRY_RETRY),
                };
                f.wait_for_games(wait);
            }
        }
    }

    fn finished(&self, _index: usize, _row: &GameRow) -> Option<String> {
        None
    }

    fn total(&self) -> usize {
        usize::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::hand::Tally;
    use super::{listed, note_clock, upload::on_servers_clock};
    use crate::results::GameRow;
    use crate::wire::worker::Registered;
    use std::sync::atomic::Ordering;
    use std::time::{Duration, SystemTime};

    fn registered(server_time: SystemTime) -> Registered {
        serde_json::from_value(serde_json::json!({
            "accepts": {"arena_version": "x", "record_format": 2, "rules_version": 1},
            "book": null, "ladder": "", "lease_seconds": 60, "protocol": 2,
            "server_time": humantime::format_rfc3339_millis(server_time).to_string(),
            "variants": [], "worker": "w",
        }))
        .unwrap()
    }

    /// A worker whose clock runs a day ahead (the server refused each of
    /// its games as starting in the future, and it played on for nothing)
    /// learns the server's clock when it registers, says so once, and
    /// sends its games' start times on the server's clock.
    #[test]
    fn a_worker_ahead_of_the_servers_clock_sends_start_times_on_the_servers() {
        let day = Duration::from_secs(86_400);
        let tally = Tally::default();
        let said = std::sync::Mutex::new(Vec::new());
        let say = |s: &str| said.lock().unwrap().push(s.to_string());
        let now = SystemTime::now();
        note_clock(&registered(now - day), now, &tally, &say);
        let offset = tally.clock_offset_ms.load(Ordering::Relaxed);
        assert!((offset + 86_400_000).abs() < 5_000, "{offset}");
        // Registered again with the same skew: not said again.
        note_clock(
            &registered(SystemTime::now() - day),
            SystemTime::now(),
            &tally,
            &say,
        );
        let said = said.lock().unwrap().clone();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("s ahead of the server's"), "{said:?}");
        let mut row = GameRow {
            started_at: humantime::format_rfc3339_millis(now).to_string(),
            ..GameRow::default()
        };
        on_servers_clock(&mut row, offset);
        let at = humantime::parse_rfc3339(&row.started_at).unwrap();
        let moved = now.duration_since(at).unwrap();
        assert!(
            moved > day - Duration::from_secs(5) && moved < day + Duration::from_secs(5),
            "{row:?}"
        );
        // Within a second of the server's: nothing is moved.
        let tally = Tally::default();
        let now = SystemTime::now();
        note_clock(&registered(now), now, &tally, &|_| {});
        assert_eq!(tally.clock_offset_ms.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_long_list_of_games_is_cut_to_its_first_few() {
        let ids: Vec<String> = (1..=1000).map(|i| format!("game-{i}")).collect();
        let some = listed(ids.iter().take(3).map(String::as_str));
        assert_eq!(some, "game-1, game-2, game-3");
        let all = listed(ids.iter().map(String::as_str));
        assert!(all.starts_with("game-1, game-2,"), "{all}");
        assert!(all.ends_with("game-8 and 992 more"), "{all}");
    }
}
