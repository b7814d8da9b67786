//! Players: what the referee asks for decisions. [`BotPlayer`] is a bot
//! process speaking protocol v1; [`RandomPlayer`] is in-process (check-bot,
//! tests, benchmarks).
//!
//! Owns turning referee questions into protocol messages and back, and
//! classifying what a bot did wrong ([`Fault`]). It does not judge
//! legality (the referee asks the engine) and knows no schedule.

use super::{Fault, ForfeitKind};
use crate::bot::{BotCommand, BotError, BotProcess, Limits};
use crate::engine::{Game, Settings, Variant};
use crate::protocol::{self, DecisionMsg, DecodeError, FromBot, TimeMsg, ToBot};
use rand::{Rng, SeedableRng};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;
use tokio::time::Instant;

/// The future a [`Player`] method returns.
pub type PlayerFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Bytes of a bot's offending text kept in records.
pub const DETAIL_MAX: usize = 200;

/// A game is starting; `seat` is this player's.
pub struct Start<'a> {
    pub game_id: &'a str,
    pub variant: Variant,
    pub settings: &'a Settings,
    pub seat: usize,
    pub names: &'a [String],
    pub time: TimeMsg,
    pub deadline: Instant,
}

/// A decision to make.
pub struct Ask<'a> {
    pub game_id: &'a str,
    pub game: &'a Game,
    pub legal: &'a [String],
    /// Decisions since this player's previous request (see protocol.md).
    pub since: &'a [DecisionMsg],
    pub timeout: Duration,
    pub time_left: Option<Duration>,
    /// Answer by then (the earlier of the decision deadline and the
    /// game's watchdog).
    pub deadline: Instant,
}

/// The game is over.
pub struct End<'a> {
    pub game_id: &'a str,
    pub scores: &'a [f64],
    pub reason: &'a str,
    pub offender: Option<usize>,
    pub since: &'a [DecisionMsg],
    pub state: &'a serde_json::Value,
    pub deadline: Instant,
}

/// Something the referee can ask for decisions.
pub trait Player: Send {
    /// The name announced by the player (bot hello) or given to it.
    fn name(&self) -> &str;
    /// Tells the player a game starts. No answer is expected.
    fn start<'a>(&'a mut self, start: &'a Start<'a>) -> PlayerFuture<'a, Result<(), Fault>>;
    /// Asks for one option (in canonical notation, not yet checked).
    fn decide<'a>(&'a mut self, ask: &'a Ask<'a>) -> PlayerFuture<'a, Result<String, Fault>>;
    /// Tells the player the game is over. Failures only mark the player for
    /// restart.
    fn end<'a>(&'a mut self, end: &'a End<'a>) -> PlayerFuture<'a, ()>;
    /// True when the player is not fit for another game (it crashed, timed
    /// out, broke the protocol): the league restarts it.
    fn needs_restart(&self) -> bool {
        false
    }
    /// Says goodbye (`quit` for a bot, then its process group is ended).
    /// True when the player left cleanly.
    fn quit<'a>(&'a mut self) -> PlayerFuture<'a, bool> {
        Box::pin(std::future::ready(true))
    }
}

/// What a bot announced in its hello.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BotInfo {
    pub name: String,
    pub version: String,
    pub author: String,
}

/// Why a bot could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Spawn(BotError),
    #[error("handshake failed: {0}")]
    Handshake(Fault),
}

impl StartError {
    /// The forfeit kind this start failure amounts to (a spawn failure is a crash).
    pub fn kind(&self) -> ForfeitKind {
        match self {
            StartError::Spawn(_) => ForfeitKind::Crash,
            StartError::Handshake(f) => f.kind,
        }
    }
}

/// Turns a bot runner error into the fault it stands for.
pub fn fault_of(e: BotError) -> Fault {
    match e {
        BotError::Timeout => Fault::new(ForfeitKind::Timeout, "no reply before the deadline"),
        BotError::Exited { status } => Fault::new(
            ForfeitKind::Crash,
            format!("exited ({})", crate::bot::describe_status(&status)),
        ),
        BotError::LineTooLong { limit, start } => Fault::new(
            ForfeitKind::LineTooLong,
            format!(
                "line over {limit} bytes: {}",
                protocol::truncate(&start, DETAIL_MAX)
            ),
        ),
        e @ (BotError::Io(_) | BotError::Spawn { .. } | BotError::Log { .. }) => {
            Fault::new(ForfeitKind::Crash, e.to_string())
        }
    }
}

fn decode_fault(e: DecodeError, line: &[u8]) -> Fault {
    let kind = match e {
        DecodeError::BadJson(_) => ForfeitKind::BadJson,
        DecodeError::Protocol(_) => ForfeitKind::Protocol,
    };
    Fault::new(kind, protocol::truncate(line, DETAIL_MAX))
}

/// A bot process speaking protocol v1, started and greeted.
pub struct BotPlayer {
    process: BotProcess,
    info: BotInfo,
    buf: Vec<u8>,
    broken: bool,
    grace: Duration,
}

impl std::fmt::Debug for BotPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotPlayer")
            .field("pid", &self.process.pid())
            .field("info", &self.info)
            .finish()
    }
}

impl BotPlayer {
    /// Spawns the bot and does the handshake: sends `hello` (protocol
    /// version and games) and waits `limits.startup` for its hello.
    pub async fn start(
        cmd: &BotCommand,
        stderr_log: Option<&Path>,
        limits: &Limits,
    ) -> Result<BotPlayer, StartError> {
        let mut process = BotProcess::spawn(cmd, stderr_log, limits).map_err(StartError::Spawn)?;
        let deadline = Instant::now() + limits.startup;
        let games: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        let mut buf = Vec::with_capacity(1024);
        protocol::encode_into(
            &ToBot::Hello {
                protocol: protocol::PROTOCOL_VERSION,
                games: &games,
            },
            &mut buf,
        );
        let fail = |f: Fault| StartError::Handshake(f);
        process
            .send_line(&buf, deadline)
            .await
            .map_err(|e| fail(fault_of(e)))?;
        let line = process
            .read_line(deadline)
            .await
            .map_err(|e| fail(fault_of(e)))?;
        let info = match protocol::decode(line) {
            Ok(FromBot::Hello {
                name,
                version,
                author,
                protocol: p,
            }) => {
                if p.is_some_and(|p| p != protocol::PROTOCOL_VERSION) {
                    return Err(fail(Fault::new(
                        ForfeitKind::Protocol,
                        format!("bot speaks protocol {p:?}, referee speaks 1"),
                    )));
                }
                if name.trim().is_empty() {
                    return Err(fail(Fault::new(ForfeitKind::Protocol, "empty name")));
                }
                BotInfo {
                    name,
                    version,
                    author,
                }
            }
            Ok(other) => {
                return Err(fail(Fault::new(
                    ForfeitKind::Protocol,
                    format!("expected hello, got {other:?}"),
                )))
            }
            Err(e) => return Err(fail(decode_fault(e, line))),
        };
        Ok(BotPlayer {
            process,
            info,
            buf,
            broken: false,
            grace: limits.shutdown_grace,
        })
    }

    /// What the bot announced.
    pub fn info(&self) -> &BotInfo {
        &self.info
    }

    /// The bot's pid (and process group id).
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Sends `quit` and ends the process (grace, SIGTERM, grace, SIGKILL to
    /// the group). Returns true when the bot exited by itself with status 0
    /// within the grace period.
    pub async fn quit(&mut self) -> bool {
        self.buf.clear();
        protocol::encode_into(&ToBot::Quit {}, &mut self.buf);
        let deadline = Instant::now() + self.grace;
        let sent = self.process.send_line(&self.buf, deadline).await.is_ok();
        let clean = if sent {
            // Wait for the exit by reading to end of file / exit.
            matches!(
                self.process.read_line(deadline).await,
                Err(BotError::Exited { .. })
            ) && self.process.exit_status().is_some_and(|s| s.success())
        } else {
            false
        };
        self.process.shutdown(self.grace).await;
        clean
    }

    /// Kills the bot's process group now.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    async fn send(&mut self, deadline: Instant) -> Result<(), Fault> {
        match self.process.send_line(&self.buf, deadline).await {
            Ok(()) => Ok(()),
            Err(e) => {
                self.broken = true;
                Err(fault_of(e))
            }
        }
    }
}

impl Player for BotPlayer {
    fn name(&self) -> &str {
        &self.info.name
    }

    fn start<'a>(&'a mut self, s: &'a Start<'a>) -> PlayerFuture<'a, Result<(), Fault>> {
        Box::pin(async move {
            self.buf.clear();
            protocol::encode_into(
                &ToBot::GameStart {
                    game_id: s.game_id,
                    variant: s.variant.name(),
                    players: s.settings.players,
                    options: &s.settings.options,
                    max_plies: s.settings.max_plies,
                    seat: s.seat,
                    names: s.names,
                    time: s.time,
                },
                &mut self.buf,
            );
            self.send(s.deadline).await
        })
    }

    fn decide<'a>(&'a mut self, ask: &'a Ask<'a>) -> PlayerFuture<'a, Result<String, Fault>> {
        Box::pin(async move {
            self.buf.clear();
            let state = ask.game.snapshot();
            protocol::encode_into(
                &ToBot::Request {
                    game_id: ask.game_id,
                    ply: ask.game.plies(),
                    state: &state,
                    legal: ask.legal,
                    since: ask.since,
                    timeout_ms: ask.timeout.as_millis() as u64,
                    time_left_ms: ask.time_left.map(|d| d.as_millis() as u64),
                },
                &mut self.buf,
            );
            self.send(ask.deadline).await?;
            let line = match self.process.read_line(ask.deadline).await {
                Ok(l) => l,
                Err(e) => {
                    self.broken = true;
                    return Err(fault_of(e));
                }
            };
            match protocol::decode(line) {
                Ok(FromBot::Reply { option }) => Ok(option),
                Ok(FromBot::Hello { .. }) => {
                    self.broken = true;
                    Err(Fault::new(
                        ForfeitKind::Protocol,
                        format!(
                            "expected a reply, got: {}",
                            protocol::truncate(line, DETAIL_MAX)
                        ),
                    ))
                }
                Err(e) => {
                    self.broken = true;
                    Err(decode_fault(e, line))
                }
            }
        })
    }

    fn end<'a>(&'a mut self, e: &'a End<'a>) -> PlayerFuture<'a, ()> {
        Box::pin(async move {
            if self.broken {
                return;
            }
            self.buf.clear();
            protocol::encode_into(
                &ToBot::GameEnd {
                    game_id: e.game_id,
                    scores: e.scores,
                    reason: e.reason,
                    offender: e.offender,
                    since: e.since,
                    state: e.state,
                },
                &mut self.buf,
            );
            let _ = self.send(e.deadline).await;
        })
    }

    fn needs_restart(&self) -> bool {
        self.broken
    }

    fn quit<'a>(&'a mut self) -> PlayerFuture<'a, bool> {
        Box::pin(BotPlayer::quit(self))
    }
}

/// An in-process player choosing uniformly among the legal options.
#[derive(Debug, Clone)]
pub struct RandomPlayer {
    name: String,
    rng: rand_chacha::ChaCha8Rng,
}

impl RandomPlayer {
    pub fn new(name: impl Into<String>, seed: u64) -> RandomPlayer {
        RandomPlayer {
            name: name.into(),
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn start<'a>(&'a mut self, _s: &'a Start<'a>) -> PlayerFuture<'a, Result<(), Fault>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn decide<'a>(&'a mut self, ask: &'a Ask<'a>) -> PlayerFuture<'a, Result<String, Fault>> {
        let r = if ask.legal.is_empty() {
            Err(Fault::new(ForfeitKind::Protocol, "no legal option"))
        } else {
            Ok(ask.legal[self.rng.gen_range(0..ask.legal.len())].clone())
        };
        Box::pin(std::future::ready(r))
    }

    fn end<'a>(&'a mut self, _e: &'a End<'a>) -> PlayerFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }
}
