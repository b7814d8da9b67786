//! `arena sprt GAMES_CSV... --elo0 E0 --elo1 E1 [--alpha A] [--beta B]
//! [--model normalized|logistic] [--bots A,B]`: the SPRT of one bot
//! against another on any results file, offline. Parsing and printing
//! only; the test is `ratings::sprt`, the text `report::sprt::sprt_text`.

use crate::ratings::sprt::{
    pick_pair_among, report_of, shown, HeadToHeadBuilder, Model, SprtConfig, SprtError,
    SprtTracker, MAX_ELO,
};
use crate::report::sprt::sprt_text;
use crate::report::tables::for_each_merged;
use anyhow::{anyhow, bail};
use std::path::PathBuf;
use std::process::ExitCode;

/// `--model`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelArg {
    /// elo0 and elo1 in normalized Elo (nElo), as fastchess and fishtest.
    #[default]
    Normalized,
    /// elo0 and elo1 in logistic Elo.
    Logistic,
}

impl From<ModelArg> for Model {
    fn from(m: ModelArg) -> Model {
        match m {
            ModelArg::Normalized => Model::Normalized,
            ModelArg::Logistic => Model::Logistic,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct SprtArgs {
    /// A league's games.csv, or its results folder (its games.csv is read);
    /// for a sharded league, the games.csv (or folder) of each shard, or
    /// the league's folder (each shard's games.csv is read), as `arena
    /// rate` takes them.
    #[arg(required = true)]
    results: Vec<PathBuf>,
    /// Elo difference A - B under H0 (e.g. 0).
    #[arg(long, allow_hyphen_values = true, value_parser = super::args::finite)]
    elo0: f64,
    /// Elo difference A - B under H1 (e.g. 5); more than elo0.
    #[arg(long, allow_hyphen_values = true, value_parser = super::args::finite)]
    elo1: f64,
    /// Probability of accepting H1 when H0 holds, in (0, 0.5).
    #[arg(long, allow_hyphen_values = true, value_parser = super::args::finite, default_value_t = crate::ratings::sprt::DEFAULT_ERROR_RATE)]
    alpha: f64,
    /// Probability of accepting H0 when H1 holds, in (0, 0.5).
    #[arg(long, allow_hyphen_values = true, value_parser = super::args::finite, default_value_t = crate::ratings::sprt::DEFAULT_ERROR_RATE)]
    beta: f64,
    /// What elo0 and elo1 measure.
    #[arg(long, value_enum, default_value_t = ModelArg::Normalized)]
    model: ModelArg,
    /// The bot under test and its opponent, `A,B` (H1: A is elo1 stronger).
    /// Needed when the file has more than two bots; with two, A is the
    /// league's first bot (a match's A, as `arena match A B` gave it), or
    /// the first by name for a file outside a results folder.
    #[arg(long, value_name = "A,B")]
    bots: Option<String>,
    /// Test on the shards given even when some of their league's shards
    /// are not among the files (they are named on stderr), as `arena rate
    /// --partial`.
    #[arg(long)]
    partial: bool,
}

/// A bad test told by the flags that gave it (`--elo0 5 must be less than
/// --elo1 0`), not by a league file's `[sprt]` keys.
fn flag_error(e: SprtError) -> anyhow::Error {
    match e {
        SprtError::EloOrder { elo0, elo1 } => {
            anyhow!(
                "--elo0 {} must be less than --elo1 {}: H0 is the smaller difference",
                shown(elo0),
                shown(elo1)
            )
        }
        SprtError::EloRange { key, value } => {
            anyhow!(
                "--{key} {}: must be within [-{MAX_ELO}, {MAX_ELO}]",
                shown(value)
            )
        }
        SprtError::ErrorRate { key, value } => {
            anyhow!(
                "--{key} {}: must be between 0 and 0.5 (both excluded)",
                shown(value)
            )
        }
        SprtError::BadNumber { key, value } => anyhow!("--{key} {value}: not a finite number"),
        e => e.into(),
    }
}

/// `--bots A,B`, each way to cut it at a comma: a bot's name may hold
/// one, and the names in the games say which cut is meant.
fn cuts_of(s: &str) -> anyhow::Result<Vec<(&str, &str)>> {
    let cuts: Vec<(&str, &str)> = s
        .match_indices(',')
        .map(|(i, _)| (s[..i].trim(), s[i + 1..].trim()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .collect();
    if cuts.is_empty() {
        bail!("--bots wants two bot names as A,B, got `{s}`");
    }
    Ok(cuts)
}

pub fn run(args: SprtArgs) -> anyhow::Result<ExitCode> {
    let config = SprtConfig::new(
        args.elo0,
        args.elo1,
        args.alpha,
        args.beta,
        args.model.into(),
    )
    .map_err(flag_error)?;
    let doing = super::args::Doing {
        verb: "test",
        ing: "testing",
    };
    let files = super::args::results_inputs(&args.results, args.partial, doing)?;
    let named = super::rate::files_text(&files);
    let cuts = match args.bots.as_deref() {
        Some(s) => cuts_of(s)?,
        None => Vec::new(),
    };
    // A two-bot league's own order: what its match tested.
    let own = super::args::meta_beside(&files[0])
        .filter(|m| m.bots.len() == 2)
        .map(|m| m.bots);
    let wanted = match cuts.as_slice() {
        [] => own.as_ref().map(|b| (b[0].as_str(), b[1].as_str())),
        [one] => Some(*one),
        // Which cut, once the names are read.
        _ => None,
    };
    // The rows are read as they stream, none held (a million games in
    // some tens of MB): once when the two bots are known, else a second
    // time once they are.
    let first = read(&files, wanted, config)?;
    for w in &first.warnings {
        eprintln!("warning: {w}");
    }
    if first.games == 0 {
        bail!("no games in {named}");
    }
    let wanted = wanted.or_else(|| {
        let known = |(a, b): &(&str, &str)| first.bots.contains(*a) && first.bots.contains(*b);
        cuts.iter().find(|c| known(c)).or(cuts.first()).copied()
    });
    let bots = first.bots.iter().map(String::as_str).collect();
    let (a, b) = pick_pair_among(bots, wanted).map_err(|e| named_pair_error(e, &named))?;
    let counted = match first.counted {
        Some(c) => c,
        None => match read(&files, Some((&a, &b)), config)?.counted {
            Some(c) => c,
            None => bail!("{named}: the games of `{a}` and `{b}` were not counted"),
        },
    };
    let (pair, tracker) = counted;
    let h2h = pair.finish();
    if h2h.total.games == 0 {
        // Nothing to test: "no decision yet" would wait for games that
        // this file will never hold.
        bail!(
            "{named}: `{a}` and `{b}` never met in a 2-player game ({} games between others): nothing to test",
            h2h.other_rows
        );
    }
    let report = report_of(h2h, &config);
    super::output::emit(
        &sprt_text(&report, tracker.decided().as_ref()),
        "the test's report",
    )?;
    Ok(ExitCode::SUCCESS)
}

/// One pass over the rows of `files`.
struct Read {
    games: u64,
    /// The bots of the 2-player games.
    bots: std::collections::BTreeSet<String>,
    /// The head-to-head counts of the pair asked for, and where its LLR
    /// first left its bounds, the games read in their order.
    counted: Option<(HeadToHeadBuilder, SprtTracker)>,
    warnings: Vec<crate::results::csvio::CsvWarning>,
}

fn read(files: &[PathBuf], pair: Option<(&str, &str)>, config: SprtConfig) -> anyhow::Result<Read> {
    let mut counted = pair.and_then(|(a, b)| {
        let h = HeadToHeadBuilder::new(a, b).ok()?;
        Some((h, SprtTracker::new(config, a, b)))
    });
    let (mut games, mut bots) = (0u64, std::collections::BTreeSet::new());
    let info = for_each_merged(files, |r| {
        games += 1;
        if r.players == 2 {
            for name in [&r.seat0, &r.seat1] {
                if !bots.contains(name.as_str()) {
                    bots.insert(name.clone());
                }
            }
        }
        if let Some((h, tracker)) = &mut counted {
            h.add(r);
            tracker.add(r);
        }
    })
    .map_err(super::args::merged_error)?;
    Ok(Read {
        games,
        bots,
        counted,
        warnings: info.warnings,
    })
}

/// A pair that cannot be tested, said with the files and what to do.
fn named_pair_error(e: SprtError, file: &str) -> anyhow::Error {
    match e {
        SprtError::NeedPair { bots } => anyhow!(
            "{file}: {} bots have 2-player games here ({}): name the two to test with --bots A,B",
            bots.len(),
            bots.join(", ")
        ),
        SprtError::UnknownBot { bot, bots } => {
            // A misspelt name: the one it most likely meant.
            let mean = crate::text::closest(&bot, bots.iter().map(String::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            let e = SprtError::UnknownBot { bot, bots };
            anyhow!("{file}: {e}{mean}")
        }
        e => anyhow!("{file}: {e}"),
    }
}
