//! The `bots` key of a tournament file: bots/ folder names, `"all"`, or
//! tables with a name and a command; then `--bots` keeps some of them.

use super::ctx::{line_of, ConfigError, Ctx, RunSettings, Source};
use super::spec::BotSpec;
use crate::bot::manifest::{self, CommandValue, Manifest};
use crate::bot::LimitSettings;
use crate::text::look_of;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBot {
    name: String,
    command: CommandValue,
    #[serde(default)]
    args: Vec<String>,
    cwd: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    build: Option<CommandValue>,
    /// What the bot asks for in its sandbox, as a bot.toml's `[limits]`.
    #[serde(default)]
    limits: LimitSettings,
}

/// The keys of [`RawBot`].
const RAW_BOT_KEYS: [&str; 7] = ["name", "command", "args", "cwd", "env", "build", "limits"];

/// Where a league file's bot names are looked up, and whether the file
/// said so (`bots_dir`) or it is the default beside the file.
pub(super) struct BotsDir {
    pub dir: std::path::PathBuf,
    pub given: bool,
}

/// The league's bots: the file's `bots` (at least two, names unique), then
/// the ones `--bots` keeps.
pub(super) fn section(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<toml::Value>>,
    flags: &RunSettings,
    base: &Path,
    bots_dir: &BotsDir,
) -> Result<Vec<BotSpec>, ConfigError> {
    let Some(raw) = raw else {
        return Err(ConfigError::Missing {
            path: ctx.path.to_path_buf(),
            field: "bots".into(),
            why: "a league needs bots: `bots = \"all\"` (every folder in bots/), a list of bots/ folder names, or [[bots]] tables with name and command".into(),
        });
    };
    let mut bots = parse_bots(ctx, raw, base, bots_dir)?;
    if bots.len() < 2 {
        return Err(ctx.field(
            raw.span(),
            "bots",
            format!("a league needs at least 2 bots, found {}", bots.len()),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    // Each bot's log files are named after it, its name made safe for a
    // file name: two names made the same would share their logs.
    let mut files: std::collections::BTreeMap<String, &str> = Default::default();
    // An error of bot `i`: at its entry of the list (`"all"`: the key).
    let lines = item_lines(ctx);
    let at = |i: usize, why: String| {
        let line = match lines.get(i) {
            Some(l) if matches!(raw.get_ref(), toml::Value::Array(_)) => l.line,
            _ => line_of(ctx.src, raw.span().start),
        };
        ConfigError::Field {
            path: ctx.path.to_path_buf(),
            line,
            field: "bots".into(),
            why,
        }
    };
    let mut looks: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for (i, b) in bots.iter().enumerate() {
        if !seen.insert(b.name.clone()) {
            return Err(at(i, twice(&bots, i, &lines)));
        }
        if crate::results::CROSSTABLE_KEYS.contains(&b.name.as_str()) {
            return Err(at(
                i,
                format!(
                    "bot name `{}` is the name of one of crosstable.csv's fixed columns (`variant`, `bot`, then one column per bot, named after it): the two columns would share one name (pandas reads the bot's as `{}.1`); rename the bot",
                    b.name, b.name
                ),
            ));
        }
        if let Some(other) = looks.insert(look_of(&b.name), &b.name) {
            return Err(at(
                i,
                format!(
                    "bots `{other}` and `{}` look alike (the same letters, in another case or written with other Unicode code points): no table, log or command could tell them apart; rename one",
                    b.name
                ),
            ));
        }
        let file = crate::results::file_safe(&b.name);
        if let Some(other) = files.insert(file.clone(), &b.name) {
            return Err(at(
                i,
                format!(
                    "bots `{other}` and `{}` would share their log files (logs/{file}-wN.log): rename one (letters, digits, `-`, `_` and `.` are kept as they are, but a leading `.`, which would hide the files)",
                    b.name
                ),
            ));
        }
    }
    if let Some(names) = &flags.bots {
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return Err(ctx.at(
                    &Source::Flag,
                    "bots",
                    format!("`{n}` is named twice: a bot plays once in a league (give each once)"),
                ));
            }
            if !bots.iter().any(|b| &b.name == n) {
                let known: Vec<&str> = bots.iter().map(|b| b.name.as_str()).collect();
                let mean = match crate::text::closest(n, known.iter().copied()) {
                    Some(c) => format!("; did you mean `{c}`?"),
                    None => String::new(),
                };
                return Err(ctx.at(
                    &Source::Flag,
                    "bots",
                    format!(
                        "`{n}` is not a bot of this tournament (it has: {}){mean}",
                        known.join(", ")
                    ),
                ));
            }
        }
        bots.retain(|b| names.contains(&b.name));
        if bots.len() < 2 {
            return Err(ctx.at(&Source::Flag, "bots", "a league needs at least 2 bots"));
        }
    }
    Ok(bots)
}

/// Why bot `i` of `bots` is refused, its name being an earlier one's:
/// the same folder or table listed twice (`lines`, where each item of the
/// file's list is), or two that give the same name (where each is
/// written; a bot folder copied with its bot.toml keeps the name it had).
fn twice(bots: &[BotSpec], i: usize, lines: &[ItemLines]) -> String {
    let b = &bots[i];
    let first = bots.iter().position(|o| o.name == b.name).unwrap_or(i);
    if bots[first].origin.is_some() && bots[first].origin == b.origin {
        let line = |k: usize| lines.get(k).map(|l| l.line);
        let lines = match (line(first), line(i)) {
            (Some(x), Some(y)) if x == y => format!(", both on line {x}"),
            (Some(x), Some(y)) => format!(", lines {x} and {y}"),
            _ => String::new(),
        };
        return format!(
            "bot `{}` is listed twice (entries {} and {}{lines}): list each bot once",
            b.name,
            first + 1,
            i + 1
        );
    }
    let wheres: Vec<&str> = bots[..=i]
        .iter()
        .filter(|o| o.name == b.name)
        .filter_map(|o| o.origin.as_deref())
        .collect();
    let copied = match wheres.iter().any(|w| w.contains("bot.toml")) {
        true => "; a bot folder copied keeps its bot.toml's `name`: change it in the copy",
        false => "",
    };
    let wheres = match wheres.len() {
        0 => String::new(),
        _ => format!(" (named in {}{copied})", wheres.join(" and ")),
    };
    format!("bot name `{}` appears twice{wheres}", b.name)
}

/// Where an item of the file's `bots` list is written: its line, and the
/// line of each of its keys (a table's).
#[derive(Default)]
struct ItemLines {
    line: usize,
    keys: BTreeMap<String, usize>,
}

/// The lines of the items of the file's `bots` list (the value's own spans
/// are lost once it is a `toml::Value`): the file read again for them
/// alone, whichever form the list takes (`bots = [...]`, `[[bots]]`).
/// Empty if it cannot be.
fn item_lines(ctx: &Ctx<'_>) -> Vec<ItemLines> {
    #[derive(Deserialize)]
    struct Whole {
        bots: Vec<Spanned<Keys>>,
    }
    toml::from_str::<Whole>(ctx.src)
        .map(|w| {
            w.bots
                .iter()
                .map(|item| ItemLines {
                    line: line_of(ctx.src, item.span().start),
                    keys: item
                        .get_ref()
                        .0
                        .iter()
                        .map(|(k, v)| (k.clone(), line_of(ctx.src, v.span().start)))
                        .collect(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// An item of `bots` read for its keys' spans: a table's keys, nothing
/// for anything else.
struct Keys(BTreeMap<String, Spanned<serde::de::IgnoredAny>>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a bot")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Keys, A::Error> {
                let mut keys = BTreeMap::new();
                while let Some((k, v)) = m.next_entry::<String, Spanned<serde::de::IgnoredAny>>()? {
                    keys.insert(k, v);
                }
                Ok(Keys(keys))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Keys, A::Error> {
                while s.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Keys(BTreeMap::new()))
            }
            fn visit_str<E>(self, _: &str) -> Result<Keys, E> {
                Ok(Keys(BTreeMap::new()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Keys, E> {
                Ok(Keys(BTreeMap::new()))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Keys, E> {
                Ok(Keys(BTreeMap::new()))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Keys, E> {
                Ok(Keys(BTreeMap::new()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Keys, E> {
                Ok(Keys(BTreeMap::new()))
            }
        }
        d.deserialize_any(Visit)
    }
}

fn parse_bots(
    ctx: &Ctx<'_>,
    value: &Spanned<toml::Value>,
    base: &Path,
    bots_dir: &BotsDir,
) -> Result<Vec<BotSpec>, ConfigError> {
    let span = value.span();
    let from_manifest = BotSpec::from_manifest;
    match value.get_ref() {
        toml::Value::String(s) if s == "all" => {
            // No bots folder to read is this line's error; a bot.toml
            // there that does not load names its own file.
            let found = manifest::discover(&bots_dir.dir).map_err(|e| match e {
                manifest::ManifestError::Dir { .. } => ctx.field(
                    span,
                    "bots",
                    format!(
                        "\"all\" takes every bot of the bots folder, and {e} (set `bots_dir`, or list the bots)"
                    ),
                ),
                other => other.into(),
            })?;
            Ok(found
                .into_iter()
                .filter(|m| !m.broken && !m.template)
                .map(from_manifest)
                .collect())
        }
        toml::Value::String(s) => Err(ctx.field(
            span,
            "bots",
            format!("`{s}`: expected \"all\" or a list of bots"),
        )),
        toml::Value::Array(items) => {
            let mut lines = item_lines(ctx);
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                // Where it is written: else where the list is.
                let lines = match lines.get_mut(i) {
                    Some(l) => std::mem::take(l),
                    None => ItemLines {
                        line: line_of(ctx.src, span.start),
                        keys: BTreeMap::new(),
                    },
                };
                let at = Item { ctx, lines, i };
                out.push(match item {
                    toml::Value::String(folder) => at.folder_bot(folder, bots_dir)?,
                    toml::Value::Table(_) => at.command_bot(item, base)?,
                    other => {
                        return Err(at.error(
                            "",
                            format!(
                            "expected a bots/ folder name or a table with name and command, got {}",
                            other.type_str()
                        ),
                        ))
                    }
                });
            }
            Ok(out)
        }
        other => Err(ctx.field(
            span,
            "bots",
            format!("expected \"all\" or a list, got {}", other.type_str()),
        )),
    }
}

/// Where in a bot's table a value was refused, as `.env.X` or
/// `.command[2]` (`""`: the table itself).
fn value_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    path.iter()
        .map(|seg| match seg {
            Segment::Seq { index } => format!("[{index}]"),
            Segment::Map { key } => format!(".{key}"),
            Segment::Enum { variant } => format!(".{variant}"),
            Segment::Unknown => String::new(),
        })
        .collect()
}

/// Item `i` of a league file's `bots` list, for its errors.
struct Item<'a, 'c> {
    ctx: &'a Ctx<'c>,
    lines: ItemLines,
    i: usize,
}

impl Item<'_, '_> {
    /// An error of this item's `field` (`""`: the item itself; `.key` or
    /// `.key.more`: at the line of its key `key`), at its line.
    fn error(&self, field: &str, message: impl Into<String>) -> ConfigError {
        let key = field.trim_start_matches('.').split('.').next();
        let line = key
            .and_then(|k| self.lines.keys.get(k))
            .copied()
            .unwrap_or(self.lines.line);
        ConfigError::Field {
            path: self.ctx.path.to_path_buf(),
            line,
            field: format!("bots[{}]{field}", self.i),
            why: message.into(),
        }
    }

    /// A bot named by its folder under the bots folder: its bot.toml.
    fn folder_bot(&self, folder: &str, bots_dir: &BotsDir) -> Result<BotSpec, ConfigError> {
        let dir = bots_dir.dir.join(folder);
        if !dir.join(manifest::MANIFEST).is_file() {
            return Err(self.error("", no_such_bot(folder, bots_dir)));
        }
        let m = Manifest::load(&dir).map_err(|e| self.error("", e.to_string()))?;
        Ok(BotSpec::from_manifest(m))
    }

    /// A bot written in the league file as a table (name, command, ...).
    fn command_bot(&self, item: &toml::Value, base: &Path) -> Result<BotSpec, ConfigError> {
        let line = self.lines.line;
        // A date or a number would be read as its text, unasked.
        if let Some(name) = item.get("name").filter(|n| !n.is_str()) {
            return Err(self.error(".name", manifest::not_text("name", name)));
        }
        let raw: RawBot = serde_path_to_error::deserialize(item.clone()).map_err(
            |e: serde_path_to_error::Error<toml::de::Error>| {
                // A key it does not know is pointed at; else the value of
                // the wrong type (`.env.X`); else the entry.
                let unknown = self
                    .lines
                    .keys
                    .keys()
                    .find(|k| !RAW_BOT_KEYS.contains(&k.as_str()));
                let field = match unknown {
                    Some(k) => format!(".{k}"),
                    None => value_path(e.path()),
                };
                self.error(&field, crate::text::plain_toml(e.inner().message()))
            },
        )?;
        let mut command = raw
            .command
            .into_argv()
            .map_err(|why| self.error(".command", why))?;
        command.extend(raw.args);
        if command.is_empty() {
            return Err(self.error(".command", "is empty"));
        }
        if let Some(why) = manifest::command_problem(&command) {
            return Err(self.error(".command", why));
        }
        let build = raw
            .build
            .map(CommandValue::into_argv)
            .transpose()
            .map_err(|why| self.error(".build", why))?;
        if let Some(why) = build.as_deref().and_then(manifest::command_problem) {
            return Err(self.error(".build", why));
        }
        if let Some(why) = manifest::env_problem(&raw.env) {
            return Err(self.error(".env", why));
        }
        if let Some(why) = manifest::name_problem(&raw.name) {
            return Err(self.error(
                ".name",
                format!("`{}` {why}", crate::text::shown_name(&raw.name)),
            ));
        }
        if let Some(field) = raw.limits.zero() {
            return Err(self.error(&format!(".limits.{field}"), "must be at least 1"));
        }
        if let Some((field, n, max)) = raw.limits.too_high() {
            return Err(self.error(
                &format!(".limits.{field}"),
                format!("must be between 1 and {max}, got {n}"),
            ));
        }
        Ok(BotSpec {
            name: raw.name,
            command,
            cwd: Some(
                raw.cwd
                    .map(|c| base.join(c))
                    .unwrap_or_else(|| base.to_path_buf()),
            ),
            env: raw.env.into_iter().collect(),
            build,
            limits: raw.limits,
            origin: Some(format!("{}:{line}", self.ctx.path.display())),
        })
    }
}

/// Why bot `name` of a league file is not in its bots folder: the name it
/// could have meant, the bots there, or (none there) where names are
/// looked up, relative to the file, and how to point elsewhere.
fn no_such_bot(name: &str, bots_dir: &BotsDir) -> String {
    let dir = &std::path::absolute(&bots_dir.dir).unwrap_or_else(|_| bots_dir.dir.clone());
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(manifest::MANIFEST).is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut msg = format!(
        "`{name}`: no bot folder {} (no {} there)",
        dir.join(name).display(),
        manifest::MANIFEST
    );
    match crate::text::closest(name, names.iter().map(String::as_str)) {
        Some(c) => msg.push_str(&format!("; did you mean `{c}`?")),
        None if names.is_empty() => {
            let whence = match bots_dir.given {
                true => format!("in the file's `bots_dir`, {}", dir.display()),
                false => format!(
                    "relative to the file: in bots/ beside it (or beside its tournaments/ folder), here {}, as the file sets no `bots_dir`",
                    dir.display()
                ),
            };
            msg.push_str(&format!(
                ". A league file's bot names are looked up {whence}: set `bots_dir = \"/path/to/mancala-arena/bots\"` in the file (a relative path is relative to the file), or give the bot as a table with its command (`{{ name = \"{name}\", command = [...] }}`)"
            ));
        }
        None => msg.push_str(&format!("; the bots there: {}", names.join(", "))),
    }
    msg
}
