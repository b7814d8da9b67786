//! PLACEHOLDER: `arena` subcommand being written. Replace this whole file.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct BotsArgs {}

pub fn run(_args: BotsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
