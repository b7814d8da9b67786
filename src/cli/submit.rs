//! `arena submit --server URL --token TOKEN BOT_FOLDER`: packs a bot
//! folder (with a size check before anything is sent), uploads it to a
//! ladder (`POST /api/bots`) and follows its version through the steps
//! (queued, building, checking) to the verdict: entered, or refused with
//! the build's error or check-bot's report. Exit status 0 when entered, 1
//! when refused, 2 on any other error.

use crate::client::submit::Ladder;
use anyhow::{bail, Context};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct SubmitArgs {
    /// The ladder's address (`http://HOST:PORT`).
    #[arg(long)]
    server: String,
    /// Your token (from the organiser's `arena serve --add-user`); or the
    /// environment variable ARENA_TOKEN.
    #[arg(long, env = "ARENA_TOKEN", hide_env_values = true)]
    token: String,
    /// Upload and stop, without waiting for the verdict.
    #[arg(long)]
    no_wait: bool,
    /// How long to wait for the verdict, in seconds.
    #[arg(long, default_value_t = 900)]
    wait_seconds: u64,
    /// The bot's folder (with its bot.toml).
    folder: PathBuf,
}

pub fn run(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let server = args.server.trim_end_matches('/').to_string();
    if !server.starts_with("http://") {
        bail!("--server {server}: give http://HOST:PORT (this arena speaks plain HTTP; for HTTPS, see docs/ladder.md)");
    }
    let limits = crate::wire::archive::Limits::default();
    let bytes = crate::wire::archive::pack(&args.folder, &limits)
        .with_context(|| format!("packing {}", args.folder.display()))?;
    outln!(
        "packed {} ({} KiB)",
        args.folder.display(),
        bytes.len().div_ceil(1024)
    );
    let ladder = Ladder::new(&server, &args.token);
    // The live feed first, so that no step of the new version is missed.
    let steps = (!args.no_wait).then(|| ladder.listen());
    let answer = ladder.upload(&bytes, &mut |why, secs| {
        outln!("the server is busy ({why}): trying again in {secs} s");
    })?;
    if answer.status != 202 {
        errln!("refused ({}): {}", answer.status, answer.error());
        return Ok(ExitCode::from(1));
    }
    let v: serde_json::Value = serde_json::from_str(&answer.body).context("the server's answer")?;
    let (bot, number) = (
        v["bot"].as_str().unwrap_or_default().to_string(),
        v["version"].as_i64().unwrap_or_default(),
    );
    outln!("uploaded: {bot} version {number}: queued");
    let Some(steps) = steps else {
        return Ok(ExitCode::SUCCESS);
    };
    let wait = Duration::from_secs(args.wait_seconds);
    follow(&ladder, (&bot, number), &steps, wait)
}

/// Prints each step of version `number` of `bot` (from the live feed,
/// and from its page now and then) until its verdict.
fn follow(
    ladder: &Ladder,
    (bot, number): (&str, i64),
    steps: &mpsc::Receiver<serde_json::Value>,
    wait: Duration,
) -> anyhow::Result<ExitCode> {
    let server = ladder.server();
    let start = Instant::now();
    // A step is said when it or its detail changes: while it waits, its
    // place in the queue (`place 2 in the queue ...`).
    let mut last = ("queued".to_string(), String::new());
    let mut say = |status: &str, detail: &str| {
        if (status, detail) != (last.0.as_str(), last.1.as_str()) {
            match detail {
                "" => outln!("{bot} version {number}: {status}"),
                d => outln!("{bot} version {number}: {status}: {d}"),
            }
            last = (status.to_string(), detail.to_string());
        }
    };
    loop {
        let heard = steps.recv_timeout(Duration::from_secs(1)).ok();
        let ours = heard.as_ref().filter(|e| {
            e["type"] == "bot" && e["bot"] == bot && e["version"].as_i64() == Some(number)
        });
        if let Some(e) = ours {
            let status = e["status"].as_str().unwrap_or_default();
            if !matches!(status, "entered" | "refused") {
                say(status, e["detail"].as_str().unwrap_or_default());
                continue;
            }
        } else if heard.is_some() {
            continue;
        }
        // A verdict heard, or a quiet second: the version as its page says.
        let v = ladder.version(bot, number)?;
        let status = v["status"].as_str().unwrap_or_default().to_string();
        say(&status, v["detail"].as_str().unwrap_or_default());
        match status.as_str() {
            "entered" => {
                outln!("{server}/bots/{bot}");
                return Ok(ExitCode::SUCCESS);
            }
            "refused" | "retired" => {
                if let Some(r) = v["report"].as_str().filter(|r| !r.is_empty()) {
                    outln!("{r}");
                }
                return Ok(ExitCode::from(1));
            }
            _ if start.elapsed() > wait => {
                bail!(
                    "no verdict after {} s (still `{status}`); see {server}/bots/{bot}",
                    wait.as_secs()
                )
            }
            _ => {}
        }
    }
}
