//! The referee: plays one game among 2 or 3 [`Player`]s, checks every
//! option with the engine, records every decision with its time, and ends
//! with per-seat scores and a reason (the engine's, or a forfeit).
//!
//! Owns the flow of one game and its record. It must not know schedules,
//! pairings or ratings (the league's), rules (the engine's) or pipes (the
//! bot runner's).
//!
//! Rooms: `play.rs` holds the game as a small state machine (set-up, one
//! turn at a time, one record point every decision goes through, finish);
//! [`player`] the players (bot processes and in-process ones); [`record`]
//! the game record.
//!
//! API used by `arena play`, `arena check-bot` and the league:
//! - [`GameSpec`] (game id, variant, settings, opening, names, [`TimeControl`],
//!   watchdog) and [`play_game`]`(&spec, &mut [&mut dyn Player], &mut on_event)
//!   -> Result<GameReport, SpecError>`.
//! - [`BotPlayer::start`]`(&launch, &timing)` (spawn + handshake),
//!   [`Player::needs_restart`], [`BotPlayer::quit`]; [`RandomPlayer`].
//! - [`record::write_record`]: the game record as JSON lines.
//!
//! Forfeits (a ruling, docs/rules.md): a bot that sends an illegal option,
//! breaks the protocol, times out or crashes loses; in a 3-player game it is ranked last
//! and the others share first place. A decision with a single option is
//! applied without asking; every player still sees it in `since`.
//!
//! The game future is cancel-safe: dropping it drops nothing but borrowed
//! players; a [`BotPlayer`] dropped later kills its process group.

mod play;
pub mod player;
pub mod record;

pub use play::play_game;

pub use player::{
    Answer, Ask, BotInfo, BotPlayer, End, Player, RandomPlayer, Start, StartError, Timing, Unknown,
};

use crate::engine::{rank_scores, EngineError, Game, Reason, Settings, Variant};
use crate::protocol::{DecisionMsg, TimeMsg};
use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// How a player forfeits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ForfeitKind {
    /// An option the engine rejects (or cannot parse).
    Illegal,
    /// No reply within the decision timeout or the game clock.
    Timeout,
    /// The game's wall-clock watchdog expired while waiting on this player.
    Stall,
    /// The process exited, closed its pipes, or could not be written to.
    Crash,
    /// A line that is not JSON.
    BadJson,
    /// A line longer than the limit.
    LineTooLong,
    /// JSON, but not the message expected.
    Protocol,
    /// Killed by the kernel at its memory limit (the sandbox's cgroup).
    Memory,
}

impl ForfeitKind {
    pub fn name(self) -> &'static str {
        match self {
            ForfeitKind::Illegal => "illegal",
            ForfeitKind::Timeout => "timeout",
            ForfeitKind::Stall => "stall",
            ForfeitKind::Crash => "crash",
            ForfeitKind::BadJson => "bad_json",
            ForfeitKind::LineTooLong => "line_too_long",
            ForfeitKind::Protocol => "protocol",
            ForfeitKind::Memory => "memory",
        }
    }
}

impl fmt::Display for ForfeitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a player did wrong, with the offending text (truncated).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct Fault {
    pub kind: ForfeitKind,
    pub detail: String,
    /// Output the bot wrote without being asked ([`Fault::unasked`]): it
    /// may have come at any time since the bot was last read, so it is not
    /// weighed against another seat's unasked output as a fault that came
    /// later would be.
    pub unasked: bool,
}

impl Fault {
    pub fn new(kind: ForfeitKind, detail: impl Into<String>) -> Fault {
        Fault {
            kind,
            detail: detail.into(),
            unasked: false,
        }
    }

    /// The fault of output the bot wrote without being asked.
    pub fn unasked(kind: ForfeitKind, detail: impl Into<String>) -> Fault {
        Fault {
            unasked: true,
            ..Fault::new(kind, detail)
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The rules ended it (a win or a draw reason).
    Rules(Reason),
    /// A player forfeited.
    Forfeit(ForfeitKind),
    /// The game could not be played: the spec or the engine failed, nobody's
    /// fault at the table (recorded as `error`).
    Unplayable,
}

impl EndReason {
    /// The name recorded in results: the engine's reason name or the
    /// forfeit kind.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Rules(r) => r.name(),
            EndReason::Forfeit(k) => k.name(),
            EndReason::Unplayable => "error",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for EndReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A per-game clock: `base` at the start, `increment` added after each of
/// the player's decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    pub base: Duration,
    pub increment: Duration,
}

/// Time allowed to each player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Longest time for one decision.
    pub per_decision: Duration,
    /// Optional per-game clock (the decision deadline is the earlier of both).
    pub clock: Option<Clock>,
}

impl Default for TimeControl {
    fn default() -> Self {
        TimeControl {
            per_decision: Duration::from_secs(5),
            clock: None,
        }
    }
}

impl TimeControl {
    /// The time control a game start announced.
    pub fn from_msg(m: &TimeMsg) -> TimeControl {
        TimeControl {
            per_decision: Duration::from_millis(m.per_decision_ms),
            clock: m.base_ms.map(|b| Clock {
                base: Duration::from_millis(b),
                increment: Duration::from_millis(m.increment_ms.unwrap_or(0)),
            }),
        }
    }

    fn msg(&self) -> TimeMsg {
        TimeMsg {
            per_decision_ms: self.per_decision.as_millis() as u64,
            base_ms: self.clock.map(|c| c.base.as_millis() as u64),
            increment_ms: self.clock.map(|c| c.increment.as_millis() as u64),
        }
    }
}

/// One game to play.
#[derive(Clone, Debug)]
pub struct GameSpec {
    pub game_id: String,
    pub variant: Variant,
    pub settings: Settings,
    /// Decisions applied before the players take over (canonical notation):
    /// recorded (`opening: true`) and shown to every player in `since`, but
    /// not asked.
    pub opening: Vec<String>,
    /// Names by seat; an empty list takes the players' own names.
    pub names: Vec<String>,
    pub time: TimeControl,
    /// Wall-clock limit for the whole game, always on. Exceeding it while
    /// waiting on a player is a forfeit `stall` (recorded apart from crashes).
    pub watchdog: Duration,
    /// What happened before the game that its record should say (a bot
    /// restarted for output it wrote between games, without charge).
    pub notes: Vec<String>,
    /// The seed every bot is sent in `game_start`: a bot that draws its
    /// randomness from it plays the same game again (protocol.md).
    pub seed: u64,
}

impl GameSpec {
    /// A spec with default time control, no opening and a 10-minute watchdog.
    pub fn new(game_id: impl Into<String>, variant: Variant, settings: Settings) -> GameSpec {
        GameSpec {
            game_id: game_id.into(),
            variant,
            settings,
            opening: Vec::new(),
            names: Vec::new(),
            time: TimeControl::default(),
            watchdog: Duration::from_secs(600),
            notes: Vec::new(),
            seed: 0,
        }
    }
}

/// A spec that cannot be played (nobody's fault but the caller's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{} given for a {expected}-player game", crate::engine::players_text(*.players))]
    Players { players: usize, expected: usize },
    #[error("opening decision {index} `{option}`: {error}")]
    Opening {
        index: usize,
        option: String,
        error: EngineError,
    },
}

/// One recorded decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DecisionRecord {
    pub seat: usize,
    pub ply: u32,
    pub option: String,
    /// The only option: applied without asking.
    pub forced: bool,
    /// Part of the spec's opening: applied without asking.
    pub opening: bool,
    /// Time the player took (0 when not asked), microseconds.
    #[serde(default)]
    pub elapsed_us: u64,
}

impl DecisionRecord {
    /// `opening` or `forced` when the referee applied it without asking,
    /// `None` when its seat chose it.
    pub fn applied(&self) -> Option<&'static str> {
        match (self.opening, self.forced) {
            (true, _) => Some("opening"),
            (false, true) => Some("forced"),
            (false, false) => None,
        }
    }

    /// The decision as players are shown it (`since`): opening decisions
    /// count as forced, since nobody was asked.
    pub fn msg(&self) -> DecisionMsg {
        DecisionMsg {
            seat: self.seat,
            ply: self.ply,
            option: self.option.clone(),
            forced: self.forced || self.opening,
            opening: self.opening,
        }
    }
}

/// The result of one game.
#[derive(Clone, Debug, Serialize)]
pub struct GameReport {
    pub game_id: String,
    pub variant: Variant,
    pub players: usize,
    pub names: Vec<String>,
    /// Per seat, in [0, 1] (engine `Outcome::scores`).
    pub scores: Vec<f64>,
    pub reason: EndReason,
    /// The seat that forfeited.
    pub offender: Option<usize>,
    /// What the offender did (its text, truncated).
    pub detail: Option<String>,
    pub plies: u32,
    pub decisions: Vec<DecisionRecord>,
    pub final_state: serde_json::Value,
    #[serde(serialize_with = "ser_ms")]
    pub duration: Duration,
    /// What each seat wrote on stderr during the game, by turn, for the
    /// seats whose stderr is kept ([`Player::take_stderr`]) and wrote
    /// something.
    #[serde(skip)]
    pub stderr: Vec<crate::results::stderr::SeatStderr>,
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

impl GameReport {
    /// The report of a game that never began because the player in `seat`
    /// could not be started (what its start did wrong: `kind`, `detail`):
    /// a forfeit before the first decision, scored as any other.
    pub fn unstarted(
        spec: &GameSpec,
        seat: usize,
        kind: ForfeitKind,
        detail: String,
        duration: Duration,
    ) -> GameReport {
        let players = spec.names.len();
        GameReport {
            game_id: spec.game_id.clone(),
            variant: spec.variant,
            players,
            names: spec.names.clone(),
            scores: forfeit_scores(players, seat),
            reason: EndReason::Forfeit(kind),
            offender: Some(seat),
            detail: Some(detail),
            plies: 0,
            decisions: Vec::new(),
            final_state: serde_json::Value::Null,
            duration,
            stderr: Vec::new(),
        }
    }

    pub fn is_forfeit(&self) -> bool {
        matches!(self.reason, EndReason::Forfeit(_))
    }
}

/// What happens during a game, for displays and logs.
#[derive(Debug)]
pub enum Event<'a> {
    /// The players were told; the opening is applied.
    Started { spec: &'a GameSpec, game: &'a Game },
    /// A decision was applied (`game` is the state after it).
    Decided {
        decision: &'a DecisionRecord,
        game: &'a Game,
    },
    /// A player forfeited.
    Forfeit { seat: usize, fault: &'a Fault },
    /// The game is over (sent before the players are told).
    Ended { report: &'a GameReport },
}

/// Scores when `offender` forfeits (a ruling, docs/rules.md): last, the others share
/// first.
pub fn forfeit_scores(players: usize, offender: usize) -> Vec<f64> {
    let ranks: Vec<u8> = (0..players).map(|s| u8::from(s == offender)).collect();
    rank_scores(&ranks)
}

#[cfg(test)]
mod tests {

    /// games.csv's readers know each reason a game ends with, forfeit or
    /// not (`results::csvio`, which checks a row's offender against it). A
    /// new kind of end fails to build here until it is listed.
    #[test]
    fn the_results_know_every_reason_a_game_ends_with() {
        use crate::engine::Reason as R;
        use crate::results::csvio::{FORFEIT_REASONS, RULE_REASONS};
        use ForfeitKind as F;
        let forfeits = [
            F::Illegal,
            F::Timeout,
            F::Stall,
            F::Crash,
            F::BadJson,
            F::LineTooLong,
            F::Protocol,
            F::Memory,
        ];
        let rules = [
            R::Pieces,
            R::Escape,
            R::NoMoves,
            R::Captures,
            R::Corners,
            R::Tie,
            R::Stalemate,
            R::Store,
            R::InnerRow,
            R::Block,
            R::MaxPlies,
            R::Perpetual,
            R::Repetition,
            R::DrawClaim,
        ];
        for k in forfeits {
            match k {
                F::Illegal
                | F::Timeout
                | F::Stall
                | F::Crash
                | F::BadJson
                | F::LineTooLong
                | F::Protocol
                | F::Memory => assert!(FORFEIT_REASONS.contains(&k.name()), "{k}"),
            }
        }
        for r in rules {
            match r {
                R::Pieces
                | R::Escape
                | R::NoMoves
                | R::Captures
                | R::Corners
                | R::Tie
                | R::Stalemate
                | R::Store
                | R::InnerRow
                | R::Block
                | R::MaxPlies
                | R::Perpetual
                | R::Repetition
                | R::DrawClaim => assert!(RULE_REASONS.contains(&r.name()), "{r}"),
            }
        }
        assert_eq!(FORFEIT_REASONS.len(), forfeits.len());
        assert_eq!(RULE_REASONS.len(), rules.len());
    }
    use super::*;

    #[test]
    fn forfeit_scores_follow_rulings() {
        assert_eq!(forfeit_scores(2, 0), vec![0.0, 1.0]);
        assert_eq!(forfeit_scores(2, 1), vec![1.0, 0.0]);
        // 3 players: offender last, the others share first.
        assert_eq!(forfeit_scores(3, 1), vec![0.75, 0.0, 0.75]);
    }

    #[test]
    fn reason_names() {
        assert_eq!(
            EndReason::Forfeit(ForfeitKind::LineTooLong).name(),
            "line_too_long"
        );
        assert_eq!(EndReason::Forfeit(ForfeitKind::BadJson).name(), "bad_json");
        assert_eq!(EndReason::Rules(Reason::MaxPlies).name(), "max_plies");
        assert_eq!(EndReason::Unplayable.name(), "error");
    }

    /// The variants whose engine is available in this build.
    fn playable() -> Vec<(Variant, usize)> {
        let mut v = Vec::new();
        for variant in Variant::ALL {
            for &n in variant.player_counts() {
                if Game::new(variant, &Settings::with_players(n)).is_ok() {
                    v.push((variant, n));
                }
            }
        }
        v
    }

    /// Plays randomly and keeps what it was told, to rebuild the history.
    struct Recorder {
        inner: RandomPlayer,
        seen: Vec<DecisionMsg>,
        seat: usize,
        ended: bool,
    }

    impl Player for Recorder {
        fn name(&self) -> &str {
            "recorder"
        }
        fn start<'a>(
            &'a mut self,
            s: &'a Start<'a>,
        ) -> player::PlayerFuture<'a, Result<(), Fault>> {
            self.seat = s.seat;
            Box::pin(std::future::ready(Ok(())))
        }
        fn decide<'a>(
            &'a mut self,
            ask: &'a Ask<'a>,
        ) -> player::PlayerFuture<'a, Result<Answer, Fault>> {
            self.seen.extend_from_slice(ask.since);
            let seat = self.seat;
            let ply = ask.game.plies();
            let fut = self.inner.decide(ask);
            let seen = &mut self.seen;
            Box::pin(async move {
                let o = fut.await?;
                seen.push(DecisionMsg {
                    seat,
                    ply,
                    option: o.option.clone(),
                    forced: false,
                    opening: false,
                });
                Ok(o)
            })
        }
        fn end<'a>(&'a mut self, e: &'a End<'a>) -> player::PlayerFuture<'a, ()> {
            self.seen.extend_from_slice(e.since);
            self.ended = true;
            Box::pin(std::future::ready(()))
        }
    }

    #[tokio::test]
    async fn every_player_can_rebuild_the_whole_history() {
        for (variant, n) in playable() {
            for seed in 0..5u64 {
                let mut rec: Vec<Recorder> = (0..n)
                    .map(|s| Recorder {
                        inner: RandomPlayer::new("r", seed * 10 + s as u64),
                        seen: Vec::new(),
                        seat: 99,
                        ended: false,
                    })
                    .collect();
                let mut spec = GameSpec::new("g", variant, Settings::with_players(n));
                spec.settings.max_plies = 200;
                let mut ps: Vec<&mut dyn Player> =
                    rec.iter_mut().map(|r| r as &mut dyn Player).collect();
                let mut events = 0;
                let report = play_game(&spec, &mut ps, &mut |_e| events += 1)
                    .await
                    .unwrap();
                assert!(!report.is_forfeit(), "{variant}: {:?}", report.detail);
                assert_eq!(events, report.decisions.len() + 2);
                let all: Vec<DecisionMsg> =
                    report.decisions.iter().map(DecisionRecord::msg).collect();
                for (s, r) in rec.iter().enumerate() {
                    assert_eq!(r.seat, s);
                    assert!(r.ended);
                    assert_eq!(r.seen, all, "{variant} seat {s} history differs");
                }
                let sum: f64 = report.scores.iter().sum();
                assert!((sum - n as f64 / 2.0).abs() < 1e-9);
            }
        }
    }

    /// Answers with a fixed string (or a fault) every time.
    struct Fixed(Result<String, Fault>);

    impl Player for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn decide<'a>(
            &'a mut self,
            _a: &'a Ask<'a>,
        ) -> player::PlayerFuture<'a, Result<Answer, Fault>> {
            Box::pin(std::future::ready(self.0.clone().map(Answer::new)))
        }
    }

    #[tokio::test]
    async fn illegal_and_faulty_players_forfeit() {
        for (variant, n) in playable() {
            let spec = GameSpec::new("g", variant, Settings::with_players(n));
            for (answer, kind) in [
                (Ok("nonsense-option".to_string()), ForfeitKind::Illegal),
                (
                    Err(Fault::new(ForfeitKind::BadJson, "x")),
                    ForfeitKind::BadJson,
                ),
                (Err(Fault::new(ForfeitKind::Crash, "x")), ForfeitKind::Crash),
            ] {
                // The faulty player sits in the last seat.
                let mut randoms: Vec<RandomPlayer> = (0..n - 1)
                    .map(|s| RandomPlayer::new("r", s as u64))
                    .collect();
                let mut bad = Fixed(answer.clone());
                let mut ps: Vec<&mut dyn Player> =
                    randoms.iter_mut().map(|r| r as &mut dyn Player).collect();
                ps.push(&mut bad);
                let report = play_game(&spec, &mut ps, &mut |_| {}).await.unwrap();
                assert_eq!(report.reason, EndReason::Forfeit(kind), "{variant}");
                assert_eq!(report.offender, Some(n - 1));
                assert_eq!(report.scores, forfeit_scores(n, n - 1));
            }
        }
    }

    /// Answers the first legal option, says it took 30 ms, and keeps what
    /// it was told about time.
    struct Timed {
        seen: Vec<(Option<Duration>, Duration)>,
    }

    impl Player for Timed {
        fn name(&self) -> &str {
            "timed"
        }
        fn decide<'a>(
            &'a mut self,
            a: &'a Ask<'a>,
        ) -> player::PlayerFuture<'a, Result<Answer, Fault>> {
            self.seen.push((a.time_left, a.timeout));
            Box::pin(std::future::ready(Ok(Answer {
                option: a.legal[0].clone(),
                elapsed: Some(Duration::from_millis(30)),
            })))
        }
    }

    #[tokio::test]
    async fn the_clock_counts_the_players_time_and_adds_the_increment() {
        let (variant, n) = playable()[0];
        let mut spec = GameSpec::new("g", variant, Settings::with_players(n));
        spec.time = TimeControl {
            per_decision: Duration::from_millis(70),
            clock: Some(Clock {
                base: Duration::from_millis(100),
                increment: Duration::from_millis(10),
            }),
        };
        let mut timed = Timed { seen: Vec::new() };
        let mut others: Vec<RandomPlayer> =
            (1..n).map(|s| RandomPlayer::new("r", s as u64)).collect();
        let mut ps: Vec<&mut dyn Player> = vec![&mut timed];
        ps.extend(others.iter_mut().map(|r| r as &mut dyn Player));
        let report = play_game(&spec, &mut ps, &mut |_| {}).await.unwrap();
        let ms = Duration::from_millis;
        // 100, then -30 +10 each time; the timeout is the smaller of the
        // decision time and the clock; a reply that takes longer than the
        // clock has left (30 of 20) is a timeout, even though this player
        // answered past its deadline (protocol.md, "Limits").
        let expected = [(100, 70), (80, 70), (60, 60), (40, 40), (20, 20)];
        for (i, &(left, timeout)) in expected.iter().enumerate() {
            if let Some(&seen) = timed.seen.get(i) {
                assert_eq!(seen, (Some(ms(left)), ms(timeout)), "decision {i}");
            }
        }
        assert!(timed.seen.len() >= 3, "{report:?}");
        if timed.seen.len() == expected.len() {
            assert_eq!(report.reason, EndReason::Forfeit(ForfeitKind::Timeout));
            assert_eq!(report.offender, Some(0));
            let detail = report.detail.as_deref().unwrap_or_default();
            assert!(
                detail.contains("the game clock ran out: the reply took 30.0 ms with 20.0 ms left"),
                "{detail}"
            );
        } else {
            assert!(timed.seen.len() < expected.len(), "{report:?}");
        }
        let mine = report
            .decisions
            .iter()
            .filter(|d| d.seat == 0 && !d.forced && !d.opening);
        for d in mine {
            assert_eq!(d.elapsed_us, 30_000);
        }
    }

    #[tokio::test]
    async fn a_player_that_never_answers_stalls_the_watchdog() {
        struct Never;
        impl Player for Never {
            fn name(&self) -> &str {
                "never"
            }
            fn decide<'a>(
                &'a mut self,
                _a: &'a Ask<'a>,
            ) -> player::PlayerFuture<'a, Result<Answer, Fault>> {
                Box::pin(std::future::pending())
            }
        }
        for (variant, n) in playable().into_iter().take(1) {
            let mut spec = GameSpec::new("g", variant, Settings::with_players(n));
            spec.watchdog = Duration::from_millis(20);
            let mut first = Never;
            let mut others: Vec<RandomPlayer> =
                (1..n).map(|s| RandomPlayer::new("r", s as u64)).collect();
            let mut ps: Vec<&mut dyn Player> = vec![&mut first];
            ps.extend(others.iter_mut().map(|r| r as &mut dyn Player));
            let report = play_game(&spec, &mut ps, &mut |_| {}).await.unwrap();
            assert_eq!(report.reason, EndReason::Forfeit(ForfeitKind::Stall));
            assert_eq!(report.offender, Some(0));
        }
    }

    /// The time a player is told it has is the real limit: never past the
    /// game's watchdog (protocol.md), however long a decision may be.
    #[tokio::test]
    async fn the_time_told_is_never_past_the_watchdog() {
        struct Slow(Vec<Duration>);
        impl Player for Slow {
            fn name(&self) -> &str {
                "slow"
            }
            fn decide<'a>(
                &'a mut self,
                a: &'a Ask<'a>,
            ) -> player::PlayerFuture<'a, Result<Answer, Fault>> {
                self.0.push(a.timeout);
                let option = a.legal[0].clone();
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    Ok(Answer::new(option))
                })
            }
        }
        let (variant, n) = playable()[0];
        let mut spec = GameSpec::new("g", variant, Settings::with_players(n));
        spec.time.per_decision = Duration::from_secs(5);
        spec.watchdog = Duration::from_millis(700);
        let mut slow = Slow(Vec::new());
        let mut others: Vec<RandomPlayer> =
            (1..n).map(|s| RandomPlayer::new("r", s as u64)).collect();
        let mut ps: Vec<&mut dyn Player> = vec![&mut slow];
        ps.extend(others.iter_mut().map(|r| r as &mut dyn Player));
        let report = play_game(&spec, &mut ps, &mut |_| {}).await.unwrap();
        let told = &slow.0;
        assert!(told.len() >= 2, "{told:?} {report:?}");
        assert!(told.iter().all(|t| *t <= spec.watchdog), "{told:?}");
        assert!(told.windows(2).all(|w| w[1] < w[0]), "{told:?}");
    }

    #[tokio::test]
    async fn record_has_header_decisions_and_end() {
        for (variant, n) in playable().into_iter().take(1) {
            let spec = GameSpec::new("g7", variant, Settings::with_players(n));
            let mut rs: Vec<RandomPlayer> =
                (0..n).map(|s| RandomPlayer::new("r", s as u64)).collect();
            let mut ps: Vec<&mut dyn Player> =
                rs.iter_mut().map(|r| r as &mut dyn Player).collect();
            let report = play_game(&spec, &mut ps, &mut |_| {}).await.unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("games/g7.jsonl");
            record::write_record(&path, &spec, &report).unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<serde_json::Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(lines.len(), report.decisions.len() + 2);
            assert_eq!(lines[0]["type"], "game");
            assert_eq!(lines[0]["format"], record::FORMAT);
            assert_eq!(lines[0]["variant"], variant.name());
            // Format 2: a decision line has no `type`.
            assert!(lines[1].get("type").is_none(), "{}", lines[1]);
            assert_eq!(lines[1]["option"], report.decisions[0].option.as_str());
            // Read back, the same decisions.
            let back = record::read_record(&text).unwrap();
            assert_eq!(back.decisions, report.decisions);
            let end = &lines[lines.len() - 1];
            assert_eq!(end["type"], "end");
            assert_eq!(end["reason"], report.reason.name());
        }
    }
}
