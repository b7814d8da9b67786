//! `arena serve LADDER.toml`: the ladder service (docs/ladder.md); with
//! `--add-user`, `--revoke-user` or `--backup`, a change to its store
//! instead, and out.

use anyhow::Context;
use std::net::SocketAddr;
use std::path::PathBuf;
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
    #[arg(long, conflicts_with_all = ["add_user", "revoke_user", "backup"])]
    pages_only: bool,
    /// Add an owner and print their token (once: only its hash is kept),
    /// then stop.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["revoke_user", "backup"])]
    add_user: Option<String>,
    /// Revoke an owner's token, then stop.
    #[arg(long, value_name = "NAME", conflicts_with = "backup")]
    revoke_user: Option<String>,
    /// Write a consistent copy of the store to FILE (while it serves,
    /// too), then stop.
    #[arg(long, value_name = "FILE")]
    backup: Option<PathBuf>,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let t = crate::league::config::Tournament::load(&args.ladder)?;
    let db = args.db.as_deref();
    if let Some(name) = &args.add_user {
        let token = crate::serve::add_user(&t, db, name)?;
        outln!("user `{name}` added; their token (shown only now, keep it):");
        outln!("{token}");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.revoke_user {
        crate::serve::revoke_user(&t, db, name)?;
        outln!("user `{name}`: token revoked");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(to) = &args.backup {
        if to.exists() {
            anyhow::bail!("{}: exists already; give a new file", to.display());
        }
        crate::serve::backup(&t, db, to)
            .with_context(|| format!("backing up to {}", to.display()))?;
        outln!("backed up to {}", to.display());
        return Ok(ExitCode::SUCCESS);
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
    };
    crate::serve::serve(t, &opts, &mut |addr| {
        outln!("arena serve: listening on http://{addr}");
    })?;
    outln!("arena serve: stopped");
    Ok(ExitCode::SUCCESS)
}
