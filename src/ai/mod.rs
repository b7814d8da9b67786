//! The reference bots' brains (issue 6): per-game heuristics, a greedy
//! chooser, Monte-Carlo tree search, an alpha-beta search (issue 51) and
//! the protocol loop they share, plus the F.I.L.O solver. Uses the engine
//! only through its public API and the endgame tables through
//! `crate::tables::probe`; must not touch the referee, the league or the
//! results.

pub mod alphabeta;
pub mod driver;
pub mod eval;
pub mod exact;
pub mod filo_solve;
pub mod greedy;
pub mod mcts;
