//! What new users and bot authors are told when something is wrong, end to
//! end (the real binary, real bot processes): each error names the problem
//! where it is (the league file's entry or key, the flag given, the
//! missing folder, the refused configuration) and says what the bot did
//! (a reply before any request, a debug print after an illegal reply),
//! with "did you mean" for a misspelt bot name.

use crate::common::{self, arena, text};
use std::path::Path;

const GREEDY: &str = env!("CARGO_BIN_EXE_greedy-bot");
const RANDOM: &str = env!("CARGO_BIN_EXE_random-bot");

/// `arena check-bot --game kisolo -- BOT...` in `dir`.
fn check_bot(dir: &Path, bot: &[&str]) -> (bool, String) {
    let mut args = vec!["check-bot", "--game", "kisolo", "--"];
    args.extend_from_slice(bot);
    let o = arena(dir, &args);
    (o.status.success(), text(&o))
}

/// A bot folder copied with its bot.toml (README's `cp -r bots/mybot
/// bots/mybot-new`) has the same name as the first: refused, naming both
/// bot.toml files and what to change. Two names of Cyrillic letters of
/// one length are two bots, with log files of their own.
#[test]
fn a_copied_bot_folder_is_named_with_its_original_and_letters_of_any_script_name_logs() {
    let dir = tempfile::tempdir().unwrap();
    for folder in ["mybot", "mybot-new"] {
        let d = dir.path().join("bots").join(folder);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("bot.toml"),
            format!("name = \"mybot\"\ncommand = [\"{RANDOM}\"]\n"),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("all.toml"),
        "name = \"x\"\nbots = \"all\"\n",
    )
    .unwrap();
    let o = arena(dir.path(), &["run", "all.toml", "--quiet", "--no-report"]);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    for what in [
        "bot name `mybot` appears twice",
        "bots/mybot/bot.toml:2 and ",
        "bots/mybot-new/bot.toml:2",
        "change it in the copy",
    ] {
        assert!(said.contains(what), "{what}: {said}");
    }
    // One folder listed twice: said so, where, not blamed on a copy.
    std::fs::write(
        dir.path().join("twice.toml"),
        "name = \"x\"\nbots = [\"mybot\",\n  \"mybot\"]\n",
    )
    .unwrap();
    let o = arena(dir.path(), &["run", "twice.toml", "--quiet", "--no-report"]);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains(
            "twice.toml:3: `bots`: bot `mybot` is listed twice (entries 1 and 2, lines 2 and 3)"
        ),
        "{said}"
    );
    assert!(!said.contains("copied"), "{said}");
    kisolo_league(dir.path(), "cyr", ("ранд", RANDOM), ("тест", RANDOM));
    let logs = dir.path().join("results/cyr/logs");
    assert!(logs.join("ранд-w0.log").exists() || logs.join("ранд-w1.log").exists());
    assert!(logs.join("тест-w0.log").exists() || logs.join("тест-w1.log").exists());
}

/// Runs `NAME.toml` in `dir`, written here: one round of Kisolo between
/// two bots, each (name, program), into `dir/results/NAME`.
fn kisolo_league(dir: &Path, name: &str, a: (&str, &str), b: (&str, &str)) {
    std::fs::write(
        dir.join(format!("{name}.toml")),
        format!(
            "name = \"{name}\"\nrounds = 1\nvariants = [\"kisolo\"]\nbots = [\n  {{ name = \"{}\", command = [\"{}\"] }},\n  {{ name = \"{}\", command = [\"{}\"] }},\n]\n",
            a.0, a.1, b.0, b.1
        ),
    )
    .unwrap();
    let file = format!("{name}.toml");
    let o = arena(dir, &["run", &file, "--quiet", "--no-report"]);
    assert!(o.status.success(), "{}", text(&o));
}

/// `arena show` on a sharded league's folder with a game no shard has:
/// a game of the schedule not played yet (its shard named), or no such
/// game; not "games.csv: no such file", as if it were no league's folder.
#[test]
fn show_of_a_sharded_league_names_a_game_not_played_yet_or_no_such_game() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sh.toml"),
        format!(
            "name = \"sh\"\nrounds = 2\nvariants = [\"kisolo\"]\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n]\n"
        ),
    )
    .unwrap();
    let o = arena(
        dir.path(),
        &["run", "sh.toml", "--quiet", "--no-report", "--shard", "1/2"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let show = |id: &str| {
        let o = arena(dir.path(), &["show", "results/sh", id]);
        assert!(!o.status.success(), "{}", text(&o));
        text(&o)
    };
    let said = show("r002-kisolo-p000-o1");
    assert!(
        said.contains("game `r002-kisolo-p000-o1` of league `sh` is in its schedule (shard 2/2) but not played yet"),
        "{said}"
    );
    let said = show("r009-kisolo-p000-o0");
    assert!(
        said.contains("no game `r009-kisolo-p000-o0` in league `sh`: none of its shards (shard-1-of-2) has a row"),
        "{said}"
    );
    assert!(!said.contains("no such file"), "{said}");
}

/// A games.csv row edited by hand (its scores swapped) no longer says
/// what its record says: `arena show` says so, where it showed the
/// record's result alone.
#[test]
fn show_names_a_row_that_disagrees_with_its_record() {
    let dir = tempfile::tempdir().unwrap();
    kisolo_league(dir.path(), "t", ("a", RANDOM), ("b", GREEDY));
    let csv = dir.path().join("results/t/games.csv");
    let all = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = all.lines().map(String::from).collect();
    // A game won by one seat (a drawn one reads the same swapped).
    let at = (1..lines.len())
        .find(|&i| {
            let f: Vec<&str> = lines[i].split(',').collect();
            f[7] != f[8]
        })
        .unwrap();
    let mut f: Vec<String> = lines[at].split(',').map(String::from).collect();
    let id = f[0].clone();
    let show = || text(&arena(dir.path(), &["show", "results/t", &id]));
    assert!(!show().contains("warning"), "{}", show());
    f.swap(7, 8);
    lines[at] = f.join(",");
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let said = show();
    assert!(
        said.contains("warning: games.csv's row says") && said.contains("one of them was edited"),
        "{said}"
    );
}

/// A league file's error points at the entry of `bots` it is in (either
/// form of the list), or at the key; one in `[limits]`, at its key.
#[test]
fn a_league_files_errors_point_at_the_entry_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "list.toml",
            format!(
                "name = \"x\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n\n  {{ name = \"b\", command = [] }},\n]\n"
            ),
            "list.toml:5: `bots[1].command`: is empty",
        ),
        (
            "unknown.toml",
            format!(
                "name = \"x\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"], bogus = 1 }},\n]\n"
            ),
            "unknown.toml:4: `bots[1].bogus`: unknown field `bogus`",
        ),
        (
            "twice.toml",
            format!(
                "name = \"x\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n]\n"
            ),
            "twice.toml:5: `bots`: bot name `a` appears twice",
        ),
        (
            "tables.toml",
            format!(
                "name = \"x\"\n[[bots]]\nname = \"a\"\ncommand = [\"{RANDOM}\"]\n\n[[bots]]\nname = \"b\"\nlimits = {{ memory_mb = 0 }}\ncommand = [\"{RANDOM}\"]\n"
            ),
            "tables.toml:8: `bots[1].limits.memory_mb`: must be at least 1",
        ),
        (
            "limits.toml",
            format!(
                "name = \"x\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n]\n\n[limits]\nprocesses = 8\n\nmemory_mb = 0\n"
            ),
            "limits.toml:10: `limits.memory_mb`: must be between 1 and",
        ),
        (
            "env.toml",
            format!(
                "name = \"x\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"], env = {{ \"A=B\" = \"c\" }} }},\n]\n"
            ),
            "env.toml:4: `bots[1].env`: `A=B`: a variable's name cannot hold `=`",
        ),
        (
            "nul.toml",
            format!(
                "name = \"x\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\", \"x\\u0000\"] }},\n]\n"
            ),
            "nul.toml:4: `bots[1].command`: holds a NUL byte",
        ),
    ];
    for (name, src, says) in cases {
        std::fs::write(dir.path().join(name), src).unwrap();
        let o = arena(dir.path(), &["run", name, "--quiet", "--no-report"]);
        assert!(!o.status.success(), "{name}: {}", text(&o));
        assert!(
            text(&o).contains(says),
            "{name}: wanted {says:?} in:\n{}",
            text(&o)
        );
    }
}

/// `arena match --games N` over the league's bound is refused naming
/// `--games`, the flag given, not `--rounds`, which `match` has not.
#[test]
fn too_many_games_of_a_match_name_the_games_flag() {
    let dir = tempfile::tempdir().unwrap();
    let o = arena(
        dir.path(),
        &[
            "match",
            RANDOM,
            GREEDY,
            "--games",
            "2000002",
            "--variants",
            "filo",
            "--quiet",
        ],
    );
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("--games 2000002: at most 2000000 games"),
        "{out}"
    );
    assert!(!out.contains("--rounds"), "{out}");
}

/// A bot table whose `cwd` does not exist: the folder is named as the
/// missing thing, not its program.
#[test]
fn a_missing_working_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cwd.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"cwd\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"python3\", \"bot.py\"], cwd = \"no-such-folder\" }},\n]\nvariants = [\"filo\"]\n"
        ),
    )
    .unwrap();
    let o = common::league::run(&file, &["--no-report", "--no-build"]);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("its working folder"), "{out}");
    assert!(out.contains("no-such-folder does not exist"), "{out}");
    assert!(!out.contains("not found on PATH"), "{out}");
}

/// A resume under another `--bots` list says that list changed, and
/// which to give, not how to edit a `bots = "all"` the file does not have.
#[test]
fn a_resume_under_other_bots_names_the_bots_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("three.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"three\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{GREEDY}\"] }},\n  {{ name = \"c\", command = [\"{RANDOM}\"] }},\n]\nvariants = [\"kisolo\"]\n"
        ),
    )
    .unwrap();
    let flags = ["--no-report", "--no-build", "-j", "1"];
    let first = [&["--bots", "a,b"][..], &flags].concat();
    common::league::run_ok(&file, &first);
    let other = [&["--bots", "a,c"][..], &flags].concat();
    let o = common::league::run(&file, &other);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("this run's `--bots a,c`"), "{out}");
    assert!(out.contains("`--bots a,b`"), "{out}");
    assert!(!out.contains("bots = \"all\""), "{out}");
    let o = common::league::run(&file, &flags);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("the league was started with `--bots a,b`, and this run gives no `--bots`"),
        "{out}"
    );
    assert!(!out.contains("bots = \"all\""), "{out}");
}

/// check-bot of a bot.toml whose command names a file outside the bot's
/// folder: its configuration was refused before any process ran, not a
/// crash.
#[test]
fn check_bot_calls_a_refused_configuration_so() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("outside");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("bot.toml"),
        "name = \"outside\"\ncommand = [\"python3\", \"../bot.py\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("bot.py"), "").unwrap();
    let (ok, out) = check_bot(dir.path(), &[folder.to_str().unwrap()]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("FAIL  handshake: refused before it started: its configuration"),
        "{out}"
    );
    assert!(out.contains("outside the bot's folder"), "{out}");
    assert!(!out.contains("crash"), "{out}");
}

/// A bot.toml whose `command` or `env` no process can have (a NUL byte,
/// an empty program, a variable named with `=`), or whose `name` no
/// table can hold, is refused where it is written, naming the key and
/// its line: not started to fail with "nul byte found in
/// provided data", nor run with `A` set to `B=c`.
#[test]
fn a_bot_toml_no_process_can_run_names_its_key() {
    let dir = tempfile::tempdir().unwrap();
    for (folder, toml, line, says) in [
        (
            "eq",
            "command = [\"python3\", \"bot.py\"]\nenv = { \"A=B\" = \"c\" }\n",
            2,
            "`env`: `A=B`: a variable's name cannot hold `=`",
        ),
        (
            "nul",
            "command = [\"python3\", \"bot.py\"]\n\n[env]\nA = \"x\\u0000y\"\n",
            3,
            "`env`: `A`: a variable's name and value cannot hold a NUL byte",
        ),
        (
            "empty",
            "language = \"python\"\ncommand = [\"\", \"bot.py\"]\n",
            2,
            "`command` names no program: its first word is empty",
        ),
        (
            "formula",
            "command = [\"python3\", \"bot.py\"]\n\nname = \"=x\"\n",
            3,
            "`name`: `=x` must not begin with `=`",
        ),
    ] {
        let bot = dir.path().join(folder);
        std::fs::create_dir(&bot).unwrap();
        std::fs::write(bot.join("bot.toml"), toml).unwrap();
        std::fs::write(bot.join("bot.py"), "").unwrap();
        let (ok, out) = check_bot(dir.path(), &[bot.to_str().unwrap()]);
        assert!(!ok, "{folder}: {out}");
        assert!(
            out.contains(&format!("bot.toml:{line}: ")) && out.contains(says),
            "{folder}: {out}"
        );
    }
}

/// A reply written with the hello, before any request: the game's fault
/// and check-bot's last check both say it came before any request.
#[test]
fn a_reply_before_any_request_is_called_early() {
    let dir = tempfile::tempdir().unwrap();
    let script = common::misbehave_py();
    let (ok, out) = check_bot(
        dir.path(),
        &["python3", script.to_str().unwrap(), "hello_extra"],
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains("protocol at ply 0: a reply before any request: "),
        "{out}"
    );
    assert!(
        out.contains("FAIL  stray output: before any request (none was sent to it"),
        "{out}"
    );
    assert!(!out.contains("after its last request"), "{out}");
}

/// An illegal reply, then a debug print on stdout (one write): the
/// illegal option is the fault, with the legal ones, and the print is
/// told after it; not "more lines than requests".
#[test]
fn an_illegal_reply_then_a_debug_print_is_illegal() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("debug.py");
    std::fs::write(
        &bot,
        r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "debug", "version": "1"}), flush=True)
    elif m["type"] == "request":
        sys.stdout.write(json.dumps({"type": "reply", "option": "Z9"}) + "\ndebug: I chose Z9\n")
        sys.stdout.flush()
    elif m["type"] == "quit":
        break
"#,
    )
    .unwrap();
    let (ok, out) = check_bot(dir.path(), &["python3", bot.to_str().unwrap()]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("illegal at ply 0: `Z9` is not one of the legal options (xi1"),
        "{out}"
    );
    assert!(
        out.contains("after it the bot wrote, unasked: debug: I chose Z9 (not JSON"),
        "{out}"
    );
    assert!(!out.contains("more lines than requests"), "{out}");
}

/// `rate --anchor` and `sprt --bots` with a misspelt bot: "did you mean".
#[test]
fn a_misspelt_bot_of_rate_and_sprt_gets_a_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let o = arena(
        dir.path(),
        &[
            "match",
            GREEDY,
            RANDOM,
            "--games",
            "2",
            "--variants",
            "kisolo",
            "--quiet",
            "--no-report",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let folder = "results/match-greedy-rust-vs-random-rust";
    let o = arena(dir.path(), &["rate", folder, "--anchor", "greedy-rsut=0"]);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("did you mean `greedy-rust`?"), "{out}");
    let o = arena(
        dir.path(),
        &[
            "sprt",
            folder,
            "--elo0",
            "0",
            "--elo1",
            "5",
            "--bots",
            "greedy-rust,random-rsut",
        ],
    );
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("did you mean `random-rust`?"), "{out}");
}

/// `arena replay FILE GAME` before the league was ever run: its results
/// folder does not exist, and the message says so (not "no game here").
#[test]
fn replay_of_a_league_never_run_says_it_has_not_been_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("never.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"never\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{GREEDY}\"] }},\n]\n"
        ),
    )
    .unwrap();
    let o = arena(dir.path(), &["replay", "never.toml", "r001-kisolo-p000-o0"]);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("results/never: no such folder: league `never` has not been run yet (`arena run never.toml` plays it)"),
        "{out}"
    );
    assert!(!out.contains("no row in games.csv"), "{out}");
}

/// `arena play` without `--record` keeps the record in a folder of this
/// user's own, `TMPDIR/arena-UID/play/` (a fixed `/tmp/arena-play` made by
/// one user refused every other user's records, and made eight tests fail
/// for a second user of the machine); a link there instead of the folder
/// is refused, named.
#[test]
fn play_keeps_its_record_in_a_folder_of_the_users_own() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let bot = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-python");
    let bot = bot.to_str().unwrap();
    let play = || {
        play_in(
            dir.path(),
            tmp.path(),
            &["--game", "filo", "--seed", "3", bot, bot],
        )
    };
    let o = play();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    // SAFETY: geteuid cannot fail.
    let own = tmp
        .path()
        .join(format!("arena-{}", unsafe { libc::geteuid() }));
    let records: Vec<_> = std::fs::read_dir(own.join("play"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(out.contains(&*records[0].to_string_lossy()), "{out}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&own).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    std::fs::remove_dir_all(&own).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), &own).unwrap();
    let o = play();
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains(&format!("{} is not a folder of this user's", own.display())),
        "{out}"
    );
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// `arena play ARGS` in `dir`, its temporary files in `tmp` (TMPDIR),
/// with no stdin.
fn play_in(dir: &Path, tmp: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
        .arg("play")
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the arena binary runs")
}

/// `arena play` of a bot folder whose bot.toml has a `build` builds it
/// first, as `arena match` does, and runs the built copy: the author's
/// folder is left as it was (it used to start `./bot` in the folder, which
/// no build had made: "./bot does not exist").
#[test]
fn play_builds_a_bot_folder_with_a_build_and_runs_the_built_copy() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let bot = dir.path().join("made-bot");
    std::fs::create_dir(&bot).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-python/bot.py");
    std::fs::copy(source, bot.join("bot.src")).unwrap();
    std::fs::write(
        bot.join("bot.toml"),
        "name = \"made-bot\"\n\
         build = [\"sh\", \"-c\", \"cp bot.src bot && chmod +x bot\"]\n\
         command = [\"python3\", \"bot\"]\n",
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(["play", "--game", "kisolo", "--quiet", "made-bot", "random"])
        .current_dir(dir.path())
        .env("TMPDIR", tmp.path())
        .env("XDG_CACHE_HOME", cache.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the arena binary runs");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("seat 0: building made-bot"), "{out}");
    assert!(!bot.join("bot").exists(), "the build wrote into the folder");
}

/// A bot that prints on `game_end` (a debug line) costs no game in
/// `arena play`, but its author is told, with what it wrote: a league
/// starts it again before each game (it said nothing).
#[test]
fn play_tells_of_output_after_the_games_end() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let bot = dir.path().join("chatty.py");
    std::fs::write(
        &bot,
        "import json, sys\n\
         for line in sys.stdin:\n\
         \x20   m = json.loads(line)\n\
         \x20   if m['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'hello', 'name': 'chatty'}), flush=True)\n\
         \x20   elif m['type'] == 'request':\n\
         \x20       print(json.dumps({'type': 'reply', 'option': m['legal'][0]}), flush=True)\n\
         \x20   elif m['type'] == 'game_end':\n\
         \x20       print('game over, my score', m.get('scores'), flush=True)\n\
         \x20   elif m['type'] == 'quit':\n\
         \x20       break\n",
    )
    .unwrap();
    let o = play_in(
        dir.path(),
        tmp.path(),
        &["--game", "kisolo", "--quiet", "python3 chatty.py", "random"],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("note: seat 0 (chatty) wrote `game over, my score"),
        "{out}"
    );
}

/// `arena rate -` says the rows are not read from standard input (it
/// said `-: No such file or directory`); `arena sprt` of 3-player games
/// alone says there is no 2-player game (its list of bots was empty).
#[test]
fn rate_of_stdin_and_sprt_without_two_player_games_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let o = arena(dir.path(), &["rate", "-"]);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("not read from standard input"), "{out}");
    let csv = dir.path().join("three.csv");
    std::fs::write(
        &csv,
        "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening\n\
         g1,tricala,3,p1,a,b,c,1,0.25,0.25,captures,,30,100,7,\n",
    )
    .unwrap();
    let o = arena(
        dir.path(),
        &[
            "sprt",
            "three.csv",
            "--elo0",
            "0",
            "--elo1",
            "10",
            "--bots",
            "a,b",
        ],
    );
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("there are none (no 2-player game at all"),
        "{out}"
    );
}

/// A bot that cannot start in `arena play` is shown with the end of its
/// stderr (python's "can't open file"), as `arena check-bot` shows it, and
/// no log of our own is left behind.
#[test]
fn play_shows_the_stderr_of_a_bot_that_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = play_in(
        dir.path(),
        tmp.path(),
        &["--game", "kisolo", "--", "random", "python3 no_such.py"],
    );
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("seat 1: `python3 no_such.py`: "), "{out}");
    assert!(out.contains("its stderr ends:"), "{out}");
    assert!(out.contains("no_such.py': [Errno 2]"), "{out}");
    // What the sandbox hides, said after its stderr.
    assert!(
        out.contains("note: in its sandbox a bot sees its own folder"),
        "{out}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with("arena-play-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `arena play --record` somewhere it cannot write is refused before the
/// game, not after playing it whole.
#[test]
fn play_refuses_a_record_it_cannot_write_before_the_game() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the record's folder would be.
    std::fs::write(dir.path().join("taken"), "mine\n").unwrap();
    let o = arena(
        dir.path(),
        &[
            "play",
            "--game",
            "kisolo",
            "--record",
            "taken/game.jsonl",
            "--",
            "random",
            "random",
        ],
    );
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains(
            "cannot write the game's record to taken/game.jsonl: taken is a file, not a folder"
        ),
        "{out}"
    );
    assert!(!out.contains("ply"), "the game was played: {out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("taken")).unwrap(),
        "mine\n"
    );
}

/// What `arena play --game GAME --timeout-ms 1500` of `bot` against the
/// built-in random player said (with `--sandbox S` where given), run in
/// `dir`: a misbehaving bot's timeout told.
fn timed_out_against_random(dir: &Path, game: &str, sandbox: Option<&str>, bot: &str) -> String {
    let mut args = vec!["play", "--game", game, "--timeout-ms", "1500"];
    if let Some(s) = sandbox {
        args.extend(["--sandbox", s]);
    }
    args.extend(["--", bot, "random"]);
    text(&arena(dir, &args))
}

/// A bot that stops itself (SIGSTOP), with the sandbox or without, under
/// a wrapper or not, is told so when its time runs out: it was not
/// thinking, and no flush would have helped. (In the sandbox the bot was
/// its namespace's first process, which no signal of its own stops,
/// until the namespace had an init of its own.)
#[test]
fn a_bot_that_stops_itself_is_told_so() {
    let dir = tempfile::tempdir().unwrap();
    let script = common::misbehave_py();
    let bot = format!("python3 {} stop_self", script.display());
    // In the sandbox, under a wrapper (a shell, as npm or a launcher): the
    // bot is not the process the referee started, and is told all the
    // same (it was told it was most likely still thinking).
    std::fs::copy(&script, dir.path().join("misbehave.py")).unwrap();
    let wrapped = "sh -c 'python3 misbehave.py stop_self; true'";
    let alone = "python3 misbehave.py stop_self";
    for (sandbox, bot) in [("off", bot.as_str()), ("on", alone), ("on", wrapped)] {
        let said = timed_out_against_random(dir.path(), "filo", Some(sandbox), bot);
        assert!(
            said.contains("seat 0 forfeits: timeout")
                && said.contains("its process was stopped (it stopped itself")
                && !said.contains("thinking"),
            "{sandbox}: {said}"
        );
    }
}

/// A bot that writes its reply without flushing it, and waits for its
/// next line, is told it was asleep, not thinking, and to flush (it was
/// told it was most likely still thinking), in the sandbox or out of it.
#[test]
fn a_bot_that_does_not_flush_its_reply_is_told_to() {
    let dir = tempfile::tempdir().unwrap();
    let bot = format!("python3 {} no_flush", common::misbehave_py().display());
    for sandbox in ["off", "on"] {
        let said = timed_out_against_random(dir.path(), "kisolo", Some(sandbox), &bot);
        assert!(
            said.contains("seat 0 forfeits: timeout")
                && said.contains("was asleep, not thinking: waiting for its next line with its reply not flushed")
                && !said.contains("still thinking"),
            "{sandbox}: {said}"
        );
    }
}

/// A bot that writes its reply on stderr and waits for its next line is
/// told that the reply may be among what it wrote there, before the
/// flush (it was told only to flush).
#[test]
fn a_bot_that_replies_on_stderr_is_told_where_replies_go() {
    let dir = tempfile::tempdir().unwrap();
    let bot = format!(
        "python3 {} reply_on_stderr",
        common::misbehave_py().display()
    );
    let said = timed_out_against_random(dir.path(), "kisolo", None, &bot);
    assert!(
        said.contains("seat 0 forfeits: timeout")
            && said.contains("if its reply is among what it wrote on stderr, it belongs on stdout"),
        "{said}"
    );
}

/// A bot program without an execute bit is told what to do (chmod +x, or
/// its interpreter), in the sandbox or out of it, once: not blamed on the
/// sandbox, not said twice.
#[test]
fn a_program_that_is_not_executable_is_told_how_to_run() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bot.py");
    std::fs::write(&script, "#!/usr/bin/env python3\nprint('hi')\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let bot = script.to_str().unwrap();
    for sandbox in ["on", "off"] {
        let o = arena(
            dir.path(),
            &[
                "play",
                "--game",
                "kisolo",
                "--sandbox",
                sandbox,
                "--",
                bot,
                "random",
            ],
        );
        let said = text(&o);
        assert!(!o.status.success(), "{sandbox}: {said}");
        assert!(
            said.contains("chmod +x") && said.matches("chmod +x").count() == 1,
            "{sandbox}: {said}"
        );
        if sandbox == "on" {
            assert!(!said.contains("sandbox off"), "{sandbox}: {said}");
        }
    }
}

/// A results folder named by an empty path, or by one that goes back up
/// (`..`) out of a folder still to be made (`new/..` is the folder the
/// league runs in), is refused before anything is made or written: the
/// league would write into a folder of other files, which it refuses when
/// named plainly (`-o .`).
#[test]
fn an_output_that_leads_back_into_a_folder_of_other_files_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("precious.txt"), "mine").unwrap();
    for (output, flag, says) in [
        ("output = \"\"\n", None, "is no folder's name (it is empty)"),
        (
            "output = \"sub/..\"\n",
            None,
            "goes back up (`..`) out of a folder that does not exist yet",
        ),
        (
            "",
            Some("nope/.."),
            "goes back up (`..`) out of a folder that does not exist yet",
        ),
        (
            "",
            Some("."),
            "holds no league's results but 2 file(s) of its own (l.toml, precious.txt)",
        ),
    ] {
        std::fs::write(
            d.join("l.toml"),
            format!(
                "name = \"l\"\n{output}bots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n]\nvariants = [\"filo\"]\nrounds = 1\n"
            ),
        )
        .unwrap();
        let mut args = vec!["run", "l.toml", "--quiet", "--no-report", "--no-build"];
        if let Some(f) = flag {
            args.extend(["-o", f]);
        }
        let o = arena(d, &args);
        let said = text(&o);
        assert!(!o.status.success(), "{output}{flag:?}: {said}");
        assert!(said.contains(says), "{output}{flag:?}: {said}");
        let mut left = common::names_in(d, |_| true);
        left.sort();
        assert_eq!(left, ["l.toml", "precious.txt"], "{output}{flag:?}: {said}");
    }
}

/// A program that is not there is named, and how a path is read: a
/// path's missing file (not the bare "No such file or directory"), a
/// bare name of a file in the folder (it is looked for on PATH: `./NAME`).
/// A hello without version or author is shown without blanks for them.
#[test]
fn a_missing_program_is_named_and_a_hello_shows_what_it_gave() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("mine");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("mine.py"), "print('hi')\n").unwrap();
    std::fs::write(folder.join("bot.toml"), "command = [\"mine.py\"]\n").unwrap();
    for sandbox in ["on", "off"] {
        for (bot, said_of) in [
            ("./nope.py", "`./nope.py` does not exist"),
            ("./mine", "(`./mine.py` for a file in the bot's folder)"),
        ] {
            let o = arena(
                dir.path(),
                &[
                    "play",
                    "--game",
                    "kisolo",
                    "--sandbox",
                    sandbox,
                    "--",
                    bot,
                    "random",
                ],
            );
            let said = text(&o);
            assert!(!o.status.success(), "{sandbox} {bot}: {said}");
            assert!(said.contains(said_of), "{sandbox} {bot}: {said}");
        }
    }
    let bare = dir.path().join("bare.py");
    std::fs::write(
        &bare,
        "import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n    if m['type'] == 'hello':\n        print(json.dumps({'type': 'hello', 'name': 'bare'}), flush=True)\n    elif m['type'] == 'request':\n        print(json.dumps({'type': 'reply', 'option': m['legal'][0]}), flush=True)\n    elif m['type'] == 'quit':\n        break\n",
    )
    .unwrap();
    let bot = format!("python3 {}", bare.display());
    let o = arena(
        dir.path(),
        &["play", "--game", "kisolo", "--", &bot, "random"],
    );
    let said = text(&o);
    let seat = said
        .lines()
        .find(|l| l.starts_with("seat 0: "))
        .unwrap_or_default();
    assert!(seat.starts_with("seat 0: bare (pid "), "{said}");
}

/// A bot.toml whose `command` names a folder (its sources', say) is told
/// that it names a folder, in the sandbox or out of it: not sent looking
/// for an execute bit, as exec's own EACCES would.
#[test]
fn a_command_that_names_a_folder_is_told_so() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot");
    std::fs::create_dir_all(bot.join("src")).unwrap();
    std::fs::write(bot.join("bot.toml"), "command = [\"./src\"]\n").unwrap();
    for sandbox in ["on", "off"] {
        let o = arena(
            dir.path(),
            &[
                "check-bot",
                "--game",
                "kisolo",
                "--sandbox",
                sandbox,
                "--",
                bot.to_str().unwrap(),
            ],
        );
        let said = text(&o);
        assert!(!o.status.success(), "{sandbox}: {said}");
        assert!(
            said.contains("src is a folder, not a program"),
            "{sandbox}: {said}"
        );
        assert!(!said.contains("chmod"), "{sandbox}: {said}");
    }
}

/// A copy of the league folder tests/data/log-league in `to`, its
/// games.csv rewritten by `edit` (of its lines).
fn log_league_copy(to: &Path, edit: impl Fn(Vec<String>) -> Vec<String>) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/log-league");
    std::fs::create_dir_all(to.join("games")).unwrap();
    for f in ["league.json", "games/records-0000.jsonl"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
    let csv = std::fs::read_to_string(from.join("games.csv")).unwrap();
    let lines = edit(csv.lines().map(str::to_string).collect());
    std::fs::write(to.join("games.csv"), lines.join("\n") + "\n").unwrap();
}

/// `arena show` finds a game's row whatever the order of the columns (as
/// every reader of games.csv does), and a damaged row of the game is named
/// with its line and column: both were "no row in games.csv".
#[test]
fn show_finds_rows_in_any_column_order_and_names_a_damaged_one() {
    let dir = tempfile::tempdir().unwrap();
    let reordered = dir.path().join("reordered");
    log_league_copy(&reordered, |lines| {
        let rows: Vec<Vec<&str>> = lines.iter().map(|l| l.split(',').collect()).collect();
        rows.iter()
            .map(|r| r.iter().rev().copied().collect::<Vec<_>>().join(","))
            .collect()
    });
    let o = arena(dir.path(), &["show", "reordered", "r001-filo-p000-o0"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("result: [1.0, 0.0] (escape)"),
        "{}",
        text(&o)
    );

    let damaged = dir.path().join("damaged");
    log_league_copy(&damaged, |mut lines| {
        lines[2] = lines[2].replacen(",escape,,115,", ",escape,,-115,", 1);
        lines
    });
    let o = arena(dir.path(), &["show", "damaged", "r001-filo-p000-o0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let says = "games.csv:3: column `plies`: `-115` is not a whole number";
    assert!(text(&o).contains(says), "{}", text(&o));
    assert!(!text(&o).contains("no row in games.csv"), "{}", text(&o));
    assert!(
        text(&o).contains("games.csv does not read up to its row"),
        "{}",
        text(&o)
    );
}

/// `arena sprt --alpha`/`--beta` out of range are named as such, negative
/// ones too (they were taken for flags: "unexpected argument '-0'").
#[test]
fn sprt_error_rates_out_of_range_are_named_negative_ones_too() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(dir.path(), |lines| lines);
    for (flag, value) in [("--beta", "-0.1"), ("--alpha", "-1"), ("--alpha", "0.7")] {
        let o = arena(
            dir.path(),
            &["sprt", ".", "--elo0", "0", "--elo1", "5", flag, value],
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let says = format!("{flag} {value}: must be between 0 and 0.5");
        assert!(text(&o).contains(&says), "{flag} {value}: {}", text(&o));
    }
}

/// A league whose games are all done but for a row that does not read is
/// told to mend the row, not that it has games left.
#[test]
fn status_of_a_done_league_with_a_bad_row_says_to_mend_it() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(dir.path(), |mut lines| {
        lines[2] = lines[2].replacen(",escape,,115,", ",escape,,-115,", 1);
        lines
    });
    let json = std::fs::read_to_string(dir.path().join("league.json")).unwrap();
    let json = json.replacen("\"games\": 8,", "\"games\": 3,", 1);
    std::fs::write(dir.path().join("league.json"), json).unwrap();
    let o = arena(dir.path(), &["status", "."]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("games.csv:3: column `plies`"), "{t}");
    assert!(
        t.contains("resume it (once that row is mended or removed)"),
        "{t}"
    );
    assert!(!t.contains("games left"), "{t}");
}

/// The command `arena status` gives to resume a moved folder whose first
/// place had a space in its name is one a shell runs: the old path was a
/// quoted word cut in two (`-o '/x/moved dir' place'`). The other
/// commands the messages suggest quote such a folder too.
#[test]
fn status_resumes_a_moved_folder_whose_name_had_a_space() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "match",
        "random",
        "random",
        "--games",
        "2",
        "--variants",
        "kisolo",
        "--quiet",
        "--no-report",
        "-o",
        "my place",
    ];
    let o = arena(dir.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    // The commands the end suggests quote the folder too.
    assert!(
        text(&o).contains("arena rate 'my place/games.csv'"),
        "{}",
        text(&o)
    );
    // One game of two left to play, and the folder moved.
    let csv = dir.path().join("my place/games.csv");
    let rows = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = rows.lines().take(2).collect();
    std::fs::write(&csv, kept.join("\n") + "\n").unwrap();
    std::fs::rename(dir.path().join("my place"), dir.path().join("its place")).unwrap();
    let o = arena(dir.path(), &["status", "its place"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    let line = t.lines().find(|l| l.starts_with("resume it")).unwrap_or("");
    let command = line.split_once("): ").map_or("", |(_, c)| c);
    let words = shlex::split(command).unwrap_or_default();
    let at = words.iter().position(|w| w == "-o").expect(&t);
    let want = std::path::absolute(dir.path().join("its place")).unwrap();
    assert_eq!(Path::new(&words[at + 1]), want, "{t}");
    assert!(words.iter().all(|w| !w.contains("place'")), "{t}");
    // Without its league.json, the commands that write it again and rate
    // the rows as they are name the folder as one word.
    std::fs::remove_file(dir.path().join("its place/league.json")).unwrap();
    let t = text(&arena(dir.path(), &["status", "its place"]));
    assert!(
        t.contains("-o 'its place'` with") && t.contains("arena rate 'its place/games.csv'"),
        "{t}"
    );
}

/// `arena play`'s bad `--game` and `--option` are named by their flag,
/// with status 2, before any bot starts; and a knockout league run with
/// `--rounds` names the flag, not the file's `format` line.
#[test]
fn play_and_run_name_the_flag_a_bad_value_came_from() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (&["--game", "nope"][..], "--game: unknown game `nope`"),
        (
            &["--game", "filo", "--option", "columns=6"][..],
            "--option: bad setting `columns`",
        ),
        (
            &["--game", "filo", "--opening", "zz"][..],
            "--opening: move 1 `zz` is illegal",
        ),
    ] {
        let mut all = vec!["play", "--quiet"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--", "random", "random"]);
        let o = arena(dir.path(), &all);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{out}");
        assert!(out.contains(want), "{out}");
    }
    let file = dir.path().join("cup.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"cup\"\nformat = \"knockout\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n]\nvariants = [\"filo\"]\n"
        ),
    )
    .unwrap();
    let o = common::league::run(&file, &["--no-report", "--no-build", "--rounds", "2"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("--rounds: a knockout's rounds"), "{out}");
    assert!(!dir.path().join("results").exists(), "{out}");
}

/// A command whose output is its product, sent to a full disk
/// (`> /dev/full`), fails naming what it was writing: it neither panics
/// (Rust's `println!`) nor reports a success with nothing written.
#[test]
fn output_to_a_full_disk_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(dir.path(), |lines| lines);
    let bots = dir.path().join("no-bots");
    std::fs::create_dir(&bots).unwrap();
    let bots = bots.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (&["state", "kisolo"], "the state"),
        (&["state", "kisolo", "--render"], "the state"),
        (&["status", "."], "the status"),
        (&["status", ".", "--json"], "the status"),
        (&["rate", "games.csv"], "the standings"),
        (
            &[
                "sprt",
                "games.csv",
                "--bots",
                "a,b",
                "--elo0",
                "0",
                "--elo1",
                "5",
            ],
            "the test's report",
        ),
        (&["bots", "--no-check", "--dir", bots], "the list of bots"),
    ];
    for (args, what) in cases {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
            .args(args)
            .current_dir(dir.path())
            .stdout(full)
            .output()
            .expect("runs");
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains(&format!(
                "error: writing {what} to standard output: No space left"
            )),
            "{args:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
}

/// A games.csv that is no CSV at all (gzip, UTF-16, `/dev/zero`) is named
/// for what it is by every reader, not "no header line" (nor read into
/// memory for ever); a league resumed on one is refused before the repair
/// of a torn last line touches a byte of it.
#[test]
fn a_games_csv_that_is_no_csv_is_named_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let header = "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening\n";
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(header.bytes().flat_map(|b| [b, 0]))
        .collect();
    // A gzip's magic, then bytes with a comma and a line end.
    let gzip = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03a,b\nc".to_vec();
    std::fs::write(d.join("u16.csv"), utf16).unwrap();
    std::fs::write(d.join("gz.csv"), &gzip).unwrap();
    let cases = [
        (
            "u16.csv",
            "u16.csv:1: this is UTF-16 text, not UTF-8: save it as UTF-8",
        ),
        (
            "gz.csv",
            "gz.csv:1: this is a gzip-compressed file, not a CSV: decompress it first",
        ),
        (
            "/dev/zero",
            "/dev/zero:1: this is a binary file (NUL bytes in its first line)",
        ),
    ];
    for (file, says) in cases {
        for cmd in ["rate", "pgn"] {
            let o = arena(d, &[cmd, file]);
            assert_eq!(o.status.code(), Some(2), "{cmd} {file}: {}", text(&o));
            assert!(text(&o).contains(says), "{cmd} {file}: {}", text(&o));
        }
    }

    // A league, played, then its games.csv compressed in place.
    std::fs::write(
        d.join("l.toml"),
        format!(
            "name = \"l\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n]\nvariants = [\"filo\"]\nrounds = 1\n"
        ),
    )
    .unwrap();
    let o = arena(d, &["run", "l.toml", "--quiet", "--no-report"]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = d.join("results/l/games.csv");
    std::fs::write(&csv, &gzip).unwrap();
    let o = arena(d, &["run", "l.toml", "--quiet", "--no-report"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("games.csv: this is a gzip-compressed file, not a CSV: decompress it first (gunzip -k FILE). Nothing was changed"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(&csv).unwrap(), gzip, "the file as it was");

    // Its header edited by hand (a column renamed): named as the header,
    // with what to do, and the rows left as they are.
    std::fs::remove_dir_all(d.join("results/l")).unwrap();
    let o = arena(d, &["run", "l.toml", "--quiet", "--no-report"]);
    assert!(o.status.success(), "{}", text(&o));
    let edited = std::fs::read_to_string(&csv)
        .unwrap()
        .replacen(",plies,", ",ply,", 1);
    std::fs::write(&csv, &edited).unwrap();
    let o = arena(d, &["run", "l.toml", "--quiet", "--no-report"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("games.csv:1: missing column `plies`")
            && text(&o).contains(
                "That is the header, the first line of the games.csv the league wrote: mend it"
            ),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        edited,
        "the rows as they were"
    );
}

/// A league file's value of the wrong type is said in the docs' words
/// ("a whole number", "a table", "a list"), not Rust's (`i64`, `struct
/// RawTime`, "a sequence").
#[test]
fn a_value_of_the_wrong_type_is_said_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "concurrency = \"2\"",
            "invalid type: string \"2\", expected a whole number",
        ),
        (
            "seed = -1",
            "invalid value: integer `-1`, expected a whole number (0 or more)",
        ),
        (
            "time_control = 5",
            "invalid type: integer `5`, expected a table",
        ),
        (
            "variants = \"filo\"",
            "invalid type: string \"filo\", expected a list",
        ),
    ];
    for (line, says) in cases {
        std::fs::write(
            dir.path().join("w.toml"),
            format!(
                "name = \"w\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n]\n{line}\n"
            ),
        )
        .unwrap();
        let o = arena(dir.path(), &["run", "w.toml", "--quiet", "--no-report"]);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {out}");
        assert!(out.contains(says), "{line}: {out}");
        for rust in ["i64", "u64", "struct", "sequence"] {
            assert!(!out.contains(rust), "{line}: {out}");
        }
    }
}

/// A negative number given to a flag of `state`, `analyse`, `tables` or
/// `match` is named as a bad value of that flag (it was taken for a flag
/// of its own: "unexpected argument '-1' found", or clap's "invalid
/// digit").
#[test]
fn a_negative_number_is_a_bad_value_of_its_flag() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(&dir.path().join("league"), |lines| lines);
    let id = "r001-kisolo-p000-o0";
    let cases: [(&[&str], &str); 8] = [
        (&["state", "kisolo", "--players", "-1"], "-1 is negative"),
        (
            &["analyse", "league", id, "--depth", "-1"],
            "-1 is negative",
        ),
        (
            &["analyse", "league", id, "--time-ms", "-5"],
            "-5 is negative",
        ),
        (
            &["analyse", "league", id, "--threshold", "-0.1"],
            "--threshold -0.1: a score difference between 0 and 1",
        ),
        (
            &["tables", "build", "diffusion", "--seeds", "-1"],
            "-1 is negative",
        ),
        (
            &["tables", "build", "diffusion", "--threads", "-2"],
            "-2 is negative",
        ),
        (
            &["tables", "coverage", "league", "--seeds", "-3"],
            "-3 is negative",
        ),
        (
            &["match", "random", "random", "-j", "-1"],
            "--concurrency: must be between 1 and 1024, got -1",
        ),
    ];
    for (args, says) in cases {
        let o = arena(dir.path(), args);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}");
        assert!(out.contains(says), "{args:?}: {out}");
        assert!(!out.contains("unexpected argument"), "{args:?}: {out}");
    }
    assert!(!dir.path().join("tables").exists());
}

/// A league's log of records given to `arena analyse` as a record file is
/// told to give the folder and a game (it read the log as one game's
/// record: "record line N: ..."); a file that is not text says so.
#[test]
fn analyse_names_a_record_log_and_a_file_that_is_not_text() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(&dir.path().join("league"), |lines| lines);
    let o = arena(dir.path(), &["analyse", "league/games/records-0000.jsonl"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("is a league's log of records (many games)")
            && text(&o).contains("`arena analyse league GAME_ID`"),
        "{}",
        text(&o)
    );
    std::fs::write(dir.path().join("g.jsonl"), b"{\"type\":\xff\xfe}\n").unwrap();
    let o = arena(dir.path(), &["analyse", "g.jsonl"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("g.jsonl: not a game record: not UTF-8 text (at byte offset 8;"),
        "{}",
        text(&o)
    );
}

/// `arena replay` and `arena tables coverage` take a league's games.csv
/// for its folder, as `arena show` does (replay read games.csv as a
/// tournament file, "TOML parse error"; `--results games.csv` looked for
/// games.csv/games.csv; coverage said the games.csv had no games.csv).
#[test]
fn replay_and_coverage_take_a_games_csv_for_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(&dir.path().join("league"), |lines| lines);
    let o = arena(
        dir.path(),
        &["replay", "league/games.csv", "r001-kisolo-p000-o0"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("league.json does not record the command that made its league"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("TOML"), "{}", text(&o));
    std::fs::write(
        dir.path().join("log.toml"),
        format!(
            "name = \"log\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n]\n"
        ),
    )
    .unwrap();
    let o = arena(
        dir.path(),
        &[
            "replay",
            "log.toml",
            "r001-kisolo-p000-o0",
            "--results",
            "league/games.csv",
        ],
    );
    assert!(
        text(&o).contains("replaying r001-kisolo-p000-o0"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("Not a directory"), "{}", text(&o));
    let o = arena(
        dir.path(),
        &["tables", "coverage", "league/games.csv", "--seeds", "4"],
    );
    assert!(!text(&o).contains("no games.csv"), "{}", text(&o));
    assert!(
        text(&o).contains("tricala") || text(&o).contains("no 2-player"),
        "{}",
        text(&o)
    );
    // A torn last line is said, as sprt and pgn say it, not left out
    // without a word.
    let csv = dir.path().join("league/games.csv");
    let whole = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, &whole[..whole.len() - 20]).unwrap();
    let o = arena(
        dir.path(),
        &["tables", "coverage", "league", "--seeds", "4"],
    );
    assert!(
        text(&o).contains("skipped a torn last line"),
        "{}",
        text(&o)
    );
}

/// `arena report -o` naming a league's results folder (or its records
/// folder) is refused before anything is written; one folder given twice
/// is read once, its report in its own folder (it was read as two shards:
/// every game a duplicate, the report in the folder above).
#[test]
fn report_refuses_a_results_folder_for_its_output_and_reads_a_folder_once() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(&dir.path().join("league"), |lines| lines);
    for out in ["league", "league/games"] {
        let o = arena(dir.path(), &["report", "league", "-o", out]);
        assert_eq!(o.status.code(), Some(2), "{out}: {}", text(&o));
        assert!(
            text(&o).contains(&format!("-o {out}: that is a")),
            "{}",
            text(&o)
        );
    }
    assert!(!dir.path().join("league/index.html").exists());
    assert!(!dir.path().join("league/games/index.html").exists());
    let o = arena(dir.path(), &["report", "league", "league/"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("read once"), "{}", text(&o));
    assert!(!text(&o).contains("duplicate"), "{}", text(&o));
    assert!(dir.path().join("league/report/index.html").is_file());
    assert!(!dir.path().join("report").exists());
    // A folder of other files (a home folder) is refused, untouched; an
    // earlier report's folder is written again.
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("games")).unwrap();
    std::fs::write(home.join("index.html"), "mine").unwrap();
    std::fs::write(home.join("games/c0009-0123456789abcdef.js"), "mine").unwrap();
    let o = arena(dir.path(), &["report", "league", "-o", "home"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("-o home: a folder that holds other files and no report"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(home.join("index.html")).unwrap(),
        "mine"
    );
    assert!(home.join("games/c0009-0123456789abcdef.js").is_file());
    let o = arena(dir.path(), &["report", "league", "-o", "league/report"]);
    assert!(o.status.success(), "{}", text(&o));
}

/// `arena view --bind` says what is wrong with the address before
/// anything starts: an address another machine could reach, one without
/// its port; `localhost:PORT` is taken.
#[test]
fn view_names_a_bind_address_it_cannot_take() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(&dir.path().join("league"), |lines| lines);
    for (bind, says) in [
        ("0.0.0.0:0", "listens on loopback only"),
        ("127.0.0.1", "has no port"),
        ("localhost", "has no port"),
        ("127.0.0.1:99999", "port of 0 to 65535"),
    ] {
        let o = arena(dir.path(), &["view", "league", "--no-open", "--bind", bind]);
        assert_eq!(o.status.code(), Some(2), "{bind}: {}", text(&o));
        assert!(text(&o).contains(says), "{bind}: {}", text(&o));
        assert!(
            !text(&o).contains("invalid input parameter"),
            "{}",
            text(&o)
        );
    }
}

/// `arena show` of a folder without a games.csv says the file is not
/// there (it said "no row in games.csv").
#[test]
fn show_in_a_folder_without_games_csv_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let o = arena(dir.path(), &["show", "empty", "r001-filo-p000-o0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o)
            .contains("games.csv: no such file, and no record file of game `r001-filo-p000-o0`"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("no row in games.csv"), "{}", text(&o));
    // A games.csv that cannot be read is not "its row is there".
    std::fs::create_dir(dir.path().join("empty/games.csv")).unwrap();
    let o = arena(dir.path(), &["show", "empty", "r001-filo-p000-o0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("(games.csv cannot be read)"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("its row is there"), "{}", text(&o));
    // A game whose row is the torn last line (a run stopped while it
    // wrote it): said so, not "no game here".
    std::fs::remove_dir(dir.path().join("empty/games.csv")).unwrap();
    let header = mancala_arena::results::csvio::COLUMNS.join(",");
    std::fs::write(
        dir.path().join("empty/games.csv"),
        format!("{header}\nr001-filo-p000-o0,filo,2,"),
    )
    .unwrap();
    let o = arena(dir.path(), &["show", "empty", "r001-filo-p000-o0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(
            "game `r001-filo-p000-o0` has only a torn row, the last line of games.csv cut short"
        ),
        "{}",
        text(&o)
    );
}

/// `arena rate --out` into the folder a league keeps its records (or
/// logs) in, or a folder inside it, is refused naming that folder, as
/// `arena report -o` is (the same check): nothing is written there. A
/// folder of its own is taken.
#[test]
fn rate_refuses_an_out_folder_among_a_leagues_records() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(&dir.path().join("league"), |lines| lines);
    let records = std::fs::canonicalize(dir.path().join("league/games")).unwrap();
    let cases = [
        (
            "league/games",
            "that is a folder a league keeps its game records in",
        ),
        ("league/games/sub", "that is inside"),
        (
            "league/logs",
            "that is a folder a league keeps its bots' logs in",
        ),
    ];
    for (out, says) in cases {
        let o = arena(dir.path(), &["rate", "league", "--out", out]);
        assert_eq!(o.status.code(), Some(2), "{out}: {}", text(&o));
        assert!(
            text(&o).contains(&format!("--out {out}: {says}")),
            "{out}: {}",
            text(&o)
        );
        assert!(!dir.path().join(out).join("ratings.csv").exists(), "{out}");
    }
    let o = arena(dir.path(), &["rate", "league", "--out", "league/games/sub"]);
    assert!(
        text(&o).contains(&records.display().to_string()),
        "{}",
        text(&o)
    );
    assert!(!dir.path().join("league/logs").exists());
    let o = arena(dir.path(), &["report", "league", "-o", "league/games/sub"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("-o league/games/sub: that is inside"),
        "{}",
        text(&o)
    );
    let o = arena(dir.path(), &["rate", "league", "--out", "tables"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.path().join("tables/ratings.csv").is_file());
}

/// Zero where it means nothing is refused naming the flag and what it
/// takes: `tables coverage --seeds 0` (was 0%) and `--max-size 0`, as
/// `tables build` refuses them (the same check), and
/// `analyse --time-ms 0` (was one decision deep) and `--proof-ms 0`.
#[test]
fn coverage_and_analyse_refuse_a_zero_that_means_nothing() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(dir.path(), |lines| lines);
    let game = "r001-filo-p000-o0";
    let cases: [(&[&str], &str); 4] = [
        (
            &["tables", "coverage", ".", "--seeds", "0"],
            "--seeds 0: no diffusion table holds 0 seeds or fewer; the smallest holds 2 seeds",
        ),
        (
            &["tables", "coverage", ".", "--max-size", "0"],
            "--max-size 0: no diffusion table fits in 0 bytes",
        ),
        (
            &["analyse", ".", game, "--time-ms", "0"],
            "--time-ms 0: give at least 1",
        ),
        (
            &["analyse", ".", game, "--proof-ms", "0"],
            "--proof-ms 0: give at least 1",
        ),
    ];
    for (args, says) in cases {
        let o = arena(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
}

/// A float flag of `arena sprt` that is no finite number (`1e400`, `inf`,
/// `nan`) is refused as written, naming the flag (it was shown as `inf`);
/// a finite one out of range says the range.
#[test]
fn sprt_refuses_numbers_that_are_not_finite_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    log_league_copy(dir.path(), |lines| lines);
    for flag in ["--elo0", "--elo1", "--alpha", "--beta"] {
        for value in ["1e400", "inf", "nan", "-inf"] {
            let mut args = vec!["sprt", ".", flag, value];
            for (other, v) in [("--elo0", "0"), ("--elo1", "5")] {
                if other != flag {
                    args.extend([other, v]);
                }
            }
            let o = arena(dir.path(), &args);
            assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", text(&o));
            let says = format!("`{value}` is not a finite number");
            assert!(
                text(&o).contains(&says) && text(&o).contains(&format!("'{flag} <")),
                "{flag} {value}: {}",
                text(&o)
            );
        }
    }
    let o = arena(dir.path(), &["sprt", ".", "--elo0", "0", "--elo1", "1e308"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--elo1 1e308: must be within [-200, 200]"),
        "{}",
        text(&o)
    );
}

/// `arena show FILE GAME_ID` with a file that is no results folder (a
/// path that leaves the working folder) says what it takes and what it
/// was given.
#[test]
fn show_of_a_file_says_what_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("here")).unwrap();
    std::fs::write(dir.path().join("passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
    let o = arena(&dir.path().join("here"), &["show", "../passwd", "x"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let says = "../passwd: that is a file, neither a results folder nor a league's games.csv: `arena show` takes a league's results folder";
    assert!(text(&o).contains(says), "{}", text(&o));
    assert!(text(&o).contains("and a game_id"), "{}", text(&o));
}

/// `arena status` of a folder whose league.json is a folder says so, not
/// that there is no league.json.
#[test]
fn status_names_a_folder_where_league_json_should_be() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("lg/league.json")).unwrap();
    let o = arena(dir.path(), &["status", "lg"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("a folder where the league's file league.json should be"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("no league.json"), "{}", text(&o));
}

/// `arena check-bot --log` naming a folder, or a file under a file, is a
/// usage error said before the bot starts (exit 2), not a bot that failed
/// its handshake (exit 1).
#[test]
fn check_bot_refuses_a_log_it_cannot_write_before_the_bot_starts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("taken"), "mine\n").unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    for (log, want) in [
        (
            "logs",
            "--log logs: cannot write the bot's stderr there: logs is a folder",
        ),
        (
            "taken/x.log",
            "--log taken/x.log: cannot write the bot's stderr there: taken is a file, not a folder",
        ),
    ] {
        let o = arena(
            dir.path(),
            &[
                "check-bot",
                "--log",
                log,
                "--game",
                "kisolo",
                "--",
                env!("CARGO_BIN_EXE_random-bot"),
            ],
        );
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{out}");
        assert!(out.contains(want), "{out}");
        assert!(!out.contains("FAIL"), "{out}");
    }
}

/// `arena play --base-ms 0` is no clock, as `base_ms = 0` in a league (it
/// forfeited the first seat at once); an increment without a clock is
/// refused, as in a league file.
#[test]
fn play_takes_a_zero_base_as_no_clock_and_refuses_an_increment_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let play = |extra: &[&str]| {
        let mut args = vec!["play", "--quiet", "--game", "kisolo", "--seed", "3"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "random", "random"]);
        arena(dir.path(), &args)
    };
    let o = play(&["--base-ms", "0"]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(!out.contains("timeout"), "{out}");
    let o = play(&["--increment-ms", "5"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("--increment-ms 5 is added to a per-game clock after each reply, and there is none: give --base-ms too"),
        "{out}"
    );
}

/// The file's `concurrency` above 4 games per CPU is refused at its line,
/// as the file's other settings are.
#[test]
fn too_many_games_at_a_time_in_the_file_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("j.toml"),
        format!(
            "name = \"j\"\nbots = [\n  {{ name = \"a\", command = [\"{RANDOM}\"] }},\n  {{ name = \"b\", command = [\"{RANDOM}\"] }},\n]\nconcurrency = 1000\n"
        ),
    )
    .unwrap();
    let o = arena(dir.path(), &["run", "j.toml", "--quiet", "--no-report"]);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains("j.toml:6: `concurrency` 1000: more than 4 games at a time per CPU"),
        "{said}"
    );
}

/// A league whose run was stopped after its last game, before its rating
/// tables: `arena report` and `arena status` say they are missing and
/// what writes them.
#[test]
fn report_of_a_complete_league_without_its_tables_says_what_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    kisolo_league(dir.path(), "t", ("a", RANDOM), ("b", RANDOM));
    let report = || text(&arena(dir.path(), &["report", "results/t"]));
    let status = || text(&arena(dir.path(), &["status", "results/t"]));
    assert!(!report().contains("rating tables"), "{}", report());
    assert!(!status().contains("rating tables"), "{}", status());
    std::fs::remove_file(dir.path().join("results/t/ratings.csv")).unwrap();
    let said = status();
    assert!(
        said.contains("note: league `t` has all its games but not all its rating tables"),
        "{said}"
    );
    let said = report();
    assert!(
        said.contains("note: league `t` has all its games but not all its rating tables (ratings.csv, pairs.csv, variants.csv, crosstable.csv): its run stopped after the last game, before writing them; run it again (arena run ")
            && said.contains("t.toml --quiet --no-report: it finds every game done and writes them)"),
        "{said}"
    );
}

/// An option typed after `--` (where README puts the bots) is not taken
/// for a bot: `arena play --game kisolo -- random random --seed 3` said
/// "4 players not supported", and `arena match -- A B --games 4` that
/// `--games` was no bot folder; both now name the option and say to give
/// it before `--`, and no game is played.
#[test]
fn an_option_after_the_double_dash_is_named_not_taken_for_a_bot() {
    let dir = tempfile::tempdir().unwrap();
    for (args, flag, command) in [
        (
            vec![
                "play", "--game", "kisolo", "--", "random", "random", "--seed", "3",
            ],
            "--seed",
            "play",
        ),
        (
            vec!["match", "--", RANDOM, GREEDY, "--games=4"],
            "--games=4",
            "match",
        ),
    ] {
        let o = arena(dir.path(), &args);
        let t = text(&o);
        assert!(!o.status.success(), "{t}");
        assert!(
            t.contains(&format!("`{flag}` is among the BOTs"))
                && t.contains(&format!("give {command}'s options before `--`")),
            "{t}"
        );
        assert!(!dir.path().join("results").exists(), "{t}");
    }
}

/// `arena bots` outside the repository says where bots are looked for
/// and what to give, as `match` and `play` do (it said "cannot read bots
/// folder bots: No such file or directory").
#[test]
fn bots_outside_the_repository_says_where_bots_are_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    let o = arena(dir.path(), &["bots"]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("bots: no such folder") && t.contains("give --dir PATH/TO/bots"),
        "{t}"
    );
}

/// A bot's script named as it lies in the current folder (`arena
/// check-bot my_bot.py`) is told how to run it: the command in quotes.
#[test]
fn a_script_in_the_current_folder_is_told_how_to_be_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("my_bot.py"), "print('hi')\n").unwrap();
    let o = arena(dir.path(), &["check-bot", "my_bot.py"]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("give the command in quotes, `\"python3 my_bot.py\"`"),
        "{t}"
    );
}

/// `status`, `report` and `view` given the folder that holds the leagues
/// (`results`) rather than one league's name the leagues in it.
#[test]
fn a_folder_of_leagues_names_the_leagues_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    for (league, file) in [("demo", "games.csv"), ("ladder", "league.json")] {
        std::fs::create_dir_all(results.join(league)).unwrap();
        std::fs::write(results.join(league).join(file), "").unwrap();
    }
    std::fs::create_dir_all(results.join("notes")).unwrap();
    for args in [
        &["status", "results"][..],
        &["report", "results"],
        &["view", "results", "--no-open"],
    ] {
        let o = arena(dir.path(), args);
        let t = text(&o);
        assert!(!o.status.success(), "{args:?}: {t}");
        assert!(
            t.contains("the leagues in it: demo, ladder (give one's folder, as results/demo)"),
            "{args:?}: {t}"
        );
    }
}

/// `arena serve` of a league's file (tournaments/ladder.toml is one, by
/// its name a ladder) says what the file is and which is a ladder's,
/// before it names a store, and makes none.
#[test]
fn serve_of_a_league_file_says_it_is_one_and_makes_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let file = dir.path().join("ladder.toml");
    std::fs::write(
        &file,
        format!("name = \"l\"\nbots = [\n  {{ name = \"a\", command = [\"{bot}\"] }},\n  {{ name = \"b\", command = [\"{bot}\"] }},\n]\n"),
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(dir.path())
        .args(["serve", "ladder.toml", "--add-worker", "box-1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("ladder.toml: this is not a ladder file (it has no [ladder] table): a league's file, played with `arena run ladder.toml`; a ladder's file is as tournaments/club-ladder.toml"),
        "{err}"
    );
    assert!(!err.contains("store:"), "{err}");
    assert!(!dir.path().join("results").exists(), "{err}");
}
