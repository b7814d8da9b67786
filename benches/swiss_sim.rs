//! A Swiss league against a round-robin of as many games, in simulation
//! (docs/league.md, "Swiss: how well it ranks").
//!
//! Bots of known strength (Elo drawn from N(0, 200), as benches/ladder_sim.rs
//! draws them) play one 2-player variant; a game's expected score is the
//! fit's own (Bradley–Terry on the Elo scale, no seat advantage), with
//! draws at 30% between equal bots and fewer between unequal ones
//! (`2 * 0.3 * min(E, 1 - E)`), so that the expected score stays `E`.
//! Each pairing plays a mini-match of two games, seat-swapped.
//!
//! The Swiss is the league's own source of games
//! (`league::swiss_games::SwissPairings`, rounds paired from the results as
//! they are committed); the round-robin of as many games is the first `r`
//! rounds of a Berger table (the circle method: each round every bot meets
//! one opponent, by the table, not by score), and the full round-robin
//! (`n - 1` rounds) is shown for scale. Measured over seeds: how often the
//! best bot is ranked first, and how often the top 8 are ranked in their
//! true order, ranking by the format's own table (the Swiss: score, then
//! Buchholz, then Sonneborn–Berger; the round-robin: score) and by the Elo
//! fit of all games (`ratings::rate`).
//!
//! `cargo bench --bench swiss_sim -- [--quick]`

use mancala_arena::league::config::{RunSettings, Tournament};
use mancala_arena::league::pairings::Pairings;
use mancala_arena::league::swiss_games::{SwissPairings, SwissPlan, SwissState};
use mancala_arena::ratings::{rate, RateOptions};
use mancala_arena::results::GameRow;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

const DRAWS: f64 = 0.3;
const SPREAD: f64 = 200.0;
const K: f64 = std::f64::consts::LN_10 / 400.0;
const TOP: usize = 8;

fn normal(rng: &mut impl Rng) -> f64 {
    let (u, v): (f64, f64) = (rng.gen::<f64>().max(1e-300), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn name(i: usize) -> String {
    format!("b{i:03}")
}

/// One game, `a` in seat 0: seat 0's score.
fn play(truth: &[f64], a: usize, b: usize, rng: &mut impl Rng) -> f64 {
    let e = 1.0 / (1.0 + (-K * (truth[a] - truth[b])).exp());
    let draw = 2.0 * DRAWS * e.min(1.0 - e);
    let u: f64 = rng.gen();
    if u < e - draw / 2.0 {
        1.0
    } else if u < e + draw / 2.0 {
        0.5
    } else {
        0.0
    }
}

fn row(id: String, a: usize, b: usize, score0: f64) -> GameRow {
    GameRow {
        group: id.clone(),
        game_id: id,
        variant: "kisolo".into(),
        players: 2,
        seat0: name(a),
        seat1: name(b),
        score0,
        score1: 1.0 - score0,
        reason: if score0 == 0.5 { "tie" } else { "store" }.into(),
        plies: 10,
        duration_ms: 1,
        ..GameRow::default()
    }
}

/// What one ranking got right: the best bot first, the top 8 in order.
#[derive(Default, Clone, Copy)]
struct Hits {
    best: u32,
    top: u32,
    /// The top 8 as a set, in any order.
    set: u32,
}

impl Hits {
    fn add(&mut self, ranked: &[usize], truth_order: &[usize]) {
        self.best += u32::from(ranked.first() == truth_order.first());
        let k = TOP.min(truth_order.len());
        self.top += u32::from(ranked[..k] == truth_order[..k]);
        let mut a = ranked[..k].to_vec();
        let mut b = truth_order[..k].to_vec();
        a.sort();
        b.sort();
        self.set += u32::from(a == b);
    }
}

/// The bots by their Elo fit of `rows`.
fn by_fit(n: usize, rows: &[GameRow]) -> Vec<usize> {
    let Ok(report) = rate(rows, &RateOptions::default()) else {
        return (0..n).collect();
    };
    let elo = |i: usize| report.overall.get(&name(i)).map_or(f64::MIN, |r| r.elo);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| elo(b).total_cmp(&elo(a)));
    order
}

/// A Swiss of `rounds` rounds, played by the league's source.
fn swiss(
    truth: &[f64],
    rounds: u32,
    gpp: usize,
    seed: u64,
    rng: &mut impl Rng,
) -> (Vec<usize>, Vec<GameRow>) {
    let bots: Vec<String> = (0..truth.len())
        .map(|i| format!("{{ name = \"{}\", command = [\"x\"] }}", name(i)))
        .collect();
    let src = format!(
        "name = \"sim\"\nformat = \"swiss\"\nseed = {seed}\nrounds = {rounds}\ngames_per_pairing = {gpp}\nvariants = [\"kisolo\"]\nbots = [{}]\n",
        bots.join(", ")
    );
    let t = Tournament::parse_with(
        std::path::Path::new("sim.toml"),
        &src,
        &RunSettings::default(),
    )
    .expect("the simulation's league");
    let plan = SwissPlan::of(&t).expect("a Swiss");
    let source = SwissPairings::new(plan.clone(), SwissState::new(&plan));
    let mut rows = Vec::new();
    while let Some(g) = source.next() {
        let score0 = play(truth, g.seats[0], g.seats[1], rng);
        let r = row(g.game_id.clone(), g.seats[0], g.seats[1], score0);
        source.finished(g.index, &r);
        rows.push(r);
    }
    let state = SwissState::replay(&plan, &rows);
    let table = state.standings().iter().map(|s| s.bot).collect();
    (table, rows)
}

/// The first `rounds` rounds of a Berger table (circle method) for `n`
/// bots, each pairing two games seat-swapped; ranked by score (ties by a
/// coin: no tie-break is fair to a partial round-robin).
fn round_robin(
    truth: &[f64],
    rounds: usize,
    gpp: usize,
    rng: &mut impl Rng,
) -> (Vec<usize>, Vec<GameRow>) {
    let n = truth.len();
    let m = n + n % 2;
    let mut ring: Vec<usize> = (0..m).collect();
    let mut rows = Vec::new();
    let mut score = vec![0.0; n];
    for r in 0..rounds.min(m - 1) {
        for k in 0..m / 2 {
            let (a, b) = (ring[k], ring[m - 1 - k]);
            if a >= n || b >= n {
                continue;
            }
            for g in 0..gpp {
                let (s0, s1) = if g % 2 == 0 { (a, b) } else { (b, a) };
                let x = play(truth, s0, s1, rng);
                score[s0] += x;
                score[s1] += 1.0 - x;
                rows.push(row(format!("r{r}-{a}-{b}-{g}"), s0, s1, x));
            }
        }
        ring[1..].rotate_right(1);
    }
    let coin: Vec<f64> = (0..n).map(|_| rng.gen()).collect();
    let mut table: Vec<usize> = (0..n).collect();
    table.sort_by(|&a, &b| {
        score[b]
            .total_cmp(&score[a])
            .then(coin[a].total_cmp(&coin[b]))
    });
    (table, rows)
}

/// One row of the table.
fn line(
    n: usize,
    rounds: usize,
    gpp: usize,
    games: usize,
    what: &str,
    hits: &[Hits; 2],
    seeds: u64,
) {
    let pct = |x: u32| 100.0 * x as f64 / seeds as f64;
    println!(
        "| {n} | {rounds} | {gpp} | {games} | {what} | {:.0}% | {:.0}% | {:.0}% | {:.0}% | {:.0}% |",
        pct(hits[0].best),
        pct(hits[0].top),
        pct(hits[1].best),
        pct(hits[1].top),
        pct(hits[1].set)
    );
}

/// The true strengths of seed `seed`'s `n` bots, and their true order.
fn field(n: usize, seed: u64) -> (Vec<f64>, Vec<usize>, ChaCha8Rng) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed * 1000 + n as u64);
    let truth: Vec<f64> = (0..n).map(|_| SPREAD * normal(&mut rng)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| truth[b].total_cmp(&truth[a]));
    (truth, order, rng)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (sizes, seeds): (&[usize], u64) = if quick {
        (&[16, 32], 40)
    } else {
        (&[16, 32, 100], 200)
    };
    let started = Instant::now();
    println!("| bots | rounds | games per pairing | games | format | best first (table) | top 8 in order (table) | best first (Elo fit) | top 8 in order (Elo fit) | top 8 as a set (Elo fit) |");
    println!("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|");
    for &n in sizes {
        let log = (n as f64).log2().ceil() as usize;
        for gpp in [2, 20] {
            for rounds in [log + 2, 2 * log] {
                let mut hits = [[Hits::default(); 2]; 2];
                let mut games = [0; 2];
                for seed in 0..seeds {
                    let (truth, order, mut rng) = field(n, seed);
                    let runs = [
                        swiss(&truth, rounds as u32, gpp, seed, &mut rng),
                        round_robin(&truth, rounds, gpp, &mut rng),
                    ];
                    for (i, (table, rows)) in runs.iter().enumerate() {
                        games[i] = rows.len();
                        hits[i][0].add(table, &order);
                        hits[i][1].add(&by_fit(n, rows), &order);
                    }
                }
                line(n, rounds, gpp, games[0], "Swiss", &hits[0], seeds);
                line(
                    n,
                    rounds,
                    gpp,
                    games[1],
                    "round-robin, first rounds",
                    &hits[1],
                    seeds,
                );
            }
            // The full round-robin, for scale.
            let mut hits = [Hits::default(); 2];
            let mut games = 0;
            for seed in 0..seeds {
                let (truth, order, mut rng) = field(n, seed);
                let (table, rows) = round_robin(&truth, n - 1, gpp, &mut rng);
                games = rows.len();
                hits[0].add(&table, &order);
                hits[1].add(&by_fit(n, &rows), &order);
            }
            line(
                n,
                n - 1 + n % 2,
                gpp,
                games,
                "full round-robin",
                &hits,
                seeds,
            );
        }
    }
    println!(
        "\n{seeds} seeds per row, {:.0} s",
        started.elapsed().as_secs_f64()
    );
}
