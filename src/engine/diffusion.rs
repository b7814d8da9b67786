//! Diffusion (Mark Steere, 2006; docs/rules/diffusion.md): the rules of
//! the game and nothing else. Must not touch processes, transport or
//! schedules; the string edge is `notation`/`parse`.
//!
//! The board, as in the text's figures (the rulings (docs/rules/diffusion.md), Diffusion):
//!
//! ```text
//!          F   E   D   C   B   A        <- North's near row
//!   West                          East  (large pits)
//!          G   H   I   J   K   L        <- South's near row
//! ```
//!
//! South sits at G..L and moves first (seat 0); North sits at F..A (seat 1).
//! South owns block A = {F E D G H I}, North owns block B = {C B A J K L}.
//! 48 stones, four in each small pit at the start, the large pits empty.
//!
//! A turn is one decision: the letter of any non-empty small pit. Its stones
//! are distributed one per neighbour in the pit's fixed counterclockwise order
//! (a property of the pit, not of the player): a G..L pit starts east and goes
//! E, NE, N, NW, W; an F..A pit starts west and goes W, SW, S, SE, E. A corner
//! pit's missing neighbours are the adjacent large pit, counted as two empty
//! small pits. A stone that would make a small pit hold six goes to the
//! mover's large pit (East for South, West for North), and the distribution
//! resumes at the next neighbour. After the turn, a vacated block's owner
//! wins. See docs/rules/diffusion.md.

use super::{EngineError, Outcome, Reason, Rules, Seat, Settings, Variant};

/// South: sits at G..L, moves first, owns block A.
pub const SOUTH: Seat = 0;
/// North: sits at F..A, owns block B.
pub const NORTH: Seat = 1;

/// Small pits are indexed by letter: `A` = 0 .. `L` = 11.
pub const SMALL_PITS: usize = 12;
/// The large pit west of F and G.
pub const WEST: usize = 12;
/// The large pit east of A and L.
pub const EAST: usize = 13;

/// Stones in the game (2 x 6 pits x 4).
pub const STONES: u32 = 48;
/// "There will never be more than five stones in a small pit."
pub const MAX_IN_SMALL_PIT: u8 = 5;

const LETTERS: &[u8; 12] = b"ABCDEFGHIJKL";

/// Block A (South's): F E D G H I, as a bit set over pit indices.
const BLOCK_A: u16 = (1 << 5) | (1 << 4) | (1 << 3) | (1 << 6) | (1 << 7) | (1 << 8);
/// Block B (North's): C B A J K L.
const BLOCK_B: u16 = (1 << 2) | (1 << 1) | (1 << 0) | (1 << 9) | (1 << 10) | (1 << 11);

/// Rows of the board: the far (North's) row F..A and the near (South's) row
/// G..L, both read left to right as in the figures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Row {
    North,
    South,
}

/// The pit at (row, column), columns 0..5 counted from the West; a column
/// off the board is the adjacent large pit (the corner rule: "treat the
/// adjacent large pit as two empty small pits").
const fn pit_at(row: Row, col: i32) -> u8 {
    if col < 0 {
        WEST as u8
    } else if col > 5 {
        EAST as u8
    } else {
        match row {
            Row::North => (5 - col) as u8, // F=5 at column 0 .. A=0 at column 5
            Row::South => (6 + col) as u8, // G=6 at column 0 .. L=11 at column 5
        }
    }
}

/// The five neighbours of every small pit, in distribution order.
///
/// Near row (G..L): "Place one stone into the small pit immediately to the
/// right of the emptied pit, and proceed counterclockwise": E, NE, N, NW, W.
/// Far row (F..A): the rulings (docs/rules/diffusion.md): starts west and goes W, SW, S, SE, E (also
/// counterclockwise; Figure 4 shows it from the corner pit F).
const NEIGHBOURS: [[u8; 5]; SMALL_PITS] = {
    let mut t = [[0u8; 5]; SMALL_PITS];
    let mut p = 0;
    while p < SMALL_PITS {
        if p < 6 {
            let c = 5 - p as i32;
            t[p] = [
                pit_at(Row::North, c - 1), // W
                pit_at(Row::South, c - 1), // SW
                pit_at(Row::South, c),     // S
                pit_at(Row::South, c + 1), // SE
                pit_at(Row::North, c + 1), // E
            ];
        } else {
            let c = p as i32 - 6;
            t[p] = [
                pit_at(Row::South, c + 1), // E
                pit_at(Row::North, c + 1), // NE
                pit_at(Row::North, c),     // N
                pit_at(Row::North, c - 1), // NW
                pit_at(Row::South, c - 1), // W
            ];
        }
        p += 1;
    }
    t
};

/// A Diffusion position. `Clone` copies 24 bytes; nothing on the heap.
///
/// An option (`Opt`) is the index of a small pit, `A` = 0 .. `L` = 11.
#[derive(Clone, Debug, Hash)]
pub struct Diffusion {
    /// Stones per pit: small pits `A`..`L` at 0..11, West at 12, East at 13.
    pits: [u8; 14],
    to_move: u8,
    plies: u32,
    max_plies: u32,
    outcome: Option<Outcome>,
}

impl Diffusion {
    /// A position as the figures draw it: `north` is the far row read left to
    /// right (`F E D C B A`), `south` the near row (`G H I J K L`), then the
    /// West and East large pits and the seat to move (0 South, 1 North).
    ///
    /// Checks that no small pit holds more than five stones and that the
    /// position holds all 48 stones. The game is not over, whatever the
    /// blocks hold (the block rule is judged at the end of a turn).
    pub fn from_rows(
        north: [u8; 6],
        south: [u8; 6],
        west: u8,
        east: u8,
        to_move: Seat,
        settings: &Settings,
    ) -> Result<Diffusion, EngineError> {
        let mut g = Diffusion::new(settings)?;
        for c in 0..6 {
            g.pits[pit_at(Row::North, c as i32) as usize] = north[c];
            g.pits[pit_at(Row::South, c as i32) as usize] = south[c];
        }
        g.pits[WEST] = west;
        g.pits[EAST] = east;
        if to_move > NORTH {
            return Err(EngineError::Setting {
                key: "to_move".into(),
                why: format!("seat {to_move} does not exist (0 South, 1 North)"),
            });
        }
        g.to_move = to_move as u8;
        g.check_invariants().map_err(|why| EngineError::Setting {
            key: "position".into(),
            why,
        })?;
        Ok(g)
    }

    /// The far row `F E D C B A` (left to right) as the figures draw it.
    pub fn north_row(&self) -> [u8; 6] {
        std::array::from_fn(|c| self.pits[pit_at(Row::North, c as i32) as usize])
    }

    /// The near row `G H I J K L` (left to right).
    pub fn south_row(&self) -> [u8; 6] {
        std::array::from_fn(|c| self.pits[pit_at(Row::South, c as i32) as usize])
    }

    /// Stones in the West large pit.
    pub fn west(&self) -> u8 {
        self.pits[WEST]
    }

    /// Stones in the East large pit.
    pub fn east(&self) -> u8 {
        self.pits[EAST]
    }

    /// The large pit that takes a stone refused by a full small pit: "you
    /// must add that stone to one of the large pits instead" — the rulings (docs/rules/diffusion.md):
    /// East when South moves, West when North moves.
    fn overflow_pit(&self) -> usize {
        if self.to_move as Seat == SOUTH {
            EAST
        } else {
            WEST
        }
    }

    /// "If, at the conclusion of a turn, one of the two blocks is completely
    /// vacated, the owner of that block wins." Only the emptied pit's block
    /// can have become empty (stones are only added elsewhere).
    fn vacated_block_owner(&self, emptied: usize) -> Option<Seat> {
        let (block, owner) = if BLOCK_A & (1 << emptied) != 0 {
            (BLOCK_A, SOUTH)
        } else {
            (BLOCK_B, NORTH)
        };
        let mut bits = block;
        while bits != 0 {
            let p = bits.trailing_zeros() as usize;
            if self.pits[p] != 0 {
                return None;
            }
            bits &= bits - 1;
        }
        Some(owner)
    }

    fn letter(pit: u8) -> char {
        LETTERS.get(pit as usize).map_or('?', |&b| b as char)
    }
}

impl Rules for Diffusion {
    type Opt = u8;
    const VARIANT: Variant = Variant::Diffusion;

    /// Figure 1: four stones in each small pit, the large pits empty; South
    /// to move.
    fn new(settings: &Settings) -> Result<Self, EngineError> {
        settings.only_players(&[2])?;
        settings.only_options(&[])?;
        let mut pits = [4u8; 14];
        pits[WEST] = 0;
        pits[EAST] = 0;
        Ok(Diffusion {
            pits,
            to_move: SOUTH as u8,
            plies: 0,
            max_plies: settings.max_plies,
            outcome: None,
        })
    }

    fn players(&self) -> usize {
        2
    }

    fn to_decide(&self) -> Option<Seat> {
        match self.outcome {
            None => Some(self.to_move as Seat),
            Some(_) => None,
        }
    }

    fn decision_kind(&self) -> &'static str {
        if self.outcome.is_none() {
            "scoop"
        } else {
            "none"
        }
    }

    /// Every non-empty small pit, in letter order `A`..`L`.
    fn options(&self, out: &mut Vec<u8>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        for p in 0..SMALL_PITS as u8 {
            if self.pits[p as usize] != 0 {
                out.push(p);
            }
        }
    }

    fn apply(&mut self, pit: u8) -> Result<(), EngineError> {
        if self.outcome.is_some() {
            return Err(EngineError::GameOver);
        }
        let p = pit as usize;
        if p >= SMALL_PITS || self.pits[p] == 0 {
            return Err(EngineError::Illegal(self.notation(pit)));
        }
        // Scoop all the stones out of the pit ...
        let hand = self.pits[p] as usize;
        self.pits[p] = 0;
        // ... and distribute them around it, one per neighbour (at most five
        // stones, exactly five neighbours).
        let overflow = self.overflow_pit();
        for &n in &NEIGHBOURS[p][..hand.min(5)] {
            let n = n as usize;
            if n < SMALL_PITS && self.pits[n] == MAX_IN_SMALL_PIT {
                // No six-count small pits.
                self.pits[overflow] += 1;
            } else {
                self.pits[n] += 1;
            }
        }
        self.plies += 1;
        if let Some(owner) = self.vacated_block_owner(p) {
            self.outcome = Some(Outcome::win(2, owner, Reason::Block));
        } else if self.plies >= self.max_plies {
            self.outcome = Some(Outcome::draw(2, Reason::MaxPlies));
        } else {
            self.to_move ^= 1;
        }
        Ok(())
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn plies(&self) -> u32 {
        self.plies
    }

    fn notation(&self, pit: u8) -> String {
        Self::letter(pit).to_string()
    }

    /// One letter `A`..`L` (either case).
    fn parse(&self, s: &str) -> Result<u8, EngineError> {
        match s.trim().as_bytes() {
            [b] if (b'A'..=b'L').contains(&b.to_ascii_uppercase()) => {
                Ok(b.to_ascii_uppercase() - b'A')
            }
            _ => Err(EngineError::Unparsable(s.to_string())),
        }
    }

    /// `{"pits": {"A": n, .., "L": n}, "north_row": [F,E,D,C,B,A],
    /// "south_row": [G,..,L], "west": n, "east": n, "to_move": "south"|"north",
    /// "result": null | {"winner": "south"|"north"|null, "reason": ..}}`.
    fn write_snapshot(&self, o: &mut super::json::Obj<'_>) {
        let side = |s: Seat| if s == SOUTH { "south" } else { "north" };
        o.uint("east", u64::from(self.pits[EAST]));
        o.uints("north_row", &self.north_row());
        o.obj("pits", |m| {
            for (&letter, &stones) in LETTERS.iter().zip(&self.pits[..SMALL_PITS]) {
                m.uint(
                    char::from(letter).encode_utf8(&mut [0; 4]),
                    u64::from(stones),
                );
            }
        });
        match self.outcome {
            Some(out) => o.obj("result", |r| {
                r.str("reason", out.reason.name());
                match (0..2).find(|&s| out.ranks[s] == 0 && !out.is_draw()) {
                    Some(s) => r.str("winner", side(s)),
                    None => r.null("winner"),
                }
            }),
            None => o.null("result"),
        }
        o.uints("south_row", &self.south_row());
        o.str("to_move", side(self.to_move as Seat));
        o.uint("west", u64::from(self.pits[WEST]));
    }

    fn render(&self) -> String {
        let row = |r: [u8; 6]| {
            r.iter()
                .map(|n| format!("{n:>3}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!(
            "       F   E   D   C   B   A\n     {}\n{:>3}                          {:>3}\n     {}\n       G   H   I   J   K   L\n{} to move\n",
            row(self.north_row()),
            self.pits[WEST],
            self.pits[EAST],
            row(self.south_row()),
            if self.to_move as Seat == SOUTH { "South" } else { "North" },
        )
    }

    /// All 48 stones present; no small pit above five.
    fn check_invariants(&self) -> Result<(), String> {
        let total: u32 = self.pits.iter().map(|&n| n as u32).sum();
        if total != STONES {
            return Err(format!("{total} stones on the board, expected {STONES}"));
        }
        if let Some(p) = (0..SMALL_PITS).find(|&p| self.pits[p] > MAX_IN_SMALL_PIT) {
            return Err(format!(
                "small pit {} holds {} stones (at most {MAX_IN_SMALL_PIT})",
                Self::letter(p as u8),
                self.pits[p]
            ));
        }
        if self.to_move > 1 {
            return Err(format!("seat {} to move", self.to_move));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testing::play;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn s() -> Settings {
        Settings::default()
    }

    /// Figure 1: four stones in every small pit, the large pits empty.
    #[test]
    fn figure_1_initial_setup() {
        let g = Diffusion::new(&s()).unwrap();
        assert_eq!(g.north_row(), [4; 6]);
        assert_eq!(g.south_row(), [4; 6]);
        assert_eq!((g.west(), g.east()), (0, 0));
        assert_eq!(g.to_decide(), Some(SOUTH));
    }

    /// Figure 3: the third pit of the near row (I) is scooped (3b) and its
    /// four stones go to the right (J), then counterclockwise: C, D, E (3c).
    #[test]
    fn figure_3_edge_pit() {
        let mut g = Diffusion::new(&s()).unwrap();
        play(&mut g, "I");
        assert_eq!(g.north_row(), [4, 5, 5, 5, 4, 4]);
        assert_eq!(g.south_row(), [4, 4, 0, 5, 4, 4]);
        assert_eq!((g.west(), g.east()), (0, 0));
        assert_eq!(g.outcome(), None);
        assert_eq!(g.to_decide(), Some(NORTH));
    }

    /// Figure 4: the corner pit F's three stones: the adjacent large pit
    /// counts as two empty small pits (West 20 -> 22), the third stone to G.
    /// The corner rule does not depend on who moves: same result either way.
    #[test]
    fn figure_4_corner_pit() {
        for mover in [SOUTH, NORTH] {
            let mut g =
                Diffusion::from_rows([3, 0, 2, 0, 0, 2], [0, 0, 0, 0, 1, 0], 20, 20, mover, &s())
                    .unwrap();
            play(&mut g, "F");
            assert_eq!(g.north_row(), [0, 0, 2, 0, 0, 2]);
            assert_eq!(g.south_row(), [1, 0, 0, 0, 1, 0]);
            assert_eq!((g.west(), g.east()), (22, 20));
            assert_eq!(g.outcome(), None);
        }
    }

    /// Figure 5: C's four stones: D 1 -> 2, I and J hold five so their stones
    /// go to a large pit, K 0 -> 1. The figure shows East 10 -> 12, which is
    /// the ruling's choice when South moves (the figure does not say who
    /// moved; any player may scoop any pit). So the figure is South's move.
    #[test]
    fn figure_5_no_six_count_pits() {
        let mut g =
            Diffusion::from_rows([2, 0, 1, 4, 0, 1], [0, 0, 5, 5, 0, 0], 20, 10, SOUTH, &s())
                .unwrap();
        play(&mut g, "C");
        assert_eq!(g.north_row(), [2, 0, 2, 0, 0, 1]);
        assert_eq!(g.south_row(), [0, 0, 5, 5, 1, 0]);
        assert_eq!((g.west(), g.east()), (20, 12));
        assert_eq!(g.outcome(), None);
    }

    /// The same move by North sends the two stones West (a ruling, docs/rules/diffusion.md).
    #[test]
    fn overflow_goes_to_the_movers_large_pit() {
        let mut g =
            Diffusion::from_rows([2, 0, 1, 4, 0, 1], [0, 0, 5, 5, 0, 0], 20, 10, NORTH, &s())
                .unwrap();
        play(&mut g, "C");
        assert_eq!(g.north_row(), [2, 0, 2, 0, 0, 1]);
        assert_eq!(g.south_row(), [0, 0, 5, 5, 1, 0]);
        assert_eq!((g.west(), g.east()), (22, 10));
    }

    /// Near-row order E, NE, N, NW, W: J's five stones go to K, B, C, D, I.
    #[test]
    fn near_row_order() {
        let mut g = Diffusion::from_rows([4; 6], [4, 4, 4, 5, 4, 3], 0, 0, SOUTH, &s()).unwrap();
        play(&mut g, "J");
        //                       F  E  D  C  B  A
        assert_eq!(g.north_row(), [4, 4, 5, 5, 5, 4]);
        //                       G  H  I  J  K  L
        assert_eq!(g.south_row(), [4, 4, 5, 0, 5, 3]);
    }

    /// Far-row order W, SW, S, SE, E (a property of the pit, so South may
    /// scoop it too): D's five stones go to E, H, I, J, C.
    #[test]
    fn far_row_order() {
        let mut g = Diffusion::from_rows([4, 4, 5, 4, 4, 3], [4; 6], 0, 0, SOUTH, &s()).unwrap();
        play(&mut g, "D");
        assert_eq!(g.north_row(), [4, 5, 0, 5, 4, 3]);
        assert_eq!(g.south_row(), [4, 5, 5, 5, 4, 4]);
    }

    /// The other corners: L (near row) gives East, East, A, B, K; A (far row)
    /// gives B, K, L, East, East; G gives H, E, F, West, West.
    #[test]
    fn corner_pits_l_a_g() {
        let mut g =
            Diffusion::from_rows([1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 5], 22, 10, SOUTH, &s())
                .unwrap();
        play(&mut g, "L");
        assert_eq!(g.north_row(), [1, 1, 1, 1, 2, 2]);
        assert_eq!(g.south_row(), [1, 1, 1, 1, 2, 0]);
        assert_eq!((g.west(), g.east()), (22, 12));

        let mut g =
            Diffusion::from_rows([1, 1, 1, 1, 1, 5], [1, 1, 1, 1, 1, 1], 22, 10, NORTH, &s())
                .unwrap();
        play(&mut g, "A");
        assert_eq!(g.north_row(), [1, 1, 1, 1, 2, 0]);
        assert_eq!(g.south_row(), [1, 1, 1, 1, 2, 2]);
        assert_eq!((g.west(), g.east()), (22, 12));

        let mut g =
            Diffusion::from_rows([1, 1, 1, 1, 1, 1], [5, 1, 1, 1, 1, 1], 22, 10, NORTH, &s())
                .unwrap();
        play(&mut g, "G");
        assert_eq!(g.north_row(), [2, 2, 1, 1, 1, 1]);
        assert_eq!(g.south_row(), [0, 2, 1, 1, 1, 1]);
        assert_eq!((g.west(), g.east()), (24, 10));
    }

    /// A corner pit with a full first neighbour: G's five stones, H holds
    /// five: that stone goes to the mover's large pit (South: East), then
    /// E, F and the West large pit twice.
    #[test]
    fn corner_pit_with_overflow() {
        let mut g = Diffusion::from_rows([4, 4, 4, 4, 4, 4], [5, 5, 3, 4, 4, 3], 0, 0, SOUTH, &s())
            .unwrap();
        play(&mut g, "G");
        assert_eq!(g.north_row(), [5, 5, 4, 4, 4, 4]);
        assert_eq!(g.south_row(), [0, 5, 3, 4, 4, 3]);
        assert_eq!((g.west(), g.east()), (2, 1));
    }

    /// Block win: the last stone of block A (I) scooped into J: block A is
    /// vacated, its owner South wins, whoever moved.
    #[test]
    fn vacated_block_owner_wins() {
        for mover in [SOUTH, NORTH] {
            let mut g =
                Diffusion::from_rows([0, 0, 0, 1, 0, 0], [0, 0, 1, 0, 0, 0], 23, 23, mover, &s())
                    .unwrap();
            play(&mut g, "I");
            assert_eq!(g.south_row(), [0, 0, 0, 1, 0, 0]);
            assert_eq!(g.outcome(), Some(Outcome::win(2, SOUTH, Reason::Block)));
            assert_eq!(g.to_decide(), None);
            let mut buf = Vec::new();
            g.options(&mut buf);
            assert!(buf.is_empty());
        }
        // Block B vacated: L's two stones both go East; North wins.
        let mut g =
            Diffusion::from_rows([0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 2], 22, 23, SOUTH, &s())
                .unwrap();
        play(&mut g, "L");
        assert_eq!(g.east(), 25);
        assert_eq!(g.outcome(), Some(Outcome::win(2, NORTH, Reason::Block)));
        // The block rule is judged before the ply cap.
        let capped = Settings {
            max_plies: 1,
            ..Settings::default()
        };
        let mut g = Diffusion::from_rows(
            [0, 0, 1, 0, 0, 0],
            [0, 0, 0, 0, 0, 2],
            22,
            23,
            SOUTH,
            &capped,
        )
        .unwrap();
        play(&mut g, "L");
        assert_eq!(g.outcome(), Some(Outcome::win(2, NORTH, Reason::Block)));
    }

    /// Empty pits and letters beyond L are rejected and leave the state as
    /// it was.
    #[test]
    fn illegal_options_leave_state_untouched() {
        let mut g =
            Diffusion::from_rows([0, 0, 0, 1, 0, 0], [0, 0, 1, 0, 0, 0], 23, 23, SOUTH, &s())
                .unwrap();
        let before = g.snapshot();
        assert!(matches!(g.apply(0), Err(EngineError::Illegal(_))));
        assert!(matches!(g.apply(12), Err(EngineError::Illegal(_))));
        assert!(g.parse("M").is_err());
        assert!(g.parse("west").is_err());
        assert_eq!(g.snapshot(), before);
        assert_eq!(g.parse("g").unwrap(), 6);
        assert_eq!(g.notation(6), "G");
    }

    #[test]
    fn from_rows_rejects_bad_positions() {
        assert!(Diffusion::from_rows([4; 6], [4; 6], 1, 0, SOUTH, &s()).is_err());
        assert!(Diffusion::from_rows([6, 2, 4, 4, 4, 4], [4; 6], 0, 0, SOUTH, &s()).is_err());
    }

    #[test]
    fn ply_cap_is_a_draw() {
        let settings = Settings {
            max_plies: 1,
            ..Settings::default()
        };
        let mut g = Diffusion::new(&settings).unwrap();
        play(&mut g, "I");
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::MaxPlies)));
    }

    /// Random games: invariants after every decision, every listed option
    /// applies, unlisted ones are rejected without change, the cap holds.
    #[test]
    fn random_games_keep_the_invariants() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut buf = Vec::new();
        let settings = Settings {
            max_plies: 300,
            ..Settings::default()
        };
        let mut ended_by_block = 0;
        for _ in 0..2000 {
            let mut g = Diffusion::new(&settings).unwrap();
            while g.to_decide().is_some() {
                g.options(&mut buf);
                assert!(!buf.is_empty(), "no move:\n{}", g.render());
                for p in 0..SMALL_PITS as u8 {
                    if !buf.contains(&p) {
                        let before = g.pits;
                        assert!(g.apply(p).is_err());
                        assert_eq!(g.pits, before);
                    }
                }
                let opt = buf[rng.gen_range(0..buf.len())];
                g.apply(opt).unwrap();
                g.check_invariants().unwrap();
                assert!(g.plies() <= 300);
            }
            if g.outcome().map(|o| o.reason) == Some(Reason::Block) {
                ended_by_block += 1;
            }
        }
        assert!(ended_by_block > 0);
    }

    /// Every pit's distribution order, written out by hand from the text
    /// and the rulings (docs/rules/diffusion.md) (near row E, NE, N, NW, W; far row W, SW, S, SE, E;
    /// off the board = the adjacent large pit, twice at a corner). For each
    /// pit and each count 1..=5, the pit alone holds stones (the rest of
    /// the 48 wait in the large pits): exactly the first k neighbours of
    /// the list receive one stone each.
    #[test]
    fn every_pits_order_by_hand() {
        let table = [
            ('F', ["West", "West", "G", "H", "E"]),
            ('E', ["F", "G", "H", "I", "D"]),
            ('D', ["E", "H", "I", "J", "C"]),
            ('C', ["D", "I", "J", "K", "B"]),
            ('B', ["C", "J", "K", "L", "A"]),
            ('A', ["B", "K", "L", "East", "East"]),
            ('G', ["H", "E", "F", "West", "West"]),
            ('H', ["I", "D", "E", "F", "G"]),
            ('I', ["J", "C", "D", "E", "H"]),
            ('J', ["K", "B", "C", "D", "I"]),
            ('K', ["L", "A", "B", "C", "J"]),
            ('L', ["East", "East", "A", "B", "K"]),
        ];
        let name = |i: usize| match i {
            WEST => "West".to_string(),
            EAST => "East".to_string(),
            p => Diffusion::letter(p as u8).to_string(),
        };
        for (pit, order) in table {
            let p = (pit as u8 - b'A') as usize;
            for k in 1..=5u8 {
                for mover in [SOUTH, NORTH] {
                    let mut g = Diffusion::new(&s()).unwrap();
                    g.pits = [0; 14];
                    g.pits[p] = k;
                    g.pits[WEST] = 24 - k;
                    g.pits[EAST] = 24;
                    g.to_move = mover as u8;
                    let before = g.pits;
                    play(&mut g, &pit.to_string());
                    let mut got: Vec<String> = Vec::new();
                    for (i, (&after, &was)) in g.pits.iter().zip(&before).enumerate() {
                        let gained = i32::from(after) - i32::from(was);
                        for _ in 0..gained.max(0) {
                            got.push(name(i));
                        }
                    }
                    let mut want: Vec<String> =
                        order[..k as usize].iter().map(|s| s.to_string()).collect();
                    got.sort();
                    want.sort();
                    assert_eq!(got, want, "{pit} with {k} stones");
                    assert_eq!(g.pits[p], 0);
                }
            }
        }
    }

    /// Cross-check against an independent implementation: a Python program
    /// written from the rule text and the rulings (docs/rules/diffusion.md)
    /// alone, not from this file (tests/data/rules/diffusion_reference.py,
    /// which also checks the text's figures 3 to 5), played random games
    /// and recorded, before every decision, its legal options and the one
    /// it picked, then the result, the plies and the final board.
    #[test]
    fn independent_implementation_agrees() {
        let games = crate::engine::testing::agrees_with_reference(
            Variant::Diffusion,
            "diffusion_random_games.jsonl",
        );
        assert!(games >= 100, "{games} games");
    }
}
