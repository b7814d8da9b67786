//! One chunk's viewer data: each game's record replayed by the engine,
//! every position (the engine's snapshot after each decision) kept in a
//! compact binary form that the page decodes (issue 33: a report of every
//! game at 100,000 games within 100 MB).
//!
//! A snapshot is flattened into `path -> value` cells: objects are walked
//! (`pits.4b.W`), and so are arrays of numbers (`inner.0.3`); other arrays
//! and scalars are values (`squares.A = ["W","B"]`). A chunk shares one
//! table of paths (`keys`), one of values (`values`: every value other
//! than a change of a number) and one of option strings (`options`). Its
//! games are then written as varints (7 bits a byte, low first) in six
//! streams, each game after the one before it:
//!
//! - `start`: the first position: how many cells, then per cell (in path
//!   order) the path's distance from the one before it (minus one) and
//!   its value's index;
//! - per decision, `dec`: `seat * 4 + flags` (1 forced, 2 opening) and its
//!   kind's value index; `legal`: how many options the engine lists, then
//!   each option's index as a signed (zigzag) difference from the one
//!   before it plus one; `opt`: the option played, as its place in that
//!   list (or the list's length plus its index when it is not there);
//!   `time`: for the decisions a bot made (no flag), its time in
//!   microseconds to two significant digits (`quantize_us`); `diff`: the
//!   cells that changed, as in `start` but each value either a change of
//!   a number (`2 * zigzag(new - old)`) or a value index (`2 * i + 1`;
//!   `null` for a cell gone).
//!
//! Each stream holds values of one kind, so that the gzip around the chunk
//! finds its repetitions (a sowing adds one to the pits that follow each
//! other: the same pair of bytes again and again). The page's script
//! (`report.js`, `decodeChunk`) reads the streams back into positions; it
//! knows no rule.
//!
//! A damaged record (unreadable, or a decision the engine refuses) gives
//! the positions up to the damage and a note, never a panic.

use crate::engine::Game;
use crate::referee::record::{read_record, Recorded};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The names of the streams, in the order they are written.
pub const STREAMS: [&str; 6] = ["start", "dec", "legal", "opt", "time", "diff"];

/// Values interned into a table: each distinct one once, by its index.
#[derive(Default)]
struct Table<T> {
    items: Vec<T>,
    index: HashMap<String, usize>,
}

impl<T: Clone> Table<T> {
    fn id(&mut self, key: String, item: &T) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        self.items.push(item.clone());
        self.index.insert(key, self.items.len() - 1);
        self.items.len() - 1
    }
}

/// One chunk's tables and streams, built game by game.
#[derive(Default)]
pub struct Chunk {
    keys: Table<String>,
    values: Table<Value>,
    options: Table<String>,
    /// The streams, in the order of `STREAMS`.
    streams: [Vec<u8>; 6],
}

const START: usize = 0;
const DEC: usize = 1;
const LEGAL: usize = 2;
const OPT: usize = 3;
const TIME: usize = 4;
const DIFF: usize = 5;

impl Chunk {
    fn key(&mut self, path: &str) -> usize {
        self.keys.id(path.to_string(), &path.to_string())
    }

    fn value(&mut self, v: &Value) -> usize {
        self.values.id(v.to_string(), v)
    }

    fn option(&mut self, o: &str) -> usize {
        self.options.id(o.to_string(), &o.to_string())
    }

    fn put(&mut self, stream: usize, n: u64) {
        varint(&mut self.streams[stream], n);
    }

    /// The paths' table (`keys` of the page's data).
    #[cfg(test)]
    pub fn key_names(&self) -> &[String] {
        &self.keys.items
    }

    /// The tables and the streams' lengths, as the page's data names them
    /// (`keys`, `values`, `options`, `streams`), and the streams' bytes
    /// one after the other.
    pub fn finish(self) -> (Map<String, Value>, Vec<u8>) {
        let mut head = Map::new();
        head.insert("keys".into(), json!(self.keys.items));
        head.insert("values".into(), Value::Array(self.values.items));
        head.insert("options".into(), json!(self.options.items));
        let lens: Vec<Value> = STREAMS
            .iter()
            .zip(&self.streams)
            .map(|(n, s)| json!([n, s.len()]))
            .collect();
        head.insert("streams".into(), Value::Array(lens));
        (head, self.streams.concat())
    }
}

/// `n` as a varint: 7 bits a byte, the lowest first, the high bit set on
/// every byte but the last.
pub fn varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// A signed number as an unsigned one: 0, -1, 1, -2, ... as 0, 1, 2, 3.
pub fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

/// A time in microseconds kept to two significant digits, as a small
/// code: below 100 µs the time itself; above, `100 + 90 * (e - 1) + (m -
/// 10)` for `m * 10^e` with `m` in 10..=99 (`unquantize_us` reads it).
pub fn quantize_us(us: u64) -> u64 {
    if us < 100 {
        return us;
    }
    let mut e = 1u32;
    while us / 10u64.pow(e) >= 100 {
        e += 1;
    }
    let p = 10u64.pow(e);
    let mut m = (us + p / 2) / p;
    if m >= 100 {
        m /= 10;
        e += 1;
    }
    100 + 90 * u64::from(e - 1) + (m - 10)
}

/// The time a `quantize_us` code stands for (as the page reads it).
#[cfg(test)]
pub fn unquantize_us(q: u64) -> u64 {
    if q < 100 {
        return q;
    }
    let e = (q - 100) / 90 + 1;
    let m = (q - 100) % 90 + 10;
    m * 10u64.pow(e as u32)
}

/// `state` as (path index, value) cells, in path order.
fn flatten(state: &Value, chunk: &mut Chunk) -> Vec<(usize, Value)> {
    fn numbers(v: &Value) -> bool {
        match v {
            Value::Number(_) => true,
            Value::Array(a) => !a.is_empty() && a.iter().all(numbers),
            _ => false,
        }
    }
    fn child(
        k: &str,
        x: &Value,
        prefix: &mut String,
        chunk: &mut Chunk,
        out: &mut Vec<(usize, Value)>,
    ) {
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push('.');
        }
        prefix.push_str(k);
        walk(x, prefix, chunk, out);
        prefix.truncate(len);
    }
    fn walk(v: &Value, prefix: &mut String, chunk: &mut Chunk, out: &mut Vec<(usize, Value)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    child(k, x, prefix, chunk, out);
                }
            }
            Value::Array(a) if numbers(v) => {
                for (k, x) in a.iter().enumerate() {
                    child(&k.to_string(), x, prefix, chunk, out);
                }
            }
            other => out.push((chunk.key(prefix), other.clone())),
        }
    }
    let mut out = Vec::new();
    walk(state, &mut String::new(), chunk, &mut out);
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
        json!({ "id": game_id, "note": note, "decisions": 0 }),
        GameMeta {
            detail: None,
            note: Some(note),
        },
    )
}

/// One game for the viewer: its summary as JSON (the page's `games`), its
/// positions and decisions written into `chunk`'s streams; and its meta.
pub fn game_data(game_id: &str, text: Option<&str>, chunk: &mut Chunk) -> (Value, GameMeta) {
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
    let data = replay(game_id, &rec, chunk, &mut meta);
    (data, meta)
}

/// The cells of a flattened position, by path index (`null`: absent).
fn cells(flat: Vec<(usize, Value)>, len: usize) -> Vec<Value> {
    let mut out = vec![Value::Null; len];
    for (i, v) in flat {
        if out.len() <= i {
            out.resize(i + 1, Value::Null);
        }
        out[i] = v;
    }
    out
}

fn replay(game_id: &str, rec: &Recorded, chunk: &mut Chunk, meta: &mut GameMeta) -> Value {
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
            out.insert("decisions".into(), 0.into());
            meta.note = Some(note);
            return Value::Object(out);
        }
    };
    // The first position: its cells that are not null.
    let first = flatten(&game.snapshot(), chunk);
    chunk.put(START, first.len() as u64);
    let mut last = -1i64;
    for (k, v) in &first {
        chunk.put(START, (*k as i64 - last - 1) as u64);
        last = *k as i64;
        let i = chunk.value(v);
        chunk.put(START, i as u64);
    }
    let mut prev = cells(first, 0);
    let mut decisions = 0usize;
    for d in &rec.decisions {
        let kind = game.decision_kind();
        // The options the engine lists here, for the viewer to show.
        let legal = game.legal();
        if let Err(e) = game.play(&d.option) {
            let note = format!(
                "decision {} (`{}` at ply {}) cannot be replayed: {e}",
                decisions + 1,
                d.option,
                d.ply
            );
            out.insert("note".into(), note.clone().into());
            meta.note = Some(note);
            break;
        }
        decisions += 1;
        let flags = u64::from(d.forced) + 2 * u64::from(d.opening);
        chunk.put(DEC, d.seat as u64 * 4 + flags);
        let k = chunk.value(&Value::from(kind));
        chunk.put(DEC, k as u64);
        chunk.put(LEGAL, legal.len() as u64);
        let mut last = -1i64;
        for o in &legal {
            let i = chunk.option(o) as i64;
            chunk.put(LEGAL, zigzag(i - last - 1));
            last = i;
        }
        let played = match legal.iter().position(|o| *o == d.option) {
            Some(p) => p,
            None => legal.len() + chunk.option(&d.option),
        };
        chunk.put(OPT, played as u64);
        if flags == 0 {
            chunk.put(TIME, quantize_us(d.elapsed_us));
        }
        let next = cells(flatten(&game.snapshot(), chunk), prev.len());
        put_diff(chunk, &mut prev, next);
    }
    out.insert("decisions".into(), decisions.into());
    out.insert("positions".into(), true.into());
    // The options at the last position, when a decision is still due
    // there (a forfeit, a damaged record).
    if game.to_decide().is_some() {
        out.insert("legal_end".into(), json!(game.legal()));
    }
    if meta.note.is_none() && !rec.state.is_null() {
        // The position after the last decision must be the record's.
        let mut end = cells(flatten(&rec.state, chunk), prev.len());
        prev.resize(end.len(), Value::Null);
        end.resize(prev.len(), Value::Null);
        if end != prev {
            let note = "the replayed game does not reach the record's final state".to_string();
            out.insert("final".into(), Value::Array(end));
            out.insert("note".into(), note.clone().into());
            meta.note = Some(note);
        }
    }
    Value::Object(out)
}

/// Writes the cells of `next` that differ from `prev` into the `diff`
/// stream (a number's change as such, anything else by value index);
/// `prev` becomes `next`.
fn put_diff(chunk: &mut Chunk, prev: &mut Vec<Value>, mut next: Vec<Value>) {
    let len = prev.len().max(next.len());
    prev.resize(len, Value::Null);
    next.resize(len, Value::Null);
    let changed: Vec<usize> = (0..len).filter(|&i| prev[i] != next[i]).collect();
    chunk.put(DIFF, changed.len() as u64);
    let mut last = -1i64;
    for i in changed {
        chunk.put(DIFF, (i as i64 - last - 1) as u64);
        last = i as i64;
        // A change of a whole number that fits the page's numbers.
        let change = match (prev[i].as_i64(), next[i].as_i64()) {
            (Some(a), Some(b)) => b.checked_sub(a).filter(|d| d.unsigned_abs() < 1 << 50),
            _ => None,
        };
        let code = match change {
            Some(d) => 2 * zigzag(d),
            None => 2 * chunk.value(&next[i]) as u64 + 1,
        };
        chunk.put(DIFF, code);
    }
    *prev = next;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Settings, Variant};
    use std::collections::BTreeMap;

    /// The streams read back as the page's script reads them
    /// (`decodeChunk` in report.js): per game, its positions as path ->
    /// value, and its decisions as (seat, option, kind, flags, µs, legal).
    type Decoded = (
        Vec<BTreeMap<String, Value>>,
        Vec<(u64, String, String, u64, u64, Vec<String>)>,
    );

    fn decode(head: &Map<String, Value>, bytes: &[u8], games: &[Value]) -> Vec<Decoded> {
        let mut at = HashMap::new();
        let mut off = 0;
        for s in head["streams"].as_array().unwrap() {
            let len = s[1].as_u64().unwrap() as usize;
            at.insert(s[0].as_str().unwrap().to_string(), (off, off + len));
            off += len;
        }
        assert_eq!(off, bytes.len());
        let mut rd = |name: &str| -> u64 {
            let (p, end) = at.get_mut(name).unwrap();
            let (mut x, mut shift) = (0u64, 0);
            loop {
                assert!(*p < *end, "stream {name} ends early");
                let c = bytes[*p];
                *p += 1;
                x |= u64::from(c & 0x7f) << shift;
                shift += 7;
                if c & 0x80 == 0 {
                    return x;
                }
            }
        };
        let unzz = |x: u64| (x >> 1) as i64 ^ -((x & 1) as i64);
        let keys: Vec<String> = serde_json::from_value(head["keys"].clone()).unwrap();
        let values = head["values"].as_array().unwrap();
        let options: Vec<String> = serde_json::from_value(head["options"].clone()).unwrap();
        let named = |cur: &[Value]| -> BTreeMap<String, Value> {
            cur.iter()
                .enumerate()
                .filter(|(_, v)| !v.is_null())
                .map(|(i, v)| (keys[i].clone(), v.clone()))
                .collect()
        };
        let mut out = Vec::new();
        for g in games {
            let mut positions = Vec::new();
            let mut decisions = Vec::new();
            if g["positions"] == true {
                let mut cur = vec![Value::Null; keys.len()];
                let mut k = -1i64;
                for _ in 0..rd("start") {
                    k += rd("start") as i64 + 1;
                    cur[k as usize] = values[rd("start") as usize].clone();
                }
                positions.push(named(&cur));
                for _ in 0..g["decisions"].as_u64().unwrap() {
                    let sf = rd("dec");
                    let kind = values[rd("dec") as usize].as_str().unwrap().to_string();
                    let mut legal = Vec::new();
                    let mut last = -1i64;
                    for _ in 0..rd("legal") {
                        last += unzz(rd("legal")) + 1;
                        legal.push(options[last as usize].clone());
                    }
                    let o = rd("opt") as usize;
                    let option = if o < legal.len() {
                        legal[o].clone()
                    } else {
                        options[o - legal.len()].clone()
                    };
                    let us = if sf & 3 == 0 {
                        unquantize_us(rd("time"))
                    } else {
                        0
                    };
                    decisions.push((sf >> 2, option, kind, sf & 3, us, legal));
                    let mut k = -1i64;
                    for _ in 0..rd("diff") {
                        k += rd("diff") as i64 + 1;
                        let c = rd("diff");
                        let i = k as usize;
                        cur[i] = if c & 1 == 1 {
                            values[(c >> 1) as usize].clone()
                        } else {
                            (cur[i].as_i64().unwrap() + unzz(c >> 1)).into()
                        };
                    }
                    positions.push(named(&cur));
                }
            }
            out.push((positions, decisions));
        }
        for (name, (p, end)) in &at {
            assert_eq!(p, end, "stream {name} not read to its end");
        }
        out
    }

    /// `state` as path -> value, as the viewer finds it.
    fn paths(state: &Value) -> BTreeMap<String, Value> {
        let mut c = Chunk::default();
        let flat = flatten(state, &mut c);
        flat.into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(i, v)| (c.key_names()[i].clone(), v))
            .collect()
    }

    /// A record of `moves` in `variant` for `players`, ending in `state`;
    /// the first move an opening's, the second forced, the others made in
    /// `1234567 * n` µs.
    fn record_of(
        variant: Variant,
        players: usize,
        moves: &[(usize, String)],
        state: &Value,
    ) -> String {
        let names: Vec<String> = (0..players).map(|i| format!("bot{i}")).collect();
        let mut lines = vec![
            json!({"type": "game", "game_id": "g", "variant": variant.name(),
            "players": players, "options": {}, "max_plies": 600, "names": names,
            "time": {"per_decision_ms": 100}, "opening": [], "seed": "1"}),
        ];
        for (n, (seat, option)) in moves.iter().enumerate() {
            lines.push(json!({"type": "decision", "seat": seat, "ply": n, "option": option,
                "forced": n == 1, "opening": n == 0, "elapsed_us": 1_234_567 * n as u64 % 9_999_991}));
        }
        lines.push(json!({"type": "end", "scores": vec![0.5; players], "reason": "max_plies",
            "offender": null, "detail": null, "plies": moves.len(), "duration_ms": 1.0, "state": state}));
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// A game of each variant (Tricala for two and for three) played by a
    /// fixed rule over the legal options, written into one chunk and read
    /// back: every position is the engine's at that decision, and every
    /// decision's legal options (in the engine's order), option, kind,
    /// flags and time (to two significant digits) are the record's.
    #[test]
    fn the_streams_give_back_every_position_and_decision_of_each_variant() {
        let mut chunk = Chunk::default();
        let mut games = Vec::new();
        let mut want = Vec::new();
        for (variant, players) in [
            (Variant::Filo, 2),
            (Variant::Tricala, 2),
            (Variant::Tricala, 3),
            (Variant::Hackaback, 2),
            (Variant::Kisolo, 2),
            (Variant::Diffusion, 2),
        ] {
            let settings = Settings {
                players,
                max_plies: 600,
                ..Default::default()
            };
            let mut game = Game::new(variant, &settings).unwrap();
            let mut states = vec![paths(&game.snapshot())];
            let mut moves = Vec::new();
            let mut legals = Vec::new();
            let mut kinds = Vec::new();
            for n in 0..150usize {
                let Some(seat) = game.to_decide() else { break };
                let legal = game.legal();
                let option = legal[(n * 7 + 3) % legal.len()].clone();
                kinds.push(game.decision_kind().to_string());
                game.play(&option).unwrap();
                moves.push((seat, option));
                legals.push(legal);
                states.push(paths(&game.snapshot()));
            }
            assert!(moves.len() > 8, "{variant:?}: {} moves", moves.len());
            let text = record_of(variant, players, &moves, &game.snapshot());
            let (g, meta) = game_data("g", Some(&text), &mut chunk);
            assert!(meta.note.is_none(), "{:?}", meta.note);
            games.push(g);
            want.push((states, moves, legals, kinds));
        }
        let (head, bytes) = chunk.finish();
        let decoded = decode(&head, &bytes, &games);
        for ((positions, decisions), (states, moves, legals, kinds)) in decoded.iter().zip(&want) {
            assert_eq!(positions, states);
            assert_eq!(decisions.len(), moves.len());
            for (n, d) in decisions.iter().enumerate() {
                assert_eq!((d.0 as usize, &d.1), (moves[n].0, &moves[n].1));
                assert_eq!(&d.2, &kinds[n]);
                assert_eq!(d.3, u64::from(n == 1) + 2 * u64::from(n == 0));
                let us = 1_234_567 * n as u64 % 9_999_991;
                if n > 1 {
                    assert_eq!(d.4, unquantize_us(quantize_us(us)));
                }
                assert_eq!(&d.5, &legals[n]);
            }
        }
    }

    /// Times keep two significant digits.
    #[test]
    fn times_are_kept_to_two_significant_digits() {
        for (us, kept) in [
            (0, 0),
            (7, 7),
            (99, 99),
            (100, 100),
            (1_234, 1_200),
            (1_250, 1_300),
            (99_500, 100_000),
            (123_456_789, 120_000_000),
        ] {
            assert_eq!(unquantize_us(quantize_us(us)), kept, "{us}");
        }
        assert!(quantize_us(5_000_000) < 1 << 14, "two bytes at most");
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
        let settings = Settings {
            max_plies: 100,
            ..Default::default()
        };
        let mut game = Game::new(Variant::Diffusion, &settings).unwrap();
        game.play("G").unwrap();
        game.play("C").unwrap();
        let mut chunk = Chunk::default();
        let (v, meta) = game_data("g", Some(&record(&game.snapshot())), &mut chunk);
        assert_eq!(meta.detail.as_deref(), Some("sent `Z`"));
        assert!(meta.note.is_none(), "{:?}", meta.note);
        assert_eq!(v["decisions"], 2);
        assert_eq!(v["end"]["offender"], 0);
        assert_eq!(v["notes"], json!(["n"]));

        let mut other = game.snapshot();
        other["east"] = json!(40);
        let (v, meta) = game_data("g", Some(&record(&other)), &mut chunk);
        assert!(meta.note.unwrap().contains("final state"));
        assert!(v["final"].is_array());
    }

    #[test]
    fn a_damaged_record_gives_a_note() {
        let mut chunk = Chunk::default();
        let (v, meta) = game_data("g", Some("{not json"), &mut chunk);
        assert!(meta.note.unwrap().contains("cannot be read"));
        assert!(v["note"].is_string());
        let (_, meta) = game_data("g", None, &mut chunk);
        assert!(meta.note.unwrap().contains("missing"));
    }
}
