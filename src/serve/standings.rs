//! The ladder's ratings, refitted in the background with the models of
//! `arena rate` (Bradley–Terry with draws for 2 players, Luce for 3; per
//! variant and overall; the same default options), after `refit_games`
//! new games or `refit_seconds` after the first game the last fit lacks.
//! The standings shown are always those of a complete fit, with its time
//! and game count; `arena rate` of `/api/games.csv` gives the same.

use super::bus::Fit;
use super::ladder::Ladder;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Refits until the service stops.
pub fn fit_forever(ladder: Arc<Ladder>) {
    let mut fitted = 0usize;
    let mut waiting_since: Option<Instant> = None;
    while !ladder.is_stopping() {
        let n = ladder.games_done();
        if n > fitted {
            let since = *waiting_since.get_or_insert_with(Instant::now);
            let due = (n - fitted) as u64 >= ladder.settings.refit_games
                || since.elapsed() >= Duration::from_secs(ladder.settings.refit_seconds)
                || fitted == 0;
            if due {
                if let Some(f) = refit(&ladder) {
                    fitted = f.games;
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
    let (tally, games) = {
        let f = ladder.finished();
        (f.tally(), f.games())
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
        at: super::store::now(),
        took: start.elapsed(),
    });
    ladder.metrics.fits.fetch_add(1, Ordering::Relaxed);
    ladder
        .metrics
        .fit_micros
        .store(fit.took.as_micros() as u64, Ordering::Relaxed);
    ladder.fits.keep(fit.clone());
    ladder.announce(crate::serve::bus::FeedEvent::Standings {
        games: fit.games,
        at: &fit.at,
    });
    Some(fit)
}
