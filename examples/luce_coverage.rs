//! Coverage of the 95% rating intervals for 3-player winner-only results
//! (docs/ratings.md, "3-player Tricala"; issue 15): simulated leagues of 6
//! bots (true Elo -200 to +200) playing Tricala 3-player games whose
//! winner is drawn from Luce's choice model (`P(i won) ∝ 10^(u_i/400)`, `u`
//! the rating, plus the seat advantage for seat 0), each game between 3
//! bots drawn at random and seated at random, written as Tricala writes
//! them: `1, 1/4, 1/4`. Lines:
//! - `3p`: 600 winner-only games;
//! - `3p+seat`: the same with seat 0 playing 50 Elo stronger, fitted with
//!   the seat advantage (its own coverage in the last column);
//! - `3p+2p`: 400 winner-only games and 400 2-player games (Bradley–Terry,
//!   random pairs and seats) in one fit, the 2-player games without draws
//!   or drawn as in `draw_coverage`'s `scaled` model at `d` = 0.5.
//!
//!     cargo run --release --example luce_coverage -- [LEAGUES]
//!
//! Prints, per line, the share of intervals holding the true rating
//! (relative to the average, as the ratings are), the slope of the fitted
//! on the true ratings (1 = no compression), the mean dispersion and, with
//! the seat advantage, how often its interval held the truth.

use mancala_arena::ratings::{rate, RateOptions};
use mancala_arena::results::GameRow;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TRUTH: [f64; 6] = [-200.0, -120.0, -40.0, 40.0, 120.0, 200.0];

struct Setting {
    name: &'static str,
    three: usize,
    two: usize,
    /// Draw rate of equal bots in the 2-player games (`scaled`).
    draws: f64,
    seat: f64,
}

fn name(b: usize) -> String {
    format!("b{b}")
}

fn league(rng: &mut ChaCha8Rng, s: &Setting) -> Vec<GameRow> {
    let mut rows = Vec::new();
    let n = TRUTH.len();
    for g in 0..s.three {
        let mut pick: Vec<usize> = (0..n).collect();
        for i in 0..3 {
            let j = rng.gen_range(i..n);
            pick.swap(i, j);
        }
        let weight = |seat: usize| {
            let u = TRUTH[pick[seat]] + if seat == 0 { s.seat } else { 0.0 };
            10f64.powf(u / 400.0)
        };
        let total: f64 = (0..3).map(weight).sum();
        let mut x = rng.gen::<f64>() * total;
        let mut winner = 2;
        for seat in 0..3 {
            x -= weight(seat);
            if x < 0.0 {
                winner = seat;
                break;
            }
        }
        let mut scores = [0.25; 3];
        scores[winner] = 1.0;
        rows.push(GameRow {
            game_id: format!("t{g}"),
            variant: "tricala".into(),
            players: 3,
            group: format!("t{g}"),
            seat0: name(pick[0]),
            seat1: name(pick[1]),
            seat2: name(pick[2]),
            score0: scores[0],
            score1: scores[1],
            score2: Some(scores[2]),
            reason: "x".into(),
            plies: 1,
            ..GameRow::default()
        });
    }
    for g in 0..s.two {
        let a = rng.gen_range(0..n);
        let b = (a + rng.gen_range(1..n)) % n;
        let e = 1.0 / (1.0 + 10f64.powf(-(TRUTH[a] - TRUTH[b]) / 400.0));
        let draw = s.draws * 2.0 * e.min(1.0 - e);
        let u: f64 = rng.gen();
        let score0 = if u < e - draw / 2.0 {
            1.0
        } else if u < e + draw / 2.0 {
            0.5
        } else {
            0.0
        };
        rows.push(GameRow {
            game_id: format!("p{g}"),
            variant: "tricala".into(),
            players: 2,
            group: format!("p{g}"),
            seat0: name(a),
            seat1: name(b),
            score0,
            score1: 1.0 - score0,
            reason: "x".into(),
            plies: 1,
            ..GameRow::default()
        });
    }
    rows
}

fn main() {
    let leagues: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let mean = TRUTH.iter().sum::<f64>() / TRUTH.len() as f64;
    let settings = [
        Setting {
            name: "3p",
            three: 600,
            two: 0,
            draws: 0.0,
            seat: 0.0,
        },
        Setting {
            name: "3p+seat",
            three: 600,
            two: 0,
            draws: 0.0,
            seat: 50.0,
        },
        Setting {
            name: "3p+2p",
            three: 400,
            two: 400,
            draws: 0.0,
            seat: 0.0,
        },
        Setting {
            name: "3p+2p",
            three: 400,
            two: 400,
            draws: 0.5,
            seat: 0.0,
        },
    ];
    println!("{leagues} leagues per line, 6 bots, true Elo -200..+200");
    println!(
        "line    | 3p games | 2p games | 2p draw d | intervals | coverage | slope | mean dispersion | seat coverage"
    );
    for s in &settings {
        let mut rng = ChaCha8Rng::seed_from_u64(15);
        let opts = RateOptions {
            seat_advantage: s.seat != 0.0,
            ..Default::default()
        };
        let (mut hit, mut total, mut disp) = (0usize, 0usize, 0.0);
        let (mut tt, mut te) = (0.0, 0.0);
        let (mut seat_hit, mut seat_total) = (0usize, 0usize);
        for _ in 0..leagues {
            let rows = league(&mut rng, s);
            let Ok(rep) = rate(&rows, &opts) else {
                continue;
            };
            disp += rep.overall.dispersion;
            for (i, t) in TRUTH.iter().enumerate() {
                if let Some(r) = rep.overall.get(&name(i)) {
                    total += 1;
                    let t = t - mean;
                    tt += t * t;
                    te += t * r.elo;
                    if r.elo_low <= t && t <= r.elo_high {
                        hit += 1;
                    }
                }
            }
            if let Some((_, _, lo, hi)) = rep.overall.seat_advantage.first() {
                seat_total += 1;
                if *lo <= s.seat && s.seat <= *hi {
                    seat_hit += 1;
                }
            }
        }
        let seat = if seat_total > 0 {
            format!("{:.4}", seat_hit as f64 / seat_total as f64)
        } else {
            "-".to_string()
        };
        println!(
            "{:<7} | {:>8} | {:>8} | {:>9} | {total:>9} | {:>8.4} | {:>5.3} | {:>15.3} | {seat}",
            s.name,
            s.three,
            s.two,
            s.draws,
            hit as f64 / total.max(1) as f64,
            te / tt.max(1e-9),
            disp / leagues as f64,
        );
    }
}
