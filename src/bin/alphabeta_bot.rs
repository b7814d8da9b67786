//! `alphabeta-bot` (bots/alphabeta-rust, issue 51): the strongest reference
//! bot, protocol v1. Two players: iterative-deepening principal-variation
//! search with a transposition table (src/ai/alphabeta.rs), exact values
//! from the endgame tables (`--tables DIR`, Diffusion, Hackaback and
//! 2-player Tricala) and from the F.I.L.O solver (solved on a thread of
//! its own from the first position of a game). By default (`--search
//! auto`) only in the games where it measured stronger than Monte-Carlo
//! tree search at the ladder's time control (F.I.L.O, Hackaback), MCTS
//! (as `search-rust`, with 8-decision playouts and implicit minimax
//! backups in Kisolo, and shorter ones
//! scored by a fitted heuristic in Diffusion and Tricala) in the others, where
//! the tables choose instead when
//! they reach every option (the search then picks only among options that
//! keep a draw); `--search alphabeta` uses it in every game. Three
//! players (Tricala): MCTS by default (6-decision playouts scored by the
//! heuristic fitted to three-player games), the paranoid alpha-beta with
//! `--three paranoid` (BENCHMARKS.md, "Reference bots (issue 51)", has the
//! league that chose).
//!
//! Its MCTS searches on from the subtree of the position it meets in its
//! last search's tree (`mcts::choose_keeping`).
//!
//! Spends what the driver gives (min(timeout/4, clock/20), or `--millis`).
//! Owns only its command line and its statistics line on stderr.

use mancala_arena::ai::alphabeta::{Searcher, Sides, MAX_DEPTH};
use mancala_arena::ai::exact::{exactly, Exact, Exactly};
use mancala_arena::ai::{driver, eval::Evaluate, mcts};
use mancala_arena::engine::{filo::Filo, Variant};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::any::Any;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The search for three players.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Three {
    Mcts,
    Paranoid,
}

/// The search for two players.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Two {
    /// Alpha-beta where the league measured it stronger than MCTS
    /// (F.I.L.O, Hackaback), MCTS elsewhere.
    Auto,
    /// Alpha-beta in every game.
    AlphaBeta,
}

impl Two {
    fn alphabeta(self, v: Variant) -> bool {
        match self {
            Two::AlphaBeta => true,
            Two::Auto => matches!(v, Variant::Filo | Variant::Hackaback),
        }
    }
}

/// The bot's own flags; the rest go to the driver.
struct Args {
    tables: Option<PathBuf>,
    two: Two,
    three: Three,
    tt_mb: usize,
    timing: driver::Timing,
}

const USAGE: &str = "usage: alphabeta-bot [--tables DIR] [--search auto|alphabeta] \
     [--three mcts|paranoid] [--tt-mb N] [--millis N]";

fn parse_args(args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut tables = None;
    let mut two = Two::Auto;
    let mut three = Three::Mcts;
    let mut tt_mb = 32;
    let mut rest = Vec::new();
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let mine = ["--tables", "--search", "--three", "--tt-mb"].contains(&flag.as_str());
        if !mine {
            rest.push(a);
            continue;
        }
        let value = inline
            .or_else(|| args.next())
            .ok_or(format!("{flag} needs a value ({USAGE})"))?;
        match flag.as_str() {
            "--tables" => tables = Some(PathBuf::from(value)),
            "--search" => {
                two = match value.as_str() {
                    "auto" => Two::Auto,
                    "alphabeta" => Two::AlphaBeta,
                    v => return Err(format!("--search `{v}`: expected auto or alphabeta")),
                }
            }
            "--three" => {
                three = match value.as_str() {
                    "mcts" => Three::Mcts,
                    "paranoid" => Three::Paranoid,
                    v => return Err(format!("--three `{v}`: expected mcts or paranoid")),
                }
            }
            _ => {
                tt_mb = value
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| (1..=4096).contains(&n))
                    .ok_or(format!("--tt-mb `{value}`: expected 1 to 4096"))?
            }
        }
    }
    let timing = driver::parse(rest.into_iter()).map_err(|e| format!("{e}; {USAGE}"))?;
    Ok(Args {
        tables,
        two,
        three,
        tt_mb,
        timing,
    })
}

struct Bot {
    searcher: Searcher,
    exact: Exact,
    two: Two,
    three: Three,
    rng: ChaCha8Rng,
    /// The MCTS's tree from its last search in this game
    /// (`mcts::Kept<G>` of the game's type).
    kept: Option<Box<dyn Any>>,
    fixed: Option<u64>,
    /// A damaged table file was named on stderr already (once is enough:
    /// the bot plays on without that layer).
    told: bool,
    decisions: u64,
    depths: u64,
    nodes: u64,
    searched: Duration,
}

/// The most positions the F.I.L.O solver's retrograde analysis takes in
/// (its peak memory stays well under the sandbox's default 1 GiB at this
/// bound: 338 MB when the empty board reached it, after 7.6 s). From the
/// empty board or the first positions of a game more are reachable, so a
/// solve succeeds only from later positions (retried every few plies).
const FILO_MAX_STATES: usize = 6_000_000;

/// The least time a decision must have for the F.I.L.O solver to be
/// started: the solve shares the bot's CPU with the search, and near the
/// bound it takes seconds (7.6 s when the empty board reached it).
const SOLVE_MIN_BUDGET: Duration = Duration::from_millis(200);

impl Bot {
    /// A damaged table file met, on stderr once (the bot plays on
    /// without it).
    fn tell_table_errors(&mut self) {
        if self.told {
            return;
        }
        if let Some(e) = self.exact.error() {
            eprintln!("tables: {e}; playing on without that layer");
            self.told = true;
        }
    }
}

impl driver::Player for Bot {
    fn choose<G: Evaluate>(&mut self, g: &G, deadline: Instant) -> Option<G::Opt> {
        let t0 = Instant::now();
        let seat = g.to_decide()?;
        let mcts = if g.players() > 2 {
            self.three == Three::Mcts
        } else {
            !self.two.alphabeta(G::VARIANT)
        };
        if mcts {
            // Where the tables reach every option, they choose: the
            // search only picks among the options that keep a draw.
            let exact = match g.players() {
                2 => exactly(&self.exact, g),
                _ => Exactly::Unknown,
            };
            self.tell_table_errors();
            if let Exactly::Play(opt) = exact {
                return Some(opt);
            }
            let params = mcts::Params::tuned(G::VARIANT);
            let mut kept = self.kept.take().and_then(|k| k.downcast().ok()).map(|k| *k);
            let chosen =
                mcts::choose_keeping(g, deadline, self.fixed, params, &mut self.rng, &mut kept);
            self.kept = kept.map(|k: mcts::Kept<G>| Box::new(k) as Box<dyn Any>);
            let (opt, _) = chosen?;
            self.searched += t0.elapsed();
            return Some(match exact {
                Exactly::KeepDraw(draws) if !draws.contains(&opt) => draws[0],
                _ => opt,
            });
        }
        if let Some(f) = (g as &dyn Any).downcast_ref::<Filo>() {
            // The solve shares the bot's CPU (and is stopped with it between
            // its turns): worth it only when a decision has time to spare.
            if deadline.saturating_duration_since(t0) >= SOLVE_MIN_BUDGET
                || self.exact.filo.started()
            {
                self.exact.filo.prepare(f);
            }
        }
        let sides = Sides::for_game(g.players(), seat);
        let found = self
            .searcher
            .choose(g, sides, &self.exact, Some(deadline), MAX_DEPTH)?;
        self.tell_table_errors();
        self.decisions += 1;
        self.depths += u64::from(found.depth);
        self.nodes += found.nodes;
        self.searched += t0.elapsed();
        Some(found.best)
    }

    fn report(&mut self) -> Option<String> {
        let secs = self.searched.as_secs_f64().max(1e-9);
        let line = format!(
            "{} searches, mean depth {:.1}, {} nodes in {:.2} s ({:.0} nodes/s)",
            self.decisions,
            self.depths as f64 / self.decisions.max(1) as f64,
            self.nodes,
            secs,
            self.nodes as f64 / secs
        );
        self.decisions = 0;
        self.depths = 0;
        self.nodes = 0;
        self.searched = Duration::ZERO;
        Some(line)
    }

    fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
        self.kept = None;
    }
}

fn main() -> std::process::ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(args) => {
            if let Some(dir) = &args.tables {
                if !dir.is_dir() {
                    eprintln!("alphabeta-bot: --tables {}: not a folder", dir.display());
                    return std::process::ExitCode::from(2);
                }
                let tabled = mancala_arena::tables::TABLED;
                if !tabled.iter().any(|g| dir.join(g.name()).is_dir()) {
                    eprintln!(
                        "alphabeta-bot: --tables {}: no diffusion/, hackaback/ or tricala/ folder in it (give the folder `arena tables build --out` wrote into): playing without tables",
                        dir.display()
                    );
                }
            }
            let mut bot = Bot {
                searcher: Searcher::new(args.tt_mb),
                exact: Exact::new(args.tables.as_deref(), FILO_MAX_STATES),
                two: args.two,
                three: args.three,
                rng: driver::rng(),
                kept: None,
                fixed: args.timing.iterations,
                told: false,
                decisions: 0,
                depths: 0,
                nodes: 0,
                searched: Duration::ZERO,
            };
            driver::run("alphabeta-rust", &mut bot, args.timing);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("alphabeta-bot: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
