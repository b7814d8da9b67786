//! The league runner: tournament files, bot manifests, the schedule, the
//! results folder and the concurrent runner. Schedules games and writes
//! results; plays no game itself (that is the referee's job) and computes no
//! rating (that is `ratings`').

pub mod build;
pub mod check;
pub mod config;
pub mod events;
pub mod folder;
pub mod knockout;
pub mod launch;
pub mod pairings;
pub mod runner;
pub mod schedule;
pub mod status;
pub mod swiss;
pub mod swiss_games;
