//! `arena report RESULTS...`: the HTML report of a league
//! (`RESULTS/report/index.html`), of its shards (`results/NAME/shard-*`),
//! or of a folder of shards; and [`Live`], the report `arena run` keeps
//! fresh while a league runs. Resolving folders and printing only; the
//! report itself is `report::html`.

use crate::league::folder::{read_meta, Layout, LeagueMeta};
use crate::league::runner::Event;
use crate::report::html::{write_report, Options, Source};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// A league's results folder (`results/NAME`), several shard folders
    /// (`results/NAME/shard-*`), or a folder holding shard folders.
    #[arg(required = true, value_name = "RESULTS")]
    results: Vec<PathBuf>,
    /// Where to write the report (default: `report/` in the league's
    /// folder: the folder given, or the one holding the shards).
    #[arg(long, short = 'o', value_name = "DIR")]
    out: Option<PathBuf>,
    /// Every game's viewer data (the default: a sample of the games,
    /// bounded by the bots and variants; `arena view` shows any game).
    #[arg(long)]
    all_games: bool,
}

/// The results folders `args` name, and the league folder they belong to,
/// with a warning for each shard of their league left out (the report
/// and the viewer show what is there). `out_given`: the report's place is
/// given, so shard folders in different folders need no common one.
pub(super) fn resolve(
    paths: &[PathBuf],
    out_given: bool,
) -> anyhow::Result<(Vec<PathBuf>, PathBuf)> {
    let (folders, league) = folders_of(paths, out_given)?;
    let files: Vec<PathBuf> = folders.iter().map(|f| Layout::new(f).games_csv()).collect();
    for (name, n, missing) in super::args::missing_shards(&files) {
        let list = missing
            .iter()
            .map(|k| format!("{k}/{n}"))
            .collect::<Vec<_>>();
        eprintln!(
            "warning: league `{name}` has {n} shards and {} not here (no games.csv yet, or not given): the results are of the others (arena status shows where each stands)",
            list.join(", ")
        );
    }
    Ok((folders, league))
}

fn folders_of(paths: &[PathBuf], out_given: bool) -> anyhow::Result<(Vec<PathBuf>, PathBuf)> {
    let paths = paths
        .iter()
        .map(|p| {
            super::args::results_folder(p, "give a league's results folder, e.g. results/NAME")
        })
        .collect::<anyhow::Result<Vec<PathBuf>>>()?;
    // One folder given twice (`results/x results/x/`, a link) is read
    // once: as two shards it made every game a duplicate and put the
    // report in the folder above.
    let mut unique: Vec<PathBuf> = Vec::new();
    for p in paths {
        match unique.iter().find(|u| super::args::same_file(u, &p)) {
            Some(u) => eprintln!(
                "warning: {} is {} again: read once",
                p.display(),
                u.display()
            ),
            None => unique.push(p),
        }
    }
    let paths = unique.as_slice();
    if let [one] = paths {
        if Layout::new(one).games_csv().is_file() {
            return Ok((vec![one.clone()], one.clone()));
        }
        // A folder of shards, gathered as every command gathers them.
        std::fs::read_dir(one).with_context(|| format!("reading {}", one.display()))?;
        let gathered = crate::league::folder::league_shards(one)?;
        for note in &gathered.notes {
            eprintln!("note: {note}");
        }
        let shards: Vec<PathBuf> = gathered
            .dirs
            .into_iter()
            .filter(|p| Layout::new(p).games_csv().is_file())
            .collect();
        if shards.is_empty() {
            bail!(
                "{}: no games.csv here, nor in a shard folder inside it (is it a league's results folder? has the league played a game yet?){}",
                one.display(),
                super::args::leagues_inside(one)
            );
        }
        return Ok((shards, one.clone()));
    }
    let mut league_of: Option<(&PathBuf, crate::league::folder::LeagueMeta)> = None;
    for p in paths {
        let csv = Layout::new(p).games_csv();
        if !csv.is_file() {
            bail!("{}: no games.csv in this folder", p.display());
        }
        // Shards of one league share its fingerprint; two leagues'
        // folders made one report that was neither's.
        let Some(meta) = super::args::meta_beside(&csv) else {
            continue;
        };
        match &league_of {
            Some((first, m)) if !crate::league::folder::one_league(m, &meta) => bail!(
                "{} and {} are results of different leagues (`{}` and `{}`): a report is of one league; give its folder, or the folders of its shards",
                first.display(),
                p.display(),
                m.name,
                meta.name
            ),
            Some(_) => {}
            None => league_of = Some((p, meta)),
        }
    }
    let parent = |p: &PathBuf| {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.clone());
        abs.parent().map(Path::to_path_buf)
    };
    let first = parent(&paths[0]);
    if first.is_none() || paths.iter().any(|p| parent(p) != first) {
        if !out_given {
            bail!("the shard folders are not in one league folder: say where the report goes with --out DIR");
        }
        // The league's name and schedule come from the shards' own
        // league.json.
        return Ok((paths.to_vec(), paths[0].clone()));
    }
    let league = super::args::folder_of(&paths[0]).to_path_buf();
    Ok((paths.to_vec(), league))
}

/// A warning for each league.json among `folders` and `league` that is
/// there but does not read: the report and the viewer then go without
/// what it says (the league's name, its scheduled games, its SPRT), and
/// say so rather than show the folder's name as if nothing were wrong.
pub(super) fn unreadable_meta(folders: &[PathBuf], league: &Path) -> Vec<String> {
    let mut dirs: Vec<&Path> = vec![league];
    dirs.extend(
        folders
            .iter()
            .map(PathBuf::as_path)
            .filter(|f| *f != league),
    );
    dirs.into_iter()
        .filter_map(|dir| {
            let path = Layout::new(dir).league_json();
            let why = match std::fs::read_to_string(&path) {
                Ok(text) => crate::text::json_from_str::<LeagueMeta>(&text).err()?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
                Err(e) => e.to_string(),
            };
            Some(format!(
                "{}: unreadable ({why}): the league's name, scheduled games and SPRT verdict are left out",
                path.display()
            ))
        })
        .collect()
}

/// The league's name and scheduled games, from league.json where there is
/// one (the league's, or its shards').
pub(super) fn league_info(folders: &[PathBuf], league: &Path) -> (String, Option<usize>) {
    let meta = read_meta;
    if let Some(m) = meta(league).filter(|m| m.shard.is_none()) {
        return (m.name, Some(m.games));
    }
    let metas: Vec<LeagueMeta> = folders.iter().filter_map(|f| meta(f)).collect();
    let name = metas.first().map_or_else(
        || {
            league
                .file_name()
                .map_or("league".into(), |n| n.to_string_lossy().into_owned())
        },
        |m| m.name.clone(),
    );
    let total = (metas.len() == folders.len()).then(|| metas.iter().map(|m| m.games).sum());
    (name, total)
}

/// The verdict of the SPRT of the league in `dir`, if its league.json
/// names one, and whether it decided (the report's `sprt` and `decided`).
fn sprt_of(dir: &Path) -> anyhow::Result<(Option<String>, bool)> {
    let verdict = match read_meta(dir).filter(|m| m.shard.is_none()) {
        Some(meta) => super::status::sprt_verdict(dir, &meta)?,
        None => None,
    };
    Ok(verdict.map_or((None, false), |v| (Some(v.line), v.decided)))
}

/// The Swiss's standings and rounds or the knockout's bracket of the
/// league in `dir`, for the report: (title, text). Worked out from its
/// league.json and games.csv as `arena status` does (not read from the
/// swiss.txt or knockout.txt its run's end writes: a running, killed or
/// edited league has none, or a stale one).
fn format_of(dir: &Path) -> Option<(String, String)> {
    use crate::league::swiss_games::report;
    let meta = read_meta(dir).filter(|m| m.shard.is_none())?;
    let (plan, state, _) = crate::league::status::replayed(dir, &meta)?;
    let title = if plan.is_knockout() {
        "Bracket"
    } else {
        "Swiss"
    };
    Some((title.to_string(), report(&plan, &state)))
}

pub(super) fn sources(folders: &[PathBuf]) -> Vec<Source> {
    folders
        .iter()
        .map(|f| {
            let l = Layout::new(f);
            Source {
                games_csv: l.games_csv(),
                records: l.records(),
                analysis: l.analysis(),
            }
        })
        .collect()
}

pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let (folders, league) = resolve(&args.results, args.out.is_some())?;
    let out = args.out.clone().unwrap_or_else(|| league.join("report"));
    not_a_results_place(&out)?;
    for warning in unreadable_meta(&folders, &league) {
        eprintln!("warning: {warning}");
    }
    let (title, scheduled) = league_info(&folders, &league);
    let (sprt, decided) = sprt_of(&league)?;
    let played = how_played(&league, decided);
    match &played {
        Played::Running(holder) => eprintln!(
            "note: a run plays league `{title}` now ({holder}): the page says so, and the run refreshes it as games finish"
        ),
        // Every game written, but a row to mend (`arena status` names it).
        Played::Stopped { done, total, starts } if done >= total => eprintln!(
            "note: league `{title}` has a row of games.csv to mend before it can end (arena status names it) and no run plays it; then: {}",
            starts.join("; ")
        ),
        Played::Stopped { done, total, starts } => eprintln!(
            "note: league `{title}` stopped before its end ({done} of {total} games done) and no run plays it; resume it with: {}",
            starts.join("; ")
        ),
        Played::Over(Some(note)) => eprintln!("note: {note}"),
        Played::Over(None) => {}
    }
    let opts = Options {
        title,
        live: matches!(played, Played::Running(_)),
        stopped: match &played {
            Played::Stopped { starts, .. } => Some(starts.join("; ")),
            _ => None,
        },
        scheduled,
        sprt,
        decided,
        format: format_of(&league),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        all_games: args.all_games,
        on_demand: false,
    };
    let w = write_report(&sources(&folders), &out, &opts)
        .with_context(|| format!("writing the report into {}", out.display()))?;
    for warning in &w.warnings {
        eprintln!("warning: {warning}");
    }
    if w.damaged > 0 {
        // Only the records of the games in the viewer are read.
        let among = match w.shown < w.games {
            true => format!(
                " among the {} games in the viewer (the others' records were not read)",
                w.shown
            ),
            false => String::new(),
        };
        eprintln!(
            "note: {} game(s) whose record is missing or damaged{among}: the report lists them",
            w.damaged
        );
    }
    eprintln!(
        "{} games ({} in the viewer) in {:.1} s ({} chunk(s) of viewer data built, {} kept)",
        w.games,
        w.shown,
        started.elapsed().as_secs_f64(),
        w.chunks_built,
        w.chunks_kept
    );
    super::output::emit(&format!("{}\n", w.index.display()), "the report's path")?;
    Ok(ExitCode::SUCCESS)
}

/// Whether a run plays a league now, as `arena status` tells it (a run
/// holds a shard's lock; the kernel lets go of the lock of a run that
/// ended however it ended, `kill -9` too).
enum Played {
    /// A run holds a shard's lock: `pid N on host H`.
    Running(String),
    /// Every shard is here, games are left and no run plays any: the
    /// commands that resume it (with `--shard K/N` for a shard).
    Stopped {
        done: usize,
        total: usize,
        starts: Vec<String>,
    },
    /// Over, decided, a shard elsewhere (it may be playing there), or no
    /// league.json to tell; with a note when its rating tables are
    /// missing (`status::tables_missing`).
    Over(Option<String>),
}

/// How league `dir` is played now ([`Played`]); `decided`: its SPRT
/// decided (no game is left to play).
fn how_played(dir: &Path, decided: bool) -> Played {
    use crate::league::status::ShardState;
    let Ok(st) = crate::league::status::league_status(dir) else {
        return Played::Over(None);
    };
    if let Some(holder) = st.shards.iter().find_map(|s| s.holder.clone()) {
        return Played::Running(holder);
    }
    if st.shards.iter().any(|s| s.state == ShardState::Missing) {
        return Played::Over(None);
    }
    let meta = st.shards.iter().find_map(|s| read_meta(&s.dir));
    let starts: Vec<String> = super::status::start_commands(&st, meta.as_ref(), decided)
        .into_iter()
        .flatten()
        .collect();
    match (starts.is_empty(), st.total()) {
        (false, Some(total)) => Played::Stopped {
            done: st.done(),
            total,
            starts,
        },
        _ => Played::Over(super::status::tables_missing(&st)),
    }
}

/// Refuses `-o DIR` when DIR is a league's results folder, or (inside)
/// its records, analyses or logs folder (`args::league_place`): the
/// report's pages and viewer data would be mixed with what the league
/// keeps there (and a league folder's own report goes into its `report/`,
/// the default).
fn not_a_results_place(out: &Path) -> anyhow::Result<()> {
    if let Some(what) = super::args::league_place(out) {
        bail!(
            "-o {}: that is {what}: give a folder of its own (a league's report goes into its report/ folder when -o is left out)",
            out.display()
        )
    }
    // A folder of other files (`-o ~`, `-o /`): the report's files would
    // be written among them, and its games/ and bots/ files replaced.
    let others = std::fs::read_dir(out).ok().is_some_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| !e.file_name().to_string_lossy().starts_with('.')))
    });
    if others && !out.join("report.js").is_file() {
        bail!(
            "-o {}: a folder that holds other files and no report (no report.js in it): the report's pages would be written among them and its games/ and bots/ folders' files replaced; give a new or empty folder, or an earlier report's",
            out.display()
        );
    }
    Ok(())
}

/// How often `arena run` refreshes its report.
#[derive(Clone, Copy, Debug)]
pub enum Every {
    Games(u64),
    Time(Duration),
}

/// The report of a running league: written now and then as games finish
/// (in a thread of its own, one at a time, so the league never waits for
/// it), and once more at the end. A report that cannot be written is a
/// warning: it never stops or loses a league.
pub struct Live {
    every: Option<Every>,
    title: String,
    dir: Option<PathBuf>,
    total: Option<usize>,
    since: u64,
    last: Instant,
    worker: Option<JoinHandle<()>>,
}

impl Live {
    /// `every: None` writes no report at all (`--no-report`).
    pub fn new(every: Option<Every>, title: &str) -> Live {
        Live {
            every,
            title: title.to_string(),
            dir: None,
            total: None,
            since: 0,
            last: Instant::now(),
            worker: None,
        }
    }

    pub fn on_event(&mut self, e: &Event) {
        let Some(every) = self.every else { return };
        match e {
            Event::Started { dir, total, .. } => {
                self.dir = Some(dir.clone());
                self.total = Some(*total);
                self.last = Instant::now();
            }
            Event::Finished { .. } => {
                self.since += 1;
                let due = match every {
                    Every::Games(n) => self.since >= n,
                    Every::Time(t) => self.last.elapsed() >= t,
                };
                let busy = self.worker.as_ref().is_some_and(|w| !w.is_finished());
                if due && !busy {
                    self.since = 0;
                    self.last = Instant::now();
                    if let Some(w) = self.worker.take() {
                        let _ = w.join();
                    }
                    let (dir, title, total) = match &self.dir {
                        Some(d) => (d.clone(), self.title.clone(), self.total),
                        None => return,
                    };
                    self.worker = Some(std::thread::spawn(move || {
                        if let Err(e) = write(&dir, &title, total, true) {
                            tracing::warn!(
                                "the league's report was not refreshed: {}",
                                super::output::error_message(&e)
                            );
                        }
                    }));
                }
            }
            _ => {}
        }
    }

    /// Waits for a refresh under way, then writes the report of `dir` as
    /// it stands. Returns where it is, or `None` (with a warning printed)
    /// when it could not be written or no report is wanted.
    pub fn finish(&mut self, dir: &Path) -> Option<PathBuf> {
        self.every?;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
        match write(dir, &self.title, self.total, false) {
            Ok(p) => Some(p),
            Err(e) => {
                if let Some(warning) = not_written(&e) {
                    eprintln!("warning: {warning}");
                }
                None
            }
        }
    }

    /// The league stopped before its end and its report is left as it
    /// stands (a refresh replays every new game's record: `arena report`
    /// does it): its page stops saying "running". A refresh under way is
    /// given a moment to end first, so that it does not put the mark back.
    pub fn interrupted(&mut self, dir: &Path) {
        if self.every.is_none() {
            return;
        }
        if let Some(w) = self.worker.take() {
            let until = Instant::now() + Duration::from_secs(2);
            while !w.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
            if w.is_finished() {
                let _ = w.join();
            }
        }
        if let Err(e) = crate::report::html::mark_stopped(&dir.join("report")) {
            tracing::warn!(
                "the league's report still says it is running: {}",
                super::output::error_message(&anyhow::Error::from(e))
            );
        }
    }
}

/// The warning of a report that could not be written at a league's end:
/// none when the league has no games yet (it stopped before its first,
/// and nothing was lost).
fn not_written(e: &anyhow::Error) -> Option<String> {
    use crate::report::html::HtmlError;
    let no_games = e
        .chain()
        .any(|c| matches!(c.downcast_ref::<HtmlError>(), Some(HtmlError::NoGames(_))));
    (!no_games).then(|| {
        format!(
            "the league's report was not written: {}",
            super::output::error_message(e)
        )
    })
}

fn write(dir: &Path, title: &str, total: Option<usize>, live: bool) -> anyhow::Result<PathBuf> {
    let out = dir.join("report");
    let (sprt, decided) = sprt_of(dir)?;
    // One thread: the league's games need the CPUs more.
    let opts = Options {
        title: title.to_string(),
        live,
        scheduled: total,
        sprt,
        decided,
        format: format_of(dir),
        threads: 1,
        ..Default::default()
    };
    let w = write_report(&sources(&[dir.to_path_buf()]), &out, &opts)
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(w.index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::GameRow;

    fn finished(id: &str) -> Event {
        Event::Finished {
            row: Box::new(GameRow::two_player(id, "filo", id, "a", "b", 1.0)),
            detail: None,
        }
    }

    /// A league whose folder cannot hold a report goes on: the refreshes
    /// and the last report fail with a warning, never a panic; once the
    /// folder has games, the report is written (a game without its record
    /// is a note in it).
    #[test]
    fn the_live_report_never_stops_a_league() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("league");
        let mut live = Live::new(Some(Every::Games(1)), "t");
        live.on_event(&Event::Started {
            total: 2,
            done: 0,
            dir: dir.clone(),
            repaired_bytes: 0,
            cut_record_bytes: 0,
            checked_in: Duration::ZERO,
        });
        live.on_event(&finished("g1"));
        assert_eq!(live.finish(&dir), None);

        std::fs::create_dir_all(&dir).unwrap();
        let mut w = csv::Writer::from_path(dir.join("games.csv")).unwrap();
        if let Event::Finished { row, .. } = finished("g1") {
            w.serialize(*row).unwrap();
        }
        w.flush().unwrap();
        live.on_event(&finished("g2"));
        let index = live.finish(&dir).expect("a report");
        assert_eq!(index, dir.join("report/index.html"));
        let html = std::fs::read_to_string(index).unwrap();
        assert!(
            html.contains("Records that could not be shown (1)"),
            "{html}"
        );

        // A league with no games yet: no warning (the stop said why).
        let empty = tmp.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let mut w = csv::Writer::from_writer(Vec::new());
        if let Event::Finished { row, .. } = finished("g0") {
            w.serialize(*row).unwrap();
        }
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let header = text.lines().next().unwrap();
        std::fs::write(empty.join("games.csv"), format!("{header}\n")).unwrap();
        let e = write(&empty, "t", Some(2), false).expect_err("no games");
        assert_eq!(not_written(&e), None, "{e:#}");
        let e = anyhow::Error::from(std::io::Error::other("disk full"));
        assert!(not_written(&e).is_some_and(|w| w.contains("disk full")));

        let mut off = Live::new(None, "t");
        off.on_event(&finished("g3"));
        assert_eq!(off.finish(&dir), None);
    }
}
