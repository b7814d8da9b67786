//! The greedy player: one turn of lookahead with a per-game heuristic.
//! Owns only the choice; the protocol loop is in [`super::driver`].

use super::eval::Evaluate;
use crate::engine::Seat;
use rand::Rng;

/// Positions a greedy choice may look at (the rest of the own turn is
/// searched only while this lasts).
pub const NODE_BUDGET: u32 = 20_000;

/// The value for `me` of `g` after the rest of `me`'s own turn, played to
/// maximise the heuristic (several decisions in a row: Tricala's colours
/// and directions, Hackaback's colours).
fn turn_value<G: Evaluate>(g: &G, me: Seat, budget: &mut u32, buf: &mut Vec<G::Opt>) -> f64 {
    if g.to_decide() != Some(me) || *budget == 0 {
        return g.value()[me];
    }
    g.options(buf);
    let opts = buf.clone();
    let mut best = f64::NEG_INFINITY;
    for o in opts {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let mut next = g.clone();
        if next.apply(o).is_err() {
            continue;
        }
        best = best.max(turn_value(&next, me, budget, buf));
    }
    if best.is_finite() {
        best
    } else {
        g.value()[me]
    }
}

/// The option of the current decision with the best value at the end of
/// the own turn (ties broken at random); `None` once the game is over.
pub fn choose<G: Evaluate, R: Rng>(g: &G, rng: &mut R) -> Option<G::Opt> {
    let me = g.to_decide()?;
    let mut buf = Vec::new();
    g.options(&mut buf);
    let opts = buf.clone();
    let mut budget = NODE_BUDGET;
    let mut best: Option<(f64, G::Opt)> = None;
    for o in opts {
        let mut next = g.clone();
        if next.apply(o).is_err() {
            continue;
        }
        let v = turn_value(&next, me, &mut budget, &mut buf) + rng.gen::<f64>() * 1e-6;
        if best.is_none_or(|(b, _)| v > b) {
            best = Some((v, o));
        }
    }
    best.map(|(_, o)| o)
}
