//! Iterative-deepening principal-variation search (issue 51): alpha-beta
//! over the engine's decisions with a bounded transposition table, move
//! ordering (the table's move, two killers a ply, a history score) and
//! exact values wherever an [`Oracle`] gives them (the endgame tables, the
//! F.I.L.O solver). The reference bot `alphabeta-rust` plays with it and
//! `arena analyse` estimates with it ([`option_scores`]).
//!
//! Whose turn it is comes from the state, never from alternation: a turn
//! can hold several decisions of one player (Tricala's colours and
//! directions, Hackaback's colours), and the value is negated only where
//! the side changes. Two players are two sides; with three, one seat
//! plays against the other two (the paranoid assumption).
//!
//! Scores are integers for the side to move: a heuristic estimate in
//! ±[`HEURISTIC_SCALE`]/2 (from `crate::ai::eval`), a proven result as
//! ±([`WIN`] − plies to it), so that faster wins and slower losses rank
//! first. Owns only the search: positions through `Rules`, exact values
//! through the oracle.

use super::eval::Evaluate;
use crate::engine::Seat;
use crate::tables::probe::Oracle;
use crate::tables::Value;
use std::hash::{Hash, Hasher};
use std::time::Instant;

/// The score of a win now; a win `d` decisions away scores `WIN - d`.
pub const WIN: i32 = 1_000_000;
/// Scores beyond ± this are proven results, not estimates.
pub const PROVEN: i32 = 400_000;
/// The heuristic's estimate `p` in [0, 1] scores `(p - 1/2) × this`.
pub const HEURISTIC_SCALE: f64 = 20_000.0;
const INF: i32 = 2_000_000;
/// The deepest iteration (decisions).
pub const MAX_DEPTH: u32 = 64;
const NONE: u8 = u8::MAX;

/// Who plays against whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sides {
    /// Two players, seat 0 against seat 1.
    Two,
    /// This seat against all the others (three players, paranoid).
    Paranoid(Seat),
}

impl Sides {
    /// The side (0 or 1) of a seat.
    fn of(self, seat: Seat) -> usize {
        match self {
            Sides::Two => seat.min(1),
            Sides::Paranoid(me) => usize::from(seat != me),
        }
    }

    /// The seat whose expected score is side 0's.
    fn seat0(self) -> Seat {
        match self {
            Sides::Two => 0,
            Sides::Paranoid(me) => me,
        }
    }

    /// Mixed into table keys: paranoid values depend on the seat searched.
    fn salt(self) -> u64 {
        match self {
            Sides::Two => 0,
            Sides::Paranoid(me) => 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(me as u64 + 1),
        }
    }

    /// The sides for the seat deciding in a game of `players`.
    pub fn for_game(players: usize, seat: Seat) -> Sides {
        if players > 2 {
            Sides::Paranoid(seat)
        } else {
            Sides::Two
        }
    }
}

/// A fast, non-cryptographic hasher for table keys (the positions come
/// from our own engine, not from an adversary).
struct KeyHasher(u64);

impl KeyHasher {
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            self.add(u64::from_le_bytes(b));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b) ^ (rest.len() as u64) << 60);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        // SplitMix64's finaliser: the low bits index the table.
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A position's table key (its whole state: board, hand, phase, mover,
/// ply; Hackaback's repetition history aside).
pub fn key<G: Hash>(g: &G) -> u64 {
    let mut h = KeyHasher(0);
    g.hash(&mut h);
    h.finish()
}

const BOUND_EXACT: u8 = 1;
const BOUND_LOWER: u8 = 2;
const BOUND_UPPER: u8 = 3;

/// One transposition-table slot (16 bytes).
#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    value: i32,
    depth: u8,
    /// 0: empty, else one of the `BOUND_*`.
    bound: u8,
    /// The best option's index in the position's option list.
    best: u8,
    age: u8,
}

/// What one search found.
#[derive(Clone, Copy, Debug)]
pub struct Found<O> {
    pub best: O,
    /// The best option's score for the side deciding.
    pub score: i32,
    /// The deepest iteration finished (decisions).
    pub depth: u32,
    pub nodes: u64,
}

/// The search's memory between decisions: the transposition table and
/// the history scores. Its size is fixed when made.
pub struct Searcher {
    tt: Vec<Entry>,
    age: u8,
    history: [[u32; 64]; 2],
    /// Estimates with [`Evaluate::fitted`] rather than the hand-written
    /// [`Evaluate::estimate`] at the horizon.
    pub fitted: bool,
}

impl Searcher {
    /// A searcher whose table takes about `megabytes` MB (a power of two
    /// of 16-byte slots, at least 1024 of them).
    pub fn new(megabytes: usize) -> Searcher {
        let want = (megabytes.max(1) << 20) / std::mem::size_of::<Entry>();
        let slots = (want.max(1024) + 1).next_power_of_two() / 2;
        Searcher {
            tt: vec![Entry::default(); slots.max(1024)],
            age: 0,
            history: [[0; 64]; 2],
            fitted: false,
        }
    }

    /// Searches `g`'s decision by iterative deepening up to `max_depth`
    /// decisions, until `deadline` (the first iteration always finishes),
    /// and returns the best option found; `None` when the game is over.
    pub fn choose<G: Evaluate>(
        &mut self,
        g: &G,
        sides: Sides,
        oracle: &dyn Oracle<G>,
        deadline: Option<Instant>,
        max_depth: u32,
    ) -> Option<Found<G::Opt>> {
        let mover = g.to_decide()?;
        let mut opts = Vec::new();
        g.options(&mut opts);
        let first = *opts.first()?;
        self.age = self.age.wrapping_add(1);
        for row in self.history.iter_mut() {
            row.iter_mut().for_each(|h| *h /= 8);
        }
        let mut found = Found {
            best: first,
            score: 0,
            depth: 0,
            nodes: 0,
        };
        if opts.len() == 1 && deadline.is_some() {
            // A bot's forced decision: nothing to search.
            return Some(found);
        }
        let mut ctx = Ctx::new(self, sides, oracle, None);
        let side = sides.of(mover);
        // The previous iteration's scores order the next one.
        let mut order: Vec<(i32, usize)> = (0..opts.len()).map(|i| (0, i)).collect();
        for d in 1..=max_depth.clamp(1, MAX_DEPTH) {
            ctx.deadline = deadline.filter(|_| d > 1);
            let mut alpha = -INF;
            let mut best: Option<(i32, usize)> = None;
            for (n, slot) in order.iter_mut().enumerate() {
                let i = slot.1;
                let mut c = g.clone();
                if c.apply(opts[i]).is_err() {
                    slot.0 = -INF;
                    continue;
                }
                let depth = d as i32 - 1;
                let mut v = if n == 0 {
                    ctx.child(&c, side, depth, -INF, INF, 1)
                } else {
                    ctx.child(&c, side, depth, alpha, alpha + 1, 1)
                };
                if n > 0 && v > alpha && !ctx.out_of_time {
                    v = ctx.child(&c, side, depth, alpha, INF, 1);
                }
                if ctx.out_of_time {
                    break;
                }
                slot.0 = v;
                if best.is_none_or(|(b, _)| v > b) {
                    best = Some((v, i));
                }
                alpha = alpha.max(v);
            }
            if let Some((score, i)) = best {
                found.best = opts[i];
                found.score = score;
            }
            if ctx.out_of_time {
                break;
            }
            found.depth = d;
            order.sort_by_key(|&(v, i)| (std::cmp::Reverse(v), i));
            if found.score.abs() > PROVEN || deadline.is_some_and(|t| Instant::now() >= t) {
                break;
            }
        }
        found.nodes = ctx.nodes;
        Some(found)
    }
}

/// One search's state: the shared memory, the oracle, the clock and the
/// per-ply buffers (so a node allocates nothing once they have grown).
struct Ctx<'a, G: Evaluate> {
    mem: &'a mut Searcher,
    oracle: &'a dyn Oracle<G>,
    sides: Sides,
    salt: u64,
    deadline: Option<Instant>,
    nodes: u64,
    out_of_time: bool,
    opts: Vec<Vec<G::Opt>>,
    order: Vec<Vec<(u32, u8)>>,
    killers: Vec<[u8; 2]>,
}

impl<'a, G: Evaluate> Ctx<'a, G> {
    fn new(
        mem: &'a mut Searcher,
        sides: Sides,
        oracle: &'a dyn Oracle<G>,
        deadline: Option<Instant>,
    ) -> Ctx<'a, G> {
        let plies = MAX_DEPTH as usize + 2;
        Ctx {
            mem,
            oracle,
            sides,
            salt: sides.salt(),
            deadline,
            nodes: 0,
            out_of_time: false,
            opts: (0..plies).map(|_| Vec::new()).collect(),
            order: (0..plies).map(|_| Vec::new()).collect(),
            killers: vec![[NONE; 2]; plies],
        }
    }

    /// The score of `c` (just after a decision of `side`) for `side`.
    fn child(&mut self, c: &G, side: usize, depth: i32, alpha: i32, beta: i32, ply: usize) -> i32 {
        match c.to_decide() {
            None => self.terminal(c, side, ply),
            Some(m) if self.sides.of(m) == side => self.node(c, depth, alpha, beta, ply),
            Some(_) => -self.node(c, depth, -beta, -alpha, ply),
        }
    }

    /// A finished game's score for `side`, `ply` decisions from the root.
    fn terminal(&self, c: &G, side: usize, ply: usize) -> i32 {
        let p = c.value()[self.sides.seat0()];
        let s0 = ((p - 0.5) * 2.0 * f64::from(WIN - ply as i32)).round() as i32;
        if side == 0 {
            s0
        } else {
            -s0
        }
    }

    /// The heuristic's score of `g` for `side`.
    fn estimate(&self, g: &G, side: usize) -> i32 {
        let p = g.value_with(super::eval::heuristic(self.mem.fitted))[self.sides.seat0()];
        let s0 = ((p - 0.5) * HEURISTIC_SCALE).round() as i32;
        if side == 0 {
            s0
        } else {
            -s0
        }
    }

    /// The score of `g` (not over) for the side deciding there.
    fn node(&mut self, g: &G, depth: i32, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.nodes += 1;
        if self.nodes.is_multiple_of(256) && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.out_of_time = true;
        }
        if self.out_of_time {
            return 0;
        }
        let Some(mover) = g.to_decide() else {
            return 0;
        };
        let side = self.sides.of(mover);
        if let Some(v) = self.oracle.known(g) {
            return exact(v, ply);
        }
        if depth <= 0 || ply + 1 >= self.opts.len() {
            return self.estimate(g, side);
        }
        let key = key(g) ^ self.salt;
        let slot = (key as usize) & (self.mem.tt.len() - 1);
        let e = self.mem.tt[slot];
        let mut tt_best = NONE;
        if e.bound != 0 && e.key == key {
            tt_best = e.best;
            if i32::from(e.depth) >= depth {
                let v = from_tt(e.value, ply);
                match e.bound {
                    BOUND_EXACT => return v,
                    BOUND_LOWER if v >= beta => return v,
                    BOUND_UPPER if v <= alpha => return v,
                    _ => {}
                }
            }
        }
        let alpha0 = alpha;
        let mut opts = std::mem::take(&mut self.opts[ply]);
        let mut order = std::mem::take(&mut self.order[ply]);
        g.options(&mut opts);
        self.order_options(&mut order, opts.len(), tt_best, side, ply);
        let (mut best, mut best_i) = (-INF, NONE);
        for (n, &(_, i)) in order.iter().enumerate() {
            let mut c = g.clone();
            if c.apply(opts[i as usize]).is_err() {
                continue;
            }
            let mut v = if n == 0 {
                self.child(&c, side, depth - 1, alpha, beta, ply + 1)
            } else {
                self.child(&c, side, depth - 1, alpha, alpha + 1, ply + 1)
            };
            if n > 0 && v > alpha && v < beta && !self.out_of_time {
                v = self.child(&c, side, depth - 1, alpha, beta, ply + 1);
            }
            if self.out_of_time {
                break;
            }
            if v > best {
                (best, best_i) = (v, i);
            }
            alpha = alpha.max(v);
            if alpha >= beta {
                let k = &mut self.killers[ply];
                if k[0] != i {
                    *k = [i, k[0]];
                }
                let h = &mut self.mem.history[side][i as usize % 64];
                *h = h.saturating_add((depth * depth) as u32);
                break;
            }
        }
        self.opts[ply] = opts;
        self.order[ply] = order;
        if self.out_of_time {
            return 0;
        }
        if best_i == NONE {
            return self.estimate(g, side);
        }
        let bound = if best <= alpha0 {
            BOUND_UPPER
        } else if best >= beta {
            BOUND_LOWER
        } else {
            BOUND_EXACT
        };
        let e = &mut self.mem.tt[slot];
        if e.bound == 0 || e.key == key || e.age != self.mem.age || i32::from(e.depth) <= depth {
            *e = Entry {
                key,
                value: to_tt(best, ply),
                depth: depth.clamp(0, 255) as u8,
                bound,
                best: best_i,
                age: self.mem.age,
            };
        }
        best
    }

    /// The order to try `n` options in: the table's move, the killers,
    /// then by history score (ties in the engine's order).
    fn order_options(
        &self,
        order: &mut Vec<(u32, u8)>,
        n: usize,
        tt_best: u8,
        side: usize,
        ply: usize,
    ) {
        order.clear();
        let k = self.killers[ply];
        for i in 0..n.min(NONE as usize) {
            let i = i as u8;
            let s = if i == tt_best {
                u32::MAX
            } else if i == k[0] {
                u32::MAX - 1
            } else if i == k[1] {
                u32::MAX - 2
            } else {
                self.mem.history[side][i as usize % 64].min(u32::MAX - 3)
            };
            order.push((s, i));
        }
        order.sort_by_key(|&(s, i)| (std::cmp::Reverse(s), i));
    }
}

/// An exact value for the side to move, `ply` decisions from the root.
fn exact(v: Value, ply: usize) -> i32 {
    let to_go = ply as i32 + i32::from(v.plies());
    match v {
        Value::Win(_) => WIN - to_go,
        Value::Loss(_) => -(WIN - to_go),
        Value::Draw => 0,
    }
}

/// Proven scores count plies from the root; the table keeps them from the
/// position, so that they hold wherever it is met again.
fn to_tt(v: i32, ply: usize) -> i32 {
    if v > PROVEN {
        v + ply as i32
    } else if v < -PROVEN {
        v - ply as i32
    } else {
        v
    }
}

fn from_tt(v: i32, ply: usize) -> i32 {
    if v > PROVEN {
        v - ply as i32
    } else if v < -PROVEN {
        v + ply as i32
    } else {
        v
    }
}

/// A score for the side deciding as an expected score in [0, 1]: a
/// proven one as the game's result (1, 1/2, 0; with three players also
/// 1/4 and 3/4), an estimate as the heuristic's.
pub fn expected(score: i32) -> f64 {
    if score.abs() > PROVEN {
        let p = 0.5 + f64::from(score) / (2.0 * f64::from(WIN));
        (p * 4.0).round() / 4.0
    } else {
        (0.5 + f64::from(score) / HEURISTIC_SCALE).clamp(0.0, 1.0)
    }
}

/// Each option's expected score in [0, 1] for the seat deciding in `g`,
/// searched `depth` decisions deep (the option itself the first), or by
/// iterative deepening up to `depth` until the deadline; returns the
/// scores of the deepest search finished and its depth (at least 1: the
/// first is always finished). `arena analyse`'s estimate.
pub fn option_scores<G: Evaluate>(
    g: &G,
    opts: &[G::Opt],
    depth: u32,
    deadline: Option<Instant>,
    oracle: &dyn Oracle<G>,
) -> (Vec<f64>, u32) {
    let root = g.to_decide().unwrap_or(0);
    let sides = Sides::for_game(g.players(), root);
    let side = sides.of(root);
    let mut mem = Searcher::new(16);
    let mut best: (Vec<f64>, u32) = (vec![0.5; opts.len()], 0);
    for d in 1..=depth.clamp(1, MAX_DEPTH) {
        let mut ctx = Ctx::new(&mut mem, sides, oracle, deadline.filter(|_| d > 1));
        let scores: Vec<f64> = opts
            .iter()
            .map(|&o| {
                let mut c = g.clone();
                match c.apply(o) {
                    Ok(()) => expected(ctx.child(&c, side, d as i32 - 1, -INF, INF, 1)),
                    Err(_) => 0.0,
                }
            })
            .collect();
        if ctx.out_of_time {
            break;
        }
        best = (scores, d);
        if deadline.is_some_and(|t| Instant::now() >= t) {
            break;
        }
    }
    best
}

#[cfg(test)]
mod tests;
