//! PLACEHOLDER: `arena` subcommand being written. Replace this whole file.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct CheckBotArgs {}

pub fn run(_args: CheckBotArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
