//! `random-bot`: the Rust random bot (bots/random-rust), protocol v1.
//!
//! A template for bot authors: read one JSON object per line on stdin,
//! answer `hello` and `request`, exit on `quit` or end of input. Only the
//! fields it needs are decoded; everything else is skipped. Owns nothing
//! of the arena: it talks to it only over the pipes.

use rand::{Rng, SeedableRng};
use serde::Deserialize;
use std::io::{BufRead, Write};

#[derive(Deserialize)]
struct Message {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    legal: Vec<String>,
}

fn main() {
    let seed = std::env::var("RANDOM_BOT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
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
            "quit" => return,
            _ => continue,
        };
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}
