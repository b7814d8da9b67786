//! The openings book (`openings_file`, `--openings-file`): a text file of
//! openings, one a line, `VARIANT: MOVE MOVE ...` (docs/league.md). Read,
//! replayed by the engine and laid out per league variant here, before any
//! game is played.

use super::spec::{parse_variant, VariantSpec};
use crate::engine::Game;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// In which order a variant's lines go to its seat-swap groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BookOrder {
    /// File order: group k of a variant plays its line k mod len.
    #[default]
    Sequential,
    /// File order shuffled by the league's seed (per variant).
    Random,
}

impl BookOrder {
    pub fn name(self) -> &'static str {
        match self {
            BookOrder::Sequential => "sequential",
            BookOrder::Random => "random",
        }
    }
}

impl std::str::FromStr for BookOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "sequential" => Ok(BookOrder::Sequential),
            "random" => Ok(BookOrder::Random),
            other => Err(format!("expected `sequential` or `random`, got `{other}`")),
        }
    }
}

/// A problem with an openings file, naming the file and, for a line's, the
/// line.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error("cannot read openings file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {why}")]
    Line {
        path: PathBuf,
        line: usize,
        why: String,
    },
    #[error("{path}: {why}")]
    File { path: PathBuf, why: String },
}

/// One opening as written: its line number, variant name and moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookLine {
    pub line: usize,
    pub variant: String,
    pub moves: Vec<String>,
}

/// A book checked against a league: each league variant's lines in the
/// order its groups play them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    pub path: PathBuf,
    pub order: BookOrder,
    /// By index into `Tournament::variants`: the lines, already in `order`.
    pub lines: Vec<Vec<Vec<String>>>,
    /// A hash of the league's lines in file order (comments, blank lines
    /// and other variants' lines left out).
    pub hash: String,
    /// The file's text, as read: what a ladder sends its workers, who
    /// cannot read the organiser's files.
    pub text: String,
}

impl Book {
    /// Reads the file at `path`, checks every line with the engine and lays
    /// the lines out for `variants` (see [`Book::new`]).
    pub fn load(
        path: &Path,
        order: BookOrder,
        variants: &[VariantSpec],
        max_plies: u32,
        seed: u64,
    ) -> Result<Book, BookError> {
        let src = crate::text::read_utf8(path).map_err(|source| BookError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Book::new(path, &src, order, variants, max_plies, seed)
    }

    /// Parses `text` (the file at `path`), checks its lines (each replayed
    /// from its variant's start under the league's settings: legal, and
    /// not ending the game) and assigns them to the league's variants. A
    /// line whose name matches no league variant is checked under the
    /// variant's defaults and left out; a league variant with no line is
    /// an error.
    pub fn new(
        path: &Path,
        text: &str,
        order: BookOrder,
        variants: &[VariantSpec],
        max_plies: u32,
        seed: u64,
    ) -> Result<Book, BookError> {
        let lines = parse(path, text)?;
        let at = |line: usize, why: String| BookError::Line {
            path: path.to_path_buf(),
            line,
            why,
        };
        if lines.is_empty() {
            return Err(BookError::File {
                path: path.to_path_buf(),
                why: "no openings (every line is blank or a comment)".into(),
            });
        }
        let mut per_variant: Vec<Vec<Vec<String>>> = vec![Vec::new(); variants.len()];
        for l in lines {
            let targets: Vec<usize> = (0..variants.len())
                .filter(|&i| names(&l.variant, &variants[i]))
                .collect();
            if targets.is_empty() {
                let spec = parse_variant(&l.variant).map_err(|e| at(l.line, e))?;
                replay(&spec, max_plies, &l.moves).map_err(|e| at(l.line, e))?;
            }
            for i in targets {
                replay(&variants[i], max_plies, &l.moves).map_err(|e| {
                    at(l.line, format!("{} (variant `{}`)", e, variants[i].label()))
                })?;
                per_variant[i].push(l.moves.clone());
            }
        }
        if let Some(i) = per_variant.iter().position(Vec::is_empty) {
            return Err(BookError::File {
                path: path.to_path_buf(),
                why: format!(
                    "no line for variant `{}`, which the league plays: add lines `{}: MOVE ...` or leave the variant out of the league",
                    variants[i].label(),
                    variants[i].label()
                ),
            });
        }
        let mut h = Sha256::new();
        for (v, ls) in variants.iter().zip(&per_variant) {
            for l in ls {
                h.update(format!("{}: {}\n", v.label(), l.join(" ")).as_bytes());
            }
        }
        let hash: String = h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if order == BookOrder::Random {
            for (v, ls) in variants.iter().zip(per_variant.iter_mut()) {
                *ls = shuffled(ls, seed, &v.label());
            }
        }
        Ok(Book {
            path: path.to_path_buf(),
            order,
            lines: per_variant,
            hash,
            text: text.to_string(),
        })
    }

    /// The line of the `group`-th seat-swap group (counted from 0 over the
    /// whole schedule) of variant `variant`.
    pub fn line(&self, variant: usize, group: usize) -> &[String] {
        match self.lines.get(variant) {
            Some(ls) if !ls.is_empty() => &ls[group % ls.len()],
            _ => &[],
        }
    }

    /// What of the book decides the schedule's openings: its lines' hash
    /// and the order.
    pub fn describe(&self) -> String {
        format!("{} {}", self.hash, self.order.name())
    }
}

/// Whether the book's variant name `name` means league variant `v`: its
/// label or key (`tricala-3p`, a table's `name`), or a name the league
/// file accepts for the same game and player count when `v` has no options.
fn names(name: &str, v: &VariantSpec) -> bool {
    let name = name.trim();
    if name.eq_ignore_ascii_case(&v.label())
        || (v.players == 2 && name.eq_ignore_ascii_case(&v.key))
    {
        return true;
    }
    v.options.is_empty()
        && parse_variant(name).is_ok_and(|p| p.variant == v.variant && p.players == v.players)
}

/// `lines` in an order drawn from the seed and the variant's label.
fn shuffled<T: Clone>(lines: &[T], seed: u64, label: &str) -> Vec<T> {
    let mut h = Sha256::new();
    h.update(format!("openings {seed} {label}").as_bytes());
    let d = h.finalize();
    let mut key = [0u8; 32];
    key.copy_from_slice(&d[..32]);
    let mut out = lines.to_vec();
    out.shuffle(&mut ChaCha8Rng::from_seed(key));
    out
}

/// Replays `moves` from the start of `spec` under `max_plies`: each legal,
/// the game not over after the last.
fn replay(spec: &VariantSpec, max_plies: u32, moves: &[String]) -> Result<(), String> {
    let mut game = Game::new(spec.variant, &spec.settings(max_plies)).map_err(|e| e.to_string())?;
    for (i, mv) in moves.iter().enumerate() {
        let legal = game.legal();
        if game.outcome().is_some() || legal.is_empty() {
            return Err(format!("move {} `{mv}`: the game is already over", i + 1));
        }
        if !legal.contains(mv) || game.play(mv).is_err() {
            return Err(format!(
                "move {} `{mv}` is not legal here; legal: {}",
                i + 1,
                legal.join(", ")
            ));
        }
    }
    if game.outcome().is_some() {
        return Err(format!(
            "the game is over after move {}: an opening must leave the bots a game to play",
            moves.len()
        ));
    }
    Ok(())
}

/// The openings of a book file's text, in file order: `#` starts a
/// comment, blank lines are skipped, every other line is `VARIANT: MOVES`.
pub fn parse(path: &Path, src: &str) -> Result<Vec<BookLine>, BookError> {
    let mut out = Vec::new();
    // A byte order mark (an editor's, on Windows) is no part of the text.
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    for (i, raw) in src.lines().enumerate() {
        let text = raw.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let Some((variant, moves)) = text.split_once(':').filter(|(v, _)| !v.trim().is_empty())
        else {
            return Err(BookError::Line {
                path: path.to_path_buf(),
                line: i + 1,
                why: format!("expected `VARIANT: MOVE MOVE ...`, got `{text}`"),
            });
        };
        out.push(BookLine {
            line: i + 1,
            variant: variant.trim().to_string(),
            moves: crate::engine::move_words(moves).map(String::from).collect(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_moves(spec: &VariantSpec, n: usize) -> Vec<String> {
        let mut g = Game::new(spec.variant, &spec.settings(1000)).unwrap();
        let mut out = Vec::new();
        for _ in 0..n {
            let m = g.legal()[0].clone();
            g.play(&m).unwrap();
            out.push(m);
        }
        out
    }

    fn kisolo_filo() -> Vec<VariantSpec> {
        vec![
            parse_variant("kisolo").unwrap(),
            parse_variant("filo").unwrap(),
        ]
    }

    fn book(src: &str, order: BookOrder, seed: u64) -> Result<Book, BookError> {
        let p = Path::new("book.txt");
        Book::new(p, src, order, &kisolo_filo(), 1000, seed)
    }

    #[test]
    fn parses_lines_comments_and_blanks() {
        let src = "# a book\n\nkisolo: a1 b2   # trailing\n  FILO :x\nfilo:\n";
        let lines = parse(Path::new("b.txt"), src).unwrap();
        assert_eq!(
            lines,
            vec![
                BookLine {
                    line: 3,
                    variant: "kisolo".into(),
                    moves: vec!["a1".into(), "b2".into()]
                },
                BookLine {
                    line: 4,
                    variant: "FILO".into(),
                    moves: vec!["x".into()]
                },
                BookLine {
                    line: 5,
                    variant: "filo".into(),
                    moves: vec![]
                },
            ]
        );
        let e = parse(Path::new("b.txt"), "filo: a\nkisolo a1\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("b.txt:2: expected `VARIANT: MOVE"), "{e}");
        let e = parse(Path::new("b.txt"), ": a\n").unwrap_err().to_string();
        assert!(e.starts_with("b.txt:1: "), "{e}");
        // A byte order mark and CRLF line ends, as a Windows editor saves.
        let lines = parse(Path::new("b.txt"), "\u{feff}filo: x\r\nkisolo: a1\r\n").unwrap();
        assert_eq!(lines[0].variant, "filo");
        assert_eq!(lines[1].moves, ["a1"]);
    }

    #[test]
    fn lines_are_checked_by_the_engine() {
        let vs = kisolo_filo();
        let k = first_moves(&vs[0], 3).join(" ");
        let f = first_moves(&vs[1], 2).join(" ");
        let good = format!("# openings\nkisolo: {k}\n\nfilo: {f}\ntricala-3p:\n");
        let b = book(&good, BookOrder::Sequential, 1).unwrap();
        assert_eq!(b.lines[0], vec![first_moves(&vs[0], 3)]);
        assert_eq!(b.lines[1], vec![first_moves(&vs[1], 2)]);

        let bad = format!("kisolo: {k}\nfilo: {f} QQ\n");
        let e = book(&bad, BookOrder::Sequential, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("book.txt:2: move 3 `QQ` is not legal here; legal: "),
            "{e}"
        );
        let e = book(
            &format!("kisolo: {k}\nchess: e4\n"),
            BookOrder::Sequential,
            1,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("book.txt:2: unknown variant `chess`"), "{e}");
        // An unplayed variant's line is checked too, under its defaults.
        let e = book(
            &format!("kisolo: {k}\nfilo: {f}\ndiffusion: QQ\n"),
            BookOrder::Sequential,
            1,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("book.txt:3: move 1 `QQ`"), "{e}");
        let e = book("# nothing\n\n", BookOrder::Sequential, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "book.txt: no openings (every line is blank or a comment)"
        );
        let e = book(&format!("kisolo: {k}\n"), BookOrder::Sequential, 1)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("book.txt: no line for variant `filo`"), "{e}");
        let e = Book::load(
            Path::new("/nonexistent/book.txt"),
            BookOrder::Sequential,
            &vs,
            1000,
            1,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("/nonexistent/book.txt"), "{e}");
    }

    #[test]
    fn a_line_that_ends_the_game_is_refused() {
        let spec = parse_variant("kisolo").unwrap();
        let moves = first_moves(&spec, 4);
        // Under a ply cap of 4 the game is over after them.
        let e = replay(&spec, 4, &moves).unwrap_err();
        assert!(e.starts_with("the game is over after move 4"), "{e}");
        let e = replay(&spec, 3, &moves).unwrap_err();
        assert!(
            e.starts_with("move 4 ") && e.contains("already over"),
            "{e}"
        );
        assert_eq!(replay(&spec, 5, &moves), Ok(()));
    }

    #[test]
    fn sequential_wraps_and_random_is_a_seeded_permutation() {
        let vs = kisolo_filo();
        let ks: Vec<String> = (1..=5).map(|n| first_moves(&vs[0], n).join(" ")).collect();
        let src = format!(
            "filo: {}\n{}\n",
            first_moves(&vs[1], 1).join(" "),
            ks.iter()
                .map(|k| format!("kisolo: {k}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let seq = book(&src, BookOrder::Sequential, 1).unwrap();
        let got: Vec<String> = (0..12).map(|g| seq.line(0, g).join(" ")).collect();
        let want: Vec<String> = (0..12).map(|g| ks[g % 5].clone()).collect();
        assert_eq!(got, want);
        assert_eq!(seq.line(1, 7), first_moves(&vs[1], 1).as_slice());

        let a = book(&src, BookOrder::Random, 9).unwrap();
        assert_eq!(a, book(&src, BookOrder::Random, 9).unwrap());
        let mut sorted = a.lines[0].clone();
        sorted.sort();
        let mut all = seq.lines[0].clone();
        all.sort();
        assert_eq!(sorted, all, "a permutation of the lines");
        // Some seed gives another order than the file's and than seed 9's.
        assert!((0..20).any(|s| book(&src, BookOrder::Random, s).unwrap().lines[0] != a.lines[0]));
        assert!((0..20).any(|s| book(&src, BookOrder::Random, s).unwrap().lines[0] != seq.lines[0]));
        // The order is not in the hash, the lines are.
        assert_eq!(a.hash, seq.hash);
        assert_ne!(a.describe(), seq.describe());
        let fewer = book(
            &src.replace(&format!("kisolo: {}\n", ks[4]), ""),
            BookOrder::Sequential,
            1,
        )
        .unwrap();
        assert_ne!(fewer.hash, seq.hash);
    }
}
