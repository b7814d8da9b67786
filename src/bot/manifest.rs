//! `bots/<name>/bot.toml`: how a bot folder says how to build and start it.
//!
//! Owns reading the manifest and turning it into a [`BotCommand`]; it does
//! not build or start anything.
//!
//! ```toml
//! name = "random-python"
//! author = "mancala-arena"
//! language = "python"
//! command = ["python3", "bot.py"]      # run in the bot's folder
//! build = ["make"]                     # optional, run in the bot's folder
//! broken = false                       # optional; true: never in leagues
//! ```

use super::BotCommand;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file name of a manifest inside a bot folder.
pub const MANIFEST: &str = "bot.toml";

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Manifest {
    pub name: String,
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub language: String,
    pub command: Vec<String>,
    #[serde(default)]
    pub build: Option<Vec<String>>,
    /// A deliberately misbehaving bot (tests only): excluded from leagues.
    #[serde(default)]
    pub broken: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("bad manifest {path}: {source}")]
    Parse {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("bad manifest {path}: `command` is empty")]
    EmptyCommand { path: PathBuf },
}

impl Manifest {
    /// Reads `dir/bot.toml`.
    pub fn load(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|source| ManifestError::Read {
            path: path.clone(),
            source,
        })?;
        let m: Manifest = toml::from_str(&text).map_err(|source| ManifestError::Parse {
            path: path.clone(),
            source,
        })?;
        if m.command.is_empty() {
            return Err(ManifestError::EmptyCommand { path });
        }
        Ok(m)
    }

    /// The start command, run in `dir` (the bot's folder).
    pub fn command(&self, dir: &Path) -> BotCommand {
        let mut c = BotCommand::from_words(&self.command).unwrap_or_default();
        c.cwd = Some(dir.to_path_buf());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_bots_have_manifests() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots");
        for name in ["random-python", "random-js", "random-rust"] {
            let m = Manifest::load(&root.join(name)).unwrap();
            assert_eq!(m.name, name);
            assert!(!m.broken);
            let c = m.command(&root.join(name));
            assert_eq!(c.cwd.as_deref(), Some(root.join(name).as_path()));
        }
    }
}
