//! The exact values a reference bot can use while it searches (issue 51):
//! the endgame tables of Diffusion, Hackaback and 2-player Tricala when a
//! folder is given, and F.I.L.O's solution, computed by the solver on a
//! thread of its own from the first position of a game and used once it
//! is there. One [`Oracle`] for every game: it answers for the games it
//! has values of and says nothing for the others.

use super::filo_solve;
use crate::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, tricala::Tricala, Rules,
};
use crate::tables::diffusion::DiffusionTable;
use crate::tables::hackaback::HackabackTable;
use crate::tables::probe::{option_value, Oracle, Tables};
use crate::tables::tricala::TricalaTable;
use crate::tables::Value;
use std::any::Any;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

/// F.I.L.O positions solved (by [`filo_solve::key`]).
pub type FiloValues = HashMap<u64, filo_solve::Value>;

type Solving = JoinHandle<Result<FiloValues, filo_solve::SolveError>>;

/// F.I.L.O's solution from a game's position, once solved.
pub struct FiloSolution {
    values: Option<Arc<FiloValues>>,
    running: Option<Solving>,
    /// The ply of the last solve that failed (too many positions): the
    /// next try waits until the game has moved on.
    failed_at: Option<u32>,
    max_states: usize,
}

/// Plies a failed solve waits before the next try.
const RETRY_PLIES: u32 = 8;

impl FiloSolution {
    /// Solves from positions with at most `max_states` reachable ones
    /// (the empty board has more than 6 million: a solve from there
    /// fails, and one from a later position is tried).
    pub fn new(max_states: usize) -> FiloSolution {
        FiloSolution {
            values: None,
            running: None,
            failed_at: None,
            max_states,
        }
    }

    /// Whether a solve is running or has finished.
    pub fn started(&self) -> bool {
        self.running.is_some() || self.values.is_some()
    }

    /// Whether the solution reaches `g`.
    pub fn covers(&self, g: &Filo) -> bool {
        self.values
            .as_ref()
            .is_some_and(|v| v.contains_key(&filo_solve::key(g)))
    }

    /// Collects a finished solve; starts one from `g` (on its own thread)
    /// when no solution reaches it and none is running. Every position of
    /// the game after `g` is reachable from it, so one solve a game is
    /// enough.
    pub fn prepare(&mut self, g: &Filo) {
        if self.running.as_ref().is_some_and(JoinHandle::is_finished) {
            if let Some(h) = self.running.take() {
                match h.join() {
                    Ok(Ok(v)) => self.values = Some(Arc::new(v)),
                    Ok(Err(e)) => {
                        eprintln!("F.I.L.O solver: {e}");
                        self.failed_at = Some(g.plies());
                    }
                    Err(_) => self.failed_at = Some(g.plies()),
                }
            }
        }
        if self.running.is_some() || self.covers(g) || g.to_decide().is_none() {
            return;
        }
        if let Some(p) = self.failed_at {
            if g.plies() >= p && g.plies() < p + RETRY_PLIES {
                return;
            }
        }
        let Ok(root) = filo_solve::decode(filo_solve::key(g)) else {
            return;
        };
        let max = self.max_states;
        self.values = None;
        let spawned = std::thread::Builder::new()
            .name("filo-solve".into())
            .spawn(move || filo_solve::solve_values(&root, max));
        match spawned {
            Ok(h) => self.running = Some(h),
            Err(e) => {
                eprintln!("F.I.L.O solver: no thread ({e}): searching without it");
                self.failed_at = Some(g.plies());
            }
        }
    }

    /// Solves from `g` now, on this thread (tests; a bot uses
    /// [`FiloSolution::prepare`]).
    pub fn solve_now(&mut self, g: &Filo) -> Result<(), filo_solve::SolveError> {
        let root = filo_solve::decode(filo_solve::key(g))?;
        self.values = Some(Arc::new(filo_solve::solve_values(&root, self.max_states)?));
        Ok(())
    }

    fn value(&self, g: &Filo) -> Option<Value> {
        let v = self.values.as_ref()?.get(&filo_solve::key(g))?;
        let short = |d: u32| d.min(u32::from(crate::tables::MAX_DISTANCE)) as u16;
        Some(match *v {
            filo_solve::Value::Win(d) => Value::Win(short(d)),
            filo_solve::Value::Loss(d) => Value::Loss(short(d)),
            filo_solve::Value::Draw => Value::Draw,
        })
    }
}

/// Every exact value a bot has.
pub struct Exact {
    pub diffusion: Option<Tables<DiffusionTable>>,
    pub hackaback: Option<Tables<HackabackTable>>,
    pub tricala: Option<Tables<TricalaTable>>,
    pub filo: FiloSolution,
}

impl Exact {
    /// The tables in `dir` (if given; a layer not built there is simply
    /// not used) and F.I.L.O's solver.
    pub fn new(dir: Option<&Path>, filo_max_states: usize) -> Exact {
        Exact {
            diffusion: dir.map(Tables::open),
            hackaback: dir.map(Tables::open),
            tricala: dir.map(Tables::open),
            filo: FiloSolution::new(filo_max_states),
        }
    }

    /// The first damaged table file met, if any.
    pub fn error(&self) -> Option<String> {
        let d = self.diffusion.as_ref().and_then(Tables::error);
        d.or_else(|| self.hackaback.as_ref().and_then(Tables::error))
            .or_else(|| self.tricala.as_ref().and_then(Tables::error))
    }
}

impl<G: Rules> Oracle<G> for Exact {
    fn at_turn_start(&self, g: &G) -> Option<Value> {
        let any = g as &dyn Any;
        if let Some(f) = any.downcast_ref::<Filo>() {
            return self.filo.value(f);
        }
        if let Some(d) = any.downcast_ref::<Diffusion>() {
            return self.diffusion.as_ref()?.at_turn_start(d);
        }
        if let Some(h) = any.downcast_ref::<Hackaback>() {
            return self.hackaback.as_ref()?.at_turn_start(h);
        }
        if let Some(t) = any.downcast_ref::<Tricala>() {
            return self.tricala.as_ref()?.at_turn_start(t);
        }
        None
    }
}

/// What exact values say of a decision, for a search that does not ask
/// them itself (the Monte-Carlo tree search).
#[derive(Debug, PartialEq, Eq)]
pub enum Exactly<O> {
    /// Play this: the fastest win, or, when every option loses, the
    /// longest defence.
    Play(O),
    /// The best is a draw: any of these keeps it (the search may choose
    /// among them; another option loses).
    KeepDraw(Vec<O>),
    /// Some option's value is not known.
    Unknown,
}

/// [`Exactly`] of the decision at `g`, from `oracle`'s values of every
/// option.
pub fn exactly<G: Rules>(oracle: &dyn Oracle<G>, g: &G) -> Exactly<G::Opt> {
    let mut opts = Vec::new();
    g.options(&mut opts);
    let mut valued = Vec::with_capacity(opts.len());
    for o in opts {
        match option_value(oracle, g, o) {
            Some(v) => valued.push((o, v)),
            None => return Exactly::Unknown,
        }
    }
    let Some(&(best, v)) = valued.iter().max_by_key(|(_, v)| v.rank()) else {
        return Exactly::Unknown;
    };
    match v {
        Value::Draw => Exactly::KeepDraw(
            valued
                .iter()
                .filter(|(_, v)| *v == Value::Draw)
                .map(|&(o, _)| o)
                .collect(),
        ),
        _ => Exactly::Play(best),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::build::built_for_test;
    use crate::tables::tricala::uncapped;

    #[test]
    fn the_tables_choose_the_win_and_keep_the_draw() {
        let dir = built_for_test::<TricalaTable>(4);
        let exact = Exact::new(Some(dir.path()), 0);
        // 8 captured each; White's 4b sown east takes Black's 4c: the
        // ninth stone, a win now (no corner is next to 4b).
        let pits = [("4b", [1, 0, 0]), ("4c", [0, 1, 0])];
        let g = Tricala::from_position(&uncapped(), &pits, [8, 8, 0], 0).expect("a position");
        let take = g.parse("4b:E").expect("an option");
        assert_eq!(exactly(&exact, &g), Exactly::Play(take));
        // The rule text's tie (docs/rules/tricala.md): the capture keeps
        // the draw, moving 4b away from 4c loses.
        let g = crate::tables::tricala::rule_texts_tie();
        let Exactly::KeepDraw(draws) = exactly(&exact, &g) else {
            panic!("not a draw: {:?}", exactly(&exact, &g));
        };
        assert!(draws.contains(&g.parse("4b:E").expect("an option")));
        assert!(!draws.contains(&g.parse("4b:W").expect("an option")));
        // Without tables nothing is known.
        assert_eq!(exactly(&Exact::new(None, 0), &g), Exactly::Unknown);
    }
}
