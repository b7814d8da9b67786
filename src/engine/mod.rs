//! The rules engine: five sowing games behind one decision interface.
//!
//! Owns the rules and nothing else: no processes, no JSON transport, no
//! schedules. (`serde_json::Value` appears only as the state snapshot.)
//!
//! Every game is a state machine of *decisions* (the rulings (docs/rules.md), "Common to all
//! games"): [`Rules::to_decide`] names the seat that decides,
//! [`Rules::options`] lists the legal options of that decision as compact
//! values, [`Rules::apply`] applies one (an illegal one is rejected and the
//! state is left untouched). Options become canonical notation strings only
//! at the edge ([`Rules::notation`], [`Rules::parse`]), and [`Game`] is the
//! dynamic, string-speaking wrapper the referee uses.
//!
//! A decision with a single option is still a decision: the engine lists it
//! and expects it to be applied; the referee applies it without asking a bot
//! and records it like any other (a ruling, docs/rules.md).

pub mod diffusion;
pub mod filo;
mod game;
pub mod hackaback;
pub mod json;
pub mod kisolo;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod testing;
pub mod tricala;

pub use game::{Decision, Game};

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// A seat index: 0 is the player who makes the first decision of the game.
pub type Seat = usize;

/// The most players any game has (3-player Tricala).
pub const MAX_SEATS: usize = 3;

/// The rules version: bumped whenever a rule of any game changes (what is
/// legal, how a game ends, how it scores). A ladder's workers must play
/// the server's (docs/ladder.md, "Workers"), since the server replays
/// their records by its own rules.
pub const RULES_VERSION: u32 = 1;

/// Default ply cap when a tournament names none (the rulings (docs/rules.md): configurable).
pub const DEFAULT_MAX_PLIES: u32 = 1000;

/// A turn that drops its 10,001st stone ends the game as a draw, reason
/// `perpetual` (the rulings (docs/rules.md), Kisolo's rule applied to all games as a guard).
pub const DROP_GUARD: u32 = 10_000;

/// The five games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Filo,
    Tricala,
    Hackaback,
    Kisolo,
    Diffusion,
}

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::Filo,
        Variant::Tricala,
        Variant::Hackaback,
        Variant::Kisolo,
        Variant::Diffusion,
    ];

    /// The canonical lower-case name used on the command line, in
    /// tournament files, in the protocol and in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Filo => "filo",
            Variant::Tricala => "tricala",
            Variant::Hackaback => "hackaback",
            Variant::Kisolo => "kisolo",
            Variant::Diffusion => "diffusion",
        }
    }

    /// The player counts this game supports.
    pub fn player_counts(self) -> &'static [usize] {
        match self {
            Variant::Tricala => &[2, 3],
            _ => &[2],
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let lower = lower.replace(['.', '-', '_'], "");
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == lower || (lower == "cisolo" && *v == Variant::Kisolo))
            .ok_or_else(|| EngineError::UnknownVariant(s.to_string()))
    }
}

/// How to set a game up: player count, ply cap and game-specific options
/// (`KEY=VALUE`, for example `columns=6` for Kisolo).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub players: usize,
    pub max_plies: u32,
    pub options: BTreeMap<String, String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            players: 2,
            max_plies: DEFAULT_MAX_PLIES,
            options: BTreeMap::new(),
        }
    }
}

impl Settings {
    pub fn with_players(players: usize) -> Self {
        Settings {
            players,
            ..Settings::default()
        }
    }

    /// Checks that only `known` option keys are present.
    pub fn only_options(&self, known: &[&str]) -> Result<(), EngineError> {
        match self.options.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(EngineError::Setting {
                key: k.clone(),
                why: if known.is_empty() {
                    "this game takes no options".to_string()
                } else {
                    format!("unknown option; known: {}", known.join(", "))
                },
            }),
            None => Ok(()),
        }
    }

    /// Checks the player count against what the game supports.
    pub fn only_players(&self, counts: &[usize]) -> Result<(), EngineError> {
        if counts.contains(&self.players) {
            Ok(())
        } else {
            Err(EngineError::Setting {
                key: "players".into(),
                why: format!(
                    "{} not supported (this game is played by {})",
                    players_text(self.players),
                    counts
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            })
        }
    }
}

/// Why a game ended. The game-specific reasons name the rule that ended it;
/// the draw reasons are those of the rulings (docs/rules.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// F.I.L.O: a player reduced to one piece or none.
    Pieces,
    /// F.I.L.O: the escape move.
    Escape,
    /// F.I.L.O: the player to move has no legal move (the opponent moved last).
    NoMoves,
    /// Tricala: nine or more captured stones.
    Captures,
    /// Tricala: corner control.
    Corners,
    /// Tricala: winning conditions reached by several players with equal captures.
    Tie,
    /// Tricala: nobody can move; most captures wins (equal: draw).
    Stalemate,
    /// Hackaback: all of one's seeds in the store.
    Store,
    /// Kisolo: the opponent's inner row is empty.
    InnerRow,
    /// Diffusion: a block was vacated; its owner wins.
    Block,
    /// The ply cap was reached.
    MaxPlies,
    /// A turn that does not end (lap repetition or the 10,000-drop guard).
    Perpetual,
    /// Hackaback: a position occurred for the third time.
    Repetition,
    /// Hackaback: White claimed a draw after 240 sowing turns.
    DrawClaim,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::Pieces => "pieces",
            Reason::Escape => "escape",
            Reason::NoMoves => "no_moves",
            Reason::Captures => "captures",
            Reason::Corners => "corners",
            Reason::Tie => "tie",
            Reason::Stalemate => "stalemate",
            Reason::Store => "store",
            Reason::InnerRow => "inner_row",
            Reason::Block => "block",
            Reason::MaxPlies => "max_plies",
            Reason::Perpetual => "perpetual",
            Reason::Repetition => "repetition",
            Reason::DrawClaim => "draw_claim",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The end of a game: a rank per seat (0 = first; equal ranks share the
/// place) and the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub players: u8,
    pub ranks: [u8; MAX_SEATS],
    pub reason: Reason,
}

impl Outcome {
    /// `seat` wins; every other seat shares the last place.
    pub fn win(players: usize, seat: Seat, reason: Reason) -> Outcome {
        Outcome::shared(players, &[seat], reason)
    }

    /// Everybody shares the first place.
    pub fn draw(players: usize, reason: Reason) -> Outcome {
        Outcome {
            players: players as u8,
            ranks: [0; MAX_SEATS],
            reason,
        }
    }

    /// The seats in `winners` share the first place, the others the last.
    /// Rank slots of seats that are not in the game stay 0, so that two
    /// equal outcomes compare equal however they were built.
    pub fn shared(players: usize, winners: &[Seat], reason: Reason) -> Outcome {
        let mut ranks = [0; MAX_SEATS];
        ranks[..players].fill(1);
        for &s in winners {
            ranks[s] = 0;
        }
        Outcome {
            players: players as u8,
            ranks,
            reason,
        }
    }

    /// Per-seat score in [0, 1]: the average over the other seats of the
    /// pairwise result (1 for a better rank, 1/2 for an equal one, 0 for a
    /// worse one). Two players: 1, 1/2, 0 as usual.
    pub fn scores(&self) -> Vec<f64> {
        rank_scores(&self.ranks[..self.players as usize])
    }

    /// True when every seat shares the first place.
    pub fn is_draw(&self) -> bool {
        self.ranks[..self.players as usize].iter().all(|&r| r == 0)
    }
}

/// Per-seat score in [0, 1] from ranks (0 is first): the average over the
/// other seats of the pairwise result (1 for a better rank, 1/2 for an equal
/// one, 0 for a worse one). A single seat scores 1.
pub fn rank_scores(ranks: &[u8]) -> Vec<f64> {
    let n = ranks.len();
    (0..n)
        .map(|i| {
            if n < 2 {
                return 1.0;
            }
            let sum: f64 = (0..n)
                .filter(|&j| j != i)
                .map(|j| match ranks[i].cmp(&ranks[j]) {
                    std::cmp::Ordering::Less => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Greater => 0.0,
                })
                .sum();
            sum / (n - 1) as f64
        })
        .collect()
}

/// Errors of the rules engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    #[error("unknown game `{0}` (known: filo, tricala, hackaback, kisolo, diffusion)")]
    UnknownVariant(String),
    #[error("bad setting `{key}`: {why}")]
    Setting { key: String, why: String },
    #[error("the game is over")]
    GameOver,
    #[error("`{0}` is not an option of this game's notation")]
    Unparsable(String),
    #[error("`{0}` is not a legal option here")]
    Illegal(String),
}

/// One game's rules as a state machine of decisions.
///
/// Implementations are small `Copy`-like values (no heap) so that search
/// bots can clone them freely; the hot path (`options` into a reused vector,
/// `apply`) allocates nothing.
pub trait Rules: Clone + Send + Sync + fmt::Debug + 'static {
    /// A compact option of a decision.
    type Opt: Copy + Eq + fmt::Debug + Send + Sync + 'static;

    const VARIANT: Variant;

    /// A new game at its start position.
    fn new(settings: &Settings) -> Result<Self, EngineError>;

    fn players(&self) -> usize;

    /// The seat that makes the current decision; `None` once the game is over.
    fn to_decide(&self) -> Option<Seat>;

    /// A short name for the kind of the current decision (`entry`, `sow`,
    /// `colour`, `direction`, `place`, ...); `none` once the game is over.
    fn decision_kind(&self) -> &'static str;

    /// Replaces the content of `out` with the legal options of the current
    /// decision, in a fixed documented order (empty once the game is over).
    fn options(&self, out: &mut Vec<Self::Opt>);

    /// Applies one option of the current decision. An illegal option is
    /// rejected with [`EngineError::Illegal`] and the state is unchanged.
    fn apply(&mut self, opt: Self::Opt) -> Result<(), EngineError>;

    /// The result, once the game is over.
    fn outcome(&self) -> Option<Outcome>;

    /// Completed turns so far (set-up turns and passes included).
    fn plies(&self) -> u32;

    /// The canonical notation of an option (a ruling, docs/rules.md).
    fn notation(&self, opt: Self::Opt) -> String;

    /// Parses canonical notation. Only the syntax is checked here; legality
    /// is checked by `apply`.
    fn parse(&self, s: &str) -> Result<Self::Opt, EngineError>;

    /// The full state as JSON (board, reserves, stores, hand, phase, ...):
    /// what [`Rules::write_snapshot`] writes, read back, so that the JSON
    /// of a state is written in one place.
    fn snapshot(&self) -> serde_json::Value {
        let mut buf = Vec::new();
        let mut o = json::Obj::new(&mut buf);
        self.write_snapshot(&mut o);
        o.end();
        // The engine's own bytes: JSON whatever the state (tests read them
        // back at every ply of random games).
        serde_json::from_slice(&buf).unwrap_or_default()
    }

    /// The state's fields written into `o`, keys in byte order, as
    /// serde_json writes a `Value` (compact, sorted keys).
    fn write_snapshot(&self, o: &mut json::Obj<'_>);

    /// The board as human-readable text.
    fn render(&self) -> String;

    /// Checks the game's invariants (conservation of stones, limits such as
    /// stacks of 4 or pits of 5); used by the property tests.
    fn check_invariants(&self) -> Result<(), String>;
}

/// Plays uniformly random options until the game ends; returns the number of
/// decisions made. `buf` is reused so the loop allocates nothing.
pub fn random_playout<G: Rules, R: rand::Rng>(
    game: &mut G,
    rng: &mut R,
    buf: &mut Vec<G::Opt>,
) -> u64 {
    let mut decisions = 0;
    while game.to_decide().is_some() {
        game.options(buf);
        let opt = buf[rng.gen_range(0..buf.len())];
        game.apply(opt)
            .expect("an option listed by the engine must apply");
        decisions += 1;
    }
    decisions
}

/// "1 player", "3 players".
pub fn players_text(n: usize) -> String {
    match n {
        1 => "1 player".to_string(),
        n => format!("{n} players"),
    }
}

/// The options of a move list as people write it (`arena state --moves`,
/// `arena play --opening`, an openings book): separated by white space or
/// commas, as no option holds either.
pub fn move_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
}
