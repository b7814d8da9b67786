//! Referee round trip vs a raw pipe ping-pong (issue 3, item 7).
//!
//! Both talk to the same instant-reply bot (`random-bot`) with the same
//! request line, so the difference is the referee's own cost (tokio, the
//! engine's snapshot and legal list, serialization, parsing). Each is run
//! with the bench and the bot pinned to one CPU (the league's set-up) and
//! unpinned. Then the referee's CPU cost of a bot flooding blank lines
//! (issue 11). Run: `cargo bench --bench referee` (a few seconds).

use mancala_arena::bot::{BotCommand, BotProcess, Launch, Limits, Sandbox};
use mancala_arena::engine::{Game, Settings, Variant};
use mancala_arena::protocol::{encode_into, ToBot};
use mancala_arena::referee::{play_game, BotPlayer, GameSpec, Player, RandomPlayer};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROUND_TRIPS: usize = 20_000;

fn bot() -> &'static str {
    env!("CARGO_BIN_EXE_random-bot")
}

fn pin_to_cpu(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn unpin() {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SAFETY: as above.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in 0..n {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn variant() -> Variant {
    Variant::ALL
        .into_iter()
        .find(|&v| Game::new(v, &Settings::default()).is_ok())
        .expect("no game engine available")
}

/// A typical request line, built by the real encoder from a real position.
fn request_line(v: Variant) -> Vec<u8> {
    let game = Game::new(v, &Settings::default()).unwrap();
    let legal = game.legal();
    let state = game.snapshot();
    let mut buf = Vec::new();
    encode_into(
        &ToBot::Request {
            game_id: "bench-000001",
            seq: 1,
            ply: game.plies(),
            state: &state,
            legal: &legal,
            since: &[],
            timeout_ms: 5000,
            time_left_ms: None,
        },
        &mut buf,
    );
    buf
}

/// Blocking write/read of the same line with no runtime at all.
fn raw_ping_pong(line: &[u8]) -> (Duration, usize) {
    let mut child = Command::new(bot())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut reply = String::new();
    let mut reply_len = 0;
    // Warm-up.
    for _ in 0..1000 {
        stdin.write_all(line).unwrap();
        reply.clear();
        stdout.read_line(&mut reply).unwrap();
    }
    let t = Instant::now();
    for _ in 0..ROUND_TRIPS {
        stdin.write_all(line).unwrap();
        reply.clear();
        stdout.read_line(&mut reply).unwrap();
        reply_len = reply.len();
    }
    let d = t.elapsed();
    drop(stdin);
    let _ = child.wait();
    (d / ROUND_TRIPS as u32, reply_len)
}

/// The referee: whole games between the bot and the in-process random
/// player on a current-thread runtime (the league's worker set-up).
/// Returns the mean time the referee waited per bot decision, the bot
/// decisions per second over the whole run, and all decisions per second.
fn referee_games(v: Variant, sandbox: Sandbox, ponder: bool) -> (Duration, f64, f64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let cmd = BotCommand::from_words(&[bot()]).unwrap();
        let mut launch = BotPlayer::launch(cmd).sandboxed(sandbox);
        launch.ponder = ponder;
        let mut bot = BotPlayer::start(&launch, &Default::default())
            .await
            .unwrap();
        let mut random = RandomPlayer::new("random", 1);
        let mut asked = 0usize;
        let mut all = 0usize;
        let mut waited = Duration::ZERO;
        let mut warm = true;
        let mut t = Instant::now();
        let mut g = 0;
        while asked < ROUND_TRIPS {
            g += 1;
            let spec = GameSpec::new(format!("bench-{g:06}"), v, Settings::default());
            let mut ps: Vec<&mut dyn Player> = if g % 2 == 0 {
                vec![&mut bot, &mut random]
            } else {
                vec![&mut random, &mut bot]
            };
            let bot_seat = usize::from(g % 2 == 1);
            let r = play_game(&spec, &mut ps, &mut |_| {}).await.unwrap();
            assert!(!r.is_forfeit(), "{r:?}");
            if warm && g >= 10 {
                warm = false;
                t = Instant::now();
                continue;
            }
            if warm {
                continue;
            }
            all += r.decisions.len();
            for d in r
                .decisions
                .iter()
                .filter(|d| d.seat == bot_seat && !d.forced)
            {
                asked += 1;
                waited += Duration::from_micros(d.elapsed_us);
            }
        }
        let total = t.elapsed().as_secs_f64();
        bot.quit().await;
        (
            waited / asked as u32,
            asked as f64 / total,
            all as f64 / total,
        )
    })
}

/// This process's CPU time (user + system), from /proc/self/stat.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let rest = stat.rsplit_once(')').unwrap().1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state is field 3; utime 14 and stime 15 (ticks).
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// Reads past `mb` MB of blank lines to the line after them, as the
/// referee does while a bot floods: wall time and the referee's CPU time.
fn blank_flood(mb: usize) -> (Duration, Duration) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let script = format!("head -c {} /dev/zero | tr '\\0' '\\n'; echo done", mb << 20);
        let cmd = BotCommand::from_words(&["sh", "-c", &script]).unwrap();
        let mut p = BotProcess::spawn(&Launch::new(cmd, Limits::new(1 << 16))).unwrap();
        let (t0, c0) = (Instant::now(), cpu_time());
        let far = tokio::time::Instant::now() + Duration::from_secs(600);
        assert_eq!(p.read_line(far).await.unwrap(), b"done");
        (t0.elapsed(), cpu_time() - c0)
    })
}

/// Mean time to start a bot (spawn and handshake) and end it, over `n`.
fn start_cost(sandbox: Sandbox, n: u32) -> Duration {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let t0 = Instant::now();
        for _ in 0..n {
            let cmd = BotCommand::from_words(&[bot()]).unwrap();
            let launch = BotPlayer::launch(cmd).sandboxed(sandbox);
            let mut b = BotPlayer::start(&launch, &Default::default())
                .await
                .unwrap();
            b.quit().await;
        }
        t0.elapsed() / n
    })
}

fn main() {
    let v = variant();
    let line = request_line(v);
    println!(
        "variant {v}; request line {} bytes; {ROUND_TRIPS} round trips per figure",
        line.len()
    );
    for pinned in [true, false] {
        if pinned {
            pin_to_cpu(0);
        } else {
            unpin();
        }
        let place = if pinned {
            "pinned (one CPU)"
        } else {
            "unpinned"
        };
        let (raw, reply_len) = raw_ping_pong(&line);
        // None: no sandbox, and the bot may think between turns; the
        // sandbox without pausing; the full sandbox, paused between turns.
        let (rt_off, _, all_off) = referee_games(v, Sandbox::Off, true);
        let (rt_on, _, all_on) = referee_games(v, Sandbox::On, true);
        let (rt, bot_rate, all_rate) = referee_games(v, Sandbox::On, false);
        println!(
            "{place:>17}: referee round trip, none {:>7.2} us, sandbox {:>7.2} us = {:.2}x, sandbox + pausing {:>7.2} us = {:.2}x | decisions/s in games {:>8.0}, {:>8.0} = {:.2}x, {:>8.0} = {:.2}x",
            rt_off.as_secs_f64() * 1e6,
            rt_on.as_secs_f64() * 1e6,
            rt_on.as_secs_f64() / rt_off.as_secs_f64(),
            rt.as_secs_f64() * 1e6,
            rt.as_secs_f64() / rt_off.as_secs_f64(),
            all_off,
            all_on,
            all_off / all_on,
            all_rate,
            all_off / all_rate,
        );
        println!(
            "{place:>17}: raw round trip {:>7.2} us (reply {reply_len} bytes) | referee round trip {:>7.2} us = {:.2}x raw | {:>8.0} bot decisions/s, {:>8.0} decisions/s in games",
            raw.as_secs_f64() * 1e6,
            rt.as_secs_f64() * 1e6,
            rt.as_secs_f64() / raw.as_secs_f64(),
            bot_rate,
            all_rate
        );
    }
    for sandbox in [Sandbox::Off, Sandbox::On] {
        println!(
            "bot start + quit, sandbox {sandbox:?}: {:.2} ms",
            start_cost(sandbox, 200).as_secs_f64() * 1e3
        );
    }
    let (wall, cpu) = blank_flood(50);
    println!(
        "50 MB of blank lines (52 M lines): {:.2} s wall, {:.2} s referee CPU",
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
}
