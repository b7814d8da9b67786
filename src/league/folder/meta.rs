//! `league.json`: what ties a results folder to one schedule, read in one
//! place for every command.

use super::layout::{io, Layout, StoreError};
use super::rows::write_atomically;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What `league.json` records about the schedule the folder belongs to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LeagueMeta {
    pub name: String,
    /// A hash of the schedule (ids, seats, variants, settings, seed).
    pub fingerprint: String,
    pub games: usize,
    #[serde(default)]
    pub shard: Option<String>,
    /// The league's bots, in order (absent in folders of older versions).
    #[serde(default)]
    pub bots: Vec<String>,
    /// Whether the bots ran in their sandbox (`false`: `sandbox = "off"`).
    #[serde(default)]
    pub sandbox: Option<bool>,
    /// The settings the games were played under, as the league started
    /// (absent in folders of older versions).
    #[serde(default)]
    pub played_under: Option<PlayedUnder>,
    /// The whole league's fingerprint, the same in each of its shards: the
    /// tournament's settings, its bots and variants, and the `arena`
    /// version. A shard whose siblings carry another one is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<String>,
    /// The league's SPRT settings (a [`crate::ratings::sprt::SprtConfig`]
    /// as JSON), when it stops on one: `arena status` and the report tell
    /// its verdict from them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<serde_json::Value>,
    /// The command that resumes the league, when it is not `arena run
    /// FILE` (a match has no file: its own command line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// The openings book's hash and order (`Book::describe`), when the
    /// league has one: a changed book is another schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openings_book: Option<String>,
    /// The settings that make the schedule, by their file key (`rounds`,
    /// `seed`, `openings`, `max_plies`, `variants`, `gauntlet`): a resume
    /// under other ones is refused naming each, with its flag (absent in
    /// folders of older versions).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub schedule: std::collections::BTreeMap<String, String>,
    /// The `--bots` list the run was given (none: the file's bots, all of
    /// them): a resume under another says so (absent in folders of older
    /// versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bots_flag: Option<Vec<String>>,
    /// Set when this league is the folder's with only its Swiss's `rounds`
    /// changed (worked out on each run from the file, never written).
    #[serde(skip)]
    pub rounds_change: Option<RoundsChange>,
}

/// A Swiss's `rounds` changed since its folder's league started, all else
/// the same: more extend the league, fewer are refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundsChange {
    /// The folder's fingerprint (its league with `was` rounds).
    pub fingerprint: String,
    pub was: u32,
    pub now: u32,
}

/// The flag of a schedule setting that [`LeagueMeta::schedule`] keeps.
fn flag_of(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

/// What a league's games were played under, beyond the schedule: a resume
/// under another time control is refused, a changed bot command is warned
/// about.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PlayedUnder {
    /// `decision_ms`, `base_ms`, `increment_ms`, `startup_ms`,
    /// `watchdog_ms`.
    pub time_control: std::collections::BTreeMap<String, u64>,
    /// Each bot's command line, by name.
    pub commands: std::collections::BTreeMap<String, Vec<String>>,
    /// The `arena` version that started the league.
    pub arena_version: String,
    /// Each bot's program files (what its command names, after its build)
    /// with their SHA-256, by bot name (absent in folders of older
    /// versions).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub programs: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// Each bot's other settings, by name: its environment (the names,
    /// and a hash of the values, which are not kept) and its limits
    /// (absent in folders of older versions).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, String>,
    /// What changed in the bots' commands and settings on a resume, each
    /// with when (UTC): `commands` and `settings` above are the latest,
    /// these the way to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
}

/// The `league.json` of the folder `dir`, if it has a readable one.
pub fn read_meta(dir: &Path) -> Option<LeagueMeta> {
    let text = std::fs::read_to_string(Layout::new(dir).league_json()).ok()?;
    serde_json::from_str(&text).ok()
}

/// What a resume changes in how the league's games are played from now
/// on (the sandbox turned off or on, a bot's command or settings), with
/// its warnings: league.json notes it only once the resume plays a game
/// ([`super::ResultsDir::note_played_under`]), so that a resume that
/// plays none leaves its facts as they were.
#[derive(Debug)]
pub(super) struct Noted {
    pub meta: LeagueMeta,
    pub warnings: Vec<String>,
}

/// What [`settle`] found: its warnings, the changes of how games are
/// played for league.json to note once a game is played ([`Noted`]), and
/// the league.json still to write once the rows pass their check (the
/// folder had games and no league.json: written at once, one this
/// command's rows then refused would bind the folder to this command).
pub(super) struct Settled {
    pub warnings: Vec<String>,
    pub noted: Option<Noted>,
    pub unwritten: Option<LeagueMeta>,
}

/// Writes `meta` to the folder's league.json, or, when there is one,
/// checks that a resume of it is the same league (same schedule and time
/// control; a changed bot command is a warning) and notes a run without
/// the sandbox ([`Settled`]).
pub(super) fn settle(layout: &Layout, meta: &LeagueMeta) -> Result<Settled, StoreError> {
    let settled = |warnings, noted| Settled {
        warnings,
        noted,
        unwritten: None,
    };
    let dir = layout.root();
    let meta_path = layout.league_json();
    let mut warnings = Vec::new();
    match std::fs::read_to_string(&meta_path) {
        Ok(text) => {
            let old: LeagueMeta =
                crate::text::json_from_str(&text).map_err(|e| StoreError::Mismatch {
                    path: meta_path.clone(),
                    why: format!(
                        "unreadable ({e}). Mend it; or, to resume with the league's own file and flags, delete it and run that command again (league.json is written anew from them, and every row of games.csv is checked against their schedule; the time control its games were played under can no longer be compared); or move the folder away to start afresh"
                    ),
                })?;
            if old.fingerprint != meta.fingerprint && !any_game_played(layout) {
                // Nothing was played under the old file (its bots could not
                // start, say): the folder is not bound to it.
                write_meta(&meta_path, meta)?;
                warnings.push(format!(
                    "{}: no game was played under the league file that made it; replaced by this one's",
                    meta_path.display()
                ));
                return Ok(settled(warnings, None));
            }
            let grown = meta
                .rounds_change
                .as_ref()
                .filter(|c| c.fingerprint == old.fingerprint);
            let mut old = match grown {
                Some(c) => extended(old, meta, c, &meta_path, dir)?,
                None => old,
            };
            refuse_other_league(&old, meta, &meta_path, dir)?;
            refuse_other_bots(&old, meta, &meta_path, dir)?;
            // How the games are played from now on: noted once one is.
            let mut noted = Noted {
                meta: old.clone(),
                warnings: Vec::new(),
            };
            let sandbox_changed = note_sandbox(&mut noted.meta, meta, &mut noted.warnings);
            let played_changed =
                compare_played_under(&mut noted.meta, meta, &meta_path, &mut noted.warnings)?;
            refuse_other_schedule(&old, meta, &meta_path, dir)?;
            // What league.json says from now on, written once at the end.
            let mut changed = false;
            if old.sprt != meta.sprt {
                if any_game_played(layout) {
                    return Err(StoreError::Mismatch {
                        path: meta_path.clone(),
                        why: other_sprt(&old, meta.sprt.as_ref(), dir),
                    });
                }
                // No game counted yet: the test is this run's.
                old.sprt = meta.sprt.clone();
                changed = true;
            }
            if let Some(c) = grown {
                changed = true;
                warnings.push(format!(
                    "league `{}`: its Swiss's `rounds` raised from {} to {}; the rounds played stay as they are, and the new ones are paired after them",
                    meta.name, c.was, c.now
                ));
            }
            if changed {
                write_meta(&meta_path, &old)?;
            }
            if sandbox_changed || played_changed {
                // The same changes, over what was just written.
                noted.meta.sprt = old.sprt;
                return Ok(settled(warnings, Some(noted)));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if any_game_played(layout) {
                warnings.push(format!(
                    "{}: missing, though games were played here: written anew from this command once its rows pass. Each row is checked against this command's schedule (game, variant, seats, seed and opening), but the time control and `max_plies` its games were played under cannot be compared: if they were other, the league mixes games of both",
                    meta_path.display()
                ));
                return Ok(Settled {
                    warnings,
                    noted: None,
                    unwritten: Some(meta.clone()),
                });
            }
            write_meta(&meta_path, meta)?
        }
        Err(e) => return Err(io(&meta_path)(e)),
    }
    Ok(settled(warnings, None))
}

/// The folder's league `old` extended to `meta`'s Swiss rounds (what
/// league.json says from now on), or the refusal of fewer rounds.
fn extended(
    old: LeagueMeta,
    meta: &LeagueMeta,
    c: &RoundsChange,
    meta_path: &Path,
    dir: &Path,
) -> Result<LeagueMeta, StoreError> {
    if c.now < c.was {
        return Err(StoreError::Mismatch {
            path: meta_path.to_path_buf(),
            why: format!(
                "the Swiss's `rounds` was {}, now {}: a Swiss's rounds may be raised on a resume, not lowered (its rounds paired so far would not all be the league's). Put back rounds = {} or more in the file (or --rounds), or, to start afresh, choose another `output` or move {} away",
                c.was,
                c.now,
                c.was,
                dir.display()
            ),
        });
    }
    Ok(LeagueMeta {
        fingerprint: meta.fingerprint.clone(),
        games: meta.games,
        league: meta.league.clone(),
        schedule: meta.schedule.clone(),
        // The command that raised them resumes it from now on.
        resume: meta.resume.clone().or(old.resume.clone()),
        ..old
    })
}

/// When a change is noted in league.json's `played_under.changes`: now,
/// UTC, to the second.
pub(super) fn change_time() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

pub(super) fn write_meta(meta_path: &Path, meta: &LeagueMeta) -> Result<(), StoreError> {
    let text = serde_json::to_string_pretty(meta).map_err(|e| StoreError::Mismatch {
        path: meta_path.to_path_buf(),
        why: e.to_string(),
    })?;
    write_atomically(meta_path, text.as_bytes())
}

/// True when games.csv holds a row (a line after its header).
fn any_game_played(layout: &Layout) -> bool {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(layout.games_csv()) else {
        return false;
    };
    std::io::BufReader::new(f)
        .lines()
        .skip(1)
        .any(|l| l.map_or(true, |l| !l.trim().is_empty()))
}

/// Another league's folder (another name, another schedule): said as
/// that, not as a change of this league's bots or settings.
fn refuse_other_league(
    old: &LeagueMeta,
    meta: &LeagueMeta,
    meta_path: &Path,
    dir: &Path,
) -> Result<(), StoreError> {
    if old.fingerprint == meta.fingerprint || old.name == meta.name {
        return Ok(());
    }
    let resume = match &old.resume {
        Some(command) => format!(" (it resumes with: {command})"),
        None => String::new(),
    };
    Err(StoreError::Mismatch {
        path: meta_path.to_path_buf(),
        why: format!(
            "this folder holds the results of `{}`{resume}, not of `{}`: give `{}` another `output` (or -o), or move {} away",
            old.name,
            meta.name,
            meta.name,
            dir.display()
        ),
    })
}

/// A league's bots changed: the results belong to another schedule.
fn refuse_other_bots(
    old: &LeagueMeta,
    meta: &LeagueMeta,
    meta_path: &Path,
    dir: &Path,
) -> Result<(), StoreError> {
    if old.fingerprint != meta.fingerprint && !old.bots.is_empty() && old.bots != meta.bots {
        let added: Vec<&str> = meta
            .bots
            .iter()
            .filter(|b| !old.bots.contains(b))
            .map(String::as_str)
            .collect();
        let gone: Vec<&str> = old
            .bots
            .iter()
            .filter(|b| !meta.bots.contains(b))
            .map(String::as_str)
            .collect();
        let list = |v: &[&str]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        // The same bots in another order: the order makes the pairings
        // and the seats, so it is another schedule too.
        let reordered = added.is_empty() && gone.is_empty();
        let changed = match reordered {
            true => format!(
                "the bots' order changed since league `{}` started (it was {}; now {}), so these results belong to another schedule (the order of the bots makes the pairings and seats)",
                old.name,
                old.bots.join(", "),
                meta.bots.join(", ")
            ),
            false => format!(
                "the bots changed since league `{}` started (new: {}; gone: {}), so these results belong to another schedule",
                old.name,
                list(&added),
                list(&gone)
            ),
        };
        let in_order = old
            .bots
            .iter()
            .map(|b| format!("\"{b}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let again = format!("--bots {}", old.bots.join(","));
        let afresh = format!(
            "to start a new league instead, choose another `output` or move {} away",
            dir.display()
        );
        // What changed, said as it was given: the command line of a
        // match, the `--bots` list, or the file.
        let why = match (&old.resume, &old.bots_flag, &meta.bots_flag) {
            (Some(command), _, _) if !command.starts_with("arena run ") => format!(
                "{changed}: another match's. It resumes with the command that started it: {command}; to start afresh, give another --output or move {} away",
                dir.display()
            ),
            (_, _, Some(now)) => format!(
                "{changed}: this run's `--bots {}` keeps other bots of the file than the league's. To resume, give the league's: `{again}`; {afresh}",
                now.join(",")
            ),
            (_, Some(was), None) => format!(
                "{changed}: the league was started with `--bots {}`, and this run gives no `--bots`, so every bot of the file would play. To resume, give `{again}` again; {afresh}",
                was.join(",")
            ),
            (_, None, None) if reordered => format!(
                "{changed}. To resume, list the bots in the file in the league's order again: bots = [{in_order}]; {afresh}"
            ),
            (_, None, None) => format!(
                "{changed}. To resume, give the file the league's bots again: with `bots = \"all\"`, move the new bot folders out of bots/ (or list the league's bots by name: bots = [{in_order}]), or keep only them with `{again}`; {afresh}"
            ),
        };
        return Err(StoreError::Mismatch {
            path: meta_path.to_path_buf(),
            why,
        });
    }
    Ok(())
}

/// Once a run was without its sandbox, the folder says so (`sandbox`:
/// false from then on), and when the sandbox was turned off or on again is
/// noted in `played_under.changes`. Returns whether `old` changed.
fn note_sandbox(old: &mut LeagueMeta, meta: &LeagueMeta, warnings: &mut Vec<String>) -> bool {
    let sandbox = match (old.sandbox, meta.sandbox) {
        (Some(a), Some(b)) => Some(a && b),
        (a, b) => a.or(b),
    };
    let before = old.sandbox;
    let mut changed = sandbox != before;
    old.sandbox = sandbox;
    // Whether the last run had it: the last change noted, else the
    // folder's own flag before this run.
    let last_on = old.played_under.as_ref().and_then(|u| {
        u.changes.iter().rev().find_map(|c| {
            (c.contains(SANDBOX_OFF) || c.contains(SANDBOX_ON)).then(|| c.contains(SANDBOX_ON))
        })
    });
    let was_on = last_on.unwrap_or(before != Some(false));
    let now_on = meta.sandbox != Some(false);
    if let (Some(under), true) = (old.played_under.as_mut(), was_on != now_on) {
        let what = if now_on { SANDBOX_ON } else { SANDBOX_OFF };
        if !now_on {
            warnings.push(format!(
                "league `{}`: {what}, since its last run: league.json says from now on that its games were not all played in the sandbox",
                old.name
            ));
        }
        under.changes.push(format!("{}: {what}", change_time()));
        changed = true;
    }
    changed
}

/// The changes noted when a resume turns the sandbox off or on again.
const SANDBOX_OFF: &str = "the bots run without their sandbox (--sandbox off)";
const SANDBOX_ON: &str = "the bots run in their sandbox again";

/// A changed time control is refused; a changed bot command or setting is
/// a warning, said once: `old` takes the new ones, with the change and its
/// time noted (returns whether it did, for league.json to be written).
fn compare_played_under(
    old: &mut LeagueMeta,
    meta: &LeagueMeta,
    meta_path: &Path,
    warnings: &mut Vec<String>,
) -> Result<bool, StoreError> {
    let name = old.name.clone();
    if let (Some(was), Some(now)) = (old.played_under.as_mut(), &meta.played_under) {
        let changed: Vec<String> = was
            .time_control
            .iter()
            .filter(|(k, v)| now.time_control.get(*k) != Some(v))
            .map(|(k, v)| {
                format!(
                    "{k} {v} -> {}",
                    now.time_control.get(k).copied().unwrap_or(0)
                )
            })
            .collect();
        if old.fingerprint == meta.fingerprint && !changed.is_empty() {
            return Err(StoreError::Mismatch {
                path: meta_path.to_path_buf(),
                why: format!(
                    "the time control changed since league `{name}` started ({}): its games so far were played under the old one. Resume with the same settings (the flags or the file's [time_control]), or choose another `output` for a new league",
                    changed.join(", ")
                ),
            });
        }
        let at = change_time();
        let mut noted = Vec::new();
        for (bot, cmd) in &now.commands {
            if let Some(before) = was.commands.get(bot).filter(|b| *b != cmd) {
                noted.push(format!("bot `{bot}`'s command: {before:?} -> {cmd:?}"));
            }
        }
        // Folders of older versions kept no settings: nothing to compare.
        for (bot, set) in &now.settings {
            if let Some(before) = was.settings.get(bot).filter(|b| *b != set) {
                noted.push(format!("bot `{bot}`'s settings: {before} -> {set}"));
            }
        }
        for n in &noted {
            warnings.push(format!(
                "league `{name}`: {n}, since its last run: its games from now on ({at} on) are played with the new one (league.json notes the change)"
            ));
            was.changes.push(format!("{at}: {n}"));
        }
        if !noted.is_empty() || was.settings.is_empty() && !now.settings.is_empty() {
            was.commands = now.commands.clone();
            was.settings = now.settings.clone();
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the league of `meta` is an `arena match` (its resume command is
/// its own command line, not `arena run FILE`).
fn is_match(meta: &LeagueMeta) -> bool {
    meta.resume
        .as_deref()
        .is_some_and(|c| !c.starts_with("arena run "))
}

/// How schedule setting `key` was given `was` when the league of `old`
/// started, as its user can give it again: the file's key or its flag,
/// or, for a match, its own flag (`rounds` is `--games`); empty for a
/// match's setting that no flag of `arena match` gives.
fn how_it_was_set(old: &LeagueMeta, key: &str, was: &str) -> String {
    if !is_match(old) {
        if let Some(said) = swiss_setting(old, key, was) {
            return said;
        }
        // No gauntlet is no `--gauntlet` (a bot may be called `none`).
        if key == "gauntlet" && was == "none" {
            return " (the league was started without a gauntlet: leave out the file's `gauntlet` and --gauntlet)".to_string();
        }
        return format!(
            " (the file's `{key}`, or {} {was} as it was started)",
            flag_of(key)
        );
    }
    match key {
        // A round is one seat-swap group (2 games) per variant.
        "rounds" => {
            let variants = old
                .schedule
                .get("variants")
                .map_or(0, |v| v.split(',').count());
            match was.parse::<u64>() {
                Ok(rounds) if variants > 0 => format!(
                    " (the match's --games: --games {} as it was started)",
                    rounds * 2 * variants as u64
                ),
                _ => " (the match's --games: give the number it was started with)".to_string(),
            }
        }
        "seed" | "openings" | "variants" => {
            format!(" ({} {was} as it was started)", flag_of(key))
        }
        _ => String::new(),
    }
}

/// The format of the league of `old`, as league.json notes it
/// (`swiss, 4 rounds`, `knockout, seeded by a swiss of 2 rounds`, ...).
fn format_of(old: &LeagueMeta) -> &str {
    old.schedule
        .get("format")
        .map_or("round-robin", String::as_str)
}

/// A league's format as league.json's `format` notes it
/// ([`LeagueMeta::noted_format`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotedFormat {
    RoundRobin,
    /// `swiss, N rounds`.
    Swiss {
        rounds: u32,
    },
    /// `knockout`, `knockout, seeds A, B, ...` (the file's order of the
    /// bots, by name) or `knockout, seeded by a swiss of N rounds`.
    Knockout {
        seeds: Option<Vec<String>>,
        stage: u32,
    },
}

impl LeagueMeta {
    /// The format league.json notes, read back (`arena status`, a resume
    /// that raises a Swiss's rounds); `None` for a note that does not read.
    pub fn noted_format(&self) -> Option<NotedFormat> {
        let count = |s: &str| s.split(' ').find_map(|w| w.parse::<u32>().ok());
        Some(match format_of(self) {
            "round-robin" => NotedFormat::RoundRobin,
            "knockout" => NotedFormat::Knockout {
                seeds: None,
                stage: 0,
            },
            f if f.starts_with("swiss, ") => NotedFormat::Swiss { rounds: count(f)? },
            f if f.starts_with("knockout, seeded by a swiss") => NotedFormat::Knockout {
                seeds: None,
                stage: count(f)?,
            },
            f => NotedFormat::Knockout {
                seeds: Some(
                    f.strip_prefix("knockout, seeds ")?
                        .split(", ")
                        .map(String::from)
                        .collect(),
                ),
                stage: 0,
            },
        })
    }
}

/// A Swiss's or a knockout's schedule setting `key` as its file gives it:
/// there the schedule's `rounds` are each mini-match's seat-swap groups
/// (`games_per_pairing`, halved), and `format` notes the Swiss's rounds
/// (`rounds`) or the knockout's seeding; `None` for any other key or
/// league, said as for a round-robin.
fn swiss_setting(old: &LeagueMeta, key: &str, was: &str) -> Option<String> {
    let format = format_of(old);
    let paired = format.starts_with("swiss") || format.starts_with("knockout");
    match key {
        "rounds" if paired => Some(match was.parse::<u64>() {
            Ok(groups) => format!(
                " (the file's `games_per_pairing`, or --games-per-pairing {} as it was started)",
                groups * 2
            ),
            Err(_) => " (the file's `games_per_pairing`, or --games-per-pairing)".to_string(),
        }),
        "format" => {
            let rounds = |s: &str| {
                s.split(' ')
                    .find_map(|w| w.parse::<u64>().ok())
                    .map_or(String::new(), |n| n.to_string())
            };
            Some(match was {
                w if w.starts_with("swiss") => format!(
                    " (the file's format = \"swiss\" with `rounds`, or --rounds {} as it was started)",
                    rounds(w)
                ),
                w if w.starts_with("knockout, seeded by a swiss") => format!(
                    " (the file's format = \"knockout\" with seeding = \"swiss\" and seeding_rounds = {} as it was started)",
                    rounds(w)
                ),
                w if w.starts_with("knockout, seeds ") => format!(
                    " (the file's format = \"knockout\" with `seeds` in the order {} as it was started)",
                    &w["knockout, seeds ".len()..]
                ),
                w if w.starts_with("knockout") => " (the file's format = \"knockout\", its seeds drawn from the league's seed, as it was started)".to_string(),
                _ => " (the file's `format`: round-robin, the default, as it was started)".to_string(),
            })
        }
        _ => None,
    }
}

/// Another schedule: refused, with what league.json tells of the change.
fn refuse_other_schedule(
    old: &LeagueMeta,
    meta: &LeagueMeta,
    meta_path: &Path,
    dir: &Path,
) -> Result<(), StoreError> {
    if old.fingerprint != meta.fingerprint {
        // What league.json lets us name of the change.
        let mut seen = Vec::new();
        if old.games != meta.games {
            seen.push(format!(
                "{} games then, {} now: {}",
                old.games,
                meta.games,
                match (is_match(old), format_of(old)) {
                    (true, _) => "--games, --openings or --variants",
                    (false, f) if f.starts_with("swiss") => "rounds, games_per_pairing or variants",
                    (false, f) if f.starts_with("knockout") => {
                        "games_per_pairing, the seeding or variants"
                    }
                    (false, _) => "rounds, openings or variants",
                }
            ));
        }
        seen.extend(variant_changes(old, meta));
        for (key, was) in old.schedule.iter().filter(|(k, _)| !is_variant_key(k)) {
            if let Some(now) = meta.schedule.get(key).filter(|now| *now != was) {
                // A Swiss's or knockout's `rounds` here are each mini-match's
                // seat-swap groups: said as the file's `games_per_pairing`.
                let f = format_of(old);
                let paired = f.starts_with("swiss") || f.starts_with("knockout");
                let (shown, was_said, now_said) = match (
                    paired && key == "rounds",
                    was.parse::<u64>(),
                    now.parse::<u64>(),
                ) {
                    (true, Ok(w), Ok(n)) => (
                        "games_per_pairing".to_string(),
                        (w * 2).to_string(),
                        (n * 2).to_string(),
                    ),
                    _ => (key.clone(), was.clone(), now.clone()),
                };
                seen.push(format!(
                    "`{shown}` was {was_said}, now {now_said}{}",
                    how_it_was_set(old, key, was)
                ));
            }
        }
        if old.openings_book != meta.openings_book {
            let book = |b: &Option<String>| b.clone().unwrap_or_else(|| "none".into());
            seen.push(format!(
                "the openings book (its lines or order) was {}, now {}",
                book(&old.openings_book),
                book(&meta.openings_book)
            ));
        }
        if !old.bots.is_empty() && old.bots != meta.bots {
            seen.push(format!(
                "the bots were {}, now {}",
                old.bots.join(", "),
                meta.bots.join(", ")
            ));
        }
        if seen.is_empty() && !old.schedule.keys().any(|k| is_variant_key(k)) {
            // A folder of an older version notes no variant's game and
            // options.
            seen.push("league.json, of an older arena, does not note the variants' games and options: if nothing else changed, a `variants` entry's game or options may have".to_string());
        }
        let seen = match seen.is_empty() {
            true => String::new(),
            false => format!(": {}", seen.join("; ")),
        };
        // A match has no file: its command line is what changed.
        let why = match &old.resume {
            Some(command) if command.starts_with("arena run ") => format!(
                "these results belong to a different schedule (the tournament file, its bots, seed or variants, or the flags over them changed since league `{}` started{seen}). It was started with: {command}; resume it with the same file and flags, or, to start afresh, choose another `output` or move {} away",
                old.name,
                dir.display()
            ),
            Some(command) => format!(
                "these results belong to another match (its bots, games, variants, seed or openings changed since `{}` started{seen}). It resumes with the command that started it: {command}; to start afresh, give another --output or move {} away",
                old.name,
                dir.display()
            ),
            None => format!(
                "these results belong to a different schedule (the tournament file, its bots, seed or variants changed since league `{}` started{seen}). Resume needs the same file; to start afresh, choose another `output` or move {} away",
                old.name,
                dir.display()
            ),
        };
        return Err(StoreError::Mismatch {
            path: meta_path.to_path_buf(),
            why,
        });
    }
    Ok(())
}

const VARIANT_KEY: &str = LeagueMeta::VARIANT_KEY;

fn is_variant_key(key: &str) -> bool {
    key.starts_with(VARIANT_KEY)
}

/// The variants of both `old` and `meta` (by their key) whose game or
/// options changed, said as the file gives them.
fn variant_changes(old: &LeagueMeta, meta: &LeagueMeta) -> Vec<String> {
    old.schedule
        .iter()
        .filter_map(|(k, was)| Some((k.strip_prefix(VARIANT_KEY)?, was)))
        .filter_map(|(variant, was)| {
            let now = meta.schedule.get(&format!("{VARIANT_KEY}{variant}"))?;
            (now != was).then(|| {
                format!(
                    "variant `{variant}` was {was}, now {now} (its entry in the file's `variants`: its `game` and `options`)"
                )
            })
        })
        .collect()
}

/// An SPRT said as `--sprt` takes it (`elo0=0,elo1=5,alpha=0.05,...`,
/// `SprtConfig`'s own form), from league.json's JSON of it.
fn sprt_spec(sprt: &serde_json::Value) -> String {
    match serde_json::from_value::<crate::ratings::sprt::SprtConfig>(sprt.clone()) {
        Ok(c) => c.to_string(),
        Err(_) => sprt.to_string(),
    }
}

/// The settings of two SPRTs that differ: `elo1 was 50, now 30`.
fn sprt_changes(was: &serde_json::Value, now: &serde_json::Value) -> Vec<String> {
    let settings = |v: &serde_json::Value| {
        let c: crate::ratings::sprt::SprtConfig = serde_json::from_value(v.clone()).ok()?;
        Some([
            ("elo0", c.elo0.to_string()),
            ("elo1", c.elo1.to_string()),
            ("alpha", c.alpha.to_string()),
            ("beta", c.beta.to_string()),
            ("model", c.model.to_string()),
        ])
    };
    let (Some(was), Some(now)) = (settings(was), settings(now)) else {
        return Vec::new();
    };
    was.iter()
        .zip(&now)
        .filter(|(a, b)| a.1 != b.1)
        .map(|((k, v), (_, n))| format!("{k} was {v}, now {n}"))
        .collect()
}

/// Why a resume of the league of `old` under the SPRT `now` (none: no
/// SPRT) is refused: an SPRT's stop rule is the league's, from its first
/// game, and what `arena status` and the report tell of it.
fn other_sprt(old: &LeagueMeta, now: Option<&serde_json::Value>, dir: &Path) -> String {
    let matched = is_match(old);
    let given = |spec: &str| match matched {
        true => format!("--sprt {spec}"),
        false => format!("the file's [sprt] with these keys, or --sprt {spec}"),
    };
    let what = match (&old.sprt, now) {
        (Some(was), Some(now)) => {
            let changes = sprt_changes(was, now);
            let changes = match changes.is_empty() {
                true => format!("{} -> {}", sprt_spec(was), sprt_spec(now)),
                false => changes.join(", "),
            };
            format!(
                "the SPRT changed since league `{}` started ({changes}; it was started with {})",
                old.name,
                given(&sprt_spec(was))
            )
        }
        (Some(was), None) => format!(
            "league `{}` was started with an SPRT ({}) and this run has none, so it would play on past the test's stop",
            old.name,
            given(&sprt_spec(was))
        ),
        (None, Some(now)) => format!(
            "league `{}` was started without an SPRT and this run has one ({}): an SPRT's stop rule is a league's from its first game",
            old.name,
            sprt_spec(now)
        ),
        (None, None) => format!("the SPRT of league `{}` changed", old.name),
    };
    let resume = match (&old.sprt, &old.resume) {
        (_, Some(command)) if matched => {
            format!("use the command that started it: {command}")
        }
        (Some(_), _) => "give the SPRT it was started with".to_string(),
        (None, _) => "give none (no [sprt] in the file, no --sprt)".to_string(),
    };
    let folder = dir.display();
    format!(
        "{what}. The test is the league's from its first game: its games so far were counted under it, and `arena status` and the report tell its verdict. To resume, {resume}; to test these games under other bounds, `arena sprt {folder} --elo0 E0 --elo1 E1` (it plays none); to play a new test, start afresh: choose another `output` (or -o), or move {folder} away"
    )
}

impl LeagueMeta {
    /// The prefix of the [`LeagueMeta::schedule`] keys that note each
    /// variant's game and options (`variant kisolo6`: `kisolo, columns = 6`).
    pub const VARIANT_KEY: &'static str = "variant ";

    /// Refuses a resume of the league `name` in `dir` under the SPRT
    /// `sprt` (none: no SPRT) when its league.json notes another and a
    /// game was played: checked before a run decides whether the test
    /// already decided (a folder of another league is left to the run's
    /// own checks).
    pub fn check_sprt_of(
        dir: &Path,
        name: &str,
        sprt: Option<&serde_json::Value>,
    ) -> Result<(), StoreError> {
        let layout = Layout::new(dir);
        match read_meta(dir) {
            Some(old)
                if old.name == name && old.sprt.as_ref() != sprt && any_game_played(&layout) =>
            {
                Err(StoreError::Mismatch {
                    path: layout.league_json(),
                    why: other_sprt(&old, sprt, dir),
                })
            }
            _ => Ok(()),
        }
    }
}
