//! An uploaded version's `check-bot`, as `arena check-bot` runs it
//! ([`crate::league::check`]), after its build: the handshake, one game
//! per seat of each of the ladder's games against the built-in random
//! player, the quit and the latency, under the ladder's time control,
//! sandbox and limits. Its report is the version's, word for word, but
//! for the organiser's folders ([`public`]).

use crate::league::check::{check_built, CheckOptions, CheckReport};
use crate::league::config::BotSpec;
use crate::league::config::Tournament;

/// Checks `spec` (built already): whether it passed, and the report.
pub fn check(t: &Tournament, spec: &BotSpec) -> (bool, String) {
    let mut games: Vec<crate::engine::Variant> = Vec::new();
    for v in &t.variants {
        if !games.contains(&v.variant) {
            games.push(v.variant);
        }
    }
    let layout = crate::league::folder::Layout::new(t.output.clone());
    let log = layout.check_log(&spec.name);
    if let Some(up) = log.parent() {
        let _ = std::fs::create_dir_all(up);
    }
    // The ladder's limits, lowered where the bot.toml asks for less.
    let (limits, said) = super::limits::in_force(t.limits, spec.limits);
    let opts = CheckOptions {
        games,
        timeout_ms: t.time.decision_ms,
        startup_ms: t.time.startup_ms,
        max_plies: t.max_plies,
        log: Some(log),
        sandbox: t.sandbox,
        limits,
        seed: t.seed,
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
        limits,
        &opts,
        &mut |_| {},
    ));
    let text = format!("{said}\n{}", report.text());
    (report.passed(), public(&text, spec.cwd.as_deref()))
}

/// A report as the ladder shows it to anyone: the organiser's folders,
/// which the expanded command and some errors name, as the bot.toml says
/// them: the bot's own folder as `.`, the folder of `arena` as
/// `{bin_dir}`.
pub fn public(text: &str, folder: Option<&std::path::Path>) -> String {
    let bin_dir = crate::bot::manifest::expand(&["{bin_dir}".to_string()]);
    let mut text = text.to_string();
    if let Some(f) = folder.map(|f| f.display().to_string()) {
        text = text.replace(&format!("{f}/"), "./").replace(&f, ".");
    }
    if let Some(b) = bin_dir.first().filter(|b| b.len() > 1) {
        text = text.replace(b.as_str(), "{bin_dir}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_organisers_folders_are_not_shown() {
        let bin = crate::bot::manifest::expand(&["{bin_dir}/random-bot".to_string()]);
        let folder = std::path::Path::new("/srv/ladder/results/versions/x-1");
        let text = format!(
            "checking `{}`\nFAIL start: /srv/ladder/results/versions/x-1/bot.py: not found in /srv/ladder/results/versions/x-1\n",
            bin[0]
        );
        let shown = public(&text, Some(folder));
        assert_eq!(
            shown,
            "checking `{bin_dir}/random-bot`\nFAIL start: ./bot.py: not found in .\n"
        );
    }
}
