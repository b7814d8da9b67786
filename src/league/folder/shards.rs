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
    let count = |m: &LeagueMeta| {
        m.shard
            .as_deref()
            .and_then(|s| s.split_once('/'))
            .map(|(_, n)| n.to_string())
    };
    for (path, other) in sibling_shards(dir) {
        let json = Layout::new(&path).league_json();
        if count(&other) != count(meta) {
            return Err(StoreError::Mismatch {
                path: json,
                why: format!(
                    "this folder holds shard {} of league `{}`, while this run is shard {}: one league is split one way. Run it with the same N as its other shards, or give it another `output`",
                    other.shard.as_deref().unwrap_or("?"),
                    other.name,
                    meta.shard.as_deref().unwrap_or("?")
                ),
            });
        }
        let (Some(theirs), Some(ours)) = (&other.league, &meta.league) else {
            continue;
        };
        if theirs == ours {
            continue;
        }
        let version = |m: &LeagueMeta| {
            m.played_under
                .as_ref()
                .map(|p| p.arena_version.clone())
                .unwrap_or_default()
        };
        let what = if other.bots != meta.bots {
            format!(
                "another bot list ({} there, {} here)",
                other.bots.join(", "),
                meta.bots.join(", ")
            )
        } else if version(&other) != version(meta) {
            format!(
                "another arena version ({} there, {} here)",
                version(&other),
                version(meta)
            )
        } else {
            match differences(&other, meta).as_slice() {
                [] => "another tournament file (its settings, bots' commands or variants differ)"
                    .to_string(),
                seen => format!("another tournament file ({})", seen.join("; ")),
            }
        };
        return Err(StoreError::Mismatch {
            path: json,
            why: format!(
                "shard {} of league `{}` was started with {what}; the shards of one league must be run from the same file, bots and arena. Run this shard as the others were, or give it another `output`",
                other.shard.as_deref().unwrap_or("?"),
                other.name
            ),
        });
    }
    Ok(())
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
