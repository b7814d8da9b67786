//! The protocol-v1 loop shared by the reference bots (protocol.md): reads
//! the referee's messages on stdin, keeps its own engine state by replaying
//! the decisions it sees (`since` and its own replies), and answers each
//! `request` with the [`Player`]'s choice within a time budget. Owns nothing
//! of the arena: it talks to it only over the pipes.
//!
//! Never sends an option outside `legal`: if its own state ever disagrees
//! with the referee's (a game it cannot build, an option it cannot replay,
//! a different legal list), it plays a random legal option for the rest of
//! that game and says so on stderr.

use super::eval::Evaluate;
use crate::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    Rules, Settings, Variant, DEFAULT_MAX_PLIES,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

/// A bot's decision rule.
pub trait Player {
    /// Picks an option of `g`'s current decision, aiming to return before
    /// `deadline`.
    fn choose<G: Evaluate>(&mut self, g: &G, deadline: Instant) -> Option<G::Opt>;
    /// A line for stderr at the end of a game (search statistics), if any.
    fn report(&mut self) -> Option<String> {
        None
    }
    /// Draws this game's randomness from `seed` (`game_start.seed`, mixed
    /// with the seat): the same seed, the same game.
    fn seed(&mut self, _seed: u64) {}
}

/// The seed of one seat's randomness in a game: the game's seed and the
/// seat mixed (SplitMix64's finaliser), so two copies of a bot at one
/// table do not draw the same numbers.
pub fn seat_seed(game_seed: u64, seat: u64) -> u64 {
    let mut z = game_seed ^ seat.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How the loop spends time.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// A fixed budget per decision (`--millis`), still capped by the safety
    /// rule below.
    pub millis: Option<u64>,
    /// A fixed number of search iterations per decision (`--iterations`),
    /// whatever the clock: a search that stops on time is never
    /// reproducible, one that stops on a count is (given the seed).
    pub iterations: Option<u64>,
}

impl Timing {
    /// The budget of one decision: a quarter of the reply timeout, and at
    /// most a twentieth of the remaining game clock, and `--millis` if set.
    pub fn budget(&self, timeout_ms: u64, time_left_ms: Option<u64>) -> Duration {
        let mut ms = timeout_ms / 4;
        if let Some(left) = time_left_ms {
            ms = ms.min(left / 20);
        }
        if let Some(m) = self.millis {
            ms = ms.min(m);
        }
        Duration::from_millis(ms.max(1))
    }
}

/// Parses `--millis N` (or `--millis=N`) from the command line.
pub fn parse_args() -> Result<Timing, String> {
    parse(std::env::args().skip(1))
}

/// Parses `--millis N` and `--iterations N` (or `--flag=N`): the
/// driver's flags, for a bot that takes flags of its own too.
pub fn parse(mut args: impl Iterator<Item = String>) -> Result<Timing, String> {
    let mut timing = Timing {
        millis: None,
        iterations: None,
    };
    while let Some(a) = args.next() {
        let (flag, value) = match a.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let slot = match flag.as_str() {
            "--millis" => &mut timing.millis,
            "--iterations" => &mut timing.iterations,
            _ => {
                return Err(format!(
                    "unknown argument `{a}` (usage: [--millis N] [--iterations N])"
                ))
            }
        };
        let value = value.or_else(|| args.next());
        *slot = Some(
            value
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|&n| n > 0)
                .ok_or(format!("{flag} needs a positive whole number"))?,
        );
    }
    Ok(timing)
}

/// A random generator seeded from `BOT_SEED` or the clock and process id.
pub fn rng() -> ChaCha8Rng {
    let seed = std::env::var("BOT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            t ^ u64::from(std::process::id())
        });
    ChaCha8Rng::seed_from_u64(seed)
}

struct Io<R, W> {
    input: R,
    out: W,
    line: String,
}

impl<R: BufRead, W: Write> Io<R, W> {
    /// The next message (`None` at end of input); lines that are not JSON
    /// are skipped.
    fn next(&mut self) -> Option<Value> {
        loop {
            self.line.clear();
            match self.input.read_line(&mut self.line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if let Ok(v) = serde_json::from_str::<Value>(&self.line) {
                return Some(v);
            }
        }
    }

    fn send(&mut self, v: &Value) -> bool {
        writeln!(self.out, "{v}")
            .and_then(|()| self.out.flush())
            .is_ok()
    }
}

enum Next {
    Continue,
    Quit,
    /// A message the game loop does not handle (a new `game_start`).
    Redo(Value),
}

/// Runs the protocol on stdin/stdout until `quit` or end of input.
pub fn run<P: Player>(name: &str, player: &mut P, timing: Timing) {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut io = Io {
        input: stdin.lock(),
        out: stdout.lock(),
        line: String::new(),
    };
    serve(&mut io, name, player, timing);
}

fn hello(name: &str) -> Value {
    serde_json::json!({"type": "hello", "name": name, "version": "1.0",
        "author": "mancala-arena", "protocol": 1})
}

fn serve<R: BufRead, W: Write, P: Player>(
    io: &mut Io<R, W>,
    name: &str,
    player: &mut P,
    timing: Timing,
) {
    let mut rng = rng();
    let mut pending = None;
    loop {
        let Some(msg) = pending.take().or_else(|| io.next()) else {
            return;
        };
        let next = match msg["type"].as_str() {
            Some("hello") => {
                if !io.send(&hello(name)) {
                    return;
                }
                Next::Continue
            }
            Some("game_start") => start(io, &msg, name, player, timing),
            Some("request") => {
                // A request outside a game we know: answer at random.
                let legal = legal_of(&msg);
                if legal.is_empty() || !io.send(&reply(&legal[rng.gen_range(0..legal.len())])) {
                    return;
                }
                Next::Continue
            }
            Some("quit") => Next::Quit,
            _ => Next::Continue,
        };
        match next {
            Next::Continue => {}
            Next::Quit => return,
            Next::Redo(m) => pending = Some(m),
        }
    }
}

fn legal_of(msg: &Value) -> Vec<String> {
    msg["legal"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn reply(option: &str) -> Value {
    serde_json::json!({"type": "reply", "option": option})
}

fn start<R: BufRead, W: Write, P: Player>(
    io: &mut Io<R, W>,
    msg: &Value,
    name: &str,
    player: &mut P,
    timing: Timing,
) -> Next {
    let variant = msg["variant"]
        .as_str()
        .and_then(|v| v.parse::<Variant>().ok());
    let options = msg["options"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let v = v.as_str().map_or_else(|| v.to_string(), String::from);
                    (k.clone(), v)
                })
                .collect()
        })
        .unwrap_or_default();
    let settings = Settings {
        players: msg["players"].as_u64().unwrap_or(2) as usize,
        max_plies: msg["max_plies"]
            .as_u64()
            .map_or(DEFAULT_MAX_PLIES, |m| m.min(u32::MAX as u64) as u32),
        options,
    };
    let per_decision = msg["time"]["per_decision_ms"].as_u64().unwrap_or(2000);
    if let Some(seed) = msg["seed"].as_str().and_then(|s| s.parse::<u64>().ok()) {
        player.seed(seat_seed(seed, msg["seat"].as_u64().unwrap_or(0)));
    }
    let ctx = Ctx {
        name,
        timing,
        per_decision,
    };
    match variant {
        Some(Variant::Filo) => play::<Filo, _, _, _>(io, &settings, player, ctx),
        Some(Variant::Tricala) => play::<Tricala, _, _, _>(io, &settings, player, ctx),
        Some(Variant::Hackaback) => play::<Hackaback, _, _, _>(io, &settings, player, ctx),
        Some(Variant::Kisolo) => play::<Kisolo, _, _, _>(io, &settings, player, ctx),
        Some(Variant::Diffusion) => play::<Diffusion, _, _, _>(io, &settings, player, ctx),
        None => {
            eprintln!("unknown variant {}: playing at random", msg["variant"]);
            Next::Continue
        }
    }
}

#[derive(Clone, Copy)]
struct Ctx<'a> {
    name: &'a str,
    timing: Timing,
    per_decision: u64,
}

/// Replays one decision on the own state; a failure drops the state.
fn replay<G: Rules>(state: &mut Option<G>, option: &str) {
    if let Some(g) = state {
        let ok = g.parse(option).and_then(|o| g.apply(o)).is_ok();
        if !ok {
            eprintln!("cannot replay `{option}`: playing at random for the rest of this game");
            *state = None;
        }
    }
}

fn play<G: Evaluate, R: BufRead, W: Write, P: Player>(
    io: &mut Io<R, W>,
    settings: &Settings,
    player: &mut P,
    ctx: Ctx<'_>,
) -> Next {
    let mut rng = rng();
    let mut state = match G::new(settings) {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("cannot set up {}: {e}; playing at random", G::VARIANT);
            None
        }
    };
    let mut buf = Vec::new();
    loop {
        let Some(msg) = io.next() else {
            return Next::Quit;
        };
        match msg["type"].as_str() {
            Some("request") => {
                let t0 = Instant::now();
                let legal = legal_of(&msg);
                if legal.is_empty() {
                    continue;
                }
                if let Some(since) = msg["since"].as_array() {
                    for d in since {
                        replay(&mut state, d["option"].as_str().unwrap_or(""));
                    }
                }
                if let Some(g) = &state {
                    g.options(&mut buf);
                    let mut mine: Vec<String> = buf.iter().map(|&o| g.notation(o)).collect();
                    let mut theirs = legal.clone();
                    mine.sort();
                    theirs.sort();
                    if mine != theirs {
                        eprintln!(
                            "own legal list {mine:?} differs from {legal:?}: playing at random"
                        );
                        state = None;
                    }
                }
                let timeout = msg["timeout_ms"].as_u64().unwrap_or(ctx.per_decision);
                let left = msg["time_left_ms"].as_u64();
                let deadline = t0 + ctx.timing.budget(timeout, left);
                let choice = state
                    .as_ref()
                    .and_then(|g| player.choose(g, deadline).map(|o| g.notation(o)))
                    .filter(|o| legal.contains(o))
                    .unwrap_or_else(|| legal[rng.gen_range(0..legal.len())].clone());
                if !io.send(&reply(&choice)) {
                    return Next::Quit;
                }
                replay(&mut state, &choice);
            }
            Some("game_end") => {
                if let Some(r) = player.report() {
                    eprintln!("{} {}: {r}", ctx.name, G::VARIANT);
                }
                return Next::Continue;
            }
            Some("hello") if !io.send(&hello(ctx.name)) => return Next::Quit,
            Some("game_start") => return Next::Redo(msg),
            Some("quit") => return Next::Quit,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct First;
    impl Player for First {
        fn choose<G: Evaluate>(&mut self, g: &G, _deadline: Instant) -> Option<G::Opt> {
            let mut buf = Vec::new();
            g.options(&mut buf);
            buf.last().copied()
        }
    }

    #[test]
    fn the_arguments_are_millis_and_iterations() {
        let args = |a: &[&str]| parse(a.iter().map(|s| s.to_string()));
        let t = args(&["--iterations", "40", "--millis=7"]).unwrap();
        assert_eq!((t.millis, t.iterations), (Some(7), Some(40)));
        assert!(args(&["--iterations", "0"])
            .unwrap_err()
            .contains("--iterations needs a positive whole number"));
        assert!(args(&["--fast"])
            .unwrap_err()
            .contains("unknown argument `--fast`"));
    }

    #[test]
    fn seats_of_one_game_draw_different_seeds() {
        assert_ne!(seat_seed(7, 0), seat_seed(7, 1));
        assert_ne!(seat_seed(7, 0), seat_seed(8, 0));
        assert_eq!(seat_seed(7, 2), seat_seed(7, 2));
    }

    #[test]
    fn budget_keeps_a_safety_margin() {
        let t = Timing {
            millis: None,
            iterations: None,
        };
        assert_eq!(t.budget(2000, None), Duration::from_millis(500));
        assert_eq!(t.budget(2000, Some(4000)), Duration::from_millis(200));
        let t = Timing {
            millis: Some(30),
            iterations: None,
        };
        assert_eq!(t.budget(2000, None), Duration::from_millis(30));
        assert_eq!(t.budget(40, None), Duration::from_millis(10));
    }

    /// A Diffusion conversation: the bot replays the opponent's `D`, answers
    /// with its own choice (the last legal option), and tracks that too.
    #[test]
    fn tracks_the_game_and_answers_legally() {
        let input = concat!(
            r#"{"type":"hello","protocol":1,"games":["diffusion"]}"#,
            "\n",
            r#"{"type":"game_start","game_id":"g1","variant":"diffusion","players":2,"options":{},"max_plies":50,"seat":1,"names":["a","b"],"time":{"per_decision_ms":100}}"#,
            "\n",
            r#"{"type":"request","game_id":"g1","ply":1,"state":{},"legal":["A","B","C","E","F","G","H","I","J","K","L"],"since":[{"seat":0,"ply":0,"option":"D","forced":false}],"timeout_ms":100}"#,
            "\n",
            r#"{"type":"game_end","game_id":"g1","scores":[0.5,0.5],"reason":"max_plies","since":[],"state":{}}"#,
            "\n",
            r#"{"type":"quit"}"#,
            "\n",
        );
        let mut io = Io {
            input: input.as_bytes(),
            out: Vec::new(),
            line: String::new(),
        };
        serve(
            &mut io,
            "t",
            &mut First,
            Timing {
                millis: Some(5),
                iterations: None,
            },
        );
        let out = String::from_utf8(io.out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].contains(r#""type":"hello""#));
        // D emptied, so the last legal option is L.
        assert!(lines[1].contains(r#""option":"L""#), "{out}");
    }
}
