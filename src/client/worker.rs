//! `arena worker`'s library (issue 31, docs/ladder.md "Workers"): a
//! ladder's client that plays games on another machine. It registers,
//! then loops: claims up to `-j` games, fetches each bot version it lacks
//! as a bundle addressed by its SHA-256 (checked, cached, built once per
//! hash by the league's build in the ladder's sandbox), plays the games
//! through the same pipeline and sandbox as `arena run`
//! ([`crate::league::runner::play_all`], with its own `Pairings`, the
//! claimed games, and `Store`, the server), heartbeats while it plays, and
//! uploads each finished game. A game whose upload cannot reach the
//! server waits in a spool on disk and is sent when the server is back,
//! or discarded when its lease has gone.

use crate::league::config::{BotSpec, RunSettings, Tournament};
use crate::league::folder::{DoneSet, Layout};
use crate::league::pairings::Pairings;
use crate::league::runner::{play_all, Event, RunOptions};
use crate::league::schedule::ScheduledGame;
use crate::results::records::Frame;
use crate::results::stderr::SeatStderr;
use crate::results::store::Store;
use crate::results::GameRow;
use crate::wire::worker::{
    ClaimRequest, GameUpload, Granted, LeasedGame, LeasedSeat, Leases, Registered, Registration,
};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An error that stops the worker.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("the server refused this worker: {0}")]
    Refused(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("the ladder file the server sent: {0}")]
    Ladder(String),
    #[error("the server's answer to {what} is not what a worker expects: {why}")]
    Protocol { what: String, why: String },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> WorkerError {
    let what = what.into();
    move |source| WorkerError::Io { what, source }
}

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
}

/// A failed request: the server answered with a refusal (status and its
/// message), or could not be reached.
#[derive(Debug)]
enum Call {
    Refused(u16, String),
    Unreachable(String),
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Call::Refused(s, m) => write!(f, "{s}: {m}"),
            Call::Unreachable(m) => write!(f, "the server cannot be reached: {m}"),
        }
    }
}

/// The server, over HTTP.
#[derive(Clone)]
struct Client {
    agent: ureq::Agent,
    server: String,
    auth: String,
}

impl Client {
    fn new(server: &str, token: &str) -> Client {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        Client {
            agent,
            server: server.trim_end_matches('/').to_string(),
            auth: format!("Bearer {token}"),
        }
    }

    /// POSTs `body` (as JSON) to `path`: the answer's bytes when 2xx.
    fn post(&self, path: &str, body: &impl serde::Serialize) -> Result<Vec<u8>, Call> {
        let body = serde_json::to_vec(body).map_err(|e| Call::Unreachable(e.to_string()))?;
        let r = self
            .agent
            .post(&format!("{}{path}", self.server))
            .header("Authorization", &self.auth)
            .header("Content-Type", "application/json")
            .send(&body[..]);
        Self::answer(r)
    }

    fn get(&self, path: &str) -> Result<Vec<u8>, Call> {
        let r = self
            .agent
            .get(&format!("{}{path}", self.server))
            .header("Authorization", &self.auth)
            .call();
        Self::answer(r)
    }

    fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<Vec<u8>, Call> {
        let mut resp = r.map_err(|e| Call::Unreachable(e.to_string()))?;
        let status = resp.status().as_u16();
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_vec()
            .map_err(|e| Call::Unreachable(e.to_string()))?;
        if (200..300).contains(&status) {
            return Ok(bytes);
        }
        let msg = super::error_of(&bytes);
        // 5xx: the server is there but failing; try again later.
        if status >= 500 {
            return Err(Call::Unreachable(format!("{status}: {msg}")));
        }
        Err(Call::Refused(status, msg))
    }
}

/// The server's answer to `what`, as the protocol's type.
fn json<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, WorkerError> {
    serde_json::from_slice(bytes).map_err(|e| WorkerError::Protocol {
        what: what.into(),
        why: e.to_string(),
    })
}

/// Runs the worker until `stop` is raised (Ctrl-C, SIGTERM, SIGHUP); each line
/// of what it does goes to `say`.
pub fn run(
    opts: &WorkerOptions,
    stop: Arc<AtomicBool>,
    say: &(dyn Fn(&str) + Sync),
) -> Result<(), WorkerError> {
    let client = Client::new(&opts.server, &opts.token);
    for d in ["bundles", "spool", "results"] {
        std::fs::create_dir_all(opts.cache.join(d)).map_err(io(opts
            .cache
            .join(d)
            .display()
            .to_string()))?;
    }
    let (t, lease_seconds) = register(&client, opts, &stop, say)?;
    let layout = Layout::new(t.output.clone());
    while !stop.load(Ordering::SeqCst) {
        send_spool(&client, &opts.cache, say);
        let claims = match claim(&client, opts.jobs) {
            Ok(c) => c,
            Err(Call::Refused(409, m)) => {
                say(&format!("claim refused ({m}): registering again"));
                register(&client, opts, &stop, say)?;
                continue;
            }
            // A token revoked or not a worker's: nothing to try again.
            Err(Call::Refused(status @ (401 | 403), m)) => {
                return Err(WorkerError::Refused(format!("{status}: {m}")))
            }
            Err(e) => {
                say(&format!("cannot claim games: {e}; trying again"));
                pause(&stop, Duration::from_secs(2));
                continue;
            }
        };
        if claims.is_empty() {
            pause(&stop, Duration::from_secs(1));
            continue;
        }
        if let Err(e) = play_claims(&client, opts, &t, &layout, claims, lease_seconds, say) {
            say(&format!(
                "the claimed games are left to their leases' expiry: {e}"
            ));
            pause(&stop, Duration::from_secs(2));
        }
    }
    send_spool(&client, &opts.cache, say);
    Ok(())
}

/// Sleeps `d`, or less when `stop` is raised.
fn pause(stop: &AtomicBool, d: Duration) {
    let end = std::time::Instant::now() + d;
    while !stop.load(Ordering::SeqCst) && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Registers (again, until the server answers): the ladder file it sends,
/// read, and the lease time.
fn register(
    client: &Client,
    opts: &WorkerOptions,
    stop: &AtomicBool,
    say: &(dyn Fn(&str) + Sync),
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
    let answer: Registered = loop {
        match client.post("/api/worker/register", &reg) {
            Ok(b) => break json(&b, "register")?,
            Err(Call::Refused(_, m)) => return Err(WorkerError::Refused(m)),
            Err(e) if stop.load(Ordering::SeqCst) => {
                return Err(WorkerError::Refused(e.to_string()))
            }
            Err(e) => {
                say(&format!("cannot register: {e}; trying again in 2 s"));
                pause(stop, Duration::from_secs(2));
            }
        }
    };
    let text = &answer.ladder;
    let file = opts.cache.join("ladder.toml");
    std::fs::write(&file, text).map_err(io(file.display().to_string()))?;
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
    let lease_seconds = answer.lease_seconds.max(1);
    say(&format!(
        "registered with {} as `{}`: ladder {}, leases of {lease_seconds} s, -j {}",
        client.server, answer.worker, t.name, opts.jobs
    ));
    Ok((t, lease_seconds))
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
        crate::league::build::build_bots(std::slice::from_ref(&spec), &room, &mut |_| {})
            .map_err(|e| e.to_string())?;
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
/// (the games in hand need them). Each removal is said.
fn evict(cache: &Path, bound: u64, keep: &[String], say: &(dyn Fn(&str) + Sync)) {
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
}

/// Plays the claimed games and uploads each as it finishes, with a
/// heartbeat for the leases while they play.
fn play_claims(
    client: &Client,
    opts: &WorkerOptions,
    t: &Tournament,
    layout: &Layout,
    claims: Vec<LeasedGame>,
    lease_seconds: i64,
    say: &(dyn Fn(&str) + Sync),
) -> Result<(), String> {
    // The heartbeat runs from the claim on: fetching and building the
    // bots can take longer than a lease.
    let leases: BTreeMap<usize, (String, String)> = claims
        .iter()
        .map(|c| (c.id as usize, (c.game_id.clone(), c.lease.clone())))
        .collect();
    let leases = Arc::new(Mutex::new(leases));
    // Dropping `playing` (the sender) stops the heartbeat at once: a
    // batch's end does not wait for its next tick.
    let (playing, stopped) = std::sync::mpsc::channel::<()>();
    let playing = Mutex::new(Some(playing));
    let beat = {
        let (client, leases) = (client.clone(), leases.clone());
        let every = Duration::from_millis((lease_seconds as u64 * 1000 / 3).max(500));
        std::thread::spawn(move || heartbeat(&client, &leases, &stopped, every))
    };
    let stop_beat = || {
        playing.lock().unwrap_or_else(|p| p.into_inner()).take();
    };
    let mut t = t.clone();
    t.bots.clear();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut games = VecDeque::new();
    for c in &claims {
        let mut seats = Vec::new();
        for LeasedSeat {
            player,
            sha256: sha,
        } in &c.seats
        {
            let i = match index.get(player) {
                Some(&i) => i,
                None => {
                    let spec = match bundle(client, &opts.cache, &t, sha, player, say) {
                        Ok(s) => s,
                        Err(e) => {
                            stop_beat();
                            let _ = beat.join();
                            return Err(e);
                        }
                    };
                    t.bots.push(spec);
                    index.insert(player.clone(), t.bots.len() - 1);
                    t.bots.len() - 1
                }
            };
            seats.push(i);
        }
        games.push_back(crate::wire::worker::scheduled_as(
            t.seed,
            c.id,
            c.opening_of.unwrap_or(c.id),
            c.variant,
            seats,
        ));
    }
    // The cache within its bound before play, but for this batch's bots.
    let batch: Vec<String> = claims
        .iter()
        .flat_map(|c| c.seats.iter().map(|s| s.sha256.clone()))
        .collect();
    evict(&opts.cache, opts.cache_bytes, &batch, say);
    t.concurrency = opts.jobs.min(games.len()).max(1);
    let todo = games.len();
    let mut store = Upload {
        client: client.clone(),
        spool: opts.cache.join("spool"),
        leases: leases.clone(),
        done: DoneSet::default(),
        say,
        stderr: None,
    };
    let pairings = Claimed(Mutex::new(games));
    let played = play_all(
        &t,
        &RunOptions::default(),
        pairings,
        todo,
        &mut store,
        layout,
        &mut |e| {
            if let Event::Warning(w) = e {
                say(w)
            }
        },
    );
    stop_beat();
    let _ = beat.join();
    evict(&opts.cache, opts.cache_bytes, &[], say);
    // Stopped (SIGTERM) or failed: the games not played go back to the
    // queue at once, rather than when their leases expire.
    if played
        .as_ref()
        .map_or(true, |p| p.stop.is_some() || p.interrupted)
    {
        give_back(client, &leases, say);
    }
    let played = played.map_err(|e| e.to_string())?;
    if let Some(s) = played.stop {
        return Err(format!("the games stopped: {s}"));
    }
    Ok(())
}

/// Returns the leases of the games not played (`POST
/// /api/worker/release`); their games go back to the server's queue.
fn give_back(
    client: &Client,
    leases: &Mutex<BTreeMap<usize, (String, String)>>,
    say: &(dyn Fn(&str) + Sync),
) {
    let left: Vec<(String, String)> = leases
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .values()
        .cloned()
        .collect();
    if left.is_empty() {
        return;
    }
    let ids: Vec<String> = left.iter().map(|(_, l)| l.clone()).collect();
    let games: Vec<&str> = left.iter().map(|(g, _)| g.as_str()).collect();
    match client.post("/api/worker/release", &Leases { leases: ids }) {
        Ok(_) => say(&format!("returned to the server: {}", games.join(", "))),
        Err(e) => say(&format!(
            "{}: not returned ({e}): left to their leases' expiry",
            games.join(", ")
        )),
    }
}

/// Renews the leases of the games still playing, every `every`, until
/// `stopped`'s sender is dropped.
fn heartbeat(
    client: &Client,
    leases: &Mutex<BTreeMap<usize, (String, String)>>,
    stopped: &std::sync::mpsc::Receiver<()>,
    every: Duration,
) {
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
        let ids: Vec<String> = leases
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|(_, l)| l.clone())
            .collect();
        if !ids.is_empty() {
            let _ = client.post("/api/worker/heartbeat", &Leases { leases: ids });
        }
    }
}

/// The claimed games, in order, as the runner's `Pairings`.
struct Claimed(Mutex<VecDeque<ScheduledGame>>);

impl Pairings for Claimed {
    fn next(&self) -> Option<ScheduledGame> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).pop_front()
    }

    fn finished(&self, _index: usize, _row: &GameRow) -> Option<String> {
        None
    }

    fn total(&self) -> usize {
        usize::MAX
    }
}

/// A spooled upload: the game's URL path and body.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spooled {
    game_id: String,
    body: GameUpload,
}

/// The runner's `Store` on a worker: each finished game goes to the
/// server; when it cannot be reached, to the spool.
struct Upload<'a> {
    client: Client,
    spool: PathBuf,
    leases: Arc<Mutex<BTreeMap<usize, (String, String)>>>,
    done: DoneSet,
    say: &'a (dyn Fn(&str) + Sync),
    /// The stderr offered for the next commit, by its game's index.
    stderr: Option<(usize, Vec<SeatStderr>)>,
}

/// The error of the worker's store: a game that cannot be spooled.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpoolError(String);

impl Store for Upload<'_> {
    type Error = SpoolError;

    fn commit(
        &mut self,
        record: &Frame,
        row: &mut GameRow,
        index: usize,
    ) -> Result<(), SpoolError> {
        let lease = self
            .leases
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&index);
        let Some((game_id, lease)) = lease else {
            return Err(SpoolError(format!("game {index} was not claimed")));
        };
        let text = crate::results::records::decode(record.bytes())
            .map_err(|e| SpoolError(format!("the record of {game_id}: {e}")))?;
        let body = GameUpload {
            lease,
            record: String::from_utf8_lossy(&text).into_owned(),
            row: row.clone(),
            stderr: match self.stderr.take() {
                Some((i, seats)) if i == index => seats,
                _ => Vec::new(),
            },
        };
        self.done.insert(index);
        let s = Spooled { game_id, body };
        match send(&self.client, &s) {
            Ok(()) => (self.say)(&format!("{}: uploaded", s.game_id)),
            Err(Call::Refused(status, m)) => (self.say)(&format!(
                "{}: discarded, the server refused it ({status}: {m})",
                s.game_id
            )),
            Err(e) => {
                let path = self.spool.join(format!("{}.json", s.game_id));
                let bytes = serde_json::to_vec(&s).map_err(|e| SpoolError(e.to_string()))?;
                crate::league::folder::write_atomically(&path, &bytes)
                    .map_err(|e| SpoolError(format!("{}: {e}", path.display())))?;
                (self.say)(&format!(
                    "{}: kept in the spool ({}): {e}",
                    s.game_id,
                    path.display()
                ));
            }
        }
        Ok(())
    }

    fn offer_stderr(&mut self, index: usize, stderr: Vec<SeatStderr>) {
        self.stderr = Some((index, stderr));
    }

    fn sync(&mut self) -> Result<(), SpoolError> {
        Ok(())
    }

    fn done(&self) -> &DoneSet {
        &self.done
    }

    fn record(&self, game_id: &str) -> Result<String, SpoolError> {
        Err(SpoolError(format!(
            "a worker keeps no records: {game_id} is on the server"
        )))
    }
}

fn send(client: &Client, s: &Spooled) -> Result<(), Call> {
    client
        .post(&format!("/api/worker/games/{}", s.game_id), &s.body)
        .map(|_| ())
}

/// Sends the spooled games: each accepted or refused (a lease gone) is
/// removed, and said; the others wait for the next try.
fn send_spool(client: &Client, cache: &Path, say: &(dyn Fn(&str) + Sync)) {
    let Ok(dir) = std::fs::read_dir(cache.join("spool")) else {
        return;
    };
    let mut files: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
    {
        let s: Spooled = match std::fs::read(f)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(s) => s,
            None => {
                say(&format!("{}: not a spooled game; left there", f.display()));
                continue;
            }
        };
        match send(client, &s) {
            Ok(()) => {
                say(&format!("{}: uploaded from the spool", s.game_id));
                let _ = std::fs::remove_file(f);
            }
            Err(Call::Refused(status, m)) => {
                say(&format!(
                    "{}: discarded from the spool, the server refused it ({status}: {m})",
                    s.game_id
                ));
                let _ = std::fs::remove_file(f);
            }
            Err(_) => return,
        }
    }
}
