//! PLACEHOLDER: `arena` subcommand being written. Replace this whole file.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct PgnArgs {}

pub fn run(_args: PgnArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
