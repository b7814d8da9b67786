//! The state of a league's results folders, read from disk while its shards
//! run or after they stopped (`arena status`): games done of each shard's
//! total, whether a run holds the shard's lock, when it last wrote, its
//! rate and the time left, and the shards that are missing or incomplete.
//!
//! Reads folders only; starts nothing and changes nothing.

use super::config::parse_variant;
use super::folder::{self, Layout, LeagueMeta, NotedFormat};
use super::schedule::{Parts, Schedule, Shard};
use super::swiss::History;
use super::swiss_games::{progress, Progress, SwissPlan, SwissState, Unpaired};
use crate::results::csvio;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What a shard's folder says.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShardState {
    /// Every game of the shard is in its games.csv.
    Complete,
    /// A run holds the folder's lock.
    Running,
    /// Games are left and nothing runs: start the shard again to finish it.
    Stopped,
    /// No folder (or no league.json): never started, or on another disk.
    Missing,
}

/// One shard of a league.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ShardStatus {
    /// 1-based, as in `--shard K/N`.
    pub index: usize,
    pub dir: PathBuf,
    pub state: ShardState,
    pub done: usize,
    /// The shard's games (unknown for a missing shard).
    pub total: Option<usize>,
    /// The lock's holder as `run.lock` names it (`pid N on host H`).
    pub holder: Option<String>,
    /// When games.csv was last written.
    #[serde(serialize_with = "ser_time")]
    pub last_write: Option<SystemTime>,
    /// Games per second over the shard's recent games (from `started_at`).
    pub rate: Option<f64>,
    /// The time left at that rate, while it runs.
    pub eta_s: Option<f64>,
    /// Rows of games that have more than one row (every copy: a resume
    /// sets them all aside and plays those games again), counted when no
    /// run holds the shard.
    pub duplicates: usize,
    /// A row that does not read (file:line and why): a resume stops on it.
    pub problem: Option<String>,
    /// The problem is the file's: its header does not read (a compressed
    /// or UTF-16 file, say), so none of its lines is a game done.
    pub unreadable: bool,
    /// The file cannot be opened or read at all (its permissions, a
    /// folder in its place): `unreadable` too, for another reason.
    pub cannot_open: bool,
    /// Rows whose record is not there or does not back them (a record log
    /// cut short, deleted or damaged at its end), counted when no run
    /// holds the shard: a resume refuses them, `--repair` sets them aside
    /// and plays their games again.
    pub bad_records: usize,
    /// The first of them: file:line and why.
    pub bad_record: Option<String>,
    /// The pid of the run that holds the shard when it is a process of
    /// this host stopped by a signal (SIGSTOP, Ctrl-Z): running, but
    /// playing nothing until continued (no time left is told).
    pub paused: Option<u32>,
}

/// Every shard of one league.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LeagueStatus {
    pub name: String,
    /// The league's folder (the shards' parent).
    pub dir: PathBuf,
    pub shards: Vec<ShardStatus>,
    /// A Swiss's or a knockout's round and leaders (or bots still in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format_state: Option<Progress>,
}

impl LeagueStatus {
    pub fn done(&self) -> usize {
        self.shards.iter().map(|s| s.done).sum()
    }

    /// The league's games, when no shard is missing.
    pub fn total(&self) -> Option<usize> {
        self.shards.iter().map(|s| s.total).sum()
    }

    /// Rows of a Swiss's or knockout's rounds not paired yet (a round
    /// before them lacks a row), which `arena run` refuses without
    /// `--repair`.
    pub fn unpaired(&self) -> Option<&Unpaired> {
        self.format_state.as_ref()?.unpaired.as_ref()
    }

    /// The shards to start (again): missing or stopped.
    pub fn to_start(&self) -> Vec<&ShardStatus> {
        self.shards
            .iter()
            .filter(|s| matches!(s.state, ShardState::Missing | ShardState::Stopped))
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("{0}: no league here (no league.json, and no shard-K-of-N folder with one)")]
    NoLeague(PathBuf),
    #[error("{}: games.csv is here but no league.json (where a league keeps its settings and progress), so its games cannot be counted against a schedule: `arena run LEAGUE.toml -o {dir}` with the league's file writes it again and resumes; `arena rate {csv}` rates the games as they are", .0.display(), dir = crate::text::shell_path(.0), csv = crate::text::shell_path(&.0.join("games.csv")))]
    NoMeta(PathBuf),
    #[error("{dir}: shard folders of different splits ({counts}): one league is split one way")]
    MixedSplits { dir: PathBuf, counts: String },
    #[error("{path}: unreadable ({why}): which league its folder holds cannot be told")]
    Unreadable { path: PathBuf, why: String },
    /// Shard folders of different leagues side by side.
    #[error(transparent)]
    Mixed(#[from] folder::StoreError),
}

fn ser_time<S: serde::Serializer>(t: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&humantime::format_rfc3339_seconds(*t).to_string()),
        None => s.serialize_none(),
    }
}

/// `K/N` of a league.json's `shard`.
fn shard_of(meta: &LeagueMeta) -> Option<(usize, usize)> {
    let s: Shard = meta.shard.as_deref()?.parse().ok()?;
    Some((s.index, s.count))
}

/// The status of the league in `dir`: a league's folder (its shards inside
/// it, or its own games for an unsharded league), or one shard's folder
/// (then all of its league's shards).
pub fn league_status(dir: &Path) -> Result<LeagueStatus, StatusError> {
    let own = folder::read_meta(dir);
    if let Some(meta) = own.as_ref().filter(|m| shard_of(m).is_none()) {
        let mut shard = shard_status(1, dir, Some(meta));
        let format_state = format_state(dir, meta);
        // Rows of a Swiss's rounds not paired yet are no games done (they
        // stand on a round that lacks a row): not in the shard's count
        // either, which is the league's.
        // Nor is the league complete with them: a run refuses them.
        if let Some(u) = format_state.as_ref().and_then(|p| p.unpaired.as_ref()) {
            shard.done = shard.done.saturating_sub(u.rows);
            if shard.state == ShardState::Complete {
                shard.state = ShardState::Stopped;
            }
        }
        return Ok(LeagueStatus {
            name: meta.name.clone(),
            dir: dir.to_path_buf(),
            shards: vec![shard],
            format_state,
        });
    }
    // A shard's folder stands for its league's.
    let league_dir = match own {
        Some(_) => dir
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => dir.to_path_buf(),
    };
    check_readable(&league_dir)?;
    let found: Vec<(PathBuf, LeagueMeta, (usize, usize))> = folder::shard_folders(&league_dir)
        .into_iter()
        .filter_map(|(p, m)| shard_of(&m).map(|kn| (p, m, kn)))
        .collect();
    let mut counts: Vec<usize> = found.iter().map(|(_, _, (_, n))| *n).collect();
    counts.sort_unstable();
    counts.dedup();
    let n = match counts.as_slice() {
        [] if dir.join("games.csv").is_file() => {
            return Err(StatusError::NoMeta(dir.to_path_buf()))
        }
        [] => return Err(StatusError::NoLeague(dir.to_path_buf())),
        [n] => *n,
        many => {
            return Err(StatusError::MixedSplits {
                dir: league_dir,
                counts: many
                    .iter()
                    .map(|n| format!("of {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    };
    let pairs: Vec<(PathBuf, LeagueMeta)> = found
        .iter()
        .map(|(p, m, _)| (p.clone(), m.clone()))
        .collect();
    folder::check_one_league(&pairs)?;
    let name = found[0].1.name.clone();
    let shards = (1..=n)
        .map(|k| {
            let at = league_dir.join(Shard { index: k, count: n }.folder_name());
            let meta = found
                .iter()
                .find(|(_, _, (i, _))| *i == k)
                .map(|(_, m, _)| m);
            let mut shard = shard_status(k, &at, meta);
            // Not started yet: its games from the schedule the others note.
            if shard.total.is_none() {
                shard.total = shard_games(&found[0].1, k);
            }
            shard
        })
        .collect();
    // A Swiss or a knockout is never sharded.
    Ok(LeagueStatus {
        name,
        dir: league_dir,
        shards,
        format_state: None,
    })
}

/// Where the Swiss or knockout in `dir` stands, from its league.json and
/// games.csv; `None` for a round-robin, or settings that do not read.
fn format_state(dir: &Path, meta: &LeagueMeta) -> Option<Progress> {
    let (plan, state, rows) = replayed(dir, meta)?;
    let mut p = progress(&plan, &state);
    let mut waiting = rows
        .iter()
        .filter_map(|r| state.unpaired(&plan, &r.game_id));
    if let Some((_, lacking)) = waiting.next() {
        p.unpaired = Some(Unpaired {
            rows: 1 + waiting.count(),
            lacking,
        });
    }
    Some(p)
}

/// The Swiss or knockout in `dir` (`meta` its league.json) replayed from
/// its games.csv: its plan, its state and the rows (`arena status`, and
/// the report's Swiss or Bracket section); `None` for a round-robin, or
/// settings that do not read.
pub(crate) fn replayed(
    dir: &Path,
    meta: &LeagueMeta,
) -> Option<(SwissPlan, SwissState, Vec<crate::results::GameRow>)> {
    let plan = plan_of(meta)?;
    let rows = csvio::read_rows(&Layout::new(dir).games_csv()).unwrap_or_default();
    let state = SwissState::replay(&plan, &rows);
    Some((plan, state, rows))
}

/// The Swiss plan of the league league.json `meta` notes (`format`,
/// `rounds`, `seed`, `variants` of its schedule), as `arena run` made it.
fn plan_of(meta: &LeagueMeta) -> Option<SwissPlan> {
    let get = |key: &str| meta.schedule.get(key);
    let groups: usize = get("rounds")?.parse().ok()?;
    let seed: u64 = get("seed")?.parse().ok()?;
    let variants = noted_variants(meta)?;
    let n = meta.bots.len();
    let (rounds, knockout, stage) = match meta.noted_format()? {
        NotedFormat::RoundRobin => return None,
        NotedFormat::Swiss { rounds } => (rounds, None, 0),
        NotedFormat::Knockout { seeds: None, stage } => {
            (0, Some(History::new(n, seed).initial), stage)
        }
        NotedFormat::Knockout {
            seeds: Some(names),
            stage,
        } => {
            let order: Option<Vec<usize>> = names
                .iter()
                .map(|s| meta.bots.iter().position(|b| b == s))
                .collect();
            (0, Some(order?), stage)
        }
    };
    let plan = SwissPlan::from_parts(
        meta.bots.clone(),
        variants,
        rounds,
        groups,
        seed,
        knockout,
        stage,
    );
    // A variant read otherwise than the league's would miscount its games.
    (plan.len() == meta.games).then_some(plan)
}

/// Each variant of the league `meta` notes, by its label and players.
fn noted_variants(meta: &LeagueMeta) -> Option<Vec<(String, usize)>> {
    let variants = meta.schedule.get("variants")?.split(',');
    Some(
        variants
            .map(|v| match parse_variant(v) {
                Ok(spec) => (spec.label(), spec.players),
                // A key of the file's own (`[variants.NAME]`).
                Err(_) => (v.to_string(), 2),
            })
            .collect(),
    )
}

/// The games of shard `k` of the round-robin that `meta`, a shard's
/// league.json, notes (its bots, and its schedule's `rounds`, `variants`
/// and `gauntlet`, as `arena run` made it from the tournament file and
/// flags): what a shard not started yet, which has no league.json of its
/// own, holds. `None` when they do not read, or do not give `meta`'s own
/// shard its games.
fn shard_games(meta: &LeagueMeta, k: usize) -> Option<usize> {
    let (own, count) = shard_of(meta)?;
    let games = |index| noted_schedule(meta, Some(Shard { index, count })).map(|s| s.len());
    (games(own)? == meta.games).then(|| games(k)).flatten()
}

/// The schedule (of `shard`, or the whole league's) of the round-robin
/// that `meta`, a league.json, notes (its bots, and its schedule's
/// `rounds`, `variants`, `gauntlet` and `seed`), as `arena run` made it;
/// `None` for a Swiss or a knockout, or settings that do not read.
pub(crate) fn noted_schedule(meta: &LeagueMeta, shard: Option<Shard>) -> Option<Schedule> {
    if meta.noted_format()? != NotedFormat::RoundRobin {
        return None;
    }
    let rounds: u32 = meta.schedule.get("rounds")?.parse().ok()?;
    let variants = noted_variants(meta)?;
    let gauntlet = match meta.schedule.get("gauntlet")?.as_str() {
        "none" => None,
        g => Some(meta.bots.iter().position(|b| b == g)?),
    };
    let parts = Parts {
        bots: meta.bots.len(),
        variants: &variants,
        gauntlet,
        rounds,
        seed: meta
            .schedule
            .get("seed")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
    };
    Some(Schedule::of_parts(&parts, shard))
}

/// A league.json that is there but cannot be read is named, not passed
/// over as if its shard were missing.
fn check_readable(league_dir: &Path) -> Result<(), StatusError> {
    let own = std::iter::once(league_dir.to_path_buf());
    for dir in own.chain(folder::shard_dirs(league_dir)) {
        let path = Layout::new(&dir).league_json();
        if path.is_dir() {
            let why = "a folder where the league's file league.json should be".to_string();
            return Err(StatusError::Unreadable { path, why });
        }
        if !path.is_file() {
            continue;
        }
        let why = match std::fs::read_to_string(&path) {
            Ok(text) => match crate::text::json_from_str::<LeagueMeta>(&text) {
                Ok(_) => continue,
                Err(e) => e,
            },
            Err(e) => e.to_string(),
        };
        return Err(StatusError::Unreadable { path, why });
    }
    Ok(())
}

/// Games per second over the last games of a results CSV (at most this
/// many), from their `started_at`: at a thousand games a second, two
/// seconds of games, long enough for millisecond times.
const RATE_WINDOW: usize = 2000;

/// Bytes read from the end of a results CSV for its last rows' rate.
const TAIL_BYTES: u64 = 1 << 20;

/// The lines of the file at `path` (its newlines), counted a block at a
/// time, its header line, and its last [`TAIL_BYTES`] bytes: what a status
/// needs of a games.csv of a million rows without holding it.
fn csv_summary(path: &Path) -> (usize, Vec<u8>, Vec<u8>) {
    use std::io::{BufRead, Read, Seek, SeekFrom};
    let Ok(f) = std::fs::File::open(path) else {
        return (0, Vec::new(), Vec::new());
    };
    let mut r = std::io::BufReader::with_capacity(1 << 20, f);
    let mut header = Vec::new();
    let _ = r.read_until(b'\n', &mut header);
    let mut lines = usize::from(header.ends_with(b"\n"));
    loop {
        let n = match r.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(buf) => {
                lines += buf.iter().filter(|&&b| b == b'\n').count();
                buf.len()
            }
        };
        r.consume(n);
    }
    let mut tail = Vec::new();
    let mut f = r.into_inner();
    if let Ok(len) = f.seek(SeekFrom::End(0)) {
        let start = len.saturating_sub(TAIL_BYTES).max(header.len() as u64);
        if f.seek(SeekFrom::Start(start)).is_ok() {
            let _ = f.read_to_end(&mut tail);
        }
        if start > header.len() as u64 {
            // From the first whole line on.
            let first = tail
                .iter()
                .position(|&b| b == b'\n')
                .map_or(tail.len(), |i| i + 1);
            tail.drain(..first);
        }
    }
    (lines, header, tail)
}

/// What a read of every row of a games.csv found: the games with one row,
/// the rows of games with more than one, and the first row that does not
/// read (then the games are the rows before it).
#[derive(Debug, Default)]
struct RowsRead {
    games: usize,
    duplicates: usize,
    problem: Option<String>,
    /// The problem is in the header: no line of the file is a row.
    unreadable: bool,
    cannot_open: bool,
    bad_records: usize,
    bad_record: Option<String>,
}

/// Reads every row of `csv` as a resume reads them ([`folder::scan_rows`]),
/// counting each game once by its id's hash: 17-34 bytes of memory a game,
/// one pass over the file (a resume's scan of a million rows takes about a
/// second: BENCHMARKS.md). A row whose record is not there, or the last
/// row's record that does not back it, is not a game done
/// ([`folder::RecordCheck`], as a resume checks them).
fn read_rows(layout: &Layout) -> RowsRead {
    let csv = layout.games_csv();
    let mut out = RowsRead::default();
    match csvio::RowReader::open(&csv) {
        Err(csvio::CsvError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            out.cannot_open = matches!(e, csvio::CsvError::Io { .. });
            out.problem = Some(e.to_string());
            out.unreadable = true;
            return out;
        }
        Ok(_) => {}
    }
    let mut records = folder::RecordCheck::new(layout);
    // Rows of each game id (by its hash, as the report counts them), and
    // whether one of them lacks its record.
    let mut rows: std::collections::HashMap<u64, (u32, bool)> = Default::default();
    let mut last: Option<(u64, crate::results::GameRow)> = None;
    let bad = |line: u64, why: String, out: &mut RowsRead| {
        out.bad_records += 1;
        out.bad_record
            .get_or_insert_with(|| format!("{}:{line}: {why}", csv.display()));
    };
    let scanned = folder::scan_rows(&csv, &mut |line, row| {
        let place = records.place(row);
        let game = rows
            .entry(crate::results::id_hash(&row.game_id))
            .or_default();
        game.0 += 1;
        match place {
            Some(why) => {
                game.1 = true;
                bad(line, why, &mut out);
            }
            None => last = Some((line, row.clone())),
        }
        Ok(())
    });
    out.problem = scanned.err().map(|e| e.to_string());
    if let (Some((line, row)), None) = (last, &out.problem) {
        if let Some(why) = records.whole(&row) {
            if let Some(game) = rows.get_mut(&crate::results::id_hash(&row.game_id)) {
                game.1 = true;
            }
            bad(line, why, &mut out);
        }
    }
    for (n, lacking) in rows.into_values() {
        match n {
            1 if !lacking => out.games += 1,
            1 => {}
            n => out.duplicates += n as usize,
        }
    }
    out
}

fn shard_status(index: usize, dir: &Path, meta: Option<&LeagueMeta>) -> ShardStatus {
    let layout = Layout::new(dir);
    let csv = layout.games_csv();
    let (lines, header, tail) = csv_summary(&csv);
    let last_write = std::fs::metadata(&csv).and_then(|m| m.modified()).ok();
    // A lock whose run (the pid run.lock names, on this host) is dead is
    // held a moment more by what it left (a bot's keeper it forked, ending
    // as it does): a run killed with kill -9 is not running.
    let holder = meta
        .and_then(|_| folder::lock_holder(&layout))
        .filter(|h| !folder::holder_is_gone(h));
    // While a run holds it, complete lines after the header: rows
    // committed (a torn tail is not), counted without reading them. Else
    // every row read, as a resume reads them: a game written twice (a
    // hand-merged file) is not two games done, and a row that does not
    // read leaves the shard to mend, not complete.
    let read = match (&meta, &holder) {
        (Some(_), None) => read_rows(&layout),
        _ => RowsRead {
            games: lines.saturating_sub(1),
            ..RowsRead::default()
        },
    };
    let done = match read.problem {
        Some(_) if read.unreadable => 0,
        Some(_) => lines.saturating_sub(1),
        None => read.games,
    };
    let total = meta.map(|m| m.games);
    let state = match (meta, &holder) {
        (None, _) => ShardState::Missing,
        (Some(_), Some(_)) => ShardState::Running,
        (Some(m), None)
            if done >= m.games
                && read.problem.is_none()
                && read.duplicates == 0
                && read.bad_records == 0 =>
        {
            ShardState::Complete
        }
        (Some(_), None) => ShardState::Stopped,
    };
    let rate = recent_rate(&csv, &header, &tail);
    let paused = holder.as_deref().and_then(folder::holder_paused);
    let eta_s = match (&state, rate, total) {
        (ShardState::Running, Some(r), Some(t)) if r > 0.0 && paused.is_none() => {
            Some(t.saturating_sub(done) as f64 / r)
        }
        _ => None,
    };
    ShardStatus {
        index,
        dir: dir.to_path_buf(),
        state,
        done,
        total,
        holder,
        last_write,
        rate,
        eta_s,
        duplicates: read.duplicates,
        problem: read.problem,
        unreadable: read.unreadable,
        cannot_open: read.cannot_open,
        bad_records: read.bad_records,
        bad_record: read.bad_record,
        paused,
    }
}

/// Games per second over the last [`RATE_WINDOW`] rows (of `body`, the
/// file's whole lines after `header`) that carry a `started_at`: the
/// starts' intervals over their time, a pause left out (a run stopped and
/// resumed: [`playing_rate`]), so that a league just resumed is not taken
/// for a slow one.
fn recent_rate(path: &Path, header: &[u8], body: &[u8]) -> Option<f64> {
    let header_end = header.len();
    // The start of the last RATE_WINDOW complete lines.
    let end = body.iter().rposition(|&b| b == b'\n')? + 1;
    let mut start = end;
    let mut lines = 0;
    while start > 0 && lines <= RATE_WINDOW {
        start -= 1;
        if start == 0 || body[start - 1] == b'\n' {
            lines += 1;
        }
    }
    let mut text = header[..header_end].to_vec();
    text.extend_from_slice(&body[start..end]);
    let rows = csvio::parse(path, &text).ok()?.rows;
    let mut times: Vec<SystemTime> = Vec::new();
    let mut longest = Duration::ZERO;
    for (_, r) in &rows {
        if let Ok(t) = humantime::parse_rfc3339_weak(&r.started_at) {
            times.push(t);
            longest = longest.max(Duration::from_millis(r.duration_ms));
        }
    }
    times.sort();
    let gaps: Vec<Duration> = times
        .windows(2)
        .filter_map(|w| w[1].duration_since(w[0]).ok())
        .collect();
    playing_rate(&gaps, longest)
}

/// Games per second of consecutive starts `gaps` apart, the pauses left
/// out: a gap over a second, over ten times the median, and over twice
/// the `longest` game of the window (a league of quick games beside slow
/// ones waits for the slow ones between starts: that is playing time).
fn playing_rate(gaps: &[Duration], longest: Duration) -> Option<f64> {
    let mut sorted = gaps.to_vec();
    sorted.sort();
    let median = *sorted.get(sorted.len() / 2)?;
    let pause = (median * 10).max(Duration::from_secs(1)).max(longest * 2);
    let playing: Vec<&Duration> = gaps.iter().filter(|&&g| g <= pause).collect();
    let span: Duration = playing.iter().copied().sum();
    (span > Duration::ZERO).then(|| playing.len() as f64 / span.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pause between two runs of a league is not playing time; a slow
    /// league's long games are.
    #[test]
    fn a_pause_is_left_out_of_the_rate_and_slow_games_are_not() {
        let ms = Duration::from_millis;
        let mut gaps = vec![ms(2); 999];
        gaps.insert(500, Duration::from_secs(25));
        let rate = playing_rate(&gaps, ms(2)).unwrap();
        assert!((rate - 500.0).abs() < 1.0, "{rate}");
        let slow = vec![
            Duration::from_secs(60),
            Duration::from_secs(90),
            Duration::from_secs(75),
        ];
        let rate = playing_rate(&slow, Duration::from_secs(90)).unwrap();
        assert!((rate - 3.0 / 225.0).abs() < 1e-9, "{rate}");
        assert_eq!(playing_rate(&[], ms(2)), None);
        assert_eq!(playing_rate(&[Duration::ZERO], ms(2)), None);
    }

    /// Quick games beside slow ones (random bots and a deep search in one
    /// league): the starts come in bursts, a few ms apart, between the
    /// slow games' seconds; the seconds are playing time, not pauses.
    #[test]
    fn slow_games_among_quick_ones_are_not_pauses() {
        let ms = Duration::from_millis;
        let mut gaps = Vec::new();
        for _ in 0..50 {
            gaps.extend([ms(5); 9]);
            gaps.push(ms(4000));
        }
        let span: Duration = gaps.iter().sum();
        let rate = playing_rate(&gaps, ms(3800)).unwrap();
        assert!((rate - 500.0 / span.as_secs_f64()).abs() < 1e-9, "{rate}");
        // A stop of the run for minutes among them is still a pause.
        gaps.push(Duration::from_secs(600));
        assert!((playing_rate(&gaps, ms(3800)).unwrap() - 500.0 / span.as_secs_f64()).abs() < 0.01);
    }

    fn write_shard(root: &Path, k: usize, n: usize, games: usize, rows: &[&str]) -> PathBuf {
        let dir = root.join(format!("shard-{k}-of-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let meta = format!(
            r#"{{"name":"lg","fingerprint":"f","games":{games},"shard":"{k}/{n}","bots":["a","b"]}}"#
        );
        std::fs::write(dir.join("league.json"), meta).unwrap();
        let header = csvio::header_line();
        let mut text = format!("{header}\n");
        for r in rows {
            text.push_str(r);
            text.push('\n');
        }
        std::fs::write(dir.join("games.csv"), text).unwrap();
        // Each row's record, as a version that kept a file per game did.
        std::fs::create_dir_all(dir.join("games")).unwrap();
        for id in rows.iter().filter_map(|r| r.split(',').next()) {
            let record = format!(
                "{{\"type\":\"game\",\"game_id\":\"{id}\"}}\n{{\"type\":\"end\",\"reason\":\"store\",\"scores\":[1,0]}}\n"
            );
            std::fs::write(dir.join(format!("games/{id}.jsonl")), record).unwrap();
        }
        dir
    }

    fn row(id: &str, at: &str) -> String {
        format!("{id},filo,2,{id},a,b,,1,0,,store,,10,5,1,,{at},1.0,1.0,,0.5,0.5,,,,")
    }

    #[test]
    fn complete_stopped_and_missing_shards_are_told_apart() {
        let root = tempfile::tempdir().unwrap();
        let r1 = row("g1", "2026-11-23T10:00:00.000Z");
        let r2 = row("g2", "2026-11-23T10:00:04.000Z");
        let r3 = row("g3", "2026-11-23T10:00:08.000Z");
        write_shard(root.path(), 1, 3, 2, &[&r1, &r2]);
        let two = write_shard(root.path(), 2, 3, 5, &[&r1, &r2, &r3]);
        // Shard 3 never started.
        for dir in [root.path().to_path_buf(), two] {
            let st = league_status(&dir).unwrap();
            assert_eq!(st.name, "lg");
            let states: Vec<&ShardState> = st.shards.iter().map(|s| &s.state).collect();
            assert_eq!(
                states,
                [
                    &ShardState::Complete,
                    &ShardState::Stopped,
                    &ShardState::Missing
                ]
            );
            assert_eq!((st.done(), st.total()), (5, None));
            assert_eq!(st.to_start().len(), 2);
            // 2 games in 8 s of starts.
            assert_eq!(st.shards[1].rate, Some(0.25));
            assert_eq!(st.shards[1].eta_s, None, "nothing runs");
        }
    }

    #[test]
    fn a_game_written_twice_or_a_row_that_does_not_read_is_not_complete() {
        let root = tempfile::tempdir().unwrap();
        let r1 = row("g1", "2026-11-23T10:00:00.000Z");
        let r2 = row("g2", "2026-11-23T10:00:04.000Z");
        // Three rows, two games, one of them twice: one game done (a
        // resume sets both copies aside and plays g1 again).
        write_shard(root.path(), 1, 1, 2, &[&r1, &r2, &r1]);
        let st = league_status(root.path()).unwrap();
        let s = &st.shards[0];
        assert_eq!((s.done, s.duplicates), (1, 2));
        assert_eq!(s.state, ShardState::Stopped);
        assert_eq!(s.problem, None);
        // A row cut short in the middle of the file: named, and the shard
        // is not complete though its lines are as many as its games.
        let root = tempfile::tempdir().unwrap();
        write_shard(root.path(), 1, 1, 2, &[&r1, "g3,filo", &r2]);
        let st = league_status(root.path()).unwrap();
        let s = &st.shards[0];
        assert_eq!(s.state, ShardState::Stopped);
        let problem = s.problem.as_deref().unwrap_or_default();
        assert!(problem.contains("games.csv:3"), "{problem}");
    }

    /// A games.csv that is no CSV (compressed) counts no game done, and
    /// says so, whatever its newlines.
    #[test]
    fn a_file_that_is_no_csv_counts_no_game() {
        let root = tempfile::tempdir().unwrap();
        let r1 = row("g1", "2026-11-23T10:00:00.000Z");
        let dir = write_shard(root.path(), 1, 1, 2, &[&r1]);
        std::fs::write(dir.join("games.csv"), b"\x1f\x8b\x08\x00\n\x01\n\x02\n").unwrap();
        let st = league_status(root.path()).unwrap();
        let s = &st.shards[0];
        assert_eq!(
            (s.done, s.unreadable, &s.state),
            (0, true, &ShardState::Stopped)
        );
        let problem = s.problem.as_deref().unwrap_or_default();
        assert!(problem.contains("gzip-compressed"), "{problem}");
        assert!(!s.cannot_open);
        // One that cannot be opened at all (a folder in its place; as
        // root, permissions do not stop a read): that, not a bad file.
        std::fs::remove_file(dir.join("games.csv")).unwrap();
        std::fs::create_dir(dir.join("games.csv")).unwrap();
        let st = league_status(root.path()).unwrap();
        let s = &st.shards[0];
        assert_eq!((s.done, s.unreadable, s.cannot_open), (0, true, true));
    }

    #[test]
    fn a_row_without_its_record_is_not_a_game_done() {
        let root = tempfile::tempdir().unwrap();
        let r1 = row("g1", "2026-11-23T10:00:00.000Z");
        let r2 = row("g2", "2026-11-23T10:00:04.000Z");
        let dir = write_shard(root.path(), 1, 1, 2, &[&r1, &r2]);
        assert_eq!(
            league_status(root.path()).unwrap().shards[0].state,
            ShardState::Complete
        );
        // The first game's record gone: named, and that game is to play.
        std::fs::remove_file(dir.join("games/g1.jsonl")).unwrap();
        let s = &league_status(root.path()).unwrap().shards[0];
        assert_eq!(
            (s.done, s.bad_records, &s.state),
            (1, 1, &ShardState::Stopped)
        );
        let first = s.bad_record.as_deref().unwrap_or_default();
        assert!(first.contains("games.csv:2"), "{first}");
        // The last row's record cut short: read whole, as a resume reads it.
        write_shard(root.path(), 1, 1, 2, &[&r1, &r2]);
        std::fs::write(
            dir.join("games/g2.jsonl"),
            "{\"type\":\"game\",\"game_id\":\"g2\"}\n",
        )
        .unwrap();
        let s = &league_status(root.path()).unwrap().shards[0];
        assert_eq!(s.state, ShardState::Stopped);
        assert_eq!(
            s.bad_record.as_deref().map(|b| b.contains("games.csv:3")),
            Some(true),
            "{s:?}"
        );
    }

    #[test]
    fn a_held_lock_is_a_running_shard() {
        let root = tempfile::tempdir().unwrap();
        let dir = write_shard(root.path(), 1, 1, 4, &[]);
        let lock = std::fs::File::create(dir.join("run.lock")).unwrap();
        lock.lock().unwrap();
        // Another open file description of the same file: as another run.
        let st = league_status(root.path()).unwrap();
        assert_eq!(st.shards[0].state, ShardState::Running);
        drop(lock);
        let st = league_status(root.path()).unwrap();
        assert_eq!(st.shards[0].state, ShardState::Stopped);
    }

    #[test]
    fn an_unreadable_league_json_is_named() {
        let root = tempfile::tempdir().unwrap();
        let dir = write_shard(root.path(), 1, 2, 1, &[]);
        std::fs::write(dir.join("league.json"), "{oops").unwrap();
        let e = league_status(root.path()).unwrap_err().to_string();
        assert!(
            e.contains("shard-1-of-2") && e.contains("unreadable"),
            "{e}"
        );
        // The league's own league.json, not a shard's: named, not "no
        // league here".
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("league.json"), "{oops").unwrap();
        let e = league_status(root.path()).unwrap_err().to_string();
        assert!(e.contains("league.json") && e.contains("unreadable"), "{e}");
    }

    #[test]
    fn no_league_and_mixed_splits_are_errors() {
        let root = tempfile::tempdir().unwrap();
        let e = league_status(root.path()).unwrap_err().to_string();
        assert!(e.contains("no league here"), "{e}");
        // A league's games without its league.json: said so, with how to
        // write it again.
        let lost = root.path().join("lost");
        std::fs::create_dir(&lost).unwrap();
        std::fs::write(lost.join("games.csv"), "game_id\n").unwrap();
        let e = league_status(&lost).unwrap_err().to_string();
        assert!(
            e.contains("games.csv is here but no league.json")
                && e.contains("arena run LEAGUE.toml -o"),
            "{e}"
        );
        write_shard(root.path(), 1, 2, 1, &[]);
        write_shard(root.path(), 1, 3, 1, &[]);
        let e = league_status(root.path()).unwrap_err().to_string();
        assert!(e.contains("of 2, of 3"), "{e}");
    }
}
