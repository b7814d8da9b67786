//! PLACEHOLDER: `arena` subcommand being written. Replace this whole file.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct RunArgs {}

pub fn run(_args: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
