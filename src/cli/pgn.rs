//! `arena pgn FILE.csv... [-o out.pgn]`: the 2-player games of results CSVs
//! as PGN (Event = the league, White = seat 0, Black = seat 1, Result) for
//! Ordo and BayesElo. Formatting lives in `report::tables::PgnWriter`; the
//! games are read and written one at a time (no file is held in memory).

use crate::files::NewFile;
use crate::report::tables::{for_each_merged, Pgn, PgnWriter};
use anyhow::{bail, Context};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct PgnArgs {
    /// Results CSVs, or league results folders (their games.csv), merged
    /// as by `arena rate`.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Write here instead of standard output.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Only this variant (as `arena rate --variant`), to compare one
    /// variant's table with Ordo or BayesElo.
    #[arg(long)]
    variant: Option<String>,
    /// Export the shards given even when some of their league's shards
    /// are not among the files (they are named on stderr), as `arena rate
    /// --partial`.
    #[arg(long)]
    partial: bool,
}

pub fn run(mut args: PgnArgs) -> anyhow::Result<ExitCode> {
    if let Some(p) = &args.out {
        super::args::not_a_results_file("-o", p)?;
    }
    // A league's results folder stands for its games.csv, a sharded
    // league's for its shards', and every shard must be there, as in
    // `arena rate`.
    let doing = super::args::Doing {
        verb: "export",
        ing: "exporting",
    };
    args.files = super::args::results_inputs(&args.files, args.partial, doing)?;
    if let Some(p) = &args.out {
        not_read(p, &args.files)?;
    }
    // The league's name, from the league.json beside the first file that
    // has one (a CSV alone: the program's name).
    let event = args
        .files
        .iter()
        .find_map(|f| super::args::meta_beside(f))
        .map_or_else(|| "mancala-arena".to_string(), |m| m.name);
    // Games go out as they are read; a file is written beside the output
    // and put in its place only when every game is out (a failure drops
    // it, and the file there before stays).
    let target = args.out.as_deref().map(Target::of).transpose()?;
    let mut sink = match &target {
        // Named by the file asked for (`-o`), not the one written first.
        Some(t) => {
            Sink::open(t).with_context(|| format!("-o {}: cannot write it", t.file.display()))?
        }
        None => Sink::Stdout(std::io::stdout().lock()),
    };
    let variant = args.variant.as_deref().map(super::rate::variant_filter);
    let result = export(&args, variant.as_deref(), &mut sink, &event);
    let pgn = match result {
        Ok(e) if e.pgn.games > 0 => e.pgn,
        Ok(e) => {
            drop(sink);
            // No game of that variant at all: said as `arena rate` says it.
            if let (Some(v), 0) = (&variant, e.matched) {
                return Err(no_games_of_variant(v, &args.files, &e));
            }
            bail!(
                "no 2-player games to export{} in {}{}",
                args.variant
                    .as_deref()
                    .map(|v| format!(" for variant `{v}`"))
                    .unwrap_or_default(),
                args.files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                match e.pgn.skipped {
                    0 => String::new(),
                    n => format!(
                        " ({n} 3-player games read: PGN holds 2-player games only; `arena rate` rates them)"
                    ),
                }
            );
        }
        Err(e) => return Err(e),
    };
    if let (Sink::New(f), Some(t)) = (sink, &target) {
        f.commit()
            .with_context(|| format!("writing {}", t.file.display()))?;
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

/// Refuses `-o out` when it is one of the files read (whatever its name
/// or first line: a games.csv with a byte-order mark, its columns in
/// another order): the PGN would replace the games.
fn not_read(out: &std::path::Path, files: &[PathBuf]) -> anyhow::Result<()> {
    let what: Vec<String> = files
        .iter()
        .map(|f| format!("{}, one of the files read", f.display()))
        .collect();
    let inputs: Vec<(&str, &std::path::Path)> = what
        .iter()
        .zip(files)
        .map(|(w, f)| (w.as_str(), f.as_path()))
        .collect();
    super::args::not_an_input(("-o", out), &inputs, &[])
}

/// Where `-o PATH` writes. A regular file (or none yet) is written as a
/// [`NewFile`] beside it and put in its place at the end, so that a failed
/// export leaves the old file whole; through a link, the file it points to
/// is the one replaced (the link stays). Anything else that is there (a
/// device such as /dev/stdout, a named pipe) is written in place, as a
/// shell's `>` would: a rename would replace the device itself. A folder
/// is refused.
struct Target {
    /// The file the PGN ends in.
    file: PathBuf,
    /// Whether it is written beside and put in its place (else in place).
    replace: bool,
}

impl Target {
    fn of(path: &std::path::Path) -> anyhow::Result<Target> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(anyhow::Error::new(e).context(format!("-o {}", path.display()))),
        };
        let file = match &meta {
            Some(m) if m.is_dir() => bail!(
                "-o {}: that is a folder; -o names the PGN file to write (e.g. -o {})",
                path.display(),
                path.join("games.pgn").display()
            ),
            Some(m) if !m.is_file() => {
                return Ok(Target {
                    file: path.to_path_buf(),
                    replace: false,
                })
            }
            Some(_) => {
                std::fs::canonicalize(path).with_context(|| format!("-o {}", path.display()))?
            }
            None => path.to_path_buf(),
        };
        Ok(Target {
            file,
            replace: true,
        })
    }
}

/// Where the games go: standard output, a file written in place, or a
/// [`NewFile`] committed once every game is out.
enum Sink {
    Stdout(std::io::StdoutLock<'static>),
    InPlace(std::fs::File),
    New(NewFile),
}

impl Sink {
    fn open(t: &Target) -> std::io::Result<Sink> {
        Ok(if t.replace {
            Sink::New(NewFile::create(&t.file)?)
        } else {
            Sink::InPlace(std::fs::File::create(&t.file)?)
        })
    }

    fn out(&mut self) -> &mut dyn Write {
        match self {
            Sink::Stdout(s) => s,
            Sink::InPlace(f) => f,
            Sink::New(f) => f,
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out().flush()
    }
}

/// What [`export`] wrote, and what it saw.
struct Exported {
    pgn: Pgn,
    /// The games of the variant asked for (all, without one), 3-player
    /// games included.
    matched: u64,
    /// The variants of the 2-player games, by name (`tricala`): what
    /// `--variant` exports.
    two: std::collections::BTreeSet<String>,
    /// The labels of the 3-player games (`tricala-3p`), which PGN does
    /// not hold.
    three: std::collections::BTreeSet<String>,
}

/// Why `--variant v` kept no game of `files`: as `arena rate` says it,
/// the variants of 2-player games (what an export holds) apart from the
/// labels of 3-player games, when there are some.
fn no_games_of_variant(v: &str, files: &[PathBuf], e: &Exported) -> anyhow::Error {
    let list = |set: &std::collections::BTreeSet<String>| match set.is_empty() {
        true => "none".to_string(),
        false => set.iter().cloned().collect::<Vec<_>>().join(", "),
    };
    if e.three.is_empty() {
        let two: Vec<String> = e.two.iter().cloned().collect();
        return super::rate::no_games_of_variant(v, files, &two);
    }
    anyhow::anyhow!(
        "no games of variant `{v}` in {}; the variants of its 2-player games there are: {}; of its 3-player games, which PGN does not hold (`arena rate` rates them): {}",
        super::rate::files_text(files),
        list(&e.two),
        list(&e.three)
    )
}

/// Streams the merged games of `args` (of `variant` only, if given)
/// through a `PgnWriter` into `sink`.
fn export(
    args: &PgnArgs,
    variant: Option<&str>,
    sink: &mut Sink,
    event: &str,
) -> anyhow::Result<Exported> {
    let mut w = PgnWriter::new(std::io::BufWriter::with_capacity(1 << 16, sink), event);
    let mut failed: Option<std::io::Error> = None;
    let mut matched = 0;
    let mut two = std::collections::BTreeSet::new();
    let mut three = std::collections::BTreeSet::new();
    let mut names = PgnNames::default();
    let merged = for_each_merged(&args.files, |r| {
        match r.players {
            2 if !two.contains(&r.variant) => {
                two.insert(r.variant.clone());
            }
            2 => {}
            _ => {
                three.insert(crate::ratings::variant_label(r));
            }
        }
        let keep = variant.is_none_or(|v| crate::ratings::matches_variant(r, v));
        matched += u64::from(keep);
        if keep && r.players == 2 {
            names.see(&r.seat0);
            names.see(&r.seat1);
        }
        if keep && failed.is_none() && names.clash.is_none() {
            if let Err(e) = w.add(r) {
                failed = Some(e);
            }
        }
    })
    .map_err(super::args::merged_error)?;
    names.check("rename one of them in the games file")?;
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
    Ok(Exported {
        pgn,
        matched,
        two,
        three,
    })
}

/// The bot names of an export as PGN writes them (`pgn_value`), to catch
/// two bots that it would write alike (`a"b` and `a'b`): a PGN reader
/// would merge them into one player.
#[derive(Default)]
struct PgnNames {
    /// Each name as written, and the first bot written so.
    written: std::collections::HashMap<String, String>,
    /// The first two bots written alike, and how.
    clash: Option<(String, String, String)>,
}

impl PgnNames {
    /// The first two bots written alike, as an error that says how to
    /// mend it (`fix`).
    fn check(&self, fix: &str) -> anyhow::Result<()> {
        if let Some((a, b, written)) = &self.clash {
            bail!(
                "bots `{a}` and `{b}` would both be written as `{written}` in PGN (no quotes, backslashes or control characters in PGN tags): Ordo and BayesElo would rate them as one player; {fix}"
            );
        }
        Ok(())
    }

    fn see(&mut self, name: &str) {
        let v = crate::report::tables::pgn_value(name);
        match self.written.get(&v) {
            Some(first) if first != name => {
                if self.clash.is_none() {
                    self.clash = Some((first.clone(), name.to_string(), v));
                }
            }
            Some(_) => {}
            None => {
                self.written.insert(v, name.to_string());
            }
        }
    }
}

/// PGN written as a league plays (`arena run|match --pgn FILE`): when the
/// league starts, the games its results folder already holds (so a resumed
/// match's file has them all), then each game as it finishes, flushed at
/// once, so that Ordo or BayesElo can read the file at any time. A write
/// that fails stops the PGN, not the league (games.csv keeps every game,
/// and `arena pgn` writes the file again from it).
pub(super) struct PgnLive {
    path: PathBuf,
    event: String,
    out: Option<PgnWriter<std::io::BufWriter<std::fs::File>>>,
    /// The results folder, once the league has started.
    dir: Option<PathBuf>,
}

impl PgnLive {
    /// Creates (or empties) `path` before any game, so that a path that
    /// cannot be written stops the run before it starts.
    pub fn create(path: &std::path::Path, event: &str) -> anyhow::Result<PgnLive> {
        let f = std::fs::File::create(path)
            .with_context(|| format!("--pgn: cannot write {}", path.display()))?;
        Ok(PgnLive {
            path: path.to_path_buf(),
            event: event.to_string(),
            out: Some(PgnWriter::new(std::io::BufWriter::new(f), event)),
            dir: None,
        })
    }

    pub fn on_event(&mut self, e: &crate::league::runner::Event) {
        use crate::league::runner::Event;
        match e {
            Event::Started { dir, .. } => {
                self.dir = Some(dir.clone());
                let csv = crate::league::folder::Layout::new(dir).games_csv();
                if let Err(e) = self.earlier_games(&csv) {
                    self.fail(&super::output::error_message(&e));
                }
            }
            Event::Finished { row, .. } => {
                let written = match self.out.as_mut() {
                    Some(w) => w.add(row).and_then(|()| w.flush()),
                    None => return,
                };
                if let Err(e) = written {
                    self.fail(&e.to_string());
                }
            }
            _ => {}
        }
    }

    /// The games already in games.csv, as a resume finds them.
    fn earlier_games(&mut self, csv: &std::path::Path) -> anyhow::Result<()> {
        let Some(w) = self.out.as_mut() else {
            return Ok(());
        };
        if !csv.is_file() {
            return Ok(());
        }
        let mut rows = crate::results::csvio::RowReader::open(csv)
            .with_context(|| format!("reading {}", csv.display()))?;
        while let Some((_, row)) = rows
            .next_row()
            .with_context(|| format!("reading {}", csv.display()))?
        {
            w.add(row)
                .with_context(|| format!("writing {}", self.path.display()))?;
        }
        w.flush()
            .with_context(|| format!("writing {}", self.path.display()))
    }

    fn fail(&mut self, why: &str) {
        self.out = None;
        let csv = self.dir.as_ref().map_or_else(
            || "the results folder's games.csv".to_string(),
            |d| {
                crate::league::folder::Layout::new(d)
                    .games_csv()
                    .display()
                    .to_string()
            },
        );
        errln!(
            "warning: --pgn {}: {why}; no more games are written to it (the league goes on; `arena pgn {} -o {}` writes them all)",
            self.path.display(),
            crate::text::shell_word(&csv),
            crate::text::shell_path(&self.path)
        );
    }

    /// Where the PGN is and how many games it holds (`None` if it failed).
    pub fn finish(self) -> Option<String> {
        let (_, pgn) = self.out?.finish();
        let skipped = match pgn.skipped {
            0 => String::new(),
            n => format!("; {n} 3-player games left out"),
        };
        Some(format!(
            "pgn: {} ({} games of {}{skipped})",
            self.path.display(),
            pgn.games,
            self.event
        ))
    }
}
