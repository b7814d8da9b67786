//! `search-bot` (bots/search-rust): Monte-Carlo tree search with per-seat
//! rewards and heuristic-scored playouts (src/ai/mcts.rs), protocol v1.
//! Spends min(timeout/4, clock/20) per decision, or less with `--millis N`;
//! with `--iterations N` it searches exactly N iterations per decision,
//! whatever the clock, and so plays the same game again given the same
//! `game_start.seed` (choose N small enough for the time limit).
//! Owns only its command line and its statistics line on stderr.

use mancala_arena::ai::{driver, eval::Evaluate, mcts};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

struct Search {
    rng: ChaCha8Rng,
    /// `--iterations`: a fixed search per decision, reproducible.
    fixed: Option<u64>,
    decisions: u64,
    iterations: u64,
    searched: std::time::Duration,
}

impl driver::Player for Search {
    fn choose<G: Evaluate>(&mut self, g: &G, deadline: Instant) -> Option<G::Opt> {
        let t0 = Instant::now();
        let (opt, stats) = mcts::choose(
            g,
            deadline,
            self.fixed,
            mcts::Params::default(),
            &mut self.rng,
        )?;
        self.decisions += stats.decisions;
        self.iterations += stats.iterations;
        self.searched += t0.elapsed();
        Some(opt)
    }

    fn report(&mut self) -> Option<String> {
        let secs = self.searched.as_secs_f64().max(1e-9);
        let line = format!(
            "{} iterations, {} decisions applied in {:.2} s ({:.0} iterations/s, {:.0} decisions/s)",
            self.iterations,
            self.decisions,
            secs,
            self.iterations as f64 / secs,
            self.decisions as f64 / secs
        );
        self.decisions = 0;
        self.iterations = 0;
        self.searched = Default::default();
        Some(line)
    }

    fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }
}

fn main() -> std::process::ExitCode {
    match driver::parse_args() {
        Ok(timing) => {
            let mut player = Search {
                rng: driver::rng(),
                fixed: timing.iterations,
                decisions: 0,
                iterations: 0,
                searched: Default::default(),
            };
            driver::run("search-rust", &mut player, timing);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("search-bot: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
