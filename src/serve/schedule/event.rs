//! The rounds of the ladder's events (docs/ladder.md "Events"): an
//! event is a league Swiss ([`crate::league::swiss_games`]) among the
//! versions entered when it started, its games in the ladder's queue. A
//! round is paired only from the committed games of the rounds before
//! ([`replay`], the league's own [`SwissState::replay`] over the event's
//! rows), so a server restarted mid-round (kill -9) pairs it the same;
//! [`advance`] queues the next round once the last one is committed, and
//! ends the event after its last round.

use crate::league::config::Tournament;
use crate::league::swiss::RoundPairing;
use crate::league::swiss_games::{SwissPlan, SwissState};
use crate::results::GameRow;
use crate::serve::store::events::{Event, EventGame, EventStatus, RoundGame};
use crate::serve::store::{Db, DbError};

/// The Swiss of event `e` over the variants of ladder `t`.
pub fn plan_of(t: &Tournament, e: &Event) -> SwissPlan {
    SwissPlan::swiss(
        t,
        e.entrants.clone(),
        u32::try_from(e.rounds).unwrap_or(0),
        usize::try_from(e.games_per_pairing / 2).unwrap_or(1).max(1),
        e.seed,
    )
}

/// The committed rows of `games` under their places in the Swiss (a
/// row's `game_id` is its ladder id: the Swiss knows its games by
/// place).
pub fn placed_rows(games: &[EventGame]) -> Vec<GameRow> {
    games
        .iter()
        .filter(|g| g.state == "done")
        .filter_map(|g| {
            let mut row: GameRow = serde_json::from_str(g.row_json.as_deref()?).ok()?;
            row.game_id = g.event_game.clone();
            Some(row)
        })
        .collect()
}

/// The event's Swiss as its committed games leave it: every round paired
/// from the committed games of the rounds before.
pub fn replay(plan: &SwissPlan, games: &[EventGame]) -> SwissState {
    SwissState::replay(plan, &placed_rows(games))
}

/// A round's pairing as stored (`event_rounds.pairing`): entrants by
/// index.
pub fn pairing_json(p: &RoundPairing) -> String {
    serde_json::json!({
        "pairs": p.pairs,
        "bye": p.bye,
        "triples": p.triples,
        "bye3": p.bye3,
    })
    .to_string()
}

/// The games of round `round` (from 1) paired as `p`, to queue: each
/// seat-swap group's later games play its first's opening.
pub fn round_games(plan: &SwissPlan, e: &Event, round: u32, p: &RoundPairing) -> Vec<RoundGame> {
    (0..plan.games_per_round())
        .filter_map(|offset| plan.game(round, p, offset))
        .map(|g| {
            let first = format!("{}-o0", g.group);
            RoundGame {
                opening_of: (g.game_id != first).then_some(first),
                event_game: g.game_id,
                variant: g.variant,
                seats: g.seats.iter().map(|&b| e.entrant_ids[b]).collect(),
            }
        })
        .collect()
}

/// What [`advance`] did to an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Advanced {
    /// Nothing: its round is in play.
    Nothing,
    /// Round N was paired and its games queued.
    Queued(u32),
    /// Its last round is committed: it ended.
    Finished,
}

/// Moves running event `e` on: pairs and queues its next round once
/// every game of the round before is committed, or ends it after its
/// last. A round stored already is not paired again; if the replay of
/// the committed games pairs it otherwise than stored, that is an error
/// ([`DbError::Corrupt`]: the store was changed under it).
pub async fn advance(db: &Db, t: &Tournament, e: &Event) -> Result<Advanced, DbError> {
    let plan = plan_of(t, e);
    let games = db.event_games(e.id).await?;
    let state = replay(&plan, &games);
    let stored = db.event_rounds(e.id).await?;
    for (s, p) in stored.iter().zip(&state.rounds) {
        if s.pairing != pairing_json(p) {
            return Err(DbError::Corrupt(format!(
                "event `{}` round {}: stored as {}, but its committed games pair it as {}",
                e.name,
                s.round,
                s.pairing,
                pairing_json(p)
            )));
        }
    }
    if state.finished_rounds() >= plan.rounds as usize {
        db.end_event(e.id, EventStatus::Finished, "").await?;
        return Ok(Advanced::Finished);
    }
    let round = state.rounds.len();
    if round <= stored.len() {
        return Ok(Advanced::Nothing);
    }
    let Some(p) = state.rounds.last() else {
        return Ok(Advanced::Nothing);
    };
    let games = round_games(&plan, e, round as u32, p);
    match db
        .queue_event_round(e.id, round as i64, &pairing_json(p), &games)
        .await?
    {
        true => Ok(Advanced::Queued(round as u32)),
        false => Ok(Advanced::Nothing),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::league::config::{RunSettings, Tournament};

    fn ladder() -> Tournament {
        let src = "name = \"l\"\nseed = 3\nvariants = [\"kisolo\", \"filo\"]\n[ladder]\n";
        Tournament::parse_with(std::path::Path::new("l.toml"), src, &RunSettings::default())
            .expect("a ladder")
    }

    fn event(n: usize, gpp: i64) -> Event {
        Event {
            id: 1,
            name: "cup".into(),
            format: "swiss".into(),
            status: EventStatus::Running,
            rounds: 2,
            games_per_pairing: gpp,
            seed: 9,
            entrant_ids: (0..n as i64).map(|i| 100 + i).collect(),
            entrants: (0..n).map(|i| format!("b{i}@1")).collect(),
            detail: String::new(),
            created_at: String::new(),
            finished_at: None,
        }
    }

    /// A round's games: each table's mini-match in every variant, seats
    /// as version ids, each seat-swap group's later games on its first's
    /// opening; the bye plays none.
    #[test]
    fn a_rounds_games_are_its_tables_mini_matches_in_every_variant() {
        let (t, e) = (ladder(), event(5, 4));
        let plan = plan_of(&t, &e);
        let state = replay(&plan, &[]);
        assert_eq!(state.rounds.len(), 1);
        let p = &state.rounds[0];
        assert_eq!((p.pairs.len(), p.bye.is_some()), (2, true));
        let games = round_games(&plan, &e, 1, p);
        // 2 tables x 2 variants x 4 games.
        assert_eq!(games.len(), 16);
        let bye = e.entrant_ids[p.bye.unwrap()];
        for g in &games {
            assert!(!g.seats.contains(&bye), "{g:?}");
            match g.event_game.ends_with("-o0") {
                true => assert_eq!(g.opening_of, None),
                false => {
                    let first = g.opening_of.clone().expect("a later game of its group");
                    assert!(
                        games.iter().position(|x| x.event_game == first)
                            < games.iter().position(|x| x == g)
                    );
                    let of = games.iter().find(|x| x.event_game == first).unwrap();
                    assert_eq!(
                        of.seats.iter().rev().collect::<Vec<_>>(),
                        g.seats.iter().collect::<Vec<_>>()
                    );
                }
            }
        }
        // The stored pairing reads back as the entrants' indexes.
        let json: serde_json::Value = serde_json::from_str(&pairing_json(p)).unwrap();
        assert_eq!(json["bye"], serde_json::json!(p.bye));
    }
}
