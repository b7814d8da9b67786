//! The game record: one game as JSON lines (`results/NAME/games/GAME_ID.jsonl`
//! in leagues, wherever `arena play` is told otherwise).
//!
//! Owns the record format only; it does not decide where records go.
//!
//! Lines, each a JSON object with a `type`:
//! 1. `game`: `game_id`, `variant`, `players`, `options`, `max_plies`,
//!    `names`, `time` (as in the protocol's game start), `opening`, `notes`
//!    (what happened before the game, such as a bot restarted for output
//!    it wrote between games; usually empty).
//! 2. `decision`, one per decision in order: `seat`, `ply`, `option`,
//!    `forced`, `opening`, `elapsed_us`.
//! 3. `end`: `scores`, `reason`, `offender`, `detail`, `plies`,
//!    `duration_ms`, `state` (the final state).

use super::{GameReport, GameSpec};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

#[derive(Serialize)]
struct Header<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    game_id: &'a str,
    variant: &'static str,
    players: usize,
    options: &'a std::collections::BTreeMap<String, String>,
    max_plies: u32,
    names: &'a [String],
    time: crate::protocol::TimeMsg,
    opening: &'a [String],
    /// Notes on what happened before the game (empty: nothing).
    notes: &'a [String],
}

#[derive(Serialize)]
struct Decision<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    d: &'a super::DecisionRecord,
}

#[derive(Serialize)]
struct Footer<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    scores: &'a [f64],
    reason: &'static str,
    offender: Option<usize>,
    detail: Option<&'a str>,
    plies: u32,
    duration_ms: f64,
    state: &'a serde_json::Value,
}

/// Writes the record of `report` (played from `spec`) to `out`.
pub fn write_record_to<W: Write>(
    out: &mut W,
    spec: &GameSpec,
    report: &GameReport,
) -> std::io::Result<()> {
    let header = Header {
        kind: "game",
        game_id: &report.game_id,
        variant: report.variant.name(),
        players: report.players,
        options: &spec.settings.options,
        max_plies: spec.settings.max_plies,
        names: &report.names,
        time: spec.time.msg(),
        opening: &spec.opening,
        notes: &spec.notes,
    };
    serde_json::to_writer(&mut *out, &header)?;
    out.write_all(b"\n")?;
    for d in &report.decisions {
        serde_json::to_writer(
            &mut *out,
            &Decision {
                kind: "decision",
                d,
            },
        )?;
        out.write_all(b"\n")?;
    }
    let footer = Footer {
        kind: "end",
        scores: &report.scores,
        reason: report.reason.name(),
        offender: report.offender,
        detail: report.detail.as_deref(),
        plies: report.plies,
        duration_ms: report.duration.as_secs_f64() * 1000.0,
        state: &report.final_state,
    };
    serde_json::to_writer(&mut *out, &footer)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Writes the record to `path` (creating its directory), replacing any
/// earlier one. Not atomic on its own, and need not be: a league commits a
/// game's row to games.csv only after its record is written, so a record
/// whose game has a row is whole, and a game without a row is played again
/// and its record rewritten. (A temporary file and a rename per game cost
/// the league a directory lock per game.)
pub fn write_record(path: &Path, spec: &GameSpec, report: &GameReport) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    write_record_to(&mut f, spec, report)?;
    f.flush()
}
