//! `arena submit --server URL --token TOKEN BOT_FOLDER`: packs a bot
//! folder (with a size check before anything is sent), uploads it to a
//! ladder (`POST /api/bots`) and follows its version through the steps
//! (queued, building, checking) to the verdict: entered, or refused with
//! the build's error or check-bot's report. Exit status 0 when entered, 1
//! when refused, 2 on any other error.

use anyhow::{bail, Context};
use std::io::BufRead;
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
    let limits = crate::wire::archive::Limits::default();
    let bytes = crate::wire::archive::pack(&args.folder, &limits)
        .with_context(|| format!("packing {}", args.folder.display()))?;
    outln!(
        "packed {} ({} KiB)",
        args.folder.display(),
        bytes.len().div_ceil(1024)
    );
    // The live feed first, so that no step of the new version is missed.
    let steps = (!args.no_wait).then(|| listen(&server));
    let agent = agent();
    let (status, body) = send_upload(&agent, &server, &args.token, &bytes)?;
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
    let Some(steps) = steps else {
        return Ok(ExitCode::SUCCESS);
    };
    let wait = Duration::from_secs(args.wait_seconds);
    follow(&agent, &server, (&bot, number), &steps, wait)
}

/// POSTs the upload: (status, body). A server busy with other uploads
/// (503 with `Retry-After`) is asked again after the time it gives, for
/// up to 10 minutes.
fn send_upload(
    agent: &ureq::Agent,
    server: &str,
    token: &str,
    bytes: &[u8],
) -> anyhow::Result<(u16, String)> {
    let start = Instant::now();
    loop {
        let mut resp = agent
            .post(format!("{server}/api/bots"))
            .header("Authorization", format!("Bearer {token}"))
            .content_type("application/gzip")
            .send(bytes)
            .with_context(|| format!("uploading to {server}"))?;
        let status = resp.status().as_u16();
        let retry = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let body = resp.body_mut().read_to_string().unwrap_or_default();
        match retry {
            Some(secs) if status == 503 && start.elapsed() < Duration::from_secs(600) => {
                let secs = secs.clamp(1, 60);
                outln!(
                    "the server is busy ({}): trying again in {secs} s",
                    error_of(&body)
                );
                std::thread::sleep(Duration::from_secs(secs));
            }
            _ => return Ok((status, body)),
        }
    }
}

/// The ladder's live feed, read on a thread of its own: each event's
/// JSON; returns once subscribed.
fn listen(server: &str) -> mpsc::Receiver<serde_json::Value> {
    let (tx, rx) = mpsc::channel();
    let url = format!("{server}/api/events");
    std::thread::spawn(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let Ok(resp) = agent.get(&url).call() else {
            return;
        };
        // Subscribed: the caller may upload now.
        let _ = tx.send(serde_json::Value::Null);
        let reader = std::io::BufReader::new(resp.into_body().into_reader());
        for line in reader.lines() {
            let Ok(line) = line else {
                return;
            };
            if let Some(data) = line.strip_prefix("data:") {
                if let Ok(v) = serde_json::from_str(data.trim()) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
            }
        }
    });
    // Wait for the subscription (a feed that cannot be had is no reason
    // not to upload: the steps are then read from the bot's page).
    let _ = rx.recv_timeout(Duration::from_secs(10));
    rx
}

/// Prints each step of version `number` of `bot` (from the live feed,
/// and from its page now and then) until its verdict.
fn follow(
    agent: &ureq::Agent,
    server: &str,
    (bot, number): (&str, i64),
    steps: &mpsc::Receiver<serde_json::Value>,
    wait: Duration,
) -> anyhow::Result<ExitCode> {
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
        let v = version(agent, server, bot, number)?;
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

/// Version `number` of `bot`, as `/api/bots/BOT` gives it.
fn version(
    agent: &ureq::Agent,
    server: &str,
    bot: &str,
    number: i64,
) -> anyhow::Result<serde_json::Value> {
    let mut resp = agent
        .get(format!("{server}/api/bots/{bot}"))
        .call()
        .with_context(|| format!("asking {server} about {bot}"))?;
    let body = resp.body_mut().read_to_string().unwrap_or_default();
    if resp.status().as_u16() != 200 {
        bail!("{server}: {}", error_of(&body));
    }
    let doc: serde_json::Value = serde_json::from_str(&body).context("the server's answer")?;
    doc["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["version"].as_i64() == Some(number)))
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("{server} does not list version {number} of {bot}"))
}
