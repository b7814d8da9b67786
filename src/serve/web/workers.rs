//! The workers' side of the service (issue 31, docs/ladder.md "Workers"):
//! worker tokens, and the HTTP endpoints `arena worker` speaks, merged
//! into the service's router ([`routes`]): register, claim, heartbeat,
//! bundles of bot versions by content hash, and uploads of finished
//! games, each replayed through the engine before it counts
//! ([`super::verify`]). Every refusal is a status and one line of JSON;
//! refused uploads are logged with the worker's name and counted in
//! `/metrics` by kind.

use super::auth::bearer_owner;
use super::error::{json_body, ApiError, ApiResult, Shared};
use crate::serve::intake::inbox;
use crate::serve::intake::verify::{check_upload, Expected};
use crate::serve::ladder::{Ladder, Registrant};
use crate::serve::store::leases::Lease;
use crate::serve::store::{unix_now, GameState, GameTicket, LeaseState, Owner, Role};
use crate::wire::worker::{
    game_id, game_ids, is_instance, Accepts, Batch, BatchAnswer, ClaimRequest, GameAnswer,
    GameUpload, Granted, LeasedGame, LeasedSeat, Leases, Registered, Registration, Released,
    Renewed, Uploaded, INSTANCE_HEADER, LEASES_MOST,
};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// The rules version this arena plays: [`crate::engine::RULES_VERSION`]
/// and the record format it writes; a worker must play the same.
pub fn rules_version() -> i64 {
    crate::engine::RULES_VERSION as i64
}

/// The workers' endpoints, to merge into the service's router.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/api/worker/register", post(register))
        .route("/api/worker/claim", post(claim))
        .route("/api/worker/heartbeat", post(heartbeat))
        .route("/api/worker/release", post(release))
        .route("/api/worker/bundles/{sha256}", get(bundle))
        .route("/api/worker/games/{id}", post(upload))
        .route("/api/worker/games", post(upload_batch))
}

/// The worker a request's token names: 403 for an owner's token; 503 on
/// a server of pages only, which plays and leases nothing.
async fn worker_of(l: &Ladder, headers: &HeaderMap) -> ApiResult<Owner> {
    if l.pages_only {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "this server shows the ladder's pages only (--pages-only): point the worker at the ladder's own server",
        ));
    }
    let o = bearer_owner(l, headers).await?;
    if o.role != Role::Worker {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "this token is not a worker's: it cannot claim or upload games (the organiser makes one with `arena serve LADDER.toml --add-worker NAME`)",
        ));
    }
    Ok(o)
}

/// 403 for a worker in quarantine (docs/security.md, "Forged results"):
/// it claims and uploads nothing until the organiser releases it.
async fn not_quarantined(l: &Ladder, w: &Owner) -> ApiResult<()> {
    match l.db.quarantine_of(w.id).await.map_err(ApiError::internal)? {
        Some((since, why)) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "this worker is in quarantine since {since}: {why}; its games are played by others and its uploads are not counted until the organiser releases it (`arena serve LADDER.toml --release-worker {}`)",
                w.name
            ),
        )),
        None => Ok(()),
    }
}

/// The JSON of `what` in a worker's request's `body` ([`json_body`]).
fn worker_json<T: serde::de::DeserializeOwned>(body: &[u8], what: &str) -> ApiResult<T> {
    json_body(body, what, "see docs/ladder.md, \"Workers\"")
}

/// `POST /api/worker/register`: a worker says what it is; refused (409)
/// when its rules version or record format is not the server's, or it
/// can play none of the ladder's variants. The answer: the ladder file,
/// the lease time, the versions the server accepts.
async fn register(
    State(l): Shared,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Registered>> {
    let w = worker_of(&l, &headers).await?;
    let instance = Some(instance_of(&headers)?);
    let r: Registration = worker_json(&body, "a registration")?;
    // Its texts first: the refusal of other rules logs one.
    check_texts(&r)?;
    if r.rules_version != rules_version() || r.record_format != crate::referee::record::FORMAT {
        tracing::warn!(
            "worker {}: refused at register: rules version {}, record format {} (arena {}); this server plays {}, {}",
            w.name,
            r.rules_version,
            r.record_format,
            r.arena_version,
            rules_version(),
            crate::referee::record::FORMAT
        );
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "this server plays rules version {} with record format {} (arena {}); this worker has rules version {} and record format {} (arena {}): install the server's arena version",
                rules_version(),
                crate::referee::record::FORMAT,
                env!("CARGO_PKG_VERSION"),
                r.rules_version,
                r.record_format,
                r.arena_version
            ),
        ));
    }
    let playable: Vec<String> =
        l.t.variants
            .iter()
            .filter(|v| r.variants.iter().any(|x| x == v.variant.name()))
            .map(|v| v.key.clone())
            .collect();
    if playable.is_empty() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "this worker plays none of the ladder's variants",
        ));
    }
    check_numbers(&l, &r)?;
    check_token_free(&l, &w, &instance, &r.host)?;
    l.db.register_worker(w.id, &r)
        .await
        .map_err(ApiError::internal)?;
    let me = Registrant {
        instance,
        host: r.host.clone(),
        heard: Instant::now(),
    };
    registrants(&l).insert(w.id, me);
    tracing::info!(
        "worker {} registered: {} ({} cores, -j {}, arena {}, sandbox {})",
        w.name,
        r.host,
        r.cores,
        r.jobs,
        r.arena_version,
        r.sandbox.join(" ")
    );
    Ok(Json(Registered {
        accepts: Accepts {
            arena_version: env!("CARGO_PKG_VERSION").to_string(),
            record_format: crate::referee::record::FORMAT,
            rules_version: rules_version(),
        },
        book: l.t.book.as_ref().map(|b| b.text.clone()),
        ladder: l.workers.ladder_text.clone(),
        lease_seconds: l.workers.lease_seconds,
        protocol: crate::wire::worker::PROTOCOL,
        server_time: Some(crate::serve::store::now()),
        variants: playable,
        worker: w.name,
    }))
}

/// The registrations of this server run, by worker.
fn registrants(l: &Ladder) -> std::sync::MutexGuard<'_, HashMap<i64, Registrant>> {
    l.workers
        .registered
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// The instance a worker's request names ([`INSTANCE_HEADER`]): 400
/// without one (a request that names none could take a token another
/// worker holds), or for a value that cannot be one.
fn instance_of(headers: &HeaderMap) -> ApiResult<String> {
    let Some(v) = headers.get(INSTANCE_HEADER) else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "no `{INSTANCE_HEADER}` header: a worker names itself in each registration, claim and heartbeat (`arena worker` sends the id kept in its cache, CACHE/instance); install the server's arena version ({})",
                env!("CARGO_PKG_VERSION")
            ),
        ));
    };
    match v.to_str() {
        Ok(id) if is_instance(id) => Ok(id.to_string()),
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the `{INSTANCE_HEADER}` header is not a worker's id (1 to 64 letters, digits or `-`)"),
        )),
    }
}

/// Whether two processes are not the same worker: each names itself, and
/// not alike.
fn another(a: &Option<String>, b: &Option<String>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a != b)
}

/// 409 for a registration with a token another worker process holds and
/// was heard from within the lease time: a token is one worker's (two
/// would share one `-j`, one pace, one record of residuals). A holder not
/// heard from for that long is gone (killed, its cache lost): the token
/// is taken over, said in the log.
fn check_token_free(l: &Ladder, w: &Owner, instance: &Option<String>, host: &str) -> ApiResult<()> {
    let held = registrants(l).get(&w.id).cloned();
    let Some(holder) = held.filter(|h| another(&h.instance, instance)) else {
        return Ok(());
    };
    let quiet = holder.heard.elapsed().as_secs();
    let lease = l.workers.lease_seconds.max(1) as u64;
    if quiet < lease {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "the token of worker `{}` is in use by another `arena worker` (on host {}, heard from {quiet} s ago): each worker needs a token of its own (the organiser makes one with `arena serve LADDER.toml --add-worker NAME`); if that worker is gone, this one can take the token in {} s",
                w.name,
                holder.host,
                lease - quiet
            ),
        ));
    }
    tracing::warn!(
        "worker {}: the worker on host {host} takes the token over from the one on host {}, not heard from for {quiet} s",
        w.name,
        holder.host
    );
    Ok(())
}

/// Notes that worker `w`'s process `instance` was heard from; 409 when it
/// must register (again): the server started since it registered (its
/// ladder file may have changed), or another process registered with
/// its token since.
fn heard(l: &Ladder, w: &Owner, instance: &Option<String>) -> ApiResult<()> {
    let mut all = registrants(l);
    match all.get_mut(&w.id) {
        None => Err(ApiError::new(
            StatusCode::CONFLICT,
            "register again: the server started again since this worker registered, and its ladder file may have changed (POST /api/worker/register)",
        )),
        Some(r) if another(&r.instance, instance) => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "another `arena worker` (on host {}) registered with this worker's token since: a token is one worker's (POST /api/worker/register to take it back once that one is gone)",
                r.host
            ),
        )),
        Some(r) => {
            r.heard = Instant::now();
            Ok(())
        }
    }
}

/// The most cores a worker may say it has: more than any one machine's
/// (a claim of 65,536 was taken as it came).
pub const CORES_MOST: i64 = 1024;

/// Refuses (400) a registration whose numbers are out of range: `cores`
/// from 1 to [`CORES_MOST`], `jobs` from 1 to its `cores` and to the
/// ladder's `worker_jobs_max`; the message says which and what to run.
fn check_numbers(l: &Ladder, r: &Registration) -> ApiResult<()> {
    if !(1..=CORES_MOST).contains(&r.cores) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "`cores` {}: a worker has from 1 to {CORES_MOST} cores",
                r.cores
            ),
        ));
    }
    let most = r.cores.min(i64::from(l.settings.worker_jobs_max));
    if !(1..=most).contains(&r.jobs) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "`jobs` {}: this ladder takes from 1 to {most} games at once from this worker (at most its {} cores, and the ladder's `worker_jobs_max` of {}): run `arena worker -j {most}` or less",
                r.jobs,
                r.cores,
                l.settings.worker_jobs_max
            ),
        ));
    }
    Ok(())
}

/// The longest text of a registration, in bytes: a host's full name is
/// at most 253 (RFC 1035).
const TEXT_MOST: usize = 255;

/// The most entries of a registration's lists (`sandbox`, `variants`).
const LIST_MOST: usize = 64;

/// Refuses a registration whose text (its host, shown on the workers'
/// page and in `/api/workers`; its versions, sandbox and variants, in
/// the server's log) holds a control or invisible character, a
/// direction override among them: [`crate::text::is_hidden`], the rule
/// of bot names and hellos; or is longer than [`TEXT_MOST`] bytes, or
/// whose lists are longer than [`LIST_MOST`] entries: a page of workers
/// is not a place for a megabyte of host name.
fn check_texts(r: &Registration) -> ApiResult<()> {
    for (field, list) in [("sandbox", &r.sandbox), ("variants", &r.variants)] {
        if list.len() > LIST_MOST {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("`{field}` has {} entries: at most {LIST_MOST}", list.len()),
            ));
        }
    }
    // The name the workers' page and the log know it by (`arena worker`
    // sends `localhost` when the machine has none).
    if r.host.trim().is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "`host` is empty: register with the machine's name",
        ));
    }
    let texts = [("host", &r.host), ("arena_version", &r.arena_version)]
        .into_iter()
        .chain(r.sandbox.iter().map(|s| ("sandbox", s)))
        .chain(r.variants.iter().map(|v| ("variants", v)));
    for (field, text) in texts {
        if text.len() > TEXT_MOST {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "`{field}` is {} bytes long: at most {TEXT_MOST} (register with the machine's plain name)",
                    text.len()
                ),
            ));
        }
        if let Some(c) = text.chars().find(|&c| crate::text::is_hidden(c)) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "`{field}` \"{}\" holds U+{:04X}, a control or invisible character, which no worker's text may hold (it is shown on the ladder's pages and in its log): register with the machine's plain name",
                    text.escape_debug(),
                    u32::from(c)
                ),
            ));
        }
    }
    Ok(())
}

/// The most games one claim leases.
const CLAIM_MOST: usize = 256;

/// How long, in ms, a worker's leased games should keep each of its slots
/// busy: a claim every second or so, whatever a game takes.
const SLOT_AHEAD_MS: f64 = crate::serve::schedule::queue::CLAIM_AHEAD.as_millis() as f64;

/// The most games a worker's slot holds under lease: those in hand, being
/// played, and played but not yet uploaded (the worker's uploader waits a
/// moment to send them in a batch), so that 2 s of instant games fit.
const SLOT_MOST: f64 = 512.0;

/// Games a worker may hold under lease per slot (`-j`): enough to keep
/// the slot busy for [`SLOT_AHEAD_MS`] at the pace of its recent games
/// (`bus::Paces::game_ms`), from 1 (its pace not known yet, or games
/// longer than that) to [`SLOT_MOST`].
fn per_slot(l: &Ladder, worker: i64) -> i64 {
    match l.workers.pace.game_ms(worker) {
        Some(ms) => (SLOT_AHEAD_MS / ms.max(0.5)).clamp(1.0, SLOT_MOST) as i64,
        None => 1,
    }
}

/// A set of `max_games` is shared out by slots: a worker holds at most
/// its slots' part (its `jobs` over the server's games in flight and every
/// worker's `jobs`) of the games still to play, at least one. Without it
/// the first worker to learn its pace takes a batch of the rest of the set
/// while the others wait (fishtest splits a test into tasks the same way).
async fn set_share(l: &Ladder, set: i64, jobs: i64, active: i64) -> ApiResult<usize> {
    let recent = unix_now() - 2 * l.workers.lease_seconds;
    let most = i64::from(l.settings.worker_jobs_max);
    let (all_jobs, _) =
        l.db.worker_capacity(recent, most)
            .await
            .map_err(ApiError::internal)?;
    let slots = all_jobs.max(jobs) + l.settings.games_in_flight as i64;
    let left = (set - l.games_done() as i64).max(0);
    let share = (left * jobs.max(1) + slots - 1) / slots.max(1);
    Ok(usize::try_from(share.max(1) - active).unwrap_or(0))
}

/// `POST /api/worker/claim` `{"max": N}`: up to N games from the queue,
/// each under a new lease: its id, game, variant, and each seat's player
/// and bundle hash. 409 before the worker registered.
async fn claim(
    State(l): Shared,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Granted>> {
    let w = worker_of(&l, &headers).await?;
    let instance = Some(instance_of(&headers)?);
    let c: ClaimRequest = worker_json(&body, "a claim")?;
    not_quarantined(&l, &w).await?;
    let Some(variants) =
        l.db.worker_variants(w.id)
            .await
            .map_err(ApiError::internal)?
    else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "register first: POST /api/worker/register",
        ));
    };
    heard(&l, &w, &instance)?;
    l.db.renew_leases(w.id, &[], unix_now(), 0, lease_life(&l))
        .await
        .map_err(ApiError::internal)?;
    // At most its `-j` slots' worth of games under lease at once (one a
    // slot until its games' pace is known: [`per_slot`]), at most
    // [`CLAIM_MOST`] a claim.
    let (jobs, active) =
        l.db.worker_load(w.id, unix_now())
            .await
            .map_err(ApiError::internal)?
            .unwrap_or((0, 0));
    let jobs = jobs.clamp(0, i64::from(l.settings.worker_jobs_max));
    // And at most twice what it committed over the last 2 s, plus one a
    // slot (`bus::Paces::most_held`): a game's duration leaves out the
    // bots' starts between games.
    let most = (jobs * per_slot(&l, w.id)).min(l.workers.pace.most_held(
        w.id,
        jobs,
        std::time::Instant::now(),
    ));
    let room = usize::try_from(most - active).unwrap_or(0);
    let room = match l.db.max_games() {
        Some(set) => room.min(set_share(&l, set, jobs, active).await?),
        None => room,
    };
    if room == 0 {
        return Ok(Json(Granted {
            games: Vec::new(),
            lease_seconds: l.workers.lease_seconds,
        }));
    }
    let can: Vec<bool> =
        l.t.variants
            .iter()
            .map(|v| variants.iter().any(|x| x == v.variant.name()))
            .collect();
    let claimed = l
        .sched
        .claim(
            Some((w.id, l.workers.lease_seconds)),
            c.max.min(CLAIM_MOST).min(room),
            &|v| can.get(v).copied().unwrap_or(false),
        )
        .await
        .map_err(ApiError::internal)?;
    let mut games = Vec::new();
    // Each version read once a claim: a batch's games share their players.
    let mut known = std::collections::HashMap::new();
    for c in claimed {
        let mut seats = Vec::new();
        for id in &c.ticket.seats {
            if let Some(seat) = known.get(id) {
                seats.push(LeasedSeat::clone(seat));
                continue;
            }
            let v =
                l.db.version(*id)
                    .await
                    .map_err(ApiError::internal)?
                    .ok_or_else(|| {
                        ApiError::internal(format!("version {id} of game {} is gone", c.ticket.id))
                    })?;
            let seat = LeasedSeat {
                player: v.player(),
                sha256: v.sha256.clone(),
            };
            known.insert(*id, seat.clone());
            seats.push(seat);
        }
        let lease = c.lease.as_ref().map(|x| x.id.clone()).unwrap_or_default();
        games.push(LeasedGame {
            game_id: game_id(c.ticket.id),
            id: c.ticket.id,
            lease,
            seats,
            variant: c.ticket.variant,
            opening_of: (c.ticket.opening != c.ticket.id).then_some(c.ticket.opening),
        });
    }
    Ok(Json(Granted {
        games,
        lease_seconds: l.workers.lease_seconds,
    }))
}

/// The longest a lease lives, heartbeats or not (seconds): twice a whole
/// game under the time control (every seat's start-up, up to three seats,
/// and the watchdog on the game), for a game that waited its turn behind
/// another in the worker's slot, plus a lease time and a minute. Past
/// it, the lease ends at the worker's next heartbeat, its game goes back
/// to the queue, and the worker's refusals count it (`lease_life`).
pub fn lease_life(l: &Ladder) -> i64 {
    let t = &l.t.time;
    let game_ms = t.watchdog_ms.saturating_add(t.startup_ms.saturating_mul(3));
    let game = i64::try_from(game_ms / 1000).unwrap_or(i64::MAX / 4);
    game.saturating_mul(2)
        .saturating_add(l.workers.lease_seconds)
        .saturating_add(60)
}

/// `POST /api/worker/heartbeat` `{"leases": [...]}`: renews the worker's
/// active leases among them (at most [`LEASES_MOST`]); the answer lists
/// those renewed and those lost (expired, done, or never its own).
async fn heartbeat(
    State(l): Shared,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Renewed>> {
    let w = worker_of(&l, &headers).await?;
    let instance = Some(instance_of(&headers)?);
    let h: Leases = worker_json(&body, "a heartbeat")?;
    at_most_leases(&h, "heartbeat")?;
    // Its leases are renewed whatever it is told: they are its games.
    let _ = heard(&l, &w, &instance);
    let life = lease_life(&l);
    let renewal =
        l.db.renew_leases(w.id, &h.leases, unix_now(), l.workers.lease_seconds, life)
            .await
            .map_err(ApiError::internal)?;
    if !renewal.over_life.is_empty() {
        // Counted against it, and said in the log.
        note_refused(&l, &w, "lease_life", renewal.over_life.len() as u64);
        l.sched.forget_queue();
        let games: Vec<i64> = renewal.over_life.iter().map(|x| x.1).collect();
        tracing::warn!(
            "worker {}: leases held {life} s (their longest life) without an upload, ended, their games back in the queue: {}",
            w.name,
            crate::wire::worker::game_ids(&games)
        );
    }
    let renewed = renewal.renewed;
    let lost = h
        .leases
        .into_iter()
        .filter(|x| !renewed.contains(x))
        .collect();
    Ok(Json(Renewed { lost, renewed }))
}

/// 400 for a heartbeat or release (`what`) naming more than
/// [`LEASES_MOST`] leases: each is looked for in the store under its
/// write lock, so a list without end would hold every other write.
fn at_most_leases(b: &Leases, what: &str) -> ApiResult<()> {
    match b.leases.len() {
        n if n > LEASES_MOST => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("{n} leases in one {what}: at most {LEASES_MOST} (send several)"),
        )),
        _ => Ok(()),
    }
}

/// `POST /api/worker/release` `{"leases": [...]}`: a worker that stops
/// gives back its active leases among them (at most 1,024); their games go
/// back to the queue at once. The answer: how many were returned.
async fn release(
    State(l): Shared,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Released>> {
    let w = worker_of(&l, &headers).await?;
    // Another process than the one holding the token would give back that
    // one's games; after a restart of the server (no one registered yet)
    // the worker stopping may.
    let instance = Some(instance_of(&headers)?);
    if let Err(e) = heard(&l, &w, &instance) {
        if registrants(&l).contains_key(&w.id) {
            return Err(e);
        }
    }
    let b: Leases = worker_json(&body, "a release")?;
    at_most_leases(&b, "release")?;
    let games =
        l.db.return_leases(w.id, &b.leases)
            .await
            .map_err(ApiError::internal)?;
    if !games.is_empty() {
        l.sched.forget_queue();
        tracing::info!(
            "worker {} returned {}: back in the queue",
            w.name,
            game_ids(&games)
        );
    }
    Ok(Json(Released {
        returned: games.len(),
    }))
}

/// `GET /api/worker/bundles/SHA256`: the bot folder uploaded with that
/// SHA-256, as uploaded (tar.gz); the worker checks the hash.
async fn bundle(
    State(l): Shared,
    headers: HeaderMap,
    Path(sha): Path<String>,
) -> ApiResult<impl IntoResponse> {
    worker_of(&l, &headers).await?;
    let not_found = || ApiError::new(StatusCode::NOT_FOUND, format!("no bundle {sha}"));
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not_found());
    }
    let id =
        l.db.version_by_sha(&sha)
            .await
            .map_err(ApiError::internal)?;
    let Some(v) = (match id {
        Some(id) => l.db.version(id).await.map_err(ApiError::internal)?,
        None => None,
    }) else {
        return Err(not_found());
    };
    let path = crate::serve::intake::bundle_path(&v.folder);
    let bytes = tokio::fs::read(&path).await.map_err(|e| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "{} has no stored upload ({e}): it was uploaded before workers existed; its owner uploads it again",
                v.player()
            ),
        )
    })?;
    Ok(([(header::CONTENT_TYPE, "application/gzip")], bytes))
}

/// The largest upload of one game.
const UPLOAD_LIMIT: usize = 64 << 20;

/// [`worker_json`] of an upload's body, read on a blocking thread: up to
/// 64 MiB of JSON takes a second or more, which would hold one of the
/// runtime's threads (every request's and game's) meanwhile.
async fn upload_json<T>(body: Vec<u8>, what: &'static str) -> ApiResult<T>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    tokio::task::spawn_blocking(move || worker_json(&body, what))
        .await
        .map_err(ApiError::internal)?
}

/// `POST /api/worker/games/ID`: a finished game, accepted once (201).
/// Refused without a change: 404 no such game; 403 not leased to this
/// worker (an unknown lease, another game's, another worker's); 409
/// recorded already (a second upload); 410 the lease expired; 422 the
/// replay disagrees (`illegal_move`, `result`, `seats`, `record`).
async fn upload(
    State(l): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
    req: axum::extract::Request,
) -> ApiResult<(StatusCode, Json<Uploaded>)> {
    let w = worker_of(&l, &headers).await?;
    let id: i64 = crate::wire::worker::ladder_id(&id)
        .or_else(|| id.parse().ok())
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("no game `{id}`")))?;
    // A slot before the body is read: at most so many bodies in memory.
    let _slot = l.gates.games.enter(w.id)?;
    let body = inbox::read_body(req.into_body(), UPLOAD_LIMIT)
        .await
        .map_err(|e| ApiError::unarrived("an upload", e, (UPLOAD_LIMIT >> 20) as u64))?;
    let u: GameUpload = upload_json(body, "an upload").await?;
    let lease = u.lease.clone();
    let r = accept(&l, &w, id, u).await;
    if let Err((kind, e)) = &r {
        give_back_refused(&l, &w, &[(lease, e.status)]).await;
        note_refused(&l, &w, kind, 1);
        tracing::warn!(
            "worker {}: upload of {} refused ({kind}): {}",
            w.name,
            game_id(id),
            e.message
        );
    }
    let held = r.map_err(|(_, e)| e)?;
    if held {
        // A forfeit: it counts once the server has found it again.
        l.workers.held.fetch_add(1, Ordering::Relaxed);
        l.wake_all();
        return Ok((
            StatusCode::ACCEPTED,
            Json(Uploaded {
                accepted: true,
                game_id: game_id(id),
                held: Some(HELD.into()),
            }),
        ));
    }
    l.workers.uploads.fetch_add(1, Ordering::Relaxed);
    Ok((
        StatusCode::CREATED,
        Json(Uploaded {
            accepted: true,
            game_id: game_id(id),
            held: None,
        }),
    ))
}

type Refusal = (&'static str, ApiError);

/// Ends at once the leases of uploads refused because their replay
/// disagrees (422: another game than the lease's, a ladder file changed
/// since the worker registered): their games go back to the queue now,
/// not when the lease runs out, and no worker plays one again and again
/// under a lease that cannot be uploaded. `refused`: each upload's lease
/// and its answer's status.
async fn give_back_refused(l: &Ladder, w: &Owner, refused: &[(String, StatusCode)]) {
    let leases: Vec<String> = refused
        .iter()
        .filter(|(_, status)| *status == StatusCode::UNPROCESSABLE_ENTITY)
        .map(|(lease, _)| lease.clone())
        .collect();
    if leases.is_empty() {
        return;
    }
    match l.db.return_leases(w.id, &leases).await {
        Ok(games) if !games.is_empty() => {
            l.sched.forget_queue();
            tracing::info!(
                "worker {}: {} back in the queue, its upload refused",
                w.name,
                game_ids(&games)
            );
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("worker {}: refused uploads' leases not ended: {e}", w.name),
    }
}

/// An internal failure while an upload is checked.
fn fail(e: impl std::fmt::Display) -> Refusal {
    ("internal", ApiError::internal(e))
}

/// The checks of an upload, in order, then its commit: true when it ends
/// in a forfeit, held for its re-check rather than counted.
async fn accept(l: &Arc<Ladder>, w: &Owner, id: i64, u: GameUpload) -> Result<bool, Refusal> {
    if let Err(e) = not_quarantined(l, w).await {
        return Err(("quarantined", e));
    }
    let mut looked = look_up(l, &[(id, &u.lease)]).await?;
    let p = prepare(l, w, (id, u), &mut looked).await?;
    let l2 = l.clone();
    let mut p = tokio::task::spawn_blocking(move || replay(&l2, p))
        .await
        .map_err(fail)??;
    let stderr = std::mem::take(&mut p.stderr);
    let (c, row) = to_commit(p)?;
    let fresh =
        l.db.commit_uploads(w.id, unix_now(), std::slice::from_ref(&c))
            .await
            .map_err(fail)?;
    if !fresh.first().copied().unwrap_or(false) {
        return Err(ended_while_checked(id));
    }
    l.workers
        .pace
        .note_upload(w.id, 1, std::time::Instant::now());
    let held = committed(l, w, &row);
    keep_stderr(l, id, &stderr).await;
    Ok(held)
}

/// An upload whose lease and game are in order, with what the lease says
/// the game is: for the replay.
struct Prepared {
    id: i64,
    lease: String,
    expected: Expected,
    row: crate::results::GameRow,
    record: String,
    /// Each bot's stderr, for its owner once the game is committed.
    stderr: Vec<crate::results::stderr::SeatStderr>,
}

/// What the checks of a batch of uploads read of the store, read once
/// for the lot: their games and leases, and the players of the versions
/// read so far.
struct Looked {
    games: HashMap<i64, (GameState, GameTicket)>,
    leases: HashMap<String, Lease>,
    names: HashMap<i64, String>,
}

/// Reads the games and leases of `uploads` (game id, lease id).
async fn look_up(l: &Ladder, uploads: &[(i64, &str)]) -> Result<Looked, Refusal> {
    let ids: Vec<i64> = uploads.iter().map(|u| u.0).collect();
    let leases: Vec<&str> = uploads.iter().map(|u| u.1).collect();
    let (games, leases) = l.db.uploads_of(&ids, &leases).await.map_err(fail)?;
    Ok(Looked {
        games,
        leases,
        names: HashMap::new(),
    })
}

/// The store's checks of an upload of game `id` by `w`: the game exists,
/// is leased to `w` under the upload's lease, is not recorded yet, and
/// the lease has not expired. `looked`: what [`look_up`] read for it.
async fn prepare(
    l: &Arc<Ladder>,
    w: &Owner,
    (id, u): (i64, GameUpload),
    looked: &mut Looked,
) -> Result<Prepared, Refusal> {
    let Some((state, ticket)) = looked.games.get(&id).cloned() else {
        return Err((
            "not_leased",
            ApiError::new(StatusCode::NOT_FOUND, format!("no game {}", game_id(id))),
        ));
    };
    let lease = looked.leases.get(&u.lease).cloned();
    let Some(lease) = lease.filter(|x| x.game_id == id && x.worker_id == w.id) else {
        return Err((
            "not_leased",
            ApiError::new(
                StatusCode::FORBIDDEN,
                format!("{} was never leased to you under this lease", game_id(id)),
            ),
        ));
    };
    if lease.state == LeaseState::Done || state == GameState::Done {
        return Err((
            "duplicate",
            ApiError::new(
                StatusCode::CONFLICT,
                format!("{} is recorded already: nothing changed", game_id(id)),
            ),
        ));
    }
    if lease.state == LeaseState::Expired || lease.expires < unix_now() {
        return Err((
            "expired",
            ApiError::new(
                StatusCode::GONE,
                format!(
                    "your lease of {} expired (no heartbeat for {} s) or was ended (the game returned, or an upload of it refused): the game went back to the queue; discard it",
                    game_id(id),
                    l.workers.lease_seconds
                ),
            ),
        ));
    }
    let mut players = Vec::new();
    for v in &ticket.seats {
        if let Some(name) = looked.names.get(v) {
            players.push(name.clone());
            continue;
        }
        let name = l.db.version(*v).await.map_err(fail)?;
        let name = name.map(|v| v.player()).unwrap_or_default();
        looked.names.insert(*v, name.clone());
        players.push(name);
    }
    let game =
        crate::wire::worker::scheduled_as(l.t.seed, id, ticket.opening, ticket.variant, Vec::new());
    let expected = Expected {
        game_id: game.game_id.clone(),
        group: game.group.clone(),
        variant: ticket.variant,
        players,
        seed: game.seed,
        // A variant the ladder no longer has is refused by the check.
        opening: match ticket.variant < l.t.variants.len() {
            true => crate::league::runner::opening_of(&l.t, &game),
            false => Vec::new(),
        },
    };
    if let Err(why) = check_stderr(l, &u.stderr, expected.players.len()) {
        return Err((
            "stderr",
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, why),
        ));
    }
    let (mut row, record) = (u.row, u.record);
    // Where a record lies is the server's to say: the store keeps it.
    row.record_file.clear();
    (row.record_offset, row.record_length) = (None, None);
    Ok(Prepared {
        id,
        lease: lease.id,
        expected,
        row,
        record,
        stderr: u.stderr,
    })
}

/// The replay of a prepared upload (blocking: the engine's work).
fn replay(l: &Ladder, p: Prepared) -> Result<Prepared, Refusal> {
    check_upload(&l.t, &p.expected, &p.row, &p.record).map_err(|e| {
        (
            e.kind,
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("refused by the replay: {e}"),
            ),
        )
    })?;
    Ok(p)
}

/// Keeps an accepted upload's stderr for its owners. The game counts (or
/// is held) already: stderr that cannot be kept is said in the log, not
/// charged to the worker.
async fn keep_stderr(l: &Ladder, id: i64, stderr: &[crate::results::stderr::SeatStderr]) {
    if stderr.is_empty() {
        return;
    }
    if let Err(e) = l.db.keep_stderr(id, stderr).await {
        tracing::error!("the stderr of {} cannot be kept: {e}", game_id(id));
    }
}

/// Refuses an upload's stderr that the ladder's cap (`stderr_kb`) could
/// not have kept, a seat the game lacks, or a seat given twice.
fn check_stderr(
    l: &Ladder,
    stderr: &[crate::results::stderr::SeatStderr],
    players: usize,
) -> Result<(), String> {
    if stderr.is_empty() {
        return Ok(());
    }
    let Some(cap) = l.t.ladder.as_ref().and_then(|s| s.stderr_cap()) else {
        return Err("this ladder keeps no stderr (stderr_kb = 0): send none".into());
    };
    let mut seen = Vec::new();
    for s in stderr {
        if seen.contains(&s.seat) {
            return Err(format!("stderr of seat {} given twice", s.seat));
        }
        seen.push(s.seat);
        s.check(cap, players)?;
    }
    Ok(())
}

/// Counts `n` uploads of worker `w` refused for `kind`: by reason in
/// `/metrics`, by worker in `/api/workers` (its `refusals`), whether
/// they came one at a time or in a batch.
fn note_refused(l: &Ladder, w: &Owner, kind: &'static str, n: u64) {
    *l.workers
        .refused
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(kind)
        .or_default() += n;
    *l.workers
        .refused_by
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(w.name.clone())
        .or_default() += n;
}

fn ended_while_checked(id: i64) -> Refusal {
    (
        "expired",
        ApiError::new(
            StatusCode::GONE,
            format!("your lease of {} ended while it was checked", game_id(id)),
        ),
    )
}

/// What follows a game's commit by worker `w`: a forfeit held (true) wakes
/// its re-check; a game counted joins the standings and the feed. Either
/// way its duration joins `w`'s pace (and the request's count of games,
/// its wall time: `bus::Paces::note_upload`).
fn committed(l: &Ladder, w: &Owner, row: &crate::results::GameRow) -> bool {
    l.workers.pace.note_game(w.id, row.duration_ms);
    if row.offender.is_some() {
        l.sched.forget_queue();
        return true;
    }
    l.sched.note_finished(row);
    l.metrics.games_played.fetch_add(1, Ordering::Relaxed);
    l.announce_game(row);
    l.finished_now(row);
    false
}

/// `POST /api/worker/games` `{"games": [upload, ...]}`: finished games,
/// each named by its row's `game_id`, each checked as one upload to `POST
/// /api/worker/games/ID` is and committed on its own terms (one bad game
/// refuses no other), the lot in one transaction. The answer (200) says
/// per game, in order, what the single upload would have answered
/// ([`GameAnswer`]). 403 for all of them from a worker in quarantine.
async fn upload_batch(
    State(l): Shared,
    headers: HeaderMap,
    req: axum::extract::Request,
) -> ApiResult<Json<BatchAnswer>> {
    let w = worker_of(&l, &headers).await?;
    // A slot before the body is read: at most so many bodies in memory.
    let _slot = l.gates.games.enter(w.id)?;
    let body = inbox::read_body(req.into_body(), UPLOAD_LIMIT)
        .await
        .map_err(|e| ApiError::unarrived("a batch of uploads", e, (UPLOAD_LIMIT >> 20) as u64))?;
    // At most `BATCH_MOST` games, refused as it is read past them.
    let b: Batch = upload_json(body, "a batch of uploads").await?;
    if let Err(e) = not_quarantined(&l, &w).await {
        note_refused(&l, &w, "quarantined", b.games.len() as u64);
        return Err(e);
    }
    let mut answers: Vec<Result<bool, Refusal>> = Vec::new();
    let mut names = Vec::new();
    let mut prepared = Vec::new();
    let wanted: Vec<(i64, &str)> = b
        .games
        .iter()
        .filter_map(|u| Some((crate::wire::worker::ladder_id(&u.row.game_id)?, &*u.lease)))
        .collect();
    let mut looked = match look_up(&l, &wanted).await {
        Ok(x) => x,
        Err((_, e)) => return Err(e),
    };
    let mut leases = Vec::new();
    for u in b.games {
        names.push(u.row.game_id.clone());
        leases.push(u.lease.clone());
        let Some(id) = crate::wire::worker::ladder_id(&u.row.game_id) else {
            let e = ApiError::new(
                StatusCode::NOT_FOUND,
                format!("no game `{}`", u.row.game_id),
            );
            answers.push(Err(("not_leased", e)));
            continue;
        };
        match prepare(&l, &w, (id, u), &mut looked).await {
            Ok(p) => {
                prepared.push((answers.len(), p));
                answers.push(Ok(false));
            }
            Err(r) => answers.push(Err(r)),
        }
    }
    // The replays, off the runtime's threads; then one commit.
    let l2 = l.clone();
    let replayed = tokio::task::spawn_blocking(move || {
        prepared
            .into_iter()
            .map(|(i, p)| (i, replay(&l2, p)))
            .collect::<Vec<_>>()
    })
    .await
    .map_err(ApiError::internal)?;
    let mut checked = Vec::new();
    let mut stderr = Vec::new();
    for (i, r) in replayed {
        let r = r.and_then(|mut p| {
            stderr.push((i, p.id, std::mem::take(&mut p.stderr)));
            to_commit(p)
        });
        match r {
            Ok(c) => checked.push((i, c)),
            Err(r) => answers[i] = Err(r),
        }
    }
    // By id: the games of one commit may share its millisecond, and the
    // exports list such games by id; counted in the same order, a fit
    // taken between two of them counts a head of the export.
    checked.sort_by_key(|(_, (c, _))| c.game);
    commit_batch(&l, &w, checked, &mut answers).await;
    for (i, id, s) in stderr {
        if answers[i].is_ok() {
            keep_stderr(&l, id, &s).await;
        }
    }
    let refused: Vec<(String, StatusCode)> = answers
        .iter()
        .zip(leases)
        .filter_map(|(r, lease)| r.as_ref().err().map(|(_, e)| (lease, e.status)))
        .collect();
    give_back_refused(&l, &w, &refused).await;
    let games = answers
        .into_iter()
        .zip(names)
        .map(|(r, name)| answer_of(&l, &w, name, r))
        .collect();
    Ok(Json(BatchAnswer { games }))
}

/// A replayed upload as the store commits it, with its row.
fn to_commit(
    p: Prepared,
) -> Result<
    (
        crate::serve::store::uploads::Checked,
        crate::results::GameRow,
    ),
    Refusal,
> {
    let frame = crate::results::records::encode(p.record.as_bytes()).map_err(fail)?;
    let row_json = serde_json::to_string(&p.row).map_err(fail)?;
    let c = crate::serve::store::uploads::Checked {
        game: p.id,
        lease: p.lease,
        row_json,
        record: frame.bytes().to_vec(),
        forfeit: p
            .row
            .offender
            .map(|s| (p.row.reason.clone(), usize::from(s))),
    };
    Ok((c, p.row))
}

/// Commits the batch's games that passed their replay, in one
/// transaction, and sets their answers: held (true) or counted (false),
/// or 410 for a lease that ended meanwhile; 500 for each when the store
/// fails (the worker sends them again).
async fn commit_batch(
    l: &Arc<Ladder>,
    w: &Owner,
    checked: Vec<(
        usize,
        (
            crate::serve::store::uploads::Checked,
            crate::results::GameRow,
        ),
    )>,
    answers: &mut [Result<bool, Refusal>],
) {
    if checked.is_empty() {
        return;
    }
    let games: Vec<_> = checked.iter().map(|(_, (c, _))| c.clone()).collect();
    match l.db.commit_uploads(w.id, unix_now(), &games).await {
        Ok(fresh) => {
            let games = fresh.iter().filter(|f| **f).count();
            l.workers
                .pace
                .note_upload(w.id, games, std::time::Instant::now());
            for ((i, (c, row)), fresh) in checked.into_iter().zip(fresh) {
                answers[i] = match fresh {
                    true => Ok(committed(l, w, &row)),
                    false => Err(ended_while_checked(c.game)),
                };
            }
        }
        Err(e) => {
            let e = e.to_string();
            for (i, _) in checked {
                answers[i] = Err(fail(&e));
            }
        }
    }
}

/// One game's answer in a batch, counted in `/metrics` as the single
/// upload's; a refusal logged with the worker's name.
fn answer_of(l: &Ladder, w: &Owner, name: String, r: Result<bool, Refusal>) -> GameAnswer {
    match r {
        Ok(true) => {
            l.workers.held.fetch_add(1, Ordering::Relaxed);
            l.wake_all();
            GameAnswer {
                game_id: name,
                status: 202,
                held: Some(HELD.into()),
                error: None,
            }
        }
        Ok(false) => {
            l.workers.uploads.fetch_add(1, Ordering::Relaxed);
            GameAnswer {
                game_id: name,
                status: 201,
                held: None,
                error: None,
            }
        }
        Err((kind, e)) => {
            note_refused(l, w, kind, 1);
            tracing::warn!(
                "worker {}: upload of {name} refused ({kind}): {}",
                w.name,
                e.message
            );
            GameAnswer {
                game_id: name,
                status: e.status.as_u16(),
                held: None,
                error: Some(e.message),
            }
        }
    }
}

/// Why a forfeit's upload does not count yet.
const HELD: &str =
    "a forfeit counts once the server has played the game again to it and found it again";

/// The workers' lines of `/metrics`.
pub fn metrics_text(l: &Ladder) -> String {
    let w = &l.workers;
    let mut out = format!(
        "# HELP arena_worker_uploads_total Games uploaded by workers and accepted.\n\
         # TYPE arena_worker_uploads_total counter\narena_worker_uploads_total {}\n\
         # HELP arena_leases_expired_total Workers' leases expired, their games back in the queue.\n\
         # TYPE arena_leases_expired_total counter\narena_leases_expired_total {}\n\
         # HELP arena_worker_uploads_refused_total Workers' uploads refused, by reason.\n\
         # TYPE arena_worker_uploads_refused_total counter\n",
        w.uploads.load(Ordering::Relaxed),
        l.sched.leases_expired.load(Ordering::Relaxed)
    );
    for (kind, n) in w.refused.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        out.push_str(&format!(
            "arena_worker_uploads_refused_total{{reason=\"{kind}\"}} {n}\n"
        ));
    }
    out
}
