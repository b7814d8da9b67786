//! `arena tables build VARIANT [--seeds N] [--max-size BYTES] [--out DIR]`:
//! builds (or resumes) a game's endgame tables (src/tables/,
//! docs/tables.md); `arena tables coverage RESULTS`: how much of a
//! league's games they would reach.

use crate::engine::{diffusion::Diffusion, hackaback::Hackaback, tricala::Tricala, Rules, Variant};
use crate::league::folder::Layout;
use crate::referee::record::read_record;
use crate::results::csvio;
use crate::results::records::RecordAt;
use crate::tables::build::{build, BuildOptions, LayerReport};
use crate::tables::coverage::{self, Reach};
use crate::tables::diffusion::DiffusionTable;
use crate::tables::hackaback::HackabackTable;
use crate::tables::tricala::TricalaTable;
use crate::tables::{positions_upto, seeds_for_size, TableGame};
use anyhow::{bail, Context};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct TablesArgs {
    #[command(subcommand)]
    command: TablesCommand,
}

/// The examples that end `arena tables build --help`, as the commands'
/// (src/cli/mod.rs) end theirs.
const EX_BUILD: &str = "Examples:\n  arena tables build diffusion                           # as many seeds as fit 1 GB, into tables/diffusion/\n  arena tables build hackaback --seeds 8 --threads 2     # up to 8 seeds in play, on 2 threads (a killed build resumes)\n  arena tables build tricala --max-size 200M --out big   # what fits 200 MB, into big/tricala/";
/// The examples that end `arena tables coverage --help`.
const EX_COVERAGE: &str = "Examples:\n  arena tables coverage results/demo              # how much of the demo's games tables that fit 1 GB would reach\n  arena tables coverage results/demo --seeds 10   # the same for tables of up to 10 seeds";

#[derive(clap::Subcommand, Debug)]
enum TablesCommand {
    /// Build a game's tables, or finish a build that was stopped.
    #[command(after_help = EX_BUILD)]
    Build(BuildArgs),
    /// How much of a league's games tables of up to N seeds would reach.
    #[command(after_help = EX_COVERAGE)]
    Coverage(CoverageArgs),
}

#[derive(clap::Args, Debug)]
// `--seeds -1` is a bad number, not a flag named -1.
#[command(allow_negative_numbers = true)]
pub struct CoverageArgs {
    /// A results folder (`arena run`'s output): its 2-player Diffusion,
    /// Hackaback and Tricala games are counted.
    results: PathBuf,
    /// Tables of up to this many seeds in play (default: as many as fit
    /// --max-size, for each game).
    #[arg(long, value_parser = seeds_arg)]
    seeds: Option<u32>,
    /// The most bytes the tables may take (suffixes K, M, G, decimal).
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    max_size: u64,
}

#[derive(clap::Args, Debug)]
// `--seeds -1` is a bad number, not a flag named -1.
#[command(allow_negative_numbers = true)]
pub struct BuildArgs {
    /// The game: diffusion, hackaback or tricala (2 players).
    variant: String,
    /// Every position with up to this many seeds in play (default: as
    /// many as fit --max-size).
    #[arg(long, value_parser = seeds_arg)]
    seeds: Option<u32>,
    /// The most bytes the tables may take (suffixes K, M, G, decimal).
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    max_size: u64,
    /// The tables folder (the game's files go into DIR/VARIANT/).
    #[arg(long, default_value = "tables")]
    out: PathBuf,
    /// Threads (default: the machine's CPUs).
    #[arg(long, value_parser = super::args::whole)]
    threads: Option<u64>,
}

/// `--seeds N`: a whole number (a negative one said as negative, not as
/// a flag named `-1`), at most what a u32 holds.
fn seeds_arg(s: &str) -> Result<u32, String> {
    let n = super::args::whole(s)?;
    u32::try_from(n).map_err(|_| format!("{n} is too large"))
}

/// `1G`, `500M`, `64K` (powers of 1000) or a plain number of bytes.
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1_000,
                'M' => 1_000_000,
                'G' => 1_000_000_000,
                _ => return Err(format!("`{s}`: the suffix must be K, M or G")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("`{s}` is not a size in bytes (e.g. 1G, 500M, 4096)"))
}

pub fn run(args: TablesArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        TablesCommand::Build(a) => run_build(a),
        TablesCommand::Coverage(a) => run_coverage(a),
    }
}

fn run_coverage(a: CoverageArgs) -> anyhow::Result<ExitCode> {
    coverage_flags(&a)?;
    // A league's games.csv stands for its folder, as in `arena show`.
    let results =
        super::args::results_folder(&a.results, "give a results folder, arena run's output")?;
    let a = CoverageArgs { results, ..a };
    let layout = Layout::new(&a.results);
    let csv = layout.games_csv();
    if !csv.is_file() {
        bail!(
            "{}: no games.csv: give a results folder (arena run's output)",
            a.results.display()
        );
    }
    let rows = rows_of(&csv)?;
    let seeds_of = |v: Variant| match v {
        Variant::Diffusion => with_a_table::<DiffusionTable>(a.seeds, a.max_size),
        Variant::Tricala => with_a_table::<TricalaTable>(a.seeds, a.max_size),
        _ => with_a_table::<HackabackTable>(a.seeds, a.max_size),
    };
    // Per game: its seeds N, and the reach of its tables.
    let mut reach: Vec<(Variant, u32, Reach)> = Vec::new();
    let mut missing = 0usize;
    // Records there but unreadable: how many, and the first with why.
    let mut damaged: (usize, Option<String>) = (0, None);
    for row in &rows {
        let Ok(variant) = row.variant.parse::<Variant>() else {
            continue;
        };
        if row.players != 2 || !crate::tables::tabled(variant) {
            continue;
        }
        let Some(at) = RecordAt::of(&layout.records(), row) else {
            missing += 1;
            continue;
        };
        let text = match at.read_text() {
            Ok(text) => text,
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                note_damaged(&mut damaged, row, &at, &e);
                continue;
            }
            Err(_) => {
                missing += 1;
                continue;
            }
        };
        let rec = match read_record(&text) {
            Ok(rec) => rec,
            Err(e) => {
                note_damaged(&mut damaged, row, &at, &e);
                continue;
            }
        };
        let moves: Vec<String> = rec.decisions.iter().map(|d| d.option.clone()).collect();
        let k = match reach.iter().position(|(v, _, _)| *v == variant) {
            Some(k) => k,
            None => {
                reach.push((variant, seeds_of(variant)?, Reach::default()));
                reach.len() - 1
            }
        };
        let (_, n, r) = &mut reach[k];
        let (n, settings) = (*n, &rec.spec.settings);
        let counted = count_game(variant, r, settings, &moves, n)?;
        // A record whose decisions do not replay is left out, as one
        // that does not read.
        if let Err(e) = counted {
            note_damaged(&mut damaged, row, &at, &e);
        }
    }
    if reach.is_empty() {
        let why = match &damaged {
            (n @ 1.., Some(first)) => {
                format!("; {n} records do not read (the first, {first})")
            }
            _ => String::new(),
        };
        bail!(
            "{}: no 2-player Diffusion, Hackaback or Tricala game with its record (the games with tables){why}",
            a.results.display()
        );
    }
    emitln!("the coverage";
        "{:<10} {:>5} {:>7} {:>14} {:>16} {:>20}",
        "game",
        "seeds",
        "games",
        "reached",
        "turns covered",
        "tables from (mean)"
    );
    for (v, n, r) in &reach {
        let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        emitln!("the coverage";
            "{:<10} {:>5} {:>7} {:>6} ({:>4.1}%) {:>7} ({:>4.1}%) {:>20}",
            v.name(),
            n,
            r.games,
            r.reached,
            pct(r.reached, r.games),
            r.covered,
            pct(r.covered, r.turns),
            r.mean_first_share().map_or("-".to_string(), |f| format!(
                "{:.0}% into the game",
                f * 100.0
            ))
        );
    }
    if let (n @ 1.., Some(first)) = damaged {
        emitln!("the coverage";"{n} games left out: their records do not read (the first, {first})");
    }
    if missing > 0 {
        emitln!("the coverage";"{missing} games left out: their records are missing");
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses `--seeds` or `--max-size` when no game's tables would hold
/// a position (`--seeds 0`: the coverage would be 0%), before any game is
/// read; a game whose own tables hold none is refused when it is met.
fn coverage_flags(a: &CoverageArgs) -> anyhow::Result<()> {
    let tables = [
        with_a_table::<DiffusionTable>(a.seeds, a.max_size),
        with_a_table::<HackabackTable>(a.seeds, a.max_size),
        with_a_table::<TricalaTable>(a.seeds, a.max_size),
    ];
    if tables.iter().all(Result::is_err) {
        let [first, ..] = tables;
        first?;
    }
    Ok(())
}

/// The rows of `csv`, and a warning for what was skipped (a torn last
/// line), as `arena sprt` and `arena pgn` say it: the games counted are
/// one fewer.
fn rows_of(csv: &std::path::Path) -> anyhow::Result<Vec<crate::results::GameRow>> {
    let file = csvio::read_file(csv)?;
    for w in &file.warnings {
        errln!("warning: {w}");
    }
    Ok(file.rows.into_iter().map(|(_, r)| r).collect())
}

fn run_build(a: BuildArgs) -> anyhow::Result<ExitCode> {
    // Written as the game's name is read: any case, spaces around.
    let name = a.variant.trim().to_ascii_lowercase();
    if matches!(name.as_str(), "tricala3" | "tricala-3p") {
        bail!(
            "3-player Tricala has no tables: a table's value is a win or a loss for one of two players; `tricala` builds the 2-player game's (docs/tables.md)"
        );
    }
    let variant: Variant = a.variant.parse()?;
    match variant {
        Variant::Diffusion => build_game::<DiffusionTable>(&a),
        Variant::Hackaback => build_game::<HackabackTable>(&a),
        Variant::Filo => bail!(
            "F.I.L.O needs no tables: its solver's proof search (filo-solve; `arena analyse` runs it, --proof-ms a decision) proves a movement-phase position's win or loss when asked (docs/tables.md)"
        ),
        Variant::Kisolo => bail!(
            "Kisolo has no endgame tables: captured seeds are sown back onto the board, so the seeds in play never fall (docs/tables.md)"
        ),
        Variant::Tricala => build_game::<TricalaTable>(&a),
    }
}

/// The most threads a build takes (each holds a stack; the system runs
/// out of them long before a round could use more).
const MAX_THREADS: usize = 1024;

/// The seeds of `T`'s tables: `seeds`, or as many as fit `max_size`
/// bytes; refused, naming the flag, when no table holds so few (`--seeds
/// 0`, or a `--max-size` too small): tables of no position reach nothing.
fn with_a_table<T: TableGame>(seeds: Option<u32>, max_size: u64) -> anyhow::Result<u32> {
    let n = seeds.unwrap_or_else(|| seeds_for_size::<T>(max_size));
    // Compared with the smallest table, not counted: `--seeds 4000000000`
    // would count layers by the billion.
    let (least, bytes) = smallest::<T>();
    if n >= least {
        return Ok(n);
    }
    let asked = match seeds {
        Some(n) => format!(
            "--seeds {n}: no {} table holds {n} seed{} or fewer",
            T::VARIANT,
            if n == 1 { "" } else { "s" }
        ),
        None => format!(
            "--max-size {max_size}: no {} table fits in {max_size} bytes",
            T::VARIANT
        ),
    };
    bail!("{asked}; the smallest holds {least} seeds and takes {bytes} bytes of values, and a {}-byte header a layer's file (--seeds {least})", crate::tables::format::HEADER)
}

/// The fewest seeds any of `T`'s tables hold, and their bytes.
fn smallest<T: TableGame>() -> (u32, u64) {
    let least = (1..=200)
        .find(|&n| positions_upto::<T>(n) > 0)
        .unwrap_or(200);
    (least, positions_upto::<T>(least) * 2)
}

fn build_game<T: TableGame>(a: &BuildArgs) -> anyhow::Result<ExitCode> {
    if let Some(n) = a.seeds {
        let bytes = positions_upto::<T>(n) * 2;
        if bytes > a.max_size {
            bail!(
                "--seeds {n}: the {} tables would take {bytes} bytes, more than --max-size {} (the most that fit: --seeds {})",
                T::VARIANT,
                a.max_size,
                seeds_for_size::<T>(a.max_size)
            );
        }
    }
    let seeds = with_a_table::<T>(a.seeds, a.max_size)?;
    // The folder first, named as the flag's: a file in its place (or
    // above it) read as a table file's problem.
    let game_dir = a.out.join(T::VARIANT.name());
    if let Some(file) = game_dir.ancestors().find(|p| p.exists() && !p.is_dir()) {
        bail!(
            "--out {}: {} is a file, not a folder (the tables go into a folder of each game's under it)",
            a.out.display(),
            file.display()
        );
    }
    let total = positions_upto::<T>(seeds);
    let threads = a.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| usize::try_from(t).unwrap_or(usize::MAX),
    );
    if threads == 0 {
        bail!("--threads 0: at least one thread is needed");
    }
    if threads > MAX_THREADS {
        bail!("--threads {threads}: at most {MAX_THREADS}");
    }
    outln!(
        "{}: every position with up to {seeds} seeds in play, {total} positions ({} bytes), {threads} threads, into {}",
        T::VARIANT,
        total * 2,
        a.out.join(T::VARIANT.name()).display()
    );
    let t0 = Instant::now();
    let opts = BuildOptions {
        seeds,
        dir: a.out.clone(),
        threads,
    };
    let reports = build::<T>(&opts, &mut |r: &LayerReport| {
        outln!(
            "{:<8} {:>2} seeds {:>12} positions: {:>11} won {:>11} lost {:>11} drawn {:>11} already over, longest {:>4} plies, {:>3} rounds, {:>8.1} s{}",
            r.name,
            r.seeds,
            r.positions,
            r.wins,
            r.losses,
            r.draws,
            r.not_positions,
            r.longest,
            r.rounds,
            r.elapsed.as_secs_f64(),
            if r.resumed { " (built before)" } else { "" }
        );
    })
    .with_context(|| format!("building the {} tables", T::VARIANT))?;
    let built = reports.iter().filter(|r| !r.resumed).count();
    outln!(
        "done: {} layers ({built} built now, {} read back) in {:.1} s",
        reports.len(),
        reports.len() - built,
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Counts the game of `moves` (of `variant`, under `settings`) into the
/// reach `r` of tables of up to `n` seeds; the inner error: a decision
/// that does not replay.
fn count_game(
    variant: Variant,
    r: &mut Reach,
    settings: &crate::engine::Settings,
    moves: &[String],
    n: u32,
) -> anyhow::Result<Result<(), String>> {
    Ok(match variant {
        Variant::Diffusion => {
            coverage::add::<DiffusionTable>(r, Diffusion::new(settings)?, moves, n)
        }
        Variant::Tricala => coverage::add::<TricalaTable>(r, Tricala::new(settings)?, moves, n),
        _ => coverage::add::<HackabackTable>(r, Hackaback::new(settings)?, moves, n),
    })
}

/// Counts a record there but unusable (it does not decompress or read,
/// or its decisions do not replay) and keeps the first, named by its game
/// and the file it is in (`at`).
fn note_damaged(
    damaged: &mut (usize, Option<String>),
    row: &crate::results::GameRow,
    at: &RecordAt,
    e: &dyn std::fmt::Display,
) {
    damaged.0 += 1;
    damaged.1.get_or_insert_with(|| {
        let file = at.path().file_name().unwrap_or_default().to_string_lossy();
        format!("{} in games/{file}: {e}", row.game_id)
    });
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_and_bad_ones_are_named() {
        assert_eq!(parse_size("1G"), Ok(1_000_000_000));
        assert_eq!(parse_size("500m"), Ok(500_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("1T").unwrap_err().contains("suffix"));
        assert!(parse_size("-1").unwrap_err().contains("`-1`"));
    }
}
