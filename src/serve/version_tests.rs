//! The tests between versions, judged (docs/ladder.md "Tests between
//! versions"): every second, each running test whose games changed is
//! evaluated by the SPRT of `arena sprt` ([`crate::ratings::sprt::evaluate`]
//! on its games' rows, the new version as A), its state kept for the
//! pages; at H1, H0 or its budget it ends and the ladder's (or the
//! upload's) outcome is applied to the old version. A test one of whose
//! versions left the ladder is cancelled.

use super::ladder::Ladder;
use super::store::version_tests::{TestState, TestStatus, VersionTest};
use super::store::DbError;
use crate::league::config::ladder::TestOutcome;
use crate::ratings::sprt::{evaluate, Decision, Model, SprtConfig, SprtReport};
use crate::results::GameRow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Judges the running tests until the service stops.
pub fn judge_forever(l: Arc<Ladder>) {
    // The finished games each test was last evaluated at.
    let mut seen: HashMap<i64, i64> = HashMap::new();
    while !l.is_stopping() {
        if let Err(e) = judge_all(&l, &mut seen) {
            tracing::warn!("the tests between versions were not judged: {e}");
        }
        l.wait(Duration::from_secs(1));
    }
}

/// One round: orphans cancelled, each running test with new games
/// evaluated and, when it is over, ended.
fn judge_all(l: &Ladder, seen: &mut HashMap<i64, i64>) -> Result<(), DbError> {
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
        let done = l.query(l.db.test_games_done(t.id))?;
        if seen.get(&t.id) == Some(&done) {
            continue;
        }
        seen.insert(t.id, done);
        judge(l, &t, done)?;
    }
    Ok(())
}

/// The SPRT of test `t` (its bounds as asked for) on `rows`: the new
/// version as A, the old one as B; `None` before the test has an old
/// version or with bounds `arena sprt` refuses.
pub fn evaluate_test(t: &VersionTest, rows: &[GameRow]) -> Option<SprtReport> {
    let config = SprtConfig::new(t.elo0, t.elo1, t.alpha, t.beta, Model::Normalized).ok()?;
    evaluate(rows, &t.new_player(), &t.old_player()?, &config).ok()
}

/// Evaluates test `t` on its `done` finished games, keeps the state, and
/// ends it at a decision or at its budget.
fn judge(l: &Ladder, t: &VersionTest, done: i64) -> Result<(), DbError> {
    let rows: Vec<GameRow> = l
        .query(l.db.test_rows(t.id))?
        .iter()
        .filter_map(|r| serde_json::from_str(r).ok())
        .collect();
    let Some(r) = evaluate_test(t, &rows) else {
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
    };
    l.query(l.db.record_test(t.id, &state))?;
    let status = match r.decision {
        Decision::AcceptH1 => TestStatus::H1,
        Decision::AcceptH0 => TestStatus::H0,
        // Its budget queued and played (the last pair may be short).
        Decision::Continue if t.games_queued + 2 > t.max_games && done >= t.games_queued => {
            TestStatus::Budget
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
