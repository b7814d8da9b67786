//! PLACEHOLDER: `arena` subcommand being written. Replace this whole file.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct StateArgs {}

pub fn run(_args: StateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
