//! The console's view of a league: a consumer of the league runner's
//! [`Event`]s (as nextest's reporter consumes its events), printing what
//! happens to stderr and keeping a progress bar with the current leaders.
//! The runner knows nothing of it.

use crate::league::runner::Event;
use crate::results::GameRow;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;

/// What the console shows.
#[derive(Clone, Debug, Default)]
pub struct Show {
    /// The progress bar (a terminal); else one line per finished game.
    pub bar: bool,
    /// Neither the bar nor the lines of games and forfeits: only what is
    /// wrong with the run itself.
    pub quiet: bool,
    /// The standings every N finished games.
    pub rating_interval: Option<u64>,
    /// Shown with the standings: the head-to-head line of each of these
    /// pairs (bot A, bot B) (a match's two bots, a gauntlet's bot against
    /// each opponent).
    pub head_to_head: Vec<(String, String)>,
}

/// Messages and a progress bar (or progress lines) for one `arena run`.
pub struct Console {
    league: String,
    concurrency: usize,
    show: Show,
    bar: ProgressBar,
    leaders: Leaders,
    total: usize,
    done: usize,
    /// The games finished in this run, for the periodic standings.
    rows: Vec<GameRow>,
    /// When the leaders were last shown on the bar.
    last_message: std::time::Instant,
}

impl Console {
    pub fn new(league: &str, concurrency: usize, show: Show) -> Console {
        Console {
            league: league.to_string(),
            concurrency,
            show,
            bar: ProgressBar::hidden(),
            leaders: Leaders::default(),
            total: 0,
            done: 0,
            rows: Vec::new(),
            last_message: std::time::Instant::now(),
        }
    }

    /// Prints a line above the bar (or plainly without one).
    pub(super) fn say(&self, line: &str) {
        self.bar.suspend(|| errln!("{line}"));
    }

    fn finished(&mut self, row: &GameRow, detail: Option<&str>) {
        self.done += 1;
        self.leaders.add(row);
        self.bar.inc(1);
        // The leaders, redrawn at most 10 times a second (a thousand games
        // a second would otherwise sort and format them a thousand times).
        if self.last_message.elapsed() >= std::time::Duration::from_millis(100) {
            self.bar.set_message(self.leaders.leaders());
            self.last_message = std::time::Instant::now();
        }
        if self.show.quiet {
            return;
        }
        if let Some(seat) = row.offender {
            let bot = row.seats().get(seat as usize).copied().unwrap_or("?");
            self.say(&format!(
                "forfeit: {} {}: {bot} (seat {seat}) {}: {}",
                row.game_id,
                row.variant,
                row.reason,
                detail.unwrap_or("no detail")
            ));
        }
        if !self.show.bar {
            errln!(
                "game {}/{} {}: {} ({}, {} plies, {})",
                self.done,
                self.total,
                row.game_id,
                result_text(row),
                row.reason,
                row.plies,
                match row.duration_ms {
                    ms if ms < 1000 => format!("{ms} ms"),
                    ms => format!("{:.1} s", ms as f64 / 1000.0),
                }
            );
        }
        if let Some(n) = self.show.rating_interval {
            self.rows.push(row.clone());
            if (self.rows.len() as u64).is_multiple_of(n) {
                let mut text = match crate::ratings::rate(&self.rows, &Default::default()) {
                    Ok(r) => crate::report::tables::standings_table(&r.overall),
                    Err(e) => format!("(no standings yet: {e})"),
                };
                for line in head_to_head_lines(&self.rows, &self.show.head_to_head) {
                    text.push('\n');
                    text.push_str(&line);
                }
                self.say(&format!(
                    "standings after {} games of this run ({}/{} in all):\n{text}",
                    self.rows.len(),
                    self.done,
                    self.total
                ));
            }
        }
    }

    pub fn on_event(&mut self, e: &Event) {
        match e {
            Event::Building { bot, how } if how.is_empty() => errln!("building {bot} ..."),
            Event::Building { bot, how } => {
                errln!("building {bot} ({how}; --no-build runs the binaries as they are) ...")
            }
            Event::SetAside { rows, path } => {
                for r in rows {
                    errln!("repair: games.csv:{}: set aside: {}", r.line, r.why);
                }
                errln!(
                    "repair: {} row(s) moved to {}; their games will be played again",
                    rows.len(),
                    path.display()
                );
            }
            Event::Started {
                total,
                done,
                dir,
                repaired_bytes,
                cut_record_bytes,
                checked_in,
            } => {
                if *repaired_bytes > 0 {
                    errln!("resume: cut a torn last line ({repaired_bytes} bytes) from games.csv");
                }
                if *cut_record_bytes > 0 {
                    errln!(
                        "resume: moved {cut_record_bytes} bytes of records without a row (games whose rows were never written, a torn record among them if a run was killed mid-write) from the record logs to uncommitted-records.jsonl.zst (uncommitted-records.jsonl from plain logs of earlier versions); their games are played again"
                    );
                }
                if *done > 0 {
                    errln!(
                        "resume: {done} of {total} games already done in {} (rows checked in {:.2} s)",
                        dir.display(),
                        checked_in.as_secs_f64()
                    );
                }
                errln!(
                    "league {}: {total} games, {} at a time -> {}",
                    self.league,
                    self.concurrency,
                    dir.display()
                );
                self.total = *total;
                self.done = *done;
                if self.show.bar && !self.show.quiet {
                    self.bar.set_draw_target(ProgressDrawTarget::stderr());
                }
                self.bar.set_length(*total as u64);
                self.bar.set_position(*done as u64);
                // The games done before this run are not this run's rate:
                // the rate and ETA count from here (else a resume of a
                // million games would start with a rate of millions a
                // second, and an ETA of nothing).
                self.bar.reset_eta();
                self.bar.set_style(
                    ProgressStyle::with_template(
                        "{bar:30} {pos}/{len} games  {rate} games/s  ETA {eta}  {msg}",
                    )
                    .map(|s| s.with_key("rate", rate))
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
            }
            Event::Finished { row, detail } => self.finished(row, detail.as_deref()),
            Event::BotStarted {
                bot,
                worker,
                restart,
            } => {
                if *restart && !self.show.quiet {
                    self.say(&format!("restarted {bot} on worker {worker}"));
                }
            }
            Event::Warning(w) => self.say(&format!("warning: {w}")),
            Event::Ending { why } => self.say(&format!("{why}; finishing the games in flight")),
            // With --quiet, the run's last line says it (`stopped after ...`).
            Event::Interrupted if self.show.quiet => {}
            Event::Interrupted => {
                self.say("interrupted: stopping, unfinished games will rerun on resume")
            }
        }
    }

    /// Clears the bar (the run is over).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The head-to-head line of each pair in `rows` (`report::sprt`), for
/// the pairs that have met in a 2-player game: a league of 3-player games
/// alone has no pentanomial to show, and a line of zeros says nothing.
pub(super) fn head_to_head_lines(rows: &[GameRow], pairs: &[(String, String)]) -> Vec<String> {
    pairs
        .iter()
        .filter_map(|(a, b)| crate::ratings::sprt::head_to_head(rows, a, b).ok())
        .filter(|h| h.total.games > 0)
        .map(|h| crate::report::sprt::head_to_head_line(&h))
        .collect()
}

/// The bar's rate of games: whole games a second, one decimal below 10
/// (indicatif's own `per_sec` prints four at any rate).
fn rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let r = state.per_sec();
    let _ = match r < 10.0 {
        true => write!(w, "{r:.1}"),
        false => write!(w, "{r:.0}"),
    };
}

/// A game's result by seat: `greedy 1-0 random` for two players (`½` for a
/// draw), `a 1, b 0.25, c 0.25` for three.
fn result_text(row: &GameRow) -> String {
    let seats = row.seats();
    let scores = row.scores();
    let score = |s: f64| match s {
        1.0 => "1".to_string(),
        0.0 => "0".to_string(),
        0.5 => "½".to_string(),
        s => format!("{s}"),
    };
    if seats.len() == 2 {
        format!(
            "{} {}-{} {}",
            seats[0],
            score(scores[0]),
            score(scores[1]),
            seats[1]
        )
    } else {
        seats
            .iter()
            .zip(&scores)
            .map(|(n, s)| format!("{n} {}", score(*s)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Running scores for the progress line.
#[derive(Default)]
struct Leaders {
    score: BTreeMap<String, (f64, u32)>,
}

impl Leaders {
    fn add(&mut self, row: &GameRow) {
        for (name, s) in row.seats().into_iter().zip(row.scores()) {
            let e = self.score.entry(name.to_string()).or_default();
            e.0 += s;
            e.1 += 1;
        }
    }

    fn leaders(&self) -> String {
        let mut v: Vec<(&String, f64)> = self
            .score
            .iter()
            .map(|(n, (s, g))| (n, 100.0 * s / (*g).max(1) as f64))
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v.iter()
            .take(3)
            .map(|(n, p)| format!("{n} {p:.0}%"))
            .collect::<Vec<_>>()
            .join("  ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: &str, b: &str, score0: f64) -> GameRow {
        GameRow::two_player(&format!("{a}-{b}"), "filo", "g", a, b, score0)
    }

    /// A resume of a million games done: the rate (and so the ETA) counts
    /// this run's games only, not the million found done at its start.
    #[test]
    fn a_resumed_league_is_timed_by_its_own_games() {
        let mut c = Console::new(
            "t",
            2,
            Show {
                quiet: true,
                ..Show::default()
            },
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        c.on_event(&Event::Started {
            total: 2_000_000,
            done: 1_000_000,
            dir: std::path::PathBuf::from("out"),
            repaired_bytes: 0,
            cut_record_bytes: 0,
            checked_in: std::time::Duration::ZERO,
        });
        assert!(c.bar.per_sec() < 1000.0, "{} games/s", c.bar.per_sec());
        assert_eq!(c.bar.position(), 1_000_000);
    }

    #[test]
    fn leaders_are_the_best_three_by_score_share() {
        let mut l = Leaders::default();
        for r in [
            row("a", "b", 1.0),
            row("c", "a", 0.5),
            row("b", "c", 0.0),
            row("d", "b", 1.0),
        ] {
            l.add(&r);
        }
        // a: 1.5/2, c: 1.5/2, d: 1/1, b: 0/3.
        assert_eq!(l.leaders(), "d 100%  a 75%  c 75%");
    }
}
