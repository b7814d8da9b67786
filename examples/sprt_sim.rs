//! Error rates and test lengths of the SPRT (`mancala_arena::ratings::sprt`)
//! by simulation, for docs/ratings.md ("SPRT").
//!
//! ```text
//! cargo run --release --example sprt_sim -- [--tests 1000] [--seed 1]
//! ```
//!
//! For each setting (model, elo0, elo1, alpha, beta) it runs `--tests`
//! simulated SPRTs with the true strength difference at elo0 and as many at
//! elo1, computes the LLR with the crate's `SprtConfig::llr` after every
//! seat-swap pair, and stops at the first bound crossed. It prints how often
//! the wrong hypothesis was accepted (H1 at elo0: should be alpha; H0 at
//! elo1: should be beta) and the average length of a test in games.
//!
//! The pairs are drawn from pentanomial probabilities computed from a
//! correlated game model, not assumed:
//! - one game: the BayesElo trinomial, with `x` the Elo advantage of the
//!   bot in question in that game: P(win) = 1 / (1 + 10^((drawelo - x)/400)),
//!   P(loss) = 1 / (1 + 10^((drawelo + x)/400)), P(draw) the rest;
//! - a pair: two games from one opening with the seats swapped. The
//!   opening gives the first seat `h + b` Elo, `h` the seat advantage and
//!   `b ~ N(0, opening_sd)` its own bias, shared by both games. A plays
//!   game 1 with `x = d + h + b` and game 2 with `x = d - h - b`, so the two
//!   results of a pair are correlated (the reason for pentanomial counts).
//!   Given `b` the games are independent; the five probabilities are
//!   integrated over `b` numerically (midpoint rule on ±8 sd, 4001 points);
//! - the "true Elo" is that of the pair distribution, in the test's own
//!   unit: logistic Elo of the mean pair score, or normalized Elo
//!   (mu - 1/2) / sqrt(2 var) * 800 / ln 10. The per-game offset `d` is
//!   found by bisection so that it equals elo0 or elo1 exactly.

use clap::Parser;
use mancala_arena::ratings::sprt::{Decision, Model, SprtConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Parser)]
struct Args {
    /// Simulated tests per setting and hypothesis.
    #[arg(long, default_value_t = 1000)]
    tests: usize,
    /// Seed of the first test (each test has its own stream).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The game model.
#[derive(Clone, Copy)]
struct GameModel {
    drawelo: f64,
    seat_elo: f64,
    opening_sd: f64,
}

struct Setting {
    config: SprtConfig,
    game: GameModel,
}

/// Longest test before giving up (none came near it).
const MAX_PAIRS: u64 = 2_000_000;

fn trinomial(x: f64, drawelo: f64) -> [f64; 3] {
    let w = 1.0 / (1.0 + 10f64.powf((drawelo - x) / 400.0));
    let l = 1.0 / (1.0 + 10f64.powf((drawelo + x) / 400.0));
    [w, 1.0 - w - l, l]
}

/// Pentanomial probabilities `[LL, LD, WL+DD, WD, WW]` of A at per-game
/// offset `d`.
fn penta_probs(d: f64, m: GameModel) -> [f64; 5] {
    let n = 4001;
    let span = 8.0 * m.opening_sd;
    let step = 2.0 * span / n as f64;
    let mut p = [0.0; 5];
    let mut total = 0.0;
    for i in 0..n {
        let b = if m.opening_sd > 0.0 {
            -span + (i as f64 + 0.5) * step
        } else {
            0.0
        };
        let weight = if m.opening_sd > 0.0 {
            (-0.5 * (b / m.opening_sd).powi(2)).exp()
        } else {
            1.0
        };
        let [w1, d1, l1] = trinomial(d + m.seat_elo + b, m.drawelo);
        let [w2, d2, l2] = trinomial(d - m.seat_elo - b, m.drawelo);
        p[0] += weight * l1 * l2;
        p[1] += weight * (l1 * d2 + d1 * l2);
        p[2] += weight * (w1 * l2 + l1 * w2 + d1 * d2);
        p[3] += weight * (w1 * d2 + d1 * w2);
        p[4] += weight * w1 * w2;
        total += weight;
    }
    p.map(|x| x / total)
}

/// The Elo of a pair distribution in `model`'s unit.
fn model_elo(p: &[f64; 5], model: Model) -> f64 {
    let scores = [0.0, 0.25, 0.5, 0.75, 1.0];
    let mu: f64 = p.iter().zip(scores).map(|(p, a)| p * a).sum();
    let var: f64 = p
        .iter()
        .zip(scores)
        .map(|(p, a)| p * (a - mu).powi(2))
        .sum();
    match model {
        Model::Logistic => -400.0 * (1.0 / mu - 1.0).log10(),
        Model::Normalized => (mu - 0.5) / (2.0 * var).sqrt() * 800.0 / std::f64::consts::LN_10,
    }
}

/// The per-game offset whose pair distribution has Elo `target`.
fn calibrate(target: f64, model: Model, m: GameModel) -> (f64, [f64; 5]) {
    let (mut lo, mut hi) = (-400.0, 400.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if model_elo(&penta_probs(mid, m), model) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let d = 0.5 * (lo + hi);
    (d, penta_probs(d, m))
}

/// One SPRT: pairs drawn from `p` until a bound is crossed.
fn run_test(config: &SprtConfig, p: &[f64; 5], rng: &mut ChaCha8Rng) -> (Decision, u64) {
    let mut cum = [0.0; 5];
    let mut acc = 0.0;
    for (c, x) in cum.iter_mut().zip(p) {
        acc += x;
        *c = acc;
    }
    let mut counts = [0u64; 5];
    for pairs in 1..=MAX_PAIRS {
        let u: f64 = rng.gen::<f64>() * acc;
        let k = cum.iter().position(|&c| u < c).unwrap_or(4);
        counts[k] += 1;
        let decision = config.decide(config.llr(&counts));
        if decision.is_final() {
            return (decision, pairs);
        }
    }
    (Decision::Continue, MAX_PAIRS)
}

fn main() {
    let args = Args::parse();
    let mancala = GameModel {
        drawelo: 150.0,
        seat_elo: 30.0,
        opening_sd: 100.0,
    };
    let drawish = GameModel {
        drawelo: 300.0,
        seat_elo: 60.0,
        opening_sd: 150.0,
    };
    let cfg = |s: &str| -> SprtConfig { s.parse().expect("a valid setting") };
    let settings = [
        Setting {
            config: cfg("elo0=0,elo1=5,alpha=0.05,beta=0.05,model=normalized"),
            game: mancala,
        },
        Setting {
            config: cfg("elo0=0,elo1=5,alpha=0.05,beta=0.05,model=logistic"),
            game: mancala,
        },
        Setting {
            config: cfg("elo0=-3,elo1=1,alpha=0.05,beta=0.1,model=normalized"),
            game: drawish,
        },
        Setting {
            config: cfg("elo0=0,elo1=10,alpha=0.1,beta=0.05,model=logistic"),
            game: drawish,
        },
    ];
    println!(
        "{} tests per setting and hypothesis, seed {}; LLR checked after every pair",
        args.tests, args.seed
    );
    for (si, s) in settings.iter().enumerate() {
        let c = &s.config;
        let g = s.game;
        println!();
        println!("{c}");
        println!(
            "  game model: drawelo {}, seat advantage {} Elo, opening bias sd {} Elo",
            g.drawelo, g.seat_elo, g.opening_sd
        );
        for (hi, (elo, wrong, rate)) in [
            (c.elo0, Decision::AcceptH1, c.alpha),
            (c.elo1, Decision::AcceptH0, c.beta),
        ]
        .into_iter()
        .enumerate()
        {
            let (d, p) = calibrate(elo, c.model, g);
            let draws = {
                // Per-game draw rate at this offset (both seats).
                let mut t = 0.0;
                let mut w = 0.0;
                let n = 2001;
                for i in 0..n {
                    let b = -8.0 * g.opening_sd + (i as f64 + 0.5) * 16.0 * g.opening_sd / n as f64;
                    let wt = (-0.5 * (b / g.opening_sd).powi(2)).exp();
                    t += wt
                        * (trinomial(d + g.seat_elo + b, g.drawelo)[1]
                            + trinomial(d - g.seat_elo - b, g.drawelo)[1])
                        / 2.0;
                    w += wt;
                }
                t / w
            };
            let mut wrong_n = 0u64;
            let mut undecided = 0u64;
            let mut lengths: Vec<u64> = Vec::with_capacity(args.tests);
            for t in 0..args.tests {
                let seed = args
                    .seed
                    .wrapping_mul(1_000_003)
                    .wrapping_add((si as u64) << 40 | (hi as u64) << 32 | t as u64);
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let (decision, pairs) = run_test(c, &p, &mut rng);
                if decision == wrong {
                    wrong_n += 1;
                }
                if decision == Decision::Continue {
                    undecided += 1;
                }
                lengths.push(2 * pairs);
            }
            lengths.sort_unstable();
            let n = args.tests as f64;
            let share = wrong_n as f64 / n;
            let se = (share * (1.0 - share) / n).sqrt();
            let mean = lengths.iter().sum::<u64>() as f64 / n;
            let median = lengths[lengths.len() / 2];
            let within = (share - rate).abs() <= 0.02;
            println!(
                "  true {} = {elo:>3} (per-game offset {d:+.2} Elo, draw rate {:.0}%, pentanomial {}):",
                c.model,
                draws * 100.0,
                p.iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            println!(
                "    {} {:.1}% +/- {:.1} (target {:.0}% +/- 2: {}), test length mean {:.0} games, median {}{}",
                if wrong == Decision::AcceptH1 {
                    "H1 accepted"
                } else {
                    "H0 accepted"
                },
                share * 100.0,
                se * 100.0,
                rate * 100.0,
                if within { "ok" } else { "OUTSIDE" },
                mean,
                median,
                if undecided > 0 {
                    format!(", {undecided} undecided at {MAX_PAIRS} pairs")
                } else {
                    String::new()
                }
            );
        }
    }
}
