//! `arena bots`: list the bots found under bots/, and check that each builds
//! and starts (answers the hello).

use crate::bot::manifest;
use crate::bot::Sandbox;
use crate::league::config::{BotSpec, TimeSettings};
use crate::league::folder::Layout;
use crate::league::{build, runner};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct BotsArgs {
    /// The bots folder.
    #[arg(long, default_value = "bots")]
    pub dir: PathBuf,
    /// Only list the manifests; do not build or start anything.
    #[arg(long)]
    pub no_check: bool,
    /// Include the misbehaving test bots (`broken = true`) and the
    /// templates (`template = true`, which need their compilers).
    #[arg(long)]
    pub all: bool,
}

pub fn run(args: BotsArgs) -> anyhow::Result<ExitCode> {
    let (found, bad) = manifest::discover_all(&args.dir)?;
    for e in &bad {
        errln!("error: {e}");
    }
    // A template copied to start a bot keeps `template = true`, which
    // leaves it out of this list and of `bots = "all"`: said, not silent.
    for m in found.iter().filter(|m| m.template && !args.all) {
        let shipped = m
            .dir
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "templates");
        if !shipped {
            errln!(
                "note: {} (`{}`) says `template = true`, so it is not listed here nor in `bots = \"all\"`: if it is a copy of a template, delete that line from its bot.toml (and give it a `name` of its own)",
                m.dir.display(),
                m.name
            );
        }
    }
    let shown: Vec<_> = found
        .into_iter()
        .filter(|m| args.all || (!m.broken && !m.template))
        .collect();
    if shown.is_empty() {
        outln!("no bots under {}", args.dir.display());
        return Ok(match bad.is_empty() {
            true => ExitCode::SUCCESS,
            false => ExitCode::FAILURE,
        });
    }
    let mut failures = 0;
    outln!(
        "{:<18} {:<10} {:<16} {:<7} {:<7} command",
        "name",
        "language",
        "author",
        "builds",
        "starts"
    );
    for m in shown {
        let spec = BotSpec::from_manifest(m.clone());
        let (builds, starts, why) = if args.no_check {
            ("-".to_string(), "-".to_string(), None)
        } else {
            check(&spec)
        };
        if why.is_some() {
            failures += 1;
        }
        outln!(
            "{:<18} {:<10} {:<16} {:<7} {:<7} {}{}",
            m.name,
            m.language,
            m.author,
            builds,
            starts,
            m.command.join(" "),
            match (m.broken, m.template) {
                (true, _) => "  (broken: test bot)",
                (_, true) => "  (template)",
                _ => "",
            }
        );
        if let Some(why) = why {
            outln!("    {why}");
        }
    }
    if !args.no_check {
        outln!(
            "checked in the sandbox; limits: {}",
            crate::bot::sandbox::cgroup::mechanism()
        );
        outln!("walls: {}", crate::bot::sandbox::walls());
    }
    Ok(if failures > 0 || !bad.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Builds (if it has a build command) and starts one bot.
fn check(spec: &BotSpec) -> (String, String, Option<String>) {
    let bots = std::slice::from_ref(spec);
    let scratch = Layout::new(std::env::temp_dir().join("arena-bots-check"));
    let room = crate::league::launch::Room {
        sandbox: Sandbox::On,
        limits: Default::default(),
        hide: Some(scratch.root()),
        ..Default::default()
    };
    let builds = match (&spec.build, build::build_bots(bots, &room, &mut |_| {})) {
        (_, Err(e)) => return ("no".into(), "-".into(), Some(e.to_string())),
        (None, Ok(())) => "-".to_string(),
        (Some(_), Ok(())) => "yes".to_string(),
    };
    let startup_ms = TimeSettings::default().startup_ms;
    match runner::check_bots_start(bots, startup_ms, &scratch, &room) {
        Ok(()) => (builds, "yes".into(), None),
        Err(e) => (builds, "no".into(), Some(e.to_string())),
    }
}
