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

/// The game id of ladder game `id` in rows and records.
pub fn game_id(id: i64) -> String {
    format!("game-{id}")
}

/// The ladder game id of a row's `game_id`.
pub fn ladder_id(game_id: &str) -> Option<i64> {
    game_id.strip_prefix("game-")?.parse().ok()
}

/// Ladder game `id` as the runner takes it, on the server or a worker:
/// its seed is drawn from the ladder's seed and the game's id.
pub fn scheduled(ladder_seed: u64, id: i64, variant: usize, seats: Vec<usize>) -> ScheduledGame {
    let game_id = game_id(id);
    ScheduledGame {
        index: id as usize,
        group: game_id.clone(),
        group_index: 0,
        round: 0,
        variant,
        seats,
        seed: group_seed(ladder_seed, &game_id),
        variant_group: id as usize,
        game_id,
    }
}
