//! Two settings of the reference bots' searches against each other, in
//! process, on two threads (issue 51's tuning, BENCHMARKS.md "Reference
//! bots (issue 51)"):
//!
//!     cargo run --release --example mcts_duel -- VARIANT GAMES MILLIS A B [FIRST]
//!
//! A and B: `mcts:EXPLORE:DEPTH` (src/ai/mcts.rs with that exploration
//! constant and playout depth; `mcts` alone is the default, `search-rust`'s),
//! `mcts:EXPLORE:DEPTH:K` (the same with K times MILLIS a decision: what
//! more time is worth), `fit:EXPLORE:DEPTH` (playouts ending on the
//! heuristic fitted to results, `Evaluate::fitted`), either of these
//! after `keep:` (searching on from the tree of its last search,
//! `mcts::choose_keeping`), `imm:ALPHA:` before any of these (implicit
//! minimax backups of weight ALPHA), `ab` (src/ai/alphabeta.rs, no tables,
//! a 64 MB table) or `abfit` (the same estimating with `Evaluate::fitted`).
//! Each pair of games starts from the same two random plies, drawn from
//! the pair's seed (FIRST for the first pair, 0 unless given, then on), A
//! first in one and second in the other; prints A's wins, draws, losses,
//! mean score and Elo with a 95% interval. `tricala3` is 3-player Tricala: A in one seat and B in
//! the other two, A in each seat in turn from the same two plies (A's
//! score is its average against the two, `Outcome::scores`).
use mancala_arena::ai::alphabeta::{Searcher, Sides, MAX_DEPTH};
use mancala_arena::ai::{eval::Evaluate, mcts};
use mancala_arena::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    Rules, Settings,
};
use mancala_arena::tables::{probe::Oracle, Value};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
enum Spec {
    Mcts(mcts::Params),
    /// MCTS with this many times the time.
    Longer(mcts::Params, u32),
    /// MCTS searching on from its last search's tree.
    Keeping(mcts::Params),
    /// Alpha-beta; `true`: estimating with the fitted heuristic.
    AlphaBeta(bool),
}

/// The alpha-beta search without exact values.
struct Nothing;

impl<G: Rules> Oracle<G> for Nothing {
    fn at_turn_start(&self, _: &G) -> Option<Value> {
        None
    }
}

fn game<G: Evaluate>(seed: u64, ms: u64, a: Spec, b: Spec, players: usize, a_seat: usize) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = G::new(&Settings::with_players(players)).expect("settings");
    let mut buf = Vec::new();
    for _ in 0..2 {
        if g.to_decide().is_none() {
            break;
        }
        g.options(&mut buf);
        let o = buf[rng.gen_range(0..buf.len())];
        g.apply(o).expect("legal");
    }
    let mut searchers = [Searcher::new(64), Searcher::new(64)];
    let mut kept: [Option<mcts::Kept<G>>; 3] = [None, None, None];
    while let Some(seat) = g.to_decide() {
        let a_moves = seat == a_seat;
        let p = if a_moves { a } else { b };
        let deadline = Instant::now() + Duration::from_millis(ms);
        let o = match p {
            Spec::Mcts(p) => mcts::choose(&g, deadline, None, p, &mut rng).map(|(o, _)| o),
            Spec::Longer(p, k) => {
                let deadline = Instant::now() + Duration::from_millis(ms * u64::from(k));
                mcts::choose(&g, deadline, None, p, &mut rng).map(|(o, _)| o)
            }
            Spec::Keeping(p) => {
                mcts::choose_keeping(&g, deadline, None, p, &mut rng, &mut kept[seat])
                    .map(|(o, _)| o)
            }
            Spec::AlphaBeta(fitted) => {
                let s = &mut searchers[usize::from(a_moves)];
                s.fitted = fitted;
                s.choose(&g, Sides::Two, &Nothing, Some(deadline), MAX_DEPTH)
                    .map(|f| f.best)
            }
        };
        g.apply(o.expect("a move")).expect("legal");
    }
    g.value()[a_seat]
}

const USAGE: &str =
    "usage: mcts_duel VARIANT GAMES MILLIS A B [FIRST] (A, B: mcts, mcts:EXPLORE:DEPTH[:K], fit:EXPLORE:DEPTH, keep:..., imm:ALPHA:..., ab or abfit; FIRST: the first pair's seed, 0 unless given)";

fn fail(why: String) -> ! {
    eprintln!("{why}; {USAGE}");
    std::process::exit(2)
}

fn number(s: &str) -> f64 {
    s.parse()
        .unwrap_or_else(|_| fail(format!("`{s}` is not a number")))
}

fn spec(s: &str) -> Spec {
    if let Some(rest) = s.strip_prefix("imm:") {
        let (alpha, rest) = rest
            .split_once(':')
            .unwrap_or_else(|| fail(format!("`{s}`: imm:ALPHA:PLAYER")));
        let with = |p: mcts::Params| mcts::Params {
            minimax: number(alpha),
            ..p
        };
        return match spec(rest) {
            Spec::Mcts(p) => Spec::Mcts(with(p)),
            Spec::Keeping(p) => Spec::Keeping(with(p)),
            Spec::Longer(p, k) => Spec::Longer(with(p), k),
            Spec::AlphaBeta(_) => fail(format!("`{s}`: alpha-beta has no minimax weight")),
        };
    }
    if let Some(rest) = s.strip_prefix("keep:") {
        return match spec(rest) {
            Spec::Mcts(p) => Spec::Keeping(p),
            _ => fail(format!("`{s}`: only mcts and fit players keep their tree")),
        };
    }
    let parts: Vec<&str> = s.split(':').collect();
    match parts.as_slice() {
        ["ab"] => Spec::AlphaBeta(false),
        ["abfit"] => Spec::AlphaBeta(true),
        ["mcts"] => Spec::Mcts(mcts::Params::default()),
        [kind @ ("mcts" | "fit"), e, d] => Spec::Mcts(mcts::Params {
            explore: number(e),
            playout_depth: number(d) as u32,
            fitted: *kind == "fit",
            ..mcts::Params::default()
        }),
        ["mcts", e, d, k] => Spec::Longer(
            mcts::Params {
                explore: number(e),
                playout_depth: number(d) as u32,
                fitted: false,
                ..mcts::Params::default()
            },
            number(k) as u32,
        ),
        _ => fail(format!("`{s}` is not a player")),
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if !(5..=6).contains(&a.len()) {
        fail("five or six arguments wanted".into());
    }
    let variant = a[0].clone();
    let games_of_arena = [
        "filo",
        "tricala",
        "hackaback",
        "kisolo",
        "diffusion",
        "tricala3",
    ];
    if !games_of_arena.contains(&variant.as_str()) {
        fail(format!("`{variant}` is not a game of the arena"));
    }
    let players = if variant == "tricala3" { 3 } else { 2 };
    let games = number(&a[1]) as u64;
    let ms = number(&a[2]) as u64;
    let (pa, pb) = (spec(&a[3]), spec(&a[4]));
    let first = a.get(5).map_or(0, |s| number(s) as u64);
    if players == 3 && [pa, pb].iter().any(|p| matches!(p, Spec::AlphaBeta(_))) {
        fail("`ab` is a two-player search".into());
    }
    let threads = 2;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let variant = variant.clone();
            std::thread::spawn(move || {
                let mut scores = Vec::new();
                let mut i = t;
                while i < games {
                    let seed = first + i / players as u64;
                    let seat = (i % players as u64) as usize;
                    let s = match variant.as_str() {
                        "filo" => game::<Filo>(seed, ms, pa, pb, players, seat),
                        "tricala" | "tricala3" => game::<Tricala>(seed, ms, pa, pb, players, seat),
                        "hackaback" => game::<Hackaback>(seed, ms, pa, pb, players, seat),
                        "kisolo" => game::<Kisolo>(seed, ms, pa, pb, players, seat),
                        _ => game::<Diffusion>(seed, ms, pa, pb, players, seat),
                    };
                    scores.push(s);
                    i += threads;
                }
                scores
            })
        })
        .collect();
    let scores: Vec<f64> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("a duel thread"))
        .collect();
    let n = scores.len() as f64;
    let w = scores.iter().filter(|&&s| s > 0.75).count();
    let d = scores
        .iter()
        .filter(|&&s| (0.25..=0.75).contains(&s))
        .count();
    let l = scores.len() - w - d;
    let mean = scores.iter().sum::<f64>() / n;
    let var = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
    let se = (var / n).sqrt();
    let elo = |p: f64| -400.0 * (1.0 / p.clamp(0.001, 0.999) - 1.0).log10();
    println!(
        "{variant}: A {w}-{d}-{l} score {mean:.3} Elo {:+.0} [{:+.0}, {:+.0}]",
        elo(mean),
        elo(mean - 1.96 * se),
        elo(mean + 1.96 * se)
    );
}
