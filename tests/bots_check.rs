//! `arena check-bot` end to end (the real binary): the three example bots
//! pass every available game; each misbehaving bot fails with its reason.

mod common;

use common::processes_with;
use mancala_arena::engine::{Game, Settings, Variant};
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `--game X` for every game whose engine is available in this build.
fn game_args(all: bool) -> Vec<String> {
    let mut args = Vec::new();
    for v in Variant::ALL {
        if Game::new(v, &Settings::with_players(2)).is_ok() {
            args.push("--game".to_string());
            args.push(v.name().to_string());
            if !all {
                break;
            }
        }
    }
    assert!(!args.is_empty(), "no game engine available");
    args
}

fn check_bot(extra: &[&str], bot: &[&str], all_games: bool) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .env("CARGO_TARGET_DIR", target_dir())
        .arg("check-bot")
        .args(game_args(all_games))
        .args(extra)
        .arg("--")
        .args(bot)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The target dir holding the binaries under test (for bots/random-rust).
fn target_dir() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_arena"));
    // .../TARGET/debug/arena -> .../TARGET
    exe.parent().and_then(|p| p.parent()).unwrap().to_path_buf()
}

#[test]
fn example_bots_pass() {
    for name in ["random-python", "random-js"] {
        if name == "random-js" && !common::has_node() {
            continue;
        }
        let (ok, text) = check_bot(&[], &[&format!("bots/{name}")], true);
        assert!(ok, "{name}:\n{text}");
        assert!(!text.contains("FAIL"), "{text}");
        assert!(text.contains("PASS  quit"), "{text}");
        assert!(text.contains("latency"), "{text}");
        // What a league may send beyond the plain games, taken in stride.
        for check in ["unknown field", "unknown message type", "game clock"] {
            assert!(text.contains(&format!("PASS  {check}: ")), "{text}");
        }
        let kisolo_on_6 = Settings {
            options: [("columns".to_string(), "6".to_string())].into(),
            ..Settings::with_players(2)
        };
        if Game::new(Variant::Kisolo, &kisolo_on_6).is_ok() {
            assert!(text.contains("PASS  kisolo 6 columns: "), "{text}");
        }
    }
    let (ok, text) = check_bot(&[], &[env!("CARGO_BIN_EXE_random-bot")], true);
    assert!(ok, "random-bot:\n{text}");
}

/// The tool protocol.md's transcripts are made with passes check-bot as
/// the bot it wraps does, `quit` included: it exits with its bot.
#[test]
fn the_transcript_tool_passes_as_the_bot_it_wraps() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.txt");
    let (ok, text) = check_bot(
        &["--sandbox", "off"],
        &[
            "python3",
            "bots/tools/transcript.py",
            out.to_str().unwrap(),
            "python3",
            "bots/random-python/bot.py",
        ],
        false,
    );
    assert!(ok, "{text}");
    assert!(text.contains("PASS  quit: exited with status 0"), "{text}");
    let transcript = std::fs::read_to_string(&out).unwrap();
    assert!(transcript.starts_with("> {"), "{transcript}");
    assert!(transcript.contains("< {"), "{transcript}");
    assert!(transcript.contains("\"quit\""), "{transcript}");
}

/// The `--` before the bot is not needed; options after a bot folder are
/// told to go before it.
#[test]
fn a_bot_is_given_with_or_without_its_double_dash() {
    let arena = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_arena"))
            .current_dir(root())
            .arg("check-bot")
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let script = root().join("bots/random-python/bot.py");
    let (ok, text) = arena(&["--game", "filo", "python3", script.to_str().unwrap()]);
    assert!(ok, "{text}");
    assert!(text.contains("PASS  quit"), "{text}");
    // An option of check-bot's after a command is the bot's: said so.
    let (ok, text) = arena(&[
        "python3",
        script.to_str().unwrap(),
        "--game=filo",
        "--seed",
        "3",
    ]);
    assert!(ok, "{text}");
    assert!(
        text.contains("note: `--game=filo` comes after the bot's command, so it goes to the bot"),
        "{text}"
    );
    let (ok, text) = arena(&["bots/random-python", "--game", "filo"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("give check-bot's options before the bot (`arena check-bot --game filo bots/random-python`)"),
        "{text}"
    );
}

#[test]
fn the_rust_bot_manifest_finds_its_binary() {
    // bots/random-rust/bot.toml runs {bin_dir}/random-bot: the random-bot
    // built next to the arena binary under test.
    let (ok, text) = check_bot(&[], &["bots/random-rust"], false);
    assert!(ok, "{text}");
}

fn broken(mode: &str, timeout_ms: &str, expected: &str) {
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &["--timeout-ms", timeout_ms],
        &["python3", script.to_str().unwrap(), mode],
        false,
    );
    assert!(!ok, "{mode} passed:\n{text}");
    let fail = text
        .lines()
        .find(|l| l.starts_with("FAIL"))
        .unwrap_or_else(|| panic!("{mode}: no FAIL line:\n{text}"));
    assert!(
        fail.contains(expected),
        "{mode}: expected {expected}:\n{text}"
    );
}

/// A bot that exits at its first request, is started again at no charge
/// and then times out: the note says the second process's fault is the
/// timeout (it said "that is the crash above").
#[test]
fn a_timeout_after_a_free_restart_is_not_called_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &["--timeout-ms", "1500", "--sandbox", "off"],
        &[
            "python3",
            script.to_str().unwrap(),
            "crash_then_hang",
            marker.to_str().unwrap(),
        ],
        false,
    );
    assert!(!ok, "{text}");
    assert!(text.contains(": timeout at ply"), "{text}");
    assert!(
        text.contains("the second process's fault is the `timeout` above"),
        "{text}"
    );
    assert!(!text.contains("that is the crash above"), "{text}");
}

/// A bot that exits at its first request, is started again at no charge
/// and crashes later in that game, after replies: the note does not say it
/// exited at the first request again (it said so of any crash after a free
/// restart).
#[test]
fn a_crash_after_replies_of_a_restarted_bot_is_not_called_one_at_the_first_request() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &["--sandbox", "off"],
        &[
            "python3",
            script.to_str().unwrap(),
            "crash_then_crash_later",
            marker.to_str().unwrap(),
        ],
        false,
    );
    assert!(!ok, "{text}");
    assert!(text.contains(": crash at ply"), "{text}");
    assert!(
        text.contains("the second process's fault is the `crash` above"),
        "{text}"
    );
    assert!(!text.contains("exited there again"), "{text}");
}

/// The `processes` limit is the bot's own: with `--processes 10`, a bot of
/// 10 tasks (its main thread and 9 more) passes, and one of 11 fails its
/// start, told that it reached that limit and where it is set. (The
/// sandbox's keeper, in the bot's cgroup, took one of the 10: 9 tasks
/// passed, 10 failed, and the crash said only "exited (status 1)".)
#[test]
fn the_process_limit_is_the_bots_own_and_is_named_when_reached() {
    let mechanism = mancala_arena::bot::sandbox::cgroup::mechanism();
    if !mechanism.starts_with("cgroup") {
        eprintln!("not run: {mechanism}");
        return;
    }
    let script = root().join("bots/broken/misbehave.py");
    let threads = |n: &str| {
        check_bot(
            &["--processes", "10"],
            &["python3", script.to_str().unwrap(), "threads", n],
            false,
        )
    };
    let (ok, text) = threads("9");
    assert!(ok, "{text}");
    let (ok, text) = threads("10");
    assert!(!ok, "{text}");
    let fail = text.lines().find(|l| l.starts_with("FAIL")).unwrap_or("");
    assert!(
        fail.contains("handshake: crash: exited (status 1)"),
        "{text}"
    );
    assert!(
        fail.contains("it had reached its process limit, 10 processes and threads"),
        "{text}"
    );
    assert!(fail.contains("--processes"), "{text}");
}

/// Outside the sandbox a bot keeps two of its limits, as rlimits: its
/// memory as each process's data size and its file size; the warning says
/// which limits hold. (Both were accepted and silently not applied: the
/// probe took 300 MiB and wrote its file.)
#[test]
fn a_bot_outside_the_sandbox_keeps_its_file_and_data_size_limits() {
    let dir = tempfile::tempdir().unwrap();
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &[
            "--sandbox",
            "off",
            "--memory-mb",
            "200",
            "--file-size-mb",
            "1",
        ],
        &[
            "python3",
            script.to_str().unwrap(),
            "limits_probe",
            dir.path().to_str().unwrap(),
        ],
        false,
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("warning: --sandbox off: ")
            && text.contains("of their limits only the file size"),
        "{text}"
    );
    assert!(
        text.contains("handshake: crash: exited (status 5)"),
        "{text}"
    );
}

#[test]
fn crash_start_fails() {
    broken("crash_start", "5000", "handshake: crash");
}
/// A bot that exits mid-game while a child it forked answers in its place
/// (possible only outside the sandbox) has crashed: its exit is seen at
/// the game's end, at the latest.
#[test]
fn a_bot_that_hands_its_pipes_to_a_child_and_exits_fails() {
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &["--sandbox", "off"],
        &["python3", script.to_str().unwrap(), "hand_over"],
        false,
    );
    assert!(!ok, "{text}");
    let fail = text.lines().find(|l| l.starts_with("FAIL")).unwrap_or("");
    assert!(fail.contains(": crash at ply"), "{text}");
    assert!(text.contains("exited (status 0)"), "{text}");
}

/// check-bot shows the half line a bot wrote before it crashed.
#[test]
fn a_crash_mid_line_fails_showing_the_line() {
    broken(
        "cut_then_crash",
        "5000",
        "exited (status 1); it had written a line without its newline: {",
    );
}

#[test]
fn crash_mid_fails() {
    broken("crash_mid", "5000", ": crash at ply");
}
#[test]
fn hang_fails() {
    broken("hang", "300", ": timeout at ply");
}
#[test]
fn slow_fails() {
    broken("slow", "300", ": timeout at ply");
}
#[test]
fn not_json_fails() {
    broken("not_json", "5000", ": bad_json at ply");
}
#[test]
fn wrong_shape_fails() {
    broken("wrong_shape", "5000", ": protocol at ply");
}
#[test]
fn illegal_fails() {
    broken("illegal", "5000", ": illegal at ply");
}
#[test]
fn huge_line_fails() {
    broken("huge_line", "10000", ": line_too_long at ply");
}
#[test]
fn fork_child_fails() {
    broken("fork_child", "5000", ": crash at ply");
}
#[test]
fn early_exit_fails() {
    broken("early_exit", "5000", ": crash at ply");
}

#[test]
fn stderr_flood_passes() {
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &[],
        &["python3", script.to_str().unwrap(), "stderr_flood"],
        false,
    );
    assert!(ok, "{text}");
}

/// `arena play --seed N` plays the same game again, a bot that draws its
/// randomness from the game id too (the Rust random bot) included: the
/// game id was the process's, so each run was another game.
#[test]
fn play_with_a_seed_plays_the_same_game_again() {
    let dir = tempfile::tempdir().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let decisions = |n: usize| {
        let record = dir.path().join(format!("g{n}.jsonl"));
        let out = Command::new(env!("CARGO_BIN_EXE_arena"))
            .current_dir(root())
            .args([
                "play", "--quiet", "--game", "kisolo", "--seed", "42", "--record",
            ])
            .arg(&record)
            .args(["--", bot, bot])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&record).unwrap();
        let game: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(game["game_id"], "play-kisolo-42");
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter_map(|l| l.get("option").cloned())
            .collect::<Vec<_>>()
    };
    let first = decisions(1);
    assert!(!first.is_empty());
    assert_eq!(decisions(2), first);
    assert_eq!(decisions(3), first);
}

#[test]
fn play_writes_a_record() {
    let games = game_args(false);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("g.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["play", "--quiet", "--record"])
        .arg(&record)
        .args(&games[..2])
        .args(["--", "random", "random-python"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("result: "), "{text}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "game");
    assert_eq!(lines[0]["names"][1], "random-python");
    assert_eq!(lines[lines.len() - 1]["type"], "end");
    // Format 2: decision lines have no `type`.
    let decisions = lines.iter().filter(|l| l.get("type").is_none()).count();
    assert_eq!(decisions, lines.len() - 2);
    // The outcome in words, agreeing with the record's scores.
    let scores = lines[lines.len() - 1]["scores"].as_array().unwrap().clone();
    let said = text
        .lines()
        .find(|l| l.starts_with("winner: ") || l.starts_with("draw: "));
    match (scores[0].as_f64(), scores[1].as_f64()) {
        (Some(a), Some(b)) if a > b => {
            assert_eq!(said, Some("winner: random-0 (seat 0)"), "{text}")
        }
        (Some(a), Some(b)) if a < b => {
            assert_eq!(said, Some("winner: random-python (seat 1)"), "{text}")
        }
        _ => assert!(said.is_some_and(|l| l.starts_with("draw: ")), "{text}"),
    }

    // Given a folder, the record goes into it as GAME_ID.jsonl, and nothing
    // is written under the working folder.
    let work = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(work.path())
        .args(["play", "--quiet", "--record"])
        .arg(dir.path())
        .args(&games[..2])
        .args(["--", "random", "random"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let written: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(written.len(), 2, "g.jsonl and the new record");
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}

/// `arena play` shows what a bot at fault said on stderr (its traceback),
/// as check-bot does: without --logs, its log is gone after the game.
#[test]
fn play_shows_the_stderr_of_a_bot_at_fault() {
    let games = game_args(false);
    let script = root().join("bots/broken/misbehave.py");
    let bot = format!("python3 '{}' crash_mid", script.display());
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["play", "--quiet"])
        .args(&games[..2])
        .args(["--", &bot, "random"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("seat 0 forfeits: crash"), "{text}");
    assert!(text.contains("its stderr ends:"), "{text}");
    assert!(text.contains("RuntimeError: crash_mid"), "{text}");
}

/// The same bot in two seats is numbered, as `arena match` numbers it:
/// the console and the record tell the seats apart.
#[test]
fn play_numbers_the_same_bot_in_two_seats() {
    let games = game_args(false);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("g.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["play", "--quiet", "--record"])
        .arg(&record)
        .args(&games[..2])
        .args(["--", "random-python", "random-python"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("random-python vs random-python-2"), "{text}");
    let head = std::fs::read_to_string(&record).unwrap();
    assert!(
        head.contains(r#""names":["random-python","random-python-2"]"#),
        "{head}"
    );
}

/// A bot command given in one argument is split as a shell splits it: a
/// script whose path has a space, quoted, plays; an unclosed quote is
/// named.
#[test]
fn play_splits_a_bot_command_as_a_shell_does() {
    let games = game_args(false);
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("my bot.py");
    std::fs::copy(root().join("bots/random-python/bot.py"), &script).unwrap();
    let play = |bot: &str| {
        Command::new(env!("CARGO_BIN_EXE_arena"))
            .current_dir(root())
            .args(["play", "--quiet"])
            .args(&games[..2])
            .args(["--", "random", bot])
            .output()
            .unwrap()
    };
    let quoted = format!("python3 '{}'", script.display());
    let out = play(&quoted);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("result: "), "{text}");

    let out = play(&format!("python3 '{}", script.display()));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("a quote that is not closed"), "{text}");
}

#[test]
fn double_reply_fails() {
    broken("double_reply", "5000", ": protocol at ply");
}
#[test]
fn spaced_option_fails() {
    broken("spaced", "5000", ": illegal at ply");
}
#[test]
fn closed_stdout_fails() {
    broken("close_stdout", "5000", ": crash at ply");
}
#[test]
fn bad_version_fails() {
    broken(
        "bad_version",
        "5000",
        "handshake: protocol: hello: bot speaks protocol 2",
    );
}
#[test]
fn silent_start_fails() {
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &["--startup-ms", "300"],
        &["python3", script.to_str().unwrap(), "silent"],
        false,
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("FAIL  handshake: timeout: no hello within 300 ms"),
        "{text}"
    );
}
#[test]
fn noise_ok_passes() {
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &[],
        &["python3", script.to_str().unwrap(), "noise_ok"],
        false,
    );
    assert!(ok, "{text}");
}
#[test]
fn ignoring_quit_fails_only_quit() {
    let script = root().join("bots/broken/misbehave.py");
    // check-bot waits for a quit as long as it allows a start
    // (`--startup-ms`): 4 s here rather than 10, each time it is ignored.
    let (ok, text) = check_bot(
        &["--startup-ms", "4000"],
        &["python3", script.to_str().unwrap(), "ignore_term"],
        false,
    );
    assert!(!ok, "{text}");
    let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(fails.len(), 1, "{text}");
    assert!(fails[0].starts_with("FAIL  quit"), "{text}");
}

/// A bot that exits at once on quit but with status 7 is told the status,
/// not that it did not exit in time.
#[test]
fn a_bot_that_quits_with_a_failure_status_is_told_which() {
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &[],
        &["python3", script.to_str().unwrap(), "quit_status"],
        false,
    );
    assert!(!ok, "{text}");
    let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(fails.len(), 1, "{text}");
    assert!(fails[0].starts_with("FAIL  quit"), "{text}");
    assert!(text.contains("ended with status 7 at quit"), "{text}");
    // What it said on its way out is shown.
    assert!(
        text.contains("its stderr ends:") && text.contains("cleaning up failed"),
        "{text}"
    );
}

/// A bot that writes through `/dev/stdout` and `/dev/stderr` (a reopening
/// of its pipes through `/proc/self/fd`, as shell scripts do) passes in the
/// sandbox, also when the referee runs as root and the bot as a user that
/// owns nothing: its pipes are its own.
#[test]
fn a_bot_writing_through_dev_stdout_passes_in_the_sandbox() {
    let script = root().join("bots/broken/misbehave.py");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let (ok, text) = check_bot(
        &["--log", log.to_str().unwrap()],
        &["python3", script.to_str().unwrap(), "dev_stdout"],
        false,
    );
    assert!(ok, "{text}");
    assert!(text.contains("sandbox: on"), "{text}");
    assert!(text.contains("PASS  quit"), "{text}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("sent through /dev/stdout"), "{logged}");
}

/// A bot that closes its stdout on quit and exits a second later, status
/// 0, has quit cleanly: its exit is waited for within the quit's grace, not
/// the 100 ms a reply's end of file allows (on a loaded machine a
/// sandbox's keeper can take longer than that to reap the bot and exit).
#[test]
fn a_bot_that_exits_a_second_after_closing_its_stdout_quits_cleanly() {
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &[],
        &["python3", script.to_str().unwrap(), "slow_exit"],
        false,
    );
    assert!(ok, "{text}");
    assert!(text.contains("PASS  quit"), "{text}");
    // A league gives it half a second, then ends it by force: said.
    assert!(
        text.contains("warning: it took ")
            && text.contains(" s to exit after quit; a league, a match and the ladder wait 0.5 s, then close its stdin"),
        "{text}"
    );
}

/// A bot written against today's messages alone, which raises on a field
/// or a message type it does not know (a per-game clock's `time_left_ms`
/// included) and on a Kisolo board of other than 7 columns, passes the
/// plain games and fails each check of what a league may send beyond
/// them, told what it choked on and what protocol.md or the rules say.
#[test]
fn a_bot_that_chokes_on_what_a_league_may_send_is_told_what() {
    if Game::new(Variant::Kisolo, &Settings::with_players(2)).is_err() {
        return;
    }
    let script = root().join("bots/broken/misbehave.py");
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["check-bot", "--game", "kisolo", "--"])
        .args(["python3", script.to_str().unwrap(), "strict"])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("PASS  kisolo 2p seat 0: "), "{text}");
    assert!(text.contains("PASS  kisolo 2p seat 1: "), "{text}");
    for fail in [
        "FAIL  unknown field: crashed on a request holding a field it does not know (`x_future`); protocol.md: a bot must ignore unknown fields; kisolo 2p seat 0: crash at ply ",
        "FAIL  unknown message type: crashed on a message of a type it does not know (`{\"type\":\"x_future\"}`, sent before a request); protocol.md: a bot must ignore message types it does not know; kisolo 2p seat 0: crash at ply ",
        "FAIL  game clock: crashed on a game with a per-game clock (`time.base_ms` and `time.increment_ms` in game_start, `time_left_ms` in each request)",
        "FAIL  kisolo 6 columns: crashed on Kisolo on 6 columns (`\"options\":{\"columns\":\"6\"}` in game_start, `state.columns`); docs/rules/kisolo.md: a league may play it on 6, 7 or 8 columns; kisolo 2p seat 0, 6 columns: crash at ply ",
        "FAIL  kisolo 8 columns: crashed on Kisolo on 8 columns",
    ] {
        assert!(text.lines().any(|l| l.starts_with(fail)), "{fail}\n{text}");
    }
    assert_eq!(
        text.lines().filter(|l| l.starts_with("FAIL")).count(),
        5,
        "{text}"
    );
    assert!(text.contains("PASS  quit"), "{text}");
}

/// A bot that crashes in every game, the plain ones included: each
/// probe's failure is said to be that fault, not blamed on the probe's
/// feature (it was told to mend its handling of unknown fields, clocks
/// and columns, which were not the cause).
#[test]
fn a_fault_of_every_game_is_not_blamed_on_the_probes() {
    if Game::new(Variant::Kisolo, &Settings::with_players(2)).is_err() {
        return;
    }
    // Exits at its first request in seat 1 (a plain game fails), and at
    // its third reply in any game with anything beyond today's messages
    // (each probe's game), having handled them.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bot.py");
    std::fs::write(
        &script,
        r#"import json, sys
seat, probed, replies = 0, False, 0
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("type")
    if t == "hello":
        print(json.dumps({"type": "hello", "name": "fragile", "version": "1"}), flush=True)
    elif t == "game_start":
        seat, replies = m["seat"], 0
        probed = bool(m.get("time", {}).get("base_ms") or m.get("options", {}).get("columns"))
    elif t == "request":
        probed = probed or "x_future" in m or m.get("time_left_ms") is not None
        if seat == 1 or (probed and replies == 2):
            sys.exit(1)
        replies += 1
        print(json.dumps({"type": "reply", "option": m["legal"][0]}), flush=True)
    elif t == "quit":
        break
"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["check-bot", "--game", "kisolo", "--"])
        .args(["python3", script.to_str().unwrap()])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("PASS  kisolo 2p seat 0: "), "{text}");
    assert!(
        text.contains("FAIL  kisolo 2p seat 1: crash at ply"),
        "{text}"
    );
    let probes: Vec<&str> = text
        .lines()
        .filter(|l| {
            [
                "FAIL  unknown field:",
                "FAIL  game clock:",
                "FAIL  kisolo 6 columns:",
                "FAIL  kisolo 8 columns:",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .collect();
    assert_eq!(probes.len(), 4, "{text}");
    for l in probes {
        assert!(
            l.contains("(the fault of the plain games above, not this probe's: mend that first)")
                && !l.contains("crashed on"),
            "{l}"
        );
    }
}

/// SIGTERM (or SIGINT, SIGHUP) to `arena play` or `arena check-bot` kills
/// the bots' whole process groups, children holding the pipes included.
#[test]
fn a_signalled_referee_leaves_no_process() {
    let script = root().join("bots/broken/misbehave.py");
    let games = game_args(false);
    for (command, signal, code) in [
        ("play", libc::SIGTERM, 143),
        ("check-bot", libc::SIGHUP, 129),
        ("play", libc::SIGINT, 130),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pids");
        let bot = format!(
            "python3 {} fork_hang {}",
            script.display(),
            pidfile.display()
        );
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_arena"));
        cmd.current_dir(root()).arg(command).args(&games);
        if command == "play" {
            cmd.args(["--quiet", "--timeout-ms", "60000", "--record"])
                .arg(dir.path().join("g.jsonl"))
                .args(["--", &bot, "random"]);
        } else {
            let words: Vec<&str> = bot.split(' ').collect();
            cmd.args(["--timeout-ms", "60000", "--"]).args(words);
        }
        let mut child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The pid file cannot be written from the sandbox; the bot and its
        // child are the python processes whose command line names it.
        let marker = pidfile.display().to_string();
        wait_for(|| (python_processes_with(&marker).len() == 2).then_some(()));
        // SAFETY: signals the child we spawned.
        unsafe {
            libc::kill(child.id() as libc::pid_t, signal);
        }
        let status = wait_for(|| child.try_wait().unwrap());
        assert_eq!(status.code(), Some(code), "{command}");
        wait_for(|| processes_with(&marker).is_empty().then_some(()));
    }
}

/// The python processes whose command line holds `word`.
fn python_processes_with(word: &str) -> Vec<u32> {
    processes_with(word)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.starts_with("python"))
        })
        .collect()
}

/// Polls `f` until it gives a value, for at most 10 s.
fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(std::time::Instant::now() < end, "timed out waiting");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Output after the last game is reported as stray output, not as a quit
/// that failed (tricala: five games, so the last one is played by a fresh
/// process that then talks after its game_end).
#[test]
fn stray_output_after_the_last_game_is_named() {
    let script = root().join("bots/broken/misbehave.py");
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["check-bot", "--game", "tricala", "--"])
        .args(["python3", script.to_str().unwrap(), "talk_after_end"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    // Written after its last game's end, said so (it said "after its
    // last request", which reads as a fault in a game).
    assert!(
        text.contains("FAIL  stray output: after its last game ended (after its last reply")
            && text.contains("the bot wrote, unasked:")
            && text.contains("thanks"),
        "{text}"
    );
    // After each game but the last: not charged in the game after (its
    // line echoes the ended game's id), but a fault of the check; no
    // hint of a reply written twice, which it is not (said when the
    // line was seen before the next game_start).
    assert!(
        text.contains("FAIL  stray output: after a game ended (after game_end")
            && !text.contains("protocol at ply")
            && !text.contains("written twice")
            && !text.contains("the bot was gone before it played a game"),
        "{text}"
    );
    assert!(text.contains("PASS  quit"), "{text}");
}

/// Output written on `quit` is said to be after the last game (after
/// game_end or on quit), not "after its last request", which reads as a
/// fault in a game.
#[test]
fn output_written_on_quit_is_named_as_such() {
    let script = root().join("bots/broken/misbehave.py");
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["check-bot", "--game", "filo", "--"])
        .args(["python3", script.to_str().unwrap(), "talk_at_quit"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("FAIL  stray output: after its last game ended (after game_end or on quit")
            && text.contains("bye"),
        "{text}"
    );
    assert!(text.contains("PASS  quit"), "{text}");
}

/// `arena check-bot ... | head -2`: the reader goes away, the check ends
/// quietly (no panic, no backtrace).
#[test]
fn a_closed_stdout_ends_the_check_quietly() {
    let out = Command::new("sh")
        .arg("-c")
        .arg("\"$0\" check-bot --game filo -- \"$1\" | head -1")
        .arg(env!("CARGO_BIN_EXE_arena"))
        .arg(env!("CARGO_BIN_EXE_random-bot"))
        .current_dir(root())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

/// Where user namespaces are not available, `--sandbox off` checks a bot
/// without its sandbox, with a warning; by default the sandbox is named.
#[test]
fn the_sandbox_can_be_turned_off_with_a_warning() {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let (ok, text) = check_bot(&["--sandbox", "off"], &[bot], false);
    assert!(ok, "{text}");
    assert!(text.contains("warning: --sandbox off"), "{text}");
    assert!(!text.contains("sandbox: on"), "{text}");
    let (ok, text) = check_bot(&[], &[bot], false);
    assert!(ok, "{text}");
    assert!(text.contains("sandbox: on; limits: "), "{text}");
}

/// Where no cgroup can be made (here: the referee runs as `nobody`, through
/// setpriv), a memory hog is still bounded: each process's data size is
/// limited, so its allocation fails and the bot ends (`crash`) long before
/// its 20 s timeout. (Needs root and setpriv to set up; else says so.)
#[test]
fn without_cgroups_a_memory_hog_is_bounded_by_its_data_size() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not run: needs root to become nobody");
        return;
    }
    let script = root().join("bots/broken/misbehave.py");
    let out = Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_arena"))
        .args(["check-bot", "--game", "filo", "--timeout-ms", "20000"])
        .args(["--memory-mb", "200", "--"])
        .args(["python3", script.to_str().unwrap(), "hog"])
        .current_dir(std::env::temp_dir())
        .output();
    let Ok(out) = out else {
        eprintln!("not run: no setpriv");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("200 MiB memory") && text.contains("memory as each process's data size"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("FAIL  filo 2p seat 0: crash"),
        "the hog was not stopped by its limit: {text}"
    );
}

/// A bot that crashes in a game is shown with the end of its stderr (its
/// traceback), without `--log`.
#[test]
fn a_crash_is_shown_with_the_bots_traceback() {
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["check-bot", "--game", "filo", "--", "python3", "-c"])
        .arg("import sys, json\nfor line in sys.stdin:\n    m = json.loads(line)\n    if m['type'] == 'hello': print(json.dumps({'type': 'hello', 'name': 'c', 'version': '0'}), flush=True)\n    elif m['type'] == 'request': raise ValueError('my bug at ' + m['game_id'])\n")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("FAIL  filo 2p seat 0: crash")
            && text.contains("its stderr ends:")
            && text.contains("ValueError: my bug at check-1"),
        "{text}"
    );
    // The second game's crash is shown with its own process's stderr, not
    // with the first one's too (the log is shared by every restart).
    let second = text
        .split("FAIL  filo 2p seat 1: crash")
        .nth(1)
        .unwrap_or_else(|| panic!("no second crash: {text}"));
    assert!(second.contains("my bug at check-2"), "{text}");
    assert!(!second.contains("check-1"), "{text}");
}

/// One bad bot.toml does not hide the others: `arena bots` lists every bot
/// that loads, names the bad manifest and its problem, and fails.
#[test]
fn bots_lists_every_bot_past_a_bad_manifest() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("a-good", "name = \"good\"\ncommand = [\"true\"]\n"),
        ("b-bad", "name = \"bad\"\ncommand = 7\n"),
        ("c-fine", "name = \"fine\"\ncommand = [\"true\"]\n"),
    ] {
        std::fs::create_dir(dir.path().join(name)).unwrap();
        std::fs::write(dir.path().join(name).join("bot.toml"), text).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(["bots", "--no-check", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        listed.contains("good") && listed.contains("fine"),
        "{listed}"
    );
    assert!(err.contains("b-bad") && err.contains("command"), "{err}");
}

/// Given a bot folder, check-bot runs its bot.toml's build first, as a
/// league does (in the sandbox, in a copy of the folder: the folder itself
/// is not written), and tells the start-up time.
#[test]
fn check_bot_builds_a_bot_folder_and_times_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("built");
    std::fs::create_dir(&bot).unwrap();
    std::fs::copy(
        root().join("bots/random-python/bot.py"),
        bot.join("source.py"),
    )
    .unwrap();
    std::fs::write(
        bot.join("bot.toml"),
        "name = \"built\"\nbuild = [\"cp\", \"source.py\", \"bot.py\"]\ncommand = [\"python3\", \"bot.py\"]\n",
    )
    .unwrap();
    let check = || {
        let out = Command::new(env!("CARGO_BIN_EXE_arena"))
            .arg("check-bot")
            .args(game_args(false))
            .arg("--")
            .arg(&bot)
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let (ok, text) = check();
    assert!(ok, "{text}");
    assert!(text.contains("PASS  build"), "{text}");
    assert!(
        !bot.join("bot.py").exists(),
        "the build wrote in the bot's folder"
    );
    assert!(text.contains("the bot runs from"), "{text}");
    assert!(text.contains("(started in "), "{text}");

    // A build that names a file outside the folder is refused, with the
    // bot.toml's line of `build`.
    std::fs::write(
        bot.join("bot.toml"),
        format!(
            "name = \"built\"\ncommand = [\"python3\", \"bot.py\"]\nbuild = [\"cp\", \"{}\", \"bot.py\"]\n",
            root().join("bots/random-python/bot.py").display()
        ),
    )
    .unwrap();
    let (ok, text) = check();
    assert!(!ok, "{text}");
    assert!(text.contains("bot.toml:3: `build` argument"), "{text}");
}

/// A bot that exits after each game is told that one process plays many
/// games, whether its exit is seen between games or in the next one.
#[test]
fn a_bot_that_exits_after_its_game_is_told_about_reuse() {
    let script = root().join("bots/broken/misbehave.py");
    let (_, text) = check_bot(
        &[],
        &["python3", script.to_str().unwrap(), "exit_after_game"],
        false,
    );
    assert!(text.contains("exit only on `quit`"), "{text}");
}

/// A bot gone after every game_end (a crash in its handler, an exit 0) is
/// told so once, not under every game, and its quit is not judged on the
/// process already gone: no "ended with status 1 at quit" for a quit it
/// never read, no PASS for one it never got.
#[test]
fn a_bot_gone_after_each_game_end_is_told_once_and_fails_quit_as_gone() {
    let script = root().join("bots/broken/misbehave.py");
    // A clean exit between games is what a league forgives (the ladder
    // takes such a bot): told, not failed; a crash there fails.
    for (mode, status, fails) in [("crash_on_end", 1, true), ("exit_after_game", 0, false)] {
        let (ok, text) = check_bot(&[], &["python3", script.to_str().unwrap(), mode], false);
        assert_eq!(ok, !fails, "{mode}: {text}");
        assert!(
            text.matches("the bot was gone before it played a game")
                .count()
                <= 1,
            "{mode}: {text}"
        );
        let said = format!("exited (status {status}) after game_end of game ");
        let quit = text
            .lines()
            .find(|l| l.contains(&said))
            .unwrap_or_else(|| panic!("{mode}: {text}"));
        let head = match fails {
            true => "FAIL  quit: ",
            false => "      quit not judged: the bot ",
        };
        assert!(
            quit.starts_with(&format!("{head}{said}")) && quit.contains(", before quit was sent"),
            "{mode}: {text}"
        );
        assert!(!text.contains("PASS  quit"), "{mode}: {text}");
        assert!(!text.contains("at quit,"), "{mode}: {text}");
    }
}

/// A bot cannot fill the disk: its /tmp is a tmpfs of its own, at most
/// `file_size_mb` in all (and in memory, counted against its limit); the
/// bot gets "no space" and plays on.
#[test]
fn a_bot_cannot_fill_the_disk_through_its_tmp() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fill.log");
    let script = root().join("bots/broken/misbehave.py");
    let (ok, text) = check_bot(
        &["--file-size-mb", "40", "--log", log.to_str().unwrap()],
        &["python3", script.to_str().unwrap(), "fill_tmp"],
        false,
    );
    assert!(ok, "{text}");
    let said = std::fs::read_to_string(&log).unwrap();
    let line = said
        .lines()
        .find(|l| l.starts_with("FILL wrote "))
        .unwrap_or_else(|| panic!("{said}"));
    let mb: u64 = line["FILL wrote ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(mb <= 40 && line.contains("No space left"), "{line}");
}

/// The classic first mistakes, named at the handshake: a hello that is
/// never flushed, and a hello written to stderr.
#[test]
fn an_unflushed_or_misdirected_hello_is_diagnosed() {
    let bot = |out: &str| {
        format!(
            "import sys\nsys.stdin.readline()\n{out}.write('{{\"type\":\"hello\",\"name\":\"x\"}}\\n')\n{out}.flush() if {out} is sys.stderr else None\nsys.stdin.readline()\n"
        )
    };
    let (ok, text) = check_bot(
        &["--startup-ms", "1500"],
        &["python3", "-c", &bot("sys.stdout")],
        false,
    );
    assert!(!ok);
    assert!(
        text.contains(
            "no hello within 1500 ms; the referee saw nothing at all, on stdout or stderr"
        ) && text.contains("fflush(stdout)"),
        "{text}"
    );
    let (ok, text) = check_bot(
        &["--startup-ms", "1500"],
        &["python3", "-c", &bot("sys.stderr")],
        false,
    );
    assert!(!ok);
    assert!(
        text.contains("the referee saw nothing on stdout and ")
            && text.contains("bytes on stderr: if the answer is among them, it belongs on stdout"),
        "{text}"
    );
}

/// A bot that reads all of its stdin before it answers (the hello read,
/// then a wait for an end of input that never comes) is told so, not
/// only to flush.
#[test]
fn a_bot_reading_to_the_end_of_its_input_is_told_so() {
    let bot = "import sys\ndata = sys.stdin.read()\nprint('{\"type\":\"hello\",\"name\":\"x\"}', flush=True)\n";
    // Time enough for the interpreter to start and read, on a loaded machine.
    let (ok, text) = check_bot(&["--startup-ms", "4000"], &["python3", "-c", bot], false);
    assert!(!ok);
    assert!(
        text.contains("no hello within 4000 ms")
            && text.contains("reads all of its stdin before answering"),
        "{text}"
    );
}

/// `--json`: one JSON document for CI pipelines, with every check, its
/// detail and notes, and the same exit status.
#[test]
fn check_bot_json_output() {
    let script = root().join("bots/broken/misbehave.py");
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(root())
        .args(["check-bot", "--json", "--game", "filo", "--"])
        .args(["python3", script.to_str().unwrap(), "illegal"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(doc["passed"], false);
    let checks = doc["checks"].as_array().unwrap();
    assert_eq!(checks[0]["check"], "handshake");
    assert_eq!(checks[0]["pass"], true);
    let failed: Vec<_> = checks.iter().filter(|c| c["pass"] == false).collect();
    assert_eq!(doc["failed"].as_u64(), Some(failed.len() as u64));
    assert!(
        failed[0]["detail"].as_str().unwrap().starts_with("illegal"),
        "{doc}"
    );
    assert!(doc["command"].as_str().unwrap().contains("misbehave.py"));
}

/// In a container that masks part of /proc (here: a tmpfs over /proc/sys in
/// a namespace of the test's own), no fresh /proc can be mounted: the bot
/// runs without /proc, passes, and its log says so. (Needs `unshare` and
/// user namespaces to set up; else says so.)
#[test]
fn where_proc_is_masked_a_bot_runs_without_proc() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bot.log");
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg("mount -t tmpfs none /proc/sys || exit 99; exec \"$0\" check-bot --game filo --log \"$1\" -- python3 \"$2\"")
        .arg(env!("CARGO_BIN_EXE_arena"))
        .arg(&log)
        .arg(root().join("bots/random-python/bot.py"))
        .output();
    let out = match out {
        Ok(o) if o.status.code() != Some(99) => o,
        other => {
            eprintln!("not run: cannot mask /proc here: {other:?}");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(said.contains("runs without /proc"), "{said}");
}

/// A bot's build output and its bot.toml's words reach the terminal
/// escaped, as its stderr does: a build that prints a window title and a
/// screen clear, an author and a command word holding them, set no title
/// and clear nothing in `arena check-bot` nor `arena bots` (attack).
#[test]
fn build_output_and_bot_toml_words_cannot_drive_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let toml_esc = "\\u001b]0;PWNED\\u0007\\u001b[2J";
    for (name, build) in [
        (
            "a-build",
            "build = [\"sh\", \"-c\", \"printf '\\\\033]0;PWNED\\\\007\\\\033[2J\\\\n'; exit 3\"]\n",
        ),
        ("b-start", ""),
    ] {
        let bot = dir.path().join(name);
        std::fs::create_dir(&bot).unwrap();
        std::fs::write(
            bot.join("bot.toml"),
            format!(
                "name = \"{name}\"\nauthor = \"{toml_esc}\"\nlanguage = \"{toml_esc}\"\n{build}command = [\"sh\", \"-c\", \"exit 4\", \"{toml_esc}\"]\n"
            ),
        )
        .unwrap();
    }
    let run = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(env!("CARGO_BIN_EXE_arena"))
            .args(args)
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let shown = "\\u{1b}]0;PWNED\\u{7}\\u{1b}[2J";
    let build = dir.path().join("a-build");
    let start = dir.path().join("b-start");
    for (text, wanted) in [
        (
            run(&["check-bot".as_ref(), build.as_os_str()]),
            vec!["FAIL  build: `sh -c", "exit 3", shown],
        ),
        (
            run(&["check-bot".as_ref(), start.as_os_str()]),
            vec![&format!("checking `sh -c exit 4 {shown}`")[..]],
        ),
        (
            run(&["bots".as_ref(), "--dir".as_ref(), dir.path().as_os_str()]),
            vec!["a-build", "b-start", "exit 3", shown],
        ),
    ] {
        assert!(!text.contains(['\u{1b}', '\u{7}']), "raw: {text:?}");
        for w in wanted {
            assert!(text.contains(w), "no {w:?} in {text}");
        }
    }
}

/// A bot.toml asking for limits past the bounds of the flags (5000000
/// processes, which the sandbox cannot give, misread as no user
/// namespace) is refused at its line before anything starts (attack).
#[test]
fn a_bot_toml_asking_for_limits_past_the_bounds_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bot.toml"),
        "name = \"greedy\"\ncommand = [\"true\"]\n[limits]\nprocesses = 5000000\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .arg("check-bot")
        .arg(dir.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("bot.toml:4: `limits.processes`: must be between 1 and 100000, got 5000000"),
        "{text}"
    );
    assert!(
        !text.contains("user namespace") && !text.contains("PASS"),
        "{text}"
    );
}
