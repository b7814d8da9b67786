//! `filo-solve`: solves F.I.L.O positions by retrograde analysis
//! (src/ai/filo_solve.rs, docs/filo-solved.md). Owns only its command line.
//!
//! ```text
//! filo-solve entries        # the text's position after 12 single entries each
//! filo-solve start          # the whole game from the empty board
//! filo-solve start --max-states 50000000
//! ```

use mancala_arena::ai::filo_solve::{self, Value};
use mancala_arena::engine::Rules;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut which = None;
    let mut max_states = 20_000_000usize;
    let mut retrograde = false;
    let mut max_plies = 60u32;
    let mut time_limit = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "entries" | "start" => which = Some(a.clone()),
            "--retrograde" => retrograde = true,
            "--max-plies" => match it.next().and_then(|v| v.parse().ok()) {
                Some(v) => max_plies = v,
                None => {
                    eprintln!("--max-plies needs a number");
                    return ExitCode::from(2);
                }
            },
            "--seconds" => match it.next().and_then(|v| v.parse().ok()) {
                Some(v) => time_limit = Some(std::time::Duration::from_secs(v)),
                None => {
                    eprintln!("--seconds needs a number");
                    return ExitCode::from(2);
                }
            },
            "--max-states" => match it.next().and_then(|v| v.parse().ok()) {
                Some(v) => max_states = v,
                None => {
                    eprintln!("--max-states needs a number");
                    return ExitCode::from(2);
                }
            },
            _ => {
                eprintln!("usage: filo-solve entries|start [--max-plies N] [--seconds S] [--retrograde [--max-states N]]");
                return ExitCode::from(2);
            }
        }
    }
    let root = match which.as_deref() {
        Some("entries") => filo_solve::after_single_entries(),
        Some("start") => Filo::new(&filo_solve::uncapped()),
        _ => {
            eprintln!("usage: filo-solve entries|start [--max-plies N] [--seconds S] [--retrograde [--max-states N]]");
            return ExitCode::from(2);
        }
    };
    let root = match root {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", root.render());
    if !retrograde {
        let side = |seat| if seat == 0 { "White" } else { "Black" };
        for winner in [1, 0] {
            let p = filo_solve::prove(&root, winner, max_plies, time_limit);
            match p.plies {
                Some(d) => println!(
                    "{} wins within {d} plies (proved); {} positions visited in {:.2} s ({:.0}/s)",
                    side(winner), p.nodes, p.elapsed.as_secs_f64(), p.nodes as f64 / p.elapsed.as_secs_f64().max(1e-9)
                ),
                None => println!(
                    "{} has no forced win within {} plies (searched); {} positions visited in {:.2} s",
                    side(winner), p.bound, p.nodes, p.elapsed.as_secs_f64()
                ),
            }
            if p.plies.is_some() {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    match filo_solve::solve(&root, max_states) {
        Ok(s) => {
            let side = |seat| if seat == 0 { "White" } else { "Black" };
            let verdict = match (s.value, filo_solve::winner(&root, s.value)) {
                (Value::Draw, _) | (_, None) => "a draw by infinite play".to_string(),
                (Value::Win(d) | Value::Loss(d), Some(w)) => {
                    format!("a win for {} in at most {d} plies", side(w))
                }
            };
            println!("value: {verdict}");
            println!(
                "positions: {} ({} won and {} lost for the side to move, {} drawn); moves: {}; time: {:.2} s",
                s.states, s.wins, s.losses, s.draws, s.edges, s.elapsed.as_secs_f64()
            );
            println!("principal variation: {}", s.line.join(" "));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

use mancala_arena::engine::filo::Filo;
