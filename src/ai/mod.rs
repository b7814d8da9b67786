//! The reference bots' brains (issue 6): per-game heuristics, a greedy
//! chooser, Monte-Carlo tree search and the protocol loop they share, plus
//! the F.I.L.O solver. Uses the engine only through its public API; must not
//! touch the referee, the league or the results.

pub mod driver;
pub mod eval;
pub mod filo_solve;
pub mod greedy;
pub mod mcts;
