//! The worker protocol's words (docs/ladder.md "Workers"), shared by the
//! server (`arena serve`) and its workers (`arena worker`): what a worker
//! says of itself, how a ladder game is named, and how it is played (its
//! seed drawn from the ladder's seed and the game's id).

use crate::league::schedule::{group_seed, ScheduledGame};

/// What a worker says of itself when it registers.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Registration {
    pub host: String,
    pub cores: i64,
    pub jobs: i64,
    pub arena_version: String,
    /// [`crate::engine::RULES_VERSION`] of the worker's arena.
    pub rules_version: i64,
    /// The record format it writes ([`crate::referee::record::FORMAT`]).
    pub record_format: u32,
    pub sandbox: Vec<String>,
    pub variants: Vec<String>,
}

/// What a server plays, in its answer to a registration.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Accepts {
    pub arena_version: String,
    pub record_format: u32,
    pub rules_version: i64,
}

/// The server's answer to a registration: the ladder file, its openings
/// book if it has one, the lease time, the ladder's variants the worker
/// plays, and the worker's name. (The fields of every answer here are in
/// alphabetical order, the order the server has always sent them in.)
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Registered {
    pub accepts: Accepts,
    /// The text of the ladder's `openings_file`: a worker draws each
    /// game's opening from it as the server does.
    pub book: Option<String>,
    /// The ladder file's text.
    pub ladder: String,
    pub lease_seconds: i64,
    /// The worker protocol the server speaks ([`PROTOCOL`]); absent (0)
    /// from a server older than batched uploads.
    #[serde(default)]
    pub protocol: u32,
    /// The server's clock when it answered (RFC 3339, UTC): a worker
    /// whose own clock is off stamps its games' `started_at` on the
    /// server's (the server refuses a start in its future). Absent from
    /// older servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_time: Option<String>,
    /// The ladder's variant keys this worker plays.
    pub variants: Vec<String>,
    pub worker: String,
}

/// The worker protocol of this arena: 2 adds batched uploads (`POST
/// /api/worker/games`, [`Batch`]) and claims sized by the server. A server
/// of protocol 2 still takes the single uploads of protocol 1.
pub const PROTOCOL: u32 = 2;

/// The header in which a worker names itself on every request: the id
/// its cache folder keeps (`CACHE/instance`), the same across restarts
/// on that folder. A token is one worker's: the server refuses a second
/// process that registers with a token another, still heard from, holds
/// (docs/ladder.md, "Workers"). A registration, claim or heartbeat
/// without it is refused (400).
pub const INSTANCE_HEADER: &str = "arena-worker-instance";

/// Whether `id` can be an instance id: 1 to 64 ASCII letters, digits or
/// `-`.
pub fn is_instance(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The most leases one `POST /api/worker/heartbeat` renews or one
/// `POST /api/worker/release` gives back: a worker holding more sends
/// several.
pub const LEASES_MOST: usize = 1024;

/// The most games one `POST /api/worker/games` uploads.
pub const BATCH_MOST: usize = 1024;

/// A worker's claim: up to `max` games.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimRequest {
    pub max: usize,
}

/// The server's answer to a claim: the games leased, and for how long.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Granted {
    pub games: Vec<LeasedGame>,
    pub lease_seconds: i64,
}

/// One game leased to a worker.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LeasedGame {
    /// Its [`game_id`] in rows and records.
    pub game_id: String,
    /// Its ladder id.
    pub id: i64,
    pub lease: String,
    pub seats: Vec<LeasedSeat>,
    /// The ladder file's variant index.
    pub variant: usize,
    /// The game whose seed, opening and group it plays, when not its own
    /// (a test's pair, docs/ladder.md "Tests between versions").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening_of: Option<i64>,
}

/// A seat of a leased game: the version's player name and the SHA-256 of
/// its bundle (`GET /api/worker/bundles/SHA256`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LeasedSeat {
    pub player: String,
    pub sha256: String,
}

/// Leases named by a worker: renewed by a heartbeat, or given back.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Leases {
    pub leases: Vec<String>,
}

/// The answer to a heartbeat: the leases renewed, and those lost (expired
/// or not the worker's).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Renewed {
    pub lost: Vec<String>,
    pub renewed: Vec<String>,
}

/// The answer to a release: how many games went back to the queue.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Released {
    pub returned: usize,
}

/// An upload of a finished game: the lease it was played under, its
/// record (the JSON lines) and its row; and what its seats wrote on stderr
/// (each seat that wrote something, at most the ladder's `stderr_kb`),
/// left out when none did (as workers before issue 48 send it).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameUpload {
    pub lease: String,
    pub record: String,
    pub row: crate::results::GameRow,
    /// One entry a seat (at most [`crate::results::stderr::SEATS_MOST`]).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::bounded::at_most::<_, _, { crate::results::stderr::SEATS_MOST }>"
    )]
    pub stderr: Vec<crate::results::stderr::SeatStderr>,
}

/// The answer to an accepted game upload.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Uploaded {
    pub accepted: bool,
    pub game_id: String,
    /// A forfeit (answered 202): why it does not count yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
}

/// Finished games uploaded at once (`POST /api/worker/games`), each
/// named by its row's `game_id`, each checked and committed on its own.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Batch {
    /// At most [`BATCH_MOST`], refused as it is read past them.
    #[serde(deserialize_with = "crate::bounded::at_most::<_, _, BATCH_MOST>")]
    pub games: Vec<GameUpload>,
}

/// The answer to a [`Batch`]: one [`GameAnswer`] per game, in order.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct BatchAnswer {
    pub games: Vec<GameAnswer>,
}

/// What became of one game of a batch: `status` is the single upload's
/// (201 counted, 202 held as a forfeit, 403 not leased to this worker,
/// 404 no such game, 409 recorded already, 410 lease expired, 422 refused
/// by the replay, 500 not recorded: send it again).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GameAnswer {
    pub game_id: String,
    pub status: u16,
    /// A forfeit (202): why it does not count yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// A refusal: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The game id of ladder game `id` in rows and records.
pub fn game_id(id: i64) -> String {
    format!("game-{id}")
}

/// Games' ids as the logs list them: `game-1, game-2`.
pub fn game_ids(ids: &[i64]) -> String {
    ids.iter()
        .map(|&g| game_id(g))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The ladder game id of a row's `game_id`.
pub fn ladder_id(game_id: &str) -> Option<i64> {
    game_id.strip_prefix("game-")?.parse().ok()
}

/// Ladder game `id` as the runner takes it, on the server or a worker:
/// its seed is drawn from the ladder's seed and the game's id.
pub fn scheduled(ladder_seed: u64, id: i64, variant: usize, seats: Vec<usize>) -> ScheduledGame {
    scheduled_as(ladder_seed, id, id, variant, seats)
}

/// Ladder game `id` playing the seed, opening and group of game
/// `opening` (a test's pair: its second game, seats swapped, plays its
/// first game's; [`scheduled`] when it is `id`).
pub fn scheduled_as(
    ladder_seed: u64,
    id: i64,
    opening: i64,
    variant: usize,
    seats: Vec<usize>,
) -> ScheduledGame {
    let group = game_id(opening);
    let group_index = usize::from(opening != id);
    ScheduledGame {
        index: id as usize,
        game_id: game_id(id),
        group_index,
        round: 0,
        variant,
        seats,
        seed: group_seed(ladder_seed, &group),
        variant_group: opening as usize,
        group,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test's pair: the second game plays the first's seed, book line
    /// and group, under its own id; a game on its own plays its own.
    #[test]
    fn a_pairs_second_game_plays_the_firsts_opening() {
        let first = scheduled(7, 40, 0, vec![0, 1]);
        let second = scheduled_as(7, 41, 40, 0, vec![1, 0]);
        assert_eq!(second.game_id, "game-41");
        assert_eq!(
            (second.seed, second.variant_group, second.group.as_str()),
            (first.seed, first.variant_group, "game-40")
        );
        assert_eq!((first.group_index, second.group_index), (0, 1));
        let alone = scheduled(7, 41, 0, vec![1, 0]);
        assert_ne!(alone.seed, first.seed);
        assert_eq!(alone.group, "game-41");
    }
}
