//! The schedule: which games the ladder plays next. The pairing rule
//! ([`pairing`], pure: entrants in, picks out) and the queue that keeps its
//! picks in the store for the server and the workers to claim ([`queue`]).

pub mod pairing;
pub mod queue;
