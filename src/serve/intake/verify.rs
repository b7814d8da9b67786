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
    /// The row's group: its `game_id`, or its pair's first game's (a
    /// test's pair, [`crate::wire::worker::scheduled_as`]).
    pub group: String,
    /// The variant's index in the ladder file.
    pub variant: usize,
    /// The players by seat (`BOT@N`).
    pub players: Vec<String>,
    /// The game's seed.
    pub seed: u64,
    /// The game's opening (the ladder's `openings` and book), which the
    /// record must start with, marked as the opening.
    pub opening: Vec<String>,
}

/// Why an upload is refused: a kind (the `/metrics` label) and the detail.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct Refused {
    /// `record` (unreadable), `illegal_move`, `result` (differs from the
    /// replay, or from the row), `seats` (bots, seats, variant or seed
    /// differ from the lease), `opening` (not the game's), `fields` (a
    /// time, version or timestamp out of range or not the record's).
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
    check_opening(&expected.opening, &rec)?;
    check_fields(t, expected, row, &rec)?;
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

/// Slack on the times a worker reports: the referee's own reading of a
/// deadline, and rounding.
const GRACE_MS: u64 = 2_000;

/// The most bytes of a bot's hello `version` in a row (the referee keeps
/// 64, escaped).
const VERSION_BYTES: usize = 256;

/// The row's other fields (issue 47: every field of an uploaded row is
/// checked): its group and opening are the game's; `started_at` a UTC time
/// not in the future; each seat's thinking time the sum of its decisions'
/// in the record, each decision within the ladder's time control, the
/// game within the watchdog; the hello versions short and printable; no
/// field for a seat the game does not have.
fn check_fields(
    t: &Tournament,
    expected: &Expected,
    row: &GameRow,
    rec: &crate::referee::record::Recorded,
) -> Result<(), Refused> {
    let field = |detail: String| Err(refused("fields", detail));
    // What a games.csv reader checks (no field for a seat the game does
    // not have, scores, names), first.
    crate::results::csvio::rateable(row).map_err(|e| refused("fields", e))?;
    if row.group != expected.group {
        return field(format!(
            "the row's group is `{}`, the game's `{}`",
            row.group, expected.group
        ));
    }
    if row.opening != expected.opening.join(" ") {
        return field(format!(
            "the row's opening is `{}`, the game's `{}`",
            row.opening,
            expected.opening.join(" ")
        ));
    }
    if !row.started_at.is_empty() {
        let at = crate::results::csvio::utc_time(&row.started_at)
            .map_err(|why| refused("fields", why))?;
        let soon = std::time::SystemTime::now() + std::time::Duration::from_secs(600);
        if at > soon {
            return field(format!("`started_at` {} is in the future", row.started_at));
        }
    }
    let n = rec.spec.settings.players;
    let versions = [&row.version0, &row.version1, &row.version2];
    for (seat, v) in versions.iter().enumerate() {
        if seat >= n && !v.is_empty() {
            return field(format!(
                "`version{seat}` is given for a seat the game does not have"
            ));
        }
        if v.len() > VERSION_BYTES || v.chars().any(char::is_control) {
            return field(format!("`version{seat}` is not a hello's version (at most {VERSION_BYTES} bytes, no control characters)"));
        }
        // As the referee refuses such a hello: games.csv is opened in
        // spreadsheets.
        if let Some(c) = crate::text::formula_lead(v) {
            return field(format!("`version{seat}` begins with `{c}`, which a spreadsheet opening games.csv would run as a formula (a hello's version may not)"));
        }
    }
    check_times(t, row, rec)
}

/// The row's times against its record and the ladder's time control: each
/// decision within the time control, each seat's thinking time the sum of
/// its decisions' in the record, the game within the watchdog and no
/// shorter than the seats' thinking.
fn check_times(
    t: &Tournament,
    row: &GameRow,
    rec: &crate::referee::record::Recorded,
) -> Result<(), Refused> {
    let field = |detail: String| Err(refused("fields", detail));
    let n = rec.spec.settings.players;
    let time = &t.time;
    // The longest one decision may take: its own limit, or the clock.
    let per_decision = match time.decision_ms {
        0 => time.watchdog_ms,
        ms => ms,
    }
    .max(
        time.base_ms
            .saturating_add(time.increment_ms.saturating_mul(u64::from(rec.plies))),
    )
    .saturating_add(GRACE_MS);
    let mut think_us = vec![0u64; n];
    for (i, d) in rec.decisions.iter().enumerate() {
        if d.elapsed_us / 1000 > per_decision {
            return field(format!(
                "decision {} took {} ms, over the time control's {} ms",
                i + 1,
                d.elapsed_us / 1000,
                per_decision - GRACE_MS
            ));
        }
        if !d.forced && !d.opening {
            if let Some(s) = think_us.get_mut(d.seat) {
                *s = s.saturating_add(d.elapsed_us);
            }
        }
    }
    let times = [row.time0_ms, row.time1_ms, row.time2_ms];
    let mut total = 0.0;
    for seat in 0..3 {
        let Some(ms) = times[seat] else {
            if seat >= n || think_us[seat] == 0 {
                continue;
            }
            return field(format!("`time{seat}_ms` is missing"));
        };
        let summed = think_us.get(seat).map(|&us| us as f64 / 1000.0);
        match summed {
            Some(s) if ms.is_finite() && (ms - s).abs() <= 0.01 => total += ms,
            Some(s) => {
                return field(format!(
                    "`time{seat}_ms` is {ms}, the sum of the seat's decisions in the record {s}"
                ))
            }
            None => {
                return field(format!(
                    "`time{seat}_ms` is {ms} for a seat the game does not have"
                ))
            }
        }
    }
    let longest = time
        .watchdog_ms
        .saturating_add(time.startup_ms.saturating_mul(n as u64))
        .saturating_add(GRACE_MS);
    if row.duration_ms > longest {
        return field(format!(
            "`duration_ms` is {}, over the watchdog's {} ms and the bots' start-up",
            row.duration_ms, time.watchdog_ms
        ));
    }
    if total > row.duration_ms as f64 + 2.0 {
        return field(format!(
            "the seats thought {total} ms in all, longer than the game's `duration_ms` of {}",
            row.duration_ms
        ));
    }
    Ok(())
}

/// The opening: the record's is the game's `opening`, and its first
/// decisions are that opening, marked as the opening, and no others.
fn check_opening(
    opening: &[String],
    rec: &crate::referee::record::Recorded,
) -> Result<(), Refused> {
    if rec.spec.opening != opening {
        return Err(refused(
            "opening",
            format!(
                "the record's opening is {:?}, the game's {:?}",
                rec.spec.opening, opening
            ),
        ));
    }
    for (i, d) in rec.decisions.iter().enumerate() {
        let book = opening.get(i);
        if d.opening != book.is_some() || book.is_some_and(|o| *o != d.option) {
            let marked = if d.opening {
                "is marked"
            } else {
                "is not marked"
            };
            return Err(refused(
                "opening",
                format!(
                    "decision {} (ply {}) `{}` {marked} the opening, which is {opening:?}",
                    i + 1,
                    d.ply,
                    d.option,
                ),
            ));
        }
    }
    Ok(())
}

/// The end: the record's result is the replay's (or a forfeit's, scored
/// as the referee scores one), and the row's is the record's.
fn check_result(
    game: &Game,
    rec: &crate::referee::record::Recorded,
    row: &GameRow,
) -> Result<(), Refused> {
    if let Some(why) = crate::referee::record::end_problem(rec, game) {
        return Err(refused("result", why));
    }
    let (scores, reason) = (&rec.scores, &rec.reason);
    let mut row_scores = vec![row.score0, row.score1];
    if let Some(s) = row.score2 {
        row_scores.push(s);
    }
    let offender = row.offender.map(usize::from);
    if row_scores != *scores
        || row.reason != *reason
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Settings;
    use serde_json::json;

    /// A ladder of kisolo with `openings` random opening decisions.
    fn ladder(openings: u32) -> Tournament {
        let text = format!(
            "name = \"l\"\nseed = 5\nvariants = [\"kisolo\"]\nopenings = {openings}\nmax_plies = 200\n[ladder]\n"
        );
        Tournament::parse(std::path::Path::new("ladder.toml"), &text).unwrap()
    }

    /// What the server expects of ladder game 9 of `t`.
    fn expected(t: &Tournament) -> Expected {
        let game = crate::wire::worker::scheduled(t.seed, 9, 0, vec![0, 1]);
        Expected {
            game_id: game.game_id.clone(),
            group: game.group.clone(),
            variant: 0,
            players: vec!["a@1".into(), "b@1".into()],
            seed: game.seed,
            opening: crate::league::runner::opening_of(t, &game),
        }
    }

    /// A game played to its end from `opening` (the record's header says
    /// `header`; the first `marked` decisions are marked as the opening),
    /// then always the first legal option: its row and record.
    fn played(
        e: &Expected,
        header: &[String],
        opening: &[String],
        marked: usize,
    ) -> (GameRow, String) {
        let settings = Settings {
            players: 2,
            max_plies: 200,
            options: Default::default(),
        };
        let mut game = Game::new(crate::engine::Variant::Kisolo, &settings).unwrap();
        let mut lines = vec![json!({
            "type": "game", "format": 2, "game_id": e.game_id, "variant": "kisolo",
            "players": 2, "options": {}, "max_plies": 200, "names": e.players,
            "time": {"per_decision_ms": 100}, "opening": header, "seed": "1", "notes": [],
        })
        .to_string()];
        let mut i = 0;
        while let Some(seat) = game.to_decide() {
            let option = opening
                .get(i)
                .cloned()
                .unwrap_or_else(|| game.legal()[0].clone());
            let ply = game.plies();
            game.play(&option).unwrap();
            lines.push(
                json!({"seat": seat, "ply": ply, "option": option, "opening": i < marked})
                    .to_string(),
            );
            i += 1;
        }
        let outcome = game.outcome().unwrap();
        let scores = outcome.scores();
        lines.push(
            json!({
                "type": "end", "scores": scores, "reason": outcome.reason.name(),
                "offender": null, "detail": null, "plies": game.plies(),
                "duration_ms": 1.0, "state": null,
            })
            .to_string(),
        );
        let row = serde_json::from_value(json!({
            "game_id": e.game_id, "variant": "kisolo", "players": 2, "group": e.game_id,
            "seat0": e.players[0], "seat1": e.players[1], "seat2": "",
            "score0": scores[0], "score1": scores[1], "score2": null,
            "reason": outcome.reason.name(), "offender": null, "plies": game.plies(),
            "duration_ms": 1, "seed": e.seed, "opening": header.join(" "),
        }))
        .unwrap();
        (row, lines.join("\n") + "\n")
    }

    #[test]
    fn the_games_opening_passes_and_any_other_is_refused() {
        let t = ladder(3);
        let e = expected(&t);
        assert_eq!(e.opening.len(), 3, "{:?}", e.opening);
        let honest = played(&e, &e.opening, &e.opening, 3);
        assert_eq!(check_upload(&t, &e, &honest.0, &honest.1), Ok(()));

        // Another opening, said in the header and played: refused.
        let settings = t.variants[0].settings(t.max_plies);
        let mut game = Game::new(t.variants[0].variant, &settings).unwrap();
        let mut other = Vec::new();
        for want in &e.opening {
            let legal = game.legal();
            let pick = legal
                .iter()
                .find(|o| *o != want)
                .unwrap_or(&legal[0])
                .clone();
            game.play(&pick).unwrap();
            other.push(pick);
        }
        assert_ne!(other, e.opening);
        let forged = played(&e, &other, &other, 3);
        let err = check_upload(&t, &e, &forged.0, &forged.1).unwrap_err();
        assert_eq!(err.kind, "opening", "{err}");

        // The right header, but the bots' own moves played instead.
        let forged = played(&e, &e.opening, &other, 3);
        let err = check_upload(&t, &e, &forged.0, &forged.1).unwrap_err();
        assert_eq!(err.kind, "opening", "{err}");

        // The opening's decisions not marked as the opening (the bots'
        // then), or a bot's decision marked as one.
        for marked in [0, 2, 4] {
            let forged = played(&e, &e.opening, &e.opening, marked);
            let err = check_upload(&t, &e, &forged.0, &forged.1).unwrap_err();
            assert_eq!(err.kind, "opening", "{marked}: {err}");
        }
    }

    #[test]
    fn a_ladder_without_openings_wants_none() {
        let t = ladder(0);
        let e = expected(&t);
        assert!(e.opening.is_empty());
        let honest = played(&e, &[], &[], 0);
        assert_eq!(check_upload(&t, &e, &honest.0, &honest.1), Ok(()));
        let first = {
            let settings = t.variants[0].settings(t.max_plies);
            Game::new(t.variants[0].variant, &settings).unwrap().legal()[0].clone()
        };
        let one = std::slice::from_ref(&first);
        let forged = played(&e, one, one, 1);
        let err = check_upload(&t, &e, &forged.0, &forged.1).unwrap_err();
        assert_eq!(err.kind, "opening", "{err}");
    }
}
