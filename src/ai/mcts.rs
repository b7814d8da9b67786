//! The search player: Monte-Carlo tree search (UCT) over decisions, with
//! per-seat rewards (so 3-player Tricala is max-n style: each seat picks
//! what is best for itself) and truncated random playouts scored by the
//! per-game heuristic. Owns only the search.

use super::eval::{Evaluate, Scores};
use crate::engine::{Seat, Variant, MAX_SEATS};
use rand::Rng;
use std::time::Instant;

/// Search parameters.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// UCT exploration constant.
    pub explore: f64,
    /// Random decisions played after a new leaf before the heuristic
    /// scores the position.
    pub playout_depth: u32,
    /// Playouts end on [`Evaluate::fitted`], not [`Evaluate::estimate`].
    pub fitted: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            explore: 0.7,
            playout_depth: 30,
            fitted: false,
        }
    }
}

struct Node<O> {
    /// The option that led here (none at the root).
    opt: Option<O>,
    /// The seat that decides in this node's position (none: game over).
    seat: Option<Seat>,
    children: Vec<u32>,
    untried: Vec<O>,
    visits: u32,
    reward: Scores,
}

/// What one search did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub iterations: u64,
    /// Decisions applied (tree and playouts).
    pub decisions: u64,
}

impl Params {
    /// The settings `alphabeta-rust` plays with in `variant` (`search-rust`
    /// keeps [`Params::default`], the reference it is measured against).
    /// Kisolo: playouts of 8 decisions, not 30. A Kisolo decision is a
    /// whole turn of relay laps, so 30 random turns reach far past what
    /// the heuristic can still read (a random game is over in about 35);
    /// in-process duels at 20 ms a decision scored the short playouts
    /// about +180 Elo over the long ones (BENCHMARKS.md, "Reference bots
    /// (issue 51)").
    ///
    /// Diffusion: playouts of 10 decisions ending on the heuristic fitted
    /// to results (Diffusion's [`Evaluate::WEIGHTS`]), explore 0.5;
    /// the hand-written estimate reads Diffusion worse than a coin.
    ///
    /// 2-player Tricala: playouts of 6 decisions ending on the heuristic
    /// fitted to results (75% of winners right where the hand-written one
    /// has 60%); +96 Elo over the default in 100 in-process games at 50 ms.
    /// 3-player Tricala keeps the default.
    pub fn tuned(variant: Variant, players: usize) -> Self {
        match variant {
            Variant::Tricala if players == 2 => Params {
                playout_depth: 6,
                fitted: true,
                ..Params::default()
            },
            Variant::Diffusion => Params {
                explore: 0.5,
                playout_depth: 10,
                fitted: true,
            },
            Variant::Kisolo => Params {
                playout_depth: 8,
                ..Params::default()
            },
            _ => Params::default(),
        }
    }
}

/// Searches until `deadline` (at least one iteration per option), or for
/// exactly `iterations` when given (the deadline then is not looked at: a
/// search that stops on a count is reproducible), and returns the most
/// visited option of the current decision.
pub fn choose<G: Evaluate, R: Rng>(
    root: &G,
    deadline: Instant,
    iterations: Option<u64>,
    params: Params,
    rng: &mut R,
) -> Option<(G::Opt, Stats)> {
    let seat = root.to_decide()?;
    let mut buf = Vec::new();
    root.options(&mut buf);
    if buf.len() == 1 {
        return Some((buf[0], Stats::default()));
    }
    let root_opts = buf.clone();
    let mut nodes: Vec<Node<G::Opt>> = vec![Node {
        opt: None,
        seat: Some(seat),
        children: Vec::new(),
        untried: root_opts.clone(),
        visits: 0,
        reward: [0.0; MAX_SEATS],
    }];
    let mut stats = Stats::default();
    let mut path: Vec<u32> = Vec::with_capacity(64);
    let heuristic = if params.fitted {
        G::fitted
    } else {
        G::estimate
    };
    loop {
        let done = match iterations {
            Some(n) => stats.iterations >= n,
            None => {
                stats.iterations % 16 == 0
                    && stats.iterations >= nodes[0].untried.len() as u64
                    && Instant::now() >= deadline
            }
        };
        if done {
            break;
        }
        stats.iterations += 1;
        let mut g = root.clone();
        path.clear();
        path.push(0);
        let mut at = 0usize;
        // Selection.
        while nodes[at].untried.is_empty() && !nodes[at].children.is_empty() {
            let me = nodes[at].seat.unwrap_or(0);
            let ln = (nodes[at].visits.max(1) as f64).ln();
            let mut best = (f64::NEG_INFINITY, 0u32);
            for &c in &nodes[at].children {
                let n = &nodes[c as usize];
                let v = n.visits.max(1) as f64;
                let ucb = n.reward[me] / v + params.explore * (ln / v).sqrt();
                if ucb > best.0 {
                    best = (ucb, c);
                }
            }
            at = best.1 as usize;
            if let Some(o) = nodes[at].opt {
                if g.apply(o).is_err() {
                    break;
                }
                stats.decisions += 1;
            }
            path.push(at as u32);
        }
        // Expansion.
        if !nodes[at].untried.is_empty() {
            let i = rng.gen_range(0..nodes[at].untried.len());
            let o = nodes[at].untried.swap_remove(i);
            if g.apply(o).is_ok() {
                stats.decisions += 1;
                g.options(&mut buf);
                let child = Node {
                    opt: Some(o),
                    seat: g.to_decide(),
                    children: Vec::new(),
                    untried: buf.clone(),
                    visits: 0,
                    reward: [0.0; MAX_SEATS],
                };
                let id = nodes.len() as u32;
                nodes.push(child);
                nodes[at].children.push(id);
                path.push(id);
            }
        }
        // Playout.
        let mut depth = 0;
        while g.to_decide().is_some() && depth < params.playout_depth {
            g.options(&mut buf);
            let o = buf[rng.gen_range(0..buf.len())];
            if g.apply(o).is_err() {
                break;
            }
            depth += 1;
            stats.decisions += 1;
        }
        let value = g.value_with(heuristic);
        // Backpropagation.
        for &n in &path {
            let node = &mut nodes[n as usize];
            node.visits += 1;
            for (r, v) in node.reward.iter_mut().zip(value) {
                *r += v;
            }
        }
    }
    let best = nodes[0]
        .children
        .iter()
        .max_by_key(|&&c| nodes[c as usize].visits)
        .and_then(|&c| nodes[c as usize].opt)
        .or_else(|| root_opts.first().copied())?;
    Some((best, stats))
}
