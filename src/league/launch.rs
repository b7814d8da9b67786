//! How a bot is started, built in one place for every command that starts
//! bots (`run`, `match`, `replay`, `bots`, `play`, `check-bot`): its command
//! (placeholders expanded), the sandbox mode, the limits (the league's or
//! the flags' over what its bot.toml asks for), the folder hidden from it
//! and where its stderr goes. A setting added here reaches them all.

use super::config::{BotSpec, Tournament};
use super::config::{
    DEFAULT_BUILD_FILES, DEFAULT_BUILD_MB, DEFAULT_BUILD_SECONDS, LADDER_BUILD_FILES,
    LADDER_BUILD_MB, LADDER_BUILD_SECONDS,
};
use crate::bot::{manifest, BotCommand, Building, Launch, LimitSettings, Quota, Sandbox};
use crate::referee::BotPlayer;
use std::path::{Path, PathBuf};

/// Where bots run: the same for every bot of a league or a command.
#[derive(Clone, Debug, Default)]
pub struct Room<'a> {
    pub sandbox: Sandbox,
    /// The league's `[limits]` or the command's flags; they override what
    /// a bot's bot.toml asks for.
    pub limits: LimitSettings,
    /// A folder the bots must not see (the results folder).
    pub hide: Option<&'a Path>,
    /// Paths every bot sees read-only besides its own view (`[sandbox]
    /// expose`).
    pub expose: &'a [PathBuf],
    /// The user ids bots run as when the referee is root (`[sandbox]
    /// uid_range`; none: the default range).
    pub uids: Option<(u32, u32)>,
    /// The bots may think while the others do (`ponder`); else each is
    /// paused while it is not its turn.
    pub ponder: bool,
    /// The bots' builds may use the network (`[sandbox] build_network`).
    pub build_network: bool,
    /// How long each build may take (`[sandbox] build_seconds`; none: the
    /// default).
    pub build_seconds: Option<u64>,
    /// The most a build's folder may hold, MiB and files (`[sandbox]
    /// build_mb`, `build_files`; none: the defaults).
    pub build_mb: Option<u64>,
    pub build_files: Option<u64>,
    /// A ladder's room (its bots are strangers'): `limits`, or the
    /// defaults where it gives none, are the most a bot gets; its bot.toml
    /// may ask for less, never more ([`LimitSettings::capping`]).
    pub asks_at_most: bool,
}

impl<'a> Room<'a> {
    /// The room of league `t`: its sandbox and limits, its results folder
    /// hidden.
    pub fn of(t: &'a Tournament) -> Room<'a> {
        Room {
            sandbox: t.sandbox,
            limits: t.limits,
            hide: Some(&t.output),
            expose: &t.sandbox_settings.expose,
            uids: t.sandbox_settings.uid_range,
            ponder: t.ponder,
            build_network: t.sandbox_settings.build_network,
            build_seconds: t.sandbox_settings.build_seconds,
            build_mb: t.sandbox_settings.build_mb,
            build_files: t.sandbox_settings.build_files,
            asks_at_most: t.ladder.is_some(),
        }
    }

    /// The launch of `command`, whose bot.toml asks for `asks`, with its
    /// stderr appended to `log` (none: discarded).
    pub fn launch(&self, command: BotCommand, asks: LimitSettings, log: Option<PathBuf>) -> Launch {
        let mut launch = BotPlayer::launch(command).sandboxed(self.sandbox);
        launch.stderr_log = log;
        if let Some(dir) = self.hide {
            launch = launch.hiding(dir);
        }
        launch.expose = self.expose.to_vec();
        launch.uids = self.uids;
        launch.ponder = self.ponder;
        self.limits_for(asks).apply(&mut launch.limits);
        launch
    }

    /// The limits a bot whose bot.toml asks for `asks` runs under: the
    /// room's where it sets them; in a ladder's room, never above them.
    pub fn limits_for(&self, asks: LimitSettings) -> LimitSettings {
        match self.asks_at_most {
            true => self.limits.capping(asks),
            false => self.limits.or(asks),
        }
    }

    /// The launch of a league's bot entry.
    pub fn launch_bot(&self, spec: &BotSpec, log: Option<PathBuf>) -> Launch {
        self.launch(command(spec), spec.limits, log)
    }

    /// The launch of a bot entry's build, in its own folder (the build
    /// runs in a copy of it: see [`crate::bot::build`]), with its output
    /// kept for the error; `None` when the entry has no build.
    pub fn launch_build(&self, spec: &BotSpec) -> Option<Launch> {
        let argv = manifest::expand(spec.build.as_deref()?);
        let mut launch = self.launch(words(argv, spec.cwd.clone(), spec), spec.limits, None);
        launch.building = Some(Building {
            network: self.build_network,
            quota: self.build_quota(),
        });
        Some(launch)
    }

    /// How long each build may take: `[sandbox] build_seconds`, else the
    /// default, lower in a ladder (strangers' builds) than in a league.
    pub fn build_limit(&self) -> std::time::Duration {
        let default = match self.asks_at_most {
            true => LADDER_BUILD_SECONDS,
            false => DEFAULT_BUILD_SECONDS,
        };
        std::time::Duration::from_secs(self.build_seconds.unwrap_or(default))
    }

    /// What each build's folder may hold: `[sandbox] build_mb` and
    /// `build_files`, else the defaults, lower in a ladder than in a league.
    pub fn build_quota(&self) -> Quota {
        let (mb, files) = match self.asks_at_most {
            true => (LADDER_BUILD_MB, LADDER_BUILD_FILES),
            false => (DEFAULT_BUILD_MB, DEFAULT_BUILD_FILES),
        };
        Quota {
            bytes: self.build_mb.unwrap_or(mb) << 20,
            files: self.build_files.unwrap_or(files),
        }
    }
}

/// A bot entry's command, its placeholders (`{bin_dir}`, ...) expanded,
/// run from its built copy where its build made one.
pub fn command(spec: &BotSpec) -> BotCommand {
    let argv = manifest::expand(&spec.command);
    words(argv, run_folder(spec), spec)
}

/// The folder a bot entry runs in: the built copy of its folder where its
/// build made one (see [`crate::bot::build::built`]), else its folder.
pub fn run_folder(spec: &BotSpec) -> Option<PathBuf> {
    built_copy(spec).or_else(|| spec.cwd.clone())
}

/// The built copy of a bot entry with a build, if its build made one
/// (see [`crate::bot::build::built`]).
pub fn built_copy(spec: &BotSpec) -> Option<PathBuf> {
    spec.build
        .as_deref()
        .zip(spec.cwd.as_deref())
        .and_then(|(b, dir)| crate::bot::build::built(dir, &manifest::expand(b)))
}

fn words(argv: Vec<String>, cwd: Option<PathBuf>, spec: &BotSpec) -> BotCommand {
    BotCommand {
        program: argv.first().cloned().unwrap_or_default(),
        args: argv.get(1..).map(<[String]>::to_vec).unwrap_or_default(),
        cwd,
        env: spec.env.clone(),
    }
}
