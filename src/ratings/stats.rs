//! Counting: turns rows into the fit's pairwise evidence and into the
//! descriptive statistics (per bot, per pair with pentanomial counts, per
//! variant). Pure; owns no model and no I/O.
//!
//! Counts are integers, converted to weights only at the end, so the result
//! does not depend on the order of the rows. Rows arrive one at a time
//! (`EvidenceBuilder::add`): nothing per row is kept but the seat-swap
//! groups (see `EvidenceBuilder`).

use super::fit::Cell;
use super::luce::{Choice, ChoiceCounts};
use super::scale::cmp_result;
use super::table::{z_value, BotCount, Standings};
use crate::results::GameRow;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// A small multiplicative hasher (the FxHash recipe): the keys are short
/// bot names and indices, and SipHash dominated the profile.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

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
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
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

/// A hash map with `Fx` hashing.
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

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
    /// `None` without complete pairs or when `a` scored 0% or 100%; the
    /// half-width is `None` too when every pair scored the same (one
    /// pair, say) or the interval leaves (0, 1): [`penta_elo_gap`] says
    /// which.
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

/// Why [`penta_elo`] of `penta` gives no interval (or no Elo at all), in
/// a few words for a table's cell or a line's parenthesis; `None` when it
/// gives both.
pub fn penta_elo_gap(penta: &[u64; 5]) -> Option<&'static str> {
    let n: u64 = penta.iter().sum();
    let k_sum: u64 = penta.iter().enumerate().map(|(k, &c)| k as u64 * c).sum();
    if n == 0 {
        return Some("no complete seat-swap pair");
    }
    if k_sum == 0 || k_sum == 4 * n {
        return Some("its seat-swap pairs score 0% or 100%");
    }
    match penta_elo(penta) {
        (Some(_), Some(_)) => None,
        _ if n == 1 => Some("one seat-swap pair is too few"),
        _ if penta.iter().filter(|&&c| c > 0).count() == 1 => {
            Some("every seat-swap pair scored the same")
        }
        _ => Some("the interval of the score reaches 0% or 100%, where Elo is infinite"),
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
    // No spread (one pair, or every pair alike): no interval, not a
    // zero-width one.
    let err = if var > 0.0 && lo > 0.0 && hi < 1.0 {
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
#[derive(Clone)]
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

impl Wdl {
    fn total(&self) -> u64 {
        self.w2 + self.d2 + self.l2 + self.w3 + self.d3 + self.l3
    }
}

/// Game lengths as a histogram (the median without keeping every game).
#[derive(Clone, Default)]
struct Plies {
    /// Games by length, for lengths below `Plies::DENSE`.
    dense: Vec<u64>,
    /// Longer games.
    long: BTreeMap<u32, u64>,
    games: u64,
}

impl Plies {
    const DENSE: u32 = 1 << 16;

    fn add(&mut self, p: u32) {
        self.games += 1;
        if p < Self::DENSE {
            let i = p as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, 0);
            }
            self.dense[i] += 1;
        } else {
            *self.long.entry(p).or_default() += 1;
        }
    }

    /// (length, games) in increasing length.
    fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let dense = self.dense.iter().enumerate().map(|(p, &c)| (p as u32, c));
        dense
            .chain(self.long.iter().map(|(&p, &c)| (p, c)))
            .filter(|&(_, c)| c > 0)
    }

    /// The `k`-th shortest length (0-based; `k < games`).
    fn nth(&self, k: u64) -> u32 {
        let mut seen = 0;
        for (p, c) in self.iter() {
            seen += c;
            if seen > k {
                return p;
            }
        }
        0
    }

    /// Min, max, mean and median, as computed from the sorted lengths.
    fn summary(&self) -> Option<(u32, u32, f64, f64)> {
        let n = self.games;
        if n == 0 {
            return None;
        }
        // The same additions in the same order as summing the sorted list.
        let mut sum = 0.0;
        for (p, c) in self.iter() {
            for _ in 0..c {
                sum += p as f64;
            }
        }
        let median = if n % 2 == 1 {
            self.nth(n / 2) as f64
        } else {
            (self.nth(n / 2 - 1) as f64 + self.nth(n / 2) as f64) / 2.0
        };
        Some((self.nth(0), self.nth(n - 1), sum / n as f64, median))
    }
}

/// One variant label as its rows arrive (bots by first-seen index).
#[derive(Clone, Default)]
struct LabelAcc {
    games: u64,
    draws: u64,
    seat0_points: f64,
    duration: u128,
    forfeits: u64,
    plies: Plies,
    /// Games by end reason (reason index).
    reasons: Vec<u64>,
    /// Per bot.
    bots: Vec<BotCount>,
    /// Per bot, games by end reason (reason index).
    bot_reasons: Vec<Vec<u64>>,
}

/// A stable 64-bit hash of a seat-swap group's (label, id).
fn group_key(label: u32, group: &str) -> u64 {
    use std::hash::Hash;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    label.hash(&mut h);
    group.hash(&mut h);
    h.finish()
}

/// Builds `Evidence` one row at a time, in memory that does not grow with
/// the rows: names interned once, counts per (label, bot) and per (pair,
/// label), lengths as histograms. Only the seat-swap groups of 2-player
/// games are kept, 24 bytes each (a 64-bit hash of the label and group id
/// and its state), so that a third game of a group (files of two leagues
/// sharing group ids) takes its pair back out of the pentanomial counts.
#[derive(Clone, Default)]
pub struct EvidenceBuilder {
    /// Bots in order of first appearance.
    bot_ix: FastMap<Box<str>, u32>,
    bot_names: Vec<Box<str>>,
    /// (variant, players) in order of first appearance.
    label_keys: Vec<(String, u8)>,
    labels: Vec<LabelAcc>,
    reason_ix: FastMap<Box<str>, u32>,
    reason_names: Vec<Box<str>>,
    /// Oriented pairwise results: (seat-order first, second, label).
    wdl: FastMap<(u32, u32, u32), Wdl>,
    /// 2-player seat-swap groups by `group_key`.
    groups: FastMap<u64, GroupState>,
    /// Complete seat-swap pairs: (label, lo, hi) by first-seen index, lo <
    /// hi, in buckets of `lo`'s points (0, 1/2, ..., 2).
    penta: FastMap<(u32, u32, u32), [u64; 5]>,
    /// 3-player games as Luce choice events, by first-seen indices.
    choices: ChoiceCounts,
    /// Seat-swap groups with more than two games (no pair counted), and
    /// the id of the first.
    crowded: u64,
    first_crowded: Option<String>,
}

impl EvidenceBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    fn bot(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.bot_ix.get(name) {
            return i;
        }
        let i = self.bot_names.len() as u32;
        self.bot_ix.insert(name.into(), i);
        self.bot_names.push(name.into());
        i
    }

    fn label(&mut self, variant: &str, players: u8) -> u32 {
        if let Some(i) = self
            .label_keys
            .iter()
            .position(|(v, p)| *p == players && v == variant)
        {
            return i as u32;
        }
        self.label_keys.push((variant.to_string(), players));
        self.labels.push(LabelAcc::default());
        (self.labels.len() - 1) as u32
    }

    fn reason(&mut self, reason: &str) -> usize {
        if let Some(&i) = self.reason_ix.get(reason) {
            return i as usize;
        }
        let i = self.reason_names.len();
        self.reason_ix.insert(reason.into(), i as u32);
        self.reason_names.push(reason.into());
        i
    }

    /// Counts one game.
    pub fn add(&mut self, r: &GameRow) {
        self.add_game(r, true);
    }

    /// Counts one game that is a seat-swap group of its own, which no
    /// other row can complete (the ladder's games: each one's group is its
    /// unique id): the same counts as [`EvidenceBuilder::add`], without
    /// remembering the group (24 bytes a game).
    pub fn add_unpaired(&mut self, r: &GameRow) {
        self.add_game(r, false);
    }

    fn add_game(&mut self, r: &GameRow, grouped: bool) {
        let np = (r.players as usize).clamp(2, 3);
        let names = [&r.seat0, &r.seat1, &r.seat2];
        let mut seats = [0u32; 3];
        for s in 0..np {
            seats[s] = self.bot(names[s]);
        }
        let l = self.label(&r.variant, r.players);
        let scores = [r.score0, r.score1, r.score2.unwrap_or(0.0)];
        let reason = self.reason(&r.reason);
        self.count_bots(r, l, &seats[..np], &scores, reason);
        self.count_pairwise(l, &seats[..np], &scores);
        // 3-player games: Luce choice events for the fit.
        if np == 3 {
            let seats = seats.map(|b| b as usize);
            self.choices.add(l as usize, seats, scores);
        }
        self.count_variant(r, l, &scores[..np], reason);
        if np == 2 && grouped {
            self.count_group(l, &r.group, seats[0], seats[1], &scores);
        }
    }

    /// Per bot: games, points, pairwise results, forfeits, end reasons.
    fn count_bots(&mut self, r: &GameRow, l: u32, seats: &[u32], scores: &[f64; 3], reason: usize) {
        let acc = &mut self.labels[l as usize];
        let nb = self.bot_names.len();
        if acc.bots.len() < nb {
            acc.bots.resize(nb, BotCount::default());
            acc.bot_reasons.resize(nb, Vec::new());
        }
        let np = seats.len();
        for s in 0..np {
            let b = seats[s] as usize;
            let br = &mut acc.bot_reasons[b];
            if br.len() <= reason {
                br.resize(reason + 1, 0);
            }
            br[reason] += 1;
            let c = &mut acc.bots[b];
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
    }

    /// Pairwise evidence, oriented by seat order.
    fn count_pairwise(&mut self, l: u32, seats: &[u32], scores: &[f64; 3]) {
        let np = seats.len();
        for s in 0..np {
            for t in (s + 1)..np {
                let (a, b) = (seats[s], seats[t]);
                if a == b {
                    continue;
                }
                let res = cmp_result(scores[s], scores[t]);
                let e = self.wdl.entry((a, b, l)).or_default();
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
    }

    /// Per variant label: games, draws, first seat, lengths, reasons.
    fn count_variant(&mut self, r: &GameRow, l: u32, scores: &[f64], reason: usize) {
        let v = &mut self.labels[l as usize];
        v.games += 1;
        if scores.iter().all(|&x| (x - scores[0]).abs() < 1e-9) {
            v.draws += 1;
        }
        v.seat0_points += scores[0];
        v.plies.add(r.plies);
        v.duration += r.duration_ms as u128;
        if r.offender.is_some() {
            v.forfeits += 1;
        }
        if v.reasons.len() <= reason {
            v.reasons.resize(reason + 1, 0);
        }
        v.reasons[reason] += 1;
    }

    /// Seat-swap groups, counted as their rows arrive: two games with the
    /// seats swapped are a pair; a third game undoes it.
    fn count_group(&mut self, l: u32, group: &str, a: u32, b: u32, scores: &[f64; 3]) {
        let g = self
            .groups
            .entry(group_key(l, group))
            .or_insert(GroupState {
                a,
                b,
                score0: scores[0] as f32,
                rows: 0,
                counted: 5,
            });
        g.rows = g.rows.saturating_add(1);
        if g.rows == 3 {
            self.crowded += 1;
            if self.first_crowded.is_none() {
                self.first_crowded = Some(group.to_string());
            }
        }
        if g.rows == 2 && g.a == b && g.b == a && a != b {
            // Points of the bot seen first over the two games.
            let first = g.score0 as f64;
            let pts = if a > b {
                first + scores[1]
            } else {
                (1.0 - first) + scores[0]
            };
            let k = ((pts * 2.0).round() as usize).min(4);
            self.penta.entry((l, a.min(b), a.max(b))).or_default()[k] += 1;
            g.counted = k as u8;
        } else if g.rows == 3 && g.counted < 5 {
            // Not a pair after all: take back its count.
            let (ga, gb) = (g.a, g.b);
            if let Some(c) = self.penta.get_mut(&(l, ga.min(gb), ga.max(gb))) {
                c[g.counted as usize] -= 1;
            }
            g.counted = 5;
        }
    }

    /// Seat-swap groups (of 2-player games, by variant and group id)
    /// that hold more than two games, so that none of their games count
    /// as a pair: no league writes one; files of different leagues whose
    /// group ids collide do.
    /// How many, and the id of the first.
    pub fn crowded_groups(&self) -> (u64, Option<&str>) {
        (self.crowded, self.first_crowded.as_deref())
    }

    /// The evidence: bots (with `extra_bots`, listed without games) and
    /// labels sorted by name, counts renumbered to match.
    pub fn finish(mut self, extra_bots: &[String]) -> Evidence {
        for b in extra_bots {
            self.bot(b);
        }
        let num = self.numbering();
        let (bot_counts, variants) = self.per_label(&num);
        let entries = self.oriented(&num);
        let pairs = self.head_to_head(&entries, &num);
        let choices = self.choices.renumbered(&num.bot, &num.label).choices();
        Evidence {
            cells: two_player_cells(&entries),
            bots: num.bots,
            labels: num.labels,
            choices,
            bot_counts,
            pairs,
            variants,
        }
    }

    /// The bots and labels sorted by name, and where each first-seen
    /// index goes.
    fn numbering(&self) -> Numbering {
        let mut seen: Vec<(&str, usize)> = self
            .bot_names
            .iter()
            .enumerate()
            .map(|(i, b)| (&**b, i))
            .collect();
        seen.sort_unstable();
        let mut bot = vec![0usize; seen.len()];
        for (i, (_, old)) in seen.iter().enumerate() {
            bot[*old] = i;
        }
        let bots: Vec<String> = seen.iter().map(|(b, _)| b.to_string()).collect();
        let label_of = |v: &str, p: u8| {
            if p >= 3 {
                format!("{v}-{p}p")
            } else {
                v.to_string()
            }
        };
        let mut order: Vec<usize> = (0..self.label_keys.len()).collect();
        order.sort_by_key(|&i| label_of(&self.label_keys[i].0, self.label_keys[i].1));
        let labels: Vec<String> = order
            .iter()
            .map(|&i| label_of(&self.label_keys[i].0, self.label_keys[i].1))
            .collect();
        let mut label = vec![0usize; order.len()];
        for (i, &k) in order.iter().enumerate() {
            label[k] = i;
        }
        Numbering {
            bots,
            bot,
            labels,
            label_order: order,
            label,
        }
    }

    /// Per label in the sorted numbering: each bot's counts (`[label *
    /// nbots + bot]`, with its games by end reason) and the variant's
    /// statistics.
    fn per_label(&mut self, num: &Numbering) -> (Vec<BotCount>, Vec<VariantStats>) {
        let (nb, nl) = (num.bots.len(), num.labels.len());
        let mut bot_counts = vec![BotCount::default(); nl * nb];
        let mut variants = Vec::with_capacity(nl);
        for (&k, label) in num.label_order.iter().zip(&num.labels) {
            let acc = &mut self.labels[k];
            let l = num.label[k];
            for (b, (mut c, counts)) in acc
                .bots
                .drain(..)
                .zip(acc.bot_reasons.drain(..))
                .enumerate()
            {
                for (i, &n) in counts.iter().enumerate() {
                    if n > 0 {
                        *c.reasons
                            .entry(self.reason_names[i].to_string())
                            .or_default() += n;
                    }
                }
                bot_counts[l * nb + num.bot[b]] = c;
            }
            let players = self.label_keys[k].1;
            variants.push(acc.stats(label, players, &self.reason_names));
        }
        (bot_counts, variants)
    }

    /// The oriented evidence in the sorted numbering, sorted by (first,
    /// second, label).
    fn oriented(&self, num: &Numbering) -> Vec<((usize, usize, usize), Wdl)> {
        let mut entries: Vec<((usize, usize, usize), Wdl)> = self
            .wdl
            .iter()
            .filter(|(_, e)| e.total() > 0)
            .map(|(&(a, b, l), &e)| {
                let key = (
                    num.bot[a as usize],
                    num.bot[b as usize],
                    num.label[l as usize],
                );
                (key, e)
            })
            .collect();
        entries.sort_unstable_by_key(|(k, _)| *k);
        entries
    }

    /// Head-to-head counts by (label, a, b), a < b, from the oriented
    /// evidence, with the pentanomial counts of their seat-swap pairs.
    fn head_to_head(
        &self,
        entries: &[((usize, usize, usize), Wdl)],
        num: &Numbering,
    ) -> BTreeMap<(usize, usize, usize), PairAcc> {
        let mut pairs: BTreeMap<(usize, usize, usize), PairAcc> = BTreeMap::new();
        for &((a, b, l), e) in entries {
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
        for (&(l, lo, hi), c) in &self.penta {
            let (x, y) = (num.bot[lo as usize], num.bot[hi as usize]);
            let l = num.label[l as usize];
            // Buckets are `lo`'s points; the pair is seen from the bot
            // first by name.
            let c = if x < y {
                *c
            } else {
                [c[4], c[3], c[2], c[1], c[0]]
            };
            if let Some(p) = pairs.get_mut(&(l, x.min(y), x.max(y))) {
                p.penta = c;
            }
        }
        pairs
    }
}

/// The bots and labels of `EvidenceBuilder::finish`, sorted by name.
struct Numbering {
    bots: Vec<String>,
    /// `bot[first-seen index]` is the sorted index.
    bot: Vec<usize>,
    labels: Vec<String>,
    /// The first-seen label indices in sorted order.
    label_order: Vec<usize>,
    /// `label[first-seen index]` is the sorted index.
    label: Vec<usize>,
}

impl LabelAcc {
    /// The statistics of the variant `label` of `players` players.
    fn stats(&self, label: &str, players: u8, reason_names: &[Box<str>]) -> VariantStats {
        let mut v = VariantStats {
            variant: label.to_string(),
            players,
            games: self.games,
            draws: self.draws,
            forfeits: self.forfeits,
            reasons: self
                .reasons
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| (reason_names[i].to_string(), c))
                .collect(),
            ..Default::default()
        };
        if let Some((min, max, mean, median)) = self.plies.summary() {
            let n = self.plies.games as f64;
            v.plies_min = min;
            v.plies_max = max;
            v.plies_mean = mean;
            v.plies_median = median;
            v.first_seat_score = self.seat0_points / n;
            v.duration_ms_mean = self.duration as f64 / n;
        }
        v
    }
}

/// The fit's cells of the 2-player games (the 3-player ones are choice
/// events).
fn two_player_cells(entries: &[((usize, usize, usize), Wdl)]) -> Vec<Cell> {
    entries
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
        .collect()
}

impl Evidence {
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
            out.push(make(super::table::ALL, a, b, p, Some(overall)));
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
