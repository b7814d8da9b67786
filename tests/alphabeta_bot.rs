//! The alpha-beta reference bot (issue 51) as a real process: `arena
//! match` against the random bot in every 2-player game (alpha-beta in
//! each: `--search alphabeta`), through the real referee; every game must
//! end by the rules (no illegal reply, no timeout, no crash).

use mancala_arena::results::csvio;

use crate::common;
use common::{arena, text};

const ALPHABETA: &str = env!("CARGO_BIN_EXE_alphabeta-bot");
const RANDOM: &str = env!("CARGO_BIN_EXE_random-bot");

#[test]
fn the_alphabeta_bot_plays_every_two_player_game_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let bot = format!("{ALPHABETA} --millis 20 --search alphabeta");
    let o = arena(
        dir.path(),
        &[
            "match",
            &bot,
            RANDOM,
            "--variants",
            "filo,tricala,hackaback,kisolo,diffusion",
            "--games",
            "10",
            "-j",
            "2",
            "--quiet",
            "--no-report",
            "-o",
            "out",
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let rows = csvio::read_rows(&dir.path().join("out/games.csv")).unwrap();
    assert_eq!(rows.len(), 10, "{out}");
    let mut variants: Vec<&str> = rows.iter().map(|r| r.variant.as_str()).collect();
    variants.sort();
    variants.dedup();
    assert_eq!(variants.len(), 5, "{variants:?}");
    for r in &rows {
        assert_eq!(r.offender, None, "{r:?}");
        assert!(
            !["illegal", "timeout", "stall", "crash", "bad_json", "protocol", "memory"]
                .iter()
                .any(|w| r.reason.contains(w)),
            "{r:?}"
        );
    }
    // It wins most of them: a search that is wired in, not a random one.
    let wins = rows
        .iter()
        .filter(|r| {
            let (mine, theirs) = if r.seat0.starts_with("alphabeta") {
                (r.score0, r.score1)
            } else {
                (r.score1, r.score0)
            };
            mine > theirs
        })
        .count();
    assert!(wins >= 7, "{wins} of 10 won\n{out}");
}

/// Three-player Tricala with the paranoid search (`--three paranoid`):
/// one seat-swap group of six games against the random and greedy bots.
#[test]
fn the_paranoid_search_plays_three_player_tricala_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let bot = format!("{ALPHABETA} --millis 20 --three paranoid");
    let o = arena(
        dir.path(),
        &[
            "match",
            &bot,
            RANDOM,
            env!("CARGO_BIN_EXE_greedy-bot"),
            "--variants",
            "tricala3",
            "--games",
            "1",
            "-j",
            "2",
            "--quiet",
            "--no-report",
            "-o",
            "out",
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let rows = csvio::read_rows(&dir.path().join("out/games.csv")).unwrap();
    assert_eq!(rows.len(), 6, "{out}");
    for r in &rows {
        assert_eq!((r.variant.as_str(), r.players), ("tricala", 3), "{r:?}");
        assert_eq!(r.offender, None, "{r:?}");
    }
}

/// The bot given tables with a damaged layer plays its games to their
/// end by the rules, and names the file once, not at every decision.
#[test]
fn a_damaged_table_is_named_once_and_the_bot_plays_on() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let t = tables.to_str().unwrap();
    let o = arena(
        dir.path(),
        &["tables", "build", "diffusion", "--seeds", "8", "--out", t],
    );
    assert!(o.status.success(), "{}", text(&o));
    for layer in ["n05", "n06", "n07", "n08"] {
        let path = tables.join("diffusion").join(format!("{layer}.tbl"));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[200] ^= 0x10;
        std::fs::write(&path, bytes).unwrap();
    }
    let bot = format!("{ALPHABETA} --millis 20 --search alphabeta --tables {t}");
    let o = arena(
        dir.path(),
        &[
            "match",
            &bot,
            RANDOM,
            "--variants",
            "diffusion",
            "--games",
            "2",
            "-j",
            "1",
            "--quiet",
            "--no-report",
            "-o",
            "out",
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let rows = csvio::read_rows(&dir.path().join("out/games.csv")).unwrap();
    assert_eq!(rows.len(), 2, "{out}");
    for r in &rows {
        assert_eq!(r.offender, None, "{r:?}");
        assert!(
            !["illegal", "timeout", "stall", "crash", "bad_json", "protocol", "memory"]
                .iter()
                .any(|w| r.reason.contains(w)),
            "{r:?}"
        );
    }
    let log = std::fs::read_to_string(dir.path().join("out/logs/alphabeta-rust-w0.log")).unwrap();
    let told = log.lines().filter(|l| l.starts_with("tables: ")).count();
    assert!((1..=2).contains(&told), "{told} lines of:\n{log}");
    assert!(
        log.contains("not a usable table file: checksum mismatch"),
        "{log}"
    );
}
