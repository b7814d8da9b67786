//! The thresholds of the quarantine of workers (issue 47, item 7;
//! docs/security.md, "Forged results"), chosen by simulation: honest
//! workers whose bots are sometimes flaky against one forger, under the
//! ladder's two rules (`serve::intake::suspects`).
//!
//! **Forfeits.** 8 workers play 3,000 games each, 100 at a time. In an
//! honest worker's game a bot forfeits for good (a crash at a position:
//! found again whenever the server plays it again) with probability 1%,
//! and times out now and then (a flaky bot) with probability `flaky`; the
//! server's re-check finds such a timeout again with probability `again`
//! per try, with two tries (`1 - (1 - again)²`). A slow honest worker (a
//! loaded machine) reports three times the flaky timeouts, found again
//! half as often. The forger plays honestly too, and forges a forfeit in a
//! share `forge` of its games (a bot that never timed out there: found
//! again only if the bot happens to time out then, `flaky · again`).
//! After each 100 games the rule runs over everyone's counts, as the
//! server runs it after each forfeit not found again.
//!
//! **Residuals.** 16 bots (Elo from N(0, 200)), random pairings and seats,
//! games spread over 8 workers; scores from the Bradley–Terry curve with
//! draws (30% between equals, as `ladder_sim`). The forger favours one bot
//! at random: in its games with that bot, a loss or draw of it becomes a
//! win with probability `bias`. The rule runs every 1,000 games.
//!
//! Measured over seeds: the share of runs where an honest worker was put
//! in quarantine (false positives, per run: any of the 7 or 8), and the
//! share where the forger was, and after how many of its games (median).
//!
//! `cargo bench --bench forfeit_sim -- [--quick]` (or, without a release
//! build, `cargo test --bench forfeit_sim -- [--quick]`: the same code
//! in the dev profile).

use mancala_arena::serve::intake::suspects::{
    forfeit_suspects, residual_suspects, ForfeitCounts, ForfeitRule, ResidualRule, Scored,
    FORFEIT_RULE, RESIDUAL_RULE,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const WORKERS: usize = 8;
const GAMES: u64 = 3000;
const ROUND: u64 = 100;

/// A ladder's bots, as the forfeit rule sees them.
#[derive(Clone, Copy)]
struct Bots {
    name: &'static str,
    /// Per game: a forfeit found again always.
    solid: f64,
    /// Per game: a flaky timeout.
    flaky: f64,
    /// Per try: the server finds a flaky timeout again.
    again: f64,
}

/// One run of the forfeit rule: (honest flagged, forger flagged at game).
fn forfeit_run(
    bots: Bots,
    slow: bool,
    forge: f64,
    rule: &ForfeitRule,
    seed: u64,
) -> (bool, Option<u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut counts: Vec<ForfeitCounts> = (0..WORKERS as i64)
        .map(|w| ForfeitCounts {
            worker: w,
            ..Default::default()
        })
        .collect();
    let found = |rng: &mut ChaCha8Rng, p: f64| rng.gen::<f64>() < 1.0 - (1.0 - p).powi(2);
    let mut honest_flagged = false;
    let mut forger_at = None;
    let mut played = 0;
    while played < GAMES {
        for (w, c) in counts.iter_mut().enumerate() {
            // Worker 0 is the forger when `forge` > 0; worker 1 the slow
            // one when `slow`.
            let (flaky, again) = if slow && w == 1 {
                (bots.flaky * 3.0, bots.again / 2.0)
            } else {
                (bots.flaky, bots.again)
            };
            for _ in 0..ROUND {
                if w == 0 && forge > 0.0 && rng.gen::<f64>() < forge {
                    c.checked += 1;
                    if !found(&mut rng, bots.flaky * bots.again) {
                        c.not_reproduced += 1;
                    }
                    continue;
                }
                if rng.gen::<f64>() < bots.solid {
                    c.checked += 1;
                } else if rng.gen::<f64>() < flaky {
                    c.checked += 1;
                    if !found(&mut rng, again) {
                        c.not_reproduced += 1;
                    }
                }
            }
        }
        played += ROUND;
        for (w, _) in forfeit_suspects(&counts, rule) {
            if w == 0 && forge > 0.0 {
                forger_at.get_or_insert(played);
            } else {
                honest_flagged = true;
            }
        }
        if forger_at.is_some() && forge > 0.0 {
            break;
        }
    }
    (honest_flagged, forger_at)
}

/// One run of the residual rule: (honest flagged, forger flagged at its
/// game).
fn residual_run(bias: f64, rule: &ResidualRule, seed: u64, total: u64) -> (bool, Option<u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let elo: Vec<f64> = (0..16)
        .map(|_| {
            // N(0, 200) by Box–Muller.
            let (u, v): (f64, f64) = (rng.gen::<f64>().max(1e-12), rng.gen());
            200.0 * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        })
        .collect();
    let favoured = rng.gen_range(0..16i64);
    let mut games = Vec::new();
    let mut honest_flagged = false;
    let mut forger_at = None;
    let mut forger_games = 0;
    for n in 1..=total {
        let a = rng.gen_range(0..16usize);
        let mut b = rng.gen_range(0..15usize);
        if b >= a {
            b += 1;
        }
        let worker = rng.gen_range(0..WORKERS as i64);
        let e = 1.0 / (1.0 + 10f64.powf(-(elo[a] - elo[b]) / 400.0));
        let draw = 2.0 * 0.3 * e.min(1.0 - e);
        let x: f64 = rng.gen();
        let mut score0 = if x < draw {
            0.5
        } else if x < draw + (e - draw / 2.0) {
            1.0
        } else {
            0.0
        };
        if worker == 0 {
            forger_games += 1;
            if bias > 0.0 && rng.gen::<f64>() < bias {
                if a as i64 == favoured {
                    score0 = 1.0;
                } else if b as i64 == favoured {
                    score0 = 0.0;
                }
            }
        }
        games.push(Scored {
            worker: Some(worker),
            pairing: (0, vec![a as i64, b as i64]),
            score0,
        });
        if n % 1000 == 0 {
            for (w, _) in residual_suspects(&games, rule) {
                if w == 0 && bias > 0.0 {
                    forger_at.get_or_insert(forger_games);
                } else {
                    honest_flagged = true;
                }
            }
            if forger_at.is_some() {
                break;
            }
        }
    }
    (honest_flagged, forger_at)
}

fn median(mut v: Vec<u64>) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.sort_unstable();
    v[v.len() / 2].to_string()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs: u64 = if quick { 40 } else { 400 };
    let ladders = [
        Bots {
            name: "steady (1% solid, 2% flaky, 30% found per try)",
            solid: 0.01,
            flaky: 0.02,
            again: 0.3,
        },
        Bots {
            name: "flaky (1% solid, 5% flaky, 10% found per try)",
            solid: 0.01,
            flaky: 0.05,
            again: 0.1,
        },
    ];
    let rules = [
        FORFEIT_RULE,
        ForfeitRule {
            min_not_reproduced: 3,
            alpha: 0.01,
            floor: 0.2,
        },
        ForfeitRule {
            min_not_reproduced: 3,
            alpha: 0.001,
            floor: 0.05,
        },
        ForfeitRule {
            min_not_reproduced: 3,
            alpha: 0.001,
            floor: 0.2,
        },
    ];
    println!("## Forfeits ({runs} runs each, {WORKERS} workers of {GAMES} games)\n");
    println!("| bots | min | alpha | floor | honest flagged (slow worker among them) | forger 0.5% caught; median games | 1% | 2% | 5% |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for bots in ladders {
        for rule in &rules {
            let fp = (0..runs)
                .filter(|&s| forfeit_run(bots, false, 0.0, rule, s).0)
                .count();
            let fp_slow = (0..runs)
                .filter(|&s| forfeit_run(bots, true, 0.0, rule, s).0)
                .count();
            let mut cells = Vec::new();
            for forge in [0.005, 0.01, 0.02, 0.05] {
                let at: Vec<u64> = (0..runs)
                    .filter_map(|s| forfeit_run(bots, false, forge, rule, 10_000 + s).1)
                    .collect();
                cells.push(format!(
                    "{:.0}%; {}",
                    100.0 * at.len() as f64 / runs as f64,
                    median(at)
                ));
            }
            println!(
                "| {} | {} | {} | {} | {:.1}% ({:.1}%) | {} |",
                bots.name,
                rule.min_not_reproduced,
                rule.alpha,
                rule.floor,
                100.0 * fp as f64 / runs as f64,
                100.0 * fp_slow as f64 / runs as f64,
                cells.join(" | ")
            );
        }
    }
    let runs: u64 = if quick { 8 } else { 40 };
    let total = if quick { 12_000 } else { 24_000 };
    println!("\n## Residuals ({runs} runs each, {total} games over {WORKERS} workers)\n");
    println!("| z | min pairings | honest flagged | bias 10%: caught; median forger games | 25% | 50% | 100% |");
    println!("|---|---|---|---|---|---|---|");
    for z in [4.5, 5.5, RESIDUAL_RULE.z] {
        let rule = ResidualRule { z, ..RESIDUAL_RULE };
        let fp = (0..runs)
            .filter(|&s| residual_run(0.0, &rule, s, total).0)
            .count();
        let mut cells = Vec::new();
        for bias in [0.1, 0.25, 0.5, 1.0] {
            let at: Vec<u64> = (0..runs)
                .filter_map(|s| residual_run(bias, &rule, 20_000 + s, total).1)
                .collect();
            cells.push(format!(
                "{:.0}%; {}",
                100.0 * at.len() as f64 / runs as f64,
                median(at)
            ));
        }
        println!(
            "| {z} | {} | {:.1}% | {} |",
            rule.min_pairings,
            100.0 * fp as f64 / runs as f64,
            cells.join(" | ")
        );
    }
}
