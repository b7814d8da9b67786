//! How fast each worker plays, learnt from what it uploads: the size of
//! the claims it is granted (docs/ladder.md, "How many games a worker
//! holds").
//!
//! Two bounds. A game's `duration_ms` (a moving average of the worker's
//! recent games) says how many games keep a slot busy for a while; but
//! it is the game alone, from its first message to its last: what a
//! worker spends between games (bots started again, a Python
//! interpreter's 300 ms) is not in it, so on it alone a worker whose bots
//! start for each game was granted minutes of games for 2 s of work. So a
//! worker may also hold at most twice the games it had committed over the
//! last [`WINDOW`], plus one a slot: what it has shown it plays, with room
//! to grow (doubling each window, as TCP's slow start does) and no more.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many games the moving average of durations reaches back, about.
const REACH: f64 = 20.0;

/// The window over which a worker's committed games are counted: the
/// time a claim looks ahead.
pub const WINDOW: Duration = Duration::from_secs(2);

/// Uploads closer together than this are counted as one entry.
const GRAIN: Duration = Duration::from_millis(50);

/// One worker's pace.
#[derive(Debug, Default)]
struct Pace {
    /// The moving average of its games' `duration_ms`.
    game_ms: Option<f64>,
    /// Its committed games over the last [`WINDOW`]: when, how many.
    recent: VecDeque<(Instant, usize)>,
}

impl Pace {
    fn forget_before(&mut self, now: Instant) {
        while self
            .recent
            .front()
            .is_some_and(|(t, _)| now.saturating_duration_since(*t) > WINDOW)
        {
            self.recent.pop_front();
        }
    }
}

/// The paces of the workers, by owner id.
#[derive(Debug, Default)]
pub struct Paces(Mutex<HashMap<i64, Pace>>);

impl Paces {
    fn with<T>(&self, worker: i64, f: impl FnOnce(&mut Pace) -> T) -> T {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(all.entry(worker).or_default())
    }

    /// Notes a committed game of `worker` that lasted `duration_ms`.
    pub fn note_game(&self, worker: i64, duration_ms: u64) {
        self.with(worker, |p| {
            let x = duration_ms as f64;
            p.game_ms = Some(p.game_ms.map_or(x, |m| m + (x - m) / REACH));
        });
    }

    /// Notes that one request of `worker` committed `games` games at `now`.
    pub fn note_upload(&self, worker: i64, games: usize, now: Instant) {
        if games == 0 {
            return;
        }
        self.with(worker, |p| {
            p.forget_before(now);
            match p.recent.back_mut() {
                Some((t, n)) if now.saturating_duration_since(*t) < GRAIN => *n += games,
                _ => p.recent.push_back((now, games)),
            }
        });
    }

    /// The mean duration of `worker`'s recent games, in ms; `None` before
    /// its first.
    pub fn game_ms(&self, worker: i64) -> Option<f64> {
        self.with(worker, |p| p.game_ms)
    }

    /// The most games `worker`, with `jobs` slots, may hold at `now`:
    /// twice what it committed over the last [`WINDOW`], plus one a slot.
    pub fn most_held(&self, worker: i64, jobs: i64, now: Instant) -> i64 {
        self.with(worker, |p| {
            p.forget_before(now);
            let recent: usize = p.recent.iter().map(|(_, n)| n).sum();
            2 * i64::try_from(recent).unwrap_or(i64::MAX / 4) + jobs.max(1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: i64 = 7;

    #[test]
    fn a_worker_holds_twice_what_it_showed_over_the_window_and_one_a_slot() {
        let p = Paces::default();
        let t0 = Instant::now();
        // Nothing shown yet: one game a slot.
        assert_eq!(p.most_held(W, 2, t0), 2);
        // One game every 300 ms, as a worker starting a Python bot for
        // each: 7 games in the last 2 s.
        for i in 0..20 {
            p.note_game(W, 5);
            p.note_upload(W, 1, t0 + Duration::from_millis(300 * i));
        }
        let now = t0 + Duration::from_millis(300 * 19);
        assert_eq!(p.most_held(W, 1, now), 2 * 7 + 1);
        // Its games' 5 ms would have granted 400 a slot.
        assert_eq!(p.game_ms(W), Some(5.0));
        // Idle for longer than the window: back to one a slot.
        assert_eq!(p.most_held(W, 1, now + WINDOW * 2), 1);
    }

    #[test]
    fn batches_count_each_game_and_the_bound_doubles_as_the_worker_keeps_up() {
        let p = Paces::default();
        let t0 = Instant::now();
        let mut held = p.most_held(W, 2, t0);
        // A worker that plays all it is given within each 100 ms upload:
        // the bound doubles each window, at least.
        for i in 1..=40u32 {
            let now = t0 + Duration::from_millis(100) * i;
            p.note_upload(W, held as usize, now);
            let next = p.most_held(W, 2, now);
            assert!(next > held, "{i}: {next} after {held}");
            held = next.min(10_000);
        }
        assert!(held >= 10_000, "{held}");
    }

    #[test]
    fn a_moving_average_of_durations() {
        let p = Paces::default();
        assert_eq!(p.game_ms(W), None);
        p.note_game(W, 100);
        assert_eq!(p.game_ms(W), Some(100.0));
        for _ in 0..200 {
            p.note_game(W, 10);
        }
        assert!((p.game_ms(W).expect("known") - 10.0).abs() < 0.1);
    }
}
