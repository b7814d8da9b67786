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
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The whole analysis's time: shared out between the decisions.
pub const BUDGET: Duration = Duration::from_secs(20);

/// A decision's time: the budget's share, within these bounds (a game of
/// more than 2,000 decisions takes longer than the budget).
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
}

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

/// Another game's analysis runs: try again later.
#[derive(Debug)]
pub struct Busy;

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
    /// by owner `owner`: judged on a blocking thread, kept by `keep` (the
    /// store) when done. Already running: nothing more. Another game's
    /// running: [`Busy`].
    pub fn start<F, Fut>(self: &Arc<Self>, id: i64, record: String, keep: F) -> Result<(), Busy>
    where
        F: FnOnce(String) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<(), String>> + Send,
    {
        {
            let mut s = self.lock();
            match s.running {
                Some(r) if r == id => return Ok(()),
                Some(_) => return Err(Busy),
                None => {
                    s.running = Some(id);
                    s.failed.remove(&id);
                }
            }
        }
        let me = self.clone();
        tokio::spawn(async move {
            let judged = tokio::task::spawn_blocking(move || judge(&record))
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

/// Every decision of the record `text` judged, as JSON lines.
pub fn judge(text: &str) -> Result<String, String> {
    let rec = read_record(text).map_err(|e| format!("the record cannot be read: {e}"))?;
    let moves: Vec<String> = rec.decisions.iter().map(|d| d.option.clone()).collect();
    let per = (BUDGET / u32::try_from(moves.len().max(1)).unwrap_or(u32::MAX)).clamp(LEAST, MOST);
    let params = Params {
        depth: None,
        time: Some(per),
        threshold: 0.15,
        tables: None,
        exact: false,
        proof_time: Duration::ZERO,
    };
    let verdicts = analyse(rec.spec.variant, &rec.spec.settings, &moves, &params)
        .map_err(|e| format!("the game cannot be analysed: {e}"))?;
    let mut out = String::new();
    for v in &verdicts {
        let line = serde_json::to_string(v).map_err(|e| e.to_string())?;
        let _ = writeln!(out, "{line}");
    }
    Ok(out)
}
