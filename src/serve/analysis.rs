//! A game's analysis on demand (issue 51, docs/ladder.md "Analysis of a
//! game"): an owner of one of a finished game's bots asks for it
//! (`POST /api/games/ID/analysis`, validated by the web layer), and the
//! server judges every decision of its record with the same code as
//! `arena analyse` (`crate::analyse`), within a time budget, one game at
//! a time on a blocking thread, then keeps the verdicts in the store
//! (`game_analysis`), where the game's page shows them.
//!
//! On the server the analysis is a search's estimate only (`arena
//! analyse --no-exact`): endgame tables are an organiser's files, and the
//! F.I.L.O solver's proofs have no time bound per decision.

use crate::analyse::{analyse, Params};
use crate::referee::record::read_record;
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A decision's time: the budget's share (the ladder's
/// `analysis_seconds`), within these bounds (a game of more than 2,000
/// decisions takes longer than a 20 s budget).
const LEAST: Duration = Duration::from_millis(10);
const MOST: Duration = Duration::from_millis(300);

/// The analyses in progress and those that failed (by game id), kept in
/// memory: at most one runs at a time.
#[derive(Default)]
pub struct Analyses {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: Option<i64>,
    failed: HashMap<i64, String>,
    /// When each owner asked for the analyses started in the last hour.
    asked: HashMap<i64, VecDeque<Instant>>,
}

/// How long an owner's count of analyses asked for lasts.
pub const WINDOW: Duration = Duration::from_secs(3600);

/// Where game `id`'s analysis stands, besides the store.
#[derive(Debug, PartialEq, Eq)]
pub enum Standing {
    /// Being computed now.
    Running,
    /// It failed, and why (the record could not be replayed).
    Failed(String),
    /// Neither.
    None,
}

/// Why an analysis did not start.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Another game's analysis runs: try again in a few seconds.
    Busy,
    /// The owner asked for their `analyses_per_hour` within the hour: the
    /// oldest of them leaves the count after this long.
    Limited(Duration),
}

impl Analyses {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether game `id`'s analysis runs or failed.
    pub fn standing(&self, id: i64) -> Standing {
        let s = self.lock();
        if s.running == Some(id) {
            Standing::Running
        } else if let Some(why) = s.failed.get(&id) {
            Standing::Failed(why.clone())
        } else {
            Standing::None
        }
    }

    /// Starts the analysis of game `id` from its record's text, asked for
    /// by owner `owner`, who may ask for `per_hour` an hour: judged on a
    /// blocking thread within `budget`, kept by `keep` (the store) when
    /// done. Already running: nothing more.
    pub fn start<F, Fut>(
        self: &Arc<Self>,
        id: i64,
        (owner, per_hour): (i64, u32),
        budget: Duration,
        record: String,
        keep: F,
    ) -> Result<(), Refused>
    where
        F: FnOnce(String) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<(), String>> + Send,
    {
        {
            let mut s = self.lock();
            match s.running {
                Some(r) if r == id => return Ok(()),
                Some(_) => return Err(Refused::Busy),
                None => {}
            }
            let now = Instant::now();
            let asked = s.asked.entry(owner).or_default();
            while asked
                .front()
                .is_some_and(|t| now.duration_since(*t) >= WINDOW)
            {
                asked.pop_front();
            }
            if asked.len() >= per_hour as usize {
                let wait = asked
                    .front()
                    .map_or(WINDOW, |t| WINDOW.saturating_sub(now.duration_since(*t)));
                return Err(Refused::Limited(wait));
            }
            asked.push_back(now);
            s.running = Some(id);
            s.failed.remove(&id);
        }
        let me = self.clone();
        tokio::spawn(async move {
            let judged = tokio::task::spawn_blocking(move || judge(&record, budget))
                .await
                .unwrap_or_else(|e| Err(format!("the analysis stopped: {e}")));
            let done = match judged {
                Ok(lines) => keep(lines).await,
                Err(e) => Err(e),
            };
            let mut s = me.lock();
            s.running = None;
            if let Err(why) = done {
                tracing::warn!("the analysis of game {id}: {why}");
                if s.failed.len() >= 1024 {
                    s.failed.clear();
                }
                s.failed.insert(id, why);
            }
        });
        Ok(())
    }
}

/// Every decision of the record `text` judged within `budget`, as JSON
/// lines.
pub fn judge(text: &str, budget: Duration) -> Result<String, String> {
    let rec = read_record(text).map_err(|e| format!("the record cannot be read: {e}"))?;
    let moves: Vec<String> = rec.decisions.iter().map(|d| d.option.clone()).collect();
    let per = (budget / u32::try_from(moves.len().max(1)).unwrap_or(u32::MAX)).clamp(LEAST, MOST);
    let params = Params {
        depth: None,
        time: Some(per),
        threshold: 0.15,
        tables: None,
        exact: false,
        proof_time: Duration::ZERO,
    };
    let mut verdicts = analyse(rec.spec.variant, &rec.spec.settings, &moves, &params)
        .map_err(|e| format!("the game cannot be analysed: {e}"))?;
    crate::analyse::mark_applied(&mut verdicts, rec.decisions.iter().map(|d| d.applied()));
    let mut out = String::new();
    for v in &verdicts {
        let line = serde_json::to_string(v).map_err(|e| e.to_string())?;
        let _ = writeln!(out, "{line}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    /// Waits until no analysis runs.
    async fn idle(a: &Analyses, id: i64) {
        for _ in 0..2000 {
            if a.standing(id) != Standing::Running {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("game {id}'s analysis still runs");
    }

    #[tokio::test]
    async fn one_runs_at_a_time_an_owner_asks_for_per_hour_and_a_bad_record_fails() {
        let a = Arc::new(Analyses::default());
        let kept = Arc::new(Mutex::new(Vec::new()));
        let keep = |k: Arc<Mutex<Vec<String>>>| {
            move |lines: String| async move {
                k.lock().unwrap().push(lines);
                Ok(())
            }
        };
        // Not a record: it fails, and says why.
        assert_eq!(
            a.start(1, (7, 2), SECOND, "not a record".into(), keep(kept.clone())),
            Ok(())
        );
        // Game 1 is marked running as it starts: another waits.
        assert_eq!(
            a.start(2, (8, 2), SECOND, "x".into(), keep(kept.clone())),
            Err(Refused::Busy)
        );
        idle(&a, 1).await;
        match a.standing(1) {
            Standing::Failed(why) => assert!(why.contains("record"), "{why}"),
            s => panic!("{s:?}"),
        }
        assert!(kept.lock().unwrap().is_empty());
        // Owner 7's second in the hour, then none.
        assert_eq!(
            a.start(3, (7, 2), SECOND, "x".into(), keep(kept.clone())),
            Ok(())
        );
        idle(&a, 3).await;
        match a.start(4, (7, 2), SECOND, "x".into(), keep(kept.clone())) {
            Err(Refused::Limited(wait)) => {
                assert!(
                    wait <= WINDOW && wait > WINDOW - Duration::from_secs(60),
                    "{wait:?}"
                )
            }
            r => panic!("{r:?}"),
        }
        // Another owner is not held by owner 7's count.
        assert_eq!(a.start(5, (9, 2), SECOND, "x".into(), keep(kept)), Ok(()));
        idle(&a, 5).await;
    }
}
