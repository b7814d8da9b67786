//! Who a request comes from: the bearer token of an owner or a worker,
//! checked against the store; and the checks an owner's change passes.

use super::error::{ApiError, ApiResult};
use crate::serve::ladder::Ladder;
use crate::serve::store::{Owner, Role};
use axum::http::{header, HeaderMap, StatusCode};

/// The owner a request's `Authorization: Bearer TOKEN` names, refused
/// (403) for a worker's token: every owner's request (an upload, a
/// change of a bot, a bot's stderr, an analysis) is refused as such, not
/// as one about a bot that is not the worker's.
pub async fn owner_of(ladder: &Ladder, headers: &HeaderMap) -> ApiResult<Owner> {
    let o = bearer_owner(ladder, headers).await?;
    if o.role != Role::Owner {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "this token is not an owner's: it is a worker's, and a worker token cannot make an owner's requests (upload, retire or change bots, read a bot's stderr, ask for an analysis); use the token the organiser gave you with --add-user",
        ));
    }
    Ok(o)
}

/// Whoever a request's `Authorization: Bearer TOKEN` names (an owner or a
/// worker, by `role`); 401 without a valid token.
pub async fn bearer_owner(ladder: &Ladder, headers: &HeaderMap) -> ApiResult<Owner> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "no token: send `Authorization: Bearer TOKEN` (the organiser gives you one with `arena serve LADDER.toml --add-user NAME`)",
        ));
    };
    let token = value
        .to_str()
        .ok()
        // The scheme's name is case-insensitive (RFC 9110, 11.1).
        .and_then(|v| {
            v.split_once(' ')
                .filter(|(s, _)| s.eq_ignore_ascii_case("bearer"))
        })
        .map(|(_, t)| t)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "the Authorization header is not `Bearer TOKEN`",
            )
        })?;
    match ladder
        .db
        .owner_by_token(&crate::serve::store::token_hash(token))
        .await
        .map_err(ApiError::internal)?
    {
        Some(o) => Ok(o),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unknown or revoked token: ask the organiser for a new one",
        )),
    }
}

/// Refuses a change on a server that shows pages only (`--pages-only`):
/// changes go to the ladder's own server.
pub(super) fn writable(l: &Ladder) -> ApiResult<()> {
    match l.pages_only {
        false => Ok(()),
        true => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "this server shows the ladder's pages only (--pages-only): upload and change bots on the ladder's own server",
        )),
    }
}

/// Refuses unless `owner` owns bot `name` (404 when there is no such bot);
/// `what`: what only its owner may do to it ("retire", "read the log of").
pub(super) async fn check_owner(
    l: &Ladder,
    owner: &Owner,
    name: &str,
    what: &str,
) -> ApiResult<()> {
    match l.db.bot_owner(name).await.map_err(ApiError::internal)? {
        None => Err(ApiError::not_found(format!("no bot named `{name}`"))),
        Some((id, _)) if id == owner.id => Ok(()),
        Some((_, other)) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("bot `{name}` belongs to `{other}`: only its owner may {what} it"),
        )),
    }
}
