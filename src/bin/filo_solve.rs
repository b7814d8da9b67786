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

/// Solves F.I.L.O positions: a depth-bounded proof search for each side's
/// forced win, or with `--retrograde` every position below the root
/// (docs/filo-solved.md).
#[derive(clap::Parser)]
#[command(name = "filo-solve")]
struct Args {
    /// `entries`: the text's position after 12 single entries each;
    /// `start`: the whole game from the empty board.
    #[arg(value_enum)]
    position: Position,
    /// The proof search's bound on a win's length, in plies.
    #[arg(long, default_value_t = 60)]
    max_plies: u32,
    /// Stop the proof search after this many seconds.
    #[arg(long)]
    seconds: Option<u64>,
    /// Retrograde analysis of every position below the root instead.
    #[arg(long)]
    retrograde: bool,
    /// The retrograde analysis's bound on positions held.
    #[arg(long, default_value_t = 20_000_000)]
    max_states: usize,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Position {
    Entries,
    Start,
}

fn main() -> ExitCode {
    let args = <Args as clap::Parser>::parse();
    let (max_plies, max_states, retrograde) = (args.max_plies, args.max_states, args.retrograde);
    let time_limit = args.seconds.map(std::time::Duration::from_secs);
    let root = match args.position {
        Position::Entries => filo_solve::after_single_entries(),
        Position::Start => Filo::new(&filo_solve::uncapped()),
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
