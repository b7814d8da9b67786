//! Two settings of the reference bots' MCTS (src/ai/mcts.rs) against each
//! other, in process, on two threads (issue 51's tuning, BENCHMARKS.md
//! "Reference bots (issue 51)"):
//!
//!     cargo run --release --example mcts_duel -- VARIANT GAMES MILLIS EXPLORE_A DEPTH_A EXPLORE_B DEPTH_B
//!
//! Each pair of games starts from the same two random plies, A first in
//! one and second in the other; prints A's wins, draws, losses, mean score
//! and Elo with a 95% interval.
use mancala_arena::ai::{eval::Evaluate, mcts};
use mancala_arena::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    Settings,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

fn game<G: Evaluate>(seed: u64, ms: u64, a: mcts::Params, b: mcts::Params, a_first: bool) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = G::new(&Settings::default()).expect("settings");
    let mut buf = Vec::new();
    for _ in 0..2 {
        if g.to_decide().is_none() {
            break;
        }
        g.options(&mut buf);
        let o = buf[rng.gen_range(0..buf.len())];
        g.apply(o).expect("legal");
    }
    while let Some(seat) = g.to_decide() {
        let a_moves = (seat == 0) == a_first;
        let p = if a_moves { a } else { b };
        let deadline = Instant::now() + Duration::from_millis(ms);
        let (o, _) = mcts::choose(&g, deadline, None, p, &mut rng).expect("a move");
        g.apply(o).expect("legal");
    }
    let s = g.value();
    if a_first {
        s[0]
    } else {
        s[1]
    }
}

const USAGE: &str = "usage: mcts_duel VARIANT GAMES MILLIS EXPLORE_A DEPTH_A EXPLORE_B DEPTH_B";

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 7 {
        eprintln!("{USAGE}");
        std::process::exit(2);
    }
    let num = |i: usize| -> f64 {
        a[i].parse().unwrap_or_else(|_| {
            eprintln!("`{}` is not a number; {USAGE}", a[i]);
            std::process::exit(2)
        })
    };
    let variant = a[0].clone();
    let games = num(1) as u64;
    let ms = num(2) as u64;
    let pa = mcts::Params {
        explore: num(3),
        playout_depth: num(4) as u32,
    };
    let pb = mcts::Params {
        explore: num(5),
        playout_depth: num(6) as u32,
    };
    let threads = 2;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let variant = variant.clone();
            std::thread::spawn(move || {
                let mut scores = Vec::new();
                let mut i = t;
                while i < games {
                    let seed = i / 2;
                    let first = i % 2 == 0;
                    let s = match variant.as_str() {
                        "filo" => game::<Filo>(seed, ms, pa, pb, first),
                        "tricala" => game::<Tricala>(seed, ms, pa, pb, first),
                        "hackaback" => game::<Hackaback>(seed, ms, pa, pb, first),
                        "kisolo" => game::<Kisolo>(seed, ms, pa, pb, first),
                        _ => game::<Diffusion>(seed, ms, pa, pb, first),
                    };
                    scores.push(s);
                    i += threads;
                }
                scores
            })
        })
        .collect();
    let scores: Vec<f64> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("a duel thread"))
        .collect();
    let n = scores.len() as f64;
    let w = scores.iter().filter(|&&s| s > 0.75).count();
    let d = scores
        .iter()
        .filter(|&&s| (0.25..=0.75).contains(&s))
        .count();
    let l = scores.len() - w - d;
    let mean = scores.iter().sum::<f64>() / n;
    let var = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
    let se = (var / n).sqrt();
    let elo = |p: f64| -400.0 * (1.0 / p.clamp(0.001, 0.999) - 1.0).log10();
    println!(
        "{variant}: A {w}-{d}-{l} score {mean:.3} Elo {:+.0} [{:+.0}, {:+.0}]",
        elo(mean),
        elo(mean - 1.96 * se),
        elo(mean + 1.96 * se)
    );
}
