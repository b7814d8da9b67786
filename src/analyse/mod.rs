//! The analysis of a played game (issue 51, `arena analyse`): for each
//! decision, the best option found and the value of the one played, exact
//! where the endgame tables (`crate::tables`) or the F.I.L.O solver reach,
//! otherwise a depth-limited alpha-beta search's estimate; a decision that
//! throws away a result (win to draw or loss, draw to loss) or loses more
//! than a threshold of the estimated score is a blunder.
//!
//! Owns the judging of decisions only: it replays the game through the
//! engine, reads exact values through [`Oracle`]s, and knows nothing of
//! results folders or the command line.

use crate::ai::alphabeta;
use crate::ai::eval::Evaluate;
use crate::ai::filo_solve;
use crate::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    EngineError, Rules, Settings, Variant,
};
use crate::tables::diffusion::DiffusionTable;
use crate::tables::hackaback::HackabackTable;
use crate::tables::probe::{option_value, Oracle, Tables};
use crate::tables::tricala::TricalaTable;
use crate::tables::Value;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How to analyse.
#[derive(Clone, Debug)]
pub struct Params {
    /// Search depth in decisions (a turn of several decisions takes
    /// several); with `time` too, the deepest finished within the time.
    pub depth: Option<u32>,
    /// Time per decision for an iterative-deepening search.
    pub time: Option<Duration>,
    /// A decision whose estimated score is this much below the best
    /// option's is a blunder (scores are in [0, 1]).
    pub threshold: f64,
    /// The tables folder (`arena tables build --out`), if any.
    pub tables: Option<PathBuf>,
    /// Use the tables and the F.I.L.O solver where they reach.
    pub exact: bool,
    /// The F.I.L.O solver's time per proof (each option of a decision
    /// takes one or two).
    pub proof_time: Duration,
}

/// The default search depth when neither a depth nor a time is given.
pub const DEFAULT_DEPTH: u32 = 4;

/// The value of an option for the player deciding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Assessed {
    /// `win`, `draw` or `loss` when exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<&'static str>,
    /// Plies to the end with best play, when exact and not a draw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plies: Option<u16>,
    /// The expected score in [0, 1]: 1, 0.5, 0 when exact.
    pub score: f64,
    /// The depth searched (decisions), for an estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
}

impl Assessed {
    fn exact(v: Value) -> Assessed {
        Assessed {
            result: Some(v.result()),
            plies: (v != Value::Draw).then_some(v.plies()),
            score: match v {
                Value::Win(_) => 1.0,
                Value::Draw => 0.5,
                Value::Loss(_) => 0.0,
            },
            depth: None,
        }
    }

    fn estimate(score: f64, depth: u32) -> Assessed {
        Assessed {
            result: None,
            plies: None,
            score,
            depth: Some(depth),
        }
    }

    /// "win in 7", "draw", "0.62 (depth 4)".
    pub fn text(&self) -> String {
        match (self.result, self.plies) {
            (Some(r), Some(p)) => format!("{r} in {p}"),
            (Some(r), None) => r.to_string(),
            (None, _) if self.depth.is_none() => "unproved".to_string(),
            _ => format!("{:.3} (d{})", self.score, self.depth.unwrap_or(0)),
        }
    }
}

/// One decision judged.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// 1-based number of the decision in the record.
    pub decision: usize,
    pub ply: u32,
    pub seat: usize,
    pub kind: &'static str,
    pub played: String,
    pub options: usize,
    pub best: String,
    pub best_value: Assessed,
    pub played_value: Assessed,
    /// `tables`, `solver`, `end` (exact: from the tables, the F.I.L.O
    /// solver, or the game's end reached by every option) or `search` (an
    /// estimate).
    pub source: &'static str,
    /// The score given away: best's minus the played option's.
    pub loss: f64,
    pub blunder: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// `opening` or `forced` when the referee applied the decision (the
    /// league's opening, or the only option) and no player chose it: it
    /// is judged, but never anyone's blunder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<&'static str>,
}

/// Marks the decisions the referee applied (`applied`, one a decision:
/// `opening` or `forced`, or `None` for a player's choice): judged, but no
/// player's blunder.
pub fn mark_applied(
    verdicts: &mut [Verdict],
    applied: impl IntoIterator<Item = Option<&'static str>>,
) {
    for (v, how) in verdicts.iter_mut().zip(applied) {
        if how.is_some() {
            v.applied = how;
            v.blunder = false;
            v.why = None;
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AnalyseError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("decision {index} `{option}` cannot be replayed: {why}")]
    Replay {
        index: usize,
        option: String,
        why: EngineError,
    },
    #[error("the F.I.L.O solver: {0}")]
    Solver(#[from] filo_solve::SolveError),
    #[error("{0}")]
    Tables(String),
}

/// Judges every decision of a game played from the start with `settings`.
pub fn analyse(
    variant: Variant,
    settings: &Settings,
    moves: &[String],
    params: &Params,
) -> Result<Vec<Verdict>, AnalyseError> {
    match variant {
        Variant::Filo => {
            let g = Filo::new(settings)?;
            if params.exact {
                let oracle = FiloOracle::new(params.proof_time);
                judge_all(g, moves, params, &oracle, "solver")
            } else {
                judge_all(g, moves, params, &NoOracle, END)
            }
        }
        Variant::Diffusion => {
            let g = Diffusion::new(settings)?;
            with_tables::<DiffusionTable>(g, moves, params)
        }
        Variant::Hackaback => {
            let g = Hackaback::new(settings)?;
            with_tables::<HackabackTable>(g, moves, params)
        }
        Variant::Kisolo => judge_all(Kisolo::new(settings)?, moves, params, &NoOracle, END),
        Variant::Tricala => {
            let g = Tricala::new(settings)?;
            if settings.players != 2 {
                // The tables are the 2-player game's: nothing exact here
                // but the game's end.
                return judge_all(g, moves, params, &NoOracle, END);
            }
            with_tables::<TricalaTable>(g, moves, params)
        }
    }
}

fn with_tables<T: crate::tables::TableGame>(
    g: T::G,
    moves: &[String],
    params: &Params,
) -> Result<Vec<Verdict>, AnalyseError>
where
    T::G: Evaluate,
{
    match (&params.tables, params.exact) {
        (Some(dir), true) => {
            let tables = Tables::<T>::open(dir);
            let out = judge_all(g, moves, params, &tables, "tables")?;
            match tables.error() {
                Some(e) => Err(AnalyseError::Tables(e)),
                None => Ok(out),
            }
        }
        _ => judge_all(g, moves, params, &NoOracle, END),
    }
}

/// The source of an exact value when nothing but the game's own end is
/// exact: every option of the decision ends the game.
const END: &str = "end";

/// No exact values anywhere (but the game's end).
struct NoOracle;

impl<G: Rules> Oracle<G> for NoOracle {
    fn at_turn_start(&self, _: &G) -> Option<Value> {
        None
    }
}

/// F.I.L.O's exact values from the solver's proof search
/// (`filo_solve::prove`): the side to move wins in d plies when a win
/// within d is proved and none within d - 1; it loses in d when the
/// opponent's is. A draw is never proved, and a position neither proof
/// settles within its time is left to the estimate; so is the entry
/// phase (proofs from there take seconds each). Results are kept.
struct FiloOracle {
    proved: std::cell::RefCell<HashMap<u64, Option<Value>>>,
    budget: Duration,
}

/// The deepest proof tried, in plies.
const FILO_PROOF_PLIES: u32 = 60;

impl FiloOracle {
    fn new(budget: Duration) -> FiloOracle {
        FiloOracle {
            proved: Default::default(),
            budget,
        }
    }
}

impl Oracle<Filo> for FiloOracle {
    fn at_turn_start(&self, g: &Filo) -> Option<Value> {
        let mover = g.to_decide()?;
        if g.reserve() != [0, 0] {
            // The entry phase: proofs from there take too long to try at
            // every option.
            return None;
        }
        let k = filo_solve::key(g);
        if let Some(v) = self.proved.borrow().get(&k) {
            return *v;
        }
        let mut root = g.clone();
        if g.plies() > 0 || root.outcome().is_some() {
            // The proof ignores the ply cap (a win within d plies).
            root = filo_solve::decode(k).ok()?;
        }
        let prove =
            |seat| filo_solve::prove(&root, seat, FILO_PROOF_PLIES, Some(self.budget)).plies;
        let v = match prove(mover) {
            Some(d) => Some(Value::Win(d as u16)),
            None => prove(1 - mover).map(|d| Value::Loss(d as u16)),
        };
        self.proved.borrow_mut().insert(k, v);
        v
    }

    fn known(&self, g: &Filo) -> Option<Value> {
        g.to_decide()?;
        self.proved
            .borrow()
            .get(&filo_solve::key(g))
            .copied()
            .flatten()
    }
}

fn judge_all<G: Evaluate>(
    mut g: G,
    moves: &[String],
    params: &Params,
    oracle: &dyn Oracle<G>,
    exact_source: &'static str,
) -> Result<Vec<Verdict>, AnalyseError> {
    let mut out = Vec::with_capacity(moves.len());
    for (i, m) in moves.iter().enumerate() {
        let replay = |why| AnalyseError::Replay {
            index: i + 1,
            option: m.clone(),
            why,
        };
        if g.to_decide().is_none() {
            return Err(replay(EngineError::GameOver));
        }
        let played = g.parse(m).map_err(replay)?;
        let mut opts = Vec::new();
        g.options(&mut opts);
        if !opts.contains(&played) {
            return Err(replay(EngineError::Illegal(m.clone())));
        }
        out.push(judge(
            &g,
            &opts,
            played,
            i + 1,
            params,
            oracle,
            exact_source,
        ));
        g.apply(played).map_err(replay)?;
    }
    Ok(out)
}

/// One decision: every option's value, exact when the oracle reaches all
/// of them, else searched.
fn judge<G: Evaluate>(
    g: &G,
    opts: &[G::Opt],
    played: G::Opt,
    decision: usize,
    params: &Params,
    oracle: &dyn Oracle<G>,
    exact_source: &'static str,
) -> Verdict {
    let seat = g.to_decide().unwrap_or(0);
    let exact: Vec<Option<Value>> = opts.iter().map(|&o| option_value(oracle, g, o)).collect();
    let played_at = opts.iter().position(|&o| o == played).unwrap_or(0);
    // Exact when every option is, or when some option is a proved win and
    // the played one is exact too (an option left unproved could only be
    // a faster win: the best found is still a win).
    let some_win = exact.iter().any(|v| matches!(v, Some(Value::Win(_))));
    let all_exact = exact.iter().all(Option::is_some);
    let (values, source): (Vec<Assessed>, &'static str) =
        if all_exact || (some_win && exact[played_at].is_some()) {
            let vs = exact
                .iter()
                .map(|v| v.map_or_else(|| Assessed::estimate(0.5, 0), Assessed::exact))
                .map(|a| Assessed {
                    depth: a.depth.filter(|_| false),
                    ..a
                })
                .collect();
            (vs, exact_source)
        } else {
            let deadline = params.time.and_then(|t| Instant::now().checked_add(t));
            let depth = params.depth.unwrap_or(if params.time.is_some() {
                64
            } else {
                DEFAULT_DEPTH
            });
            let (scores, reached) = alphabeta::option_scores(g, opts, depth, deadline, oracle);
            (
                scores
                    .into_iter()
                    .map(|s| Assessed::estimate(s, reached))
                    .collect(),
                "search",
            )
        };
    let key = |a: &Assessed| -> i64 {
        match (a.result, a.plies) {
            (Some("win"), Some(p)) => 2_000_000 - i64::from(p),
            (Some("loss"), Some(p)) => -2_000_000 + i64::from(p),
            _ => (a.score * 1_000_000.0).round() as i64,
        }
    };
    let best_i = (0..opts.len())
        .max_by_key(|&i| (key(&values[i]), -(i as i64)))
        .unwrap_or(0);
    let played_i = played_at;
    let (best, mine) = (&values[best_i], &values[played_i]);
    let loss = (best.score - mine.score).max(0.0);
    let why = match (best.result, mine.result) {
        (Some(b), Some(p)) if b != p => Some(format!("{b} thrown away: {p} now")),
        (Some(_), Some(_)) => None,
        _ if loss > params.threshold => Some(format!("{loss:.3} of the score given away")),
        _ => None,
    };
    Verdict {
        decision,
        ply: g.plies(),
        seat,
        kind: g.decision_kind(),
        played: g.notation(played),
        options: opts.len(),
        best: g.notation(opts[best_i]),
        best_value: best.clone(),
        played_value: mine.clone(),
        source,
        loss,
        blunder: why.is_some(),
        why,
        applied: None,
    }
}

#[cfg(test)]
mod tests;
