//! `league.json`: what ties a results folder to one schedule, read in one
//! place for every command.

use super::layout::Layout;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What `league.json` records about the schedule the folder belongs to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LeagueMeta {
    pub name: String,
    /// A hash of the schedule (ids, seats, variants, settings, seed).
    pub fingerprint: String,
    pub games: usize,
    #[serde(default)]
    pub shard: Option<String>,
    /// The league's bots, in order (absent in folders of older versions).
    #[serde(default)]
    pub bots: Vec<String>,
    /// Whether the bots ran in their sandbox (`false`: `sandbox = "off"`).
    #[serde(default)]
    pub sandbox: Option<bool>,
    /// The settings the games were played under, as the league started
    /// (absent in folders of older versions).
    #[serde(default)]
    pub played_under: Option<PlayedUnder>,
    /// The whole league's fingerprint, the same in each of its shards: the
    /// tournament's settings, its bots and variants, and the `arena`
    /// version. A shard whose siblings carry another one is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<String>,
}

/// What a league's games were played under, beyond the schedule: a resume
/// under another time control is refused, a changed bot command is warned
/// about.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PlayedUnder {
    /// `decision_ms`, `base_ms`, `increment_ms`, `startup_ms`,
    /// `watchdog_ms`.
    pub time_control: std::collections::BTreeMap<String, u64>,
    /// Each bot's command line, by name.
    pub commands: std::collections::BTreeMap<String, Vec<String>>,
    /// The `arena` version that started the league.
    pub arena_version: String,
    /// Each bot's program files (what its command names, after its build)
    /// with their SHA-256, by bot name (absent in folders of older
    /// versions).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub programs: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
}

/// The `league.json` of the folder `dir`, if it has a readable one.
pub fn read_meta(dir: &Path) -> Option<LeagueMeta> {
    let text = std::fs::read_to_string(Layout::new(dir).league_json()).ok()?;
    serde_json::from_str(&text).ok()
}
