//! The estimate where nothing exact reaches: alpha-beta to a depth in
//! decisions over the engine's options, scored by the reference bots'
//! heuristic (`crate::ai::eval`) from the deciding seat's point of view.
//! The other seats minimise it (with three players: the paranoid
//! assumption). Exact values are used wherever the oracle gives one.

use crate::ai::eval::Evaluate;
use crate::engine::Seat;
use crate::tables::probe::Oracle;
use crate::tables::Value;
use std::time::Instant;

struct Search<'a, G: Evaluate> {
    root: Seat,
    oracle: &'a dyn Oracle<G>,
    deadline: Option<Instant>,
    nodes: u64,
    out_of_time: bool,
}

impl<G: Evaluate> Search<'_, G> {
    /// The score of `g` for the root seat, `depth` decisions deep.
    fn score(&mut self, g: &G, depth: u32, mut alpha: f64, mut beta: f64) -> f64 {
        self.nodes += 1;
        if self.nodes.is_multiple_of(1024) && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.out_of_time = true;
        }
        let Some(mover) = g.to_decide() else {
            return g.value()[self.root];
        };
        if let Some(v) = self.oracle.known(g) {
            let s = match v {
                Value::Win(_) => 1.0,
                Value::Draw => 0.5,
                Value::Loss(_) => 0.0,
            };
            return if mover == self.root { s } else { 1.0 - s };
        }
        if depth == 0 || self.out_of_time {
            return g.value()[self.root];
        }
        let mut opts = Vec::new();
        g.options(&mut opts);
        let maximise = mover == self.root;
        let mut best = if maximise {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        for o in opts {
            let mut c = g.clone();
            if c.apply(o).is_err() {
                continue;
            }
            let s = self.score(&c, depth - 1, alpha, beta);
            if maximise {
                best = best.max(s);
                alpha = alpha.max(s);
            } else {
                best = best.min(s);
                beta = beta.min(s);
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

/// Each option's score for the seat deciding in `g`, searched `depth`
/// decisions deep, or by iterative deepening up to `depth` until the
/// deadline; returns the scores of the deepest search finished and its
/// depth (at least 1: the first is always finished).
pub fn option_scores<G: Evaluate>(
    g: &G,
    opts: &[G::Opt],
    depth: u32,
    deadline: Option<Instant>,
    oracle: &dyn Oracle<G>,
) -> (Vec<f64>, u32) {
    let root = g.to_decide().unwrap_or(0);
    let mut best: (Vec<f64>, u32) = (vec![0.5; opts.len()], 0);
    for d in 1..=depth.max(1) {
        let mut s = Search {
            root,
            oracle,
            // The first depth always finishes.
            deadline: deadline.filter(|_| d > 1),
            nodes: 0,
            out_of_time: false,
        };
        let scores: Vec<f64> = opts
            .iter()
            .map(|&o| {
                let mut c = g.clone();
                match c.apply(o) {
                    Ok(()) => s.score(&c, d - 1, f64::NEG_INFINITY, f64::INFINITY),
                    Err(_) => 0.0,
                }
            })
            .collect();
        if s.out_of_time {
            break;
        }
        best = (scores, d);
        if deadline.is_some_and(|t| Instant::now() >= t) {
            break;
        }
    }
    best
}
