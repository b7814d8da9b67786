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
    if !args.dir.is_dir() {
        let here = std::env::current_dir().unwrap_or_default();
        anyhow::bail!(
            "{}: no such folder: the bots are looked up in bots/ of the current folder; run arena from the folder that holds bots/ (the repository), or give --dir PATH/TO/bots",
            here.join(&args.dir).display()
        );
    }
    let (found, bad) = manifest::discover_all(&args.dir)?;
    for e in &bad {
        errln!("error: {e}");
    }
    // A template copied to start a bot keeps `template = true`, which
    // leaves it out of this list and of `bots = "all"`: said, not silent.
    for m in found.iter().filter(|m| m.template && !args.all) {
        if !is_shipped_template(m, &args.dir) {
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
        emitln!("the list of bots";"no bots under {}", args.dir.display());
        return Ok(match bad.is_empty() {
            true => ExitCode::SUCCESS,
            false => ExitCode::FAILURE,
        });
    }
    let mut failures = 0;
    emitln!("the list of bots";
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
        // A Ctrl-C during a check ends the list there (the check's bot is
        // gone with it).
        if !args.no_check && *crate::host::stop_signals().borrow() != 0 {
            emitln!("the list of bots"; "interrupted");
            return Ok(ExitCode::from(crate::host::stopped_exit_code()));
        }
        if why.is_some() {
            failures += 1;
        }
        emitln!("the list of bots";
            "{:<18} {:<10} {:<16} {:<7} {:<7} {}{}",
            m.name,
            crate::protocol::escape_line(&m.language),
            crate::protocol::escape_line(&m.author),
            builds,
            starts,
            crate::bot::shown_words(&m.command),
            remarks(&m)
        );
        if let Some(why) = why {
            emitln!("the list of bots";"    {why}");
        }
    }
    if !args.no_check {
        emitln!("the list of bots";
            "checked in the sandbox; limits: {}",
            crate::bot::sandbox::cgroup::mechanism()
        );
        emitln!("the list of bots";"walls: {}", crate::bot::sandbox::walls());
    }
    Ok(if failures > 0 || !bad.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What a row says after the command: a test bot, a template, and the
/// folder of a bot whose folder is not named as its bot.toml names it (a
/// copy, `cp -r bots/mybot bots/mybot-new`, which `arena match` names by
/// its folder): two copies are two rows that differ.
fn remarks(m: &manifest::Manifest) -> String {
    let mut said = Vec::new();
    match (m.broken, m.template) {
        (true, _) => said.push("broken: test bot".to_string()),
        (_, true) => said.push("template".to_string()),
        _ => {}
    }
    if m.dir.file_name().is_none_or(|f| *f != *m.name) {
        said.push(format!("folder {}", m.dir.display()));
    }
    match said.is_empty() {
        true => String::new(),
        false => format!("  ({})", said.join("; ")),
    }
}

/// Whether template `m` is one the repository ships, in its own place:
/// `DIR/templates/X` named `template-X`, or `DIR/sdk/X` named
/// `template-X-sdk` (DIR the bots folder). A copy elsewhere, or under
/// another folder with its original's name, is not, and gets the note.
fn is_shipped_template(m: &manifest::Manifest, bots_dir: &std::path::Path) -> bool {
    let Ok(rel) = m.dir.strip_prefix(bots_dir) else {
        return false;
    };
    let parts: Vec<_> = rel.iter().filter_map(|p| p.to_str()).collect();
    match parts.as_slice() {
        ["templates", x] => m.name == format!("template-{x}"),
        ["sdk", x] => m.name == format!("template-{x}-sdk"),
        _ => false,
    }
}

/// Builds (if it has a build command) and starts one bot.
fn check(spec: &BotSpec) -> (String, String, Option<String>) {
    let bots = std::slice::from_ref(spec);
    let scratch = match crate::files::own_temp_folder() {
        Ok(dir) => Layout::new(dir.join("bots-check")),
        Err(e) => return ("no".into(), "-".into(), Some(e.to_string())),
    };
    let room = crate::league::launch::Room {
        sandbox: Sandbox::On,
        limits: Default::default(),
        hide: Some(scratch.root()),
        ..Default::default()
    };
    let builds = match (
        &spec.build,
        build::build_bots(bots, &room, Some(&crate::host::stop_signals()), &mut |_| {}),
    ) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every template the repository ships is recognised as shipped (no
    /// note on a fresh clone); a copy of one is not.
    #[test]
    fn the_shipped_templates_get_no_note_and_their_copies_do() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots");
        let (found, _) = manifest::discover_all(&dir).unwrap();
        let templates: Vec<_> = found.iter().filter(|m| m.template).collect();
        assert!(templates.len() >= 5, "{templates:?}");
        for m in &templates {
            assert!(is_shipped_template(m, &dir), "{}", m.dir.display());
            let mut copy = (*m).clone();
            copy.dir = dir.join("mybot");
            assert!(!is_shipped_template(&copy, &dir));
            copy.dir = m.dir.with_file_name("mine");
            assert!(!is_shipped_template(&copy, &dir));
        }
    }

    /// A bot in a folder not named as the bot says its folder; one named
    /// as its folder says nothing more.
    #[test]
    fn a_row_names_the_folder_where_it_is_not_the_name() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots");
        let (found, _) = manifest::discover_all(&dir).unwrap();
        let m = found.iter().find(|m| m.name == "random-python").unwrap();
        assert_eq!(remarks(m), "");
        let mut copy = m.clone();
        copy.dir = dir.join("random-python-new");
        assert_eq!(remarks(&copy), format!("  (folder {})", copy.dir.display()));
    }
}
