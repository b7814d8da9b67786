//! What `index.html` shows, ready for its template: every number formatted
//! here from the ratings' `Report` (the same computation as the CSV tables),
//! the page's counts of every game (`Counts`, made as the rows are read)
//! and the games the viewer holds; the template only lays it out.

use super::replay::GameMeta;
use crate::ratings::{variant_label, Report, Standings, VariantStats, ALL, CONFIDENCE};
use crate::results::GameRow;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Forfeits listed one by one on the page (the rest are in the game lists).
pub(super) const FORFEITS_LISTED: usize = 300;
/// Damaged records listed by name.
const NOTES_LISTED: usize = 100;
/// Bots in a crosstable: the best of its table (a league of 1,000 bots
/// would have a million cells per variant); every bot's whole row is on
/// its page.
pub const CROSS_TOP: usize = 30;
/// Rows of a standings table shown at a time (the page's script pages
/// through the rest; the rows after the first page start hidden, so that
/// a table of 1,000 bots is not laid out whole when the page opens).
const ROWS_PER_PAGE: usize = 50;

/// What the page of a running league says after its count of games: the
/// element `running` also tells the page's script to reload it now and
/// then. [`super::mark_stopped`] takes it out of the page of a league
/// stopped before its end.
pub const LIVE_NOTE: &str =
    r#"<strong class="live" id="running">running</strong> (this page reloads itself)"#;

/// What [`LIVE_NOTE`] becomes when the league stopped before its end.
pub const STOPPED_NOTE: &str = r#"<strong class="live">stopped</strong> before its last game (resuming the league, or <code>arena report</code> of its folder, brings this page up to date)"#;

#[derive(Serialize)]
pub struct Page {
    title: String,
    generated: String,
    /// When the page was written (unix seconds): the page of a running
    /// league says when it is old (its run may have been killed).
    generated_unix: u64,
    live: bool,
    live_note: &'static str,
    stopped: Option<String>,
    games: usize,
    scheduled: Option<usize>,
    sprt: Option<String>,
    decided: bool,
    format: Option<(String, String)>,
    bots: usize,
    confidence: String,
    warnings: Vec<String>,
    standings: Vec<Table>,
    crosstables: Vec<Cross>,
    variants: Vec<VariantView>,
    forfeits: Forfeits,
    notes: Vec<(String, String, String)>,
    notes_total: usize,
    rows_per_page: usize,
    /// The games whose viewer data the report holds, when not all (the
    /// default: a sample, `super::sample`).
    sample: Option<SampleNote>,
    /// Games not in the report are served by `arena view` (its pages).
    on_demand: bool,
    /// The data the page's script needs, as JSON.
    data: serde_json::Value,
}

/// How many games the report's viewer holds, of how many, and the rule.
#[derive(Serialize)]
pub struct SampleNote {
    pub shown: usize,
    pub total: usize,
    pub rule: String,
}

#[derive(Serialize)]
struct Table {
    label: String,
    title: String,
    anchor: String,
    notes: Vec<String>,
    rows: Vec<Row>,
    /// The Elo axis of the interval bars.
    axis_lo: String,
    axis_hi: String,
    zero: f64,
}

#[derive(Serialize)]
struct Row {
    rank: String,
    bot: String,
    href: String,
    elo: String,
    elo_sort: f64,
    pm: String,
    interval: String,
    /// Interval bar: left and width in % of the axis, the dot's position.
    bar: Option<(f64, f64, f64)>,
    games: u64,
    wdl: String,
    score: String,
    draws: String,
    forfeits: u64,
    forfeit_text: String,
    forfeit_href: String,
    los: String,
    los_sort: f64,
    flag: String,
}

#[derive(Serialize)]
struct Cross {
    label: String,
    anchor: String,
    bots: Vec<(String, String)>,
    rows: Vec<CrossRow>,
    /// The bots shown, of the table's bots.
    shown: usize,
    of: usize,
}

#[derive(Serialize)]
struct CrossRow {
    bot: String,
    href: String,
    cells: Vec<Cell>,
}

#[derive(Serialize, Default)]
struct Cell {
    text: String,
    color: String,
    title: String,
    href: String,
}

#[derive(Serialize)]
struct VariantView {
    label: String,
    anchor: String,
    players: u8,
    games: u64,
    draws: u64,
    draw_pct: String,
    first_seat: String,
    seat_interval: String,
    plies: String,
    duration: String,
    forfeits: u64,
    forfeits_href: String,
    games_href: String,
    reasons: Vec<(String, u64, String, f64, String)>,
    hist: Hist,
}

#[derive(Serialize, Default)]
struct Hist {
    /// (x, y, width, height, title) in the SVG's units.
    bars: Vec<(f64, f64, f64, f64, String)>,
    ticks: Vec<(f64, String)>,
    max: u64,
}

/// A reason, its count and the link to its games.
type Counted = (String, u64, String);

#[derive(Serialize, Default)]
struct Forfeits {
    total: usize,
    /// Bot page link, bot, forfeits, by reason.
    by_bot: Vec<(String, String, u64, Vec<Counted>)>,
    list: Vec<ForfeitRow>,
}

#[derive(Serialize)]
struct ForfeitRow {
    game_id: String,
    href: String,
    bot: String,
    label: String,
    reason: String,
    detail: String,
}

/// A bot's page: written to a file of its own (`bots/bNNNN.js`), loaded
/// when it is first shown, so that the report's page does not grow with
/// the square of the bots. Its results against each opponent are data
/// (`opponents`, a short array each, with the `labels` they name), laid
/// out by the page's script: a league of 1,000 bots that all meet has
/// two million such lines, 400 MB as HTML (issue 34).
#[derive(Serialize)]
pub struct BotPage<'a> {
    pub bot: String,
    /// Its file, relative to the report's folder.
    pub file: String,
    anchor: String,
    games_href: String,
    ratings: Vec<BotLine>,
    #[serde(skip)]
    pub opponents: Vec<OppLine<'a>>,
    /// The variant labels the opponents' lines name: the title shown and
    /// the label of the game list's links (empty: every variant).
    #[serde(skip)]
    pub labels: Vec<(String, String)>,
    forfeits: Vec<Counted>,
}

#[derive(Serialize)]
struct BotLine {
    label: String,
    rank: String,
    elo: String,
    interval: String,
    games: u64,
    score: String,
    draws: String,
    forfeits: u64,
    flag: String,
}

/// A bot's results against one opponent in one variant label, as the
/// page's script reads them: the label (an index into `BotPage::labels`),
/// the opponent, W-D-L, score %, pentanomial counts, pentanomial Elo and
/// LOS %.
#[derive(Serialize)]
pub struct OppLine<'a>(usize, &'a str, String, String, String, String, String);

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}", 100.0 * x)
    } else {
        String::new()
    }
}

fn elo_text(x: f64) -> String {
    // Never `-0`.
    format!("{:.0}", x.round() + 0.0)
}

fn title_of(label: &str) -> String {
    if label == ALL {
        "All variants".into()
    } else {
        label.to_string()
    }
}

pub fn bot_href(bot: &str) -> String {
    format!("#bot={}", frag(bot))
}

fn games_href(pairs: &[(&str, &str)]) -> String {
    let mut s = "#games".to_string();
    for (k, v) in pairs {
        s.push('&');
        s.push_str(k);
        s.push('=');
        s.push_str(&frag(v));
    }
    s
}

/// The label's argument in game-list links (`all` filters nothing).
fn label_arg(label: &str) -> Vec<(&'static str, &str)> {
    if label == ALL {
        Vec::new()
    } else {
        vec![("label", label)]
    }
}

fn table(st: &Standings) -> Table {
    let rated: Vec<_> = st.ratings.iter().filter(|r| r.rated).collect();
    let mut lo = rated
        .iter()
        .map(|r| r.elo_low)
        .filter(|x| x.is_finite())
        .fold(f64::INFINITY, f64::min);
    let mut hi = rated
        .iter()
        .map(|r| r.elo_high)
        .filter(|x| x.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() || hi - lo < 1.0 {
        (lo, hi) = (-100.0, 100.0);
    }
    let pad = (hi - lo) * 0.05;
    let (lo, hi) = (lo - pad, hi + pad);
    let at = |x: f64| (100.0 * (x - lo) / (hi - lo)).clamp(0.0, 100.0);
    let mut rank = 0;
    let rows = st
        .ratings
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let c = &r.count;
            let next = st.ratings.get(i + 1).filter(|n| n.rated);
            let los = next.and_then(|n| st.los(&r.bot, &n.bot));
            let (rk, elo, pm, interval, bar) = if r.rated {
                rank += 1;
                (
                    rank.to_string(),
                    elo_text(r.elo),
                    format!("{:.0}", (r.elo_high - r.elo_low) / 2.0),
                    format!("[{}, {}]", elo_text(r.elo_low), elo_text(r.elo_high)),
                    Some((
                        at(r.elo_low),
                        (at(r.elo_high) - at(r.elo_low)).max(0.5),
                        at(r.elo),
                    )),
                )
            } else {
                ("-".into(), "-".into(), String::new(), String::new(), None)
            };
            let mut fa = vec![("bot", r.bot.as_str()), ("forfeit", "any")];
            fa.extend(label_arg(&st.variant));
            Row {
                rank: rk,
                href: bot_href(&r.bot),
                bot: r.bot.clone(),
                elo,
                elo_sort: if r.rated { r.elo } else { f64::MIN },
                pm,
                interval,
                bar,
                games: c.games,
                wdl: format!("{}-{}-{}", c.wins, c.draws, c.losses),
                score: pct(c.score()),
                draws: pct(c.draw_rate()),
                forfeits: c.forfeits,
                forfeit_text: c
                    .forfeit_reasons
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                forfeit_href: games_href(&fa),
                los: los.map_or(String::new(), pct),
                los_sort: los.unwrap_or(-1.0),
                flag: r.flag.as_str().to_string(),
            }
        })
        .collect();
    let mut notes = Vec::new();
    if st.regularized {
        notes.push(
            "Someone won or lost every game against a group of bots: the groups are placed as if \
             one game between them had been a draw (the half-point rule of Ordo's manual); flagged ratings rest on that rule."
                .to_string(),
        );
    }
    if st.groups > 1 {
        notes.push(format!(
            "These bots form {} groups that never met, even through others: ratings of different \
             groups cannot be compared.",
            st.groups
        ));
    }
    Table {
        label: st.variant.clone(),
        title: title_of(&st.variant),
        anchor: format!("st-{}", frag(&st.variant)),
        notes,
        rows,
        axis_lo: elo_text(lo),
        axis_hi: elo_text(hi),
        zero: at(0.0),
    }
}

/// A score in [0, 1] as a heatmap colour (red: 0, white: 0.5, green: 1).
fn heat(s: f64) -> String {
    let t = (s - 0.5).clamp(-0.5, 0.5) * 2.0;
    let (r, g, b) = if t >= 0.0 {
        (255.0 - 155.0 * t, 255.0 - 55.0 * t, 255.0 - 155.0 * t)
    } else {
        (255.0, 255.0 + 155.0 * t, 255.0 + 155.0 * t)
    };
    format!("rgb({:.0},{:.0},{:.0})", r, g, b)
}

/// A pair's head-to-head seen from one of its bots: from `bot_a`'s side,
/// or turned around (`flip`) from `bot_b`'s.
struct Sided {
    w: u64,
    l: u64,
    score: f64,
    /// `[LL, LD, WL+DD, WD, WW]` from this side.
    penta: [u64; 5],
    /// What an Elo difference of `bot_a` over `bot_b` is multiplied by.
    sign: f64,
    los: Option<f64>,
}

impl Sided {
    fn of(p: &crate::ratings::PairCount, flip: bool) -> Sided {
        let mut penta = p.penta;
        if flip {
            penta.reverse();
        }
        Sided {
            w: if flip { p.b_wins } else { p.a_wins },
            l: if flip { p.a_wins } else { p.b_wins },
            score: if flip { 1.0 - p.a_score() } else { p.a_score() },
            penta,
            sign: if flip { -1.0 } else { 1.0 },
            los: p.los.map(|l| if flip { 1.0 - l } else { l }),
        }
    }
}

/// The crosstable of table `st`: its first `CROSS_TOP` bots (the table's
/// order: by rating), each against each.
fn cross(report: &Report, st: &Standings) -> Cross {
    let label = st.variant.as_str();
    let all: Vec<&str> = st.ratings.iter().map(|r| r.bot.as_str()).collect();
    let bots: Vec<String> = all.iter().take(CROSS_TOP).map(|b| b.to_string()).collect();
    let pairs: HashMap<(&str, &str), &crate::ratings::PairCount> = report
        .pairs()
        .filter(|p| p.variant == label)
        .map(|p| ((p.bot_a.as_str(), p.bot_b.as_str()), p))
        .collect();
    let rows = bots
        .iter()
        .map(|a| {
            let cells = bots
                .iter()
                .map(|b| {
                    let (p, flip) = match (
                        pairs.get(&(a.as_str(), b.as_str())),
                        pairs.get(&(b.as_str(), a.as_str())),
                    ) {
                        (Some(p), _) => (*p, false),
                        (None, Some(p)) => (*p, true),
                        _ => return Cell::default(),
                    };
                    if p.results == 0 || a == b {
                        return Cell::default();
                    }
                    let Sided {
                        w,
                        l,
                        score,
                        penta,
                        sign,
                        los,
                    } = Sided::of(p, flip);
                    let mut title = format!(
                        "{a} vs {b} ({label}): {} results, {w}-{}-{l} (W-D-L), score {}%",
                        p.results,
                        p.draws,
                        pct(score)
                    );
                    if p.pairs() > 0 {
                        title.push_str(&format!(
                            "\npentanomial (LL, LD, WL+DD, WD, WW) over {} seat-swap pairs: {:?}",
                            p.pairs(),
                            penta
                        ));
                    }
                    if let (Some(e), Some(err)) = (p.penta_elo, p.penta_elo_err) {
                        title.push_str(&format!(
                            "\npentanomial Elo {} ± {:.1}",
                            signed(sign * e, 1),
                            err
                        ));
                    }
                    if let Some(d) = p.elo_diff {
                        title.push_str(&format!("\nElo difference {}", signed(sign * d, 1)));
                    }
                    if let Some(los) = los {
                        title.push_str(&format!("\nLOS {}%", pct(los)));
                    }
                    let mut args = vec![("bot", a.as_str()), ("vs", b.as_str())];
                    args.extend(label_arg(label));
                    Cell {
                        text: format!("{:.0}", 100.0 * score),
                        color: heat(score),
                        title,
                        href: games_href(&args),
                    }
                })
                .collect();
            CrossRow {
                bot: a.clone(),
                href: bot_href(a),
                cells,
            }
        })
        .collect();
    Cross {
        label: title_of(label),
        anchor: format!("x-{}", frag(label)),
        bots: bots
            .iter()
            .enumerate()
            .map(|(i, b)| (format!("{}", i + 1), b.clone()))
            .collect(),
        rows,
        shown: bots.len(),
        of: all.len(),
    }
}

/// The histogram of games' lengths from their counts (plies -> games).
fn histogram(plies: &BTreeMap<u32, u64>) -> Hist {
    let (Some((&min, _)), Some((&max, _))) = (plies.first_key_value(), plies.last_key_value())
    else {
        return Hist::default();
    };
    // A round bin width giving at most 30 bins.
    let span = u64::from(max - min) + 1;
    let mut width = 1u64;
    for w in [
        1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000,
    ] {
        width = w;
        if span.div_ceil(w) <= 30 {
            break;
        }
    }
    let start = u64::from(min) / width * width;
    let bins = ((u64::from(max) - start) / width + 1) as usize;
    let mut counts = vec![0u64; bins];
    for (&p, &n) in plies {
        counts[((u64::from(p) - start) / width) as usize] += n;
    }
    let top = counts.iter().copied().max().unwrap_or(1).max(1);
    let (w, h) = (300.0, 100.0);
    let bw = w / bins as f64;
    let bars = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let lo = start + i as u64 * width;
            let bh = h * c as f64 / top as f64;
            let range = if width == 1 {
                format!("{lo} plies")
            } else {
                format!("{lo}-{} plies", lo + width - 1)
            };
            (
                i as f64 * bw,
                h - bh,
                (bw - 1.0).max(0.5),
                bh,
                format!("{range}: {c} games"),
            )
        })
        .collect();
    let step = bins.div_ceil(5).max(1);
    let ticks = (0..bins)
        .step_by(step)
        .map(|i| (i as f64 * bw, (start + i as u64 * width).to_string()))
        .collect();
    Hist {
        bars,
        ticks,
        max: top,
    }
}

/// A variant and its number of players (a variant label's parts).
type LabelKey = (String, u8);

/// What the page shows of every game (not only of those in the viewer),
/// counted as the rows are read, one at a time: the games, each label's
/// lengths, the forfeits by bot and reason, and the first
/// `FORFEITS_LISTED` forfeits, listed one by one.
#[derive(Default)]
pub struct Counts {
    games: usize,
    /// (variant, players) -> label and its games' lengths (plies ->
    /// games); a handful, searched in order.
    plies: Vec<(LabelKey, String, BTreeMap<u32, u64>)>,
    forfeits_by_bot: BTreeMap<String, BTreeMap<String, u64>>,
    forfeits: usize,
    /// The forfeits listed: game id, bot, label, reason.
    listed: Vec<(String, String, String, String)>,
}

impl Counts {
    /// Counts the next game; true when it is one of the forfeits listed.
    pub fn add(&mut self, r: &GameRow) -> bool {
        self.games += 1;
        let k = match self
            .plies
            .iter()
            .position(|((v, p), _, _)| *p == r.players && *v == r.variant)
        {
            Some(k) => k,
            None => {
                let key = (r.variant.clone(), r.players);
                self.plies.push((key, variant_label(r), BTreeMap::new()));
                self.plies.len() - 1
            }
        };
        *self.plies[k].2.entry(r.plies).or_default() += 1;
        let Some(seat) = r.offender else {
            return false;
        };
        let bot = r.seats().get(usize::from(seat)).copied().unwrap_or("?");
        let reasons = match self.forfeits_by_bot.get_mut(bot) {
            Some(m) => m,
            None => self.forfeits_by_bot.entry(bot.to_string()).or_default(),
        };
        match reasons.get_mut(&r.reason) {
            Some(n) => *n += 1,
            None => {
                reasons.insert(r.reason.clone(), 1);
            }
        }
        self.forfeits += 1;
        if self.listed.len() >= FORFEITS_LISTED {
            return false;
        }
        let label = self.plies[k].1.clone();
        self.listed
            .push((r.game_id.clone(), bot.to_string(), label, r.reason.clone()));
        true
    }

    /// Games counted.
    pub fn games(&self) -> usize {
        self.games
    }

    /// Each label's lengths (plies -> games), labels merged.
    fn plies_by_label(&self) -> BTreeMap<&str, BTreeMap<u32, u64>> {
        let mut out: BTreeMap<&str, BTreeMap<u32, u64>> = BTreeMap::new();
        for (_, label, counts) in &self.plies {
            let m = out.entry(label.as_str()).or_default();
            for (&p, &n) in counts {
                *m.entry(p).or_default() += n;
            }
        }
        out
    }
}

/// Bot `k`'s page's file (in the overall table's order).
fn bot_file(k: usize) -> String {
    format!("bots/b{k:04}.js")
}

/// The bots' pages of a report's page, each made when asked for (by its
/// place in the overall table): a league of 1,000 bots that all meet has
/// two million lines of results, never all in memory.
pub struct BotPages<'a> {
    report: &'a Report,
    index: BotIndex<'a>,
}

impl<'a> BotPages<'a> {
    /// The pages of `page`, made from `report`.
    pub fn of(report: &'a Report, page: &'a Page) -> Self {
        BotPages {
            report,
            index: BotIndex::of(report, &page.forfeits),
        }
    }

    /// Bots (pages).
    pub fn bots(&self) -> usize {
        self.report.overall.ratings.len()
    }

    /// The page of the `k`th bot of the overall table.
    pub fn page(&self, k: usize) -> Option<BotPage<'a>> {
        let r = self.report.overall.ratings.get(k)?;
        Some(bot_page(self.report, &self.index, &r.bot, bot_file(k)))
    }
}

/// The report's page model from the rated tables (the bots' pages are
/// `bot_pages`).
#[allow(clippy::too_many_arguments)]
pub fn page(
    report: &Report,
    seat: Option<&Standings>,
    counts: &Counts,
    shown: &[GameRow],
    metas: &[GameMeta],
    opts: &Options,
    stamp: &str,
    warnings: &[String],
    sample: Option<SampleNote>,
) -> Page {
    let standings: Vec<Table> = std::iter::once(&report.overall)
        .chain(&report.per_variant)
        .map(table)
        .collect();
    // One crosstable per label, the overall table's (`all`) first.
    let mut labels = std::collections::BTreeSet::new();
    let crosstables = std::iter::once(&report.overall)
        .chain(&report.per_variant)
        .filter(|st| labels.insert(st.variant.as_str()))
        .map(|st| cross(report, st))
        .collect();
    let forfeits = forfeits_of(counts, shown, metas);
    // Pairs, not an object: a bot may be named `__proto__`.
    let files: Vec<(&str, String)> = report
        .overall
        .ratings
        .iter()
        .enumerate()
        .map(|(k, r)| (r.bot.as_str(), format!("{}?v={stamp}", bot_file(k))))
        .collect();
    let damaged = damaged(shown, metas);
    let data = serde_json::json!({
        "index": format!("games/index.js?v={stamp}"),
        "stamp": stamp,
        "games": counts.games,
        "bots": files,
        "rows": ROWS_PER_PAGE,
        "sample": sample,
        "on_demand": opts.on_demand.then_some("games/one/"),
    });
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let page = Page {
        title: if opts.title.is_empty() {
            "League report".into()
        } else {
            opts.title.clone()
        },
        generated: utc_text(now),
        generated_unix: now,
        live: opts.live,
        live_note: LIVE_NOTE,
        stopped: opts.stopped.clone(),
        games: counts.games,
        scheduled: opts.scheduled,
        sprt: opts.sprt.clone(),
        decided: opts.decided,
        format: opts.format.clone(),
        bots: report.overall.ratings.len(),
        confidence: format!("{:.0}%", CONFIDENCE * 100.0),
        warnings: warnings.to_vec(),
        standings,
        crosstables,
        variants: variant_views(report, seat, counts),
        forfeits,
        notes_total: damaged.len(),
        notes: damaged.into_iter().take(NOTES_LISTED).collect(),
        rows_per_page: ROWS_PER_PAGE,
        sample,
        on_demand: opts.on_demand,
        data,
    };
    page
}

/// The variants' section: a view per variant label of `report`, with the
/// seat advantage of the `seat` fit and the histogram of the games'
/// lengths (`counts`).
fn variant_views(report: &Report, seat: Option<&Standings>, counts: &Counts) -> Vec<VariantView> {
    let plies = counts.plies_by_label();
    report
        .variants
        .iter()
        .map(|v| {
            let reasons = by_count(&v.reasons)
                .into_iter()
                .map(|(r, n)| {
                    let share = n as f64 / v.games.max(1) as f64;
                    let mut args = label_arg(&v.variant);
                    args.push(("reason", &r));
                    let href = games_href(&args);
                    (r.clone(), n, pct(share), 100.0 * share, href)
                })
                .collect();
            let mut fa = label_arg(&v.variant);
            fa.push(("forfeit", "any"));
            VariantView {
                label: v.variant.clone(),
                anchor: format!("v-{}", frag(&v.variant)),
                players: v.players,
                games: v.games,
                draws: v.draws,
                draw_pct: pct(v.draw_rate()),
                first_seat: pct(v.first_seat_score),
                seat_interval: seat_interval(v, seat),
                plies: format!(
                    "mean {:.1}, median {:.0}, {} to {}",
                    v.plies_mean, v.plies_median, v.plies_min, v.plies_max
                ),
                duration: format!("{:.1} ms", v.duration_ms_mean),
                forfeits: v.forfeits,
                forfeits_href: games_href(&fa),
                games_href: games_href(&label_arg(&v.variant)),
                reasons,
                hist: plies
                    .get(v.variant.as_str())
                    .map_or_else(Hist::default, histogram),
            }
        })
        .collect()
}

/// Variant `v`'s first-seat advantage in words, from the fit that models
/// it (`seat`, the overall table fitted with a seat advantage): its
/// interval, or why it has none.
fn seat_interval(v: &VariantStats, seat: Option<&Standings>) -> String {
    let seat_elo = seat
        .and_then(|s| s.seat_advantage.iter().find(|x| x.0 == v.variant))
        .map(|x| (x.1, x.2, x.3));
    let to_score = |e: f64| first_seat_score(v.players, e);
    let elo = |e: f64| signed(e, 0);
    match seat_elo {
        Some((e, lo, hi)) => format!(
            "{} Elo [{}, {}] (the report fits it, as `arena rate --seat-advantage` does; a league's variants.csv has it only from such a fit): an expected first-seat score of {}% [{}, {}] between equal bots",
            elo(e),
            elo(lo),
            elo(hi),
            pct(to_score(e)),
            pct(to_score(lo)),
            pct(to_score(hi))
        ),
        None => seat
            .and_then(|s| s.seat_unbounded.iter().find(|x| x.0 == v.variant))
            .map(|(_, score)| {
                format!(
                    "unbounded: the first seat scored {}% of the points and the games leave its advantage without bound, so the model has no finite estimate",
                    pct(*score)
                )
            })
            .unwrap_or_default(),
    }
}

/// The forfeits' section: by bot and reason (`counts`), then one by one
/// with the detail (`metas` of the games in the viewer, `shown`).
fn forfeits_of(counts: &Counts, shown: &[GameRow], metas: &[GameMeta]) -> Forfeits {
    let detail: HashMap<&str, &GameMeta> = shown
        .iter()
        .zip(metas)
        .map(|(r, m)| (r.game_id.as_str(), m))
        .collect();
    let mut forfeits = Forfeits {
        total: counts.forfeits,
        ..Forfeits::default()
    };
    forfeits.list = counts
        .listed
        .iter()
        .map(|(id, bot, label, reason)| ForfeitRow {
            href: format!("#game={}", frag(id)),
            game_id: id.clone(),
            bot: bot.clone(),
            label: label.clone(),
            reason: reason.clone(),
            detail: detail
                .get(id.as_str())
                .and_then(|m| m.detail.clone())
                .unwrap_or_default(),
        })
        .collect();
    let by_bot = &counts.forfeits_by_bot;
    forfeits.by_bot = by_bot
        .iter()
        .map(|(bot, m)| {
            let total = m.values().sum();
            let reasons = by_count(m)
                .into_iter()
                .map(|(r, n)| {
                    let href = games_href(&[("bot", bot), ("forfeit", &r)]);
                    (r, n, href)
                })
                .collect();
            (bot_href(bot), bot.clone(), total, reasons)
        })
        .collect();
    forfeits
}

/// The games whose record is missing or damaged: id, link, note.
fn damaged(rows: &[GameRow], metas: &[GameMeta]) -> Vec<(String, String, String)> {
    rows.iter()
        .zip(metas)
        .filter_map(|(r, m)| {
            m.note.as_ref().map(|n| {
                (
                    r.game_id.clone(),
                    format!("#game={}", frag(&r.game_id)),
                    n.clone(),
                )
            })
        })
        .collect()
}

/// A table's bots: name -> (place in the table, rank among the rated).
type Places<'a> = HashMap<&'a str, (usize, usize)>;

/// Where each bot is in the report, found once for all its pages (a scan
/// per bot would make the pages quadratic to cubic in the bots): per table,
/// its first rating with its rank among the rated so far; the pairs it
/// played with results, in the report's order; its forfeits by reason.
struct BotIndex<'a> {
    /// Per table (overall, then per variant): bot -> (place, rank); and
    /// the number of rated bots.
    tables: Vec<(Places<'a>, usize)>,
    pairs: HashMap<&'a str, Vec<&'a crate::ratings::PairCount>>,
    forfeits: HashMap<&'a str, &'a Vec<Counted>>,
}

impl<'a> BotIndex<'a> {
    fn of(report: &'a Report, forfeits: &'a Forfeits) -> Self {
        let tables = std::iter::once(&report.overall)
            .chain(&report.per_variant)
            .map(|st| {
                let (mut at, mut rank) = (HashMap::new(), 0);
                for (k, r) in st.ratings.iter().enumerate() {
                    if r.rated {
                        rank += 1;
                    }
                    at.entry(r.bot.as_str()).or_insert((k, rank));
                }
                (at, rank)
            })
            .collect();
        let mut pairs: HashMap<&str, Vec<_>> = HashMap::new();
        for p in report.pairs().filter(|p| p.results > 0) {
            pairs.entry(p.bot_a.as_str()).or_default().push(p);
            if p.bot_b != p.bot_a {
                pairs.entry(p.bot_b.as_str()).or_default().push(p);
            }
        }
        let mut by_bot = HashMap::new();
        for (_, b, _, r) in &forfeits.by_bot {
            by_bot.entry(b.as_str()).or_insert(r);
        }
        BotIndex {
            tables,
            pairs,
            forfeits: by_bot,
        }
    }
}

fn bot_page<'a>(report: &'a Report, index: &BotIndex<'a>, bot: &str, file: String) -> BotPage<'a> {
    let forfeits: &[Counted] = index.forfeits.get(bot).map_or(&[], |r| r.as_slice());
    let ratings = std::iter::once(&report.overall)
        .chain(&report.per_variant)
        .zip(&index.tables)
        .filter_map(|(st, (at, rated))| {
            let &(k, rank) = at.get(bot)?;
            let r = &st.ratings[k];
            (r.count.games > 0).then(|| BotLine {
                label: title_of(&st.variant),
                rank: if r.rated {
                    format!("{rank} of {rated}")
                } else {
                    "-".into()
                },
                elo: if r.rated { elo_text(r.elo) } else { "-".into() },
                interval: if r.rated {
                    format!("[{}, {}]", elo_text(r.elo_low), elo_text(r.elo_high))
                } else {
                    String::new()
                },
                games: r.count.games,
                score: pct(r.count.score()),
                draws: pct(r.count.draw_rate()),
                forfeits: r.count.forfeits,
                flag: r.flag.as_str().to_string(),
            })
        })
        .collect();
    let mut labels: Vec<(String, String)> = Vec::new();
    let opponents = index
        .pairs
        .get(bot)
        .map_or(&[][..], |v| v.as_slice())
        .iter()
        .map(|p| {
            let flip = p.bot_b == bot;
            let opp = if flip { &p.bot_a } else { &p.bot_b };
            let Sided {
                w,
                l,
                score,
                penta,
                sign,
                los,
            } = Sided::of(p, flip);
            let label = match labels.iter().position(|(_, l)| *l == p.variant) {
                Some(k) => k,
                None => {
                    labels.push((title_of(&p.variant), p.variant.clone()));
                    labels.len() - 1
                }
            };
            OppLine(
                label,
                opp.as_str(),
                format!("{w}-{}-{l}", p.draws),
                pct(score),
                if p.pairs() > 0 {
                    let [a, b, c, d, e] = penta;
                    format!("{a} {b} {c} {d} {e}")
                } else {
                    "none".to_string()
                },
                penta_elo_cell(p, sign),
                los.map_or(String::new(), pct),
            )
        })
        .collect();
    // The game lists' links name no label for the overall table's pairs.
    for (_, l) in &mut labels {
        if l == ALL {
            l.clear();
        }
    }
    BotPage {
        bot: bot.to_string(),
        file,
        anchor: format!("bot-{}", frag(bot)),
        games_href: games_href(&[("bot", bot)]),
        ratings,
        opponents,
        labels,
        forfeits: forfeits.to_vec(),
    }
}

/// The expected score of seat 0 between equal bots under a seat advantage
/// of `elo`. Two players: the Elo formula. Three (Luce's model of who won,
/// docs/ratings.md): seat 0 wins with 10^(h/400) / (10^(h/400) + 2), and
/// scores a quarter in a game it does not win (a winner-only result: 1,
/// 1/4, 1/4).
fn first_seat_score(players: u8, elo: f64) -> f64 {
    match players {
        3 => {
            let a = 10f64.powf(elo / 400.0);
            let won = a / (a + 2.0);
            won + (1.0 - won) / 4.0
        }
        _ => 1.0 / (1.0 + 10f64.powf(-elo / 400.0)),
    }
}

/// `x` with its sign and `decimals` decimals; `+0.0`, never `-0.0`, for a
/// value that rounds to zero (a pair seen from its other side).
fn signed(x: f64, decimals: usize) -> String {
    let text = format!("{x:+.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => format!("+{rest}"),
        _ => text,
    }
}

/// A pair's pentanomial Elo from the side `sign` says, with its interval,
/// or why there is none (never a blank cell).
fn penta_elo_cell(p: &crate::ratings::PairCount, sign: f64) -> String {
    let gap = crate::ratings::penta_elo_gap(&p.penta);
    match (p.penta_elo, p.penta_elo_err, gap) {
        (Some(e), Some(err), _) => format!("{} ± {:.1}", signed(sign * e, 1), err),
        (Some(e), None, Some(why)) => format!("{}, no interval: {why}", signed(sign * e, 1)),
        (None, _, Some(why)) => format!("none: {why}"),
        _ => "none".to_string(),
    }
}

/// The time `secs` (unix seconds), UTC, as `YYYY-MM-DD HH:MM UTC`.
fn utc_text(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02} UTC")
}

/// What the report is of.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The league's name (the page title).
    pub title: String,
    /// The league is still running: the page says so and reloads itself.
    pub live: bool,
    /// The league stopped before its end and no run plays it: the
    /// command that resumes it (the page says it is stopped, and how to
    /// go on).
    pub stopped: Option<String>,
    /// Games the schedule holds, when known (shown as `done of total`).
    pub scheduled: Option<usize>,
    /// The verdict of the league's SPRT, if it has one, as `arena status`
    /// words it.
    pub sprt: Option<String>,
    /// That SPRT decided: the league ended there, not at `scheduled`.
    pub decided: bool,
    /// A Swiss's standings and rounds or a knockout's bracket, as the
    /// league wrote them (`swiss.txt`, `knockout.txt`): (title, text).
    pub format: Option<(String, String)>,
    /// Threads that build the viewer data (0 counts as 1).
    pub threads: usize,
    /// Every game's viewer data (`--all-games`), not only the sample's
    /// (`sample`).
    pub all_games: bool,
    /// The pages are served by `arena view`, which shows the games not in
    /// the report on demand (at `games/one/ID`).
    pub on_demand: bool,
}

/// `s` for a URL fragment's value: everything but letters, digits and
/// `-_.~` percent-encoded (the page's script decodes it).
pub fn frag(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Counts of a map, sorted by count (largest first), then by key.
fn by_count(m: &BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = m.iter().map(|(k, n)| (k.clone(), *n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_rounds_to_zero_is_plus_zero() {
        assert_eq!(signed(-0.0, 1), "+0.0");
        assert_eq!(signed(-0.04, 1), "+0.0");
        assert_eq!(signed(-0.4, 0), "+0");
        assert_eq!(signed(-0.06, 1), "-0.1");
        assert_eq!(signed(12.345, 1), "+12.3");
    }

    /// A 3-player label's expected first-seat score is Luce's (seat 0 wins
    /// with 10^(h/400) / (10^(h/400) + 2), a quarter otherwise), not the
    /// 2-player formula: +190.3 Elo gives 69.9%, not 74.9%.
    #[test]
    fn a_three_player_seat_advantage_reads_as_luce() {
        assert_eq!(pct(first_seat_score(3, 190.3)), "69.9");
        assert_eq!(pct(first_seat_score(2, 190.3)), "74.9");
        assert!((first_seat_score(3, 0.0) - 0.5).abs() < 1e-12);
    }

    fn counted(plies: &[u32]) -> BTreeMap<u32, u64> {
        let mut m = BTreeMap::new();
        for &p in plies {
            *m.entry(p).or_default() += 1;
        }
        m
    }

    #[test]
    fn the_histogram_counts_every_game_once() {
        let plies: Vec<u32> = (0..1000).map(|i| 20 + (i * 7) % 333).collect();
        let h = histogram(&counted(&plies));
        assert!(h.bars.len() <= 30 && !h.bars.is_empty());
        let total: u64 = h
            .bars
            .iter()
            .map(|b| {
                b.4.split(": ")
                    .nth(1)
                    .and_then(|s| s.split(' ').next())
                    .and_then(|s| s.parse::<u64>().ok())
                    .unwrap_or(0)
            })
            .sum();
        assert_eq!(total, 1000);
        assert!(histogram(&counted(&[])).bars.is_empty());
        assert_eq!(histogram(&counted(&[5, 5])).bars.len(), 1);
    }

    /// Issue 34: the page model and every bot's page of a round robin of
    /// 300 bots read the pairs a few times over (once per table and once
    /// for the bots' index), not once per bot or per cell: counted
    /// ([`crate::ratings::pairs_read`]), not timed.
    #[test]
    fn the_page_and_the_bots_pages_of_300_bots_read_the_pairs_a_few_times() {
        let report = crate::report::tables::round_robin(300);
        let before = crate::ratings::pairs_read();
        let opts = Options::default();
        let page = page(
            &report,
            None,
            &Counts::default(),
            &[],
            &[],
            &opts,
            "0",
            &[],
            None,
        );
        let pages = BotPages::of(&report, &page);
        let made = (0..pages.bots()).filter_map(|k| pages.page(k)).count();
        let read = crate::ratings::pairs_read() - before;
        assert_eq!(made, 300);
        let pairs = report.pairs().len() as u64;
        assert!(
            read <= 4 * pairs,
            "the page and the bots' pages read {read} pairs: more than four passes over the {pairs}"
        );
    }

    #[test]
    fn fragments_are_percent_encoded() {
        assert_eq!(frag("a b&c=d"), "a%20b%26c%3Dd");
        assert_eq!(frag("r001-kisolo-p000-o1"), "r001-kisolo-p000-o1");
    }
}
