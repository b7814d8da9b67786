//! The ladder's ratings, refitted in the background with the models of
//! `arena rate` (Bradley–Terry with draws for 2 players, Luce for 3; per
//! variant and overall; the same default options), after `refit_games`
//! new games or `refit_seconds` after the first game the last fit lacks,
//! and at once when the finished games are read again whole (a
//! quarantined worker's games held: fewer games than the last fit's).
//! The standings shown are always those of a complete fit, with its time
//! and game count; `arena rate` of `/api/games.csv` gives the same.

use super::bus::Fit;
use super::ladder::Ladder;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a fit saw: the finished games' generation (a new one each time
/// they are read again whole, as when a worker's games are held) and
/// their count.
pub type Seen = (u64, usize);

/// Whether a fit is due: never fitted, or the games were read again whole
/// (fewer, or others: at once), or `refit_games` new games, or
/// `refit_seconds` since the first game the last fit lacks (`waited`).
pub fn due(fitted: Option<Seen>, now: Seen, waited: Duration, games: u64, seconds: u64) -> bool {
    let Some((generation, count)) = fitted else {
        return now.1 > 0;
    };
    if now.0 != generation {
        return true;
    }
    let new = now.1.saturating_sub(count) as u64;
    new > 0 && (new >= games || waited >= Duration::from_secs(seconds))
}

/// Refits until the service stops.
pub fn fit_forever(ladder: Arc<Ladder>) {
    let mut fitted: Option<Seen> = None;
    let mut waiting_since: Option<Instant> = None;
    while !ladder.is_stopping() {
        let now = {
            let f = ladder.finished();
            (f.generation, f.games())
        };
        if Some(now) != fitted {
            let since = *waiting_since.get_or_insert_with(Instant::now);
            let s = &ladder.settings;
            if due(fitted, now, since.elapsed(), s.refit_games, s.refit_seconds) {
                if let Some(f) = refit(&ladder) {
                    fitted = Some((f.generation, f.games));
                }
                waiting_since = None;
            }
        }
        ladder.wait(Duration::from_millis(500));
    }
}

/// Fits the ratings of every finished game now, keeps the fit as the
/// last complete one and announces it. `None` when the fit fails (logged).
pub fn refit(ladder: &Ladder) -> Option<Arc<Fit>> {
    let (tally, games, generation) = {
        let f = ladder.finished();
        (f.tally(), f.games(), f.generation)
    };
    if games == 0 {
        return None;
    }
    let start = Instant::now();
    let report = match tally.report() {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("the ratings cannot be fitted: {e}");
            return None;
        }
    };
    let fit = Arc::new(Fit {
        report,
        games,
        generation,
        at: super::store::now(),
        took: start.elapsed(),
    });
    ladder.metrics.fits.fetch_add(1, Ordering::Relaxed);
    ladder
        .metrics
        .fit_micros
        .store(fit.took.as_micros() as u64, Ordering::Relaxed);
    let change = ladder.fits.keep(fit.clone());
    // Kept across restarts; a store that refuses it costs the history's
    // new points only.
    if let Err(e) = ladder.query(ladder.db.note_rating_history(&change)) {
        tracing::warn!("the ratings' history cannot be kept in the store: {e}");
    }
    ladder.announce(crate::serve::bus::FeedEvent::Standings {
        games: fit.games,
        at: &fit.at,
    });
    Some(fit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_held_refit_at_once_and_the_count_never_goes_below_zero() {
        let zero = Duration::ZERO;
        let long = Duration::from_secs(60);
        assert!(due(None, (0, 1), zero, 100, 10));
        assert!(!due(None, (0, 0), long, 100, 10));
        // New games: after 100, or 10 s after the first the fit lacks.
        assert!(!due(Some((0, 11_216)), (0, 11_216), long, 100, 10));
        assert!(!due(Some((0, 11_216)), (0, 11_217), zero, 100, 10));
        assert!(due(Some((0, 11_216)), (0, 11_217), long, 100, 10));
        assert!(due(Some((0, 11_216)), (0, 11_316), zero, 100, 10));
        // A worker's 6,030 games held, the games read again whole: at
        // once, though fewer than the last fit saw (before, nothing until
        // the count passed 11,216 again).
        assert!(due(Some((0, 11_216)), (1, 5_186), zero, 100, 10));
        // As many as before, but others.
        assert!(due(Some((0, 11_216)), (1, 11_216), zero, 100, 10));
    }
}
