//! Diffusion positions with the results of their games, for fitting a
//! heuristic to them (`Evaluate::fitted`, src/ai/eval.rs; issue 51,
//! BENCHMARKS.md "Reference bots (issue 51)"):
//!
//!     cargo run --release --example diffusion_data -- GAMES MILLIS > positions.csv
//!     python3 benches/fit_diffusion.py positions.csv
//!
//! Plays GAMES games of the default MCTS (`search-rust`'s) against itself
//! at MILLIS ms a decision, on two threads, each from 0 to 5 random plies
//! (seeded by the game's number; the searches stop on the clock, so two
//! runs differ). Writes a CSV line per decision: the far row `F E D C B A`,
//! the near row `G H I J K L`, the seat to move (0 South, 1 North), the
//! plies played, and South's score at the end (1, 0.5 or 0).
use mancala_arena::ai::{eval::Evaluate, mcts};
use mancala_arena::engine::{diffusion::Diffusion, Rules, Settings};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: diffusion_data GAMES MILLIS";

fn number(s: Option<&String>) -> u64 {
    s.and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("{USAGE}");
        std::process::exit(2)
    })
}

/// One game's lines.
fn game(number: u64, ms: u64) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(1000 + number);
    let mut g = Diffusion::new(&Settings::default()).expect("the default settings");
    let mut buf = Vec::new();
    for _ in 0..rng.gen_range(0..6) {
        if g.to_decide().is_none() {
            break;
        }
        g.options(&mut buf);
        let o = buf[rng.gen_range(0..buf.len())];
        g.apply(o).expect("an option is legal");
    }
    let mut lines = Vec::new();
    while let Some(seat) = g.to_decide() {
        let rows: Vec<String> = g
            .north_row()
            .iter()
            .chain(&g.south_row())
            .map(|x| x.to_string())
            .collect();
        lines.push(format!("{},{seat},{}", rows.join(","), g.plies()));
        let deadline = Instant::now() + Duration::from_millis(ms);
        let Some((o, _)) = mcts::choose(&g, deadline, None, mcts::Params::default(), &mut rng)
        else {
            break;
        };
        g.apply(o).expect("the search's option is legal");
    }
    let south = g.value()[0];
    lines.iter().map(|l| format!("{l},{south}")).collect()
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let (games, ms) = (number(a.first()), number(a.get(1)));
    let threads = 2;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                (t..games)
                    .step_by(threads as usize)
                    .flat_map(|i| game(i, ms))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut out = std::io::stdout().lock();
    for h in handles {
        for line in h.join().expect("a thread of games") {
            if writeln!(out, "{line}").is_err() {
                return;
            }
        }
    }
}
