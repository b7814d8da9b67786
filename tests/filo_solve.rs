//! F.I.L.O checked by search (issue 6, docs/filo-solved.md): the text's
//! claims, proved by the depth-bounded proof search, and the proof search
//! cross-checked against the independent retrograde analysis.

use mancala_arena::ai::filo_solve::{self, Value};
use mancala_arena::engine::filo::{Filo, BLACK, WHITE};
use mancala_arena::engine::Rules;

/// "4 W 4 W 4 W ...... ...... 4 B 4 B 4 B ... White to move, loses!" The
/// text's longest line (note 5) is 23 plies; Black must win within that.
#[test]
fn after_twelve_single_entries_white_to_move_loses() {
    let root = filo_solve::after_single_entries().unwrap();
    let p = filo_solve::prove(&root, BLACK, 23, None);
    assert!(p.plies.is_some(), "no Black win within 23 plies: {p:?}");
    let w = filo_solve::prove(&root, WHITE, 23, None);
    assert_eq!(w.plies, None);
}

/// "It is a second player win": Black wins the whole game from the empty
/// board (bound 60 plies: 24 entry turns at most, then the movement phase).
#[test]
fn the_whole_game_is_a_second_player_win() {
    let root = Filo::new(&filo_solve::uncapped()).unwrap();
    let p = filo_solve::prove(&root, BLACK, 60, None);
    assert!(p.plies.is_some(), "no Black win within 60 plies: {p:?}");
}

/// Small endgames solved both ways agree: the retrograde analysis over the
/// whole reachable graph and the depth-bounded proof search give the same
/// winner and the same number of plies.
#[test]
fn retrograde_and_proof_search_agree_on_small_endgames() {
    let positions: [([&str; 8], usize); 4] = [
        (["WW", "", "B", "", "BW", "", "", ""], WHITE),
        (["WB", "B", "", "W", "", "", "BW", ""], BLACK),
        (["W", "BB", "", "", "BW", "", "", ""], WHITE),
        (["BW", "", "W", "B", "", "", "", "B"], BLACK),
    ];
    for (squares, to_move) in positions {
        let g = Filo::from_position(squares, [0, 0], to_move, &filo_solve::uncapped()).unwrap();
        let s = filo_solve::solve(&g, 1_000_000).unwrap();
        let mover = g.to_decide().unwrap();
        eprintln!("{squares:?}: {:?} over {} positions", s.value, s.states);
        match s.value {
            Value::Win(d) => {
                assert_eq!(
                    filo_solve::prove(&g, mover, d, None).plies,
                    Some(d),
                    "{squares:?}"
                );
                assert_eq!(filo_solve::prove(&g, 1 - mover, d + 1, None).plies, None);
            }
            Value::Loss(d) => {
                assert_eq!(
                    filo_solve::prove(&g, 1 - mover, d, None).plies,
                    Some(d),
                    "{squares:?}"
                );
                assert_eq!(filo_solve::prove(&g, mover, d + 1, None).plies, None);
            }
            Value::Draw => {
                assert_eq!(filo_solve::prove(&g, mover, 40, None).plies, None);
                assert_eq!(filo_solve::prove(&g, 1 - mover, 40, None).plies, None);
            }
        }
        // The principal variation replays and ends as the value says.
        let mut r = g.clone();
        for m in &s.line {
            let o = r.parse(m).unwrap();
            r.apply(o).unwrap();
        }
        if let Some(w) = filo_solve::winner(&g, s.value) {
            let out = r.outcome().expect("the line ends the game");
            assert_eq!(out.ranks[w], 0);
        }
    }
}

/// A time limit too large to add to the clock (`filo-solve --seconds
/// 18446744073709551615`) is no limit, not a panic.
#[test]
fn an_endless_time_limit_is_no_limit() {
    let root = filo_solve::after_single_entries().unwrap();
    let p = filo_solve::prove(&root, BLACK, 2, Some(std::time::Duration::MAX));
    assert_eq!(p.plies, None);
    assert_eq!(p.bound, 2);
}

/// `filo-solve`'s command line: `--help` is an answer (exit 0), a
/// position it does not know is named with the ones it does (exit 2),
/// and a position is solved as docs/filo-solved.md says.
#[test]
fn the_solver_s_command_line_answers_help_and_names_a_bad_position() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_filo-solve"))
            .args(args)
            .output()
            .unwrap()
    };
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--retrograde"));
    let bad = run(&["middle"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("'middle'") && err.contains("entries, start"),
        "{err}"
    );
    let solved = run(&["entries", "--max-plies", "10"]);
    assert!(solved.status.success());
    let out = String::from_utf8_lossy(&solved.stdout);
    assert!(out.contains("Black wins within 6 plies (proved)"), "{out}");
}
