//! Bot protocol v1: the message types (serde) and the line codec.
//!
//! Owns the wire format and nothing else: no processes (see [`crate::bot`]),
//! no rules (see [`crate::engine`]), no game flow (see [`crate::referee`]).
//! `protocol.md` at the repository root is the public description; keep the
//! two in step.
//!
//! Every message is one JSON object on one line (UTF-8, `\n`-terminated)
//! with a `type` field. The referee sends [`ToBot`] messages; the bot sends
//! [`FromBot`] messages. New message types and new fields may be added
//! within version 1: bots must ignore what they do not know, and the
//! referee ignores unknown fields in what bots send.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The protocol version this referee speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// Default cap on the length of one line sent by a bot (bytes, newline
/// excluded). A bot's lines are short (a hello, an option); anything longer
/// is a fault (`line_too_long`).
pub const DEFAULT_MAX_LINE: usize = 64 * 1024;

/// Deepest nesting of arrays and objects accepted in a bot's line (the JSON
/// parser's recursion limit); protocol.md states it.
pub const MAX_NESTING: usize = 127;

/// One decision as the bots see it (in `since` of a request and in records).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionMsg {
    pub seat: usize,
    pub ply: u32,
    pub option: String,
    /// Applied without asking anyone: the only option, or part of the
    /// opening.
    pub forced: bool,
    /// Part of the game's opening (then `forced` is true too). Added in
    /// protocol 1 without breaking it: older bots ignore it.
    #[serde(default)]
    pub opening: bool,
}

/// The time control as announced at game start (milliseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeMsg {
    /// Longest time for one decision.
    pub per_decision_ms: u64,
    /// Per-game clock: starting time (absent: no clock).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub base_ms: Option<u64>,
    /// Per-game clock: time added after each decision.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub increment_ms: Option<u64>,
}

/// Messages from the referee to a bot.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToBot<'a> {
    /// First message after start; the bot answers with [`FromBot::Hello`].
    Hello {
        protocol: u32,
        /// The games this referee may ask for.
        games: &'a [&'a str],
    },
    /// A new game begins; no answer expected.
    GameStart {
        game_id: &'a str,
        variant: &'a str,
        players: usize,
        /// Game-specific options (`KEY=VALUE` settings) and `max_plies`.
        options: &'a BTreeMap<String, String>,
        max_plies: u32,
        /// This bot's seat (0 decides first).
        seat: usize,
        /// The player names, by seat.
        names: &'a [String],
        time: TimeMsg,
        /// The game's seed for the bots' randomness: an unsigned 64-bit
        /// integer as a decimal string (every language can read it).
        seed: String,
    },
    /// The bot must answer with [`FromBot::Reply`].
    Request {
        game_id: &'a str,
        /// This request's number in the bot process's life (1, 2, ...): a
        /// reply may echo it as `seq`, and is then checked against it.
        seq: u64,
        ply: u32,
        /// The full state (the engine's snapshot).
        state: &'a serde_json::Value,
        /// The legal options, in canonical notation.
        legal: &'a [String],
        /// Every decision made since this bot's previous request in this game
        /// (or since the start of the game): others' decisions, forced ones
        /// and the opening included, in order.
        since: &'a [DecisionMsg],
        /// Time allowed for this decision.
        timeout_ms: u64,
        /// Remaining per-game clock before this decision (absent: no clock).
        #[serde(skip_serializing_if = "Option::is_none")]
        time_left_ms: Option<u64>,
    },
    /// The game is over; no answer expected.
    GameEnd {
        game_id: &'a str,
        /// Scores by seat (1 win, 0.5 draw, 0 loss; averaged pairwise for 3).
        scores: &'a [f64],
        /// The engine's end reason or the forfeit kind.
        reason: &'a str,
        /// The seat that forfeited, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        offender: Option<usize>,
        /// Decisions since this bot's last request.
        since: &'a [DecisionMsg],
        state: &'a serde_json::Value,
    },
    /// The bot should exit (status 0) promptly.
    Quit {},
}

/// Messages from a bot to the referee.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromBot {
    /// Answer to the referee's hello.
    Hello {
        name: String,
        #[serde(default, deserialize_with = "text_or_null")]
        version: String,
        #[serde(default, deserialize_with = "text_or_null")]
        author: String,
        /// The protocol version the bot speaks (absent: 1).
        #[serde(default, deserialize_with = "whole_number")]
        protocol: Option<u32>,
    },
    /// Answer to a request: one of the legal options, exactly.
    Reply {
        option: String,
        /// Optional echo of the request's `game_id`: if present it must
        /// match (a reply meant for another request is a fault).
        #[serde(default)]
        game_id: Option<String>,
        /// Optional echo of the request's `ply`, checked the same way.
        #[serde(default, deserialize_with = "whole_number")]
        ply: Option<u32>,
        /// Optional echo of the request's `seq`, checked the same way (the
        /// one echo that names a request exactly).
        #[serde(default, deserialize_with = "whole_number")]
        seq: Option<u64>,
    },
}

/// An optional string: `null` is absent, as for every optional field
/// (Python's `None`, a language's empty value).
fn text_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// A whole number as JSON may write it: `1`, `1.0` or `1e0` (JSON does
/// not tell them apart, and Python's `json.dumps(1.0)` writes `1.0`);
/// `null` is absent.
fn whole_number<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    use serde::de::Error;
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    as_whole(&n)
        .and_then(|w| T::try_from(w).ok())
        .map(Some)
        .ok_or_else(|| D::Error::custom(format!("`{n}` is not a whole number in range")))
}

/// `n` as a whole number 0 or more, as JSON may write it (`3`, `3.0`,
/// `3e0`); `None` for a fraction, a negative number or one past `u64`
/// (`u64::MAX as f64` is 2^64 itself, past it: the range is half-open).
/// A double holds what the bot wrote only roughly: [`inexact_whole`]
/// judges the number as written.
fn as_whole(n: &serde_json::Number) -> Option<u64> {
    n.as_u64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..u64::MAX as f64).contains(f))
            .map(|f| f as u64)
    })
}

/// Why a number, as written, is not a whole number of `u64`.
#[derive(Debug, PartialEq, Eq)]
enum Inexact {
    Fraction,
    Negative,
    TooLarge,
}

/// The JSON number `text` as a whole number, exactly as written (digits,
/// fraction and exponent read as decimals, not through a double, which
/// takes `1.9999999999999999999` for 2 and `18446744073709551616` for
/// 2^64): `3`, `3.0`, `30e-1` and `-0` are whole, `1.5` and
/// `1.9999999999999999999` are not.
fn exact_whole(text: &str) -> Result<u64, Inexact> {
    let (negative, t) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let (mantissa, exp) = t.split_once(['e', 'E']).unwrap_or((t, "0"));
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = [int, frac].concat();
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    if negative {
        return Err(Inexact::Negative);
    }
    let significant = digits.trim_end_matches('0');
    // An exponent beyond i64: a tiny fraction, or a number past any range.
    let exp: i64 = exp.parse().map_err(|_| match exp.starts_with('-') {
        true => Inexact::Fraction,
        false => Inexact::TooLarge,
    })?;
    // The value is `significant` times ten to the `shift`.
    let shift = exp
        .saturating_sub(frac.len() as i64)
        .saturating_add((digits.len() - significant.len()) as i64);
    if shift < 0 {
        return Err(Inexact::Fraction);
    }
    if significant.len() as i64 + shift > 20 {
        return Err(Inexact::TooLarge);
    }
    let n: u64 = significant.parse().map_err(|_| Inexact::TooLarge)?;
    (0..shift).try_fold(n, |n, _| n.checked_mul(10).ok_or(Inexact::TooLarge))
}

/// A whole-number field of a bot's message (`seq`, `ply`, `protocol`)
/// whose number, as the bot wrote it, is not a whole number in the
/// field's range, though a double takes it for one (`1.9999999999999999999`
/// is 2 to it; `18446744073709551616`, one past `u64`, would be read as
/// `u64::MAX`, another request's `seq`), or which a double does not hold
/// exactly: what is wrong, with the number as written. `None` when every
/// such field is right, or holds no number a double holds (a string,
/// `null`, `1e400`: judged as the message is), or the line is no JSON
/// object.
fn inexact_whole(line: &[u8]) -> Option<String> {
    use serde_json::value::RawValue;
    let fields: BTreeMap<String, &RawValue> = serde_json::from_slice(line).ok()?;
    let kind: String = serde_json::from_str(fields.get("type")?.get()).ok()?;
    fields_of(&kind).iter().find_map(|&(name, want)| {
        let Want::Whole(max) = want else {
            return None;
        };
        let text = fields.get(name)?.get();
        let double = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
        let number = Some(&serde_json::Value::from(0));
        // Digits alone are read exactly; a fraction or an exponent makes
        // a double of the number, which must then be the number itself.
        let plain = text.bytes().all(|b| b.is_ascii_digit());
        let read = serde_json::Number::from_f64(double).and_then(|d| as_whole(&d));
        let why = match exact_whole(text) {
            Ok(n) if n <= max && (plain || read == Some(n)) => return None,
            Ok(n) if n <= max => {
                ": write it as digits alone (a double does not hold it exactly)".to_string()
            }
            Ok(_) | Err(Inexact::TooLarge) => {
                return Some(format!(
                    "`{name}` must be a whole number from 0 to {max}, got {}",
                    truncate(text.as_bytes(), 40)
                ))
            }
            // Said, since a language that reads numbers as doubles shows
            // the bot a whole number.
            Err(Inexact::Fraction) if double.fract() == 0.0 => {
                format!(": a fraction, though a double rounds it to {double}")
            }
            Err(Inexact::Fraction | Inexact::Negative) => String::new(),
        };
        Some(format!(
            "`{name}` must be {}, got {}{why}",
            want.said(number),
            truncate(text.as_bytes(), 40)
        ))
    })
}

/// A reply read as a plain struct: serde reads an internally tagged enum
/// (`FromBot`) by first buffering every field of the object, which cost
/// more than the rest of reading a reply. `None` for anything else (a
/// hello, a reply with an escape in its `type`, a duplicate or mistyped
/// field, anything nested): [`decode`] then reads the line as `FromBot`,
/// which decides.
/// Where this says `Some`, `FromBot` reads the same reply.
fn usual_reply(line: &[u8]) -> Option<FromBot> {
    #[derive(Deserialize)]
    struct Flat<'a> {
        #[serde(rename = "type", borrow)]
        kind: &'a str,
        option: Option<String>,
        #[serde(default)]
        game_id: Option<String>,
        // Plain numbers here: `3.0` fails this reading, and the enum's,
        // which takes it, decides.
        #[serde(default)]
        ply: Option<u32>,
        #[serde(default)]
        seq: Option<u64>,
    }
    // Only a flat object: serde_json skips a nested unknown field without
    // its depth limit, which the enum's reading enforces.
    if line.iter().filter(|&&b| b == b'{' || b == b'[').count() != 1 {
        return None;
    }
    let flat: Flat<'_> = serde_json::from_slice(line).ok()?;
    match (flat.kind, flat.option) {
        ("reply", Some(option)) => Some(FromBot::Reply {
            option,
            game_id: flat.game_id,
            ply: flat.ply,
            seq: flat.seq,
        }),
        _ => None,
    }
}

/// A message read field by field, its unknown fields skipped unread, for
/// a line the enum's reading refused as JSON: the enum holds every field
/// before it knows the type, and cannot hold what JSON allows but Rust's
/// values do not (a number beyond `f64`, `1e400`; a lone surrogate,
/// `"\ud800"`). In a field the protocol does not know, that is not the
/// bot's fault, at the top level ([`usual_reply`] skips it) or nested.
/// `None` when the line is not such a message (the enum's error stands);
/// only for UTF-8 lines whose depth the enum accepted.
fn skipping_unknown(line: &[u8]) -> Option<FromBot> {
    #[derive(Deserialize)]
    struct Fields {
        #[serde(rename = "type")]
        kind: String,
        name: Option<String>,
        version: Option<String>,
        author: Option<String>,
        #[serde(default, deserialize_with = "whole_number")]
        protocol: Option<u32>,
        option: Option<String>,
        game_id: Option<String>,
        #[serde(default, deserialize_with = "whole_number")]
        ply: Option<u32>,
        #[serde(default, deserialize_with = "whole_number")]
        seq: Option<u64>,
    }
    std::str::from_utf8(line).ok()?;
    let f: Fields = serde_json::from_slice(line).ok()?;
    match f.kind.as_str() {
        "hello" => Some(FromBot::Hello {
            name: f.name?,
            version: f.version.unwrap_or_default(),
            author: f.author.unwrap_or_default(),
            protocol: f.protocol,
        }),
        "reply" => Some(FromBot::Reply {
            option: f.option?,
            game_id: f.game_id,
            ply: f.ply,
            seq: f.seq,
        }),
        _ => None,
    }
}

/// Why a line from a bot is not a message we expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not JSON at all (or not UTF-8).
    #[error("not JSON: {0}")]
    BadJson(String),
    /// JSON, but not a message of the protocol (wrong shape, unknown type,
    /// missing field).
    #[error("not a protocol message: {0}")]
    Protocol(String),
}

/// Appends `msg` as one JSON line (with the trailing newline) to `buf`.
pub fn encode_into(msg: &ToBot<'_>, buf: &mut Vec<u8>) {
    // Serializing these types cannot fail: every map key is a string and
    // every number is finite (scores are 0, 0.5 or 1).
    if serde_json::to_writer(&mut *buf, msg).is_err() {
        buf.extend_from_slice(b"{\"type\":\"error\"}");
    }
    buf.push(b'\n');
}

/// The name of a field no version of the protocol sends, and the type of
/// a message none sends: `arena check-bot` sends both, as a later version
/// might send new ones, to see a bot ignore what it does not know
/// (protocol.md, "Versioning").
pub const UNKNOWN: &str = "x_future";

/// Adds to the message `buf` ends with (one line, as [`encode_into`] and
/// [`encode_request`] write it) a field named [`UNKNOWN`], last.
pub fn add_unknown_field(buf: &mut Vec<u8>) {
    if buf.ends_with(b"}\n") {
        buf.truncate(buf.len() - 2);
        buf.extend_from_slice(b",\"");
        buf.extend_from_slice(UNKNOWN.as_bytes());
        buf.extend_from_slice(br#"":{"note":"a field of a later version","values":[1,2.5,null]}}"#);
        buf.push(b'\n');
    }
}

/// Appends a message of type [`UNKNOWN`] about game `game_id` (one line).
pub fn encode_unknown_message(game_id: &str, buf: &mut Vec<u8>) {
    let msg = serde_json::json!({
        "type": UNKNOWN,
        "game_id": game_id,
        "note": "a message of a later version",
    });
    if serde_json::to_writer(&mut *buf, &msg).is_ok() {
        buf.push(b'\n');
    }
}

/// A request's fields but its state (see [`ToBot::Request`]).
pub struct RequestMsg<'a> {
    pub game_id: &'a str,
    pub seq: u64,
    pub ply: u32,
    pub legal: &'a [String],
    pub since: &'a [DecisionMsg],
    pub timeout_ms: u64,
    pub time_left_ms: Option<u64>,
}

/// Appends a request as one JSON line to `buf`, its state written by
/// `state` (a game's [`write_snapshot`](crate::engine::Game::write_snapshot)):
/// the bytes [`encode_into`] writes for the same [`ToBot::Request`], without
/// a `serde_json::Value` of the state. The referee sends one per decision.
pub fn encode_request(r: &RequestMsg<'_>, state: impl FnOnce(&mut Vec<u8>), buf: &mut Vec<u8>) {
    use crate::engine::json::{string, uint};
    buf.extend_from_slice(br#"{"type":"request","game_id":"#);
    string(buf, r.game_id);
    buf.extend_from_slice(br#","seq":"#);
    uint(buf, r.seq);
    buf.extend_from_slice(br#","ply":"#);
    uint(buf, u64::from(r.ply));
    buf.extend_from_slice(br#","state":"#);
    state(buf);
    buf.extend_from_slice(br#","legal":["#);
    for (i, option) in r.legal.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        string(buf, option);
    }
    buf.extend_from_slice(br#"],"since":["#);
    for (i, d) in r.since.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(br#"{"seat":"#);
        uint(buf, d.seat as u64);
        buf.extend_from_slice(br#","ply":"#);
        uint(buf, u64::from(d.ply));
        buf.extend_from_slice(br#","option":"#);
        string(buf, &d.option);
        buf.extend_from_slice(match d.forced {
            true => br#","forced":true"#.as_slice(),
            false => br#","forced":false"#.as_slice(),
        });
        buf.extend_from_slice(match d.opening {
            true => br#","opening":true}"#.as_slice(),
            false => br#","opening":false}"#.as_slice(),
        });
    }
    buf.extend_from_slice(br#"],"timeout_ms":"#);
    uint(buf, r.timeout_ms);
    if let Some(left) = r.time_left_ms {
        buf.extend_from_slice(br#","time_left_ms":"#);
        uint(buf, left);
    }
    buf.extend_from_slice(b"}\n");
}

/// Decodes one line sent by a bot (without its newline). Surrounding JSON
/// white space (a trailing `\r` of CRLF line endings included) and one
/// leading UTF-8 byte order mark are accepted. A line that is not UTF-8
/// is not JSON, though the bytes that are not are in a field the protocol
/// ignores (which the decoder skips unread).
pub fn decode(line: &[u8]) -> Result<FromBot, DecodeError> {
    let m = decode_message(line);
    match (m, std::str::from_utf8(line)) {
        (Ok(m), Ok(_)) => Ok(m),
        // Not UTF-8 is said so, however serde_json words it ("invalid
        // unicode code point" inside a string).
        (Ok(_) | Err(DecodeError::BadJson(_)), Err(e)) => Err(DecodeError::BadJson(format!(
            "not UTF-8: byte {} of the line is not part of a UTF-8 character",
            e.valid_up_to() + 1
        ))),
        (Err(e), _) => Err(e),
    }
}

/// The `type` a line's object states, when it is JSON with a string
/// there, whether or not it is a message: what a line was meant to be.
pub fn stated_type(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        kind: String,
    }
    serde_json::from_slice::<Typed>(without_bom(line))
        .ok()
        .map(|t| t.kind)
}

/// `line` without the one byte-order mark a line may begin with.
fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// [`decode`], the line's bytes taken as they come.
fn decode_message(line: &[u8]) -> Result<FromBot, DecodeError> {
    let line = without_bom(line);
    let first = line
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    if first != Some(&b'{') {
        // serde would take an array for a tagged sequence (`["reply","G"]`):
        // only an object is a message.
        return Err(
            match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
                Ok(_) => DecodeError::Protocol(not_an_object(line)),
                Err(e) if is_too_deep(&e) => too_deep(&e),
                Err(e) => DecodeError::BadJson(said(&e)),
            },
        );
    }
    if let Some(reply) = usual_reply(line) {
        return Ok(reply);
    }
    if let Some(problem) = inexact_whole(line) {
        return Err(DecodeError::Protocol(problem));
    }
    match serde_json::from_slice::<FromBot>(line) {
        Ok(m) => Ok(m),
        Err(e) => {
            if is_too_deep(&e) {
                Err(too_deep(&e))
            } else if let Some(m) = e.is_syntax().then(|| skipping_unknown(line)).flatten() {
                Ok(m)
            } else if let Some(r) = out_of_range(line, &e) {
                r
            } else if e.is_syntax() || e.is_eof() || std::str::from_utf8(line).is_err() {
                Err(DecodeError::BadJson(said(&e)))
            } else if let Err(j) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
                // A message's type read before the line breaks
                // (`{"type":"re{"type":...`): the message's error is
                // its shape's, the line's that it is not JSON.
                Err(DecodeError::BadJson(said(&j)))
            } else {
                Err(DecodeError::Protocol(shape_problem(line, &e)))
            }
        }
    }
}

/// What a JSON value that is not an object (`line`) is told: a string
/// that holds a message's object is that message encoded twice
/// (`json.dumps(json.dumps(m))`), said so; anything else, that it is not
/// an object.
fn not_an_object(line: &[u8]) -> String {
    let twice = serde_json::from_slice::<String>(line)
        .ok()
        .and_then(|inner| serde_json::from_str::<serde_json::Value>(&inner).ok())
        .is_some_and(|v| v.is_object());
    match twice {
        true => {
            "a JSON string holding a JSON object: the message was encoded twice (encode it once)"
                .into()
        }
        false => "not a JSON object".into(),
    }
}

/// How `got` is `name` (lower case, as every name of the protocol)
/// written otherwise: in another case (`Option`, as Go's and C#'s
/// serializers write a field by default) or with white space around it.
/// `None` when it is `name` itself or another name.
fn how_written_otherwise(got: &str, name: &str) -> Option<&'static str> {
    if got == name {
        None
    } else if got.eq_ignore_ascii_case(name) {
        Some("in lower case")
    } else if got.trim().eq_ignore_ascii_case(name) {
        Some("without white space")
    } else {
        None
    }
}

/// The key of `v` (an object) that is `name` written otherwise, with how
/// to write it ([`how_written_otherwise`]).
fn key_written_otherwise<'v>(
    v: &'v serde_json::Value,
    name: &str,
) -> Option<(&'v str, &'static str)> {
    let mut keys = v.as_object()?.keys();
    keys.find_map(|k| how_written_otherwise(k, name).map(|how| (k.as_str(), how)))
}

/// For a message type `t` the protocol does not know, the one it knows
/// that `t` is written otherwise (`Reply`, ` reply`), with how to write
/// it.
fn type_written_otherwise(t: &str) -> Option<(&'static str, &'static str)> {
    ["hello", "reply"]
        .into_iter()
        .find_map(|known| how_written_otherwise(t, known).map(|how| (known, how)))
}

/// What a field of a bot's message must hold.
#[derive(Clone, Copy)]
enum Want {
    Text,
    /// A whole number from 0 to this.
    Whole(u64),
}

impl Want {
    fn fits(self, got: &serde_json::Value) -> bool {
        match self {
            Want::Text => got.is_string(),
            Want::Whole(max) => got.as_number().and_then(as_whole).is_some_and(|n| n <= max),
        }
    }

    /// What it must be, said of `got`, which is not that: the range of a
    /// number only to a number.
    fn said(self, got: Option<&serde_json::Value>) -> String {
        match self {
            Want::Text => "a string".into(),
            Want::Whole(_) if !got.is_some_and(serde_json::Value::is_number) => {
                "a whole number".into()
            }
            Want::Whole(u64::MAX) => "a whole number, 0 or more".into(),
            Want::Whole(max) => format!("a whole number from 0 to {max}"),
        }
    }
}

/// The fields of a bot's message of type `kind` ([`FromBot`]'s), and what
/// each must hold; none for a type the protocol does not know. The first
/// is required.
fn fields_of(kind: &str) -> &'static [(&'static str, Want)] {
    const WHOLE_U32: Want = Want::Whole(u32::MAX as u64);
    match kind {
        "hello" => &[
            ("name", Want::Text),
            ("version", Want::Text),
            ("author", Want::Text),
            ("protocol", WHOLE_U32),
        ],
        "reply" => &[
            ("option", Want::Text),
            ("game_id", Want::Text),
            ("ply", WHOLE_U32),
            ("seq", Want::Whole(u64::MAX)),
        ],
        _ => &[],
    }
}

/// What is wrong with a JSON object that is not a bot's message, in the
/// protocol's words (message types and fields, not the decoder's).
fn shape_problem(line: &[u8], e: &serde_json::Error) -> String {
    // A number out of range in a field (the type's error came first) is
    // skipped with the other fields the type does not know.
    let v = serde_json::from_slice(line)
        .ok()
        .or_else(|| known_fields(line).ok().map(serde_json::Value::Object))
        .unwrap_or_default();
    shape_problem_of(&v, e)
}

/// [`shape_problem`] of the object `v`, which `e` refused.
fn shape_problem_of(v: &serde_json::Value, e: &serde_json::Error) -> String {
    match v.get("type") {
        None => match key_written_otherwise(v, "type") {
            Some((key, how)) => format!(
                "no `type` field but `{}`: field names are exact (write `type`, {how})",
                truncate(key.as_bytes(), 40)
            ),
            None => "no `type` field (a bot sends `hello` or `reply` messages)".into(),
        },
        Some(serde_json::Value::String(t)) if t != "hello" && t != "reply" => {
            match type_written_otherwise(t) {
                Some((known, how)) => format!(
                    "unknown message type `{}`: types are exact (write `{known}`, {how})",
                    truncate(t.as_bytes(), 40)
                ),
                None => format!(
                    "unknown message type `{}` (a bot sends only `hello` and `reply`)",
                    truncate(t.as_bytes(), 40)
                ),
            }
        }
        Some(serde_json::Value::String(t)) => {
            // serde's type errors do not say which field: the message's
            // own fields are looked at by name (a `null` is absent, which
            // only a required field, the first, cannot be).
            let wrong = fields_of(t)
                .iter()
                .enumerate()
                .find_map(|(i, &(field, want))| {
                    let got = v.get(field).filter(|g| i == 0 || !g.is_null())?;
                    (!want.fits(got)).then(|| {
                        // A number for a string (an option's label `3`
                        // written bare): how it is written.
                        let quoted = match (want, got) {
                            (Want::Text, serde_json::Value::Number(n)) => {
                                format!(" (a string is in quotes: \"{n}\")")
                            }
                            _ => String::new(),
                        };
                        format!(
                            "`{field}` must be {}, got {}{quoted}",
                            want.said(Some(got)),
                            truncate(got.to_string().as_bytes(), 40)
                        )
                    })
                });
            // A required field missing, and there written otherwise
            // (`Option`): said so, not merely missing.
            let otherwise = fields_of(t).first().and_then(|&(field, _)| {
                let missing = v.get(field).is_none_or(serde_json::Value::is_null);
                let (key, how) = key_written_otherwise(v, field).filter(|_| missing)?;
                Some(format!(
                    "missing field `{field}` but `{}`: field names are exact (write `{field}`, {how})",
                    truncate(key.as_bytes(), 40)
                ))
            });
            match (wrong, otherwise) {
                // serde's words say the same, less well (and would cut
                // the detail short).
                (Some(w), _) => w,
                (None, Some(o)) => o,
                (None, None) => said(e),
            }
        }
        Some(t) => format!(
            "`type` must be a string, got {}",
            truncate(t.to_string().as_bytes(), 40)
        ),
    }
}

/// A line that is JSON but holds a number beyond what any number type
/// holds (`1e400`: JSON's grammar allows it), which serde_json refuses as
/// it reads, as if the line were not JSON. In a field of the message's
/// own, it is a wrong value, that field's (`protocol`), not broken JSON;
/// in a field the protocol does not know, it is skipped, and the rest of
/// the message judged. `None`: not such a line (the error `e` stands).
fn out_of_range(line: &[u8], e: &serde_json::Error) -> Option<Result<FromBot, DecodeError>> {
    if !is_out_of_range(&e.to_string()) || std::str::from_utf8(line).is_err() {
        return None;
    }
    let known = match known_fields(line) {
        Ok(known) => known,
        Err(Some((field, want))) => {
            return Some(Err(DecodeError::Protocol(format!(
                "`{field}` must be {}, got a number out of range (beyond any number type: {})",
                want.said(None),
                said(e)
            ))))
        }
        Err(None) => return None,
    };
    let v = serde_json::Value::Object(known);
    Some(
        serde_json::from_value::<FromBot>(v.clone())
            .map_err(|e| DecodeError::Protocol(shape_problem_of(&v, &e))),
    )
}

/// The object `line` with only its `type` and the fields of that type
/// ([`fields_of`]), every other field skipped unread (a number in it is
/// not parsed). `Err(Some(field))`: that field holds a number out of
/// range; `Err(None)`: not such an object (or not JSON).
fn known_fields(
    line: &[u8],
) -> Result<serde_json::Map<String, serde_json::Value>, Option<(String, Want)>> {
    #[derive(Deserialize)]
    struct Kind {
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    let kind = serde_json::from_slice::<Kind>(line).map_err(|_| None)?.kind;
    let fields = fields_of(kind.as_deref().unwrap_or(""));
    let mut culprit = None;
    let mut de = serde_json::Deserializer::from_slice(line);
    let known = serde::de::DeserializeSeed::deserialize(
        KnownFields {
            fields,
            culprit: &mut culprit,
        },
        &mut de,
    )
    .and_then(|m| de.end().map(|()| m));
    if let Some(field) = culprit {
        let want = fields
            .iter()
            .find(|f| f.0 == field)
            .map_or(Want::Text, |f| f.1);
        return Err(Some((field, want)));
    }
    known.map_err(|_| None)
}

/// serde_json's error for a number beyond `f64` (`1e400`).
fn is_out_of_range(e: &str) -> bool {
    e.starts_with("number out of range")
}

/// A message's object read for its `type` and the fields of that type
/// ([`fields_of`]), every other field skipped unread; the field whose
/// number is out of range ([`out_of_range`]) is put in `culprit`.
struct KnownFields<'a> {
    fields: &'static [(&'static str, Want)],
    culprit: &'a mut Option<String>,
}

impl<'de> serde::de::DeserializeSeed<'de> for KnownFields<'_> {
    type Value = serde_json::Map<String, serde_json::Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KnownFields<'_> {
    type Value = serde_json::Map<String, serde_json::Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = m.next_key::<String>()? {
            if key != "type" && !self.fields.iter().any(|f| f.0 == key) {
                m.next_value::<serde::de::IgnoredAny>()?;
                continue;
            }
            match m.next_value::<serde_json::Value>() {
                Ok(v) => {
                    out.insert(key, v);
                }
                Err(e) => {
                    if is_out_of_range(&e.to_string()) {
                        *self.culprit = Some(key);
                    }
                    return Err(e);
                }
            }
        }
        Ok(out)
    }
}

/// serde_json's words for `e`, its place as a column of the bot's line
/// (serde's "line 1" is always the first of the one line decoded, which
/// is not the bot's first line of output).
fn said(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rsplit_once(" at line ") {
        Some((what, _)) if e.line() == 1 => format!("{what} at column {}", e.column()),
        _ => s,
    }
}

/// serde_json's recursion limit is [`MAX_NESTING`] levels.
fn is_too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

fn too_deep(e: &serde_json::Error) -> DecodeError {
    DecodeError::BadJson(format!(
        "JSON nested deeper than {MAX_NESTING} levels, the protocol's limit (at column {})",
        e.column()
    ))
}

pub use crate::text::is_hidden;

/// A bot's lines (the end of its stderr) to print: every hidden character
/// ([`is_hidden`]) but line ends and tabs written as `\r` or `\u{1b}`, so
/// that the bot cannot move the cursor back, clear the screen or reorder
/// what follows.
pub fn escape_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => out.push_str("\\r"),
            c if is_hidden(c) => out.push_str(&unicode_escape(c)),
            c => out.push(c),
        }
    }
    out
}

/// `c` as Rust writes it escaped: `\u{1b}`.
fn unicode_escape(c: char) -> String {
    format!("\\u{{{:x}}}", c as u32)
}

/// Shortens a bot's text for a record or a terminal: at most `max` bytes
/// (cut at a char boundary), with `...` when cut; invalid UTF-8 is replaced
/// by U+FFFD and hidden characters ([`is_hidden`]) are written as `\n`,
/// `\r`, `\t` or `\u{1b}` (escape sequences, NUL, a bidirectional
/// override), so the result is one safe line. The limit applies to the
/// result, escapes included.
pub fn truncate(bytes: &[u8], max: usize) -> String {
    truncate_escaping(bytes, max, false)
}

/// A line a bot sent, for a fault's detail: [`truncate`], but a line with
/// nothing visible in it (white space other than ASCII's, a no-break space
/// U+00A0 or an ideographic space, and hidden characters, a byte-order
/// mark), or with such white space at either end (before its JSON),
/// has its white space but ASCII spaces written as escapes too
/// (`\u{a0}`): shown as itself, it would look blank, and the author would
/// not see what was sent.
pub fn shown_line(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    // White space at either end that is not ASCII's (a no-break space
    // before the JSON) looks like nothing there either.
    let unseen = |c: Option<char>| c.is_some_and(|c| c.is_whitespace() && !c.is_ascii());
    let escape_spaces = !text.is_empty()
        && (crate::text::shows_nothing(&text)
            || unseen(text.chars().next())
            || unseen(text.chars().next_back()));
    truncate_escaping(bytes, max, escape_spaces)
}

/// A text of the user's or a bot's (a word of a bot.toml's command, its
/// author) on one line, whole: [`truncate`] without the limit, so that
/// it can neither break the line nor send the terminal an escape
/// sequence.
pub fn escape_line(text: &str) -> String {
    text.chars().map(|c| escaped(c, false)).collect()
}

/// `c` as [`truncate`] shows it; `space`: white space but ASCII spaces
/// escaped too.
fn escaped(c: char, space: bool) -> String {
    match c {
        '\n' => "\\n".to_string(),
        '\r' => "\\r".to_string(),
        '\t' => "\\t".to_string(),
        c if is_hidden(c) => unicode_escape(c),
        c if space && c.is_whitespace() && c != ' ' => unicode_escape(c),
        c => c.to_string(),
    }
}

/// [`truncate`]; `space`: white space but ASCII spaces escaped too.
fn truncate_escaping(bytes: &[u8], max: usize, space: bool) -> String {
    // Every byte gives at least one char of output: no need to look further.
    let s = String::from_utf8_lossy(&bytes[..bytes.len().min(max + 1)]);
    let mut out = String::with_capacity(max.min(s.len()) + 8);
    for c in s.chars() {
        let piece = escaped(c, space);
        if out.len() + piece.len() > max {
            out.push_str("...");
            return out;
        }
        out.push_str(&piece);
    }
    if bytes.len() > max {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_decodes_and_ignores_unknown_fields() {
        let m = decode(br#"{"type":"reply","option":"G","think_ms":3}"#);
        assert_eq!(m, Ok(reply("G")));
    }

    /// What JSON allows in a field the protocol does not know is skipped,
    /// nested or not: a number beyond `f64`, a lone surrogate. Broken
    /// JSON stays broken.
    #[test]
    fn an_unknown_field_is_skipped_whatever_it_holds() {
        for line in [
            &br#"{"type":"reply","option":"G","x":1e400}"#[..],
            br#"{"type":"reply","option":"G","x":[1e400]}"#,
            br#"{"type":"reply","option":"G","x":{"y":"\ud800"},"seq":1.0}"#,
            br#"{"type":"reply","x":[-1e999],"option":"G"}"#,
        ] {
            let m = decode(line);
            assert!(
                matches!(&m, Ok(FromBot::Reply { option, .. }) if option == "G"),
                "{}: {m:?}",
                String::from_utf8_lossy(line)
            );
        }
        let m = decode(br#"{"type":"hello","name":"n","x":[1e400]}"#);
        assert!(
            matches!(&m, Ok(FromBot::Hello { name, .. }) if name == "n"),
            "{m:?}"
        );
        for broken in [
            &br#"{"type":"reply","option":"G","x":[1e400}"#[..],
            br#"{"type":"reply","option":"G","x":[1e400],}"#,
            b"{\"type\":\"reply\",\"option\":\"G\",\"x\":[\"\xff\"]}",
        ] {
            let m = decode(broken);
            assert!(
                matches!(m, Err(DecodeError::BadJson(_))),
                "{}: {m:?}",
                String::from_utf8_lossy(broken)
            );
        }
    }

    /// The plain-struct reading of a reply says what the tagged enum says,
    /// or leaves the line to it.
    #[test]
    fn the_usual_reply_reads_as_the_enum_reads_it() {
        let lines: &[&[u8]] = &[
            br#"{"type":"reply","option":"G"}"#,
            br#"{"option":"3a:NE","type":"reply","seq":7,"ply":4,"game_id":"g1"}"#,
            br#"{"type":"reply","option":"G\u0041","extra":[1,{"a":null}]}"#,
            br#"{"type":"reply","option":"G\u0041","extra":"[{"}"#,
            br#"{"type":"reply","option":"G\u0041","extra":true}"#,
            br#"{"type":"re\u0070ly","option":"G"}"#,
            br#"{"type":"reply","option":"G","option":"H"}"#,
            br#"{"type":"reply","type":"reply","option":"G"}"#,
            br#"{"type":"reply","option":null}"#,
            br#"{"type":"reply"}"#,
            br#"{"type":"reply","option":7}"#,
            br#"{"type":"reply","option":"G","ply":-1}"#,
            br#"{"type":"reply","option":"G","ply":null,"seq":null,"game_id":null}"#,
            br#"{"type":"reply","option":"G","seq":18446744073709551615}"#,
            br#"{"type":"reply","option":"G"} x"#,
            br#"{"type":"Reply","option":"G"}"#,
            br#"{"type":"hello","name":"x","option":"G"}"#,
            b"{\"type\":\"reply\",\"option\":\"G\"}\r",
            br#"{"type":"reply","option":"G","seq":3.0,"ply":4e0}"#,
            br#"{"type":"reply","option":"G","seq":3.5}"#,
        ];
        for line in lines {
            let enum_reads = serde_json::from_slice::<FromBot>(line).ok();
            if let Some(fast) = usual_reply(line) {
                assert_eq!(Some(fast), enum_reads, "{}", String::from_utf8_lossy(line));
            }
        }
        assert_eq!(
            usual_reply(br#"{"type":"reply","option":"G","seq":3}"#),
            Some(FromBot::Reply {
                option: "G".into(),
                game_id: None,
                ply: None,
                seq: Some(3),
            })
        );
    }

    /// A whole number may be written as JSON allows (`1.0`, `1e0`); a
    /// fraction or a negative one is named.
    #[test]
    fn a_field_of_the_wrong_type_is_named() {
        for (line, says) in [
            (
                &br#"{"type":"hello","name":"x","protocol":"1"}"#[..],
                "`protocol` must be a whole number, got \"1\"",
            ),
            (
                br#"{"type":"hello","name":"x","version":2}"#,
                "`version` must be a string, got 2",
            ),
            (
                br#"{"type":"reply","option":["A1"]}"#,
                "`option` must be a string, got [\"A1\"]",
            ),
        ] {
            let e = decode(line).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    /// `null` is an optional field left out (Python's `None`): a hello
    /// with `"version": null` is a hello. A required field that is `null`
    /// is named, as any other mistyped field.
    #[test]
    fn null_is_absent_and_a_missing_required_field_is_named() {
        let hello = decode(br#"{"type":"hello","name":"x","version":null,"author":null}"#);
        assert!(
            matches!(&hello, Ok(FromBot::Hello { version, author, .. })
                if version.is_empty() && author.is_empty()),
            "{hello:?}"
        );
        for (line, says) in [
            (
                &br#"{"type":"reply","option":null}"#[..],
                "`option` must be a string, got null",
            ),
            (
                br#"{"type":"hello","name":null,"version":"1"}"#,
                "`name` must be a string, got null",
            ),
            // Another message's field is not this one's problem.
            (
                br#"{"type":"reply","version":2,"option":3}"#,
                "`option` must be a string, got 3 (a string is in quotes: \"3\")",
            ),
        ] {
            let e = decode(line).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn whole_numbers_as_json_writes_them() {
        let hello = decode(br#"{"type":"hello","name":"x","protocol":1.0}"#).unwrap();
        assert!(
            matches!(
                hello,
                FromBot::Hello {
                    protocol: Some(1),
                    ..
                }
            ),
            "{hello:?}"
        );
        let r = decode(br#"{"type":"reply","option":"G","seq":3.0}"#).unwrap();
        assert!(matches!(r, FromBot::Reply { seq: Some(3), .. }), "{r:?}");
        for bad in [
            &br#"{"type":"reply","option":"G","seq":3.5}"#[..],
            br#"{"type":"reply","option":"G","seq":-1}"#,
            br#"{"type":"hello","name":"x","protocol":1e40}"#,
        ] {
            let e = decode(bad).unwrap_err().to_string();
            assert!(e.contains("must be a whole number"), "{e}");
        }
    }

    /// A whole number is read as the bot wrote it, not as a double rounds
    /// it (the faults of one that is not whole or in range are in
    /// `a_number_out_of_range_is_a_wrong_value_of_its_field`).
    #[test]
    fn a_number_a_double_rounds_is_judged_as_written() {
        let r = decode(br#"{"type":"reply","option":"G","seq":18446744073709551615,"ply":7e0}"#);
        assert_eq!(
            r,
            Ok(FromBot::Reply {
                option: "G".into(),
                game_id: None,
                ply: Some(7),
                seq: Some(u64::MAX),
            })
        );
        for (text, n) in [
            ("3", 3),
            ("3.0", 3),
            ("30e-1", 3),
            ("0.3E+1", 3),
            ("-0", 0),
            ("-0.0e5", 0),
            ("0e-99999999999999999999", 0),
            ("18446744073709551615", u64::MAX),
            ("1.8446744073709551615e19", u64::MAX),
        ] {
            assert_eq!(exact_whole(text), Ok(n), "{text}");
        }
        for (text, e) in [
            ("2.5", Inexact::Fraction),
            ("1.9999999999999999999", Inexact::Fraction),
            ("1e-99999999999999999999", Inexact::Fraction),
            ("-1", Inexact::Negative),
            ("18446744073709551616", Inexact::TooLarge),
            ("1e20", Inexact::TooLarge),
            ("1e99999999999999999999", Inexact::TooLarge),
        ] {
            assert_eq!(exact_whole(text), Err(e), "{text}");
        }
    }

    /// The field and the message a check sends beyond the protocol's:
    /// each message stays one JSON line, its own fields as they were.
    #[test]
    fn an_unknown_field_and_message_are_json_lines() {
        let mut buf = Vec::new();
        encode_into(&ToBot::Quit {}, &mut buf);
        add_unknown_field(&mut buf);
        assert!(buf.ends_with(b"}\n"), "{}", String::from_utf8_lossy(&buf));
        assert_eq!(buf.iter().filter(|&&b| b == b'\n').count(), 1);
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v["type"], "quit");
        assert!(v[UNKNOWN].is_object(), "{v}");
        let mut line = Vec::new();
        encode_unknown_message("g1", &mut line);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!((&v["type"], &v["game_id"]), (&UNKNOWN.into(), &"g1".into()));
    }

    /// A bad line is told its fault as a column of its own line (not
    /// serde's "line 1"), bytes that are not UTF-8 as that wherever they
    /// are, and a field of the wrong type by the field alone (serde's own
    /// words after it said the same again and cut the detail short).
    #[test]
    fn a_bad_line_is_said_in_the_bots_terms() {
        let e = decode(b"game over, score 1").unwrap_err().to_string();
        assert!(e.ends_with("expected value at column 1"), "{e}");
        let e = decode(b"{\"type\":\"reply\",\"option\":\"a\xff\xfeb\"}").unwrap_err();
        assert!(matches!(e, DecodeError::BadJson(_)), "{e}");
        assert!(
            e.to_string().contains("not UTF-8: byte 28 of the line"),
            "{e}"
        );
        let e = decode(br#"{"type":"reply","option":7}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("`option` must be a string, got 7 (a string is in quotes: \"7\")"),
            "{e}"
        );
    }

    /// A number beyond any number type (`1e400`) in a field of the
    /// message's is a wrong value of that field, named, as a fraction or a
    /// negative number there is (`protocol`), not broken JSON; in a field
    /// the protocol does not know (another message's included) it is
    /// skipped, and the rest judged.
    #[test]
    fn a_number_out_of_range_is_a_wrong_value_of_its_field() {
        for (line, says) in [
            (
                &br#"{"type":"reply","option":"G","seq":1e400}"#[..],
                "`seq` must be a whole number, got a number out of range",
            ),
            (
                br#"{"seq":-1e400,"type":"reply","option":"G"}"#,
                "`seq` must be a whole number, got a number out of range",
            ),
            (
                br#"{"type":"reply","option":1e400}"#,
                "`option` must be a string, got a number out of range",
            ),
            (
                br#"{"type":"hello","name":"x","protocol":1e999}"#,
                "`protocol` must be a whole number, got a number out of range",
            ),
            (
                br#"{"type":"reply","option":"G","seq":1.5}"#,
                "`seq` must be a whole number, 0 or more, got 1.5",
            ),
            (
                br#"{"type":"reply","option":"G","seq":-1}"#,
                "`seq` must be a whole number, 0 or more, got -1",
            ),
            (
                br#"{"type":"reply","option":"G","ply":1e10}"#,
                "`ply` must be a whole number from 0 to 4294967295, got 1e10",
            ),
            // As written, not as a double rounds it.
            (
                br#"{"type":"reply","option":"G","seq":18446744073709551616}"#,
                "`seq` must be a whole number from 0 to 18446744073709551615, got 18446744073709551616",
            ),
            (
                br#"{"seq":1.9999999999999999999,"type":"reply","option":"G"}"#,
                "`seq` must be a whole number, 0 or more, got 1.9999999999999999999: a fraction, though a double rounds it to 2",
            ),
            (
                br#"{"type":"reply","option":"G","seq":18446744073709551615.0}"#,
                "got 18446744073709551615.0: write it as digits alone",
            ),
            (
                br#"{"type":"reply","option":"G","ply":4294967296.0}"#,
                "`ply` must be a whole number from 0 to 4294967295, got 4294967296.0",
            ),
            (
                br#"{"type":"hello","name":"x","protocol":0.99999999999999999999}"#,
                "`protocol` must be a whole number from 0 to 4294967295, got 0.99999999999999999999: a fraction, though a double rounds it to 1",
            ),
            (br#"{"type":"reply","x":1e400}"#, "missing field `option`"),
            (
                br#"{"type":"reply","x":1e400,"option":7}"#,
                "`option` must be a string, got 7",
            ),
            (
                br#"{"type":"ready","seq":1e400}"#,
                "unknown message type `ready`",
            ),
        ] {
            match decode(line) {
                Err(DecodeError::Protocol(m)) => assert!(m.contains(says), "{m}"),
                other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
            }
        }
        let m = decode(br#"{"type":"hello","name":"n","seq":1e400}"#);
        assert!(
            matches!(&m, Ok(FromBot::Hello { name, .. }) if name == "n"),
            "{m:?}"
        );
        // Broken after it: still not JSON.
        assert!(matches!(
            decode(br#"{"type":"reply","option":"G","seq":1e400} x"#),
            Err(DecodeError::BadJson(_))
        ));
    }

    /// A line with nothing visible in it is shown with its white space
    /// escaped; any other keeps its spaces as they are.
    #[test]
    fn a_line_with_nothing_visible_is_shown_escaped() {
        assert_eq!(shown_line("\u{a0}\u{a0}".as_bytes(), 100), "\\u{a0}\\u{a0}");
        assert_eq!(shown_line("\u{feff}".as_bytes(), 100), "\\u{feff}");
        assert_eq!(shown_line("\u{3000} \t".as_bytes(), 100), "\\u{3000} \\t");
        assert_eq!(shown_line("a\u{a0}b".as_bytes(), 100), "a\u{a0}b");
        // Before or after the JSON, where it looks like nothing: escaped.
        assert_eq!(
            shown_line("\u{a0}{\"a\":1}".as_bytes(), 100),
            "\\u{a0}{\"a\":1}"
        );
        assert_eq!(shown_line("{}\u{3000}".as_bytes(), 100), "{}\\u{3000}");
        assert_eq!(shown_line(b"", 100), "");
    }

    fn reply(o: &str) -> FromBot {
        FromBot::Reply {
            option: o.into(),
            game_id: None,
            ply: None,
            seq: None,
        }
    }

    #[test]
    fn crlf_bom_and_white_space_are_accepted() {
        for line in [
            &br#"{"type":"reply","option":"G"}"#[..],
            br#"{"type":"reply","option":"G"}"#,
            b"{\"type\":\"reply\",\"option\":\"G\"}\r",
            b"  \t{\"type\":\"reply\",\"option\":\"G\"}  ",
            b"\xEF\xBB\xBF{\"type\":\"reply\",\"option\":\"G\"}",
        ] {
            assert_eq!(decode(line), Ok(reply("G")), "{line:?}");
        }
        // The option itself is kept as sent: the referee compares it exactly.
        assert_eq!(
            decode(br#"{"type":"reply","option":" g "}"#),
            Ok(reply(" g "))
        );
    }

    #[test]
    fn hostile_lines_are_errors_not_panics() {
        // Nesting past serde_json's recursion limit (128) is an error.
        let deep = format!(
            r#"{{"type":"reply","option":"G","x":{}{}}}"#,
            "[".repeat(60_000),
            "]".repeat(60_000)
        );
        let e = decode(deep.as_bytes());
        assert!(
            matches!(&e, Err(DecodeError::BadJson(m)) if m.contains("deeper than 127 levels")),
            "{e:?}"
        );
        let deep = "[".repeat(60_000);
        assert!(matches!(
            decode(deep.as_bytes()),
            Err(DecodeError::BadJson(_))
        ));
        // Exactly at the limit is fine (the reply's own object is a level).
        let at_limit = format!(
            r#"{{"type":"reply","option":"G","x":{}{}}}"#,
            "[".repeat(MAX_NESTING - 1),
            "]".repeat(MAX_NESTING - 1)
        );
        assert_eq!(decode(at_limit.as_bytes()), Ok(reply("G")));
        let past_limit = format!(
            r#"{{"type":"reply","option":"G","x":{}{}}}"#,
            "[".repeat(MAX_NESTING),
            "]".repeat(MAX_NESTING)
        );
        assert!(matches!(
            decode(past_limit.as_bytes()),
            Err(DecodeError::BadJson(m)) if m.contains("deeper than 127 levels")
        ));
        for (line, bad_json) in [
            (&b"\xff\xfe{}"[..], true),
            (b"{\"type\":\"reply\",\"option\":\"\xff\"}", true),
            (b"{\"type\":\"reply\",\"option\":\"G\"}\0", true),
            (b"", true),
            (b"42", false),
            (b"\"reply\"", false),
            (b"null", false),
            (b"[]", false),
            (br#"["reply","G"]"#, false),
            (br#"{"type":"reply","option":7}"#, false),
            (br#"{"type":"reply","option":null}"#, false),
            (br#"{"type":"reply","option":["G"]}"#, false),
            (br#"{"type":"reply","option":"G","option":"H"}"#, false),
            (br#"{"type":"REPLY","option":"G"}"#, false),
            (br#"{"option":"G"}"#, false),
            (br#"{"type":"hello","name":"x","protocol":"1"}"#, false),
            (br#"{"type":"reply","option":"G","ply":"3"}"#, false),
        ] {
            match decode(line) {
                Err(DecodeError::BadJson(_)) => assert!(bad_json, "{line:?}"),
                Err(DecodeError::Protocol(_)) => assert!(!bad_json, "{line:?}"),
                Ok(m) => panic!("{line:?} decoded as {m:?}"),
            }
        }
    }

    /// Wrong shapes are told in the protocol's words, not the decoder's.
    #[test]
    fn wrong_shapes_are_named_in_the_protocols_words() {
        let problem = |line: &str| match decode(line.as_bytes()) {
            Err(DecodeError::Protocol(m)) => m,
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(
            problem(r#"{"type":"ready"}"#),
            "unknown message type `ready` (a bot sends only `hello` and `reply`)"
        );
        assert!(problem(r#"{"option":"G"}"#).starts_with("no `type` field"));
        assert!(problem(r#"{"type":3}"#).starts_with("`type` must be a string"));
        assert!(problem(r#"{"type":"reply"}"#).contains("option"));
    }

    /// A name of the protocol written in another case (`Type`, `Option`,
    /// as Go's and C#'s serializers write fields by default; `Reply`) or
    /// with white space around it is said to be that one, written so;
    /// a message encoded twice (a JSON string holding it), that.
    #[test]
    fn a_name_written_otherwise_is_named() {
        let problem = |line: &str| match decode(line.as_bytes()) {
            Err(DecodeError::Protocol(m)) => m,
            other => panic!("{line}: {other:?}"),
        };
        for (line, says) in [
            (
                r#"{"Type":"reply","Option":"G"}"#,
                "no `type` field but `Type`: field names are exact (write `type`, in lower case)",
            ),
            (
                r#"{"Type":"hello","Name":"x"}"#,
                "no `type` field but `Type`",
            ),
            (
                r#"{"type":"reply","Option":"G"}"#,
                "missing field `option` but `Option`: field names are exact (write `option`, in lower case)",
            ),
            (
                r#"{"type":"reply","option ":"G"}"#,
                "missing field `option` but `option `: field names are exact (write `option`, without white space)",
            ),
            (
                r#"{"type":"hello","NAME":"x"}"#,
                "missing field `name` but `NAME`",
            ),
            (
                r#"{"type":"Reply","option":"G"}"#,
                "unknown message type `Reply`: types are exact (write `reply`, in lower case)",
            ),
            (
                r#"{"type":"hello ","name":"x"}"#,
                "unknown message type `hello `: types are exact (write `hello`, without white space)",
            ),
            (
                r#""{\"type\":\"reply\",\"option\":\"G\"}""#,
                "a JSON string holding a JSON object: the message was encoded twice",
            ),
        ] {
            let got = problem(line);
            assert!(got.starts_with(says), "{line}: {got}");
            assert!(got.len() <= 100, "{line}: cut in a detail: {got}");
        }
        // Only a name written otherwise is named: a field that is not one.
        assert_eq!(
            problem(r#"{"type":"reply","move":"G"}"#),
            "missing field `option`"
        );
        assert_eq!(problem(r#""G""#), "not a JSON object");
    }

    /// The direct request encoder writes [`encode_into`]'s bytes.
    #[test]
    fn requests_are_written_as_the_serde_encoder_writes_them() {
        use crate::engine::{Game, Settings, Variant};
        let mut game = Game::new(Variant::Filo, &Settings::default()).unwrap();
        game.play("1").unwrap();
        let legal = game.legal();
        let since = [
            DecisionMsg {
                seat: 0,
                ply: 0,
                option: "1".into(),
                forced: false,
                opening: true,
            },
            DecisionMsg {
                seat: 1,
                ply: 1,
                option: "a\"b".into(),
                forced: true,
                opening: false,
            },
        ];
        for (since, time_left_ms, game_id) in [
            (&since[..], Some(1234), "g\"1\\"),
            (&since[..1], None, "g2"),
            (&[][..], Some(0), ""),
        ] {
            let state = game.snapshot();
            let mut expected = Vec::new();
            encode_into(
                &ToBot::Request {
                    game_id,
                    seq: 17,
                    ply: game.plies(),
                    state: &state,
                    legal: &legal,
                    since,
                    timeout_ms: 2000,
                    time_left_ms,
                },
                &mut expected,
            );
            let mut buf = b"left over".to_vec();
            buf.clear();
            encode_request(
                &RequestMsg {
                    game_id,
                    seq: 17,
                    ply: game.plies(),
                    legal: &legal,
                    since,
                    timeout_ms: 2000,
                    time_left_ms,
                },
                |b| game.write_snapshot(b),
                &mut buf,
            );
            assert_eq!(
                String::from_utf8_lossy(&buf),
                String::from_utf8_lossy(&expected)
            );
        }
    }

    #[test]
    fn hello_defaults() {
        let m = decode(br#"{"type":"hello","name":"x"}"#);
        assert_eq!(
            m,
            Ok(FromBot::Hello {
                name: "x".into(),
                version: String::new(),
                author: String::new(),
                protocol: None
            })
        );
    }

    #[test]
    fn bad_json_and_wrong_shape_are_told_apart() {
        assert!(matches!(
            decode(b"hello there"),
            Err(DecodeError::BadJson(_))
        ));
        assert!(matches!(
            decode(br#"{"type":"reply""#),
            Err(DecodeError::BadJson(_))
        ));
        assert!(matches!(decode(b"[1,2]"), Err(DecodeError::Protocol(_))));
        // Bytes that are not UTF-8 in a field the protocol ignores.
        let mut line = br#"{"type":"reply","option":"J","note":"xx"}"#.to_vec();
        line[37] = 0xff;
        line[38] = 0xfe;
        let got = decode(&line);
        assert!(
            matches!(&got, Err(DecodeError::BadJson(m)) if m.contains("not UTF-8: byte 38")),
            "{got:?}"
        );
        // Broken after a `type` is read: not JSON, whatever the message's
        // reader found first.
        for line in [
            r#"{"type":"re{"type": "reply", "option": "xi1"}"#,
            r#"{"type":"r{"type":"reply","option":"xi1"}"#,
            r#"{"type":"reply{"type":"reply","option":"xi1"}"#,
            r#"{"type":{"type":"reply","option":"xi1"}"#,
        ] {
            let got = decode(line.as_bytes());
            assert!(
                matches!(got, Err(DecodeError::BadJson(_))),
                "{line}: {got:?}"
            );
        }
        assert!(matches!(
            decode(br#"{"type":"reply","choice":"G"}"#),
            Err(DecodeError::Protocol(_))
        ));
        assert!(matches!(
            decode(br#"{"type":"dance"}"#),
            Err(DecodeError::Protocol(_))
        ));
    }

    #[test]
    fn encode_is_one_line_with_type() {
        let mut buf = Vec::new();
        let names = vec!["a".to_string(), "b".to_string()];
        let opts = BTreeMap::new();
        encode_into(
            &ToBot::GameStart {
                game_id: "g1",
                variant: "diffusion",
                players: 2,
                options: &opts,
                max_plies: 1000,
                seat: 1,
                names: &names,
                time: TimeMsg {
                    per_decision_ms: 1000,
                    base_ms: None,
                    increment_ms: None,
                },
                seed: u64::MAX.to_string(),
            },
            &mut buf,
        );
        assert_eq!(buf.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(buf.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v["type"], "game_start");
        assert_eq!(v["seat"], 1);
        assert_eq!(v["time"]["per_decision_ms"], 1000);
        assert!(v["time"].get("base_ms").is_none());
        // A string: exact in every language, past 2^53 too.
        assert_eq!(v["seed"], "18446744073709551615");
        buf.clear();
        encode_into(&ToBot::Quit {}, &mut buf);
        assert_eq!(buf, b"{\"type\":\"quit\"}\n");
    }

    /// The end of a bot's stderr keeps its lines and shows everything
    /// else a terminal would obey: no title, no cleared screen, no fake
    /// verdict in red.
    #[test]
    fn escaped_lines_keep_their_ends_and_show_the_rest() {
        assert_eq!(
            escape_lines("\u{1b}]0;PWNED\u{7}\u{1b}[2Jfake\u{202e}\r\nnext\tline"),
            "\\u{1b}]0;PWNED\\u{7}\\u{1b}[2Jfake\\u{202e}\\r\nnext\tline"
        );
        assert_eq!(escape_lines("plain é ✓"), "plain é ✓");
        assert_eq!(
            escape_line("\u{1b}]0;PWNED\u{7}\u{1b}[2J a\r\nb\u{202e} é"),
            "\\u{1b}]0;PWNED\\u{7}\\u{1b}[2J a\\r\\nb\\u{202e} é"
        );
    }

    #[test]
    fn truncate_cuts_at_char_boundary() {
        assert_eq!(truncate(b"abc", 10), "abc");
        assert_eq!(truncate(b"abcdef", 3), "abc...");
        assert_eq!(truncate("ééé".as_bytes(), 3), "é...");
        assert_eq!(truncate(b"a\x1b[31mb\0\n", 100), "a\\u{1b}[31mb\\u{0}\\n");
        assert_eq!(truncate(b"\xff!", 100), "\u{fffd}!");
        // Invisible and bidirectional characters are shown, not obeyed.
        assert_eq!(truncate("xi1\u{200b}".as_bytes(), 100), "xi1\\u{200b}");
        assert_eq!(
            truncate("a\u{202e}b\u{2028}".as_bytes(), 100),
            "a\\u{202e}b\\u{2028}"
        );
    }
}
