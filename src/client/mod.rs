//! The ladder's clients, run on other machines than the server: `arena
//! worker` ([`worker`]: claims games, plays them through the league's own
//! pipeline, uploads them) and `arena submit` ([`submit`]: an owner's
//! upload, followed to its verdict). What they share with the server sits
//! below both, in [`crate::wire`].

pub mod submit;
pub mod worker;
