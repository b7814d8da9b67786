//! `arena pgn FILE.csv... [-o out.pgn]`: the 2-player games of results CSVs
//! as PGN (Event = the league, White = seat 0, Black = seat 1, Result) for
//! Ordo and BayesElo. Formatting lives in `report::tables::PgnWriter`; the
//! games are read and written one at a time (no file is held in memory).

use crate::report::tables::{for_each_merged, Pgn, PgnWriter};
use anyhow::{bail, Context};
use std::io::Write;
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
    // The league's name, from the league.json beside the first file that
    // has one (a CSV alone: the program's name).
    let event = args
        .files
        .iter()
        .find_map(|f| {
            let dir = f.parent().filter(|d| !d.as_os_str().is_empty());
            crate::league::folder::read_meta(dir.unwrap_or(std::path::Path::new(".")))
        })
        .map_or_else(|| "mancala-arena".to_string(), |m| m.name);
    // Games go out as they are read; a file is written beside the output
    // and renamed over it only when every game is out.
    let (sink, part): (Box<dyn Write>, Option<PathBuf>) = match &args.out {
        Some(p) => {
            let mut name = p.as_os_str().to_owned();
            name.push(".part");
            let part = PathBuf::from(name);
            let f = std::fs::File::create(&part)
                .with_context(|| format!("writing {}", part.display()))?;
            (Box::new(f), Some(part))
        }
        None => (Box::new(std::io::stdout().lock()), None),
    };
    let result = export(&args, sink, &event);
    let pgn = match (result, &part) {
        (Ok(pgn), _) if pgn.games > 0 => pgn,
        (Ok(_), part) => {
            if let Some(part) = part {
                let _ = std::fs::remove_file(part);
            }
            bail!(
                "no 2-player games to export{}",
                args.variant
                    .as_deref()
                    .map(|v| format!(" for variant `{v}`"))
                    .unwrap_or_default()
            );
        }
        (Err(e), part) => {
            if let Some(part) = part {
                let _ = std::fs::remove_file(part);
            }
            return Err(e);
        }
    };
    if let (Some(part), Some(out)) = (&part, &args.out) {
        std::fs::rename(part, out).with_context(|| format!("writing {}", out.display()))?;
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

/// Streams the merged games of `args` through a `PgnWriter` into `sink`.
fn export(args: &PgnArgs, sink: Box<dyn Write>, event: &str) -> anyhow::Result<Pgn> {
    let mut w = PgnWriter::new(std::io::BufWriter::with_capacity(1 << 16, sink), event);
    let mut failed: Option<std::io::Error> = None;
    let merged = for_each_merged(&args.files, |r| {
        let keep = args
            .variant
            .as_deref()
            .is_none_or(|v| crate::ratings::matches_variant(r, v));
        if keep && failed.is_none() {
            if let Err(e) = w.add(r) {
                failed = Some(e);
            }
        }
    })?;
    for warning in &merged.warnings {
        eprintln!("warning: {warning}");
    }
    let target = || {
        args.out
            .as_ref()
            .map_or("standard output".to_string(), |p| p.display().to_string())
    };
    if let Some(e) = failed {
        return Err(anyhow::Error::new(e).context(format!("writing {}", target())));
    }
    let (mut out, pgn) = w.finish();
    out.flush()
        .with_context(|| format!("writing {}", target()))?;
    Ok(pgn)
}
