//! Where the next games come from: the seam between the game pipeline and
//! how games are picked. The runner asks for work and says what finished;
//! it knows nothing of how games are chosen. Today's one source is the
//! league's fixed schedule ([`RoundRobin`]: seat-balanced seat-swap
//! groups, openings, gauntlet and shards, all in [`Schedule`]); a ladder
//! service's adaptive picker would be another.

use super::folder::DoneSet;
use super::schedule::{Cursor, Schedule, ScheduledGame};
use crate::results::GameRow;
use std::sync::Mutex;

/// A source of games to play, shared by the workers.
pub trait Pairings: Send + Sync {
    /// The next game to play, or `None` when there is none left.
    fn next(&self) -> Option<ScheduledGame>;
    /// Game `index` is finished and committed with `row`.
    fn finished(&self, index: usize, row: &GameRow);
    /// How many games the source has in all (played or not).
    fn total(&self) -> usize;
}

/// The league's schedule, in order, minus the games already done.
pub struct RoundRobin {
    schedule: Schedule,
    /// The next game to hand out (those in `done` are passed over).
    cursor: Mutex<Cursor>,
    /// The games already in the results when the run started, by index.
    done: DoneSet,
}

impl RoundRobin {
    pub fn new(schedule: Schedule, done: DoneSet) -> RoundRobin {
        RoundRobin {
            cursor: Mutex::new(schedule.cursor()),
            schedule,
            done,
        }
    }
}

impl Pairings for RoundRobin {
    fn next(&self) -> Option<ScheduledGame> {
        let mut cursor = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        std::iter::from_fn(|| self.schedule.next_game(&mut cursor))
            .find(|g| !self.done.contains(g.index))
    }

    /// A fixed schedule does not change with results.
    fn finished(&self, _index: usize, _row: &GameRow) {}

    fn total(&self) -> usize {
        self.schedule.len()
    }
}
