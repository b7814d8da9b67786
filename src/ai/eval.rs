//! Per-game heuristics for the reference bots: an estimate, for a position
//! that is not over, of each seat's final score in [0, 1]. Owns nothing of
//! the rules: it reads positions through the engine's public API (and, for
//! games whose internals it does not know, through `snapshot()`).

use crate::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    Rules, MAX_SEATS,
};

/// Per-seat scores: 1 win, 0.5 draw, 0 loss (3 players: pairwise average,
/// as [`crate::engine::Outcome::scores`]).
pub type Scores = [f64; MAX_SEATS];

/// A game the bots can evaluate.
pub trait Evaluate: Rules {
    /// Each seat's expected score in [0, 1] (2 players: they sum to 1).
    /// The default reads well-known per-seat counters from the snapshot.
    fn estimate(&self) -> Scores {
        snapshot_estimate(&self.snapshot(), self.players())
    }

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

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn sum_array(v: &serde_json::Value) -> f64 {
    v.as_array().map_or(0.0, |a| a.iter().map(num).sum())
}

/// Material from the snapshot of a game whose internals the bots do not use
/// directly: Tricala's `captured` (stones captured, by seat), Hackaback's
/// `store` (`{"W": n, "B": n}`, seeds home: all home wins), Kisolo's
/// `outer`/`inner` rows (seeds held by seat). Unknown shapes: neutral.
pub fn snapshot_estimate(v: &serde_json::Value, players: usize) -> Scores {
    let n = players.clamp(1, MAX_SEATS);
    let neutral = {
        let mut s = [0.0; MAX_SEATS];
        s[..n].iter_mut().for_each(|x| *x = 0.5);
        s
    };
    if let Some(c) = v.get("captured").and_then(|c| c.as_array()) {
        let m: Vec<f64> = c.iter().map(num).take(n).collect();
        if m.len() == n {
            return from_material(&m, 0.5);
        }
    }
    if let Some(store) = v.get("store").filter(|s| s.is_object()) {
        let m = [num(&store["W"]), num(&store["B"])];
        return from_material(&m, 0.4);
    }
    if let (Some(outer), Some(inner)) = (
        v.get("outer").and_then(|o| o.as_array()),
        v.get("inner").and_then(|i| i.as_array()),
    ) {
        if outer.len() >= 2 && inner.len() >= 2 {
            // Seeds held, with the inner row counted once more: an empty
            // inner row loses.
            let m: Vec<f64> = (0..2)
                .map(|s| sum_array(&outer[s]) + 2.0 * sum_array(&inner[s]))
                .collect();
            return from_material(&m, 0.1);
        }
    }
    neutral
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

impl Evaluate for Tricala {}
impl Evaluate for Hackaback {}
impl Evaluate for Kisolo {}
