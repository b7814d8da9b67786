//! The ladder's clients, run on other machines than the server: `arena
//! worker` ([`worker`]: claims games, plays them through the league's own
//! pipeline, uploads them). What they share with the server sits below
//! both, in [`crate::wire`].

pub mod worker;
