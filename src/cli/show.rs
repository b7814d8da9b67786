//! `arena show RESULTS GAME_ID`: one recorded game, read from its record
//! (found through its row of games.csv, read up to that row only):
//! the set-up, every decision with who made it and of which kind, the
//! result; with `--board`, the board after every turn, replayed by the
//! engine; with `--json`, the record itself.

use crate::engine::Game;
use crate::referee::record;
use anyhow::Context;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// The results folder (`results/NAME`, or a shard's folder).
    results: PathBuf,
    /// The game (a `game_id` of games.csv).
    game_id: String,
    /// Print the board after every turn.
    #[arg(long)]
    board: bool,
    /// Print the record's JSON lines as they are.
    #[arg(long, conflicts_with = "board")]
    json: bool,
}

pub fn run(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let p = &args.results;
    if p.is_file() && p.file_name().is_none_or(|n| n != "games.csv") {
        anyhow::bail!(
            "{}: that is a file, neither a results folder nor a league's games.csv: `arena show` takes a league's results folder (results/NAME, or its games.csv) and a game_id of its games.csv (a game's own record file, as `arena play --record` writes, is read by `arena analyse FILE`)",
            p.display()
        );
    }
    let results = super::args::results_folder(
        &args.results,
        "give a league's results folder, then a game_id of its games.csv",
    )?;
    let args = ShowArgs { results, ..args };
    // The game's row says where its record is (a record log and an
    // offset, or a file of its own in folders of older versions).
    let (at, text) = super::args::game_record(&args.results, &args.game_id)?;
    let path = at.path();
    if args.json {
        super::output::emit(&text, "the game")?;
        return Ok(ExitCode::SUCCESS);
    }
    // Written at the end in one go: a reader that goes away (`| head`)
    // ends nothing but the output.
    let mut out = String::new();
    let rec = record::read_record(&text).with_context(|| path.display().to_string())?;
    let spec = &rec.spec;
    let _ = writeln!(
        out,
        "{} ({}, {}; game_start seed {}): {}",
        spec.game_id,
        spec.variant,
        crate::engine::players_text(spec.settings.players),
        spec.seed,
        spec.names.join(" vs ")
    );
    let mut game = Game::new(spec.variant, &spec.settings)
        .with_context(|| format!("{}: the game cannot be set up", path.display()))?;
    if args.board {
        let _ = writeln!(out, "{}", game.render());
    }
    for d in &rec.decisions {
        let kind = game.decision_kind();
        let who = spec.names.get(d.seat).map_or("?", String::as_str);
        let how = match (d.opening, d.forced) {
            (true, _) => "opening".to_string(),
            (_, true) => "forced".to_string(),
            _ => format!("{:.1} ms", d.elapsed_us as f64 / 1000.0),
        };
        let _ = writeln!(
            out,
            "ply {:>3}  seat {} {:<16} {:<10} {:<8} {}",
            d.ply, d.seat, who, kind, d.option, how
        );
        let before = game.plies();
        game.play(&d.option).with_context(|| {
            format!(
                "{}: decision `{}` at ply {} cannot be replayed",
                path.display(),
                d.option,
                d.ply
            )
        })?;
        if args.board && game.plies() != before {
            let _ = writeln!(out, "{}", game.render());
        }
    }
    let _ = writeln!(out, "result: {:?} ({})", rec.scores, rec.reason);
    if let Some(seat) = rec.offender {
        let who = spec.names.get(seat).map_or("?", String::as_str);
        let _ = writeln!(
            out,
            "forfeit by seat {seat} {who}: {}",
            rec.detail.as_deref().unwrap_or("(no detail)")
        );
    }
    // A record or a row edited by hand, or damaged, shows: the ratings
    // count the row.
    if let Some(why) = record::end_problem(&rec, &game) {
        let _ = writeln!(
            out,
            "warning: the record's end does not follow from its decisions: {why}"
        );
    }
    let csv = crate::league::folder::Layout::new(&args.results).games_csv();
    if let Ok(Some(row)) = crate::league::folder::records::find_row(&csv, &spec.game_id) {
        let scores = row.scores();
        if scores != rec.scores || row.reason != rec.reason {
            let _ = writeln!(
                out,
                "warning: games.csv's row says {scores:?} ({}), its record {:?} ({}): one of them was edited or damaged (the ratings count the row)",
                row.reason, rec.scores, rec.reason
            );
        }
    }
    super::output::emit(&out, "the game")?;
    Ok(ExitCode::SUCCESS)
}
