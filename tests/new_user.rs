//! What a new user meets first (issue 32): dead ends and messages that
//! mislead, each reproduced with the real binary.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn arena(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arena"));
    c.current_dir(dir).stdin(Stdio::null());
    c
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Writes `dir/NAME.toml`: league NAME of two random bots `a` and `b`, the
/// given variants, results in `dir/out`, then `extra` lines.
fn two_bot_league(dir: &Path, name: &str, variants: &str, extra: &str) {
    let bot = env!("CARGO_BIN_EXE_random-bot");
    std::fs::write(
        dir.join(format!("{name}.toml")),
        format!(
            "name = \"{name}\"\nbots = [{{ name = \"a\", command = [\"{bot}\"] }}, {{ name = \"b\", command = [\"{bot}\"] }}]\nvariants = [{variants}]\noutput = \"out\"\n{extra}"
        ),
    )
    .unwrap();
}

/// A league whose bot cannot start plays nothing and does not bind its
/// folder: the error names the league file's line and the folder the
/// command ran in, and once the file is fixed the league runs.
#[test]
fn a_league_that_never_started_does_not_block_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let league = |second: &str| {
        format!(
            "name = \"g\"\nbots = [\n  {{ name = \"r\", command = [\"{bot}\"] }},\n  {second},\n]\nvariants = [\"kisolo\"]\n"
        )
    };
    let file = base.join("g.toml");
    std::fs::write(
        &file,
        league("{ name = \"ghost\", command = [\"./no-such-binary\"] }"),
    )
    .unwrap();
    let out = arena(&base)
        .args(["run", "--quiet", "g.toml"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("g.toml:4"),
        "no line of the league file: {said}"
    );
    assert!(
        said.contains(&format!("run in {}", base.display())),
        "no working folder: {said}"
    );

    std::fs::write(
        &file,
        league(&format!("{{ name = \"ghost2\", command = [\"{bot}\"] }}")),
    )
    .unwrap();
    let out = arena(&base)
        .args(["run", "--quiet", "g.toml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the fixed league was refused: {}",
        text(&out)
    );
    let rows = std::fs::read_to_string(base.join("results/g/games.csv")).unwrap();
    assert_eq!(rows.lines().count(), 3, "{rows}");
    assert!(rows.contains("ghost2"), "{rows}");
}

/// `arena match` outside the repository: the names are not found, the
/// error says where bots/ was looked for and what to do, and no results
/// folder is left behind. In the repository, a typo gets "did you mean".
#[test]
fn match_outside_the_repository_says_where_it_looked_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let out = arena(&base)
        .args(["match", "random-rust", "greedy-rust", "--games", "2"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains(&base.join("bots").display().to_string()),
        "{said}"
    );
    assert!(said.contains("bot folder's path"), "{said}");
    assert!(
        !base.join("results").exists(),
        "a results folder was left behind"
    );

    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = arena(repo)
        .args(["match", "radnom-rust", "greedy-rust", "--games", "2"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("did you mean `random-rust`?"), "{said}");
}

/// `arena rate` of a league is a query: it prints and leaves the league's
/// tables alone unless told `--write`; a results folder is read as its
/// games.csv.
#[test]
fn rating_a_league_is_a_query_unless_told_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    two_bot_league(&base, "q", r#""kisolo", "filo""#, "rounds = 3\n");
    let out = arena(&base)
        .args(["run", "--quiet", "--no-report", "q.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let ratings = base.join("out/ratings.csv");
    let before = std::fs::read(&ratings).unwrap();

    let out = arena(&base)
        .args([
            "rate",
            "out/games.csv",
            "--anchor",
            "a=0",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("elo"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read(&ratings).unwrap(),
        before,
        "a query rewrote ratings.csv"
    );

    // A folder is read as its games.csv; --write rewrites the league's own tables.
    let out = arena(&base)
        .args(["rate", "out", "--anchor", "a=0", "--write"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_ne!(
        std::fs::read(&ratings).unwrap(),
        before,
        "--write wrote nothing"
    );
    let out = arena(&base)
        .args(["rate", "out", "--variant", "filo", "--write"])
        .output()
        .unwrap();
    assert!(
        !out.status.success() && text(&out).contains("--write"),
        "{}",
        text(&out)
    );
}

/// `arena sprt` on a match's folder tests A against B as the match gave
/// them, not in name order.
#[test]
fn sprt_on_a_match_tests_the_matchs_own_a_and_b() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    // Named so that name order is the reverse of the match's.
    let out = arena(&base)
        .args(["match", bot, "random", "--games", "4", "--quiet", "-o", "m"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let meta = std::fs::read_to_string(base.join("m/league.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    let (a, b) = (
        meta["bots"][0].as_str().unwrap(),
        meta["bots"][1].as_str().unwrap(),
    );
    let out = arena(&base)
        .args(["sprt", "m", "--elo0", "0", "--elo1", "5"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!("{a} vs {b}")),
        "not the match's order ({a}, {b}): {said}"
    );
}

/// As root, bots run as users that own nothing: a league in a folder only
/// root may enter (mktemp -d makes them 0700) is refused before any game,
/// with the folder, its mode and the fix, not a bare "could not be built".
#[test]
fn as_root_a_folder_closed_to_others_is_named_with_its_fix() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap().join("closed");
    std::fs::create_dir(&base).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
    two_bot_league(&base, "c", r#""kisolo""#, "");
    let out = arena(&base)
        .args(["run", "--quiet", "--no-report", "c.toml"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains(&format!("chmod o+rx {}", base.display())),
        "{said}"
    );
}

/// Messages that misled, each now saying what was given and what to do.
#[test]
fn messages_say_what_was_given_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let run = |args: &[&str]| {
        let out = arena(&base).args(args).output().unwrap();
        (out.status.success(), text(&out))
    };
    // A file given where a results folder is wanted: said so, not "no such
    // folder"; a league's games.csv stands for its folder.
    std::fs::write(base.join("notes.txt"), "x").unwrap();
    let (ok, said) = run(&["report", "notes.txt"]);
    assert!(
        !ok && said.contains("notes.txt is a file, not a results folder"),
        "{said}"
    );
    two_bot_league(&base, "l", r#""kisolo""#, "");
    assert!(run(&["run", "--quiet", "--no-report", "l.toml"]).0);
    let (ok, said) = run(&["report", "out/games.csv"]);
    assert!(ok, "{said}");
    assert!(base.join("out/report/index.html").is_file());

    // A folder without a bot.toml: said so, not "No such file or directory".
    std::fs::create_dir(base.join("empty")).unwrap();
    let (ok, said) = run(&["check-bot", "--", "empty"]);
    assert!(
        !ok && said.contains("empty is a folder without a bot.toml"),
        "{said}"
    );

    // A compiler that is not there: named as missing from PATH.
    let folder = base.join("gobot");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("bot.toml"),
        "name = \"gobot\"\nbuild = [\"no-such-compiler-here\", \"build\"]\ncommand = [\"./bot\"]\n",
    )
    .unwrap();
    let out = arena(&base)
        .args(["check-bot", "--", "gobot"])
        .env("XDG_CACHE_HOME", base.join("cache"))
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("`no-such-compiler-here` was not found on PATH"),
        "{said}"
    );

    // A negative number is a bad value of its flag, not a flag of its own.
    let (ok, said) = run(&["run", "l.toml", "--rounds", "-1"]);
    assert!(
        !ok && said.contains("--rounds") && !said.contains("-- -1"),
        "{said}"
    );
    let (ok, said) = run(&["run", "l.toml", "--decision-ms", "-5"]);
    assert!(
        !ok && said.contains("--decision-ms") && said.contains("-5 is negative"),
        "{said}"
    );
    // Times no bot can keep (milliseconds taken for seconds?) are warned
    // of before the games, whatever the games then give.
    two_bot_league(&base, "short", r#""kisolo""#, "");
    let (_, said) = run(&[
        "run",
        "short.toml",
        "-o",
        "short-out",
        "--quiet",
        "--no-report",
        "--startup-ms",
        "1",
        "--decision-ms",
        "2",
        "--watchdog-ms",
        "300",
    ]);
    for w in [
        "warning: startup_ms 1 (--startup-ms): a bot has 1 ms to start",
        "warning: decision_ms 2 (--decision-ms): 2 ms a decision",
        "warning: watchdog_ms 300 (--watchdog-ms): a whole game has 300 ms",
    ] {
        assert!(said.contains(w), "{w}: {said}");
    }

    // A hello without an author reads as such, not "by  ".
    let quiet = base.join("anon.py");
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-python/bot.py"),
    )
    .unwrap();
    let anon = script.replace("\"author\"", "\"unused\"");
    assert_ne!(anon, script, "the random bot's hello names no author field");
    std::fs::write(&quiet, anon).unwrap();
    let (_, said) = run(&["check-bot", "--game", "kisolo", "--", "python3", "anon.py"]);
    assert!(!said.contains("by  "), "{said}");
    assert!(said.contains("(no author in its hello)"), "{said}");
}

/// A match decided by its SPRT is "decided" in `arena status` and in its
/// report, with the verdict, LLR and bounds and no resume hint; a match
/// with games left is resumed by its own `arena match` command, not
/// `arena run FILE`.
#[test]
fn status_tells_a_decided_match_and_how_to_resume_one() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let greedy = Path::new(env!("CARGO_BIN_EXE_greedy-bot"))
        .to_str()
        .unwrap()
        .to_string();
    let out = arena(&base)
        .args([
            "match",
            &greedy,
            "random",
            "--sprt",
            "elo0=0,elo1=20",
            "--quiet",
            "--no-report",
            "-o",
            "m",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let out = arena(&base).args(["status", "m"]).output().unwrap();
    let said = text(&out);
    assert!(said.contains(" decided "), "{said}");
    assert!(
        said.contains("accepted after") && said.contains("LLR") && said.contains("bounds"),
        "{said}"
    );
    assert!(!said.contains("resume it"), "{said}");
    // A row cut short in a copy: the status names it (no verdict can be
    // told), rather than failing on it.
    let copy = base.join("m-copy");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["league.json", "games.csv"] {
        std::fs::copy(base.join("m").join(f), copy.join(f)).unwrap();
    }
    let csv = std::fs::read_to_string(copy.join("games.csv")).unwrap();
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    lines[2] = lines[2].split(',').take(3).collect::<Vec<_>>().join(",");
    std::fs::write(copy.join("games.csv"), lines.join("\n") + "\n").unwrap();
    let out = arena(&base).args(["status", "m-copy"]).output().unwrap();
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("games.csv:3") && said.contains("a resume stops on this row"),
        "{said}"
    );
    // The report says the same: the verdict, and no "N games of 100000".
    let out = arena(&base).args(["report", "m"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let page = std::fs::read_to_string(base.join("m/report/index.html")).unwrap();
    assert!(page.contains("its SPRT decided"), "{page}");
    assert!(
        page.contains("accepted after") && page.contains("LLR") && page.contains("bounds"),
        "the report shows no verdict"
    );
    let sub = page.split(r#"<p class="sub">"#).nth(1).unwrap_or_default();
    let sub = sub.split("</p>").next().unwrap_or_default();
    assert!(
        !sub.contains(" games of "),
        "the report shows a decided match as unfinished: {sub}"
    );

    let random = env!("CARGO_BIN_EXE_random-bot");
    let out = arena(&base)
        .args([
            "match",
            random,
            "random",
            "--games",
            "4",
            "--quiet",
            "--no-report",
            "-o",
            "p",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let csv = base.join("p/games.csv");
    let all = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = all.lines().take(3).collect();
    std::fs::write(&csv, kept.join("\n") + "\n").unwrap();
    let out = arena(&base).args(["status", "p"]).output().unwrap();
    let said = text(&out);
    assert!(said.contains(" stopped "), "{said}");
    assert!(
        said.contains(&format!("arena match {random} random --games 4")),
        "{said}"
    );
    assert!(!said.contains("arena run FILE"), "{said}");
}

/// `arena status --json` of a match its SPRT decided says so, as the text
/// does: the shard's state is `decided`, the league is `finished`, and
/// `sprt` carries the verdict, LLR and bounds (issue 50, 1): a script
/// must not restart a finished match.
#[test]
fn status_json_carries_the_sprt_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let greedy = env!("CARGO_BIN_EXE_greedy-bot");
    let out = arena(&base)
        .args([
            "match",
            greedy,
            "random",
            "--sprt",
            "elo0=0,elo1=20",
            "--quiet",
            "--no-report",
            "-o",
            "m",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let out = arena(&base)
        .args(["status", "m", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["shards"][0]["state"], "decided", "{v:#}");
    assert_eq!(v["finished"], true, "{v:#}");
    let sprt = &v["sprt"];
    assert_eq!(sprt["decided"], true, "{v:#}");
    assert_eq!(sprt["decision"], "H1", "{v:#}");
    let llr = sprt["llr"].as_f64().unwrap();
    let upper = sprt["upper_bound"].as_f64().unwrap();
    assert!(llr >= upper, "{v:#}");
    assert!(sprt["games"].as_u64().unwrap() > 0, "{v:#}");
    assert!(v["shards"][0]["done"].as_u64().unwrap() < v["shards"][0]["total"].as_u64().unwrap());
}

/// The HTML report says what its numbers mean (issue 50, 3): the
/// standings explain pairwise W-D-L (a 3-player game is two results, so
/// a bot's W+D+L exceeds its games), and a bot's page explains its
/// columns and never leaves a pentanomial Elo cell blank: it says why
/// there is none.
#[test]
fn the_report_explains_pairwise_wdl_and_missing_pentanomial_elo() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    std::fs::write(
        base.join("t.toml"),
        format!(
            "name = \"t\"\nbots = [{{ name = \"a\", command = [\"{bot}\"] }}, {{ name = \"b\", command = [\"{bot}\"] }}, {{ name = \"c\", command = [\"{bot}\"] }}]\nvariants = [\"tricala3\", \"kisolo\"]\nrounds = 1\noutput = \"out\"\n"
        ),
    )
    .unwrap();
    let out = arena(&base)
        .args(["run", "--quiet", "t.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let page = std::fs::read_to_string(base.join("out/report/index.html")).unwrap();
    assert!(
        page.contains("<b>Pairwise W-D-L</b> counts one result per opponent per game")
            && page.contains("a 3-player game two"),
        "the standings do not explain pairwise W-D-L"
    );
    let mut seen = 0;
    for e in std::fs::read_dir(base.join("out/report/bots")).unwrap() {
        let js = std::fs::read_to_string(e.unwrap().path()).unwrap();
        let json = js
            .trim_end()
            .strip_prefix("arenaBot(")
            .and_then(|j| j.strip_suffix(");"))
            .expect("a bot's file is arenaBot(JSON);");
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let html = v["html"].as_str().unwrap();
        assert!(
            html.contains("<b>Pentanomial Elo</b>") && html.contains("the cell says why"),
            "a bot's page does not explain its columns: {html}"
        );
        for o in v["opponents"].as_array().unwrap() {
            let cell = o[5].as_str().unwrap();
            assert!(!cell.is_empty(), "a blank pentanomial Elo cell: {o}");
            seen += 1;
        }
    }
    assert!(seen > 0, "no opponent rows");
    // The 3-player games have no seat-swap pairs: said in the cell.
    let bots = std::fs::read_dir(base.join("out/report/bots"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(bots.contains("none: no complete seat-swap pair"), "{bots}");
}

/// A match of one seat-swap pair has no interval: its head-to-head line
/// says so and why, not `Elo -0.0 +/- 0.0` (issue 50, 9).
#[test]
fn one_pair_gives_no_interval_rather_than_a_zero_width_one() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    // Seeds until one splits the pair (a win each: Elo 0 from one pair).
    let mut split = None;
    for seed in 1..=20 {
        let seed = seed.to_string();
        let folder = format!("m{seed}");
        let out = arena(&base)
            .args([
                "match",
                bot,
                "random",
                "--games",
                "2",
                "--variants",
                "kisolo",
            ])
            .args(["--seed", &seed, "--quiet", "--no-report", "-o", &folder])
            .output()
            .unwrap();
        let said = text(&out);
        assert!(out.status.success(), "{said}");
        let line = said
            .lines()
            .find(|l| l.contains(" vs random: 2 games"))
            .unwrap_or_else(|| panic!("no head-to-head line: {said}"))
            .to_string();
        assert!(!line.contains("+/- 0.0"), "{line}");
        if line.ends_with("0-0-1-0-0") {
            split = Some(line);
            break;
        }
    }
    let line = split.expect("no seed of 20 split the pair");
    assert!(
        line.contains("Elo 0.0 (no 95% interval: one seat-swap pair is too few)"),
        "{line}"
    );
}

/// A league file outside the repository: its bot names are looked up
/// beside the file, and the error says so and names `bots_dir`; with
/// `bots_dir` set, a misspelt bot gets "did you mean" (issue 50, 4).
#[test]
fn a_league_file_outside_the_repository_points_to_bots_dir() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::write(
        base.join("my.toml"),
        "name = \"my\"\nbots = [\"random-python\", \"random-rust\"]\nvariants = [\"kisolo\"]\n",
    )
    .unwrap();
    let out = arena(&base)
        .args(["run", "--quiet", "my.toml"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("my.toml:2"), "{said}");
    assert!(
        said.contains("bots_dir = \"/path/to/mancala-arena/bots\"")
            && said.contains("relative to the file")
            && said.contains(&base.join("bots").display().to_string()),
        "no hint of bots_dir: {said}"
    );

    let repo_bots = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots");
    std::fs::write(
        base.join("typo.toml"),
        format!(
            "name = \"typo\"\nbots_dir = \"{}\"\nbots = [\"radnom-rust\", \"greedy-rust\"]\nvariants = [\"kisolo\"]\n",
            repo_bots.display()
        ),
    )
    .unwrap();
    let out = arena(&base)
        .args(["run", "--quiet", "typo.toml"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("did you mean `random-rust`?"), "{said}");
    assert!(!base.join("results").exists(), "a results folder was left");
}

/// A bot that answered its first requests and then timed out (a search
/// starved of CPU) is told what the referee saw, nothing on stdout this
/// turn and its stderr, and that it was still thinking: not to flush
/// stdout, which it evidently does (issue 50, 5).
#[test]
fn a_timeout_says_what_the_referee_saw_before_advising() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let staller = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/broken/misbehave.py");
    // Tricala: its set-up gives each seat 9 decisions before any end, so
    // the staller reaches its third request in every game (a Kisolo game
    // of its random moves could end before it).
    std::fs::write(
        base.join("s.toml"),
        format!(
            "name = \"s\"\nbots = [{{ name = \"staller\", command = [\"python3\", \"{}\", \"stall_later\"] }}, {{ name = \"r\", command = [\"{bot}\"] }}]\nvariants = [\"tricala\"]\nrounds = 1\noutput = \"out\"\n[time_control]\ndecision_ms = 4000\n",
            staller.display()
        ),
    )
    .unwrap();
    let out = arena(&base)
        .args(["run", "--no-report", "s.toml"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let forfeit = said
        .lines()
        .find(|l| l.starts_with("forfeit:") && l.contains("staller"))
        .unwrap_or_else(|| panic!("no forfeit line: {said}"));
    assert!(
        forfeit.contains("the referee saw nothing on stdout this turn and 9 bytes on stderr")
            && forfeit.contains("3 earlier lines (hello and replies) arrived on stdout")
            && forfeit.contains("still thinking"),
        "{forfeit}"
    );
    assert!(!forfeit.contains("flush"), "{forfeit}");
}

/// Ctrl-C during a league: one friendly line, no raw log line before it
/// (`... WARN mancala_arena::league::runner: interrupted ...`), and with
/// `--quiet` only the closing line that says how to resume (issue 50, 6).
#[test]
fn ctrl_c_prints_no_raw_log_line() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let hanger = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/broken/misbehave.py");
    for quiet in [false, true] {
        // A word of its own on the hanging bot's command line finds it.
        let token = format!("ctrl-c-{}-{quiet}", std::process::id());
        let file = format!("h{quiet}.toml");
        std::fs::write(
            base.join(&file),
            format!(
                "name = \"h\"\nbots = [{{ name = \"hanger\", command = [\"python3\", \"{}\", \"hang\", \"{token}\"] }}, {{ name = \"r\", command = [\"{bot}\"] }}]\nvariants = [\"kisolo\"]\nrounds = 1\noutput = \"out-{quiet}\"\n[time_control]\ndecision_ms = 120000\n",
                hanger.display()
            ),
        )
        .unwrap();
        let log = base.join(format!("log-{quiet}.txt"));
        let mut args = vec!["run", "--no-report", file.as_str(), "--log"];
        args.push(log.to_str().unwrap());
        if quiet {
            args.push("--quiet");
        }
        let child = arena(&base)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Until a worker started the hanging bot (the league's log says
        // so) and it runs: its games are then in flight.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("started hanger on worker"))
            || common::processes_with(&token).is_empty()
        {
            assert!(std::time::Instant::now() < until, "the bot never started");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // SAFETY: signals the child this test spawned and has not reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(130), "{err}");
        assert!(
            !err.contains("WARN") && !err.contains("mancala_arena::"),
            "a raw log line: {err}"
        );
        let friendly = err
            .matches("interrupted: stopping, unfinished games will rerun on resume")
            .count();
        assert_eq!(friendly, usize::from(!quiet), "{err}");
        assert!(
            err.contains("Run the same command again to resume."),
            "{err}"
        );
    }
}

/// `arena status` of a stopped league gives the command it was started
/// with, from any folder: the file's absolute path and the flags given
/// (`--rounds 3`); the same run without `--rounds` is refused naming the
/// setting and its flag; the hint's command resumes it (issue 50, 7).
#[test]
fn the_resume_hint_is_the_command_the_league_was_started_with() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    two_bot_league(&base, "r", r#""kisolo""#, "");
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = arena(&elsewhere)
        .args([
            "run",
            "../r.toml",
            "--rounds",
            "3",
            "--quiet",
            "--no-report",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Stopped with games left: the last rows gone.
    let csv = base.join("out/games.csv");
    let all = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = all.lines().take(3).collect();
    std::fs::write(&csv, kept.join("\n") + "\n").unwrap();

    let command = format!(
        "arena run {} --rounds 3 --quiet --no-report",
        base.join("r.toml").display()
    );
    let out = arena(&base).args(["status", "out"]).output().unwrap();
    let said = text(&out);
    assert!(
        said.contains(&format!(
            "resume it (games left and no run holds it): {command}\n"
        )),
        "{said}"
    );
    let out = arena(&base)
        .args(["status", "out", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["shards"][0]["start"], command.as_str(), "{v:#}");
    assert_eq!(v["finished"], false, "{v:#}");

    // Without --rounds: refused, naming the setting and its flag.
    let out = arena(&base)
        .args(["run", "r.toml", "--quiet", "--no-report"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("`rounds` was 3, now 1") && said.contains("--rounds 3"),
        "{said}"
    );
    assert!(said.contains(&command), "{said}");

    // The hint's command, run from yet another folder, resumes it.
    let words: Vec<&str> = command.split(' ').skip(1).collect();
    let out = arena(&elsewhere).args(&words).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), 7, "{rows}");
    let out = arena(&base).args(["status", "out"]).output().unwrap();
    assert!(!text(&out).contains("resume it"), "{}", text(&out));
}

/// `--rounds` has one range, said the same way for every bad value (not
/// clap's `not in 0..=4294967295` for -1 and the league's `1 and 1000000`
/// for 0), and its help says it too (issue 50, 8).
#[test]
fn rounds_has_one_range_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    two_bot_league(&base, "l", r#""kisolo""#, "");
    for bad in ["-1", "0", "1000001", "5000000000"] {
        let out = arena(&base)
            .args(["run", "l.toml", "--quiet", "--rounds", bad])
            .output()
            .unwrap();
        let said = text(&out);
        assert!(!out.status.success(), "{said}");
        assert!(
            said.contains(&format!(
                "--rounds: must be between 1 and 1000000, got {bad}"
            )),
            "{bad}: {said}"
        );
        assert!(!base.join("out").exists(), "{bad}: a results folder");
    }
    let out = arena(&base).args(["run", "--help"]).output().unwrap();
    assert!(
        text(&out).contains("Seat-swap groups per pairing and variant, 1 to 1000000"),
        "{}",
        text(&out)
    );
}

/// Every subcommand's help, and every sub-subcommand's (`arena tables
/// build`), ends with two or three examples, as ripgrep's and cargo's do
/// (issue 50, 10); those that only read run as shown.
#[test]
fn every_subcommand_help_ends_with_examples() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The commands a help text lists under `Commands:` (none: a leaf).
    let listed = |help: &str| -> Vec<String> {
        help.split("Commands:")
            .nth(1)
            .map(|rest| {
                rest.lines()
                    .skip(1)
                    .take_while(|l| !l.trim().is_empty())
                    .filter_map(|l| l.split_whitespace().next())
                    .filter(|c| *c != "help")
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let out = arena(repo).arg("--help").output().unwrap();
    let top = String::from_utf8_lossy(&out.stdout).to_string();
    let mut commands: Vec<Vec<String>> = listed(&top).into_iter().map(|c| vec![c]).collect();
    assert!(commands.len() >= 17, "{top}");
    let mut checked = 0;
    while let Some(path) = commands.pop() {
        let c = path.join(" ");
        for flag in ["-h", "--help"] {
            let out = arena(repo).args(&path).arg(flag).output().unwrap();
            let help = String::from_utf8_lossy(&out.stdout).to_string();
            if flag == "--help" {
                for sub in listed(&help) {
                    commands.push(path.iter().cloned().chain([sub]).collect());
                }
            }
            let examples = help
                .rsplit_once("\nExamples:\n")
                .unwrap_or_else(|| panic!("`arena {c} {flag}` ends without examples:\n{help}"))
                .1;
            let lines: Vec<&str> = examples.lines().collect();
            assert!(
                (2..=3).contains(&lines.len())
                    && lines
                        .iter()
                        .all(|l| l.starts_with(&format!("  arena {c} ")) && l.contains(" # ")),
                "`arena {c} {flag}`: {examples}"
            );
            if c == "state" {
                for l in &lines {
                    let cmd = l.split(" # ").next().unwrap().trim();
                    let out = Command::new("sh")
                        .arg("-c")
                        .arg(cmd.replacen("arena", env!("CARGO_BIN_EXE_arena"), 1))
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{cmd}: {}", text(&out));
                }
            }
        }
        checked += 1;
    }
    // `arena tables build` and `arena tables coverage` among them.
    assert!(checked >= 20, "{checked} helps checked");
}

/// A bot given to `arena match` as a command is named after the name in
/// its hello, not its script: two `bot.py` are `alice` and `bob`, not
/// `bot` and `bot-2` (issue 50, 11).
#[test]
fn a_command_bot_is_named_by_its_hello() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-python/bot.py"),
    )
    .unwrap();
    for who in ["alice", "bob"] {
        let renamed = script.replace(
            "\"name\": \"random-python\"",
            &format!("\"name\": \"{who}\""),
        );
        assert_ne!(
            renamed, script,
            "the random bot's hello has no name to change"
        );
        std::fs::create_dir(base.join(who)).unwrap();
        std::fs::write(base.join(who).join("bot.py"), renamed).unwrap();
    }
    let out = arena(&base)
        .args([
            "match",
            "python3 alice/bot.py",
            "python3 bob/bot.py",
            "--games",
            "2",
            "--variants",
            "kisolo",
            "--quiet",
            "--no-report",
        ])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("alice vs bob: 2 games"), "{said}");
    let rows = std::fs::read_to_string(base.join("results/match-alice-vs-bob/games.csv")).unwrap();
    assert!(
        rows.contains(",alice,bob,") || rows.contains(",bob,alice,"),
        "{rows}"
    );
}

/// README's test times name the longest test binary on a busy machine,
/// tests/fairness.rs, and say what a busy machine takes; every test
/// binary README names exists (issue 50, 12).
#[test]
fn readme_says_what_a_busy_machine_takes() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let times = readme
        .split("How long the tests take")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("README's paragraph on how long the tests take");
    assert!(times.contains("On a busy machine"), "{times}");
    assert!(times.contains("`tests/fairness.rs`"), "{times}");
    for word in readme.split(|c: char| c.is_whitespace() || "`(),;".contains(c)) {
        if let Some(name) = word.strip_prefix("tests/").filter(|n| n.ends_with(".rs")) {
            assert!(
                repo.join("tests").join(name).is_file(),
                "README names tests/{name}, which is not there"
            );
        }
    }
}

/// Every league file shipped in tournaments/ runs as its comment says
/// (`cargo run --release -- run tournaments/NAME.toml`): its bots build
/// and start, and it plays without a forfeit. Cut to one variant, one
/// round and short games, so that it stays quick; the ladder service's
/// files (`[ladder]`) are `arena serve`'s, not run here. (Found so:
/// `tournaments/ladder.toml`'s search bot had a `cargo build` of its own,
/// which failed in the sandbox.)
#[test]
fn every_league_file_shipped_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let mut ran = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(root.join("tournaments"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for file in files {
        let body = std::fs::read_to_string(&file).unwrap();
        if body.lines().any(|l| l.trim() == "[ladder]") {
            continue;
        }
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let out_dir = tmp.path().join(&name);
        // Without node, the JavaScript bot is left out, as the run's own
        // error says to.
        let t = mancala_arena::league::config::Tournament::load(&file).unwrap();
        let js = |b: &&mancala_arena::league::config::BotSpec| {
            b.command.first().is_some_and(|c| c == "node")
        };
        let bots: Vec<&str> = match t.bots.iter().any(|b| js(&b)) && !crate::common::has_node() {
            true => t
                .bots
                .iter()
                .filter(|b| !js(b))
                .map(|b| b.name.as_str())
                .collect(),
            false => Vec::new(),
        };
        let out = arena(root)
            .arg("run")
            .arg(&file)
            .args(match bots.is_empty() {
                true => Vec::new(),
                false => vec!["--bots".to_string(), bots.join(",")],
            })
            .args([
                "--variants",
                "hackaback",
                "--rounds",
                "1",
                "--openings",
                "1",
            ])
            .args(["--max-plies", "12", "--no-report", "--quiet", "--output"])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: {}", file.display(), text(&out));
        let rows = mancala_arena::results::csvio::read_rows(&out_dir.join("games.csv")).unwrap();
        assert!(!rows.is_empty(), "{}: no games", file.display());
        for r in &rows {
            assert!(
                r.offender.is_none(),
                "{}: {} forfeited ({})",
                file.display(),
                r.game_id,
                r.reason
            );
        }
        ran.push(name);
    }
    for name in ["demo", "ladder", "reference-bots"] {
        assert!(
            ran.iter().any(|n| n == name),
            "{name}.toml was not run: {ran:?}"
        );
    }
}

/// The bots written out in protocol.md (its shortest versions, Python and
/// JavaScript) pass `arena check-bot` at a league's time, as a bot author
/// copying one expects: they are read from the page, not from bots/.
#[test]
fn the_bots_written_out_in_protocol_md_pass_check_bot() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol.md")).unwrap();
    let block = |fence: &str, starts: &str| -> String {
        let at = page
            .find(&format!("```{fence}\n{starts}"))
            .unwrap_or_else(|| panic!("no {fence} bot in protocol.md"));
        let body = &page[at + fence.len() + 4..];
        body[..body.find("```").unwrap()].to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut bots = vec![("bot.py", "python3", block("python", "import json"))];
    if Command::new("node").arg("--version").output().is_ok() {
        bots.push(("bot.js", "node", block("js", "const rl")));
    }
    for (file, interpreter, code) in bots {
        std::fs::write(dir.path().join(file), code).unwrap();
        let out = arena(dir.path())
            .args(["check-bot", "--timeout-ms", "2000", "--", interpreter, file])
            .output()
            .unwrap();
        let said = text(&out);
        assert!(
            out.status.success() && said.contains("all checks passed"),
            "{file}: {said}"
        );
    }
}
