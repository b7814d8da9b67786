//! What a bot wrote on stderr during one game (issue 48): its lines, each
//! with the turn it was written in, and how many bytes the game's cap
//! left out. Made by the referee, kept by a store beside the game's record
//! (the ladder's, for the bot's owner), sent by a worker with the game.
//!
//! The form stored and sent is JSON (see [`SeatStderr`]); [`encode`] and
//! [`decode`] give a store its compressed bytes. Knows nothing of bots or
//! rules: a turn is a number the referee gave.

use serde::{Deserialize, Serialize};

/// When a line was written: before the bot's first request of the game
/// (`"start"`, in answer to `game_start`), while it was deciding ply `N`
/// (a number: the ply its request was for), or after its last request
/// (`"end"`, in answer to `game_end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Turn {
    Ply(u32),
    Phase(Phase),
}

/// See [`Turn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Start,
    End,
}

impl Turn {
    pub const START: Turn = Turn::Phase(Phase::Start);
    pub const END: Turn = Turn::Phase(Phase::End);
}

impl std::fmt::Display for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Turn::Ply(p) => write!(f, "ply {p}"),
            Turn::Phase(Phase::Start) => f.write_str("start"),
            Turn::Phase(Phase::End) => f.write_str("end"),
        }
    }
}

/// One line of stderr, without its newline (invalid UTF-8 replaced).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StderrLine {
    pub turn: Turn,
    pub text: String,
}

/// One seat's stderr in one game:
/// `{"seat": 0, "lines": [{"turn": "start", "text": "..."}, {"turn": 3,
/// "text": "..."}], "truncated_bytes": 0}`. `truncated_bytes` counts what
/// the bot wrote past the cap, not kept (0: nothing left out).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeatStderr {
    pub seat: usize,
    /// At most [`crate::bounded::STDERR_LINES_MOST`] when read.
    #[serde(
        deserialize_with = "crate::bounded::at_most::<_, _, { crate::bounded::STDERR_LINES_MOST }>"
    )]
    pub lines: Vec<StderrLine>,
    #[serde(default)]
    pub truncated_bytes: u64,
}

/// The most seats' stderr one game's upload holds (a game has 2 or 3).
pub const SEATS_MOST: usize = 8;

/// The default cap of one seat's stderr in one game (a ladder's
/// `stderr_kb`, 64 KiB).
pub const DEFAULT_CAP: u64 = 64 << 10;

impl SeatStderr {
    /// Bytes of text kept (each line's text and its newline): what the cap
    /// bounds.
    pub fn kept_bytes(&self) -> u64 {
        self.lines.iter().map(|l| l.text.len() as u64 + 1).sum()
    }

    /// Whether it holds nothing at all (no line, nothing left out).
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.truncated_bytes == 0
    }

    /// Refuses what a cap of `cap` bytes could not have kept, or a seat
    /// past `players`: the checks a server makes of a worker's upload.
    pub fn check(&self, cap: u64, players: usize) -> Result<(), String> {
        if self.seat >= players {
            return Err(format!(
                "stderr of seat {}: the game has {players} seats",
                self.seat
            ));
        }
        // A pipe's pace for a watchdog's ten minutes is well under this;
        // a count past it is made up, and past 2^63 it would not even be
        // stored as itself.
        if self.truncated_bytes > MAX_TRUNCATED {
            return Err(format!(
                "stderr of seat {}: truncated_bytes {} is more than a game's stderr can be (at most {MAX_TRUNCATED})",
                self.seat, self.truncated_bytes
            ));
        }
        let kept = self.kept_bytes();
        if kept > cap {
            return Err(format!(
                "stderr of seat {}: {kept} bytes kept, over the ladder's cap of {cap} bytes per seat and game (stderr_kb)",
                self.seat
            ));
        }
        Ok(())
    }
}

/// The most bytes a seat's stderr may say it dropped in one game: 2^50
/// (a pebibyte).
pub const MAX_TRUNCATED: u64 = 1 << 50;

/// A seat's stderr as a store keeps it: its JSON, zstd-compressed.
pub fn encode(s: &SeatStderr) -> Result<Vec<u8>, std::io::Error> {
    let json = serde_json::to_vec(s).map_err(std::io::Error::other)?;
    zstd::bulk::compress(&json, 3)
}

/// The most a stored seat's stderr may hold once decompressed: JSON of
/// the largest cap a ladder allows, each byte escaped (`\u0000`).
const MAX_DECODED: usize = 64 << 20;

/// A seat's stderr from what [`encode`] made.
pub fn decode(bytes: &[u8]) -> Result<SeatStderr, std::io::Error> {
    let json = zstd::bulk::decompress(bytes, MAX_DECODED)?;
    serde_json::from_slice(&json).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seats_stderr_reads_back_as_written() {
        let s = SeatStderr {
            seat: 1,
            lines: vec![
                StderrLine {
                    turn: Turn::START,
                    text: "hello".into(),
                },
                StderrLine {
                    turn: Turn::Ply(7),
                    text: "depth 3 \u{1}".into(),
                },
                StderrLine {
                    turn: Turn::END,
                    text: String::new(),
                },
            ],
            truncated_bytes: 12,
        };
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            json.contains(r#"{"turn":"start","text":"hello"}"#),
            "{json}"
        );
        assert!(json.contains(r#""turn":7"#), "{json}");
        assert_eq!(decode(&encode(&s).unwrap()).unwrap(), s);
        assert_eq!(s.kept_bytes(), 6 + 10 + 1);
    }

    #[test]
    fn the_check_refuses_more_than_the_cap_and_seats_the_game_lacks() {
        let s = SeatStderr {
            seat: 0,
            lines: vec![StderrLine {
                turn: Turn::Ply(0),
                text: "x".repeat(99),
            }],
            truncated_bytes: 0,
        };
        assert!(s.check(100, 2).is_ok());
        let e = s.check(99, 2).unwrap_err();
        assert!(e.contains("over the ladder's cap of 99 bytes"), "{e}");
        let lying = SeatStderr {
            truncated_bytes: u64::MAX,
            ..s.clone()
        };
        let e = lying.check(100, 2).unwrap_err();
        assert!(
            e.contains("truncated_bytes 18446744073709551615 is more"),
            "{e}"
        );
        let e = SeatStderr { seat: 2, ..s }.check(100, 2).unwrap_err();
        assert!(e.contains("the game has 2 seats"), "{e}");
    }

    #[test]
    fn a_turn_that_is_neither_a_ply_nor_a_phase_is_refused() {
        assert!(serde_json::from_str::<StderrLine>(r#"{"turn":"middle","text":""}"#).is_err());
        assert!(serde_json::from_str::<StderrLine>(r#"{"turn":-1,"text":""}"#).is_err());
    }
}
