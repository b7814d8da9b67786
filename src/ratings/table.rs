//! One table of ratings ([`Standings`]) and the words every part of the
//! ratings shares: the `all` label, the confidence level and its z value,
//! a row's variant label.

use crate::results::GameRow;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};
use std::collections::BTreeMap;

/// The label of the `variant`/`all` column for every variant together.
pub const ALL: &str = crate::results::ALL_LABEL;

/// Two-sided confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// How the rating intervals take the variance of the results
/// (docs/ratings.md, "Intervals" and "Extreme tables").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// The default: each bot's variance is the larger of the one from φ
    /// and its robust (sandwich, Huber–White) one, with the correlations
    /// of the former (`the_larger_per_bot`).
    #[default]
    Robust,
    /// The observed information times one quasi-likelihood dispersion φ
    /// per table, everywhere (the only method until 2026-11).
    Dispersion,
}

/// Why a rating needs a second look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// Nothing special: a plain maximum-likelihood rating.
    None,
    /// No games: no rating.
    Unrated,
    /// Won every rated result: its rating is a floor, placed as if one of
    /// its games had been a draw (the rule of Ordo's manual).
    AllWins,
    /// Lost every rated result: a ceiling, placed the same way.
    AllLosses,
    /// Not perfect, but its whole group of bots won (or lost) every result
    /// against the rest, so its distance to the rest rests on the same
    /// half-point rule.
    Prior,
    /// Never met the reference group of bots (the anchor's, else the
    /// largest), even through others: its rating
    /// cannot be compared with theirs (each such group is centred on its
    /// own; LOS across groups is empty).
    Disconnected,
}

impl Flag {
    pub fn as_str(&self) -> &'static str {
        match self {
            Flag::None => "",
            Flag::Unrated => "unrated",
            Flag::AllWins => "all_wins",
            Flag::AllLosses => "all_losses",
            Flag::Prior => "prior",
            Flag::Disconnected => "disconnected",
        }
    }
}

/// One bot in one standings table.
#[derive(Clone, Debug, Serialize)]
pub struct BotRating {
    pub bot: String,
    pub rated: bool,
    /// Elo, anchored (0 for an unrated bot; see `rated`).
    pub elo: f64,
    pub elo_low: f64,
    pub elo_high: f64,
    /// Standard error of `elo` (relative to the anchor).
    pub elo_se: f64,
    /// The quasi-likelihood standard error (Fisher information times the
    /// table's dispersion φ). `elo_se` is the larger of this and the bot's
    /// robust (sandwich) one when the table's `intervals` is `robust`.
    pub elo_se_dispersion: f64,
    pub flag: Flag,
    /// Group of bots that met, directly or through others (0: the largest).
    /// Ratings in different groups cannot be compared.
    pub group: usize,
    #[serde(flatten)]
    pub count: BotCount,
}

/// Ratings over one set of games: every variant (`all`) or one label.
#[derive(Clone, Debug, Serialize)]
pub struct Standings {
    pub variant: String,
    /// How the scale is fixed, in words (`average = 0`, `alice = 1500`).
    pub anchor: String,
    /// True when the maximum-likelihood ratings do not exist (someone won
    /// or lost everything against a group) and the half-point rule placed
    /// the groups (see `Flag`).
    pub regularized: bool,
    /// Groups of bots that never met, even through others (1 normally).
    pub groups: usize,
    /// Quasi-likelihood dispersion φ of the table.
    pub dispersion: f64,
    /// How the intervals were taken: `dispersion` (the Fisher intervals
    /// times φ) or `robust` (per-bot sandwich variances; docs/ratings.md,
    /// "Extreme tables").
    pub intervals: IntervalMethod,
    /// Newton iterations the fit took.
    pub iterations: usize,
    /// Sorted by Elo, best first; unrated bots last.
    pub ratings: Vec<BotRating>,
    /// Seat advantage per variant label: (label, elo, low, high).
    pub seat_advantage: Vec<(String, f64, f64, f64)>,
    /// Variant labels where the first seat scored (nearly) everything or
    /// nothing, with its score: the seat advantage has no finite estimate
    /// there, and the variant was rated without one.
    pub seat_unbounded: Vec<(String, f64)>,
    #[serde(skip)]
    pub(super) cov: Vec<f64>,
    #[serde(skip)]
    pub(super) index: BTreeMap<String, usize>,
}

impl Standings {
    /// The rating of `bot`, if listed.
    pub fn get(&self, bot: &str) -> Option<&BotRating> {
        self.index.get(bot).map(|&i| &self.ratings[i])
    }

    /// Likelihood of superiority: the probability that `a` is stronger than
    /// `b` given the data, `Phi((elo_a - elo_b) / se(elo_a - elo_b))`.
    /// `None` when either is unrated or unknown, or they are in groups of
    /// bots that never met (`group` differs).
    pub fn los(&self, a: &str, b: &str) -> Option<f64> {
        let (&i, &j) = (self.index.get(a)?, self.index.get(b)?);
        let (ra, rb) = (&self.ratings[i], &self.ratings[j]);
        if !ra.rated || !rb.rated || ra.group != rb.group {
            return None;
        }
        let n = self.ratings.len();
        let var = self.cov[i * n + i] + self.cov[j * n + j] - 2.0 * self.cov[i * n + j];
        let diff = ra.elo - rb.elo;
        if var <= 1e-18 {
            return Some(if diff > 0.0 {
                1.0
            } else if diff < 0.0 {
                0.0
            } else {
                0.5
            });
        }
        Some(std_normal().cdf(diff / var.sqrt()))
    }

    /// LOS of every rated bot over every other, in standings order.
    pub fn los_matrix(&self) -> Vec<(String, Vec<Option<f64>>)> {
        self.ratings
            .iter()
            .map(|a| {
                let row = self
                    .ratings
                    .iter()
                    .map(|b| self.los(&a.bot, &b.bot))
                    .collect();
                (a.bot.clone(), row)
            })
            .collect()
    }
}

pub(super) fn std_normal() -> Normal {
    // Mean 0, sd 1 is always valid.
    Normal::standard()
}

/// The z value of the two-sided `CONFIDENCE` interval (1.95996...).
pub fn z_value() -> f64 {
    std_normal().inverse_cdf(0.5 + CONFIDENCE / 2.0)
}

/// The label under which a row is counted: the variant, with `-3p` appended
/// for 3-player games (3-player Tricala is a different game for ratings and
/// seat advantage).
pub fn variant_label(row: &GameRow) -> String {
    if row.players >= 3 {
        format!("{}-{}p", row.variant, row.players)
    } else {
        row.variant.clone()
    }
}

/// Whether `row` passes the `--variant` filter.
pub fn matches_variant(row: &GameRow, filter: &str) -> bool {
    row.variant == filter || variant_label(row) == filter
}

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

    pub(super) fn add(&mut self, o: &BotCount) {
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
