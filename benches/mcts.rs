//! MCTS speed: iterations per second of `mcts::choose` on one core, with
//! `search-rust`'s settings (`Params::default`) and `alphabeta-rust`'s
//! (`Params::tuned`), from eight positions of each game a few seeded
//! random decisions in (Tricala with 2 and with 3 players). A fixed count
//! of iterations a position, so both settings and both builds compared do
//! the same searches; the best of three rounds. Results: BENCHMARKS.md
//! ("Reference bots (issue 51)").
//!
//! Run: `cargo bench --bench mcts` (or `-- tricala` for one game).

use mancala_arena::ai::{eval::Evaluate, mcts};
use mancala_arena::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    Rules, Settings, Variant,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

/// Iterations searched from each position: about what `alphabeta-rust`
/// searches in 2-player Tricala in a decision of 50 ms.
const ITERATIONS: u64 = 50_000;

/// Positions of each game.
const POSITIONS: u64 = 8;

/// The positions of a game: `POSITIONS` games of `players`, each after
/// 4 to 19 random decisions (fewer if it ends first), seeded.
fn positions<G: Rules>(players: usize) -> Vec<G> {
    let mut out = Vec::new();
    let mut opts = Vec::new();
    for seed in 0..POSITIONS {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let Ok(mut g) = G::new(&Settings::with_players(players)) else {
            continue;
        };
        let depth = rng.gen_range(4..20);
        mcts::playout(&mut g, depth, &mut opts, &mut rng);
        if g.to_decide().is_some() {
            out.push(g);
        }
    }
    out
}

/// The best of three rounds' time to search every position.
fn time<G: Evaluate>(games: &[G], params: mcts::Params) -> (Duration, u64) {
    let mut best = Duration::MAX;
    let mut decisions = 0;
    for _ in 0..3 {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t = Instant::now();
        decisions = 0;
        for g in games {
            if let Some((_, stats)) =
                mcts::choose(g, Instant::now(), Some(ITERATIONS), params, &mut rng)
            {
                decisions += stats.decisions;
            }
        }
        best = best.min(t.elapsed());
    }
    (best, decisions)
}

fn bench<G: Evaluate>(name: &str, variant: Variant, players: usize) {
    let games = positions::<G>(players);
    for (who, params) in [
        ("search-rust", mcts::Params::default()),
        ("alphabeta-rust", mcts::Params::tuned(variant)),
    ] {
        let (t, decisions) = time(&games, params);
        let iterations = ITERATIONS * games.len() as u64;
        println!(
            "{name:<11} {who:<15} {:>9.0} iterations/s {:>11.0} decisions/s ({iterations} iterations in {:.3} s)",
            iterations as f64 / t.as_secs_f64(),
            decisions as f64 / t.as_secs_f64(),
            t.as_secs_f64()
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument picks games.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    if wanted("filo") {
        bench::<Filo>("filo", Variant::Filo, 2);
    }
    if wanted("tricala") {
        bench::<Tricala>("tricala", Variant::Tricala, 2);
    }
    if wanted("tricala3") {
        bench::<Tricala>("tricala3", Variant::Tricala, 3);
    }
    if wanted("hackaback") {
        bench::<Hackaback>("hackaback", Variant::Hackaback, 2);
    }
    if wanted("kisolo") {
        bench::<Kisolo>("kisolo", Variant::Kisolo, 2);
    }
    if wanted("diffusion") {
        bench::<Diffusion>("diffusion", Variant::Diffusion, 2);
    }
}
