//! Endgame tables for the 2-player games (issue 51, docs/tables.md): every
//! position with up to N seeds in play, its exact value for the side to
//! move (win or loss with the distance in plies, or a draw), built by a
//! retrograde analysis over the engine's public API and stored one file
//! per layer.
//!
//! A game is tabled when the seeds in play never increase: Diffusion
//! (stones in the small pits: they only leave for the large pits),
//! Hackaback (seeds in the holes: they only leave for the store) and
//! 2-player Tricala (stones on the board: captures take them off). A
//! position's successors are then in its own layer or in layers with fewer
//! seeds, so the layers are built from the smallest up. Kisolo keeps all
//! its seeds on the board, and F.I.L.O is solved whole by
//! `crate::ai::filo_solve` (docs/tables.md says why for each).
//!
//! Owns the tables only: it plays the games through `Rules` and each
//! game's public accessors, and knows nothing of bots, leagues or files
//! other than its own.

pub mod build;
pub mod coverage;
pub mod diffusion;
pub mod format;
pub mod hackaback;
pub mod probe;
mod rank;
pub mod tricala;

use crate::engine::{Rules, Seat, Variant};

/// The value of a position for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// The side to move wins in at most this many plies with best play.
    Win(u16),
    /// The side to move loses, and can delay it this many plies at most.
    Loss(u16),
    /// Neither side can force the end of the game.
    Draw,
}

/// Bits 15-14 of a stored value: its kind (docs/tables.md, "Values").
const KIND_DRAW: u16 = 0;
const KIND_WIN: u16 = 1 << 14;
const KIND_LOSS: u16 = 2 << 14;
/// An index that names no position to analyse (Diffusion: a block empty).
pub const NOT_A_POSITION: u16 = 3 << 14;
/// The largest distance a value can hold.
pub const MAX_DISTANCE: u16 = (1 << 14) - 1;

impl Value {
    /// The value's two bytes (docs/tables.md, "Values").
    pub fn encode(self) -> u16 {
        match self {
            Value::Draw => KIND_DRAW,
            Value::Win(d) => KIND_WIN | d.min(MAX_DISTANCE),
            Value::Loss(d) => KIND_LOSS | d.min(MAX_DISTANCE),
        }
    }

    /// The value of two stored bytes; `None` for [`NOT_A_POSITION`].
    pub fn decode(v: u16) -> Option<Value> {
        let d = v & MAX_DISTANCE;
        match v & !MAX_DISTANCE {
            KIND_DRAW => Some(Value::Draw),
            KIND_WIN => Some(Value::Win(d)),
            KIND_LOSS => Some(Value::Loss(d)),
            _ => None,
        }
    }

    /// The value one ply earlier, for the player who moved into this
    /// position (the opponent of its side to move).
    pub fn back(self) -> Value {
        match self {
            Value::Win(d) => Value::Loss(d.saturating_add(1)),
            Value::Loss(d) => Value::Win(d.saturating_add(1)),
            Value::Draw => Value::Draw,
        }
    }

    /// An order for the side to move: faster wins first, then draws, then
    /// slower losses. Larger is better.
    pub fn rank(self) -> i32 {
        match self {
            Value::Win(d) => 100_000 - i32::from(d),
            Value::Draw => 0,
            Value::Loss(d) => -100_000 + i32::from(d),
        }
    }

    /// `win`, `draw` or `loss`.
    pub fn result(self) -> &'static str {
        match self {
            Value::Win(_) => "win",
            Value::Loss(_) => "loss",
            Value::Draw => "draw",
        }
    }

    /// The distance in plies (0 for a draw).
    pub fn plies(self) -> u16 {
        match self {
            Value::Win(d) | Value::Loss(d) => d,
            Value::Draw => 0,
        }
    }
}

/// A game whose positions at the start of a turn are indexed by layer (a
/// count of seeds in play, or a pair of counts) and rank within the layer.
pub trait TableGame: Send + Sync + 'static {
    type G: Rules;
    const VARIANT: Variant;
    /// How many layer ids exist (ids are `0..LAYERS`).
    const LAYERS: usize;

    /// Seeds in play in the positions of a layer.
    fn layer_seeds(layer: usize) -> u32;
    /// False for ids that hold no playable position (the game is over).
    fn layer_exists(layer: usize) -> bool;
    /// Positions (indexes) in a layer.
    fn layer_size(layer: usize) -> u64;
    /// The layer's file name, without the extension.
    fn layer_name(layer: usize) -> String;
    /// The position of an index, at the start of a turn, the ply cap off;
    /// `None` when the index names no position to analyse.
    fn decode(layer: usize, index: u64) -> Option<Self::G>;
    /// The layer and index of a position at the start of a turn; `None`
    /// in the middle of a turn or when the game is over.
    fn locate(g: &Self::G) -> Option<(usize, u64)>;
}

/// The layers a build up to `seeds` makes, in build order (a layer's
/// successors are in itself or earlier).
pub fn layers_upto<T: TableGame>(seeds: u32) -> Vec<usize> {
    let mut ls: Vec<usize> = (0..T::LAYERS)
        .filter(|&l| T::layer_exists(l) && T::layer_seeds(l) <= seeds)
        .collect();
    ls.sort_by_key(|&l| (T::layer_seeds(l), l));
    ls
}

/// Positions in the tables up to `seeds`.
pub fn positions_upto<T: TableGame>(seeds: u32) -> u64 {
    layers_upto::<T>(seeds).into_iter().map(T::layer_size).sum()
}

/// The largest seed count whose tables fit `max_bytes` (2 bytes a
/// position, headers aside).
pub fn seeds_for_size<T: TableGame>(max_bytes: u64) -> u32 {
    let mut n = 0;
    while n < 200 && positions_upto::<T>(n + 1) * 2 <= max_bytes {
        if positions_upto::<T>(n + 1) == positions_upto::<T>(n) && n > 60 {
            break;
        }
        n += 1;
    }
    n
}

/// How a turn from a position can end, for the player who started it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The game is over: won, lost or drawn for the mover.
    Over(Value),
    /// At the start of the next turn: the position's layer and index, and
    /// whether the mover is to move again there.
    At(usize, u64, bool),
}

/// Every way the turn that starts (or goes on) in `g` can end, one entry
/// per sequence of decisions (duplicates kept). A position in the middle
/// of a turn that the tables do not locate at the turn's end gives
/// nothing for that branch (`missing` counts them).
pub fn turn_ends<T: TableGame>(g: &T::G, out: &mut Vec<End>, missing: &mut u64) {
    let Some(mover) = g.to_decide() else {
        return;
    };
    let mut opts = Vec::new();
    g.options(&mut opts);
    for o in opts {
        let mut c = g.clone();
        if c.apply(o).is_err() {
            continue;
        }
        if let Some(end) = end_of::<T>(&c, mover, g.plies()) {
            out.push(end);
        } else if c.plies() == g.plies() {
            turn_ends::<T>(&c, out, missing);
        } else {
            *missing += 1;
        }
    }
}

/// What `c` (just after a decision by `mover`) is: over, at the start of a
/// turn the tables index, or `None` (still inside the turn, or unindexed).
pub fn end_of<T: TableGame>(c: &T::G, mover: Seat, plies_before: u32) -> Option<End> {
    if let Some(o) = c.outcome() {
        return Some(End::Over(if o.is_draw() {
            Value::Draw
        } else if o.ranks[mover] == 0 {
            Value::Win(1)
        } else {
            Value::Loss(1)
        }));
    }
    if c.plies() == plies_before {
        return None;
    }
    let (l, i) = T::locate(c)?;
    Some(End::At(l, i, c.to_decide() == Some(mover)))
}

/// The value of a position from the values of its turn's ends (`value_at`
/// gives a located position's value for its own side to move, `None` while
/// unknown): the fastest win, else (all ends known and lost) the slowest
/// loss; `None` when undecided.
pub fn combine(ends: &[End], value_at: impl Fn(usize, u64) -> Option<Value>) -> Option<Value> {
    let mut best_win: Option<u16> = None;
    let mut all_lost = !ends.is_empty();
    let mut slowest_loss = 0u16;
    for &e in ends {
        let v = match e {
            End::Over(v) => Some(v),
            End::At(l, i, same) => {
                value_at(l, i).map(|v| if same { v.plus_one() } else { v.back() })
            }
        };
        match v {
            Some(Value::Win(d)) => best_win = Some(best_win.map_or(d, |b| b.min(d))),
            Some(Value::Loss(d)) => slowest_loss = slowest_loss.max(d),
            _ => all_lost = false,
        }
    }
    match best_win {
        Some(d) => Some(Value::Win(d)),
        None if all_lost => Some(Value::Loss(slowest_loss)),
        None => None,
    }
}

impl Value {
    /// The same value one ply later for the same player.
    fn plus_one(self) -> Value {
        match self {
            Value::Win(d) => Value::Win(d.saturating_add(1)),
            Value::Loss(d) => Value::Loss(d.saturating_add(1)),
            Value::Draw => Value::Draw,
        }
    }
}

/// The variants that have tables.
pub fn tabled(v: Variant) -> bool {
    TABLED.contains(&v)
}

/// The layer files that `T`'s tables in `dir` (the folder above the
/// game's own) lack below the largest layer there, and that layer's
/// seeds: a build makes every layer up to its seeds, so a gap is a file
/// lost or deleted, and the positions in it would be left to a search
/// without a word. Empty when there is no gap (or no table).
pub fn gaps<T: TableGame>(dir: &std::path::Path) -> (Vec<std::path::PathBuf>, u32) {
    let path = |l: usize| format::layer_path(dir, T::VARIANT, &T::layer_name(l));
    let top = layers_upto::<T>(u32::MAX)
        .into_iter()
        .filter(|&l| path(l).exists())
        .map(T::layer_seeds)
        .max();
    let Some(top) = top else {
        return (Vec::new(), 0);
    };
    let lacking = layers_upto::<T>(top)
        .into_iter()
        .map(path)
        .filter(|p| !p.exists())
        .collect();
    (lacking, top)
}

/// The games that have tables, each in a folder of its name under the
/// tables' folder.
pub const TABLED: [Variant; 3] = [Variant::Diffusion, Variant::Hackaback, Variant::Tricala];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_order() {
        for v in [
            Value::Draw,
            Value::Win(1),
            Value::Win(300),
            Value::Loss(0),
            Value::Loss(77),
        ] {
            assert_eq!(Value::decode(v.encode()), Some(v));
        }
        assert_eq!(Value::decode(NOT_A_POSITION), None);
        assert!(Value::Win(1).rank() > Value::Win(5).rank());
        assert!(Value::Win(99).rank() > Value::Draw.rank());
        assert!(Value::Draw.rank() > Value::Loss(99).rank());
        assert!(Value::Loss(99).rank() > Value::Loss(1).rank());
        assert_eq!(Value::Loss(4).back(), Value::Win(5));
    }
}

#[cfg(test)]
mod agreement;
