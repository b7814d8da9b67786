//! The game record: one game as JSON lines (appended to a record log of
//! `results/NAME/games/` in leagues, see `league::folder::records`; a file of its
//! own wherever `arena play` is told).
//!
//! Owns the record format only; it does not decide where records go.
//!
//! Lines, each a JSON object with a `type`:
//! 1. `game`: `game_id`, `variant`, `players`, `options`, `max_plies`,
//!    `names`, `time` (as in the protocol's game start), `opening`, `seed`
//!    (the bots' seed, a decimal string as in `game_start`), `notes`
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
    /// The bots' seed (decimal string, as in `game_start`).
    seed: String,
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

/// A record read back: the game as it was set up, and what happened.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The game as set up (its watchdog is the default: records do not
    /// keep it).
    pub spec: GameSpec,
    pub decisions: Vec<super::DecisionRecord>,
    pub scores: Vec<f64>,
    pub reason: String,
    /// The seat that forfeited, if any.
    pub offender: Option<usize>,
    /// What the referee said about the end (a forfeit's detail).
    pub detail: Option<String>,
    /// Completed turns, as the referee counted them.
    pub plies: u32,
    /// The final state (`Game::snapshot` at the end; `null` in damaged or
    /// older records).
    pub state: serde_json::Value,
}

/// A record that cannot be read: which line, and why.
#[derive(Debug, thiserror::Error)]
#[error("record line {line}: {why}")]
pub struct ReadError {
    pub line: usize,
    pub why: String,
}

#[derive(serde::Deserialize)]
struct HeaderIn {
    game_id: String,
    variant: String,
    players: usize,
    #[serde(default)]
    options: std::collections::BTreeMap<String, String>,
    max_plies: u32,
    names: Vec<String>,
    time: crate::protocol::TimeMsg,
    #[serde(default)]
    opening: Vec<String>,
    /// Absent in records written before seeds were sent.
    #[serde(default)]
    seed: Option<String>,
    #[serde(default)]
    notes: Vec<String>,
}

#[derive(serde::Deserialize)]
struct EndIn {
    scores: Vec<f64>,
    reason: String,
    #[serde(default)]
    offender: Option<usize>,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    plies: u32,
    #[serde(default)]
    state: serde_json::Value,
}

/// Reads a record written by [`write_record_to`].
pub fn read_record(text: &str) -> Result<Recorded, ReadError> {
    let bad = |line: usize, why: String| ReadError { line, why };
    let mut spec = None;
    let mut decisions = Vec::new();
    let mut end = None;
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let n = i + 1;
        let v: serde_json::Value =
            serde_json::from_str(l).map_err(|e| bad(n, format!("not JSON: {e}")))?;
        let kind = v["type"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "game" => {
                let h: HeaderIn = serde_json::from_value(v).map_err(|e| bad(n, e.to_string()))?;
                let variant = h
                    .variant
                    .parse()
                    .map_err(|_| bad(n, format!("unknown variant `{}`", h.variant)))?;
                let seed = match h.seed {
                    Some(s) => s
                        .parse()
                        .map_err(|_| bad(n, format!("seed `{s}` is not a u64")))?,
                    None => 0,
                };
                let mut s = GameSpec::new(
                    h.game_id,
                    variant,
                    crate::engine::Settings {
                        players: h.players,
                        max_plies: h.max_plies,
                        options: h.options,
                    },
                );
                s.names = h.names;
                s.time = super::TimeControl::from_msg(&h.time);
                s.opening = h.opening;
                s.seed = seed;
                s.notes = h.notes;
                spec = Some(s);
            }
            "decision" => {
                decisions.push(serde_json::from_value(v).map_err(|e| bad(n, e.to_string()))?)
            }
            "end" => {
                end = Some(serde_json::from_value::<EndIn>(v).map_err(|e| bad(n, e.to_string()))?)
            }
            other => return Err(bad(n, format!("unknown line type `{other}`"))),
        }
    }
    let spec = spec.ok_or_else(|| bad(1, "no `game` line".into()))?;
    let end = end.ok_or_else(|| {
        bad(
            text.lines().count(),
            "no `end` line: the record is not whole".into(),
        )
    })?;
    Ok(Recorded {
        spec,
        decisions,
        scores: end.scores,
        reason: end.reason,
        offender: end.offender,
        detail: end.detail,
        plies: end.plies,
        state: end.state,
    })
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
        seed: spec.seed.to_string(),
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
        // Whole microseconds: 0.416, not 0.41601000000000005.
        duration_ms: report.duration.as_micros() as f64 / 1000.0,
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
