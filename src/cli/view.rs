//! `arena view RESULTS [--bind 127.0.0.1:PORT] [--no-open]`: a league's
//! results folder (or its shards, or a folder of shards) served read-only
//! on loopback: the report's pages, and every game's viewer on demand
//! (`crate::view`). Opens the browser where there is one.

use crate::view::{view, ViewOptions};
use anyhow::Context;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ViewArgs {
    /// A league's results folder (`results/NAME`), several shard folders,
    /// or a folder holding shard folders (as `arena report` takes).
    #[arg(required = true, value_name = "RESULTS")]
    results: Vec<PathBuf>,
    /// Where to listen: a loopback address (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0", value_parser = bind_arg)]
    bind: SocketAddr,
    /// Do not open a browser.
    #[arg(long)]
    no_open: bool,
}

/// `--bind`: a loopback address and port (`localhost:PORT` as
/// 127.0.0.1); an address without its port, or one another machine could
/// reach, is said as that.
fn bind_arg(s: &str) -> Result<SocketAddr, String> {
    let t = s.trim();
    let addr = match t.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}").parse::<SocketAddr>(),
        None => t.parse::<SocketAddr>(),
    };
    match addr {
        Ok(a) if a.ip().is_loopback() => Ok(a),
        Ok(a) => Err(format!(
            "{a}: arena view listens on loopback only (127.0.0.1 or [::1]), so that no other machine reads the results"
        )),
        Err(_) if t.parse::<std::net::IpAddr>().is_ok() || t == "localhost" => Err(format!(
            "`{t}` has no port: give ADDRESS:PORT, e.g. 127.0.0.1:8000 (port 0: any free port)"
        )),
        Err(_) => Err(format!(
            "`{s}` is not ADDRESS:PORT with a port of 0 to 65535 (e.g. 127.0.0.1:8000, [::1]:0)"
        )),
    }
}

pub fn run(args: ViewArgs) -> anyhow::Result<ExitCode> {
    let (folders, league) = super::report::resolve(&args.results, false)?;
    for warning in super::report::unreadable_meta(&folders, &league) {
        eprintln!("warning: {warning}");
    }
    let (title, scheduled) = super::report::league_info(&folders, &league);
    // The pages go to a new folder of the viewer's own (a random name,
    // made here, readable by this user only): the results folder is only
    // read, and a path made by someone else is never written into.
    let pages = std::env::temp_dir().join(format!(
        "arena-view-{}-{:016x}",
        std::process::id(),
        rand::random::<u64>()
    ));
    {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&pages)
            .with_context(|| format!("making the pages' folder {}", pages.display()))?;
    }
    let opts = ViewOptions {
        sources: super::report::sources(&folders),
        title,
        scheduled,
        pages: pages.clone(),
        bind: args.bind,
    };
    let no_open = args.no_open;
    let served = view(opts, &mut |addr| {
        let url = format!("http://{addr}/");
        outln!("arena view: {} at {url} (Ctrl-C to stop)", league.display());
        if !no_open {
            open_browser(&url);
        }
    });
    let _ = std::fs::remove_dir_all(&pages);
    served.with_context(|| format!("serving {}", league.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// Opens `url` in the desktop's browser when there is a desktop (a display
/// on Linux, or macOS); says so when it cannot.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        errln!("note: no desktop here (no DISPLAY or WAYLAND_DISPLAY) to open a browser on: open {url} in one (over SSH, forward the port: ssh -L PORT:127.0.0.1:PORT HOST)");
        return;
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if started.is_err() {
        errln!("note: could not open a browser ({opener}): open {url} yourself");
    }
}
