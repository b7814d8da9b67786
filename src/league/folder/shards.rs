//! The shard folders of one league (`shard-K-of-N` side by side) and the
//! check that they belong together.

use super::layout::{Layout, StoreError};
use super::meta::{read_meta, LeagueMeta};
use crate::league::schedule::Shard;
use std::path::{Path, PathBuf};

/// The shard folders beside `dir` (`shard-K-of-N` in its parent), with
/// their `league.json`, `dir` itself left out.
pub fn sibling_shards(dir: &Path) -> Vec<(PathBuf, LeagueMeta)> {
    let Some(parent) = dir.parent() else {
        return Vec::new();
    };
    shard_folders(parent)
        .into_iter()
        .filter(|(p, _)| p.file_name() != dir.file_name())
        .collect()
}

/// The folders in `parent` named as shards (`shard-K-of-N`), by name.
pub fn shard_dirs(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(Shard::of_folder_name)
                .is_some()
        })
        .collect();
    out.sort();
    out
}

/// The shard folders in `parent` (`shard-K-of-N`) that have a readable
/// `league.json`, by name.
pub fn shard_folders(parent: &Path) -> Vec<(PathBuf, LeagueMeta)> {
    shard_dirs(parent)
        .into_iter()
        .filter_map(|p| read_meta(&p).map(|m| (p, m)))
        .collect()
}

/// Refuses to start shard `meta` in `dir` when a sibling shard belongs to
/// another league: another tournament file, bot list or `arena` version
/// (their `league` fingerprints differ), or another shard count.
pub fn check_siblings(dir: &Path, meta: &LeagueMeta) -> Result<(), StoreError> {
    // The folder that holds the shards is no league's own results folder:
    // a shard of it would play again games that folder has.
    if let Some(parent) = dir.parent() {
        if let Some(there) = read_meta(parent) {
            let json = Layout::new(parent).league_json();
            let why = match there.shard.as_deref() {
                Some(k) => format!(
                    "{} is itself the folder of shard {k} of league `{}`: a sharded run's `output` is the league's folder, which holds a folder per shard (shard-K-of-N). Give that folder (its parent), or another `output`",
                    parent.display(),
                    there.name
                ),
                None => format!(
                    "{} holds league `{}` unsharded (its league.json and games.csv): a sharded run would play its games again in a folder inside it. Resume it without --shard, or give the sharded run another `output`",
                    parent.display(),
                    there.name
                ),
            };
            return Err(StoreError::Mismatch { path: json, why });
        }
    }
    for (path, other) in sibling_shards(dir) {
        if let Some(what) = what_differs(&other, meta) {
            return Err(StoreError::Mismatch {
                path: Layout::new(&path).league_json(),
                why: format!(
                    "shard {} of league `{}` was started with {what}; the shards of one league must be run from the same file, bots and arena. Run this shard as the others were, or give it another `output`",
                    other.shard.as_deref().unwrap_or("?"),
                    other.name
                ),
            });
        }
    }
    Ok(())
}

/// The shards of the sharded league whose folder is `parent`, as every
/// command that reads them gathers them: exactly its `shard-K-of-N`
/// folders, by name, refused when those with a league.json are not one
/// league's (another split, or another `league` id: a shard copied in
/// from another league). `notes`: folders there whose name is near a
/// shard's (`shard-1-of-3.bak`, `old-shard-1`) and that hold a games.csv,
/// left out.
pub fn league_shards(parent: &Path) -> Result<Gathered, StoreError> {
    check_one_league(&shard_folders(parent))?;
    let exact = shard_dirs(parent);
    let notes = std::fs::read_dir(parent)
        .map(|entries| {
            let mut near: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| !exact.contains(p) && Layout::new(p).games_csv().is_file())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.to_ascii_lowercase().contains("shard"))
                })
                .collect();
            near.sort();
            near.into_iter()
                .map(|p| format!(
                    "{} is not read as a shard of the league (a shard's folder is named exactly shard-K-of-N): its games are left out",
                    p.display()
                ))
                .collect()
        })
        .unwrap_or_default();
    Ok(Gathered { dirs: exact, notes })
}

/// A sharded league's shard folders, as [`league_shards`] gathers them.
#[derive(Debug)]
pub struct Gathered {
    /// The `shard-K-of-N` folders, by name.
    pub dirs: Vec<PathBuf>,
    /// Folders beside them named near a shard, left out.
    pub notes: Vec<String>,
}

/// Refuses `shards` (folders, each with its league.json) that are not all
/// of one league, naming two folders and what differs.
pub fn check_one_league(shards: &[(PathBuf, LeagueMeta)]) -> Result<(), StoreError> {
    let Some((first, meta)) = shards.first() else {
        return Ok(());
    };
    for (path, other) in &shards[1..] {
        if let Some(what) = what_differs(other, meta) {
            return Err(StoreError::Mismatch {
                path: Layout::new(path).league_json(),
                why: format!(
                    "{} (shard {} of league `{}`) and {} (shard {} of league `{}`) are not shards of one league: the second (there) was started with {what} than the first (here). Read each league's shards apart; a shard copied from another league's folder does not belong in this one",
                    first.display(),
                    meta.shard.as_deref().unwrap_or("?"),
                    meta.name,
                    path.display(),
                    other.shard.as_deref().unwrap_or("?"),
                    other.name
                ),
            });
        }
    }
    Ok(())
}

/// Whether league.json's `a` and `b` are of one league: two shards of it
/// (the same `league` id, which each shard notes, and the same split), or
/// else the same schedule (`fingerprint`): a shard's folder and its
/// league's unsharded run are two leagues' results of the same games.
pub fn one_league(a: &LeagueMeta, b: &LeagueMeta) -> bool {
    match (&a.league, &b.league, &a.shard, &b.shard) {
        (Some(_), Some(_), Some(_), Some(_)) => what_differs(a, b).is_none(),
        _ => a.fingerprint == b.fingerprint,
    }
}

/// How shard `other` (there) is of another league than `meta` (here),
/// worded as `another bot list (...)`; `None` when they are of one: the
/// same split and the same `league` id (where both note one).
fn what_differs(other: &LeagueMeta, meta: &LeagueMeta) -> Option<String> {
    let count = |m: &LeagueMeta| {
        m.shard
            .as_deref()
            .and_then(|s| s.split_once('/'))
            .map(|(_, n)| n.to_string())
    };
    if count(other) != count(meta) {
        return Some(format!(
            "another split (shard {} there, {} here): one league is split one way",
            other.shard.as_deref().unwrap_or("?"),
            meta.shard.as_deref().unwrap_or("?")
        ));
    }
    let (Some(theirs), Some(ours)) = (&other.league, &meta.league) else {
        return None;
    };
    if theirs == ours {
        return None;
    }
    let version = |m: &LeagueMeta| {
        m.played_under
            .as_ref()
            .map(|p| p.arena_version.clone())
            .unwrap_or_default()
    };
    Some(if other.bots != meta.bots {
        format!(
            "another bot list ({} there, {} here)",
            other.bots.join(", "),
            meta.bots.join(", ")
        )
    } else if version(other) != version(meta) {
        format!(
            "another arena version ({} there, {} here)",
            version(other),
            version(meta)
        )
    } else {
        let mut what = match differences(other, meta).as_slice() {
            [] => "another tournament file (its settings, bots' commands or variants differ)"
                .to_string(),
            seen => format!("another tournament file ({})", seen.join("; ")),
        };
        // Its league id is of how it started; its commands, the latest.
        let changes = other.played_under.as_ref().map(|p| p.changes.as_slice());
        if let Some(changes @ [_, ..]) = changes {
            what.push_str(&format!(
                " (that shard's league.json notes changes since it started, which its league id does not follow, and is compared here as it is now: {})",
                changes.join("; ")
            ));
        }
        what
    })
}

/// What league.json's of two shards tell apart: their schedule settings
/// (`rounds`, `seed`, ..., each variant's game and options), time control,
/// bots' commands and openings book, as `` `rounds` 3 there, 4 here ``.
/// Empty when what differs is not noted there (the bots' environment or
/// limits, the sandbox's settings).
fn differences(there: &LeagueMeta, here: &LeagueMeta) -> Vec<String> {
    use std::collections::BTreeMap;
    fn compare<V: PartialEq>(
        what: &str,
        there: &BTreeMap<String, V>,
        here: &BTreeMap<String, V>,
        show: impl Fn(&V) -> String,
        out: &mut Vec<String>,
    ) {
        let keys: std::collections::BTreeSet<&String> = there.keys().chain(here.keys()).collect();
        for k in keys {
            let (a, b) = (there.get(k), here.get(k));
            if a != b {
                let said = |v: Option<&V>| v.map_or("none".to_string(), &show);
                out.push(format!("{what}`{k}` {} there, {} here", said(a), said(b)));
            }
        }
    }
    let mut out = Vec::new();
    compare("", &there.schedule, &here.schedule, |v| v.clone(), &mut out);
    if let (Some(a), Some(b)) = (&there.played_under, &here.played_under) {
        compare(
            "",
            &a.time_control,
            &b.time_control,
            |v| v.to_string(),
            &mut out,
        );
        compare(
            "the command of bot ",
            &a.commands,
            &b.commands,
            |v| format!("{v:?}"),
            &mut out,
        );
    }
    if there.openings_book != here.openings_book {
        let book = |b: &Option<String>| b.clone().unwrap_or_else(|| "none".into());
        out.push(format!(
            "the openings book {} there, {} here",
            book(&there.openings_book),
            book(&here.openings_book)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(shard: &str, league: &str, command: &str, changes: &[&str]) -> LeagueMeta {
        serde_json::from_value(serde_json::json!({
            "name": "t", "fingerprint": format!("f{shard}"), "games": 6,
            "shard": shard, "bots": ["a", "b"], "league": league,
            "played_under": {
                "time_control": {}, "arena_version": "0.1.0", "changes": changes,
                "commands": {"a": [command], "b": ["bot-b"]},
            },
            "schedule": {"rounds": "1"},
        }))
        .unwrap()
    }

    /// Two shards of one league read as one (their schedules differ), a
    /// shard of another league id or split does not, and what differs is
    /// named, with a shard's noted changes since its start.
    #[test]
    fn shards_of_one_league_and_what_differs() {
        let one = meta("1/2", "L", "bot-a", &[]);
        assert!(one_league(&one, &meta("2/2", "L", "bot-a", &[])));
        assert!(!one_league(&one, &meta("2/2", "M", "bot-a", &[])));
        assert!(!one_league(&one, &meta("2/3", "L", "bot-a", &[])));
        let said = what_differs(&meta("2/3", "L", "bot-a", &[]), &one).unwrap();
        assert!(
            said.contains("another split (shard 2/3 there, 1/2 here)"),
            "{said}"
        );
        let changed = meta("2/2", "M", "bot-a2", &["2026-01-01T00:00:00Z: `a` changed"]);
        let said = what_differs(&changed, &one).unwrap();
        assert!(
            said.contains("the command of bot `a` [\"bot-a2\"] there, [\"bot-a\"] here")
                && said.contains("notes changes since it started")
                && said.contains("`a` changed"),
            "{said}"
        );
        let dirs = vec![(PathBuf::from("x/shard-1-of-2"), one)];
        assert!(check_one_league(&dirs).is_ok());
    }
}
