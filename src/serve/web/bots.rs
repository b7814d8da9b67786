//! `/api/bots`: the bots and their versions; an owner's upload, retirement
//! and change of a bot; a version's log.

use super::auth::{check_owner, owner_of, writable};
use super::error::{json_body, ApiError, ApiResult, Shared};
use super::pages;
use crate::serve::bus::FeedEvent;
use crate::serve::intake::{self, inbox, Upload};
use crate::serve::ladder::Ladder;
use crate::serve::store::{Reinstated, Retirement, VersionStatus, WITHDRAWN, WITHDRAWN_UNENTERED};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/api/bots", post(upload).get(bots))
        .route("/api/bots/{name}", get(bot).delete(retire).patch(change))
        .route("/api/bots/{name}/log", get(bot_log))
}

/// `POST /api/bots`: a bot folder as tar.gz, from its owner. The token
/// is checked before the body is read, and a body announced over the
/// limit is refused from the head alone.
async fn upload(
    State(l): Shared,
    req: axum::extract::Request,
) -> ApiResult<(StatusCode, Json<Submitted>)> {
    writable(&l)?;
    let owner = owner_of(&l, req.headers()).await?;
    let test = super::version_tests::upload_test(&l, req.uri())?;
    let limit = (l.settings.upload_mb << 20) as usize;
    let too_large = || {
        l.metrics.uploads_refused.fetch_add(1, Ordering::Relaxed);
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the upload is over this ladder's limit of {} MiB: leave build output and data out of the folder",
                l.settings.upload_mb
            ),
        )
    };
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    // The owner's hourly count and a slot first, then the body, to a
    // file as it comes.
    intake::check_rate(&l.intake, &owner)
        .await
        .inspect_err(|_| {
            l.metrics.uploads_refused.fetch_add(1, Ordering::Relaxed);
        })?;
    let _slot = l.gates.bots.enter(owner.id)?;
    let spooled = inbox::spool(req.into_body(), &l.intake.incoming_dir(), limit as u64)
        .await
        .map_err(|e| match e {
            inbox::SpoolError::TooLarge => too_large(),
            e => {
                let refusal = ApiError::unarrived("the upload's body", e, l.settings.upload_mb);
                if refusal.status != StatusCode::INTERNAL_SERVER_ERROR {
                    l.metrics.uploads_refused.fetch_add(1, Ordering::Relaxed);
                }
                refusal
            }
        })?;
    let r = intake::accept_tested(&l.intake, &owner, Upload { file: spooled }, test.as_ref()).await;
    if r.is_err() {
        l.metrics.uploads_refused.fetch_add(1, Ordering::Relaxed);
    }
    let v = r?;
    l.metrics.uploads.fetch_add(1, Ordering::Relaxed);
    Ok((
        StatusCode::ACCEPTED,
        Json(Submitted {
            player: v.player(),
            status: v.status,
            url: format!("/api/bots/{}", v.bot),
            version: v.number,
            bot: v.bot,
        }),
    ))
}

/// The answer to an upload (202): the version made, and where to follow
/// it.
#[derive(serde::Serialize)]
struct Submitted {
    bot: String,
    player: String,
    status: VersionStatus,
    url: String,
    version: i64,
}

/// The answer to a change of a bot, `DELETE` or `PATCH` (docs/ladder.md,
/// "The API"): the bot's switch, whether this request changed anything,
/// and the numbers of the versions it withdrew: `withdrawn` entered
/// ones, `cancelled` ones on their way (never entered).
#[derive(serde::Serialize)]
struct Changed {
    active: bool,
    bot: String,
    cancelled: Vec<i64>,
    changed: bool,
    withdrawn: Vec<i64>,
}

impl Changed {
    /// The answer to a retirement that did `r`.
    fn retired(bot: String, r: Retirement) -> Changed {
        Changed {
            active: false,
            bot,
            changed: r.changed(),
            cancelled: r.cancelled,
            withdrawn: r.withdrawn,
        }
    }
}

/// `DELETE /api/bots/NAME`: its owner retires it, and the versions on
/// their way with it ([`Db::retire`](crate::serve::store::Db::retire)).
async fn retire(
    State(l): Shared,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> ApiResult<Json<Changed>> {
    writable(&l)?;
    let owner = owner_of(&l, &headers).await?;
    check_owner(&l, &owner, &name, "retire").await?;
    let r = l.db.retire(&name).await.map_err(ApiError::internal)?;
    announce_retired(&l, &name, &r);
    Ok(Json(Changed::retired(name, r)))
}

/// Tells the scheduler and the feed what retiring bot `name` did: each
/// version withdrawn is `retired`.
fn announce_retired(l: &Ladder, name: &str, r: &Retirement) {
    if !r.withdrawn.is_empty() {
        l.roster_changed_now();
    }
    for n in r.withdrawn.iter().chain(&r.cancelled) {
        l.announce(FeedEvent::Bot {
            bot: name,
            version: Some(*n),
            status: VersionStatus::Retired,
            detail: Some(match r.cancelled.contains(n) {
                true => WITHDRAWN_UNENTERED,
                false => WITHDRAWN,
            }),
        });
    }
}

/// `PATCH /api/bots/NAME` with `{"active": false}` (retire it) or
/// `{"active": true}` (its latest version back in, after its owner
/// retired it): the owner's switch.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BotChange {
    active: bool,
}

async fn change(
    State(l): Shared,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Changed>> {
    writable(&l)?;
    let owner = owner_of(&l, &headers).await?;
    let change: BotChange = json_body(
        &body,
        "a change of the bot",
        "send {\"active\": false} to retire the bot, or {\"active\": true} to bring its latest version back",
    )?;
    check_owner(&l, &owner, &name, "retire or bring back").await?;
    if !change.active {
        let r = l.db.retire(&name).await.map_err(ApiError::internal)?;
        announce_retired(&l, &name, &r);
        return Ok(Json(Changed::retired(name, r)));
    }
    let limit = l.settings.bots_per_owner as i64;
    let changed = match l.db.reinstate(&name, limit).await.map_err(ApiError::internal)? {
        Reinstated::Back => true,
        Reinstated::NotRetired => false,
        Reinstated::AtLimit => {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "you have {limit} bots in this ladder, its limit: retire one (DELETE /api/bots/NAME) before bringing `{name}` back"
                ),
            ))
        }
    };
    if changed {
        l.roster_changed_now();
        l.announce(FeedEvent::Bot {
            bot: &name,
            version: None,
            status: VersionStatus::Entered,
            detail: None,
        });
    }
    Ok(Json(Changed {
        active: true,
        bot: name,
        cancelled: Vec::new(),
        changed,
        withdrawn: Vec::new(),
    }))
}

/// `GET /api/bots`: every bot, its latest version and its standing.
async fn bots(State(l): Shared) -> ApiResult<Json<pages::BotsBody>> {
    Ok(Json(
        pages::bots_json(&l).await.map_err(ApiError::internal)?,
    ))
}

/// `GET /api/bots/NAME`: the bot's versions (with their check-bot
/// reports), ratings, results by opponent and recent games.
async fn bot(State(l): Shared, Path(name): Path<String>) -> ApiResult<Json<pages::BotBody>> {
    match pages::bot_json(&l, &name)
        .await
        .map_err(ApiError::internal)?
    {
        Some(v) => Ok(Json(v)),
        None => Err(ApiError::not_found(match name.rsplit_once('@') {
            Some((bot, _)) => format!(
                "no bot named `{name}`: give the bot's name without `@N` (/api/bots/{bot}: its versions are in `versions`; a version's games: /api/games?bot={name})"
            ),
            None => format!("no bot named `{name}`"),
        })),
    }
}

/// `GET /api/bots/NAME/log`: the stderr of the bot's latest version, to
/// its owner only (the last 64 KiB).
async fn bot_log(
    State(l): Shared,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> ApiResult<impl IntoResponse> {
    let owner = owner_of(&l, &headers).await?;
    check_owner(&l, &owner, &name, "read the log of").await?;
    let versions = l.db.versions_of(&name).await.map_err(ApiError::internal)?;
    let Some(v) = versions.last() else {
        return Err(ApiError::not_found(format!("bot `{name}` has no version")));
    };
    let text = log_tail(&l, &v.player(), 64 << 10);
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text))
}

/// The end (`most` bytes at most per file) of each stderr log of version
/// `player`: its check's, then each game worker's, each under its name.
fn log_tail(l: &Ladder, player: &str, most: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let layout = crate::league::folder::Layout::new(l.t.output.clone());
    let prefix = crate::results::file_safe(player);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(layout.logs())
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.strip_prefix(&prefix))
                        .is_some_and(|rest| rest.starts_with("-w") || rest == "-check.log")
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::new();
    for f in files {
        let Ok(mut file) = std::fs::File::open(&f) else {
            continue;
        };
        let len = file.metadata().map_or(0, |m| m.len());
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(most)));
        let mut buf = Vec::new();
        let _ = file.take(most).read_to_end(&mut buf);
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push_str(&format!(
            "==> {name} <==\n{}\n",
            String::from_utf8_lossy(&buf)
        ));
    }
    out
}
