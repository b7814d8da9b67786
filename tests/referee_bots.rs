//! Integration tests: real bot processes over real pipes against the
//! referee. Each misbehaving bot (bots/broken/misbehave.py) must lose with
//! the right reason, the other bot must be credited, no process may be
//! left behind, and the next game must run normally.

use mancala_arena::bot::{group_alive, BotCommand, Limits};
use mancala_arena::engine::{Game, Settings, Variant};
use mancala_arena::referee::{
    play_game, BotPlayer, EndReason, ForfeitKind, GameSpec, Player, RandomPlayer, TimeControl,
};
use std::path::PathBuf;
use std::time::Duration;

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
        .command(&dir)
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
async fn misbehaving(mode: &str, timeout_ms: u64, expected: Option<ForfeitKind>) {
    let variant = two_player_variant();
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits::default();
    let log = dir.path().join("broken.log");
    let mut bad = BotPlayer::start(&broken(mode), Some(&log), &limits)
        .await
        .unwrap();
    let bad_pid = bad.pid();
    let mut good = BotPlayer::start(&rust_bot(), None, &limits).await.unwrap();
    let good_pid = good.pid();
    let s = spec(variant, 2, timeout_ms);
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
            assert!(report.detail.as_ref().is_some_and(|d| d.len() < 400));
            assert!(bad.needs_restart() || kind == ForfeitKind::Illegal);
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
    let report = {
        let mut ps: Vec<&mut dyn Player> = vec![&mut random, &mut good];
        play_game(&s, &mut ps, &mut |_| {}).await.unwrap()
    };
    assert!(!report.is_forfeit(), "next game: {report:?}");
    assert_eq!(good.pid(), good_pid);
    assert!(good.quit().await, "the good bot exits cleanly on quit");
    assert_group_gone(good_pid).await;
}

#[tokio::test]
async fn crash_at_start() {
    let err = BotPlayer::start(&broken("crash_start"), None, &Limits::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ForfeitKind::Crash, "{err}");
    assert!(err.to_string().contains("status 3"), "{err}");
}

#[tokio::test]
async fn missing_program_fails_to_start() {
    let cmd = BotCommand::from_words(&["/nonexistent/bot"]).unwrap();
    let err = BotPlayer::start(&cmd, None, &Limits::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ForfeitKind::Crash);
}

#[tokio::test]
async fn crash_mid_game() {
    misbehaving("crash_mid", 5000, Some(ForfeitKind::Crash)).await;
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

#[tokio::test]
async fn illegal_option() {
    misbehaving("illegal", 5000, Some(ForfeitKind::Illegal)).await;
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
    let limits = Limits {
        stderr_cap: 10_000,
        ..Limits::default()
    };
    let mut bot = BotPlayer::start(&broken("stderr_flood"), Some(&log), &limits)
        .await
        .unwrap();
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
    let limits = Limits::default();
    let mut bad = BotPlayer::start(&broken("hang"), None, &limits)
        .await
        .unwrap();
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
    let limits = Limits::default();
    let mut bots = Vec::new();
    for name in ["random-python", "random-js", "random-rust"] {
        let mut cmd = example(name);
        if name == "random-rust" {
            cmd = rust_bot();
        }
        let b = BotPlayer::start(&cmd, None, &limits).await.unwrap();
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
