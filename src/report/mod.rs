//! What the league shows its users, built from the results rows and the
//! ratings: the rating tables (`ratings.csv`, `pairs.csv`, `variants.csv`,
//! the standings text), the SPRT text, the PGN export, and the HTML
//! report (`html`).
//!
//! Depends on `results` (the rows) and `ratings` (the statistics); the
//! HTML report also on the engine (it replays each record) and the
//! record reader; nothing below it depends on it.

pub mod html;
pub mod sprt;
pub mod tables;
