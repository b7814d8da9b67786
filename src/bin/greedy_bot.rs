//! `greedy-bot` (bots/greedy-rust): one turn of lookahead with a per-game
//! heuristic (src/ai/eval.rs), protocol v1. Owns only its command line.

use mancala_arena::ai::{driver, eval::Evaluate, greedy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

struct Greedy(ChaCha8Rng);

impl driver::Player for Greedy {
    fn choose<G: Evaluate>(&mut self, g: &G, _deadline: Instant) -> Option<G::Opt> {
        greedy::choose(g, &mut self.0)
    }

    /// Ties are broken at random, from the game's seed.
    fn seed(&mut self, seed: u64) {
        self.0 = ChaCha8Rng::seed_from_u64(seed);
    }
}

fn main() -> std::process::ExitCode {
    match driver::parse_args() {
        Ok(timing) => {
            driver::run("greedy-rust", &mut Greedy(driver::rng()), timing);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("greedy-bot: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
