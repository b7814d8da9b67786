//! `arena`: the command line. Thin: parse, set up logging, run, exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    mancala_arena::cli::main()
}
