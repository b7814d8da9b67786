//! The game record: one game as JSON lines (appended to a record log of
//! `results/NAME/games/` in leagues, see `league::folder::records`; a file of its
//! own wherever `arena play` is told).
//!
//! Owns the record format only; it does not decide where records go, nor
//! whether they are compressed.
//!
//! Lines, each a JSON object:
//! 1. `game` (`"type":"game"`): `format` (the record format, [`FORMAT`];
//!    absent in records of format 1), `game_id`, `variant`, `players`,
//!    `options`, `max_plies`, `names`, `time` (as in the protocol's game
//!    start), `opening`, `seed` (the bots' seed, a decimal string as in
//!    `game_start`), `notes` (what happened before the game, such as a bot
//!    restarted for output it wrote between games; usually empty).
//! 2. a decision line per decision, in order. Format 2: no `type`; `seat`,
//!    `ply`, `option`, then `forced` and `opening` only when true and `us`
//!    (the time taken, microseconds) only when not 0:
//!    `{"seat":0,"ply":4,"option":"G","us":35}`. Format 1 (read, no longer
//!    written): `"type":"decision"` and every field, `elapsed_us` for `us`.
//! 3. `end` (`"type":"end"`): `scores`, `reason`, `offender`, `detail`,
//!    `plies`, `duration_ms`, `state` (the final state).

use super::{GameReport, GameSpec};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// The record format this version writes: 2, the compact decision lines
/// (issue 35). Records of format 1 have no `format` field.
pub const FORMAT: u32 = 2;

#[derive(Serialize)]
struct Header<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    format: u32,
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

/// A decision line of format 2: the flags only when true, the time only
/// when not 0.
#[derive(Serialize)]
struct Decision<'a> {
    seat: usize,
    ply: u32,
    option: &'a str,
    #[serde(skip_serializing_if = "is_false")]
    forced: bool,
    #[serde(skip_serializing_if = "is_false")]
    opening: bool,
    #[serde(skip_serializing_if = "is_zero")]
    us: u64,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A decision line of either format: format 1 has `elapsed_us` and both
/// flags, format 2 `us` and the flags only when true.
#[derive(serde::Deserialize)]
struct DecisionIn {
    seat: usize,
    ply: u32,
    option: String,
    #[serde(default)]
    forced: bool,
    #[serde(default)]
    opening: bool,
    #[serde(default, alias = "elapsed_us")]
    us: u64,
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
    /// Absent in records of format 1.
    #[serde(default)]
    format: Option<u32>,
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

/// What is wrong with the record's end, if anything, against `game`, the
/// replay of its decisions: its result is the rules' outcome, or a
/// forfeit's (scored as the referee scores one) by a seat of the game,
/// after as many plies.
pub fn end_problem(rec: &Recorded, game: &crate::engine::Game) -> Option<String> {
    let n = rec.spec.settings.players;
    let (scores, reason) = match (rec.offender, game.outcome()) {
        (Some(seat), _) if seat < n => (super::forfeit_scores(n, seat), rec.reason.clone()),
        (Some(seat), _) => return Some(format!("the offender, seat {seat}, is not a seat")),
        (None, Some(o)) => (o.scores(), o.reason.name().to_string()),
        (None, None) => {
            return Some(format!(
                "the record ends with `{}` after {} decisions, but the game is not over",
                rec.reason,
                rec.decisions.len()
            ))
        }
    };
    (rec.scores != scores || rec.reason != reason || rec.plies != game.plies()).then(|| {
        format!(
            "the record says {:?} ({}) after {} plies; the replay {:?} ({}) after {}",
            rec.scores,
            rec.reason,
            rec.plies,
            scores,
            reason,
            game.plies()
        )
    })
}

/// Reads a record written by [`write_record_to`].
pub fn read_record(text: &str) -> Result<Recorded, ReadError> {
    match read_record_or_cut(text)? {
        (rec, true) => Ok(rec),
        (_, false) => Err(ReadError {
            line: text.lines().count(),
            why: "no `end` line: the record is not whole".into(),
        }),
    }
}

/// Reads a record that may be cut short before its `end` line (a game
/// stopped mid-way, a file cut by a full disk): its header and decisions,
/// and whether it is whole. A cut one has no result: no scores, reason
/// `unfinished`, its decisions as its plies, a `null` state.
pub fn read_record_or_cut(text: &str) -> Result<(Recorded, bool), ReadError> {
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
        // Format 2's decision lines have no `type`.
        let kind = match v.get("type") {
            None => "decision".to_string(),
            Some(t) => t.as_str().unwrap_or_default().to_string(),
        };
        match kind.as_str() {
            "game" if spec.is_some() => {
                return Err(bad(
                    n,
                    "a second `game` line: this file holds more than one game's record (an export of many games?); give one game's record".into(),
                ))
            }
            "game" => {
                let h: HeaderIn = crate::text::json_as(v).map_err(|e| bad(n, e))?;
                if let Some(f) = h.format.filter(|&f| f > FORMAT) {
                    return Err(bad(
                        n,
                        format!("record format {f}: this arena reads formats 1 to {FORMAT} (a newer arena wrote it)"),
                    ));
                }
                let variant = h
                    .variant
                    .parse()
                    .map_err(|_| bad(n, format!("unknown variant `{}`", h.variant)))?;
                let seed = match h.seed {
                    Some(s) => s
                        .parse()
                        .map_err(|_| bad(n, format!("seed `{s}` is not a whole number from 0 to {}", u64::MAX)))?,
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
                let d: DecisionIn = crate::text::json_as(v).map_err(|e| bad(n, e))?;
                decisions.push(super::DecisionRecord {
                    seat: d.seat,
                    ply: d.ply,
                    option: d.option,
                    forced: d.forced,
                    opening: d.opening,
                    elapsed_us: d.us,
                })
            }
            "end" => {
                end = Some(crate::text::json_as::<EndIn>(v).map_err(|e| bad(n, e))?)
            }
            other => return Err(bad(n, format!("unknown line type `{other}`"))),
        }
    }
    let spec = spec.ok_or_else(|| bad(1, "no `game` line".into()))?;
    let whole = end.is_some();
    let end = end.unwrap_or_else(|| EndIn {
        scores: Vec::new(),
        reason: "unfinished".into(),
        offender: None,
        detail: None,
        plies: u32::try_from(decisions.len()).unwrap_or(u32::MAX),
        state: serde_json::Value::Null,
    });
    let rec = Recorded {
        spec,
        decisions,
        scores: end.scores,
        reason: end.reason,
        offender: end.offender,
        detail: end.detail,
        plies: end.plies,
        state: end.state,
    };
    Ok((rec, whole))
}

/// Writes the record of `report` (played from `spec`) to `out`.
pub fn write_record_to<W: Write>(
    out: &mut W,
    spec: &GameSpec,
    report: &GameReport,
) -> std::io::Result<()> {
    let header = Header {
        kind: "game",
        format: FORMAT,
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
                seat: d.seat,
                ply: d.ply,
                option: &d.option,
                forced: d.forced,
                opening: d.opening,
                us: d.elapsed_us,
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

#[cfg(test)]
mod tests {
    use super::*;

    const END: &str = r#"{"type":"end","scores":[1.0,0.0],"reason":"store","offender":null,"detail":null,"plies":2,"duration_ms":1.5,"state":null}"#;

    fn header(format: &str) -> String {
        format!(
            r#"{{"type":"game",{format}"game_id":"g","variant":"kisolo","players":2,"options":{{}},"max_plies":10,"names":["a","b"],"time":{{"per_decision_ms":100}},"opening":["A"],"seed":"7","notes":[]}}"#
        )
    }

    /// A record of format 1 (every field on every decision line) and the
    /// same of format 2 (compact decision lines) read the same.
    #[test]
    fn both_formats_read_the_same() {
        let v1 = [
            header(""),
            r#"{"type":"decision","seat":0,"ply":0,"option":"A","forced":false,"opening":true,"elapsed_us":0}"#.into(),
            r#"{"type":"decision","seat":1,"ply":1,"option":"B","forced":true,"opening":false,"elapsed_us":0}"#.into(),
            r#"{"type":"decision","seat":0,"ply":2,"option":"C","forced":false,"opening":false,"elapsed_us":35}"#.into(),
            END.into(),
        ]
        .join("\n");
        let v2 = [
            header(r#""format":2,"#),
            r#"{"seat":0,"ply":0,"option":"A","opening":true}"#.into(),
            r#"{"seat":1,"ply":1,"option":"B","forced":true}"#.into(),
            r#"{"seat":0,"ply":2,"option":"C","us":35}"#.into(),
            END.into(),
        ]
        .join("\n");
        let (a, b) = (read_record(&v1).unwrap(), read_record(&v2).unwrap());
        assert_eq!(a.decisions, b.decisions);
        assert_eq!(a.decisions.len(), 3);
        assert!(a.decisions[0].opening && !a.decisions[0].forced);
        assert!(a.decisions[1].forced && !a.decisions[1].opening);
        assert_eq!(a.decisions[2].elapsed_us, 35);
        assert_eq!((a.reason, a.scores), (b.reason, b.scores));
        // Written again: format 2, the lines above.
        let mut out = Vec::new();
        let report = GameReport {
            decisions: b.decisions.clone(),
            ..GameReport::unstarted(
                &b.spec,
                0,
                crate::referee::ForfeitKind::Crash,
                String::new(),
                std::time::Duration::ZERO,
            )
        };
        write_record_to(&mut out, &b.spec, &report).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with(r#"{"type":"game","format":2,"#),
            "{text}"
        );
        assert_eq!(&lines[1..4], &v2.lines().collect::<Vec<_>>()[1..4]);
    }

    /// A field of the wrong type is named, with what it should be in the
    /// docs' words (not Rust's `usize`), and its line.
    #[test]
    fn a_field_of_the_wrong_type_is_named() {
        let players = header("").replace(r#""players":2"#, r#""players":"two""#);
        let text = [players, END.into()].join("\n");
        let e = read_record(&text).unwrap_err().to_string();
        assert!(
            e.contains("line 1")
                && e.contains("`players`")
                && e.contains("expected a whole number (0 or more)")
                && !e.contains("usize"),
            "{e}"
        );
        let ply = r#"{"seat":0,"ply":-1,"option":"A"}"#;
        let text = [header(r#""format":2,"#), ply.into(), END.into()].join("\n");
        let e = read_record(&text).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("`ply`"), "{e}");
        let seed = header("").replace(r#""seed":"7""#, r#""seed":"-7""#);
        let e = read_record(&[seed, END.into()].join("\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a whole number from 0 to"), "{e}");
    }

    #[test]
    fn a_newer_format_is_refused_with_what_to_do() {
        let text = [header(r#""format":3,"#), END.into()].join("\n");
        let e = read_record(&text).unwrap_err().to_string();
        assert!(
            e.contains("record format 3") && e.contains("newer arena"),
            "{e}"
        );
    }
}
