//! The checked entries of a league that the rest of the crate uses: how a
//! bot is started ([`BotSpec`]) and which game it plays ([`VariantSpec`],
//! read from a name by [`parse_variant`]).

use crate::bot::manifest::Manifest;
use crate::bot::LimitSettings;
use crate::engine::{Settings, Variant};
use std::collections::BTreeMap;
use std::path::PathBuf;

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
    /// What the league notes of its settings besides its command, to
    /// tell a change on a resume: its environment's names and a hash of
    /// its values (which may be secrets, and are not kept), and `limits`,
    /// the limits it runs under (the league's over its own).
    pub fn settings_note(&self, limits: crate::bot::LimitSettings) -> String {
        use sha2::Digest;
        let env = match self.env.is_empty() {
            true => "none".to_string(),
            false => {
                let mut h = sha2::Sha256::new();
                for (k, v) in &self.env {
                    h.update(format!("{k}={v}\n"));
                }
                let hex: String = h.finalize()[..6]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                let names: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
                format!("{} (values sha256 {hex}…)", names.join(", "))
            }
        };
        let l = &limits;
        let limits: Vec<String> = [
            ("memory_mb", l.memory_mb),
            ("processes", l.processes),
            ("cpus", l.cpus.map(u64::from)),
            ("file_size_mb", l.file_size_mb),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k} = {v}")))
        .collect();
        match limits.is_empty() {
            true => format!("env {env}; limits none"),
            false => format!("env {env}; limits {}", limits.join(", ")),
        }
    }

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

/// Parses a variant name as written in a league file or on the command
/// line: a game name, or `tricala3` (also `tricala-3p`) for 3-player Tricala.
pub fn parse_variant(s: &str) -> Result<VariantSpec, String> {
    let t = s.trim().to_ascii_lowercase();
    let (variant, players) = match t.as_str() {
        "tricala3" | "tricala-3p" => (Variant::Tricala, 3),
        "tricala2" => (Variant::Tricala, 2),
        _ => (
            t.parse::<Variant>().map_err(|_| {
                format!(
                    "unknown variant `{}` (known: filo, tricala, tricala3 (also tricala-3p: Tricala for 3 players), hackaback, kisolo, diffusion)",
                    s.trim()
                )
            })?,
            2,
        ),
    };
    Ok(VariantSpec {
        key: variant.name().to_string(),
        variant,
        players,
        options: BTreeMap::new(),
    })
}
