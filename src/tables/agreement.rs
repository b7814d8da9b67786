//! The tables against an exhaustive search that knows nothing of them: a
//! plain depth-bounded game-tree search over the engine's decisions says
//! whether a player can force a win within d plies. A table's Win(d) must
//! be forced within d plies and not within d - 1; a Loss(d) must be the
//! opponent's forced win within d and not d - 1; a draw must be no forced
//! win for either side within the bound searched.

use super::build::built_for_test;
use super::diffusion::DiffusionTable;
use super::hackaback::HackabackTable;
use super::probe::{state_value, Oracle, Tables};
use super::tricala::TricalaTable;
use super::{layers_upto, TableGame, Value};
use crate::engine::{Rules, Seat};

/// Can `winner` force a win within `plies` more completed turns?
fn forced_win<G: Rules>(g: &G, winner: Seat, plies: u32) -> bool {
    if let Some(o) = g.outcome() {
        return !o.is_draw() && o.ranks[winner] == 0;
    }
    if plies == 0 {
        return false;
    }
    let Some(mover) = g.to_decide() else {
        return false;
    };
    let mut opts = Vec::new();
    g.options(&mut opts);
    let mut child_results = opts.into_iter().map(|o| {
        let mut c = g.clone();
        c.apply(o).expect("a listed option applies");
        let used = c.plies() - g.plies();
        forced_win(&c, winner, plies - used.min(plies))
    });
    if mover == winner {
        child_results.any(|w| w)
    } else {
        child_results.all(|w| w)
    }
}

/// Checks every position of the built layers whose value is decided
/// within `bound` plies (and every draw, to `bound`), sampling one index
/// in `step`.
fn agree<T: TableGame>(seeds: u32, bound: u16, step: u64) -> (u64, u64) {
    let dir = built_for_test::<T>(seeds);
    let tables = Tables::<T>::open(dir.path());
    let (mut checked, mut decided) = (0, 0);
    for layer in layers_upto::<T>(seeds) {
        for i in (0..T::layer_size(layer)).step_by(step as usize) {
            let Some(g) = T::decode(layer, i) else {
                continue;
            };
            let v = tables
                .at_turn_start(&g)
                .expect("a built layer has every value");
            let mover = g.to_decide().expect("not over");
            let (winner, d) = match v {
                Value::Win(d) => (Some(mover), d),
                Value::Loss(d) => (Some(1 - mover), d),
                Value::Draw => (None, bound),
            };
            if d > bound {
                continue;
            }
            checked += 1;
            match winner {
                Some(w) => {
                    decided += 1;
                    let d = u32::from(d);
                    assert!(
                        forced_win(&g, w, d),
                        "{layer}/{i} {v:?}: no forced win in {d}\n{}",
                        g.render()
                    );
                    assert!(
                        !forced_win(&g, w, d - 1),
                        "{layer}/{i} {v:?}: a win in {}\n{}",
                        d - 1,
                        g.render()
                    );
                }
                None => {
                    for s in 0..2 {
                        assert!(
                            !forced_win(&g, s, u32::from(bound)),
                            "{layer}/{i}: drawn, yet seat {s} wins\n{}",
                            g.render()
                        );
                    }
                }
            }
            // The position's value is also its best option's (the probe
            // of a state through its options agrees with the table).
            let through_options = {
                struct Only<'a, T: TableGame>(&'a Tables<T>, &'a T::G);
                impl<T: TableGame> Oracle<T::G> for Only<'_, T> {
                    fn at_turn_start(&self, g: &T::G) -> Option<Value> {
                        if T::locate(g) == T::locate(self.1) {
                            return None;
                        }
                        self.0.at_turn_start(g)
                    }
                }
                state_value(&Only(&tables, &g), &g)
            };
            assert_eq!(through_options, Some(v), "{layer}/{i}");
        }
    }
    (checked, decided)
}

#[test]
fn diffusion_tables_agree_with_exhaustive_search() {
    let (checked, decided) = agree::<DiffusionTable>(4, 5, 1);
    assert!(
        checked > 1000 && decided > 500,
        "{checked} checked, {decided} decided"
    );
}

#[test]
fn hackaback_tables_agree_with_exhaustive_search() {
    let (checked, decided) = agree::<HackabackTable>(4, 5, 3);
    assert!(
        checked > 1000 && decided > 500,
        "{checked} checked, {decided} decided"
    );
}

#[test]
fn tricala_tables_agree_with_exhaustive_search() {
    let (checked, decided) = agree::<TricalaTable>(3, 5, 7);
    assert!(
        checked > 2000 && decided > 1000,
        "{checked} checked, {decided} decided"
    );
}
