//! The ladder's clients, run on other machines than the server: `arena
//! worker` ([`worker`]: claims games, plays them through the league's own
//! pipeline, uploads them) and `arena submit` ([`submit`]: an owner's
//! upload, followed to its verdict). What they share with the server sits
//! below both, in [`crate::wire`].

pub mod submit;
pub mod worker;

/// The `error` of a server's JSON error body (`{"error": "..."}`), or the
/// body itself, trimmed.
pub fn error_of(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_string())
}
