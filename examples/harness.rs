//! The minimal blocking harness of the throughput benchmark (issue 16,
//! BENCHMARKS.md "League: games per second"): the games of a league file,
//! in the schedule's order, played with the engine directly over blocking
//! pipes, to show what `arena run` costs on top of the bots and the rules.
//!
//!     cargo build --release --bins --example harness
//!     target/release/examples/harness benches/throughput.toml [WORKERS]
//!
//! The same bots (the file's commands and environment, no sandbox, no
//! stderr log), each worker a thread pinned to its CPU as the league's
//! workers are, its bots started once and reused; the same messages (game
//! start, requests with the same bytes, game end). No files, no time
//! limits, no checks of what the bots write beyond decoding the reply: a
//! bot that fails stops the harness. Prints one line: games, decisions
//! (plies, as games.csv counts them), seconds and 100-decision games/s.

use mancala_arena::bot::manifest;
use mancala_arena::engine::Game;
use mancala_arena::league::config::Tournament;
use mancala_arena::league::schedule::{self, Cursor, Schedule};
use mancala_arena::protocol::{
    self, encode_into, encode_request, DecisionMsg, FromBot, RequestMsg, TimeMsg, ToBot,
};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

/// One bot process with blocking pipes.
struct Bot {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Bot {
    fn start(t: &Tournament, b: usize) -> Bot {
        let spec = &t.bots[b];
        let argv = manifest::expand(&spec.command);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().expect("the bot starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut bot = Bot {
            child,
            stdin,
            stdout,
            line: Vec::with_capacity(256),
        };
        let games: Vec<&str> = mancala_arena::engine::Variant::ALL
            .iter()
            .map(|v| v.name())
            .collect();
        let mut buf = Vec::new();
        encode_into(
            &ToBot::Hello {
                protocol: protocol::PROTOCOL_VERSION,
                games: &games,
            },
            &mut buf,
        );
        bot.send(&buf);
        bot.read();
        bot
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).expect("the bot reads");
    }

    fn read(&mut self) -> &[u8] {
        self.line.clear();
        let n = self
            .stdout
            .read_until(b'\n', &mut self.line)
            .expect("the bot writes");
        assert!(n > 0, "the bot closed its stdout");
        self.line.pop();
        &self.line
    }
}

/// Applies a decision and queues it for the seats that have not seen it
/// (all but the one asked), as the referee does.
fn record(
    game: &mut Game,
    unseen: &mut [Vec<DecisionMsg>],
    option: &str,
    asked: Option<usize>,
    opening: bool,
) {
    let d = game.play(option).expect("a legal option").clone();
    let msg = DecisionMsg {
        seat: d.seat,
        ply: d.ply,
        option: d.option,
        forced: d.forced || opening,
        opening,
    };
    for (seat, u) in unseen.iter_mut().enumerate() {
        if Some(seat) != asked {
            u.push(msg.clone());
        }
    }
}

fn pin_to_cpu(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Plays games from the shared cursor until none is left; returns the
/// games and plies played.
fn worker(t: &Tournament, games: &Schedule, cursor: &Mutex<Cursor>, cpu: usize) -> (usize, u64) {
    pin_to_cpu(cpu);
    let mut bots: Vec<Option<Bot>> = (0..t.bots.len()).map(|_| None).collect();
    let mut buf = Vec::with_capacity(4096);
    let (mut played, mut plies) = (0, 0u64);
    let time = TimeMsg {
        per_decision_ms: match t.time.decision_ms {
            0 => t.time.watchdog_ms,
            ms => ms,
        },
        base_ms: None,
        increment_ms: None,
    };
    loop {
        let Some(g) = games.next_game(&mut cursor.lock().expect("cursor")) else {
            break;
        };
        let vspec = &t.variants[g.variant];
        let settings = vspec.settings(t.max_plies);
        let opening = schedule::opening(vspec, &settings, g.seed, t.openings);
        let names: Vec<String> = g.seats.iter().map(|&b| t.bots[b].name.clone()).collect();
        let seed = schedule::bot_seed(t.seed, &g.game_id);
        let n = g.seats.len();
        let mut game = Game::new(vspec.variant, &settings).expect("a playable game");
        let mut unseen: Vec<Vec<DecisionMsg>> = vec![Vec::new(); n];
        let mut seqs = vec![0u64; t.bots.len()];
        for o in &opening {
            record(&mut game, &mut unseen, o, None, true);
        }
        for (seat, &b) in g.seats.iter().enumerate() {
            let bot = bots[b].get_or_insert_with(|| Bot::start(t, b));
            buf.clear();
            encode_into(
                &ToBot::GameStart {
                    game_id: &g.game_id,
                    variant: vspec.variant.name(),
                    players: settings.players,
                    options: &settings.options,
                    max_plies: settings.max_plies,
                    seat,
                    names: &names,
                    time,
                    seed: seed.to_string(),
                },
                &mut buf,
            );
            bot.send(&buf);
        }
        while let Some(seat) = game.to_decide() {
            let legal = game.legal();
            if let [only] = legal.as_slice() {
                let only = only.clone();
                record(&mut game, &mut unseen, &only, None, false);
                continue;
            }
            let b = g.seats[seat];
            let bot = bots[b].as_mut().expect("started");
            seqs[b] += 1;
            buf.clear();
            encode_request(
                &RequestMsg {
                    game_id: &g.game_id,
                    seq: seqs[b],
                    ply: game.plies(),
                    legal: &legal,
                    since: &unseen[seat],
                    timeout_ms: time.per_decision_ms,
                    time_left_ms: None,
                },
                |out| game.write_snapshot(out),
                &mut buf,
            );
            bot.send(&buf);
            let option = match protocol::decode(bot.read()) {
                Ok(FromBot::Reply { option, .. }) => option,
                other => panic!("{}: not a reply: {other:?}", g.game_id),
            };
            unseen[seat].clear();
            record(&mut game, &mut unseen, &option, Some(seat), false);
        }
        let outcome = game.outcome().expect("the game is over");
        let scores = outcome.scores();
        let state = game.snapshot();
        for (seat, &b) in g.seats.iter().enumerate() {
            buf.clear();
            encode_into(
                &ToBot::GameEnd {
                    game_id: &g.game_id,
                    scores: &scores,
                    reason: outcome.reason.name(),
                    offender: None,
                    since: &unseen[seat],
                    state: &state,
                },
                &mut buf,
            );
            bots[b].as_mut().expect("started").send(&buf);
        }
        played += 1;
        plies += u64::from(game.plies());
    }
    for bot in bots.iter_mut().flatten() {
        buf.clear();
        encode_into(&ToBot::Quit {}, &mut buf);
        bot.send(&buf);
        let _ = bot.child.wait();
    }
    (played, plies)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: harness LEAGUE.toml [WORKERS]");
    let workers: usize = args.next().map_or(2, |w| w.parse().expect("WORKERS"));
    let src = std::fs::read_to_string(&path).expect("the league file");
    let t = Tournament::parse(path.as_ref(), &src).expect("a league file");
    let games = Schedule::new(&t, None);
    let cursor = Mutex::new(games.cursor());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t0 = Instant::now();
    let results: Vec<(usize, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (t, games, cursor) = (&t, &games, &cursor);
                s.spawn(move || worker(t, games, cursor, w % cpus))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker"))
            .collect()
    });
    let wall = t0.elapsed().as_secs_f64();
    let played: usize = results.iter().map(|r| r.0).sum();
    let plies: u64 = results.iter().map(|r| r.1).sum();
    println!(
        "harness, {workers} workers: {played} games, {plies} decisions, {wall:.2} s, {:.0} 100-decision games/s",
        plies as f64 / wall / 100.0
    );
}
