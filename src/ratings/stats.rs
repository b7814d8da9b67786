//! Counting: turns rows into the fit's pairwise evidence and into the
//! descriptive statistics (per bot, per pair with pentanomial counts, per
//! variant). Pure; owns no model and no I/O.
//!
//! Counts are integers, converted to weights only at the end, so the result
//! does not depend on the order of the rows.

use super::fit::Cell;
use super::{z_value, Standings};
use crate::results::GameRow;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Weight of one seat pair of a 3-player game: the three pairs of a game
/// add up to one 2-player game (docs/ratings.md, "3-player games").
pub const THREE_PLAYER_PAIR_WEIGHT: f64 = 1.0 / 3.0;

/// Per bot (in one variant label or all): games and results.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BotCount {
    /// Games played.
    pub games: u64,
    /// Sum of the bot's seat scores (a 2-player win is 1, a draw 1/2).
    pub points: f64,
    /// Pairwise results against the other seats (one per opponent per game).
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Games this bot forfeited, and why.
    pub forfeits: u64,
    pub forfeit_reasons: BTreeMap<String, u64>,
}

impl BotCount {
    /// Mean seat score in [0, 1] (0 without games).
    pub fn score(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.points / self.games as f64
        }
    }

    /// Share of pairwise results that were draws.
    pub fn draw_rate(&self) -> f64 {
        let n = self.wins + self.draws + self.losses;
        if n == 0 {
            0.0
        } else {
            self.draws as f64 / n as f64
        }
    }

    fn add(&mut self, o: &BotCount) {
        self.games += o.games;
        self.points += o.points;
        self.wins += o.wins;
        self.draws += o.draws;
        self.losses += o.losses;
        self.forfeits += o.forfeits;
        for (k, v) in &o.forfeit_reasons {
            *self.forfeit_reasons.entry(k.clone()).or_default() += v;
        }
    }
}

/// Head-to-head statistics of two bots (`bot_a` < `bot_b` by name).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PairCount {
    pub variant: String,
    pub bot_a: String,
    pub bot_b: String,
    /// Pairwise results between the two (games for 2 players).
    pub results: u64,
    pub a_wins: u64,
    pub draws: u64,
    pub b_wins: u64,
    /// Seat-swap pairs seen from `bot_a`: [LL, LD, WL+DD, WD, WW].
    pub penta: [u64; 5],
    /// Pentanomial Elo of `a` over `b` and its 95% half-width (fastchess);
    /// `None` without complete pairs or when `a` scored 0% or 100%.
    pub penta_elo: Option<f64>,
    pub penta_elo_err: Option<f64>,
    /// Rating difference `a - b` and LOS(a > b) from the fit of this variant.
    pub elo_diff: Option<f64>,
    pub los: Option<f64>,
}

impl PairCount {
    /// `a`'s score in [0, 1] over the pairwise results.
    pub fn a_score(&self) -> f64 {
        if self.results == 0 {
            0.0
        } else {
            (self.a_wins as f64 + 0.5 * self.draws as f64) / self.results as f64
        }
    }

    pub fn draw_rate(&self) -> f64 {
        if self.results == 0 {
            0.0
        } else {
            self.draws as f64 / self.results as f64
        }
    }

    /// Complete seat-swap pairs.
    pub fn pairs(&self) -> u64 {
        self.penta.iter().sum()
    }
}

/// Elo of a score in (0, 1).
pub fn elo_of_score(s: f64) -> f64 {
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Pentanomial Elo and 95% half-width (as fastchess `EloPentanomial`):
/// pair scores 0, 1/4, 1/2, 3/4, 1; the standard error of their mean
/// gives the interval on the score scale, mapped to Elo.
pub fn penta_elo(penta: &[u64; 5]) -> (Option<f64>, Option<f64>) {
    let n: u64 = penta.iter().sum();
    if n == 0 {
        return (None, None);
    }
    let nf = n as f64;
    let mu: f64 = penta
        .iter()
        .enumerate()
        .map(|(k, &c)| c as f64 * k as f64 / 4.0)
        .sum::<f64>()
        / nf;
    if mu <= 0.0 || mu >= 1.0 {
        return (None, None);
    }
    let var: f64 = penta
        .iter()
        .enumerate()
        .map(|(k, &c)| c as f64 * (k as f64 / 4.0 - mu).powi(2))
        .sum::<f64>()
        / nf;
    let se = (var / nf).sqrt();
    let z = z_value();
    let (lo, hi) = (mu - z * se, mu + z * se);
    let err = if lo > 0.0 && hi < 1.0 {
        Some((elo_of_score(hi) - elo_of_score(lo)) / 2.0)
    } else {
        None
    };
    (Some(elo_of_score(mu)), err)
}

/// Per variant label.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VariantStats {
    pub variant: String,
    pub players: u8,
    pub games: u64,
    /// Games where every seat scored the same.
    pub draws: u64,
    /// Mean score of seat 0.
    pub first_seat_score: f64,
    /// Fitted first-seat advantage (Elo, low, high) when requested.
    pub seat_elo: Option<(f64, f64, f64)>,
    pub plies_mean: f64,
    pub plies_median: f64,
    pub plies_min: u32,
    pub plies_max: u32,
    pub duration_ms_mean: f64,
    pub forfeits: u64,
    /// How the games ended: reason -> count.
    pub reasons: BTreeMap<String, u64>,
}

impl VariantStats {
    pub fn draw_rate(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.draws as f64 / self.games as f64
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Wdl {
    // results of `first` in 2-player games and in 3-player seat pairs
    w2: u64,
    d2: u64,
    l2: u64,
    w3: u64,
    d3: u64,
    l3: u64,
}

#[derive(Clone, Copy, Default)]
struct PairAcc {
    a_wins: u64,
    draws: u64,
    b_wins: u64,
    penta: [u64; 5],
}

/// Rows turned into indices and counts.
pub struct Evidence {
    /// Every bot, sorted by name.
    pub bots: Vec<String>,
    /// Every variant label, sorted.
    pub labels: Vec<String>,
    /// Fit evidence; `group` is the label index.
    pub cells: Vec<Cell>,
    /// [label * nbots + bot]
    bot_counts: Vec<BotCount>,
    /// (label, a, b) with a < b
    pairs: BTreeMap<(usize, usize, usize), PairAcc>,
    variants: Vec<VariantStats>,
}

fn cmp_result(a: f64, b: f64) -> usize {
    // 0 win, 1 draw, 2 loss for `a`
    if (a - b).abs() < 1e-9 {
        1
    } else if a > b {
        0
    } else {
        2
    }
}

impl Evidence {
    pub fn collect(rows: &[&GameRow], extra_bots: &[String]) -> Evidence {
        // Names and labels.
        let mut bot_ix: HashMap<&str, usize> = HashMap::new();
        let mut label_ix: HashMap<(&str, u8), usize> = HashMap::new();
        for r in rows {
            for s in r.seats() {
                let k = bot_ix.len();
                bot_ix.entry(s).or_insert(k);
            }
            let k = label_ix.len();
            label_ix.entry((r.variant.as_str(), r.players)).or_insert(k);
        }
        for b in extra_bots {
            let k = bot_ix.len();
            bot_ix.entry(b.as_str()).or_insert(k);
        }
        let mut bots: Vec<String> = bot_ix.keys().map(|s| s.to_string()).collect();
        bots.sort();
        let bot_ix: HashMap<&str, usize> = bots
            .iter()
            .enumerate()
            .map(|(i, b)| (b.as_str(), i))
            .collect();
        let label_of = |v: &str, p: u8| {
            if p >= 3 {
                format!("{v}-{p}p")
            } else {
                v.to_string()
            }
        };
        let mut keys: Vec<(&str, u8)> = label_ix.keys().copied().collect();
        keys.sort_by_key(|(v, p)| label_of(v, *p));
        let labels: Vec<String> = keys.iter().map(|(v, p)| label_of(v, *p)).collect();
        let label_ix: HashMap<(&str, u8), usize> =
            keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();

        let nb = bots.len();
        let nl = labels.len();
        let mut wdl: HashMap<(usize, usize, usize), Wdl> = HashMap::new();
        let mut bot_counts = vec![BotCount::default(); nl * nb];
        let mut pairs: BTreeMap<(usize, usize, usize), PairAcc> = BTreeMap::new();
        let mut variants: Vec<VariantStats> = labels
            .iter()
            .zip(&keys)
            .map(|(l, (_, p))| VariantStats {
                variant: l.clone(),
                players: *p,
                plies_min: u32::MAX,
                ..Default::default()
            })
            .collect();
        let mut plies: Vec<Vec<u32>> = vec![Vec::new(); nl];
        let mut seat0_points = vec![0.0; nl];
        let mut duration = vec![0u128; nl];
        let mut groups: HashMap<(usize, &str), Vec<usize>> = HashMap::new();

        for (ri, r) in rows.iter().enumerate() {
            let l = label_ix[&(r.variant.as_str(), r.players)];
            let seats: Vec<usize> = r.seats().iter().map(|s| bot_ix[s]).collect();
            let scores = r.scores();
            let np = seats.len();
            // Per bot.
            for (s, &b) in seats.iter().enumerate() {
                let c = &mut bot_counts[l * nb + b];
                c.games += 1;
                c.points += scores[s];
                for t in 0..np {
                    if t == s {
                        continue;
                    }
                    match cmp_result(scores[s], scores[t]) {
                        0 => c.wins += 1,
                        1 => c.draws += 1,
                        _ => c.losses += 1,
                    }
                }
                if r.offender == Some(s as u8) {
                    c.forfeits += 1;
                    *c.forfeit_reasons.entry(r.reason.clone()).or_default() += 1;
                }
            }
            // Pairwise evidence and head-to-head counts.
            for s in 0..np {
                for t in (s + 1)..np {
                    let (a, b) = (seats[s], seats[t]);
                    if a == b {
                        continue;
                    }
                    let res = cmp_result(scores[s], scores[t]);
                    let e = wdl.entry((a, b, l)).or_default();
                    match (np, res) {
                        (2, 0) => e.w2 += 1,
                        (2, 1) => e.d2 += 1,
                        (2, _) => e.l2 += 1,
                        (_, 0) => e.w3 += 1,
                        (_, 1) => e.d3 += 1,
                        (_, _) => e.l3 += 1,
                    }
                    let (lo, hi, res_lo) = if a < b { (a, b, res) } else { (b, a, 2 - res) };
                    let p = pairs.entry((l, lo, hi)).or_default();
                    match res_lo {
                        0 => p.a_wins += 1,
                        1 => p.draws += 1,
                        _ => p.b_wins += 1,
                    }
                }
            }
            // Per variant.
            let v = &mut variants[l];
            v.games += 1;
            if scores.iter().all(|&x| (x - scores[0]).abs() < 1e-9) {
                v.draws += 1;
            }
            seat0_points[l] += scores[0];
            plies[l].push(r.plies);
            duration[l] += r.duration_ms as u128;
            if r.offender.is_some() {
                v.forfeits += 1;
            }
            *v.reasons.entry(r.reason.clone()).or_default() += 1;
            if np == 2 {
                groups.entry((l, r.group.as_str())).or_default().push(ri);
            }
        }

        // Pentanomial: complete 2-game groups with the seats swapped.
        for ((l, _), members) in &groups {
            if members.len() != 2 {
                continue;
            }
            let (g1, g2) = (rows[members[0]], rows[members[1]]);
            if g1.seat0 != g2.seat1 || g1.seat1 != g2.seat0 || g1.seat0 == g1.seat1 {
                continue;
            }
            let (a, b) = (bot_ix[g1.seat0.as_str()], bot_ix[g1.seat1.as_str()]);
            // Points of the lower-index bot over the two games.
            let pts = if a < b {
                g1.score0 + g2.score1
            } else {
                g1.score1 + g2.score0
            };
            let k = ((pts * 2.0).round() as usize).min(4);
            let (lo, hi) = if a < b { (a, b) } else { (b, a) };
            if let Some(p) = pairs.get_mut(&(*l, lo, hi)) {
                p.penta[k] += 1;
            }
        }

        for (l, v) in variants.iter_mut().enumerate() {
            let ps = &mut plies[l];
            ps.sort_unstable();
            let n = ps.len();
            if n > 0 {
                v.plies_min = ps[0];
                v.plies_max = ps[n - 1];
                v.plies_mean = ps.iter().map(|&p| p as f64).sum::<f64>() / n as f64;
                v.plies_median = if n % 2 == 1 {
                    ps[n / 2] as f64
                } else {
                    (ps[n / 2 - 1] as f64 + ps[n / 2] as f64) / 2.0
                };
                v.first_seat_score = seat0_points[l] / n as f64;
                v.duration_ms_mean = duration[l] as f64 / n as f64;
            } else {
                v.plies_min = 0;
            }
        }

        let mut keys: Vec<(usize, usize, usize)> = wdl.keys().copied().collect();
        keys.sort_unstable();
        let cells = keys
            .iter()
            .map(|k| {
                let e = wdl[k];
                let w3 = THREE_PLAYER_PAIR_WEIGHT;
                let (w2f, d2f, l2f) = (e.w2 as f64, e.d2 as f64, e.l2 as f64);
                let (w3f, d3f, l3f) = (e.w3 as f64, e.d3 as f64, e.l3 as f64);
                Cell {
                    first: k.0,
                    second: k.1,
                    group: k.2,
                    w: (w2f + d2f + l2f) + w3 * (w3f + d3f + l3f),
                    x: (w2f + 0.5 * d2f) + w3 * (w3f + 0.5 * d3f),
                    x2: (w2f + 0.25 * d2f) + w3 * (w3f + 0.25 * d3f),
                }
            })
            .collect();
        Evidence {
            bots,
            labels,
            cells,
            bot_counts,
            pairs,
            variants,
        }
    }

    /// Per bot counts for one label, or summed over all labels.
    pub fn bot_counts(&self, group: Option<usize>) -> Vec<BotCount> {
        let nb = self.bots.len();
        match group {
            Some(l) => self.bot_counts[l * nb..(l + 1) * nb].to_vec(),
            None => {
                let mut out = vec![BotCount::default(); nb];
                for l in 0..self.labels.len() {
                    for (b, o) in out.iter_mut().enumerate() {
                        o.add(&self.bot_counts[l * nb + b]);
                    }
                }
                out
            }
        }
    }

    /// Head-to-head rows: every label, then `all`.
    pub fn pair_stats(&self, overall: &Standings, per_variant: &[Standings]) -> Vec<PairCount> {
        let mut all: BTreeMap<(usize, usize), PairAcc> = BTreeMap::new();
        let mut out = Vec::new();
        let make = |variant: &str, a: usize, b: usize, p: &PairAcc, st: Option<&Standings>| {
            let (pe, perr) = penta_elo(&p.penta);
            let (ba, bb) = (&self.bots[a], &self.bots[b]);
            let elo_diff = st.and_then(|s| {
                let (ra, rb) = (s.get(ba)?, s.get(bb)?);
                (ra.rated && rb.rated).then_some(ra.elo - rb.elo)
            });
            PairCount {
                variant: variant.to_string(),
                bot_a: ba.clone(),
                bot_b: bb.clone(),
                results: p.a_wins + p.draws + p.b_wins,
                a_wins: p.a_wins,
                draws: p.draws,
                b_wins: p.b_wins,
                penta: p.penta,
                penta_elo: pe,
                penta_elo_err: perr,
                elo_diff,
                los: st.and_then(|s| s.los(ba, bb)),
            }
        };
        for (&(l, a, b), p) in &self.pairs {
            let st = per_variant.iter().find(|s| s.variant == self.labels[l]);
            out.push(make(&self.labels[l], a, b, p, st));
            let e = all.entry((a, b)).or_default();
            e.a_wins += p.a_wins;
            e.draws += p.draws;
            e.b_wins += p.b_wins;
            for k in 0..5 {
                e.penta[k] += p.penta[k];
            }
        }
        for (&(a, b), p) in &all {
            out.push(make(super::ALL, a, b, p, Some(overall)));
        }
        out
    }

    /// Per-label statistics, with the seat advantage of the overall fit.
    pub fn variant_stats(&self, overall: &Standings) -> Vec<VariantStats> {
        self.variants
            .iter()
            .map(|v| {
                let mut v = v.clone();
                v.seat_elo = overall
                    .seat_advantage
                    .iter()
                    .find(|s| s.0 == v.variant)
                    .map(|s| (s.1, s.2, s.3));
                v
            })
            .collect()
    }
}
