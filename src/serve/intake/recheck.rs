//! A forfeit a worker reports, played again on the server (issue 47, item
//! 7; docs/security.md "Forged results"): the same bots, in the same
//! sandbox and limits, with the same seed and time control, are given the
//! game's recorded decisions as its opening (the referee applies them and
//! shows each to every seat, as it does an opening book's) and are then
//! asked the decision the worker says was forfeited. The fault comes
//! again when the same seat forfeits at that decision in the same way
//! ([`same_kind`]); an answer, legal and in time, says it did not.

use crate::league::config::{BotSpec, Tournament};
use crate::referee::record::Recorded;
use crate::referee::{
    self, BotPlayer, Clock, EndReason, ForfeitKind, GameSpec, Player, StartError, TimeControl,
};
use std::path::Path;
use std::time::Duration;

/// What playing a reported forfeit again found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// The same seat forfeited at the same decision, in the same way: the
    /// fault's kind and detail.
    Again(String),
    /// It did not: what happened instead.
    NotAgain(String),
}

/// The families of faults that count as the same when a forfeit is played
/// again: a bot out of time (`timeout`, `stall`: how long it took differs
/// between machines), a bot that died (`crash`, `memory`: a memory limit
/// is a kill by the kernel on one machine and an allocation failure, a
/// crash, on another), a bot that wrote what it should not (`illegal`,
/// `bad_json`, `line_too_long`, `protocol`).
pub fn same_kind(reported: &str, found: ForfeitKind) -> bool {
    let family = |name: &str| match name {
        "timeout" | "stall" => 0,
        "crash" | "memory" => 1,
        "illegal" | "bad_json" | "line_too_long" | "protocol" => 2,
        _ => 3,
    };
    let f = family(reported);
    f < 3 && f == family(found.name())
}

/// Whether a reported forfeit of `reason` is played again once more when
/// the first time did not find it: timeouts, whose bots may be slow only
/// now and then (two tries in all).
pub fn tries_for(reason: &str) -> i64 {
    match reason {
        "timeout" | "stall" => 2,
        _ => 1,
    }
}

/// Why a re-check could not be made (the server's fault, not the
/// worker's: it is tried again later).
#[derive(Debug, thiserror::Error)]
pub enum RecheckError {
    #[error("the record's game cannot be set up again: {0}")]
    Spec(String),
    #[error("a bot cannot be started on the server: {0}")]
    Harness(String),
}

/// The referee's spec of the game of `rec` in ladder `t`, from its first
/// decision to the one before the forfeit: the ladder's variant, time
/// control, watchdog and the bots' seed (the server's own: `bot_seed`),
/// the recorded decisions as the opening.
pub fn spec_to_forfeit(t: &Tournament, rec: &Recorded, variant: usize) -> GameSpec {
    let v = &t.variants[variant];
    let settings = v.settings(t.max_plies);
    GameSpec {
        game_id: rec.spec.game_id.clone(),
        variant: v.variant,
        settings,
        opening: rec.decisions.iter().map(|d| d.option.clone()).collect(),
        names: rec.spec.names.clone(),
        time: TimeControl {
            per_decision: Duration::from_millis(if t.time.decision_ms > 0 {
                t.time.decision_ms
            } else {
                t.time.watchdog_ms
            }),
            clock: (t.time.base_ms > 0).then(|| Clock {
                base: Duration::from_millis(t.time.base_ms),
                increment: Duration::from_millis(t.time.increment_ms),
            }),
        },
        watchdog: Duration::from_millis(t.time.watchdog_ms),
        notes: Vec::new(),
        seed: crate::league::schedule::bot_seed(t.seed, &rec.spec.game_id),
    }
}

/// Plays the game of `rec` (ladder `t`, variant index `variant`) again
/// with `bots` by seat up to its forfeit, each bot's stderr to a log in
/// `logs`, and says whether seat `offender` forfeits there again as
/// `reason` says. A clock's time already spent is not replayed: each seat
/// starts the decision with its whole clock (a clock's timeout is found
/// again only by a bot that is out of time on a full clock; docs).
pub async fn play_to_forfeit(
    t: &Tournament,
    bots: &[BotSpec],
    rec: &Recorded,
    variant: usize,
    (reason, offender): (&str, usize),
    logs: &Path,
) -> Result<Found, RecheckError> {
    let spec = spec_to_forfeit(t, rec, variant);
    let _ = std::fs::create_dir_all(logs);
    let mut players = Vec::new();
    for (seat, bot) in bots.iter().enumerate() {
        let log = logs.join(format!("{}.log", crate::results::file_safe(&bot.name)));
        let (launch, timing) = crate::league::runner::launch_alone(t, bot, Some(log));
        match BotPlayer::start(&launch, &timing).await {
            Ok(p) => players.push(p),
            Err(e) if e.is_harness() => return Err(RecheckError::Harness(e.to_string())),
            Err(e) => return Ok(unstarted(seat, &e, (reason, offender), &mut players).await),
        }
    }
    let report = {
        let mut refs: Vec<&mut dyn Player> =
            players.iter_mut().map(|p| p as &mut dyn Player).collect();
        referee::play_game(&spec, &mut refs, &mut |_| {}).await
    };
    for p in &mut players {
        p.kill();
    }
    let report = report.map_err(|e| RecheckError::Spec(e.to_string()))?;
    let at = rec.decisions.len();
    let kind = match report.reason {
        EndReason::Forfeit(k) => Some(k),
        _ => None,
    };
    match (report.offender, kind) {
        (Some(seat), Some(k)) if seat == offender && report.decisions.len() == at => {
            let detail = report.detail.unwrap_or_default();
            Ok(if same_kind(reason, k) {
                Found::Again(format!("{k}: {detail}"))
            } else {
                Found::NotAgain(format!(
                    "seat {seat} forfeited at that decision, but with {k}, not {reason}: {detail}"
                ))
            })
        }
        _ => {
            let answer = report.decisions.get(at).map_or("nothing".to_string(), |d| {
                format!("`{}` in {} ms", d.option, d.elapsed_us / 1000)
            });
            Ok(Found::NotAgain(format!(
                "seat {offender} answered {answer} at decision {} (the game then ended: {})",
                at + 1,
                report.reason.name()
            )))
        }
    }
}

/// Seat `seat`'s bot could not start: the fault again if it is the
/// offender's and of the same kind. The bots started already are stopped.
async fn unstarted(
    seat: usize,
    e: &StartError,
    (reason, offender): (&str, usize),
    started: &mut [BotPlayer],
) -> Found {
    for p in started.iter_mut() {
        p.quit().await;
    }
    if seat == offender && same_kind(reason, e.kind()) {
        Found::Again(format!("{}: {e}", e.kind()))
    } else {
        Found::NotAgain(format!("seat {seat} could not start: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_of_one_family_count_as_the_same_and_no_other() {
        assert!(same_kind("timeout", ForfeitKind::Stall));
        assert!(same_kind("stall", ForfeitKind::Timeout));
        assert!(same_kind("crash", ForfeitKind::Memory));
        assert!(same_kind("illegal", ForfeitKind::BadJson));
        assert!(!same_kind("timeout", ForfeitKind::Crash));
        assert!(!same_kind("crash", ForfeitKind::Illegal));
        assert!(!same_kind("error", ForfeitKind::Crash));
        assert!(!same_kind("", ForfeitKind::Timeout));
        assert_eq!(tries_for("timeout"), 2);
        assert_eq!(tries_for("crash"), 1);
    }
}
