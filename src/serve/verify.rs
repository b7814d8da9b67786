//! The check of a game a worker uploads (issue 31, item 4: the server
//! trusts the rules, not the worker): its record is read and replayed
//! through the engine, decision by decision, and the row must say what
//! the replay says, for the game, seats and seed the lease gave. Pure:
//! no store, no network.

use crate::engine::Game;
use crate::league::config::Tournament;
use crate::referee::record::read_record;
use crate::results::GameRow;

/// What the lease said the game is.
#[derive(Clone, Debug)]
pub struct Expected {
    /// The row's and record's `game_id` (`game-ID`).
    pub game_id: String,
    /// The variant's index in the ladder file.
    pub variant: usize,
    /// The players by seat (`BOT@N`).
    pub players: Vec<String>,
    /// The game's seed.
    pub seed: u64,
}

/// Why an upload is refused: a kind (the `/metrics` label) and the detail.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct Refused {
    /// `record` (unreadable), `illegal_move`, `result` (differs from the
    /// replay, or from the row), `seats` (bots, seats, variant or seed
    /// differ from the lease).
    pub kind: &'static str,
    pub detail: String,
}

fn refused(kind: &'static str, detail: impl Into<String>) -> Refused {
    Refused {
        kind,
        detail: detail.into(),
    }
}

/// Checks an uploaded game: `row` and `record` (its JSON lines) against
/// `expected`, in ladder `t`; the record replayed through the engine.
pub fn check_upload(
    t: &Tournament,
    expected: &Expected,
    row: &GameRow,
    record: &str,
) -> Result<(), Refused> {
    let v = t
        .variants
        .get(expected.variant)
        .ok_or_else(|| refused("seats", "the lease's variant is not in the ladder file"))?;
    // The row against the lease.
    let seats: Vec<String> = row.seats().iter().map(|s| s.to_string()).collect();
    if row.game_id != expected.game_id {
        return Err(refused(
            "seats",
            format!(
                "the row is game `{}`, the lease `{}`",
                row.game_id, expected.game_id
            ),
        ));
    }
    if seats != expected.players {
        return Err(refused(
            "seats",
            format!(
                "the row seats {:?}, the lease {:?}",
                seats, expected.players
            ),
        ));
    }
    if row.variant != v.key || row.players as usize != v.players {
        return Err(refused(
            "seats",
            format!(
                "the row is {} for {}, the lease {} for {}",
                row.variant, row.players, v.key, v.players
            ),
        ));
    }
    if row.seed != expected.seed {
        return Err(refused(
            "seats",
            format!(
                "the row's seed is {}, the game's {}",
                row.seed, expected.seed
            ),
        ));
    }
    // The record against the lease.
    let rec = read_record(record).map_err(|e| refused("record", e.to_string()))?;
    let spec = &rec.spec;
    if spec.game_id != expected.game_id || spec.names != expected.players {
        return Err(refused(
            "seats",
            format!(
                "the record is game `{}` with {:?}, the lease `{}` with {:?}",
                spec.game_id, spec.names, expected.game_id, expected.players
            ),
        ));
    }
    if spec.variant != v.variant
        || spec.settings.players != v.players
        || spec.settings.options != v.options
        || spec.settings.max_plies != t.max_plies
    {
        return Err(refused(
            "seats",
            "the record's variant, players, options or ply limit are not the ladder's",
        ));
    }
    // The replay.
    let mut game = Game::new(spec.variant, &spec.settings)
        .map_err(|e| refused("record", format!("the game cannot be set up: {e}")))?;
    for (i, d) in rec.decisions.iter().enumerate() {
        let to_decide = game.to_decide();
        if to_decide != Some(d.seat) {
            return Err(refused(
                "illegal_move",
                format!(
                    "decision {} (ply {}) is by seat {}, but the rules ask {}",
                    i + 1,
                    d.ply,
                    d.seat,
                    to_decide.map_or("nobody (the game is over)".into(), |s| format!("seat {s}"))
                ),
            ));
        }
        game.play(&d.option).map_err(|e| {
            refused(
                "illegal_move",
                format!(
                    "decision {} (ply {}): `{}` by seat {}: {e}",
                    i + 1,
                    d.ply,
                    d.option,
                    d.seat
                ),
            )
        })?;
    }
    check_result(&game, &rec, row)
}

/// The end: the record's result is the replay's (or a forfeit's, scored
/// as the referee scores one), and the row's is the record's.
fn check_result(
    game: &Game,
    rec: &crate::referee::record::Recorded,
    row: &GameRow,
) -> Result<(), Refused> {
    let n = rec.spec.settings.players;
    let (scores, reason) = match (rec.offender, game.outcome()) {
        (Some(seat), _) if seat < n => {
            (crate::referee::forfeit_scores(n, seat), rec.reason.clone())
        }
        (Some(seat), _) => {
            return Err(refused(
                "result",
                format!("the offender, seat {seat}, is not a seat"),
            ))
        }
        (None, Some(o)) => (o.scores(), o.reason.name().to_string()),
        (None, None) => {
            return Err(refused(
                "result",
                format!(
                    "the record ends with `{}` after {} decisions, but the game is not over",
                    rec.reason,
                    rec.decisions.len()
                ),
            ))
        }
    };
    if rec.scores != scores || rec.reason != reason || rec.plies != game.plies() {
        return Err(refused(
            "result",
            format!(
                "the record says {:?} ({}) after {} plies; the replay {:?} ({}) after {}",
                rec.scores,
                rec.reason,
                rec.plies,
                scores,
                reason,
                game.plies()
            ),
        ));
    }
    let mut row_scores = vec![row.score0, row.score1];
    if let Some(s) = row.score2 {
        row_scores.push(s);
    }
    let offender = row.offender.map(usize::from);
    if row_scores != scores
        || row.reason != reason
        || row.plies != rec.plies
        || offender != rec.offender
    {
        return Err(refused(
            "result",
            format!(
                "the row says {:?} ({}, offender {:?}) after {} plies; the record {:?} ({}, offender {:?}) after {}",
                row_scores, row.reason, row.offender, row.plies, scores, reason, rec.offender, rec.plies
            ),
        ));
    }
    Ok(())
}
