//! The flags and arguments that several subcommands share: the sandbox's
//! limits, `--sandbox`, a results folder named by the user, whole numbers.

/// The limits of each bot's sandbox, as flags (`run`, `play`, `check-bot`):
/// they override a league file's `[limits]` and a bot.toml's.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Memory of each bot's process tree, MiB (its sandbox's limit; over
    /// it the bot forfeits `memory`). Overrides a league file's `[limits]`
    /// (`arena run`) and the bots' bot.toml.
    #[arg(long, value_parser = whole_in::<u64>(1, crate::bot::LimitSettings::MAX_MB))]
    pub memory_mb: Option<u64>,
    /// Processes and threads of each bot's tree at once.
    #[arg(long, value_parser = whole_in::<u64>(1, crate::bot::LimitSettings::MAX_PROCESSES))]
    pub processes: Option<u64>,
    /// CPUs each bot's tree may use (its worker's CPU where pinned).
    #[arg(long, value_parser = whole_in::<u32>(1, u64::from(crate::bot::LimitSettings::MAX_CPUS)))]
    pub cpus: Option<u32>,
    /// Largest file a bot may write, MiB.
    #[arg(long, value_parser = whole_in::<u64>(1, crate::bot::LimitSettings::MAX_MB))]
    pub file_size_mb: Option<u64>,
}

impl LimitArgs {
    pub fn settings(&self) -> crate::bot::LimitSettings {
        crate::bot::LimitSettings {
            memory_mb: self.memory_mb,
            processes: self.processes,
            cpus: self.cpus,
            file_size_mb: self.file_size_mb,
        }
    }
}

/// `--sandbox on|off` of the commands that start bots by hand.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SandboxArg {
    /// Every bot in its sandbox (docs/security.md).
    #[default]
    On,
    /// Bots with this user's rights, environment and network.
    Off,
}

impl SandboxArg {
    /// The bot runner's setting, with the warning when off.
    pub fn sandbox(self) -> crate::bot::Sandbox {
        match self {
            SandboxArg::On => crate::bot::Sandbox::On,
            SandboxArg::Off => {
                errln!(
                    "warning: --sandbox off: the bots run with this user's rights, environment and network; {} (docs/security.md)",
                    crate::bot::UNSANDBOXED_LIMITS
                );
                crate::bot::Sandbox::Off
            }
        }
    }
}

/// What a folder that a command would write its own files into
/// (`arena report -o`, `arena rate --out`) is to a league, when those
/// files would be mixed with the league's own: see [`league_place`].
pub(super) enum LeaguePlace {
    /// A league's results folder itself (it holds games.csv or
    /// league.json).
    Results,
    /// The folder a league keeps its game records, analyses or bots' logs
    /// in (`kept`, what it keeps there), or a folder inside it.
    Kept {
        folder: std::path::PathBuf,
        kept: &'static str,
        inside: bool,
    },
}

impl std::fmt::Display for LeaguePlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeaguePlace::Results => write!(f, "a league's results folder"),
            LeaguePlace::Kept {
                folder,
                kept,
                inside: false,
            } => write!(
                f,
                "a folder a league keeps its {kept} in ({})",
                folder.display()
            ),
            LeaguePlace::Kept { folder, kept, .. } => write!(
                f,
                "inside {}, the folder a league keeps its {kept} in",
                folder.display()
            ),
        }
    }
}

/// Whether `out`, a folder a command is to write into (there or not
/// yet), is a league's results folder, or is (or is inside) its records,
/// analyses or logs folder: `None` when it is none of them. Folders are
/// compared as the file system resolves them (links and `..`).
pub(super) fn league_place(out: &std::path::Path) -> Option<LeaguePlace> {
    use crate::league::folder::Layout;
    let holds_league = |d: &std::path::Path| {
        let l = Layout::new(d);
        l.games_csv().is_file() || l.league_json().is_file()
    };
    if out.is_dir() && holds_league(out) {
        return Some(LeaguePlace::Results);
    }
    // The deepest part of `out` that is there (a relative path's last
    // ancestor is "", the working folder), as the file system resolves
    // it, then the parts of `out` not there yet.
    let mut rest = Vec::new();
    let mut there = None;
    for a in out.ancestors() {
        let a = match a.as_os_str().is_empty() {
            true => std::path::Path::new("."),
            false => a,
        };
        if a.exists() {
            there = Some(a);
            break;
        }
        rest.extend(a.components().next_back());
    }
    let mut real = std::fs::canonicalize(there?).ok()?;
    real.extend(rest.iter().rev());
    for dir in real.ancestors() {
        let Some(league) = dir.parent().filter(|l| holds_league(l)) else {
            continue;
        };
        let l = Layout::new(league);
        let kept = [
            (l.records(), "game records"),
            (l.analysis(), "analyses"),
            (l.logs(), "bots' logs"),
        ];
        if let Some((folder, kept)) = kept.into_iter().find(|(k, _)| k.as_path() == dir) {
            return Some(LeaguePlace::Kept {
                folder,
                kept,
                inside: dir != real,
            });
        }
    }
    None
}

/// A float flag's value (`arena sprt --elo1`): a finite number; `1e400`,
/// `inf` and `nan` are refused as written (not shown as `inf`).
pub(super) fn finite(s: &str) -> Result<f64, String> {
    let t = s.trim();
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!(
            "`{t}` is not a finite number (give one such as 5 or -2.5)"
        )),
        Err(_) => Err(format!("`{s}` is not a number")),
    }
}

/// The results folder a user named: a folder as it is, a league's
/// games.csv as its folder; anything else is an error saying what was
/// given and what is wanted (`wanted`, e.g. "a league's results folder").
pub(crate) fn results_folder(
    p: &std::path::Path,
    wanted: &str,
) -> anyhow::Result<std::path::PathBuf> {
    if p.is_dir() {
        return Ok(p.to_path_buf());
    }
    if p.is_file() {
        if p.file_name().is_some_and(|n| n == "games.csv") {
            return Ok(folder_of(p).to_path_buf());
        }
        anyhow::bail!("{} is a file, not a results folder ({wanted})", p.display());
    }
    // There, but neither: a device, a named pipe, a socket; or a link to
    // nothing.
    if p.symlink_metadata().is_ok() {
        anyhow::bail!(
            "{} is neither a folder nor a file (a device, a named pipe, or a link to nothing), not a results folder ({wanted})",
            p.display()
        );
    }
    anyhow::bail!("{}: no such folder or file ({wanted})", p.display())
}

/// The record of `game_id` in the results folder `dir` (`arena show`,
/// `arena analyse`), or in the shard of it that holds the game when `dir`
/// is a sharded league's folder: an id with no row is told so; a record that is there
/// but damaged is told as damaged, not as missing; a games.csv that does
/// not read up to the game's row names the row that does not read.
pub(crate) fn game_record(
    dir: &std::path::Path,
    game_id: &str,
) -> anyhow::Result<(crate::league::folder::records::RecordAt, String)> {
    use crate::league::folder::{records, Layout, StoreError};
    let layout = Layout::new(dir);
    // A sharded league's folder: the game is in one of its shards, its
    // record taken as found there.
    if !layout.games_csv().is_file() {
        let found = crate::league::folder::shard_dirs(dir)
            .into_iter()
            .find_map(|s| records::find_record(&Layout::new(s), game_id).ok());
        if let Some(found) = found {
            return Ok(found);
        }
    }
    records::find_record(&layout, game_id).map_err(|e| {
        let why = match &e {
            StoreError::Mismatch { .. } => "",
            StoreError::Csv(_) => " (games.csv does not read up to its row)",
            // games.csv itself cannot be opened or read (a folder in its
            // place, its permissions): no row was seen at all.
            StoreError::Io { path, .. } if *path == layout.games_csv() => {
                " (games.csv cannot be read)"
            }
            _ => " (its row is there; the record cannot be read)",
        };
        anyhow::anyhow!("the record of `{game_id}` in {}{why}: {e}", dir.display())
    })
}

/// `name`, or `name-2`, `name-3`, ... when `taken` has it, or one that
/// looks like it (`X` and `x`), already: the same bot twice at one table
/// (`arena match x x`, `arena play -- x x`) is told apart in the
/// standings, the record and the console.
pub(crate) fn unique_name(name: &str, taken: &[String]) -> String {
    use crate::text::look_of;
    let looks: Vec<String> = taken.iter().map(|t| look_of(t)).collect();
    let mut unique = name.to_string();
    let mut n = 2;
    while looks.contains(&look_of(&unique)) {
        unique = format!("{name}-{n}");
        n += 1;
    }
    unique
}

/// A game named on the command line (`--game`): a league's name for
/// 3-player Tricala (`tricala3`, `tricala-3p`) is answered with how to ask
/// for it here.
pub(crate) fn game_arg(name: &str) -> anyhow::Result<crate::engine::Variant> {
    game_named(
        name,
        "`--game tricala --players 3`; check-bot's `--game tricala` checks 2 and 3 players",
    )
}

/// As [`game_arg`], for a command that takes the game as its first
/// argument (`arena state GAME`): the answer says how to ask there.
pub(crate) fn game_positional(name: &str) -> anyhow::Result<crate::engine::Variant> {
    game_named(name, "`arena state tricala --players 3`")
}

fn game_named(name: &str, how: &str) -> anyhow::Result<crate::engine::Variant> {
    name.parse().map_err(|e: crate::engine::EngineError| {
        match name.trim().to_ascii_lowercase().as_str() {
            "tricala3" | "tricala-3p" => anyhow::anyhow!(
                "{e}: 3-player Tricala is the game `tricala` with 3 players here ({how})"
            ),
            _ => e.into(),
        }
    })
}

/// How a games table begins (its first column's name).
const GAMES_HEADER: &[u8] = b"game_id,";

/// The first `n` bytes of file `p` (fewer if it is shorter; none if it
/// cannot be read, or is no regular file: a named pipe or a terminal is
/// not read ahead of its use).
fn file_head(p: &std::path::Path, n: usize) -> Vec<u8> {
    use std::io::Read;
    let mut head = Vec::with_capacity(n);
    if !p.metadata().is_ok_and(|m| m.is_file()) {
        return head;
    }
    if let Ok(f) = std::fs::File::open(p) {
        let _ = f.take(n as u64).read_to_end(&mut head);
    }
    head
}

/// The games.csv a user named: a file as it is, a league's results folder
/// (or a shard's) as its games.csv; a folder without one is an error
/// saying so.
pub(crate) fn games_csv_of(p: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    if !p.is_dir() {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".toml") {
            anyhow::bail!(
                "{} is a tournament file: give the results folder its league writes (its `output`, results/NAME by default) or the games.csv there",
                p.display()
            );
        }
        // Named as a table of standings and not a games table inside.
        let games_inside = || file_head(p, 16).starts_with(GAMES_HEADER);
        if crate::report::tables::FILES.contains(&name) && !games_inside() {
            anyhow::bail!(
                "{} is a table of standings, not of games: give the games.csv beside it (or the folder)",
                p.display()
            );
        }
        return Ok(p.to_path_buf());
    }
    use crate::league::folder::Layout;
    let csv = Layout::new(p).games_csv();
    if !csv.is_file() {
        let in_shard = |d: &std::path::PathBuf| Layout::new(d).games_csv().is_file();
        if crate::league::folder::shard_dirs(p).iter().any(in_shard) {
            anyhow::bail!(
                "{} is the folder of a sharded league: give the games.csv of each shard ({}/shard-*/games.csv)",
                p.display(),
                p.display()
            );
        }
        anyhow::bail!(
            "{} is a folder without a games.csv: give a league's results folder or a games.csv",
            p.display()
        );
    }
    Ok(csv)
}

/// The games.csv of each shard folder in `dir` that has one, gathered as
/// every command gathers a sharded league's shards
/// ([`crate::league::folder::league_shards`]: refused when they are not one
/// league's); a folder named near a shard's is noted on stderr, left out.
fn shards_in(dir: &std::path::Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let gathered = crate::league::folder::league_shards(dir)?;
    for note in &gathered.notes {
        eprintln!("note: {note}");
    }
    Ok(gathered
        .dirs
        .into_iter()
        .map(|d| crate::league::folder::Layout::new(d).games_csv())
        .filter(|csv| csv.is_file())
        .collect())
}

/// The games.csv files a user named with `p`: as [`games_csv_of`], and a
/// sharded league's folder (`results/NAME`, which holds its shards'
/// folders) as the games.csv of each shard.
pub(crate) fn games_csvs_of(p: &std::path::Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let shards = match p.is_dir() && !crate::league::folder::Layout::new(p).games_csv().is_file() {
        true => shards_in(p)?,
        false => Vec::new(),
    };
    match shards.is_empty() {
        true => Ok(vec![games_csv_of(p)?]),
        false => Ok(shards),
    }
}

/// The files a league keeps in its results folder, by name, beside its
/// rating tables ([`crate::report::tables::FILES`]).
const RESULTS_FILES: &[&str] = &[
    "games.csv",
    "games.csv.orig",
    "league.json",
    "run.lock",
    "rejected.csv",
    "records.zdict",
    "swiss.txt",
    "knockout.txt",
];

/// The folders of a league's results folder whose files are its own
/// (records, the bots' stderr logs, a report, analyses).
const RESULTS_FOLDERS: &[&str] = &["games", "logs", "report", crate::results::analysis::FOLDER];

/// Refuses `path`, a file the flag `flag` would write, when it is one a
/// league keeps in its results folder (games.csv, league.json, a record
/// log, the records' dictionary, a Swiss's notes, a file in its `games/`
/// or `logs/`, ...) or any results table: writing it would destroy what
/// is recorded there.
pub(crate) fn not_a_results_file(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // Known by what it holds, whatever its name (a hard link to a
    // league's file has any name): a games table, a league.json, a
    // zstd-compressed record log.
    let holds_results = || {
        let head = file_head(path, 4096);
        head.starts_with(GAMES_HEADER)
            || head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
            || head.starts_with(&[0x37, 0xa4, 0x30, 0xec])
            || head.starts_with(b"{") && memchr::memmem::find(&head, b"\"fingerprint\"").is_some()
    };
    let named = RESULTS_FILES.contains(&name) || crate::report::tables::FILES.contains(&name);
    // A file already in one of a league's own folders (a record of an
    // older version, a bot's stderr log, a page of its report).
    let kept = || {
        let folder = path.parent().filter(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| RESULTS_FOLDERS.contains(&n))
        });
        path.is_file()
            && folder
                .and_then(|f| f.parent())
                .is_some_and(|root| root.join("league.json").is_file())
    };
    if named || name.ends_with(".jsonl.zst") || holds_results() || kept() {
        anyhow::bail!(
            "{flag} {}: that is a file of a league's results (or named as one), which writing would destroy: give another file",
            path.display()
        );
    }
    Ok(())
}

/// Refuses `path`, a file the flag `flag` would write, when it is one of
/// `inputs` (what the command reads: its tournament file, its openings
/// book, each with what it is), or the same file as another output flag
/// (`others`): `arena run my.toml --pgn my.toml` would overwrite the
/// league's own file. Files are compared as the file system resolves them
/// (links and `..` included); a file not there yet is none of them.
pub(crate) fn not_an_input(
    (flag, path): (&str, &std::path::Path),
    inputs: &[(&str, &std::path::Path)],
    others: &[(&str, Option<&std::path::Path>)],
) -> anyhow::Result<()> {
    let same = |p: &std::path::Path| same_file(p, path);
    if let Some((what, _)) = inputs.iter().find(|(_, p)| same(p)) {
        anyhow::bail!(
            "{flag} {}: that is {what}, which writing would destroy: give another file",
            path.display()
        );
    }
    if let Some((other, _)) = others
        .iter()
        .find(|(f, p)| *f != flag && p.is_some_and(same))
    {
        anyhow::bail!(
            "{flag} {}: {other} names the same file: give each its own",
            path.display()
        );
    }
    Ok(())
}

/// Whether `a` and `b` are one file as the file system resolves them
/// (links and `..` included); a file not there is no file.
pub(crate) fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // One file under two names (a hard link) is the same file too.
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return (x.dev(), x.ino()) == (y.dev(), y.ino());
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Game options given as `--option KEY=VALUE` flags (`play`, `state`),
/// in the order given: a key given twice is refused (which one was meant
/// cannot be told; a league file's table cannot hold one twice either).
pub(crate) fn game_options(
    options: &[String],
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut out = std::collections::BTreeMap::new();
    for kv in options {
        let Some((k, v)) = kv.split_once('=') else {
            anyhow::bail!("--option `{kv}`: expected KEY=VALUE");
        };
        let (k, v) = (k.trim(), v.trim());
        if let Some(was) = out.insert(k.to_string(), v.to_string()) {
            anyhow::bail!(
                "--option `{k}` is given twice (`{k}={was}`, then `{k}={v}`): give it once"
            );
        }
    }
    Ok(out)
}

/// A whole number, 0 or more (a time in ms, a seed, a count), for flags
/// whose bad value should be named as what it is: `-5` is negative, not
/// a digit clap could not read.
pub(super) fn whole(s: &str) -> Result<u64, String> {
    whole_between(s, 0, u64::MAX)
}

/// A flag's whole number from `lo` to `hi`, as the flag's type: a value
/// that is negative, a fraction or out of range says so and gives the
/// range (clap's ranged parsers call `-1` an "invalid digit").
pub(super) fn whole_in<T>(
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    move |s| {
        let n = whole_between(s, lo, hi)?;
        T::try_from(n).map_err(|_| format!("{n} is too large"))
    }
}

fn whole_between(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let t = s.trim();
    let range = match hi {
        u64::MAX => format!("{lo} or more"),
        _ => format!("from {lo} to {hi}"),
    };
    let n = t.parse::<u64>().map_err(|_| match t.parse::<i128>() {
        Ok(n) if n < 0 => format!("{n} is negative: give a whole number, {range}"),
        Ok(_) => format!("{t} is too large: give a whole number, {range}"),
        Err(_) => format!("`{s}` is not a whole number ({range})"),
    })?;
    match (lo..=hi).contains(&n) {
        true => Ok(n),
        false => Err(format!("{n} is out of range: give a whole number, {range}")),
    }
}

/// A bot's command line given in one argument (`"python3 my_bot.py"`),
/// split into words as a POSIX shell would: quotes and backslashes keep a
/// word with spaces whole (`"python3 'my bot.py'"`). No word is expanded.
pub(crate) fn command_words(arg: &str) -> anyhow::Result<Vec<String>> {
    match shlex::split(arg) {
        Some(words) => Ok(words),
        None => anyhow::bail!(
            "the bot command `{arg}` has a quote that is not closed (or ends in a backslash)"
        ),
    }
}

pub(crate) use crate::text::shell_word;

/// The folder `file` is in: its parent, or `.` for a bare file name.
pub(super) fn folder_of(file: &std::path::Path) -> &std::path::Path {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    }
}

/// The league.json beside `file` (a league's games.csv), if there is one.
pub(super) fn meta_beside(file: &std::path::Path) -> Option<crate::league::folder::LeagueMeta> {
    crate::league::folder::read_meta(folder_of(file))
}

/// A command line of `words`, each quoted as [`shell_word`] quotes it.
pub(crate) fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a command does with the games it reads, for [`results_inputs`]'s
/// messages: `rate` / `rating`, `export` / `exporting`, `test` / `testing`.
pub(super) struct Doing {
    pub verb: &'static str,
    pub ing: &'static str,
}

/// The games.csv files that `inputs` name, checked as `arena rate`, `arena
/// pgn` and `arena sprt` read them: a league's results folder stands for
/// its games.csv, a sharded league's folder for each of its shards'; every
/// shard of a sharded league must be there, or `partial` (`--partial`),
/// with a warning naming those left out.
pub(super) fn results_inputs(
    inputs: &[std::path::PathBuf],
    partial: bool,
    doing: Doing,
) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for f in inputs {
        // `-` as Unix tools take it: not read (the rows are read more
        // than once, and a pipe gives them once).
        if f.as_os_str() == "-" && !f.exists() {
            anyhow::bail!(
                "`-`: the rows are not read from standard input; save them to a file first (`... > games.csv`) and give its path, or give a results folder"
            );
        }
        files.extend(games_csvs_of(f)?);
    }
    for (league, n, missing) in missing_shards(&files) {
        let list = missing
            .iter()
            .map(|k| format!("{k}/{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let many = missing.len() > 1;
        if !partial {
            anyhow::bail!(
                "league `{league}` has {n} shards and shard{} {list} {} not among the files (arena status shows where each stands); give {}, or --partial to {} what is here",
                if many { "s" } else { "" },
                if many { "are" } else { "is" },
                if many { "them" } else { "it" },
                doing.verb
            );
        }
        eprintln!(
            "warning: {} part of league `{league}` ({n} shards): {list} left out (--partial)",
            doing.ing
        );
    }
    Ok(files)
}

/// An error of reading merged files, made clearer: a game id with
/// different content in two files that sit beside the league.json of
/// different leagues (another name, or another schedule) is no
/// conflict of one league's records but two leagues' ids colliding.
pub(super) fn merged_error(e: crate::report::tables::TablesError) -> anyhow::Error {
    let crate::report::tables::TablesError::Conflict(c) = &e else {
        return e.into();
    };
    let (a, b, rows) = (&c.files[0], &c.files[1], &c.rows);
    if let Some(note) = timings_only(a, b, rows) {
        return anyhow::anyhow!("{e}: {note}");
    }
    let (Some(x), Some(y)) = (meta_beside(a), meta_beside(b)) else {
        return e.into();
    };
    let other_league = match (&x.league, &y.league) {
        (Some(p), Some(q)) => p != q,
        _ => x.shard.is_none() && y.shard.is_none() && x.fingerprint != y.fingerprint,
    };
    if x.name == y.name && !other_league {
        return e.into();
    }
    let names = match x.name == y.name {
        true => format!("two leagues named `{}`, of different schedules", x.name),
        false => format!("`{}` and `{}`", x.name, y.name),
    };
    anyhow::anyhow!(
        "{e}; the two files are of different leagues ({names}, by their league.json), whose game ids collide: read them apart, or give one league's game ids a prefix of their own"
    )
}

/// When the two rows of one game id (`rows`, read from files `a` and `b`)
/// differ only in when and how long the game took (`started_at`,
/// `duration_ms`, `time*_ms`) and where its record is (`record_*`): the
/// same game played twice, as the same shard on two machines; said so,
/// with what to do (docs/league.md, "More than one machine").
fn timings_only(
    a: &std::path::Path,
    b: &std::path::Path,
    rows: &[crate::results::GameRow; 2],
) -> Option<String> {
    const TIMINGS: [&str; 8] = [
        "started_at",
        "duration_ms",
        "time0_ms",
        "time1_ms",
        "time2_ms",
        "record_file",
        "record_offset",
        "record_length",
    ];
    let differ = crate::results::csvio::differences(&rows[0], &rows[1]);
    if differ.is_empty() || differ.iter().any(|(c, _, _)| !TIMINGS.contains(c)) {
        return None;
    }
    let keep = match a == b {
        true => format!("delete one of the two rows from {}", a.display()),
        false => format!("give one of {} and {}", a.display(), b.display()),
    };
    Some(format!(
        "its results agree and only the timings differ: the same games played twice (the same shard on two machines?). Keep one copy of them: {keep}"
    ))
}

/// The shards of each league that the files leave out: for every file
/// whose folder's league.json says it is shard K of N, the shards of 1..N
/// of that league not given. Returns (league, N, missing Ks).
pub(super) fn missing_shards(files: &[std::path::PathBuf]) -> Vec<(String, usize, Vec<usize>)> {
    use std::collections::BTreeMap;
    let mut given: BTreeMap<(String, usize), Vec<usize>> = BTreeMap::new();
    for f in files {
        let Some(meta) = meta_beside(f) else {
            continue;
        };
        let Some((k, n)) = meta.shard.as_deref().and_then(|s| s.split_once('/')) else {
            continue;
        };
        let (Ok(k), Ok(n)) = (k.parse::<usize>(), n.parse::<usize>()) else {
            continue;
        };
        given.entry((meta.name, n)).or_default().push(k);
    }
    given
        .into_iter()
        .filter_map(|((name, n), ks)| {
            let missing: Vec<usize> = (1..=n).filter(|k| !ks.contains(k)).collect();
            (!missing.is_empty()).then_some((name, n, missing))
        })
        .collect()
}

/// The first of `words` that is one of the long options of command `A`
/// (`--game`, `--json=...`): a word given after the bot's command, or
/// after `--`, that a user who meant it for the command should be told of.
pub fn own_flag_among<A: clap::Args>(words: &[String]) -> Option<&str> {
    let command = A::augment_args(clap::Command::new("arena"));
    let longs: Vec<String> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .collect();
    words.iter().map(String::as_str).find(|w| {
        let flag = w.split_once('=').map_or(*w, |(f, _)| f);
        longs.iter().any(|l| l == flag)
    })
}

/// An error when one of `bots` (each a bot: a name, a folder or a quoted
/// command) is one of `command`'s own options (`A`'s): given after `--`,
/// every word is taken for a bot, and `--seed 3` made two more seats.
pub fn no_option_among_bots<A: clap::Args>(command: &str, bots: &[String]) -> anyhow::Result<()> {
    match own_flag_among::<A>(bots) {
        Some(flag) => anyhow::bail!(
            "`{flag}` is among the BOTs: after `--` every word is a bot; give {command}'s options before `--` (`arena {command} [OPTIONS] -- BOT...`)"
        ),
        None => Ok(()),
    }
}

/// What to add to "no league here" for folder `dir`: the leagues in its
/// folders (each with a league.json or a games.csv), when it holds any
/// (`arena status results` for `results/demo`), or nothing.
pub fn leagues_inside(dir: &std::path::Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let p = e.path();
            p.join("league.json").is_file() || p.join("games.csv").is_file()
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    match names.first() {
        None => String::new(),
        Some(first) => format!(
            "; the leagues in it: {} (give one's folder, as {})",
            names.join(", "),
            dir.join(first).display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::game_arg;
    use crate::engine::Variant;

    #[test]
    fn a_flag_out_of_its_range_is_told_the_range() {
        let mb = super::whole_in::<u32>(1, 1024);
        assert_eq!(mb("16"), Ok(16));
        for (bad, said) in [
            ("-1", "-1 is negative: give a whole number, from 1 to 1024"),
            (
                "0",
                "0 is out of range: give a whole number, from 1 to 1024",
            ),
            ("2048", "2048 is out of range"),
            ("1.5", "`1.5` is not a whole number (from 1 to 1024)"),
        ] {
            let err = mb(bad).unwrap_err();
            assert!(err.starts_with(said), "{bad}: {err}");
        }
        let any = super::whole_in::<u8>(0, u64::MAX);
        assert!(any("-3").unwrap_err().ends_with("0 or more"));
        assert_eq!(any("300"), Err("300 is too large".into()));
    }

    /// A game id twice in one file is judged on the two rows in conflict
    /// (not on the file's first row of that id, twice): results that
    /// differ are named, and timings alone never advise giving one of a
    /// file and itself.
    #[test]
    fn a_conflict_in_one_file_is_judged_on_its_two_rows() {
        use crate::results::GameRow;
        let conflict = |second: GameRow, b: &str| {
            let first = GameRow::two_player("g1", "filo", "p1", "x", "y", 1.0);
            let other = GameRow::two_player("g2", "filo", "p1", "y", "x", 0.0);
            let e = crate::report::tables::merge(vec![
                ("t.csv".into(), vec![(2, first), (3, other)]),
                (b.into(), vec![(4, second)]),
            ])
            .unwrap_err();
            super::merged_error(e).to_string()
        };
        let swapped = GameRow::two_player("g1", "filo", "p1", "x", "y", 0.0);
        let e = conflict(swapped, "t.csv");
        assert_eq!(
            e,
            "game_id `g1` appears twice with different content: t.csv:2 and t.csv:4: they differ in score0 (1.0 against 0.0) and score1 (0.0 against 1.0)"
        );
        let timed = GameRow {
            duration_ms: 7,
            time0_ms: Some(1.5),
            ..GameRow::two_player("g1", "filo", "p1", "x", "y", 1.0)
        };
        let e = conflict(timed.clone(), "t.csv");
        assert!(
            e.contains("they differ in duration_ms (1 against 7) and time0_ms (empty against 1.5): its results agree and only the timings differ")
                && e.ends_with("Keep one copy of them: delete one of the two rows from t.csv"),
            "{e}"
        );
        let e = conflict(timed, "u.csv");
        assert!(e.ends_with("give one of t.csv and u.csv"), "{e}");
    }

    #[test]
    fn a_tournament_file_or_a_standings_table_is_no_games_csv() {
        use super::games_csv_of;
        use std::path::Path;
        let err = games_csv_of(Path::new("tournaments/demo.toml")).unwrap_err();
        assert!(err.to_string().contains("is a tournament file"), "{err}");
        let err = games_csv_of(Path::new("results/demo/ratings.csv")).unwrap_err();
        assert!(err.to_string().contains("not of games"), "{err}");
        let f = Path::new("results/demo/games.csv");
        assert_eq!(games_csv_of(f).unwrap(), f);
    }

    #[test]
    fn an_output_flag_naming_an_input_or_another_output_is_refused() {
        use super::not_an_input;
        let dir = tempfile::tempdir().unwrap();
        let league = dir.path().join("my.toml");
        std::fs::write(&league, "name = \"my\"\n").unwrap();
        let out = dir.path().join("out.pgn");
        std::fs::write(&out, "").unwrap();
        let inputs = [("the tournament file", league.as_path())];
        // The same file by another spelling.
        let again = dir.path().join(".").join("my.toml");
        let e = not_an_input(("--pgn", &again), &inputs, &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--pgn") && e.contains("that is the tournament file"),
            "{e}"
        );
        let others = [
            ("--pgn", Some(out.as_path())),
            ("--log", Some(out.as_path())),
        ];
        let e = not_an_input(("--log", &out), &inputs, &others)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--pgn names the same file"), "{e}");
        // Another file, and one not there yet, are fine.
        not_an_input(("--pgn", &out), &inputs, &[("--pgn", Some(out.as_path()))]).unwrap();
        not_an_input(("--pgn", &dir.path().join("new.pgn")), &inputs, &others).unwrap();
        assert_eq!(std::fs::read_to_string(&league).unwrap(), "name = \"my\"\n");
    }

    #[test]
    fn a_game_option_given_twice_is_refused() {
        use super::game_options;
        let o = |v: &[&str]| game_options(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let got = o(&["columns=6", " other = x "]).unwrap();
        assert_eq!(got.get("columns").map(String::as_str), Some("6"));
        assert_eq!(got.get("other").map(String::as_str), Some("x"));
        let e = o(&["columns=6", "columns =8"]).unwrap_err().to_string();
        assert!(e.contains("`columns` is given twice"), "{e}");
        assert!(e.contains("columns=6") && e.contains("columns=8"), "{e}");
        let e = o(&["columns"]).unwrap_err().to_string();
        assert!(e.contains("expected KEY=VALUE"), "{e}");
    }

    #[test]
    fn a_bot_command_is_split_as_a_shell_splits_it() {
        use super::command_words;
        assert_eq!(
            command_words("python3  'my bot.py' --depth\\ 3").unwrap(),
            ["python3", "my bot.py", "--depth 3"]
        );
        assert_eq!(command_words("  ").unwrap(), Vec::<String>::new());
        let err = command_words("python3 'my bot.py").unwrap_err().to_string();
        assert!(err.contains("not closed"), "{err}");
    }

    #[test]
    fn a_leagues_name_for_3_player_tricala_says_how_to_ask_for_it() {
        assert_eq!(game_arg("kisolo").unwrap(), Variant::Kisolo);
        for name in ["tricala3", "Tricala-3p"] {
            let e = game_arg(name).unwrap_err().to_string();
            assert!(e.contains("`--game tricala --players 3`"), "{e}");
        }
        // `arena state` takes the game as its argument, not as --game.
        let e = super::game_positional("tricala3").unwrap_err().to_string();
        assert!(e.contains("`arena state tricala --players 3`"), "{e}");
        assert!(!e.contains("--game"), "{e}");
        let e = game_arg("chess").unwrap_err().to_string();
        assert!(e.starts_with("unknown game `chess`"), "{e}");
        assert!(!e.contains("players"), "{e}");
    }
}
