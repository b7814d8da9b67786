//! A refusal as the web layer sends it: a status and one line of JSON
//! (`{"error": "..."}`) that says what to do. A failure of the server's
//! own is logged with its cause and answered with a fixed message: the
//! store's errors never reach a client.

use crate::serve::intake::{self, inbox};
use crate::serve::ladder::Ladder;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// A refusal: a status and what to do, sent as one line of JSON.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds to wait before trying again (`Retry-After`), on a 503 of a
    /// full server.
    pub retry_after: Option<u32>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
    /// A failure of the server's own (the store, a task): its cause goes
    /// to the log, the client gets [`intake::INTERNAL`] and nothing of the cause.
    pub(super) fn internal(e: impl std::fmt::Display) -> ApiError {
        tracing::error!("{e}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, intake::INTERNAL)
    }
    pub(super) fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, what)
    }
}

impl From<intake::Refusal> for ApiError {
    fn from(r: intake::Refusal) -> ApiError {
        ApiError::new(r.status, r.message)
    }
}

impl From<inbox::Busy> for ApiError {
    fn from(b: inbox::Busy) -> ApiError {
        ApiError {
            retry_after: Some(inbox::RETRY_SECONDS),
            ..ApiError::new(StatusCode::SERVICE_UNAVAILABLE, b.message)
        }
    }
}

/// An error's body: `{"error": "..."}`.
#[derive(serde::Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_string(&ErrorBody {
            error: &self.message,
        })
        .unwrap_or_default()
            + "\n";
        let mut r = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(s));
        }
        r
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// What every handler is given: the service.
pub type Shared = State<Arc<Ladder>>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The store's own words (a query, a path, a constraint's name) stay
    /// in the log.
    #[test]
    fn an_internal_failure_tells_the_client_nothing_of_its_cause() {
        let e = ApiError::internal("error returned from database: no such table: owners_secret");
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(e.message, intake::INTERNAL);
        assert!(!e.message.contains("owners_secret"));
    }
}
