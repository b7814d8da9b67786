//! PLACEHOLDER: `arena` subcommand being written. Replace this whole file.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct PlayArgs {}

pub fn run(_args: PlayArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
