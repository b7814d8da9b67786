//! mancala-arena: rules engine, bot runner, referee, league runner and ratings
//! for five mancala-family games.
//!
//! Dependencies point one way: `cli -> league -> referee -> (engine, bot)`;
//! `host` (machine facts: CPUs, descriptor limits, liveness), `text`
//! (which characters hide), `files` (writing a file into place) and
//! `bounded` (lists read from JSON with their length bounded) are below
//! all;
//! `cli -> report -> (ratings, results)`; `ratings` depends only on the
//! `results` rows, and `results` on nothing of ours.

pub mod ai;
pub mod analyse;
pub mod bot;
pub mod bounded;
pub mod cli;
pub mod client;
pub mod engine;
pub mod files;
pub mod host;
pub mod league;
pub mod protocol;
pub mod ratings;
pub mod referee;
pub mod report;
pub mod results;
pub mod serve;
pub mod tables;
pub mod text;
pub mod view;
pub mod wire;
