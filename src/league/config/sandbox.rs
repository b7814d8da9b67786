//! The sandbox of a tournament file: the top-level `sandbox = "on"|"off"`
//! of older files, or a `[sandbox]` table (`mode`, `expose`,
//! `build_network`, `build_seconds`, `build_mb`, `build_files`,
//! `uid_range`); `--sandbox` overrides
//! the mode.

use super::ctx::{pick, ConfigError, Ctx, RunSettings, Source};
use crate::bot::Sandbox;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The highest user id plus one that a `uid_range` may reach: 2^32 - 2
/// (`(uid_t) -1` is "no user", and -2 is the overflow user of many
/// kernels' namespaces).
const UID_END: u64 = 4_294_967_294;

/// What the sandbox of every bot is given beyond its mode
/// ([`super::Tournament::sandbox`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Extra paths shown read-only to every bot: absolute, existing when
    /// the file was read (`expose`; relative ones are taken from the
    /// league file's folder).
    pub expose: Vec<PathBuf>,
    /// Whether the bots' build commands may use the network
    /// (`build_network`, default false).
    pub build_network: bool,
    /// How long each bot's build may take (`build_seconds`, default
    /// [`DEFAULT_BUILD_SECONDS`]).
    pub build_seconds: Option<u64>,
    /// The most a build's folder may hold, MiB (`build_mb`; default
    /// [`DEFAULT_BUILD_MB`], [`LADDER_BUILD_MB`] in a ladder): the size of
    /// the tmpfs it is built in (docs/security.md, "Builds").
    pub build_mb: Option<u64>,
    /// The most files and folders a build's folder may hold
    /// (`build_files`; default [`DEFAULT_BUILD_FILES`],
    /// [`LADDER_BUILD_FILES`] in a ladder): that tmpfs's inodes.
    pub build_files: Option<u64>,
    /// The user ids the sandboxes may map to: the first and how many
    /// (`uid_range = [first_uid, count]`), or none given.
    pub uid_range: Option<(u32, u32)>,
}

/// `sandbox` as written: a mode string (older files) or a table.
pub(super) enum RawSandbox {
    Mode(Spanned<String>),
    Table(RawSandboxTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSandboxTable {
    mode: Option<Spanned<String>>,
    #[serde(default)]
    expose: Vec<Spanned<String>>,
    #[serde(default)]
    build_network: bool,
    build_seconds: Option<Spanned<i64>>,
    build_mb: Option<Spanned<i64>>,
    build_files: Option<Spanned<i64>>,
    uid_range: Option<Spanned<Vec<i64>>>,
}

impl<'de> Deserialize<'de> for RawSandbox {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawSandbox;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"on\", \"off\" or a [sandbox] table")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawSandbox, E> {
                // The span is the key's value; the caller knows it.
                Ok(RawSandbox::Mode(Spanned::new(0..0, v.to_string())))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawSandbox, A::Error> {
                RawSandboxTable::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawSandbox::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// The mode (`--sandbox`, else the file's, else on) and the table's other
/// settings, each checked with the file line it came from.
pub(super) fn section(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<RawSandbox>>,
    flags: &RunSettings,
    base: &Path,
) -> Result<(Sandbox, SandboxSettings), ConfigError> {
    let file_mode = raw.and_then(|r| match r.get_ref() {
        RawSandbox::Mode(m) => Some(Spanned::new(r.span(), m.get_ref().clone())),
        RawSandbox::Table(t) => t.mode.clone(),
    });
    let mode = match pick(&flags.sandbox, &file_mode) {
        None => Sandbox::On,
        Some((s, from)) => mode_of(ctx, &s, &from)?,
    };
    let settings = match raw.map(Spanned::get_ref) {
        Some(RawSandbox::Table(t)) => SandboxSettings {
            expose: expose(ctx, &t.expose, base)?,
            build_network: t.build_network,
            build_seconds: t
                .build_seconds
                .as_ref()
                .map(|s| build_seconds(ctx, s))
                .transpose()?,
            build_mb: t
                .build_mb
                .as_ref()
                .map(|s| in_range(ctx, s, "sandbox.build_mb", 1..=1 << 20, "MiB"))
                .transpose()?,
            build_files: t
                .build_files
                .as_ref()
                .map(|s| in_range(ctx, s, "sandbox.build_files", 16..=100_000_000, "files"))
                .transpose()?,
            uid_range: t
                .uid_range
                .as_ref()
                .map(|r| uid_range(ctx, r))
                .transpose()?,
        },
        _ => SandboxSettings::default(),
    };
    Ok((mode, settings))
}

/// The build time limit a league gives when its file does not say.
pub const DEFAULT_BUILD_SECONDS: u64 = 600;
/// The build time limit a ladder gives when its file does not say: its
/// bots are strangers', and builds share a small pool (docs/ladder.md).
pub const LADDER_BUILD_SECONDS: u64 = 300;
/// The most a build's folder may hold (MiB) in a league, when its file
/// does not say.
pub const DEFAULT_BUILD_MB: u64 = crate::bot::Quota::LEAGUE.bytes >> 20;
/// The same in a ladder.
pub const LADDER_BUILD_MB: u64 = crate::bot::Quota::LADDER.bytes >> 20;
/// The most files and folders a build's folder may hold in a league, when
/// its file does not say.
pub const DEFAULT_BUILD_FILES: u64 = crate::bot::Quota::LEAGUE.files;
/// The same in a ladder.
pub const LADDER_BUILD_FILES: u64 = crate::bot::Quota::LADDER.files;

/// A whole number of `unit` in `range`, or an error at its line.
fn in_range(
    ctx: &Ctx<'_>,
    s: &Spanned<i64>,
    key: &str,
    range: std::ops::RangeInclusive<u64>,
    unit: &str,
) -> Result<u64, ConfigError> {
    match u64::try_from(*s.get_ref()) {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(ctx.field(
            s.span(),
            key,
            format!(
                "must be from {} to {} ({unit}), got {}",
                range.start(),
                range.end(),
                s.get_ref()
            ),
        )),
    }
}

/// `build_seconds`: from 1 s to a day.
fn build_seconds(ctx: &Ctx<'_>, s: &Spanned<i64>) -> Result<u64, ConfigError> {
    match u64::try_from(*s.get_ref()) {
        Ok(n @ 1..=86_400) => Ok(n),
        _ => Err(ctx.field(
            s.span(),
            "sandbox.build_seconds",
            format!("must be from 1 to 86400 (seconds), got {}", s.get_ref()),
        )),
    }
}

fn mode_of(ctx: &Ctx<'_>, s: &str, from: &Source) -> Result<Sandbox, ConfigError> {
    match s.trim() {
        "on" => Ok(Sandbox::On),
        "off" => Ok(Sandbox::Off),
        other => Err(ctx.at(
            from,
            "sandbox",
            format!("must be \"on\" or \"off\", got `{other}`"),
        )),
    }
}

/// `expose`: each path made absolute from the file's folder; one that does
/// not exist is an error at its line.
fn expose(
    ctx: &Ctx<'_>,
    paths: &[Spanned<String>],
    base: &Path,
) -> Result<Vec<PathBuf>, ConfigError> {
    paths
        .iter()
        .map(|p| {
            let given = base.join(p.get_ref());
            std::fs::canonicalize(&given).map_err(|e| {
                ctx.field(
                    p.span(),
                    "sandbox.expose",
                    format!("`{}`: {e}", given.display()),
                )
            })
        })
        .collect()
}

/// `uid_range = [first_uid, count]`: both positive, the range within the
/// user ids a namespace can map.
fn uid_range(ctx: &Ctx<'_>, r: &Spanned<Vec<i64>>) -> Result<(u32, u32), ConfigError> {
    let bad = |why: String| ctx.field(r.span(), "sandbox.uid_range", why);
    let [first, count] = r.get_ref().as_slice() else {
        return Err(bad(format!(
            "must be [first_uid, count], got {} number(s)",
            r.get_ref().len()
        )));
    };
    if *first <= 0 || *count <= 0 {
        return Err(bad(format!(
            "first_uid and count must be positive, got [{first}, {count}]"
        )));
    }
    let end = i128::from(*first) + i128::from(*count);
    if end > i128::from(UID_END) {
        return Err(bad(format!(
            "first_uid + count must be at most {UID_END}, got {end}"
        )));
    }
    // Both are below UID_END < 2^32 here.
    Ok((*first as u32, *count as u32))
}
