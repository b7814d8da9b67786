//! The games whose viewer data the default report holds (issue 33): a
//! sample bounded by the bots and variants, not by the games, so that a
//! league of a million games leaves a report of a few megabytes. Every
//! other game is shown on demand by `arena view`.
//!
//! The rule (`RULE`, shown on the page): per pairing (a variant label and
//! the set of its bots), its `RECENT` most recent games, its shortest and
//! its longest, and its `FORFEITS` most recent forfeits; per variant label,
//! the first game of each of its first `OPENINGS` openings; and the
//! forfeits the page lists one by one (`listed`).

use crate::ratings::variant_label;
use crate::results::GameRow;
use std::collections::HashMap;

/// Most recent games kept per pairing.
pub const RECENT: usize = 5;
/// Most recent forfeits kept per pairing.
pub const FORFEITS: usize = 20;
/// Openings per variant label whose first game is kept.
pub const OPENINGS: usize = 20;

/// The rule of the sample, in words, for the page.
pub fn rule() -> String {
    format!(
        "every forfeit (the {FORFEITS} most recent of each pairing when it has more), \
         the shortest and the longest game of each pairing, the {RECENT} most recent \
         games of each pairing, and the first game of each of the first {OPENINGS} \
         openings of each variant"
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
            Why::Shortest => "shortest of its pairing",
            Why::Longest => "longest of its pairing",
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
    let mut pairings: HashMap<(String, Vec<&str>), Pairing> = HashMap::new();
    let mut openings: HashMap<String, HashMap<&str, usize>> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let label = variant_label(r);
        let mut bots = r.seats();
        bots.sort_unstable();
        let p = pairings.entry((label.clone(), bots)).or_default();
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
}
