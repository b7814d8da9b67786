//! Positions with the results of their games, for fitting a game's
//! heuristic to them (`Evaluate::WEIGHTS`, src/ai/eval.rs; issue 51,
//! BENCHMARKS.md "Reference bots (issue 51)"):
//!
//!     cargo run --release --example fit_data -- VARIANT GAMES MILLIS [tuned] > positions.csv
//!     python3 benches/fit_heuristic.py positions.csv
//!
//! Plays GAMES games of VARIANT (a game with `Evaluate::features`:
//! diffusion, tricala, or tricala3 for three players), the default MCTS
//! (`search-rust`'s; with `tuned`, `alphabeta-rust`'s, `mcts::Params::tuned`)
//! against itself at MILLIS ms a decision, on two
//! threads, each from 0 to 5 random plies (seeded by the game's number;
//! the searches stop on the clock, so two runs differ). Writes a CSV line
//! per decision: the position's features from the side of the player to
//! move (`Evaluate::features`), then that player's hand-written estimate
//! (`Evaluate::estimate`) and their score at the end (1, 0.5 or 0). With
//! three players, a line per seat and decision, each from that seat's
//! side, with its score (1, 0.75, 0.5, 0.25 or 0: `Outcome::scores`).
use mancala_arena::ai::eval::{Evaluate, MAX_FEATURES};
use mancala_arena::ai::mcts;
use mancala_arena::engine::{diffusion::Diffusion, tricala::Tricala, Settings};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: fit_data VARIANT GAMES MILLIS [tuned] (VARIANT: diffusion, tricala or tricala3)";

fn number(s: Option<&String>) -> u64 {
    s.and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("{USAGE}");
        std::process::exit(2)
    })
}

/// One game's lines.
fn game<G: Evaluate, const PLAYERS: usize>(number: u64, ms: u64, tuned: bool) -> Vec<String> {
    let params = match tuned {
        true => mcts::Params::tuned(G::VARIANT),
        false => mcts::Params::default(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1000 + number);
    let mut g = G::new(&Settings::with_players(PLAYERS)).expect("the default settings");
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
    let mut features = [0.0; MAX_FEATURES];
    while let Some(mover) = g.to_decide() {
        let seats = if PLAYERS == 2 {
            mover..mover + 1
        } else {
            0..PLAYERS
        };
        for seat in seats {
            let n = g.features(seat, &mut features);
            let cols: Vec<String> = features[..n].iter().map(|x| x.to_string()).collect();
            lines.push((seat, format!("{},{}", cols.join(","), g.estimate()[seat])));
        }
        let deadline = Instant::now() + Duration::from_millis(ms);
        let Some((o, _)) = mcts::choose(&g, deadline, None, params, &mut rng) else {
            break;
        };
        g.apply(o).expect("the search's option is legal");
    }
    let end = g.value();
    lines
        .into_iter()
        .map(|(seat, l)| format!("{l},{}", end[seat]))
        .collect()
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let play: fn(u64, u64, bool) -> Vec<String> = match a.first().map(String::as_str) {
        Some("diffusion") => game::<Diffusion, 2>,
        Some("tricala") => game::<Tricala, 2>,
        Some("tricala3") => game::<Tricala, 3>,
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2)
        }
    };
    let (games, ms) = (number(a.get(1)), number(a.get(2)));
    let tuned = match a.get(3).map(String::as_str) {
        None => false,
        Some("tuned") => true,
        Some(_) => {
            eprintln!("{USAGE}");
            std::process::exit(2)
        }
    };
    let threads = 2;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                (t..games)
                    .step_by(threads as usize)
                    .flat_map(|i| play(i, ms, tuned))
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
