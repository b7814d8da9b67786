//! Which uploads the intake builds and checks next (issue 47): a pool of
//! `builds_at_once` slots, fair between owners. A pure function of the
//! versions waiting and those in the pool: no I/O, no clock.
//!
//! The rule: a version waits behind any older version of its own bot
//! (versions of a bot are entered in their order); among the others, an
//! owner with fewer versions in the pool goes first, then the oldest
//! upload; and an owner who holds a slot takes another only while two are
//! free, so that a slot is always left for an owner who comes next. So
//! one owner's uploads never hold more than one slot while another owner
//! waits, and owners take turns as slots free up.

use crate::serve::store::Version;

/// The next version to take from `waiting` (oldest first by id, those in
/// the pool left out by the caller) while `running` are in the pool and
/// `free` slots are free: its index in `waiting`, or none (nothing can
/// start: each waits behind its bot's older version, or its owner holds a
/// slot and only one is free).
pub fn next(waiting: &[Version], running: &[Version], free: usize) -> Option<usize> {
    let busy = |owner: &str| running.iter().filter(|r| r.owner == owner).count();
    waiting
        .iter()
        .enumerate()
        .filter(|(i, v)| {
            !running.iter().any(|r| r.bot == v.bot)
                && !waiting[..*i].iter().any(|o| o.bot == v.bot && o.id < v.id)
                && (busy(&v.owner) == 0 || free >= 2)
        })
        .min_by_key(|(_, v)| (busy(&v.owner), v.id))
        .map(|(i, _)| i)
}

/// The order in which `waiting` would be taken if no other upload came,
/// as ids: each one's place in the queue (1 = next). A version behind its
/// bot's version in the pool comes after those that can start.
pub fn order(waiting: &[Version], running: &[Version]) -> Vec<i64> {
    let mut left: Vec<Version> = waiting.to_vec();
    left.sort_by_key(|v| v.id);
    let mut ahead: Vec<Version> = running.to_vec();
    let mut out = Vec::new();
    while !left.is_empty() {
        let i = match next(&left, &ahead, usize::MAX) {
            Some(i) => i,
            // Only versions behind the pool's own bots: each as its bot's
            // version there finishes, oldest first.
            None => {
                ahead.clear();
                continue;
            }
        };
        let v = left.remove(i);
        out.push(v.id);
        ahead.push(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(id: i64, owner: &str, bot: &str) -> Version {
        Version {
            id,
            bot: bot.into(),
            owner: owner.into(),
            number: id,
            status: crate::serve::store::VersionStatus::Queued,
            detail: String::new(),
            report: String::new(),
            folder: String::new(),
            sha256: String::new(),
            bytes: 0,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    #[test]
    fn an_owner_with_a_slot_waits_while_another_owner_waits() {
        // Alice uploaded three bots first; Bob one after them.
        let waiting = [
            v(1, "alice", "a1"),
            v(2, "alice", "a2"),
            v(3, "alice", "a3"),
            v(4, "bob", "b1"),
        ];
        // Alice holds one slot: Bob's upload goes before her next ones.
        let running = [v(1, "alice", "a1")];
        assert_eq!(next(&waiting[1..], &running, 3), Some(2));
        // Nobody in the pool: the oldest.
        assert_eq!(next(&waiting, &[], 2), Some(0));
        // With one slot free, Alice does not take it: it is left for the
        // next owner who comes.
        assert_eq!(next(&waiting[1..3], &running, 1), None);
        assert_eq!(next(&waiting[1..3], &running, 2), Some(0));
        // The queue alternates between owners.
        assert_eq!(order(&waiting, &[]), [1, 4, 2, 3]);
        assert_eq!(order(&waiting[1..], &running), [4, 2, 3]);
    }

    #[test]
    fn a_bots_versions_go_one_after_the_other_in_their_order() {
        let waiting = [v(5, "alice", "a"), v(6, "alice", "a"), v(7, "bob", "b")];
        let running = [v(4, "alice", "a")];
        // Both of alice's wait behind her version in the pool.
        assert_eq!(next(&waiting, &running, 3), Some(2));
        assert_eq!(next(&waiting[..2], &running, 3), None);
        assert_eq!(order(&waiting, &running), [7, 5, 6]);
        // Alone in the queue: in their order.
        assert_eq!(next(&waiting[..2], &[], 1), Some(0));
    }

    #[test]
    fn an_owner_alone_may_fill_the_pool_but_one_slot() {
        let waiting = [v(1, "alice", "a1"), v(2, "alice", "a2")];
        let running = [v(0, "alice", "a0")];
        assert_eq!(next(&waiting, &running, 3), Some(0));
        assert_eq!(next(&waiting, &running, 1), None);
    }
}
