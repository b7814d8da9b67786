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

use crate::ratings::variant_label;
use crate::results::GameRow;
use std::collections::{HashMap, HashSet};

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
        }
    }
}

/// The indexes of the rows in the sample, in row order, each with why; the
/// rows at `listed` (the forfeits the page lists) are in it too.
pub fn sample(rows: &[GameRow], listed: &[usize]) -> Vec<(usize, Why)> {
    // Per pairing: (shortest, longest, recent ring, forfeits ring).
    #[derive(Default)]
    struct Pairing {
        shortest: Option<(u32, usize)>,
        longest: Option<(u32, usize)>,
        recent: Vec<usize>,
        forfeits: Vec<usize>,
    }
    // The labels of more than PAIRING_BOTS bots, kept per bot.
    let mut bots_of: HashMap<String, HashSet<&str>> = HashMap::new();
    for r in rows {
        bots_of
            .entry(variant_label(r))
            .or_default()
            .extend(r.seats());
    }
    let per_bot: HashSet<String> = bots_of
        .into_iter()
        .filter(|(_, bots)| bots.len() > PAIRING_BOTS)
        .map(|(label, _)| label)
        .collect();
    // Keyed by label and the pairing's bots, sorted, or one bot.
    let mut pairings: HashMap<(String, Vec<&str>), Pairing> = HashMap::new();
    let mut openings: HashMap<String, HashMap<&str, usize>> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let label = variant_label(r);
        let mut bots = r.seats();
        bots.sort_unstable();
        let keys: Vec<Vec<&str>> = if per_bot.contains(&label) {
            bots.dedup();
            bots.into_iter().map(|b| vec![b]).collect()
        } else {
            vec![bots]
        };
        for key in keys {
            let p = pairings.entry((label.clone(), key)).or_default();
            if p.shortest.is_none_or(|(n, _)| r.plies < n) {
                p.shortest = Some((r.plies, i));
            }
            if p.longest.is_none_or(|(n, _)| r.plies > n) {
                p.longest = Some((r.plies, i));
            }
            push_ring(&mut p.recent, i, RECENT);
            if r.offender.is_some() {
                push_ring(&mut p.forfeits, i, FORFEITS);
            }
        }
        let o = openings.entry(label).or_default();
        if o.len() < OPENINGS {
            o.entry(r.opening.as_str()).or_insert(i);
        }
    }
    let mut why: HashMap<usize, Why> = HashMap::new();
    let mut add = |i: usize, w: Why| {
        why.entry(i).or_insert(w);
    };
    for &i in listed {
        add(i, Why::Forfeit);
    }
    for p in pairings.values() {
        p.forfeits.iter().for_each(|&i| add(i, Why::Forfeit));
        if let Some((_, i)) = p.shortest {
            add(i, Why::Shortest);
        }
        if let Some((_, i)) = p.longest {
            add(i, Why::Longest);
        }
        p.recent.iter().for_each(|&i| add(i, Why::Recent));
    }
    for o in openings.values() {
        o.values().for_each(|&i| add(i, Why::Opening));
    }
    let mut out: Vec<(usize, Why)> = why.into_iter().collect();
    out.sort_unstable_by_key(|(i, _)| *i);
    out
}

/// Keeps the last `n` of what is pushed.
fn push_ring(v: &mut Vec<usize>, i: usize, n: usize) {
    if v.len() == n {
        v.remove(0);
    }
    v.push(i);
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
}
