//! The server's re-checks of the forfeits workers report, and its
//! quarantine of the workers that fail them (issue 47, item 7;
//! docs/security.md "Forged results"). One thread: it takes the oldest
//! forfeit held in the store, plays it again with the same bots up to the
//! forfeit ([`crate::serve::intake::recheck`]), and counts the game if the
//! fault comes again, else sends it back to the queue; then it asks the
//! rules ([`crate::serve::intake::suspects`]) which workers to quarantine.
//! Every minute it also weighs each worker's results against the others'
//! (the residual rule).

use super::intake::recheck::{play_to_forfeit, tries_for, Found};
use super::intake::spec_of;
use super::intake::suspects::{
    forfeit_suspects, residual_suspects, ForfeitCounts, Scored, FORFEIT_RULE, RESIDUAL_RULE,
};
use super::ladder::Ladder;
use super::store::finished::{read_finished, Finished};
use super::store::quarantine::Recheck;
use crate::results::GameRow;
use crate::wire::worker::game_id;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the residual rule reads the finished games.
const RESIDUALS_EVERY: Duration = Duration::from_secs(60);

/// The latest games the residual rule reads.
const RESIDUALS_OVER: i64 = 50_000;

/// Re-checks held forfeits until the service stops.
pub fn recheck_forever(l: Arc<Ladder>) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("the re-checks of workers' forfeits cannot start: {e}");
            return;
        }
    };
    let mut residuals_at = Instant::now();
    while !l.is_stopping() {
        if residuals_at.elapsed() >= RESIDUALS_EVERY {
            residuals_at = Instant::now();
            if let Err(e) = weigh_results(&l) {
                tracing::error!("the workers' results cannot be weighed: {e}");
            }
        }
        match l.query(l.db.next_recheck()) {
            Ok(Some(r)) => {
                if let Err(e) = recheck(&l, &rt, &r) {
                    tracing::warn!(
                        "the forfeit of {} reported by worker {} cannot be re-checked now: {e}; trying again in 5 s",
                        game_id(r.game_id),
                        r.worker
                    );
                    l.wait(Duration::from_secs(5));
                }
            }
            Ok(None) => l.wait(Duration::from_secs(1)),
            Err(e) => {
                tracing::error!("cannot read the forfeits to re-check: {e}");
                l.wait(Duration::from_secs(5));
            }
        }
    }
}

/// Counts one re-check's outcome for `/metrics`.
fn count(l: &Ladder, outcome: &'static str) {
    *l.workers
        .rechecks
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(outcome)
        .or_default() += 1;
}

/// Re-checks `r`: the game counts, goes back to the queue, or is tried
/// again (a timeout not found the first time). `Err`: the server could
/// not play it now (a bot that cannot start for the machine's reasons).
fn recheck(l: &Ladder, rt: &tokio::runtime::Runtime, r: &Recheck) -> Result<(), String> {
    let gid = game_id(r.game_id);
    let (rec, bots) = match setup(l, r) {
        Ok(x) => x,
        Err(why) => {
            // Nobody's fault that can be told: played again, counted
            // against nobody.
            tracing::warn!("{gid}: its forfeit cannot be played again ({why}): back in the queue");
            l.query(l.db.reject_recheck(r, "void", &why))
                .map_err(|e| e.to_string())?;
            l.sched.forget_queue();
            count(l, "void");
            return Ok(());
        }
    };
    let logs = l.t.output.join("logs").join("rechecks");
    let found = rt
        .block_on(play_to_forfeit(
            &l.t,
            &bots,
            &rec,
            r.variant,
            (&r.reason, r.offender),
            &logs,
        ))
        .map_err(|e| e.to_string())?;
    match found {
        Found::Again(what) => {
            let fresh = l
                .query(l.db.confirm_recheck(r, &what))
                .map_err(|e| e.to_string())?;
            tracing::info!(
                "{gid}: the {} of seat {} reported by worker {} came again ({what}): counted",
                r.reason,
                r.offender,
                r.worker
            );
            count(l, "confirmed");
            if fresh {
                counted(l, r);
            }
        }
        Found::NotAgain(what) if r.tries + 1 < tries_for(&r.reason) => {
            tracing::info!(
                "{gid}: the {} reported by worker {} did not come again ({what}): one more try",
                r.reason,
                r.worker
            );
            l.query(l.db.recheck_tried(r.id, r.tries + 1))
                .map_err(|e| e.to_string())?;
        }
        Found::NotAgain(what) => {
            l.query(l.db.reject_recheck(r, "not_reproduced", &what))
                .map_err(|e| e.to_string())?;
            l.sched.forget_queue();
            count(l, "not_reproduced");
            tracing::warn!(
                "{gid}: the {} of seat {} reported by worker {} did not come again when the server played it ({what}): not counted, back in the queue",
                r.reason,
                r.offender,
                r.worker
            );
            judge_forfeits(l).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The record of `r` read back and its bots' specs by seat, or why the
/// game cannot be played again.
fn setup(
    l: &Ladder,
    r: &Recheck,
) -> Result<
    (
        crate::referee::record::Recorded,
        Vec<crate::league::config::BotSpec>,
    ),
    String,
> {
    let bytes = crate::results::records::decode(&r.record).map_err(|e| e.to_string())?;
    let rec = crate::referee::record::read_record(&String::from_utf8_lossy(&bytes))
        .map_err(|e| e.to_string())?;
    if r.variant >= l.t.variants.len() {
        return Err("its variant is no longer the ladder's".into());
    }
    let mut bots = Vec::new();
    for id in &r.seats {
        let v = l
            .query(l.db.version(*id))
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("version {id} is gone"))?;
        bots.push(spec_of(&v).map_err(|e| format!("{}: {e}", v.player()))?);
    }
    Ok((rec, bots))
}

/// A held game now counts: the scheduler, the counters, the live feed
/// and the standings learn of it.
fn counted(l: &Ladder, r: &Recheck) {
    let Ok(row) = serde_json::from_str::<GameRow>(&r.row_json) else {
        return;
    };
    l.sched.note_finished(&row);
    l.metrics.games_played.fetch_add(1, Ordering::Relaxed);
    *l.metrics
        .faults
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(row.reason.clone())
        .or_default() += 1;
    l.announce_game(&row);
    l.finished_now(&row);
}

/// The forfeit rule over every worker's re-checks: the suspects go in
/// quarantine.
fn judge_forfeits(l: &Ladder) -> Result<(), super::store::DbError> {
    let counts: Vec<ForfeitCounts> = l
        .query(l.db.recheck_counts())?
        .into_iter()
        .map(|c| ForfeitCounts {
            worker: c.worker_id,
            checked: c.checked,
            not_reproduced: c.not_reproduced,
        })
        .collect();
    for (worker, why) in forfeit_suspects(&counts, &FORFEIT_RULE) {
        quarantine(l, worker, &why)?;
    }
    Ok(())
}

/// The residual rule over the latest [`RESIDUALS_OVER`] counted games:
/// the suspects go in quarantine.
fn weigh_results(l: &Ladder) -> Result<(), super::store::DbError> {
    let games: Vec<Scored> = l
        .query(l.db.scored_games(RESIDUALS_OVER))?
        .into_iter()
        .filter_map(|(worker, variant, seats, row)| {
            let row: GameRow = serde_json::from_str(&row).ok()?;
            Some(Scored {
                worker,
                pairing: (
                    usize::try_from(variant).ok()?,
                    seats.split(',').filter_map(|s| s.parse().ok()).collect(),
                ),
                score0: row.score0,
            })
        })
        .collect();
    for (worker, why) in residual_suspects(&games, &RESIDUAL_RULE) {
        quarantine(l, worker, &why)?;
    }
    Ok(())
}

/// Puts `worker` in quarantine for `why` (nothing if it is already): its
/// leases returned, its games held and queued again, the standings
/// reread without them.
fn quarantine(l: &Ladder, worker: i64, why: &str) -> Result<(), super::store::DbError> {
    let Some(q) = l.query(l.db.quarantine(worker, why))? else {
        return Ok(());
    };
    l.workers.quarantines.fetch_add(1, Ordering::Relaxed);
    l.sched.forget_queue();
    tracing::warn!(
        "worker {worker} is in quarantine: {why}; {} of its leases returned, {} of its games held and queued again (release: arena serve LADDER --release-worker NAME)",
        q.returned,
        q.held
    );
    if q.held > 0 {
        let mut all = Finished::default();
        let (to, read) = l.query(read_finished(&l.db, None, &mut |r| all.add(&r)))?;
        (all.read_to, all.read) = (to, read);
        l.replace_finished(all);
    }
    Ok(())
}
