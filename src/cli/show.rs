//! `arena show RESULTS GAME_ID`: one recorded game, read from its record
//! (found through its row of games.csv, read up to that row only):
//! the set-up, every decision with who made it and of which kind, the
//! result; with `--board`, the board after every turn, replayed by the
//! engine; with `--json`, the record itself.

use crate::engine::Game;
use crate::referee::record;
use anyhow::Context;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
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
    let (at, text) =
        super::args::game_record(&args.results, &args.game_id).map_err(|e| match not_in_shards(
            &args.results,
            &args.game_id,
        ) {
            Some(why) => anyhow::anyhow!(why),
            None => e,
        })?;
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

/// Why game `id` is not in the sharded league whose folder `dir` holds
/// its shards (and no games.csv of its own): not played yet, if its
/// schedule has it (which shard's), else no such game. `None` for a
/// folder that is not a sharded league's.
fn not_in_shards(dir: &Path, id: &str) -> Option<String> {
    use crate::league::folder::{read_meta, shard_dirs, Layout};
    use crate::league::schedule::Shard;
    if Layout::new(dir).games_csv().exists() {
        return None;
    }
    let shards = shard_dirs(dir);
    let meta = shards.iter().find_map(|s| read_meta(s))?;
    let names: Vec<String> = shards
        .iter()
        .filter_map(|s| Some(s.file_name()?.to_string_lossy().into_owned()))
        .collect();
    let schedule = crate::league::status::noted_schedule(&meta, None);
    let game = schedule.as_ref().and_then(|s| s.find(id));
    let count = meta
        .shard
        .as_deref()
        .and_then(|s| s.parse::<Shard>().ok())
        .map(|s| s.count);
    Some(match (game, count) {
        (Some(g), Some(count)) => {
            let shard = (1..=count)
                .map(|index| Shard { index, count })
                .find(|s| s.contains(&g))
                .map_or(String::new(), |s| format!(" (shard {}/{count})", s.index));
            format!(
                "{}: game `{id}` of league `{}` is in its schedule{shard} but not played yet: no row of it in the games.csv of {}",
                dir.display(),
                meta.name,
                names.join(", ")
            )
        }
        _ => format!(
            "{}: no game `{id}` in league `{}`: none of its shards ({}) has a row of that game_id in its games.csv{}",
            dir.display(),
            meta.name,
            names.join(", "),
            match schedule {
                Some(_) => ", nor its schedule such a game",
                None => "",
            }
        ),
    })
}
