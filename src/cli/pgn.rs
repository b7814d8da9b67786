//! `arena pgn FILE.csv... [-o out.pgn]`: the 2-player games of results CSVs
//! as PGN (Event, White = seat 0, Black = seat 1, Result) for Ordo and
//! BayesElo. Formatting lives in `results::tables::to_pgn`.

use crate::results::tables::{read_merged, to_pgn};
use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct PgnArgs {
    /// Results CSVs (merged as by `arena rate`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Write here instead of standard output.
    #[arg(short, long)]
    out: Option<PathBuf>,
}

pub fn run(args: PgnArgs) -> anyhow::Result<ExitCode> {
    let merged = read_merged(&args.files)?;
    for w in &merged.warnings {
        eprintln!("warning: {w}");
    }
    let (pgn, skipped) = to_pgn(&merged.rows);
    match &args.out {
        Some(p) => std::fs::write(p, pgn).with_context(|| format!("writing {}", p.display()))?,
        None => print!("{pgn}"),
    }
    if skipped > 0 {
        eprintln!("left out {skipped} 3-player games (PGN holds 2-player games only)");
    }
    Ok(ExitCode::SUCCESS)
}
