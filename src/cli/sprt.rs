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
    let (pair, tracker, order) = counted;
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
    if let Some(note) = order.note() {
        eprintln!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// One pass over the rows of `files`.
struct Read {
    games: u64,
    /// The bots of the 2-player games.
    bots: std::collections::BTreeSet<String>,
    /// The head-to-head counts of the pair asked for, and where its LLR
    /// first left its bounds, the games read in their order.
    counted: Option<(HeadToHeadBuilder, SprtTracker, PlayOrder)>,
    warnings: Vec<crate::results::csvio::CsvWarning>,
}

fn read(files: &[PathBuf], pair: Option<(&str, &str)>, config: SprtConfig) -> anyhow::Result<Read> {
    let mut counted = pair.and_then(|(a, b)| {
        let h = HeadToHeadBuilder::new(a, b).ok()?;
        Some((h, SprtTracker::new(config, a, b), PlayOrder::new(a, b)))
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
        if let Some((h, tracker, order)) = &mut counted {
            h.add(r);
            tracker.add(r);
            order.see(r);
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

/// How far a row's start may go back before the starts of the rows above
/// it, besides its own length (`duration_ms`), in a file written as the
/// games finish: a game's seats are taken (its bots started, up to the
/// startup time) between its `started_at` and its first move, and clocks
/// are set by a few seconds.
const START_SLACK: std::time::Duration = std::time::Duration::from_secs(300);

/// Whether the games of A against B are read in the order they were
/// played: the SPRT is sequential, and where its LLR first leaves its
/// bounds depends on the order of the rows. A league writes each game as
/// it finishes, several at a time: a game may start before the one above
/// it, but never by more than its own length (it finished after it) and
/// the time to start its bots; a row that does is out of order (a file
/// sorted or edited, shards read one after another).
struct PlayOrder {
    a: String,
    b: String,
    /// The latest start of the rows read, and its game.
    latest: Option<(std::time::SystemTime, String)>,
    /// Rows that started too long before a row above them, and the first
    /// (its game, and the game above).
    backwards: u64,
    first: Option<(String, String)>,
}

impl PlayOrder {
    fn new(a: &str, b: &str) -> PlayOrder {
        PlayOrder {
            a: a.to_string(),
            b: b.to_string(),
            latest: None,
            backwards: 0,
            first: None,
        }
    }

    fn see(&mut self, r: &crate::results::GameRow) {
        let (a, b) = (self.a.as_str(), self.b.as_str());
        let ours =
            r.players == 2 && ((r.seat0 == a && r.seat1 == b) || (r.seat0 == b && r.seat1 == a));
        // Rows without a start (older versions) say nothing of order.
        let Some(t) = ours
            .then(|| crate::results::csvio::utc_time(&r.started_at).ok())
            .flatten()
        else {
            return;
        };
        let length = std::time::Duration::from_millis(r.duration_ms);
        if let Some((latest, game)) = &self.latest {
            if t + length + START_SLACK < *latest {
                self.backwards += 1;
                if self.first.is_none() {
                    self.first = Some((r.game_id.clone(), game.clone()));
                }
            }
        }
        if self.latest.as_ref().is_none_or(|(l, _)| t > *l) {
            self.latest = Some((t, r.game_id.clone()));
        }
    }

    /// The note for stderr when the rows are out of the order of play.
    fn note(&self) -> Option<String> {
        let (game, above) = self.first.as_ref()?;
        let (a, b) = (&self.a, &self.b);
        Some(format!(
            "note: the test reads the rows in file order, and the games of `{a}` and `{b}` here are not in the order they were played: game `{game}` started more than its length and 5 minutes before game `{above}` above it ({} rows so); where the LLR first left its bounds is of this order (the counts and the LLR of all the games are not). A league's own games.csv lists its games as they finished",
            self.backwards
        ))
    }
}
