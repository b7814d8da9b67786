//! Ratings and statistics: a pure function from results rows (`GameRow`) to
//! Elo ratings with intervals, likelihood of superiority, pentanomial pair
//! statistics, draw rates, seat advantage, game lengths and forfeits; and
//! the SPRT of one bot against another on seat-swap pairs (`sprt`).
//!
//! No I/O here and no knowledge of bots, processes or files: the CSV reading
//! lives in `results::csvio`, the table writing in `report::tables`.
//! The model and every choice below are documented in `docs/ratings.md`.

mod fit;
mod linalg;
mod luce;
mod scale;
pub mod sprt;
mod stats;
mod table;

pub use fit::{Cell, PRIOR_DRAWS};
pub(crate) use stats::Fx;
pub use stats::{elo_of_score, penta_elo, penta_elo_gap, PairCount, VariantStats};
pub use table::{
    matches_variant, variant_label, z_value, BotCount, BotRating, Flag, IntervalMethod, Standings,
    ALL, CONFIDENCE,
};

use crate::results::GameRow;
use linalg::Matrix;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Errors of the ratings.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RatingError {
    #[error("anchor bot `{0}` does not appear in the results")]
    UnknownAnchor(String),
    #[error("anchor Elo must be finite, got {0}")]
    BadAnchor(f64),
    #[error("the table with a first-seat advantage was not fitted")]
    NoSeatTable,
}

/// `--anchor BOT=ELO`: the named bot's rating is fixed at `elo`.
#[derive(Clone, Debug, PartialEq)]
pub struct Anchor {
    pub bot: String,
    pub elo: f64,
}

/// What to rate and how.
#[derive(Clone, Debug, Default)]
pub struct RateOptions {
    /// Keep only this variant: a variant name (`tricala` keeps both 2- and
    /// 3-player Tricala) or a label (`tricala-3p`).
    pub variant: Option<String>,
    /// Fix one bot's rating; default: the average of the rated bots is 0.
    pub anchor: Option<Anchor>,
    /// Fit a first-seat advantage per variant label jointly with the ratings.
    pub seat_advantage: bool,
    /// Bots to list even without games (they appear as unrated).
    pub extra_bots: Vec<String>,
    /// How the intervals take the variance of the results.
    pub intervals: IntervalMethod,
}

/// Everything `arena rate` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Every variant together (`all`); with a variant filter, the variants
    /// kept, named after them.
    pub overall: Standings,
    /// One table per variant label, sorted by label.
    pub per_variant: Vec<Standings>,
    /// Head-to-head statistics per (variant label or `all`, pair of bots):
    /// read through [`Report::pairs`].
    pairs: Vec<PairCount>,
    /// Per variant label: draws, first-seat score, lengths, reasons.
    pub variants: Vec<VariantStats>,
    /// Rows left out by the variant filter.
    pub filtered_out: usize,
}

impl Report {
    /// The head-to-head statistics, per variant label (sorted) then `all`,
    /// each label's pairs by bot. Every reader outside the fit goes through
    /// here, and the tests count the pairs read ([`pairs_read`]): a table
    /// that looked each of its cells up by a scan of the pairs (a cost of
    /// bots⁴, issue 34) fails them.
    pub fn pairs(&self) -> impl ExactSizeIterator<Item = &PairCount> + '_ {
        self.pairs.iter().inspect(|_| note_pair_read())
    }
}

#[cfg(test)]
thread_local! {
    /// Pairs read through [`Report::pairs`] on this thread.
    static PAIRS_READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts a pair read (in tests only).
#[inline(always)]
fn note_pair_read() {
    #[cfg(test)]
    PAIRS_READ.with(|c| c.set(c.get() + 1));
}

/// The pairs read through [`Report::pairs`] on this thread so far (tests
/// only): what a table costs, counted rather than timed.
#[cfg(test)]
pub(crate) fn pairs_read() -> u64 {
    PAIRS_READ.with(|c| c.get())
}

/// Rates `rows`. Pure: the same rows in any order give the same report
/// (counts are integers; only the fit's floating point is order-free too).
pub fn rate(rows: &[GameRow], opts: &RateOptions) -> Result<Report, RatingError> {
    let mut tally = Tally::new(opts);
    for r in rows {
        tally.add(r);
    }
    tally.report()
}

/// Rates games as they are read, one at a time (`rate` over rows that are
/// never all in memory): the variant filter, then the counts of
/// `stats::EvidenceBuilder`.
#[derive(Clone)]
pub struct Tally<'a> {
    opts: &'a RateOptions,
    evidence: stats::EvidenceBuilder,
    kept: usize,
    filtered_out: usize,
    /// With a variant filter: every (variant, players) seen.
    present: Vec<(String, u8)>,
}

impl<'a> Tally<'a> {
    pub fn new(opts: &'a RateOptions) -> Self {
        Tally {
            opts,
            evidence: stats::EvidenceBuilder::new(),
            kept: 0,
            filtered_out: 0,
            present: Vec::new(),
        }
    }

    /// Counts one game (or leaves it out, by the variant filter).
    pub fn add(&mut self, row: &GameRow) {
        if self.opts.variant.is_some() && !self.keeps(row) {
            return;
        }
        self.kept += 1;
        self.evidence.add(row);
    }

    /// Whether the variant filter keeps `row` (noting its variant, and
    /// counting it out when not).
    fn keeps(&mut self, row: &GameRow) -> bool {
        let Some(v) = self.opts.variant.as_deref() else {
            return true;
        };
        if !self
            .present
            .iter()
            .any(|(name, p)| *p == row.players && *name == row.variant)
        {
            self.present.push((row.variant.clone(), row.players));
        }
        if !matches_variant(row, v) {
            self.filtered_out += 1;
            return false;
        }
        true
    }

    /// Counts one game that is a seat-swap group of its own
    /// ([`stats::EvidenceBuilder::add_unpaired`]; the ladder's games), or
    /// leaves it out, by the variant filter.
    pub fn add_unpaired(&mut self, row: &GameRow) {
        if self.opts.variant.is_some() && !self.keeps(row) {
            return;
        }
        self.kept += 1;
        self.evidence.add_unpaired(row);
    }

    /// Games counted (kept by the filter).
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// Seat-swap groups left out of the pairs, holding more than two
    /// games ([`stats::EvidenceBuilder::crowded_groups`]): how many, and
    /// the id of the first.
    pub fn crowded_groups(&self) -> (u64, Option<&str>) {
        self.evidence.crowded_groups()
    }

    /// Games seen, kept or not.
    pub fn seen(&self) -> usize {
        self.kept + self.filtered_out
    }

    /// With a variant filter, the variant names and labels of every game
    /// seen, sorted (for the error of a filter that keeps nothing).
    pub fn variants_present(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .present
            .iter()
            .flat_map(|(name, players)| {
                let row = GameRow {
                    variant: name.clone(),
                    players: *players,
                    ..GameRow::default()
                };
                [name.clone(), variant_label(&row)]
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The report over the games counted.
    pub fn report(self) -> Result<Report, RatingError> {
        let ev = self.evidence.finish(&self.opts.extra_bots);
        Ok(report(ev, self.opts, self.filtered_out, false)?.0)
    }

    /// The report, and the overall table of the same games fitted with a
    /// first-seat advantage per variant label (`RateOptions::seat_advantage`;
    /// its ratings are not the standings'): what `arena report` shows,
    /// from one count of the games, the tables fitted two at a time.
    pub fn report_with_seat_advantage(self) -> Result<(Report, Standings), RatingError> {
        let ev = self.evidence.finish(&self.opts.extra_bots);
        let (report, seat) = report(ev, self.opts, self.filtered_out, true)?;
        match seat {
            Some(seat) => Ok((report, seat)),
            None => Err(RatingError::NoSeatTable),
        }
    }
}

/// `rate` of `rows` with `opts`, and the overall table of the same games
/// with a first-seat advantage (`Tally::report_with_seat_advantage`): one
/// count of the rows where two `rate`s counted them twice.
pub fn rate_with_seat_advantage(
    rows: &[GameRow],
    opts: &RateOptions,
) -> Result<(Report, Standings), RatingError> {
    let mut tally = Tally::new(opts);
    for r in rows {
        tally.add(r);
    }
    tally.report_with_seat_advantage()
}

/// The report of the counted evidence, and with `seat_table` the overall
/// table fitted with a first-seat advantage.
fn report(
    ev: stats::Evidence,
    opts: &RateOptions,
    filtered_out: usize,
    seat_table: bool,
) -> Result<(Report, Option<Standings>), RatingError> {
    if let Some(a) = &opts.anchor {
        if !a.elo.is_finite() {
            return Err(RatingError::BadAnchor(a.elo));
        }
        if !ev.bots.iter().any(|b| b == &a.bot) {
            return Err(RatingError::UnknownAnchor(a.bot.clone()));
        }
    }
    let with_seat = RateOptions {
        seat_advantage: true,
        ..opts.clone()
    };
    // The seat table first, so that it starts on the second core while
    // the first fits the overall table.
    let tables: Vec<Table> = seat_table
        .then_some((None, &with_seat))
        .into_iter()
        .chain((0..ev.labels.len()).map(|g| (Some(g), opts)))
        .collect();
    let (mut overall, mut per_variant) = fit_tables(&ev, (None, opts), &tables);
    let seat = (seat_table && !per_variant.is_empty()).then(|| per_variant.remove(0));
    let mut pairs = ev.pair_stats(&overall, &per_variant);
    if opts.variant.is_some() {
        // Filtered: the overall table covers only the variants kept, so it
        // is named after them, not `all` (`kisolo`, or `tricala+tricala-3p`
        // for `--variant tricala`). With one label it is that label's table:
        // the copy is dropped.
        let label = ev.labels.join("+");
        if per_variant.len() == 1 {
            per_variant.clear();
            pairs.retain(|p| p.variant != ALL);
        }
        for p in pairs.iter_mut().filter(|p| p.variant == ALL) {
            p.variant = label.clone();
        }
        overall.variant = label;
    }
    let variants = ev.variant_stats(&overall);
    let report = Report {
        overall,
        per_variant,
        pairs,
        variants,
        filtered_out,
    };
    Ok((report, seat))
}

/// A table to fit: every group (`None`) or one, and how.
type Table<'a> = (Option<usize>, &'a RateOptions);

/// Fits `first` and each of `rest` (`standings`), two at a time when the
/// machine has two cores or more: each table is fitted alone on one
/// thread, so the results do not depend on the threads. Two, not more:
/// each fit holds a few matrices of bots x bots (32 MB each at 2,000).
fn fit_tables(ev: &stats::Evidence, first: Table, rest: &[Table]) -> (Standings, Vec<Standings>) {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(group, opts)) = rest.get(k) else {
                break;
            };
            done.push((k, standings(ev, group, opts)));
        }
        done
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        let helper = (cores > 1 && !rest.is_empty()).then(|| scope.spawn(work));
        let first = standings(ev, first.0, first.1);
        let mut done = work();
        if let Some(helper) = helper {
            match helper.join() {
                Ok(more) => done.extend(more),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done.sort_by_key(|&(k, _)| k);
        (first, done.into_iter().map(|(_, s)| s).collect())
    })
}

/// Without seat advantage, seat order and variant do not enter the model:
/// merges the cells of each unordered pair (fewer cells, same likelihood).
fn collapse(cells: Vec<Cell>) -> Vec<Cell> {
    let mut m: BTreeMap<(usize, usize), Cell> = BTreeMap::new();
    for c in cells {
        let (a, b, w, x, x2) = if c.first <= c.second {
            (c.first, c.second, c.w, c.x, c.x2)
        } else {
            // The score of `second` is 1 - s: x' = w - x, x2' = w - 2x + x2.
            (c.second, c.first, c.w, c.w - c.x, c.w - 2.0 * c.x + c.x2)
        };
        let e = m.entry((a, b)).or_insert(Cell {
            first: a,
            second: b,
            group: 0,
            ..Default::default()
        });
        e.w += w;
        e.x += x;
        e.x2 += x2;
    }
    m.into_values().collect()
}

/// Within how many points of a perfect (or a zero) first-seat score a
/// variant counts as separated (less than half a point away: every game
/// won, or all but a fraction of a 3-player pair); there the fit's seat
/// advantage would rest on its virtual draw alone.
const SEPARATION_MARGIN: f64 = 0.5;

/// Fits one standings table: all groups (`None`) or one variant label.
fn standings(ev: &stats::Evidence, group: Option<usize>, opts: &RateOptions) -> Standings {
    let n = ev.bots.len();
    let (cells, choices) = evidence_of(ev, group);
    let (seat_groups, seat_unbounded) = seat_parameters(ev, &cells, &choices, opts);
    let (cells, choices) = if opts.seat_advantage {
        (cells, choices)
    } else {
        (collapse(cells), luce::collapse(choices))
    };
    // The anchor's group of bots is the reference: the others are centred
    // on their own and flagged `disconnected`.
    let anchor_bot = opts
        .anchor
        .as_ref()
        .and_then(|a| ev.bots.iter().position(|b| b == &a.bot));
    let out = fit::fit_with_reference(
        n,
        ev.labels.len(),
        &cells,
        &choices,
        &seat_groups,
        opts.intervals,
        anchor_bot,
    );
    let scale = Scale::of(ev, &out, opts);
    let (elo, quasi) = on_scale(&out, &out.cov, &scale);
    let tcov = match &out.robust_cov {
        Some(robust) => the_larger_per_bot(&quasi, &on_scale(&out, robust, &scale).1, n),
        None => quasi.clone(),
    };
    let ratings = bot_ratings(ev, group, &out, &elo, &tcov, &quasi);
    let (ratings, cov) = ranked(ratings, &tcov);
    let index = ratings
        .iter()
        .enumerate()
        .map(|(k, r)| (r.bot.clone(), k))
        .collect();
    let z = z_value();
    let seat_advantage = out
        .seat
        .iter()
        .enumerate()
        .filter_map(|(g, s)| s.map(|(h, se)| (ev.labels[g].clone(), h, h - z * se, h + z * se)))
        .collect();
    Standings {
        seat_unbounded,
        variant: group.map_or(ALL.to_string(), |g| ev.labels[g].clone()),
        anchor: scale.text,
        regularized: out.regularized,
        groups: out.groups,
        dispersion: out.dispersion,
        intervals: if out.robust_cov.is_some() {
            IntervalMethod::Robust
        } else {
            IntervalMethod::Dispersion
        },
        iterations: out.iterations,
        ratings,
        seat_advantage,
        cov,
        index,
    }
}

/// The evidence of one table: the 2-player cells and the 3-player events
/// of all groups (`None`) or of one.
fn evidence_of(ev: &stats::Evidence, group: Option<usize>) -> (Vec<Cell>, Vec<luce::Choice>) {
    let cells: Vec<Cell> = match group {
        None => ev.cells.clone(),
        Some(g) => ev.cells.iter().filter(|c| c.group == g).copied().collect(),
    };
    let choices: Vec<luce::Choice> = match group {
        None => ev.choices.clone(),
        Some(g) => ev
            .choices
            .iter()
            .filter(|c| c.group == g)
            .copied()
            .collect(),
    };
    (cells, choices)
}

/// Which variants get a seat parameter, and those said to be unbounded
/// with the first seat's score. A seat parameter per variant, but where
/// one seat won (nearly) every game of a variant its maximum-likelihood
/// value is infinite: that variant is rated without one.
fn seat_parameters(
    ev: &stats::Evidence,
    cells: &[Cell],
    choices: &[luce::Choice],
    opts: &RateOptions,
) -> (Vec<bool>, Vec<(String, f64)>) {
    let mut seat_groups = vec![opts.seat_advantage; ev.labels.len()];
    let mut seat_unbounded = Vec::new();
    if !opts.seat_advantage {
        return (seat_groups, seat_unbounded);
    }
    let firsts: Vec<(f64, f64)> = (0..ev.labels.len())
        .map(|g| first_seat(cells, choices, g))
        .collect();
    for (g, label) in ev.labels.iter().enumerate() {
        let (w, x) = firsts[g];
        // Within the margin of 0 or of every point (a lone drawn game
        // is not: its half point is the whole margin).
        let m = SEPARATION_MARGIN.min(w / 2.0);
        let separated = x <= 1e-9 || w - x <= 1e-9 || x < m || w - x < m;
        if w > 0.0 && separated {
            seat_groups[g] = false;
            seat_unbounded.push((label.clone(), x / w));
        }
    }
    // Separated once the ratings are free, whatever the first seat's score.
    if seat_groups.iter().any(|&s| s) {
        let apart = fit::seats_without_estimate(
            ev.bots.len(),
            ev.labels.len(),
            cells,
            choices,
            &seat_groups,
        );
        for (g, label) in ev.labels.iter().enumerate() {
            if apart[g] {
                let (w, x) = firsts[g];
                seat_groups[g] = false;
                seat_unbounded.push((label.clone(), if w > 0.0 { x / w } else { 0.5 }));
            }
        }
    }
    (seat_groups, seat_unbounded)
}

/// The first seat's weight and points in group `g`: in 2-player cells and
/// in the 3-player events that include the bot in seat 0.
fn first_seat(cells: &[Cell], choices: &[luce::Choice], g: usize) -> (f64, f64) {
    cells
        .iter()
        .filter(|c| c.group == g && c.first != c.second)
        .map(|c| (c.w, c.x))
        .chain(
            choices
                .iter()
                .filter(|c| c.group == g)
                .filter_map(|c| c.seat0.map(|k| (c.w, c.y[k]))),
        )
        .fold((0.0, 0.0), |(w, x), (cw, cx)| (w + cw, x + cx))
}

/// How a table's scale is fixed: the anchor at its Elo when it has games
/// here, else the average (of the unflagged bots) at 0.
struct Scale {
    /// In words (`average = 0`, `alice = 1500`).
    text: String,
    /// The anchor bot, if it is rated here.
    anchor: Option<usize>,
    /// The anchor's Elo, or 0.
    elo: f64,
}

impl Scale {
    fn of(ev: &stats::Evidence, out: &fit::FitOutput, opts: &RateOptions) -> Scale {
        let anchor_bot = opts
            .anchor
            .as_ref()
            .and_then(|a| ev.bots.iter().position(|b| b == &a.bot).map(|i| (i, a)))
            .filter(|(i, _)| out.rated[*i]);
        let rated = (0..ev.bots.len()).filter(|&i| out.rated[i]);
        let average = if rated.into_iter().all(|i| out.core[i]) {
            "average"
        } else {
            "average of the unflagged bots"
        };
        let (text, anchor, elo) = match (anchor_bot, &opts.anchor) {
            (Some((i, a)), _) => (format!("{} = {}", a.bot, a.elo), Some(i), a.elo),
            (None, Some(a)) => (
                format!("{average} = 0 ({} has no games here)", a.bot),
                None,
                0.0,
            ),
            (None, None) => (format!("{average} = 0"), None, 0.0),
        };
        Scale { text, anchor, elo }
    }
}

/// The ratings on `scale`, e = T r, and their covariance T Σ Tᵀ (by bot,
/// n x n): every reported rating is a contrast c·r, so its variance is
/// cᵀ Σ c whatever gauge the fit used.
fn on_scale(out: &fit::FitOutput, fit_cov: &Matrix, scale: &Scale) -> (Vec<f64>, Vec<f64>) {
    let n = out.rated.len();
    let rated: Vec<usize> = (0..n).filter(|&i| out.rated[i]).collect();
    let cov = |i: usize, j: usize| fit_cov.get(i, j);
    let mut elo = vec![0.0; n];
    let mut tcov = vec![0.0; n * n];
    if !rated.is_empty() {
        match scale.anchor {
            Some(a) => {
                for &i in &rated {
                    elo[i] = out.elo[i] - out.elo[a] + scale.elo;
                    for &j in &rated {
                        tcov[i * n + j] = cov(i, j) - cov(i, a) - cov(a, j) + cov(a, a);
                    }
                }
            }
            None => {
                // The average of the core (every rated bot unless the
                // maximum-likelihood ratings do not exist, see FitOutput).
                let core: Vec<usize> = rated.iter().copied().filter(|&i| out.core[i]).collect();
                let m = core.len().max(1) as f64;
                let mean = core.iter().map(|&i| out.elo[i]).sum::<f64>() / m;
                let mut rowmean = vec![0.0; n];
                for &i in &rated {
                    rowmean[i] = core.iter().map(|&j| cov(i, j)).sum::<f64>() / m;
                }
                let all = core.iter().map(|&i| rowmean[i]).sum::<f64>() / m;
                for &i in &rated {
                    elo[i] = out.elo[i] - mean + scale.elo;
                    for &j in &rated {
                        tcov[i * n + j] = cov(i, j) - rowmean[i] - rowmean[j] + all;
                    }
                }
            }
        }
    }
    centre_other_groups(out, fit_cov, &rated, scale, &mut elo, &mut tcov);
    (elo, tcov)
}

/// Per bot, the larger of the quasi-likelihood variance (`quasi`, `φ H⁻¹`
/// on the scale) and the robust one (`robust`, the sandwich on the scale),
/// both `n` x `n` by bot, with the correlations of `quasi`: `D quasi D`,
/// `D` diagonal with `D_ii = sqrt(max(1, robust_ii / quasi_ii))`
/// (docs/ratings.md, "Extreme tables"). One φ per table is too small for a bot whose games are more
/// decisive than the table's; its own sandwich is too small for a bot with
/// a handful of decisive games: the larger holds in both.
fn the_larger_per_bot(quasi: &[f64], robust: &[f64], n: usize) -> Vec<f64> {
    let factor: Vec<f64> = (0..n)
        .map(|i| {
            let (q, r) = (quasi[i * n + i], robust[i * n + i]);
            if q > 0.0 && r > q {
                (r / q).sqrt()
            } else {
                1.0
            }
        })
        .collect();
    let mut out = quasi.to_vec();
    for i in 0..n {
        for j in 0..n {
            out[i * n + j] *= factor[i] * factor[j];
        }
    }
    out
}

/// Groups of bots that never met the reference group (the anchor's, or
/// the largest): each is centred on its own average at the reference
/// value (0, or the anchor's Elo), with the covariance of its
/// within-group contrasts, `A C Aᵀ` over the group's members (`A = I -
/// J/k`), symmetric; none with bots outside the group, whose LOS with
/// them is empty (docs/ratings.md, "Perfect scores, single games,
/// disconnected and unrated bots").
fn centre_other_groups(
    out: &fit::FitOutput,
    fit_cov: &Matrix,
    rated: &[usize],
    scale: &Scale,
    elo: &mut [f64],
    tcov: &mut [f64],
) {
    let n = elo.len();
    let cov = |i: usize, j: usize| fit_cov.get(i, j);
    let reference_group = scale.anchor.map_or(0, |a| out.group[a]);
    for g in (0..out.groups).filter(|&g| g != reference_group) {
        let members: Vec<usize> = rated
            .iter()
            .copied()
            .filter(|&i| out.group[i] == g)
            .collect();
        if members.is_empty() {
            continue;
        }
        let k = members.len() as f64;
        let mean = members.iter().map(|&i| out.elo[i]).sum::<f64>() / k;
        let rowmean: Vec<f64> = members
            .iter()
            .map(|&i| members.iter().map(|&j| cov(i, j)).sum::<f64>() / k)
            .collect();
        let all = rowmean.iter().sum::<f64>() / k;
        // Every member's row and column cleared first, then the block
        // filled: clearing member by member would wipe the cross-terms
        // already filled for the earlier ones.
        for &i in &members {
            for j in 0..n {
                tcov[i * n + j] = 0.0;
                tcov[j * n + i] = 0.0;
            }
        }
        for (x, &i) in members.iter().enumerate() {
            elo[i] = out.elo[i] - mean + scale.elo;
            for (y, &j) in members.iter().enumerate() {
                tcov[i * n + j] = cov(i, j) - rowmean[x] - rowmean[y] + all;
            }
        }
    }
}

/// Each bot's line of the table, by bot index: its rating on the scale
/// (`elo`, `tcov`) with its interval, the quasi-likelihood standard error
/// (from `quasi`), flag, group and counts.
fn bot_ratings(
    ev: &stats::Evidence,
    group: Option<usize>,
    out: &fit::FitOutput,
    elo: &[f64],
    tcov: &[f64],
    quasi: &[f64],
) -> Vec<BotRating> {
    let n = ev.bots.len();
    let z = z_value();
    let counts = ev.bot_counts(group);
    (0..n)
        .map(|i| {
            let c = counts[i].clone();
            let se = tcov[i * n + i].max(0.0).sqrt();
            BotRating {
                bot: ev.bots[i].clone(),
                rated: out.rated[i],
                elo: elo[i],
                elo_low: elo[i] - z * se,
                elo_high: elo[i] + z * se,
                elo_se: se,
                elo_se_dispersion: quasi[i * n + i].max(0.0).sqrt(),
                flag: flag_of(out, i),
                group: out.group[i],
                count: c,
            }
        })
        .collect()
}

/// Why bot `i`'s rating needs a second look, if it does.
fn flag_of(out: &fit::FitOutput, i: usize) -> Flag {
    if !out.rated[i] {
        Flag::Unrated
    } else if out.group[i] != 0 {
        Flag::Disconnected
    } else if out.regularized && !out.conceded[i] {
        Flag::AllWins
    } else if out.regularized && !out.scored[i] {
        Flag::AllLosses
    } else if out.leans_on_prior[i] {
        Flag::Prior
    } else {
        Flag::None
    }
}

/// The table's order: rated by Elo (best first, ties by name), unrated
/// last by name; the ratings and their covariance `tcov` in that order.
/// Groups of bots that never met cannot be compared: the reference group
/// first, then each other group in turn, so that a rank never puts a
/// bot above another it cannot be compared with.
fn ranked(mut ratings: Vec<BotRating>, tcov: &[f64]) -> (Vec<BotRating>, Vec<f64>) {
    let n = ratings.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (&ratings[a], &ratings[b]);
        rb.rated
            .cmp(&ra.rated)
            .then(ra.group.cmp(&rb.group))
            .then(rb.elo.total_cmp(&ra.elo))
            .then(ra.bot.cmp(&rb.bot))
    });
    let mut sorted_cov = vec![0.0; n * n];
    for (x, &i) in order.iter().enumerate() {
        for (y, &j) in order.iter().enumerate() {
            sorted_cov[x * n + y] = tcov[i * n + j];
        }
    }
    let mut taken: Vec<Option<BotRating>> = ratings.drain(..).map(Some).collect();
    let ratings = order.iter().filter_map(|&i| taken[i].take()).collect();
    (ratings, sorted_cov)
}

#[cfg(test)]
mod tests;
