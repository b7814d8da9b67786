//! The league runner end to end: the real `arena` binary, real bot processes
//! (the Rust random bot, made reproducible with RANDOM_BOT_SEED), real files.
//! Covers a full run, resume after SIGKILL with a torn last line, Ctrl-C,
//! shards whose merge equals one run, and bad input.

use crate::common;

use common::league::{arena, data_lines, run, run_ok, run_under, wait_for_rows};
use common::{copy_dir, misbehave_py, processes_with, record_text};
use mancala_arena::league::config::Tournament;
use mancala_arena::league::schedule;
use mancala_arena::results::{csvio, GameRow};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// A tournament of three random bots over every variant, reproducible
/// through the seed of `game_start` alone.
fn write_tournament(dir: &Path, rounds: u32, extra: &str) -> PathBuf {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let text = format!(
        r#"
name = "t"
seed = 11
bots = [
  {{ name = "a", command = ["{bot}"] }},
  {{ name = "b", command = ["{bot}"] }},
  {{ name = "c", command = ["{bot}"] }},
]
variants = ["filo", "tricala", "tricala3", "hackaback", "kisolo", "diffusion"]
rounds = {rounds}
openings = 2
max_plies = 300
concurrency = 2
output = "out"
{extra}
"#
    );
    let path = dir.join("t.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `file` (again) and checks that it succeeds and that `csv` then
/// holds every game of the schedule exactly once; returns the rows.
fn run_finishes_the_schedule(file: &Path, csv: &Path) -> Vec<GameRow> {
    run_ok(file, &[]);
    let got = rows(csv);
    let ids: BTreeSet<String> = by_id(&got).into_keys().collect();
    assert_eq!(ids, schedule_ids(file));
    got
}

/// `arena run FILE --quiet` in the background, its stderr to `stderr`.
/// Writes `NAME.toml` in `dir`: the random bot `good` against the bot
/// `other` (its command as a TOML array), over `variants`, into `out/`.
fn good_against(dir: &Path, name: &str, other: &str, command: &str, variants: &str) -> PathBuf {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            r#"
name = "{name}"
bots = [
  {{ name = "good", command = ["{bot}"] }},
  {{ name = "{other}", command = {command} }},
]
variants = [{variants}]
output = "out"
"#
        ),
    )
    .unwrap();
    file
}

fn spawn_run(file: &Path, stderr: Stdio) -> Child {
    arena()
        .arg("run")
        .arg(file)
        .arg("--quiet")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

fn rows(csv: &Path) -> Vec<GameRow> {
    csvio::read_rows(csv).unwrap()
}

/// What a game is, apart from how long it took.
type Key = (String, Vec<String>, Vec<String>, String, u32, u64, String);

fn by_id(rows: &[GameRow]) -> BTreeMap<String, Key> {
    let mut m = BTreeMap::new();
    for r in rows {
        let key = (
            r.variant.clone(),
            r.seats().iter().map(|s| s.to_string()).collect(),
            r.scores().iter().map(|s| format!("{s:.4}")).collect(),
            r.reason.clone(),
            r.plies,
            r.seed,
            r.opening.clone(),
        );
        assert!(
            m.insert(r.game_id.clone(), key).is_none(),
            "{} twice",
            r.game_id
        );
    }
    m
}

fn schedule_ids(file: &Path) -> BTreeSet<String> {
    let t = Tournament::load(file).unwrap();
    schedule::schedule(&t)
        .into_iter()
        .map(|g| g.game_id)
        .collect()
}

#[test]
fn a_full_run_writes_every_game_its_records_and_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = run_ok(&file, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Elo"), "{stdout}");
    let res = dir.path().join("out");
    let got = rows(&res.join("games.csv"));
    let ids: BTreeSet<String> = got.iter().map(|r| r.game_id.clone()).collect();
    assert_eq!(ids, schedule_ids(&file));
    // 3 pairs x 2 orders x 5 two-player variants + 1 triple x 6 orders.
    assert_eq!(got.len(), 3 * 2 * 5 + 6);
    // One record log (and the frames' dictionary), no file per game; each
    // row says where its record is.
    let mut files: Vec<String> = std::fs::read_dir(res.join("games"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["records-0000.jsonl.zst", "records.zdict"]);
    assert_eq!(
        frames(&res.join("games/records-0000.jsonl.zst")).len(),
        got.len()
    );
    for r in &got {
        assert_eq!(r.record_file, "records-0000.jsonl.zst");
        let total: f64 = r.scores().iter().sum();
        assert!((total - r.players as f64 / 2.0).abs() < 1e-9);
        assert!(r.offender.is_none(), "random bots do not forfeit: {r:?}");
        // The added columns: when, which versions, how long each seat thought.
        assert!(
            humantime::parse_rfc3339(&r.started_at).is_ok(),
            "{}",
            r.started_at
        );
        assert_eq!((r.version0.as_str(), r.version1.as_str()), ("1.0", "1.0"));
        assert_eq!(r.version2, if r.players == 3 { "1.0" } else { "" });
        let record = record_text(&res, r);
        assert!(record.starts_with(&format!(
            r#"{{"type":"game","format":2,"game_id":"{}","#,
            r.game_id
        )));
        // Format 2: decision lines without `type`, the flags only when
        // true, the time (`us`) only when not 0.
        let mut think = [0u64; 3];
        for line in record.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if v.get("type").is_none() && v.get("forced").is_none() && v.get("opening").is_none() {
                think[v["seat"].as_u64().unwrap() as usize] += v["us"].as_u64().unwrap_or(0);
            }
            assert!(v["forced"] != false && v["opening"] != false, "{line}");
        }
        let times = [r.time0_ms, r.time1_ms, r.time2_ms];
        for seat in 0..3 {
            match seat < r.players as usize {
                true => assert_eq!(times[seat], Some(think[seat] as f64 / 1000.0)),
                false => assert_eq!(times[seat], None),
            }
        }
    }
    assert!(got.iter().any(|r| r.players == 3 && r.variant == "tricala"));
    for f in [
        "ratings.csv",
        "pairs.csv",
        "variants.csv",
        "crosstable.csv",
        "league.json",
    ] {
        assert!(res.join(f).is_file(), "{f}");
    }
    assert!(std::fs::read_dir(res.join("logs")).unwrap().count() > 0);
    // The log is the records' frames one after another, in the rows'
    // order; `zstd -d` with the dictionary beside them gives their lines.
    let log: String = frames(&res.join("games/records-0000.jsonl.zst"))
        .into_iter()
        .map(|(_, _, text)| text)
        .collect();
    let joined: String = got.iter().map(|r| record_text(&res, r)).collect();
    assert_eq!(log, joined);
    if let Ok(out) = Command::new("zstd")
        .args(["-dc", "-D", "records.zdict", "records-0000.jsonl.zst"])
        .current_dir(res.join("games"))
        .output()
    {
        assert_eq!(String::from_utf8_lossy(&out.stdout), joined);
    }

    // Running it again finds everything done and changes nothing.
    let before = std::fs::read_to_string(res.join("games.csv")).unwrap();
    let again = run(&file, &[]);
    assert!(again.status.success());
    assert_eq!(
        before,
        std::fs::read_to_string(res.join("games.csv")).unwrap()
    );
}

/// A record that cannot be written stops the league at once with an error
/// that names the game and the record log; the game is not counted as
/// done, and the same command finishes once the cause is gone.
#[test]
fn a_record_that_cannot_be_written_stops_the_league_and_resume_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let ids = schedule_ids(&file);
    // A non-empty folder where the record log should go: its open fails.
    let blocker = dir.path().join("out/games/records-0000.jsonl.zst");
    std::fs::create_dir_all(blocker.join("x")).unwrap();

    let out = run(&file, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("could not be recorded") && stderr.contains("records-0000.jsonl.zst"),
        "{stderr}"
    );
    let csv = dir.path().join("out/games.csv");
    assert!(rows(&csv).is_empty());

    std::fs::remove_dir_all(&blocker).unwrap();
    let again = run(&file, &[]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let after = rows(&csv);
    assert_eq!(
        after
            .iter()
            .map(|r| r.game_id.clone())
            .collect::<BTreeSet<_>>(),
        ids
    );
    for r in &after {
        assert!(record_text(&dir.path().join("out"), r).contains(r#""type":"end""#));
    }
}

/// One writer per results folder: a second run into a folder in use fails
/// at once and names the first run's pid; the lock dies with its holder, so
/// a resume after kill -9 needs no clean-up and gives each game once.
/// A league whose terminal goes away (`arena run ... 2>&1 | head -3`, a
/// closed ssh session) plays on to the end: its output is lost, not its
/// games, and it does not die of a panic on the first line it prints.
#[test]
fn a_league_whose_output_pipes_close_plays_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 2, "");
    let mut child = arena()
        .arg("run")
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both readers gone before the first game: every line printed
    // (announcement, a line per game, the standings) meets a closed pipe.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let ids: BTreeSet<String> = by_id(&rows(&dir.path().join("out/games.csv")))
        .into_keys()
        .collect();
    assert_eq!(ids, schedule_ids(&file));
}

#[test]
fn a_second_run_into_a_folder_in_use_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 20, "");
    let csv = dir.path().join("out/games.csv");
    let mut first = spawn_run(&file, Stdio::null());
    wait_for_rows(&mut first, &csv, 1);
    let second = run(&file, &[]);
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("in use by another run")
            && err.contains(&format!("pid {} on host", first.id())),
        "{err}"
    );
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first run was disturbed"
    );
    first.kill().unwrap();
    first.wait().unwrap();

    run_finishes_the_schedule(&file, &csv);
}

/// `run.lock` deleted while its run plays (a cleaner; the docs say a
/// leftover one may be deleted): a second run is still refused, since the
/// run holds the folder itself too, and `arena status` still sees the
/// run (it let a second writer in, which damaged records).
#[test]
fn a_run_whose_lock_file_was_deleted_still_holds_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 500, "");
    let out = dir.path().join("out");
    let csv = out.join("games.csv");
    let mut first = spawn_run(&file, Stdio::null());
    wait_for_rows(&mut first, &csv, 1);
    std::fs::remove_file(out.join("run.lock")).unwrap();
    let second = run(&file, &[]);
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("in use by another run (a run whose run.lock was deleted while it ran)"),
        "{err}"
    );
    let (text, _) = common::league::status(&out);
    assert!(
        text.contains("a run whose run.lock was deleted while it ran"),
        "{text}"
    );
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first run was disturbed"
    );
    first.kill().unwrap();
    first.wait().unwrap();
}

/// The schedule is the truth: a forged row and a duplicated row stop the
/// run before any game, each named with its line; --repair sets them aside
/// in rejected.csv and the standings count each scheduled game once.
#[test]
fn rows_the_schedule_does_not_hold_stop_the_run_until_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    assert!(run(&file, &[]).status.success());
    let csv = dir.path().join("out/games.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    let forged = lines[1].replacen(lines[1].split(',').next().unwrap(), "forged-1", 1);
    std::fs::write(&csv, format!("{text}{forged}\n{}\n", lines[2])).unwrap();

    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("games.csv:{}: the schedule has no game", n + 1)),
        "{err}"
    );
    assert!(
        err.contains("games.csv:3: game") && err.contains(&format!("games.csv:{}: game", n + 2)),
        "{err}"
    );
    assert!(err.contains("--repair"), "{err}");

    run_ok(&file, &["--repair"]);
    let got = rows(&csv);
    by_id(&got);
    assert_eq!(
        got.iter()
            .map(|r| r.game_id.clone())
            .collect::<BTreeSet<_>>(),
        schedule_ids(&file)
    );
    let rejected = rows(&dir.path().join("out/rejected.csv"));
    assert_eq!(rejected.len(), 3, "{rejected:?}");
}

/// `arena run` under a shell's `ulimit` (`soft_only`: `-S`, so the hard
/// limit stays high).
fn run_with_open_files_limit(file: &Path, limit: u32, soft_only: bool) -> Output {
    let flag = if soft_only { "-S -n" } else { "-n" };
    run_under(&format!("ulimit {flag} {limit}"), file, &[])
}

/// Too few descriptors is the machine's fault: no game is charged as a
/// crash, the league stops with one line saying what to do, and a resume
/// with enough descriptors finishes the schedule exactly. A low soft limit
/// alone is raised to the hard one.
#[test]
fn too_few_file_descriptors_are_never_charged_to_a_bot() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let csv = dir.path().join("out/games.csv");
    let out = run_with_open_files_limit(&file, 40, false);
    let err = String::from_utf8_lossy(&out.stderr);
    // Stopped before the games (2) or during them (1): either way cleanly.
    assert!(matches!(out.status.code(), Some(1 | 2)), "{err}");
    assert!(
        err.contains("Too many open files") && err.contains("ulimit -n"),
        "{err}"
    );
    let before = if csv.exists() { rows(&csv) } else { Vec::new() };
    assert!(before.iter().all(|r| r.offender.is_none()), "{err}");

    let got = run_finishes_the_schedule(&file, &csv);
    assert!(got.iter().all(|r| r.offender.is_none()), "{got:?}");

    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = run_with_open_files_limit(&file, 40, true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        rows(&dir.path().join("out/games.csv")).len(),
        schedule_ids(&file).len()
    );
}

/// A full disk is the machine's fault: in a private mount namespace (no
/// root needed: a user namespace) the results go to a tmpfs too small for
/// the league. The run stops cleanly naming the error, no game is charged,
/// no row lacks its record; after the tmpfs grows, the same command
/// finishes the schedule exactly.
#[test]
fn a_full_disk_stops_the_league_and_resume_finishes() {
    let dir = tempfile::tempdir().unwrap();
    // 10 rounds: their compressed records and rows fill more than the 96k.
    let file = write_tournament(dir.path(), 10, "");
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let script = r#"
        set -u
        mount -t tmpfs -o size=96k tmpfs "$2" || exit 90
        cp "$4" "$2/t.toml"
        cd "$2"
        "$1" run t.toml --quiet > "$3/first.out" 2> "$3/first.err"; echo $? > "$3/first.rc"
        cp out/games.csv "$3/first.csv" 2>/dev/null
        mkdir "$3/first/" "$3/first/games" && cp out/games/records-*.jsonl.zst "$3/first/games/" 2>/dev/null
        mount -o remount,size=64m tmpfs "$2"
        "$1" run t.toml --quiet > "$3/second.out" 2> "$3/second.err"; echo $? > "$3/second.rc"
        cp out/games.csv "$3/second.csv"
    "#;
    let out = Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--mount",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(env!("CARGO_BIN_EXE_arena"))
        .arg(&disk)
        .arg(dir.path())
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap_or_default();
    let err = read("first.err");
    assert_eq!(read("first.rc").trim(), "1", "{err}");
    assert!(
        err.contains("No space left on device") && err.contains("the league stopped"),
        "{err}"
    );
    let first = if read("first.csv").is_empty() {
        Vec::new()
    } else {
        rows(&dir.path().join("first.csv"))
    };
    // No row lacks its whole record.
    for r in &first {
        let record = record_text(&dir.path().join("first"), r);
        assert!(
            record.trim_end().ends_with('}')
                && record.lines().last().unwrap().contains(r#""type":"end""#),
            "{}: its record is torn",
            r.game_id
        );
    }
    assert!(first.len() < schedule_ids(&file).len());
    assert_eq!(read("second.rc").trim(), "0", "{}", read("second.err"));
    let got = rows(&dir.path().join("second.csv"));
    by_id(&got);
    assert_eq!(
        got.iter()
            .map(|r| r.game_id.clone())
            .collect::<BTreeSet<_>>(),
        schedule_ids(&file)
    );
    assert!(got.iter().all(|r| r.offender.is_none()), "{got:?}");
    assert_eq!(&got[..first.len()], &first[..]);
}

/// A run killed with SIGKILL while it wrote its first league.json leaves
/// games/, logs/, run.lock and the temporary file (`.league.json.PID.N.tmp`,
/// or league.tmp of an older version): the same command takes that folder
/// as its own, plays the league and removes them.
#[test]
fn a_folder_left_by_a_kill_during_its_first_league_json_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = dir.path().join("out");
    for sub in ["games", "logs"] {
        std::fs::create_dir_all(out.join(sub)).unwrap();
    }
    std::fs::write(out.join("run.lock"), "pid 1 host h\n").unwrap();
    std::fs::write(out.join("league.tmp"), "{\n  \"name\": \"t\",\n").unwrap();
    let killed = out.join(format!(".league.json.{}.0.tmp", u32::MAX));
    std::fs::write(&killed, "{\n  \"name\": \"t\",\n").unwrap();
    run_finishes_the_schedule(&file, &out.join("games.csv"));
    assert!(!out.join("league.tmp").exists());
    assert!(!killed.exists());
}

/// games/ or games.csv deleted while the league runs: the run stops with an
/// error naming the file instead of writing on into a file nobody can see
/// (and saying all is well), and the same command (with --repair, which
/// the resume asks for when rows lost their records, or records their
/// rows) finishes the league.
#[test]
fn a_results_file_deleted_while_the_league_runs_stops_it() {
    for gone in ["games", "games.csv"] {
        let dir = tempfile::tempdir().unwrap();
        let file = write_tournament(dir.path(), 30, "");
        let out = dir.path().join("out");
        let csv = out.join("games.csv");
        let mut child = arena()
            .arg("run")
            .arg(&file)
            .arg("--quiet")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_rows(&mut child, &csv, 40);
        match gone {
            "games" => std::fs::remove_dir_all(out.join("games")).unwrap(),
            _ => std::fs::remove_file(&csv).unwrap(),
        }
        let first = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&first.stderr);
        assert_eq!(first.status.code(), Some(1), "{gone}: {stderr}");
        let named = match gone {
            "games" => "records-0000.jsonl.zst",
            _ => "games.csv",
        };
        assert!(
            stderr.contains(named) && stderr.contains("was deleted, moved or replaced"),
            "{gone}: {stderr}"
        );
        let again = run(&file, &[]);
        let err = String::from_utf8_lossy(&again.stderr);
        assert!(!again.status.success() && err.contains("--repair"), "{err}");
        run_ok(&file, &["--repair"]);
        let got = rows(&csv);
        let ids: BTreeSet<String> = by_id(&got).into_keys().collect();
        assert_eq!(ids, schedule_ids(&file));
    }
}

/// A bot whose daemon writes to the inherited stdout: every game is played
/// once, only the daemon's bot is ever charged, and no daemon outlives the
/// league.
#[test]
fn a_daemon_writing_to_stdout_is_charged_to_its_own_bot_only() {
    let dir = tempfile::tempdir().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let script = misbehave_py();
    let marker = format!("daemon-{}", std::process::id());
    let file = dir.path().join("d.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "d"
bots = [
  {{ name = "a", command = ["{bot}"], env = {{ RANDOM_BOT_SEED = "1" }} }},
  {{ name = "b", command = ["{bot}"], env = {{ RANDOM_BOT_SEED = "2" }} }},
  {{ name = "d", command = ["python3", "{}", "daemon", "{marker}"] }},
]
variants = ["filo", "diffusion"]
concurrency = 2
output = "out"
"#,
            script.display()
        ),
    )
    .unwrap();
    run_ok(&file, &[]);
    let got = rows(&dir.path().join("out/games.csv"));
    by_id(&got);
    assert_eq!(got.len(), schedule_ids(&file).len());
    for r in &got {
        if let Some(seat) = r.offender {
            assert_eq!(
                r.seats()[seat as usize],
                "d",
                "charged to the wrong bot: {r:?}"
            );
        }
    }
    assert!(
        got.iter().any(|r| r.offender.is_some()),
        "the daemon was never noticed"
    );
    assert_eq!(processes_with(&marker), Vec::<u32>::new());

    // `arena show` of a forfeited game says who forfeited and why.
    let forfeited = got.iter().find(|r| r.offender.is_some()).unwrap();
    let seat = forfeited.offender.unwrap();
    let show = |folder: &str| {
        arena()
            .args(["show"])
            .arg(dir.path().join(folder))
            .arg(&forfeited.game_id)
            .output()
            .unwrap()
    };
    let out = show("out");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains(&format!("forfeit by seat {seat} d: ")),
        "{shown}"
    );
    // And of a folder that is not there, says so.
    let out = show("nowhere");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("no such folder"),
        "{said}"
    );
}

/// A bot that prints a debug line on stdout after each `game_end` is
/// started again at no charge before its next game, wherever the referee
/// sees the line (between games, or at the next game's start): the
/// console says it was restarted, and that game's record notes why
/// (docs/league.md, "Output nobody asked for"). The line seen at the next
/// game's start was said in the log file alone, and noted nowhere.
#[test]
fn output_after_a_game_restarts_its_bot_with_a_line_and_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let command = format!(
        r#"["python3", "{}", "print_after_end"]"#,
        misbehave_py().display()
    );
    let file = good_against(dir.path(), "p", "printer", &command, r#""kisolo""#);
    // Not --quiet: the console's line per restart.
    let out = arena()
        .arg("run")
        .arg(&file)
        .args(["-j", "1", "--rounds", "2", "--no-report"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("restarted printer"), "{err}");
    let got = rows(&dir.path().join("out/games.csv"));
    assert_eq!(got.len(), 4);
    assert!(got.iter().all(|r| r.offender.is_none()), "{got:?}");
    let noted = got
        .iter()
        .filter(|r| record_text(&dir.path().join("out"), r).contains("printer was restarted"))
        .count();
    // Every game after its first: the print of the game before.
    assert_eq!(noted, got.len() - 1, "{err}");
}

/// A league of a spy, a victim with a secret in its `env` and in its
/// folder, and the referee with a secret in its own environment. With the
/// sandbox (the default) the spy sees no other process, no secret, no
/// descriptor of anyone, no network, no other bot's file, no results and no
/// league file, cannot write its own folder, and has a scratch HOME of its
/// own that is gone afterwards. With `--sandbox off` the same spy finds
/// them: the attacks are real.
#[test]
fn a_sandboxed_spy_finds_no_secret_no_network_and_no_referee() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let spy_report = |sandbox: &str| {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["victim", "spy", "tmp", "home"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let secret = dir.path().join("victim/secret.txt");
        std::fs::write(&secret, "hunter2").unwrap();
        let forged = dir.path().join("out/forged.csv");
        let bot = env!("CARGO_BIN_EXE_random-bot");
        let script = misbehave_py();
        let file = dir.path().join("s.toml");
        std::fs::write(
            &file,
            format!(
                r#"
name = "s"
bots = [
  {{ name = "victim", command = ["{bot}"], cwd = "victim", env = {{ VICTIM_SECRET = "hunter2" }} }},
  {{ name = "spy", command = ["python3", "{}", "spy"], cwd = "spy", env = {{ SPY_PORT = "{port}", SPY_LEAGUE = "{}", SPY_TARGET = "{}", SPY_VICTIM = "{}", SPY_RESULTS = "{}" }} }},
]
variants = ["filo"]
concurrency = 1
output = "out"
"#,
                script.display(),
                file.display(),
                std::process::id(),
                secret.display(),
                forged.display(),
            ),
        )
        .unwrap();
        let out = arena()
            .args(["run", "--quiet", "--sandbox", sandbox])
            .arg(&file)
            .env("REFEREE_SECRET", "swordfish")
            .env("TMPDIR", dir.path().join("tmp"))
            // Without the sandbox the spy writes in its HOME: the test's.
            .env("HOME", dir.path().join("home"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = rows(&dir.path().join("out/games.csv"));
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|r| r.offender.is_none()), "{got:?}");
        let mut log = String::new();
        for e in std::fs::read_dir(dir.path().join("out/logs"))
            .unwrap()
            .flatten()
        {
            if e.file_name().to_string_lossy().starts_with("spy-w") {
                log += &std::fs::read_to_string(e.path()).unwrap();
            }
        }
        let scratch: Vec<_> = std::fs::read_dir(dir.path().join("tmp"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        (
            log,
            String::from_utf8_lossy(&out.stderr).into_owned(),
            forged.exists() || std::fs::read_to_string(&secret).unwrap() != "hunter2",
            dir.path().join("spy/spy.txt").exists(),
            scratch,
        )
    };

    let (log, _, forged, scribbled, scratch) = spy_report("on");
    let line = |what: &str| {
        log.lines()
            .find(|l| l.starts_with(&format!("SPY {what}: ")))
            .unwrap_or_else(|| panic!("no `{what}` in the spy's log:\n{log}"))
            .to_string()
    };
    // Nothing of the referee's environment (cargo's CARGO_* among it) but
    // PATH and LANG; the interpreter's launcher (pyenv's shim) may add its
    // own variables.
    let env = line("env");
    for var in env["SPY env: ".len()..].split(',') {
        assert!(
            !var.contains("SECRET") && !var.starts_with("CARGO") && !var.starts_with("RUST"),
            "{var} reached the bot: {env}"
        );
    }
    assert_eq!(line("secrets in"), "SPY secrets in: none");
    // One: its namespace's init, whose command line (the referee's, an
    // `arena worker --token ...`'s) is blanked.
    assert_eq!(line("processes"), "SPY processes: 1");
    assert_eq!(line("command lines"), "SPY command lines: none");
    assert!(line("referee").contains("not visible"), "{log}");
    for what in [
        "referee environ",
        "referee fds",
        "referee pipes",
        "referee signals",
        "victim file",
        "victim rewrite",
        "results",
        "league file",
        "own folder",
    ] {
        assert!(line(what).contains("denied"), "{what}: {log}");
    }
    assert!(
        !forged && !scribbled,
        "the spy wrote outside its scratch folder"
    );
    assert!(line("network").contains("blocked"), "{log}");
    assert_eq!(line("home"), "SPY home: writable /tmp");
    assert_eq!(
        scratch,
        Vec::<PathBuf>::new(),
        "scratch folders left behind"
    );

    let (log, warning, forged, scribbled, _) = spy_report("off");
    assert!(warning.contains("warning: sandbox = \"off\""), "{warning}");
    assert!(!log.contains("SPY secrets in: none"), "{log}");
    assert!(log.contains("SPY network: connected"), "{log}");
    assert!(log.contains("SPY referee pipes: opened"), "{log}");
    assert!(log.contains("SPY referee signals: allowed"), "{log}");
    assert!(!log.contains("SPY command lines: none"), "{log}");
    assert!(log.contains("SPY victim file: read 'hunter2'"), "{log}");
    assert!(log.contains("SPY league file: read"), "{log}");
    assert!(forged && scribbled, "{log}");
    drop(listener);
}

/// A league whose games are all written but one row is damaged is not
/// "stopped before its end (36 of 36 games done)": its report says a row
/// is to be mended, and status names it.
#[test]
fn a_report_of_a_whole_league_with_a_damaged_row_says_a_row_is_to_mend() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    run_ok(&file, &["--no-report"]);
    let out = dir.path().join("out");
    let csv = out.join("games.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let cut = lines[2].rfind(',').unwrap();
    lines[2].truncate(cut);
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let o = arena().arg("report").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("note: league `t` has a row of games.csv to mend before it can end (arena status names it)"),
        "{err}"
    );
    assert!(!err.contains("stopped before its end"), "{err}");
    let o = arena().arg("status").arg(&out).output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("games.csv:3: "), "{said}");
}

#[test]
fn resume_after_kill_9_and_a_torn_line_gives_the_uninterrupted_games() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 12, "");
    let whole = dir.path().join("whole");
    run_ok(&file, &["--output", whole.to_str().unwrap()]);
    let expected = by_id(&rows(&whole.join("games.csv")));
    assert_eq!(expected.len(), 12 * 36);

    let cut = dir.path().join("cut");
    let csv = cut.join("games.csv");
    let mut child = arena()
        .arg("run")
        .arg(&file)
        .args(["--quiet", "--output", cut.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_rows(&mut child, &csv, 40);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done = data_lines(&csv);
    assert!(done < expected.len(), "killed too late to test anything");
    // Its report says it stopped, and how to resume it: no run plays it.
    let o = arena().arg("report").arg(&cut).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success()
            && err.contains(" games done) and no run plays it; resume it with: arena run "),
        "{err}"
    );
    let page = std::fs::read_to_string(cut.join("report/index.html")).unwrap();
    assert!(
        page.contains(
            "stopped</strong> before its last game, and no run plays it: <code>arena run "
        ) && !page.contains("id=\"running\""),
        "{page}"
    );
    // A power cut in the middle of a row.
    let mut f = std::fs::OpenOptions::new().append(true).open(&csv).unwrap();
    f.write_all(b"r012-kisolo-p002-o1,kisolo,2,r012-kisolo-p002,b,c,,1.0")
        .unwrap();
    drop(f);
    // And a record whose row was never written, its frame torn half-way.
    let log = cut.join("games/records-0000.jsonl.zst");
    let committed: u64 = rows(&csv)
        .iter()
        .map(|r| r.record_offset.unwrap() + r.record_length.unwrap())
        .max()
        .unwrap();
    let frame = mancala_arena::results::records::encode(
        br#"{"type":"game","format":2,"game_id":"r012-kisolo-p002-o1","variant":"kisolo"}"#,
    )
    .unwrap();
    let torn = &frame.bytes()[..frame.bytes().len() / 2];
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(torn).unwrap();
    drop(f);
    assert!(std::fs::metadata(&log).unwrap().len() > committed);

    let out = run_ok(&file, &["--output", cut.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("torn"), "{stderr}");
    assert!(stderr.contains("records without a row"), "{stderr}");
    // What was cut is kept: the torn frame's bytes, at the end of the file
    // of records without a row.
    let aside = std::fs::read(cut.join("uncommitted-records.jsonl.zst")).unwrap();
    assert!(aside.ends_with(torn));
    let got = rows(&csv);
    assert_eq!(by_id(&got), expected);
    // The log holds whole frames only, one record each, each game once,
    // where its row says.
    let records = frames(&log);
    assert_eq!(records.len(), got.len());
    let places: BTreeSet<(u64, u64)> = got
        .iter()
        .map(|r| (r.record_offset.unwrap(), r.record_length.unwrap()))
        .collect();
    let mut ids = BTreeSet::new();
    for (offset, length, text) in &records {
        assert!(places.contains(&(*offset, *length)));
        assert!(text
            .lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
        let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert!(ids.insert(v["game_id"].as_str().unwrap().to_string()));
    }
}

/// The frames of a log of frames, one after another: each one's offset,
/// length and record; a log that is not whole frames fails the test.
fn frames(log: &Path) -> Vec<(u64, u64, String)> {
    let bytes = std::fs::read(log).unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let n = zstd::zstd_safe::find_frame_compressed_size(&bytes[at..])
            .unwrap_or_else(|e| panic!("{}: no whole frame at byte {at}: {e}", log.display()));
        let text = mancala_arena::results::records::decode(&bytes[at..at + n]).unwrap();
        out.push((at as u64, n as u64, String::from_utf8(text).unwrap()));
        at += n;
    }
    out
}

#[test]
fn ctrl_c_stops_cleanly_and_the_same_command_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 12, "");
    let res = dir.path().join("out");
    let csv = res.join("games.csv");
    let mut child = spawn_run(&file, Stdio::piped());
    wait_for_rows(&mut child, &csv, 20);
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("resume"));
    // Every row written is whole.
    let partial = rows(&csv);
    assert!(partial.len() < 12 * 36);
    // Rated part way, the ratings are said to be those so far.
    // The same with a copy of the folder given too: its schedule counted
    // once.
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for f in ["games.csv", "league.json"] {
        std::fs::copy(res.join(f), copy.join(f)).unwrap();
    }
    for given in [vec![&res], vec![&res, &copy]] {
        let rated = arena().arg("rate").args(&given).output().unwrap();
        let said = String::from_utf8_lossy(&rated.stderr);
        assert!(rated.status.success(), "{said}");
        assert!(
            said.contains(&format!(
                "note: {} of the {} games of the schedule are played",
                partial.len(),
                12 * 36
            )),
            "{said}"
        );
    }

    // SIGTERM (a batch system's stop): exit 143, as a shell reports it.
    // The report, refreshed every 5 games, is left as it stood, and no
    // longer says the league is running (it said so, and reloaded itself,
    // for good).
    let index = res.join("report/index.html");
    let mut child = arena()
        .arg("run")
        .arg(&file)
        .args(["--quiet", "--report-interval", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_rows(&mut child, &csv, partial.len() + 5);
    let end = std::time::Instant::now() + Duration::from_secs(120);
    while !index.exists() {
        assert!(std::time::Instant::now() < end, "no report was written");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&index).unwrap();
    assert!(
        !page.contains("id=\"running\"") && page.contains(">stopped</strong> before its last game"),
        "{page}"
    );

    run_ok(&file, &[]);
    let page = std::fs::read_to_string(&index).unwrap();
    assert!(!page.contains("id=\"running\"") && !page.contains(">stopped<"));
    let all = rows(&csv);
    assert_eq!(by_id(&all).len(), 12 * 36);
    let ids: BTreeSet<String> = all.iter().map(|r| r.game_id.clone()).collect();
    assert_eq!(ids, schedule_ids(&file));
}

/// SIGTERM while the bots' start-up check waits on a bot: the run stops
/// at once, says so and how to go on, exits 143, and leaves none of the
/// bot's processes behind (here outside the sandbox, where only the
/// referee can end the bot's process group; the default action of the
/// signal left the bot's child running).
#[test]
fn a_signal_during_the_start_up_check_stops_the_run_and_its_bots() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("slow-start-pids").display().to_string();
    let command = format!(
        r#"["python3", "{}", "fork_slow_start", "{marker}"]"#,
        misbehave_py().display()
    );
    let file = good_against(dir.path(), "t", "slow", &command, r#""filo""#);
    // Long enough that only the signal ends the wait, however loaded the
    // machine.
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("[time_control]\nstartup_ms = 600000\n");
    std::fs::write(&file, text).unwrap();
    let child = arena()
        .arg("run")
        .arg(&file)
        .args(["--quiet", "--sandbox", "off"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The bot and the child it forked, both waiting before the hello.
    let end = std::time::Instant::now() + Duration::from_secs(60);
    while processes_with(&marker).len() < 2 {
        assert!(std::time::Instant::now() < end, "the bot never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{said}");
    assert!(
        said.contains("stopped after 0 new games") && said.contains("Run the same command again"),
        "{said}"
    );
    let end = std::time::Instant::now() + Duration::from_secs(30);
    while !processes_with(&marker).is_empty() {
        assert!(
            std::time::Instant::now() < end,
            "the bot's processes outlived the run: {:?}",
            processes_with(&marker)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM while a bot's build runs, in the sandbox and out of it: the
/// build and the process it forked are killed, no built copy is kept, and
/// the run stops as an interrupted one does (exit 143, how to go on).
/// (Before, the signal's default action ended the referee and left the
/// build running outside the sandbox.) In the sandbox, a run killed with
/// SIGKILL first leaves its build's folder behind, and the next build of
/// the bot sweeps it.
#[test]
fn a_signal_during_a_bots_build_stops_the_run_and_the_build() {
    for sandbox in ["off", "on"] {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("slow-build-marker").display().to_string();
        let slow = dir.path().join("bots/slowbuild");
        std::fs::create_dir_all(&slow).unwrap();
        std::fs::write(
            slow.join("bot.toml"),
            format!(
                "name = \"slowbuild\"\ncommand = [\"python3\", \"bot.py\"]\n\
                 build = [\"python3\", \"-c\", \"import os, time; os.fork(); time.sleep(600)\", \"{marker}\"]\n"
            ),
        )
        .unwrap();
        std::fs::write(slow.join("bot.py"), "print('never')\n").unwrap();
        let file = dir.path().join("t.toml");
        std::fs::write(
            &file,
            format!(
                "name = \"t\"\nbots_dir = \"bots\"\nvariants = [\"filo\"]\noutput = \"out\"\n\
                 bots = [\"slowbuild\", {{ name = \"good\", command = [\"{}\"] }}]\n\
                 [sandbox]\nbuild_seconds = 3600\n",
                env!("CARGO_BIN_EXE_random-bot")
            ),
        )
        .unwrap();
        let cache = dir.path().join("cache");
        let builds = cache.join("mancala-arena/builds");
        let left = || -> Vec<_> {
            std::fs::read_dir(&builds)
                .map(|d| d.flatten().map(|e| e.file_name()).collect())
                .unwrap_or_default()
        };
        let building = || {
            let child = arena()
                .arg("run")
                .arg(&file)
                .args(["--quiet", "--sandbox", sandbox])
                .env("XDG_CACHE_HOME", &cache)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let end = std::time::Instant::now() + Duration::from_secs(120);
            while processes_with(&marker).len() < 2 {
                assert!(
                    std::time::Instant::now() < end,
                    "the build never started (sandbox {sandbox})"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            child
        };
        let gone = |what: &str| {
            let end = std::time::Instant::now() + Duration::from_secs(30);
            while !processes_with(&marker).is_empty() {
                assert!(
                    std::time::Instant::now() < end,
                    "the build outlived the run ({what}, sandbox {sandbox}): {:?}",
                    processes_with(&marker)
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        if sandbox == "on" {
            let mut killed = building();
            killed.kill().unwrap();
            killed.wait().unwrap();
            gone("SIGKILL");
            assert_eq!(left().len(), 1, "{:?}", left());
        }
        let child = building();
        // SAFETY: plain kill(2) on our own child.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        let out = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(143), "sandbox {sandbox}: {said}");
        assert!(
            said.contains("stopped after 0 new games")
                && said.contains("Run the same command again"),
            "sandbox {sandbox}: {said}"
        );
        gone("SIGTERM");
        assert!(left().is_empty(), "sandbox {sandbox}: {:?}", left());
    }
}

#[test]
fn status_counts_a_game_written_twice_as_a_game_to_play_again_and_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let folder = dir.path().join("out");
    run_ok(&file, &["--output", folder.to_str().unwrap()]);
    let csv = folder.join("games.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let games = text.lines().count() - 1;
    // The first game's row again at the end (a hand-merged file).
    let first = text.lines().nth(1).unwrap();
    std::fs::write(&csv, format!("{text}{first}\n")).unwrap();
    let status = || {
        let o = arena().arg("status").arg(&folder).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let said = status();
    assert!(
        said.contains(&format!("{} of {games} games done", games - 1))
            && said.contains(" stopped ")
            && said.contains("2 rows of games written more than once"),
        "{said}"
    );
    let command = said
        .lines()
        .find_map(|l| l.strip_prefix("resume it ("))
        .unwrap_or_default();
    assert!(command.ends_with(" --repair"), "{said}");
    // What it says mends it: the copies set aside, the game played again.
    run_ok(&file, &["--output", folder.to_str().unwrap(), "--repair"]);
    let said = status();
    assert!(
        said.contains(&format!("{games} of {games} games done (100.0%)"))
            && said.contains(" complete "),
        "{said}"
    );
}

/// `status`, `rate` and `report` of a sharded league's folder read the
/// same shards: exactly its `shard-K-of-N` folders (a backup copy beside
/// them is noted, left out), refused when one is of another league (its
/// `league` id); shards in different folders make one report.
#[test]
fn commands_read_a_leagues_shards_alike() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    run_ok(&file, &["--shard", "1/2"]);
    run_ok(&file, &["--shard", "2/2"]);
    let out = dir.path().join("out");
    let cmd = |args: &[&Path]| {
        let o = arena().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        (o.status.success(), err)
    };
    let report = |dir: &Path| dir.join("report");
    // Shards in two folders: one report, as rate takes them.
    let away = dir.path().join("away");
    std::fs::create_dir(&away).unwrap();
    copy_dir(&out.join("shard-2-of-2"), &away.join("shard-2-of-2"));
    let (ok, err) = cmd(&[
        "report".as_ref(),
        &out.join("shard-1-of-2"),
        &away.join("shard-2-of-2"),
        "-o".as_ref(),
        &report(&away),
    ]);
    assert!(ok, "{err}");
    // A backup copy of a shard: noted, not read.
    copy_dir(&out.join("shard-1-of-2"), &out.join("shard-1-of-2.bak"));
    for c in ["status", "rate", "report"] {
        let (ok, err) = cmd(&[c.as_ref(), &out]);
        assert!(ok, "{c}: {err}");
        assert!(
            err.contains("shard-1-of-2.bak is not read as a shard") && !err.contains("duplicate"),
            "{c}: {err}"
        );
    }
    // The same shard's games twice, as played on two machines (only the
    // timings differ): said so, not as results that disagree.
    let mut again = rows(&out.join("shard-1-of-2/games.csv"));
    again[0].duration_ms += 1;
    again[0].time0_ms = Some(1.5);
    let twice = dir.path().join("twice.csv");
    let mut w = csv::Writer::from_path(&twice).unwrap();
    again.iter().for_each(|r| w.serialize(r).unwrap());
    w.flush().unwrap();
    let shard1 = out.join("shard-1-of-2/games.csv");
    let (ok, err) = cmd(&["rate".as_ref(), &shard1, &twice, "--partial".as_ref()]);
    assert!(
        !ok && err.contains("its results agree and only the timings differ"),
        "{err}"
    );
    // A record log cut short: rate says so (status names the rows).
    let log = out.join("shard-1-of-2/games/records-0000.jsonl.zst");
    let len = std::fs::metadata(&log).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let (ok, err) = cmd(&["rate".as_ref(), &out]);
    assert!(
        ok && err.contains("point at records that are missing or cut short")
            && err.contains("--repair"),
        "{err}"
    );
    // A shard of another league (its own `league` id) copied in.
    let json = out.join("shard-2-of-2/league.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    meta["league"] = serde_json::json!("0123456789abcdef");
    std::fs::write(&json, meta.to_string()).unwrap();
    for c in ["status", "rate", "report"] {
        let (ok, err) = cmd(&[c.as_ref(), &out]);
        assert!(
            !ok && err.contains("are not shards of one league")
                && err.contains("shard-1-of-2 (shard 1/2")
                && err.contains("another tournament file"),
            "{c}: {err}"
        );
    }
}

/// A shard that holds no game (more shards than seat-swap groups) says
/// so, rather than ending as a league of 0 games without a word.
#[test]
fn a_shard_with_no_game_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    // The one that holds none, and one that holds games, of more shards
    // than the league's 16 groups (5 variants of 3 pairs, and tricala3's).
    for (shard, here) in [
        ("999/1000", "this shard holds no game: nothing to play here"),
        ("1/1000", "this one holds some"),
    ] {
        let o = arena()
            .arg("run")
            .arg(&file)
            .args(["--shard", shard, "--no-report"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(
            err.contains(&format!("--shard {shard}: the league's "))
                && err.contains(" in 16 seat-swap groups, each dealt whole to one shard, so only 16 of 1000 shards hold games")
                && err.contains(here),
            "{err}"
        );
    }
}

#[test]
fn shards_together_are_exactly_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 2, "");
    let whole = dir.path().join("whole");
    assert!(run(&file, &["--output", whole.to_str().unwrap()])
        .status
        .success());
    let expected = by_id(&rows(&whole.join("games.csv")));

    let mut merged = BTreeMap::new();
    let mut paths = Vec::new();
    for k in 1..=3 {
        run_ok(&file, &["--shard", &format!("{k}/3")]);
        let csv = dir.path().join(format!("out/shard-{k}-of-3/games.csv"));
        let part = by_id(&rows(&csv));
        assert!(!part.is_empty());
        for (id, key) in part {
            assert!(
                merged.insert(id.clone(), key).is_none(),
                "{id} in two shards"
            );
        }
        paths.push(csv);
    }
    assert_eq!(merged, expected);

    // The league's folder run without --shard: said to hold its shards.
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("holds the results of a league split in 3 shards (shard-1-of-3, shard-2-of-3, shard-3-of-3): run each with --shard K/3"),
        "{err}"
    );

    // Rating the shards gives the ratings of the single run.
    let rate = |files: &[PathBuf], out: &Path| {
        let o = arena()
            .arg("rate")
            .args(files)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out.join("ratings.csv")).unwrap()
    };
    let one = rate(&[whole.join("games.csv")], &dir.path().join("r1"));
    let three = rate(&paths, &dir.path().join("r3"));
    assert_eq!(one, three);

    // The status of the three: complete, with their counts.
    let o = arena()
        .arg("status")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains(&format!(
            "3 shards, {} of {} games done (100.0%)",
            expected.len(),
            expected.len()
        )),
        "{text}"
    );
    assert_eq!(text.matches(" complete ").count(), 3, "{text}");

    // A game of the last shard, shown and replayed from the league's
    // folder (its shards' parent) as from the shard's.
    let id = by_id(&rows(&paths[2])).into_keys().next().unwrap();
    for cmd in ["show", "replay"] {
        let o = arena()
            .arg(cmd)
            .arg(dir.path().join("out"))
            .arg(&id)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success() && said.contains(&id), "{cmd}: {said}");
    }

    // A shard left out of a rating is named; --partial rates the rest.
    let o = arena().arg("rate").args(&paths[..2]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("shard 3/3 is not among the files"),
        "{err}"
    );
    let o = arena()
        .arg("rate")
        .args(&paths[..2])
        .arg("--partial")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // A shard of another split, or of another file, is refused.
    let out = run(&file, &["--shard", "1/4"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("one league is split one way"),
        "{err}"
    );
    let shard3 = rows(&paths[2]).len();
    std::fs::remove_dir_all(dir.path().join("out/shard-3-of-3")).unwrap();
    let out = run(&file, &["--shard", "3/3", "--decision-ms", "999"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("another tournament file"),
        "{err}"
    );
    let o = arena()
        .arg("status")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("3/3     missing") && text.contains("--shard 3/3"),
        "{text}"
    );
    // Its games, and the league's, counted from the schedule the others note.
    let all = expected.len();
    assert!(
        text.contains(&format!("{} of {all} games done", all - shard3))
            && text.contains(&format!(" 0/{shard3} ")),
        "{text}"
    );
    // The report of the shards there says which is left out.
    let o = arena()
        .arg("report")
        .arg(dir.path().join("out"))
        .arg("-o")
        .arg(dir.path().join("report"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("has 3 shards and 3/3 not here"), "{err}");
    // A shard beside another league's folder: refused, not one report of
    // both.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let other_file = write_tournament(&other, 1, "");
    assert!(run(&other_file, &[]).status.success());
    let o = arena()
        .arg("report")
        .arg(dir.path().join("out/shard-1-of-3"))
        .arg(other.join("out"))
        .arg("-o")
        .arg(dir.path().join("report2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("are results of different leagues"),
        "{err}"
    );
    // `rate` of the league's folder reads its shards (and names the one
    // left out); so does `sprt` of it.
    let o = arena()
        .arg("rate")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("shard 3/3 is not among the files"),
        "{err}"
    );
    let o = arena()
        .args(["sprt", "--elo0", "0", "--elo1", "5"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains("shard 3/3 is not among the files")
            && err.contains("--partial to test"),
        "{err}"
    );
    assert!(run(&file, &["--shard", "3/3"]).status.success());
    let o = arena()
        .arg("rate")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A shard's folder given as a sharded run's output, or the folder of
    // the league run unsharded: refused, nothing played again in a folder
    // inside it.
    let shard_dir = dir.path().join("out/shard-1-of-3");
    let whole = dir.path().join("whole");
    run_ok(&file, &["--output", whole.to_str().unwrap()]);
    for (out, said) in [
        (&shard_dir, "is itself the folder of shard 1/3"),
        (&whole, "unsharded"),
    ] {
        let o = run(
            &file,
            &["--shard", "1/3", "--output", out.to_str().unwrap()],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(said), "{err}");
        assert!(!out.join("shard-1-of-3").exists(), "{err}");
    }
    // Another league's tables written over the sharded league's: refused;
    // its own shards' tables there: written.
    let shards = dir.path().join("out");
    let o = arena()
        .arg("rate")
        .arg(&whole)
        .arg("--out")
        .arg(&shards)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("the folder of a sharded league"),
        "{err}"
    );
    assert!(!shards.join("ratings.csv").exists());
    let o = arena()
        .arg("rate")
        .arg(&shards)
        .arg("--out")
        .arg(&shards)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(shards.join("ratings.csv").exists());
}

#[test]
fn bad_files_and_bots_are_reported_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "gauntlet = \"zed\"");
    let out = run(&file, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("t.toml:15") && err.contains("gauntlet") && err.contains("zed"),
        "{err}"
    );

    let file = dir.path().join("missing.toml");
    let bot = env!("CARGO_BIN_EXE_random-bot");
    std::fs::write(
        &file,
        format!("name = \"m\"\noutput = \"m\"\nbots = [\n {{ name = \"ok\", command = [\"{bot}\"] }},\n {{ name = \"gone\", command = [\"/no/such/bot\"] }},\n {{ name = \"gone2\", command = [\"/no/such/bot2\"] }},\n]\n"),
    )
    .unwrap();
    let out = run(&file, &["--no-build"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // Every bot that cannot start, in one message.
    assert!(
        err.contains("2 bots cannot start")
            && err.contains("`gone` cannot start")
            && err.contains("`gone2` cannot start"),
        "{err}"
    );
    assert_eq!(data_lines(&dir.path().join("m/games.csv")), 0);
    // Only one bot would be left: no way to play without them.
    assert!(!err.contains("--bots"), "{err}");

    // One bot of three that cannot start (its interpreter is missing):
    // the league is told how to play without it, and that works.
    let file = dir.path().join("one-gone.toml");
    std::fs::write(
        &file,
        format!("name = \"g\"\noutput = \"g\"\nrounds = 1\nvariants = [\"kisolo\"]\nbots = [\n {{ name = \"a\", command = [\"{bot}\"] }},\n {{ name = \"b\", command = [\"{bot}\"] }},\n {{ name = \"js\", command = [\"no-such-interpreter\", \"bot.js\"] }},\n]\n"),
    )
    .unwrap();
    let out = run(&file, &["--no-build"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("to play the league without `js`: add `--bots a,b` to the command"),
        "{err}"
    );
    run_ok(&file, &["--no-build", "--bots", "a,b"]);
    assert_eq!(data_lines(&dir.path().join("g/games.csv")), 2);

    let out = run(&write_tournament(dir.path(), 1, ""), &["--shard", "4/3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("4/3"));
}

/// A memory hog in a league, at the default limit of 1024 MiB: each of its
/// games is a `memory` forfeit, the other bots' games are untouched, and
/// the referee's own peak resident memory stays under 50 MB. (Needs
/// cgroups: where none can be made, the limit is not enforced, and the
/// test says so.)
#[test]
fn a_memory_hog_in_a_league_forfeits_and_the_referee_stays_small() {
    let mechanism = mancala_arena::bot::sandbox::cgroup::mechanism();
    if !mechanism.starts_with("cgroup") {
        eprintln!("not run: {mechanism}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let script = misbehave_py();
    let file = dir.path().join("h.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "h"
bots = [
  {{ name = "a", command = ["{bot}"] }},
  {{ name = "b", command = ["{bot}"] }},
  {{ name = "hog", command = ["python3", "{}", "hog"] }},
]
variants = ["filo"]
concurrency = 2
output = "out"

[time_control]
decision_ms = 60000
"#,
            script.display()
        ),
    )
    .unwrap();
    let mut child = arena()
        .args(["run", "--quiet"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // VmHWM is the peak so far: the last reading before the exit is the
    // run's peak up to its last moments (the summary, after every game).
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    let status = loop {
        if let Some(kb) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        }) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    let got = rows(&dir.path().join("out/games.csv"));
    assert_eq!(got.len(), 6);
    for r in &got {
        let hog = r.seats().iter().position(|s| *s == "hog");
        match hog {
            Some(seat) => {
                assert_eq!(r.reason, "memory", "{r:?}");
                assert_eq!(r.offender, Some(seat as u8), "{r:?}");
            }
            None => assert!(r.offender.is_none(), "{r:?}"),
        }
    }
    eprintln!("the referee's peak resident memory: {peak_kb} kB");
    assert!(peak_kb > 0, "the referee's memory was never read");
    assert!(
        peak_kb < 50_000,
        "the referee's peak resident memory was {peak_kb} kB"
    );
}

/// Where no user namespace can be made (here: `max_user_namespaces = 0`
/// inside a user namespace of the test's own), the league is refused
/// before any game, with what is missing and how to run anyway; with
/// `--sandbox off` it runs, with a warning. (Needs `unshare` from
/// util-linux and user namespaces to set up the test; else says so.)
#[test]
fn without_user_namespaces_a_league_is_refused_unless_sandbox_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let in_jail = |extra: &str| {
        Command::new("unshare")
            .args(["--user", "--map-root-user", "sh", "-c"])
            .arg(format!(
                "echo 0 > /proc/sys/user/max_user_namespaces || exit 99; exec \"$0\" run --quiet \"$1\" {extra}"
            ))
            .arg(env!("CARGO_BIN_EXE_arena"))
            .arg(&file)
            .output()
    };
    let out = match in_jail("") {
        Ok(out) if out.status.code() != Some(99) => out,
        other => {
            eprintln!("not run: cannot set up a namespace without namespaces: {other:?}");
            return;
        }
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("no user namespace can be made here") && err.contains("sandbox = \"off\""),
        "{err}"
    );
    assert!(
        !dir.path().join("out/games.csv").exists()
            || rows(&dir.path().join("out/games.csv")).is_empty()
    );
    let out = in_jail("--sandbox off").unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning: sandbox = \"off\""), "{err}");
}

/// The example and reference bots (random in Rust, Python and JavaScript,
/// greedy, the Python heuristic, search with a fixed iteration count) all
/// draw their randomness from `game_start.seed`: the same league file and
/// seed, run at `-j 2` and again at `-j 1`, give the same games, row for
/// row and record for record, apart from the timings.
#[test]
fn the_same_league_and_seed_give_the_same_games() {
    let dir = tempfile::tempdir().unwrap();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let file = dir.path().join("r.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "r"
seed = 2026
bots = [
  {{ name = "random-rust", command = ["{}"] }},
  {{ name = "random-python", command = ["python3", "{}"] }},
{}  {{ name = "greedy", command = ["{}"] }},
  {{ name = "heuristic", command = ["python3", "{}"] }},
  {{ name = "search", command = ["{}", "--iterations", "40"] }},
]
variants = ["filo", "tricala", "tricala3", "hackaback", "kisolo", "diffusion"]
openings = 2
max_plies = 200

[time_control]
decision_ms = 60000
"#,
            env!("CARGO_BIN_EXE_random-bot"),
            repo.join("bots/random-python/bot.py").display(),
            match common::has_node() {
                true => format!(
                    "  {{ name = \"random-js\", command = [\"node\", \"{}\"] }},\n",
                    repo.join("bots/random-js/bot.js").display()
                ),
                false => String::new(),
            },
            env!("CARGO_BIN_EXE_greedy-bot"),
            repo.join("bots/heuristic-python/bot.py").display(),
            env!("CARGO_BIN_EXE_search-bot"),
        ),
    )
    .unwrap();
    let league = |out: &str, jobs: &str| {
        let res = dir.path().join(out);
        let o = run(&file, &["-j", jobs, "--output", res.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got = rows(&res.join("games.csv"));
        assert!(got.iter().all(|r| r.offender.is_none()), "{got:?}");
        let records: BTreeMap<String, Vec<serde_json::Value>> = got
            .iter()
            .map(|r| {
                let text = record_text(&res, r);
                let lines = text
                    .lines()
                    .map(|l| {
                        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                        if let Some(o) = v.as_object_mut() {
                            o.remove("us");
                            o.remove("duration_ms");
                        }
                        v
                    })
                    .collect();
                (r.game_id.clone(), lines)
            })
            .collect();
        (by_id(&got), records)
    };
    let (rows_2, records_2) = league("j2", "2");
    let (rows_1, records_1) = league("j1", "1");
    assert_eq!(
        rows_2.len(),
        schedule_ids(&file).len(),
        "the whole schedule"
    );
    assert_eq!(rows_2, rows_1);
    assert_eq!(records_2, records_1);
    // The seed reaches the records, and differs from game to game.
    let seeds: BTreeSet<String> = records_1
        .values()
        .map(|r| r[0]["seed"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seeds.len(), records_1.len());
}

/// `arena replay FILE GAME_ID` plays a recorded game again with the same
/// bots and seed and finds it the same; a record that says otherwise (one
/// decision changed) is found different at that decision.
#[test]
fn replay_plays_a_recorded_game_again_and_finds_a_difference() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    assert!(run(&file, &[]).status.success());
    let got = rows(&dir.path().join("out/games.csv"));
    let game = got
        .iter()
        .find(|r| r.variant == "kisolo" && r.plies > 4)
        .expect("a kisolo game");
    // The league by its file, or by its results folder.
    let replay = |league: &Path| {
        arena()
            .args(["replay"])
            .arg(league)
            .arg(&game.game_id)
            .output()
            .unwrap()
    };
    let out = replay(&file);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("same: "), "{text}");
    // Another league's file with this folder's results: told as that, not
    // as a bot that left the file; so is one whose bots are this folder's
    // too (its game of the same id was replayed and found `same`).
    let src = std::fs::read_to_string(&file).unwrap();
    let other_bots = src
        .replace("name = \"a\"", "name = \"x\"")
        .replace("name = \"b\"", "name = \"y\"")
        .replace("name = \"c\"", "name = \"z\"");
    for (name, text) in [("other", &other_bots), ("twin", &src)] {
        let other = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &other,
            text.replace("name = \"t\"", &format!("name = \"{name}\"")),
        )
        .unwrap();
        let out = arena()
            .arg("replay")
            .arg(&other)
            .arg(&game.game_id)
            .arg("--results")
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success()
                && e.contains(&format!("holds the results of league `t`, not of `{name}`")),
            "{name}: {e}"
        );
    }
    // Given the results folder, the league is made again from the command
    // recorded there (`arena run FILE`, its paths absolute).
    let out = replay(&dir.path().join("out"));
    let again = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{again}");
    assert!(again.contains("same: "), "{again}");

    // `arena show` prints the same game: a line per decision, the result.
    let out = arena()
        .args(["show"])
        .arg(dir.path().join("out"))
        .arg(&game.game_id)
        .arg("--board")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    let plies = shown.lines().filter(|l| l.starts_with("ply ")).count();
    let res = dir.path().join("out");
    let recorded = record_text(&res, game)
        .lines()
        .filter(|l| !l.contains(r#""type":"#))
        .count();
    assert_eq!(plies, recorded, "{shown}");
    assert!(
        shown.contains("result: ") && shown.contains(&game.game_id),
        "{shown}"
    );
    // An id with no row is told so; a row whose record is damaged is told
    // as damaged, not as an unknown id.
    let show_err = |dir: &std::path::Path, id: &str| {
        let out = arena().arg("show").arg(dir).arg(id).output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = show_err(&res, "no-such-game");
    assert!(e.contains("no game `no-such-game` here"), "{e}");
    let damaged = dir.path().join("damaged");
    std::fs::create_dir_all(damaged.join("games")).unwrap();
    std::fs::copy(res.join("games.csv"), damaged.join("games.csv")).unwrap();
    for f in std::fs::read_dir(res.join("games")).unwrap() {
        let f = f.unwrap().path();
        let mut bytes = std::fs::read(&f).unwrap();
        if f.to_string_lossy().ends_with(".zst") {
            bytes.truncate(bytes.len() / 2);
        }
        std::fs::write(damaged.join("games").join(f.file_name().unwrap()), bytes).unwrap();
    }
    let last = std::fs::read_to_string(res.join("games.csv")).unwrap();
    let last_id = last
        .lines()
        .last()
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .to_string();
    let e = show_err(&damaged, &last_id);
    assert!(
        e.contains("its row is there; the record cannot be read") && !e.contains("no game"),
        "{e}"
    );

    let lines: Vec<String> = record_text(&res, game).lines().map(String::from).collect();
    let mut forged = String::new();
    let (i, changed) = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            // A decision line (format 2: no `type`) the bot was asked for.
            (v.get("type").is_none() && v.get("forced").is_none() && v.get("opening").is_none())
                .then(|| {
                    forged = "Z".repeat(v["option"].as_str().unwrap().len());
                    v["option"] = forged.clone().into();
                    (i, v.to_string())
                })
        })
        .expect("an asked decision");
    let mut tampered = lines.clone();
    tampered[i] = changed;
    let text = tampered.join("\n") + "\n";
    // The forged record: a new frame at the end of the log, and the row
    // pointing at it.
    let frame = mancala_arena::results::records::encode(text.as_bytes()).unwrap();
    let path = res.join("games").join(&game.record_file);
    let end = std::fs::metadata(&path).unwrap().len();
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    log.write_all(frame.bytes()).unwrap();
    let csv = std::fs::read_to_string(res.join("games.csv")).unwrap();
    let genuine = csv.clone();
    let place = |o: u64, l: u64| format!(",{},{o},{l}\n", game.record_file);
    let old = place(game.record_offset.unwrap(), game.record_length.unwrap());
    assert_eq!(csv.matches(&old).count(), 1);
    let csv = csv.replace(&old, &place(end, frame.bytes().len() as u64));
    std::fs::write(res.join("games.csv"), csv).unwrap();
    let out = replay(&file);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("different: decision {i} "))
            && text.contains(&format!("recorded `{forged}`")),
        "{text}"
    );
    assert!(!text.contains("program changed"), "{text}");
    // A seat whose program is not the one the league last ran (its hash
    // in league.json is another) is named beside the difference.
    let json = dir.path().join("out/league.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let files = meta["played_under"]["programs"][&game.seat0]
        .as_object_mut()
        .expect("the seat's program files");
    assert!(!files.is_empty());
    for h in files.values_mut() {
        *h = "0".repeat(64).into();
    }
    // And a change of its command noted on a resume.
    let noted = format!(
        "2026-01-01T00:00:00Z: bot `{}`'s command: [\"old\"] -> [\"new\"]",
        game.seat0
    );
    meta["played_under"]["changes"] = serde_json::json!([noted]);
    std::fs::write(&json, meta.to_string()).unwrap();
    let changed = format!(
        "warning: bot `{}`'s program changed since its league last ran: ",
        game.seat0
    );
    let out = replay(&file);
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        err.contains(&changed)
            && err.contains("(sha256 000000000000… -> ")
            && err.contains("the replay plays the new one, and may diverge from the record"),
        "{err}"
    );
    assert!(
        text.contains(&format!(
            "the league noted a change of bot `{}` ({noted}): a game played before it",
            game.seat0
        )),
        "{text}"
    );
    // Warned before the replay, whether it then diverges or not.
    std::fs::write(res.join("games.csv"), &genuine).unwrap();
    let out = replay(&file);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains(&changed), "{err}");
}

/// Where stderr is not a terminal (a batch job), the run prints one line
/// per finished game and a line per forfeit with its reason and detail,
/// and the standings every `--rating-interval` games; `--quiet` prints
/// none of them.
#[test]
fn a_batch_run_prints_a_line_per_game_and_per_forfeit() {
    let dir = tempfile::tempdir().unwrap();
    let cheat = format!(r#"["python3", "{}", "illegal"]"#, misbehave_py().display());
    let file = good_against(dir.path(), "b", "cheat", &cheat, r#""filo", "kisolo""#);
    let out = arena()
        .args(["run", "--rating-interval", "2"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let games: Vec<&str> = err.lines().filter(|l| l.starts_with("game ")).collect();
    assert_eq!(games.len(), 4, "{err}");
    assert!(games.iter().any(|l| l.starts_with("game 4/4 ")), "{err}");
    let forfeits: Vec<&str> = err.lines().filter(|l| l.starts_with("forfeit: ")).collect();
    assert_eq!(forfeits.len(), 4, "{err}");
    assert!(
        forfeits
            .iter()
            .all(|l| l.contains(": cheat (seat ") && l.contains(" illegal: ")),
        "{err}"
    );
    assert_eq!(err.matches("standings after ").count(), 2, "{err}");

    let quiet = dir.path().join("quiet");
    let out = arena()
        .args(["run", "--quiet", "--output", quiet.to_str().unwrap()])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(rows(&quiet.join("games.csv")).len(), 4);
    assert!(!err.contains("game ") && !err.contains("forfeit:"), "{err}");
}

/// A bot that dies at start-up is reported with the end of its stderr (its
/// traceback) and the log that holds it, before any game.
#[test]
fn a_bot_that_dies_at_start_is_shown_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let dies = r#"["python3", "-c", "import sys; print('loading the model', file=sys.stderr); sys.exit('model.bin not found')"]"#;
    let file = good_against(dir.path(), "d", "dies", dies, r#""filo""#);
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("bot `dies` cannot start")
            && err.contains("its stderr ends (")
            && err.contains("dies-check.log")
            && err.contains("loading the model")
            && err.contains("model.bin not found"),
        "{err}"
    );
    assert!(
        !dir.path().join("out/games.csv").exists()
            || rows(&dir.path().join("out/games.csv")).is_empty()
    );
}

/// A resume under another time control is refused, naming the change; a
/// bot whose command changed is warned about; league.json keeps what the
/// games were played under.
/// The last row of games.csv in `out`, removed: a resume plays its game
/// again.
fn forget_last_game(out: &Path) {
    let csv = out.join("games.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let body = text.trim_end_matches('\n');
    let cut = body.rfind('\n').expect("a row after the header");
    std::fs::write(&csv, &text[..=cut]).unwrap();
}

#[test]
fn a_resume_checks_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out_dir = dir.path().join("out");
    run_ok(&file, &["--rounds", "1"]);
    let meta = std::fs::read_to_string(dir.path().join("out/league.json")).unwrap();
    assert!(
        meta.contains("\"decision_ms\"") && meta.contains("random-bot"),
        "{meta}"
    );
    // A resume that plays no game (every one is done) under another
    // command and without the sandbox: league.json stays as it was.
    let text = std::fs::read_to_string(&file).unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let changed = text.replacen(
        &format!("name = \"a\", command = [\"{bot}\"]"),
        &format!("name = \"a\", command = [\"{bot}\", \"--v0\"]"),
        1,
    );
    std::fs::write(&file, changed).unwrap();
    let out = run(&file, &["--sandbox", "off"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("--v0"), "{err}");
    let after = std::fs::read_to_string(dir.path().join("out/league.json")).unwrap();
    assert_eq!(after, meta);
    std::fs::write(&file, &text).unwrap();

    let out = run(&file, &["--decision-ms", "7"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("the time control changed") && err.contains("decision_ms"),
        "{err}"
    );

    // The same bots under another command line (an extra argument that the
    // random bot does not read).
    let text = std::fs::read_to_string(&file).unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    std::fs::write(
        &file,
        text.replacen(
            &format!("name = \"a\", command = [\"{bot}\"]"),
            &format!("name = \"a\", command = [\"{bot}\", \"--v2\"]"),
            1,
        ),
    )
    .unwrap();
    // Each resume below plays a game: its changes are noted then.
    forget_last_game(&out_dir);
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: league `t`: bot `a`'s command: ")
            && err.contains("--v2")
            && err.contains("its games from now on ("),
        "{err}"
    );
    // Said once: league.json takes the new command, and notes the change.
    forget_last_game(&out_dir);
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("command:"), "{err}");
    // Another setting (the environment): said too, its value not kept.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replacen(
            &format!("name = \"b\", command = [\"{bot}\"]"),
            &format!("name = \"b\", command = [\"{bot}\"], env = {{ SECRET = \"hunter2\" }}"),
            1,
        ),
    )
    .unwrap();
    forget_last_game(&out_dir);
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && err
                .contains("bot `b`'s settings: env none; limits none -> env SECRET (values sha256"),
        "{err}"
    );
    let meta = std::fs::read_to_string(dir.path().join("out/league.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(
        v["played_under"]["changes"].as_array().map(Vec::len),
        Some(2),
        "{meta}"
    );
    assert!(!meta.contains("hunter2"), "{meta}");

    // The league's own limits (a flag here) are the bots' settings too.
    forget_last_game(&out_dir);
    let out = run(&file, &["--memory-mb", "300"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("limits none -> env none; limits memory_mb = 300"),
        "{err}"
    );
    // The sandbox turned off: warned about once, noted, and league.json
    // says so from then on; turned on again: noted, still said.
    let changes = |v: &serde_json::Value| v["played_under"]["changes"].as_array().cloned();
    let meta_now = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/league.json")).unwrap())
            .unwrap()
    };
    let before = changes(&meta_now()).map_or(0, |c| c.len());
    for (flags, warned) in [
        (&["--memory-mb", "300", "--sandbox", "off"][..], true),
        (&["--memory-mb", "300", "--sandbox", "off"][..], false),
        (&["--memory-mb", "300"][..], false),
    ] {
        forget_last_game(&out_dir);
        let out = run(&file, flags);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{flags:?}: {err}");
        assert_eq!(
            err.contains("the bots run without their sandbox (--sandbox off), since its last run"),
            warned,
            "{flags:?}: {err}"
        );
    }
    let v = meta_now();
    assert_eq!(v["sandbox"], serde_json::Value::Bool(false), "{v}");
    let noted: Vec<String> = changes(&v).unwrap_or_default()[before..]
        .iter()
        .map(|c| c.as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(noted.len(), 2, "{noted:?}");
    assert!(
        noted[0].ends_with("the bots run without their sandbox (--sandbox off)"),
        "{noted:?}"
    );
    assert!(
        noted[1].ends_with("the bots run in their sandbox again"),
        "{noted:?}"
    );
}

/// More than 4 games at a time per CPU is refused without
/// --force-concurrency, before anything is written.
#[test]
fn too_many_games_at_a_time_are_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = run(&file, &["-j", "1000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("concurrency 1000: more than 4 games at a time per CPU")
            && err.contains("--force-concurrency"),
        "{err}"
    );
    assert!(!dir.path().join("out").exists());
}

/// `--log FILE` keeps the league's own log: the start, each bot started or
/// restarted, each forfeit with its detail, and the end.
#[test]
fn the_league_log_holds_starts_forfeits_and_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let cheat = format!(r#"["python3", "{}", "illegal"]"#, misbehave_py().display());
    let file = good_against(dir.path(), "l", "cheat", &cheat, r#""filo""#);
    let log = dir.path().join("league.log");
    run_ok(&file, &["--log", log.to_str().unwrap()]);
    let text = std::fs::read_to_string(&log).unwrap();
    for needle in [
        "league l: 2 bots",
        "started good on worker",
        "started cheat on worker",
        "cheat (seat",
        "illegal: ",
        "league l: complete after 2 new games",
    ] {
        assert!(text.contains(needle), "no `{needle}` in:\n{text}");
    }
}

/// Copies the results folder `tests/data/NAME` (league.json, games.csv and
/// a record file per game) to `out`.
fn copy_fixture(name: &str, out: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::create_dir_all(out.join("games")).unwrap();
    for name in ["league.json", "games.csv"] {
        std::fs::copy(fixture.join(name), out.join(name)).unwrap();
    }
    for e in std::fs::read_dir(fixture.join("games")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), out.join("games").join(e.file_name())).unwrap();
    }
}

/// A games.csv saved by pandas (`to_csv` adds an index column) or a
/// spreadsheet (columns in another order) resumes: its rows are rewritten
/// in arena's order before any is appended (the file as it was kept as
/// games.csv.orig), so the new rows line up with the old and every game
/// keeps its scores.
#[test]
fn a_games_csv_with_its_columns_reordered_or_added_resumes_in_arenas_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let csv = dir.path().join("out/games.csv");
    let whole = by_id(&run_finishes_the_schedule(&file, &csv));
    // score0 and score1 swapped (names and values), an index column first,
    // the last row gone: one game to play again.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut cells: Vec<&str> = line.split(',').collect();
        cells.swap(7, 8);
        let index = if i == 0 {
            String::new()
        } else {
            (i - 1).to_string()
        };
        lines.push(format!("{index},{}", cells.join(",")));
    }
    lines.pop();
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let out = run(&file, &[]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("rewritten in arena's order"), "{said}");
    assert!(
        said.contains(
            "without the columns arena does not write (an unnamed column: pandas' index?)"
        ),
        "{said}"
    );
    let again = std::fs::read_to_string(&csv).unwrap();
    assert!(again.starts_with("game_id,variant,players,group,seat0,seat1,seat2,score0,score1,"));
    assert_eq!(by_id(&rows(&csv)), whole);
    let kept = std::fs::read_to_string(dir.path().join("out/games.csv.orig")).unwrap();
    assert_eq!(kept, lines.join("\n") + "\n");
    // A second such file (an analyst's column added): kept beside the
    // first, which is not written over (its own column was lost).
    let noted: Vec<String> = again
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{l},{}", if i == 0 { "note" } else { "x" }))
        .collect();
    std::fs::write(&csv, noted.join("\n") + "\n").unwrap();
    let out = run(&file, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = std::fs::read_to_string(dir.path().join("out/games.csv.orig")).unwrap();
    assert_eq!(first, kept);
    let second = std::fs::read_to_string(dir.path().join("out/games.csv.orig.2")).unwrap();
    assert_eq!(second, noted.join("\n") + "\n");
}

/// The same, with a row that cannot be read: the resume is refused with
/// its line, games.csv stays as it was, and no half-made copy
/// (`.games.csv.PID.N.tmp`) or copy of the original (games.csv.orig) is
/// left.
#[test]
fn a_reordered_games_csv_with_a_bad_row_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let csv = dir.path().join("out/games.csv");
    run_finishes_the_schedule(&file, &csv);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut cells: Vec<&str> = line.split(',').collect();
        cells.swap(7, 8);
        if i == 2 {
            cells[7] = "x";
        }
        lines.push(cells.join(","));
    }
    let bad = lines.join("\n") + "\n";
    std::fs::write(&csv, &bad).unwrap();
    let out = run(&file, &[]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("games.csv:3"), "{said}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), bad);
    for left in ["out/games.csv.tmp", "out/games.csv.orig"] {
        assert!(!dir.path().join(left).exists(), "{left} left behind");
    }
    let temps = common::names_in(&dir.path().join("out"), |n| n.ends_with(".tmp"));
    assert!(temps.is_empty(), "{temps:?} left behind");
}

/// A row whose record place holds another game's record (its offset and
/// length edited) is named by `arena show`, not shown as that other game.
#[test]
fn show_refuses_a_row_whose_record_is_another_games() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let csv = dir.path().join("out/games.csv");
    let got = run_finishes_the_schedule(&file, &csv);
    let (a, b) = (&got[0], &got[1]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let place = |r: &GameRow| {
        let n = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        format!(
            ",{},{},{}",
            r.record_file,
            n(r.record_offset),
            n(r.record_length)
        )
    };
    let edited = text.replacen(&place(a), &place(b), 1);
    assert_ne!(edited, text);
    std::fs::write(&csv, edited).unwrap();
    let out = arena()
        .args(["show"])
        .arg(dir.path().join("out"))
        .arg(&a.game_id)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains(&format!("is game `{}`'s", b.game_id)),
        "{said}"
    );
}

/// The league file of a fixture: two random bots.
fn fixture_league(dir: &Path, name: &str, variants: &str, rounds: u32) -> PathBuf {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            r#"
name = "{name}"
seed = 5
bots = [
  {{ name = "a", command = ["{bot}"] }},
  {{ name = "b", command = ["{bot}"] }},
]
variants = [{variants}]
rounds = {rounds}
output = "out"
"#
        ),
    )
    .unwrap();
    file
}

/// Resumes a folder of an older version (a record file per game): the old
/// rows are kept, the header gains the added columns, the new games go to
/// the record log, and `arena show` finds games of both kinds.
fn an_old_folder_resumes(file: &Path, out: &Path, old_rows: usize, total: usize) {
    let before = rows(&out.join("games.csv"));
    assert_eq!(before.len(), old_rows);
    let got = run_finishes_the_schedule(file, &out.join("games.csv"));
    assert_eq!(got.len(), total);
    assert_eq!(
        &got[..old_rows],
        &before[..],
        "the old rows are kept as they were"
    );
    assert!(before.iter().all(|r| r.record_file.is_empty()));
    let text = std::fs::read_to_string(out.join("games.csv")).unwrap();
    assert!(
        text.lines().next().unwrap().ends_with(
            ",opening,started_at,version0,version1,version2,time0_ms,time1_ms,time2_ms,record_file,record_offset,record_length"
        ),
        "the header gains the added columns: {text}"
    );
    assert!(got[old_rows..]
        .iter()
        .all(|r| !r.started_at.is_empty() && r.record_file == "records-0000.jsonl.zst"));
    for r in [&got[0], &got[total - 1]] {
        let shown = arena()
            .args(["show", "--json"])
            .arg(out)
            .arg(&r.game_id)
            .output()
            .unwrap();
        assert!(
            shown.status.success(),
            "{}",
            String::from_utf8_lossy(&shown.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&shown.stdout), record_text(out, r));
    }
}

/// A folder started by a version before the lazy schedule (its league.json
/// fingerprint hashed every game) still resumes: the fixture was written by
/// that version, with this file, and cut to its first two rows.
#[test]
fn a_folder_of_the_previous_version_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    copy_fixture("legacy-league", &out);
    let file = fixture_league(dir.path(), "legacy", r#""kisolo""#, 3);
    an_old_folder_resumes(&file, &out, 2, 6);
    // Another schedule is still refused.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("rounds = 3", "rounds = 4")).unwrap();
    let out = run(&file, &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("different schedule"));
}

/// A folder of the version before the record logs (a record file per game,
/// the added columns up to `time2_ms`) resumes: the fixture was written by
/// that version with this file and cut to its first three rows.
#[test]
fn a_folder_with_a_record_file_per_game_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    copy_fixture("head-league", &out);
    let file = fixture_league(dir.path(), "head", r#""kisolo", "filo""#, 2);
    an_old_folder_resumes(&file, &out, 3, 8);
}

/// A folder of the version before issue 35 (a plain record log,
/// `records-0000.jsonl`, of format-1 records): the fixture was written by
/// that version with this file and cut to its first three rows. Its torn
/// tail (a record without a row) is cut and kept, it resumes with the new
/// games in a log of frames (the plain log is never appended to), and
/// `arena show` and `arena replay` read games of both logs.
#[test]
fn a_folder_of_plain_record_logs_resumes_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    copy_fixture("log-league", &out);
    let file = fixture_league(dir.path(), "log", r#""kisolo", "filo""#, 2);
    let plain = out.join("games/records-0000.jsonl");
    let whole = std::fs::metadata(&plain).unwrap().len();
    let torn = r#"{"type":"game","game_id":"r001-kisolo-p000-o1","variant":"kis"#;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&plain)
        .unwrap();
    f.write_all(torn.as_bytes()).unwrap();
    drop(f);

    let before = rows(&out.join("games.csv"));
    assert_eq!(before.len(), 3);
    let got = run_finishes_the_schedule(&file, &out.join("games.csv"));
    assert_eq!(got.len(), 8);
    assert_eq!(&got[..3], &before[..], "the old rows are kept as they were");
    assert!(got[..3]
        .iter()
        .all(|r| r.record_file == "records-0000.jsonl"));
    assert!(got[3..]
        .iter()
        .all(|r| r.record_file == "records-0001.jsonl.zst"));
    assert_eq!(std::fs::metadata(&plain).unwrap().len(), whole);
    assert_eq!(
        std::fs::read_to_string(out.join("uncommitted-records.jsonl")).unwrap(),
        torn
    );
    assert_eq!(frames(&out.join("games/records-0001.jsonl.zst")).len(), 5);
    // The report, written at the end of the run, read every record of both
    // logs.
    let page = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(!page.contains("Records that could not be shown"));
    assert!(out.join("report/games/index.js").is_file());
    // `arena pgn` (games.csv only) has every game of both logs.
    let pgn = arena()
        .arg("pgn")
        .arg(out.join("games.csv"))
        .output()
        .unwrap();
    assert!(pgn.status.success());
    assert_eq!(
        String::from_utf8_lossy(&pgn.stdout)
            .matches("[Result ")
            .count(),
        8
    );
    for r in [&got[0], &got[7]] {
        let shown = arena()
            .args(["show", "--json"])
            .arg(&out)
            .arg(&r.game_id)
            .output()
            .unwrap();
        assert!(
            shown.status.success(),
            "{}",
            String::from_utf8_lossy(&shown.stderr)
        );
        let text = String::from_utf8_lossy(&shown.stdout);
        assert_eq!(text, record_text(&out, r));
        let format = if r.record_file.ends_with(".zst") {
            r#""format":2,"#
        } else {
            ""
        };
        assert!(
            text.starts_with(&format!(
                r#"{{"type":"game",{format}"game_id":"{}""#,
                r.game_id
            )),
            "{text}"
        );
        let replayed = arena()
            .arg("replay")
            .arg(&file)
            .arg(&r.game_id)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&replayed.stdout);
        assert!(
            replayed.status.success() && said.contains("same: "),
            "{said}{}",
            String::from_utf8_lossy(&replayed.stderr)
        );
    }
}

/// A copy of the shipped Python random bot in `dir` (its `bot.py`).
fn python_bot_in(dir: &Path) -> PathBuf {
    let script = dir.join("bot.py");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-python/bot.py"),
        &script,
    )
    .unwrap();
    script
}

/// A league file `name` of the Python bot `py` (run in `cwd`) and the
/// Rust random bot `rs`, two rounds of Kisolo into `output`.
fn python_and_rust_league(name: &str, cwd: &str, output: &str) -> String {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    format!(
        r#"
name = "{name}"
bots = [
  {{ name = "py", command = ["python3", "bot.py"], cwd = "{cwd}" }},
  {{ name = "rs", command = ["{bot}"] }},
]
variants = ["kisolo"]
rounds = 2
output = "{output}"
"#
    )
}

/// league.json keeps the SHA-256 of each bot's program files after the
/// build; a resume whose bot files changed says which bot and which file.
#[test]
fn a_resume_names_a_bot_whose_program_changed() {
    let dir = tempfile::tempdir().unwrap();
    let script = python_bot_in(dir.path());
    let file = dir.path().join("p.toml");
    std::fs::write(&file, python_and_rust_league("p", ".", "out")).unwrap();
    run_ok(&file, &[]);
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/league.json")).unwrap())
            .unwrap();
    let programs = &meta["played_under"]["programs"];
    let py = programs["py"].as_object().expect("py's files");
    let (path, hash) = py
        .iter()
        .find(|(p, _)| p.ends_with("bot.py"))
        .expect("the script is hashed");
    assert_eq!(hash.as_str().unwrap().len(), 64, "{path}");
    assert!(py.keys().any(|p| p.ends_with("python3")), "{py:?}");
    assert!(programs["rs"]
        .as_object()
        .unwrap()
        .keys()
        .any(|p| p == env!("CARGO_BIN_EXE_random-bot")));

    // Two games to play again (their rows gone), and the script changed.
    let csv = dir.path().join("out/games.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&csv, kept[..kept.len() - 2].join("\n") + "\n").unwrap();
    let mut source = std::fs::read_to_string(&script).unwrap();
    source.push_str("\n# version 2\n");
    std::fs::write(&script, source).unwrap();
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: bot `py`'s program changed") && err.contains("bot.py (sha256 "),
        "{err}"
    );
    assert!(!err.contains("bot `rs`"), "{err}");
    assert_eq!(rows(&csv).len(), 4);
    // Said once: the next resume finds the program as league.json now
    // has it, with the change noted.
    std::fs::write(&csv, kept[..kept.len() - 2].join("\n") + "\n").unwrap();
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("program changed"),
        "{err}"
    );
    let meta = std::fs::read_to_string(dir.path().join("out/league.json")).unwrap();
    assert!(
        meta.contains("bot `py`'s program: ") && meta.contains("bot.py (sha256 "),
        "{meta}"
    );
}

/// The same league resumed from another working folder names its bots'
/// files by other paths (as the command gives them): unchanged files are
/// not said to have changed.
#[test]
fn a_resume_from_another_folder_names_no_unchanged_program() {
    let dir = tempfile::tempdir().unwrap();
    let bot_dir = dir.path().join("pybot");
    std::fs::create_dir_all(&bot_dir).unwrap();
    python_bot_in(&bot_dir);
    let tournaments = dir.path().join("tournaments");
    std::fs::create_dir_all(&tournaments).unwrap();
    std::fs::write(
        tournaments.join("q.toml"),
        python_and_rust_league("q", "../pybot", "../out"),
    )
    .unwrap();
    let run_in = |cwd: &Path, name: &str| {
        let o = arena()
            .current_dir(cwd)
            .args(["run", name, "--no-report", "--quiet"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(o.status.success(), "{err}");
        err
    };
    run_in(dir.path(), "tournaments/q.toml");
    // Two games to play again, from another folder.
    let csv = dir.path().join("out/games.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&csv, kept[..kept.len() - 2].join("\n") + "\n").unwrap();
    let other = dir.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let err = run_in(&other, "../tournaments/q.toml");
    assert!(!err.contains("program changed"), "{err}");
    assert_eq!(rows(&csv).len(), 4);
}

/// A file without `output` writes to `results/NAME` beside its
/// `tournaments/` folder, whether it is named from the project
/// (`tournaments/t.toml`) or from its own folder (`t.toml`): one results
/// folder, so that the second run resumes the first.
#[test]
fn a_file_named_from_its_own_folder_finds_the_same_results() {
    let dir = tempfile::tempdir().unwrap();
    let tournaments = dir.path().join("tournaments");
    std::fs::create_dir(&tournaments).unwrap();
    let file = write_tournament(&tournaments, 1, "");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("output = \"out\"", "variants = [\"filo\"]")
        .replace("variants = [\"filo\", \"tricala\", \"tricala3\", \"hackaback\", \"kisolo\", \"diffusion\"]", "");
    std::fs::write(&file, text).unwrap();
    let run_in = |cwd: &Path, name: &str| {
        let o = arena()
            .current_dir(cwd)
            .args(["run", name, "--no-report", "--quiet"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    run_in(dir.path(), "tournaments/t.toml");
    let csv = dir.path().join("results/t/games.csv");
    let first = std::fs::read_to_string(&csv).unwrap();
    run_in(&tournaments, "t.toml");
    assert!(!tournaments.join("results").exists());
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        first,
        "played again"
    );
}

/// `arena status DIR --json` of a folder no run holds: its first shard and
/// the whole answer.
fn status_json(dir: &Path) -> serde_json::Value {
    let o = arena()
        .arg("status")
        .arg(dir)
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Runs a command `arena status` gave (`arena ...`, as a shell reads it)
/// with this build's binary; it must succeed.
fn run_command(command: &str) {
    let words = shlex::split(command).unwrap_or_default();
    assert_eq!(
        words.first().map(String::as_str),
        Some("arena"),
        "{command}"
    );
    let o = arena().args(&words[1..]).output().unwrap();
    assert!(
        o.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A record log cut short (a copy stopped half-way, a disk mended) or a
/// last record overwritten leaves rows a resume refuses: `arena status`
/// does not call the league complete, names the first such row and gives
/// the command with `--repair`, which plays those games again.
#[test]
fn status_names_rows_whose_record_is_gone_and_its_command_mends_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = dir.path().join("out");
    let csv = out.join("games.csv");
    let games = run_finishes_the_schedule(&file, &csv).len();
    let log = out.join("games/records-0000.jsonl.zst");
    let len = std::fs::metadata(&log).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    for damage in ["cut", "last record overwritten"] {
        let v = status_json(&out);
        let shard = &v["shards"][0];
        assert_eq!(shard["state"], "stopped", "{damage}: {v:#}");
        assert_eq!(v["finished"], false, "{damage}: {v:#}");
        assert!(
            shard["done"].as_u64().unwrap_or(0) < games as u64,
            "{damage}: {v:#}"
        );
        let first = shard["bad_record"].as_str().unwrap_or_default();
        assert!(first.contains("games.csv:"), "{damage}: {v:#}");
        let start = shard["start"].as_str().unwrap_or_default().to_string();
        assert!(start.ends_with(" --repair"), "{damage}: {v:#}");
        let o = arena().arg("status").arg(&out).output().unwrap();
        let said = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(said.contains("record is missing or damaged"), "{said}");
        // What it says mends it.
        run_command(&start);
        assert_eq!(status_json(&out)["shards"][0]["state"], "complete");
        let ids: BTreeSet<String> = by_id(&rows(&csv)).into_keys().collect();
        assert_eq!(ids, schedule_ids(&file), "{damage}");
        // Next: the last row's record overwritten with zeros (its place
        // is there; only reading it finds it is not a record).
        let last = rows(&csv).pop().unwrap();
        let (at, n) = (last.record_offset.unwrap(), last.record_length.unwrap());
        let log = out.join("games").join(&last.record_file);
        let mut bytes = std::fs::read(&log).unwrap();
        bytes[at as usize..(at + n) as usize].fill(0);
        std::fs::write(&log, bytes).unwrap();
    }
}

/// A results folder moved or renamed between runs, of a league started
/// without `-o` (its file's `output`) and of shards: the command `arena
/// status` gives resumes the folder where it is now, not a new league
/// where it was.
#[test]
fn status_of_a_moved_folder_resumes_it_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = dir.path().join("out");
    let keep_ten_rows = |csv: &Path| {
        let all = std::fs::read_to_string(csv).unwrap();
        let kept: Vec<&str> = all.lines().take(11).collect();
        std::fs::write(csv, kept.join("\n") + "\n").unwrap();
    };
    for shard in [None, Some("1/2")] {
        let args: Vec<&str> = shard.iter().flat_map(|s| ["--shard", *s]).collect();
        run_ok(&file, &args);
        let shard_dir = |root: &Path| match shard {
            Some(_) => root.join("shard-1-of-2"),
            None => root.to_path_buf(),
        };
        keep_ten_rows(&shard_dir(&out).join("games.csv"));
        let moved = dir.path().join(format!("moved-{}", shard.is_some()));
        std::fs::rename(&out, &moved).unwrap();
        let v = status_json(&moved);
        let start = v["shards"][0]["start"].as_str().unwrap_or_default();
        let words = shlex::split(start).unwrap_or_default();
        let at = words.iter().position(|w| w == "-o").expect(start);
        let here = std::path::absolute(&moved).unwrap();
        assert_eq!(Path::new(&words[at + 1]), here, "{v:#}");
        run_command(start);
        assert!(!out.exists(), "a new league where it was: {start}");
        let got = rows(&shard_dir(&moved).join("games.csv"));
        let want = match shard {
            None => schedule_ids(&file).len(),
            Some(_) => status_json(&moved)["shards"][0]["total"].as_u64().unwrap() as usize,
        };
        assert_eq!(by_id(&got).len(), want, "{start}");
    }
}

/// A file where the results folder keeps one of its folders (`logs`,
/// `games`) is named as such, not as `File exists` on the results folder.
#[test]
fn a_file_in_place_of_the_logs_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = dir.path().join("out");
    for name in ["logs", "games"] {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(name), "x").unwrap();
        let o = run(&file, &[]);
        let said = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{said}");
        let path = out.join(name).display().to_string();
        assert!(
            said.contains(&path) && said.contains("is a file where the league keeps a folder"),
            "{said}"
        );
    }
}

/// An unreadable league.json (an editor's slip) does not leave moving the
/// games away as the only way on: the error says that deleting it
/// resumes, and it does; with other settings than its rows', it does not.
#[test]
fn an_unreadable_league_json_says_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = dir.path().join("out");
    let csv = out.join("games.csv");
    run_finishes_the_schedule(&file, &csv);
    let before = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(out.join("league.json"), "{oops").unwrap();
    let o = run(&file, &[]);
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains("league.json") && said.contains("delete it"),
        "{said}"
    );
    std::fs::remove_file(out.join("league.json")).unwrap();
    // Without league.json nothing compares the settings: each row's seed
    // and opening are compared with the schedule's instead. Another seed
    // or other openings are refused (they were taken, and the league
    // mixed two schedules' games), and no league.json binds the folder
    // to the refused command.
    for (flags, said_what) in [
        (&["--seed", "12"][..], "a league of another seed"),
        (&["--openings", "3"][..], "a league of other openings"),
    ] {
        let o = run(&file, flags);
        let said = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{flags:?}: {said}");
        assert!(said.contains(said_what), "{flags:?}: {said}");
        assert!(said.contains("league.json: missing"), "{flags:?}: {said}");
        assert!(!out.join("league.json").exists(), "{flags:?}");
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), before);
    }
    run_ok(&file, &[]);
    // Nothing played again: every game was there.
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), before);
    assert_eq!(status_json(&out)["shards"][0]["state"], "complete");
}

/// A resume whose bot cannot start (its script broken since) plays
/// nothing, notes nothing in league.json (it noted the program's change
/// as league history), and does not advise `--bots` (a resume refuses
/// another set of bots); once mended, the league goes on.
#[test]
fn a_resume_whose_bot_cannot_start_notes_nothing_and_advises_no_other_bots() {
    let dir = tempfile::tempdir().unwrap();
    let random = env!("CARGO_BIN_EXE_random-bot");
    let script = dir.path().join("c.py");
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-python/bot.py"),
    )
    .unwrap();
    std::fs::write(&script, &good).unwrap();
    let file = dir.path().join("t.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"t\"\nseed = 5\nbots = [\n  {{ name = \"a\", command = [\"{random}\"] }},\n  \
             {{ name = \"b\", command = [\"{random}\"] }},\n  \
             {{ name = \"c\", command = [\"python3\", \"{}\"] }},\n]\n\
             variants = [\"kisolo\"]\nrounds = 2\noutput = \"out\"\n",
            script.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let csv = out.join("games.csv");
    run_ok(&file, &[]);
    let all = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = all.lines().take(4).collect();
    std::fs::write(&csv, kept.join("\n") + "\n").unwrap();
    let meta = std::fs::read_to_string(out.join("league.json")).unwrap();
    std::fs::write(&script, "import sys\nsys.exit('broken on purpose')\n").unwrap();
    let o = run(&file, &[]);
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "{said}");
    assert!(said.contains("broken on purpose"), "{said}");
    assert!(!said.contains("--bots"), "{said}");
    assert_eq!(
        std::fs::read_to_string(out.join("league.json")).unwrap(),
        meta
    );
    std::fs::write(&script, &good).unwrap();
    run_ok(&file, &[]);
    assert_eq!(data_lines(&csv), all.lines().count() - 1);
}

/// A games.csv deleted while the record logs hold its games: refused
/// (it replayed every game, saying only that records without a row were
/// played again), again at the next try, and played again with --repair.
#[test]
fn a_deleted_games_csv_is_refused_unless_repair() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = dir.path().join("out");
    let csv = out.join("games.csv");
    run_finishes_the_schedule(&file, &csv);
    std::fs::remove_file(&csv).unwrap();
    for _ in 0..2 {
        let o = run(&file, &[]);
        let said = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{said}");
        assert!(
            said.contains("games.csv: missing, while the record logs")
                && said.contains("--repair")
                && said.contains("uncommitted-records.jsonl.zst)"),
            "{said}"
        );
        assert!(!csv.exists());
    }
    run_ok(&file, &["--repair"]);
    let ids: BTreeSet<String> = by_id(&rows(&csv)).into_keys().collect();
    assert_eq!(ids, schedule_ids(&file));
}

/// A run stopped by a signal (SIGSTOP, Ctrl-Z) holds its folder and plays
/// nothing: `arena status` says so and how to let it go on, and tells no
/// time left. The holder here is a shell that took the lock as a run
/// does (flock), then stopped.
#[test]
fn status_says_a_run_stopped_by_a_signal_plays_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    let out = dir.path().join("out");
    run_ok(&file, &[]);
    let csv = out.join("games.csv");
    let all = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = all.lines().take(11).collect();
    std::fs::write(&csv, kept.join("\n") + "\n").unwrap();
    let lock = out.join("run.lock");
    /// Killed (SIGKILL ends a stopped process too) however the test ends.
    struct Holder(Child);
    impl Drop for Holder {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let holder = Holder(
        Command::new("sh")
            .arg("-c")
            .arg(r#"exec 9<>"$0" && flock 9 && exec sleep 600"#)
            .arg(&lock)
            .spawn()
            .unwrap(),
    );
    let pid = holder.0.id();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    std::fs::write(&lock, format!("pid {pid} on host {}", host.trim())).unwrap();
    let signal = |sig: &str| {
        let ok = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    };
    // Held, then stopped: polled until the status says so.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut stopped = false;
    let v = loop {
        let v = status_json(&out);
        if v["shards"][0]["state"] == "running" && !stopped {
            signal("-STOP");
            stopped = true;
        }
        if v["shards"][0]["paused"] == pid {
            break v;
        }
        assert!(std::time::Instant::now() < deadline, "{v:#}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(v["shards"][0]["eta_s"], serde_json::Value::Null, "{v:#}");
    let o = arena().arg("status").arg(&out).output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    signal("-CONT");
    drop(holder);
    assert!(
        said.contains("is stopped by a signal") && said.contains(&format!("kill -CONT {pid}")),
        "{said}"
    );
}

/// A league of a bot thinking 300 ms a decision against a random one (two
/// Kisolo games, `time_control` its `[time_control]` table's lines: room
/// enough for a loaded machine), stopped (SIGSTOP) for `stop` once the
/// second game is under way (each takes seconds), then let go on: its
/// rows and games.csv's text, once it ended by itself.
fn stopped_league(time_control: &str, stop: Duration) -> (Vec<GameRow>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.toml");
    std::fs::write(
        &file,
        format!(
            r#"name = "stop"
bots = [
  {{ name = "think", command = ["{}"], args = ["--millis", "300"] }},
  {{ name = "rnd", command = ["{}"] }},
]
variants = ["kisolo"]
rounds = 1
concurrency = 1
output = "out"
[time_control]
{time_control}
"#,
            env!("CARGO_BIN_EXE_search-bot"),
            env!("CARGO_BIN_EXE_random-bot")
        ),
    )
    .unwrap();
    let mut child = arena()
        .args(["run", "--quiet", "--no-report"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let csv = dir.path().join("out/games.csv");
    wait_for_rows(&mut child, &csv, 1);
    std::thread::sleep(Duration::from_millis(200));
    let pid = child.id() as i32;
    // SAFETY: signals a child this test spawned and has not reaped.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(stop);
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    assert!(child.wait().unwrap().success());
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows = csvio::parse(&csv, text.as_bytes()).unwrap().rows;
    assert_eq!(rows.len(), 2, "{text}");
    // The stop fell inside the second game (its wall time holds it).
    let second = rows.iter().map(|(_, r)| r.duration_ms).max().unwrap();
    assert!(second >= stop.as_millis() as u64, "{text}");
    (rows.into_iter().map(|(_, r)| r).collect(), text)
}

/// A run stopped (Ctrl-Z, SIGSTOP) while a bot thinks, and let go on:
/// the stop is the referee's, not the bot's time. A bot that thinks
/// 300 ms of its 2,000 is not timed out by a stop of 4 s (it was, in
/// every try, before: its reply, written during the stop, was not seen
/// when the referee woke and found its timer past).
#[test]
fn a_run_stopped_while_a_bot_thinks_does_not_charge_the_bot() {
    let (rows, text) = stopped_league("decision_ms = 2000", Duration::from_secs(4));
    assert!(rows.iter().all(|r| r.reason != "timeout"), "{text}");
}

/// A run stopped for longer than a game's watchdog: the watchdog moves
/// past the stop as the bots' deadlines do (the bot on move lost the game
/// as a stall, "no answer", though it had used a second of its time).
#[test]
fn a_run_stopped_past_the_watchdog_does_not_charge_the_bot() {
    let (rows, text) = stopped_league(
        "decision_ms = 4000\nwatchdog_ms = 8000",
        Duration::from_secs(9),
    );
    assert!(
        rows.iter()
            .all(|r| r.reason != "stall" && r.reason != "timeout"),
        "{text}"
    );
}

/// The processes under `pid` (its children, theirs, ...), from /proc.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the name may hold spaces.
        let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|x| x.parse().ok()) {
            parent_of.push((p, ppid));
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let me = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == me)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// A whole job stopped at once (systemd, scancel, docker stop: SIGTERM to
/// every process of it, the bots first): the games in flight are left
/// unfinished, to be played on resume, not charged to the bots killed with
/// the job as crashes (they were, and the standings kept them).
#[test]
fn a_job_stopped_whole_charges_no_bot_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.toml");
    let random = env!("CARGO_BIN_EXE_random-bot");
    std::fs::write(
        &file,
        format!(
            r#"name = "job"
bots = [
  {{ name = "a", command = ["{random}"] }},
  {{ name = "b", command = ["{random}"] }},
]
variants = ["kisolo"]
rounds = 300
concurrency = 2
output = "out"
"#
        ),
    )
    .unwrap();
    let csv = dir.path().join("out/games.csv");
    let mut child = spawn_run(&file, Stdio::null());
    wait_for_rows(&mut child, &csv, 1);
    let pid = child.id();
    for p in descendants(pid) {
        // SAFETY: a process of the run this test started.
        unsafe { libc::kill(p as i32, libc::SIGTERM) };
    }
    std::thread::sleep(Duration::from_millis(50));
    // SAFETY: as above.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(!text.contains(",crash,"), "{text}");
    run_ok(&file, &[]);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(!text.contains(",crash,"), "{text}");
    assert_eq!(rows(&csv).len(), schedule_ids(&file).len());
}

/// Greedy against random over Kisolo, with `extra` (an `[sprt]`, say) at
/// the end of the file: `NAME.toml` in `dir`, into `out-NAME/`.
fn greedy_league(dir: &Path, name: &str, rounds: u32, extra: &str) -> PathBuf {
    let greedy = env!("CARGO_BIN_EXE_greedy-bot");
    let random = env!("CARGO_BIN_EXE_random-bot");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            r#"name = "{name}"
seed = 3
bots = [
  {{ name = "greedy", command = ["{greedy}"] }},
  {{ name = "random", command = ["{random}"] }},
]
variants = ["kisolo"]
rounds = {rounds}
concurrency = 2
output = "out-{name}"
{extra}
"#
        ),
    )
    .unwrap();
    path
}

/// A resume under another `[sprt]` (other bounds, none, or one added to a
/// league without) is refused, naming what changed, before any game; the
/// league's test stays the one `arena status` tells.
#[test]
fn a_resume_under_another_sprt_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sprt = |elo1: u32| format!("[sprt]\nelo0 = 0\nelo1 = {elo1}\n");
    let file = greedy_league(dir.path(), "s", 500, &sprt(50));
    let out = run_ok(&file, &["--no-report"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("H1 accepted"), "{said}");
    let csv = dir.path().join("out-s/games.csv");
    let played = data_lines(&csv);

    let refused = |file: &Path, args: &[&str]| {
        let out = run(file, args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "{err}");
        err
    };
    let file = greedy_league(dir.path(), "s", 500, &sprt(30));
    let err = refused(&file, &[]);
    assert!(
        err.contains("the SPRT changed since league `s` started (elo1 was 50, now 30")
            && err.contains("--sprt elo0=0,elo1=50,alpha=0.05,beta=0.05,model=normalized")
            && err.contains("start afresh"),
        "{err}"
    );
    // The flag over the file's is the same setting.
    let err = refused(&file, &["--sprt", "elo0=0,elo1=50,alpha=0.1"]);
    assert!(err.contains("alpha was 0.05, now 0.1"), "{err}");
    let file = greedy_league(dir.path(), "s", 500, "");
    let err = refused(&file, &[]);
    assert!(
        err.contains("league `s` was started with an SPRT (the file's [sprt]")
            && err.contains("this run has none"),
        "{err}"
    );
    assert_eq!(data_lines(&csv), played);
    let meta = std::fs::read_to_string(dir.path().join("out-s/league.json")).unwrap();
    assert!(meta.contains("\"elo1\": 50.0"), "{meta}");
    // The league's own test still resumes (nothing to play).
    let file = greedy_league(dir.path(), "s", 500, &sprt(50));
    run_ok(&file, &[]);
    assert_eq!(data_lines(&csv), played);

    // An SPRT added to a league that played without one.
    let file = greedy_league(dir.path(), "plain", 2, "");
    run_ok(&file, &["--no-report"]);
    let file = greedy_league(dir.path(), "plain", 2, &sprt(50));
    let err = refused(&file, &[]);
    assert!(
        err.contains("league `plain` was started without an SPRT and this run has one"),
        "{err}"
    );
}

/// The same bots in another order: the refusal says the order changed,
/// with both orders.
#[test]
fn a_resume_with_the_bots_reordered_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    run_ok(&file, &["--variants", "kisolo", "--no-report"]);
    let text = std::fs::read_to_string(&file).unwrap();
    let swapped = text
        .replacen("name = \"a\"", "name = \"@\"", 1)
        .replacen("name = \"b\"", "name = \"a\"", 1)
        .replacen("name = \"@\"", "name = \"b\"", 1);
    std::fs::write(&file, swapped).unwrap();
    let out = run(&file, &["--variants", "kisolo"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(
            "the bots' order changed since league `t` started (it was a, b, c; now b, a, c)"
        ) && err.contains(r#"bots = ["a", "b", "c"]"#),
        "{err}"
    );
    assert!(!err.contains("new: none; gone: none"), "{err}");
}

/// A variant's options changed under the same name: named, with both.
#[test]
fn a_resume_with_a_variants_options_changed_names_the_variant() {
    let dir = tempfile::tempdir().unwrap();
    let file = greedy_league(dir.path(), "k", 1, "");
    let with = |columns: u32| {
        let text = std::fs::read_to_string(&file).unwrap();
        let text = text.replace(
            "variants = [\"kisolo\"]",
            &format!(
                "variants = [{{ game = \"kisolo\", name = \"kisolo6\", options = {{ columns = {columns} }} }}]"
            ),
        );
        let text = text.replace("columns = 6", &format!("columns = {columns}"));
        std::fs::write(&file, text).unwrap();
    };
    with(6);
    run_ok(&file, &["--no-report"]);
    with(8);
    let out = run(&file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("variant `kisolo6` was kisolo, columns = 6, now kisolo, columns = 8"),
        "{err}"
    );
}

/// Shards run with other settings: the refusal names the setting.
#[test]
fn a_shard_with_other_settings_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 3, "");
    run_ok(
        &file,
        &["--shard", "1/2", "--variants", "kisolo", "--no-report"],
    );
    let out = run(
        &file,
        &["--shard", "2/2", "--variants", "kisolo", "--rounds", "4"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("shard 1/2 of league `t` was started with another tournament file (`rounds` 3 there, 4 here)"),
        "{err}"
    );
}

/// A league started without a gauntlet, resumed with one: the refusal
/// says how it was started in words a run takes (`--gauntlet none` is
/// not one: `none` may be a bot's name).
#[test]
fn a_gauntlet_added_on_a_resume_says_how_it_was_started() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "");
    run_ok(&file, &["--variants", "kisolo", "--no-report"]);
    let out = run(&file, &["--variants", "kisolo", "--gauntlet", "a"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("`gauntlet` was none, now a (the league was started without a gauntlet: leave out the file's `gauntlet` and --gauntlet)"),
        "{err}"
    );
    assert!(!err.contains("--gauntlet none"), "{err}");
}

/// A gauntlet's head-to-head lines are of the pairs that met in a
/// 2-player game: a league of 3-player games alone prints none (it
/// printed "a vs b: 0 games, score -" for each opponent).
#[test]
fn a_gauntlet_of_three_player_games_prints_no_empty_head_to_head() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_tournament(dir.path(), 1, "gauntlet = \"a\"");
    let out = run(&file, &["--variants", "tricala3", "--no-report"]);
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        !text.contains("a vs b:") && !text.contains("a vs c:"),
        "{text}"
    );
    // The same gauntlet over a 2-player game has them.
    let two = tempfile::tempdir().unwrap();
    let file = write_tournament(two.path(), 1, "gauntlet = \"a\"");
    let out = run(&file, &["--variants", "kisolo", "--no-report"]);
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("a vs b: ") && text.contains("a vs c: "),
        "{text}"
    );
}
