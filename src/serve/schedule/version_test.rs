//! The pairs of the tests between versions (docs/ladder.md "Tests between
//! versions"): while a test runs, the scheduler keeps its games in the
//! same queue as the pairing rule's, as seat-swapped pairs (the same
//! opening, the new version first in one game and second in the other),
//! so that the server and the workers both play them. [`next_pairs`] is
//! the pure rule (which test gets the next pair, of which variant);
//! [`top_up`] reads the store and queues its picks.

use crate::serve::store::version_tests::RunningTest;
use crate::serve::store::{Db, DbError};
use std::collections::HashMap;

/// The test games kept in flight (pending or playing) over all running
/// tests: one per slot that plays (`slots`, the queue's target), rounded
/// up to whole pairs, and at least one pair.
pub fn in_flight_target(slots: usize) -> usize {
    slots.max(2).div_ceil(2) * 2
}

/// The pairs to queue now, as (test, variant, new version, old version):
/// while fewer than `target` test games are in flight (`in_flight`, by
/// test), a pair to the running test with the fewest in flight (then the
/// fewest queued, then the oldest) that has budget left; each test's
/// pairs go round the 2-player variants `variants` (ladder indexes).
pub fn next_pairs(
    tests: &[RunningTest],
    in_flight: &HashMap<i64, i64>,
    variants: &[usize],
    target: usize,
) -> Vec<(i64, usize, i64, i64)> {
    let mut out = Vec::new();
    if variants.is_empty() {
        return out;
    }
    let mut flying: Vec<i64> = tests
        .iter()
        .map(|t| in_flight.get(&t.id).copied().unwrap_or(0))
        .collect();
    let mut queued: Vec<i64> = tests.iter().map(|t| t.games_queued).collect();
    let mut total: i64 = in_flight.values().sum();
    while total + 2 <= target as i64 {
        let Some(i) = (0..tests.len())
            .filter(|&i| queued[i] + 2 <= tests[i].max_games)
            .min_by_key(|&i| (flying[i], queued[i], tests[i].id))
        else {
            break;
        };
        let t = &tests[i];
        let variant = variants[(queued[i] / 2) as usize % variants.len()];
        out.push((t.id, variant, t.new_version_id, t.old_version_id));
        flying[i] += 2;
        queued[i] += 2;
        total += 2;
    }
    out
}

/// Queues the pairs [`next_pairs`] picks for the running tests, with
/// `slots` slots playing; returns the games queued (0 when no test runs).
pub async fn top_up(db: &Db, variants: &[usize], slots: usize) -> Result<usize, DbError> {
    let tests = db.running_tests().await?;
    if tests.is_empty() {
        return Ok(0);
    }
    let in_flight = db.test_games_in_flight().await?;
    let pairs = next_pairs(&tests, &in_flight, variants, in_flight_target(slots));
    if pairs.is_empty() {
        return Ok(0);
    }
    db.queue_test_pairs(&pairs).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(id: i64, queued: i64, max: i64) -> RunningTest {
        RunningTest {
            id,
            new_version_id: 10 * id + 2,
            old_version_id: 10 * id + 1,
            games_queued: queued,
            max_games: max,
        }
    }

    /// Pairs fill the target, shared between tests by what they have in
    /// flight, round the variants, within each test's budget.
    #[test]
    fn pairs_fill_the_target_fairly_within_budgets() {
        assert_eq!(in_flight_target(0), 2);
        assert_eq!(in_flight_target(3), 4);
        assert_eq!(in_flight_target(4), 4);
        let tests = [test(1, 0, 100), test(2, 0, 100)];
        let got = next_pairs(&tests, &HashMap::new(), &[0, 2], 4);
        assert_eq!(got, [(1, 0, 12, 11), (2, 0, 22, 21)]);
        // Test 1 has a pair in flight: test 2 gets the next.
        let flying = HashMap::from([(1, 2)]);
        let tests = [test(1, 2, 100), test(2, 2, 100)];
        assert_eq!(next_pairs(&tests, &flying, &[0, 2], 4), [(2, 2, 22, 21)]);
        // Full: nothing.
        let flying = HashMap::from([(1, 4)]);
        assert!(next_pairs(&tests, &flying, &[0], 4).is_empty());
        // A budget of 3 games holds one pair only.
        let tests = [test(1, 2, 3)];
        assert!(next_pairs(&tests, &HashMap::new(), &[0], 8).is_empty());
        // No 2-player variant: no pair.
        assert!(next_pairs(&[test(1, 0, 9)], &HashMap::new(), &[], 8).is_empty());
    }
}
