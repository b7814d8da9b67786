//! The search against an exhaustive minimax on positions whose whole game
//! tree is small (each 2-player game), and the F.I.L.O search with the
//! solver's values never losing a position the solver says is won.

use super::*;
use crate::ai::exact::{Exact, FiloSolution};
use crate::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    Rules, Settings,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// No exact values.
struct NoOracle;

impl<G: Rules> Oracle<G> for NoOracle {
    fn at_turn_start(&self, _: &G) -> Option<Value> {
        None
    }
}

/// The exact score of `g` for the side deciding there, by plain minimax
/// over every line (no pruning, no table), scored as the search scores
/// results; `None` when some line is longer than `max_ply` decisions or
/// the tree has more than `budget` nodes.
fn minimax<G: Evaluate>(g: &G, ply: usize, max_ply: usize, budget: &mut u64) -> Option<i32> {
    let mover = g.to_decide()?;
    if ply >= max_ply || *budget == 0 {
        return None;
    }
    *budget -= 1;
    let mut opts = Vec::new();
    g.options(&mut opts);
    let mut best = -INF;
    for o in opts {
        let mut c = g.clone();
        c.apply(o).ok()?;
        let v = match c.to_decide() {
            None => {
                let p = c.value()[mover];
                ((p - 0.5) * 2.0 * f64::from(WIN - (ply + 1) as i32)).round() as i32
            }
            Some(m) if m == mover => minimax(&c, ply + 1, max_ply, budget)?,
            Some(_) => -minimax(&c, ply + 1, max_ply, budget)?,
        };
        best = best.max(v);
    }
    Some(best)
}

/// Positions near the end of seeded random games whose whole tree is
/// small; for each, the search's score must be minimax's.
fn agrees_with_minimax<G: Evaluate>(settings: &Settings, seed: u64) -> usize {
    const MAX_PLY: usize = 9;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut checked = 0;
    let mut mem = Searcher::new(4);
    for _game in 0..40 {
        let mut g = G::new(settings).expect("a game");
        let mut states = Vec::new();
        let mut opts = Vec::new();
        while g.to_decide().is_some() && states.len() < 600 {
            states.push(g.clone());
            g.options(&mut opts);
            let o = opts[rng.gen_range(0..opts.len())];
            g.apply(o).expect("a listed option applies");
        }
        // From the end backwards while the trees stay small.
        for s in states.iter().rev().take(12) {
            let mut budget = 40_000;
            let Some(want) = minimax(s, 0, MAX_PLY, &mut budget) else {
                break;
            };
            let found = mem
                .choose(s, Sides::Two, &NoOracle, None, MAX_PLY as u32)
                .expect("a decision");
            assert_eq!(
                found.score,
                want,
                "{}: the search's score differs from minimax's at\n{}",
                G::VARIANT,
                s.render()
            );
            checked += 1;
        }
        if checked >= 12 {
            break;
        }
    }
    checked
}

#[test]
fn the_search_finds_the_exhaustive_minimax_result_in_each_two_player_game() {
    let two = Settings::default();
    let counts = [
        ("filo", agrees_with_minimax::<Filo>(&two, 1)),
        ("tricala", agrees_with_minimax::<Tricala>(&two, 2)),
        ("hackaback", agrees_with_minimax::<Hackaback>(&two, 3)),
        ("kisolo", agrees_with_minimax::<Kisolo>(&two, 4)),
        ("diffusion", agrees_with_minimax::<Diffusion>(&two, 5)),
    ];
    for (game, n) in counts {
        assert!(n >= 4, "{game}: only {n} small positions compared");
    }
}

#[test]
fn keys_tell_positions_apart_and_agree_on_equal_ones() {
    let g = Diffusion::new(&Settings::default()).expect("a game");
    let mut a = g.clone();
    let mut b = g.clone();
    let mut opts = Vec::new();
    g.options(&mut opts);
    a.apply(opts[0]).expect("applies");
    b.apply(opts[1]).expect("applies");
    assert_ne!(key(&a), key(&b));
    assert_eq!(key(&a), key(&a.clone()));
}

/// A random F.I.L.O position of the movement phase, two to four checkers
/// a side on the board (the others exited), from which the solver reaches
/// every position (at most `max_states`), with its values.
fn solved_position(rng: &mut ChaCha8Rng, max_states: usize) -> Option<(Filo, Exact)> {
    let mut squares: [String; 8] = Default::default();
    for colour in ['W', 'B'] {
        for _ in 0..rng.gen_range(2..=4) {
            let open: Vec<usize> = (0..8).filter(|&q| squares[q].len() < 4).collect();
            squares[open[rng.gen_range(0..open.len())]].push(colour);
        }
    }
    let refs: [&str; 8] = std::array::from_fn(|q| squares[q].as_str());
    let mover = rng.gen_range(0..2);
    let g = Filo::from_position(refs, [0, 0], mover, &crate::ai::filo_solve::uncapped()).ok()?;
    let mut exact = Exact {
        diffusion: None,
        hackaback: None,
        tricala: None,
        filo: FiloSolution::new(max_states),
    };
    exact.filo.solve_now(&g).ok()?;
    Some((g, exact))
}

/// Plays `n` positions the solver says are won for the side to move:
/// the search (with the solver's values) for the winner, the longest
/// defence for the other side; the winner must win every one.
fn never_loses_a_won_filo_position(n: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut mem = Searcher::new(4);
    let mut played = 0;
    let mut tries = 0;
    while played < n {
        tries += 1;
        assert!(tries < n * 50, "too few solvable won positions found");
        let Some((mut g, exact)) = solved_position(&mut rng, 20_000) else {
            continue;
        };
        let Some(Value::Win(d)) = exact.at_turn_start(&g) else {
            continue;
        };
        let winner = g.to_decide().expect("not over");
        let start = g.render();
        let mut opts = Vec::new();
        for _ in 0..(2 * d as usize + 10) {
            let Some(mover) = g.to_decide() else { break };
            let o = if mover == winner {
                mem.choose(&g, Sides::Two, &exact, None, 4)
                    .expect("a decision")
                    .best
            } else {
                g.options(&mut opts);
                // The longest defence: the child worst for the winner.
                *opts
                    .iter()
                    .min_by_key(|&&o| {
                        let mut c = g.clone();
                        if c.apply(o).is_err() {
                            return i32::MAX;
                        }
                        match c.to_decide() {
                            None => (c.value()[winner] * 1e6) as i32,
                            Some(m) => {
                                let r = exact.at_turn_start(&c).map_or(0, Value::rank);
                                if m == winner {
                                    r
                                } else {
                                    -r
                                }
                            }
                        }
                    })
                    .expect("options")
            };
            g.apply(o).expect("a listed option applies");
        }
        let out = g.outcome();
        assert!(
            out.is_some_and(|o| o.ranks[winner] == 0 && !o.is_draw()),
            "won in {d} for seat {winner}, but {out:?} from\n{start}"
        );
        played += 1;
    }
}

#[test]
fn the_filo_search_never_loses_a_position_the_solver_says_is_won() {
    never_loses_a_won_filo_position(50, 51);
}

/// The 1,000 positions (BENCHMARKS.md gives the command).
#[test]
#[ignore]
fn the_filo_search_never_loses_a_thousand_won_positions() {
    never_loses_a_won_filo_position(1000, 1051);
}

#[test]
fn option_scores_are_expected_scores_at_the_depth_asked() {
    let g = Diffusion::new(&Settings::default()).expect("a game");
    let mut opts = Vec::new();
    g.options(&mut opts);
    let (scores, depth) = option_scores(&g, &opts, 2, None, &NoOracle);
    assert_eq!(depth, 2);
    assert_eq!(scores.len(), opts.len());
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)));
}
