//! PLACEHOLDER: `arena` subcommand being written. Replace this whole file.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct RateArgs {}

pub fn run(_args: RateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
