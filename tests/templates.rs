//! The bot templates (bots/templates/, bots/sdk/python/) pass check-bot:
//! each is copied into a fresh folder, built with its own bot.toml build
//! command (by check-bot, as a league builds it) and checked on every game.
//! A template whose compiler or runtime is not on the machine is skipped,
//! with a message naming it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// True when `tool --version` (or `-version`) runs here.
fn have(tool: &str) -> bool {
    ["--version", "-version", "version"].iter().any(|flag| {
        Command::new(tool)
            .arg(flag)
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Copies the template in `folder` and runs check-bot on the copy; `None`
/// when `needs` is missing.
fn check(folder: &str, needs: &str) -> Option<String> {
    if !have(needs) {
        // Straight to the process's stderr, past the test harness's
        // capture: `cargo test` shows it next to the test's `ok`.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the {folder} template needs `{needs}`, which is not on this machine"
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot");
    copy_dir(&root().join(folder), &bot);
    let out = Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(["check-bot", "--"])
        .arg(&bot)
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{folder}:\n{text}");
    assert!(text.contains("all checks passed"), "{folder}:\n{text}");
    Some(text)
}

#[test]
fn the_c_template_passes() {
    check("bots/templates/c", "cc");
}

#[test]
fn the_cpp_template_passes() {
    check("bots/templates/cpp", "c++");
}

#[test]
fn the_java_template_passes() {
    check("bots/templates/java", "java");
}

#[test]
fn the_go_template_passes() {
    check("bots/templates/go", "go");
}

#[test]
fn the_python_helper_passes() {
    check("bots/sdk/python", "python3");
}

/// Short enough to read in one sitting.
#[test]
fn every_template_is_under_80_lines() {
    for f in [
        "bots/templates/c/bot.c",
        "bots/templates/cpp/bot.cpp",
        "bots/templates/java/Bot.java",
        "bots/templates/go/bot.go",
    ] {
        let n = std::fs::read_to_string(root().join(f))
            .unwrap()
            .lines()
            .count();
        assert!(n < 80, "{f}: {n} lines");
    }
}
