//! `arena submit --server URL --token TOKEN BOT_FOLDER`: packs a bot
//! folder (with a size check before anything is sent), uploads it to a
//! ladder (`POST /api/bots`) and follows its version through the steps
//! (queued, building, checking) to the verdict: entered, or refused with
//! the build's error or check-bot's report. Exit status 0 when entered, 1
//! when refused, 2 on any other error.
//!
//! With `--test`, it then follows the version's test against the one it
//! would replace (docs/ladder.md "Tests between versions"), a line per
//! change of its LLR, to its verdict: exit status 0 on H1, 1 on H0 (or
//! refused), [`NO_VERDICT`] when the test ends on its budget, is
//! cancelled, or has no verdict within `--test-wait-seconds`; 2 on any
//! other error (no test started, among them).

use crate::client::submit::{Ladder, SubmitError};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
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
    /// Wait for the new version's test against the version it would
    /// replace, printing its LLR as it goes: exit 0 on H1, 1 on H0, 3
    /// when it ends with no verdict (its budget played, or cancelled).
    #[arg(long, conflicts_with_all = ["no_wait", "no_test"])]
    test: bool,
    /// No test: the new version replaces the old one at once.
    #[arg(long)]
    no_test: bool,
    /// The test's elo0 (normalized Elo; default: the ladder's `test_elo0`).
    #[arg(long, allow_hyphen_values = true, conflicts_with = "no_test")]
    elo0: Option<f64>,
    /// The test's elo1 (default: the ladder's `test_elo1`).
    #[arg(long, allow_hyphen_values = true, conflicts_with = "no_test")]
    elo1: Option<f64>,
    /// The test's alpha (default: the ladder's `test_alpha`).
    #[arg(long, conflicts_with = "no_test")]
    alpha: Option<f64>,
    /// The test's beta (default: the ladder's `test_beta`).
    #[arg(long, conflicts_with = "no_test")]
    beta: Option<f64>,
    /// The test's budget of games (default and most: the ladder's
    /// `test_max_games`).
    #[arg(long, conflicts_with = "no_test")]
    max_games: Option<u64>,
    /// What becomes of the old version: retire-on-h1, keep-both or owner
    /// (default: the ladder's `test_outcome`).
    #[arg(long, conflicts_with = "no_test")]
    outcome: Option<String>,
    /// How long `--test` waits for the test's verdict, in seconds.
    #[arg(long, default_value_t = 86_400)]
    test_wait_seconds: u64,
    /// The bot's folder (with its bot.toml).
    folder: PathBuf,
}

/// `--test`'s exit status when the test ends with no verdict (its
/// budget, or cancelled) or has none within `--test-wait-seconds`.
pub const NO_VERDICT: u8 = 3;

/// The upload's query: its test's words.
fn test_query(args: &SubmitArgs) -> Vec<(&'static str, String)> {
    let mut q = Vec::new();
    if args.no_test {
        q.push(("test", "no".to_string()));
    } else if args.test {
        q.push(("test", "yes".to_string()));
    }
    for (k, v) in [
        ("elo0", args.elo0),
        ("elo1", args.elo1),
        ("alpha", args.alpha),
        ("beta", args.beta),
    ] {
        if let Some(v) = v {
            q.push((k, v.to_string()));
        }
    }
    if let Some(n) = args.max_games {
        q.push(("max_games", n.to_string()));
    }
    if let Some(o) = &args.outcome {
        q.push(("outcome", o.clone()));
    }
    q
}

pub fn run(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let server = crate::client::server_url(&args.server)?;
    if args.token.trim().is_empty() {
        bail!("--token is empty: give your token (the organiser's `arena serve LADDER.toml --add-user NAME` prints it), or set ARENA_TOKEN");
    }
    check_folder(&args.folder)?;
    let name = bot_name(&args.folder)?;
    let ladder = Ladder::new(&server, &args.token);
    let bytes = pack(&ladder, &args.folder)?;
    // Asked before the upload (which would be found the same), said once
    // it is taken: a refused upload (a bad token) made no version.
    let same = same_as_before(&ladder, &name, &bytes);
    // The live feed first, so that no step of the new version is missed.
    let steps = (!args.no_wait).then(|| ladder.listen());
    let answer = ladder
        .upload_with(&test_query(&args), &bytes, &mut |why, secs| {
            outln!("the server is busy ({why}): trying again in {secs} s");
        })
        .map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "the upload of {} may or may not have arrived: see {server}/bots/{} before you upload it again",
                args.folder.display(),
                name,
            ))
        })?;
    if answer.status != 202 {
        errln!("refused ({}): {}", answer.status, answer.error());
        return Ok(ExitCode::from(1));
    }
    if let Some(note) = same {
        outln!("{note}");
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
    let code = follow(&ladder, (&bot, number), &steps, wait)?;
    if !args.test || code != ExitCode::SUCCESS {
        return Ok(code);
    }
    let wait = Duration::from_secs(args.test_wait_seconds);
    follow_test(&ladder, (&bot, number), wait)
}

/// The bot's name, as its bot.toml says it, read as the ladder reads an
/// upload (`serve::intake::bot_name_of`): a bot.toml the ladder would
/// refuse is said now, naming the folder (and a TOML error's line and
/// column), before anything is sent or counted against the hourly
/// uploads.
fn bot_name(folder: &Path) -> anyhow::Result<String> {
    if !folder.join(crate::bot::manifest::MANIFEST).is_file() {
        bail!(
            "{}: no bot.toml in this folder; a bot's folder has its manifest at the top (see bots/random-python)",
            folder.display()
        );
    }
    match crate::serve::intake::bot_name_of(folder) {
        Ok(name) => Ok(name),
        Err(why) => bail!(
            "{}: {why}\n(nothing was sent: fix it and submit again)",
            folder.display()
        ),
    }
}

/// Packs `folder` within the ladder's own limits on an upload (asked of
/// the server first: `/health`'s `uploads`; the usual ones from a server
/// that does not say), so that a folder over them is said before a long
/// upload, with its size and the limit.
fn pack(ladder: &Ladder, folder: &Path) -> anyhow::Result<Vec<u8>> {
    let health = ladder.health()?;
    let (limits, whose) = match crate::client::submit::limits_of(&health) {
        Some(l) => (l, "this ladder takes"),
        None => (
            crate::wire::archive::Limits::default(),
            "a ladder takes by default",
        ),
    };
    let mib = |b: u64| b >> 20;
    let said = format!(
        "{whose} uploads of up to {} MiB packed, {} MiB unpacked and {} files",
        mib(limits.compressed_bytes),
        mib(limits.unpacked_bytes),
        limits.files
    );
    let bytes = crate::wire::archive::pack(folder, &limits)
        .with_context(|| format!("packing {} ({said})", folder.display()))?;
    if let Some(results) = crate::wire::archive::local_results(folder) {
        outln!(
            "note: {} holds results of arena's own games; it is left out of the upload",
            results.display()
        );
    }
    outln!(
        "packed {} ({} KiB; {said})",
        folder.display(),
        bytes.len().div_ceil(1024)
    );
    Ok(bytes)
}

/// What to say when `bytes` are those of a version of `bot` still in the
/// ladder (the same folder packs to the same bytes): the upload makes a
/// new version all the same, and a test between two equal versions.
/// Asking is a courtesy: a server that cannot say is not a reason to stop.
fn same_as_before(ladder: &Ladder, bot: &str, bytes: &[u8]) -> Option<String> {
    // A ladder without the bot (404) says nothing, as one that cannot say.
    let doc = ladder.get_json(&format!("/api/bots/{bot}")).ok()?;
    let sha = crate::wire::hex_sha256(bytes);
    let same = doc["versions"].as_array().and_then(|vs| {
        vs.iter().rev().find(|v| {
            v["sha256"].as_str() == Some(sha.as_str())
                && !matches!(v["status"].as_str(), Some("refused" | "retired"))
        })
    });
    same.map(|v| {
        format!(
            "note: this folder is the very one of {bot} version {} ({}): nothing changed since; it was uploaded all the same, as a new version",
            v["version"],
            v["status"].as_str().unwrap_or_default()
        )
    })
}

/// The bot's folder must be one: a path that is not there, or a file,
/// is said as such (rather than as a folder without its bot.toml).
fn check_folder(folder: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!(
                "{}: no such folder; give the bot's folder, the one with its bot.toml",
                folder.display()
            )
        }
        Err(e) => bail!("{}: {e}", folder.display()),
        Ok(m) if m.is_file() => {
            bail!(
                "{}: is a file, not a folder; give the bot's folder, the one with its bot.toml",
                folder.display()
            )
        }
        Ok(m) if !m.is_dir() => {
            bail!(
                "{}: is not a folder; give the bot's folder, the one with its bot.toml",
                folder.display()
            )
        }
        Ok(_) => Ok(()),
    }
}

/// Follows the test of version `number` of `bot`, a line each time its
/// games change, to its verdict: 0 on H1, 1 on H0, [`NO_VERDICT`]
/// otherwise.
fn follow_test(
    ladder: &Ladder,
    (bot, number): (&str, i64),
    wait: Duration,
) -> anyhow::Result<ExitCode> {
    let server = ladder.server();
    let start = Instant::now();
    let deadline = start + wait;
    let Some(t) = patiently(ladder, (bot, number), deadline, &mut || {
        ladder.test_of(bot, number)
    })?
    else {
        bail!(
            "{bot} version {number} has no test: the bot had no other version entered (a first version is entered untested), or the ladder runs none"
        );
    };
    let id = t["id"].as_i64().unwrap_or_default();
    outln!(
        "test {id}: {bot} version {number} against version {}, SPRT elo0 {} elo1 {} (normalized), alpha {} beta {}, at most {} games: {server}/tests/{id}",
        t["old_version"],
        t["elo0"],
        t["elo1"],
        t["alpha"],
        t["beta"],
        t["max_games"]
    );
    let mut last = -1;
    loop {
        let path = format!("/api/tests/{id}");
        let t = patiently(ladder, (bot, number), deadline, &mut || {
            ladder.get_json(&path)
        })?;
        let games = t["games"].as_i64().unwrap_or_default();
        let status = t["status"].as_str().unwrap_or_default().to_string();
        if games != last || status != "running" {
            last = games;
            outln!("{}", progress(&t));
        }
        match status.as_str() {
            "h1" => {
                outln!(
                    "H1: version {number} is stronger; the old version {}",
                    t["old_fate"].as_str().unwrap_or_default()
                );
                return Ok(ExitCode::SUCCESS);
            }
            "h0" => {
                outln!(
                    "H0: version {number} is not stronger; the old version {}",
                    t["old_fate"].as_str().unwrap_or_default()
                );
                return Ok(ExitCode::from(1));
            }
            "budget" | "cancelled" => {
                outln!("no verdict: the test ended `{status}`");
                return Ok(ExitCode::from(NO_VERDICT));
            }
            _ if start.elapsed() > wait => {
                errln!(
                    "no verdict after {} s: see {server}/tests/{id}",
                    wait.as_secs()
                );
                return Ok(ExitCode::from(NO_VERDICT));
            }
            _ => std::thread::sleep(Duration::from_secs(2)),
        }
    }
}

/// One line of a test's progress: games, LLR within its bounds, Elo,
/// pentanomial counts.
fn progress(t: &serde_json::Value) -> String {
    // A value that rounds to zero is 0.00, not -0.00.
    let f = |k: &str| {
        t[k].as_f64()
            .map_or(f64::NAN, |v| if v.abs() < 0.005 { 0.0 } else { v })
    };
    let elo = match (t["elo"].as_f64(), t["elo_err"].as_f64()) {
        (Some(e), Some(err)) => format!("Elo {e:.1} ± {err:.1}"),
        _ => "Elo -".to_string(),
    };
    format!(
        "test {}: {} games, LLR {:.2} ({:.2}, {:.2}), {elo}, pentanomial {}",
        t["id"],
        t["games"],
        f("llr"),
        f("lower"),
        f("upper"),
        t["penta"]
    )
}

/// `ask` of the ladder, asked again while the server cannot be reached
/// (restarting, say), until `deadline`: the upload of version `number` of
/// `bot` was received, and a server restarted takes its build and check
/// again. Said once a spell, and when the server is back.
fn patiently<T>(
    ladder: &Ladder,
    (bot, number): (&str, i64),
    deadline: Instant,
    ask: &mut dyn FnMut() -> Result<T, SubmitError>,
) -> anyhow::Result<T> {
    let server = ladder.server();
    let asked = crate::client::submit::patiently(
        deadline,
        &mut |e, left| {
            outln!(
                "the server cannot be reached ({e}); the upload was received ({bot} version {number}): asking again until it is back, for up to {} s",
                left.as_secs().max(1)
            )
        },
        &mut || outln!("the server at {server} is back"),
        ask,
    );
    asked.map_err(|e| match e.is_transient() {
        true => anyhow::Error::new(e).context(format!(
            "the server could not be reached within the wait after the upload was received ({bot} version {number}); see {server}/bots/{bot} once it is back"
        )),
        false => e.into(),
    })
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
        let heard = match steps.recv_timeout(Duration::from_secs(1)) {
            Ok(e) => Some(e),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            // The feed is gone (the server restarted, say): the version's
            // page, every second.
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_secs(1));
                None
            }
        };
        let ours = heard.as_ref().filter(|e| {
            e["type"] == "bot" && e["bot"] == bot && e["version"].as_i64() == Some(number)
        });
        if let Some(e) = ours {
            let status = e["status"].as_str().unwrap_or_default();
            if !matches!(status, "entered" | "refused" | "retired") {
                say(status, e["detail"].as_str().unwrap_or_default());
                continue;
            }
        } else if heard.is_some() {
            continue;
        }
        // A verdict heard, or a quiet second: the version as its page says.
        let v = patiently(ladder, (bot, number), start + wait, &mut || {
            ladder.version(bot, number)
        })?;
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
