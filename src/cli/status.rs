//! `arena status results/NAME`: every shard of a league at a glance (games
//! done of the shard's total, running or not, last write, rate, time
//! left) and what to start again. The reading is `league::status`'s.

use crate::league::status::{league_status, ShardState};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// The league's results folder (`results/NAME`), or one shard's folder.
    results: PathBuf,
    /// Print the status as JSON.
    #[arg(long)]
    json: bool,
}

/// The folder `arena status` reads for `p`: a folder as it is, a league's
/// games.csv or league.json as its folder; a tournament file, another file
/// or nothing at all is an error saying which (not "no league here").
fn status_folder(p: &std::path::Path) -> anyhow::Result<PathBuf> {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if p.is_file() && name == "league.json" {
        return Ok(super::args::folder_of(p).to_path_buf());
    }
    if p.is_file() && name.ends_with(".toml") {
        anyhow::bail!(
            "{} is a tournament file: give the results folder its league writes (its `output`, results/NAME by default)",
            p.display()
        );
    }
    super::args::results_folder(
        p,
        "give a league's results folder, results/NAME, or a shard's",
    )
}

/// The status of the league at `p` ([`status_folder`]); for a folder that
/// holds leagues rather than one, the error names them.
fn status_of(p: &std::path::Path) -> anyhow::Result<crate::league::status::LeagueStatus> {
    let folder = status_folder(p)?;
    league_status(&folder)
        .map_err(|e| anyhow::anyhow!("{e}{}", super::args::leagues_inside(&folder)))
}

pub fn run(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let st = status_of(&args.results)?;
    // The league's settings, as its (first present) folder's league.json
    // keeps them.
    let meta = st
        .shards
        .iter()
        .find_map(|s| crate::league::folder::read_meta(&s.dir));
    // A sharded league's folder: what is named near a shard is left out,
    // as every command that reads its shards leaves it out.
    if meta.as_ref().is_some_and(|m| m.shard.is_some()) {
        let notes = crate::league::folder::league_shards(&st.dir).map(|g| g.notes);
        for note in notes.unwrap_or_default() {
            eprintln!("note: {note}");
        }
    }
    // A league that stops on an SPRT: its verdict, from its own settings
    // (none while a row does not read: the status names the row).
    let sprt = match (st.shards.as_slice(), &meta) {
        ([one], Some(meta)) if one.problem.is_none() => sprt_verdict(&one.dir, meta)?,
        _ => None,
    };
    let decided = sprt.as_ref().is_some_and(|v| v.decided);
    if args.json {
        let starts = start_commands(&st, meta.as_ref(), decided);
        let text = serde_json::to_string_pretty(&json(&st, sprt.as_ref(), &starts))?;
        super::output::emit(&format!("{text}\n"), "the status")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    let total = st
        .total()
        .map_or_else(|| "?".to_string(), |t| t.to_string());
    // Rows of a Swiss's rounds not paired yet are not games done (nor in
    // its shard's count): they stand on a round that lacks a row (said
    // below).
    let waiting = st.unpaired().map_or(0, |u| u.rows);
    let done = st.done();
    let pct = st
        .total()
        .filter(|&t| t > 0)
        .map(|t| format!(" ({:.1}%)", 100.0 * done as f64 / t as f64))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "league {}: {} shard{}, {done} of {total} games done{pct}{}",
        st.name,
        st.shards.len(),
        if st.shards.len() == 1 { "" } else { "s" },
        match waiting {
            0 => String::new(),
            n => format!(", and {n} rows of rounds not paired yet"),
        }
    );
    if let Some(p) = &st.format_state {
        let _ = writeln!(out, "{}", format_line(p));
    }
    let _ = writeln!(
        out,
        "{:<7} {:<9} {:>15}  {:<14} {:>9}  {:>9}  holder",
        "shard", "state", "done/total", "last write", "games/s", "time left"
    );
    let n = st.shards.len();
    for s in &st.shards {
        let state = state_word(&s.state, decided);
        let total = s.total.map_or_else(|| "?".to_string(), |t| t.to_string());
        let last = s.last_write.map_or_else(|| "-".to_string(), ago);
        let rate = s
            .rate
            .map_or_else(|| "-".to_string(), |r| format!("{r:.1}"));
        let eta = s.eta_s.map_or_else(|| "-".to_string(), duration);
        let _ = writeln!(
            out,
            "{:<7} {:<9} {:>15}  {:<14} {:>9}  {:>9}  {}",
            format!("{}/{n}", s.index),
            state,
            format!("{}/{total}", s.done),
            last,
            rate,
            eta,
            s.holder.as_deref().unwrap_or("-")
        );
    }
    if let Some(v) = &sprt {
        let _ = writeln!(out, "{}", v.line);
    }
    if let Some(note) = tables_missing(&st) {
        let _ = writeln!(out, "note: {note}");
    }
    let starts = start_commands(&st, meta.as_ref(), decided);
    let unpaired = st.unpaired();
    for (s, command) in st.shards.iter().zip(&starts) {
        shard_notes(&mut out, s, n);
        let Some(command) = command else { continue };
        let why = match (&s.state, s.duplicates, s.bad_records) {
            (ShardState::Missing, ..) => format!("no results in {}", s.dir.display()),
            _ if s.cannot_open => "once its games.csv can be read (its permissions, or what is in its place)".to_string(),
            _ if s.unreadable => "once its games.csv is put back as the league wrote it".to_string(),
            // Its games may all be done: the row is what is left.
            _ if s.problem.is_some() => "once that row is mended or removed".to_string(),
            _ if unpaired.is_some() => unpaired.map_or_else(String::new, unpaired_note),
            (_, 0, 0) => "games left and no run holds it".to_string(),
            (_, d, 0) => format!(
                "{d} rows of games written more than once: --repair sets every copy aside in rejected.csv and plays those games again"
            ),
            (_, 0, b) => format!(
                "{b} row(s) whose record is missing or damaged: --repair sets them aside in rejected.csv and plays those games again"
            ),
            (_, d, b) => format!(
                "{d} rows of games written more than once and {b} whose record is missing or damaged: --repair sets them aside in rejected.csv and plays those games again"
            ),
        };
        let _ = match n {
            1 => writeln!(out, "resume it ({why}): {command}"),
            _ => writeln!(out, "start shard {}/{n} ({why}): {command}", s.index),
        };
    }
    super::output::emit(&out, "the status")?;
    Ok(ExitCode::SUCCESS)
}

/// Where a Swiss or a knockout stands: its round, and its leaders or the
/// bots still in (the champion once it is over).
fn format_line(p: &crate::league::swiss_games::Progress) -> String {
    let names = |v: &[String]| match v.len() {
        0..=6 => v.join(", "),
        n => format!("{} and {} more", v[..5].join(", "), n - 5),
    };
    let mut line = match (p.format, &p.stage) {
        ("knockout", Some(stage)) if p.finished >= p.rounds as usize => {
            format!(
                "knockout: {} of {} rounds finished, {stage}",
                p.finished, p.rounds
            )
        }
        ("knockout", Some(stage)) => format!(
            "knockout: round {} of {}, {stage} ({} finished)",
            p.round, p.rounds, p.finished
        ),
        _ if p.finished >= p.rounds as usize => {
            format!("swiss: {} of {} rounds finished", p.finished, p.rounds)
        }
        _ => format!(
            "swiss: round {} of {} ({} finished)",
            p.round, p.rounds, p.finished
        ),
    };
    if let (Some(points), false) = (p.leaders_points, p.leaders.is_empty()) {
        line.push_str(&format!(
            "; leading with {points:.2} points: {}",
            names(&p.leaders)
        ));
    }
    if !p.still_in.is_empty() && p.stage.as_deref() != Some("swiss stage") {
        line.push_str(&format!("; still in: {}", names(&p.still_in)));
    }
    if let Some(c) = &p.champion {
        line.push_str(&format!("; champion: {c}"));
    }
    if !p.on_seed.is_empty() {
        line.push_str(&format!(
            "\nthrough on seed (drawn matches): {}",
            p.on_seed.join(", ")
        ));
    }
    line
}

/// The lines about one shard before its command: a row that does not
/// read, a run stopped by a signal, rows whose record is missing.
fn shard_notes(out: &mut String, s: &crate::league::status::ShardStatus, n: usize) {
    if let Some(problem) = &s.problem {
        let _ = writeln!(
            out,
            "{}{problem}: a resume stops on this {} until it is {}",
            shard_prefix(s.index, n),
            if s.unreadable { "file" } else { "row" },
            if s.cannot_open {
                "readable again (no line of it is read as a game meanwhile)"
            } else if s.unreadable {
                "put back as the league wrote it (no line of it is read as a game)"
            } else {
                "mended or removed"
            },
        );
    }
    if let Some(pid) = s.paused {
        let _ = writeln!(
            out,
            "{}the run that holds it (pid {pid}) is stopped by a signal (SIGSTOP or Ctrl-Z) and plays nothing: `kill -CONT {pid}` (or `fg` in its shell) lets it go on",
            shard_prefix(s.index, n)
        );
    }
    if let Some(first) = &s.bad_record {
        let _ = writeln!(
            out,
            "{}{first}{}",
            shard_prefix(s.index, n),
            match s.bad_records {
                1 => String::new(),
                b => format!(" (and {} more row(s) like it)", b - 1),
            }
        );
    }
}

/// The command that starts (or resumes) each shard that has games left
/// and no run: the command the league was started with (a match's, or
/// `arena run` with the file's path and the flags given), with the
/// shard's `--shard K/N` where it is one of several; `arena run FILE` for
/// folders of versions that kept no command.
pub(super) fn start_commands(
    st: &crate::league::status::LeagueStatus,
    meta: Option<&crate::league::folder::LeagueMeta>,
    decided: bool,
) -> Vec<Option<String>> {
    let started = meta.and_then(|m| m.resume.clone());
    let n = st.shards.len();
    // Rows of rounds not paired yet: `arena run` refuses them.
    let unpaired = st.unpaired().map_or(0, |u| u.rows);
    st.shards
        .iter()
        .map(|s| {
            let left = matches!(s.state, ShardState::Missing | ShardState::Stopped);
            if !left || decided {
                return None;
            }
            Some(match (n, &started) {
                (1, Some(c)) => aimed_at(c, &s.dir),
                (1, None) => "arena run FILE".to_string(),
                // A shard's `-o` is its league's folder, not its own.
                (_, Some(c)) if c.starts_with("arena run ") => {
                    format!("{} --shard {}/{n}", aimed_at(c, &st.dir), s.index)
                }
                _ => format!("arena run FILE --shard {}/{n}", s.index),
            })
            .map(|c| match s.duplicates + s.bad_records + unpaired {
                0 => c,
                _ => format!("{c} --repair"),
            })
        })
        .collect()
}

/// Why a Swiss or knockout with rows of rounds not paired yet resumes
/// only once they are dealt with.
fn unpaired_note(u: &crate::league::swiss_games::Unpaired) -> String {
    format!(
        "round {} lacks a game's row, and {} row{} of the rounds after it stand on it: put the missing row back and resume without --repair, or --repair sets the later rounds' rows aside in rejected.csv and pairs and plays those rounds again",
        u.lacking,
        u.rows,
        if u.rows == 1 { "" } else { "s" }
    )
}

/// `shard K/N: ` before a line about one shard of several.
fn shard_prefix(k: usize, n: usize) -> String {
    match n {
        1 => String::new(),
        _ => format!("shard {k}/{n}: "),
    }
}

/// The command a league was started with, its output folder (`-o`,
/// `--output`) made `dir`, the folder asked about, when it names another
/// (the folder was moved or copied since): so that the command resumes
/// this folder, not the one the league began in.
fn aimed_at(command: &str, dir: &std::path::Path) -> String {
    // Its words as a shell reads them: a quoted folder with a space in
    // its name is one word.
    let Some(mut words) = shlex::split(command) else {
        return command.to_string();
    };
    let at = words.iter().position(|w| w == "-o" || w == "--output");
    let Some(out) = at.and_then(|i| words.get_mut(i + 1)) else {
        return with_output(command, &words, dir);
    };
    match normal(dir) {
        Some(here) if normal(std::path::Path::new(out.as_str())).as_ref() != Some(&here) => {
            *out = here.display().to_string();
            super::args::shell_line(&words)
        }
        _ => command.to_string(),
    }
}

/// `p` absolute, its `.` parts gone, to compare two spellings of a folder.
fn normal(p: &std::path::Path) -> Option<PathBuf> {
    std::path::absolute(p)
        .ok()
        .map(|a| a.components().collect::<PathBuf>())
}

/// A command without `-o` (`arena run FILE ...`, the results where the
/// file says): given `-o DIR` when the file's folder is not `dir`, the
/// folder asked about (moved since, or renamed), so that the command
/// resumes it rather than starting a new league where it was. Unchanged
/// when the file cannot be read.
fn with_output(command: &str, words: &[String], dir: &std::path::Path) -> String {
    let ([arena, run, file, ..], Some(here)) = (words, normal(dir)) else {
        return command.to_string();
    };
    if arena != "arena" || run != "run" {
        return command.to_string();
    }
    let Ok(t) = crate::league::config::Tournament::load(std::path::Path::new(file)) else {
        return command.to_string();
    };
    match normal(&t.output) {
        Some(there) if there != here => {
            let mut words = words.to_vec();
            words.splice(3..3, ["-o".to_string(), here.display().to_string()]);
            super::args::shell_line(&words)
        }
        _ => command.to_string(),
    }
}

/// A shard's state in a word; a stopped league whose SPRT decided is
/// `decided` (nothing is left to play).
fn state_word(state: &ShardState, decided: bool) -> &'static str {
    match state {
        ShardState::Complete => "complete",
        ShardState::Running => "running",
        ShardState::Stopped if decided => "decided",
        ShardState::Stopped => "stopped",
        ShardState::Missing => "missing",
    }
}

/// `arena status --json`: the league's status as `league::status` reads
/// it, each shard's `state` as the text says it (`decided` for a match
/// whose SPRT decided) and `start`, the command that starts or resumes
/// it (null when it has nothing to do), `finished` (no game is left to play: every shard
/// complete, or the SPRT decided) and, for a league with an SPRT, its
/// verdict as `sprt`.
fn json(
    st: &crate::league::status::LeagueStatus,
    sprt: Option<&Verdict>,
    starts: &[Option<String>],
) -> serde_json::Value {
    let decided = sprt.is_some_and(|v| v.decided);
    let mut v = serde_json::to_value(st).unwrap_or_default();
    if let Some(shards) = v.get_mut("shards").and_then(|s| s.as_array_mut()) {
        for ((j, s), start) in shards.iter_mut().zip(&st.shards).zip(starts) {
            j["state"] = state_word(&s.state, decided).into();
            j["start"] = start.clone().into();
        }
    }
    let finished = decided || st.shards.iter().all(|s| s.state == ShardState::Complete);
    v["finished"] = finished.into();
    v["sprt"] = sprt.map_or(serde_json::Value::Null, |s| s.json.clone());
    v
}

/// An SPRT's verdict on a league's games, as `arena status` says it.
pub(super) struct Verdict {
    pub decided: bool,
    pub line: String,
    /// The same for `--json`: the test's settings, its bounds, and
    /// `decision` (`H0`, `H1`, or null), and the LLR and games when it
    /// decided (else the LLR and games so far).
    pub json: serde_json::Value,
}

/// The verdict of the SPRT that `meta` (the league.json in `dir`) names,
/// over the folder's games.csv in the order the games finished (where a
/// run stops); `None` for a league without one.
pub(super) fn sprt_verdict(
    dir: &std::path::Path,
    meta: &crate::league::folder::LeagueMeta,
) -> anyhow::Result<Option<Verdict>> {
    use crate::ratings::sprt::{SprtConfig, SprtTracker};
    let (Some(config), [a, b]) = (&meta.sprt, meta.bots.as_slice()) else {
        return Ok(None);
    };
    let config: SprtConfig = serde_json::from_value(config.clone())
        .map_err(|e| anyhow::anyhow!("{}: its `sprt` is unreadable: {e}", dir.display()))?;
    let csv = crate::league::folder::Layout::new(dir).games_csv();
    let rows = match csv.is_file() {
        true => crate::results::csvio::read_rows(&csv)?,
        false => Vec::new(),
    };
    let mut tracker = SprtTracker::new(config, a, b);
    let mut decided = None;
    for r in &rows {
        decided = decided.or(tracker.add(r));
    }
    let (lower, upper) = config.bounds();
    let head = format!(
        "SPRT {a} vs {b} (H0 {a} - {b} = {}, H1 = {}, {} Elo)",
        crate::ratings::sprt::shown(config.elo0),
        crate::ratings::sprt::shown(config.elo1),
        config.model.as_str()
    );
    let json = serde_json::json!({
        "bot_a": a,
        "bot_b": b,
        "elo0": config.elo0,
        "elo1": config.elo1,
        "alpha": config.alpha,
        "beta": config.beta,
        "model": config.model.as_str(),
        "lower_bound": lower,
        "upper_bound": upper,
        "decided": decided.is_some(),
        "decision": decided.map(|d| match d.decision {
            crate::ratings::sprt::Decision::AcceptH0 => "H0",
            _ => "H1",
        }),
        "llr": decided.map_or_else(|| config.llr(&tracker.penta()), |d| d.llr),
        "games": decided.map_or(rows.len() as u64, |d| d.games),
    });
    Ok(Some(match decided {
        Some(d) => Verdict {
            json,
            decided: true,
            line: format!(
                "{head}: decided, {} after {} games (LLR {:.2}, bounds ({lower:.2}, {upper:.2})); no game left to play",
                d.decision, d.games, d.llr
            ),
        },
        None => Verdict {
            json,
            decided: false,
            line: format!(
                "{head}: no decision yet after {} games (bounds ({lower:.2}, {upper:.2}))",
                rows.len()
            ),
        },
    }))
}

/// `12 s ago`, `3 min ago`, `2.5 h ago`.
fn ago(t: SystemTime) -> String {
    match SystemTime::now().duration_since(t) {
        Ok(d) => format!("{} ago", duration(d.as_secs_f64())),
        Err(_) => "just now".to_string(),
    }
}

fn duration(s: f64) -> String {
    match s {
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 90.0 * 60.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// A league played to its end (no run plays it, no game left) whose
/// rating tables are missing: its run was stopped after its last game,
/// before it wrote them. What writes them (`arena report` and `arena
/// status` say it), from the status already read.
pub(super) fn tables_missing(st: &crate::league::status::LeagueStatus) -> Option<String> {
    use crate::report::tables::FILES;
    let meta = crate::league::folder::read_meta(&st.dir).filter(|m| m.shard.is_none())?;
    let complete = st.shards.iter().all(|s| s.state == ShardState::Complete);
    let missing = complete && FILES.iter().any(|f| !st.dir.join(f).exists());
    missing.then(|| {
        let again = meta.resume.unwrap_or_else(|| "arena run FILE".to_string());
        format!(
            "league `{}` has all its games but not all its rating tables ({}): its run stopped after the last game, before writing them; run it again ({again}: it finds every game done and writes them)",
            meta.name,
            FILES.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{aimed_at, status_folder};
    use std::path::Path;

    /// A games.csv or league.json stands for its folder; a tournament
    /// file, another file and a missing path are named as what they are.
    #[test]
    fn status_names_what_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["games.csv", "league.json", "notes.txt", "lad.toml"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        assert_eq!(status_folder(&d.join("games.csv")).unwrap(), d);
        assert_eq!(status_folder(&d.join("league.json")).unwrap(), d);
        assert_eq!(status_folder(d).unwrap(), d);
        let e = status_folder(&d.join("lad.toml")).unwrap_err().to_string();
        assert!(e.contains("is a tournament file"), "{e}");
        let e = status_folder(&d.join("notes.txt")).unwrap_err().to_string();
        assert!(e.contains("is a file, not a results folder"), "{e}");
        let e = status_folder(&d.join("gone")).unwrap_err().to_string();
        assert!(e.contains("no such folder or file"), "{e}");
    }

    /// A folder moved or copied since its league began is resumed where it
    /// is now; a command without `-o`, or aimed at this folder, is kept.
    #[test]
    fn the_resume_command_names_the_folder_asked_about() {
        let c = "arena run /x/t.toml -j 2 -o /old/place --rounds 3";
        assert_eq!(
            aimed_at(c, Path::new("/new/place")),
            "arena run /x/t.toml -j 2 -o /new/place --rounds 3"
        );
        assert_eq!(aimed_at(c, Path::new("/old/place")), c);
        let plain = "arena run /x/t.toml";
        assert_eq!(aimed_at(plain, Path::new("/new/place")), plain);
        // A folder with a space, quoted, is one word (it was cut in two).
        let spaced = "arena match a b -o '/old/my place' --quiet";
        assert_eq!(
            aimed_at(spaced, Path::new("/new/its place")),
            "arena match a b -o '/new/its place' --quiet"
        );
        assert_eq!(aimed_at(spaced, Path::new("/old/my place")), spaced);
    }
}
