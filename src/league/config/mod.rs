//! Tournament files (TOML): parsing and validation into a [`Tournament`].
//!
//! Owns the file format and its error messages (every error names the field
//! and, where the file has one, the line). Knows nothing of processes or
//! results files; bot manifests are read by [`crate::bot::manifest`].

mod book;
mod bots;
mod ctx;
pub mod ladder;
mod sandbox;
mod spec;
#[cfg(test)]
mod tests;
mod variants;

pub use book::{Book, BookError, BookLine, BookOrder};
use ctx::{line_of, pick, Ctx, Source};
pub use ctx::{ConfigError, RunSettings};
pub use sandbox::{
    SandboxSettings, DEFAULT_BUILD_FILES, DEFAULT_BUILD_MB, DEFAULT_BUILD_SECONDS,
    LADDER_BUILD_FILES, LADDER_BUILD_MB, LADDER_BUILD_SECONDS,
};
pub use spec::{parse_variant, BotSpec, VariantSpec};
pub use variants::default_variants;

use crate::bot::{LimitSettings, Sandbox};
use crate::engine::DEFAULT_MAX_PLIES;
use crate::ratings::sprt::SprtConfig;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The most seat-swap groups a round-robin plays per pairing and variant
/// (`rounds`; `games_per_pairing` is at most twice it).
pub const MAX_ROUNDS: i64 = 1_000_000;

/// The longest league `name` (it names the results folder, whose name a
/// file system holds to 255 bytes).
pub const MAX_NAME: usize = 200;

/// The highest ply cap (`max_plies`, `--max-plies`) a league, a game
/// played by hand (`arena play`), `check-bot` and `arena state` accept;
/// the lowest is 1 (a cap of 0 would still let one ply be played).
pub const MAX_MAX_PLIES: i64 = 10_000_000;

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

impl TimeSettings {
    /// Each setting by its key in `[time_control]`: what league.json and
    /// the ladder's store keep of what games were played under.
    pub fn named(&self) -> [(&'static str, u64); 5] {
        [
            ("decision_ms", self.decision_ms),
            ("base_ms", self.base_ms),
            ("increment_ms", self.increment_ms),
            ("startup_ms", self.startup_ms),
            ("watchdog_ms", self.watchdog_ms),
        ]
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
    /// Where the file gives `concurrency` (`FILE:LINE`); `None` when it
    /// came from `-j` or is the default.
    pub concurrency_at: Option<String>,
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
    /// How the bots are paired (`format`): every pairing every round (the
    /// default), a Swiss of so many rounds, or a seeded knockout.
    pub format: Format,
}

/// A league's format (`format`, docs/league.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Every pairing in every round (`rounds` of seat-swap groups).
    #[default]
    RoundRobin,
    /// A Swiss of `rounds` rounds; each pairing plays `Tournament::rounds`
    /// seat-swap groups (`games_per_pairing` / 2) per variant.
    Swiss { rounds: u32 },
    /// A knockout: `seeds` the bots (by index) from seed 1 down, given in
    /// the file (`seeds`) or, if empty, drawn from the league's seed as a
    /// Swiss's initial order; each match plays `Tournament::rounds`
    /// seat-swap groups per variant.
    /// With `stage` > 0 (`seeding = "swiss"`), the bracket is seeded by
    /// the standings of a first Swiss of `stage` rounds among all the
    /// bots, played first (`seeding_rounds`); `seeds` is then empty.
    Knockout { seeds: Vec<usize>, stage: u32 },
}

/// The file's `seed`: a whole number (0 or more), or one written as a
/// string, for seeds above TOML's largest integer (i64's).
fn seed_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Visit;
    impl serde::de::Visitor<'_> for Visit {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a whole number (0 or more), or a string of digits (\"18446744073709551615\") for one above 9223372036854775807")
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<u64, E> {
            v.trim()
                .parse()
                .map_err(|_| E::invalid_value(serde::de::Unexpected::Str(v), &self))
        }
    }
    d.deserialize_any(Visit).map(Some)
}

/// A TOML syntax error's message, with a word on what to do about an
/// integer above TOML's largest.
fn too_large_hint(message: String) -> String {
    match message.contains("number too large to fit in target type") {
        true => format!(
            "{message}\nTOML integers stop at 9223372036854775807: write a larger `seed` as a string (seed = \"18446744073709551615\"), or give it with --seed"
        ),
        false => message,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: Option<Spanned<String>>,
    #[serde(default, deserialize_with = "seed_value")]
    seed: Option<u64>,
    bots: Option<Spanned<toml::Value>>,
    variants: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    rounds: Option<Spanned<i64>>,
    games_per_pairing: Option<Spanned<i64>>,
    time_control: Option<RawTime>,
    max_plies: Option<Spanned<i64>>,
    concurrency: Option<Spanned<i64>>,
    output: Option<Spanned<String>>,
    openings: Option<Spanned<i64>>,
    openings_file: Option<Spanned<String>>,
    openings_order: Option<Spanned<String>>,
    gauntlet: Option<Spanned<String>>,
    bots_dir: Option<String>,
    sandbox: Option<Spanned<sandbox::RawSandbox>>,
    limits: Option<Spanned<RawLimits>>,
    sprt: Option<Spanned<RawSprt>>,
    ponder: Option<bool>,
    ladder: Option<ladder::RawLadder>,
    format: Option<Spanned<String>>,
    seeds: Option<Spanned<Vec<String>>>,
    seeding: Option<Spanned<String>>,
    seeding_rounds: Option<Spanned<i64>>,
}

/// `[sprt]` as written: each key at its line, checked by
/// [`SprtConfig::new`] in `sprt_section` (a bad one named there).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSprt {
    elo0: Spanned<f64>,
    elo1: Spanned<f64>,
    alpha: Option<Spanned<f64>>,
    beta: Option<Spanned<f64>>,
    #[serde(default)]
    model: crate::ratings::sprt::Model,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    memory_mb: Option<Spanned<i64>>,
    processes: Option<Spanned<i64>>,
    cpus: Option<Spanned<i64>>,
    file_size_mb: Option<Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTime {
    /// Spanned: a 0 is named at its line.
    startup_ms: Option<Spanned<u64>>,
    decision_ms: Option<u64>,
    base_ms: Option<u64>,
    /// Spanned: an increment without a clock is named at its line.
    increment_ms: Option<Spanned<u64>>,
    watchdog_ms: Option<Spanned<u64>>,
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
        let src = crate::text::read_utf8(path).map_err(|source| ConfigError::Read {
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
            message: too_large_hint(crate::text::plain_toml(&e.to_string())),
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
        let (format, rounds) = format_section(&ctx, &raw, flags, (&bots, &variants))?;
        seats_section(&ctx, &raw, flags, &bots, &variants)?;
        let time = time_section(&ctx, raw.time_control.unwrap_or_default(), flags)?;
        let max_plies = match pick(&flags.max_plies, &raw.max_plies) {
            Some(m) => ctx.count(&m, "max_plies", 1, MAX_MAX_PLIES)? as u32,
            None => DEFAULT_MAX_PLIES,
        };
        let (concurrency, concurrency_at) = match pick(&flags.concurrency, &raw.concurrency) {
            Some(c) => (
                ctx.count(&c, "concurrency", 1, 1024)? as usize,
                match &c.1 {
                    Source::File(span) => {
                        Some(format!("{}:{}", path.display(), line_of(src, span.start)))
                    }
                    Source::Flag => None,
                },
            ),
            None => (default_concurrency(), None),
        };
        let openings = match pick(&flags.openings, &raw.openings) {
            Some(o) => {
                let n = ctx.count(&o, "openings", 0, 1000)? as u32;
                // Every game would end at its ply cap inside its opening,
                // no bot asked.
                if n >= max_plies {
                    return Err(ctx.at(
                        &o.1,
                        "openings",
                        format!("{n} random opening decisions reach max_plies ({max_plies}): every game would end in its opening; give fewer"),
                    ));
                }
                n
            }
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
        let output = output_section(&ctx, flags, raw.output.as_ref(), &base, &name)?;
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
            concurrency_at,
            output,
            openings,
            book,
            gauntlet,
            sprt,
            format,
        })
    }
}

/// A variant for more seats than there are bots has no game to play: told
/// at `--variants`, at `--bots` when it kept fewer bots than the file's
/// variants need, or at the file's `variants`.
fn seats_section(
    ctx: &Ctx<'_>,
    raw: &RawFile,
    flags: &RunSettings,
    bots: &[BotSpec],
    variants: &[VariantSpec],
) -> Result<(), ConfigError> {
    if let Some(v) = variants
        .iter()
        .find(|v| !bots.is_empty() && v.players > bots.len())
    {
        let why = format!(
            "variant `{}` needs {} bots, one a seat; this league has {}",
            v.label(),
            v.players,
            bots.len()
        );
        return Err(match (&flags.variants, &raw.variants, &flags.bots) {
            // The file's list, but `--bots` kept fewer bots than it.
            (None, Some(list), Some(_)) => ctx.at(
                &Source::Flag,
                "bots",
                format!(
                    "{why} (--bots keeps {}; the file's `variants` is at line {})",
                    bots.len(),
                    line_of(ctx.src, list.span().start)
                ),
            ),
            (None, Some(list), None) => ctx.field(list.span(), "variants", why),
            _ => ctx.at(&Source::Flag, "variants", why),
        });
    }
    Ok(())
}

/// `format` with what `rounds` and `games_per_pairing` mean under it: a
/// round-robin's `rounds` are its seat-swap groups per pairing; a Swiss's
/// are its rounds (default: log2 of the bots, rounded up, plus 2), its
/// `games_per_pairing` each mini-match's games (default 2).
fn format_section(
    ctx: &Ctx<'_>,
    raw: &RawFile,
    flags: &RunSettings,
    (specs, variants): (&[BotSpec], &[VariantSpec]),
) -> Result<(Format, u32), ConfigError> {
    let bots = specs.len();
    if let (Some(s), false) = (
        &raw.seeds,
        raw.format
            .as_ref()
            .is_some_and(|f| f.get_ref() == "knockout"),
    ) {
        return Err(ctx.field(
            s.span(),
            "seeds",
            "only a knockout is seeded: give format = \"knockout\" or leave `seeds` out",
        ));
    }
    let knockout = raw
        .format
        .as_ref()
        .is_some_and(|f| f.get_ref() == "knockout");
    if let (Some(s), false) = (&raw.seeding, knockout) {
        return Err(ctx.field(
            s.span(),
            "seeding",
            "only a knockout is seeded: give format = \"knockout\" or leave `seeding` out",
        ));
    }
    if let (Some(s), false) = (&raw.seeding_rounds, knockout) {
        return Err(ctx.field(
            s.span(),
            "seeding_rounds",
            "only a knockout seeded by a Swiss has them: give format = \"knockout\" and seeding = \"swiss\", or leave `seeding_rounds` out",
        ));
    }
    let Some(f) = &raw.format else {
        return Ok((Format::RoundRobin, rounds_section(ctx, raw, flags)?));
    };
    let at = |why: String| ctx.field(f.span(), "format", why);
    match f.get_ref().as_str() {
        "round-robin" => Ok((Format::RoundRobin, rounds_section(ctx, raw, flags)?)),
        "swiss" => {
            if raw.ladder.is_some() {
                return Err(at(
                    "a ladder pairs its own games: give no `format` in a ladder file".into(),
                ));
            }
            if let Some(e) = not_with_format(
                ctx,
                raw,
                flags,
                ("a Swiss", "pairs every bot with every other by score"),
            ) {
                return Err(e);
            }
            if bots < 2 {
                return Err(at(format!(
                    "a Swiss needs at least 2 bots, the file has {bots}"
                )));
            }
            let rounds = match pick(&flags.rounds, &raw.rounds) {
                Some(r) => ctx.count(&r, "rounds", 1, 1000)? as u32,
                None => (bots as f64).log2().ceil() as u32 + 2,
            };
            let groups = match pick(&flags.games_per_pairing, &raw.games_per_pairing) {
                Some(g) => {
                    let n = ctx.count(&g, "games_per_pairing", 2, 2000)?;
                    if n % 2 != 0 {
                        return Err(ctx.at(&g.1, "games_per_pairing", format!("must be even so that both bots of a pairing play each seat equally often, got {n}")));
                    }
                    (n / 2) as u32
                }
                None => 1,
            };
            Ok((Format::Swiss { rounds }, groups))
        }
        "knockout" => knockout_section(ctx, raw, flags, (specs, variants)),
        other => Err(at(format!(
            "must be \"round-robin\" (the default), \"swiss\" or \"knockout\", got \"{other}\"{}",
            meant(other, &["round-robin", "swiss", "knockout"])
        ))),
    }
}

/// "; did you mean "swiss"?" when a value is a likely slip for one of
/// `known` (or in another case), else nothing.
fn meant(got: &str, known: &[&str]) -> String {
    let lower = got.trim().to_lowercase();
    match known.iter().find(|k| **k == lower) {
        Some(k) => format!("; did you mean \"{k}\"?"),
        None => crate::text::closest(&lower, known.iter().copied())
            .map(|k| format!("; did you mean \"{k}\"?"))
            .unwrap_or_default(),
    }
}

/// Why `format` (a Swiss or a knockout, `what`) cannot be played with
/// the file's or the flags' `gauntlet` or SPRT: at the flag when a flag
/// gave it, else at `format`'s line.
fn not_with_format(
    ctx: &Ctx<'_>,
    raw: &RawFile,
    flags: &RunSettings,
    (what, pairs): (&str, &str),
) -> Option<ConfigError> {
    let f = raw.format.as_ref()?;
    // The key, why, and whether a flag gave it.
    let (key, why, flagged) = if flags.gauntlet.is_some() || raw.gauntlet.is_some() {
        (
            "gauntlet",
            format!("{what} {pairs}: it has no `gauntlet` (use format = \"round-robin\")"),
            flags.gauntlet.is_some(),
        )
    } else if flags.sprt.is_some() || raw.sprt.is_some() {
        (
            "sprt",
            format!("{what} has no `[sprt]`: an SPRT is for a league of two bots (use format = \"round-robin\")"),
            flags.sprt.is_some(),
        )
    } else {
        return None;
    };
    Some(match flagged {
        true => ctx.at(
            &Source::Flag,
            key,
            format!("{why}; {}", format_line(ctx, f)),
        ),
        false => ctx.field(f.span(), "format", why),
    })
}

/// Where the file sets the `format` a flag does not apply to: `the
/// file's format = "swiss" is at line 2`.
fn format_line(ctx: &Ctx<'_>, f: &Spanned<String>) -> String {
    format!(
        "the file's format = \"{}\" is at line {}",
        f.get_ref(),
        line_of(ctx.src, f.span().start)
    )
}

/// A knockout's format and its seat-swap groups per match: only
/// 2-player variants, no gauntlet, no SPRT, `seeds` (if given) naming
/// every bot once.
fn knockout_section(
    ctx: &Ctx<'_>,
    raw: &RawFile,
    flags: &RunSettings,
    (specs, variants): (&[BotSpec], &[VariantSpec]),
) -> Result<(Format, u32), ConfigError> {
    let f = raw.format.as_ref().expect("format given");
    let at = |why: String| ctx.field(f.span(), "format", why);
    if raw.ladder.is_some() {
        return Err(at(
            "a ladder pairs its own games: give no `format` in a ladder file".into(),
        ));
    }
    if let Some(e) = not_with_format(
        ctx,
        raw,
        flags,
        ("a knockout", "pairs the bots by its bracket"),
    ) {
        return Err(e);
    }
    if specs.len() < 2 {
        return Err(at(format!(
            "a knockout needs at least 2 bots, the file has {}",
            specs.len()
        )));
    }
    if let Some(v) = variants.iter().find(|v| v.players != 2) {
        let why = format!("a knockout match is between two bots: variant \"{}\" is for {} players (list only 2-player variants in `variants`, or use format = \"swiss\")", v.label(), v.players);
        // `--variants` replaces the file's list: the flag chose it.
        return Err(match flags.variants {
            Some(_) => ctx.at(&Source::Flag, "variants", why),
            None => at(why),
        });
    }
    if let Some((_, from)) = pick(&flags.rounds, &raw.rounds) {
        let fix = match from {
            Source::Flag => format!(
                "the flag does not apply to a knockout: leave it out ({})",
                format_line(ctx, f)
            ),
            Source::File(_) => "leave `rounds` out".to_string(),
        };
        return Err(ctx.at(
            &from,
            "rounds",
            format!("a knockout's rounds follow from its bots (log2, rounded up): {fix}"),
        ));
    }
    let mut seeds = Vec::new();
    if let Some(s) = &raw.seeds {
        let at = |why: String| ctx.field(s.span(), "seeds", why);
        for name in s.get_ref() {
            let Some(i) = specs.iter().position(|b| &b.name == name) else {
                let why = format!("\"{name}\" is not one of the league's bots");
                return Err(match &flags.bots {
                    // The file's bot, left out by the flag.
                    Some(kept) if !kept.contains(name) => ctx.at(
                        &Source::Flag,
                        "bots",
                        format!(
                            "leaves out \"{name}\", which the file's `seeds` (line {}) names: a knockout's seeds name every bot once (keep it, or edit `seeds`)",
                            line_of(ctx.src, s.span().start)
                        ),
                    ),
                    _ => at(why),
                });
            };
            if seeds.contains(&i) {
                return Err(at(format!("\"{name}\" is seeded twice")));
            }
            seeds.push(i);
        }
        if let Some(b) = specs.iter().enumerate().find(|(i, _)| !seeds.contains(i)) {
            return Err(at(format!(
                "bot \"{}\" has no seed: name every bot once, or leave `seeds` out to draw them from the league's seed",
                b.1.name
            )));
        }
    }
    let groups = match pick(&flags.games_per_pairing, &raw.games_per_pairing) {
        Some(g) => {
            let n = ctx.count(&g, "games_per_pairing", 2, 2000)?;
            if n % 2 != 0 {
                return Err(ctx.at(&g.1, "games_per_pairing", format!("must be even so that both bots of a match play each seat equally often, got {n}")));
            }
            (n / 2) as u32
        }
        None => 1,
    };
    let stage = seeding_stage(ctx, raw, specs.len())?;
    Ok((Format::Knockout { seeds, stage }, groups))
}

/// A knockout's first stage (`seeding = "swiss"`, `seeding_rounds`):
/// its Swiss rounds, 0 without one. With `seeds` it is refused: the
/// bracket is seeded by one or the other.
fn seeding_stage(ctx: &Ctx<'_>, raw: &RawFile, bots: usize) -> Result<u32, ConfigError> {
    let Some(s) = &raw.seeding else {
        if let Some(r) = &raw.seeding_rounds {
            return Err(ctx.field(
                r.span(),
                "seeding_rounds",
                "a first stage's rounds need seeding = \"swiss\"",
            ));
        }
        return Ok(0);
    };
    match s.get_ref().as_str() {
        "swiss" => {}
        "seeds" => {
            // A first stage's rounds without the stage: a slip, not a
            // setting to drop in silence.
            if let Some(r) = &raw.seeding_rounds {
                return Err(ctx.field(
                    r.span(),
                    "seeding_rounds",
                    format!(
                        "a first stage's rounds need seeding = \"swiss\"; the file's seeding = \"seeds\" (line {}) has no first stage: leave `seeding_rounds` out, or give seeding = \"swiss\"",
                        line_of(ctx.src, s.span().start)
                    ),
                ));
            }
            return Ok(0);
        }
        other => {
            return Err(ctx.field(
                s.span(),
                "seeding",
                format!("must be \"seeds\" (the default: `seeds`, or drawn from the league's seed) or \"swiss\" (a first Swiss stage), got \"{other}\"{}", meant(other, &["seeds", "swiss"])),
            ))
        }
    }
    if raw.seeds.is_some() {
        return Err(ctx.field(
            s.span(),
            "seeding",
            "seeding = \"swiss\" seeds the bracket by a first Swiss: leave `seeds` out",
        ));
    }
    Ok(match &raw.seeding_rounds {
        Some(r) => ctx.count(
            &(*r.get_ref(), Source::File(r.span())),
            "seeding_rounds",
            1,
            1000,
        )? as u32,
        None => (bots as f64).log2().ceil() as u32,
    })
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
    // A folder's name is at most 255 bytes on Linux's file systems: a
    // longer one would pass here and fail at the first file written.
    if s.len() > MAX_NAME {
        return Err(ctx.field(
            n.span(),
            "name",
            format!(
                "is {} characters long: at most {MAX_NAME} (it names the results folder)",
                s.len()
            ),
        ));
    }
    // Only dots (`.`, `..`) would name the folder itself or its parent,
    // not a folder of its own.
    if s.chars().all(|c| c == '.') || !s.chars().all(crate::results::is_file_safe) {
        return Err(ctx.field(
            n.span(),
            "name",
            "must be non-empty, use only ASCII letters (a to z, A to Z), digits, '-', '_' and '.', and not be dots alone (it names the results folder)",
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
        (Some(r), None) => ctx.count(r, "rounds", 1, MAX_ROUNDS)? as u32,
        (None, Some(g)) => {
            let n = ctx.count(g, "games_per_pairing", 2, 2 * MAX_ROUNDS)?;
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
    let startup = pick(&flags.startup_ms, &t.startup_ms);
    let watchdog = pick(&flags.watchdog_ms, &t.watchdog_ms);
    let increment = pick(&flags.increment_ms, &t.increment_ms);
    let time = TimeSettings {
        startup_ms: startup.as_ref().map_or(d.startup_ms, |(v, _)| *v),
        decision_ms: flags.decision_ms.or(t.decision_ms).unwrap_or(d.decision_ms),
        base_ms: flags.base_ms.or(t.base_ms).unwrap_or(d.base_ms),
        increment_ms: increment.as_ref().map_or(d.increment_ms, |(v, _)| *v),
        watchdog_ms: watchdog.as_ref().map_or(d.watchdog_ms, |(v, _)| *v),
    };
    let zero = [
        (
            watchdog,
            "watchdog_ms",
            "must be positive: every game has a wall-clock watchdog",
        ),
        (
            startup,
            "startup_ms",
            "must be positive: it is the time a bot has to answer its hello",
        ),
    ];
    // The flag by its name; the file's key at its line.
    let at = |from: &Source, key: &str, why: &str| match from {
        Source::Flag => ctx.at(from, key, why),
        Source::File(_) => ctx.at(from, &format!("time_control.{key}"), why),
    };
    for (picked, key, why) in zero {
        if let Some((0, from)) = picked {
            return Err(at(&from, key, why));
        }
    }
    // An increment is added to a per-game clock: without one it would be
    // ignored without a word.
    if let Some((1.., from)) = &increment {
        if time.base_ms == 0 {
            // Named as they were given: flags or the file's keys.
            let (base, inc, decision) = match from {
                Source::Flag => ("--base-ms", "--increment-ms", "--decision-ms"),
                Source::File(_) => ("base_ms", "increment_ms", "decision_ms"),
            };
            return Err(at(
                from,
                "increment_ms",
                &format!("is added to a per-game clock after each reply, and there is none: give {base} too (the clock at the start), or leave {inc} out (each decision then has {decision})"),
            ));
        }
    }
    Ok(time)
}

/// `openings_file` and `openings_order`: the book, read and checked
/// against the league's variants (`league` is its variants, ply cap and
/// seed). A flag's path is the working directory's, the file's its
/// folder's.
fn book_section(
    ctx: &Ctx<'_>,
    (file, order): (&Option<Spanned<String>>, &Option<Spanned<String>>),
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
    let (path, from) = match (&flags.openings_file, file) {
        (Some(p), _) => (p.clone(), Source::Flag),
        (None, Some(p)) if !p.get_ref().trim().is_empty() => {
            (base.join(p.get_ref()), Source::File(p.span()))
        }
        (None, Some(p)) => (PathBuf::new(), Source::File(p.span())),
        (None, None) => return match order {
            Some((_, from)) => Err(ctx.at(
                &from,
                "openings_order",
                "orders the lines of an openings book: give `openings_file` (--openings-file) too",
            )),
            None => Ok(None),
        },
    };
    if path.as_os_str().is_empty() {
        return Err(ctx.at(
            &from,
            "openings_file",
            "is empty: name the book's file, or leave the setting out for random openings",
        ));
    }
    let (variants, max_plies, seed) = league;
    let order = order.map(|o| o.0).unwrap_or_default();
    // A book that cannot be read is told at the setting that names it.
    Book::load(&path, order, variants, max_plies, seed)
        .map(Some)
        .map_err(|e| match e {
            BookError::Read { .. } => ctx.at(&from, "openings_file", e.to_string()),
            e => e.into(),
        })
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
        let known: Vec<&str> = bots.iter().map(|b| b.name.as_str()).collect();
        return Err(ctx.at(
            &from,
            "gauntlet",
            match crate::text::closest(&g, known.iter().copied()) {
                Some(c) => format!("`{g}` is not one of the league's bots; did you mean `{c}`?"),
                None => format!(
                    "`{g}` is not one of the league's bots ({})",
                    known.join(", ")
                ),
            },
        ));
    }
    Ok(Some(g))
}

/// `[sprt]` or `--sprt`: only for a league of two bots with a 2-player
/// variant.
fn sprt_section(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<RawSprt>>,
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
        (None, Some(c)) => (sprt_of_file(ctx, c.get_ref())?, Source::File(c.span())),
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

/// The `[sprt]` table's test, a bad key named at its line as the file's
/// other fields are (`elo1` for an `elo0` not below it).
fn sprt_of_file(ctx: &Ctx<'_>, r: &RawSprt) -> Result<SprtConfig, ConfigError> {
    use crate::ratings::sprt::{SprtError, DEFAULT_ERROR_RATE};
    let rate = |v: &Option<Spanned<f64>>| v.as_ref().map_or(DEFAULT_ERROR_RATE, |v| *v.get_ref());
    SprtConfig::new(
        *r.elo0.get_ref(),
        *r.elo1.get_ref(),
        rate(&r.alpha),
        rate(&r.beta),
        r.model,
    )
    .map_err(|e| {
        let key = match &e {
            SprtError::EloRange { key, .. } | SprtError::ErrorRate { key, .. } => *key,
            SprtError::BadNumber { key, .. } if key == "elo0" => "elo0",
            _ => "elo1",
        };
        let span = match key {
            "elo0" => Some(r.elo0.span()),
            "alpha" => r.alpha.as_ref().map(Spanned::span),
            "beta" => r.beta.as_ref().map(Spanned::span),
            _ => Some(r.elo1.span()),
        };
        let span = span.unwrap_or_else(|| r.elo1.span());
        ctx.field(span, &format!("sprt.{key}"), e.to_string())
    })
}

/// `[limits]`: the flags first, then the file's; each checked where it
/// came from, with the same bounds.
fn limits_section(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<RawLimits>>,
    flags: &RunSettings,
) -> Result<LimitSettings, ConfigError> {
    // A file's value is checked at its own line, not the table's.
    let limit =
        |flag: Option<i64>, file: fn(&RawLimits) -> Option<&Spanned<i64>>, name: &str, max: i64| {
            let given = match (flag, raw) {
                (Some(n), _) => Some((n, Source::Flag, name.to_string())),
                (None, Some(l)) => file(l.get_ref()).map(|n| {
                    (
                        *n.get_ref(),
                        Source::File(n.span()),
                        format!("limits.{name}"),
                    )
                }),
                (None, None) => None,
            };
            given
                .map(|(n, from, field)| ctx.count(&(n, from), &field, 1, max).map(|n| n as u64))
                .transpose()
        };
    Ok(LimitSettings {
        memory_mb: limit(
            flags.memory_mb,
            |l| l.memory_mb.as_ref(),
            "memory_mb",
            LimitSettings::MAX_MB.cast_signed(),
        )?,
        processes: limit(
            flags.processes,
            |l| l.processes.as_ref(),
            "processes",
            LimitSettings::MAX_PROCESSES.cast_signed(),
        )?,
        cpus: limit(
            flags.cpus,
            |l| l.cpus.as_ref(),
            "cpus",
            i64::from(LimitSettings::MAX_CPUS),
        )?
        .map(|n| n as u32),
        file_size_mb: limit(
            flags.file_size_mb,
            |l| l.file_size_mb.as_ref(),
            "file_size_mb",
            LimitSettings::MAX_MB.cast_signed(),
        )?,
    })
}

/// The results folder ([`output_of`]); one that cannot be one (a file on
/// its way to it) is refused where it was given: the flag, the file's
/// `output` (its line), or the default.
fn output_section(
    ctx: &Ctx,
    flags: &RunSettings,
    in_file: Option<&Spanned<String>>,
    base: &Path,
    name: &str,
) -> Result<PathBuf, ConfigError> {
    let file = in_file.map(|o| o.get_ref().as_str());
    let output = output_of(flags.output.as_ref(), file, base, name);
    let Some(why) = not_a_folder(&output) else {
        return Ok(output);
    };
    Err(match (flags.output.is_some(), in_file) {
        (true, _) => ctx.at(&Source::Flag, "output", why),
        (false, Some(o)) => ctx.at(&Source::File(o.span()), "output", why),
        (false, None) => ctx.at(
            &Source::Flag,
            "output",
            format!("the default results folder: {why}"),
        ),
    })
}

/// Why `dir` cannot be a results folder: it, or the nearest of its
/// parents that is there, is a file (`-o games.csv`, `output =
/// "notes.txt/x"`). `None` when it is a folder or can be made one.
fn not_a_folder(dir: &Path) -> Option<String> {
    let there = crate::files::file_in_the_way(dir)?;
    Some(match there == dir {
        true => format!(
            "{} is a file, not a folder: give the folder the league's results go to",
            dir.display()
        ),
        false => format!(
            "{} cannot be a folder: {} is a file",
            dir.display(),
            there.display()
        ),
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

/// The results folder: `--output`, else the file's `output` (relative to
/// the file's folder `base`), else `results/NAME` of the project; in the
/// working folder without a `./`, as messages name it.
fn output_of(flag: Option<&PathBuf>, file: Option<&str>, base: &Path, name: &str) -> PathBuf {
    match (flag, file) {
        (Some(o), _) => o.clone(),
        (None, Some(o)) if base == Path::new(".") => PathBuf::from(o),
        (None, Some(o)) => base.join(o),
        (None, None) => default_results_dir(base).join(name),
    }
}

/// `results/` of the project; in the working folder without a `./`, as
/// the messages name it (`results/match-a-vs-b`, not `./results/...`).
fn default_results_dir(base: &Path) -> PathBuf {
    let project = project_dir(base);
    if project == Path::new(".") {
        return PathBuf::from("results");
    }
    project.join("results")
}

fn project_dir(base: &Path) -> PathBuf {
    // A file named without a folder (`arena run lad.toml` in its own
    // folder) is in the working folder: by its name too, so that
    // `tournaments/lad.toml` from the project and `lad.toml` from
    // `tournaments/` mean one results folder, not two.
    if base.as_os_str().is_empty() || base == Path::new(".") {
        if let Ok(here) = std::env::current_dir() {
            if here.file_name().is_some_and(|n| n == "tournaments") {
                return here.parent().map(Path::to_path_buf).unwrap_or(here);
            }
        }
        return base.to_path_buf();
    }
    if base.file_name().is_some_and(|n| n == "tournaments") {
        base.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        base.to_path_buf()
    }
}
