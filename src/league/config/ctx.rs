//! Reading a tournament file: its errors (each naming the file, the line
//! and the field, or the flag), the command line's settings laid over it,
//! and where each value came from.

use super::book::BookError;
use crate::bot::manifest;
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
pub(super) enum Source {
    /// The file, at this byte range.
    File(std::ops::Range<usize>),
    /// A command-line flag.
    Flag,
}

/// A setting's value: the flag's when given, else the file's.
pub(super) fn pick<T: Clone>(flag: &Option<T>, file: &Option<Spanned<T>>) -> Option<(T, Source)> {
    match (flag, file) {
        (Some(v), _) => Some((v.clone(), Source::Flag)),
        (None, Some(f)) => Some((f.get_ref().clone(), Source::File(f.span()))),
        (None, None) => None,
    }
}

/// The line (1-based) of byte offset `at` in `src`.
pub(super) fn line_of(src: &str, at: usize) -> usize {
    src.as_bytes()[..at.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

pub(super) struct Ctx<'a> {
    pub(super) path: &'a Path,
    pub(super) src: &'a str,
}

impl Ctx<'_> {
    pub(super) fn field(
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
    pub(super) fn at(&self, from: &Source, field: &str, why: impl Into<String>) -> ConfigError {
        match from {
            Source::File(span) => self.field(span.clone(), field, why),
            Source::Flag => ConfigError::Flag {
                flag: format!("--{}", field.replace('_', "-")),
                why: why.into(),
            },
        }
    }

    pub(super) fn count(
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
