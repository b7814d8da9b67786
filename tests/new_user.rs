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
