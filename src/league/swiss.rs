//! The Swiss system (`format = "swiss"`, docs/league.md "Swiss"): who
//! meets whom in each round, from the results of the rounds before, and
//! the standings with their tie-breaks. Pure: no processes, no files; the
//! runner's source of games ([`super::pairings::SwissPairings`]) asks it
//! for each round once the round before is committed.
//!
//! One Swiss spans every variant: a round pairs the bots once by their
//! score over all variants, and each pairing plays its mini-match in
//! every 2-player variant; the 3-player variants seat the same ranking in
//! threes. A round is worth one point to each bot: its share of the points
//! of each of its mini-matches (a bye: all of them), averaged over the
//! variants.

use super::schedule::group_seed;
pub use exact::Exact;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// Steps (candidates tried, over every bye tried) the search for a
/// round's pairing without rematches may take before it gives up and
/// allows as few as a greedy pass gives. Each step sorts the free bots'
/// candidates, so this bounds a round's pairing at about this many sorts
/// of the field: enough to search every pairing of a dozen bots, while a
/// large field with a few rounds finds one at once.
pub const SEARCH_STEPS: u64 = 200_000;

/// Who plays whom in one round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundPairing {
    /// The 2-player tables, best-ranked table first; in each, the
    /// better-ranked bot first.
    pub pairs: Vec<(usize, usize)>,
    /// The bot without an opponent in the 2-player variants (an odd count).
    pub bye: Option<usize>,
    /// The 3-player tables, best-ranked first, by rank within.
    pub triples: Vec<[usize; 3]>,
    /// The bots without a table in the 3-player variants (1 or 2 when
    /// the count is not a multiple of three).
    pub bye3: Vec<usize>,
}

/// What the committed rounds say, as the pairing needs it: each bot's
/// score, whom it met, its byes.
#[derive(Clone, Debug)]
pub struct History {
    /// The bots in their initial order (drawn from the league's seed):
    /// who is ranked higher among equal scores.
    pub initial: Vec<usize>,
    /// Each bot's score as an exact fraction: what ties are decided by.
    exact: Vec<Exact>,
    /// How often each pair met at a 2-player table.
    met2: HashMap<(usize, usize), u32>,
    /// How often each pair sat at one 3-player table.
    met3: HashMap<(usize, usize), u32>,
    byes2: Vec<u32>,
    byes3: Vec<u32>,
}

fn key(a: usize, b: usize) -> (usize, usize) {
    (a.min(b), a.max(b))
}

impl History {
    /// A Swiss of `n` bots before its first round: the initial order is
    /// the bots shuffled by `seed` (no rating is known).
    pub fn new(n: usize, seed: u64) -> History {
        let mut initial: Vec<usize> = (0..n).collect();
        initial.shuffle(&mut ChaCha8Rng::seed_from_u64(group_seed(seed, "swiss")));
        History {
            initial,
            exact: vec![Exact::ZERO; n],
            met2: HashMap::new(),
            met3: HashMap::new(),
            byes2: vec![0; n],
            byes3: vec![0; n],
        }
    }

    /// Whether `a` and `b` met at a 2-player table.
    pub fn met(&self, a: usize, b: usize) -> bool {
        self.meetings(a, b) > 0
    }

    /// How many times `a` and `b` met at a 2-player table.
    pub fn meetings(&self, a: usize, b: usize) -> u32 {
        self.met2.get(&key(a, b)).copied().unwrap_or(0)
    }

    /// Whether `a` and `b` sat at one 3-player table.
    pub fn met3(&self, a: usize, b: usize) -> bool {
        self.meetings3(a, b) > 0
    }

    /// How many times `a` and `b` sat at one 3-player table.
    pub fn meetings3(&self, a: usize, b: usize) -> u32 {
        self.met3.get(&key(a, b)).copied().unwrap_or(0)
    }

    pub fn byes(&self, bot: usize) -> (u32, u32) {
        (self.byes2[bot], self.byes3[bot])
    }

    /// Adds a played round: its pairing and each bot's points in it
    /// (each float taken at its exact value).
    pub fn add(&mut self, round: &RoundPairing, points: &[f64]) {
        let points: Vec<Exact> = points.iter().map(|&p| Exact::from_f64(p)).collect();
        self.add_exact(round, &points);
    }

    /// Each bot's exact score.
    pub fn exact_score(&self, bot: usize) -> Exact {
        self.exact.get(bot).copied().unwrap_or_default()
    }

    /// Sets a bot's score (the tests' shortcut to a standing).
    #[cfg(test)]
    pub fn set_score(&mut self, bot: usize, score: f64) {
        self.exact[bot] = Exact::from_f64(score);
    }

    /// Adds a played round: its pairing and each bot's exact points in it.
    pub fn add_exact(&mut self, round: &RoundPairing, points: &[Exact]) {
        for &(a, b) in &round.pairs {
            *self.met2.entry(key(a, b)).or_insert(0) += 1;
        }
        for t in &round.triples {
            for (a, b) in [(t[0], t[1]), (t[0], t[2]), (t[1], t[2])] {
                *self.met3.entry(key(a, b)).or_insert(0) += 1;
            }
        }
        if let Some(b) = round.bye {
            self.byes2[b] += 1;
        }
        for &b in &round.bye3 {
            self.byes3[b] += 1;
        }
        for (bot, p) in points.iter().enumerate().take(self.exact.len()) {
            self.exact[bot] = self.exact[bot].plus(*p);
        }
    }

    /// The bots by rank: score, then initial order.
    pub fn ranking(&self) -> Vec<usize> {
        let mut order = self.initial.clone();
        // Stable: equal scores keep the initial order.
        order.sort_by(|&a, &b| self.exact[b].cmp(&self.exact[a]));
        order
    }
}

/// The pairing of the next round: 2-player tables if `two`, 3-player
/// tables if `three` (the league's variants say which it has).
pub fn pair_round(h: &History, two: bool, three: bool) -> RoundPairing {
    let ranking = h.ranking();
    let mut round = RoundPairing::default();
    if two {
        (round.pairs, round.bye) = pair_two(h, &ranking);
    }
    if three {
        (round.triples, round.bye3) = group_three(h, &ranking);
    }
    round
}

/// The Dutch system's score groups, rematches aside: from the top, each
/// group with the bot floated down from the group above first; its top
/// half is S1, its bottom half S2; the last of an odd group floats down
/// (FIDE C.04.3, without its colour and float criteria). Per bot: its
/// group and whether it is in S2.
fn halves(h: &History, ranking: &[usize]) -> Vec<(usize, bool)> {
    let mut out = vec![(usize::MAX, false); h.exact.len()];
    let mut floater: Option<usize> = None;
    let mut i = 0;
    let mut id = 0;
    while i < ranking.len() {
        let s = h.exact[ranking[i]];
        let mut group: Vec<usize> = floater.take().into_iter().collect();
        while i < ranking.len() && h.exact[ranking[i]] == s {
            group.push(ranking[i]);
            i += 1;
        }
        if group.len() % 2 == 1 && i < ranking.len() {
            floater = group.pop();
        }
        let half = group.len() / 2;
        for (k, &b) in group.iter().enumerate() {
            out[b] = (id, k >= half);
        }
        id += 1;
    }
    out
}

/// Each table with its better-ranked bot first, the tables by their
/// better-ranked bot.
fn order_tables(h: &History, ranking: &[usize], pairs: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let rank = ranks(h, ranking);
    let mut out: Vec<(usize, usize)> = pairs
        .into_iter()
        .map(|(a, b)| if rank[a] < rank[b] { (a, b) } else { (b, a) })
        .collect();
    out.sort_by_key(|&(a, _)| rank[a]);
    out
}

/// The opponents `p` would rather meet, best first, among `free`: those
/// of the other half of its score group in rank order (the Dutch
/// system's transpositions of S2, tried in lexicographic order by the
/// depth-first search), then those of its own half (exchanges), then the
/// other groups' by closeness of score, then rank.
fn candidates(
    h: &History,
    groups: &[(usize, bool)],
    rank: &[usize],
    p: usize,
    free: &[usize],
) -> Vec<usize> {
    let place = |q: usize| match groups[q] {
        (g, half) if g == groups[p].0 && half != groups[p].1 => 0,
        (g, _) if g == groups[p].0 => 1,
        _ => 2,
    };
    let mut c: Vec<usize> = free.iter().copied().filter(|&q| q != p).collect();
    c.sort_by(|&a, &b| {
        let da = h.exact[a].distance(h.exact[p]);
        let db = h.exact[b].distance(h.exact[p]);
        place(a)
            .cmp(&place(b))
            .then(da.cmp(&db))
            .then(rank[a].cmp(&rank[b]))
    });
    c
}

/// Ranks by bot, for `ranking`.
fn ranks(h: &History, ranking: &[usize]) -> Vec<usize> {
    let mut rank = vec![usize::MAX; h.exact.len()];
    for (i, &b) in ranking.iter().enumerate() {
        rank[b] = i;
    }
    rank
}

/// Pairs `ranking` (an even count, or with the bye chosen first): with no
/// rematch if the search finds such a pairing within [`SEARCH_STEPS`];
/// else with the fewest repeated meetings a second search finds
/// ([`fewest_rematches`]); past its steps too, as a greedy pass gives.
fn pair_two(h: &History, ranking: &[usize]) -> (Vec<(usize, usize)>, Option<usize>) {
    let byes: Vec<Option<usize>> = if ranking.len() % 2 == 1 {
        // The lowest-ranked of the bots with the fewest byes first (FIDE:
        // no second bye; the lowest score takes it). Only those: fair
        // byes come before avoiding a rematch.
        let fewest = ranking.iter().map(|&b| h.byes2[b]).min().unwrap_or(0);
        ranking
            .iter()
            .rev()
            .copied()
            .filter(|&b| h.byes2[b] == fewest)
            .map(Some)
            .collect()
    } else {
        vec![None]
    };
    let rest = |bye: Option<usize>| -> Vec<usize> {
        ranking
            .iter()
            .copied()
            .filter(|&b| Some(b) != bye)
            .collect()
    };
    // One budget for every bye tried.
    let mut steps = 0;
    for &bye in &byes {
        if let Some((_, p)) = search_pairs(h, &rest(bye), 0, &mut steps) {
            return (order_tables(h, ranking, p), bye);
        }
    }
    if let Some((p, bye)) = fewest_rematches(h, &byes, &rest) {
        return (order_tables(h, ranking, p), bye);
    }
    let bye = byes[0];
    (order_tables(h, ranking, greedy_pairs(h, &rest(bye))), bye)
}

/// The pairing with rematches, over the byes `byes` (each leaving the bots
/// `rest(bye)`), that lets no pair meet more often than it must: the
/// lowest most-meetings of a pair, then the fewest pairs meeting that
/// often, then the fewest rematches, then the search's order (the bye's,
/// then the candidates'). Its own [`SEARCH_STEPS`]; `None` when they ran
/// out before any pairing was found.
fn fewest_rematches(
    h: &History,
    byes: &[Option<usize>],
    rest: &dyn Fn(Option<usize>) -> Vec<usize>,
) -> Option<(Pairs, Option<usize>)> {
    let most = h.met2.values().copied().max().unwrap_or(0);
    let mut steps = 0;
    for limit in 1..=most {
        let mut best: Option<(Cost, Pairs, Option<usize>)> = None;
        for &bye in byes {
            if let Some((cost, p)) = search_pairs(h, &rest(bye), limit, &mut steps) {
                if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                    best = Some((cost, p, bye));
                }
            }
        }
        if let Some((_, p, bye)) = best {
            return Some((p, bye));
        }
        if steps > SEARCH_STEPS {
            return None;
        }
    }
    None
}

/// What a pairing with rematches costs: the pairs that meet as often as
/// the search allows, then the pairs that met before (fewer is better).
type Cost = (u32, u32);

/// A round's 2-player tables.
type Pairs = Vec<(usize, usize)>;

/// The depth-first search of a pairing: its allowed meetings, its
/// partial pairing and the best whole one found.
struct PairSearch<'a> {
    h: &'a History,
    groups: Vec<(usize, bool)>,
    rank: Vec<usize>,
    /// The most times a pair of the pairing may have met before.
    limit: u32,
    out: Vec<(usize, usize)>,
    best: Option<(Cost, Vec<(usize, usize)>)>,
}

/// A pairing of `bots` (in rank order) in which no pair met more than
/// `limit` times before, the cheapest found: depth first, the best-ranked
/// free bot with each of its candidates in turn (with `limit` 0, the
/// first found). `None` when there is none, or the search ran out of
/// steps before finding one.
fn search_pairs(
    h: &History,
    bots: &[usize],
    limit: u32,
    steps: &mut u64,
) -> Option<(Cost, Vec<(usize, usize)>)> {
    let mut s = PairSearch {
        h,
        groups: halves(h, bots),
        rank: ranks(h, bots),
        limit,
        out: Vec::new(),
        best: None,
    };
    s.go(bots.to_vec(), (0, 0), steps);
    s.best
}

impl PairSearch<'_> {
    /// Searches on from the partial pairing of cost `cost` with the bots
    /// `free` left; false once the search is over (out of steps, or a
    /// pairing without rematches found).
    fn go(&mut self, free: Vec<usize>, cost: Cost, steps: &mut u64) -> bool {
        let Some(&p) = free.first() else {
            self.best = Some((cost, self.out.clone()));
            return cost != (0, 0);
        };
        for q in candidates(self.h, &self.groups, &self.rank, p, &free) {
            *steps += 1;
            if *steps > SEARCH_STEPS {
                return false;
            }
            let met = self.h.meetings(p, q);
            let cost = (
                cost.0 + u32::from(met == self.limit && met > 0),
                cost.1 + u32::from(met > 0),
            );
            let worse = self.best.as_ref().is_some_and(|(c, _)| cost >= *c);
            if met > self.limit || worse {
                continue;
            }
            let rest: Vec<usize> = free.iter().copied().filter(|&b| b != p && b != q).collect();
            self.out.push((p, q));
            let more = self.go(rest, cost, steps);
            self.out.pop();
            if !more {
                return false;
            }
        }
        true
    }
}

/// A pairing that allows rematches: each best-ranked free bot with its
/// first candidate among those it met the fewest times.
fn greedy_pairs(h: &History, bots: &[usize]) -> Vec<(usize, usize)> {
    let groups = halves(h, bots);
    let rank = ranks(h, bots);
    let mut free = bots.to_vec();
    let mut out = Vec::new();
    while let Some(&p) = free.first() {
        let c = candidates(h, &groups, &rank, p, &free);
        // `min_by_key` keeps the first of equal ones.
        let Some(q) = c.iter().copied().min_by_key(|&q| h.meetings(p, q)) else {
            break;
        };
        free.retain(|&b| b != p && b != q);
        out.push((p, q));
    }
    out
}

/// Threes by score for the 3-player variants: the lowest-ranked bots with
/// the fewest 3-player byes sit out the odd ones, the rest in rank order,
/// each table the best-ranked free bot with the next two it has not sat
/// with (a search as for pairs; then as few repeats as a greedy pass gives).
fn group_three(h: &History, ranking: &[usize]) -> (Vec<[usize; 3]>, Vec<usize>) {
    let out_count = ranking.len() % 3;
    let mut c: Vec<usize> = ranking.iter().rev().copied().collect();
    c.sort_by_key(|&b| h.byes3[b]);
    let mut byes: Vec<usize> = c[..out_count.min(c.len())].to_vec();
    byes.sort_by_key(|b| ranking.iter().position(|x| x == b));
    let rest: Vec<usize> = ranking
        .iter()
        .copied()
        .filter(|b| !byes.contains(b))
        .collect();
    let mut steps = 0;
    let mut out = Vec::new();
    if !go_threes(h, rest.clone(), &mut out, &mut steps) {
        out = fewest_repeats3(h, &rest).unwrap_or_else(|| greedy_threes(h, &rest));
    }
    for t in &mut out {
        t.sort_by_key(|b| ranking.iter().position(|x| x == b));
    }
    (out, byes)
}

fn go_threes(h: &History, free: Vec<usize>, out: &mut Vec<[usize; 3]>, steps: &mut u64) -> bool {
    let Some(&p) = free.first() else {
        return true;
    };
    for i in 1..free.len() {
        if h.met3(p, free[i]) {
            continue;
        }
        for j in i + 1..free.len() {
            *steps += 1;
            if *steps > SEARCH_STEPS {
                return false;
            }
            let (a, b) = (free[i], free[j]);
            if h.met3(p, b) || h.met3(a, b) {
                continue;
            }
            let rest: Vec<usize> = free
                .iter()
                .copied()
                .filter(|&x| x != p && x != a && x != b)
                .collect();
            out.push([p, a, b]);
            if go_threes(h, rest, out, steps) {
                return true;
            }
            out.pop();
        }
    }
    false
}

/// The pair meetings of table `[p, a, b]`, as the 3-player search
/// weighs them.
fn table_meetings(h: &History, [p, a, b]: [usize; 3]) -> [u32; 3] {
    [h.meetings3(p, a), h.meetings3(p, b), h.meetings3(a, b)]
}

/// Threes with repeats, when none without is found: as for pairs
/// ([`fewest_rematches`]), those whose pairs sat together fewest times
/// before (the lowest most-meetings of a pair, then the fewest pairs
/// meeting that often, then the fewest repeated pairs), then the
/// search's order (rank). Its own [`SEARCH_STEPS`]; `None` when they ran
/// out before any was found.
fn fewest_repeats3(h: &History, bots: &[usize]) -> Option<Vec<[usize; 3]>> {
    let most = h.met3.values().copied().max().unwrap_or(0);
    let mut steps = 0;
    for limit in 1..=most {
        let mut s = ThreeSearch {
            h,
            limit,
            out: Vec::new(),
            best: None,
        };
        s.go(bots.to_vec(), (0, 0), &mut steps);
        if let Some((_, tables)) = s.best {
            return Some(tables);
        }
        if steps > SEARCH_STEPS {
            return None;
        }
    }
    None
}

/// The depth-first search of threes with repeats: the most times a pair
/// of a table may have sat together, the partial tables and the best
/// whole set found.
struct ThreeSearch<'a> {
    h: &'a History,
    limit: u32,
    out: Vec<[usize; 3]>,
    best: Option<(Cost, Vec<[usize; 3]>)>,
}

impl ThreeSearch<'_> {
    /// Searches on from the partial tables of cost `cost` with the bots
    /// `free` left (in rank order); false once the search is over.
    fn go(&mut self, free: Vec<usize>, cost: Cost, steps: &mut u64) -> bool {
        let Some(&p) = free.first() else {
            self.best = Some((cost, self.out.clone()));
            return cost != (0, 0);
        };
        for i in 1..free.len() {
            for j in i + 1..free.len() {
                *steps += 1;
                if *steps > SEARCH_STEPS {
                    return false;
                }
                let t = [p, free[i], free[j]];
                let met = table_meetings(self.h, t);
                if met.iter().any(|&m| m > self.limit) {
                    continue;
                }
                let at_limit = met.iter().filter(|&&m| m == self.limit).count() as u32;
                let repeats = met.iter().filter(|&&m| m > 0).count() as u32;
                let cost = (cost.0 + at_limit, cost.1 + repeats);
                if self.best.as_ref().is_some_and(|(c, _)| cost >= *c) {
                    continue;
                }
                let rest: Vec<usize> = free.iter().copied().filter(|b| !t.contains(b)).collect();
                self.out.push(t);
                let more = self.go(rest, cost, steps);
                self.out.pop();
                if !more {
                    return false;
                }
            }
        }
        true
    }
}

/// Threes that allow repeats, past the search's steps: each best-ranked
/// free bot with the two whose table repeats least (the fewest meetings
/// of its most-met pair, then of its pairs in all; the first in rank
/// order of equal ones).
fn greedy_threes(h: &History, bots: &[usize]) -> Vec<[usize; 3]> {
    let mut free = bots.to_vec();
    let mut out = Vec::new();
    while free.len() >= 3 {
        let p = free[0];
        let mut best: Option<((u32, u32), [usize; 3])> = None;
        for i in 1..free.len() {
            for j in i + 1..free.len() {
                let t = [p, free[i], free[j]];
                let met = table_meetings(h, t);
                let key = (met.iter().copied().max().unwrap_or(0), met.iter().sum());
                if best.is_none_or(|(k, _)| key < k) {
                    best = Some((key, t));
                }
            }
        }
        let Some((_, t)) = best else { break };
        free.retain(|b| !t.contains(b));
        out.push(t);
    }
    out
}

/// One bot's line of the standings.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    pub bot: usize,
    pub score: f64,
    /// The sum of its opponents' scores (a round's: the mean over its
    /// tables of its table-mates' mean score; a bye adds nothing).
    pub buchholz: f64,
    /// The sum over its rounds of its share of each table's points times
    /// its table-mates' mean score (averaged over the round's tables).
    pub sonneborn_berger: f64,
}

/// One bot's table in a played round: its share of the table's points
/// (0 to 1) and its table-mates.
#[derive(Clone, Debug)]
pub struct Table {
    pub share: Exact,
    pub mates: Vec<usize>,
}

/// The standings after the rounds `tables` (per round, per bot, its
/// tables of that round: one per variant, none for a bye): by score, then
/// Buchholz, then Sonneborn–Berger, then the initial order.
pub fn standings(h: &History, tables: &[Vec<Vec<Table>>]) -> Vec<Standing> {
    let n = h.exact.len();
    // Per bot: score, Buchholz, Sonneborn-Berger, exactly.
    let mut exact: Vec<[Exact; 3]> = (0..n)
        .map(|bot| [h.exact_score(bot), Exact::ZERO, Exact::ZERO])
        .collect();
    for round in tables {
        for (bot, ts) in round.iter().enumerate().take(n) {
            for t in ts {
                let opp = t
                    .mates
                    .iter()
                    .map(|&m| h.exact_score(m))
                    .sum::<Exact>()
                    .over(t.mates.len())
                    .over(ts.len());
                exact[bot][1] = exact[bot][1].plus(opp);
                exact[bot][2] = exact[bot][2].plus(t.share.times(opp));
            }
        }
    }
    let place: Vec<usize> = {
        let mut p = vec![0; n];
        for (i, &b) in h.initial.iter().enumerate() {
            p[b] = i;
        }
        p
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| exact[b].cmp(&exact[a]).then(place[a].cmp(&place[b])));
    order
        .into_iter()
        .map(|bot| Standing {
            bot,
            score: exact[bot][0].to_f64(),
            buchholz: exact[bot][1].to_f64(),
            sonneborn_berger: exact[bot][2].to_f64(),
        })
        .collect()
}

mod exact;
#[cfg(test)]
mod tests;
