//! Per-game heuristics for the reference bots: an estimate, for a position
//! that is not over, of each seat's final score in [0, 1]. Owns nothing of
//! the rules: it reads positions through the engine's public accessors
//! (never the JSON snapshot, which allocates).

use crate::engine::{
    diffusion::Diffusion,
    filo::Filo,
    hackaback::{self, Hackaback},
    kisolo::Kisolo,
    tricala::{self, Tricala},
    Rules, Seat, MAX_SEATS,
};

/// Per-seat scores: 1 win, 0.5 draw, 0 loss (3 players: pairwise average,
/// as [`crate::engine::Outcome::scores`]).
pub type Scores = [f64; MAX_SEATS];

/// Most features a fitted heuristic reads ([`Evaluate::features`]).
pub const MAX_FEATURES: usize = 96;

/// The features of a position, as [`Evaluate::features`] writes them.
pub type Features = [f64; MAX_FEATURES];

/// A game the bots can evaluate.
/// `Hash` keys the alpha-beta search's transposition table.
pub trait Evaluate: Rules + std::hash::Hash {
    /// Each seat's expected score in [0, 1] (2 players: they sum to 1)
    /// for a position that is not over.
    fn estimate(&self) -> Scores;

    /// Two players: the weights of a logistic model of the chance that
    /// the player to move wins, fitted to the results of games
    /// (`examples/fit_data.rs`, `benches/fit_heuristic.py`): one per
    /// feature of [`Evaluate::features`] read from the mover's side.
    /// Empty where none was fitted.
    const WEIGHTS: &'static [f64] = &[];

    /// Three players: the weights of a logistic model of a seat's score
    /// (1 first, 0.5 second, 0 last, shares averaged), one per feature of
    /// [`Evaluate::features`] read from that seat's side. Empty where none
    /// was fitted.
    const WEIGHTS_3: &'static [f64] = &[];

    /// The features the weights weigh, read from `seat`'s side (the first
    /// is 1, the bias), into `out`; returns how many. None (0) where no
    /// heuristic was fitted (or for settings it was not fitted to).
    fn features(&self, _seat: Seat, _out: &mut Features) -> usize {
        0
    }

    /// The heuristic fitted to the results of games where one has been
    /// (Diffusion, Tricala with 2 and with 3 players); the
    /// hand-written [`Evaluate::estimate`] elsewhere.
    fn fitted(&self) -> Scores {
        let Some(mover) = self.to_decide() else {
            return self.estimate();
        };
        let weights = match self.players() {
            2 => Self::WEIGHTS,
            3 => Self::WEIGHTS_3,
            _ => &[],
        };
        let mut f = [0.0; MAX_FEATURES];
        let mut dot = |seat: Seat| {
            let n = self.features(seat, &mut f);
            (n > 0 && n == weights.len())
                .then(|| weights.iter().zip(&f[..n]).map(|(w, v)| w * v).sum::<f64>())
        };
        if self.players() == 2 {
            return match dot(mover) {
                Some(x) => two(if mover == 0 { x } else { -x }),
                None => self.estimate(),
            };
        }
        let mut s = [0.0; MAX_SEATS];
        for (seat, v) in s.iter_mut().enumerate().take(self.players()) {
            match dot(seat) {
                Some(x) => *v = logistic(x),
                None => return self.estimate(),
            }
        }
        s
    }

    /// The final scores when the game is over, else the estimate.
    fn value(&self) -> Scores {
        self.value_with(Self::estimate)
    }

    /// The final scores when the game is over, else `heuristic`'s.
    fn value_with(&self, heuristic: fn(&Self) -> Scores) -> Scores {
        match self.outcome() {
            Some(o) => {
                let mut s = [0.0; MAX_SEATS];
                for (i, v) in o.scores().into_iter().enumerate().take(MAX_SEATS) {
                    s[i] = v;
                }
                s
            }
            None => heuristic(self),
        }
    }
}

/// The heuristic a search reads at its horizon: [`Evaluate::fitted`], or
/// the hand-written [`Evaluate::estimate`].
pub fn heuristic<G: Evaluate>(fitted: bool) -> fn(&G) -> Scores {
    if fitted {
        G::fitted
    } else {
        G::estimate
    }
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Two players: seat 0 scores `logistic(h)`, seat 1 the rest.
fn two(h: f64) -> Scores {
    let p = logistic(h);
    [p, 1.0 - p, 0.0]
}

/// Writes features in order.
struct Writer<'a> {
    out: &'a mut Features,
    len: usize,
}

impl<'a> Writer<'a> {
    fn new(out: &'a mut Features) -> Self {
        Writer { out, len: 0 }
    }

    fn push(&mut self, v: f64) {
        self.out[self.len] = v;
        self.len += 1;
    }

    fn flag(&mut self, b: bool) {
        self.push(if b { 1.0 } else { 0.0 });
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// Turns per-seat "material" (more is better) into scores: each pair of
/// seats compared through a logistic of the difference, averaged as the
/// engine averages pairwise results.
fn from_material(m: &[f64], scale: f64) -> Scores {
    let n = m.len().min(MAX_SEATS);
    let mut s = [0.0; MAX_SEATS];
    if n < 2 {
        return s;
    }
    for i in 0..n {
        let sum: f64 = (0..n)
            .filter(|&j| j != i)
            .map(|j| logistic((m[i] - m[j]) * scale))
            .sum();
        s[i] = sum / (n - 1) as f64;
    }
    s
}

/// F.I.L.O: "the player who moves last ... wins": in the movement phase,
/// controlled stacks are moves left; fewer pieces is better (one or none
/// wins, and the escape needs 2 to 4).
impl Evaluate for Filo {
    fn estimate(&self) -> Scores {
        let squares = self.squares();
        let mut control = [0.0f64; 2];
        for s in &squares {
            match s.as_bytes().last() {
                Some(b'W') => control[0] += 1.0,
                Some(b'B') => control[1] += 1.0,
                _ => {}
            }
        }
        let pieces = [self.pieces(0) as f64, self.pieces(1) as f64];
        two(0.35 * (control[0] - control[1]) + 0.15 * (pieces[1] - pieces[0]))
    }
}

/// Diffusion: South (seat 0) wins when block A (F E D G H I, the West half)
/// is vacated, North when block B (C B A J K L, the East half) is: fewer
/// stones in one's own block is better.
impl Evaluate for Diffusion {
    fn estimate(&self) -> Scores {
        let (n, s) = (self.north_row(), self.south_row());
        let block_a: u32 = (0..3).map(|c| (n[c] + s[c]) as u32).sum();
        let block_b: u32 = (3..6).map(|c| (n[c] + s[c]) as u32).sum();
        two((block_b as f64 - block_a as f64) / 6.0)
    }

    const WEIGHTS: &'static [f64] = &DIFFUSION_WEIGHTS;

    /// Fitted to results (issue 51): the board seen from the mover's side
    /// (rotated half a turn for North, which the rules leave unchanged: the
    /// mover's block is then the three left columns of both rows, the far
    /// row first). The features: each pit's stones and whether it is
    /// empty, the stones and the pits holding stones in each block, and
    /// whether one pit is all a block has left. Fitted to the results of
    /// 110,251 positions of 1,200 games of the default MCTS against itself
    /// at 3 ms a decision; on the fifth held out it predicts the winner
    /// 58.7% of the time (log-loss 0.669), where the hand-written estimate
    /// does 52.9% (0.715, worse than a coin's 0.693).
    fn features(&self, seat: Seat, out: &mut Features) -> usize {
        let (n, s) = (self.north_row(), self.south_row());
        let (far, near) = if seat != 1 {
            (n, s)
        } else {
            let (mut far, mut near) = (s, n);
            far.reverse();
            near.reverse();
            (far, near)
        };
        let mut f = Writer::new(out);
        f.push(1.0);
        far.iter().chain(&near).for_each(|&v| f.push(f64::from(v)));
        far.iter().chain(&near).for_each(|&v| f.flag(v == 0));
        let block = |cols: std::ops::Range<usize>| {
            let pits = far[cols.clone()].iter().chain(&near[cols]);
            let stones: u32 = pits.clone().map(|&v| u32::from(v)).sum();
            let held = pits.filter(|&&v| v > 0).count() as f64;
            (f64::from(stones), held)
        };
        let (my_stones, my_held) = block(0..3);
        let (their_stones, their_held) = block(3..6);
        f.push(my_stones);
        f.push(their_stones);
        f.push(my_held);
        f.push(their_held);
        f.flag(my_held == 1.0);
        f.flag(their_held == 1.0);
        f.len()
    }
}

/// Diffusion's [`Evaluate::WEIGHTS`], in the order of its features.
const DIFFUSION_WEIGHTS: [f64; 31] = [
    0.0084, // bias
    0.0053, -0.0292, 0.0571, 0.0483, 0.0547, -0.0320, // far row: stones
    0.0351, -0.0575, -0.0460, -0.0622, 0.0227, 0.0045, // near row: stones
    -0.0048, 0.2663, 0.2445, 0.4236, 0.2227, -0.2665, // far row: empty
    0.2691, -0.2066, -0.3903, -0.2344, -0.2346, 0.0178, // near row: empty
    -0.0352, 0.0361, // stones in my block, in theirs
    -0.1276, 0.1219, // pits holding stones in my block, in theirs
    0.6406, -0.4086, // one pit left in my block, in theirs
];

/// Tricala: captured stones (nine win) and corner pits held (holding the
/// corners is the other goal), read straight from the position.
impl Evaluate for Tricala {
    fn estimate(&self) -> Scores {
        let n = self.players();
        let captured = self.captured();
        let mut m = [0.0; MAX_SEATS];
        for (seat, v) in m.iter_mut().enumerate().take(n) {
            let held = self.corners_held(seat);
            *v = captured[seat] as f64 + 1.5 * f64::from(held);
        }
        from_material(&m[..n], 0.5)
    }

    const WEIGHTS: &'static [f64] = &TRICALA_WEIGHTS;

    const WEIGHTS_3: &'static [f64] = &TRICALA_WEIGHTS_3;

    /// Fitted to results (issue 51). Two players: with `m` the seat whose
    /// side is read and `o` the other, each pit's stones of `m` and of `o`
    /// (board order), then for `m` and `o` in turn: stones captured, on
    /// the board, in hand, corners held, corners still short of the corner
    /// goal (3 when nothing is on the board), one corner short, seven or
    /// more captured, pits holding their stones; then the pits holding
    /// both colours and whether the decision is a set-up placement or one
    /// made mid-sowing (a direction or a colour).
    ///
    /// Three players: each pit's stones of `m` and of the other two
    /// together; the same eight for `m` and the next two seats in turn
    /// order; the pits holding `m`'s colour and another; the two kinds of
    /// decision; whether `m` decides now, and whether `m` is next.
    fn features(&self, seat: Seat, out: &mut Features) -> usize {
        let n = self.players();
        let m = seat % n;
        let seats = [m, (m + 1) % n, (m + 2) % n];
        let seats = &seats[..n];
        let mut f = Writer::new(out);
        f.push(1.0);
        let pits = || 0..tricala::PITS as u8;
        pits().for_each(|p| f.push(f64::from(self.pit(p)[m])));
        pits().for_each(|p| {
            let others: u8 = seats[1..].iter().map(|&c| self.pit(p)[c]).sum();
            f.push(f64::from(others))
        });
        let hand = self.hand();
        let captured = self.captured();
        for &c in seats {
            let held = self.corners_held(c);
            let on_board = self.on_board(c);
            let short = match on_board.min(3) {
                0 => 3,
                needed => needed.saturating_sub(held),
            };
            f.push(f64::from(captured[c]));
            f.push(f64::from(on_board));
            f.push(f64::from(hand[c]));
            f.push(f64::from(held));
            f.push(f64::from(short));
            f.flag(short == 1);
            f.flag(captured[c] >= 7);
            f.push(pits().filter(|&p| self.pit(p)[c] > 0).count() as f64);
        }
        let mixed = pits()
            .filter(|&p| self.pit(p)[m] > 0 && seats[1..].iter().any(|&c| self.pit(p)[c] > 0))
            .count();
        f.push(mixed as f64);
        f.flag(self.decision_kind() == "place");
        f.flag(matches!(self.decision_kind(), "direction" | "colour"));
        if n == 3 {
            let to_decide = self.to_decide();
            f.flag(to_decide == Some(seats[0]));
            f.flag(to_decide == Some(seats[1]));
        }
        f.len()
    }
}

/// Tricala's [`Evaluate::WEIGHTS`] (two players), in the order of its
/// features.
const TRICALA_WEIGHTS: [f64; 62] = [
    -0.7862, -0.2824, 0.0229, 0.0720, 0.0114, 0.2081, -0.0181, -0.0828, 0.1509, 0.1302, 0.0024,
    0.0319, 0.1635, 0.1049, 0.1887, -0.0082, -0.2815, 0.0646, 0.0454, -0.0819, 0.0716, -0.2919,
    0.2314, -0.0341, -0.0798, -0.0123, -0.2143, 0.0195, 0.0730, -0.1277, -0.1045, 0.0126, -0.0329,
    -0.1692, -0.0933, -0.1844, 0.0220, 0.2573, -0.0830, -0.0413, 0.0637, -0.0736, 0.2663, 0.5929,
    0.2216, 0.2324, 0.2634, 0.0782, 0.5008, 0.0939, 0.2831, -0.7065, -0.3046, 0.0550, 0.3624,
    0.7605, -0.7579, -0.0612, -0.2736, 0.0349, -1.2311, 0.1332,
];

/// Tricala's [`Evaluate::WEIGHTS_3`] (three players), in the order of its
/// features.
const TRICALA_WEIGHTS_3: [f64; 72] = [
    -0.0138, 0.0090, 0.0154, 0.0646, 0.0216, 0.0757, 0.0145, -0.0386, 0.0328, 0.0163, 0.0461,
    0.0441, 0.0316, 0.0023, 0.0178, 0.0252, -0.0283, 0.0718, -0.0003, 0.0138, 0.0207, -0.0845,
    -0.0104, -0.0168, -0.0427, -0.0201, -0.0468, -0.0182, 0.0086, -0.0258, -0.0161, -0.0337,
    -0.0315, -0.0238, -0.0108, -0.0167, -0.0221, 0.0153, -0.0454, -0.0095, -0.0166, -0.0212,
    0.0462, 0.4461, 0.3716, 0.4793, 0.0306, 0.1150, 0.3053, 0.0298, 0.1429, -0.1497, -0.0457,
    -0.0993, -0.1340, -0.0267, -0.0264, -0.1372, 0.0043, -0.3023, -0.3121, -0.3883, 0.0552,
    -0.0793, -0.2627, 0.1148, -0.1037, -0.0527, -0.0351, 0.0033, 0.4976, -0.5371,
];

/// Hackaback: how far home one's own seeds are, as a share of what one
/// needs (White 6, Black 18; all home wins). A seed in the store counts 1,
/// a seed on the loop less the further it has to travel (Black sows up the
/// ring towards S, White down it), so sowing home and hacking the other's
/// seeds back both show.
impl Evaluate for Hackaback {
    fn estimate(&self) -> Scores {
        let ring = hackaback::RING as u32;
        let store = hackaback::STORE as u32;
        let mut m = [0.0; 2];
        for (seat, v) in m.iter_mut().enumerate() {
            let mut progress = self.store()[seat] as f64;
            for place in (0..ring as u8).filter(|&p| p as u32 != store) {
                let p = place as u32;
                let distance = if seat == hackaback::BLACK {
                    (store + ring - p) % ring
                } else {
                    (p + ring - store) % ring
                };
                let seeds = self.seeds(place, seat) as f64;
                progress += seeds * 0.5 * (1.0 - distance as f64 / ring as f64);
            }
            *v = progress / hackaback::SEEDS[seat] as f64;
        }
        from_material(&m, 4.0)
    }
}

/// Kisolo: seeds held on one's own side, the inner row counted twice (an
/// empty inner row loses, and only inner seeds capture).
impl Evaluate for Kisolo {
    fn estimate(&self) -> Scores {
        let c = self.columns();
        let board = self.board();
        let m: Vec<f64> = (0..2)
            .map(|s| {
                let outer: u32 = board[s][..c].iter().map(|&x| x as u32).sum();
                let inner: u32 = board[s][c..2 * c].iter().map(|&x| x as u32).sum();
                (outer + 2 * inner) as f64
            })
            .collect();
        from_material(&m, 0.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Rules, Settings};
    use rand::{Rng, SeedableRng};

    /// Half a turn of the board with the players swapped is the same game
    /// (each pit's order of neighbours turns with it, and North's block
    /// lands where South's was): the fitted heuristic must give each
    /// player the same chance in both.
    #[test]
    fn the_fitted_diffusion_heuristic_is_the_same_from_either_side() {
        let settings = Settings::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut opts = Vec::new();
        let mut seen = 0;
        for _ in 0..50 {
            let mut g = Diffusion::new(&settings).expect("the default game");
            while let Some(mover) = g.to_decide() {
                let (mut north, mut south) = (g.south_row(), g.north_row());
                north.reverse();
                south.reverse();
                let turned =
                    Diffusion::from_rows(north, south, g.east(), g.west(), 1 - mover, &settings)
                        .expect("a legal position");
                let (a, b) = (g.fitted(), turned.fitted());
                assert!((a[0] - b[1]).abs() < 1e-12 && (a[1] - b[0]).abs() < 1e-12);
                assert!((a[0] + a[1] - 1.0).abs() < 1e-12);
                seen += 1;
                g.options(&mut opts);
                g.apply(opts[rng.gen_range(0..opts.len())]).expect("legal");
            }
        }
        assert!(seen > 500, "{seen} positions");
    }

    /// A block with one pit left to empty is the fitted model's strongest
    /// feature: the mover's chance is higher with it than without.
    #[test]
    fn the_fitted_diffusion_heuristic_likes_a_last_pit_in_ones_block() {
        let settings = Settings::default();
        // South to move; South's block (F E D / G H I) holds 2 stones in
        // one pit against 2 stones in each of two pits; 48 stones in all.
        let one = Diffusion::from_rows([2, 0, 0, 5, 5, 5], [0, 0, 0, 5, 5, 5], 8, 8, 0, &settings)
            .expect("legal");
        let two = Diffusion::from_rows([1, 1, 0, 5, 5, 5], [0, 0, 0, 5, 5, 5], 8, 8, 0, &settings)
            .expect("legal");
        assert!(one.fitted()[0] > two.fitted()[0]);
    }

    /// Tricala's fitted model reads the board from the mover's side: the
    /// same stones with the colours and the mover swapped give each
    /// player the same chance.
    #[test]
    fn the_fitted_tricala_heuristic_is_the_same_for_either_colour() {
        let s = Settings::with_players(2);
        let white = Tricala::from_position(
            &s,
            &[
                ("6a", [2, 1, 0]),
                ("4b", [3, 0, 0]),
                ("3c", [0, 5, 0]),
                ("5e", [1, 1, 0]),
            ],
            [3, 2, 0],
            0,
        )
        .expect("legal");
        let black = Tricala::from_position(
            &s,
            &[
                ("6a", [1, 2, 0]),
                ("4b", [0, 3, 0]),
                ("3c", [5, 0, 0]),
                ("5e", [1, 1, 0]),
            ],
            [2, 3, 0],
            1,
        )
        .expect("legal");
        let (a, b) = (white.fitted(), black.fitted());
        assert!(
            (a[0] - b[1]).abs() < 1e-12 && (a[1] - b[0]).abs() < 1e-12,
            "{a:?} {b:?}"
        );
        assert!((a[0] + a[1] - 1.0).abs() < 1e-12);
    }

    /// Captures are the text's first goal: with seven captured against
    /// none (the rest of the stones where they were), the mover's chance
    /// rises; and three players keep the hand-written estimate.
    #[test]
    fn the_fitted_tricala_heuristic_likes_captures() {
        let s = Settings::with_players(2);
        let level = Tricala::from_position(
            &s,
            &[("4b", [2, 0, 0]), ("3c", [0, 2, 0]), ("5c", [7, 7, 0])],
            [0, 0, 0],
            0,
        )
        .expect("legal");
        let ahead = Tricala::from_position(
            &s,
            &[("4b", [2, 0, 0]), ("3c", [0, 2, 0]), ("5c", [7, 0, 0])],
            [7, 0, 0],
            0,
        )
        .expect("legal");
        assert!(ahead.fitted()[0] > level.fitted()[0] + 0.1);
    }

    /// Three players: the colours turned one seat round (each seat's
    /// stones and captures given to the next, the turn too) turn the
    /// chances with them, and seven captured raise a seat's chance above
    /// the others'.
    #[test]
    fn the_three_player_tricala_heuristic_turns_with_the_seats() {
        let s = Settings::with_players(3);
        let rot = |[a, b, c]: [u8; 3]| [c, a, b];
        let layout = [
            ("6a", [2, 1, 0]),
            ("4b", [3, 0, 1]),
            ("3c", [0, 4, 0]),
            ("5e", [1, 1, 2]),
            ("1a", [0, 0, 3]),
        ];
        let game = |turned: bool| {
            let at: Vec<(&str, [u8; 3])> = layout
                .iter()
                .map(|&(p, v)| (p, if turned { rot(v) } else { v }))
                .collect();
            let captured = [7, 0, 2];
            let captured = if turned { rot(captured) } else { captured };
            Tricala::from_position(&s, &at, captured, usize::from(turned)).expect("legal")
        };
        let (a, b) = (game(false).fitted(), game(true).fitted());
        for seat in 0..3 {
            assert!((a[seat] - b[(seat + 1) % 3]).abs() < 1e-12, "{a:?} {b:?}");
            assert!((0.0..=1.0).contains(&a[seat]));
        }
        assert!(a[0] > a[1] && a[0] > a[2], "{a:?}");
        assert_ne!(a, game(false).estimate());
    }

    /// Where no heuristic was fitted, `fitted` is the hand-written one.
    #[test]
    fn fitted_is_the_estimate_where_none_was_fitted() {
        let g = Kisolo::new(&Settings::default()).expect("the default game");
        assert_eq!(g.fitted(), g.estimate());
    }
}
