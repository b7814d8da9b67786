//! A league's results folder, and the one place a game becomes part of the
//! results.
//!
//! [`Layout`] owns the folder's layout (no path strings elsewhere):
//! `games.csv` (one row per game), `games/GAME_ID.jsonl` (one record per
//! game), `logs/` (the bots' stderr), and `league.json`, which ties the
//! folder to one schedule so that a resume never mixes two leagues.
//!
//! [`ResultsDir::commit`]`(record, row)` is the only commit point, called by
//! one ordered writer (the league's main thread): the record is written
//! whole (a temporary file and a rename), then the row is appended and
//! flushed. A row therefore always has its whole record; a record without a
//! row is a game that is not done and will be played again. Any I/O error
//! is returned to the runner, which stops the league.
//!
//! On open, a torn last line (a run killed mid-write) is cut off; the games
//! whose rows are complete are done, every other game is (re)run.

use crate::results::{csvio, GameRow};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Csv(#[from] csvio::CsvError),
    #[error("{path}: {why}")]
    Mismatch { path: PathBuf, why: String },
    /// Another run holds the folder's lock.
    #[error("{dir} is in use by another run ({holder}); wait for it to end or stop it, or give this run another output folder")]
    Locked { dir: PathBuf, holder: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

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
}

/// Where everything lives in a results folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    pub fn new(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// One row per finished game.
    pub fn games_csv(&self) -> PathBuf {
        self.root.join("games.csv")
    }

    /// The folder of the game records.
    pub fn records(&self) -> PathBuf {
        self.root.join("games")
    }

    /// The record of one game.
    pub fn record(&self, game_id: &str) -> PathBuf {
        self.records().join(format!("{game_id}.jsonl"))
    }

    /// The folder of the bots' stderr logs.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The stderr log of `bot`'s processes on `worker`.
    pub fn bot_log(&self, bot: &str, worker: usize) -> PathBuf {
        self.logs()
            .join(format!("{}-w{worker}.log", file_safe(bot)))
    }

    /// Bytes in `bot`'s stderr logs of the games (all workers).
    pub fn bot_logs_size(&self, bot: &str) -> u64 {
        let prefix = format!("{}-w", file_safe(bot));
        let Ok(dir) = std::fs::read_dir(self.logs()) else {
            return 0;
        };
        // BOT-wN.log exactly: bot `a` must not count `a-wolf-w0.log`.
        let ours = |name: &str| {
            name.strip_prefix(&prefix)
                .and_then(|r| r.strip_suffix(".log"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        dir.flatten()
            .filter(|e| ours(&e.file_name().to_string_lossy()))
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    }

    /// The stderr log of `bot`'s start check before the games.
    pub fn check_log(&self, bot: &str) -> PathBuf {
        self.logs().join(format!("{}-check.log", file_safe(bot)))
    }

    /// What ties the folder to one schedule.
    pub fn league_json(&self) -> PathBuf {
        self.root.join("league.json")
    }

    /// The lock a run holds on the folder; it holds the run's pid and host.
    pub fn lock(&self) -> PathBuf {
        self.root.join("run.lock")
    }

    /// Rows set aside by `--repair`, with why.
    pub fn rejected_csv(&self) -> PathBuf {
        self.root.join("rejected.csv")
    }
}

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
                .is_some_and(|n| n.starts_with("shard-") && n.contains("-of-"))
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
            "another tournament file (its settings, bots' commands or variants differ)".to_string()
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

/// The `league.json` of the folder `dir`, if it has a readable one.
pub fn read_meta(dir: &Path) -> Option<LeagueMeta> {
    let text = std::fs::read_to_string(Layout::new(dir).league_json()).ok()?;
    serde_json::from_str(&text).ok()
}

/// What the schedule says a game is: its variant and its bots by seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub variant: String,
    pub seats: Vec<String>,
}

/// A row of games.csv the schedule does not account for.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    /// Its line in games.csv.
    pub line: u64,
    pub row: GameRow,
    pub why: String,
}

/// `name` with everything but letters, digits, `-`, `_` and `.` replaced by
/// `_`, for file names.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// An open results folder, written by one writer: the run that holds its
/// lock.
pub struct ResultsDir {
    layout: Layout,
    /// Held open for the whole run: the kernel releases the lock when the
    /// process ends, however it ends.
    _lock: File,
    csv: csv::Writer<File>,
    /// The rows found on open, with their lines.
    found: Vec<(u64, GameRow)>,
    done: BTreeSet<String>,
    /// Bytes cut off a torn last line on open (0 if the file was whole).
    pub repaired_bytes: u64,
    /// What changed since the league started that does not stop a resume.
    pub warnings: Vec<String>,
}

impl ResultsDir {
    /// Opens (creating if needed) the folder for `meta` and locks it for
    /// this run. Fails if another run holds it, or if it holds results of a
    /// different schedule.
    pub fn open(dir: &Path, meta: &LeagueMeta) -> Result<ResultsDir, StoreError> {
        let layout = Layout::new(dir);
        std::fs::create_dir_all(layout.records()).map_err(io(dir))?;
        std::fs::create_dir_all(layout.logs()).map_err(io(dir))?;
        let lock = lock(&layout)?;
        let meta_path = layout.league_json();
        let mut warnings = Vec::new();
        match std::fs::read_to_string(&meta_path) {
            Ok(text) => {
                let old: LeagueMeta =
                    serde_json::from_str(&text).map_err(|e| StoreError::Mismatch {
                        path: meta_path.clone(),
                        why: format!("unreadable ({e}); move the folder away to start afresh"),
                    })?;
                if old.fingerprint != meta.fingerprint
                    && !old.bots.is_empty()
                    && old.bots != meta.bots
                {
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
                    return Err(StoreError::Mismatch {
                        path: meta_path,
                        why: format!(
                            "the bots changed since league `{}` started (new: {}; gone: {}), so these results belong to another schedule. To resume, give the file the league's bots again: with `bots = \"all\"`, move the new bot folders out of bots/ (or list the league's bots by name: bots = [{}]); to start a new league instead, choose another `output` or move {} away",
                            old.name,
                            list(&added),
                            list(&gone),
                            old.bots.iter().map(|b| format!("\"{b}\"")).collect::<Vec<_>>().join(", "),
                            dir.display()
                        ),
                    });
                }
                // Once a run was without its sandbox, the folder says so.
                let sandbox = match (old.sandbox, meta.sandbox) {
                    (Some(a), Some(b)) => Some(a && b),
                    (a, b) => a.or(b),
                };
                if old.fingerprint == meta.fingerprint && sandbox != old.sandbox {
                    let mut kept = old.clone();
                    kept.sandbox = sandbox;
                    let text =
                        serde_json::to_string_pretty(&kept).map_err(|e| StoreError::Mismatch {
                            path: meta_path.clone(),
                            why: e.to_string(),
                        })?;
                    write_atomically(&meta_path, text.as_bytes())?;
                }
                if let (Some(was), Some(now)) = (&old.played_under, &meta.played_under) {
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
                            path: meta_path,
                            why: format!(
                                "the time control changed since league `{}` started ({}): its games so far were played under the old one. Resume with the same settings (the flags or the file's [time_control]), or choose another `output` for a new league",
                                old.name,
                                changed.join(", ")
                            ),
                        });
                    }
                    for (bot, cmd) in &now.commands {
                        if let Some(before) = was.commands.get(bot).filter(|b| *b != cmd) {
                            warnings.push(format!(
                                "bot `{bot}`'s command changed since league `{}` started ({before:?} -> {cmd:?}): its games from now on are played by the new one",
                                old.name
                            ));
                        }
                    }
                }
                if old.fingerprint != meta.fingerprint {
                    return Err(StoreError::Mismatch {
                        path: meta_path,
                        why: format!(
                            "these results belong to a different schedule (the tournament file, its bots, seed or variants changed since league `{}` started). Resume needs the same file; to start afresh, choose another `output` or move {} away",
                            old.name,
                            dir.display()
                        ),
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let text =
                    serde_json::to_string_pretty(meta).map_err(|e| StoreError::Mismatch {
                        path: meta_path.clone(),
                        why: e.to_string(),
                    })?;
                write_atomically(&meta_path, text.as_bytes())?;
            }
            Err(e) => return Err(io(&meta_path)(e)),
        }

        let csv_path = layout.games_csv();
        let repaired_bytes = repair_torn_tail(&csv_path)?;
        let exists = csv_path.metadata().map(|m| m.len() > 0).unwrap_or(false);
        let found = if exists {
            csvio::read_file(&csv_path)?.rows
        } else {
            Vec::new()
        };
        let done = found.iter().map(|(_, r)| r.game_id.clone()).collect();
        let csv = append_to(&csv_path, !exists)?;
        let old_header = exists && lacks_added_columns(&csv_path);
        let mut store = ResultsDir {
            layout,
            _lock: lock,
            csv,
            found,
            done,
            repaired_bytes,
            warnings,
        };
        if old_header {
            // New rows carry the added columns: the header must name them.
            store.rewrite()?;
            store.warnings.push(format!(
                "{}: added the columns {} of this version; its {} earlier rows have them empty",
                csv_path.display(),
                csvio::ADDED_COLUMNS.join(", "),
                store.found.len()
            ));
        }
        Ok(store)
    }

    /// Checks every row found on open against the schedule: a game id the
    /// schedule does not hold, a game id seen twice (every copy: which one
    /// is true cannot be told), a variant or seats other than the
    /// schedule's, or a record that is missing, incomplete or says another
    /// result. Returns the rows that fail, with their lines.
    pub fn check(&self, schedule: &dyn Fn(&str) -> Option<Expected>) -> Vec<Rejected> {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for (_, r) in &self.found {
            *count.entry(r.game_id.as_str()).or_default() += 1;
        }
        let mut out = Vec::new();
        for (line, row) in &self.found {
            let why = match schedule(&row.game_id) {
                None => Some("the schedule has no game with this id".to_string()),
                Some(_) if count[row.game_id.as_str()] > 1 => Some(format!(
                    "game {} has {} rows",
                    row.game_id,
                    count[row.game_id.as_str()]
                )),
                Some(e) if e.variant != row.variant => Some(format!(
                    "the schedule plays {} in this game, the row says {}",
                    e.variant, row.variant
                )),
                Some(e) if e.seats.iter().map(String::as_str).ne(row.seats()) => Some(format!(
                    "the schedule seats {} in this game, the row says {}",
                    e.seats.join(", "),
                    row.seats().join(", ")
                )),
                Some(_) => record_problem(&self.layout.record(&row.game_id), row),
            };
            if let Some(why) = why {
                out.push(Rejected {
                    line: *line,
                    row: row.clone(),
                    why,
                });
            }
        }
        out
    }

    /// Sets `rejected` rows aside: appends them, with why, to
    /// `rejected.csv`, and rewrites games.csv without them (a temporary
    /// file and a rename), so that their games are played again.
    pub fn set_aside(&mut self, rejected: &[Rejected]) -> Result<(), StoreError> {
        if rejected.is_empty() {
            return Ok(());
        }
        let path = self.layout.rejected_csv();
        let fresh = !path.exists();
        let mut out = append_to(&path, false)?;
        let err = |e: csv::Error| StoreError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        };
        if fresh {
            let mut header: Vec<&str> = csvio::all_columns().collect();
            header.push("rejected_because");
            out.write_record(&header).map_err(err)?;
        }
        for r in rejected {
            out.serialize((&r.row, &r.why)).map_err(err)?;
        }
        out.flush().map_err(io(&path))?;

        let lines: BTreeSet<u64> = rejected.iter().map(|r| r.line).collect();
        self.found.retain(|(line, _)| !lines.contains(line));
        self.rewrite()
    }

    /// Writes games.csv anew from `found` under the current header (a
    /// temporary file and a rename), and appends to the new file from now.
    fn rewrite(&mut self) -> Result<(), StoreError> {
        let csv_path = self.layout.games_csv();
        let err = |e: csv::Error| StoreError::Io {
            path: csv_path.clone(),
            source: std::io::Error::other(e),
        };
        let mut bytes = Vec::new();
        {
            let mut w = csv::Writer::from_writer(&mut bytes);
            for (_, row) in &self.found {
                w.serialize(row).map_err(err)?;
            }
            if self.found.is_empty() {
                w.write_record(csvio::all_columns()).map_err(err)?;
            }
            w.flush().map_err(io(&csv_path))?;
        }
        write_atomically(&csv_path, &bytes)?;
        self.csv = append_to(&csv_path, false)?;
        self.done = self.found.iter().map(|(_, r)| r.game_id.clone()).collect();
        Ok(())
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn is_done(&self, game_id: &str) -> bool {
        self.done.contains(game_id)
    }

    /// Keeps the bots' program hashes in `league.json` the first time, and
    /// on a resume says which bots' files changed since (a warning each:
    /// their games from now on are played by the new programs).
    pub fn note_programs(
        &mut self,
        now: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    ) -> Result<Vec<String>, StoreError> {
        let path = self.layout.league_json();
        let Some(mut meta) = read_meta(self.layout.root()) else {
            return Ok(Vec::new());
        };
        let Some(under) = meta.played_under.as_mut() else {
            return Ok(Vec::new());
        };
        let mut warnings = Vec::new();
        if under.programs.is_empty() {
            under.programs = now;
            let text = serde_json::to_string_pretty(&meta).map_err(|e| StoreError::Mismatch {
                path: path.clone(),
                why: e.to_string(),
            })?;
            write_atomically(&path, text.as_bytes())?;
            return Ok(warnings);
        }
        for (bot, files) in &now {
            let Some(was) = under.programs.get(bot) else {
                continue;
            };
            let changed: Vec<String> = files
                .iter()
                .filter(|(f, h)| was.get(*f).is_some_and(|old| old != *h))
                .map(|(f, h)| {
                    let old = &was[f];
                    format!(
                        "{f} (sha256 {}… -> {}…)",
                        &old[..old.len().min(12)],
                        &h[..h.len().min(12)]
                    )
                })
                .chain(
                    files
                        .keys()
                        .filter(|f| !was.contains_key(*f))
                        .map(|f| format!("{f} (new)")),
                )
                .collect();
            if !changed.is_empty() {
                warnings.push(format!(
                    "bot `{bot}`'s program changed since league `{}` started: {}; its games from now on are played by the new one",
                    meta.name,
                    changed.join(", ")
                ));
            }
        }
        Ok(warnings)
    }

    /// The game ids in games.csv.
    pub fn done_ids(&self) -> std::collections::HashSet<String> {
        self.done.iter().cloned().collect()
    }

    pub fn done_count(&self) -> usize {
        self.done.len()
    }

    /// Makes one finished game part of the results: writes its `record`
    /// (the bytes of `games/GAME_ID.jsonl`) whole, then appends its `row`
    /// and flushes it to the operating system. The game is done from here
    /// on; on error it is not, and the caller must stop.
    pub fn commit(&mut self, record: &[u8], row: &GameRow) -> Result<(), StoreError> {
        write_whole(&self.layout.record(&row.game_id), record, false)?;
        let path = self.layout.games_csv();
        self.csv.serialize(row).map_err(|e| StoreError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        self.csv.flush().map_err(io(&path))?;
        self.done.insert(row.game_id.clone());
        Ok(())
    }

    /// Flushes to stable storage (at the end, and now and then).
    pub fn sync(&mut self) -> Result<(), StoreError> {
        let path = self.layout.games_csv();
        self.csv.flush().map_err(io(&path))?;
        self.csv.get_ref().sync_data().map_err(io(&path))
    }

    /// Every row written so far, read back from the file.
    pub fn rows(&self) -> Result<Vec<GameRow>, StoreError> {
        Ok(csvio::read_rows(&self.layout.games_csv())?)
    }
}

/// Takes the folder's lock (an OS lock on `run.lock`, released by the
/// kernel when this process ends) and writes our pid and host into it.
fn lock(layout: &Layout) -> Result<File, StoreError> {
    let path = layout.lock();
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io(&path))?;
    // A run killed a moment ago may leave processes that still share its
    // lock while they die (a bot's keeper between fork and exec): when the
    // holder named in the file is dead on this host, wait a little.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match f.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                f.seek(SeekFrom::Start(0)).map_err(io(&path))?;
                let _ = f.read_to_string(&mut holder);
                if holder_is_gone(&holder) && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    continue;
                }
                let holder = match holder.trim() {
                    "" => "its pid and host are not written yet".to_string(),
                    h => h.to_string(),
                };
                return Err(StoreError::Locked {
                    dir: layout.root().to_path_buf(),
                    holder,
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e)),
        }
    }
    let me = format!("pid {} on host {}\n", std::process::id(), host_name());
    f.set_len(0).map_err(io(&path))?;
    f.seek(SeekFrom::Start(0)).map_err(io(&path))?;
    f.write_all(me.as_bytes()).map_err(io(&path))?;
    Ok(f)
}

/// True when the lock's holder ("pid N on host H") is a process of this
/// host that is no longer alive.
/// Whether a run holds the folder's lock now, and what `run.lock` says
/// of its holder (`pid N on host H`). Tested by taking the lock for an
/// instant: a run starting in that instant waits for it (see `lock`).
pub fn lock_holder(layout: &Layout) -> Option<String> {
    let path = layout.lock();
    let mut f = OpenOptions::new().read(true).write(true).open(&path).ok()?;
    match f.try_lock() {
        Ok(()) => {
            let _ = f.unlock();
            None
        }
        Err(_) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            Some(holder.trim().to_string())
        }
    }
}

fn holder_is_gone(holder: &str) -> bool {
    let mut words = holder.split_whitespace();
    let pid = match (words.next(), words.next()) {
        (Some("pid"), Some(n)) => n.parse::<u32>().ok(),
        _ => None,
    };
    let host = holder.rsplit(" on host ").next().map(str::trim);
    match (pid, host) {
        (Some(pid), Some(h)) => h == host_name() && !crate::bot::process_alive(pid),
        _ => false,
    }
}

/// This machine's name, for the lock.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// Whether the header of the results CSV at `path` lacks a column this
/// version writes (a folder of an older version).
fn lacks_added_columns(path: &Path) -> bool {
    use std::io::BufRead;
    let mut line = String::new();
    let read = File::open(path).and_then(|f| std::io::BufReader::new(f).read_line(&mut line));
    if read.is_err() {
        return false;
    }
    let names: Vec<&str> = line.trim().split(',').map(str::trim).collect();
    csvio::all_columns().any(|c| !names.contains(&c))
}

/// A CSV writer appending to `path` (created if needed), with a header
/// line first when `header`.
fn append_to(path: &Path, header: bool) -> Result<csv::Writer<File>, StoreError> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io(path))?;
    Ok(csv::WriterBuilder::new()
        .has_headers(header)
        .from_writer(file))
}

/// Why the record of `row`'s game does not back the row, if it does not:
/// missing, without its `end` line, or with another result.
fn record_problem(path: &Path, row: &GameRow) -> Option<String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return Some(format!("its record {}: {e}", path.display())),
    };
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let end: serde_json::Value = match serde_json::from_str(last) {
        Ok(v) => v,
        Err(_) => return Some(format!("its record {} is incomplete", path.display())),
    };
    if end["type"] != "end" {
        return Some(format!("its record {} has no end line", path.display()));
    }
    let scores: Vec<f64> = end["scores"]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
        .unwrap_or_default();
    let same_scores = scores.len() == row.scores().len()
        && scores
            .iter()
            .zip(row.scores())
            .all(|(a, b)| (a - b).abs() < 1e-9);
    if end["reason"] != row.reason.as_str() || !same_scores {
        return Some(format!(
            "its record {} ends {} {:?}, the row says {} {:?}",
            path.display(),
            end["reason"],
            scores,
            row.reason,
            row.scores()
        ));
    }
    None
}

/// Cuts a last line that has no newline (a write torn by a crash). Returns
/// the number of bytes removed.
pub fn repair_torn_tail(path: &Path) -> Result<u64, StoreError> {
    let mut f = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(path)(e)),
    };
    let len = f.metadata().map_err(io(path))?.len();
    if len == 0 {
        return Ok(0);
    }
    // Scan back from the end for the last newline.
    let mut pos = len;
    let mut buf = [0u8; 4096];
    loop {
        let start = pos.saturating_sub(buf.len() as u64);
        let n = (pos - start) as usize;
        f.seek(SeekFrom::Start(start)).map_err(io(path))?;
        f.read_exact(&mut buf[..n]).map_err(io(path))?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep < len {
                f.set_len(keep).map_err(io(path))?;
            }
            return Ok(len - keep);
        }
        if start == 0 {
            // Not even a whole header line: start the file afresh.
            f.set_len(0).map_err(io(path))?;
            return Ok(len);
        }
        pos = start;
    }
}

/// Writes a file via a temporary file, synced, and a rename, so that readers
/// never see half of it, even after a power cut.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_whole(path, bytes, true)
}

/// Writes a file via a temporary file and a rename, so that no reader and no
/// crash of ours ever leaves half of it. `durable`: sync the data before the
/// rename (a game record is not: games.csv is synced every few seconds, and
/// a sync per game would cost the league its throughput).
fn write_whole(path: &Path, bytes: &[u8], durable: bool) -> Result<(), StoreError> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(bytes).map_err(io(&tmp))?;
        if durable {
            f.sync_data().map_err(io(&tmp))?;
        }
    }
    std::fs::rename(&tmp, path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> GameRow {
        GameRow {
            game_id: id.into(),
            variant: "diffusion".into(),
            players: 2,
            group: "g".into(),
            seat0: "a".into(),
            seat1: "b".into(),
            seat2: String::new(),
            score0: 1.0,
            score1: 0.0,
            score2: None,
            reason: "block".into(),
            offender: None,
            plies: 12,
            duration_ms: 3,
            seed: 9,
            opening: "G H".into(),
            ..Default::default()
        }
    }

    fn meta(fp: &str) -> LeagueMeta {
        LeagueMeta {
            name: "t".into(),
            fingerprint: fp.into(),
            games: 3,
            shard: None,
            bots: vec!["a".into(), "b".into()],
            sandbox: Some(true),
            played_under: None,
            league: None,
        }
    }

    #[test]
    fn rows_survive_reopen_and_torn_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        s.commit(b"{}\n", &row("g1")).unwrap();
        s.commit(b"{}\n", &row("g2")).unwrap();
        drop(s);
        // A crash in the middle of the third row.
        let path = Layout::new(dir.path()).games_csv();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"g3,diffusion,2,g,a,b,,1,0").unwrap();
        drop(f);

        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert_eq!(s.repaired_bytes, 25);
        assert!(s.is_done("g1") && s.is_done("g2") && !s.is_done("g3"));
        s.commit(b"{}\n", &row("g3")).unwrap();
        assert!(Layout::new(dir.path()).record("g3").is_file());
        let rows = s.rows().unwrap();
        assert_eq!(
            rows.iter().map(|r| r.game_id.as_str()).collect::<Vec<_>>(),
            ["g1", "g2", "g3"]
        );
        assert_eq!(rows[0], row("g1"));
        // One header only.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("game_id").count(), 1);
    }

    #[test]
    fn a_record_that_cannot_be_written_commits_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        s.commit(b"{}\n", &row("g1")).unwrap();
        // A non-empty folder where g2's record should go.
        std::fs::create_dir_all(Layout::new(dir.path()).record("g2").join("x")).unwrap();
        let e = s.commit(b"{}\n", &row("g2")).unwrap_err().to_string();
        assert!(e.contains("g2.jsonl"), "{e}");
        assert!(!s.is_done("g2"));
        let ids: Vec<String> = s.rows().unwrap().into_iter().map(|r| r.game_id).collect();
        assert_eq!(ids, ["g1"]);
    }

    #[test]
    fn a_second_writer_is_refused_with_the_holders_pid_and_host() {
        let dir = tempfile::tempdir().unwrap();
        let first = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let e = ResultsDir::open(dir.path(), &meta("x"))
            .err()
            .unwrap()
            .to_string();
        let me = format!("pid {} on host {}", std::process::id(), host_name());
        assert!(
            e.contains("in use by another run") && e.contains(&me),
            "{e}"
        );
        assert!(e.contains(&dir.path().display().to_string()), "{e}");
        drop(first);
        // Released with its holder: the next run opens it.
        ResultsDir::open(dir.path(), &meta("x")).unwrap();
    }

    #[test]
    fn rows_are_checked_against_the_schedule_and_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let end = |r: &GameRow| {
            format!(
                "{{\"type\":\"game\"}}\n{{\"type\":\"end\",\"scores\":[{},{}],\"reason\":\"{}\"}}\n",
                r.score0, r.score1, r.reason
            )
        };
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let mut wrong_seats = row("g3");
        wrong_seats.seat1 = "z".into();
        let mut other_result = row("g5");
        other_result.reason = "illegal".into();
        for r in [
            row("g1"),
            row("g2"),
            row("g2"),
            wrong_seats,
            row("g4"),
            row("forged"),
        ] {
            s.commit(end(&r).as_bytes(), &r).unwrap();
        }
        // g4's record torn; g5's record says another result; g6's is gone.
        std::fs::write(
            layout.record("g4"),
            "{\"type\":\"game\"}\n{\"type\":\"end\",\"sco",
        )
        .unwrap();
        s.commit(end(&row("g5")).as_bytes(), &other_result).unwrap();
        s.commit(end(&row("g6")).as_bytes(), &row("g6")).unwrap();
        std::fs::remove_file(layout.record("g6")).unwrap();
        drop(s);

        let schedule: HashMap<String, Expected> = ["g1", "g2", "g3", "g4", "g5", "g6", "g7"]
            .iter()
            .map(|id| {
                let e = Expected {
                    variant: "diffusion".into(),
                    seats: vec!["a".into(), "b".into()],
                };
                (id.to_string(), e)
            })
            .collect();
        let mut s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        let rejected = s.check(&|id: &str| schedule.get(id).cloned());
        let got: Vec<(u64, &str)> = rejected
            .iter()
            .map(|r| (r.line, r.row.game_id.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (3, "g2"),
                (4, "g2"),
                (5, "g3"),
                (6, "g4"),
                (7, "forged"),
                (8, "g5"),
                (9, "g6")
            ]
        );
        let whys: Vec<&str> = rejected.iter().map(|r| r.why.as_str()).collect();
        assert!(whys[0].contains("2 rows"), "{whys:?}");
        assert!(
            whys[2].contains("seats a, b") && whys[2].contains("a, z"),
            "{whys:?}"
        );
        assert!(whys[3].contains("incomplete"), "{whys:?}");
        assert!(whys[4].contains("no game with this id"), "{whys:?}");
        assert!(whys[5].contains("illegal"), "{whys:?}");
        assert!(whys[6].contains("g6.jsonl"), "{whys:?}");

        s.set_aside(&rejected).unwrap();
        assert!(s.is_done("g1") && !s.is_done("g2") && !s.is_done("g6"));
        s.commit(end(&row("g2")).as_bytes(), &row("g2")).unwrap();
        let ids: Vec<String> = s.rows().unwrap().into_iter().map(|r| r.game_id).collect();
        assert_eq!(ids, ["g1", "g2"]);
        let set_aside = csvio::read_file(&layout.rejected_csv()).unwrap().rows;
        assert_eq!(set_aside.len(), 7);
        let text = std::fs::read_to_string(layout.rejected_csv()).unwrap();
        assert!(
            text.starts_with("game_id,") && text.contains(",rejected_because\n"),
            "{text}"
        );
        assert!(text.contains("no game with this id"), "{text}");
        drop(s);
        // The repaired folder checks clean.
        let s = ResultsDir::open(dir.path(), &meta("x")).unwrap();
        assert!(s.check(&|id: &str| schedule.get(id).cloned()).is_empty());
    }

    #[test]
    fn another_schedule_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(ResultsDir::open(dir.path(), &meta("x")).unwrap());
        let e = ResultsDir::open(dir.path(), &meta("y"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("different schedule"), "{e}");
    }

    #[test]
    fn a_bots_logs_are_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let l = Layout::new(dir.path());
        std::fs::create_dir_all(l.logs()).unwrap();
        std::fs::write(l.bot_log("a", 0), "12345").unwrap();
        std::fs::write(l.bot_log("a", 11), "123").unwrap();
        std::fs::write(l.bot_log("a-wolf", 0), "1234567").unwrap();
        std::fs::write(l.check_log("a"), "12").unwrap();
        assert_eq!(l.bot_logs_size("a"), 8);
        assert_eq!(l.bot_logs_size("a-wolf"), 7);
        assert_eq!(l.bot_logs_size("b"), 0);
    }

    /// `bots = "all"` and a new folder under bots/: the error says which
    /// bots changed and exactly how to resume.
    #[test]
    fn changed_bots_are_named_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        drop(ResultsDir::open(dir.path(), &meta("x")).unwrap());
        let mut more = meta("y");
        more.bots.push("newcomer".into());
        let e = ResultsDir::open(dir.path(), &more)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("new: newcomer; gone: none"), "{e}");
        assert!(e.contains("move the new bot folders out of bots/"), "{e}");
        assert!(e.contains(r#"bots = ["a", "b"]"#), "{e}");
    }
}
