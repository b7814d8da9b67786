//! League throughput: a 4-bot round-robin over every variant with the
//! instant Rust random bot, at concurrency 1 and 2, through the real
//! runner, real processes and real files.
//!
//!     cargo bench --bench league [-- ROUNDS]
//!
//! Prints games/s, decisions/s, the mean decisions per game, "100-decision
//! games per second" (decisions/s / 100, the unit of the goal) and the
//! referee's own CPU time per game (this process, bots excluded).

use mancala_arena::league::config::{
    default_variants, parse_variant, BotSpec, TimeSettings, Tournament,
};
use mancala_arena::league::runner::{self, RunOptions};
use mancala_arena::results::csvio;
use mancala_arena::results::records::RecordAt;
use std::path::Path;
use std::time::Instant;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
        t(u.ru_utime) + t(u.ru_stime)
    }
}

fn tournament(out: &Path, rounds: u32, concurrency: usize) -> Tournament {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let mut variants = default_variants();
    variants.push(parse_variant("tricala3").expect("tricala3 is a variant"));
    Tournament {
        name: "bench".into(),
        seed: 1,
        bots: (0..4)
            .map(|i| BotSpec {
                name: format!("r{i}"),
                command: vec![bot.to_string()],
                cwd: None,
                env: vec![("RANDOM_BOT_SEED".into(), i.to_string())],
                build: None,
                limits: Default::default(),
                origin: None,
            })
            .collect(),
        variants,
        rounds,
        time: TimeSettings::default(),
        max_plies: 1000,
        concurrency,
        concurrency_at: None,
        output: out.to_path_buf(),
        openings: 0,
        book: None,
        gauntlet: None,
        sandbox: Default::default(),
        sandbox_settings: Default::default(),
        ponder: false,
        limits: Default::default(),
        sprt: None,
        ladder: None,
        format: Default::default(),
    }
}

fn main() {
    let rounds: u32 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20);
    println!("league bench: 4 bots, 5 variants + 3-player Tricala, {rounds} rounds");
    for concurrency in [1, 2] {
        let dir = tempfile::tempdir().expect("temp dir");
        let t = tournament(dir.path(), rounds, concurrency);
        let cpu0 = cpu_seconds();
        let t0 = Instant::now();
        let summary = runner::run(
            &t,
            &RunOptions {
                no_build: true,
                ..Default::default()
            },
            &mut |_| {},
        )
        .expect("the league runs");
        let wall = t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        let rows = csvio::read_rows(&dir.path().join("games.csv")).expect("games.csv");
        assert_eq!(rows.len(), summary.total);
        // Decisions, from the records (forced ones included).
        let mut decisions = 0usize;
        for r in &rows {
            let rec = RecordAt::of(&dir.path().join("games"), r).expect("a record");
            let text = rec.read_text().expect("record");
            decisions += text
                .lines()
                .filter(|l| l.contains(r#""type":"decision""#))
                .count();
        }
        let games = rows.len() as f64;
        println!(
            "concurrency {concurrency}: {} games in {wall:.2} s = {:.0} games/s, {:.0} decisions/s, \
             {:.1} decisions/game, {:.0} 100-decision games/s, referee CPU {:.0} us/game",
            rows.len(),
            games / wall,
            decisions as f64 / wall,
            decisions as f64 / games,
            decisions as f64 / wall / 100.0,
            cpu / games * 1e6
        );
    }
}
