//! `arena serve LADDER.toml`: the ladder service (docs/ladder.md); with
//! `--add-user`, `--revoke-user`, `--release-worker`, `--start-swiss`, `--cancel-event` or `--backup`, a change to its store
//! instead, and out.

use anyhow::Context;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The ladder file: a league file with a [ladder] table.
    ladder: PathBuf,
    /// Where to listen: loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: SocketAddr,
    /// The store: `sqlite:PATH` (default: ladder.db in the ladder's
    /// results folder) or `postgres://USER:PASSWORD@HOST:PORT/DATABASE`
    /// (docs/ladder.md).
    #[arg(long, env = "ARENA_DB")]
    db: Option<String>,
    /// Serve the pages and the API's reads only, beside the ladder's own
    /// server on the same database: plays no games, takes no uploads.
    #[arg(long, conflicts_with_all = ["add_user", "add_worker", "revoke_user", "backup"])]
    pages_only: bool,
    /// Add an owner and print their token (once: only its hash is kept),
    /// then stop. For an owner revoked, a new token: the same owner,
    /// their bots kept.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["revoke_user", "backup", "add_worker"])]
    add_user: Option<String>,
    /// Add a worker (`arena worker`) and print its token (once), then
    /// stop. A worker's token claims and uploads games; it cannot upload
    /// bots.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["revoke_user", "backup"])]
    add_worker: Option<String>,
    /// Games the server plays itself, over the ladder file's
    /// `games_in_flight` (0 to 1024, as it); 0: only workers play.
    #[arg(long, value_name = "N", value_parser = super::args::whole_in::<u64>(0, 1024))]
    local_games: Option<u64>,
    /// How long a worker's lease of a game lasts without a heartbeat,
    /// in seconds; then the game goes back to the queue.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(i64).range(2..=86400))]
    lease_seconds: i64,
    /// Revoke an owner's token, then stop.
    #[arg(long, value_name = "NAME", conflicts_with = "backup")]
    revoke_user: Option<String>,
    /// Release a worker from quarantine (docs/security.md, "Forged
    /// results"): it may claim and upload games again. Then stop.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["backup", "revoke_user", "add_user", "add_worker", "pages_only"])]
    release_worker: Option<String>,
    /// Start an event (docs/ladder.md "Events"): a Swiss named NAME
    /// among the versions entered now, played by the running server
    /// through the same queue as every ladder game. Then stop.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["backup", "revoke_user", "add_user", "add_worker", "pages_only", "release_worker"])]
    start_swiss: Option<String>,
    /// With `--start-swiss`: its rounds (1 to 1000; default log2 of the
    /// entrants, rounded up, plus 2).
    #[arg(long, value_name = "R", requires = "start_swiss", value_parser = super::args::whole_in::<u32>(1, 1000))]
    rounds: Option<u32>,
    /// With `--start-swiss`: the games of each pairing's mini-match in
    /// each variant (even, 2 to 2000), seat-swapped in pairs.
    #[arg(long, value_name = "G", requires = "start_swiss", default_value_t = 2, value_parser = super::args::whole_in::<u32>(2, 2000))]
    games_per_pairing: u32,
    /// Cancel the running event NAME: its pending games are dropped (those
    /// played stay the ladder's). Then stop.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["backup", "revoke_user", "add_user", "add_worker", "pages_only", "release_worker", "start_swiss"])]
    cancel_event: Option<String>,
    /// Write a consistent copy of the store to FILE (while it serves,
    /// too), then stop.
    #[arg(long, value_name = "FILE")]
    backup: Option<PathBuf>,
    /// Serve a ladder file that says `sandbox = "off"`: every owner's
    /// upload then runs with this user's rights, on this server and on
    /// every worker. Only for a ladder whose every owner is trusted.
    #[arg(long)]
    trust_bots: bool,
    /// Play more than 4 games at a time per CPU on this server
    /// (`games_in_flight`, or `--local-games`), as `arena run` does with
    /// it: bots that want for CPU lose on time.
    #[arg(long)]
    force_concurrency: bool,
}

/// Which store a command works on, said first: another `output`, or
/// another `name` (its default `results/NAME`), is another, empty, ladder.
fn say_store(t: &crate::league::config::Tournament, db: Option<&str>) {
    match db {
        Some(url) if url.starts_with("postgres") => {
            // Never the password.
            let shown = url.split_once('@').map_or(url, |(_, at)| at);
            errln!("store: postgres (…@{shown})");
        }
        Some(url) => errln!("store: {url}"),
        None => {
            let path = std::path::absolute(t.output.join("ladder.db"))
                .unwrap_or_else(|_| t.output.join("ladder.db"));
            match path.exists() {
                true => errln!("store: {}", path.display()),
                false => errln!(
                    "store: {} (new: no ladder there yet; the file's `output`, or results/NAME beside its tournaments/ folder)",
                    path.display()
                ),
            }
        }
    }
}

/// `--backup FILE`: into a new file, in a folder that exists.
fn backup(
    t: &crate::league::config::Tournament,
    db: Option<&str>,
    to: &Path,
) -> anyhow::Result<()> {
    if to.exists() {
        anyhow::bail!("{}: exists already; give a new file", to.display());
    }
    // SQLite's own word for a missing folder is "unable to open
    // database file", naming neither.
    let folder = match to.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        anyhow::bail!(
            "{}: the backup's folder {} does not exist (or is not a folder); make it first (mkdir -p {}), or give a file in a folder that exists",
            to.display(),
            folder.display(),
            folder.display()
        );
    }
    crate::serve::backup(t, db, to).with_context(|| format!("backing up to {}", to.display()))?;
    outln!("backed up to {}", to.display());
    Ok(())
}

/// The ladder file `path`, refused when it names bots (a ladder's are
/// uploaded) or is a league's (before any store is named: nothing is
/// made for a league).
fn ladder_file(path: &Path) -> anyhow::Result<crate::league::config::Tournament> {
    if let Ok(text) = std::fs::read_to_string(path) {
        crate::league::config::ladder::refuse_bots(path, &text)?;
    }
    let t = crate::league::config::Tournament::load(path)?;
    if t.ladder.is_none() {
        let file = crate::text::shell_path(path);
        anyhow::bail!(
            "{}: this is not a ladder file (it has no [ladder] table): a league's file, played with `arena run {file}`; a ladder's file is as tournaments/club-ladder.toml (docs/ladder.md)",
            path.display()
        );
    }
    Ok(t)
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let t = ladder_file(&args.ladder)?;
    let db = args.db.as_deref();
    if let Some(url) = db {
        crate::serve::store::Backend::of_url(url)
            .map_err(|why| anyhow::anyhow!("--db (or ARENA_DB): {why}"))?;
    }
    say_store(&t, db);
    if let Some(name) = &args.add_user {
        let (token, again) = crate::serve::add_user(&t, db, name)?;
        if again {
            outln!("user `{name}` (revoked) has a new token, their bots kept; the token (shown only now, keep it):");
        } else {
            outln!("user `{name}` added; their token (shown only now, keep it):");
        }
        outln!("{token}");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.add_worker {
        let (token, again) = crate::serve::add_worker(&t, db, name)?;
        if again {
            outln!("worker `{name}` (revoked) has a new token, its record kept; the token (shown only now, keep it):");
        } else {
            outln!("worker `{name}` added; its token (shown only now, keep it):");
        }
        outln!("{token}");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.revoke_user {
        crate::serve::revoke_user(&t, db, name)?;
        outln!("user `{name}`: token revoked");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.release_worker {
        crate::serve::release_worker(&t, db, name)?;
        outln!("worker `{name}`: released from quarantine");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.start_swiss {
        if !args.games_per_pairing.is_multiple_of(2) {
            anyhow::bail!(
                "--games-per-pairing {}: must be even so that both bots of a pairing play each seat equally often",
                args.games_per_pairing
            );
        }
        let e = crate::serve::start_swiss(&t, db, name, (args.rounds, args.games_per_pairing))?;
        outln!(
            "event `{}` started: a Swiss of {} round{} among {} versions ({}); the running server plays it, /tournaments/{} shows it",
            e.name,
            e.rounds,
            if e.rounds == 1 { "" } else { "s" },
            e.entrants.len(),
            e.entrants.join(", "),
            e.name
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.cancel_event {
        crate::serve::cancel_event(&t, db, name)?;
        outln!("event `{name}`: cancelled");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(to) = &args.backup {
        backup(&t, db, to)?;
        return Ok(ExitCode::SUCCESS);
    }
    if t.sandbox == crate::bot::Sandbox::Off && !args.pages_only {
        if !args.trust_bots {
            anyhow::bail!(
                "{}: sandbox = \"off\" would run every owner's upload with this user's rights, environment and network, on this server and on every worker; a ladder plays strangers' code: remove the line, or serve it with --trust-bots if every owner is trusted",
                args.ladder.display()
            );
        }
        errln!(
            "warning: sandbox = \"off\" (--trust-bots): every owner's upload runs with this user's rights, environment and network, on this server and on every worker (docs/security.md)"
        );
    }
    if !args.pages_only {
        let games = match (args.local_games, &t.ladder) {
            (Some(n), _) => ("--local-games", n as usize),
            (None, Some(l)) => ("games_in_flight", l.games_in_flight),
            (None, None) => ("games_in_flight", 0),
        };
        let lower = match args.local_games {
            Some(_) => "--local-games",
            None => "the [ladder] table's `games_in_flight` (or give --local-games)",
        };
        super::run::check_games_per_cpu(games, lower, args.force_concurrency)
            .with_context(|| args.ladder.display().to_string())?;
    }
    if !args.bind.ip().is_loopback() {
        errln!(
            "warning: listening on {}: reachable from other machines (plain HTTP: put a TLS proxy in front, docs/ladder.md)",
            args.bind
        );
    }
    let opts = crate::serve::ServeOptions {
        bind: args.bind,
        db: args.db.clone(),
        pages_only: args.pages_only,
        ladder_text: std::fs::read_to_string(&args.ladder)
            .with_context(|| format!("reading {}", args.ladder.display()))?,
        local_games: args.local_games.map(|n| n as usize),
        lease_seconds: args.lease_seconds,
    };
    crate::serve::serve(t, &opts, &mut |addr| {
        outln!("arena serve: listening on http://{addr}");
    })?;
    outln!("arena serve: stopped");
    Ok(ExitCode::SUCCESS)
}
