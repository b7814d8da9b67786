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
use crate::referee::DecisionRecord;
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

impl<T> Table<T> {
    /// The index of `key`, `make` giving its item the first time.
    fn id(&mut self, key: &str, make: impl FnOnce() -> T) -> usize {
        if let Some(&i) = self.index.get(key) {
            return i;
        }
        self.items.push(make());
        self.index.insert(key.to_string(), self.items.len() - 1);
        self.items.len() - 1
    }
}

/// One chunk's tables and streams, built game by game.
#[derive(Default)]
pub struct Chunk {
    keys: Table<String>,
    values: Table<Value>,
    options: Table<String>,
    flat: Flattener,
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
    /// The index of the value whose JSON text is `text` (`null` when
    /// empty: a cell gone).
    fn value(&mut self, text: &str) -> usize {
        let text = if text.is_empty() { "null" } else { text };
        self.values
            .id(text, || serde_json::from_str(text).unwrap_or(Value::Null))
    }

    fn option(&mut self, o: &str) -> usize {
        self.options.id(o, || o.to_string())
    }

    /// The cells of the position whose JSON text is `text`, into `out`.
    fn flatten(&mut self, text: &[u8], out: &mut Cells) {
        self.flat.cells(text, &mut self.keys, out);
    }

    fn put(&mut self, stream: usize, n: u64) {
        varint(&mut self.streams[stream], n);
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

/// White space skipped from `p`.
fn ws(b: &[u8], mut p: usize) -> usize {
    while matches!(b.get(p), Some(b' ' | b'\n' | b'\t' | b'\r')) {
        p += 1;
    }
    p
}

/// The end of the string whose quote is at `p`.
fn end_of_string(b: &[u8], p: usize) -> usize {
    let mut q = p + 1;
    while let Some(&c) = b.get(q) {
        q += 1;
        if c == b'\\' {
            q += 1;
        } else if c == b'"' {
            return q;
        }
    }
    b.len()
}

/// The end of the JSON value at `p`, and whether it is a number or a
/// non-empty array of such (kept a cell a number). Text that is not JSON
/// ends the scan (`b.len()`), never a panic.
fn skip(b: &[u8], p: usize) -> (usize, bool) {
    let p = ws(b, p);
    match b.get(p) {
        Some(b'"') => (end_of_string(b, p), false),
        Some(&open @ (b'{' | b'[')) => {
            let close = if open == b'{' { b'}' } else { b']' };
            let mut q = ws(b, p + 1);
            if b.get(q) == Some(&close) {
                return (q + 1, false);
            }
            let mut numeric = open == b'[';
            loop {
                if open == b'{' {
                    q = ws(b, end_of_string(b, ws(b, q)));
                    if b.get(q) != Some(&b':') {
                        return (b.len(), false);
                    }
                    q += 1;
                }
                let (e, n) = skip(b, q);
                numeric &= n;
                q = ws(b, e);
                match b.get(q) {
                    Some(b',') => q += 1,
                    Some(&c) if c == close => return (q + 1, numeric),
                    _ => return (b.len(), false),
                }
            }
        }
        Some(c) if c.is_ascii_digit() || *c == b'-' => {
            let mut q = p;
            while matches!(b.get(q), Some(c) if c.is_ascii_digit() || b"-+.eE".contains(c)) {
                q += 1;
            }
            (q, true)
        }
        Some(_) => {
            let mut q = p + 1;
            while matches!(b.get(q), Some(c) if c.is_ascii_alphabetic()) {
                q += 1;
            }
            (q, false)
        }
        None => (b.len(), false),
    }
}

/// Flattens the JSON text of positions into cells (`path -> value's
/// text`): objects are walked (`pits.4b.W`), and so are arrays of numbers
/// (`inner.0.3`); other arrays and scalars are values
/// (`squares.A = ["W","B"]`); an empty object has no cell. Works on the
/// engine's bytes (`Game::write_snapshot`), so that no JSON value is built
/// per position; the paths of the position before are tried first, as
/// consecutive positions of a game have the same.
#[derive(Default)]
struct Flattener {
    /// The path and path index of each cell of the last position, in order.
    cache: Vec<(String, usize)>,
    prefix: String,
    leaves: usize,
}

/// A position's cells: by path index, the range of its value's text
/// (`None`: absent).
type Cells = Vec<Option<(usize, usize)>>;

impl Flattener {
    /// The cells of `text` into `out` (cleared first, sized to the paths).
    fn cells(&mut self, text: &[u8], keys: &mut Table<String>, out: &mut Cells) {
        out.clear();
        self.prefix.clear();
        self.leaves = 0;
        self.walk(text, 0, keys, out);
        out.resize(keys.items.len(), None);
    }

    fn leaf(&mut self, range: (usize, usize), keys: &mut Table<String>, out: &mut Cells) {
        let n = self.leaves;
        self.leaves += 1;
        let k = match self.cache.get(n) {
            Some((path, k)) if *path == self.prefix => *k,
            _ => {
                let k = keys.id(&self.prefix, || self.prefix.clone());
                let entry = (self.prefix.clone(), k);
                if n < self.cache.len() {
                    self.cache[n] = entry;
                } else {
                    self.cache.push(entry);
                }
                k
            }
        };
        if out.len() <= k {
            out.resize(k + 1, None);
        }
        out[k] = Some(range);
    }

    fn child(
        &mut self,
        name: &str,
        b: &[u8],
        p: usize,
        keys: &mut Table<String>,
        out: &mut Cells,
    ) -> usize {
        let len = self.prefix.len();
        if len > 0 {
            self.prefix.push('.');
        }
        self.prefix.push_str(name);
        let end = self.walk(b, p, keys, out);
        self.prefix.truncate(len);
        end
    }

    /// Walks the value at `p`; returns its end.
    fn walk(&mut self, b: &[u8], p: usize, keys: &mut Table<String>, out: &mut Cells) -> usize {
        let p = ws(b, p);
        match b.get(p) {
            Some(b'{') => {
                let mut q = ws(b, p + 1);
                if b.get(q) == Some(&b'}') {
                    return q + 1;
                }
                loop {
                    let ke = end_of_string(b, q);
                    let key = b
                        .get(q + 1..ke.saturating_sub(1))
                        .and_then(|k| std::str::from_utf8(k).ok())
                        .unwrap_or("?")
                        .to_string();
                    q = ws(b, ke);
                    if b.get(q) != Some(&b':') {
                        return b.len();
                    }
                    q = ws(b, self.child(&key, b, q + 1, keys, out));
                    match b.get(q) {
                        Some(b',') => q = ws(b, q + 1),
                        Some(b'}') => return q + 1,
                        _ => return b.len(),
                    }
                }
            }
            Some(b'[') => {
                let (end, numeric) = skip(b, p);
                if !numeric {
                    self.leaf((p, end), keys, out);
                    return end;
                }
                let mut q = p + 1;
                for i in 0.. {
                    q = ws(b, self.child(&i.to_string(), b, q, keys, out));
                    match b.get(q) {
                        Some(b',') => q += 1,
                        _ => break,
                    }
                }
                end
            }
            _ => {
                let (end, _) = skip(b, p);
                self.leaf((p, end), keys, out);
                end
            }
        }
    }
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

fn replay(game_id: &str, rec: &Recorded, chunk: &mut Chunk, meta: &mut GameMeta) -> Value {
    let mut out = header(game_id, rec);
    let mut game = match Game::new(rec.spec.variant, &rec.spec.settings) {
        Ok(g) => g,
        Err(e) => {
            let note = format!("the game cannot be set up: {e}");
            out.insert("note".into(), note.clone().into());
            out.insert("decisions".into(), 0.into());
            meta.note = Some(note);
            return Value::Object(out);
        }
    };
    let mut buf = Vec::new();
    let mut cells = Cells::new();
    let mut prev = put_start(chunk, &game, &mut buf, &mut cells);
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
        put_decision(chunk, d, kind, &legal);
        buf.clear();
        game.write_snapshot(&mut buf);
        chunk.flatten(&buf, &mut cells);
        put_diff(chunk, &mut prev, &buf, &cells);
    }
    out.insert("decisions".into(), decisions.into());
    out.insert("positions".into(), true.into());
    // The options at the last position, when a decision is still due
    // there (a forfeit, a damaged record).
    if game.to_decide().is_some() {
        out.insert("legal_end".into(), json!(game.legal()));
    }
    if meta.note.is_none() && !rec.state.is_null() {
        check_final(rec, chunk, &mut cells, &mut prev, &mut out, meta);
    }
    Value::Object(out)
}

/// A game's header for the viewer: its id, variant, players, options,
/// seed, notes and how it ended.
fn header(game_id: &str, rec: &Recorded) -> Map<String, Value> {
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
    out
}

/// The first position's cells (in path order) into `chunk`; returns each
/// cell's text, the base of the next position's differences.
fn put_start(chunk: &mut Chunk, game: &Game, buf: &mut Vec<u8>, cells: &mut Cells) -> Vec<String> {
    game.write_snapshot(buf);
    chunk.flatten(buf, cells);
    let present: Vec<usize> = (0..cells.len()).filter(|&k| cells[k].is_some()).collect();
    chunk.put(START, present.len() as u64);
    let mut last = -1i64;
    for &k in &present {
        chunk.put(START, (k as i64 - last - 1) as u64);
        last = k as i64;
        let i = chunk.value(text_of(buf, cells, k));
        chunk.put(START, i as u64);
    }
    (0..cells.len())
        .map(|k| text_of(buf, cells, k).to_string())
        .collect()
}

/// One decision into `chunk`: its seat and flags, its kind, the options
/// listed, the one played, and its time (neither forced nor an opening's).
fn put_decision(chunk: &mut Chunk, d: &DecisionRecord, kind: &str, legal: &[String]) {
    let flags = u64::from(d.forced) + 2 * u64::from(d.opening);
    chunk.put(DEC, d.seat as u64 * 4 + flags);
    let k = chunk.value(&Value::from(kind).to_string());
    chunk.put(DEC, k as u64);
    chunk.put(LEGAL, legal.len() as u64);
    let mut last = -1i64;
    for o in legal {
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
}

/// The position after the last decision must be the record's (compared
/// as values: the record's text is serde_json's); when it is not, the
/// record's cells and a note go into the game's data.
fn check_final(
    rec: &Recorded,
    chunk: &mut Chunk,
    cells: &mut Cells,
    prev: &mut Vec<String>,
    out: &mut Map<String, Value>,
    meta: &mut GameMeta,
) {
    let text = rec.state.to_string().into_bytes();
    chunk.flatten(&text, cells);
    prev.resize(cells.len(), String::new());
    let value = |t: &str| serde_json::from_str::<Value>(t).unwrap_or(Value::Null);
    let end: Vec<Value> = (0..cells.len())
        .map(|k| value(text_of(&text, cells, k)))
        .collect();
    if prev.iter().zip(&end).any(|(p, e)| value(p) != *e) {
        let note = "the replayed game does not reach the record's final state".to_string();
        out.insert("final".into(), Value::Array(end));
        out.insert("note".into(), note.clone().into());
        meta.note = Some(note);
    }
}

/// Cell `k`'s text in `text` (empty when absent).
fn text_of<'a>(text: &'a [u8], cells: &Cells, k: usize) -> &'a str {
    cells
        .get(k)
        .copied()
        .flatten()
        .and_then(|(s, e)| text.get(s..e))
        .and_then(|t| std::str::from_utf8(t).ok())
        .unwrap_or("")
}

/// Writes the cells of the position `text` (`cells`) that differ from
/// `prev` (each cell's text, empty when absent) into the `diff` stream (a
/// whole number's change as such, anything else by value index); `prev`
/// becomes this position.
fn put_diff(chunk: &mut Chunk, prev: &mut Vec<String>, text: &[u8], cells: &Cells) {
    if prev.len() < cells.len() {
        prev.resize(cells.len(), String::new());
    }
    let changed: Vec<usize> = (0..prev.len())
        .filter(|&k| prev[k] != text_of(text, cells, k))
        .collect();
    chunk.put(DIFF, changed.len() as u64);
    let mut last = -1i64;
    for k in changed {
        chunk.put(DIFF, (k as i64 - last - 1) as u64);
        last = k as i64;
        let next = text_of(text, cells, k);
        // A change of a whole number that fits the page's numbers.
        let change = match (prev[k].parse::<i64>(), next.parse::<i64>()) {
            (Ok(a), Ok(b)) => b.checked_sub(a).filter(|d| d.unsigned_abs() < 1 << 50),
            _ => None,
        };
        let code = match change {
            Some(d) => 2 * zigzag(d),
            None => 2 * chunk.value(next) as u64 + 1,
        };
        chunk.put(DIFF, code);
        prev[k].clear();
        prev[k].push_str(next);
    }
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

    /// `state` as path -> value, as the viewer finds it: objects walked,
    /// arrays of numbers too, the rest values (written here on JSON
    /// values, apart from `Flattener`'s bytes).
    fn paths(state: &Value) -> BTreeMap<String, Value> {
        fn numbers(v: &Value) -> bool {
            match v {
                Value::Number(_) => true,
                Value::Array(a) => !a.is_empty() && a.iter().all(numbers),
                _ => false,
            }
        }
        fn walk(v: &Value, prefix: &str, out: &mut BTreeMap<String, Value>) {
            let at = |k: &str| {
                if prefix.is_empty() {
                    k.to_string()
                } else {
                    format!("{prefix}.{k}")
                }
            };
            match v {
                Value::Object(m) => m.iter().for_each(|(k, x)| walk(x, &at(k), out)),
                Value::Array(a) if numbers(v) => a
                    .iter()
                    .enumerate()
                    .for_each(|(k, x)| walk(x, &at(&k.to_string()), out)),
                Value::Null => {}
                other => {
                    out.insert(prefix.to_string(), other.clone());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(state, "", &mut out);
        out
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
