//! Which workers to quarantine (issue 47, item 7; docs/security.md
//! "Forged results"): two rules, pure functions of counts, with their
//! thresholds chosen by the simulation of `benches/forfeit_sim.rs`.
//!
//! - **Forfeits that do not come again.** Every forfeit a worker reports
//!   is played again on the server up to that decision; an honest worker's
//!   forfeits come again unless a bot is flaky (a timeout that happens one
//!   time in three), a forged one never. A worker is suspect when its share
//!   of forfeits not found again is improbable beside the other workers'
//!   (a one-sided binomial test, Bonferroni-corrected over the workers),
//!   and it has at least [`FORFEIT_RULE`]'s `min_not_reproduced` of them.
//! - **Results that stray** (fishtest's per-worker residuals, `get_chi2`):
//!   for each pairing (variant and bots, in seat order), a worker's summed
//!   score against the other workers' mean score there; the squared
//!   residuals summed into a chi-squared, turned into a z-score; a worker
//!   is suspect past [`RESIDUAL_RULE`]'s `z`.

/// The thresholds of the forfeit rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForfeitRule {
    /// Fewest forfeits not found again before a worker can be suspect.
    pub min_not_reproduced: u64,
    /// The test's level over all workers (divided by their number).
    pub alpha: f64,
    /// The least share of forfeits not found again the test assumes of
    /// an honest worker, whatever the others show (a ladder whose other
    /// workers saw no flaky bot yet).
    pub floor: f64,
}

/// The ladder's forfeit rule (docs/security.md, "Forged results": chosen
/// by `benches/forfeit_sim.rs`).
pub const FORFEIT_RULE: ForfeitRule = ForfeitRule {
    min_not_reproduced: 5,
    alpha: 0.0001,
    floor: 0.2,
};

/// One worker's re-checked forfeits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForfeitCounts {
    pub worker: i64,
    /// Forfeits re-checked.
    pub checked: u64,
    /// Of them, not found again.
    pub not_reproduced: u64,
}

/// `P(X >= m)` for `X ~ Binomial(n, q)`, in logs so that a large `n`
/// neither underflows nor overflows.
pub fn binomial_tail(n: u64, m: u64, q: f64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    if m > n {
        return 0.0;
    }
    let q = q.clamp(1e-12, 1.0 - 1e-12);
    let (lq, lp) = (q.ln(), (1.0 - q).ln());
    // log C(n, m), then each next term from the last.
    let mut log_c = 0.0;
    for i in 0..m {
        log_c += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    let mut terms = Vec::with_capacity((n - m + 1) as usize);
    let mut k = m;
    loop {
        terms.push(log_c + k as f64 * lq + (n - k) as f64 * lp);
        if k == n {
            break;
        }
        log_c += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
        k += 1;
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
    (top + sum.ln()).exp().min(1.0)
}

/// The workers the forfeit rule finds suspect among `all`, each with why
/// (a sentence for the workers' page and the log).
pub fn forfeit_suspects(all: &[ForfeitCounts], rule: &ForfeitRule) -> Vec<(i64, String)> {
    let workers = all.iter().filter(|c| c.checked > 0).count().max(1);
    let (sum_n, sum_m) = all
        .iter()
        .fold((0, 0), |(n, m), c| (n + c.checked, m + c.not_reproduced));
    let mut out = Vec::new();
    for c in all {
        if c.not_reproduced < rule.min_not_reproduced {
            continue;
        }
        // The others' share, with one of each added (none seen yet is
        // not a share of 0), and never under the floor.
        let (n, m) = (sum_n - c.checked, sum_m - c.not_reproduced);
        let base = ((m as f64 + 1.0) / (n as f64 + 2.0)).max(rule.floor);
        let p = binomial_tail(c.checked, c.not_reproduced, base);
        if p < rule.alpha / workers as f64 {
            out.push((
                c.worker,
                format!(
                    "{} of its {} forfeits did not come again when the server played them again (the other workers: {m} of {n}; p = {p:.1e})",
                    c.not_reproduced, c.checked
                ),
            ));
        }
    }
    out
}

/// The thresholds of the residual rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidualRule {
    /// A worker is suspect past this z-score of its chi-squared.
    pub z: f64,
    /// Fewest pairings it shares with the others before it can be.
    pub min_pairings: usize,
    /// Fewest games on each side (the worker's, the others') for a
    /// pairing to count.
    pub min_games: u32,
}

/// The ladder's residual rule (docs/security.md, "Forged results": chosen
/// by `benches/forfeit_sim.rs`).
pub const RESIDUAL_RULE: ResidualRule = ResidualRule {
    z: 6.5,
    min_pairings: 20,
    min_games: 2,
};

/// One finished game for the residual rule: who recorded it (`None`: the
/// server itself, whose games count as the others' for every worker), its
/// pairing (variant and versions in seat order) and seat 0's score.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    pub worker: Option<i64>,
    pub pairing: (usize, Vec<i64>),
    pub score0: f64,
}

/// Each worker's residual z-score and the pairings it shares with the
/// others (fishtest's `get_chi2`, by pairing): per pairing with at least
/// `min_games` games on each side, the worker's mean score over its `k`
/// games against the others' mean over their `n`, squared and divided by
/// the variance of that difference, `v·(1/k + 1/n)`; summed, a
/// chi-squared with one degree per pairing, made a z-score by Wilson and
/// Hilferty's cube root.
///
/// `v` is the variance of a game's score in that pairing estimated from
/// all its `k + n` games (pooled, with `k + n − 1` below: under the rule's
/// hypothesis both sides play the same games), never under
/// 0.7·m′(1 − m′) for their mean with one win and one loss added. The
/// others' variance alone, from a few games, was too low (a pairing the
/// server's one slot played twice gave about 2 of chi-squared, not 1) and
/// quarantined honest workers on a small ladder.
pub fn residuals(games: &[Scored], min_games: u32) -> Vec<(i64, f64, usize)> {
    use std::collections::BTreeMap;
    /// Games, their scores' sum and their squares' sum, per recorder.
    type Sums = BTreeMap<Option<i64>, (f64, f64, f64)>;
    // Per pairing.
    let mut cells: BTreeMap<&(usize, Vec<i64>), Sums> = BTreeMap::new();
    for g in games {
        let c = cells
            .entry(&g.pairing)
            .or_default()
            .entry(g.worker)
            .or_default();
        c.0 += 1.0;
        c.1 += g.score0;
        c.2 += g.score0 * g.score0;
    }
    let least = f64::from(min_games.max(1));
    let mut chi: BTreeMap<i64, (f64, usize)> = BTreeMap::new();
    for by in cells.values() {
        let all = by
            .values()
            .fold((0.0, 0.0, 0.0), |a, c| (a.0 + c.0, a.1 + c.1, a.2 + c.2));
        for (w, c) in by {
            let Some(w) = w else { continue };
            let (k, n) = (c.0, all.0 - c.0);
            if k < least || n < least || all.0 < 3.0 {
                continue;
            }
            let mean = all.1 / all.0;
            // Pooled, but never under that of a game whose mean is theirs
            // drawn towards an even one (one win and one loss added), with
            // draws: a pairing always won is not proof it cannot be lost.
            let shrunk = (all.1 + 1.0) / (all.0 + 2.0);
            let v =
                ((all.2 - all.0 * mean * mean) / (all.0 - 1.0)).max(0.7 * shrunk * (1.0 - shrunk));
            let d = c.1 / k - (all.1 - c.1) / n;
            let x = chi.entry(*w).or_default();
            x.0 += d * d / (v * (1.0 / k + 1.0 / n));
            x.1 += 1;
        }
    }
    chi.into_iter()
        .map(|(w, (x, k))| {
            let k_f = k as f64;
            let h = 2.0 / (9.0 * k_f);
            let z = ((x / k_f).cbrt() - (1.0 - h)) / h.sqrt();
            (w, z, k)
        })
        .collect()
}

/// The workers the residual rule finds suspect, each with why.
pub fn residual_suspects(games: &[Scored], rule: &ResidualRule) -> Vec<(i64, String)> {
    residuals(games, rule.min_games)
        .into_iter()
        .filter(|&(_, z, k)| k >= rule.min_pairings && z > rule.z)
        .map(|(w, z, k)| {
            (
                w,
                format!(
                    "its results stray from the other workers' in the same {k} pairings (z = {z:.1}, over {})",
                    rule.z
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binomial_tail_is_exact_on_small_cases_and_holds_on_large_ones() {
        // P(X >= 2), n = 3, q = 0.5: 4/8.
        assert!((binomial_tail(3, 2, 0.5) - 0.5).abs() < 1e-12);
        assert!((binomial_tail(10, 0, 0.3) - 1.0).abs() < 1e-12);
        assert_eq!(binomial_tail(3, 4, 0.5), 0.0);
        // n = 5000 would underflow (0.7^5000) without logs. 1600 is 3.1
        // standard deviations over the mean (1500), 1700 is 6.2.
        let p = binomial_tail(5000, 1600, 0.3);
        assert!(p > 5e-4 && p < 2e-3, "{p}");
        let p = binomial_tail(5000, 1700, 0.3);
        assert!(p > 0.0 && p < 1e-8, "{p}");
        assert!((binomial_tail(5000, 1, 0.3) - 1.0).abs() < 1e-9);
    }

    fn counts(worker: i64, checked: u64, not_reproduced: u64) -> ForfeitCounts {
        ForfeitCounts {
            worker,
            checked,
            not_reproduced,
        }
    }

    #[test]
    fn a_worker_whose_forfeits_never_come_again_is_suspect_an_unlucky_honest_one_is_not() {
        let rule = FORFEIT_RULE;
        // Three honest workers, one forfeit in four not found again (a
        // flaky bot's timeouts); the forger's five, none found again.
        let all = [
            counts(1, 40, 10),
            counts(2, 36, 9),
            counts(3, 44, 12),
            counts(4, 10, 10),
        ];
        let s = forfeit_suspects(&all, &rule);
        assert_eq!(s.iter().map(|s| s.0).collect::<Vec<_>>(), vec![4], "{s:?}");
        assert!(s[0].1.contains("10 of its 10"), "{}", s[0].1);
        // Too few to tell: 4 of 4.
        let s = forfeit_suspects(&[counts(1, 400, 10), counts(4, 4, 4)], &rule);
        assert!(s.is_empty(), "{s:?}");
        // Alone on the ladder, with no one to compare: one in two.
        let s = forfeit_suspects(&[counts(4, 14, 14)], &rule);
        assert_eq!(s.len(), 1, "{s:?}");
        let s = forfeit_suspects(&[counts(4, 12, 12)], &rule);
        assert!(s.is_empty(), "{s:?}");
        // Beside many, the floor: 5 of 5 against 1 of 1,000 is not enough.
        let s = forfeit_suspects(&[counts(1, 1000, 1), counts(4, 5, 5)], &rule);
        assert!(s.is_empty(), "{s:?}");
        let s = forfeit_suspects(&[counts(1, 1000, 1), counts(4, 7, 7)], &rule);
        assert_eq!(s.len(), 1, "{s:?}");
    }

    #[test]
    fn a_worker_that_turns_results_round_strays_an_honest_one_does_not() {
        // Pairings of two bots each; seat 0 wins 3 games in 4 wherever it
        // is played. Workers 1..=3 honest; worker 4 reports seat 1 winning.
        let mut games = Vec::new();
        for p in 0..30i64 {
            for w in 1..=4i64 {
                for g in 0..8 {
                    let honest = if (g + p) % 4 == 0 { 0.0 } else { 1.0 };
                    let score0 = if w == 4 { 1.0 - honest } else { honest };
                    games.push(Scored {
                        worker: Some(w),
                        pairing: (0, vec![p, p + 100]),
                        score0,
                    });
                }
            }
        }
        let s = residual_suspects(&games, &RESIDUAL_RULE);
        assert_eq!(s.iter().map(|s| s.0).collect::<Vec<_>>(), vec![4], "{s:?}");
        // Too few pairings shared: no verdict.
        let few: Vec<Scored> = games.into_iter().filter(|g| g.pairing.1[0] < 5).collect();
        assert!(residual_suspects(&few, &RESIDUAL_RULE).is_empty());
    }

    /// A small ladder: one worker (4) and the server's own slot (`None`)
    /// playing the same random bots, the worker most games of each
    /// pairing, the server 1 to 10; `skew` turns that share of the
    /// worker's seat-0 losses and draws into wins.
    fn small_ladder(seed: u64, skew: f64) -> Vec<Scored> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut games = Vec::new();
        for p in 0..370i64 {
            let (win, draw) = (rng.gen_range(0.3..0.6), rng.gen_range(0.0..0.15));
            let (k, n) = (rng.gen_range(8..=25), rng.gen_range(1..=10));
            for g in 0..k + n {
                let x: f64 = rng.gen();
                let mut score0 = if x < draw {
                    0.5
                } else if x < draw + win {
                    1.0
                } else {
                    0.0
                };
                let worker = (g < k).then_some(4);
                if worker.is_some() && score0 < 1.0 && rng.gen::<f64>() < skew {
                    score0 = 1.0;
                }
                games.push(Scored {
                    worker,
                    pairing: (0, vec![p, p + 1000]),
                    score0,
                });
            }
        }
        games
    }

    #[test]
    fn an_honest_worker_beside_a_small_server_slot_does_not_stray() {
        // Before the pooled variance, the others' few games' variance made
        // about one seed in three of these reach z = 6.5.
        for seed in 0..60 {
            let games = small_ladder(seed, 0.0);
            let s = residual_suspects(&games, &RESIDUAL_RULE);
            assert!(s.is_empty(), "seed {seed}: {s:?}");
            let z = residuals(&games, RESIDUAL_RULE.min_games);
            assert!(z[0].1 < 4.0 && z[0].2 >= 250, "seed {seed}: {z:?}");
        }
        // A worker that skews the same ladder is still caught.
        for seed in 0..20 {
            let s = residual_suspects(&small_ladder(1000 + seed, 0.5), &RESIDUAL_RULE);
            assert_eq!(s.len(), 1, "seed {seed}: {s:?}");
        }
    }
}
