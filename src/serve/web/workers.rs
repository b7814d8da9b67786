//! The workers' side of the service (issue 31, docs/ladder.md "Workers"):
//! worker tokens, and the HTTP endpoints `arena worker` speaks, merged
//! into the service's router ([`routes`]): register, claim, heartbeat,
//! bundles of bot versions by content hash, and uploads of finished
//! games, each replayed through the engine before it counts
//! ([`super::verify`]). Every refusal is a status and one line of JSON;
//! refused uploads are logged with the worker's name and counted in
//! `/metrics` by kind.

use super::auth::bearer_owner;
use super::error::{ApiError, ApiResult, Shared};
use crate::serve::intake::verify::{check_upload, Expected};
use crate::serve::ladder::Ladder;
use crate::serve::store::{unix_now, GameState, LeaseState, Owner, Role};
use crate::wire::worker::{
    game_id, Accepts, ClaimRequest, GameUpload, Granted, LeasedGame, LeasedSeat, Leases,
    Registered, Registration, Released, Renewed, Uploaded,
};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::atomic::Ordering;
use std::sync::Arc;

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
}

/// The worker a request's token names: 403 for an owner's token.
async fn worker_of(l: &Ladder, headers: &HeaderMap) -> ApiResult<Owner> {
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

fn bad_json(what: &str, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        format!("the body is not the JSON of {what} ({e}): see docs/ladder.md, \"Workers\""),
    )
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
    let r: Registration =
        serde_json::from_slice(&body).map_err(|e| bad_json("a registration", e))?;
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
    l.db.register_worker(w.id, &r)
        .await
        .map_err(ApiError::internal)?;
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
        variants: playable,
        worker: w.name,
    }))
}

/// Refuses (400) a registration whose numbers are out of range: `cores`
/// from 1 to 65,536, `jobs` from 1 to its `cores` and to the ladder's
/// `worker_jobs_max`; the message says which and what to run.
fn check_numbers(l: &Ladder, r: &Registration) -> ApiResult<()> {
    if !(1..=65_536).contains(&r.cores) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("`cores` {}: a worker has from 1 to 65536 cores", r.cores),
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

/// `POST /api/worker/claim` `{"max": N}`: up to N games from the queue,
/// each under a new lease: its id, game, variant, and each seat's player
/// and bundle hash. 409 before the worker registered.
async fn claim(
    State(l): Shared,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Granted>> {
    let w = worker_of(&l, &headers).await?;
    let c: ClaimRequest = serde_json::from_slice(&body).map_err(|e| bad_json("a claim", e))?;
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
    l.db.renew_leases(w.id, &[], unix_now(), 0)
        .await
        .map_err(ApiError::internal)?;
    // At most its `-j` games under lease at once, at most 64 a claim.
    let (jobs, active) =
        l.db.worker_load(w.id, unix_now())
            .await
            .map_err(ApiError::internal)?
            .unwrap_or((0, 0));
    let jobs = jobs.clamp(0, i64::from(l.settings.worker_jobs_max));
    let room = usize::try_from(jobs - active).unwrap_or(0);
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
            c.max.min(64).min(room),
            &|v| can.get(v).copied().unwrap_or(false),
        )
        .await
        .map_err(ApiError::internal)?;
    let mut games = Vec::new();
    for c in claimed {
        let mut seats = Vec::new();
        for id in &c.ticket.seats {
            let v =
                l.db.version(*id)
                    .await
                    .map_err(ApiError::internal)?
                    .ok_or_else(|| {
                        ApiError::internal(format!("version {id} of game {} is gone", c.ticket.id))
                    })?;
            seats.push(LeasedSeat {
                player: v.player(),
                sha256: v.sha256.clone(),
            });
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

/// `POST /api/worker/heartbeat` `{"leases": [...]}`: renews the worker's
/// active leases among them; the answer lists those renewed and those
/// lost (expired, done, or never its own).
async fn heartbeat(
    State(l): Shared,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Renewed>> {
    let w = worker_of(&l, &headers).await?;
    let h: Leases = serde_json::from_slice(&body).map_err(|e| bad_json("a heartbeat", e))?;
    let renewed =
        l.db.renew_leases(w.id, &h.leases, unix_now(), l.workers.lease_seconds)
            .await
            .map_err(ApiError::internal)?;
    let lost = h
        .leases
        .into_iter()
        .filter(|x| !renewed.contains(x))
        .collect();
    Ok(Json(Renewed { lost, renewed }))
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
    let b: Leases = serde_json::from_slice(&body).map_err(|e| bad_json("a release", e))?;
    if b.leases.len() > 1024 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "at most 1024 leases in one release",
        ));
    }
    let games =
        l.db.return_leases(w.id, &b.leases)
            .await
            .map_err(ApiError::internal)?;
    if !games.is_empty() {
        l.sched.forget_queue();
        tracing::info!(
            "worker {} returned {}: back in the queue",
            w.name,
            games
                .iter()
                .map(|g| game_id(*g))
                .collect::<Vec<_>>()
                .join(", ")
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
    let _slot = l.gates.games.enter()?;
    let body = axum::body::to_bytes(req.into_body(), UPLOAD_LIMIT)
        .await
        .map_err(|e| bad_json("an upload", e))?;
    let u: GameUpload = serde_json::from_slice(&body).map_err(|e| bad_json("an upload", e))?;
    let r = accept(&l, &w, id, u).await;
    if let Err((kind, e)) = &r {
        *l.workers
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(kind)
            .or_default() += 1;
        *l.workers
            .refused_by
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(w.name.clone())
            .or_default() += 1;
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
                held: Some(
                    "a forfeit counts once the server has played the game again to it and found it again"
                        .into(),
                ),
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
    let Some((state, ticket)) = l.db.game_ticket(id).await.map_err(fail)? else {
        return Err((
            "not_leased",
            ApiError::new(StatusCode::NOT_FOUND, format!("no game {}", game_id(id))),
        ));
    };
    let lease = l.db.lease(&u.lease).await.map_err(fail)?;
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
                    "your lease of {} expired (no heartbeat for {} s): the game went back to the queue; discard it",
                    game_id(id),
                    l.workers.lease_seconds
                ),
            ),
        ));
    }
    let mut players = Vec::new();
    for v in &ticket.seats {
        let v = l.db.version(*v).await.map_err(fail)?;
        players.push(v.map(|v| v.player()).unwrap_or_default());
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
    let stderr = u.stderr;
    if let Err(why) = check_stderr(l, &stderr, expected.players.len()) {
        return Err((
            "stderr",
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, why),
        ));
    }
    let l2 = l.clone();
    let (mut row, record) = (u.row, u.record);
    // Where a record lies is the server's to say: the store keeps it.
    row.record_file.clear();
    (row.record_offset, row.record_length) = (None, None);
    let checked = tokio::task::spawn_blocking(move || {
        let r = check_upload(&l2.t, &expected, &row, &record);
        r.map(|()| (row, record))
    })
    .await
    .map_err(fail)?;
    let (row, record) = checked.map_err(|e| {
        (
            e.kind,
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("refused by the replay: {e}"),
            ),
        )
    })?;
    let held = commit(l, w, (id, &lease.id), &row, &record).await?;
    // The game counts (or is held) already: stderr that cannot be kept is
    // said in the log, not charged to the worker.
    if let Err(e) = l.db.keep_stderr(id, &stderr).await {
        tracing::error!("the stderr of {} cannot be kept: {e}", game_id(id));
    }
    Ok(held)
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

/// Commits game `id` checked under `lease`: counted at once, or, when it
/// ends in a forfeit, held for its re-check (true).
async fn commit(
    l: &Arc<Ladder>,
    w: &Owner,
    (id, lease): (i64, &str),
    row: &crate::results::GameRow,
    record: &str,
) -> Result<bool, Refusal> {
    let frame = crate::results::records::encode(record.as_bytes()).map_err(fail)?;
    let json = serde_json::to_string(row).map_err(fail)?;
    // A forfeit depends on the bots, which the replay cannot see: held
    // until the server has played it again (crate::serve::recheck).
    let held = row.offender.map(usize::from);
    let fresh = match held {
        Some(seat) => {
            l.db.hold_forfeit(
                id,
                lease,
                w.id,
                unix_now(),
                (&row.reason, seat),
                &json,
                frame.bytes(),
            )
            .await
            .map_err(fail)?
        }
        None => {
            l.db.finish_leased(id, lease, w.id, unix_now(), &json, frame.bytes())
                .await
                .map_err(fail)?
        }
    };
    if !fresh {
        return Err((
            "expired",
            ApiError::new(
                StatusCode::GONE,
                format!("your lease of {} ended while it was checked", game_id(id)),
            ),
        ));
    }
    if held.is_some() {
        l.sched.forget_queue();
        return Ok(true);
    }
    l.sched.note_finished(row);
    l.metrics.games_played.fetch_add(1, Ordering::Relaxed);
    l.announce_game(row);
    l.finished_now(row);
    Ok(false)
}

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
