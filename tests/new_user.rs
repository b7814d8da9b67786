//! What a new user meets first (issue 32): dead ends and messages that
//! mislead, each reproduced with the real binary.

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
    let bot = env!("CARGO_BIN_EXE_random-bot");
    std::fs::write(
        base.join("q.toml"),
        format!("name = \"q\"\nbots = [{{ name = \"a\", command = [\"{bot}\"] }}, {{ name = \"b\", command = [\"{bot}\"] }}]\nvariants = [\"kisolo\", \"filo\"]\nrounds = 3\noutput = \"out\"\n"),
    )
    .unwrap();
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
    let bot = env!("CARGO_BIN_EXE_random-bot");
    std::fs::write(
        base.join("c.toml"),
        format!("name = \"c\"\nbots = [{{ name = \"a\", command = [\"{bot}\"] }}, {{ name = \"b\", command = [\"{bot}\"] }}]\nvariants = [\"kisolo\"]\noutput = \"out\"\n"),
    )
    .unwrap();
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
