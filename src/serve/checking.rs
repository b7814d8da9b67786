//! An uploaded version's `check-bot`, as `arena check-bot` runs it
//! ([`crate::league::check`]), after its build: the handshake, one game
//! per seat of each of the ladder's games against the built-in random
//! player, the quit and the latency, under the ladder's time control,
//! sandbox and limits. Its report is the version's, word for word.

use super::state::Ladder;
use crate::league::check::{check_built, CheckOptions, CheckReport};
use crate::league::config::BotSpec;

/// Checks `spec` (built already): whether it passed, and the report.
pub fn check(l: &Ladder, spec: &BotSpec) -> (bool, String) {
    let mut games: Vec<crate::engine::Variant> = Vec::new();
    for v in &l.t.variants {
        if !games.contains(&v.variant) {
            games.push(v.variant);
        }
    }
    let layout = crate::league::folder::Layout::new(l.t.output.clone());
    let log = layout.check_log(&spec.name);
    if let Some(up) = log.parent() {
        let _ = std::fs::create_dir_all(up);
    }
    let opts = CheckOptions {
        games,
        timeout_ms: l.t.time.decision_ms,
        startup_ms: l.t.time.startup_ms,
        max_plies: l.t.max_plies,
        log: Some(log),
        sandbox: l.t.sandbox,
        limits: l.t.limits,
        seed: l.t.seed,
    };
    let cmd = crate::league::launch::command(spec);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return (false, format!("the check could not start: {e}")),
    };
    let report: CheckReport = rt.block_on(check_built(
        CheckReport::default(),
        &cmd,
        spec.limits,
        &opts,
        &mut |_| {},
    ));
    (report.passed(), report.text())
}
