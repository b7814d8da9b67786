//! The schedule: which games the ladder plays next. The pairing rule
//! ([`pairing`], pure: entrants in, picks out) and the queue that keeps its
//! picks in the store for the server and the workers to claim ([`queue`]);
//! the pairs of the tests between versions, queued beside them
//! ([`version_test`]); the rounds of the events, a league Swiss each,
//! queued whole once the round before is committed ([`event`]).

pub mod event;
pub mod pairing;
pub mod queue;
pub mod version_test;
