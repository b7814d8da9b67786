//! `arena pgn FILE.csv... [-o out.pgn]`: the 2-player games of results CSVs
//! as PGN (Event = the league, White = seat 0, Black = seat 1, Result) for
//! Ordo and BayesElo. Formatting lives in `report::tables::to_pgn`.

use crate::report::tables::{read_merged, to_pgn};
use anyhow::{bail, Context};
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
    /// Only this variant (as `arena rate --variant`), to compare one
    /// variant's table with Ordo or BayesElo.
    #[arg(long)]
    variant: Option<String>,
}

pub fn run(args: PgnArgs) -> anyhow::Result<ExitCode> {
    let merged = read_merged(&args.files)?;
    for w in &merged.warnings {
        eprintln!("warning: {w}");
    }
    let rows: Vec<_> = match &args.variant {
        Some(v) => merged
            .rows
            .into_iter()
            .filter(|r| crate::ratings::matches_variant(r, v))
            .collect(),
        None => merged.rows,
    };
    // The league's name, from the league.json beside the first file that
    // has one (a CSV alone: the program's name).
    let event = args
        .files
        .iter()
        .find_map(|f| {
            let dir = f.parent().filter(|d| !d.as_os_str().is_empty());
            crate::league::results_dir::read_meta(dir.unwrap_or(std::path::Path::new(".")))
        })
        .map_or_else(|| "mancala-arena".to_string(), |m| m.name);
    let pgn = to_pgn(&rows, &event);
    if pgn.games == 0 {
        bail!(
            "no 2-player games to export{}",
            args.variant
                .as_deref()
                .map(|v| format!(" for variant `{v}`"))
                .unwrap_or_default()
        );
    }
    match &args.out {
        Some(p) => {
            std::fs::write(p, &pgn.text).with_context(|| format!("writing {}", p.display()))?
        }
        None => print!("{}", pgn.text),
    }
    if pgn.skipped > 0 {
        eprintln!(
            "left out {} 3-player games (PGN holds 2-player games only)",
            pgn.skipped
        );
    }
    for (name, written) in &pgn.renamed {
        eprintln!("bot `{name}` is written as `{written}` (no quotes, backslashes or control characters in PGN tags)");
    }
    Ok(ExitCode::SUCCESS)
}
