//! An upload's way to the ladder. [`accept`] (in the request): the
//! owner's limits, the archive unpacked with hard limits into a fresh
//! folder ([`super::archive`]), its bot.toml read and its name checked, the
//! bot's owner checked, a new version queued. Then [`intake_forever`] (a
//! pool of `builds_at_once` threads, fair between owners: [`pool`]):
//! built in the sandbox,
//! checked by the full `check-bot`, and only then entered, or refused with
//! the build's error or check-bot's report. Each step is the version's
//! status, shown on its page, in the API and in the live feed.

pub mod check;
pub mod inbox;
pub mod limits;
pub mod pool;
pub mod recheck;
pub mod suspects;
pub mod verify;

use crate::bot::manifest::Manifest;
use crate::league::config::ladder::LadderSettings;
use crate::league::config::BotSpec;
use crate::league::config::Tournament;
use crate::serve::bus::{Feed, FeedEvent, Metrics, Queries, Wake};
use crate::serve::store::version_tests::{Entering, TestSpec};
use crate::serve::store::{unix_now, Db, DbError, Owner, Version, VersionStatus, WITHDRAWN};
use crate::wire::archive::{self, Limits};
use axum::http::StatusCode;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// The intake, with what it is handed: the ladder file and its settings,
/// the store, the wake-up, the live feed and the counters; and what to do
/// when a version is entered (the roster changed).
pub struct Intake {
    t: Tournament,
    settings: LadderSettings,
    db: Db,
    queries: Queries,
    wake: Arc<Wake>,
    feed: Feed,
    metrics: Arc<Metrics>,
    entered: Box<dyn Fn() + Send + Sync>,
}

/// What the intake is handed.
pub struct Handles {
    pub db: Db,
    pub queries: Queries,
    pub wake: Arc<Wake>,
    pub feed: Feed,
    pub metrics: Arc<Metrics>,
}

impl Intake {
    /// The intake of ladder `t` (with its `[ladder]` table, `settings`);
    /// `entered` is called once a version is entered.
    pub fn new(
        t: Tournament,
        settings: LadderSettings,
        h: Handles,
        entered: Box<dyn Fn() + Send + Sync>,
    ) -> Intake {
        Intake {
            t,
            settings,
            db: h.db,
            queries: h.queries,
            wake: h.wake,
            feed: h.feed,
            metrics: h.metrics,
            entered,
        }
    }
}

/// A bot folder as uploaded (tar.gz), spooled to a file (removed unless
/// kept as the version's bundle).
pub struct Upload {
    pub file: inbox::Spooled,
}

/// What a client is told of a failure of the server's own (the store, a
/// task): the cause goes to the log only.
pub const INTERNAL: &str =
    "the server failed; its log says why: try again later, or tell the organiser";

/// Why an upload is refused: the status and what to do.
#[derive(Debug)]
pub struct Refusal {
    pub status: StatusCode,
    pub message: String,
    /// Seconds until it could be taken (`Retry-After`), when known.
    pub retry_after: Option<u32>,
}

impl Refusal {
    fn new(status: StatusCode, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
}

impl From<DbError> for Refusal {
    fn from(e: DbError) -> Refusal {
        tracing::error!("{e}");
        Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL)
    }
}

/// Why a ladder bot name is refused, if it is: it is part of URLs, file
/// names and the games' rows, so letters, digits, `.`, `_` and `-` only,
/// 1 to 40 of them, starting with a letter or digit.
pub fn name_problem(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    (!ok).then(|| {
        format!(
            "bot name {}: a ladder's bot names are 1 to 40 letters, digits, `.`, `_` or `-`, starting with a letter or digit (set `name` in bot.toml)",
            serde_json::Value::from(name)
        )
    })
}

/// The folders of the ladder: bots' versions, and uploads being unpacked.
fn bots_dir(l: &Intake) -> PathBuf {
    l.t.output.join("bots")
}

impl Intake {
    /// Where uploads are spooled and unpacked before they are looked at.
    pub fn incoming_dir(&self) -> PathBuf {
        self.t.output.join("incoming")
    }
}

/// The archive limits of this ladder.
fn limits(l: &Intake) -> Limits {
    Limits {
        compressed_bytes: l.settings.upload_mb << 20,
        unpacked_bytes: l.settings.unpacked_mb << 20,
        files: l.settings.upload_files,
        ..Limits::default()
    }
}

/// Refuses (429) an owner who made `uploads_per_hour` uploads in the
/// last hour: checked before an upload's body is read, and again when it
/// is taken.
/// The refusal says when the next upload is taken (`Retry-After`: when
/// the upload that frees a place is an hour old).
pub async fn check_rate(l: &Intake, owner: &Owner) -> Result<(), Refusal> {
    let now = unix_now();
    let hour_ago = now - 3600;
    let most = l.settings.uploads_per_hour as i64;
    let recent = l.db.uploads_since(owner.id, hour_ago).await?;
    if recent < most {
        return Ok(());
    }
    // The uploads counted drop below `most` when this one leaves the hour.
    let frees = l.db.upload_at(owner.id, hour_ago, recent - most).await?;
    let wait = frees.map_or(3600, |at| (at + 3600 - now).clamp(1, 3600));
    Err(Refusal {
        retry_after: Some(wait as u32),
        ..Refusal::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "{recent} uploads in the last hour: this ladder takes {most} an hour from one owner; the next is taken in {wait} s (Retry-After)"
            ),
        )
    })
}

/// Takes an upload from `owner`: checks their limits, unpacks and reads
/// it, and queues a new version of its bot, with a test against the
/// version it would replace as the ladder's settings say. Nothing is
/// written outside the new version's folder (and the upload's temporary
/// one, removed).
pub async fn accept(l: &Intake, owner: &Owner, upload: Upload) -> Result<Version, Refusal> {
    let test = default_test(&l.settings);
    accept_tested(l, owner, upload, test.as_ref()).await
}

/// The test an upload gets unless it says otherwise: the ladder's
/// `test_*` settings, or none when `test_versions` is off.
pub fn default_test(settings: &LadderSettings) -> Option<TestSpec> {
    let t = &settings.tests;
    t.on.then(|| TestSpec {
        elo0: t.elo0,
        elo1: t.elo1,
        alpha: t.alpha,
        beta: t.beta,
        max_games: t.max_games as i64,
        outcome: t.outcome.as_str().to_string(),
    })
}

/// [`accept`], with the upload's own test (`None`: the new version
/// replaces the old one at once, untested): asked for here, started when
/// the version is entered beside one of the bot's ([`enter`]).
pub async fn accept_tested(
    l: &Intake,
    owner: &Owner,
    upload: Upload,
    test: Option<&TestSpec>,
) -> Result<Version, Refusal> {
    check_rate(l, owner).await?;
    let bytes = upload.file.len as i64;
    l.db.note_upload(owner.id, bytes).await?;
    let sha = upload.file.sha256.clone();
    let tmp = l
        .incoming_dir()
        .join(format!("{}-{}", std::process::id(), unix_nanos()));
    let lim = limits(l);
    let tmp2 = tmp.clone();
    let from = upload.file.path.clone();
    let unpacked = tokio::task::spawn_blocking(move || {
        let file = std::fs::File::open(&from).map_err(|e| {
            Refusal::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the upload could not be read back: {e}"),
            )
        })?;
        unpack(std::io::BufReader::new(file), &tmp2, &lim)
    })
    .await
    .map_err(|e| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let name = match unpacked {
        Ok(name) => name,
        Err(r) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(r);
        }
    };
    let queued = queue(l, owner, &name, &tmp, &sha, bytes, test).await;
    let _ = std::fs::remove_dir_all(&tmp);
    let v = queued?;
    // The upload as it came, for workers (`GET /api/worker/bundles/SHA`).
    if let Err(e) = upload.file.keep(&bundle_path(&v.folder)) {
        tracing::error!(
            "{}: the upload could not be kept for workers: {e}",
            v.player()
        );
    }
    l.feed.announce(FeedEvent::Bot {
        bot: &v.bot,
        version: Some(v.number),
        status: v.status,
        detail: None,
    });
    l.wake.wake_all();
    Ok(v)
}

/// Where the upload of the version in `folder` is kept, as uploaded
/// (`vN.tar.gz` next to its folder `vN`): the workers' bundle.
pub fn bundle_path(folder: &str) -> PathBuf {
    PathBuf::from(format!("{folder}.tar.gz"))
}

/// Unpacks `bytes` into `dir` and reads its bot.toml: the bot's name.
fn unpack(bytes: impl std::io::Read, dir: &Path, limits: &Limits) -> Result<String, Refusal> {
    if let Some(up) = dir.parent() {
        std::fs::create_dir_all(up).map_err(|e| {
            Refusal::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("{}: {e}", up.display()),
            )
        })?;
    }
    archive::unpack(bytes, dir, limits).map_err(|e| {
        let status = match e.too_large() {
            true => StatusCode::PAYLOAD_TOO_LARGE,
            false => StatusCode::BAD_REQUEST,
        };
        Refusal::new(status, e.to_string())
    })?;
    bot_name_of(dir).map_err(|why| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            why.replace(&dir.display().to_string(), "."),
        )
    })
}

/// The ladder name of the bot in folder `dir`, as its bot.toml says it,
/// or why the ladder refuses that bot.toml (each message starting with
/// `bot.toml`, and naming the line and column of a TOML error; the caller
/// says which folder): it must read, name no file
/// outside its folder, and say a `name` that is a ladder's
/// ([`name_problem`]). The server reads each upload with it, and `arena
/// submit` the folder before it packs it.
pub fn bot_name_of(dir: &Path) -> Result<String, String> {
    archive::check_manifest(dir).map_err(|e| e.to_string())?;
    // A league's bot may go by its folder's name; an upload's folder is
    // the server's own, so its bot.toml must say the name.
    let manifest = dir.join(crate::bot::manifest::MANIFEST);
    let named = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_none_or(|t| t.contains_key("name"));
    if !named {
        return Err("bot.toml has no `name`: a ladder knows a bot by it, and the folder's name is not uploaded; add `name = \"...\"` (each upload of that name is its next version)".to_string());
    }
    let m = Manifest::load(dir).map_err(|e| e.to_string())?;
    match name_problem(&m.name) {
        Some(why) => Err(why),
        None => Ok(m.name),
    }
}

/// Checks that `owner` may add a version of bot `name`, makes it, and
/// moves the unpacked folder `tmp` to its place.
async fn queue(
    l: &Intake,
    owner: &Owner,
    name: &str,
    tmp: &Path,
    sha: &str,
    bytes: i64,
    test: Option<&TestSpec>,
) -> Result<Version, Refusal> {
    match l.db.bot_owner(name).await? {
        Some((id, other)) if id != owner.id => {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                format!("bot `{name}` belongs to `{other}`: choose another name in bot.toml"),
            ))
        }
        // A bot of the owner's with no version in the ladder (retired by
        // its owner, or each version refused) comes back with this
        // upload: one bot more, as PATCH's `{"active": true}` counts it.
        Some(_) => {
            if !l.db.bot_is_live(name).await? {
                check_bot_limit(l, owner, Some(name)).await?;
            }
        }
        None => {
            // A name new to the ladder may not pass for one there already
            // (case, full-width letters, a Cyrillic `а`): leagues refuse
            // the same (docs/league.md); here it would be impersonation.
            let look = crate::text::look_of(name);
            let names = l.db.bot_names().await?;
            if let Some((other, by)) = names.iter().find(|(n, _)| crate::text::look_of(n) == look) {
                return Err(Refusal::new(
                    StatusCode::FORBIDDEN,
                    format!(
                        "bot name `{name}` looks like `{other}` (of `{by}`): the same letters in another case or written with other Unicode code points; choose another name in bot.toml"
                    ),
                ));
            }
            check_bot_limit(l, owner, None).await?;
        }
    }
    let root = bots_dir(l).join(name);
    let folder_of = |n: i64| root.join(format!("v{n}")).display().to_string();
    let v =
        l.db.new_version(name, owner.id, &folder_of, sha, bytes)
            .await
            .map_err(|e| match e {
                DbError::Conflict(m) => Refusal::new(StatusCode::FORBIDDEN, m),
                e => Refusal::from(e),
            })?;
    let dest = PathBuf::from(&v.folder);
    let moved = std::fs::create_dir_all(&root).and_then(|()| std::fs::rename(tmp, &dest));
    if let Err(e) = moved {
        let why = format!("the upload could not be stored: {e}");
        l.db.set_status(v.id, VersionStatus::Refused, &why, None)
            .await?;
        return Err(Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, why));
    }
    if let Some(spec) = test {
        l.db.ask_test(v.id, spec).await?;
    }
    if !l
        .db
        .set_on_its_way(v.id, VersionStatus::Queued, "", None)
        .await?
    {
        return Err(Refusal::new(
            StatusCode::CONFLICT,
            format!(
                "bot `{name}` was retired while this upload was received: version {} is withdrawn; upload it again to bring the bot back",
                v.number
            ),
        ));
    }
    Ok(Version {
        status: VersionStatus::Queued,
        ..v
    })
}

/// Refuses (403) an upload that would give `owner` one bot more than
/// `bots_per_owner` (docs/ladder.md, "The ladder file"): a new bot
/// (`back`: `None`), or their bot `back` with no version in the ladder.
async fn check_bot_limit(l: &Intake, owner: &Owner, back: Option<&str>) -> Result<(), Refusal> {
    let live = l.db.live_bots_of(owner.id).await?;
    if live < l.settings.bots_per_owner as i64 {
        return Ok(());
    }
    let what = match back {
        None => "or upload a new version of one".to_string(),
        Some(name) => format!("before bringing `{name}` back with a new version"),
    };
    Err(Refusal::new(
        StatusCode::FORBIDDEN,
        format!(
            "you have {live} bots in this ladder, its limit: retire one (DELETE /api/bots/NAME) {what}"
        ),
    ))
}

/// Builds and checks queued versions, `builds_at_once` at a time, fair
/// between owners ([`pool`]), each on a thread of its own, until the
/// service stops; the versions waiting are told their place in the queue
/// (their detail, in the API, the feed and `arena submit`). Versions cut
/// off by a stop are taken again.
pub fn intake_forever(l: Arc<Intake>) {
    let running: Arc<std::sync::Mutex<Vec<Version>>> = Arc::default();
    let lock = |r: &std::sync::Mutex<Vec<Version>>| {
        r.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    };
    let mut leaving = std::collections::HashMap::new();
    let mut busy = false;
    while !l.wake.is_stopping() {
        sweep_built(&l, &mut leaving);
        let pending = l.queries.run(async {
            let mut v = Vec::new();
            for s in [
                VersionStatus::Building,
                VersionStatus::Checking,
                VersionStatus::Queued,
            ] {
                v.extend(l.db.versions(Some(s)).await?);
            }
            Ok::<_, DbError>(v)
        });
        let mut waiting = match pending {
            Ok(p) => p,
            Err(e) => {
                tracing::error!("cannot read the uploads: {e}");
                l.wake.wait(Duration::from_secs(5));
                continue;
            }
        };
        let now = lock(&running);
        waiting.retain(|v| !now.iter().any(|r| r.id == v.id));
        waiting.sort_by_key(|v| v.id);
        let mut now = now;
        while now.len() < l.settings.builds_at_once {
            let free = l.settings.builds_at_once - now.len();
            let Some(i) = pool::next(&waiting, &now, free) else {
                break;
            };
            let v = waiting.remove(i);
            now.push(v.clone());
            running
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(v.clone());
            let (l2, running2) = (l.clone(), running.clone());
            let started = std::thread::Builder::new()
                .name(format!("ladder-build-{}", v.id))
                .spawn(move || {
                    take(&l2, &v);
                    running2
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .retain(|r| r.id != v.id);
                    l2.wake.wake_all();
                });
            if let Err(e) = started {
                tracing::error!("cannot start a build's thread: {e}");
                running
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clear();
                l.wake.wait(Duration::from_secs(5));
            }
        }
        tell_places(&l, &waiting, &now);
        // Idle after a burst of builds and checks: the memory their
        // unpacking and reports freed goes back to the system.
        let idle = now.is_empty() && waiting.is_empty();
        if idle && busy {
            crate::host::return_free_memory();
        }
        busy = !idle;
        l.wake.wait(Duration::from_secs(2));
    }
}

/// How long the built copy of a version that left the ladder is kept
/// (its games in flight run from it, and finish).
const BUILT_GRACE: Duration = Duration::from_secs(600);

/// Removes the built copies of versions that left the ladder for good:
/// refused ones at once, those retired by a newer version after
/// [`BUILT_GRACE`] (`leaving`: when each was first seen gone, `None` once
/// swept). A bot
/// withdrawn by its owner keeps its copy: the owner may bring it back.
fn sweep_built(
    l: &Intake,
    leaving: &mut std::collections::HashMap<i64, Option<std::time::Instant>>,
) {
    let gone = l.queries.run(async {
        let mut v = l.db.versions(Some(VersionStatus::Refused)).await?;
        v.extend(l.db.versions(Some(VersionStatus::Retired)).await?);
        Ok::<_, DbError>(v)
    });
    let Ok(gone) = gone else { return };
    for v in gone {
        if v.detail == WITHDRAWN {
            continue;
        }
        // `None`: swept already.
        let Some(since) = *leaving
            .entry(v.id)
            .or_insert_with(|| Some(std::time::Instant::now()))
        else {
            continue;
        };
        if v.status == VersionStatus::Retired && since.elapsed() < BUILT_GRACE {
            continue;
        }
        leaving.insert(v.id, None);
        if let Ok(spec) = spec_of(&v) {
            if let (Some(b), Some(dir)) = (&spec.build, &spec.cwd) {
                let argv = crate::bot::manifest::expand(b);
                if crate::bot::build::built(dir, &argv).is_some() {
                    tracing::info!(
                        "{}: its built copy removed (it left the ladder)",
                        v.player()
                    );
                    crate::bot::build::remove_built(dir, &argv);
                }
            }
        }
    }
}

/// Tells each version still waiting its place in the queue (its detail,
/// when it changed).
fn tell_places(l: &Intake, waiting: &[Version], running: &[Version]) {
    let order = pool::order(waiting, running);
    for v in waiting {
        let Some(place) = order.iter().position(|id| *id == v.id) else {
            continue;
        };
        let detail = format!(
            "place {} in the queue ({} builds and checks at once)",
            place + 1,
            l.settings.builds_at_once
        );
        if v.status == VersionStatus::Queued && v.detail != detail {
            step(l, v, VersionStatus::Queued, &detail, None);
        }
    }
}

/// The intake's log when a version it works on is no longer on its way.
const NO_LONGER_ON_ITS_WAY: &str =
    "withdrawn by its owner, or their token revoked, before it was entered";

/// Sets version `v`'s status (and tells the feed) while it is on its
/// way: false, and nothing said, once its owner withdrew it
/// ([`Db::set_on_its_way`]).
fn step(
    l: &Intake,
    v: &Version,
    status: VersionStatus,
    detail: &str,
    report: Option<&str>,
) -> bool {
    match l
        .queries
        .run(l.db.set_on_its_way(v.id, status, detail, report))
    {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!("{}: not {status}: {NO_LONGER_ON_ITS_WAY}", v.player());
            return false;
        }
        Err(e) => tracing::error!("{}: cannot record `{status}`: {e}", v.player()),
    }
    tracing::info!("{}: {status} {detail}", v.player());
    l.feed.announce(FeedEvent::Bot {
        bot: &v.bot,
        version: Some(v.number),
        status,
        detail: Some(detail),
    });
    true
}

/// Refuses version `v` for `detail` (with `report`), and removes its
/// upload and unpacked folder: a refused version never plays, and what
/// its owner's page shows of it (the detail and the report) is in the
/// store. (They stayed: at 20 refused uploads an hour of 16 MB, 1.3 GB an
/// hour a token.)
fn refuse(l: &Intake, v: &Version, detail: &str, report: Option<&str>) {
    if !step(l, v, VersionStatus::Refused, detail, report) {
        return;
    }
    let folder = std::path::Path::new(&v.folder);
    let bundle = bundle_path(&v.folder);
    let removed = [
        std::fs::remove_dir_all(folder).or_else(gone_already),
        std::fs::remove_file(&bundle).or_else(gone_already),
    ];
    for (what, r) in [folder, bundle.as_path()].iter().zip(removed) {
        if let Err(e) = r {
            tracing::warn!(
                "{}: refused, but {} cannot be removed: {e}",
                v.player(),
                what.display()
            );
        }
    }
}

/// A file or folder to remove that is not there: nothing to do.
fn gone_already(e: std::io::Error) -> std::io::Result<()> {
    match e.kind() {
        std::io::ErrorKind::NotFound => Ok(()),
        _ => Err(e),
    }
}

/// Builds, checks and enters (or refuses) version `v`; stops at its next
/// step once its owner withdrew it.
fn take(l: &Intake, v: &Version) {
    let spec = match spec_of(v) {
        Ok(s) => s,
        Err(e) => {
            let why = check::public(&e.to_string(), Some(std::path::Path::new(&v.folder)));
            refuse(l, v, &why, None);
            return;
        }
    };
    if !step(l, v, VersionStatus::Building, "", None) {
        return;
    }
    let room = crate::league::launch::Room::of(&l.t);
    if spec.build.is_some() {
        l.metrics.builds.fetch_add(1, Ordering::Relaxed);
        let built =
            crate::league::build::build_bots(std::slice::from_ref(&spec), &room, None, &mut |_| {});
        if let Err(e) = built {
            l.metrics.builds_failed.fetch_add(1, Ordering::Relaxed);
            let why = check::public(&e.to_string(), Some(std::path::Path::new(&v.folder)));
            refuse(l, v, "its build failed", Some(&why));
            return;
        }
    }
    if !step(l, v, VersionStatus::Checking, "", None) {
        return;
    }
    let (passed, report) = check::check(&l.t, &spec);
    let report = match spec.build {
        Some(_) => format!("{}\n{report}", build_said(&room)),
        None => report,
    };
    if passed {
        enter(l, v, &report);
    } else {
        l.metrics.checks_failed.fetch_add(1, Ordering::Relaxed);
        refuse(l, v, "it failed check-bot (see its report)", Some(&report));
    }
}

/// Enters version `v`, its check passed (`report`): beside the bot's
/// entered version with its test started when the upload asked for one,
/// replacing the bot's others otherwise ([`Db::enter_version`]).
fn enter(l: &Intake, v: &Version, report: &str) {
    let detail = match l.queries.run(l.db.enter_version(v.id, report)) {
        Ok(Entering::Beside { test, old }) => {
            format!("entered beside version {old}: test {test} runs")
        }
        Ok(Entering::Alone) => String::new(),
        Ok(Entering::Withdrawn) => {
            tracing::info!("{}: not entered: {NO_LONGER_ON_ITS_WAY}", v.player());
            return;
        }
        Err(e) => {
            tracing::error!("{}: cannot record `entered`: {e}", v.player());
            return;
        }
    };
    tracing::info!("{}: entered {detail}", v.player());
    l.feed.announce(FeedEvent::Bot {
        bot: &v.bot,
        version: Some(v.number),
        status: VersionStatus::Entered,
        detail: Some(&detail),
    });
    (l.entered)();
}

/// The check report's line on the build's limits: its quota and how it
/// is kept, and its time limit.
fn build_said(room: &crate::league::launch::Room<'_>) -> String {
    let q = room.build_quota();
    format!(
        "build limits: {} MiB and {} files and folders ({}), {} s",
        q.bytes >> 20,
        q.files,
        crate::bot::build::quota_kept(room.sandbox),
        room.build_limit().as_secs()
    )
}

/// The bot of an entered version, as the runner starts it: its bot.toml
/// in its folder, under its ladder name (`BOT@N`).
pub fn spec_of(v: &Version) -> Result<BotSpec, crate::bot::manifest::ManifestError> {
    let m = crate::bot::manifest::Manifest::load(std::path::Path::new(&v.folder))?;
    let mut spec = BotSpec::from_manifest(m);
    spec.name = v.player();
    Ok(spec)
}

fn unix_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}
