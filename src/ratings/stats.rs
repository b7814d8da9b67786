//! Counting: turns rows into the fit's pairwise evidence and into the
//! descriptive statistics (per bot, per pair with pentanomial counts, per
//! variant). Pure; owns no model and no I/O.
//!
//! Counts are integers, converted to weights only at the end, so the result
//! does not depend on the order of the rows.

use super::fit::Cell;
use super::luce::{Choice, ChoiceCounts};
use super::{z_value, Standings};
use crate::results::GameRow;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// A small multiplicative hasher (the FxHash recipe): the keys are short
/// bot names and indices, and SipHash dominated the profile.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl Hasher for Fx {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        for &b in chunks.remainder() {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves the low bits (the bucket index) weak: rotate
        // the well-mixed high bits down (as rustc-hash 2 does).
        self.0.rotate_left(26)
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

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
    /// How the games this bot played ended, whoever caused it: reason -> games.
    pub reasons: BTreeMap<String, u64>,
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
        for (k, v) in &o.reasons {
            *self.reasons.entry(k.clone()).or_default() += v;
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
    penta_elo_z(penta, z_value())
}

fn penta_elo_z(penta: &[u64; 5], z: f64) -> (Option<f64>, Option<f64>) {
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

#[derive(Clone, Copy, Default, PartialEq)]
struct Wdl {
    // results of `first` in 2-player games and in 3-player seat pairs
    w2: u64,
    d2: u64,
    l2: u64,
    w3: u64,
    d3: u64,
    l3: u64,
}

/// A seat-swap group as its rows arrive (kept small: one per two games).
struct GroupState {
    /// Seats (bot indices) and seat-0 score of its first row (scores are
    /// multiples of 1/4, exact in f32).
    a: u32,
    b: u32,
    score0: f32,
    rows: u16,
    /// The pentanomial bucket it was counted in (5 = none).
    counted: u8,
}

/// The oriented pairwise counts: a dense table when bots x bots x labels is
/// small (the usual case), a hash map otherwise.
struct WdlTable {
    nb: usize,
    nl: usize,
    dense: Vec<Wdl>,
    sparse: FastMap<(usize, usize, usize), Wdl>,
}

impl WdlTable {
    const DENSE_MAX: usize = 1 << 20;

    fn new(nb: usize, nl: usize) -> Self {
        let n = nb.saturating_mul(nb).saturating_mul(nl);
        WdlTable {
            nb,
            nl,
            dense: if n <= Self::DENSE_MAX {
                vec![Wdl::default(); n]
            } else {
                Vec::new()
            },
            sparse: FastMap::default(),
        }
    }

    #[inline]
    fn get_mut(&mut self, a: usize, b: usize, l: usize) -> &mut Wdl {
        if self.dense.is_empty() {
            self.sparse.entry((a, b, l)).or_default()
        } else {
            &mut self.dense[(a * self.nb + b) * self.nl + l]
        }
    }

    /// Non-empty entries, sorted by (a, b, l).
    fn entries(&self) -> Vec<((usize, usize, usize), Wdl)> {
        if self.dense.is_empty() {
            let mut v: Vec<_> = self.sparse.iter().map(|(k, e)| (*k, *e)).collect();
            v.sort_unstable_by_key(|(k, _)| *k);
            v
        } else {
            let (nb, nl) = (self.nb, self.nl);
            self.dense
                .iter()
                .enumerate()
                .filter(|(_, e)| e.total() > 0)
                .map(|(i, e)| (((i / nl) / nb, (i / nl) % nb, i % nl), *e))
                .collect()
        }
    }
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
    /// Fit evidence of the 2-player games; `group` is the label index.
    pub cells: Vec<Cell>,
    /// Fit evidence of the 3-player games (`luce`); `group` is the label.
    pub choices: Vec<Choice>,
    /// [label * nbots + bot]
    bot_counts: Vec<BotCount>,
    /// (label, a, b) with a < b
    pairs: BTreeMap<(usize, usize, usize), PairAcc>,
    variants: Vec<VariantStats>,
}

pub(super) fn cmp_result(a: f64, b: f64) -> usize {
    // 0 win, 1 draw, 2 loss for `a`
    if (a - b).abs() < 1e-9 {
        1
    } else if a > b {
        0
    } else {
        2
    }
}

impl Wdl {
    fn total(&self) -> u64 {
        self.w2 + self.d2 + self.l2 + self.w3 + self.d3 + self.l3
    }
}

impl Evidence {
    pub fn collect(rows: &[&GameRow], extra_bots: &[String]) -> Evidence {
        // Names and labels.
        // First pass: intern names and labels in order of appearance.
        let mut bot_ix: FastMap<&str, usize> = FastMap::default();
        let mut label_ix: FastMap<(&str, u8), usize> = FastMap::default();
        let mut row_ids: Vec<([usize; 3], usize)> = Vec::with_capacity(rows.len());
        for r in rows {
            let names = [&r.seat0, &r.seat1, &r.seat2];
            let mut ids = [0usize; 3];
            for (s, name) in names[..(r.players as usize).clamp(2, 3)].iter().enumerate() {
                let k = bot_ix.len();
                ids[s] = *bot_ix.entry(name.as_str()).or_insert(k);
            }
            let k = label_ix.len();
            let l = *label_ix.entry((r.variant.as_str(), r.players)).or_insert(k);
            row_ids.push((ids, l));
        }
        for b in extra_bots {
            let k = bot_ix.len();
            bot_ix.entry(b.as_str()).or_insert(k);
        }
        // Sorted names; `renumber[first-seen id]` is the sorted index.
        let mut seen: Vec<(&str, usize)> = bot_ix.iter().map(|(k, v)| (*k, *v)).collect();
        seen.sort_unstable();
        let mut renumber = vec![0usize; seen.len()];
        for (i, (_, old)) in seen.iter().enumerate() {
            renumber[*old] = i;
        }
        let bots: Vec<String> = seen.iter().map(|(b, _)| b.to_string()).collect();
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
        let mut label_renumber = vec![0usize; keys.len()];
        for (i, k) in keys.iter().enumerate() {
            label_renumber[label_ix[k]] = i;
        }

        let nb = bots.len();
        let nl = labels.len();
        let mut wdl = WdlTable::new(nb, nl);
        let mut bot_counts = vec![BotCount::default(); nl * nb];
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
        let mut reason_counts: Vec<FastMap<&str, u64>> = vec![FastMap::default(); nl];
        // End reasons per (label, bot), by interned reason id (no string
        // work per row).
        let mut reason_ix: FastMap<&str, usize> = FastMap::default();
        let mut bot_reasons: Vec<Vec<u64>> = vec![Vec::new(); nl * nb];
        // Seat-swap groups, counted as the rows arrive (no second pass over
        // the rows): (label, group) -> state of the group.
        let mut groups: FastMap<(usize, &str), GroupState> = FastMap::default();
        groups.reserve(rows.len() / 2 + 1);
        let mut penta: FastMap<(usize, usize, usize), [u64; 5]> = FastMap::default();
        let mut choices = ChoiceCounts::default();

        for (r, (ids, l)) in rows.iter().zip(&row_ids) {
            let l = label_renumber[*l];
            let np = (r.players as usize).clamp(2, 3);
            let mut seats = [0usize; 3];
            for s in 0..np {
                seats[s] = renumber[ids[s]];
            }
            let scores = [r.score0, r.score1, r.score2.unwrap_or(0.0)];
            let k = reason_ix.len();
            let reason = *reason_ix.entry(r.reason.as_str()).or_insert(k);
            // Per bot.
            for s in 0..np {
                let br = &mut bot_reasons[l * nb + seats[s]];
                if br.len() <= reason {
                    br.resize(reason + 1, 0);
                }
                br[reason] += 1;
                let c = &mut bot_counts[l * nb + seats[s]];
                c.games += 1;
                c.points += scores[s];
                for t in 0..np {
                    // A bot seated against itself has no result against itself.
                    if t == s || seats[t] == seats[s] {
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
            // 3-player games: Luce choice events for the fit.
            if np == 3 {
                choices.add(l, seats, scores);
            }
            // Pairwise counts, oriented by seat order.
            for s in 0..np {
                for t in (s + 1)..np {
                    let (a, b) = (seats[s], seats[t]);
                    if a == b {
                        continue;
                    }
                    let res = cmp_result(scores[s], scores[t]);
                    let e = wdl.get_mut(a, b, l);
                    match (np, res) {
                        (2, 0) => e.w2 += 1,
                        (2, 1) => e.d2 += 1,
                        (2, _) => e.l2 += 1,
                        (_, 0) => e.w3 += 1,
                        (_, 1) => e.d3 += 1,
                        (_, _) => e.l3 += 1,
                    }
                }
            }
            // Per variant.
            let v = &mut variants[l];
            v.games += 1;
            if scores[..np].iter().all(|&x| (x - scores[0]).abs() < 1e-9) {
                v.draws += 1;
            }
            seat0_points[l] += scores[0];
            plies[l].push(r.plies);
            duration[l] += r.duration_ms as u128;
            if r.offender.is_some() {
                v.forfeits += 1;
            }
            *reason_counts[l].entry(r.reason.as_str()).or_default() += 1;
            if np == 2 {
                let (a, b) = (seats[0], seats[1]);
                let g = groups.entry((l, r.group.as_str())).or_insert(GroupState {
                    a: a as u32,
                    b: b as u32,
                    score0: scores[0] as f32,
                    rows: 0,
                    counted: 5,
                });
                g.rows = g.rows.saturating_add(1);
                if g.rows == 2 && g.a as usize == b && g.b as usize == a && a != b {
                    // Points of the lower-index bot over the two games.
                    let first = g.score0 as f64;
                    let pts = if a > b {
                        first + scores[1]
                    } else {
                        (1.0 - first) + scores[0]
                    };
                    let k = ((pts * 2.0).round() as usize).min(4);
                    penta.entry((l, a.min(b), a.max(b))).or_default()[k] += 1;
                    g.counted = k as u8;
                } else if g.rows == 3 && g.counted < 5 {
                    // Not a pair after all: take back its count.
                    let (ga, gb) = (g.a as usize, g.b as usize);
                    if let Some(c) = penta.get_mut(&(l, ga.min(gb), ga.max(gb))) {
                        c[g.counted as usize] -= 1;
                    }
                    g.counted = 5;
                }
            }
        }

        let mut reason_names = vec![""; reason_ix.len()];
        for (name, &i) in &reason_ix {
            reason_names[i] = name;
        }
        for (c, counts) in bot_counts.iter_mut().zip(&bot_reasons) {
            for (i, &n) in counts.iter().enumerate() {
                if n > 0 {
                    *c.reasons.entry(reason_names[i].to_string()).or_default() += n;
                }
            }
        }

        // Head-to-head counts from the oriented evidence.
        let mut pairs: BTreeMap<(usize, usize, usize), PairAcc> = BTreeMap::new();
        let entries = wdl.entries();
        for &((a, b, l), e) in &entries {
            let (w, d, lo_) = (e.w2 + e.w3, e.d2 + e.d3, e.l2 + e.l3);
            if a < b {
                let p = pairs.entry((l, a, b)).or_default();
                p.a_wins += w;
                p.draws += d;
                p.b_wins += lo_;
            } else {
                let p = pairs.entry((l, b, a)).or_default();
                p.a_wins += lo_;
                p.draws += d;
                p.b_wins += w;
            }
        }

        for (key, c) in penta {
            if let Some(p) = pairs.get_mut(&key) {
                p.penta = c;
            }
        }

        for (l, v) in variants.iter_mut().enumerate() {
            v.reasons = reason_counts[l]
                .iter()
                .map(|(k, c)| (k.to_string(), *c))
                .collect();
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

        // The 2-player games; the 3-player ones are in `choices`.
        let cells = entries
            .iter()
            .filter(|(_, e)| e.w2 + e.d2 + e.l2 > 0)
            .map(|&(k, e)| {
                let (w2f, d2f, l2f) = (e.w2 as f64, e.d2 as f64, e.l2 as f64);
                Cell {
                    first: k.0,
                    second: k.1,
                    group: k.2,
                    w: w2f + d2f + l2f,
                    x: w2f + 0.5 * d2f,
                    x2: w2f + 0.25 * d2f,
                }
            })
            .collect();
        Evidence {
            bots,
            labels,
            cells,
            choices: choices.choices(),
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

    /// The counts of bots `a` < `b` (indices into `bots`) in each label
    /// where they met, by label index: `[a's wins, draws, b's wins]` of
    /// their pairwise results and the seat-swap pairs seen from `a`
    /// (`[LL, LD, WL+DD, WD, WW]`, complete pairs only). The SPRT reads its
    /// pentanomial counts here, so it groups pairs exactly as `pairs.csv`.
    pub fn head_to_head(&self, a: usize, b: usize) -> Vec<(usize, [u64; 3], [u64; 5])> {
        self.pairs
            .iter()
            .filter(|(&(_, pa, pb), _)| pa == a && pb == b)
            .map(|(&(l, _, _), p)| (l, [p.a_wins, p.draws, p.b_wins], p.penta))
            .collect()
    }

    /// Head-to-head rows: every label, then `all`.
    pub fn pair_stats(&self, overall: &Standings, per_variant: &[Standings]) -> Vec<PairCount> {
        let mut all: BTreeMap<(usize, usize), PairAcc> = BTreeMap::new();
        let z = z_value();
        let mut out = Vec::new();
        let make = |variant: &str, a: usize, b: usize, p: &PairAcc, st: Option<&Standings>| {
            let (pe, perr) = penta_elo_z(&p.penta, z);
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
