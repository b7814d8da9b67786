//! Tournament files (TOML): parsing and validation into a [`Tournament`].
//!
//! Owns the file format and its error messages (every error names the field
//! and, where the file has one, the line). Knows nothing of processes or
//! results files; bot manifests are read by [`crate::bot::manifest`].

mod book;
mod bots;
pub mod ladder;
mod sandbox;
mod variants;

pub use book::{Book, BookError, BookLine, BookOrder};
pub use sandbox::{SandboxSettings, DEFAULT_BUILD_SECONDS};
pub use variants::{default_variants, parse_variant};

use crate::bot::manifest::{self, Manifest};
use crate::bot::{LimitSettings, Sandbox};
use crate::engine::{Settings, Variant, DEFAULT_MAX_PLIES};
use crate::ratings::sprt::SprtConfig;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Errors in a tournament file, each naming the file, the line and the field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("{path}:{line}: `{field}`: {why}")]
    Field {
        path: PathBuf,
        line: usize,
        field: String,
        why: String,
    },
    #[error("{path}: `{field}`: {why}")]
    Missing {
        path: PathBuf,
        field: String,
        why: String,
    },
    /// A command-line flag's value is out of bounds (the same bounds as the
    /// file's).
    #[error("{flag}: {why}")]
    Flag { flag: String, why: String },
    #[error(transparent)]
    Manifest(#[from] manifest::ManifestError),
    #[error(transparent)]
    Book(#[from] BookError),
}

/// The settings of a run as given, before any check (ripgrep's "low"
/// arguments): every field optional. The command line's flags are one
/// `RunSettings`; [`Tournament::load_with`] lays them over the file's and
/// checks the result once, with the same bounds for both, so that an error
/// names the flag or the file line its value came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSettings {
    pub concurrency: Option<i64>,
    pub rounds: Option<i64>,
    pub games_per_pairing: Option<i64>,
    pub seed: Option<u64>,
    pub max_plies: Option<i64>,
    pub openings: Option<i64>,
    /// The openings book, as given (relative to the working directory).
    pub openings_file: Option<PathBuf>,
    /// `sequential` or `random`.
    pub openings_order: Option<String>,
    /// Variant names (`filo`, `tricala3`, ...).
    pub variants: Option<Vec<String>>,
    /// Keep only these bots of the file.
    pub bots: Option<Vec<String>>,
    pub gauntlet: Option<String>,
    /// The results folder, as given (relative to the working directory).
    pub output: Option<PathBuf>,
    pub startup_ms: Option<u64>,
    pub decision_ms: Option<u64>,
    pub base_ms: Option<u64>,
    pub increment_ms: Option<u64>,
    pub watchdog_ms: Option<u64>,
    /// `on` or `off`.
    pub sandbox: Option<String>,
    /// Per-bot resource limits (see [`LimitSettings`]).
    pub memory_mb: Option<i64>,
    pub processes: Option<i64>,
    pub cpus: Option<i64>,
    pub file_size_mb: Option<i64>,
    /// `elo0=E0,elo1=E1[,alpha=A,beta=B,model=M]`: stop when the SPRT of
    /// the league's two bots decides.
    pub sprt: Option<String>,
    /// `--ponder`: the bots may think while the others do.
    pub ponder: Option<bool>,
}

/// Where a setting's value came from.
enum Source {
    /// The file, at this byte range.
    File(std::ops::Range<usize>),
    /// A command-line flag.
    Flag,
}

/// A setting's value: the flag's when given, else the file's.
fn pick<T: Clone>(flag: &Option<T>, file: &Option<Spanned<T>>) -> Option<(T, Source)> {
    match (flag, file) {
        (Some(v), _) => Some((v.clone(), Source::Flag)),
        (None, Some(f)) => Some((f.get_ref().clone(), Source::File(f.span()))),
        (None, None) => None,
    }
}

/// How a bot is started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotSpec {
    pub name: String,
    /// Program and arguments (placeholders such as `{bin_dir}` already expanded
    /// by [`manifest::expand`] at start-up, not here).
    pub command: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// Optional build command, run once in `cwd` before the league starts.
    pub build: Option<Vec<String>>,
    /// What its bot.toml asks for in the sandbox.
    pub limits: LimitSettings,
    /// Where it is written (`league.toml:12`, `bots/x/bot.toml:3`), for
    /// messages; none when it was not read from a file.
    pub origin: Option<String>,
}

impl BotSpec {
    /// The bot of a bots/ folder, as its bot.toml describes it.
    pub fn from_manifest(m: Manifest) -> BotSpec {
        let origin = format!(
            "{}:{}",
            m.dir.join(crate::bot::manifest::MANIFEST).display(),
            m.command_line
        );
        BotSpec {
            name: m.name,
            command: m.command,
            cwd: Some(m.dir),
            env: m.env,
            build: m.build,
            limits: m.limits,
            origin: Some(origin),
        }
    }
}

/// One variant entry of a league: a game, its player count and options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantSpec {
    /// The `variant` column of the results: the game's name (`tricala` for
    /// 2 and 3 players alike: the `players` column tells them apart), or the
    /// entry's `name` (default `kisolo6` etc. when options are set).
    pub key: String,
    pub variant: Variant,
    pub players: usize,
    pub options: BTreeMap<String, String>,
}

impl VariantSpec {
    /// The key with `-3p` for 3-player games (`tricala-3p`): unique within a
    /// league; used in game ids and by the ratings' per-variant tables.
    pub fn label(&self) -> String {
        if self.players == 2 {
            self.key.clone()
        } else {
            format!("{}-{}p", self.key, self.players)
        }
    }

    pub fn settings(&self, max_plies: u32) -> Settings {
        Settings {
            players: self.players,
            max_plies,
            options: self.options.clone(),
        }
    }
}

/// Time limits, all in milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeSettings {
    /// Time a bot has to answer the hello.
    pub startup_ms: u64,
    /// Time for one decision (0: no per-decision limit).
    pub decision_ms: u64,
    /// Per-game clock: base time (0: no clock) and increment per turn.
    pub base_ms: u64,
    pub increment_ms: u64,
    /// Wall-clock watchdog on a whole game, always on.
    pub watchdog_ms: u64,
}

impl Default for TimeSettings {
    fn default() -> Self {
        TimeSettings {
            startup_ms: 10_000,
            decision_ms: 2_000,
            base_ms: 0,
            increment_ms: 0,
            watchdog_ms: 300_000,
        }
    }
}

/// A validated tournament.
#[derive(Clone, Debug, PartialEq)]
pub struct Tournament {
    pub name: String,
    pub seed: u64,
    pub bots: Vec<BotSpec>,
    pub variants: Vec<VariantSpec>,
    /// Seat-swap groups per pairing and variant (games per pairing =
    /// rounds x seat orders: 2, or 6 for 3 players).
    pub rounds: u32,
    pub time: TimeSettings,
    pub max_plies: u32,
    pub concurrency: usize,
    pub output: PathBuf,
    /// Random opening decisions played before the bots take over.
    pub openings: u32,
    /// The openings book (`openings_file`): each group plays its line,
    /// then `openings` random decisions.
    pub book: Option<Book>,
    /// When set, only pairings that include this bot are played.
    pub gauntlet: Option<String>,
    /// Every bot in its sandbox (the default), or `off` (docs/security.md).
    pub sandbox: Sandbox,
    /// What the sandboxes are given beyond the mode (`[sandbox]`).
    pub sandbox_settings: SandboxSettings,
    /// Whether the bots may think while the others do (`ponder`,
    /// `--ponder`; default false).
    pub ponder: bool,
    /// What each bot may use in its sandbox, from the flags and the file's
    /// `[limits]` (a bot's own bot.toml fills in the rest).
    pub limits: LimitSettings,
    /// An SPRT of the first bot against the second (a league of two bots):
    /// the league stops when it decides (`[sprt]`, `--sprt`).
    pub sprt: Option<SprtConfig>,
    /// A ladder file's `[ladder]` table (`arena serve`, docs/ladder.md):
    /// its bots come over HTTP, so it may name none.
    pub ladder: Option<ladder::LadderSettings>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: Option<Spanned<String>>,
    seed: Option<u64>,
    bots: Option<Spanned<toml::Value>>,
    variants: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    rounds: Option<Spanned<i64>>,
    games_per_pairing: Option<Spanned<i64>>,
    time_control: Option<RawTime>,
    max_plies: Option<Spanned<i64>>,
    concurrency: Option<Spanned<i64>>,
    output: Option<String>,
    openings: Option<Spanned<i64>>,
    openings_file: Option<String>,
    openings_order: Option<Spanned<String>>,
    gauntlet: Option<Spanned<String>>,
    bots_dir: Option<String>,
    sandbox: Option<Spanned<sandbox::RawSandbox>>,
    limits: Option<Spanned<RawLimits>>,
    sprt: Option<Spanned<SprtConfig>>,
    ponder: Option<bool>,
    ladder: Option<ladder::RawLadder>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    memory_mb: Option<i64>,
    processes: Option<i64>,
    cpus: Option<i64>,
    file_size_mb: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTime {
    startup_ms: Option<u64>,
    decision_ms: Option<u64>,
    base_ms: Option<u64>,
    increment_ms: Option<u64>,
    watchdog_ms: Option<u64>,
}

/// The line (1-based) of byte offset `at` in `src`.
fn line_of(src: &str, at: usize) -> usize {
    src.as_bytes()[..at.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

struct Ctx<'a> {
    path: &'a Path,
    src: &'a str,
}

impl Ctx<'_> {
    fn field(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        why: impl Into<String>,
    ) -> ConfigError {
        ConfigError::Field {
            path: self.path.to_path_buf(),
            line: line_of(self.src, span.start),
            field: field.to_string(),
            why: why.into(),
        }
    }

    /// An error about `field`, at the file line or the flag (`--field`,
    /// dashed) its value came from.
    fn at(&self, from: &Source, field: &str, why: impl Into<String>) -> ConfigError {
        match from {
            Source::File(span) => self.field(span.clone(), field, why),
            Source::Flag => ConfigError::Flag {
                flag: format!("--{}", field.replace('_', "-")),
                why: why.into(),
            },
        }
    }

    fn count(
        &self,
        v: &(i64, Source),
        field: &str,
        min: i64,
        max: i64,
    ) -> Result<i64, ConfigError> {
        let (n, from) = v;
        if *n < min || *n > max {
            return Err(self.at(
                from,
                field,
                format!("must be between {min} and {max}, got {n}"),
            ));
        }
        Ok(*n)
    }
}

impl Tournament {
    /// Reads and validates a tournament file. Bots named by a string are
    /// looked up in the bots directory (`bots_dir`, default `bots/` next to
    /// the file's parent folder, i.e. the project's `bots/`).
    pub fn load(path: &Path) -> Result<Tournament, ConfigError> {
        Tournament::load_with(path, &RunSettings::default())
    }

    /// Reads a tournament file, lays `flags` over its settings and checks
    /// the result.
    pub fn load_with(path: &Path, flags: &RunSettings) -> Result<Tournament, ConfigError> {
        let src = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Tournament::parse_with(path, &src, flags)
    }

    pub fn parse(path: &Path, src: &str) -> Result<Tournament, ConfigError> {
        Tournament::parse_with(path, src, &RunSettings::default())
    }

    /// Parses a tournament file's text, lays `flags` over its settings and
    /// checks the result once, section by section.
    pub fn parse_with(
        path: &Path,
        src: &str,
        flags: &RunSettings,
    ) -> Result<Tournament, ConfigError> {
        let raw: RawFile = toml::from_str(src).map_err(|e| ConfigError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let ctx = Ctx { path, src };
        // `t.toml` has the parent "": its folder is the working directory.
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let name = name_section(&ctx, raw.name.as_ref())?;
        let bots_dir = match &raw.bots_dir {
            Some(d) => bots::BotsDir {
                dir: base.join(d),
                given: true,
            },
            None => bots::BotsDir {
                dir: default_bots_dir(&base),
                given: false,
            },
        };
        // A ladder's bots are uploaded: its file names none.
        let bots = match (&raw.ladder, &raw.bots) {
            (Some(_), None) => Vec::new(),
            _ => bots::section(&ctx, raw.bots.as_ref(), flags, &base, &bots_dir)?,
        };
        let variants = variants::section(&ctx, raw.variants.as_ref(), flags)?;
        let rounds = rounds_section(&ctx, &raw, flags)?;
        let time = time_section(&ctx, raw.time_control.unwrap_or_default(), flags)?;
        let max_plies = match pick(&flags.max_plies, &raw.max_plies) {
            Some(m) => ctx.count(&m, "max_plies", 1, 10_000_000)? as u32,
            None => DEFAULT_MAX_PLIES,
        };
        let concurrency = match pick(&flags.concurrency, &raw.concurrency) {
            Some(c) => ctx.count(&c, "concurrency", 1, 1024)? as usize,
            None => default_concurrency(),
        };
        let openings = match pick(&flags.openings, &raw.openings) {
            Some(o) => ctx.count(&o, "openings", 0, 1000)? as u32,
            None => 0,
        };
        let seed = flags.seed.or(raw.seed).unwrap_or(1);
        let book = book_section(
            &ctx,
            (&raw.openings_file, &raw.openings_order),
            flags,
            &base,
            (&variants, max_plies, seed),
        )?;
        let gauntlet = gauntlet_section(&ctx, raw.gauntlet.as_ref(), flags, &bots)?;
        let sprt = sprt_section(&ctx, raw.sprt.as_ref(), flags, &bots, &variants)?;
        let output = match (&flags.output, &raw.output) {
            (Some(o), _) => o.clone(),
            (None, Some(o)) => base.join(o),
            (None, None) => default_results_dir(&base).join(&name),
        };
        let (sandbox, sandbox_settings) =
            sandbox::section(&ctx, raw.sandbox.as_ref(), flags, &base)?;
        let limits = limits_section(&ctx, raw.limits.as_ref(), flags)?;
        let ladder = match &raw.ladder {
            Some(l) => Some(ladder::section(&ctx, l, concurrency)?),
            None => None,
        };
        Ok(Tournament {
            ladder,
            limits,
            sandbox,
            sandbox_settings,
            ponder: flags.ponder.or(raw.ponder).unwrap_or(false),
            name,
            seed,
            bots,
            variants,
            rounds,
            time,
            max_plies,
            concurrency,
            output,
            openings,
            book,
            gauntlet,
            sprt,
        })
    }
}

/// `name`: the results folder's name (default: the file's stem).
fn name_section(ctx: &Ctx<'_>, raw: Option<&Spanned<String>>) -> Result<String, ConfigError> {
    let Some(n) = raw else {
        return Ok(ctx
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "league".into()));
    };
    let s = n.get_ref().trim().to_string();
    // Only dots (`.`, `..`) would name the folder itself or its parent,
    // not a folder of its own.
    if s.chars().all(|c| c == '.')
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(ctx.field(
            n.span(),
            "name",
            "must be non-empty, use only letters, digits, '-', '_' and '.', and not be dots alone (it names the results folder)",
        ));
    }
    Ok(s)
}

/// `rounds` or `games_per_pairing` (not both): the seat-swap groups per
/// pairing and variant. The flags' pair replaces the file's.
fn rounds_section(ctx: &Ctx<'_>, raw: &RawFile, flags: &RunSettings) -> Result<u32, ConfigError> {
    let (rounds, games) = if flags.rounds.is_some() || flags.games_per_pairing.is_some() {
        (
            flags.rounds.map(|r| (r, Source::Flag)),
            flags.games_per_pairing.map(|g| (g, Source::Flag)),
        )
    } else {
        (
            pick(&None, &raw.rounds),
            pick(&None, &raw.games_per_pairing),
        )
    };
    Ok(match (&rounds, &games) {
        (Some(_), Some(g)) => {
            return Err(ctx.at(
                &g.1,
                "games_per_pairing",
                "give either `rounds` or `games_per_pairing`, not both",
            ))
        }
        (Some(r), None) => ctx.count(r, "rounds", 1, 1_000_000)? as u32,
        (None, Some(g)) => {
            let n = ctx.count(g, "games_per_pairing", 2, 2_000_000)?;
            if n % 2 != 0 {
                return Err(ctx.at(&g.1, "games_per_pairing", format!("must be even so that every pairing plays both seat orders equally often, got {n}")));
            }
            (n / 2) as u32
        }
        (None, None) => 1,
    })
}

/// `[time_control]` with the flags laid over it; the watchdog is always on.
fn time_section(
    ctx: &Ctx<'_>,
    t: RawTime,
    flags: &RunSettings,
) -> Result<TimeSettings, ConfigError> {
    let d = TimeSettings::default();
    let time = TimeSettings {
        startup_ms: flags.startup_ms.or(t.startup_ms).unwrap_or(d.startup_ms),
        decision_ms: flags.decision_ms.or(t.decision_ms).unwrap_or(d.decision_ms),
        base_ms: flags.base_ms.or(t.base_ms).unwrap_or(d.base_ms),
        increment_ms: flags
            .increment_ms
            .or(t.increment_ms)
            .unwrap_or(d.increment_ms),
        watchdog_ms: flags.watchdog_ms.or(t.watchdog_ms).unwrap_or(d.watchdog_ms),
    };
    if time.watchdog_ms == 0 {
        let why = "must be positive: every game has a wall-clock watchdog";
        return Err(match flags.watchdog_ms {
            Some(_) => ctx.at(&Source::Flag, "watchdog_ms", why),
            None => ConfigError::Missing {
                path: ctx.path.to_path_buf(),
                field: "time_control.watchdog_ms".into(),
                why: why.into(),
            },
        });
    }
    Ok(time)
}

/// `openings_file` and `openings_order`: the book, read and checked
/// against the league's variants (`league` is its variants, ply cap and
/// seed). A flag's path is the working directory's, the file's its
/// folder's.
fn book_section(
    ctx: &Ctx<'_>,
    (file, order): (&Option<String>, &Option<Spanned<String>>),
    flags: &RunSettings,
    base: &Path,
    league: (&[VariantSpec], u32, u64),
) -> Result<Option<Book>, ConfigError> {
    let order = match pick(&flags.openings_order, order) {
        Some((o, from)) => Some((
            o.parse::<BookOrder>()
                .map_err(|why| ctx.at(&from, "openings_order", why))?,
            from,
        )),
        None => None,
    };
    let path = match (&flags.openings_file, file) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => base.join(p),
        (None, None) => return match order {
            Some((_, from)) => Err(ctx.at(
                &from,
                "openings_order",
                "orders the lines of an openings book: give `openings_file` (--openings-file) too",
            )),
            None => Ok(None),
        },
    };
    let (variants, max_plies, seed) = league;
    let order = order.map(|o| o.0).unwrap_or_default();
    Ok(Some(Book::load(&path, order, variants, max_plies, seed)?))
}

/// `gauntlet`: one of the league's bots, or none.
fn gauntlet_section(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<String>>,
    flags: &RunSettings,
    bots: &[BotSpec],
) -> Result<Option<String>, ConfigError> {
    let Some((g, from)) = pick(&flags.gauntlet, &raw.cloned()) else {
        return Ok(None);
    };
    if !bots.iter().any(|b| b.name == g) {
        return Err(ctx.at(
            &from,
            "gauntlet",
            format!("`{g}` is not one of the league's bots"),
        ));
    }
    Ok(Some(g))
}

/// `[sprt]` or `--sprt`: only for a league of two bots with a 2-player
/// variant.
fn sprt_section(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<SprtConfig>>,
    flags: &RunSettings,
    bots: &[BotSpec],
    variants: &[VariantSpec],
) -> Result<Option<SprtConfig>, ConfigError> {
    let sprt = match (&flags.sprt, raw) {
        (Some(text), _) => {
            let c = text.parse::<SprtConfig>().map_err(|e| ConfigError::Flag {
                flag: "--sprt".into(),
                why: e.to_string(),
            })?;
            (c, Source::Flag)
        }
        (None, Some(c)) => (*c.get_ref(), Source::File(c.span())),
        (None, None) => return Ok(None),
    };
    let two_player = variants.iter().any(|v| v.players == 2);
    if bots.len() != 2 || !two_player {
        return Err(ctx.at(
            &sprt.1,
            "sprt",
            format!(
                "an SPRT tests one bot against one other over 2-player games: this league has {} bot{}{} (keep two with --bots A,B, or use `arena match A B --sprt ...`)",
                bots.len(),
                if bots.len() == 1 { "" } else { "s" },
                if two_player { "" } else { " and no 2-player variant" }
            ),
        ));
    }
    Ok(Some(sprt.0))
}

/// `[limits]`: the flags first, then the file's; each checked where it
/// came from, with the same bounds.
fn limits_section(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<RawLimits>>,
    flags: &RunSettings,
) -> Result<LimitSettings, ConfigError> {
    let limit = |flag: Option<i64>, file: fn(&RawLimits) -> Option<i64>, name: &str, max: i64| {
        let given = match (flag, raw) {
            (Some(n), _) => Some((n, Source::Flag, name.to_string())),
            (None, Some(l)) => {
                file(l.get_ref()).map(|n| (n, Source::File(l.span()), format!("limits.{name}")))
            }
            (None, None) => None,
        };
        given
            .map(|(n, from, field)| ctx.count(&(n, from), &field, 1, max).map(|n| n as u64))
            .transpose()
    };
    Ok(LimitSettings {
        memory_mb: limit(
            flags.memory_mb,
            |l| l.memory_mb,
            "memory_mb",
            LimitSettings::MAX_MB.cast_signed(),
        )?,
        processes: limit(
            flags.processes,
            |l| l.processes,
            "processes",
            LimitSettings::MAX_PROCESSES.cast_signed(),
        )?,
        cpus: limit(
            flags.cpus,
            |l| l.cpus,
            "cpus",
            i64::from(LimitSettings::MAX_CPUS),
        )?
        .map(|n| n as u32),
        file_size_mb: limit(
            flags.file_size_mb,
            |l| l.file_size_mb,
            "file_size_mb",
            LimitSettings::MAX_MB.cast_signed(),
        )?,
    })
}

/// The number of CPUs this process may use.
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// `bots/` of the project a tournament file lives in: the file's folder is
/// normally `tournaments/`, whose sibling is `bots/`.
fn default_bots_dir(base: &Path) -> PathBuf {
    project_dir(base).join("bots")
}

fn default_results_dir(base: &Path) -> PathBuf {
    project_dir(base).join("results")
}

fn project_dir(base: &Path) -> PathBuf {
    if base.file_name().is_some_and(|n| n == "tournaments") {
        base.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        base.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Result<Tournament, ConfigError> {
        Tournament::parse(Path::new("/tmp/t/tournaments/x.toml"), src)
    }

    const TWO_BOTS: &str = r#"
name = "t"
bots = [
  { name = "a", command = "python3 a.py" },
  { name = "b", command = ["node", "b.js"], env = { X = "1" } },
]
"#;

    #[test]
    fn minimal_file_takes_defaults() {
        let t = parse(TWO_BOTS).unwrap();
        assert_eq!(t.name, "t");
        assert_eq!(t.bots.len(), 2);
        assert_eq!(t.bots[0].command, vec!["python3", "a.py"]);
        assert_eq!(t.bots[1].env, vec![("X".to_string(), "1".to_string())]);
        assert_eq!(t.variants.len(), 5);
        assert_eq!(t.rounds, 1);
        assert_eq!(t.output, PathBuf::from("/tmp/t/results/t"));
        assert_eq!(t.max_plies, DEFAULT_MAX_PLIES);
    }

    #[test]
    fn errors_name_field_and_line() {
        let src = format!("{TWO_BOTS}\nconcurrency = 0\n");
        let e = parse(&src).unwrap_err().to_string();
        assert!(e.contains(":8:") && e.contains("concurrency"), "{e}");

        let src = format!("{TWO_BOTS}\nvariants = [\"diffusion\", \"chess\"]\n");
        let e = parse(&src).unwrap_err().to_string();
        assert!(
            e.contains(":8:") && e.contains("variants") && e.contains("chess"),
            "{e}"
        );

        let src = format!("{TWO_BOTS}\ngames_per_pairing = 3\n");
        let e = parse(&src).unwrap_err().to_string();
        assert!(e.contains("games_per_pairing") && e.contains("even"), "{e}");

        let e = parse("name = \"t\"\nbotz = 1\n").unwrap_err().to_string();
        assert!(e.contains("botz") && e.contains("line 2"), "{e}");

        let e = parse("name = \"t\"\n").unwrap_err().to_string();
        assert!(e.contains("`bots`"), "{e}");

        // A name is a folder of its own, never the results folder's parent.
        for name in ["..", ".", "", "a/b"] {
            let src = TWO_BOTS.replace("name = \"t\"", &format!("name = \"{name}\""));
            let e = parse(&src).unwrap_err().to_string();
            assert!(e.contains(":2:") && e.contains("name"), "{name}: {e}");
        }

        let src = format!("{TWO_BOTS}\ngauntlet = \"zed\"\n");
        let e = parse(&src).unwrap_err().to_string();
        assert!(e.contains("gauntlet") && e.contains("zed"), "{e}");
    }

    /// The flags go through the same checks as the file, and their errors
    /// name the flag, not a line of the file.
    #[test]
    fn flags_are_checked_like_the_file() {
        let with = |src: &str, flags: RunSettings| {
            Tournament::parse_with(Path::new("/tmp/t/tournaments/x.toml"), src, &flags)
        };
        let src = format!("{TWO_BOTS}\nconcurrency = 4\nrounds = 2\nseed = 5\n");
        let e = with(
            &src,
            RunSettings {
                concurrency: Some(5000),
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "--concurrency: must be between 1 and 1024, got 5000");

        let t = with(
            &src,
            RunSettings {
                concurrency: Some(2),
                games_per_pairing: Some(6),
                output: Some(PathBuf::from("elsewhere")),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!((t.concurrency, t.rounds, t.seed), (2, 3, 5));
        assert_eq!(t.output, PathBuf::from("elsewhere"));

        for (flags, want) in [
            (
                RunSettings {
                    games_per_pairing: Some(3),
                    ..Default::default()
                },
                "--games-per-pairing: must be even",
            ),
            (
                RunSettings {
                    watchdog_ms: Some(0),
                    ..Default::default()
                },
                "--watchdog-ms: must be positive",
            ),
            (
                RunSettings {
                    bots: Some(vec!["a".into(), "zed".into()]),
                    ..Default::default()
                },
                "--bots: `zed` is not a bot",
            ),
            (
                RunSettings {
                    variants: Some(vec!["chess".into()]),
                    ..Default::default()
                },
                "--variants: unknown variant `chess` (known: filo, tricala, tricala3 (also tricala-3p",
            ),
            (
                RunSettings {
                    gauntlet: Some("zed".into()),
                    ..Default::default()
                },
                "--gauntlet: `zed` is not one",
            ),
        ] {
            let e = with(&src, flags).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
        // A watchdog of 0 in the file is the file's error.
        let e = parse(&format!("{TWO_BOTS}\n[time_control]\nwatchdog_ms = 0\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.toml") && e.contains("watchdog_ms"), "{e}");
    }

    /// A file named without a folder (`arena run t.toml`) lives in the
    /// working directory: its bots run there, not in "" (which no process
    /// can enter).
    #[test]
    fn a_bare_file_name_means_the_working_directory() {
        let t = Tournament::parse(Path::new("t.toml"), TWO_BOTS).unwrap();
        assert_eq!(t.bots[0].cwd.as_deref(), Some(Path::new(".")));
    }

    #[test]
    fn the_sandbox_is_on_unless_said_off() {
        assert_eq!(parse(TWO_BOTS).unwrap().sandbox, Sandbox::On);
        let off = parse(&format!("{TWO_BOTS}\nsandbox = \"off\"\n")).unwrap();
        assert_eq!(off.sandbox, Sandbox::Off);
        let e = parse(&format!("{TWO_BOTS}\nsandbox = \"maybe\"\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(":8:") && e.contains("`sandbox`") && e.contains("maybe"),
            "{e}"
        );
        let flag = RunSettings {
            sandbox: Some("off".into()),
            ..Default::default()
        };
        let t = Tournament::parse_with(Path::new("/tmp/t/x.toml"), TWO_BOTS, &flag).unwrap();
        assert_eq!(t.sandbox, Sandbox::Off);
    }

    #[test]
    fn limits_have_defaults_and_bounds() {
        assert_eq!(parse(TWO_BOTS).unwrap().limits, LimitSettings::default());
        let t = parse(&format!(
            "{TWO_BOTS}\n[limits]\nmemory_mb = 256\ncpus = 2\n"
        ))
        .unwrap();
        assert_eq!(
            (t.limits.memory_mb, t.limits.cpus, t.limits.processes),
            (Some(256), Some(2), None)
        );
        let e = parse(&format!("{TWO_BOTS}\n[limits]\nmemory_mb = 0\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("limits.memory_mb") && e.contains("between 1"),
            "{e}"
        );
        let flags = RunSettings {
            memory_mb: Some(512),
            processes: Some(0),
            ..Default::default()
        };
        let e = Tournament::parse_with(Path::new("/tmp/t/x.toml"), TWO_BOTS, &flags)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--processes: must be between 1"), "{e}");
        let e = parse(&format!("{TWO_BOTS}\n[limits]\nram = 5\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("ram"), "{e}");
    }

    /// `openings_file` is the league file's folder's, `--openings-file`
    /// the working directory's; errors name the book's line.
    #[test]
    fn an_openings_book_is_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let league = dir.path().join("t.toml");
        let first = |v: &str| {
            let s = parse_variant(v).unwrap();
            crate::engine::Game::new(s.variant, &s.settings(100))
                .unwrap()
                .legal()[0]
                .clone()
        };
        std::fs::write(
            dir.path().join("book.txt"),
            format!(
                "# two\nfilo: {}\nkisolo: {}\n",
                first("filo"),
                first("kisolo")
            ),
        )
        .unwrap();
        let src = format!(
            "{TWO_BOTS}\nvariants = [\"filo\", \"kisolo\"]\nopenings_file = \"book.txt\"\nopenings_order = \"random\"\n"
        );
        let t = Tournament::parse(&league, &src).unwrap();
        let book = t.book.expect("a book");
        assert_eq!(book.order, BookOrder::Random);
        assert_eq!(book.line(1, 5), [first("kisolo")]);

        let e = Tournament::parse(&league, &src.replace("\"random\"", "\"shuffled\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains(":10: `openings_order`: expected"), "{e}");
        let e = Tournament::parse(&league, &src.replace("book.txt", "none.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("none.txt"), "{e}");
        let e = Tournament::parse(&league, &src.replace("openings_file", "opening_file"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("opening_file") && e.contains("openings_file"),
            "{e}"
        );

        std::fs::write(dir.path().join("bad.txt"), "filo: zz\n").unwrap();
        let flags = RunSettings {
            openings_file: Some(dir.path().join("bad.txt")),
            openings_order: Some("sequential".into()),
            ..Default::default()
        };
        let e = Tournament::parse_with(&league, &src, &flags)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bad.txt:1: move 1 `zz` is not legal here"),
            "{e}"
        );
        let flags = RunSettings {
            openings_order: Some("random".into()),
            ..Default::default()
        };
        let e = Tournament::parse_with(&league, TWO_BOTS, &flags)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--openings-order: orders the lines"), "{e}");
    }

    #[test]
    fn variant_keys() {
        let src =
            format!("{TWO_BOTS}\nvariants = [\"tricala\", \"tricala3\"]\ngames_per_pairing = 4\n");
        let t = parse(&src).unwrap();
        assert_eq!(t.variants[1].players, 3);
        assert_eq!(t.variants[1].key, "tricala");
        assert_eq!(t.variants[1].label(), "tricala-3p");
        let src = format!("{TWO_BOTS}\nvariants = [\"tricala3\", \"tricala-3p\"]\n");
        let e = parse(&src).unwrap_err().to_string();
        assert!(e.contains("appears twice"), "{e}");
        assert_eq!(t.rounds, 2);
    }
}
