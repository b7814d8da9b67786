//! The games whose viewer data the default report holds (issue 33): a
//! sample bounded by the bots and variants, not by the games, so that a
//! league of a million games leaves a report of a few megabytes. Every
//! other game is shown on demand by `arena view`.
//!
//! The rule (`RULE`, shown on the page): per pairing (a variant label and
//! the set of its bots), its `RECENT` most recent games, its shortest and
//! its longest, and its `FORFEITS` most recent forfeits; per variant label,
//! the first game of each of its first `OPENINGS` openings; and the
//! forfeits the page lists one by one (`listed`). In a variant label of
//! more than `PAIRING_BOTS` bots the same is kept per bot instead of per
//! pairing: the pairings grow with the square of the bots (a million at
//! 1,000 bots, where the sample per pairing held nearly every game of a
//! league of a million), the bots do not (issue 34).
//!
//! The sample is chosen as the rows are read, one at a time ([`Sampler`]),
//! holding only the rows the rule may still keep, so that `arena report`
//! never holds every row; [`sample`] gives the same choice over rows in
//! memory.

use crate::results::GameRow;
use std::collections::{HashMap, HashSet, VecDeque};

/// Most recent games kept per pairing.
pub const RECENT: usize = 5;
/// Most recent forfeits kept per pairing.
pub const FORFEITS: usize = 20;
/// Openings per variant label whose first game is kept.
pub const OPENINGS: usize = 20;
/// Bots of a variant label up to which its games are kept per pairing;
/// beyond, per bot (a label of 50 bots has 1,225 pairings).
pub const PAIRING_BOTS: usize = 50;

/// The rule of the sample, in words, for the page.
pub fn rule() -> String {
    format!(
        "every forfeit (the {FORFEITS} most recent of each pairing when it has more), \
         the shortest and the longest game of each pairing, the {RECENT} most recent \
         games of each pairing, and the first game of each of the first {OPENINGS} \
         openings of each variant; in a variant of more than {PAIRING_BOTS} bots, \
         of each bot instead of each pairing"
    )
}

/// Why a game is in the sample (the first reason that applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    Forfeit,
    Shortest,
    Longest,
    Recent,
    Opening,
    /// Its analysis is in the results folder (`arena analyse --save`).
    Analysed,
}

impl Why {
    /// The reason's word, as the page shows it.
    pub fn word(self) -> &'static str {
        match self {
            Why::Forfeit => "forfeit",
            Why::Shortest => "shortest of its pairing (or its bot's)",
            Why::Longest => "longest of its pairing (or its bot's)",
            Why::Recent => "recent",
            Why::Opening => "first of its opening",
            Why::Analysed => "analysed",
        }
    }
}

/// The indexes of the rows in the sample, in row order, each with why; the
/// rows at `listed` (the forfeits the page lists) are in it too. The rows
/// given one at a time to a [`Sampler`].
pub fn sample(rows: &[GameRow], listed: &[usize]) -> Vec<(usize, Why)> {
    let listed: HashSet<usize> = listed.iter().copied().collect();
    let mut s = Sampler::default();
    for (i, r) in rows.iter().enumerate() {
        s.add(
            &mut r.clone(),
            0,
            listed.contains(&i).then_some(Why::Forfeit),
        );
    }
    s.finish().into_iter().map(|(i, w, _, _)| (i, w)).collect()
}

/// What is kept of one pairing (or one bot of a label): the slots
/// (`Sampler::slots`) of its shortest and longest game (with their plies),
/// of its `RECENT` most recent games and of its `FORFEITS` most recent
/// forfeits.
#[derive(Default)]
struct Keep {
    shortest: Option<(u32, usize)>,
    longest: Option<(u32, usize)>,
    recent: VecDeque<usize>,
    forfeits: VecDeque<usize>,
}

impl Keep {
    /// Counts the game in slot `i`; the slots it no longer keeps go to
    /// `dropped`, and each place it now holds `i` in is one in `held`.
    fn add(
        &mut self,
        i: usize,
        plies: u32,
        forfeit: bool,
        held: &mut u32,
        dropped: &mut Vec<usize>,
    ) {
        if self.shortest.is_none_or(|(n, _)| plies < n) {
            if let Some((_, old)) = self.shortest.replace((plies, i)) {
                dropped.push(old);
            }
            *held += 1;
        }
        if self.longest.is_none_or(|(n, _)| plies > n) {
            if let Some((_, old)) = self.longest.replace((plies, i)) {
                dropped.push(old);
            }
            *held += 1;
        }
        push_ring(&mut self.recent, i, RECENT, held, dropped);
        if forfeit {
            push_ring(&mut self.forfeits, i, FORFEITS, held, dropped);
        }
    }

    /// Every place a game is kept in (a game may be in several).
    fn places(&self) -> impl Iterator<Item = usize> + '_ {
        self.shortest
            .iter()
            .chain(&self.longest)
            .map(|&(_, i)| i)
            .chain(self.recent.iter().copied())
            .chain(self.forfeits.iter().copied())
    }

    /// Its games with why, in the order the reasons are given.
    fn whys(&self) -> impl Iterator<Item = (usize, Why)> + '_ {
        self.forfeits
            .iter()
            .map(|&i| (i, Why::Forfeit))
            .chain(self.shortest.map(|(_, i)| (i, Why::Shortest)))
            .chain(self.longest.map(|(_, i)| (i, Why::Longest)))
            .chain(self.recent.iter().map(|&i| (i, Why::Recent)))
    }
}

/// Keeps the last `n` of what is pushed.
fn push_ring(
    v: &mut VecDeque<usize>,
    i: usize,
    n: usize,
    held: &mut u32,
    dropped: &mut Vec<usize>,
) {
    if n == 0 {
        return;
    }
    if v.len() == n {
        if let Some(old) = v.pop_front() {
            dropped.push(old);
        }
    }
    v.push_back(i);
    *held += 1;
}

/// A variant label's part of the sample as it is read.
#[derive(Default)]
struct Label {
    /// Per bot (by the sampler's bot number): what it keeps; its bots are
    /// those with one.
    by_bot: Vec<Option<Keep>>,
    bots: usize,
    /// Per pairing (its bots' numbers, sorted), while the label has at most
    /// `PAIRING_BOTS` bots: past that, it is kept per bot and these are
    /// dropped (a label's bots only grow).
    pairings: HashMap<[u32; 3], Keep, Fx>,
    /// The first game of each of its first `OPENINGS` openings.
    openings: Vec<(String, usize)>,
}

type Fx = std::hash::BuildHasherDefault<crate::ratings::Fx>;

/// The sample (the rule of [`rule`]) chosen as the rows are read, one pass,
/// holding only the rows it may still keep: every game is counted in its
/// pairing's and its bots' keeps (`PAIRING_BOTS` is only known at the end,
/// so both are kept until the label has more bots, when its pairings are
/// dropped), and a row is held while some keep names it. At 1,000 bots
/// that is a few thousand rows, whatever the games (issue 34). The keeps
/// name a game by its slot (`slots`), where its row stays until no keep
/// names it; a slot let go is reused with its row's allocations.
#[derive(Default)]
pub struct Sampler {
    /// Games seen: the next game's index.
    seen: usize,
    /// (variant, players) -> label number; a handful, searched in order.
    label_of: Vec<(String, u8)>,
    labels: Vec<Label>,
    bots: HashMap<String, u32, Fx>,
    slots: Vec<Slot>,
    /// Slots no keep names.
    free: Vec<usize>,
    /// The slots of the rows kept (`add`'s `kept`), with why: kept
    /// whatever happens.
    listed: Vec<(usize, Why)>,
    dropped: Vec<usize>,
}

/// A game some keep names: its index, the source it was read from, how
/// many places name it, and its row.
#[derive(Default)]
struct Slot {
    index: usize,
    from: usize,
    refs: u32,
    row: GameRow,
}

impl Sampler {
    /// Counts the next game (its index is the number of games given
    /// before), read from source `from`; `kept`: kept whatever the rule
    /// says, and why (one of the forfeits the page lists, a game
    /// analysed). Takes the row
    /// when it may be in the sample (`row` is left holding the allocations
    /// of a row let go).
    pub fn add(&mut self, row: &mut GameRow, from: usize, kept: Option<Why>) {
        let i = self.seen;
        self.seen += 1;
        let slot = match self.free.pop() {
            Some(k) => k,
            None => {
                self.slots.push(Slot::default());
                self.slots.len() - 1
            }
        };
        let l = match self
            .label_of
            .iter()
            .position(|(v, p)| *p == row.players && *v == row.variant)
        {
            Some(l) => l,
            None => {
                self.label_of.push((row.variant.clone(), row.players));
                self.labels.push(Label::default());
                self.labels.len() - 1
            }
        };
        let mut ids = [u32::MAX; 3];
        // `row.seats()`, without a vector per row.
        let n = if row.players >= 3 { 3 } else { 2 };
        for (k, b) in [&row.seat0, &row.seat1, &row.seat2][..n].iter().enumerate() {
            ids[k] = match self.bots.get(b.as_str()) {
                Some(&id) => id,
                None => {
                    let id = self.bots.len() as u32;
                    self.bots.insert(b.to_string(), id);
                    id
                }
            };
        }
        ids[..n].sort_unstable();
        let forfeit = row.offender.is_some();
        let mut held = 0u32;
        let dropped = &mut self.dropped;
        let label = &mut self.labels[l];
        for (k, &b) in ids[..n].iter().enumerate() {
            if k > 0 && ids[k - 1] == b {
                continue;
            }
            let b = b as usize;
            if label.by_bot.len() <= b {
                label.by_bot.resize_with(b + 1, || None);
            }
            let keep = label.by_bot[b].get_or_insert_with(|| {
                label.bots += 1;
                Keep::default()
            });
            keep.add(slot, row.plies, forfeit, &mut held, dropped);
        }
        if label.bots > PAIRING_BOTS {
            if !label.pairings.is_empty() {
                for p in std::mem::take(&mut label.pairings).into_values() {
                    dropped.extend(p.places());
                }
            }
        } else {
            label
                .pairings
                .entry(ids)
                .or_default()
                .add(slot, row.plies, forfeit, &mut held, dropped);
        }
        if label.openings.len() < OPENINGS && !label.openings.iter().any(|(o, _)| *o == row.opening)
        {
            label.openings.push((row.opening.clone(), slot));
            held += 1;
        }
        if let Some(why) = kept {
            self.listed.push((slot, why));
            held += 1;
        }
        let s = &mut self.slots[slot];
        (s.index, s.from, s.refs) = (i, from, held);
        if held > 0 {
            std::mem::swap(&mut s.row, row);
        } else {
            self.free.push(slot);
        }
        for old in self.dropped.drain(..) {
            let s = &mut self.slots[old];
            s.refs = s.refs.saturating_sub(1);
            if s.refs == 0 {
                self.free.push(old);
            }
        }
    }

    /// Games held now (their rows are in memory).
    pub fn held(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The sample: its games' indexes in row order, each with why (the
    /// first reason that applies: listed, then each keep's forfeits,
    /// shortest, longest and recent, then the openings), its row and the
    /// source it was read from.
    pub fn finish(mut self) -> Vec<(usize, Why, GameRow, usize)> {
        // Slot -> why.
        let mut why: HashMap<usize, Why> = HashMap::new();
        let mut add = |slot: usize, w: Why| {
            why.entry(slot).or_insert(w);
        };
        for &(k, w) in &self.listed {
            add(k, w);
        }
        for label in &self.labels {
            if label.bots > PAIRING_BOTS {
                for keep in label.by_bot.iter().flatten() {
                    keep.whys().for_each(|(k, w)| add(k, w));
                }
            } else {
                let mut keys: Vec<&[u32; 3]> = label.pairings.keys().collect();
                keys.sort_unstable();
                for key in keys {
                    label.pairings[key].whys().for_each(|(k, w)| add(k, w));
                }
            }
        }
        for label in &self.labels {
            label
                .openings
                .iter()
                .for_each(|&(_, k)| add(k, Why::Opening));
        }
        let mut out: Vec<(usize, Why, GameRow, usize)> = why
            .into_iter()
            .map(|(k, w)| {
                let s = &mut self.slots[k];
                (s.index, w, std::mem::take(&mut s.row), s.from)
            })
            .collect();
        out.sort_unstable_by_key(|(i, _, _, _)| *i);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: usize, a: &str, b: &str, plies: u32, forfeit: bool) -> GameRow {
        let mut r = GameRow::two_player(&format!("g{id}"), "kisolo", "grp", a, b, 1.0);
        r.plies = plies;
        r.offender = forfeit.then_some(0);
        r.opening = format!("o{}", id % 3);
        r
    }

    /// A pairing of many games keeps its recent, shortest, longest and
    /// forfeits, and the sample does not grow with the games.
    #[test]
    fn the_sample_is_bounded_by_the_pairings() {
        let mut rows = Vec::new();
        for i in 0..1000 {
            let plies = if i == 300 {
                1
            } else if i == 400 {
                999
            } else {
                50
            };
            rows.push(row(i, "a", "b", plies, i == 10));
        }
        rows.push(row(1000, "b", "c", 40, false));
        let s = sample(&rows, &[]);
        let ids: Vec<usize> = s.iter().map(|(i, _)| *i).collect();
        for want in [10, 300, 400, 995, 996, 997, 998, 999, 1000] {
            assert!(ids.contains(&want), "{want} missing from {ids:?}");
        }
        assert!(s.contains(&(10, Why::Forfeit)));
        assert!(s.contains(&(300, Why::Shortest)));
        assert!(s.contains(&(400, Why::Longest)));
        assert!(s.contains(&(999, Why::Recent)));
        assert!(ids.len() < 20, "{ids:?}");
        assert!(!ids.contains(&500));
        let more: Vec<GameRow> = (0..10_000).map(|i| row(i, "a", "b", 50, false)).collect();
        assert!(sample(&more, &[]).len() < 20);
        assert!(sample(&more, &[7]).contains(&(7, Why::Forfeit)));
    }

    /// Past `PAIRING_BOTS` bots in a label, the sample is kept per bot:
    /// it grows with the bots, not with the pairings.
    #[test]
    fn with_many_bots_the_sample_is_bounded_by_the_bots() {
        let bots: Vec<String> = (0..200).map(|k| format!("b{k}")).collect();
        let mut rows = Vec::new();
        // Every pairing of 200 bots (19,900) plays twice.
        for round in 0..2 {
            for a in 0..bots.len() {
                for b in a + 1..bots.len() {
                    let id = rows.len();
                    let plies = 10 + (id % 37) as u32 + round;
                    rows.push(row(id, &bots[a], &bots[b], plies, false));
                }
            }
        }
        let s = sample(&rows, &[]);
        // At most shortest, longest and RECENT per bot, and the openings.
        assert!(s.len() <= 200 * (RECENT + 2) + OPENINGS, "{}", s.len());
        // Each bot's most recent game is in it.
        for b in &bots {
            let last = rows.iter().rposition(|r| r.seats().contains(&b.as_str()));
            assert!(last.is_some_and(|i| s.iter().any(|&(k, _)| k == i)), "{b}");
        }
        // A few bots are still kept per pairing: both of a's games with b
        // are the most recent of their pairing.
        let few: Vec<GameRow> = rows
            .iter()
            .filter(|r| r.seats().iter().all(|b| bots[..10].iter().any(|x| x == b)))
            .cloned()
            .collect();
        assert_eq!(few.len(), 90);
        assert_eq!(sample(&few, &[]).len(), 90);
    }

    /// The rule as first written (issue 33), over rows all in memory: the
    /// reference the streaming sampler is checked against.
    fn reference(rows: &[GameRow], listed: &[usize]) -> Vec<usize> {
        use crate::ratings::variant_label;
        let mut bots_of: HashMap<String, HashSet<&str>> = HashMap::new();
        for r in rows {
            bots_of
                .entry(variant_label(r))
                .or_default()
                .extend(r.seats());
        }
        let mut keys: HashMap<(String, Vec<&str>), Vec<usize>> = HashMap::new();
        let mut openings: HashMap<String, Vec<(&str, usize)>> = HashMap::new();
        for (i, r) in rows.iter().enumerate() {
            let label = variant_label(r);
            let mut bots = r.seats();
            bots.sort_unstable();
            let per_bot = bots_of[&label].len() > PAIRING_BOTS;
            let ks: Vec<Vec<&str>> = if per_bot {
                bots.dedup();
                bots.into_iter().map(|b| vec![b]).collect()
            } else {
                vec![bots]
            };
            for k in ks {
                keys.entry((label.clone(), k)).or_default().push(i);
            }
            let o = openings.entry(label).or_default();
            if o.len() < OPENINGS && !o.iter().any(|(x, _)| *x == r.opening) {
                o.push((r.opening.as_str(), i));
            }
        }
        let mut out: HashSet<usize> = listed.iter().copied().collect();
        for games in keys.values() {
            let first_min =
                games.iter().copied().reduce(
                    |a, b| {
                        if rows[b].plies < rows[a].plies {
                            b
                        } else {
                            a
                        }
                    },
                );
            let first_max =
                games.iter().copied().reduce(
                    |a, b| {
                        if rows[b].plies > rows[a].plies {
                            b
                        } else {
                            a
                        }
                    },
                );
            out.extend(first_min.into_iter().chain(first_max));
            out.extend(games.iter().rev().take(RECENT));
            let forfeits = games.iter().rev().filter(|&&i| rows[i].offender.is_some());
            out.extend(forfeits.take(FORFEITS));
        }
        out.extend(openings.values().flatten().map(|&(_, i)| i));
        let mut v: Vec<usize> = out.into_iter().collect();
        v.sort_unstable();
        v
    }

    /// Read one row at a time, the sample is the rule's, in labels of few
    /// bots and of many (one growing past `PAIRING_BOTS` midway), with
    /// forfeits and openings; the rows held meanwhile stay bounded by the
    /// keeps, not by the games.
    #[test]
    fn the_streaming_sample_is_the_rule_and_holds_few_rows() {
        let mut rows = Vec::new();
        let mut x = 12345u64;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for i in 0..20_000usize {
            // Label `kisolo`: 8 bots; `filo`: 4 bots, then 120 after 5,000.
            let (variant, bots) = if i % 2 == 0 {
                ("kisolo", 8)
            } else if i < 5_000 {
                ("filo", 4)
            } else {
                ("filo", 120)
            };
            let a = next(bots);
            let b = (a + 1 + next(bots - 1)) % bots;
            let mut r = row(i, &format!("b{a}"), &format!("b{b}"), 0, next(50) == 0);
            r.variant = variant.into();
            r.plies = 10 + next(200) as u32;
            r.opening = format!("o{}", next(40));
            rows.push(r);
        }
        let listed: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].offender.is_some())
            .take(30)
            .collect();
        let got: Vec<usize> = sample(&rows, &listed).iter().map(|(i, _)| *i).collect();
        assert_eq!(got, reference(&rows, &listed));
        let mut s = Sampler::default();
        let mut most = 0;
        for (i, r) in rows.iter().enumerate() {
            s.add(
                &mut r.clone(),
                0,
                listed.contains(&i).then_some(Why::Forfeit),
            );
            most = most.max(s.held());
        }
        // Per bot of filo (120) and per pairing of kisolo (28): shortest,
        // longest, recent and forfeits each; the openings, the listed.
        let bound = (120 + 28) * (RECENT + 2 + FORFEITS) + 2 * OPENINGS + 30;
        assert!(most <= bound, "{most} rows held, more than {bound}");
        let out = s.finish();
        assert_eq!(out.iter().map(|x| x.0).collect::<Vec<_>>(), got);
        assert!(out.iter().all(|(i, _, r, _)| *r == rows[*i]));
    }
}
