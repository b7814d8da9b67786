//! `random-bot`: the Rust random bot (bots/random-rust), protocol v1.
//!
//! A template for bot authors: read one JSON object per line on stdin,
//! answer `hello` and `request`, exit on `quit` or end of input. Only the
//! fields it needs are decoded; everything else is skipped. Owns nothing
//! of the arena: it talks to it only over the pipes.
//!
//! It is reproducible: each game's choices are drawn from the `seed` of
//! `game_start`, the game id and the seat (and `RANDOM_BOT_SEED=N` if set,
//! to tell copies of it apart), whatever ran before on the same process, so
//! a league run again, or resumed, replays the same games.

use rand::{Rng, SeedableRng};
use serde::Deserialize;
use std::io::{BufRead, Write};

#[derive(Deserialize)]
struct Message {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    legal: Vec<String>,
    #[serde(default)]
    game_id: String,
    #[serde(default)]
    seat: u64,
    /// `game_start.seed`: a u64 as a decimal string.
    #[serde(default)]
    seed: Option<String>,
}

/// FNV-1a over the game id, mixed with the seed and the seat.
fn game_seed(seed: u64, game_id: &str, seat: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in game_id.bytes().chain(seat.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn main() {
    let fixed: Option<u64> = std::env::var("RANDOM_BOT_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let seed = fixed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        t ^ u64::from(std::process::id())
    });
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Ok(msg) = serde_json::from_str::<Message>(&line) else {
            continue;
        };
        let reply = match msg.kind.as_str() {
            "hello" => {
                r#"{"type":"hello","name":"random-rust","version":"1.0","author":"mancala-arena"}"#
                    .to_string()
            }
            "request" if !msg.legal.is_empty() => {
                let option = &msg.legal[rng.gen_range(0..msg.legal.len())];
                let mut s = String::with_capacity(option.len() + 32);
                s.push_str(r#"{"type":"reply","option":"#);
                s.push_str(&serde_json::to_string(option).unwrap_or_default());
                s.push('}');
                s
            }
            "game_start" => {
                // The referee's seed for this game, mixed with the seat and
                // RANDOM_BOT_SEED (so that two bots of this program at one
                // table differ); without one, RANDOM_BOT_SEED alone.
                let sent = msg.seed.as_deref().and_then(|s| s.parse::<u64>().ok());
                if sent.is_some() || fixed.is_some() {
                    let seed = sent.unwrap_or(0) ^ fixed.unwrap_or(0);
                    rng = rand_chacha::ChaCha8Rng::seed_from_u64(game_seed(
                        seed,
                        &msg.game_id,
                        msg.seat,
                    ));
                }
                continue;
            }
            "quit" => return,
            _ => continue,
        };
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}
