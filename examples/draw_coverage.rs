//! Coverage of the 95% rating intervals at high draw rates (docs/ratings.md,
//! "Intervals"): simulated round robins of 8 bots (true Elo -150 to +150,
//! each pairing 40 seat-swap pairs) where a game between bots of expected
//! score E stays of expected score E and is a draw with probability
//! - `scaled`: `d * 2 * min(E, 1 - E)` (`d` is the draw rate of equal bots;
//!   unequal bots draw less), or
//! - `flat`: `min(d, 2 * min(E, 1 - E))` (every pairing draws at `d`, as far
//!   as E allows).
//!
//!     cargo run --release --example draw_coverage -- [LEAGUES]
//!
//! Prints, per model, spread (the true ratings times this factor) and draw
//! rate, the share of intervals holding the true rating (relative to the
//! average, as the ratings are), and the mean dispersion.

use mancala_arena::ratings::{rate, RateOptions};
use mancala_arena::results::GameRow;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TRUTH: [f64; 8] = [-150.0, -100.0, -60.0, -20.0, 20.0, 60.0, 100.0, 150.0];
const PAIRS: usize = 40;

fn league(rng: &mut ChaCha8Rng, d: f64, flat: bool, spread: f64) -> Vec<GameRow> {
    let names: Vec<String> = (0..TRUTH.len()).map(|i| format!("b{i}")).collect();
    let mut rows = Vec::new();
    for i in 0..TRUTH.len() {
        for j in (i + 1)..TRUTH.len() {
            for k in 0..PAIRS {
                let group = format!("{i}-{j}-{k}");
                for (s0, s1, o) in [(i, j, 0), (j, i, 1)] {
                    let diff = spread * (TRUTH[s0] - TRUTH[s1]);
                    let e = 1.0 / (1.0 + 10f64.powf(-diff / 400.0));
                    let draw = match flat {
                        true => d.min(2.0 * e.min(1.0 - e)),
                        false => d * 2.0 * e.min(1.0 - e),
                    };
                    let u: f64 = rng.gen();
                    let score0 = if u < e - draw / 2.0 {
                        1.0
                    } else if u < e + draw / 2.0 {
                        0.5
                    } else {
                        0.0
                    };
                    rows.push(GameRow {
                        game_id: format!("{group}-o{o}"),
                        variant: "filo".into(),
                        players: 2,
                        group: group.clone(),
                        seat0: names[s0].clone(),
                        seat1: names[s1].clone(),
                        score0,
                        score1: 1.0 - score0,
                        reason: "x".into(),
                        plies: 1,
                        ..GameRow::default()
                    });
                }
            }
        }
    }
    rows
}

fn main() {
    let leagues: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let mean = TRUTH.iter().sum::<f64>() / TRUTH.len() as f64;
    println!("model  | spread | draw rate d | intervals | coverage | mean dispersion");
    for (flat, spread, d) in [
        (false, 1.0, 0.25),
        (false, 1.0, 0.8),
        (false, 1.0, 0.97),
        (true, 1.0, 0.5),
        (true, 1.0, 0.93),
        (true, 1.0, 0.97),
        (true, 0.2, 0.5),
        (true, 0.2, 0.8),
        (true, 0.2, 0.93),
        (true, 0.2, 0.97),
    ] {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut hit, mut total, mut disp) = (0usize, 0usize, 0.0);
        for _ in 0..leagues {
            let rows = league(&mut rng, d, flat, spread);
            let Ok(rep) = rate(&rows, &RateOptions::default()) else {
                continue;
            };
            disp += rep.overall.dispersion;
            for (i, t) in TRUTH.iter().enumerate() {
                if let Some(r) = rep.overall.get(&format!("b{i}")) {
                    total += 1;
                    let t = spread * (t - mean);
                    if r.elo_low <= t && t <= r.elo_high {
                        hit += 1;
                    }
                }
            }
        }
        println!(
            "{:<6} | {spread:>6} | {d:>11} | {total:>9} | {:>8.4} | {:.3}",
            if flat { "flat" } else { "scaled" },
            hit as f64 / total.max(1) as f64,
            disp / leagues as f64
        );
    }
}
