//! `arena match --openings-file`, end to end: the real binary and random
//! bots; every seat-swap group plays its variant's book line from both
//! seats, a bad book stops the match before any game, a changed book is
//! refused on resume.

use mancala_arena::engine::Variant;
use mancala_arena::results::{csvio, GameRow};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common;
use common::{arena, book_line as line, text};

/// The only results folder under `dir`/results.
fn results_dir(dir: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

const MATCH: &[&str] = &[
    "match",
    "random",
    "random",
    "--variants",
    "kisolo,filo",
    "--games",
    "8",
    "--openings-file",
    "book.txt",
    "-j",
    "2",
    "--quiet",
    "--no-report",
];

/// Three Kisolo lines for its two groups (the first two played), one Filo
/// line for its two (played twice): each group's games, one from each seat
/// order, open with their line.
#[test]
fn each_group_plays_its_variant_s_book_line_from_both_seats() {
    let dir = tempfile::tempdir().unwrap();
    let kisolo: Vec<String> = (0..3).map(|i| line(Variant::Kisolo, i, 2 + i)).collect();
    let filo = line(Variant::Filo, 1, 3);
    let book = format!(
        "# a small book\nkisolo: {}\n\nfilo: {filo}   # the only one\nKISOLO: {}\nkisolo: {}\n",
        kisolo[0], kisolo[1], kisolo[2]
    );
    std::fs::write(dir.path().join("book.txt"), book).unwrap();
    let o = arena(dir.path(), MATCH);
    assert!(o.status.success(), "{}", text(&o));
    let out = results_dir(dir.path());
    let rows = csvio::read_rows(&out.join("games.csv")).unwrap();
    assert_eq!(rows.len(), 8);
    let mut groups: BTreeMap<String, Vec<&GameRow>> = BTreeMap::new();
    for r in &rows {
        groups.entry(r.group.clone()).or_default().push(r);
    }
    let want: BTreeMap<String, String> = [
        ("r001-kisolo-p000", &kisolo[0]),
        ("r002-kisolo-p000", &kisolo[1]),
        ("r001-filo-p000", &filo),
        ("r002-filo-p000", &filo),
    ]
    .into_iter()
    .map(|(g, l)| (g.to_string(), l.clone()))
    .collect();
    assert_eq!(
        groups.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (group, games) in &groups {
        assert_eq!(games.len(), 2, "{group}");
        assert_ne!(games[0].seat0, games[1].seat0, "{group}: both seat orders");
        for g in games {
            assert_eq!(g.opening, want[group], "{}", g.game_id);
        }
    }

    // The same command again: the same league, nothing left to play.
    let again = arena(dir.path(), MATCH);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(csvio::read_rows(&out.join("games.csv")).unwrap().len(), 8);

    // Another book (one line fewer) is another schedule: refused.
    let fewer = std::fs::read_to_string(dir.path().join("book.txt"))
        .unwrap()
        .replace(&format!("kisolo: {}\n", kisolo[2]), "");
    std::fs::write(dir.path().join("book.txt"), fewer).unwrap();
    let changed = arena(dir.path(), MATCH);
    let said = text(&changed);
    assert!(!changed.status.success(), "{said}");
    assert!(said.contains("openings book"), "{said}");
    assert_eq!(csvio::read_rows(&out.join("games.csv")).unwrap().len(), 8);
}

/// An illegal move stops the match before anything is written, naming the
/// book's line, the move and the legal ones.
#[test]
fn a_book_with_an_illegal_move_plays_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let book = format!(
        "kisolo: {}\n# filo next\nfilo: {} QQ\n",
        line(Variant::Kisolo, 0, 2),
        line(Variant::Filo, 0, 2)
    );
    std::fs::write(dir.path().join("book.txt"), book).unwrap();
    let o = arena(dir.path(), MATCH);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains("book.txt:3: move 3 `QQ` is not legal here; legal: "),
        "{said}"
    );
    assert!(!dir.path().join("results").exists(), "{said}");

    // A variant of the match with no line in the book.
    std::fs::write(
        dir.path().join("book.txt"),
        format!("kisolo: {}\n", line(Variant::Kisolo, 0, 2)),
    )
    .unwrap();
    let o = arena(dir.path(), MATCH);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains("book.txt: no line for variant `filo`"),
        "{said}"
    );
    assert!(!dir.path().join("results").exists(), "{said}");
}

/// A league file's book is its folder's; `openings_order = "random"` deals
/// the lines in an order drawn from the seed, the same on every run, and
/// `openings = 1` adds one random decision after each line.
#[test]
fn a_league_file_s_book_in_random_order_is_the_same_for_the_same_seed() {
    let dir = tempfile::tempdir().unwrap();
    let leagues = dir.path().join("tournaments");
    std::fs::create_dir(&leagues).unwrap();
    let lines: Vec<String> = (0..4).map(|i| line(Variant::Kisolo, i, 1 + i)).collect();
    let book: String = lines.iter().map(|l| format!("kisolo: {l}\n")).collect();
    std::fs::write(leagues.join("book.txt"), book).unwrap();
    let bot = env!("CARGO_BIN_EXE_random-bot");
    let league = leagues.join("t.toml");
    std::fs::write(
        &league,
        format!(
            r#"
name = "t"
seed = 5
bots = [{{ name = "a", command = ["{bot}"] }}, {{ name = "b", command = ["{bot}"] }}]
variants = ["kisolo"]
rounds = 8
openings = 1
openings_file = "book.txt"
openings_order = "random"
concurrency = 2
"#
        ),
    )
    .unwrap();
    let openings = |out: &str| -> BTreeMap<String, String> {
        let o = arena(
            dir.path(),
            &[
                "run",
                "tournaments/t.toml",
                "--quiet",
                "--no-report",
                "-o",
                out,
            ],
        );
        assert!(o.status.success(), "{}", text(&o));
        let rows = csvio::read_rows(&dir.path().join(out).join("games.csv")).unwrap();
        assert_eq!(rows.len(), 16);
        rows.into_iter().map(|r| (r.game_id, r.opening)).collect()
    };
    let a = openings("a");
    assert_eq!(a, openings("b"), "the same seed, the same openings");
    // Each group's line is one of the book's, then one random decision;
    // 8 groups over 4 lines: each line twice.
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    for (id, opening) in &a {
        let moves: Vec<&str> = opening.split(' ').collect();
        let (book_part, _) = moves.split_at(moves.len() - 1);
        let book_part = book_part.join(" ");
        assert!(lines.contains(&book_part), "{id}: {opening}");
        if id.ends_with("-o0") {
            *used.entry(book_part).or_default() += 1;
        }
    }
    assert!(used.values().all(|&n| n == 2), "{used:?}");
    assert_eq!(used.len(), 4);
}
