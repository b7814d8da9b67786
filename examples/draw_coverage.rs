//! Coverage of the 95% rating intervals at high draw rates (docs/ratings.md,
//! "Intervals" and "Extreme tables"): simulated round robins of 8 bots (true
//! Elo -150 to +150 times a spread factor, each pairing 40 seat-swap pairs)
//! where a game between bots of expected score E stays of expected score E
//! and is a draw with probability
//! - `scaled`: `d * 2 * min(E, 1 - E)` (`d` is the draw rate of equal bots;
//!   unequal bots draw less), or
//! - `flat`: `min(d, 2 * min(E, 1 - E))` (every pairing draws at `d`, as far
//!   as E allows).
//!
//! The first ten lines are the uniform tables of "High draw rates"; then
//! more uniform tables at 97%, 99% and 99.5% draws, and heterogeneous ones
//! (draws `flat`, as far as E allows, at a rate per pairing):
//! - `bold`: bots 2 and 7 (`bold`) draw `d2` of every game they play, the
//!   others (`calm`) `d` among themselves (a pairing draws at the lower
//!   of its two rates);
//! - `drawish`: bots 0 and 5 (`drawish`) draw `d2` of every game they play,
//!   the others (`rest`) `d` among themselves (the higher rate);
//! - `pairs`: the six pairings among bots 0, 3, 4 and 7 (`paired`) draw `d2`
//!   (0 to 3 decisive games of 80 at 99.5%), every other pairing `d`.
//!
//!     cargo run --release --example draw_coverage -- [LEAGUES]
//!
//! Prints, per table, its model, spread and draw rates, the share of games
//! drawn, the mean number of decisive games, the share of intervals holding
//! the true rating (relative to the average, as the ratings are) with each
//! interval estimator, and the mean dispersion; for heterogeneous tables
//! also per kind of bot.

use mancala_arena::ratings::{rate, IntervalMethod, RateOptions};
use mancala_arena::results::GameRow;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TRUTH: [f64; 8] = [-150.0, -100.0, -60.0, -20.0, 20.0, 60.0, 100.0, 150.0];
const PAIRS: usize = 40;

/// How often a pairing draws.
#[derive(Clone, Copy)]
enum Model {
    Scaled(f64),
    Flat(f64),
    /// Bots 2 and 7 draw `.1`, the others `.0` among themselves.
    Bold(f64, f64),
    /// Bots 0 and 5 draw `.1`, the others `.0` among themselves.
    Drawish(f64, f64),
    /// Pairings among bots 0, 3, 4, 7 draw `.1`, the others `.0`.
    Pairs(f64, f64),
}

const BOLD: [usize; 2] = [2, 7];
const DRAWISH: [usize; 2] = [0, 5];
const PAIRED: [usize; 4] = [0, 3, 4, 7];

impl Model {
    fn name(&self) -> &'static str {
        match self {
            Model::Scaled(_) => "scaled",
            Model::Flat(_) => "flat",
            Model::Bold(..) => "bold",
            Model::Drawish(..) => "drawish",
            Model::Pairs(..) => "pairs",
        }
    }

    fn rates(&self) -> String {
        match *self {
            Model::Scaled(d) | Model::Flat(d) => format!("{d}"),
            Model::Bold(d, d2) | Model::Drawish(d, d2) | Model::Pairs(d, d2) => {
                format!("{d}/{d2}")
            }
        }
    }

    /// The draw probability of a game between bots `i` and `j` of expected
    /// score `e`.
    fn draw(&self, i: usize, j: usize, e: f64) -> f64 {
        let cap = 2.0 * e.min(1.0 - e);
        let (d, d2) = match *self {
            Model::Scaled(d) => return d * cap,
            Model::Flat(d) => return d.min(cap),
            Model::Bold(d, d2) | Model::Drawish(d, d2) | Model::Pairs(d, d2) => (d, d2),
        };
        let special = |set: &[usize]| (set.contains(&i), set.contains(&j));
        let rate = match *self {
            Model::Bold(..) => match special(&BOLD) {
                (false, false) => d,
                _ => d2.min(d),
            },
            Model::Drawish(..) => match special(&DRAWISH) {
                (false, false) => d,
                _ => d2.max(d),
            },
            _ => match special(&PAIRED) {
                (true, true) => d2,
                _ => d,
            },
        };
        rate.min(cap)
    }

    /// The kinds of bots reported apart, and each bot's kind.
    fn kinds(&self) -> Option<([&'static str; 2], [usize; 8])> {
        let set: &[usize] = match self {
            Model::Bold(..) => &BOLD,
            Model::Drawish(..) => &DRAWISH,
            Model::Pairs(..) => &PAIRED,
            _ => return None,
        };
        let names = match self {
            Model::Bold(..) => ["bold", "calm"],
            Model::Drawish(..) => ["drawish", "rest"],
            _ => ["paired", "others"],
        };
        let mut kind = [1; 8];
        set.iter().for_each(|&b| kind[b] = 0);
        Some((names, kind))
    }
}

fn league(rng: &mut ChaCha8Rng, model: Model, spread: f64) -> Vec<GameRow> {
    let names: Vec<String> = (0..TRUTH.len()).map(|i| format!("b{i}")).collect();
    let mut rows = Vec::new();
    for i in 0..TRUTH.len() {
        for j in (i + 1)..TRUTH.len() {
            for k in 0..PAIRS {
                let group = format!("{i}-{j}-{k}");
                for (s0, s1, o) in [(i, j, 0), (j, i, 1)] {
                    let diff = spread * (TRUTH[s0] - TRUTH[s1]);
                    let e = 1.0 / (1.0 + 10f64.powf(-diff / 400.0));
                    let draw = model.draw(s0, s1, e);
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

/// Intervals that held the truth, and intervals: per estimator, overall
/// and per kind of bot.
#[derive(Default)]
struct Tally {
    hit: [[usize; 3]; 2],
    total: [[usize; 3]; 2],
}

const METHODS: [IntervalMethod; 2] = [IntervalMethod::Dispersion, IntervalMethod::Robust];

fn main() {
    let leagues: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let mean = TRUTH.iter().sum::<f64>() / TRUTH.len() as f64;
    let mut tables: Vec<(Model, f64)> = vec![
        (Model::Scaled(0.25), 1.0),
        (Model::Scaled(0.8), 1.0),
        (Model::Scaled(0.97), 1.0),
        (Model::Flat(0.5), 1.0),
        (Model::Flat(0.93), 1.0),
        (Model::Flat(0.97), 1.0),
        (Model::Flat(0.5), 0.2),
        (Model::Flat(0.8), 0.2),
        (Model::Flat(0.93), 0.2),
        (Model::Flat(0.97), 0.2),
    ];
    for d in [0.99, 0.995] {
        tables.push((Model::Scaled(d), 1.0));
    }
    for d in [0.97, 0.99, 0.995] {
        tables.push((Model::Scaled(d), 0.2));
    }
    for d in [0.99, 0.995] {
        tables.push((Model::Flat(d), 1.0));
    }
    for d in [0.99, 0.995] {
        tables.push((Model::Flat(d), 0.2));
    }
    for d in [0.97, 0.99, 0.995] {
        tables.push((Model::Flat(d), 0.02));
    }
    for spread in [0.02, 0.2] {
        tables.push((Model::Bold(0.995, 0.9), spread));
        tables.push((Model::Bold(0.995, 0.97), spread));
        tables.push((Model::Drawish(0.3, 0.995), spread));
        tables.push((Model::Pairs(0.3, 0.995), spread));
        tables.push((Model::Pairs(0.5, 0.99), spread));
    }
    println!(
        "model   | spread | draw rate d | drawn  | decisive | intervals | coverage φ | robust | mean dispersion"
    );
    for (model, spread) in tables {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut t = Tally::default();
        let (mut disp, mut drawn, mut games) = (0.0, 0usize, 0usize);
        let kinds = model.kinds();
        for _ in 0..leagues {
            let rows = league(&mut rng, model, spread);
            games += rows.len();
            drawn += rows.iter().filter(|r| r.score0 == 0.5).count();
            for (m, method) in METHODS.iter().enumerate() {
                let opts = RateOptions {
                    intervals: *method,
                    ..RateOptions::default()
                };
                let Ok(rep) = rate(&rows, &opts) else {
                    continue;
                };
                if m == 0 {
                    disp += rep.overall.dispersion;
                }
                for (i, truth) in TRUTH.iter().enumerate() {
                    if let Some(r) = rep.overall.get(&format!("b{i}")) {
                        let k = kinds.map_or(2, |(_, kind)| kind[i]);
                        let truth = spread * (truth - mean);
                        let held = r.elo_low <= truth && truth <= r.elo_high;
                        for slot in [k, 2].into_iter().take(if k == 2 { 1 } else { 2 }) {
                            t.total[m][slot] += 1;
                            t.hit[m][slot] += usize::from(held);
                        }
                    }
                }
            }
        }
        let cov = |m: usize, k: usize| t.hit[m][k] as f64 / t.total[m][k].max(1) as f64;
        println!(
            "{:<7} | {spread:>6} | {:>11} | {:.4} | {:>8.1} | {:>9} | {:>10.4} | {:>6.4} | {:.3}",
            model.name(),
            model.rates(),
            drawn as f64 / games.max(1) as f64,
            (games - drawn) as f64 / leagues.max(1) as f64,
            t.total[0][2],
            cov(0, 2),
            cov(1, 2),
            disp / leagues as f64
        );
        if let Some((names, _)) = kinds {
            for (k, name) in names.iter().enumerate() {
                println!(
                    "  {name:<7} |        |             |        |          | {:>9} | {:>10.4} | {:>6.4} |",
                    t.total[0][k],
                    cov(0, k),
                    cov(1, k),
                );
            }
        }
    }
}
