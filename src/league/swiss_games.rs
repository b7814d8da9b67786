//! A Swiss league's games ([`SwissPlan`]: their ids, places and seats,
//! round by round) and the source that hands them out ([`SwissPairings`]):
//! each round is paired by [`super::swiss`] from the committed results of
//! the rounds before, and only once they are all committed, so that a run
//! resumed after a kill pairs every round as the first run did. Knows
//! nothing of processes or files.

use super::config::{Format, Tournament};
use super::folder::DoneSet;
use super::knockout;
use super::pairings::Pairings;
use super::schedule::{group_seed, permutations, ScheduledGame};
use super::swiss::{self, Exact, History, RoundPairing, Standing, Table};
use crate::results::GameRow;
use std::collections::HashMap;
use std::sync::Mutex;

/// The shape of a Swiss league: how many games each round has, and where.
/// A round's games: variant by variant (in the league's order), table by
/// table (best-ranked first), each table's seat-swap groups, each group's
/// seat orders.
#[derive(Clone, Debug)]
pub struct SwissPlan {
    pub bots: Vec<String>,
    /// Label and players of each variant.
    variants: Vec<(String, usize)>,
    pub rounds: u32,
    /// Seat-swap groups per table and variant.
    groups: usize,
    seed: u64,
    /// A knockout's bots by seed (best first); `None` for a Swiss. With
    /// a first Swiss stage, the order before it (the seeds come from its
    /// standings, [`SwissState::seeds`]).
    knockout: Option<Vec<usize>>,
    /// A knockout's first Swiss stage: its rounds, played before the
    /// bracket's (0: none).
    stage: u32,
}

impl SwissPlan {
    /// The plan of league `t`, if it is a Swiss.
    pub fn of(t: &Tournament) -> Option<SwissPlan> {
        let n = t.bots.len();
        let (rounds, knockout, stage) = match &t.format {
            Format::Swiss { rounds } => (*rounds, None, 0),
            Format::Knockout { seeds, stage } if seeds.is_empty() => (
                stage + knockout::rounds(n),
                Some(History::new(n, t.seed).initial),
                *stage,
            ),
            Format::Knockout { seeds, stage } => {
                (stage + knockout::rounds(n), Some(seeds.clone()), *stage)
            }
            Format::RoundRobin => return None,
        };
        Some(SwissPlan {
            knockout,
            stage,
            bots: t.bots.iter().map(|b| b.name.clone()).collect(),
            variants: t.variants.iter().map(|v| (v.label(), v.players)).collect(),
            rounds,
            groups: t.rounds as usize,
            seed: t.seed,
        })
    }

    /// The plan of a Swiss (`knockout` None, `stage` 0) or a knockout
    /// from the settings a results folder's league.json notes (`arena
    /// status`, which has no league file); as [`SwissPlan::of`] makes it.
    pub fn from_parts(
        bots: Vec<String>,
        variants: Vec<(String, usize)>,
        rounds: u32,
        groups: usize,
        seed: u64,
        knockout: Option<Vec<usize>>,
        stage: u32,
    ) -> SwissPlan {
        let rounds = match knockout {
            Some(_) => stage + knockout::rounds(bots.len()),
            None => rounds,
        };
        SwissPlan {
            bots,
            variants,
            rounds,
            groups,
            seed,
            knockout,
            stage,
        }
    }

    /// The plan of a Swiss of `bots` over the variants of `t` (a ladder's
    /// event, docs/ladder.md "Events"): `rounds` rounds, `groups` seat-swap
    /// groups per pairing and variant, its initial order drawn from `seed`.
    pub fn swiss(
        t: &Tournament,
        bots: Vec<String>,
        rounds: u32,
        groups: usize,
        seed: u64,
    ) -> SwissPlan {
        SwissPlan {
            knockout: None,
            stage: 0,
            bots,
            variants: t.variants.iter().map(|v| (v.label(), v.players)).collect(),
            rounds,
            groups,
            seed,
        }
    }

    fn tables(&self, v: usize) -> usize {
        self.bots.len() / self.variants[v].1
    }

    fn orders(&self, v: usize) -> usize {
        (1..=self.variants[v].1).product()
    }

    /// Games of variant `v` in a round.
    fn per_variant(&self, v: usize) -> usize {
        self.tables(v) * self.groups * self.orders(v)
    }

    pub fn games_per_round(&self) -> usize {
        (0..self.variants.len()).map(|v| self.per_variant(v)).sum()
    }

    /// Games in the whole Swiss (a knockout: its n - 1 matches).
    pub fn len(&self) -> usize {
        match &self.knockout {
            Some(_) => {
                let per_match: usize = (0..self.variants.len())
                    .map(|v| self.groups * self.orders(v))
                    .sum();
                self.stage as usize * self.games_per_round()
                    + self.bots.len().saturating_sub(1) * per_match
            }
            None => self.games_per_round() * self.rounds as usize,
        }
    }

    /// Whether this plan is a knockout's.
    pub fn is_knockout(&self) -> bool {
        self.knockout.is_some()
    }

    /// The report's file name in the results folder.
    pub fn report_file(&self) -> &'static str {
        match self.knockout {
            Some(_) => "knockout.txt",
            None => "swiss.txt",
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether its variants include one for `n` players.
    pub fn has_players(&self, n: usize) -> bool {
        self.variants.iter().any(|v| v.1 == n)
    }

    /// The pairing of the round after `h` (a knockout's: from each
    /// played round's `points` by bot, its bracket seeded `seeds` after
    /// a first Swiss stage).
    pub fn pair(&self, h: &History, points: &[Vec<f64>], seeds: Option<&[usize]>) -> RoundPairing {
        let stage = self.stage as usize;
        match &self.knockout {
            Some(_) if points.len() < stage => swiss::pair_round(h, true, false),
            Some(order) => {
                let order = seeds.unwrap_or(order);
                let places = knockout::places(order, &points[stage.min(points.len())..]);
                let (pairs, _byes) = knockout::matches(order, &places[places.len() - 1]);
                RoundPairing {
                    pairs,
                    ..RoundPairing::default()
                }
            }
            None => swiss::pair_round(h, self.has_players(2), self.has_players(3)),
        }
    }

    /// Game `offset` of round `round` (from 1), paired as `p`.
    pub fn game(&self, round: u32, p: &RoundPairing, offset: usize) -> Option<ScheduledGame> {
        let mut o = offset;
        for v in 0..self.variants.len() {
            if o >= self.per_variant(v) {
                o -= self.per_variant(v);
                continue;
            }
            let per_table = self.groups * self.orders(v);
            let (table, g, order) = (
                o / per_table,
                o % per_table / self.orders(v),
                o % self.orders(v),
            );
            let bots: Vec<usize> = match self.variants[v].1 {
                2 => p.pairs.get(table).map(|&(a, b)| vec![a, b])?,
                _ => p.triples.get(table)?.to_vec(),
            };
            let group = format!("s{round:03}-{}-t{table:03}-g{g}", self.variants[v].0);
            return Some(ScheduledGame {
                index: (round as usize - 1) * self.games_per_round() + offset,
                game_id: format!("{group}-o{order}"),
                seed: group_seed(self.seed, &group),
                variant_group: ((round as usize - 1) * self.tables(v) + table) * self.groups + g,
                group_index: (round as usize - 1) * self.games_per_round() + offset - order,
                group,
                round,
                variant: v,
                seats: permutations(&bots).swap_remove(order),
            });
        }
        None
    }

    /// The round and the place of the game with this id, if the plan has
    /// one (which bots play it depends on the rounds before).
    pub fn place(&self, game_id: &str) -> Option<(u32, usize)> {
        let (rest, o) = game_id.rsplit_once("-o")?;
        let (rest, g) = rest.rsplit_once("-g")?;
        let (rest, table) = rest.rsplit_once("-t")?;
        let (round, label) = rest.strip_prefix('s')?.split_once('-')?;
        let (o, g, table, round): (usize, usize, usize, u32) = (
            o.parse().ok()?,
            g.parse().ok()?,
            table.parse().ok()?,
            round.parse().ok()?,
        );
        if round == 0 || round > self.rounds || g >= self.groups {
            return None;
        }
        let mut offset = 0;
        for v in 0..self.variants.len() {
            if self.variants[v].0 == label && table < self.tables(v) && o < self.orders(v) {
                offset += (table * self.groups + g) * self.orders(v) + o;
                return Some((
                    round,
                    (round as usize - 1) * self.games_per_round() + offset,
                ));
            }
            offset += self.per_variant(v);
        }
        None
    }

    /// A text that determines the plan: what the fingerprint hashes.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "swiss rounds {} groups {} seed {} variants {:?}\n",
            self.rounds, self.groups, self.seed, self.variants
        );
        if let Some(order) = &self.knockout {
            text.push_str(&format!("knockout seeds {order:?}\n"));
        }
        if self.stage > 0 {
            text.push_str(&format!("seeded by a swiss of {} rounds\n", self.stage));
        }
        text
    }

    /// Each bot's points in round `round` paired as `p`, from the scores
    /// by seat of its games (`scores`, by index), and its tables. Exact:
    /// equal points are equal (a drawn knockout match is a draw, whatever
    /// the order of its games' shares).
    fn tally(
        &self,
        round: u32,
        p: &RoundPairing,
        scores: &HashMap<usize, Vec<f64>>,
    ) -> (Vec<Exact>, Vec<Vec<Table>>) {
        let n = self.bots.len();
        // Per bot, per variant: points and games.
        let mut got = vec![vec![(Exact::ZERO, 0usize); self.variants.len()]; n];
        for offset in 0..self.games_per_round() {
            let Some(g) = self.game(round, p, offset) else {
                continue;
            };
            let Some(s) = scores.get(&g.index) else {
                continue;
            };
            for (seat, &bot) in g.seats.iter().enumerate() {
                let e = &mut got[bot][g.variant];
                e.0 =
                    e.0.plus(Exact::from_f64(s.get(seat).copied().unwrap_or(0.0)));
                e.1 += 1;
            }
        }
        let mut points = vec![Exact::ZERO; n];
        let mut tables = vec![Vec::new(); n];
        for bot in 0..n {
            for (v, &(played, games)) in got[bot].iter().enumerate() {
                let mates: Vec<usize> = match self.variants[v].1 {
                    2 => p
                        .pairs
                        .iter()
                        .filter_map(|&(a, b)| (a == bot).then_some(b).or((b == bot).then_some(a)))
                        .collect(),
                    _ => p
                        .triples
                        .iter()
                        .filter(|t| t.contains(&bot))
                        .flat_map(|t| t.iter().copied().filter(|&x| x != bot))
                        .collect(),
                };
                let share = match games {
                    0 => Exact::ONE,
                    _ => played.over(games),
                };
                points[bot] = points[bot].plus(share.over(self.variants.len()));
                if !mates.is_empty() {
                    tables[bot].push(Table { share, mates });
                }
            }
        }
        (points, tables)
    }
}

/// What a Swiss has paired and played so far.
#[derive(Clone, Debug)]
pub struct SwissState {
    pub history: History,
    /// The rounds paired so far (the last perhaps unfinished).
    pub rounds: Vec<RoundPairing>,
    /// Each committed game's scores by seat, by index.
    scores: HashMap<usize, Vec<f64>>,
    /// Per finished round, per bot, its tables (for the tie-breaks).
    tables: Vec<Vec<Vec<Table>>>,
    /// Per finished round, each bot's points in it (a knockout's winners).
    points: Vec<Vec<f64>>,
    /// A knockout's seeds from its first Swiss stage's standings, once
    /// that stage is finished.
    seeds: Option<Vec<usize>>,
}

impl SwissState {
    pub fn new(plan: &SwissPlan) -> SwissState {
        SwissState {
            history: History::new(plan.bots.len(), plan.seed),
            rounds: Vec::new(),
            scores: HashMap::new(),
            tables: Vec::new(),
            points: Vec::new(),
            seeds: None,
        }
    }

    /// The state of a Swiss whose committed games are `rows`: rounds are
    /// paired one after the other, each from the rows of the rounds
    /// before, as long as those are complete. A row whose game is not one
    /// of a paired round, or seats other bots, is left out (the folder's
    /// check rejects it).
    pub fn replay(plan: &SwissPlan, rows: &[GameRow]) -> SwissState {
        let mut s = SwissState::new(plan);
        let by_id: HashMap<&str, &GameRow> = rows.iter().map(|r| (r.game_id.as_str(), r)).collect();
        while s.advance(plan) {
            let round = s.rounds.len() as u32;
            for offset in 0..plan.games_per_round() {
                let Some(g) = plan.game(round, s.current(), offset) else {
                    continue;
                };
                let Some(row) = by_id.get(g.game_id.as_str()) else {
                    continue;
                };
                if row
                    .seats()
                    .into_iter()
                    .eq(g.seats.iter().map(|&b| plan.bots[b].as_str()))
                {
                    s.scores.insert(g.index, row.scores());
                }
            }
        }
        s
    }

    fn current(&self) -> &RoundPairing {
        self.rounds.last().expect("a paired round")
    }

    /// Whether every game of the last paired round is committed (true
    /// before the first round).
    fn round_complete(&self, plan: &SwissPlan) -> bool {
        let r = self.rounds.len();
        let per = plan.games_per_round();
        r == 0
            || ((r - 1) * per..r * per).all(|i| {
                self.scores.contains_key(&i)
                    || plan
                        .game(r as u32, self.current(), i - (r - 1) * per)
                        .is_none()
            })
    }

    /// Pairs the next round if the last is complete and rounds remain;
    /// returns whether it did.
    /// (After the last round, counts it in the standings.)
    fn advance(&mut self, plan: &SwissPlan) -> bool {
        if !self.round_complete(plan) {
            return false;
        }
        if let Some(last) = self
            .rounds
            .last()
            .filter(|_| self.tables.len() < self.rounds.len())
        {
            let (points, tables) = plan.tally(self.rounds.len() as u32, last, &self.scores);
            self.history.add_exact(last, &points);
            self.tables.push(tables);
            self.points
                .push(points.iter().map(|p| p.to_f64()).collect());
            if plan.stage > 0 && self.tables.len() == plan.stage as usize {
                self.seeds = Some(self.standings().iter().map(|s| s.bot).collect());
            }
        }
        if self.rounds.len() >= plan.rounds as usize {
            return false;
        }
        let next = plan.pair(&self.history, &self.points, self.seeds.as_deref());
        self.rounds.push(next);
        true
    }

    /// Keeps only the scores of the games in `done` (the rows the folder's
    /// check kept) and pairs again from them; an error names the first
    /// round whose games were paired from a result no longer there.
    pub fn keep_only(&mut self, plan: &SwissPlan, done: &DoneSet) -> Result<(), String> {
        let mut scores = std::mem::take(&mut self.scores);
        scores.retain(|i, _| done.contains(*i));
        let mut again = SwissState::new(plan);
        again.scores = scores;
        while again.advance(plan) {}
        let per = plan.games_per_round().max(1);
        let last = again.scores.keys().map(|i| i / per + 1).max().unwrap_or(0);
        let same = (0..again.rounds.len())
            .take_while(|&r| self.rounds.get(r) == again.rounds.get(r))
            .count();
        if last > same {
            return Err(format!("round {} was paired from games of round {} that are no longer in games.csv; its rows cannot be kept", same + 1, same));
        }
        *self = again;
        Ok(())
    }

    /// The standings after the finished rounds.
    pub fn standings(&self) -> Vec<Standing> {
        swiss::standings(&self.history, &self.tables)
    }

    /// A knockout's seeds from its first Swiss stage, once it is finished.
    pub fn seeds(&self) -> Option<&[usize]> {
        self.seeds.as_deref()
    }

    /// Rounds finished (the pairing of the next one is known).
    pub fn finished_rounds(&self) -> usize {
        self.tables.len()
    }

    /// Each bot's points in finished round `round` (from 1).
    pub fn round_points(&self, round: usize) -> Option<&[f64]> {
        self.points.get(round.checked_sub(1)?).map(Vec::as_slice)
    }

    /// Game `id` of `plan` belongs to a round after the last paired one,
    /// which has no pairing yet because that one lacks a game's row: the
    /// game's round and the last paired round. `None` for a game of a
    /// paired round, or an id not of `plan`.
    pub fn unpaired(&self, plan: &SwissPlan, id: &str) -> Option<(u32, u32)> {
        let (round, _) = plan.place(id)?;
        let paired = self.rounds.len() as u32;
        (paired > 0 && round > paired).then_some((round, paired))
    }
}

/// The standings and the rounds as text (`swiss.txt` in the results
/// folder, printed at the end of `arena run`; a knockout's bracket,
/// `knockout.txt`).
pub fn report(plan: &SwissPlan, state: &SwissState) -> String {
    if let Some(order) = &plan.knockout {
        return knockout_report(plan, order, state);
    }
    let name = |b: usize| plan.bots[b].as_str();
    let width = plan
        .bots
        .iter()
        .map(|b| crate::text::columns(b))
        .max()
        .unwrap_or(3)
        .max(3);
    let mut out = format!(
        "Swiss: {} of {} rounds finished (a round is worth 1 point: the bot's share of each mini-match's points, averaged over the variants; a bye scores 1)\n{:>4}  {:width$}  {:>6}  {:>8}  {:>16}\n",
        state.finished_rounds(),
        plan.rounds,
        "rank",
        "bot",
        "score",
        "buchholz",
        "sonneborn-berger"
    );
    for (i, s) in state.standings().iter().enumerate() {
        out.push_str(&format!(
            "{:>4}  {}  {:>6.2}  {:>8.2}  {:>16.2}\n",
            i + 1,
            crate::text::pad_to(name(s.bot), width),
            s.score,
            s.buchholz,
            s.sonneborn_berger
        ));
    }
    for (i, r) in state.rounds.iter().enumerate() {
        let mut line = format!("round {}:", i + 1);
        if plan.has_players(2) {
            let pairs: Vec<String> = r
                .pairs
                .iter()
                .map(|&(a, b)| format!("{} - {}", name(a), name(b)))
                .collect();
            line.push_str(&format!(" {}", pairs.join(", ")));
            if let Some(b) = r.bye {
                line.push_str(&format!(", bye {}", name(b)));
            }
        }
        if plan.has_players(3) {
            let threes: Vec<String> = r.triples.iter().map(|t| t.map(name).join(" ")).collect();
            let sep = if plan.has_players(2) { ";" } else { "" };
            line.push_str(&format!("{sep} threes: {}", threes.join(", ")));
            if !r.bye3.is_empty() {
                let out: Vec<&str> = r.bye3.iter().map(|&b| name(b)).collect();
                line.push_str(&format!(", bye {}", out.join(" ")));
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A knockout's bracket as text: the seeds, then each paired round's
/// matches with each bot's points (a round is worth 1 point per bot,
/// shared in each match), its byes, and the champion once the final is
/// committed.
fn knockout_report(plan: &SwissPlan, order: &[usize], state: &SwissState) -> String {
    let name = |b: usize| plan.bots[b].as_str();
    let stage = plan.stage as usize;
    let mut out = format!(
        "Knockout: {} of {} rounds finished (a match is won on points over its games in every variant; a drawn match goes to the better seed)\n",
        state.finished_rounds(),
        plan.rounds,
    );
    if stage > 0 {
        out.push_str(&format!(
            "seeding: a Swiss of {stage} round{}, its standings (score, Buchholz, Sonneborn-Berger, initial order) the seeds\n",
            if stage == 1 { "" } else { "s" }
        ));
        for (r, p) in state.rounds.iter().enumerate().take(stage) {
            let pairs: Vec<String> = p
                .pairs
                .iter()
                .map(|&(a, b)| match state.points.get(r) {
                    Some(pts) => format!("{} {:.2} - {:.2} {}", name(a), pts[a], pts[b], name(b)),
                    None => format!("{} - {}", name(a), name(b)),
                })
                .collect();
            let mut line = format!("round {} (swiss): {}", r + 1, pairs.join(", "));
            if let Some(b) = p.bye {
                line.push_str(&format!(", bye {}", name(b)));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    let order = match (stage, state.seeds()) {
        (0, _) => order,
        (_, Some(seeds)) => seeds,
        (_, None) => return out,
    };
    let seeds: Vec<String> = order
        .iter()
        .enumerate()
        .map(|(i, &b)| format!("{} {}", i + 1, name(b)))
        .collect();
    out.push_str(&format!("seeds: {}\n", seeds.join(", ")));
    let points = &state.points[stage.min(state.points.len())..];
    let places = knockout::places(order, points);
    let paired = state.rounds.len().saturating_sub(stage);
    for (r, p) in places.iter().enumerate().take(paired) {
        let (pairs, byes) = knockout::matches(order, p);
        let played = points.get(r);
        let matches: Vec<String> = pairs
            .iter()
            .map(|&(a, b)| match played {
                Some(pts) => {
                    let mut m = format!("{} {:.2} - {:.2} {}", name(a), pts[a], pts[b], name(b));
                    if let (w, true) = knockout::winner(order, pts, a, b) {
                        m.push_str(&format!(" ({} through on seed)", name(w)));
                    }
                    m
                }
                None => format!("{} - {}", name(a), name(b)),
            })
            .collect();
        let mut line = format!("round {}: {}", stage + r + 1, matches.join(", "));
        if !byes.is_empty() {
            let byes: Vec<&str> = byes.iter().map(|&b| name(b)).collect();
            line.push_str(&format!("; byes: {}", byes.join(", ")));
        }
        out.push_str(&line);
        out.push('\n');
    }
    if state.finished_rounds() == plan.rounds as usize {
        if let Some(Some(w)) = places.last().filter(|l| l.len() == 1).map(|l| l[0]) {
            out.push_str(&format!("champion: {}\n", name(w)));
        }
    }
    out
}

/// A Swiss as the runner's source of games: the games of the paired
/// round not yet done, in order; when they are all handed out, nothing
/// until the last of them is committed ([`Pairings::pending`]), then the
/// next round.
pub struct SwissPairings {
    plan: SwissPlan,
    inner: Mutex<Inner>,
}

struct Inner {
    state: SwissState,
    /// The next place of the last paired round to hand out.
    next: usize,
}

impl SwissPairings {
    /// The source of a Swiss whose committed games are in `state`.
    pub fn new(plan: SwissPlan, state: SwissState) -> SwissPairings {
        let next = state.rounds.len().saturating_sub(1) * plan.games_per_round();
        SwissPairings {
            plan,
            inner: Mutex::new(Inner { state, next }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Pairings for SwissPairings {
    fn next(&self) -> Option<ScheduledGame> {
        let mut inner = self.lock();
        let per = self.plan.games_per_round();
        loop {
            let round = inner.state.rounds.len();
            if round > 0 && inner.next < round * per {
                let i = inner.next;
                inner.next += 1;
                if inner.state.scores.contains_key(&i) {
                    continue;
                }
                match self
                    .plan
                    .game(round as u32, inner.state.current(), i - (round - 1) * per)
                {
                    Some(g) => return Some(g),
                    // A knockout's later rounds have fewer matches.
                    None => continue,
                }
            }
            if !inner.state.advance(&self.plan) {
                return None;
            }
            inner.next = inner.state.rounds.len().saturating_sub(1) * per;
        }
    }

    fn finished(&self, index: usize, row: &GameRow) -> Option<String> {
        self.lock().state.scores.insert(index, row.scores());
        None
    }

    fn total(&self) -> usize {
        self.plan.len()
    }

    /// Games may come while the paired round has games not committed, or
    /// rounds remain.
    fn pending(&self) -> bool {
        let inner = self.lock();
        !inner.state.round_complete(&self.plan)
            || inner.state.rounds.len() < self.plan.rounds as usize
    }
}

mod progress;
pub use progress::{progress, Progress, Unpaired};
#[cfg(test)]
mod tests;
