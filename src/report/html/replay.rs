//! One game's viewer data: its record replayed by the engine, every
//! position (the engine's snapshot after each decision) kept compactly.
//!
//! A snapshot is flattened into `path -> value` pairs (objects are walked,
//! `pits.4b.W`; arrays and scalars are values, `squares.A = ["W","B"]`).
//! The paths of a chunk of games share one table (`Keys`); a game keeps its
//! first position whole (one value per path index, `null` where absent) and
//! each later one as the pairs that changed (`[index, value, ...]`). The
//! browser applies these differences and draws: it knows no rule.
//!
//! A damaged record (unreadable, or a decision the engine refuses) gives
//! the positions up to the damage and a note, never a panic.

use crate::engine::Game;
use crate::referee::record::{read_record, Recorded};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The path table of one chunk.
#[derive(Default)]
pub struct Keys {
    pub names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Keys {
    fn id(&mut self, path: &str) -> usize {
        if let Some(&i) = self.index.get(path) {
            return i;
        }
        let i = self.names.len();
        self.names.push(path.to_string());
        self.index.insert(path.to_string(), i);
        i
    }
}

/// `state` as (path index, value) pairs, in path order.
pub fn flatten(state: &Value, keys: &mut Keys) -> Vec<(usize, Value)> {
    fn walk(v: &Value, prefix: &mut String, keys: &mut Keys, out: &mut Vec<(usize, Value)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let len = prefix.len();
                    if !prefix.is_empty() {
                        prefix.push('.');
                    }
                    prefix.push_str(k);
                    walk(x, prefix, keys, out);
                    prefix.truncate(len);
                }
            }
            other => out.push((keys.id(prefix), other.clone())),
        }
    }
    let mut out = Vec::new();
    walk(state, &mut String::new(), keys, &mut out);
    out.sort_by_key(|(i, _)| *i);
    out
}

/// What the report needs of a game besides its viewer data.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct GameMeta {
    /// A forfeit's detail text, from the record's end line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What is wrong with the record, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A game whose record cannot be shown, with why (`note`).
pub fn damaged(game_id: &str, note: String) -> (Value, GameMeta) {
    (
        json!({ "id": game_id, "note": note }),
        GameMeta {
            detail: None,
            note: Some(note),
        },
    )
}

/// One game for the viewer, as JSON, and its meta.
pub fn game_data(game_id: &str, text: Option<&str>, keys: &mut Keys) -> (Value, GameMeta) {
    let Some(text) = text else {
        return damaged(
            game_id,
            "no record of this game (its record is missing)".to_string(),
        );
    };
    let rec = match read_record(text) {
        Ok(r) => r,
        Err(e) => return damaged(game_id, format!("the record cannot be read: {e}")),
    };
    let mut meta = GameMeta {
        detail: rec.detail.clone(),
        note: None,
    };
    let data = replay(game_id, &rec, keys, &mut meta);
    (data, meta)
}

fn replay(game_id: &str, rec: &Recorded, keys: &mut Keys, meta: &mut GameMeta) -> Value {
    let spec = &rec.spec;
    let mut out = Map::new();
    out.insert("id".into(), game_id.into());
    out.insert("variant".into(), spec.variant.name().into());
    out.insert("players".into(), spec.settings.players.into());
    out.insert("names".into(), json!(spec.names));
    out.insert("options".into(), json!(spec.settings.options));
    out.insert("max_plies".into(), spec.settings.max_plies.into());
    out.insert("seed".into(), spec.seed.to_string().into());
    if !spec.notes.is_empty() {
        out.insert("notes".into(), json!(spec.notes));
    }
    out.insert(
        "end".into(),
        json!({
            "scores": rec.scores,
            "reason": rec.reason,
            "offender": rec.offender,
            "detail": rec.detail,
            "plies": rec.plies,
        }),
    );
    let mut game = match Game::new(spec.variant, &spec.settings) {
        Ok(g) => g,
        Err(e) => {
            let note = format!("the game cannot be set up: {e}");
            out.insert("note".into(), note.clone().into());
            meta.note = Some(note);
            return Value::Object(out);
        }
    };
    let mut prev: Vec<Value> = Vec::new();
    let first = flatten(&game.snapshot(), keys);
    for (i, v) in first {
        if prev.len() <= i {
            prev.resize(i + 1, Value::Null);
        }
        prev[i] = v;
    }
    out.insert("start".into(), Value::Array(prev.clone()));
    let mut decisions = Vec::with_capacity(rec.decisions.len());
    let mut diffs = Vec::with_capacity(rec.decisions.len());
    for d in &rec.decisions {
        let kind = game.decision_kind();
        // The options the engine lists here, for the viewer to show.
        let legal = game.legal();
        if let Err(e) = game.play(&d.option) {
            let note = format!(
                "decision {} (`{}` at ply {}) cannot be replayed: {e}",
                decisions.len() + 1,
                d.option,
                d.ply
            );
            out.insert("note".into(), note.clone().into());
            meta.note = Some(note);
            break;
        }
        // seat, option, kind, 1 forced + 2 opening, microseconds, the
        // legal options at the decision
        let flags = u8::from(d.forced) + 2 * u8::from(d.opening);
        decisions.push(json!([d.seat, d.option, kind, flags, d.elapsed_us, legal]));
        diffs.push(diff(&mut prev, flatten(&game.snapshot(), keys)));
    }
    // The options at the last position, when a decision is still due
    // there (a forfeit, a damaged record).
    if game.to_decide().is_some() {
        out.insert("legal_end".into(), json!(game.legal()));
    }
    out.insert("decisions".into(), Value::Array(decisions));
    out.insert("diffs".into(), Value::Array(diffs));
    if meta.note.is_none() && !rec.state.is_null() {
        // The position after the last decision must be the record's.
        let mut end = vec![Value::Null; prev.len()];
        for (i, v) in flatten(&rec.state, keys) {
            if end.len() <= i {
                end.resize(i + 1, Value::Null);
            }
            end[i] = v;
        }
        prev.resize(end.len(), Value::Null);
        if end != prev {
            let note = "the replayed game does not reach the record's final state".to_string();
            out.insert("final".into(), Value::Array(end));
            out.insert("note".into(), note.clone().into());
            meta.note = Some(note);
        }
    }
    Value::Object(out)
}

/// The pairs of `next` that differ from `prev` (absent paths count as
/// `null`), as `[index, value, ...]`; `prev` becomes `next`.
fn diff(prev: &mut Vec<Value>, next: Vec<(usize, Value)>) -> Value {
    let mut seen = vec![false; prev.len()];
    let mut out = Vec::new();
    for (i, v) in next {
        if prev.len() <= i {
            prev.resize(i + 1, Value::Null);
            seen.resize(i + 1, false);
        }
        seen[i] = true;
        if prev[i] != v {
            out.push(i.into());
            out.push(v.clone());
            prev[i] = v;
        }
    }
    for (i, s) in seen.iter().enumerate() {
        if !s && !prev[i].is_null() {
            out.push(i.into());
            out.push(Value::Null);
            prev[i] = Value::Null;
        }
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applying the differences in order gives every position back.
    #[test]
    fn differences_rebuild_each_position() {
        let mut keys = Keys::default();
        let a = json!({"pits": {"A": 4, "B": 4}, "hand": null, "squares": {"A": ["W"]}});
        let b = json!({"pits": {"A": 0, "B": 5}, "hand": {"W": 1}, "squares": {"A": ["W"]}});
        let c = json!({"pits": {"A": 0, "B": 5}, "squares": {"A": []}});
        let mut prev = Vec::new();
        for (i, v) in flatten(&a, &mut keys) {
            prev.resize(prev.len().max(i + 1), Value::Null);
            prev[i] = v;
        }
        let mut shown = prev.clone();
        for next in [&b, &c] {
            let d = diff(&mut prev, flatten(next, &mut keys));
            let d = d.as_array().unwrap();
            for pair in d.chunks(2) {
                let i = pair[0].as_u64().unwrap() as usize;
                shown.resize(shown.len().max(i + 1), Value::Null);
                shown[i] = pair[1].clone();
            }
            let mut want = vec![Value::Null; keys.names.len()];
            for (i, v) in flatten(next, &mut keys) {
                want[i] = v;
            }
            shown.resize(want.len(), Value::Null);
            assert_eq!(shown, want);
        }
        assert!(keys.names.contains(&"hand.W".to_string()));
    }

    /// A record of two Diffusion decisions and a forfeit, ending in `state`.
    fn record(state: &Value) -> String {
        let mut lines = vec![
            json!({"type": "game", "game_id": "g", "variant": "diffusion", "players": 2,
                   "options": {}, "max_plies": 100, "names": ["a", "b"],
                   "time": {"per_decision_ms": 100}, "opening": [], "seed": "1", "notes": ["n"]}),
        ];
        for (seat, option) in [(0, "G"), (1, "C")] {
            lines.push(
                json!({"type": "decision", "seat": seat, "ply": seat, "option": option,
                              "forced": false, "opening": false, "elapsed_us": 5}),
            );
        }
        lines.push(
            json!({"type": "end", "scores": [0.0, 1.0], "reason": "illegal",
                          "offender": 0, "detail": "sent `Z`", "plies": 2,
                          "duration_ms": 1.0, "state": state}),
        );
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// The forfeit's detail reaches the report; a replay that ends
    /// elsewhere than the record's final state is a note.
    #[test]
    fn the_replay_is_checked_against_the_final_state() {
        let settings = crate::engine::Settings {
            max_plies: 100,
            ..Default::default()
        };
        let mut game = Game::new(crate::engine::Variant::Diffusion, &settings).unwrap();
        game.play("G").unwrap();
        game.play("C").unwrap();
        let mut keys = Keys::default();
        let (v, meta) = game_data("g", Some(&record(&game.snapshot())), &mut keys);
        assert_eq!(meta.detail.as_deref(), Some("sent `Z`"));
        assert!(meta.note.is_none(), "{:?}", meta.note);
        assert_eq!(v["decisions"].as_array().unwrap().len(), 2);
        assert_eq!(v["end"]["offender"], 0);
        assert_eq!(v["notes"], json!(["n"]));

        let mut other = game.snapshot();
        other["east"] = json!(40);
        let (v, meta) = game_data("g", Some(&record(&other)), &mut keys);
        assert!(meta.note.unwrap().contains("final state"));
        assert!(v["final"].is_array());
    }

    #[test]
    fn a_damaged_record_gives_a_note() {
        let mut keys = Keys::default();
        let (v, meta) = game_data("g", Some("{not json"), &mut keys);
        assert!(meta.note.unwrap().contains("cannot be read"));
        assert!(v["note"].is_string());
        let (_, meta) = game_data("g", None, &mut keys);
        assert!(meta.note.unwrap().contains("missing"));
    }
}
