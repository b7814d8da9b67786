//! The `variants` key of a tournament file (game names or tables with
//! options), or `--variants`.

use super::ctx::{ConfigError, Ctx, RunSettings, Source};
use super::spec::{parse_variant, VariantSpec};
use crate::engine::{Variant, DEFAULT_MAX_PLIES};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    game: String,
    name: Option<String>,
    #[serde(default = "two")]
    players: usize,
    #[serde(default)]
    options: BTreeMap<String, toml::Value>,
}

fn two() -> usize {
    2
}

/// The default variants: all five games, Tricala as 2 players.
pub fn default_variants() -> Vec<VariantSpec> {
    Variant::ALL
        .iter()
        .map(|&v| VariantSpec {
            key: v.name().to_string(),
            variant: v,
            players: 2,
            options: BTreeMap::new(),
        })
        .collect()
}

/// The league's variants: `--variants`, else the file's list (no label
/// twice), else all five games.
pub(super) fn section(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<Vec<Spanned<toml::Value>>>>,
    flags: &RunSettings,
) -> Result<Vec<VariantSpec>, ConfigError> {
    if let Some(names) = &flags.variants {
        // The file's own variants, by the names its tables give them
        // (`kisolo6`), are named too; else a game's name.
        let from_file: Vec<VariantSpec> = match raw {
            Some(list) => list
                .get_ref()
                .iter()
                .map(|item| parse_variant_entry(ctx, item))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        let mut out = Vec::new();
        for v in names {
            let spec = match from_file.iter().find(|s| s.key == *v) {
                Some(s) => s.clone(),
                None => parse_variant(v).map_err(|e| {
                    let named: Vec<&str> = from_file
                        .iter()
                        .filter(|s| s.key != s.variant.name())
                        .map(|s| s.key.as_str())
                        .collect();
                    let e = match named.is_empty() {
                        true => e,
                        false => format!("{e}; the file's own: {}", named.join(", ")),
                    };
                    ctx.at(&Source::Flag, "variants", e)
                })?,
            };
            // As in the file: each game id would be played twice.
            if let Some(why) = twice(&out, &spec) {
                return Err(ctx.at(&Source::Flag, "variants", why));
            }
            out.push(spec);
        }
        if out.is_empty() {
            return Err(ctx.at(&Source::Flag, "variants", "the list is empty"));
        }
        return Ok(out);
    }
    let Some(list) = raw else {
        return Ok(default_variants());
    };
    let mut out: Vec<VariantSpec> = Vec::new();
    for item in list.get_ref() {
        let spec = parse_variant_entry(ctx, item)?;
        if let Some(why) = twice(&out, &spec) {
            return Err(ctx.field(item.span(), "variants", why));
        }
        out.push(spec);
    }
    if out.is_empty() {
        return Err(ctx.field(list.span(), "variants", "the list is empty"));
    }
    Ok(out)
}

/// Why `name` cannot label a variant of `game`, if it cannot: it names
/// the variant in game ids, games.csv and the tables, so it is a word of
/// letters, digits, `-`, `_` and `.` read as a name (not a number), and
/// not another game's name (whose rows it would be taken for).
fn name_problem(name: &str, game: Variant) -> Option<String> {
    if name.is_empty() {
        return Some("must not be empty".into());
    }
    if let Some(c) = name.chars().find(|&c| !crate::results::is_file_safe(c)) {
        return Some(format!(
            "`{}`: {c:?} is not allowed (ASCII letters, digits, `-`, `_` and `.` only: it is part of every game id)",
            name.escape_debug()
        ));
    }
    // It is a column's value in games.csv and the tables (as a bot's
    // name is): not a formula a spreadsheet would run, nor what R and
    // pandas read as a missing value, a boolean or a number.
    if crate::text::formula_lead(name).is_some() {
        return Some(format!(
            "`{name}` begins with `-`, which a spreadsheet opening games.csv would run as a formula"
        ));
    }
    if let Some(kind) = crate::text::csv_reads_as(name) {
        return Some(format!(
            "`{name}` is what R and pandas read in games.csv as {}, not as a name",
            kind.what()
        ));
    }
    if name.eq_ignore_ascii_case(crate::results::ALL_LABEL) || name.ends_with("-3p") {
        return Some(format!(
            "`{name}` names a table of the ratings (`all`: every variant; `X-3p`: the 3-player games of X)"
        ));
    }
    match parse_variant(name) {
        Ok(other) if other.variant != game => Some(format!(
            "`{name}` is the name of the game {}: this {}'s rows could not be told from its",
            other.variant.name(),
            game.name()
        )),
        _ => None,
    }
}

fn parse_variant_entry(
    ctx: &Ctx<'_>,
    item: &Spanned<toml::Value>,
) -> Result<VariantSpec, ConfigError> {
    let span = item.span();
    match item.get_ref() {
        toml::Value::String(s) => {
            parse_variant(s).map_err(|why| ctx.field(span.clone(), "variants", why))
        }
        toml::Value::Table(_) => {
            let raw: RawVariant =
                item.get_ref()
                    .clone()
                    .try_into()
                    .map_err(|e: toml::de::Error| {
                        ctx.field(
                            span.clone(),
                            "variants",
                            crate::text::plain_toml(e.message()),
                        )
                    })?;
            let variant: Variant = raw.game.parse().map_err(|e: crate::engine::EngineError| {
                ctx.field(span.clone(), "variants.game", e.to_string())
            })?;
            let options: BTreeMap<String, String> = raw
                .options
                .into_iter()
                .map(|(k, v)| {
                    let s = match v {
                        toml::Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (k, s)
                })
                .collect();
            if let Some(name) = &raw.name {
                if let Some(why) = name_problem(name, variant) {
                    return Err(ctx.field(span.clone(), "variants.name", why));
                }
            }
            let key = raw.name.unwrap_or_else(|| {
                let mut k = variant.name().to_string();
                for v in options.values() {
                    k.push_str(v);
                }
                k
            });
            // Validate the game settings now, not at the first game.
            let spec = VariantSpec {
                key,
                variant,
                players: raw.players,
                options,
            };
            crate::engine::Game::new(variant, &spec.settings(DEFAULT_MAX_PLIES))
                .map_err(|e| ctx.field(span.clone(), "variants", e.to_string()))?;
            Ok(spec)
        }
        other => Err(ctx.field(
            span,
            "variants",
            format!("expected a game name or a table, got {}", other.type_str()),
        )),
    }
}

/// `spec` is already in `out`: the same label, or one that differs only in
/// case (a book's line names its variant in any case, so it would go to
/// both).
fn twice(out: &[VariantSpec], spec: &VariantSpec) -> Option<String> {
    let label = spec.label();
    let other = out
        .iter()
        .map(VariantSpec::label)
        .find(|l| l.eq_ignore_ascii_case(&label))?;
    Some(if other == label {
        format!("variant `{label}` appears twice")
    } else {
        format!("variant `{label}` appears twice (as `{other}` before it: variant names differ by more than case)")
    })
}
