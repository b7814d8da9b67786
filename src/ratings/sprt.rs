//! Sequential probability ratio test (SPRT) of "is bot A stronger than bot
//! B?" on pentanomial seat-swap pairs, as fastchess computes it: the
//! generalised SPRT (GSPRT) of Michel Van den Bergh, with the "normalized"
//! (nElo) and "logistic" (Elo) models. docs/ratings.md, "SPRT", has the
//! formula, what is counted, and the measured error rates.
//!
//! Pure, like the rest of `ratings`: rows or counts in, numbers out; no
//! files, no processes, no clock.
//!
//! The port follows fastchess `app/src/matchmaking/sprt/sprt.cpp`
//! (namespace `fastchess`, the version with `getLLR_logistic` /
//! `getLLR_normalized` and the ITP root finder): `SPRT::getLLR` for
//! pentanomial counts, `regularize`, `itp`, `getLLR_logistic`,
//! `getLLR_normalized`, `getResult`. The maximum-likelihood distributions
//! under each hypothesis are those of M. Van den Bergh, "Comments on
//! Normalized Elo" (proposition 1.1 for the logistic model, section 4.1 for
//! the normalized one); the root in theta is found by the ITP method of
//! I. F. D. Oliveira and R. H. C. Takahashi, "An Enhancement of the
//! Bisection Method Average Performance Preserving Minmax Optimality",
//! ACM TOMS 47(1), 2021.
//!
//! Ours, beyond fastchess: in the normalized model, a theta that gives no
//! distribution (which happens only with tiny regularised buckets, and
//! makes fastchess's iteration diverge to NaN) is found again exactly by
//! bisection (`theta_checked`); the loops have iteration caps fastchess
//! does not have; |elo0|, |elo1| <= 200. On ordinary counts none of this
//! triggers and the LLR is fastchess's.

use super::stats::penta_elo;
use super::stats::EvidenceBuilder;
use super::table::z_value;
use crate::results::GameRow;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};
use std::fmt;
use std::str::FromStr;

/// The Elo scale of the normalized model: `800 / ln 10` (fastchess).
const NELO_SCALE: f64 = 800.0 / std::f64::consts::LN_10;

/// The pair scores of the pentanomial buckets `[LL, LD, WL+DD, WD, WW]`.
const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// `alpha` and `beta` when a specification leaves them out.
pub const DEFAULT_ERROR_RATE: f64 = 0.05;

/// What `elo0` and `elo1` measure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// Normalized Elo (nElo, fishtest and fastchess's default): the score
    /// difference in units of its own standard deviation, so the bounds
    /// mean the same effort whatever the draw rate.
    #[default]
    Normalized,
    /// Logistic Elo: the expected pair score is `1 / (1 + 10^(-elo/400))`.
    Logistic,
}

impl Model {
    pub fn as_str(self) -> &'static str {
        match self {
            Model::Normalized => "normalized",
            Model::Logistic => "logistic",
        }
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Model {
    type Err = SprtError;
    fn from_str(s: &str) -> Result<Model, SprtError> {
        match s.trim() {
            "normalized" => Ok(Model::Normalized),
            "logistic" => Ok(Model::Logistic),
            other => Err(SprtError::BadModel(other.to_string())),
        }
    }
}

/// The bots of the 2-player games, for a message: "the bots are: A, B",
/// or that there are none (only 3-player games).
fn bots_here(bots: &[String]) -> String {
    match bots.is_empty() {
        true => {
            "there are none (no 2-player game at all: an SPRT compares two bots' 2-player games)"
                .to_string()
        }
        false => format!("the bots are: {}", bots.join(", ")),
    }
}

/// Errors of the SPRT: a bad specification, or bots that cannot be tested.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SprtError {
    #[error("`{0}` is not KEY=VALUE (an SPRT is elo0=E0,elo1=E1[,alpha=A,beta=B,model=normalized|logistic])")]
    NotKeyValue(String),
    #[error("unknown SPRT key `{0}` (the keys are elo0, elo1, alpha, beta, model)")]
    UnknownKey(String),
    #[error("SPRT key `{0}` is given twice")]
    RepeatedKey(String),
    #[error("the SPRT needs `{0}` (elo0=E0,elo1=E1[,alpha=A,beta=B,model=normalized|logistic])")]
    MissingKey(&'static str),
    #[error("SPRT {key}=`{value}` is not a finite number")]
    BadNumber { key: String, value: String },
    #[error("SPRT model `{0}` is not a model: normalized or logistic")]
    BadModel(String),
    #[error("SPRT elo0 must be less than elo1, got elo0={} and elo1={}", shown(*.elo0), shown(*.elo1))]
    EloOrder { elo0: f64, elo1: f64 },
    #[error("SPRT {key} must be within [-{MAX_ELO}, {MAX_ELO}], got {}", shown(*.value))]
    EloRange { key: &'static str, value: f64 },
    #[error("SPRT {key} must be between 0 and 0.5 (both excluded), got {}", shown(*.value))]
    ErrorRate { key: &'static str, value: f64 },
    #[error("an SPRT compares two different bots, got `{0}` twice")]
    SameBot(String),
    #[error("no 2-player games between two different bots: nothing to test")]
    NoPair,
    #[error("bot `{bot}` has no 2-player games here; {}", bots_here(.bots))]
    UnknownBot { bot: String, bots: Vec<String> },
    #[error("{} bots have 2-player games here ({}): name the two to test", .bots.len(), .bots.join(", "))]
    NeedPair { bots: Vec<String> },
}

/// A number as a message shows it: as written for the usual ones, in
/// exponent form when huge or tiny (`-1e308`, not 309 digits).
pub fn shown(v: f64) -> String {
    match v.abs() {
        a if a >= 1e9 || (a > 0.0 && a < 1e-6) => format!("{v:e}"),
        _ => v.to_string(),
    }
}

/// The largest |elo0|, |elo1| accepted: far beyond any sensible test (a
/// test is about a few Elo), and within the range where the normalized
/// model's equations have a solution for any counts (beyond about 250 nElo
/// they have none for some).
pub const MAX_ELO: f64 = 200.0;

/// The test: H0 "A is `elo0` stronger than B" against H1 "A is `elo1`
/// stronger", with error rates `alpha` (accepting H1 when H0 holds) and
/// `beta` (accepting H0 when H1 holds).
///
/// Parsed from `elo0=E0,elo1=E1[,alpha=A,beta=B,model=normalized|logistic]`
/// (`FromStr`, for `--sprt`) or read from a TOML/JSON table with the same
/// keys (serde; unknown keys are refused). `alpha` and `beta` default to
/// 0.05 and `model` to `normalized`, as in fastchess.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawConfig")]
pub struct SprtConfig {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: Model,
}

/// The keys of a `[sprt]` table before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    elo0: f64,
    elo1: f64,
    #[serde(default = "default_error_rate")]
    alpha: f64,
    #[serde(default = "default_error_rate")]
    beta: f64,
    #[serde(default)]
    model: Model,
}

fn default_error_rate() -> f64 {
    DEFAULT_ERROR_RATE
}

impl TryFrom<RawConfig> for SprtConfig {
    type Error = SprtError;
    fn try_from(r: RawConfig) -> Result<SprtConfig, SprtError> {
        SprtConfig::new(r.elo0, r.elo1, r.alpha, r.beta, r.model)
    }
}

impl SprtConfig {
    /// A validated test: finite `elo0 < elo1` within ±`MAX_ELO`, and
    /// `0 < alpha, beta < 0.5`.
    pub fn new(
        elo0: f64,
        elo1: f64,
        alpha: f64,
        beta: f64,
        model: Model,
    ) -> Result<SprtConfig, SprtError> {
        for (key, value) in [("elo0", elo0), ("elo1", elo1)] {
            if !value.is_finite() {
                return Err(SprtError::BadNumber {
                    key: key.to_string(),
                    value: value.to_string(),
                });
            }
            if value.abs() > MAX_ELO {
                return Err(SprtError::EloRange { key, value });
            }
        }
        if elo0 >= elo1 {
            return Err(SprtError::EloOrder { elo0, elo1 });
        }
        for (key, value) in [("alpha", alpha), ("beta", beta)] {
            // NaN fails the comparison too.
            if !(value > 0.0 && value < 0.5) {
                return Err(SprtError::ErrorRate { key, value });
            }
        }
        Ok(SprtConfig {
            elo0,
            elo1,
            alpha,
            beta,
            model,
        })
    }

    /// `(lower, upper)`: `ln(beta / (1 - alpha))` and `ln((1 - beta) / alpha)`.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The decision at log-likelihood ratio `llr` (fastchess `getResult`).
    pub fn decide(&self, llr: f64) -> Decision {
        let (lower, upper) = self.bounds();
        if llr >= upper {
            Decision::AcceptH1
        } else if llr <= lower {
            Decision::AcceptH0
        } else {
            Decision::Continue
        }
    }

    /// The log-likelihood ratio of H1 over H0 given pentanomial counts
    /// `[LL, LD, WL+DD, WD, WW]` seen from bot A (fastchess
    /// `SPRT::getLLR` for pentanomial counts). Always finite.
    pub fn llr(&self, penta: &[u64; 5]) -> f64 {
        let llr = self.llr_unguarded(penta);
        // Never NaN within MAX_ELO (tested); a NaN must never decide.
        if llr.is_finite() {
            llr
        } else {
            0.0
        }
    }

    fn llr_unguarded(&self, penta: &[u64; 5]) -> f64 {
        // fastchess `regularize`: an empty bucket counts 1e-3.
        let counts = penta.map(|c| if c == 0 { 1e-3 } else { c as f64 });
        let total: f64 = counts.iter().sum();
        let probs = counts.map(|c| c / total);
        match self.model {
            Model::Normalized => {
                let t0 = std::f64::consts::SQRT_2 * self.elo0 / NELO_SCALE;
                let t1 = std::f64::consts::SQRT_2 * self.elo1 / NELO_SCALE;
                llr_normalized(total, &probs, t0, t1)
            }
            Model::Logistic => llr_logistic(
                total,
                &probs,
                score_of_elo(self.elo0),
                score_of_elo(self.elo1),
            ),
        }
    }
}

impl fmt::Display for SprtConfig {
    /// The `--sprt` form, which `FromStr` reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "elo0={},elo1={},alpha={},beta={},model={}",
            self.elo0, self.elo1, self.alpha, self.beta, self.model
        )
    }
}

impl FromStr for SprtConfig {
    type Err = SprtError;

    /// `elo0=E0,elo1=E1[,alpha=A,beta=B,model=normalized|logistic]`, keys in
    /// any order, spaces around items allowed.
    fn from_str(s: &str) -> Result<SprtConfig, SprtError> {
        let mut elo0 = None;
        let mut elo1 = None;
        let mut alpha = None;
        let mut beta = None;
        let mut model = None;
        for item in s.split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(SprtError::NotKeyValue(item.to_string()));
            };
            let (key, value) = (key.trim(), value.trim());
            let number = || -> Result<Option<f64>, SprtError> {
                match value.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(Some(v)),
                    _ => Err(SprtError::BadNumber {
                        key: key.to_string(),
                        value: value.to_string(),
                    }),
                }
            };
            let repeated = |set: bool| {
                if set {
                    Err(SprtError::RepeatedKey(key.to_string()))
                } else {
                    Ok(())
                }
            };
            match key {
                "elo0" => {
                    repeated(elo0.is_some())?;
                    elo0 = number()?;
                }
                "elo1" => {
                    repeated(elo1.is_some())?;
                    elo1 = number()?;
                }
                "alpha" => {
                    repeated(alpha.is_some())?;
                    alpha = number()?;
                }
                "beta" => {
                    repeated(beta.is_some())?;
                    beta = number()?;
                }
                "model" => {
                    repeated(model.is_some())?;
                    model = Some(value.parse::<Model>()?);
                }
                other => return Err(SprtError::UnknownKey(other.to_string())),
            }
        }
        SprtConfig::new(
            elo0.ok_or(SprtError::MissingKey("elo0"))?,
            elo1.ok_or(SprtError::MissingKey("elo1"))?,
            alpha.unwrap_or(DEFAULT_ERROR_RATE),
            beta.unwrap_or(DEFAULT_ERROR_RATE),
            model.unwrap_or_default(),
        )
    }
}

/// Where the test stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The LLR is between the bounds: play on.
    Continue,
    /// The LLR reached the lower bound: A is not `elo1` stronger (H0).
    AcceptH0,
    /// The LLR reached the upper bound: A is `elo1` stronger (H1).
    AcceptH1,
}

impl Decision {
    /// Whether the test is over.
    pub fn is_final(self) -> bool {
        self != Decision::Continue
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decision::Continue => "continue (no decision yet)",
            Decision::AcceptH0 => "H0 accepted",
            Decision::AcceptH1 => "H1 accepted",
        })
    }
}

/// The counts of one variant (or of all variants pooled).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SprtCounts {
    /// The variant, or `all` for the pooled counts.
    pub variant: String,
    /// Complete seat-swap pairs from A's side: `[LL, LD, WL+DD, WD, WW]`.
    pub penta: [u64; 5],
    /// Every 2-player game of A against B, in complete pairs or not.
    pub games: u64,
    /// A's wins, draws and losses in those games.
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl SprtCounts {
    /// Complete seat-swap pairs.
    pub fn pairs(&self) -> u64 {
        self.penta.iter().sum()
    }

    /// Games in complete seat-swap pairs: the games the LLR counts.
    pub fn games_counted(&self) -> u64 {
        2 * self.pairs()
    }

    fn add(&mut self, o: &SprtCounts) {
        for (a, b) in self.penta.iter_mut().zip(o.penta) {
            *a += b;
        }
        self.games += o.games;
        self.wins += o.wins;
        self.draws += o.draws;
        self.losses += o.losses;
    }
}

/// What the games of two bots against each other say: A's counts and the
/// pentanomial estimates, as cutechess and fastchess print them at the end
/// of a match (and the SPRT's counts).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeadToHead {
    /// The bot whose side the counts are from, and its opponent.
    pub bot_a: String,
    pub bot_b: String,
    /// Pooled over every variant (`variant` = `all`); the LLR's counts.
    pub total: SprtCounts,
    /// One entry per variant where A met B, sorted by name.
    pub per_variant: Vec<SprtCounts>,
    /// Pentanomial Elo of A over B and its 95% half-width (fastchess
    /// `EloPentanomial`; `None` without pairs, at 0% or 100%, when every
    /// pair scored the same, or when the interval leaves (0, 1)).
    pub elo: Option<f64>,
    pub elo_err: Option<f64>,
    /// Normalized Elo and its 95% half-width (fastchess `nElo`); `None`
    /// without pairs or when every pair scored the same.
    pub nelo: Option<f64>,
    pub nelo_err: Option<f64>,
    /// Likelihood of superiority of A, in [0, 1] (fastchess `los`).
    pub los: Option<f64>,
    /// 3-player rows, ignored (a pentanomial needs two players).
    pub three_player_rows: u64,
    /// 2-player rows of other pairings (or of a bot against itself), ignored.
    pub other_rows: u64,
}

/// The state of an SPRT on a set of results: the head-to-head counts, the
/// LLR and the decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SprtReport {
    pub config: SprtConfig,
    /// Log-likelihood ratio of H1 over H0, and the bounds it is held to.
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    pub decision: Decision,
    /// The counts the LLR is computed from (A is the bot under test, H1:
    /// it is `elo1` stronger than B).
    #[serde(flatten)]
    pub pair: HeadToHead,
}

/// Two bots that can be tested against each other, `(A, B)`.
///
/// `wanted` names them (A first); without it the rows must hold exactly
/// two bots in 2-player games, and A is the first of them by name (so the
/// choice does not depend on the order of the rows).
pub fn pick_pair(
    rows: &[GameRow],
    wanted: Option<(&str, &str)>,
) -> Result<(String, String), SprtError> {
    let bots: Vec<&str> = rows
        .iter()
        .filter(|r| r.players == 2)
        .flat_map(|r| [r.seat0.as_str(), r.seat1.as_str()])
        .collect();
    pick_pair_among(bots, wanted)
}

/// [`pick_pair`] among the bots of the 2-player rows, `bots` (in any
/// order, repeated or not): for a reader that streams the rows.
pub fn pick_pair_among(
    mut bots: Vec<&str>,
    wanted: Option<(&str, &str)>,
) -> Result<(String, String), SprtError> {
    bots.sort_unstable();
    bots.dedup();
    let owned = || bots.iter().map(|b| b.to_string()).collect::<Vec<_>>();
    match wanted {
        Some((a, b)) => {
            if a == b {
                return Err(SprtError::SameBot(a.to_string()));
            }
            for bot in [a, b] {
                if bots.binary_search(&bot).is_err() {
                    return Err(SprtError::UnknownBot {
                        bot: bot.to_string(),
                        bots: owned(),
                    });
                }
            }
            Ok((a.to_string(), b.to_string()))
        }
        None => match bots.as_slice() {
            [a, b] => Ok((a.to_string(), b.to_string())),
            [] | [_] => Err(SprtError::NoPair),
            _ => Err(SprtError::NeedPair { bots: owned() }),
        },
    }
}

/// The SPRT of `bot_a` against `bot_b` on `rows`: the LLR of their
/// [`head_to_head`] counts pooled over all variants.
pub fn evaluate(
    rows: &[GameRow],
    bot_a: &str,
    bot_b: &str,
    config: &SprtConfig,
) -> Result<SprtReport, SprtError> {
    Ok(report_of(head_to_head(rows, bot_a, bot_b)?, config))
}

/// The SPRT of the counts `pair` ([`evaluate`] of rows counted apart).
pub fn report_of(pair: HeadToHead, config: &SprtConfig) -> SprtReport {
    let llr = config.llr(&pair.total.penta);
    let (lower, upper) = config.bounds();
    SprtReport {
        config: *config,
        llr,
        lower,
        upper,
        decision: config.decide(llr),
        pair,
    }
}

/// The games of `bot_a` against `bot_b` in `rows`, from A's side.
///
/// Counted: the 2-player rows of the two bots (either seat order); their
/// seat-swap groups (`group`: two games of one pairing and opening, seats
/// swapped) give one pentanomial pair each when complete, seen from A, per
/// variant and pooled over all variants (the SPRT's counts). Incomplete
/// groups (a game still missing, or a group with more rows) count in the
/// games and W/D/L but not in the pairs. 3-player rows and other pairings
/// are ignored and counted. The grouping is the one of `pairs.csv`
/// (`stats::Evidence`). Bots without games give empty counts.
///
/// Cost: one pass over `rows`.
pub fn head_to_head(rows: &[GameRow], bot_a: &str, bot_b: &str) -> Result<HeadToHead, SprtError> {
    let mut h = HeadToHeadBuilder::new(bot_a, bot_b)?;
    for r in rows {
        h.add(r);
    }
    Ok(h.finish())
}

/// [`head_to_head`] counted a row at a time (a reader that streams the
/// rows holds the counts, not the rows).
pub struct HeadToHeadBuilder {
    bot_a: String,
    bot_b: String,
    ev: EvidenceBuilder,
    three_player_rows: u64,
    other_rows: u64,
}

impl HeadToHeadBuilder {
    pub fn new(bot_a: &str, bot_b: &str) -> Result<Self, SprtError> {
        if bot_a == bot_b {
            return Err(SprtError::SameBot(bot_a.to_string()));
        }
        Ok(HeadToHeadBuilder {
            bot_a: bot_a.to_string(),
            bot_b: bot_b.to_string(),
            ev: EvidenceBuilder::new(),
            three_player_rows: 0,
            other_rows: 0,
        })
    }

    /// Counts one row: the two bots' 2-player games; the others counted
    /// as left out.
    pub fn add(&mut self, r: &GameRow) {
        let (a, b) = (self.bot_a.as_str(), self.bot_b.as_str());
        if r.players != 2 {
            self.three_player_rows += 1;
        } else if (r.seat0 == a && r.seat1 == b) || (r.seat0 == b && r.seat1 == a) {
            self.ev.add(r);
        } else {
            self.other_rows += 1;
        }
    }

    pub fn finish(self) -> HeadToHead {
        let HeadToHeadBuilder {
            bot_a,
            bot_b,
            ev,
            three_player_rows,
            other_rows,
        } = self;
        let (bot_a, bot_b) = (bot_a.as_str(), bot_b.as_str());
        let names = [bot_a.to_string(), bot_b.to_string()];
        let ev = ev.finish(&names);
        // `ev.bots` is the two names sorted: the counts are from the first's
        // side, turned around when A is the second.
        let a_first = ev.bots.first().is_some_and(|b| b == bot_a);
        let mut per_variant: Vec<SprtCounts> = ev
            .head_to_head(0, 1)
            .into_iter()
            .map(|(l, [w, d, lo], mut penta)| {
                let (wins, losses) = if a_first { (w, lo) } else { (lo, w) };
                if !a_first {
                    penta.reverse();
                }
                SprtCounts {
                    variant: ev.labels[l].clone(),
                    penta,
                    games: w + d + lo,
                    wins,
                    draws: d,
                    losses,
                }
            })
            .collect();
        per_variant.sort_by(|x, y| x.variant.cmp(&y.variant));
        let mut total = SprtCounts {
            variant: super::table::ALL.to_string(),
            ..Default::default()
        };
        for v in &per_variant {
            total.add(v);
        }
        let (elo, elo_err) = penta_elo(&total.penta);
        let (nelo, nelo_err, los) = nelo_los(&total.penta);
        HeadToHead {
            bot_a: bot_a.to_string(),
            bot_b: bot_b.to_string(),
            total,
            per_variant,
            elo,
            elo_err,
            nelo,
            nelo_err,
            los,
            three_player_rows,
            other_rows,
        }
    }
}

/// The SPRT of a running league: the pooled pentanomial counts that
/// [`evaluate`] gives, kept as the games finish (no pass over earlier
/// rows), and the first decision, when the LLR first reaches a bound.
///
/// A seat-swap group counts once its two games are in, with swapped seats;
/// a third row takes the count back, as `stats::Evidence` does (a league
/// never writes one). Rows of other bots and 3-player rows are ignored.
#[derive(Clone, Debug)]
pub struct SprtTracker {
    config: SprtConfig,
    bot_a: String,
    bot_b: String,
    /// By (variant label, group).
    groups: std::collections::HashMap<(String, String), GroupSeen>,
    penta: [u64; 5],
    /// Games of A against B so far.
    games: u64,
    decided: Option<Decided>,
}

/// A seat-swap group as its games arrive.
#[derive(Clone, Debug)]
struct GroupSeen {
    a_points: f64,
    rows: u8,
    /// A's seat in the group's first game was seat 0.
    a_first: bool,
    /// The bucket the group was counted in, once a pair.
    bucket: Option<usize>,
}

/// When the LLR first reached a bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decided {
    pub decision: Decision,
    pub llr: f64,
    /// Complete seat-swap pairs then (the LLR's games: twice as many).
    pub pairs: u64,
    /// Games of A against B counted then, in complete pairs or not.
    pub games: u64,
}

impl SprtTracker {
    pub fn new(config: SprtConfig, bot_a: &str, bot_b: &str) -> SprtTracker {
        SprtTracker {
            config,
            bot_a: bot_a.to_string(),
            bot_b: bot_b.to_string(),
            groups: Default::default(),
            penta: [0; 5],
            games: 0,
            decided: None,
        }
    }

    /// Counts a finished game. Returns the decision when this game makes
    /// the LLR reach a bound for the first time.
    pub fn add(&mut self, r: &GameRow) -> Option<Decided> {
        if r.players != 2 {
            return None;
        }
        let a_points = if r.seat0 == self.bot_a && r.seat1 == self.bot_b {
            r.score0
        } else if r.seat1 == self.bot_a && r.seat0 == self.bot_b {
            r.score1
        } else {
            return None;
        };
        self.games += 1;
        let a_first = r.seat0 == self.bot_a;
        let g = self
            .groups
            .entry((super::table::variant_label(r), r.group.clone()))
            .or_insert(GroupSeen {
                a_points: 0.0,
                rows: 0,
                a_first,
                bucket: None,
            });
        g.a_points += a_points;
        g.rows = g.rows.saturating_add(1);
        match g.rows {
            // The second game, with the seats swapped: a pair.
            2 if g.a_first != a_first => {
                let k = ((g.a_points * 2.0).round() as usize).min(4);
                self.penta[k] += 1;
                g.bucket = Some(k);
            }
            // Not a pair after all: take its count back.
            3 => {
                if let Some(k) = g.bucket.take() {
                    self.penta[k] -= 1;
                }
            }
            _ => {}
        }
        if self.decided.is_some() {
            return None;
        }
        let llr = self.config.llr(&self.penta);
        let decision = self.config.decide(llr);
        if !decision.is_final() {
            return None;
        }
        let d = Decided {
            decision,
            llr,
            pairs: self.penta.iter().sum(),
            games: self.games,
        };
        self.decided = Some(d);
        Some(d)
    }

    /// The first decision reached, if any.
    pub fn decided(&self) -> Option<Decided> {
        self.decided
    }

    /// The pooled counts so far, `[LL, LD, WL+DD, WD, WW]` from A's side.
    pub fn penta(&self) -> [u64; 5] {
        self.penta
    }
}

/// Normalized Elo with its 95% half-width, and LOS, of pentanomial counts
/// (fastchess `EloPentanomial`: `nElo = (mu - 1/2) / sqrt(2 var) * 800 / ln 10`,
/// `LOS = Phi((mu - 1/2) / sqrt(var / n))`).
fn nelo_los(penta: &[u64; 5]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let n: u64 = penta.iter().sum();
    if n == 0 {
        return (None, None, None);
    }
    let nf = n as f64;
    let mu = mean(&PAIR_SCORES, &penta.map(|c| c as f64 / nf));
    let var: f64 = penta
        .iter()
        .zip(PAIR_SCORES)
        .map(|(&c, a)| c as f64 / nf * (a - mu).powi(2))
        .sum();
    if var <= 0.0 {
        return (None, None, None);
    }
    let sd2 = (2.0 * var).sqrt();
    let se = (var / nf).sqrt();
    let nelo = (mu - 0.5) / sd2 * NELO_SCALE;
    let err = z_value() * se / sd2 * NELO_SCALE;
    let los = Normal::standard().cdf((mu - 0.5) / se);
    (Some(nelo), Some(err), Some(los))
}

/// Expected score of a logistic Elo difference (fastchess `leloToScore`).
fn score_of_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

fn mean(x: &[f64; 5], p: &[f64; 5]) -> f64 {
    x.iter().zip(p).map(|(x, p)| x * p).sum()
}

fn mean_and_variance(x: &[f64; 5], p: &[f64; 5]) -> (f64, f64) {
    let mu = mean(x, p);
    let var = x.iter().zip(p).map(|(x, p)| p * (x - mu) * (x - mu)).sum();
    (mu, var)
}

/// A root of `f` between `a` and `b` (either order), where `f(a)` and
/// `f(b)` have opposite signs (infinite values allowed), within `epsilon`:
/// the ITP method as fastchess `itp` runs it (same parameters, same steps).
#[allow(clippy::too_many_arguments)]
fn itp(
    f: impl Fn(f64) -> f64,
    mut a: f64,
    mut b: f64,
    mut f_a: f64,
    mut f_b: f64,
    k_1: f64,
    k_2: f64,
    n_0: f64,
    epsilon: f64,
) -> f64 {
    if f_a > 0.0 {
        std::mem::swap(&mut a, &mut b);
        std::mem::swap(&mut f_a, &mut f_b);
    }
    let n_half = ((b - a).abs() / (2.0 * epsilon)).log2().ceil();
    let n_max = n_half + n_0;
    let mut i = 0u32;
    // fastchess has no cap; the bracket shrinks every step, so this is only
    // a guard against a NaN bracket.
    while (b - a).abs() > 2.0 * epsilon && i < 10_000 {
        let x_half = (a + b) / 2.0;
        let r = epsilon * 2f64.powf(n_max - i as f64) - (b - a) / 2.0;
        let delta = k_1 * (b - a).powf(k_2);
        // Regula falsi point (NaN on the first step, when f_a and f_b are
        // infinite: the comparisons below then pick the bisection point, as
        // they do in fastchess).
        let x_f = (f_b * a - f_a * b) / (f_b - f_a);
        let sigma = (x_half - x_f) / (x_half - x_f).abs();
        let x_t = if delta <= (x_half - x_f).abs() {
            x_f + sigma * delta
        } else {
            x_half
        };
        let x_itp = if (x_t - x_half).abs() <= r {
            x_t
        } else {
            x_half - sigma * r
        };
        let f_itp = f(x_itp);
        if f_itp == 0.0 {
            a = x_itp;
            b = x_itp;
        } else if f_itp.is_sign_negative() {
            a = x_itp;
            f_a = f_itp;
        } else {
            b = x_itp;
            f_b = f_itp;
        }
        i += 1;
    }
    (a + b) / 2.0
}

/// The root theta of `f(x) = sum_i phat_i phi_i / (1 + x phi_i)` on
/// `(-1/max phi, -1/min phi)`, where every `1 + x phi_i` is positive, by
/// ITP to `epsilon` as fastchess does, and the distribution
/// `p_i = phat_i / (1 + theta phi_i)` it gives.
fn theta_itp(probs: &[f64; 5], phi: &[f64; 5], epsilon: f64) -> [f64; 5] {
    let u = phi.iter().copied().fold(f64::INFINITY, f64::min);
    let v = phi.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let theta = itp(
        |x| theta_equation(probs, phi, x),
        -1.0 / v,
        -1.0 / u,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.1,
        2.0,
        0.99,
        epsilon,
    );
    std::array::from_fn(|i| probs[i] / (1.0 + theta * phi[i]))
}

fn theta_equation(probs: &[f64; 5], phi: &[f64; 5], x: f64) -> f64 {
    phi.iter()
        .zip(probs)
        .map(|(f, p)| p * f / (1.0 + x * f))
        .sum()
}

/// `theta_itp`, checked: the `p_i` add up to `1 - theta f(theta)`, so a
/// theta near the root gives a distribution. When a probability is tiny
/// (an empty bucket regularised to 1e-3 among a million pairs) the root
/// can lie closer than `epsilon` to a pole; the theta found then gives no
/// distribution (a total off by more than 1e-3, 0.5% to 56% in the cases
/// seen, or negative entries), and
/// the normalized fixed-point iteration fed with it diverges to NaN (in
/// fastchess too). Only then is theta found again by bisection to machine
/// precision (`f` decreases strictly on the interval): the same equation,
/// solved exactly. On ordinary counts ITP's total is within 2e-5 of 1
/// (measured once, first step, 10,000 random counts) and this never
/// triggers.
fn theta_checked(probs: &[f64; 5], phi: &[f64; 5], epsilon: f64) -> [f64; 5] {
    let p = theta_itp(probs, phi, epsilon);
    let sum: f64 = p.iter().sum();
    if (sum - 1.0).abs() <= 1e-3 && p.iter().all(|&q| q > 0.0 && q.is_finite()) {
        return p;
    }
    let u = phi.iter().copied().fold(f64::INFINITY, f64::min);
    let v = phi.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut a, mut b) = (-1.0 / v, -1.0 / u);
    if a.is_nan() || b.is_nan() || a >= b {
        // phi does not change sign: no distribution has the asked mean and
        // spread (not reached within MAX_ELO); the caller sees NaN.
        return [f64::NAN; 5];
    }
    loop {
        let m = 0.5 * (a + b);
        if m <= a || m >= b {
            break;
        }
        if theta_equation(probs, phi, m) > 0.0 {
            a = m;
        } else {
            b = m;
        }
    }
    let theta = 0.5 * (a + b);
    std::array::from_fn(|i| probs[i] / (1.0 + theta * phi[i]))
}

/// How far the maximum-likelihood theta may be from the root (fishtest's
/// tolerance).
const THETA_TOLERANCE: f64 = 1e-9;

/// The normalized fixed point stops when no probability moves by more.
const P_TOLERANCE: f64 = 1e-9;

/// LLR under the logistic model (fastchess `getLLR_logistic`): the
/// distributions with mean `s0` and `s1` closest to `probs`, from
/// `p_i = phat_i / (1 + theta (a_i - s))` with theta the root of
/// `sum phat_i (a_i - s) / (1 + theta (a_i - s)) = 0` (Van den Bergh,
/// proposition 1.1, equations 1.2 and 1.3).
fn llr_logistic(total: f64, probs: &[f64; 5], s0: f64, s1: f64) -> f64 {
    let mle = |s: f64| -> [f64; 5] {
        // phi_i = a_i - s: the interval is fastchess's
        // (-1 / (a_max - s), -1 / (a_min - s)); theta to fishtest's 1e-9
        // (fastchess's 1e-3 moved the crossing on win-loss counts).
        let phi = PAIR_SCORES.map(|a| a - s);
        theta_itp(probs, &phi, THETA_TOLERANCE)
    };
    log_ratio(total, probs, &mle(s0), &mle(s1))
}

/// LLR under the normalized model (fastchess `getLLR_normalized`): the
/// distributions with `(mu - 1/2) / sigma = t0` and `t1` closest to
/// `probs`, by the fixed-point iteration of Van den Bergh section 4.1
/// (equation 4.9 solved for theta at each step), from the uniform
/// distribution until no probability moves by 1e-9 (fishtest's LLRcalc;
/// fastchess stops at 1e-4, which on counts where almost every pair is
/// win-loss moved the crossing by up to 4.6%, issue 29).
fn llr_normalized(total: f64, probs: &[f64; 5], t0: f64, t1: f64) -> f64 {
    let mle = |mu_ref: f64, t_star: f64| -> [f64; 5] {
        let mut p = [1.0 / 5.0; 5];
        // fastchess loops until converged; a few iterations are the rule.
        for _ in 0..1000 {
            let (mu, var) = mean_and_variance(&PAIR_SCORES, &p);
            let sigma = var.sqrt();
            let phi: [f64; 5] = std::array::from_fn(|i| {
                let a = PAIR_SCORES[i];
                let z = (a - mu) / sigma;
                a - mu_ref - 0.5 * t_star * sigma * (1.0 + z * z)
            });
            let new = theta_checked(probs, &phi, THETA_TOLERANCE);
            let max_diff = new
                .iter()
                .zip(&p)
                .map(|(n, o)| (n - o).abs())
                .fold(0.0, f64::max);
            p = new;
            if max_diff < P_TOLERANCE || max_diff.is_nan() {
                break;
            }
        }
        p
    };
    log_ratio(total, probs, &mle(0.5, t0), &mle(0.5, t1))
}

/// `total * sum_i phat_i (ln p1_i - ln p0_i)`.
fn log_ratio(total: f64, probs: &[f64; 5], p0: &[f64; 5], p1: &[f64; 5]) -> f64 {
    let lpr: [f64; 5] = std::array::from_fn(|i| p1[i].ln() - p0[i].ln());
    total * mean(&lpr, probs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(elo0: f64, elo1: f64, model: Model) -> SprtConfig {
        SprtConfig::new(elo0, elo1, 0.05, 0.05, model).unwrap()
    }

    /// (counts, elo0, elo1, normalized LLR, logistic LLR), printed by
    /// tests/data/sprt/llr_reference.py (python3, standard library, run
    /// once): it solves the constrained maximum-likelihood problems of the
    /// published formula directly (the KKT system of all five
    /// probabilities and both multipliers, by damped Newton along a
    /// homotopy from uniform data), not by fastchess's theta root and fixed
    /// point, and checks the equations and constraints hold to 1e-10.
    const REFERENCE: &[([u64; 5], f64, f64, f64, f64)] = &[
        ([10, 40, 100, 40, 10], 0.0, 5.0, -0.041422, -0.103478),
        ([12, 50, 180, 70, 20], 0.0, 5.0, 0.777655, 1.203265),
        ([403, 2130, 4040, 2350, 482], 0.0, 2.0, 3.020723, 4.373637),
        ([30, 20, 50, 10, 5], -5.0, 0.0, -0.984477, -1.149721),
        ([0, 3, 10, 6, 1], 0.0, 10.0, 0.250676, 0.438741),
    ];

    /// Degenerate counts, same script: no pairs, every pair in one bucket.
    /// In the last, fastchess's normalized iteration diverges to NaN (see
    /// `theta_checked`).
    const DEGENERATE: &[([u64; 5], f64, f64, f64, f64)] = &[
        ([0, 0, 0, 0, 0], 0.0, 5.0, -0.000001, -0.000001),
        ([0, 0, 0, 0, 1000], 0.0, 5.0, 20.143711, 14.287636),
        ([1000, 0, 0, 0, 0], 0.0, 5.0, -20.557838, -14.494735),
        ([0, 0, 1000, 0, 0], 0.0, 5.0, -0.407915, -14.484581),
        (
            [1_000_000, 0, 0, 0, 0],
            0.0,
            50.0,
            -222435.339175,
            -154231.290692,
        ),
    ];

    #[test]
    fn llr_matches_the_independent_reference() {
        for &(counts, e0, e1, normalized, logistic) in REFERENCE {
            for (model, want) in [(Model::Normalized, normalized), (Model::Logistic, logistic)] {
                let got = cfg(e0, e1, model).llr(&counts);
                // fastchess's tolerances (theta to 1e-3 or 1e-7, p to 1e-4,
                // used before issue 29) left differences up to 6e-6 here
                // (4.373643, 4.373637); fishtest's leave none at 1e-6.
                assert!(
                    (got - want).abs() < 1e-5 * want.abs().max(1.0),
                    "{model} {counts:?} [{e0}, {e1}]: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn degenerate_counts_match_the_reference() {
        for &(counts, e0, e1, normalized, logistic) in DEGENERATE {
            for (model, want) in [(Model::Normalized, normalized), (Model::Logistic, logistic)] {
                let got = cfg(e0, e1, model).llr_unguarded(&counts);
                // All pairs drawn was the hardest case for fastchess's
                // stopping rules (used before issue 29): -0.409688 for
                // -0.407915 (normalized, p to 1e-4), -14.480589 for
                // -14.484581 (logistic, theta to 1e-3).
                assert!(
                    (got - want).abs() < 5e-3 * want.abs().max(1e-3),
                    "{model} {counts:?} [{e0}, {e1}]: {got} vs {want}"
                );
            }
        }
    }

    /// Counts where almost every pair, or every pair, is win-loss (same
    /// script): fastchess's stopping rules (p to 1e-4, theta to 1e-3)
    /// moved the crossing here by 0.4% to 4.6%; fishtest's (1e-9) agree
    /// with the reference to 1e-6 relative.
    const WIN_LOSS: &[([u64; 5], f64, f64, f64, f64)] = &[
        ([0, 0, 15504, 0, 0], 0.0, 5.0, -6.411640, -224.713055),
        ([0, 0, 15504, 0, 0], -3.0, 1.0, 2.052643, 89.760864),
        ([2, 25, 15450, 24, 3], 0.0, 5.0, -3.063661, -203.834062),
        ([2, 25, 15450, 24, 3], -3.0, 1.0, 1.284763, 89.206941),
    ];

    #[test]
    fn win_loss_counts_match_the_reference_closely() {
        for &(counts, e0, e1, normalized, logistic) in WIN_LOSS {
            for (model, want) in [(Model::Normalized, normalized), (Model::Logistic, logistic)] {
                let got = cfg(e0, e1, model).llr_unguarded(&counts);
                assert!(
                    (got - want).abs() < 1e-6 * want.abs().max(1.0),
                    "{model} {counts:?} [{e0}, {e1}]: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn bounds_and_decisions() {
        let c = cfg(0.0, 5.0, Model::Normalized);
        let (lo, hi) = c.bounds();
        assert!((lo - (0.05f64 / 0.95).ln()).abs() < 1e-12);
        assert!((hi - (0.95f64 / 0.05).ln()).abs() < 1e-12);
        assert!((lo + 2.944439).abs() < 1e-6 && (hi - 2.944439).abs() < 1e-6);
        assert_eq!(c.decide(0.0), Decision::Continue);
        assert_eq!(c.decide(hi), Decision::AcceptH1);
        assert_eq!(c.decide(lo - 1.0), Decision::AcceptH0);
        let c = SprtConfig::new(0.0, 5.0, 0.1, 0.2, Model::Logistic).unwrap();
        let (lo, hi) = c.bounds();
        assert!((lo - (0.2f64 / 0.9).ln()).abs() < 1e-12);
        assert!((hi - (0.8f64 / 0.1).ln()).abs() < 1e-12);
    }

    #[test]
    fn degenerate_counts_are_finite() {
        for model in [Model::Normalized, Model::Logistic] {
            for (e0, e1) in [
                (0.0, 5.0),
                (-10.0, 0.0),
                (-MAX_ELO, MAX_ELO),
                (MAX_ELO - 1.0, MAX_ELO),
                (-MAX_ELO, 1.0 - MAX_ELO),
            ] {
                let c = cfg(e0, e1, model);
                let mut cases = vec![[0u64; 5]];
                for k in 0..5 {
                    for n in [1, 1000, 1_000_000] {
                        let mut p = [0u64; 5];
                        p[k] = n;
                        cases.push(p);
                    }
                }
                cases.push([1_000_000, 0, 0, 0, 1_000_000]);
                for p in cases {
                    // Before the NaN guard: the guard must have nothing to do.
                    let llr = c.llr_unguarded(&p);
                    assert!(llr.is_finite(), "{model} [{e0}, {e1}] {p:?}: {llr}");
                }
            }
            // No pairs: no evidence either way.
            assert!(cfg(0.0, 5.0, model).llr(&[0; 5]).abs() < 1e-3);
            // Every pair won: strong evidence for H1; every pair lost, for H0.
            let c = cfg(0.0, 5.0, model);
            assert_eq!(c.decide(c.llr(&[0, 0, 0, 0, 1000])), Decision::AcceptH1);
            assert_eq!(c.decide(c.llr(&[1000, 0, 0, 0, 0])), Decision::AcceptH0);
            // Every pair half: evidence for H0 (no difference).
            assert!(c.llr(&[0, 0, 1000, 0, 0]) < 0.0);
        }
    }

    #[test]
    fn llr_is_antisymmetric_in_a_and_b() {
        // Swapping A and B reverses the counts and negates the hypotheses.
        for model in [Model::Normalized, Model::Logistic] {
            let p = [12, 50, 180, 70, 20];
            let mut r = p;
            r.reverse();
            let a = cfg(-5.0, 5.0, model).llr(&p);
            let b = cfg(-5.0, 5.0, model).llr(&r);
            assert!((a + b).abs() < 1e-3, "{model}: {a} {b}");
        }
    }

    #[test]
    fn parses_the_specification() {
        let c: SprtConfig = "elo0=0,elo1=5,alpha=0.05,beta=0.1".parse().unwrap();
        assert_eq!(
            c,
            SprtConfig::new(0.0, 5.0, 0.05, 0.1, Model::Normalized).unwrap()
        );
        let c: SprtConfig = " elo1=2.5 , elo0=-1.5, model=logistic ".parse().unwrap();
        assert_eq!(
            c,
            SprtConfig::new(-1.5, 2.5, 0.05, 0.05, Model::Logistic).unwrap()
        );
        // Display gives the same form back.
        assert_eq!(c.to_string().parse::<SprtConfig>().unwrap(), c);
        assert_eq!(
            c.to_string(),
            "elo0=-1.5,elo1=2.5,alpha=0.05,beta=0.05,model=logistic"
        );
    }

    #[test]
    fn refuses_bad_specifications_by_name() {
        let err = |s: &str| s.parse::<SprtConfig>().unwrap_err().to_string();
        assert!(err("elo0=5,elo1=0").contains("elo0 must be less than elo1"));
        assert!(err("elo0=0,elo1=0").contains("elo0 must be less than elo1"));
        assert!(err("elo1=5").contains("needs `elo0`"));
        assert!(err("elo0=0").contains("needs `elo1`"));
        assert!(err("elo0=0,elo1=5,alpha=0.5").contains("alpha must be between 0 and 0.5"));
        assert!(err("elo0=0,elo1=5,beta=0").contains("beta must be between 0 and 0.5"));
        assert!(err("elo0=0,elo1=5,beta=-0.1").contains("beta"));
        assert!(err("elo0=zero,elo1=5").contains("elo0=`zero` is not a finite number"));
        // A huge number is shown in exponent form, not in 309 digits.
        assert!(
            err("elo0=-1e308,elo1=5").ends_with("got -1e308"),
            "{}",
            err("elo0=-1e308,elo1=5")
        );
        assert!(err("elo0=0,elo1=5,alpha=1e300").ends_with("got 1e300"));
        assert!(err("elo0=2.5,elo1=-0.5").ends_with("got elo0=2.5 and elo1=-0.5"));
        assert!(err("elo0=0,elo1=inf").contains("elo1=`inf`"));
        assert!(err("elo0=0,elo1=NaN").contains("elo1=`NaN`"));
        assert!(err("elo0=0,elo1=5,model=bayesian").contains("`bayesian` is not a model"));
        assert!(err("elo0=0,elo1=5,gamma=1").contains("unknown SPRT key `gamma`"));
        assert!(err("elo0=0,elo1=5,elo0=1").contains("`elo0` is given twice"));
        assert!(err("elo0=0,elo1=5,alpha").contains("`alpha` is not KEY=VALUE"));
        assert!(err("elo0=0,elo1=500").contains("elo1 must be within [-200, 200]"));
        assert!(err("").contains("needs `elo0`"));
    }

    #[test]
    fn reads_a_toml_table_with_the_same_keys() {
        #[derive(Deserialize)]
        struct League {
            sprt: SprtConfig,
        }
        let l: League = toml::from_str("[sprt]\nelo0 = 0\nelo1 = 5\nmodel = \"logistic\"\n")
            .map_err(|e| e.to_string())
            .unwrap();
        assert_eq!(
            l.sprt,
            SprtConfig::new(0.0, 5.0, 0.05, 0.05, Model::Logistic).unwrap()
        );
        let bad = |s: &str| toml::from_str::<League>(s).err().unwrap().to_string();
        assert!(bad("[sprt]\nelo0 = 0\nelo1 = 5\nalfa = 0.1\n").contains("alfa"));
        assert!(bad("[sprt]\nelo0 = 5\nelo1 = 0\n").contains("elo0 must be less than elo1"));
        assert!(bad("[sprt]\nelo0 = 0\nelo1 = 5\nmodel = \"x\"\n").contains("unknown variant"));
        assert!(bad("[sprt]\nelo1 = 5\n").contains("elo0"));
        // Serialize writes the same keys back.
        let c = SprtConfig::new(0.0, 5.0, 0.05, 0.1, Model::Normalized).unwrap();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<SprtConfig>(&json).unwrap(), c);
    }

    #[test]
    fn the_tracker_counts_what_evaluate_counts_and_decides_once() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut rows = Vec::new();
        for g in 0..400 {
            let variant = ["filo", "kisolo", "diffusion"][g % 3];
            let group = format!("r{g}");
            for (o, (s0, s1)) in [("new", "old"), ("old", "new")].into_iter().enumerate() {
                // "new" is better: it wins 55%, draws 20%.
                let x: f64 = rng.gen();
                let new_score = if x < 0.55 {
                    1.0
                } else if x < 0.75 {
                    0.5
                } else {
                    0.0
                };
                let score0 = if s0 == "new" {
                    new_score
                } else {
                    1.0 - new_score
                };
                rows.push(row(
                    &format!("{group}-o{o}"),
                    variant,
                    &group,
                    s0,
                    s1,
                    score0,
                ));
            }
        }
        // A third bot's games and a 3-player row are ignored.
        rows.push(row("x-o0", "filo", "x", "new", "third", 1.0));
        // Games finish out of order across workers.
        for i in (1..rows.len()).rev() {
            let j = rng.gen_range(0..=i);
            rows.swap(i, j);
        }
        let config: SprtConfig = "elo0=0,elo1=10,alpha=0.05,beta=0.05".parse().unwrap();
        let mut t = SprtTracker::new(config, "new", "old");
        let mut firsts = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            if let Some(d) = t.add(r) {
                firsts.push(d);
                // The decision is the one of the rows so far.
                let so_far = evaluate(&rows[..=i], "new", "old", &config).unwrap();
                assert_eq!(so_far.pair.total.penta, t.penta());
                assert_eq!(so_far.decision, d.decision);
            }
        }
        let all = evaluate(&rows, "new", "old", &config).unwrap();
        assert_eq!(all.pair.total.penta, t.penta());
        assert_eq!(firsts.len(), 1, "one decision: {firsts:?}");
        assert_eq!(firsts[0].decision, Decision::AcceptH1);
        assert_eq!(t.decided(), Some(firsts[0]));
    }

    fn row(id: &str, variant: &str, group: &str, s0: &str, s1: &str, score0: f64) -> GameRow {
        GameRow::two_player(id, variant, group, s0, s1, score0)
    }

    /// A seat-swap pair: `new` first with `score_first`, then second with
    /// `1 - score_second` for `old` (scores are `new`'s).
    fn pair(rows: &mut Vec<GameRow>, variant: &str, g: &str, new_first: f64, new_second: f64) {
        let n = rows.len();
        rows.push(row(&format!("{n}"), variant, g, "new", "old", new_first));
        rows.push(row(
            &format!("{}", n + 1),
            variant,
            g,
            "old",
            "new",
            1.0 - new_second,
        ));
    }

    #[test]
    fn counts_whole_pairs_from_a_per_variant_and_pooled() {
        let mut rows = Vec::new();
        pair(&mut rows, "filo", "f1", 1.0, 1.0); // WW
        pair(&mut rows, "filo", "f2", 1.0, 0.5); // WD
        pair(&mut rows, "filo", "f3", 1.0, 0.0); // WL
        pair(&mut rows, "kisolo", "k1", 0.5, 0.5); // DD
        pair(&mut rows, "kisolo", "k2", 0.0, 0.5); // LD
        pair(&mut rows, "kisolo", "k3", 0.0, 0.0); // LL
                                                   // Incomplete group: counts in W/D/L only.
        rows.push(row("x1", "kisolo", "k4", "new", "old", 1.0));
        // A 3-player row and another pairing: ignored, counted.
        let mut three = row("t", "tricala", "t1", "new", "old", 0.5);
        three.players = 3;
        three.seat2 = "third".into();
        three.score0 = 0.5;
        three.score1 = 0.5;
        three.score2 = Some(0.5);
        rows.push(three);
        rows.push(row("o1", "filo", "o", "new", "third", 1.0));
        let c = cfg(0.0, 5.0, Model::Normalized);
        // "new" < "old": A is the first by name, counts as they are.
        let r = evaluate(&rows, "new", "old", &c).unwrap();
        assert_eq!(r.pair.total.penta, [1, 1, 2, 1, 1]);
        assert_eq!(r.pair.total.pairs(), 6);
        assert_eq!(r.pair.total.games_counted(), 12);
        assert_eq!(r.pair.total.games, 13);
        assert_eq!(
            (r.pair.total.wins, r.pair.total.draws, r.pair.total.losses),
            (5, 4, 4)
        );
        assert_eq!(r.pair.per_variant.len(), 2);
        assert_eq!(r.pair.per_variant[0].variant, "filo");
        assert_eq!(r.pair.per_variant[0].penta, [0, 0, 1, 1, 1]);
        assert_eq!(r.pair.per_variant[1].variant, "kisolo");
        assert_eq!(r.pair.per_variant[1].penta, [1, 1, 1, 0, 0]);
        assert_eq!(r.pair.per_variant[1].games, 7);
        assert_eq!((r.pair.three_player_rows, r.pair.other_rows), (1, 1));
        assert_eq!(r.llr, c.llr(&[1, 1, 2, 1, 1]));
        assert_eq!(r.decision, Decision::Continue);
        // From B's side everything turns around.
        let s = evaluate(&rows, "old", "new", &c).unwrap();
        assert_eq!(s.pair.total.penta, [1, 1, 2, 1, 1]);
        assert_eq!(s.pair.per_variant[0].penta, [1, 1, 1, 0, 0]);
        assert_eq!((s.pair.total.wins, s.pair.total.losses), (4, 5));
        assert!(evaluate(&rows, "new", "new", &c).is_err());
        // Missing bots: empty counts, no decision.
        let e = evaluate(&rows, "x", "y", &c).unwrap();
        assert_eq!(e.pair.total.games, 0);
        assert_eq!(e.decision, Decision::Continue);
        assert_eq!((e.pair.elo, e.pair.nelo, e.pair.los), (None, None, None));
    }

    #[test]
    fn elo_estimates_follow_fastchess() {
        let mut rows = Vec::new();
        for (i, (f, s)) in [(1.0, 1.0), (1.0, 0.5), (0.5, 0.5), (0.0, 0.5), (1.0, 0.0)]
            .iter()
            .enumerate()
        {
            pair(&mut rows, "filo", &format!("g{i}"), *f, *s);
        }
        let r = evaluate(&rows, "new", "old", &cfg(0.0, 5.0, Model::Logistic)).unwrap();
        // Pair scores 1, 3/4, 1/2, 1/4, 1/2: mean 0.6, variance 0.065.
        let (mu, var, n) = (0.6f64, 0.065f64, 5.0f64);
        let elo = -400.0 * (1.0 / mu - 1.0).log10();
        assert!((r.pair.elo.unwrap() - elo).abs() < 1e-9);
        let nelo = (mu - 0.5) / (2.0 * var).sqrt() * NELO_SCALE;
        assert!((r.pair.nelo.unwrap() - nelo).abs() < 1e-9);
        let se = (var / n).sqrt();
        let err = 1.959964 * se / (2.0 * var).sqrt() * NELO_SCALE;
        assert!((r.pair.nelo_err.unwrap() - err).abs() < 1e-4);
        let los = Normal::standard().cdf((mu - 0.5) / se);
        assert!((r.pair.los.unwrap() - los).abs() < 1e-12);
    }

    #[test]
    fn picks_the_two_bots_or_asks() {
        let mut rows = Vec::new();
        pair(&mut rows, "filo", "g", 1.0, 1.0);
        assert_eq!(
            pick_pair(&rows, None).unwrap(),
            ("new".to_string(), "old".to_string())
        );
        assert_eq!(
            pick_pair(&rows, Some(("old", "new"))).unwrap(),
            ("old".to_string(), "new".to_string())
        );
        rows.push(row("z", "filo", "h", "alpha", "new", 0.5));
        let e = pick_pair(&rows, None).unwrap_err().to_string();
        assert!(e.contains("3 bots") && e.contains("alpha, new, old"), "{e}");
        let e = pick_pair(&rows, Some(("new", "ghost"))).unwrap_err();
        assert!(e.to_string().contains("`ghost`"), "{e}");
        assert!(matches!(pick_pair(&[], None), Err(SprtError::NoPair)));
        assert!(matches!(
            pick_pair(&rows, Some(("new", "new"))),
            Err(SprtError::SameBot(_))
        ));
    }
}
