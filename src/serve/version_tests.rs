//! The tests between versions, judged (docs/ladder.md "Tests between
//! versions"): a few times a second, each running test's new games are
//! read in the order they finished and its SPRT kept over them
//! ([`SprtTracker`], as a league's `--sprt` stops); the state shown is
//! the SPRT of `arena sprt` ([`crate::ratings::sprt::evaluate`]) on its
//! games up to then, the new version as A, and the verdict is found at
//! the game that makes it. At H1, H0 or its budget the test ends and its
//! outcome is applied to the old version. A test one of whose versions
//! left the ladder is cancelled.

use super::ladder::Ladder;
use super::store::version_tests::{TestState, TestStatus, VersionTest};
use super::store::DbError;
use crate::league::config::ladder::TestOutcome;
use crate::ratings::sprt::{
    evaluate, Decided, Decision, Model, SprtConfig, SprtReport, SprtTracker,
};
use crate::results::GameRow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// Judges the running tests until the service stops, a few times a
/// second: a verdict is found at the game that makes it, and the games
/// still in flight then are all a test plays past it.
pub fn judge_forever(l: Arc<Ladder>) {
    let mut seen: HashMap<i64, Judged> = HashMap::new();
    while !l.is_stopping() {
        if let Err(e) = judge_all(&l, &mut seen) {
            tracing::warn!("the tests between versions were not judged: {e}");
        }
        l.wait(Duration::from_millis(250));
    }
}

/// A running test's games as read so far, in the order they finished,
/// and the SPRT kept over them.
struct Judged {
    rows: Vec<GameRow>,
    ids: HashSet<String>,
    /// The last game read's place in the order games finished: the next
    /// read goes on past it.
    after: Option<i64>,
    /// The first crossing of a bound, as a league's `--sprt` finds it.
    tracker: SprtTracker,
    /// Finished games counted at the last evaluation.
    done: i64,
}

/// One round: orphans cancelled, each running test with new games
/// evaluated and, when it is over, ended.
fn judge_all(l: &Ladder, seen: &mut HashMap<i64, Judged>) -> Result<(), DbError> {
    let cancelled = l.query(l.db.cancel_orphan_tests())?;
    for id in &cancelled {
        tracing::info!("test {id} cancelled: one of its versions left the ladder");
    }
    if !cancelled.is_empty() {
        l.sched.forget_queue();
    }
    let only = super::store::version_tests::TestFilter {
        statuses: Some(vec![TestStatus::Running]),
        ..Default::default()
    };
    let running = l.query(l.db.version_tests(&only, i64::MAX))?;
    seen.retain(|id, _| running.iter().any(|t| t.id == *id));
    for t in running {
        let Some(config) = config_of(&t) else {
            continue;
        };
        let (Some(new), Some(old)) = (Some(t.new_player()), t.old_player()) else {
            continue;
        };
        let j = seen.entry(t.id).or_insert_with(|| Judged {
            rows: Vec::new(),
            ids: HashSet::new(),
            after: None,
            tracker: SprtTracker::new(config, &new, &old),
            done: -1,
        });
        let decided = read_new(l, &t, j)?;
        let done = j.rows.len() as i64;
        if done == j.done && decided.is_none() {
            continue;
        }
        j.done = done;
        judge(l, &t, &j.rows, decided.is_some())?;
    }
    Ok(())
}

/// Reads test `t`'s games finished since the last read into `j`, in the
/// order they finished, and stops at the first that makes the SPRT reach
/// a bound (the later ones do not count); returns that decision.
fn read_new(l: &Ladder, t: &VersionTest, j: &mut Judged) -> Result<Option<Decided>, DbError> {
    if let Some(d) = j.tracker.decided() {
        return Ok(Some(d));
    }
    let fresh = l.query(l.db.test_rows(t.id, j.after))?;
    for (at, json) in fresh {
        let Ok(row) = serde_json::from_str::<GameRow>(&json) else {
            continue;
        };
        j.after = Some(at);
        // Each game once, whatever happened to it after it was counted.
        if !j.ids.insert(row.game_id.clone()) {
            continue;
        }
        let decided = j.tracker.add(&row);
        j.rows.push(row);
        if decided.is_some() {
            return Ok(decided);
        }
    }
    Ok(None)
}

/// The SPRT of test `t`, as asked for.
fn config_of(t: &VersionTest) -> Option<SprtConfig> {
    SprtConfig::new(t.elo0, t.elo1, t.alpha, t.beta, Model::Normalized).ok()
}

/// The SPRT of test `t` (its bounds as asked for) on `rows`: the new
/// version as A, the old one as B; `None` before the test has an old
/// version or with bounds `arena sprt` refuses.
pub fn evaluate_test(t: &VersionTest, rows: &[GameRow]) -> Option<SprtReport> {
    evaluate(rows, &t.new_player(), &t.old_player()?, &config_of(t)?).ok()
}

/// Evaluates test `t` on `rows` (its games in the order they finished, up
/// to its verdict when `decided`), keeps the state, and ends it at a
/// decision or at its budget.
fn judge(l: &Ladder, t: &VersionTest, rows: &[GameRow], decided: bool) -> Result<(), DbError> {
    let Some(r) = evaluate_test(t, rows) else {
        return Ok(());
    };
    let p = &r.pair;
    let state = TestState {
        games: p.total.games as i64,
        penta: p.total.penta.map(|c| c as i64),
        wins: p.total.wins as i64,
        draws: p.total.draws as i64,
        losses: p.total.losses as i64,
        llr: r.llr,
        elo: p.elo,
        elo_err: p.elo_err,
        last_game: rows.last().map(|r| r.game_id.clone()),
    };
    l.query(l.db.record_test(t.id, &state))?;
    let done = rows.len() as i64;
    let status = match r.decision {
        Decision::AcceptH1 => TestStatus::H1,
        Decision::AcceptH0 => TestStatus::H0,
        // Its budget queued and played (the last pair may be short).
        Decision::Continue if t.games_queued + 2 > t.max_games && done >= t.games_queued => {
            TestStatus::Budget
        }
        Decision::Continue if decided => {
            tracing::error!(
                "test {}: the SPRT decided as the games came but not on them all",
                t.id
            );
            return Ok(());
        }
        Decision::Continue => return Ok(()),
    };
    end(l, t, status, (r.llr, done))
}

/// Ends test `t` with `status`: the old version retired, kept, or left
/// to its owner, as the test's outcome says.
fn end(
    l: &Ladder,
    t: &VersionTest,
    status: TestStatus,
    (llr, games): (f64, i64),
) -> Result<(), DbError> {
    let outcome = TestOutcome::from_word(&t.outcome).unwrap_or(TestOutcome::RetireOnH1);
    let fate = match (outcome, status) {
        (TestOutcome::RetireOnH1, TestStatus::H1) => "retired",
        (TestOutcome::Owner, _) => "undecided",
        _ => "kept",
    };
    let why = format!(
        "replaced by version {} after test {} ({})",
        t.new_version,
        t.id,
        status.as_str().to_uppercase()
    );
    if !l.query(l.db.finish_test(t.id, status, fate, &why))? {
        return Ok(());
    }
    tracing::info!(
        "test {} of {} against {}: {status} at LLR {llr:.2} after {} games; the old version {fate}",
        t.id,
        t.new_player(),
        t.old_player().unwrap_or_default(),
        games
    );
    l.sched.forget_queue();
    if fate == "retired" {
        l.roster_changed_now();
    }
    Ok(())
}
