//! Integration tests: real bot processes over real pipes against the
//! referee. Each misbehaving bot (bots/broken/misbehave.py) must lose with
//! the right reason, the other bot must be credited, no process may be
//! left behind, and the next game must run normally.

mod common;

use common::processes_with;
use mancala_arena::bot::{group_alive, BotCommand, Sandbox};
use mancala_arena::engine::{Game, Settings, Variant};
use mancala_arena::referee::{
    play_game, Answer, Ask, BotPlayer, EndReason, Fault, ForfeitKind, GameSpec, Player,
    RandomPlayer, StartError, TimeControl, Timing,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Starts `cmd` as a league would (the protocol's line limit), its stderr
/// to `log` when given.
async fn start(
    cmd: &BotCommand,
    log: Option<&Path>,
    timing: &Timing,
) -> Result<BotPlayer, StartError> {
    let mut launch = BotPlayer::launch(cmd.clone());
    launch.stderr_log = log.map(Path::to_path_buf);
    BotPlayer::start(&launch, timing).await
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_bot() -> BotCommand {
    BotCommand::from_words(&[env!("CARGO_BIN_EXE_random-bot")]).unwrap()
}

fn broken(mode: &str) -> BotCommand {
    let script = root().join("bots/broken/misbehave.py");
    BotCommand::from_words(&["python3", script.to_str().unwrap(), mode]).unwrap()
}

fn example(name: &str) -> BotCommand {
    let dir = root().join("bots").join(name);
    mancala_arena::bot::manifest::Manifest::load(&dir)
        .unwrap()
        .command()
}

/// Every (variant, players) whose engine is available in this build.
fn playable() -> Vec<(Variant, usize)> {
    let mut v = Vec::new();
    for variant in Variant::ALL {
        for &n in variant.player_counts() {
            if Game::new(variant, &Settings::with_players(n)).is_ok() {
                v.push((variant, n));
            }
        }
    }
    assert!(!v.is_empty(), "no game engine available");
    v
}

fn two_player_variant() -> Variant {
    playable()
        .into_iter()
        .find(|&(_, n)| n == 2)
        .map(|(v, _)| v)
        .unwrap()
}

fn spec(variant: Variant, players: usize, timeout_ms: u64) -> GameSpec {
    let mut s = GameSpec::new("t1", variant, Settings::with_players(players));
    s.time = TimeControl {
        per_decision: Duration::from_millis(timeout_ms),
        clock: None,
    };
    s.watchdog = Duration::from_secs(60);
    s
}

/// Waits (with a deadline, not a fixed sleep) until the group is gone.
async fn assert_group_gone(pid: u32) {
    let end = std::time::Instant::now() + Duration::from_secs(5);
    while group_alive(pid) {
        assert!(
            std::time::Instant::now() < end,
            "process group {pid} still alive"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Plays the broken bot (seat 0) against the Rust random bot (seat 1), then
/// checks the verdict, the cleanup, and a normal next game for the good bot.
async fn misbehaving(
    mode: &str,
    timeout_ms: u64,
    expected: Option<ForfeitKind>,
) -> mancala_arena::referee::GameReport {
    let s = spec(two_player_variant(), 2, timeout_ms);
    misbehaving_in(&broken(mode), mode, s, expected).await
}

async fn misbehaving_in(
    cmd: &BotCommand,
    mode: &str,
    s: GameSpec,
    expected: Option<ForfeitKind>,
) -> mancala_arena::referee::GameReport {
    let dir = tempfile::tempdir().unwrap();
    let timing = Timing::default();
    let log = dir.path().join("broken.log");
    let mut bad = start(cmd, Some(&log), &timing).await.unwrap();
    let bad_pid = bad.pid();
    let mut good = start(&rust_bot(), None, &timing).await.unwrap();
    let good_pid = good.pid();
    let report = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut bad, &mut good];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    match expected {
        Some(kind) => {
            assert_eq!(
                report.reason,
                EndReason::Forfeit(kind),
                "{mode}: {report:?}"
            );
            assert_eq!(report.offender, Some(0));
            assert_eq!(report.scores, vec![0.0, 1.0], "the other bot is credited");
            let detail = report.detail.as_deref().unwrap_or_default();
            assert!(detail.len() < 400, "{detail}");
            assert!(!detail.chars().any(char::is_control), "{detail:?}");
            assert!(
                bad.needs_restart(),
                "after any forfeit the process is replaced"
            );
        }
        None => {
            assert!(!report.is_forfeit(), "{mode}: {report:?}");
            assert!(!bad.needs_restart());
        }
    }
    assert!(!good.needs_restart());
    bad.quit().await;
    assert_group_gone(bad_pid).await;

    // The next game runs normally, with the same good bot process.
    let mut random = RandomPlayer::new("random", 1);
    let next = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut random, &mut good];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert!(!next.is_forfeit(), "next game: {next:?}");
    assert_eq!(good.pid(), good_pid);
    assert!(good.quit().await, "the good bot exits cleanly on quit");
    assert_group_gone(good_pid).await;
    report
}

/// One two-player game of `bot` (seat 0) against the built-in random
/// player seeded with `seed`, 5 s per decision.
async fn against_random(bot: &mut BotPlayer, seed: u64) -> mancala_arena::referee::GameReport {
    against_random_within(bot, seed, 5000).await
}

/// [`against_random`] with `decision_ms` a decision.
async fn against_random_within(
    bot: &mut BotPlayer,
    seed: u64,
    decision_ms: u64,
) -> mancala_arena::referee::GameReport {
    let mut random = RandomPlayer::new("random", seed);
    let s = spec(two_player_variant(), 2, decision_ms);
    let mut ps: Vec<&mut dyn Player> = vec![bot, &mut random];
    play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
}

/// One game of `bot` in `seat` (0 or 1) against `random`.
async fn play_in_seat(
    bot: &mut BotPlayer,
    random: &mut RandomPlayer,
    s: &GameSpec,
    seat: usize,
) -> mancala_arena::referee::GameReport {
    let mut ps: Vec<&mut dyn Player> = match seat {
        0 => vec![bot, random],
        _ => vec![random, bot],
    };
    play_game(s, &mut ps, &mut |_| {}).await.unwrap()
}

fn detail(report: &mancala_arena::referee::GameReport) -> &str {
    report.detail.as_deref().unwrap_or_default()
}

#[tokio::test]
async fn crash_at_start() {
    let err = start(&broken("crash_start"), None, &Timing::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ForfeitKind::Crash, "{err}");
    assert!(err.to_string().contains("status 3"), "{err}");
}

#[tokio::test]
async fn missing_program_fails_to_start() {
    let cmd = BotCommand::from_words(&["/nonexistent/bot"]).unwrap();
    let err = start(&cmd, None, &Timing::default()).await.unwrap_err();
    assert_eq!(err.kind(), ForfeitKind::Crash);
}

/// A command that is a loop of symbolic links is told so, by its name.
#[tokio::test]
async fn a_symbolic_link_loop_is_named_when_it_fails_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("bot"), dir.path().join("other"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    // Run from the folder (a bot's own folder is what its sandbox shows).
    let mut cmd = BotCommand::from_words(&["./bot"]).unwrap();
    cmd.cwd = Some(dir.path().to_path_buf());
    let err = start(&cmd, None, &Timing::default()).await.unwrap_err();
    assert_eq!(err.kind(), ForfeitKind::Crash);
    let said = err.fault().detail;
    assert!(
        said.contains("`./bot` is a symbolic link that leads back to itself"),
        "{said}"
    );
}

#[tokio::test]
async fn crash_mid_game() {
    misbehaving("crash_mid", 5000, Some(ForfeitKind::Crash)).await;
}

/// A bot that calls `abort()` crashes with SIGABRT, in the sandbox too,
/// where its namespace's init, not the bot, is PID 1 (docs/security.md,
/// "How it is done, and why"). As PID 1, it ended on a fault instead
/// (SIGSEGV), its own signals dropped. One killed by signal 33 (glibc's
/// SIGSETXID, which its keeper, a copy of the referee, had a handler for)
/// was told `exited (status 0)`.
#[tokio::test]
async fn a_bot_killed_by_a_signal_is_told_which() {
    for (mode, said) in [("abort", "signal 6, SIGABRT"), ("signal_33", "signal 33")] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("bot.log");
        let mut bot = start(&broken(mode), Some(&log), &Timing::default())
            .await
            .unwrap();
        let report = against_random(&mut bot, 6).await;
        assert_eq!(
            report.reason,
            EndReason::Forfeit(ForfeitKind::Crash),
            "{mode}: {report:?}"
        );
        assert_eq!(report.offender, Some(0));
        assert!(
            detail(&report).contains(said),
            "{mode}: {report:?}: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }
}

#[tokio::test]
async fn hang() {
    misbehaving("hang", 300, Some(ForfeitKind::Timeout)).await;
}

#[tokio::test]
async fn too_slow() {
    misbehaving("slow", 300, Some(ForfeitKind::Timeout)).await;
}

#[tokio::test]
async fn not_json() {
    misbehaving("not_json", 5000, Some(ForfeitKind::BadJson)).await;
}

#[tokio::test]
async fn wrong_shape() {
    misbehaving("wrong_shape", 5000, Some(ForfeitKind::Protocol)).await;
}

/// The detail names the request as the bot saw it: its `seq`, its ply
/// and its kind of decision.
#[tokio::test]
async fn illegal_option() {
    let r = misbehaving("illegal", 5000, Some(ForfeitKind::Illegal)).await;
    let mut game = Game::new(r.variant, &Settings::with_players(2)).unwrap();
    for d in &r.decisions {
        game.play(&d.option).unwrap();
    }
    let asked = format!(
        "of request seq 1 (ply {}, decision `{}`)",
        game.plies(),
        game.decision_kind()
    );
    assert!(detail(&r).contains(&asked), "{asked}: {r:?}");
}

#[tokio::test]
async fn huge_line() {
    misbehaving("huge_line", 10_000, Some(ForfeitKind::LineTooLong)).await;
}

#[tokio::test]
async fn stderr_flood_does_not_stall() {
    misbehaving("stderr_flood", 10_000, None).await;
}

#[tokio::test]
async fn forked_child_holding_the_pipes() {
    misbehaving("fork_child", 5000, Some(ForfeitKind::Crash)).await;
}

#[tokio::test]
async fn early_clean_exit() {
    misbehaving("early_exit", 5000, Some(ForfeitKind::Crash)).await;
}

#[tokio::test]
async fn stderr_log_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("flood.log");
    let mut launch = BotPlayer::launch(broken("stderr_flood")).log_to(&log);
    launch.limits.stderr_cap = 10_000;
    let mut bot = BotPlayer::start(&launch, &Timing::default()).await.unwrap();
    let pid = bot.pid();
    bot.quit().await;
    assert_group_gone(pid).await;
    let len = std::fs::metadata(&log).unwrap().len();
    assert!((10_000..10_200).contains(&len), "log is {len} bytes");
}

/// Dropping the game future mid-game (Ctrl-C in a league) and then the
/// player kills the bot's whole process group.
#[tokio::test]
async fn dropping_a_game_mid_way_leaves_no_process() {
    let variant = two_player_variant();
    let timing = Timing::default();
    let mut bad = start(&broken("hang"), None, &timing).await.unwrap();
    let pid = bad.pid();
    let mut random = RandomPlayer::new("random", 2);
    let s = spec(variant, 2, 60_000);
    {
        let mut ps: Vec<&mut dyn Player> = vec![&mut bad, &mut random];
        let mut quiet = |_: &mancala_arena::referee::Event<'_>| {};
        let game = play_game(&s, &mut ps, &mut quiet);
        tokio::select! {
            _ = game => panic!("the game against a hanging bot cannot end"),
            _ = tokio::time::sleep(Duration::from_millis(300)) => {}
        }
    }
    assert!(group_alive(pid));
    drop(bad);
    assert_group_gone(pid).await;
}

/// The three example bots play every available variant (both seats, and
/// 3-player Tricala) without a forfeit, reused across games.
#[tokio::test]
async fn example_bots_play_every_variant() {
    let timing = Timing::default();
    let mut bots = Vec::new();
    for name in ["random-python", "random-js", "random-rust"] {
        if name == "random-js" && !common::has_node() {
            continue;
        }
        let mut cmd = example(name);
        if name == "random-rust" {
            cmd = rust_bot();
        }
        let b = start(&cmd, None, &timing).await.unwrap();
        assert_eq!(b.info().name, name);
        bots.push(b);
    }
    for (variant, n) in playable() {
        for first in 0..3 {
            let s = spec(variant, n, 10_000);
            let (a, rest) = bots.split_at_mut(1);
            let (b, c) = rest.split_at_mut(1);
            let mut all: Vec<&mut dyn Player> = vec![&mut a[0], &mut b[0], &mut c[0]];
            all.rotate_left(first);
            all.truncate(n);
            let report = play_game(&s, &mut all, &mut |_| {}).await.unwrap();
            assert!(!report.is_forfeit(), "{variant}/{n}: {report:?}");
        }
    }
    for mut b in bots {
        let pid = b.pid();
        assert!(b.quit().await);
        assert_group_gone(pid).await;
    }
}

#[tokio::test]
async fn two_replies_to_one_request() {
    let r = misbehaving("double_reply", 5000, Some(ForfeitKind::Protocol)).await;
    assert!(
        detail(&r).contains("a reply no request was waiting for"),
        "{r:?}"
    );
}

/// A bot that writes lines without end once told to quit is read no
/// longer than the quit's grace, then killed with its group.
#[tokio::test]
async fn a_flood_at_quit_ends_with_the_grace() {
    let mut bot = start(&broken("flood_at_quit"), None, &Timing::default())
        .await
        .unwrap();
    let pid = bot.pid();
    let r = against_random(&mut bot, 3).await;
    assert!(!r.is_forfeit(), "{r:?}");
    let report = tokio::time::timeout(Duration::from_secs(120), bot.quit_report())
        .await
        .expect("the quit ends though the bot writes on");
    assert!(!report.clean, "{report:?}");
    assert!(report.at_quit, "{report:?}");
    assert_group_gone(pid).await;
}

/// Two replies on one line are named as such, not taken for a log line.
#[tokio::test]
async fn two_replies_on_one_line_are_told_to_take_a_line_each() {
    let r = misbehaving("two_on_a_line", 5000, Some(ForfeitKind::BadJson)).await;
    assert!(
        detail(&r).contains("one JSON message after another"),
        "{r:?}"
    );
}

/// A hello said again at a game's start is called a second hello.
#[tokio::test]
async fn a_hello_said_again_is_called_a_second_hello() {
    let r = misbehaving("hello_again", 5000, Some(ForfeitKind::Protocol)).await;
    assert!(detail(&r).contains("second hello"), "{r:?}");
}

/// A reply sent under `"type":"hello"` is told a reply was expected, not
/// that its hello lacks a name.
#[tokio::test]
async fn a_reply_typed_hello_is_told_a_reply_was_expected() {
    let r = misbehaving("hello_typed", 5000, Some(ForfeitKind::Protocol)).await;
    assert!(detail(&r).starts_with("expected a reply"), "{r:?}");
}

/// An opening after which seat 0 makes the game's last asked decision, and
/// makes it with the first legal option (found by random play with the
/// engine).
fn opening_before_a_last_decision_by_seat_0(v: Variant) -> Vec<String> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    loop {
        let mut g = Game::new(v, &Settings::with_players(2)).unwrap();
        let mut asked = None;
        while g.outcome().is_none() {
            let legal = g.legal();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let pick = legal[(seed % legal.len() as u64) as usize].clone();
            if legal.len() > 1 {
                asked = Some((g.history().len(), g.to_decide(), pick == legal[0]));
            }
            g.play(&pick).unwrap();
        }
        if let Some((at, Some(0), true)) = asked {
            return g.history()[..at].iter().map(|d| d.option.clone()).collect();
        }
    }
}

/// A second reply written with the last reply of a game is that game's
/// forfeit (it is there before the game's row is committed), not the next
/// game's, and the bot is replaced.
#[tokio::test]
async fn a_double_reply_at_the_last_request_is_charged_in_that_game() {
    let v = two_player_variant();
    let mut s = spec(v, 2, 5000);
    s.opening = opening_before_a_last_decision_by_seat_0(v);
    let r = misbehaving_in(
        &broken("double_first"),
        "double_first",
        s,
        Some(ForfeitKind::Protocol),
    )
    .await;
    assert!(detail(&r).contains("after its last reply"), "{r:?}");
}

/// The built-in random player, slow to answer: the referee waits for it
/// (and its runtime looks at the other pipes) while it thinks.
struct SlowRandom(RandomPlayer, Duration);

impl Player for SlowRandom {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn decide<'a>(
        &'a mut self,
        ask: &'a Ask<'a>,
    ) -> mancala_arena::referee::player::PlayerFuture<'a, Result<Answer, Fault>> {
        Box::pin(async move {
            tokio::time::sleep(self.1).await;
            self.0.decide(ask).await
        })
    }
}

/// A reply written twice in two writes, the second while the other seat
/// thinks: the check before the bot's next request sees it (no system call
/// for it: the referee's runtime saw the pipe readable while it waited),
/// and the bot is charged in this game, at that request.
#[tokio::test]
async fn a_line_written_while_the_other_seat_thinks_is_seen_before_the_next_request() {
    let s = spec(two_player_variant(), 2, 5000);
    let mut bad = start(&broken("stray_after"), None, &Timing::default())
        .await
        .unwrap();
    let mut slow = SlowRandom(RandomPlayer::new("slow", 5), Duration::from_secs(1));
    let r = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut bad, &mut slow];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Protocol), "{r:?}");
    assert_eq!(r.offender, Some(0));
    assert!(detail(&r).contains("before the next request"), "{r:?}");
}

/// An answer that is not legal, followed by another line: the bot wrote
/// more lines than it was asked for (a reply written twice, the first read
/// in this request's place), and that is what it is told, not `illegal`.
#[tokio::test]
async fn an_illegal_answer_with_a_line_after_it_is_one_line_too_many() {
    let r = misbehaving("illegal_more", 5000, Some(ForfeitKind::Protocol)).await;
    let d = detail(&r);
    assert!(d.contains("more lines than requests"), "{r:?}");
    assert!(d.contains("`Z99` (not legal here)"), "{r:?}");
    // The plain illegal answer stays `illegal` (nothing comes after it).
    let r = misbehaving("illegal", 5000, Some(ForfeitKind::Illegal)).await;
    assert!(detail(&r).contains("Z99"), "{r:?}");
}

#[tokio::test]
async fn a_reply_to_another_request() {
    let r = misbehaving("stale_reply", 5000, Some(ForfeitKind::Protocol)).await;
    assert!(detail(&r).contains("reply to another request"), "{r:?}");
}

#[tokio::test]
async fn a_stray_line_after_hello() {
    let r = misbehaving("hello_extra", 5000, Some(ForfeitKind::Protocol)).await;
    assert!(detail(&r).contains("before game_start"), "{r:?}");
}

/// Blank lines without end: a timeout at the decision deadline, not a
/// stall when the game's watchdog (60 s here) runs out.
#[tokio::test]
async fn a_blank_line_flood_times_out_at_the_decision_deadline() {
    let r = misbehaving("blank_flood", 500, Some(ForfeitKind::Timeout)).await;
    assert!(detail(&r).contains("no reply within 500 ms"), "{r:?}");
}

/// A bot at fault is killed, with its descendants, as soon as the fault is
/// found: it burns no CPU that a later game needs (a hanging bot, a bot that
/// spins after its timeout with a child, an illegal move).
#[tokio::test]
async fn a_faulted_bot_is_killed_at_once() {
    for (mode, kind, timeout_ms) in [
        ("hang", ForfeitKind::Timeout, 300),
        ("spin", ForfeitKind::Timeout, 300),
        ("illegal", ForfeitKind::Illegal, 5000),
    ] {
        let mut bad = start(&broken(mode), None, &Timing::default())
            .await
            .unwrap();
        let pid = bad.pid();
        let mut random = RandomPlayer::new("random", 3);
        let s = spec(two_player_variant(), 2, timeout_ms);
        let r = {
            let mut ps: Vec<&mut dyn Player> = vec![&mut bad, &mut random];
            play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
        };
        assert_eq!(r.reason, EndReason::Forfeit(kind), "{mode}: {r:?}");
        // Neither quit nor dropped: the referee killed it.
        assert_group_gone(pid).await;
        assert!(bad.needs_restart(), "{mode}");
    }
}

/// Plays `mode` (seat 0, in its sandbox with `limits` changed by `set`)
/// against the random player with a `timeout_ms` decision time, and
/// returns the report; the bot's processes must all be gone afterwards.
async fn in_sandbox(
    mode: &str,
    set: impl FnOnce(&mut mancala_arena::bot::Limits),
    timeout_ms: u64,
) -> mancala_arena::referee::GameReport {
    let mut launch = BotPlayer::launch(broken(mode));
    set(&mut launch.limits);
    let mut bad = BotPlayer::start(&launch, &Timing::default()).await.unwrap();
    let pid = bad.pid();
    let mut random = RandomPlayer::new("random", 5);
    let s = spec(two_player_variant(), 2, timeout_ms);
    let r = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut bad, &mut random];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert_group_gone(pid).await;
    r
}

/// True when cgroups enforce the limits here; else says why not.
fn cgroups_here() -> bool {
    let mechanism = mancala_arena::bot::sandbox::cgroup::mechanism();
    let here = mechanism.starts_with("cgroup");
    if !here {
        eprintln!("not run: {mechanism}");
    }
    here
}

/// A bot over its memory limit is killed by the kernel and forfeits
/// `memory`; the machine and the referee are unharmed. (Needs cgroups:
/// where none can be made, the memory limit is not enforced, and said so.)
#[tokio::test]
async fn a_memory_hog_forfeits_memory() {
    if !cgroups_here() {
        return;
    }
    let r = in_sandbox("hog", |l| l.memory_mb = 200, 20_000).await;
    assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Memory), "{r:?}");
    assert_eq!(r.offender, Some(0));
    assert!(
        detail(&r)
            .contains("memory limit, 200 MiB for the bot's whole process tree, the files it wrote in /tmp included (set by `memory_mb`"),
        "{r:?}"
    );
}

/// A bot killed at its memory limit before its hello fails its start as
/// `memory`, not as a crash or a timeout: its author is told the limit.
#[tokio::test]
async fn a_memory_hog_before_its_hello_fails_its_start_as_memory() {
    if !cgroups_here() {
        return;
    }
    let mut launch = BotPlayer::launch(broken("hog_at_start"));
    launch.limits.memory_mb = 200;
    let timing = Timing {
        startup: Duration::from_secs(60),
        ..Timing::default()
    };
    let Err(e) = BotPlayer::start(&launch, &timing).await else {
        panic!("the hog started");
    };
    assert_eq!(e.kind(), ForfeitKind::Memory, "{e}");
    assert!(e.to_string().contains("memory limit, 200 MiB"), "{e}");
}

/// A bot that spins the CPU between games (after `game_end`, until its
/// next message) is paused by force once it has had its time to exit:
/// between games no bot takes the CPU of other games. It was never
/// paused (it was never idle), and slowed the games on its CPU by a
/// quarter.
#[tokio::test]
async fn a_bot_that_spins_between_games_is_paused_all_the_same() {
    let timing = Timing::default();
    let mut spin = start(&broken("spin_after_end"), None, &timing)
        .await
        .unwrap();
    let pid = spin.pid();
    let mut random = RandomPlayer::new("random", 3);
    let s = spec(two_player_variant(), 2, 5000);
    let r = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut spin, &mut random];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert!(r.offender.is_none(), "{r:?}");
    // Its main process (in the sandbox, the child of the keeper's child,
    // its namespace's init; else itself) is stopped well within a second.
    let main = mancala_arena::host::first_child(pid)
        .and_then(mancala_arena::host::first_child)
        .unwrap_or(pid);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while mancala_arena::host::process_state(main) != Some('T') {
        assert!(
            std::time::Instant::now() < deadline,
            "never paused: {:?}",
            mancala_arena::host::process_state(main)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A second game: thawed, it plays.
    let r = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut random, &mut spin];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert!(r.offender.is_none(), "{r:?}");
    spin.quit().await;
    assert_group_gone(pid).await;
}

/// A bot that undoes its pause with a SIGCONT of its own (POSIX timers
/// whose signal is SIGCONT, re-armed at each message, and a thread that
/// spins) is charged at its next request: paused between games, it took
/// the CPU of the games on its CPU all the same (a probe's bot had a
/// third of it). A timer whose SIGCONT is pending when a SIGSTOP comes is
/// not re-armed by the kernel, so the bot keeps four of different periods,
/// as the probe's did, and a pause that ends them all is played again
/// (at most four games, two seconds apart).
#[tokio::test]
async fn a_bot_that_wakes_itself_while_paused_is_charged() {
    let dir = tempfile::tempdir().unwrap();
    let on = r#"    import ctypes, signal, threading
    if not hasattr(on, "timers"):
        signal.signal(signal.SIGCONT, lambda *a: None)
        libc = ctypes.CDLL(None, use_errno=True)
        class Event(ctypes.Structure):
            _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int),
                        ("notify", ctypes.c_int), ("pad", ctypes.c_byte * 48)]
        class Spec(ctypes.Structure):
            _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
        class Timer(ctypes.Structure):
            _fields_ = [("every", Spec), ("first", Spec)]
        event = Event(signo=signal.SIGCONT, notify=0)
        on.timers = []
        for ns in (1000000, 1300000, 1700000, 2300000):
            t = ctypes.c_void_p()
            assert libc.timer_create(1, ctypes.byref(event), ctypes.byref(t)) == 0
            on.timers.append((t, Timer(Spec(0, ns), Spec(0, ns))))
        on.libc = libc
        def spin():
            while True:
                pass
        threading.Thread(target=spin, daemon=True).start()
    for t, every in on.timers:
        on.libc.timer_settime(t, 0, ctypes.byref(every), None)"#;
    let mut bot = start(&python_bot(dir.path(), on), None, &Timing::default())
        .await
        .unwrap();
    let mut random = RandomPlayer::new("random", 3);
    let s = spec(two_player_variant(), 2, 5000);
    let charged = |r: &mancala_arena::referee::GameReport| {
        r.reason == EndReason::Forfeit(ForfeitKind::Protocol)
            && r.offender == Some(0)
            && detail(r).contains("ran while paused")
    };
    let mut reports = Vec::new();
    for _ in 0..4 {
        let r = {
            let mut ps: Vec<&mut dyn Player> = vec![&mut bot, &mut random];
            play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
        };
        if charged(&r) {
            bot.quit().await;
            return;
        }
        assert!(r.offender.is_none(), "{r:?}");
        reports.push(r);
        // Paused between its games for a while.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    panic!("never charged in {} games: {reports:?}", reports.len());
}

/// A fork bomb is contained (at most `processes` at once) and forfeits;
/// nothing of it is left, and the machine still forks.
#[tokio::test]
async fn a_fork_bomb_is_contained_and_forfeits() {
    if !cgroups_here() {
        return;
    }
    let r = in_sandbox("fork_bomb", |l| l.processes = 32, 2000).await;
    assert_eq!(r.offender, Some(0), "{r:?}");
    assert!(std::process::Command::new("true")
        .status()
        .unwrap()
        .success());
}

#[tokio::test]
async fn a_flood_of_replies() {
    misbehaving("write_flood", 5000, Some(ForfeitKind::Protocol)).await;
}

#[tokio::test]
async fn an_option_with_spaces_is_illegal() {
    let r = misbehaving("spaced", 5000, Some(ForfeitKind::Illegal)).await;
    assert!(detail(&r).contains("not one of the legal options"), "{r:?}");
}

/// An option that is a legal one written otherwise (in another case,
/// with spaces around it, in fullwidth characters) is `illegal`, and the
/// detail says which legal option it is and how it differs.
#[tokio::test]
async fn an_option_written_otherwise_is_told_how_it_differs() {
    // Tricala's options hold letters (`2a`): a case to get wrong.
    if Game::new(Variant::Tricala, &Settings::with_players(2)).is_err() {
        return;
    }
    for (make, says) in [
        ("o.upper()", "in another case"),
        ("' ' + o + ' '", "with white space around it"),
        (
            "''.join(chr(ord(c) + 0xFEE0) for c in o)",
            "in fullwidth characters",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let on = format!(
            "    if m[\"type\"] == \"request\":\n        o = m[\"legal\"][0]\n        send({{\"type\": \"reply\", \"option\": {make}}})\n        return True"
        );
        let mut bot = start(&python_bot(dir.path(), &on), None, &Timing::default())
            .await
            .unwrap();
        let mut random = RandomPlayer::new("random", 1);
        let s = spec(Variant::Tricala, 2, 5000);
        let r = {
            let mut ps: Vec<&mut dyn Player> = vec![&mut bot, &mut random];
            play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
        };
        assert_eq!(
            r.reason,
            EndReason::Forfeit(ForfeitKind::Illegal),
            "{make}: {r:?}"
        );
        assert!(
            detail(&r).contains("is legal, and this is it") && detail(&r).contains(says),
            "{make}: {r:?}"
        );
        bot.quit().await;
    }
}

#[tokio::test]
async fn a_json_value_that_is_not_an_object() {
    misbehaving("not_object", 5000, Some(ForfeitKind::Protocol)).await;
}

/// Field names written as Go's encoding/json writes a struct without
/// tags (`Type`, `Option`) are named as the protocol's own, written in
/// another case, not merely missing; a reply encoded twice (a JSON string
/// holding it) is said to be that, not merely "not an object".
#[tokio::test]
async fn a_name_written_otherwise_or_a_reply_encoded_twice_is_said_so() {
    let r = misbehaving("go_fields", 5000, Some(ForfeitKind::Protocol)).await;
    assert!(
        detail(&r).contains(
            "no `type` field but `Type`: field names are exact (write `type`, in lower case)"
        ),
        "{r:?}"
    );
    let r = misbehaving("encoded_twice", 5000, Some(ForfeitKind::Protocol)).await;
    assert!(
        detail(&r).contains("a JSON string holding a JSON object: the message was encoded twice"),
        "{r:?}"
    );
}

#[tokio::test]
async fn binary_garbage_is_bad_json_and_escaped() {
    let r = misbehaving("binary", 5000, Some(ForfeitKind::BadJson)).await;
    assert!(detail(&r).contains(r"\u{1b}[31mred"), "{r:?}");
}

#[tokio::test]
async fn blank_lines_crlf_and_bom_are_accepted() {
    misbehaving("noise_ok", 5000, None).await;
}

#[tokio::test]
async fn closed_stdout_while_running() {
    let r = misbehaving("close_stdout", 5000, Some(ForfeitKind::Crash)).await;
    assert!(detail(&r).contains("closed its stdout"), "{r:?}");
}

/// A bot that dies with half a reply written (no newline) is a `crash`
/// whose detail shows that half line: the one clue to what it was doing,
/// gone with the process once it is killed.
#[tokio::test]
async fn a_crash_mid_line_shows_the_line_it_began() {
    let r = misbehaving("cut_then_crash", 5000, Some(ForfeitKind::Crash)).await;
    let d = detail(&r);
    assert!(d.starts_with("exited (status 1)"), "{r:?}");
    assert!(
        d.contains("a line without its newline: {\"type\": \"reply\""),
        "{r:?}"
    );
}

#[tokio::test]
async fn closed_stdin_is_a_crash_not_a_sigpipe() {
    let r = misbehaving("close_stdin", 5000, Some(ForfeitKind::Crash)).await;
    assert!(detail(&r).contains("stdin"), "{r:?}");
}

/// A bot that closes its stdin with a request already in the pipe (the
/// write succeeded, nothing will read it) is a `crash`, named as such, not
/// a `timeout` blamed on its thinking.
#[tokio::test]
async fn closed_stdin_with_a_request_unread_is_a_crash() {
    let r = misbehaving("close_stdin_later", 2000, Some(ForfeitKind::Crash)).await;
    assert!(detail(&r).contains("closed its stdin"), "{r:?}");
    assert!(!detail(&r).contains("thinking"), "{r:?}");
}

/// `null` for an optional field of the hello (Python's `None` for a
/// version or author it does not have) is that field left out, as for a
/// reply's echoes: the bot plays.
#[tokio::test]
async fn a_hello_with_null_optional_fields_plays() {
    misbehaving("null_fields", 5000, None).await;
}

/// A bot on its way out when the referee's write meets its closed stdin
/// (it closed its stdin, said hello, and exits 0.2 s later, as an
/// interpreter slow to shut down does) is told by how it ended: it exited
/// with status 0, which is forgiven once before a game (it is started
/// again), and then charged as that exit, not as "closed its stdin".
#[tokio::test]
async fn a_bot_exiting_as_a_write_fails_is_told_by_its_exit() {
    let timing = Timing::default();
    let mut bot = start(&broken("leave_after_hello"), None, &timing)
        .await
        .unwrap();
    let r = against_random(&mut bot, 3).await;
    assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Crash), "{r:?}");
    assert!(detail(&r).starts_with("exited (status 0)"), "{r:?}");
    assert_eq!(bot.exits_between_games(), 1, "started again once, free");
    let pid = bot.pid();
    bot.quit().await;
    assert_group_gone(pid).await;
}

#[tokio::test]
async fn the_game_clock_runs_out() {
    let mut s = spec(two_player_variant(), 2, 5000);
    s.time.clock = Some(mancala_arena::referee::Clock {
        base: Duration::from_millis(200),
        increment: Duration::from_millis(10),
    });
    let r = misbehaving_in(&broken("hang"), "hang", s, Some(ForfeitKind::Timeout)).await;
    assert!(detail(&r).contains("game clock"), "{r:?}");
}

/// A quick bot on a tiny clock is never charged more than its clock held:
/// a reply read past the deadline (it was already waiting) is taken only
/// while the clock covers it; past that the clock has run out (a
/// `timeout`), not stopped at zero with the bot playing on (protocol.md,
/// "Limits").
#[tokio::test]
async fn a_quick_bot_cannot_play_on_an_empty_clock() {
    let base = Duration::from_millis(1);
    for seed in 0..4 {
        let mut bot = start(&rust_bot(), None, &Timing::default()).await.unwrap();
        let mut random = RandomPlayer::new("random", seed);
        let mut s = spec(two_player_variant(), 2, 5000);
        s.time.clock = Some(mancala_arena::referee::Clock {
            base,
            increment: Duration::ZERO,
        });
        let r = play_in_seat(&mut bot, &mut random, &s, 0).await;
        let charged: u64 = r
            .decisions
            .iter()
            .filter(|d| d.seat == 0 && !d.forced && !d.opening)
            .map(|d| d.elapsed_us)
            .sum();
        assert!(
            charged <= 1000,
            "{charged} us charged on a 1 ms clock: {r:?}"
        );
        if r.is_forfeit() {
            assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Timeout), "{r:?}");
            assert_eq!(r.offender, Some(0), "{r:?}");
            assert!(detail(&r).contains("game clock"), "{r:?}");
        }
        bot.quit().await;
    }
}

/// A bot that ignores SIGTERM and does not exit on quit is SIGKILLed after
/// the grace period.
#[tokio::test]
async fn a_bot_that_ignores_sigterm_is_killed() {
    let timing = Timing {
        shutdown_grace: Duration::from_millis(100),
        ..Timing::default()
    };
    let mut bot = start(&broken("ignore_term"), None, &timing).await.unwrap();
    let pid = bot.pid();
    let report = against_random(&mut bot, 3).await;
    assert!(!report.is_forfeit(), "{report:?}");
    assert!(!bot.quit().await, "it did not exit by itself");
    assert_group_gone(pid).await;
}

/// A grandchild that left the process group (setsid) dies with the bot.
#[tokio::test]
async fn a_grandchild_that_calls_setsid_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    // The pid file cannot be written from the sandbox: the bot says it on
    // stderr instead. Its name marks the bot's processes.
    let marker = dir.path().join("pids").display().to_string();
    let script = root().join("bots/broken/misbehave.py");
    let cmd =
        BotCommand::from_words(&["python3", script.to_str().unwrap(), "setsid_child", &marker])
            .unwrap();
    let log = dir.path().join("bot.log");
    let timing = Timing::default();
    let mut bot = start(&cmd, Some(&log), &timing).await.unwrap();
    let report = against_random(&mut bot, 4).await;
    assert!(!report.is_forfeit(), "{report:?}");
    bot.quit().await;
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.lines().any(|l| l.starts_with("PIDS ")),
        "the grandchild never started: {said}"
    );
    // In its sandbox the bot's pids are its own namespace's: find what is
    // left by its command line, which names the pid file.
    let end = std::time::Instant::now() + Duration::from_secs(5);
    while !processes_with(&marker).is_empty() {
        assert!(
            std::time::Instant::now() < end,
            "the grandchild is still alive"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A bot that exits after a game is restarted before the next one, and
/// neither game is charged.
#[tokio::test]
async fn a_bot_that_exits_between_games_is_restarted() {
    let timing = Timing::default();
    let cmd = broken("exit_after_game");
    let mut bot = start(&cmd, None, &timing).await.unwrap();
    let mut random = RandomPlayer::new("random", 4);
    let s = spec(two_player_variant(), 2, 5000);
    let report = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut bot, &mut random];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert!(!report.is_forfeit(), "{report:?}");
    // The league asks before each game; the exit is noticed (wait for it).
    let end = std::time::Instant::now() + Duration::from_secs(5);
    while !bot.needs_restart() {
        assert!(std::time::Instant::now() < end, "exit never noticed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let old = bot.pid();
    bot.kill();
    assert_group_gone(old).await;
    let mut bot = start(&cmd, None, &timing).await.unwrap();
    let report = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut random, &mut bot];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert!(!report.is_forfeit(), "{report:?}");
    let pid = bot.pid();
    bot.kill();
    assert_group_gone(pid).await;
}

/// A bot that exits after its game, its exit seen only at the next game's
/// start (as when a league's look before the game came a moment too
/// early), is started again there: no game is charged, in either seat,
/// and the player says so.
#[tokio::test]
async fn a_bot_whose_exit_is_seen_only_at_the_next_start_is_restarted_there() {
    // It exits after each game; wait until it is gone, and play the next
    // game with it as it is (no restart here).
    restarted_at_each_game("exit_after_game", &[0, 0, 1, 0], true).await;
}

/// A bot that exits a moment after each `game_end` has its next
/// `game_start` (and first request) written before its exit can be seen:
/// they are still unread in its stdin when its stdout ends, or it read
/// them ahead into its buffer and exited with status 0 before its first
/// reply. Either way it left before playing, and is started again at no
/// charge, every game, whichever seat asks first. A bot that exits at
/// every `game_start` is still charged (`early_exit`, above).
#[tokio::test]
async fn a_bot_that_exits_after_game_start_was_written_but_not_read_is_restarted() {
    restarted_at_each_game("exit_late_after_game", &[0, 0, 1, 1, 0], false).await;
    // With another status, the same: it may have read the next
    // `game_start` ahead with its `game_end`, but no request of the game
    // (it was charged then, or not, as the timing fell).
    restarted_at_each_game("exit1_late_after_game", &[0, 0, 1, 1, 0, 1, 0], false).await;
}

/// A bot that reads the next `game_start` with its `game_end` (a reader
/// that reads ahead), closes its stdout and exits a moment later: its
/// stdout ends before its exit can be seen (inside the sandbox the
/// keeper's exit follows the bot's), and nothing of the game is unread.
/// It left before playing all the same: started again at no charge. It
/// was charged `crash` at ply 0 (a worker's check-bot, on a loaded
/// machine, failed a bot that exits on `game_end` so).
#[tokio::test]
async fn a_bot_whose_stdout_ends_before_its_exit_at_a_games_start_is_restarted() {
    restarted_at_each_game("close_after_next_start", &[0, 1, 0], false).await;
}

/// A bot that writes a line after `game_end`, too late for that game's
/// last look, is started again before (or at the first request of) its
/// next game, which is not charged: the line echoes the ended game's
/// `game_id`, so it is that game's (protocol.md). It used to be charged in
/// the next game, against whoever played it there.
#[tokio::test]
async fn a_line_written_after_game_end_is_not_charged_in_the_next_game() {
    let mut bot = start(&broken("late_after_end"), None, &Timing::default())
        .await
        .unwrap();
    let mut random = RandomPlayer::new("random", 4);
    let mut s = spec(two_player_variant(), 2, 5000);
    for (game, bot_seat) in [0, 1, 0, 1].into_iter().enumerate() {
        // Each game its own id, as in a league.
        s.game_id = format!("t{game}");
        let pid = bot.pid();
        let report = play_in_seat(&mut bot, &mut random, &s, bot_seat).await;
        assert!(!report.is_forfeit(), "game {game}: {report:?}");
        // Not an exit; said for `arena check-bot`.
        assert_eq!(bot.exits_between_games(), 0, "game {game}");
        let late = bot.take_late_output();
        match game {
            0 => assert_eq!(late, None),
            _ => {
                let previous = format!("\"game_id\": \"t{}\"", game - 1);
                assert!(
                    late.as_deref().is_some_and(|l| l.contains(&previous)),
                    "game {game}: {late:?}"
                );
                assert_ne!(bot.pid(), pid, "game {game}: not started again");
            }
        }
    }
    let pid = bot.pid();
    bot.kill();
    assert_group_gone(pid).await;
}

/// A bot that prints a debug line on stdout at `game_end` (not JSON) is
/// started again before its next game, which is not charged, whichever
/// look sees the line: the check before `game_start`, the one before the
/// first request, or the read of the first reply (protocol.md). It used to
/// be charged `bad_json` in the next game when the line came late enough
/// for a request to go out first, and not when it came early: a result
/// that hung on timing.
#[tokio::test]
async fn a_print_after_game_end_is_never_charged_in_the_next_game() {
    for mode in ["print_after_end", "print_late_after_end"] {
        let mut bot = start(&broken(mode), None, &Timing::default())
            .await
            .unwrap();
        let mut random = RandomPlayer::new("random", 4);
        let mut s = spec(two_player_variant(), 2, 5000);
        for (game, bot_seat) in [0, 1, 0, 1, 1, 0].into_iter().enumerate() {
            s.game_id = format!("t{game}");
            let pid = bot.pid();
            let report = play_in_seat(&mut bot, &mut random, &s, bot_seat).await;
            assert!(!report.is_forfeit(), "{mode}, game {game}: {report:?}");
            let late = bot.take_late_output();
            match game {
                0 => assert_eq!(late, None, "{mode}"),
                _ => {
                    assert!(
                        late.as_deref().is_some_and(|l| l.contains("game over")),
                        "{mode}, game {game}: {late:?}"
                    );
                    assert_ne!(bot.pid(), pid, "{mode}, game {game}: not started again");
                }
            }
        }
        let pid = bot.pid();
        bot.kill();
        assert_group_gone(pid).await;
    }
}

/// A bot that leaves right after its reply at the game's last ply (it
/// exits, or closes its stdout and lives on), before `game_end`, is not
/// charged, whether the referee sees it go at the game's end or only at
/// the next game's start: every decision was made, the rules' result
/// stands; it is started again before its next game (protocol.md). It
/// used to be a `crash` whenever the end's look came late enough to see
/// it: a result that hung on timing.
#[tokio::test]
async fn a_bot_that_leaves_after_its_last_reply_of_a_game_is_not_charged() {
    for mode in ["exit_after_last", "close_after_last"] {
        let timing = Timing::default();
        let mut bot = start(&broken(mode), None, &timing).await.unwrap();
        let mut random = RandomPlayer::new("random", 4);
        let mut s = spec(two_player_variant(), 2, 5000);
        s.settings.max_plies = 6;
        let mut left = 0;
        // The bot plays at random: a game may end by the rules before the
        // cap, or with its last ply another's; games go on until it has
        // left three times.
        for game in 0..40 {
            if left >= 3 {
                break;
            }
            let seat = game % 2;
            let report = play_in_seat(&mut bot, &mut random, &s, seat).await;
            assert!(!report.is_forfeit(), "{mode}, game {game}: {report:?}");
            assert!(report.plies <= 6, "{mode}, game {game}: {report:?}");
            // It was asked the last ply (its own, not forced): it left.
            // Its going is waited for here, as a league's look before the
            // next game would see it (a close that a paused bot makes only
            // once the next game has begun is that game's: protocol.md).
            let last = report.decisions.last().unwrap();
            if report.plies == 6 && last.seat == seat && !last.forced {
                left += 1;
                let end = std::time::Instant::now() + Duration::from_secs(10);
                while !bot.needs_restart() && bot.quiet("between games").is_ok() {
                    assert!(std::time::Instant::now() < end, "{mode}: never left");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
        assert!(left >= 1, "{mode}: never asked the last ply");
        // Started again (at no charge) before each game after one it left.
        assert!(
            bot.exits_between_games() as usize >= left - 1,
            "{mode}: {} restarts for {left} games left",
            bot.exits_between_games()
        );
        let pid = bot.pid();
        bot.kill();
        assert_group_gone(pid).await;
    }
}

/// Outside the sandbox, a bot that exits right after its last reply of a
/// game, leaving a child that holds its pipes open (its stdout never at
/// its end), is not charged either: its exit, seen by waitid once the
/// game's decisions are all made, is the leaving protocol.md excuses. It
/// used to be a `crash` ("exited (status 0)") whenever the end's look saw
/// the exit, as it always does here: its last reply is its ply 4 of 6,
/// and the other seat takes 300 ms over ply 5. Its child is ended with it.
#[tokio::test]
async fn a_bot_that_exits_after_its_last_reply_leaving_a_child_is_not_charged() {
    let launch = BotPlayer::launch(broken("fork_exit_after_last")).sandboxed(Sandbox::Off);
    let timing = Timing::default();
    let mut bot = BotPlayer::start(&launch, &timing).await.unwrap();
    let mut slow = SlowRandom(RandomPlayer::new("slow", 5), Duration::from_millis(300));
    // Diffusion: one decision a ply.
    let mut s = spec(Variant::Diffusion, 2, 5000);
    s.settings.max_plies = 6;
    let mut left = 0;
    for game in 0..12 {
        if left >= 2 {
            break;
        }
        s.game_id = format!("t{game}");
        let pid = bot.pid();
        let report = {
            let mut ps: Vec<&mut dyn Player> = vec![&mut bot, &mut slow];
            play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
        };
        assert!(!report.is_forfeit(), "game {game}: {report:?}");
        left += usize::from(report.plies == 6);
        // Its group, the child holding the pipes included, is ended at
        // the game's end; a new process plays the next game.
        if bot.needs_restart() {
            assert_group_gone(pid).await;
            bot = BotPlayer::start(&launch, &timing).await.unwrap();
        }
    }
    assert!(left >= 1, "the game never reached its cap");
    let pid = bot.pid();
    bot.kill();
    assert_group_gone(pid).await;
}

/// The Python bot answering as `on` says, in seat 0 of a Diffusion game
/// against the random player: its game, which it forfeits for breaking
/// the protocol; the bot's process group gone after it.
async fn a_protocol_fault_in_diffusion(on: &str) -> mancala_arena::referee::GameReport {
    let dir = tempfile::tempdir().unwrap();
    let mut bot = start(&python_bot(dir.path(), on), None, &Timing::default())
        .await
        .unwrap();
    let mut random = RandomPlayer::new("random", 4);
    let s = spec(Variant::Diffusion, 2, 5000);
    let r = play_in_seat(&mut bot, &mut random, &s, 0).await;
    assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Protocol), "{r:?}");
    assert_eq!(r.offender, Some(0), "{r:?}");
    let pid = bot.pid();
    bot.kill();
    assert_group_gone(pid).await;
    r
}

/// A bot that echoes a `seq` no request had (its `ply`, 0 at the first
/// request) is told that no request had it, not that its answer came one
/// request late.
#[tokio::test]
async fn a_seq_no_request_had_is_named_as_such() {
    let on = "    if m[\"type\"] == \"request\":\n        send({\"type\": \"reply\", \"option\": m[\"legal\"][0], \"seq\": m[\"ply\"]})\n        return True";
    let r = a_protocol_fault_in_diffusion(on).await;
    assert!(
        detail(&r).contains("; no request had seq 0 (requests count from 1")
            && !detail(&r).contains("one request late"),
        "{r:?}"
    );
}

/// A reply written unasked right after `game_start` is read as the answer
/// to the game's first request, and the bot's own answer to it (echoing
/// its seq) one request late: the fault says so, and that the first line
/// was most likely written after `game_start`. It blamed the genuine
/// reply alone ("reply to another request").
#[tokio::test]
async fn a_reply_written_after_game_start_is_named_when_its_answer_comes_late() {
    let settings = Settings::with_players(2);
    let first = Game::new(Variant::Diffusion, &settings).unwrap().legal()[0].clone();
    // Written 0.2 s after game_start: the first request is in its pipe
    // by then, and the referee waits for its answer.
    let on = format!(
        "    if m[\"type\"] == \"game_start\":\n        time.sleep(0.2)\n        send({{\"type\": \"reply\", \"option\": \"{first}\"}})\n        return True\n    if m[\"type\"] == \"request\":\n        send({{\"type\": \"reply\", \"option\": m[\"legal\"][0], \"seq\": m[\"seq\"]}})\n        return True"
    );
    let r = a_protocol_fault_in_diffusion(&on).await;
    assert!(
        detail(&r).contains("it is the bot's answer to request seq 1, read one request late")
            && detail(&r).contains("after game_start, which takes no reply"),
        "{r:?}"
    );
}

/// A bot that times out while its stderr is not read (no log, as `arena
/// play` without `--logs`) is not said to have written nothing there: the
/// referee cannot know, and says so.
#[tokio::test]
async fn a_timeout_with_stderr_unread_does_not_claim_it_was_empty() {
    let mut bot = start(&broken("stall_later"), None, &Timing::default())
        .await
        .unwrap();
    let mut random = RandomPlayer::new("random", 4);
    let mut s = spec(two_player_variant(), 2, 3000);
    s.settings.max_plies = 40;
    let report = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut bot, &mut random];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert_eq!(
        report.reason,
        EndReason::Forfeit(ForfeitKind::Timeout),
        "{report:?}"
    );
    let detail = report.detail.unwrap_or_default();
    assert!(
        detail.contains("its stderr unseen (not read here"),
        "{detail}"
    );
    assert!(!detail.contains("nothing on stderr"), "{detail}");
    let pid = bot.pid();
    bot.kill();
    assert_group_gone(pid).await;
}

/// Plays the games of the misbehaving bot `mode` in `seats` against a
/// random player, one process kept from game to game (`wait`: until its
/// exit after each game can be seen): no game is charged, and it was
/// started again before each game but the first.
async fn restarted_at_each_game(mode: &str, seats: &[usize], wait: bool) {
    let timing = Timing::default();
    let cmd = broken(mode);
    let mut bot = start(&cmd, None, &timing).await.unwrap();
    let mut random = RandomPlayer::new("random", 4);
    let mut s = spec(two_player_variant(), 2, 5000);
    for (game, &bot_seat) in seats.iter().enumerate() {
        // Each game its own id, as in a league.
        s.game_id = format!("t{game}");
        let report = play_in_seat(&mut bot, &mut random, &s, bot_seat).await;
        assert!(!report.is_forfeit(), "game {game}: {report:?}");
        assert_eq!(bot.exits_between_games() as usize, game, "game {game}");
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while wait && !bot.needs_restart() {
            assert!(std::time::Instant::now() < end, "exit never noticed");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let pid = bot.pid();
    bot.kill();
    assert_group_gone(pid).await;
}

#[tokio::test]
async fn handshake_faults() {
    // A short start-up time only for the bot that never answers: a Python
    // bot that does answer may take seconds to start on a loaded machine.
    let short = Timing {
        startup: Duration::from_millis(300),
        ..Timing::default()
    };
    let long = Timing::default();
    for (mode, kind, text, timing) in [
        ("bad_version", ForfeitKind::Protocol, "protocol 2", &long),
        (
            "no_name",
            ForfeitKind::Protocol,
            "missing field `name`",
            &long,
        ),
        (
            "silent",
            ForfeitKind::Timeout,
            "no hello within 300 ms",
            &short,
        ),
        ("close_stdin", ForfeitKind::Crash, "", &long),
    ] {
        let err = match start(&broken(mode), None, timing).await {
            Err(e) => e,
            Ok(b) if mode == "close_stdin" => {
                // Its hello is fine; the first write to it fails.
                let pid = b.pid();
                drop(b);
                assert_group_gone(pid).await;
                continue;
            }
            Ok(b) => panic!("{mode}: started {:?}", b.info()),
        };
        assert_eq!(err.kind(), kind, "{mode}: {err}");
        assert!(err.to_string().contains(text), "{mode}: {err}");
    }
}

#[tokio::test]
async fn unusable_commands_fail_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let not_exec = dir.path().join("bot.sh");
    std::fs::write(&not_exec, "#!/bin/sh\n").unwrap();
    let mut in_missing_dir = rust_bot();
    in_missing_dir.cwd = Some(dir.path().join("no/such/dir"));
    for cmd in [
        BotCommand::from_words(&[not_exec.to_str().unwrap()]).unwrap(),
        in_missing_dir,
    ] {
        let err = start(&cmd, None, &Timing::default()).await.unwrap_err();
        assert_eq!(err.kind(), ForfeitKind::Crash, "{err}");
    }
}

/// An executable script without its `#!` line is run by /bin/sh (the
/// system's way with a file exec refuses), and fails in the shell's words
/// (`import: not found`): its failed start says the cause.
#[tokio::test]
async fn a_script_without_its_interpreter_line_is_told_so_when_it_fails_to_start() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bot.py");
    std::fs::write(
        &script,
        "import json, sys\nfor line in sys.stdin:\n    print(json.dumps({\"type\": \"hello\", \"name\": \"x\"}), flush=True)\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = BotCommand::from_words(&["./bot.py"]).unwrap();
    cmd.cwd = Some(dir.path().to_path_buf());
    let err = start(&cmd, None, &Timing::default()).await.unwrap_err();
    assert_eq!(err.kind(), ForfeitKind::Crash, "{err}");
    let said = err.to_string();
    assert!(
        said.contains("./bot.py has no `#!` line") && said.contains("/bin/sh"),
        "{said}"
    );
}

/// An executable file of `bytes` in a fresh folder, as `./NAME`, run there.
fn program_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, BotCommand) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = BotCommand::from_words(&[&format!("./{name}")]).unwrap();
    cmd.cwd = Some(dir.path().to_path_buf());
    (dir, cmd)
}

/// A script saved with Windows line endings has a `#!` line ending with
/// `\r`, which the system takes as part of the interpreter's name: the
/// failed start says that, whether exec fails (`/usr/bin/python3\r` does
/// not exist: not "the sandbox does not show /usr/bin/python3", which it
/// does) or `env` does (`python3\r` not found). A byte-order mark before
/// the `#!` line hides it from exec: said so, not "no `#!` line".
#[tokio::test]
async fn a_script_with_windows_line_endings_or_a_byte_order_mark_is_told_so() {
    let python = ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file());
    let mut scripts = vec![(
        "#!/usr/bin/env python3\r\nimport sys\r\n".to_string(),
        "begins with the line `#!/usr/bin/env python3\\r`: the line ends with a carriage return",
    )];
    if let Some(python) = python {
        scripts.push((
            format!("#!{python}\r\nimport sys\r\n"),
            "its first line names the interpreter `",
        ));
    }
    scripts.push((
        "\u{feff}#!/usr/bin/env python3\nimport sys\n".to_string(),
        "begins with a byte-order mark (U+FEFF, the bytes EF BB BF) before its `#!` line",
    ));
    for (text, says) in scripts {
        let (_dir, cmd) = program_file("bot.py", text.as_bytes());
        let err = start(&cmd, None, &Timing::default()).await.unwrap_err();
        assert_eq!(err.kind(), ForfeitKind::Crash, "{text:?}: {err}");
        let said = err.fault().detail;
        assert!(said.contains(says), "{text:?}: {said}");
        assert!(
            !said.contains("does not show") && !said.contains("has no `#!` line"),
            "{text:?}: {said}"
        );
        if !text.starts_with('\u{feff}') {
            assert!(said.contains("Unix line endings"), "{text:?}: {said}");
        }
    }
}

/// A program built for another machine (an ELF executable for another
/// processor, a macOS one), which exec refuses and the system then hands
/// to /bin/sh as garbage, is said to be that; so is one whose loader
/// (its dynamic linker, musl's built on Alpine) this system lacks, which
/// exec says "not found" of; and a symbolic link to nothing.
#[tokio::test]
async fn a_program_for_another_machine_or_a_link_to_nothing_is_told_so() {
    // An ELF header for a machine that is not this one: aarch64 here, or
    // x86-64 on an aarch64 machine.
    let machine: u16 = if std::env::consts::ARCH == "aarch64" {
        62
    } else {
        183
    };
    let mut elf = b"\x7fELF\x02\x01\x01\x00".to_vec();
    elf.resize(16, 0);
    elf.extend_from_slice(&2u16.to_le_bytes());
    elf.extend_from_slice(&machine.to_le_bytes());
    elf.resize(128, 0);
    let macho = [0xCFu8, 0xFA, 0xED, 0xFE, 7, 0, 0, 1, 3, 0, 0, 0, 2, 0, 0, 0];
    for (bytes, says) in [
        (&elf[..], "is an executable (ELF) for "),
        (
            &macho[..],
            "is a macOS program (Mach-O), which this machine",
        ),
    ] {
        let (_dir, cmd) = program_file("bot", bytes);
        let err = start(&cmd, None, &Timing::default()).await.unwrap_err();
        assert_eq!(err.kind(), ForfeitKind::Crash, "{err}");
        let said = err.fault().detail;
        assert!(said.contains(says), "{said}");
        assert!(!said.contains("has no `#!` line"), "{said}");
    }
    // This test's own random bot, its loader renamed to one that is not here.
    let mut bin = std::fs::read(env!("CARGO_BIN_EXE_random-bot")).unwrap();
    let loader = [
        &b"/lib64/ld-linux-x86-64.so.2\0"[..],
        b"/lib/ld-linux-aarch64.so.1\0",
    ]
    .into_iter()
    .find_map(|l| {
        bin.windows(l.len())
            .position(|w| w == l)
            .map(|at| (at, l.len()))
    });
    if let Some((at, len)) = loader {
        let missing = b"/lib/ld-none.so.1";
        bin[at..at + len].fill(0);
        bin[at..at + missing.len()].copy_from_slice(missing);
        let (_dir, cmd) = program_file("bot", &bin);
        let err = start(&cmd, None, &Timing::default()).await.unwrap_err();
        assert_eq!(err.kind(), ForfeitKind::Crash, "{err}");
        let said = err.fault().detail;
        assert!(
            said.contains("built to be run by the loader /lib/ld-none.so.1 (its dynamic linker), which this system does not have"),
            "{said}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/nonexistent/bot", dir.path().join("bot")).unwrap();
    let mut cmd = BotCommand::from_words(&["./bot"]).unwrap();
    cmd.cwd = Some(dir.path().to_path_buf());
    let err = start(&cmd, None, &Timing::default()).await.unwrap_err();
    assert_eq!(err.kind(), ForfeitKind::Crash, "{err}");
    let said = err.fault().detail;
    assert!(
        said.contains("`./bot` is a symbolic link to /nonexistent/bot, which does not exist"),
        "{said}"
    );
}

/// A bot that wrote a line unasked (a reply written twice) while its
/// opponent was asked, and the opponent then ran out of time: the
/// unasked line came first (the bot was paused soon after, its line
/// already in the pipe), so it is the fault ruled, not the timeout that
/// came seconds later.
#[tokio::test]
async fn output_unasked_before_the_other_seat_times_out_is_the_fault() {
    let timing = Timing::default();
    let mut stray = start(&broken("stray_after"), None, &timing).await.unwrap();
    let mut slow = start(&broken("hang"), None, &timing).await.unwrap();
    let (stray_pid, slow_pid) = (stray.pid(), slow.pid());
    let s = spec(two_player_variant(), 2, 1000);
    let r = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut stray, &mut slow];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Protocol), "{r:?}");
    assert_eq!(r.offender, Some(0), "{r:?}");
    assert_eq!(r.scores, vec![0.0, 1.0]);
    assert!(
        detail(&r).contains(
            "a reply no request was waiting for while seat 1 was asked, before its time ran out"
        ),
        "{r:?}"
    );
    assert!(stray.needs_restart() && slow.needs_restart());
    for (mut b, pid) in [(stray, stray_pid), (slow, slow_pid)] {
        b.quit().await;
        assert_group_gone(pid).await;
    }
}

/// A bot that exits after its reply while the game goes on has crashed,
/// and its crash came before the other seat ran out of time seconds
/// later: the crash is the fault ruled.
#[tokio::test]
async fn a_bot_gone_after_its_reply_before_the_other_seat_times_out_is_the_fault() {
    let timing = Timing::default();
    let mut gone = start(&broken("exit_after_reply"), None, &timing)
        .await
        .unwrap();
    let mut slow = start(&broken("hang"), None, &timing).await.unwrap();
    let s = spec(two_player_variant(), 2, 1000);
    let r = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut gone, &mut slow];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Crash), "{r:?}");
    assert_eq!(r.offender, Some(0), "{r:?}");
    assert_eq!(r.scores, vec![0.0, 1.0]);
    assert!(
        detail(&r).contains("while seat 1 was asked, before its time ran out"),
        "{r:?}"
    );
    // Said as the exit it was, with its status, not as a closed stdout.
    assert!(detail(&r).starts_with("exited (status 1)"), "{r:?}");
    assert!(gone.needs_restart() && slow.needs_restart());
    slow.quit().await;
}

/// Both seats exit at every game_start: each exit before a first reply is
/// started again at no charge, once (protocol.md), so the seat charged is
/// the one asked first, whose second exit is its crash, never the other
/// seat for an exit it was due a restart for. The second seat may ponder,
/// so that it is never paused before it reads its game_start and exits.
#[tokio::test]
async fn an_exit_before_a_first_reply_is_never_the_fault_ruled_first() {
    let timing = Timing::default();
    let mut first = start(&broken("early_exit"), None, &timing).await.unwrap();
    let mut launch = BotPlayer::launch(broken("early_exit"));
    launch.ponder = true;
    let mut second = BotPlayer::start(&launch, &timing).await.unwrap();
    let s = spec(two_player_variant(), 2, 10_000);
    let r = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut first, &mut second];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Crash), "{r:?}");
    assert_eq!(r.offender, Some(0), "{r:?}");
    assert_eq!(r.scores, vec![0.0, 1.0]);
}

/// A line written unasked is the first fault whatever the asked seat does
/// after it: an illegal answer or a crash a second later is not ruled. The
/// stray bot may ponder, so that its second write is never held back by a
/// pause, however loaded the machine.
#[tokio::test]
async fn output_unasked_before_the_other_seats_illegal_answer_or_crash_is_the_fault() {
    let timing = Timing::default();
    for (mode, before) in [
        ("illegal_late", "before its illegal answer"),
        ("crash_late", "before it crashed"),
    ] {
        let mut launch = BotPlayer::launch(broken("stray_after"));
        launch.ponder = true;
        let mut stray = BotPlayer::start(&launch, &timing).await.unwrap();
        let mut late = start(&broken(mode), None, &timing).await.unwrap();
        let s = spec(two_player_variant(), 2, 10_000);
        let r = {
            let mut ps: Vec<&mut dyn Player> = vec![&mut stray, &mut late];
            play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
        };
        assert_eq!(
            r.reason,
            EndReason::Forfeit(ForfeitKind::Protocol),
            "{mode}: {r:?}"
        );
        assert_eq!(r.offender, Some(0), "{mode}: {r:?}");
        assert_eq!(r.scores, vec![0.0, 1.0]);
        assert!(
            detail(&r).contains(&format!(
                "a reply no request was waiting for while seat 1 was asked, {before}"
            )),
            "{mode}: {r:?}"
        );
        for mut b in [stray, late] {
            b.quit().await;
        }
    }
}

/// 3-player Tricala with real processes: the offender is ranked last, the
/// others share first place.
#[tokio::test]
async fn three_player_forfeit_ranks_the_offender_last() {
    if Game::new(Variant::Tricala, &Settings::with_players(3)).is_err() {
        return;
    }
    let timing = Timing::default();
    let mut a = start(&rust_bot(), None, &timing).await.unwrap();
    let mut bad = start(&broken("crash_mid"), None, &timing).await.unwrap();
    let bad_pid = bad.pid();
    let mut c = start(&rust_bot(), None, &timing).await.unwrap();
    let s = spec(Variant::Tricala, 3, 5000);
    let report = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut a, &mut bad, &mut c];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert_eq!(report.reason, EndReason::Forfeit(ForfeitKind::Crash));
    assert_eq!(report.offender, Some(1));
    assert_eq!(report.scores, vec![0.75, 0.0, 0.75]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.jsonl");
    mancala_arena::referee::record::write_record(&path, &s, &report).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let end: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(end["reason"], "crash");
    assert_eq!(end["offender"], 1);
    assert_eq!(end["scores"], serde_json::json!([0.75, 0.0, 0.75]));
    assert!(bad.needs_restart());
    drop(bad);
    assert_group_gone(bad_pid).await;
    for mut b in [a, c] {
        assert!(!b.needs_restart());
        assert!(b.quit().await);
    }
}

/// A timeout says what the referee saw: half a line without its newline,
/// or nothing this turn from a bot whose hello arrived (still thinking,
/// not a flush to add).
#[tokio::test]
async fn a_timeout_says_what_arrived() {
    let r = misbehaving("no_newline", 1000, Some(ForfeitKind::Timeout)).await;
    assert!(
        detail(&r).contains("the referee saw a line without its newline on stdout")
            && detail(&r).contains(r#"{"type": "reply""#),
        "{r:?}"
    );
    // The game's watchdog before the decision's time: a stall, said with
    // the same.
    let mut s = spec(two_player_variant(), 2, 600_000);
    s.watchdog = Duration::from_secs(5);
    let r = misbehaving_in(
        &broken("no_newline"),
        "no_newline",
        s,
        Some(ForfeitKind::Stall),
    )
    .await;
    assert!(
        detail(&r).starts_with("game watchdog of 5s expired: no reply in the ")
            && detail(&r).contains(" ms the game had left")
            && !detail(&r).contains("the decision timeout")
            && detail(&r).contains("the referee saw a line without its newline on stdout")
            && detail(&r).contains(r#"{"type": "reply""#),
        "{r:?}"
    );
    // A line ended by `\r` alone (old Mac text) looks ended: said so.
    let r = misbehaving("cr_only", 1000, Some(ForfeitKind::Timeout)).await;
    assert!(
        detail(&r)
            .contains("a line ended by a carriage return alone (`\\r`), not a newline, on stdout")
            && detail(&r).contains(r#"{"type": "reply""#),
        "{r:?}"
    );
    // Busy (here in a sleep, as a slow search): still thinking.
    let r = misbehaving("slow", 300, Some(ForfeitKind::Timeout)).await;
    assert!(
        detail(&r).contains("the referee saw nothing on stdout this turn")
            && detail(&r).contains("still thinking")
            && !detail(&r).contains("flush"),
        "{r:?}"
    );
    // Reading its stdin, the request read and no answer: waiting for
    // input, its reply (if any) not flushed.
    let r = misbehaving("hang", 300, Some(ForfeitKind::Timeout)).await;
    assert!(
        detail(&r).contains("nothing came on stdout this turn")
            && detail(&r).contains("asleep, not thinking: waiting for its next line")
            && !detail(&r).contains("still thinking"),
        "{r:?}"
    );
    // Asleep with the request unread in its pipe: not thinking about it.
    let r = misbehaving("deaf_later", 1000, Some(ForfeitKind::Timeout)).await;
    assert!(
        detail(&r).contains("the request was still unread in its stdin")
            && !detail(&r).contains("still thinking"),
        "{r:?}"
    );
}

/// A reply may echo the request's `seq`; the right one is accepted, any
/// other is a reply to another request.
#[tokio::test]
async fn a_reply_may_echo_seq_and_must_echo_the_right_one() {
    let r = misbehaving("echo_seq", 5000, None).await;
    assert!(!r.is_forfeit(), "{r:?}");
    let r = misbehaving("wrong_seq", 5000, Some(ForfeitKind::Protocol)).await;
    assert!(detail(&r).contains("reply to another request"), "{r:?}");
}

/// A Python bot written for one test into `dir` (its folder): `on` is
/// the body of `def on(m, n)`, called for every message `m` (`n`: the
/// requests so far, this one included), before the default play (a
/// hello, the first legal option); it returns True when it has answered.
fn python_bot(dir: &Path, on: &str) -> BotCommand {
    let script = format!(
        r#"import json, os, sys, time
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
def raw(b):
    sys.stdout.buffer.write(b + b"\n")
    sys.stdout.flush()
def on(m, n):
{on}
    return False
n = 0
for line in sys.stdin:
    m = json.loads(line)
    t = m["type"]
    if t == "request":
        n += 1
    if on(m, n):
        continue
    if t == "hello":
        send({{"type": "hello", "name": "probe"}})
    elif t == "request":
        send({{"type": "reply", "option": m["legal"][0]}})
    elif t == "quit":
        break
"#
    );
    std::fs::write(dir.join("bot.py"), script).unwrap();
    let mut cmd = BotCommand::from_words(&["python3", "bot.py"]).unwrap();
    cmd.cwd = Some(dir.to_path_buf());
    cmd
}

/// A bot that reads its request and then closes its stdin, running on
/// with its stdout open, is a crash as soon as it closes it: it can be
/// sent nothing more, so it cannot play on. Not a wait of the whole
/// decision time for an answer that cannot matter.
#[tokio::test]
async fn a_stdin_closed_at_a_request_is_a_crash_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = python_bot(
        dir.path(),
        "    if m[\"type\"] == \"request\" and n == 2:\n        os.close(0)\n        time.sleep(3600)",
    );
    let timing = Timing::default();
    let mut bot = start(&cmd, None, &timing).await.unwrap();
    let pid = bot.pid();
    let t = std::time::Instant::now();
    let r = against_random_within(&mut bot, 1, 60_000).await;
    assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Crash), "{r:?}");
    assert!(
        detail(&r).contains("closed its stdin after reading the request"),
        "{r:?}"
    );
    // The decision time is 60 s: a wait for it would be plain, and a
    // loaded machine stays far from it.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    bot.quit().await;
    assert_group_gone(pid).await;
}

/// A bot that closes its stdin after `game_end` without reading on (the
/// next `game_start` and request still in the pipe) is seen as it closes
/// it, not at the end of its first decision's time: it left before
/// playing that game, and is started again (protocol.md); or, if it had
/// read them into its own buffer (paused before it read `game_end`, it
/// found them all there at once), it crashed in it.
#[tokio::test]
async fn a_stdin_closed_after_game_end_is_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = python_bot(
        dir.path(),
        "    if m[\"type\"] == \"game_end\":\n        time.sleep(0.3)\n        os.close(0)\n        time.sleep(3600)",
    );
    let timing = Timing::default();
    let mut bot = start(&cmd, None, &timing).await.unwrap();
    let r = against_random(&mut bot, 1).await;
    assert!(!r.is_forfeit(), "{r:?}");
    let t = std::time::Instant::now();
    let r = against_random_within(&mut bot, 2, 60_000).await;
    if r.is_forfeit() {
        assert_eq!(r.reason, EndReason::Forfeit(ForfeitKind::Crash), "{r:?}");
        assert!(detail(&r).contains("closed its stdin"), "{r:?}");
    } else {
        assert_eq!(bot.exits_between_games(), 1, "{r:?}");
    }
    // The decision time is 60 s: a wait for it would be plain, and a
    // loaded machine stays far from it.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let pid = bot.pid();
    bot.quit().await;
    assert_group_gone(pid).await;
}

/// A reply whose echoed `seq` is a number beyond any number type (`1e400`,
/// which JSON's grammar allows) is a wrong value of that field, as `-1`
/// or `1.5` there is (`protocol`, the field named), not broken JSON.
#[tokio::test]
async fn a_seq_out_of_range_is_a_protocol_fault_naming_the_field() {
    for seq in ["1e400", "1.5", "-1"] {
        let line = format!(
            "b'{{\"type\":\"reply\",\"option\":' + json.dumps(m[\"legal\"][0]).encode() + b',\"seq\":{seq}}}'"
        );
        let r = answered_with(&line).await;
        assert_eq!(
            r.reason,
            EndReason::Forfeit(ForfeitKind::Protocol),
            "{seq}: {r:?}"
        );
        assert!(
            detail(&r).contains("`seq` must be a whole number"),
            "{seq}: {r:?}"
        );
    }
}

/// A hello whose name breaks a rule is told which: a 10 KB name its
/// length (the detail, cut at 200 bytes, would not show it), a name with
/// a control character that character.
#[tokio::test]
async fn a_refused_name_is_told_which_rule_it_breaks() {
    for (name, says) in [
        (
            "'n' * 10240",
            "hello: name is 10240 bytes long, more than 64",
        ),
        ("'bell\\x07'", "hello: name holds U+0007, a control"),
        // Names of invisible characters only (Hangul fillers, which are
        // default-ignorable and were not hidden), of braille blanks, of
        // combining marks with no letter: each was accepted, and the bot
        // showed as no one in the tables.
        (
            "'\\u3164'",
            "holds U+3164, a control or invisible character",
        ),
        (
            "'\\uffa0'",
            "holds U+FFA0, a control or invisible character",
        ),
        ("'\\u2800\\u2800'", "name shows nothing"),
        ("'\\u0301\\u0301'", "name shows nothing"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let on = format!(
            "    if m[\"type\"] == \"hello\":\n        send({{\"type\": \"hello\", \"name\": {name}}})\n        return True"
        );
        let err = start(&python_bot(dir.path(), &on), None, &Timing::default())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ForfeitKind::Protocol, "{name}: {err}");
        assert!(err.to_string().contains(says), "{name}: {err}");
    }
}

/// A line with nothing visible in it, yet not blank (a no-break space, a
/// byte-order mark alone), is shown escaped in its `bad_json` detail, and
/// said what it is: shown as it is, it would look like nothing.
#[tokio::test]
async fn an_invisible_line_is_shown_escaped() {
    for (bytes, says) in [
        ("b'\\xc2\\xa0\\xc2\\xa0'", "\\u{a0}\\u{a0} ("),
        ("b'\\xc2\\xa0'", "U+00A0 is not a blank line's white space"),
        ("b'\\xe3\\x80\\x80'", "\\u{3000} ("),
        ("b'\\xef\\xbb\\xbf'", "\\u{feff} ("),
        ("b'\\xef\\xbb\\xbf'", "only a byte-order mark"),
    ] {
        let r = answered_with(bytes).await;
        assert_eq!(
            r.reason,
            EndReason::Forfeit(ForfeitKind::BadJson),
            "{bytes}: {r:?}"
        );
        assert!(detail(&r).contains(says), "{bytes}: {says}: {r:?}");
    }
}

/// A game against a random bot of a bot that answers its first request
/// with `line` (a Python expression of bytes, `m` the request).
async fn answered_with(line: &str) -> mancala_arena::referee::GameReport {
    let dir = tempfile::tempdir().unwrap();
    let on =
        format!("    if m[\"type\"] == \"request\":\n        raw({line})\n        return True");
    let mut bot = start(&python_bot(dir.path(), &on), None, &Timing::default())
        .await
        .unwrap();
    let r = against_random(&mut bot, 1).await;
    bot.quit().await;
    r
}
