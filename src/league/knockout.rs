//! The knockout bracket (`format = "knockout"`, docs/league.md
//! "Knockout"): who meets whom in each round, from the seeding and the
//! points of the rounds before. Pure: no processes, no files.
//!
//! The bracket has room for the next power of two of bots; the places
//! left empty are byes and fall to the top seeds (seed 1 meets the last
//! place, as in a tennis draw). A match is won by the bot with more
//! points in it; a drawn match goes to the better seed, so that a rerun
//! or a resume decides it the same way without extra games.

/// The rounds of a knockout of `n` bots: log2 of `n`, rounded up.
pub fn rounds(n: usize) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

/// The seed numbers (from 0) in the bracket's places for a bracket of
/// `size` (a power of two): 0 meets size-1, and seeds 0 and 1 can only
/// meet in the final.
fn seed_places(size: usize) -> Vec<usize> {
    let mut places = vec![0];
    while places.len() < size {
        let m = places.len() * 2;
        places = places.iter().flat_map(|&s| [s, m - 1 - s]).collect();
    }
    places
}

/// Who is in each place of each round: `order` the bots by seed (best
/// first), `points[r]` each bot's points in round `r` (rounds played so
/// far). The first entry is round 1; one more entry than `points` has,
/// up to the final's (or the champion's, after the final).
pub fn places(order: &[usize], points: &[Vec<f64>]) -> Vec<Vec<Option<usize>>> {
    let size = order.len().max(1).next_power_of_two();
    let first: Vec<Option<usize>> = seed_places(size)
        .into_iter()
        .map(|s| order.get(s).copied())
        .collect();
    let mut all = vec![first];
    for p in points {
        let last = all.last().expect("round 1");
        if last.len() < 2 {
            break;
        }
        let next = last
            .chunks(2)
            .map(|m| match (m[0], m[1]) {
                (Some(a), Some(b)) => Some(winner(order, p, a, b).0),
                (a, b) => a.or(b),
            })
            .collect();
        all.push(next);
    }
    all
}

/// The winner of the match of `a` and `b` (`order` the bots by seed,
/// `points` each bot's points in the match's round), and whether the
/// match was drawn and went to the better seed.
pub fn winner(order: &[usize], points: &[f64], a: usize, b: usize) -> (usize, bool) {
    let seed_of = |b: usize| order.iter().position(|&x| x == b).unwrap_or(usize::MAX);
    let (pa, pb) = (
        points.get(a).copied().unwrap_or(0.0),
        points.get(b).copied().unwrap_or(0.0),
    );
    match pa.partial_cmp(&pb) {
        Some(std::cmp::Ordering::Greater) => (a, false),
        Some(std::cmp::Ordering::Less) => (b, false),
        _ if seed_of(a) < seed_of(b) => (a, true),
        _ => (b, true),
    }
}

/// One round's matches (the better seed first) and byes, from its places.
pub fn matches(order: &[usize], places: &[Option<usize>]) -> (Vec<(usize, usize)>, Vec<usize>) {
    let seed_of = |b: usize| order.iter().position(|&x| x == b).unwrap_or(usize::MAX);
    let mut pairs = Vec::new();
    let mut byes = Vec::new();
    for m in places.chunks(2) {
        match (m[0], m.get(1).copied().flatten()) {
            (Some(a), Some(b)) if seed_of(a) <= seed_of(b) => pairs.push((a, b)),
            (Some(a), Some(b)) => pairs.push((b, a)),
            (Some(a), None) | (None, Some(a)) => byes.push(a),
            (None, None) => {}
        }
    }
    (pairs, byes)
}

#[cfg(test)]
mod tests;
