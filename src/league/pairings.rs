//! Where the next games come from: the seam between the game pipeline and
//! how games are picked. The runner asks for work and says what finished;
//! it knows nothing of how games are chosen. Today's one source is the
//! league's fixed schedule ([`RoundRobin`]: seat-balanced seat-swap
//! groups, openings, gauntlet and shards, all in [`Schedule`], stopped
//! early by an SPRT when it has one, [`SprtStop`]); a Swiss, paired round
//! by round from the results, is another
//! ([`super::swiss_games::SwissPairings`]), and so is a ladder service's
//! adaptive picker.

use super::folder::DoneSet;
use super::schedule::{Cursor, Schedule, ScheduledGame};
use crate::ratings::sprt::{Decided, SprtTracker};
use crate::results::GameRow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A source of games to play, shared by the workers.
pub trait Pairings: Send + Sync {
    /// The next game to play, or `None` when there is none left.
    fn next(&self) -> Option<ScheduledGame>;
    /// Game `index` is finished and committed with `row`. Returns why,
    /// when this game makes the source hand out no more games before its
    /// end (once; the games in flight still finish).
    fn finished(&self, index: usize, row: &GameRow) -> Option<String>;
    /// How many games the source has in all (played or not).
    fn total(&self) -> usize;
    /// Whether games may still come after [`Pairings::next`] gave none:
    /// a source whose next games wait on the results of games in flight
    /// (a Swiss round, [`super::swiss_games::SwissPairings`]) says so, and
    /// the worker asks again a moment later.
    fn pending(&self) -> bool {
        false
    }
}

/// The league's schedule, in order, minus the games already done; with an
/// SPRT, only until it decides.
pub struct RoundRobin {
    schedule: Schedule,
    /// The next game to hand out (those in `done` are passed over).
    cursor: Mutex<Cursor>,
    /// The games already in the results when the run started, by index.
    done: DoneSet,
    sprt: Option<SprtStop>,
}

impl RoundRobin {
    pub fn new(schedule: Schedule, done: DoneSet) -> RoundRobin {
        RoundRobin {
            cursor: Mutex::new(schedule.cursor()),
            schedule,
            done,
            sprt: None,
        }
    }

    /// The same schedule, ended as soon as `sprt` decides.
    pub fn with_sprt(self, sprt: SprtStop) -> RoundRobin {
        RoundRobin {
            sprt: Some(sprt),
            ..self
        }
    }
}

impl Pairings for RoundRobin {
    fn next(&self) -> Option<ScheduledGame> {
        if self.sprt.as_ref().is_some_and(SprtStop::is_decided) {
            return None;
        }
        let mut cursor = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        std::iter::from_fn(|| self.schedule.next_game(&mut cursor))
            .find(|g| !self.done.contains(g.index))
    }

    /// The schedule does not change with results; its SPRT counts them.
    fn finished(&self, _index: usize, row: &GameRow) -> Option<String> {
        let d = self.sprt.as_ref()?.add(row)?;
        Some(format!(
            "SPRT: {} (LLR {:.2}) after {} games",
            d.decision, d.llr, d.games
        ))
    }

    fn total(&self) -> usize {
        self.schedule.len()
    }
}

/// An SPRT that ends a schedule: told of each finished game, in the order
/// they are committed (after those of earlier runs, given to the tracker
/// first), it ends the schedule when the test decides. A clone shares the
/// test, so that the caller reads the decision after the run.
#[derive(Clone, Debug)]
pub struct SprtStop {
    tracker: Arc<Mutex<SprtTracker>>,
    /// Raised when the tracker decides: the workers read it for each game
    /// without waiting for the tracker.
    decided: Arc<AtomicBool>,
}

impl SprtStop {
    /// The test of `tracker`, with the games it has counted.
    pub fn new(tracker: SprtTracker) -> SprtStop {
        let decided = tracker.decided().is_some();
        SprtStop {
            tracker: Arc::new(Mutex::new(tracker)),
            decided: Arc::new(AtomicBool::new(decided)),
        }
    }

    /// Counts a finished game; returns the decision when this game makes
    /// the test decide.
    fn add(&self, row: &GameRow) -> Option<Decided> {
        let d = self.lock().add(row)?;
        self.decided.store(true, Ordering::SeqCst);
        Some(d)
    }

    fn is_decided(&self) -> bool {
        self.decided.load(Ordering::SeqCst)
    }

    /// When the test decided, if it did.
    pub fn decided(&self) -> Option<Decided> {
        self.lock().decided()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SprtTracker> {
        self.tracker.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::league::config::{RunSettings, Tournament};

    /// Two bots, `a` and `b`, over many rounds of F.I.L.O.
    fn schedule() -> Schedule {
        let src = r#"
            name = "t"
            bots = [{ name = "a", command = ["x"] }, { name = "b", command = ["x"] }]
            variants = ["filo"]
            rounds = 500
        "#;
        let t =
            Tournament::parse_with(std::path::Path::new("t.toml"), src, &RunSettings::default())
                .expect("a tournament");
        Schedule::new(&t, None)
    }

    /// A's result in `g`: two pairs won outright, then one split.
    fn row(g: &ScheduledGame) -> GameRow {
        let names = ["a", "b"];
        let a_seat = g.seats.iter().position(|&b| b == 0).unwrap_or(0);
        let a_wins = !g.round.is_multiple_of(3) || a_seat == 0;
        let a_score = if a_wins { 1.0 } else { 0.0 };
        GameRow {
            game_id: g.game_id.clone(),
            variant: "filo".into(),
            players: 2,
            group: g.group.clone(),
            seat0: names[g.seats[0]].into(),
            seat1: names[g.seats[1]].into(),
            score0: if a_seat == 0 { a_score } else { 1.0 - a_score },
            score1: if a_seat == 1 { a_score } else { 1.0 - a_score },
            ..GameRow::default()
        }
    }

    #[test]
    fn the_round_robin_hands_out_no_game_once_its_sprt_decides() {
        let config = "elo0=0,elo1=5".parse().expect("an SPRT");
        let stop = SprtStop::new(SprtTracker::new(config, "a", "b"));
        let pairings = RoundRobin::new(schedule(), DoneSet::default()).with_sprt(stop.clone());
        let (mut handed, mut endings) = (0, Vec::new());
        while let Some(g) = pairings.next() {
            handed += 1;
            endings.extend(pairings.finished(g.index, &row(&g)));
        }
        let decided = stop.decided().expect("the SPRT decided");
        assert_eq!(endings.len(), 1, "{endings:?}");
        assert!(endings[0].starts_with("SPRT: H1 accepted"), "{endings:?}");
        assert_eq!(handed, decided.games);
        assert!(handed < pairings.total() as u64);
    }

    #[test]
    fn without_an_sprt_the_round_robin_plays_the_whole_schedule() {
        let pairings = RoundRobin::new(schedule(), DoneSet::default());
        let mut handed = 0;
        while let Some(g) = pairings.next() {
            handed += 1;
            assert_eq!(pairings.finished(g.index, &row(&g)), None);
        }
        assert_eq!(handed, pairings.total());
    }
}
