//! F.I.L.O solved by retrograde analysis (issue 6, docs/filo-solved.md).
//! Owns the solver only; it plays F.I.L.O through the engine's public API
//! (`Filo::from_position`, `Rules::options`/`apply`/`outcome`).
//!
//! The movement phase can cycle (a sowing that exits nothing can be undone
//! by later sowings), so a depth-first search with a transposition table is
//! not sound without path-dependent draws. Instead the solver enumerates
//! every position reachable from the root (board, reserves, side to move:
//! the ply counter is not part of the position and the ply cap is switched
//! off), then runs a retrograde analysis over that finite graph:
//!
//! - a position is a **win** for the side to move in `d` plies if some move
//!   ends the game in its favour (`d = 1`) or leads to a position lost for
//!   the opponent in `d - 1`, taking the smallest such `d`;
//! - a **loss** in `d` plies if every move ends the game against it or leads
//!   to a position won for the opponent, `d` being the longest of these;
//! - every position left is a **draw by infinite play**: neither side can
//!   force the end of the game.
//!
//! A win in `d` plies is also a win in the arena whenever the ply cap leaves
//! at least `d` more plies (reaching the cap is a draw; the rulings (docs/rules/filo.md)).

use crate::engine::filo::{Filo, FiloOpt, BLACK, SQUARES, WHITE};
use crate::engine::{EngineError, Rules, Seat, Settings};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The game-theoretic value of a position for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// The side to move wins in at most this many plies (with best play).
    Win(u32),
    /// The side to move loses, and can delay it this many plies at most.
    Loss(u32),
    /// Neither side can force the end: infinite play.
    Draw,
}

/// What a solve established.
#[derive(Clone, Debug)]
pub struct Solution {
    pub value: Value,
    /// Distinct non-final positions reachable from the root.
    pub states: usize,
    /// Moves between them (options applied during the enumeration).
    pub edges: u64,
    pub wins: usize,
    pub losses: usize,
    pub draws: usize,
    pub elapsed: Duration,
    /// A principal variation from the root: the winner takes the fastest
    /// win, the loser the longest defence (canonical notation).
    pub line: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    #[error("more than {0} positions: bound reached, nothing proved")]
    TooMany(usize),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Settings with the ply cap switched off (the solver judges infinite play
/// itself).
pub fn uncapped() -> Settings {
    Settings {
        max_plies: u32::MAX,
        ..Settings::default()
    }
}

/// The text's position "after 12 single-checker entries each": three stacks
/// of four White checkers on A B C, three of Black on F G H, White to move.
pub fn after_single_entries() -> Result<Filo, EngineError> {
    Filo::from_position(
        ["WWWW", "WWWW", "WWWW", "", "", "BBBB", "BBBB", "BBBB"],
        [0, 0],
        WHITE,
        &uncapped(),
    )
}

/// A position as 49 bits: per square 5 bits (a stack of height `h` with
/// colour bits `c`, bit `i` set when the `i`-th checker from the bottom is
/// Black, is `2^h - 1 + c`), then both reserves (4 bits each) and the side
/// to move.
pub fn key(g: &Filo) -> u64 {
    let mut k = 0u64;
    for (sq, s) in g.squares().iter().enumerate() {
        let h = s.len() as u64;
        let c = s
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'B')
            .fold(0u64, |acc, (i, _)| acc | 1 << i);
        k |= ((1 << h) - 1 + c) << (5 * sq);
    }
    let r = g.reserve();
    k |= (r[0] as u64) << 40 | (r[1] as u64) << 44;
    k |= (g.to_decide().unwrap_or(WHITE) as u64) << 48;
    k
}

/// The position of a [`key`].
pub fn decode(k: u64) -> Result<Filo, EngineError> {
    let squares: [String; SQUARES] = std::array::from_fn(|sq| {
        let code = (k >> (5 * sq)) & 31;
        let h = (0..=4u32)
            .rev()
            .find(|&h| (1u64 << h) - 1 <= code)
            .unwrap_or(0);
        let c = code - ((1 << h) - 1);
        (0..h)
            .map(|i| if c >> i & 1 == 1 { 'B' } else { 'W' })
            .collect()
    });
    let refs: [&str; SQUARES] = std::array::from_fn(|sq| squares[sq].as_str());
    let reserve = [(k >> 40 & 15) as u8, (k >> 44 & 15) as u8];
    let to_move = (k >> 48 & 1) as Seat;
    Filo::from_position(refs, reserve, to_move, &uncapped())
}

/// What a move does: ends the game (won or lost for the mover) or leads to
/// the position with this index.
#[derive(Clone, Copy)]
enum Edge {
    WinNow,
    LossNow,
    To(u32),
}

fn edge_of(child: &Filo, mover: Seat, index: &mut HashMap<u64, u32>, keys: &mut Vec<u64>) -> Edge {
    match child.outcome() {
        Some(o) if o.ranks[mover] == 0 && !o.is_draw() => Edge::WinNow,
        Some(_) => Edge::LossNow,
        None => {
            let k = key(child);
            let next = keys.len() as u32;
            let i = *index.entry(k).or_insert(next);
            if i == next {
                keys.push(k);
            }
            Edge::To(i)
        }
    }
}

const UNKNOWN: u8 = 0;
const WIN: u8 = 1;
const LOSS: u8 = 2;

/// Solves `root` (a position not over). Fails without proving anything if
/// more than `max_states` positions are reachable.
pub fn solve(root: &Filo, max_states: usize) -> Result<Solution, SolveError> {
    let t0 = Instant::now();
    let graph = Graph::enumerate(root, max_states)?;
    let n = graph.keys.len();
    let (value, dist) = graph.retrograde();
    let val = |j: usize| match value[j] {
        WIN => Value::Win(dist[j]),
        LOSS => Value::Loss(dist[j]),
        _ => Value::Draw,
    };
    let wins = value.iter().filter(|&&v| v == WIN).count();
    let losses = value.iter().filter(|&&v| v == LOSS).count();
    let line = principal_variation(root, &graph.keys, &val)?;
    Ok(Solution {
        value: val(0),
        states: n,
        edges: graph.edges,
        wins,
        losses,
        draws: n - wins - losses,
        elapsed: t0.elapsed(),
        line,
    })
}

/// The value of every non-final position reachable from `root`, by
/// [`key`] (the ply cap off): what the reference bot plays from once it
/// has them. Fails without proving anything beyond `max_states`.
pub fn solve_values(root: &Filo, max_states: usize) -> Result<HashMap<u64, Value>, SolveError> {
    let graph = Graph::enumerate(root, max_states)?;
    let (value, dist) = graph.retrograde();
    // The moves are no longer needed: free them before the map grows.
    let Graph { keys, .. } = graph;
    Ok(keys
        .iter()
        .enumerate()
        .map(|(j, &k)| {
            let v = match value[j] {
                WIN => Value::Win(dist[j]),
                LOSS => Value::Loss(dist[j]),
                _ => Value::Draw,
            };
            (k, v)
        })
        .collect())
}

/// Every non-final position reachable from the root, by index (the root
/// is 0), with its moves.
struct Graph {
    keys: Vec<u64>,
    /// Successors in CSR form: those of `p` are
    /// `succ[succ_start[p]..succ_start[p + 1]]`. Moves that end the game
    /// are folded into `win_now`.
    succ_start: Vec<u64>,
    succ: Vec<u32>,
    /// Whether some move of the position wins at once.
    win_now: Vec<bool>,
    /// Moves between them (options applied during the enumeration).
    edges: u64,
}

impl Graph {
    /// Enumerates the positions reachable from `root`, breadth first;
    /// fails beyond `max_states`.
    fn enumerate(root: &Filo, max_states: usize) -> Result<Graph, SolveError> {
        let mut index: HashMap<u64, u32> = HashMap::new();
        let mut keys: Vec<u64> = vec![key(root)];
        index.insert(keys[0], 0);
        let mut succ_start: Vec<u64> = vec![0];
        let mut succ: Vec<u32> = Vec::new();
        let mut win_now: Vec<bool> = Vec::new();
        let mut edges = 0u64;
        let mut opts: Vec<FiloOpt> = Vec::new();
        let mut i = 0usize;
        while i < keys.len() {
            if keys.len() > max_states {
                return Err(SolveError::TooMany(max_states));
            }
            let g = decode(keys[i])?;
            let mover = g.to_decide().unwrap_or(WHITE);
            g.options(&mut opts);
            let mut w = false;
            for &o in &opts {
                let mut child = g.clone();
                child.apply(o)?;
                edges += 1;
                match edge_of(&child, mover, &mut index, &mut keys) {
                    Edge::WinNow => w = true,
                    Edge::LossNow => {}
                    Edge::To(c) => succ.push(c),
                }
            }
            win_now.push(w);
            succ_start.push(succ.len() as u64);
            i += 1;
        }
        Ok(Graph {
            keys,
            succ_start,
            succ,
            win_now,
            edges,
        })
    }

    /// The predecessors in CSR form: those of `c` are
    /// `pred[pred_start[c]..pred_start[c + 1]]`.
    fn predecessors(&self) -> (Vec<u64>, Vec<u32>) {
        let n = self.keys.len();
        let mut pred_start = vec![0u64; n + 1];
        for &c in &self.succ {
            pred_start[c as usize + 1] += 1;
        }
        for j in 0..n {
            pred_start[j + 1] += pred_start[j];
        }
        let mut fill = pred_start.clone();
        let mut pred = vec![0u32; self.succ.len()];
        for p in 0..n {
            for &c in &self.succ[self.succ_start[p] as usize..self.succ_start[p + 1] as usize] {
                pred[fill[c as usize] as usize] = p as u32;
                fill[c as usize] += 1;
            }
        }
        (pred_start, pred)
    }

    /// The retrograde analysis, in order of distance: each position's
    /// value (`WIN`, `LOSS`, or `UNKNOWN` for a draw) and distance.
    fn retrograde(&self) -> (Vec<u8>, Vec<u32>) {
        let n = self.keys.len();
        let (pred_start, pred) = self.predecessors();
        let mut value = vec![UNKNOWN; n];
        let mut dist = vec![0u32; n];
        let mut left: Vec<u32> = (0..n)
            .map(|p| (self.succ_start[p + 1] - self.succ_start[p]) as u32)
            .collect();
        let mut queue: std::collections::VecDeque<u32> = std::collections::VecDeque::new();
        for p in 0..n {
            if self.win_now[p] {
                value[p] = WIN;
                dist[p] = 1;
                queue.push_back(p as u32);
            } else if left[p] == 0 {
                // Every move ends the game against the mover.
                value[p] = LOSS;
                dist[p] = 1;
                queue.push_back(p as u32);
            }
        }
        while let Some(c) = queue.pop_front() {
            let c = c as usize;
            for &p in &pred[pred_start[c] as usize..pred_start[c + 1] as usize] {
                let p = p as usize;
                if value[p] != UNKNOWN {
                    continue;
                }
                if value[c] == LOSS {
                    value[p] = WIN;
                    dist[p] = dist[c] + 1;
                    queue.push_back(p as u32);
                } else {
                    left[p] -= 1;
                    if left[p] == 0 {
                        value[p] = LOSS;
                        dist[p] = dist[c] + 1;
                        queue.push_back(p as u32);
                    }
                }
            }
        }
        (value, dist)
    }
}

/// A principal variation from `root`, replayed on the engine: the winner
/// takes the fastest win, the loser the longest defence (`val` of the
/// position with each of `keys`). Empty for a draw.
fn principal_variation(
    root: &Filo,
    keys: &[u64],
    val: &dyn Fn(usize) -> Value,
) -> Result<Vec<String>, SolveError> {
    let mut line = Vec::new();
    let mut g = root.clone();
    let mut opts: Vec<FiloOpt> = Vec::new();
    let lookup: HashMap<u64, u32> = if val(0) == Value::Draw {
        HashMap::new()
    } else {
        keys.iter()
            .enumerate()
            .map(|(j, &k)| (k, j as u32))
            .collect()
    };
    while val(0) != Value::Draw && g.outcome().is_none() && line.len() < 400 {
        let mover = g.to_decide().unwrap_or(WHITE);
        g.options(&mut opts);
        // Score each move for the mover: win fast, lose slowly.
        let score = |o: FiloOpt| -> i64 {
            let mut child = g.clone();
            if child.apply(o).is_err() {
                return i64::MIN;
            }
            match child.outcome() {
                Some(out) if out.ranks[mover] == 0 && !out.is_draw() => 1_000_000,
                Some(_) => -1_000_000 + 1,
                None => match lookup.get(&key(&child)).map(|&j| val(j as usize)) {
                    Some(Value::Loss(d)) => 1_000_000 - d as i64,
                    Some(Value::Win(d)) => -1_000_000 + d as i64,
                    _ => 0,
                },
            }
        };
        let Some(&best) = opts.iter().max_by_key(|&&o| score(o)) else {
            break;
        };
        line.push(g.notation(best));
        g.apply(best)?;
    }
    Ok(line)
}

/// The seat that wins `root` with best play, if either does.
pub fn winner(root: &Filo, v: Value) -> Option<Seat> {
    let mover = root.to_decide()?;
    match v {
        Value::Win(_) => Some(mover),
        Value::Loss(_) => Some(if mover == WHITE { BLACK } else { WHITE }),
        Value::Draw => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        let g = Filo::from_position(
            ["WBW", "B", "", "WWWW", "BWBW", "", "B", ""],
            [2, 3],
            BLACK,
            &uncapped(),
        )
        .unwrap();
        let back = decode(key(&g)).unwrap();
        assert_eq!(back.squares(), g.squares());
        assert_eq!(back.reserve(), [2, 3]);
        assert_eq!(back.to_decide(), Some(BLACK));
        assert_eq!(key(&back), key(&g));
    }
}

/// What a depth-bounded proof search established.
#[derive(Clone, Debug)]
pub struct Proof {
    /// The smallest ply bound within which `winner` was proved to win, if
    /// any up to the bound tried.
    pub plies: Option<u32>,
    /// The largest bound tried.
    pub bound: u32,
    /// Positions visited (all iterations).
    pub nodes: u64,
    pub elapsed: Duration,
}

/// Transposition entry: `win_at` the smallest remaining depth at which the
/// win is proved (`u8::MAX`: none), `fail_at` the largest at which it is
/// refuted. Both are path-independent facts about the depth-bounded game,
/// so the table is sound even though the real game can cycle.
#[derive(Clone, Copy)]
struct Entry {
    win_at: u8,
    fail_at: u8,
}

struct Prover {
    winner: Seat,
    table: HashMap<u64, Entry>,
    max_table: usize,
    nodes: u64,
    deadline: Option<Instant>,
    out_of_time: bool,
}

impl Prover {
    /// Can `winner` force a win within `depth` plies from `g`?
    fn wins(&mut self, g: &Filo, depth: u8) -> bool {
        self.nodes += 1;
        if let Some(o) = g.outcome() {
            return o.ranks[self.winner] == 0 && !o.is_draw();
        }
        if depth == 0 || self.out_of_time {
            return false;
        }
        if self.nodes.is_multiple_of(65_536) && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.out_of_time = true;
            return false;
        }
        let k = key(g);
        if let Some(e) = self.table.get(&k) {
            if e.win_at <= depth {
                return true;
            }
            if e.fail_at != u8::MAX && e.fail_at >= depth {
                return false;
            }
        }
        let attacker = g.to_decide() == Some(self.winner);
        let mut opts = Vec::with_capacity(8);
        g.options(&mut opts);
        // Immediate results first: the attacker takes a win at once.
        let mut children: Vec<Filo> = opts
            .iter()
            .filter_map(|&o| {
                let mut c = g.clone();
                c.apply(o).ok().map(|()| c)
            })
            .collect();
        children.sort_by_key(|c| c.outcome().is_none());
        let result = if attacker {
            children.iter().any(|c| self.wins(c, depth - 1))
        } else {
            children.iter().all(|c| self.wins(c, depth - 1))
        };
        if self.out_of_time {
            return false;
        }
        if self.table.len() >= self.max_table {
            self.table.clear();
        }
        let e = self.table.entry(k).or_insert(Entry {
            win_at: u8::MAX,
            fail_at: u8::MAX,
        });
        if result {
            e.win_at = e.win_at.min(depth);
        } else if e.fail_at == u8::MAX || e.fail_at < depth {
            e.fail_at = depth;
        }
        result
    }
}

/// Iterative deepening: the smallest ply bound `d <= max_plies` within
/// which `winner` can force a win from `root`, if there is one (and the
/// time limit, if any, is not reached). A result is a proof: the bounded
/// game has no cycles, and a win within `d` plies is a win of the real
/// game, and of the arena's game when the ply cap leaves `d` plies.
pub fn prove(root: &Filo, winner: Seat, max_plies: u32, time_limit: Option<Duration>) -> Proof {
    let t0 = Instant::now();
    let mut p = Prover {
        winner,
        table: HashMap::new(),
        max_table: 50_000_000,
        nodes: 0,
        deadline: time_limit.and_then(|t| t0.checked_add(t)),
        out_of_time: false,
    };
    let mut bound = 0;
    for d in 1..=max_plies.min(u8::MAX as u32 - 1) {
        if p.wins(root, d as u8) {
            return Proof {
                plies: Some(d),
                bound: d,
                nodes: p.nodes,
                elapsed: t0.elapsed(),
            };
        }
        if p.out_of_time {
            break;
        }
        bound = d;
    }
    Proof {
        plies: None,
        bound,
        nodes: p.nodes,
        elapsed: t0.elapsed(),
    }
}
