//! Choice evidence of 3-player games and its likelihood terms
//! (docs/ratings.md, "3-player Tricala").
//!
//! Luce's choice model on the Elo scale: a bot of strength `u_i` (its rating,
//! plus the seat advantage `h_v` when it sits in seat 0) is chosen from a set
//! `S` with probability `p_i = 10^(u_i/400) / Σ_{j∈S} 10^(u_j/400)`. With two
//! members this is the Bradley–Terry expectation of the 2-player fit.
//!
//! How a 3-player row enters (scores are the average pairwise results):
//! - one winner and the other two seats equal (`1, 1/4, 1/4`): Tricala's
//!   winner-only result, the losers are not ranked. One event "the winner
//!   was chosen among the three", weight 1;
//! - any other result (a full ranking `1, 1/2, 0`, a tie for first above a
//!   known loser `3/4, 3/4, 0`, a three-way tie): the ranking of every pair
//!   is known. Each of the three seat pairs is one 2-member event of weight
//!   1/3 (win 1, draw 1/2 each): the pairwise decomposition, whose
//!   marginals are Bradley–Terry under Plackett–Luce.
//!
//! Counts are integers in twelfths of a game (weights 1 and 1/3, scores 0,
//! 1/2, 1 and their squares), so the evidence does not depend on the order
//! of the rows; never the rows themselves.

use super::scale::{cmp_result as compare, K};
use std::collections::BTreeMap;

/// Integer units per game: every weight, weighted score and weighted
/// squared score of a row is a whole number of twelfths.
const UNIT: u64 = 12;
/// A winner-only game: one event of weight 1.
const TRIPLE: u64 = UNIT;
/// One seat pair of a ranked game: weight 1/3.
const PAIR: u64 = UNIT / 3;

/// No member of the event sat in seat 0.
const NO_SEAT0: u8 = 3;

/// Aggregated events of one set of bots in one variant group, as the fit
/// reads them: `members[..size]` (bot indices, increasing), which of them
/// sat in seat 0, and per member the weighted wins and squared wins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    pub group: usize,
    pub members: [usize; 3],
    /// 2 or 3.
    pub size: usize,
    /// Index into `members` of the bot in seat 0, if it is one of them.
    pub seat0: Option<usize>,
    /// Total weight of the events (games, or 1/3 per seat pair).
    pub w: f64,
    /// Per member: sum of weight · its share of the win (1, or 1/2 for a
    /// drawn pair). `Σ y = w`.
    pub y: [f64; 3],
    /// Per member: sum of weight · share², for the Pearson dispersion.
    pub q: [f64; 3],
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    group: usize,
    members: [usize; 3],
    size: u8,
    seat0: u8,
}

#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    w: u64,
    y: [u64; 3],
    q: [u64; 3],
}

/// The 3-player evidence as counts: one tally per (variant group, set of
/// bots, which of them sat in seat 0).
#[derive(Clone, Debug, Default)]
pub struct ChoiceCounts {
    tallies: BTreeMap<Key, Tally>,
}

impl ChoiceCounts {
    /// Counts one 3-player game of variant group `group`: `seats` are the
    /// bots in seats 0, 1, 2 and `scores` their scores.
    pub fn add(&mut self, group: usize, seats: [usize; 3], scores: [f64; 3]) {
        let distinct = seats[0] != seats[1] && seats[1] != seats[2] && seats[0] != seats[2];
        // Seats that beat both others.
        let top: Vec<usize> = (0..3)
            .filter(|&s| {
                (0..3)
                    .filter(|&t| t != s)
                    .all(|t| compare(scores[s], scores[t]) == 0)
            })
            .collect();
        if let (&[w], true) = (&top[..], distinct) {
            if compare(scores[(w + 1) % 3], scores[(w + 2) % 3]) == 1 {
                self.event(group, &seats, &[0, 1, 2], w, TRIPLE, false);
                return;
            }
        }
        // Ranked: the three seat pairs (a bot twice in a game has no
        // result against itself; such rows are refused upstream).
        for (s, t) in [(0, 1), (0, 2), (1, 2)] {
            if seats[s] == seats[t] {
                continue;
            }
            match compare(scores[s], scores[t]) {
                0 => self.event(group, &seats, &[s, t], s, PAIR, false),
                2 => self.event(group, &seats, &[s, t], t, PAIR, false),
                _ => self.event(group, &seats, &[s, t], s, PAIR, true),
            }
        }
    }

    /// One event among the bots of seats `set`, won by seat `winner` (or
    /// drawn among all of them when `draw`), of weight `weight` twelfths.
    fn event(
        &mut self,
        group: usize,
        seats: &[usize; 3],
        set: &[usize],
        winner: usize,
        weight: u64,
        draw: bool,
    ) {
        let mut order: Vec<usize> = set.to_vec();
        order.sort_by_key(|&s| seats[s]);
        let mut key = Key {
            group,
            members: [usize::MAX; 3],
            size: order.len() as u8,
            seat0: NO_SEAT0,
        };
        for (k, &s) in order.iter().enumerate() {
            key.members[k] = seats[s];
            if s == 0 {
                key.seat0 = k as u8;
            }
        }
        let t = self.tallies.entry(key).or_default();
        t.w += weight;
        let n = order.len() as u64;
        for (k, &s) in order.iter().enumerate() {
            if draw {
                // Shares 1/n: weight/n and weight/n² (exact for n = 2 and
                // weight 1/3: 2 and 1 twelfths).
                t.y[k] += weight / n;
                t.q[k] += weight / (n * n);
            } else if s == winner {
                t.y[k] += weight;
                t.q[k] += weight;
            }
        }
    }

    /// The same counts with bots and groups renumbered (`bots[old]`,
    /// `groups[old]`: the streaming counter numbers them as they first
    /// appear, the fit by name): members re-sorted, seat 0 and the tallies
    /// moved with them.
    pub fn renumbered(&self, bots: &[usize], groups: &[usize]) -> ChoiceCounts {
        let mut out = ChoiceCounts::default();
        for (k, t) in &self.tallies {
            let mut order: Vec<usize> = (0..k.size as usize).collect();
            order.sort_by_key(|&i| bots[k.members[i]]);
            let mut key = Key {
                group: groups[k.group],
                members: [usize::MAX; 3],
                size: k.size,
                seat0: NO_SEAT0,
            };
            let mut moved = Tally {
                w: t.w,
                ..Tally::default()
            };
            for (new, &old) in order.iter().enumerate() {
                key.members[new] = bots[k.members[old]];
                if k.seat0 == old as u8 {
                    key.seat0 = new as u8;
                }
                moved.y[new] = t.y[old];
                moved.q[new] = t.q[old];
            }
            let e = out.tallies.entry(key).or_default();
            e.w += moved.w;
            for i in 0..3 {
                e.y[i] += moved.y[i];
                e.q[i] += moved.q[i];
            }
        }
        out
    }

    /// The events as the fit reads them, sorted by (group, members, seat).
    pub fn choices(&self) -> Vec<Choice> {
        let unit = UNIT as f64;
        self.tallies
            .iter()
            .map(|(k, t)| Choice {
                group: k.group,
                members: k.members,
                size: k.size as usize,
                seat0: (k.seat0 != NO_SEAT0).then_some(k.seat0 as usize),
                w: t.w as f64 / unit,
                y: t.y.map(|v| v as f64 / unit),
                q: t.q.map(|v| v as f64 / unit),
            })
            .collect()
    }
}

/// Without seat advantage, seats and variants do not enter the model:
/// merges the events of each set of bots (fewer terms, same likelihood).
pub fn collapse(choices: Vec<Choice>) -> Vec<Choice> {
    let mut m: BTreeMap<(usize, [usize; 3]), Choice> = BTreeMap::new();
    for c in choices {
        let e = m.entry((c.size, c.members)).or_insert(Choice {
            group: 0,
            seat0: None,
            w: 0.0,
            y: [0.0; 3],
            q: [0.0; 3],
            ..c
        });
        e.w += c.w;
        for k in 0..3 {
            e.y[k] += c.y[k];
            e.q[k] += c.q[k];
        }
    }
    m.into_values().collect()
}

/// Luce probabilities of the first `n` strengths `u` (Elo): the softmax of
/// `K·u`.
pub fn probabilities(u: &[f64; 3], n: usize) -> [f64; 3] {
    let top = u[..n].iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let mut p = [0.0; 3];
    let mut sum = 0.0;
    for i in 0..n {
        p[i] = (K * (u[i] - top)).exp();
        sum += p[i];
    }
    p.iter_mut().for_each(|v| *v /= sum);
    p
}

impl Choice {
    /// Negative log-likelihood `-Σ_i y_i ln p_i` at strengths `u`.
    pub fn neg_log_likelihood(&self, u: &[f64; 3]) -> f64 {
        let n = self.size;
        let top = u[..n].iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let lse = u[..n]
            .iter()
            .map(|&v| (K * (v - top)).exp())
            .sum::<f64>()
            .ln()
            + K * top;
        (0..n).map(|i| -self.y[i] * (K * u[i] - lse)).sum()
    }

    /// Gradient and Hessian of `neg_log_likelihood` in `u`:
    /// `-K (y_i - w p_i)` and `K² w (diag p - p pᵀ)`.
    pub fn derivatives(&self, u: &[f64; 3]) -> ([f64; 3], [[f64; 3]; 3]) {
        let n = self.size;
        let p = probabilities(u, n);
        let mut g = [0.0; 3];
        let mut h = [[0.0; 3]; 3];
        for i in 0..n {
            g[i] = -K * (self.y[i] - self.w * p[i]);
            for j in 0..n {
                let d = if i == j { p[i] } else { 0.0 };
                h[i][j] = K * K * self.w * (d - p[i] * p[j]);
            }
        }
        (g, h)
    }

    /// Pearson X² of the events at `u`: `Σ_i Σ_events weight (s_i - p_i)² / p_i`;
    /// its expectation is `(size - 1)` per unit of weight.
    pub fn pearson(&self, u: &[f64; 3]) -> f64 {
        let p = probabilities(u, self.size);
        (0..self.size)
            .filter(|&i| p[i] > 1e-12)
            .map(|i| (self.q[i] - 2.0 * p[i] * self.y[i] + p[i] * p[i] * self.w) / p[i])
            .sum()
    }

    /// Degrees of freedom of the events: `(size - 1)` per unit of weight.
    pub fn dof(&self) -> f64 {
        self.w * (self.size as f64 - 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streaming counter numbers bots as they first appear: counts
    /// renumbered afterwards equal counts taken in the final numbering.
    #[test]
    fn renumbering_equals_counting_in_the_final_numbering() {
        let games: [([usize; 3], [f64; 3]); 4] = [
            ([0, 1, 2], [0.25, 1.0, 0.25]),
            ([2, 0, 1], [1.0, 0.25, 0.25]),
            ([1, 2, 0], [1.0, 0.5, 0.0]),
            ([0, 2, 1], [0.75, 0.0, 0.75]),
        ];
        let bots = [2, 0, 1];
        let groups = [1, 0];
        let (mut first_seen, mut direct) = (ChoiceCounts::default(), ChoiceCounts::default());
        for (i, (seats, scores)) in games.iter().enumerate() {
            first_seen.add(i % 2, *seats, *scores);
            direct.add(groups[i % 2], seats.map(|b| bots[b]), *scores);
        }
        assert_eq!(
            first_seen.renumbered(&bots, &groups).choices(),
            direct.choices()
        );
    }

    #[test]
    fn winner_only_is_one_triple_event_and_a_ranking_three_pairs() {
        let mut c = ChoiceCounts::default();
        c.add(0, [5, 2, 7], [0.25, 1.0, 0.25]);
        c.add(0, [5, 2, 7], [1.0, 0.5, 0.0]);
        c.add(0, [5, 2, 7], [0.5, 0.5, 0.5]);
        let ch = c.choices();
        let triple: Vec<_> = ch.iter().filter(|c| c.size == 3).collect();
        assert_eq!(triple.len(), 1);
        let t = triple[0];
        assert_eq!(t.members, [2, 5, 7]);
        assert_eq!(t.seat0, Some(1));
        assert_eq!((t.w, t.y, t.q), (1.0, [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]));
        // Pairs: (2,5) seat0 = 5: a loss of 5 and a draw -> w 2/3.
        let p = ch
            .iter()
            .find(|c| c.size == 2 && c.members[..2] == [2, 5])
            .unwrap();
        assert_eq!(p.seat0, Some(1));
        assert!((p.w - 2.0 / 3.0).abs() < 1e-12);
        assert!((p.y[0] - 1.0 / 6.0).abs() < 1e-12);
        assert!((p.y[1] - 1.0 / 2.0).abs() < 1e-12);
        assert!((p.q[1] - (1.0 / 3.0 + 1.0 / 12.0)).abs() < 1e-12);
        // Every game weighs 1 in total.
        assert!((ch.iter().map(|c| c.w).sum::<f64>() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn two_members_are_bradley_terry() {
        let c = Choice {
            group: 0,
            members: [0, 1, usize::MAX],
            size: 2,
            seat0: None,
            w: 1.0,
            y: [1.0, 0.0, 0.0],
            q: [1.0, 0.0, 0.0],
        };
        let p = probabilities(&[100.0, 0.0, 0.0], 2);
        assert!((p[0] - 1.0 / (1.0 + 10f64.powf(-0.25))).abs() < 1e-12);
        let nll = c.neg_log_likelihood(&[100.0, 0.0, 0.0]);
        assert!((nll + p[0].ln()).abs() < 1e-12);
    }

    #[test]
    fn derivatives_match_finite_differences() {
        let c = Choice {
            group: 0,
            members: [0, 1, 2],
            size: 3,
            seat0: Some(0),
            w: 5.0,
            y: [3.0, 1.5, 0.5],
            q: [3.0, 1.0, 0.5],
        };
        let u = [120.0, -30.0, 10.0];
        let (g, h) = c.derivatives(&u);
        let e = 1e-3;
        for i in 0..3 {
            let (mut a, mut b) = (u, u);
            a[i] += e;
            b[i] -= e;
            let fd = (c.neg_log_likelihood(&a) - c.neg_log_likelihood(&b)) / (2.0 * e);
            assert!((fd - g[i]).abs() < 1e-8, "g{i}");
            let (ga, gb) = (c.derivatives(&a).0, c.derivatives(&b).0);
            for j in 0..3 {
                let fd = (ga[j] - gb[j]) / (2.0 * e);
                assert!((fd - h[i][j]).abs() < 1e-9, "h{i}{j}");
            }
        }
    }
}
