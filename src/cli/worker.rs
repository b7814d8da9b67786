//! `arena worker --server URL --token TOKEN [-j N] [--cache DIR]`: plays a
//! ladder's games on this machine (docs/ladder.md, "Workers"): registers,
//! claims games in batches the server sizes (N at once, and as many ahead
//! as keep them busy), fetches and builds the bots it lacks, plays them in
//! the sandbox as `arena run` does with the bots kept up from game to
//! game, and uploads the finished games in batches; until Ctrl-C or
//! SIGTERM.

use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    /// The ladder's address (`http://HOST:PORT`), checked at start.
    #[arg(long)]
    server: String,
    /// The worker's token (from the organiser's `arena serve LADDER.toml
    /// --add-worker NAME`); or the environment variable ARENA_WORKER_TOKEN.
    #[arg(long, env = "ARENA_WORKER_TOKEN", hide_env_values = true)]
    token: String,
    /// Games at once.
    #[arg(short = 'j', long = "jobs", default_value_t = 1, value_parser = super::args::whole_in::<u16>(1, 256))]
    jobs: u16,
    /// Where bundles, builds, bots' logs and the spool of games not yet
    /// uploaded are kept: one worker's, locked while it runs (a second
    /// worker on it is refused); its spool must be writable.
    #[arg(long, default_value = "worker-cache")]
    cache: PathBuf,
    /// The most its bots take on disk, MiB: the bundles and their built
    /// copies; past it, those used least recently are removed (fetched and
    /// built again when a game needs them).
    #[arg(long, default_value_t = 4096, value_parser = super::args::whole_in::<u64>(1, 1 << 24))]
    cache_mb: u64,
    /// Play a ladder whose file says `sandbox = "off"`: its owners' bots
    /// then run with this user's rights on this machine. Refused without.
    #[arg(long)]
    trust_bots: bool,
}

pub fn run(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    // Checked before anything else: a worker never retries an address
    // that cannot be one.
    let server = crate::client::server_url(&args.server)?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        // Ctrl-C, SIGTERM or SIGHUP: the games in hand finish and are
        // uploaded, then the worker stops.
        let stop = stop.clone();
        crate::host::on_stop_signal("worker-signals", std::future::pending(), move || {
            stop.store(true, Ordering::SeqCst)
        })?;
    }
    let opts = crate::client::worker::WorkerOptions {
        server,
        token: args.token,
        jobs: args.jobs as usize,
        cache: std::path::absolute(&args.cache)
            .with_context(|| format!("--cache {}", args.cache.display()))?,
        cache_bytes: args.cache_mb << 20,
        trust_bots: args.trust_bots,
    };
    crate::client::worker::run(&opts, stop, &|line| outln!("{line}"))?;
    outln!("arena worker: stopped");
    Ok(ExitCode::SUCCESS)
}
