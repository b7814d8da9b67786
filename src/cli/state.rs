//! `arena state`: replays a move list and prints the state, the decision,
//! its legal options, the history and the result as JSON (or the board as
//! text with `--render`). A debugging aid for bot authors; its output is a
//! stable, documented interface. Owns nothing but this command: the rules
//! stay in the engine.
//!
//! Output (one JSON object, keys sorted):
//! - `variant`, `players`: the game and its player count;
//! - `moves_applied`: how many moves of `--moves` were applied (all of them,
//!   since any illegal move is an error);
//! - `state`: `Game::snapshot()` (the game's own fields plus `variant`,
//!   `players`, `ply`, `to_decide`, `decision`);
//! - `to_decide`: the seat to decide, `null` once the game is over;
//! - `decision`: the kind of the current decision (`none` when over);
//! - `legal`: the legal options in the engine's documented order;
//! - `history`: every decision `{seat, ply, option, forced}`;
//! - `result`: `null`, or `{scores, ranks, reason}` once the game is over.
//!
//! The move list is a game record: every decision, forced ones included.
//! An illegal move is an error (exit status 2, message on stderr) naming its
//! 1-based position in the list, the move and the legal options there.

use crate::engine::{Game, Settings, Variant, DEFAULT_MAX_PLIES};
use anyhow::Context;
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
// `--players -1` is a bad number, not a flag named -1.
#[command(allow_negative_numbers = true)]
pub struct StateArgs {
    /// The game: filo, tricala, hackaback, kisolo, diffusion.
    game: String,
    /// Number of players (Tricala: 2 or 3).
    #[arg(long, default_value_t = 2, value_parser = super::args::whole)]
    players: u64,
    /// A game option KEY=VALUE (repeatable), e.g. `columns=6` for Kisolo.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// The ply cap (a draw, reason max_plies, when reached), 1 to
    /// 10000000 as in a league.
    #[arg(long, default_value_t = DEFAULT_MAX_PLIES, value_parser = super::args::whole_in::<u32>(1, crate::league::config::MAX_MAX_PLIES.unsigned_abs()))]
    max_plies: u32,
    /// The moves, separated by spaces or commas, each exactly as listed,
    /// forced decisions included.
    #[arg(long, default_value = "")]
    moves: String,
    /// Print the board as text (with the decision and legal options)
    /// instead of JSON.
    #[arg(long)]
    render: bool,
}

/// The validated settings of the command.
fn settings(args: &StateArgs) -> anyhow::Result<(Variant, Settings)> {
    let variant = super::args::game_positional(&args.game)?;
    let settings = Settings {
        // Beyond usize is no player count either: the engine names it.
        players: usize::try_from(args.players).unwrap_or(usize::MAX),
        max_plies: args.max_plies,
        options: super::args::game_options(&args.options)?,
    };
    Ok((variant, settings))
}

/// Replays `moves` on a new game; an illegal move names its position.
fn replay(variant: Variant, settings: &Settings, moves: &str) -> anyhow::Result<Game> {
    let mut game =
        Game::new(variant, settings).with_context(|| format!("cannot set up {variant}"))?;
    for (i, mv) in crate::engine::move_words(moves).enumerate() {
        play_listed(&mut game, mv).map_err(|e| anyhow::anyhow!("move {} {e}", i + 1))?;
    }
    Ok(game)
}

/// Plays `mv` if it is one of the legal options exactly as listed, as
/// the referee takes a bot's (protocol.md; the engine's own reading is
/// more forgiving in some games), else says why not: "`mv` is illegal:
/// ...; legal options there: ...".
pub(super) fn play_listed(game: &mut Game, mv: &str) -> Result<(), String> {
    let legal = game.legal();
    if legal.iter().any(|l| l == mv) {
        if let Err(e) = game.play(mv) {
            return Err(format!("`{mv}` is illegal: {e}"));
        }
        return Ok(());
    }
    let why = match game.clone().play(mv) {
        Err(e) => e.to_string(),
        Ok(_) => "not one of the options as listed".to_string(),
    };
    let shown = if legal.is_empty() {
        "none (the game is over)".to_string()
    } else {
        legal.join(" ")
    };
    Err(format!(
        "`{mv}` is illegal: {why}{}; legal options there: {shown}",
        written_otherwise(mv, &legal)
    ))
}

/// What makes `mv` differ from a legal option where the eye cannot tell:
/// a character that is not ASCII (a zero-width space pasted with it shows
/// as nothing at all), or a legal option in another case.
fn written_otherwise(mv: &str, legal: &[String]) -> String {
    if let Some(c) = mv.chars().find(|c| !c.is_ascii()) {
        return format!(
            " (it holds U+{:04X}, which is not ASCII: every option is)",
            u32::from(c)
        );
    }
    match legal.iter().find(|l| l.eq_ignore_ascii_case(mv)) {
        Some(meant) => format!(" (`{meant}` is legal: options are taken exactly as listed)"),
        None => String::new(),
    }
}

/// The JSON document described in the module comment.
pub fn state_json(game: &Game) -> serde_json::Value {
    let result = game.outcome().map(|o| {
        json!({
            "scores": o.scores(),
            "ranks": &o.ranks[..game.players()],
            "reason": o.reason.name(),
        })
    });
    json!({
        "variant": game.variant().name(),
        "players": game.players(),
        "moves_applied": game.history().len(),
        "state": game.snapshot(),
        "to_decide": game.to_decide(),
        "decision": game.decision_kind(),
        "legal": game.legal(),
        "history": game.history(),
        "result": result,
    })
}

/// The board as text, then who decides what, or the result.
fn render_text(game: &Game) -> String {
    let mut s = game.render();
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&format!("ply {}\n", game.plies()));
    match (game.to_decide(), game.outcome()) {
        (Some(seat), _) => s.push_str(&format!(
            "seat {seat} to decide ({}): {}\n",
            game.decision_kind(),
            game.legal().join(" ")
        )),
        (None, Some(o)) => s.push_str(&format!(
            "result: ranks {:?}, scores {:?}, reason {}\n",
            &o.ranks[..game.players()],
            o.scores(),
            o.reason
        )),
        (None, None) => {}
    }
    s
}

pub fn run(args: StateArgs) -> anyhow::Result<ExitCode> {
    let (variant, settings) = settings(&args)?;
    let game = replay(variant, &settings, &args.moves)?;
    let out = match args.render {
        true => render_text(&game),
        false => format!("{}\n", serde_json::to_string_pretty(&state_json(&game))?),
    };
    super::output::emit(&out, "the state")?;
    Ok(ExitCode::SUCCESS)
}
