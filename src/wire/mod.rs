//! What the ladder's server and its clients (`arena worker`, `arena
//! submit`) share, below both: the archive of an uploaded bot folder
//! ([`archive`]) and the worker protocol's words ([`worker`]).
//!
//! Rooms: `archive/` (a bot folder packed and unpacked as tar.gz, with
//! hard limits: `mod.rs` packs and unpacks, `headers.rs` reads the headers
//! that describe an entry with their size bounded first, `limits.rs` holds
//! the limits and the refusals, `tests.rs`), `worker.rs` (a worker's
//! registration, ladder game ids, a ladder game as the runner plays it).

pub mod archive;
pub mod worker;

/// Lower-case hex SHA-256 of `bytes`.
pub fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
