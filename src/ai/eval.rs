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
    Rules, MAX_SEATS,
};

/// Per-seat scores: 1 win, 0.5 draw, 0 loss (3 players: pairwise average,
/// as [`crate::engine::Outcome::scores`]).
pub type Scores = [f64; MAX_SEATS];

/// A game the bots can evaluate.
/// `Hash` keys the alpha-beta search's transposition table.
pub trait Evaluate: Rules + std::hash::Hash {
    /// Each seat's expected score in [0, 1] (2 players: they sum to 1)
    /// for a position that is not over.
    fn estimate(&self) -> Scores;

    /// The final scores when the game is over, else the estimate.
    fn value(&self) -> Scores {
        match self.outcome() {
            Some(o) => {
                let mut s = [0.0; MAX_SEATS];
                for (i, v) in o.scores().into_iter().enumerate().take(MAX_SEATS) {
                    s[i] = v;
                }
                s
            }
            None => self.estimate(),
        }
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
}

/// Tricala: captured stones (nine win) and corner pits held (holding the
/// corners is the other goal), read straight from the position.
impl Evaluate for Tricala {
    fn estimate(&self) -> Scores {
        let n = self.players();
        let captured = self.captured();
        let mut m = [0.0; MAX_SEATS];
        for (seat, v) in m.iter_mut().enumerate().take(n) {
            let held = tricala::CORNERS
                .iter()
                .filter(|&&p| {
                    let pit = self.pit(p);
                    let total: u32 = pit.iter().map(|&x| x as u32).sum();
                    2 * pit[seat] as u32 > total
                })
                .count();
            *v = captured[seat] as f64 + 1.5 * held as f64;
        }
        from_material(&m[..n], 0.5)
    }
}

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
