//! What the league shows its users, built from the results rows and the
//! ratings: the rating tables (`ratings.csv`, `pairs.csv`, `variants.csv`,
//! the standings text), the SPRT text and the PGN export; the HTML report will live here
//! too.
//!
//! Depends on `results` (the rows) and `ratings` (the statistics); nothing
//! below it depends on it.

pub mod sprt;
pub mod tables;
