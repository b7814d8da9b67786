//! The results table: the `games.csv` row schema, shared by the league
//! runner (which writes rows) and the ratings (which read them).
//!
//! Owns the column names and their meaning; knows nothing of bots, games in
//! progress or ratings. The columns are a public contract (README documents
//! each): new columns may be added at the end, none renamed or removed.

pub mod analysis;
pub mod csvio;
pub mod records;
pub mod stderr;
pub mod store;

/// The label of the ratings' table of every variant: no variant's name.
pub const ALL_LABEL: &str = "all";

/// The fixed columns of `crosstable.csv`, before one column per bot named
/// after it (docs/ratings.md, "Output files"): a league refuses these as
/// bot names, whose column would share its name with one of them.
pub const CROSSTABLE_KEYS: [&str; 2] = ["variant", "bot"];

/// Whether `c` may be part of a name that is also a file's or a game
/// id's (a league's, a variant's): an ASCII letter, a digit, `-`, `_` or
/// `.`.
pub fn is_file_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.".contains(c)
}

/// `name` with everything but letters (of any script), digits, `-`, `_`
/// and `.` replaced by `_`, and a leading `.` too, for the file names of
/// a results folder (bots' logs, analyses, a match's folder): `.x-w0.log`
/// would be hidden from `ls`, and `..` is no name. (Letters of every
/// script are kept: two Cyrillic names of one length must not come out
/// the same.) A league's file refuses two bots whose names come out the
/// same.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .enumerate()
        .map(
            |(i, c)| match (c.is_alphanumeric() || "-_.".contains(c)) && (i > 0 || c != '.') {
                true => c,
                false => '_',
            },
        )
        .collect()
}

/// A 64-bit SipHash of a game id (fixed keys: the same in every run): a
/// game counted once among millions without holding its id.
pub fn id_hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

use serde::{Deserialize, Serialize};

/// One finished game: one row of `games.csv`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GameRow {
    /// Unique, stable id of the game within its tournament (same file and
    /// seed give the same ids).
    pub game_id: String,
    /// `filo`, `tricala`, `hackaback`, `kisolo` or `diffusion`.
    pub variant: String,
    /// 2 or 3.
    pub players: u8,
    /// Id of the seat-swap group: the games that share a pairing and an
    /// opening and differ only by seat order (2 games, or 6 for 3 players).
    pub group: String,
    /// Bot names by seat; `seat2` is empty for 2-player games.
    pub seat0: String,
    pub seat1: String,
    #[serde(default)]
    pub seat2: String,
    /// Per-seat scores in [0, 1]: the average pairwise result against the
    /// other seats (win 1, draw 1/2, loss 0). `score2` is empty for 2 players.
    pub score0: f64,
    pub score1: f64,
    #[serde(default)]
    pub score2: Option<f64>,
    /// Why the game ended: a game rule (`block`, `store`, ...), a draw reason
    /// (`max_plies`, `perpetual`, `repetition`, `draw_claim`, `tie`) or a
    /// forfeit (`illegal`, `timeout`, `stall`, `crash`, `bad_json`,
    /// `line_too_long`, `protocol`, `memory`).
    pub reason: String,
    /// The seat that forfeited, empty otherwise.
    #[serde(default)]
    pub offender: Option<u8>,
    /// Completed turns.
    pub plies: u32,
    /// Wall-clock duration of the game, in whole milliseconds, truncated
    /// (README, games.csv's columns; the record's end has the fraction).
    pub duration_ms: u64,
    /// The seed of the game's opening (shared by its seat-swap group). In
    /// JSON a string of its digits, as the protocol sends seeds: a number
    /// above 2^53 loses digits in JavaScript; read from a number too.
    #[serde(serialize_with = "seed_text", deserialize_with = "seed_of")]
    pub seed: u64,
    /// The opening decisions played before the bots took over, space-separated.
    #[serde(default)]
    pub opening: String,
    /// When the game started: UTC, ISO 8601 with milliseconds
    /// (`2026-11-23T16:05:09.123Z`). Empty in rows of older versions.
    #[serde(default)]
    pub started_at: String,
    /// The `version` each seat's bot gave in its hello (empty: none given,
    /// or a row of an older version).
    #[serde(default)]
    pub version0: String,
    #[serde(default)]
    pub version1: String,
    #[serde(default)]
    pub version2: String,
    /// Each seat's thinking time over the game, in milliseconds: the sum of
    /// its decisions' times, opening and forced decisions excluded. Empty
    /// for a seat a game does not have, and in rows of older versions.
    #[serde(default)]
    pub time0_ms: Option<f64>,
    #[serde(default)]
    pub time1_ms: Option<f64>,
    #[serde(default)]
    pub time2_ms: Option<f64>,
    /// Where the game's record is: a record log in the folder's `games/`
    /// (`records-0000.jsonl`), the byte offset of its first line and its
    /// length in bytes. Empty in rows of older versions, whose record is
    /// the file `games/GAME_ID.jsonl`.
    #[serde(default)]
    pub record_file: String,
    #[serde(default)]
    pub record_offset: Option<u64>,
    #[serde(default)]
    pub record_length: Option<u64>,
}

/// A seed as the text of its digits (CSV writes the same digits).
fn seed_text<S: serde::Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(seed)
}

/// A seed from its digits as a string, or from a whole number (rows
/// stored or sent before seeds were strings).
fn seed_of<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct Seed;
    impl serde::de::Visitor<'_> for Seed {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a seed: a whole number from 0 to 2^64 - 1, or a string of its digits")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom(format!("seed {v} is negative")))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<u64, E> {
            match !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                true => v
                    .parse()
                    .map_err(|_| E::custom(format!("seed `{v}` is over 2^64 - 1"))),
                false => Err(E::custom(format!(
                    "seed `{v}` is not a whole number's digits"
                ))),
            }
        }
    }
    d.deserialize_any(Seed)
}

impl GameRow {
    /// The bot names by seat (2 or 3).
    pub fn seats(&self) -> Vec<&str> {
        let mut v = vec![self.seat0.as_str(), self.seat1.as_str()];
        if self.players >= 3 {
            v.push(self.seat2.as_str());
        }
        v
    }

    /// The scores by seat (2 or 3).
    pub fn scores(&self) -> Vec<f64> {
        let mut v = vec![self.score0, self.score1];
        if self.players >= 3 {
            v.push(self.score2.unwrap_or(0.0));
        }
        v
    }
}

#[cfg(test)]
impl GameRow {
    /// A finished 2-player game for tests: `seat0` scored `score0` (and
    /// `seat1` the rest) in `variant`, seat-swap group `group`, ended by the
    /// rules (`store`) after 10 plies.
    pub fn two_player(
        game_id: &str,
        variant: &str,
        group: &str,
        seat0: &str,
        seat1: &str,
        score0: f64,
    ) -> GameRow {
        GameRow {
            game_id: game_id.into(),
            variant: variant.into(),
            players: 2,
            group: group.into(),
            seat0: seat0.into(),
            seat1: seat1.into(),
            score0,
            score1: 1.0 - score0,
            reason: "store".into(),
            plies: 10,
            duration_ms: 1,
            seed: 1,
            ..GameRow::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::GameRow;

    /// A file name from a bot's or a game's name is never hidden, never a
    /// path, never a folder's `.` or `..`.
    #[test]
    fn a_file_safe_name_is_no_path_and_not_hidden() {
        for (name, safe) in [
            ("random-7.b", "random-7.b"),
            (".x", "_x"),
            ("..", "_."),
            ("../etc/passwd", "_._etc_passwd"),
            ("élan vital", "élan_vital"),
            ("ранд", "ранд"),
            // A bidirectional override and a zero-width space are no
            // letters.
            ("a\u{202e}b\u{200b}", "a_b_"),
        ] {
            assert_eq!(super::file_safe(name), safe, "{name}");
        }
    }

    /// In JSON a seed is the string of its digits, as the protocol sends
    /// seeds (JavaScript's numbers lose digits above 2^53); a number is
    /// read too (rows stored before), and anything else is named.
    #[test]
    fn a_rows_seed_is_a_string_in_json_and_read_from_either() {
        let mut row = GameRow::two_player("g", "filo", "p", "a", "b", 1.0);
        row.seed = u64::MAX;
        let json = serde_json::to_value(&row).unwrap();
        assert_eq!(json["seed"], "18446744073709551615");
        let back: GameRow = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, row);
        let mut old = json.clone();
        old["seed"] = serde_json::json!(7);
        assert_eq!(serde_json::from_value::<GameRow>(old).unwrap().seed, 7);
        for bad in [
            serde_json::json!("-1"),
            serde_json::json!(""),
            serde_json::json!(-1),
        ] {
            let mut v = json.clone();
            v["seed"] = bad.clone();
            let e = serde_json::from_value::<GameRow>(v)
                .unwrap_err()
                .to_string();
            assert!(e.contains("seed"), "{bad}: {e}");
        }
        // CSV writes the same digits as before, unquoted.
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(vec![]);
        w.serialize(&row).unwrap();
        let line = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert!(line.contains(",18446744073709551615,"), "{line}");
    }
}
