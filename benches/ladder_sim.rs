//! The ladder's pairing rule (`serve::schedule::pairing`) against uniform random
//! pairing, in a simulated ladder (docs/ladder.md, "Simulation").
//!
//! Bots of known strength (Elo drawn from N(0, 200)) play one 2-player
//! variant; a game's expected score is the fit's own (Bradley–Terry on the
//! Elo scale, no seat advantage), with draws at 30% between equal bots and
//! fewer between unequal ones (`2 * 0.3 * min(E, 1 - E)`, the `scaled` model
//! of examples/draw_coverage.rs), so that the expected score stays `E`.
//! Half the bots start, one more joins every `JOIN_EVERY` games; four games
//! are in flight at a time; every `REFIT_EVERY` finished games the whole
//! table is refitted with `ratings::rate` and the rule works from that fit.
//!
//! Measured, per rule, over seeds: (a) for each bot that joined, the
//! ladder's games and its own games from its arrival until its fitted 95%
//! interval is within ±50 Elo; (b) after the last bot joined, the games
//! until the fitted order of all bots equals the true order, and until
//! Kendall's tau reaches 0.95, with a cap.
//!
//! `cargo bench --bench ladder_sim -- [--quick]`

use mancala_arena::ratings::{rate, RateOptions};
use mancala_arena::results::GameRow;
use mancala_arena::serve::schedule::pairing::{
    pick, Entrant, InFlight, LadderVariant, PairingConfig, Pick,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Ladder games between two arrivals.
const JOIN_EVERY: u64 = 200;
/// Finished games between two fits (the scheduler's N).
const REFIT_EVERY: u64 = 50;
/// Games played at once.
const IN_FLIGHT: usize = 4;
/// Draw rate between equal bots.
const DRAWS: f64 = 0.3;
/// Spread of the true strengths (Elo).
const SPREAD: f64 = 200.0;
/// The interval half-width of (a).
const WIDTH: f64 = 50.0;
const K: f64 = std::f64::consts::LN_10 / 400.0;

/// One size of ladder and how long to run it.
struct Setup {
    bots: usize,
    /// Games played after the last arrival (the cap of (b)).
    after: u64,
    seeds: u64,
}

#[derive(Clone, Copy, PartialEq)]
enum Rule {
    Ladder,
    Random,
}

impl Rule {
    fn name(self) -> &'static str {
        match self {
            Rule::Ladder => "ladder rule",
            Rule::Random => "random",
        }
    }

    fn config(self) -> PairingConfig {
        match self {
            Rule::Ladder => PairingConfig::default(),
            Rule::Random => PairingConfig {
                random_share: 1.0,
                ..PairingConfig::default()
            },
        }
    }
}

/// What one run measured.
#[derive(Default)]
struct Outcome {
    /// Per arrival: (ladder games, own games) until ±50; `None`: not
    /// within the run.
    placed: Vec<Option<(u64, u64)>>,
    /// Games after the last arrival until the fitted order was the true one.
    exact: Option<u64>,
    /// ... until Kendall's tau was at least 0.95.
    tau95: Option<u64>,
    /// Tau and the share of true neighbours in the right order at the end.
    final_tau: f64,
    final_adjacent: f64,
}

/// A bot's counts and last fit.
#[derive(Clone, Default)]
struct Bot {
    games: u64,
    seat: [u64; 2],
    fit: Option<(f64, f64)>,
    fit_games: u64,
    joined_at: u64,
    placed: Option<(u64, u64)>,
}

fn normal(rng: &mut impl Rng) -> f64 {
    let (u, v): (f64, f64) = (rng.gen::<f64>().max(1e-300), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn name(i: usize) -> String {
    format!("v{i:02}")
}

/// Plays one game of `p` between bots of strengths `truth`: seat 0's score.
fn play(truth: &[f64], p: &Pick, rng: &mut impl Rng) -> f64 {
    let (a, b) = (p.seats[0] as usize, p.seats[1] as usize);
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

fn row(n: usize, p: &Pick, score0: f64) -> GameRow {
    GameRow {
        game_id: format!("g{n}"),
        variant: "kisolo".into(),
        players: 2,
        group: format!("g{n}"),
        seat0: name(p.seats[0] as usize),
        seat1: name(p.seats[1] as usize),
        score0,
        score1: 1.0 - score0,
        reason: if score0 == 0.5 { "tie" } else { "store" }.into(),
        plies: 10,
        duration_ms: 1,
        seed: n as u64,
        ..GameRow::default()
    }
}

/// Kendall's tau between the fitted and the true order, and the share of
/// true neighbours the fit orders right.
fn agreement(truth: &[f64], fitted: &[f64]) -> (f64, f64) {
    let n = truth.len();
    let mut concordant = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            let s = (truth[i] - truth[j]).signum() * (fitted[i] - fitted[j]).signum();
            concordant += if s > 0.0 { 1 } else { -1 };
        }
    }
    let tau = concordant as f64 / (n * (n - 1) / 2) as f64;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| truth[a].total_cmp(&truth[b]));
    let right = order
        .windows(2)
        .filter(|w| fitted[w[0]] < fitted[w[1]])
        .count();
    (tau, right as f64 / (n - 1) as f64)
}

/// Refits every bot present from `rows` and takes the measures.
fn refit(bots: &mut [Bot], rows: &[GameRow], finished: u64) {
    let Ok(report) = rate(rows, &RateOptions::default()) else {
        return;
    };
    for (i, b) in bots.iter_mut().enumerate() {
        b.fit = report
            .overall
            .get(&name(i))
            .filter(|r| r.rated)
            .map(|r| (r.elo, r.elo_high - r.elo));
        b.fit_games = b.games;
        if let Some((_, hw)) = b.fit {
            if hw <= WIDTH && b.placed.is_none() {
                b.placed = Some((finished - b.joined_at, b.games));
            }
        }
    }
}

/// One simulated ladder from the first game to the cap, in one loop
/// that reads as the scheduler's (arrivals, pick, finish, refit, measure).
fn run(setup: &Setup, rule: Rule, seed: u64) -> Outcome {
    let n = setup.bots;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let truth: Vec<f64> = (0..n).map(|_| SPREAD * normal(&mut rng)).collect();
    // The game's randomness apart from the rule's, so both rules meet the
    // same bots (the results differ as soon as the pairings do).
    let mut dice = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9);
    let start = n / 2;
    let last_join = (n - start) as u64 * JOIN_EVERY;
    let end = last_join + setup.after;
    let variants = [LadderVariant { players: 2 }];
    let config = rule.config();
    let mut bots: Vec<Bot> = vec![Bot::default(); start];
    let mut rows: Vec<GameRow> = Vec::new();
    let mut flying: Vec<Pick> = Vec::new();
    let mut out = Outcome::default();
    let mut finished = 0u64;
    while finished < end {
        while bots.len() < n && finished >= (bots.len() - start + 1) as u64 * JOIN_EVERY {
            bots.push(Bot {
                joined_at: finished,
                ..Bot::default()
            });
        }
        let entrants: Vec<Entrant> = bots
            .iter()
            .enumerate()
            .map(|(i, b)| Entrant {
                id: i as u64,
                elo: b.fit.map(|f| f.0),
                half_width: b.fit.map(|f| f.1),
                games: b.games,
                fit_games: b.fit_games,
                seat_counts: b.seat.to_vec(),
                variant_games: vec![b.games],
                // Every simulated bot is as fast: the time share (the unit
                // tests' and benches/balance.py's) is left out here.
                clock: 0.0,
            })
            .collect();
        if let Some(p) = pick(
            &entrants,
            &variants,
            &config,
            &InFlight::of(&flying),
            &mut rng,
        ) {
            flying.push(p);
        }
        if flying.len() < IN_FLIGHT {
            continue;
        }
        let p = flying.remove(0);
        let s = play(&truth, &p, &mut dice);
        rows.push(row(rows.len(), &p, s));
        for (seat, &id) in p.seats.iter().enumerate() {
            bots[id as usize].games += 1;
            bots[id as usize].seat[seat] += 1;
        }
        finished += 1;
        if !finished.is_multiple_of(REFIT_EVERY) {
            continue;
        }
        refit(&mut bots, &rows, finished);
        if bots.len() == n && finished >= last_join {
            let fitted: Vec<f64> = bots.iter().map(|b| b.fit.map_or(0.0, |f| f.0)).collect();
            let (tau, adjacent) = agreement(&truth, &fitted);
            let since = finished - last_join;
            if adjacent == 1.0 && out.exact.is_none() {
                out.exact = Some(since);
            }
            if tau >= 0.95 && out.tau95.is_none() {
                out.tau95 = Some(since);
            }
            out.final_tau = tau;
            out.final_adjacent = adjacent;
        }
    }
    out.placed = bots[start..].iter().map(|b| b.placed).collect();
    out
}

/// The median of `v` with `missing` values above all of them (censored at
/// the cap); `None` when the median is censored.
fn median(mut v: Vec<u64>, missing: usize) -> Option<u64> {
    v.sort();
    let total = v.len() + missing;
    if total == 0 {
        return None;
    }
    v.get(total / 2).copied()
}

fn show(x: Option<u64>) -> String {
    x.map_or("-".into(), |x| x.to_string())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let setups = if quick {
        vec![Setup {
            bots: 16,
            after: 4000,
            seeds: 3,
        }]
    } else {
        vec![
            Setup {
                bots: 16,
                after: 10_000,
                seeds: 8,
            },
            Setup {
                bots: 64,
                after: 20_000,
                seeds: 4,
            },
        ]
    };
    println!(
        "ladder_sim: 1 variant (2 players), Elo ~ N(0, {SPREAD}), draws {DRAWS} between equals, \
         a bot joins every {JOIN_EVERY} games, refit every {REFIT_EVERY}, {IN_FLIGHT} in flight"
    );
    println!();
    println!("| bots | rule | runs | arrivals | within ±50 | ladder games to ±50 (median) | own games to ±50 (median) | to tau ≥ 0.95 (median; reached) | to exact order (median; reached) | tau at cap (mean) | neighbours right at cap (mean) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for setup in &setups {
        for rule in [Rule::Ladder, Rule::Random] {
            let t = Instant::now();
            let outs: Vec<Outcome> = (0..setup.seeds).map(|s| run(setup, rule, s + 1)).collect();
            let placed: Vec<(u64, u64)> = outs
                .iter()
                .flat_map(|o| o.placed.iter().flatten().copied())
                .collect();
            let arrivals: usize = outs.iter().map(|o| o.placed.len()).sum();
            let missing = arrivals - placed.len();
            let ladder = median(placed.iter().map(|p| p.0).collect(), missing);
            let own = median(placed.iter().map(|p| p.1).collect(), missing);
            let tau95: Vec<u64> = outs.iter().filter_map(|o| o.tau95).collect();
            let exact: Vec<u64> = outs.iter().filter_map(|o| o.exact).collect();
            let runs = outs.len();
            let mean = |f: &dyn Fn(&Outcome) -> f64| outs.iter().map(f).sum::<f64>() / runs as f64;
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {}; {}/{} | {}; {}/{} | {:.3} | {:.3} |",
                setup.bots,
                rule.name(),
                runs,
                arrivals,
                placed.len(),
                show(ladder),
                show(own),
                show(median(tau95.clone(), runs - tau95.len())),
                tau95.len(),
                runs,
                show(median(exact.clone(), runs - exact.len())),
                exact.len(),
                runs,
                mean(&|o| o.final_tau),
                mean(&|o| o.final_adjacent),
            );
            eprintln!(
                "({} bots, {}: {:.1} s)",
                setup.bots,
                rule.name(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    println!();
    println!("Games counted from a bot's arrival (to ±50) and from the last arrival (order), at refits (every {REFIT_EVERY}); the cap is the games after the last arrival. '-': the median run did not get there before the cap.");
}
