//! The console's view of a league: a consumer of the league runner's
//! [`Event`]s (as nextest's reporter consumes its events), printing what
//! happens to stderr and keeping a progress bar with the current leaders.
//! The runner knows nothing of it.

use crate::league::runner::Event;
use crate::results::GameRow;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;

/// Messages and a progress bar for one `arena run`.
pub struct Console {
    league: String,
    concurrency: usize,
    show_bar: bool,
    bar: ProgressBar,
    leaders: Leaders,
}

impl Console {
    /// `show_bar`: draw the bar on stderr (messages are printed either way).
    pub fn new(league: &str, concurrency: usize, show_bar: bool) -> Console {
        Console {
            league: league.to_string(),
            concurrency,
            show_bar,
            bar: ProgressBar::hidden(),
            leaders: Leaders::default(),
        }
    }

    pub fn on_event(&mut self, e: &Event) {
        match e {
            Event::Building { bot } => eprintln!("building {bot} ..."),
            Event::SetAside { rows, path } => {
                for r in rows {
                    eprintln!("repair: games.csv:{}: set aside: {}", r.line, r.why);
                }
                eprintln!(
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
            } => {
                if *repaired_bytes > 0 {
                    eprintln!(
                        "resume: cut a torn last line ({repaired_bytes} bytes) from games.csv"
                    );
                }
                if *done > 0 {
                    eprintln!(
                        "resume: {done} of {total} games already done in {}",
                        dir.display()
                    );
                }
                eprintln!(
                    "league {}: {total} games, {} at a time -> {}",
                    self.league,
                    self.concurrency,
                    dir.display()
                );
                if self.show_bar {
                    self.bar.set_draw_target(ProgressDrawTarget::stderr());
                }
                self.bar.set_length(*total as u64);
                self.bar.set_position(*done as u64);
                self.bar.set_style(
                    ProgressStyle::with_template(
                        "{bar:30} {pos}/{len} games  {per_sec}  ETA {eta}  {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
            }
            Event::Finished { row } => {
                self.leaders.add(row);
                self.bar.inc(1);
                self.bar.set_message(self.leaders.leaders());
            }
            Event::BotStarted {
                bot,
                worker,
                restart,
            } => {
                if *restart {
                    self.bar
                        .suspend(|| eprintln!("restarted {bot} on worker {worker}"));
                }
            }
            Event::Interrupted => self.bar.suspend(|| {
                eprintln!("interrupted: stopping, unfinished games will rerun on resume")
            }),
        }
    }

    /// Clears the bar (the run is over).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
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
        GameRow {
            game_id: format!("{a}-{b}"),
            variant: "filo".into(),
            players: 2,
            group: "g".into(),
            seat0: a.into(),
            seat1: b.into(),
            seat2: String::new(),
            score0,
            score1: 1.0 - score0,
            score2: None,
            reason: "store".into(),
            offender: None,
            plies: 10,
            duration_ms: 1,
            seed: 1,
            opening: String::new(),
        }
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
