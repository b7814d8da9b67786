//! `arena submit --server URL --token TOKEN BOT_FOLDER`: packs a bot
//! folder (with a size check before anything is sent), uploads it to a
//! ladder (`POST /api/bots`) and follows its version through the steps
//! (queued, building, checking) to the verdict: entered, or refused with
//! the build's error or check-bot's report. Exit status 0 when entered, 1
//! when refused, 2 on any other error.

use anyhow::{bail, Context};
use std::path::PathBuf;
use std::process::ExitCode;
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

/// An HTTP client that hands 4xx and 5xx answers back as answers (their
/// body says what was wrong).
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into()
}

/// The `error` of a JSON error body, or the body itself.
fn error_of(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string))
        .unwrap_or_else(|| body.trim().to_string())
}

pub fn run(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let server = args.server.trim_end_matches('/').to_string();
    if !server.starts_with("http://") {
        bail!("--server {server}: give http://HOST:PORT (this arena speaks plain HTTP; for HTTPS, see docs/ladder.md)");
    }
    let limits = crate::serve::archive::Limits::default();
    let bytes = crate::serve::archive::pack(&args.folder, &limits)
        .with_context(|| format!("packing {}", args.folder.display()))?;
    outln!(
        "packed {} ({} KiB)",
        args.folder.display(),
        bytes.len().div_ceil(1024)
    );
    let agent = agent();
    let mut resp = agent
        .post(format!("{server}/api/bots"))
        .header("Authorization", format!("Bearer {}", args.token))
        .content_type("application/gzip")
        .send(&bytes[..])
        .with_context(|| format!("uploading to {server}"))?;
    let status = resp.status().as_u16();
    let body = resp.body_mut().read_to_string().unwrap_or_default();
    if status != 202 {
        errln!("refused ({status}): {}", error_of(&body));
        return Ok(ExitCode::from(1));
    }
    let v: serde_json::Value = serde_json::from_str(&body).context("the server's answer")?;
    let (bot, number) = (
        v["bot"].as_str().unwrap_or_default().to_string(),
        v["version"].as_i64().unwrap_or_default(),
    );
    outln!("uploaded: {bot} version {number}: queued");
    if args.no_wait {
        return Ok(ExitCode::SUCCESS);
    }
    follow(
        &agent,
        &server,
        &bot,
        number,
        Duration::from_secs(args.wait_seconds),
    )
}

/// Prints each step of version `number` of `bot` until its verdict.
fn follow(
    agent: &ureq::Agent,
    server: &str,
    bot: &str,
    number: i64,
    wait: Duration,
) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let mut last = "queued".to_string();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let mut resp = agent
            .get(format!("{server}/api/bots/{bot}"))
            .call()
            .with_context(|| format!("asking {server} about {bot}"))?;
        let body = resp.body_mut().read_to_string().unwrap_or_default();
        if resp.status().as_u16() != 200 {
            bail!("{server}: {}", error_of(&body));
        }
        let doc: serde_json::Value = serde_json::from_str(&body).context("the server's answer")?;
        let Some(v) = doc["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["version"].as_i64() == Some(number)))
        else {
            bail!("{server} does not list version {number} of {bot}");
        };
        let status = v["status"].as_str().unwrap_or_default().to_string();
        if status != last {
            let detail = v["detail"].as_str().unwrap_or_default();
            match detail {
                "" => outln!("{bot} version {number}: {status}"),
                d => outln!("{bot} version {number}: {status}: {d}"),
            }
            last = status.clone();
        }
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
