//! Players: what the referee asks for decisions. [`BotPlayer`] is a bot
//! process speaking protocol v1; [`RandomPlayer`] is in-process (check-bot,
//! tests, benchmarks).
//!
//! Owns turning referee questions into protocol messages and back, and
//! classifying what a bot did wrong ([`Fault`]). It does not judge
//! legality (the referee asks the engine) and knows no schedule.

use super::{Fault, ForfeitKind};
use crate::bot::{BotCommand, BotError, BotProcess, Launch, Limits};
use crate::engine::{Game, Settings, Variant};
use crate::protocol::{self, DecisionMsg, DecodeError, FromBot, TimeMsg, ToBot};
use crate::results::stderr::{Phase, SeatStderr, StderrLine, Turn};
use rand::{Rng, SeedableRng};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio::time::Instant;

/// The future a [`Player`] method returns.
pub type PlayerFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Bytes of a bot's offending text kept in records.
pub const DETAIL_MAX: usize = 200;

/// How long the referee waits, after an answer that is not legal, for a
/// line that would show the bot wrote more lines than it was asked for
/// (see [`Player::explain_illegal`]). Only illegal answers wait.
pub const EXTRA_LINE_GRACE: Duration = Duration::from_millis(50);

/// How long the referee waits for the exit status of a bot whose stdout
/// closed between games (as a read that meets the end of its stdout does).
const EXIT_GRACE: Duration = Duration::from_millis(100);
/// After the grace of `quit`, how long a bot is given to exit once its
/// stdin is closed, and then once it is sent SIGTERM (protocol.md).
const QUIT_STEP: Duration = Duration::from_millis(500);

/// A game is starting; `seat` is this player's.
pub struct Start<'a> {
    pub game_id: &'a str,
    pub variant: Variant,
    pub settings: &'a Settings,
    pub seat: usize,
    pub names: &'a [String],
    pub time: TimeMsg,
    /// The game's seed for the bots (see [`GameSpec::seed`]).
    pub seed: u64,
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
    /// game's watchdog), counted from when the referee asked.
    pub deadline: Instant,
    /// The game's watchdog: no deadline may pass it.
    pub watchdog: Instant,
}

/// A player's answer to an [`Ask`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The option, exactly as the player sent it (not yet checked).
    pub option: String,
    /// The time the player itself took, when it measured it: from the
    /// moment the request was ready to go to the moment the reply was
    /// read, so the referee's own work is not charged to its clock.
    /// `None`: the referee measures from when it asked.
    pub elapsed: Option<Duration>,
}

impl Answer {
    /// An answer timed by the referee.
    pub fn new(option: impl Into<String>) -> Answer {
        Answer {
            option: option.into(),
            elapsed: None,
        }
    }
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
    /// Tells the player a game starts. No answer is expected. (An
    /// in-process player usually needs nothing: the default does nothing.)
    fn start<'a>(&'a mut self, _start: &'a Start<'a>) -> PlayerFuture<'a, Result<(), Fault>> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// Asks for one option (in canonical notation, not yet checked).
    fn decide<'a>(&'a mut self, ask: &'a Ask<'a>) -> PlayerFuture<'a, Result<Answer, Fault>>;
    /// Tells the player the game is over. Failures only mark the player for
    /// restart. The default does nothing.
    fn end<'a>(&'a mut self, _end: &'a End<'a>) -> PlayerFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }
    /// True when the player is not fit for another game (it crashed, timed
    /// out, broke the protocol): the league restarts it.
    fn needs_restart(&self) -> bool {
        false
    }
    /// Fails when the player wrote anything it was not asked for (`when`
    /// says at which point, for the message). A failure marks it for
    /// restart. The default: an in-process player never does.
    fn quiet(&mut self, _when: &str) -> Result<(), Fault> {
        Ok(())
    }
    /// The game ended by the rules: fails, as [`quiet`](Self::quiet) does,
    /// when the player wrote anything it was not asked for. A player that
    /// left after its last reply (it exited, whatever still holds its
    /// output, or closed its output; nothing written in its place) is not
    /// charged: every decision of the game was made (a
    /// ruling, protocol.md); it is marked for restart. The default:
    /// `quiet`.
    fn quiet_at_end(&mut self) -> Result<(), Fault> {
        self.quiet(AFTER_LAST_REPLY)
    }
    /// Another seat was ruled at fault (`when` says which, for the
    /// message): the fault of output this player wrote unasked before
    /// that, or of its leaving (its output at its end), if there is any
    /// (then it is marked for restart). The default: an in-process player
    /// never writes any.
    fn unasked_output<'a>(&'a mut self, _when: &'a str) -> PlayerFuture<'a, Option<Fault>> {
        Box::pin(std::future::ready(None))
    }
    /// Its answer `option` is not one of the legal options, the fault
    /// `illegal`: the fault to rule, said better if the player knows more
    /// (a bot that wrote more lines than it was asked for; a line it wrote
    /// after its answer). The default: `illegal` as it is.
    fn explain_illegal<'a>(
        &'a mut self,
        _option: &'a str,
        illegal: Fault,
    ) -> PlayerFuture<'a, Fault> {
        Box::pin(std::future::ready(illegal))
    }
    /// It is not this player's turn: it gets no CPU until it is sent
    /// something again (a bot's processes are stopped), unless it may
    /// ponder. `force`: now; else only if it is idle. True when it is
    /// paused (or has nothing to pause: the default).
    fn pause(&mut self, _force: bool) -> bool {
        true
    }
    /// The referee ruled a forfeit against this player: it is not fit for
    /// another game (a bot's process is replaced, so that a reply it still
    /// owes is never read in a later game).
    fn forfeited(&mut self) {}
    /// What the player writes on stderr from now on belongs to `turn`
    /// (what it wrote before keeps its earlier turn). The default, and a
    /// bot whose stderr is not captured: nothing.
    fn mark_stderr(&mut self, _turn: Turn) {}
    /// The stderr lines it wrote since the last take, each with its turn,
    /// as seat `seat`'s; `None` when its stderr is not kept (the default).
    fn take_stderr(&mut self, _seat: usize) -> Option<SeatStderr> {
        None
    }
    /// Says goodbye (`quit` for a bot, then its process group is ended).
    /// True when the player left cleanly.
    fn quit<'a>(&'a mut self) -> PlayerFuture<'a, bool> {
        Box::pin(std::future::ready(true))
    }
    /// [`quit`](Self::quit), saying how the player left and what it wrote
    /// unasked after its last request; `None` for an in-process player
    /// (the default).
    fn quit_with_report<'a>(&'a mut self) -> PlayerFuture<'a, Option<QuitReport>> {
        Box::pin(async move {
            self.quit().await;
            None
        })
    }
    /// The `seq` of the last request sent to the player, which a fault's
    /// detail names (a bot's requests are numbered over its process's
    /// life: protocol.md). `None` for a player asked without messages
    /// (the default: an in-process one).
    fn request_seq(&self) -> Option<u64> {
        None
    }
}

/// What a bot announced in its hello.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BotInfo {
    pub name: String,
    pub version: String,
    pub author: String,
}

/// How a bot left: [`BotPlayer::quit_report`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuitReport {
    /// It exited by itself with status 0 within the grace period.
    pub clean: bool,
    /// The first output it wrote without being asked after its last
    /// request (its first bytes), if any.
    pub stray: Option<Vec<u8>>,
    /// How it ended, when it did so by itself within the grace period.
    pub status: Option<std::process::ExitStatus>,
    /// It was gone before `quit` could be sent (its stdin closed).
    pub gone_before: bool,
    /// It had been sent a request (so `stray` came after its last one;
    /// else before any).
    pub asked: bool,
    /// `stray` was read after `quit` was sent (before it, nothing was
    /// there: written after the last game's end or on `quit`).
    pub at_quit: bool,
    /// How long after `quit` was sent its exit was seen, when it exited
    /// by itself within the grace period.
    pub took: Option<Duration>,
}

/// How long the referee waits for a bot outside its moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Time to answer the referee's hello.
    pub startup: Duration,
    /// Time given to exit after `quit` (then SIGTERM, the same again, SIGKILL).
    pub shutdown_grace: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            startup: Duration::from_secs(10),
            shutdown_grace: Duration::from_millis(500),
        }
    }
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
    /// True when the start failed for the machine's reasons, not the bot's
    /// (see [`BotError::is_harness`]).
    pub fn is_harness(&self) -> bool {
        matches!(self, StartError::Spawn(e) if e.is_harness())
    }

    /// The forfeit kind this start failure amounts to (a spawn failure is a crash).
    pub fn kind(&self) -> ForfeitKind {
        match self {
            StartError::Spawn(_) => ForfeitKind::Crash,
            StartError::Handshake(f) => f.kind,
        }
    }

    /// The failure as a fault: its kind and what happened, once.
    pub fn fault(&self) -> Fault {
        match self {
            StartError::Spawn(e) => Fault::new(ForfeitKind::Crash, e.to_string()),
            StartError::Handshake(f) => f.clone(),
        }
    }
}

/// `fault` (of `line`, read as the answer to request `seq`, the
/// `asked`th of its game) when `line` is a reply to request `seq - 1`,
/// said as what most likely happened: the line taken for that
/// earlier request's answer, which echoed no `seq` (`echoed`: the last
/// answer did), was written before its request came, and every answer
/// since was read one request late. At the game's first request but one
/// (`asked` 2), the line was most likely written after `game_start`.
fn one_request_late(
    mut fault: Fault,
    line: &[u8],
    echoed: bool,
    (seq, asked): (u64, u32),
) -> Fault {
    let Ok(FromBot::Reply { seq: Some(n), .. }) = protocol::decode(line) else {
        return fault;
    };
    // Requests count from 1: a `seq` of 0 answers none.
    if echoed || n == 0 || n.checked_add(1) != Some(seq) || fault.kind != ForfeitKind::Protocol {
        return fault;
    }
    let after = match asked {
        2 => " (after game_start, which takes no reply: a reply before any request)",
        _ => "",
    };
    fault.detail = format!(
        "{}; it is the bot's answer to request seq {n}, read one request late: the line taken for that answer, which echoed no seq, was most likely one the bot wrote before request seq {n} came{after}",
        fault.detail
    );
    fault
}

/// A bot's line in answer to request `seq`: its option, with the time it
/// took; or the fault it is (a reply to another request, a hello, a line
/// that is not the protocol's).
/// `Ok`: the answer, and whether the reply echoed its request's `seq`.
fn judge_reply(
    line: &[u8],
    ask: &Ask<'_>,
    asked: u64,
    elapsed: Duration,
) -> Result<(Answer, bool), Fault> {
    match protocol::decode(line) {
        Ok(FromBot::Reply {
            option,
            game_id,
            ply,
            seq,
        }) => {
            // A reply may echo the request's game id, ply and seq;
            // if it does, they must be this request's (a stale
            // reply).
            let plies = ask.game.plies();
            if game_id.as_deref().is_some_and(|g| g != ask.game_id)
                || ply.is_some_and(|p| p != plies)
                || seq.is_some_and(|n| n != asked)
            {
                // A `seq` no request had: the bot makes up its own.
                let unsent = match seq {
                    Some(n) if n == 0 || n > asked => format!(
                        "; no request had seq {n} (requests count from 1 in the bot's process, across its games): echo the `seq` of the request answered, or leave it out"
                    ),
                    _ => String::new(),
                };
                return Err(Fault::new(
                    ForfeitKind::Protocol,
                    format!(
                        "reply to another request (this one is game {} ply {plies} seq {asked}): {}{unsent}",
                        protocol::truncate(ask.game_id.as_bytes(), 64),
                        protocol::truncate(line, DETAIL_MAX)
                    ),
                ));
            }
            Ok((
                Answer {
                    option,
                    elapsed: Some(elapsed),
                },
                seq.is_some(),
            ))
        }
        Ok(FromBot::Hello { .. }) => Err(Fault::new(
            ForfeitKind::Protocol,
            format!(
                "expected a reply, got a second hello: {} ({SECOND_HELLO})",
                protocol::truncate(line, DETAIL_MAX)
            ),
        )),
        // A hello in a reply's place that is not a hello either (an
        // option sent under `"type":"hello"`): what was expected first.
        Err(DecodeError::Protocol(why))
            if protocol::stated_type(line).as_deref() == Some("hello") =>
        {
            Err(Fault::new(
                ForfeitKind::Protocol,
                format!(
                    "expected a reply (`\"type\":\"reply\"`), got a `hello`: {} ({})",
                    protocol::shown_line(line, DETAIL_MAX),
                    protocol::truncate(why.as_bytes(), 100)
                ),
            ))
        }
        Err(e) => {
            let mut f = decode_fault(e, line);
            f.detail.push_str(&index_hint(line, ask.legal));
            Err(f)
        }
    }
}

/// For a reply whose `option` is a number that is an index into `legal`
/// and no option itself: the option it most likely meant (a bot that
/// sends the place of its choice, not the choice).
fn index_hint(line: &[u8], legal: &[String]) -> String {
    let option = serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .and_then(|v| v.get("option")?.as_u64());
    match option.and_then(|n| Some((n, legal.get(usize::try_from(n).ok()?)?))) {
        Some((n, meant)) if !legal.contains(&n.to_string()) => format!(
            "; if {n} is a place in `legal`, send the option itself, as a string: legal[{n}] is \"{meant}\""
        ),
        _ => String::new(),
    }
}

/// `line` is a reply that echoes game `game` (a game that has ended).
/// Whether `line`, read at a game's first request in place of its answer,
/// is taken for a line of the game before (`previous`), written after its
/// last look (protocol.md: the bot is started again, not charged): a reply
/// that echoes that game's id, or a line that is no JSON at all (a print
/// on `game_end`). Which look sees such a line, this request or the check
/// before `game_start`, hangs on timing alone; both start the bot again.
/// A bot that prints at every first request prints again once started
/// again, and is charged then.
fn late_line(line: &[u8], previous: Option<&str>) -> bool {
    let Some(g) = previous else {
        return false;
    };
    match protocol::decode(line) {
        Ok(FromBot::Reply { game_id, .. }) => game_id.as_deref() == Some(g),
        Err(DecodeError::BadJson(_)) => true,
        _ => false,
    }
}

/// Turns a bot runner error into the fault it stands for.
pub fn fault_of(e: BotError) -> Fault {
    match e {
        BotError::Timeout => Fault::new(ForfeitKind::Timeout, "no reply before the deadline"),
        BotError::Exited { status: None } => Fault::new(ForfeitKind::Crash, "closed its stdout"),
        // However its pipes were found, a bot that exited is said to have.
        BotError::Exited { status }
        | BotError::InputClosed {
            status: status @ Some(_),
            ..
        }
        | BotError::InputGone {
            status: status @ Some(_),
            ..
        } => Fault::new(
            ForfeitKind::Crash,
            format!("exited ({})", crate::bot::describe_status(&status)),
        ),
        BotError::InputClosed {
            status: None,
            output_closed,
        } => Fault::new(
            ForfeitKind::Crash,
            match output_closed {
                false => "closed its stdin (the referee could not write to it)",
                true => "closed its stdin and its stdout (the referee could not write to it), and did not exit",
            },
        ),
        // Seen as it closed, the bot still running, while its answer to a
        // request was awaited (`read_reply`): the request still in the
        // pipe, or read and not answered.
        BotError::InputGone {
            status: None,
            unread,
        } => Fault::new(
            ForfeitKind::Crash,
            match unread {
                true => "closed its stdin: the request was never read",
                false => "closed its stdin after reading the request, before answering it: nothing more can be sent to it (a bot reads its stdin to its end, and exits only after quit)",
            },
        ),
        BotError::LineTooLong { limit, start } => Fault::new(
            ForfeitKind::LineTooLong,
            // Leading white space says nothing (a line padded to length),
            // and a line of nothing else is said to be that.
            match start.trim_ascii_start() {
                [] => format!(
                    "line over {limit} bytes, white space all through its first {} bytes (a blank line is ignored only when it ends within the limit)",
                    start.len()
                ),
                text => format!(
                    "line over {limit} bytes: {}",
                    protocol::truncate(text, DETAIL_MAX)
                ),
            },
        ),
        e @ (BotError::Io(_)
        | BotError::Spawn { .. }
        | BotError::Log { .. }
        | BotError::Sandbox { .. }
        | BotError::NoFolder { .. }
        | BotError::Interpreter { .. }
        | BotError::Refused(_)) => Fault::new(ForfeitKind::Crash, e.to_string()),
    }
}

fn decode_fault(e: DecodeError, line: &[u8]) -> Fault {
    let (kind, why, hint) = match e {
        DecodeError::BadJson(why) => (ForfeitKind::BadJson, why, bad_json_hint(line)),
        DecodeError::Protocol(why) => (ForfeitKind::Protocol, why, String::new()),
    };
    Fault::new(
        kind,
        format!(
            "{} ({}){hint}",
            protocol::shown_line(line, DETAIL_MAX),
            protocol::truncate(why.as_bytes(), WHY_MAX)
        ),
    )
}

/// Bytes of the decoder's words kept in a fault's detail, after the line
/// itself ([`DETAIL_MAX`]): room for a field, the number as the bot wrote
/// it and why it is wrong, and the detail stays under 400 bytes.
const WHY_MAX: usize = 150;

/// What a line on stdout that is not JSON usually is, and where it goes.
const LOGS_TO_STDERR: &str = "; stdout is for protocol messages only: write logs to stderr";

/// What a line that is not JSON most likely meant: text in UTF-16 (every
/// other byte zero), JSON in terminal colour codes, an option written
/// bare (one word), a Python dict
/// printed with `print(dict)` (single quotes), an object that is broken
/// inside (the parser's message says where: nothing to add), or else a
/// log line.
fn bad_json_hint(line: &[u8]) -> String {
    let zeros = line.iter().filter(|&&b| b == 0).count();
    if line.len() >= 4 && zeros * 3 >= line.len() {
        return "; it looks like UTF-16 (every other byte zero): write UTF-8".to_string();
    }
    // A C string written with its terminator (`write(fd, buf,
    // strlen(buf) + 1)`): the message, then a NUL byte.
    let body = line.trim_ascii_end();
    if let Some(before) = body.strip_suffix(b"\0") {
        if serde_json::from_slice::<serde::de::IgnoredAny>(before.trim_ascii_end()).is_ok() {
            return "; a NUL byte (\\u0000) follows the JSON: a C string written with its terminator (write strlen(buf) bytes, not strlen(buf) + 1)".to_string();
        }
    }
    let text = String::from_utf8_lossy(line);
    // Before the trim: it drops a no-break space, which is all there is.
    if let Some(hint) = invisible_hint(&text) {
        return hint;
    }
    let text = text.trim();
    // One byte-order mark is taken (decode drops it); a second is not.
    if text.trim_start_matches('\u{feff}').len() + 3 < text.len() {
        return "; it starts with more than one byte-order mark (U+FEFF): write UTF-8 without one"
            .to_string();
    }
    // `\x1b[32m{...}\x1b[0m`: a logging or colour library's escape
    // sequences around the message.
    if text.contains('\u{1b}') && without_csi(text).trim().starts_with('{') {
        return "; it holds terminal escape sequences (colour codes, as a logging library writes them): write the message as plain JSON".to_string();
    }
    if lone_surrogate(text) {
        return "; it holds half of a UTF-16 surrogate pair (an escape \\uD800 to \\uDFFF without its other half), which is no character: send the option as the list gives it".to_string();
    }
    let word = !text.is_empty()
        && text.len() <= 32
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c));
    if word {
        format!(
            "; a reply is a JSON object on one line: {{\"type\":\"reply\",\"option\":\"{text}\"}}"
        )
    } else if text.trim() == "{" {
        // Pretty-printed JSON: its first line.
        "; the line is `{` alone: JSON printed over several lines (indented, as json.dumps(message, indent=2) or JSON.stringify(message, null, 2) write it); write each message whole on one line, then its newline".to_string()
    } else if text.starts_with('{')
        && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err_and(|e| e.is_eof())
    {
        // `{"type":"re` and no more: not a log line, half a message (the
        // rest written later without its newline, or never: the bot
        // exited or was stopped mid-line).
        "; the line ends before its JSON object does: a message cut short (write each message whole on one line, then its newline)".to_string()
    } else if text.starts_with('{') && two_values(text) {
        "; the line holds one JSON message after another: write each message on a line of its own, each ending with its newline".to_string()
    } else if text.starts_with('{') && text.contains('\'') {
        "; JSON strings take double quotes, not single (in Python, write json.dumps(message), not the dict itself)".to_string()
    } else if text.starts_with('{') && text.ends_with('}') {
        String::new()
    } else {
        LOGS_TO_STDERR.to_string()
    }
}

/// Whether `text` starts with a whole JSON value and another follows it
/// (`{...}{...}`: two messages written without the newline between).
fn two_values(text: &str) -> bool {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    matches!(values.next(), Some(Ok(_)))
        && text[values.byte_offset()..].trim_start().starts_with('{')
}

/// What a line with nothing visible in it is (`text`), which
/// [`protocol::shown_line`] shows escaped: a byte-order mark alone, or
/// white space that is not a blank line's (a no-break space). `None`:
/// something in it is visible (or it is empty).
fn invisible_hint(text: &str) -> Option<String> {
    let bare = text.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\r'));
    if !bare.is_empty() && bare.chars().all(|c| c == '\u{feff}') {
        return Some("; the line is only a byte-order mark (U+FEFF, the bytes EF BB BF) and no message: write each message whole on its line (one mark just before a message is accepted)".to_string());
    }
    let first = bare.chars().find(|&c| c != '\u{feff}')?;
    if !crate::text::shows_nothing(bare) {
        return None;
    }
    Some(format!(
        "; the line holds nothing visible, yet it is not blank: U+{:04X} is not a blank line's white space (only spaces, tabs and `\\r` are; a blank line is skipped)",
        u32::from(first)
    ))
}

/// Whether `text` holds a `\uXXXX` escape of half a surrogate pair
/// without its other half (as Python's `json.dumps` writes a string it
/// read with `surrogateescape`): JSON text no parser turns into a string.
fn lone_surrogate(text: &str) -> bool {
    let units: Vec<(usize, u32)> = text
        .match_indices("\\u")
        .filter_map(|(i, _)| {
            let hex = text.get(i + 2..i + 6)?;
            Some((i, u32::from_str_radix(hex, 16).ok()?))
        })
        .collect();
    let mut k = 0;
    while k < units.len() {
        let (at, u) = units[k];
        match u {
            0xD800..=0xDBFF => {
                let paired = units
                    .get(k + 1)
                    .is_some_and(|&(next, v)| next == at + 6 && (0xDC00..=0xDFFF).contains(&v));
                if !paired {
                    return true;
                }
                k += 2;
            }
            0xDC00..=0xDFFF => return true,
            _ => k += 1,
        }
    }
    false
}

/// `text` without its terminal control sequences (`ESC [ ... letter`:
/// colours, cursor moves).
fn without_csi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            // Parameters and intermediates, then one final byte.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) && c != '[' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What the referee saw of a bot that did not answer in time, then the
/// usual cause of that: half a line without its newline (no newline or
/// no flush); nothing on stdout from a bot whose earlier lines arrived
/// there (`replied` of them: its hello and replies), which answers through
/// the pipe and so was still thinking (slow, or short of CPU); nothing on
/// stdout from a bot that never got a line through (flush, or output on
/// stderr instead); and how much it wrote on stderr meanwhile (since it
/// had written `stderr_before` bytes).
fn what_arrived(process: &BotProcess, replied: u64, stderr_before: u64) -> String {
    // Stopped by a signal the referee did not send (it pauses only
    // between turns, and let the bot run again before this one): the bot
    // was not thinking, and no flush would have helped.
    // Its own process (the leader of its group), or another of its group
    // (the bot under a wrapper: a shell, npm, a launcher; in the sandbox,
    // the keeper's child).
    let states = crate::host::group_states(process.pid());
    if states.iter().any(|t| matches!(t.state, 'T' | 't')) {
        return "; its process was stopped (it stopped itself, with SIGSTOP or SIGTSTP, or a debugger held it), so it could not answer".to_string();
    }
    // Every thread of the bot asleep, none running or waiting for a CPU,
    // and one of them reading a pipe (its stdin, most likely): it was not
    // thinking (nor sleeping: a sleep is a bot's way to think slowly in
    // tests) but waiting for input.
    let asleep = !states.is_empty()
        && states.iter().all(|t| t.state == 'S')
        && states.iter().any(|t| t.wchan.contains("pipe_read"));
    let stderr = process.stderr_bytes().saturating_sub(stderr_before);
    let on_stderr = match (process.stderr_read(), stderr) {
        (false, _) => format!("its stderr unseen ({STDERR_NOT_KEPT})"),
        (true, 0) => "nothing on stderr either".to_string(),
        (true, n) => format!("{n} bytes on stderr"),
    };
    // The request still in the pipe: the bot was not reading.
    let input = process.unread_input();
    let unread = input.filter(|&n| n > 0);
    match (process.partial_line(), replied) {
        (Some(part), _) => format!("; the referee saw {}", unended(part, " on stdout")),
        (None, n) if n > 0 && unread.is_some() => format!(
            "; the referee saw nothing on stdout this turn and {on_stderr}, and the request was still unread in its stdin ({} bytes): the bot was not reading (busy with something else, asleep or blocked), so it never saw it",
            unread.unwrap_or_default()
        ),
        // What it wrote on stderr may be the reply itself, sent to the
        // wrong stream: said first, as the likelier fault.
        (None, n) if n > 0 && asleep && input == Some(0) && stderr > 0 => format!(
            "; nothing came on stdout this turn and {on_stderr}; the bot had read the request and was asleep, waiting for its next line: if its reply is among what it wrote on stderr, it belongs on stdout; else it was not flushed (Python print(..., flush=True), C fflush(stdout)), or the bot was in a sleep"
        ),
        (None, n) if n > 0 && asleep && input == Some(0) => format!(
            "; nothing came on stdout this turn and {on_stderr}; the bot had read the request and was asleep, not thinking: waiting for its next line with its reply not flushed (Python print(..., flush=True), C fflush(stdout)), or in a sleep"
        ),
        (None, n) if n > 0 => format!(
            "; the referee saw nothing on stdout this turn and {on_stderr}, while its {} earlier line{} (hello and replies) arrived on stdout: it was most likely still thinking, too slow for this time or short of CPU (on a busy machine, play fewer games at a time or give it more time a decision){}",
            n,
            if n == 1 { "" } else { "s" },
            match stderr {
                0 => "",
                _ => "; if the answer is among what it wrote on stderr, it belongs on stdout",
            }
        ),
        (None, _) if stderr > 0 => format!(
            "; the referee saw nothing on stdout and {on_stderr}: if the answer is among them, it belongs on stdout; else {}",
            flush_or(input)
        ),
        (None, _) if !process.stderr_read() => format!(
            "; the referee saw nothing on stdout ({on_stderr}): if the bot did answer, {}",
            flush_or(input)
        ),
        (None, _) => format!(
            "; the referee saw nothing at all, on stdout or stderr: if the bot did answer, {}",
            flush_or(input)
        ),
    }
}

/// The usual causes of silence from a bot that has not yet got a line
/// through: output not flushed, and then, by what is left of the
/// message in its stdin (`unread`), still starting (it has not read it)
/// or waiting for more input (it has read all there is and not
/// answered: it reads to the end of its input, which never comes).
fn flush_or(unread: Option<usize>) -> String {
    let flush = "flush stdout after each line (C fflush(stdout), Python print(..., flush=True), Java System.out.flush())";
    match unread {
        Some(0) => format!("{flush}; else it read the whole message and then either was still starting or thinking (too slow for this time), or waited for more input: a bot that reads all of its stdin before answering (Python sys.stdin.read(), C++ reading to the end) waits for an end that never comes: read one line, answer it, then read the next"),
        _ => format!("{flush}; else it was still starting or thinking"),
    }
}

/// `fault` (a bot that exited or closed its stdout while it was read),
/// with the line it had begun and not ended, if any: half a message
/// before a crash, or one written without its newline before an exit,
/// is what the author needs to see (protocol.md: every message ends with
/// `\n`). Its text is lost once the process is killed.
fn with_partial_line(process: &BotProcess, mut fault: Fault) -> Fault {
    if fault.kind == ForfeitKind::Crash {
        if let Some(part) = process.partial_line() {
            fault.detail = format!("{}; it had written {}", fault.detail, unended(part, ""));
        }
    }
    fault
}

/// A line a bot began on stdout and did not end, `part` (seen `where_`),
/// said with what to do: lines ended by a carriage return alone (`\r`,
/// as old Mac text) are named as that, since such a line looks ended.
fn unended(part: &[u8], where_: &str) -> String {
    let shown = protocol::shown_line(part, 80);
    match part.contains(&b'\r') {
        true => format!(
            "a line ended by a carriage return alone (`\\r`), not a newline,{where_}: {shown} (end every message with a newline, `\\n`, and flush)"
        ),
        false => format!(
            "a line without its newline{where_}: {shown} (end every message with a newline, and flush)"
        ),
    }
}

/// Where a bot's stderr is not read (no log asked for, none kept).
const STDERR_NOT_KEPT: &str = "not read here: no log of it was asked for";

/// What a hello sent again is told (protocol.md: the handshake).
const SECOND_HELLO: &str = "a bot says hello once, in answer to the referee's hello when it starts, and it lasts for every game of the process";

/// When [`BotPlayer::ask`] checks for output unasked.
const BEFORE_REQUEST: &str = "before the next request";
/// When the check at a game's end looks (`when` of its messages).
const AFTER_LAST_REPLY: &str = "after its last reply";

/// What a bot had been asked when it wrote output unasked, where that
/// says what went wrong: no request at all since it started, or none yet
/// in this game (its output then came before any request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unasked {
    /// No request had been sent to the process.
    Ever,
    /// None in this game: the check before its first request.
    ThisGame,
}

/// Output nobody asked for. A first line that is not JSON (a debug print
/// on stdout) is `bad_json`, as it is when sent as an answer: the same
/// line is the same fault wherever it comes; anything else is `protocol`.
/// A reply that came before any request (`unasked`) is called that: an
/// early reply, not merely output.
fn stray_fault(when: &str, bytes: &[u8], unasked: Option<Unasked>) -> Fault {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or(bytes);
    let decoded = protocol::decode(first);
    let (kind, hint) = match &decoded {
        Err(protocol::DecodeError::BadJson(_)) => (ForfeitKind::BadJson, bad_json_hint(first)),
        _ => (ForfeitKind::Protocol, String::new()),
    };
    let shown = shown_stray(bytes);
    let early = match (&decoded, unasked) {
        (Ok(FromBot::Reply { .. }), Some(u)) => Some(u),
        _ => None,
    };
    if let Ok(FromBot::Hello { .. }) = decoded {
        return Fault::unasked(
            kind,
            format!("a second hello {when}: {shown} ({SECOND_HELLO})"),
        );
    }
    Fault::unasked(
        kind,
        match early {
            Some(Unasked::Ever) => format!(
                "a reply before any request: {shown} came {when}, and no request had been sent to the bot yet (its hello, game_start and game_end take no reply: write a reply only in answer to a request, once)"
            ),
            Some(Unasked::ThisGame) => format!(
                "a reply before any request of this game: {shown} was there before the game's first request to the bot (game_start takes no reply: write a reply only in answer to a request, once)"
            ),
            // A reply when none was asked for: an answer written twice,
            // named by the request it echoes when it does.
            None => match &decoded {
                Ok(FromBot::Reply { seq: Some(n), .. }) => format!(
                    "a second reply to request seq {n} {when}: {shown} (each request takes exactly one reply)"
                ),
                Ok(FromBot::Reply { .. }) => format!(
                    "a reply no request was waiting for {when}: {shown} (each request takes exactly one reply: most likely one written twice)"
                ),
                _ => format!("unsolicited output {when}: {shown}{hint}"),
            },
        },
    )
}

/// Output a bot wrote unasked, as a fault's detail shows it. The last
/// line's newline says nothing (other white space, a form feed, is shown
/// escaped: it may be all there was).
fn shown_stray(bytes: &[u8]) -> String {
    let shown = bytes
        .strip_suffix(b"\n")
        .map_or(bytes, |b| b.strip_suffix(b"\r").unwrap_or(b));
    protocol::shown_line(shown, DETAIL_MAX)
}

/// Killed at its memory limit of `mb` MiB, said with the limit and
/// where it is set.
fn memory_fault(mb: u64) -> Fault {
    Fault::new(
        ForfeitKind::Memory,
        format!(
            "killed by the kernel at its memory limit, {mb} MiB for the bot's whole process tree, the files it wrote in /tmp included (set by `memory_mb` in [limits] of its bot.toml or the league file, or --memory-mb)"
        ),
    )
}

/// A crash `fault` of a bot that had a fork or thread refused at its
/// process limit (`processes`, the cgroup's count: docs/security.md), said
/// with the limit and where it is set, as the memory forfeit is: the
/// likely cause ("can't start new thread", an unchecked fork failing).
fn with_process_limit(process: &BotProcess, processes: u64, mut fault: Fault) -> Fault {
    if fault.kind == ForfeitKind::Crash && process.at_process_limit() {
        fault.detail = format!(
            "{}; it had reached its process limit, {processes} processes and threads for the bot's whole process tree, and a fork or thread was refused (set by `processes` in [limits] of its bot.toml or the league file, or --processes)",
            fault.detail
        );
    }
    fault
}

/// The fault a bot error `e` of `process` amounts to under `limits`: a
/// bot the kernel killed at its memory limit forfeits `memory`, whatever
/// the pipes then said; a crash at its process limit says so.
fn process_fault(process: &BotProcess, limits: &Limits, e: BotError) -> Fault {
    match process.over_memory() {
        true => memory_fault(limits.memory_mb),
        false => with_process_limit(process, limits.processes, fault_of(e)),
    }
}

/// Why a bot's hello did not come (`e`, of the read that waited for it).
fn no_hello(process: &mut BotProcess, e: BotError, timing: &Timing, limits: &Limits) -> Fault {
    // Killed at its memory limit, however its end was seen (its output
    // closed, or nothing by the deadline): its author is told the limit.
    if process.over_memory() {
        return memory_fault(limits.memory_mb);
    }
    match e {
        BotError::Timeout if process.input_closed() => Fault::new(
            ForfeitKind::Crash,
            format!(
                "closed its stdin: the referee's hello was never read (no hello within {} ms)",
                timing.startup.as_millis()
            ),
        ),
        BotError::Timeout => Fault::new(
            ForfeitKind::Timeout,
            format!(
                "no hello within {} ms{} (a bot slow to start gets longer with --startup-ms, or a league file's [time_control] startup_ms)",
                timing.startup.as_millis(),
                what_arrived(process, 0, 0)
            ),
        ),
        BotError::InputGone { status: None, .. } => Fault::new(
            ForfeitKind::Crash,
            "closed its stdin: the referee's hello was never read",
        ),
        e => with_partial_line(
            process,
            with_process_limit(process, limits.processes, fault_of(e)),
        ),
    }
}

/// Longest name a bot may announce (bytes).
pub const NAME_MAX: usize = crate::bot::manifest::NAME_MAX;

/// Checks a bot's announced name: 1 to [`NAME_MAX`] bytes, no control or
/// other hidden character ([`protocol::is_hidden`]: names end up in
/// terminals and tables), something visible in it
/// ([`crate::text::shows_nothing`]).
fn check_name(name: &str) -> Result<(), Fault> {
    if name.is_empty() {
        return Err(Fault::new(ForfeitKind::Protocol, "hello: empty name"));
    }
    // Which rule it breaks, said: a name cut at 200 bytes in the detail
    // does not show that it was 10 KB long.
    if name.len() > NAME_MAX {
        return Err(Fault::new(
            ForfeitKind::Protocol,
            format!(
                "hello: name is {} bytes long, more than {NAME_MAX}: {}",
                name.len(),
                protocol::truncate(name.as_bytes(), NAME_MAX)
            ),
        ));
    }
    if let Some(c) = name.chars().find(|&c| protocol::is_hidden(c)) {
        return Err(Fault::new(
            ForfeitKind::Protocol,
            format!(
                "hello: name holds U+{:04X}, a control or invisible character, which no name may hold: {}",
                u32::from(c),
                protocol::truncate(name.as_bytes(), DETAIL_MAX)
            ),
        ));
    }
    // Nothing visible: white space, blanks (U+2800), marks of no width.
    if crate::text::shows_nothing(name) {
        return Err(Fault::new(
            ForfeitKind::Protocol,
            format!(
                "hello: name shows nothing (nothing but white space, blanks or marks of no width): {}",
                code_points(name)
            ),
        ));
    }
    Ok(())
}

/// `text`'s characters by their code points (`U+2800 U+0301`): a text
/// that shows nothing, said so that its author sees what was sent.
fn code_points(text: &str) -> String {
    let points: Vec<String> = text
        .chars()
        .map(|c| format!("U+{:04X}", u32::from(c)))
        .collect();
    points.join(" ")
}

/// Refuses a hello's name or version that a spreadsheet opening games.csv
/// (where both are written) would take for a formula and run: one that
/// begins with `=`, `+`, `-` or `@`.
fn check_not_formula(what: &str, text: &str) -> Result<(), Fault> {
    match crate::text::formula_lead(text) {
        Some(c) => Err(Fault::new(
            ForfeitKind::Protocol,
            format!(
                "hello: {what} begins with `{c}`, which a spreadsheet opening games.csv would run as a formula: {}",
                protocol::shown_line(text.as_bytes(), DETAIL_MAX)
            ),
        )),
        None => Ok(()),
    }
}

/// `t + d`, or a century on where the clock cannot hold that (a time
/// limit given as "never", `u64::MAX` milliseconds).
pub(super) fn later(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .unwrap_or_else(|| t + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// A time for a message to the bot in whole milliseconds, rounded up and
/// never 0 (protocol.md: times are always real limits; a clock with
/// 0.3 ms left is "1", not "0", which a bot could read as no limit).
fn whole_ms(d: Duration) -> u64 {
    (d.as_micros().div_ceil(1000) as u64).max(1)
}

/// A bot process speaking protocol v1, started and greeted.
pub struct BotPlayer {
    process: BotProcess,
    info: BotInfo,
    buf: Vec<u8>,
    broken: bool,
    /// Requests sent to this process so far (the last one's `seq`).
    seq: u64,
    /// How it was started, to start it again when it exits between games.
    launch: Launch,
    timing: Timing,
    /// How often it exited after a game and was started again just
    /// before the next one's `game_start`.
    exits_between_games: u32,
    /// What this game's `game_start` left in the bot's stdin, to tell a
    /// bot that exited before reading it.
    since_start: SinceStart,
    /// The `game_id` of its last `game_start`: a line that echoes it, read
    /// in the game after, belongs to that game.
    last_game: Option<String>,
    /// What it wrote after a game had ended, too late for that game's
    /// last look: not charged (it was started again), but said by `arena
    /// check-bot`.
    late_output: Option<String>,
    /// What it is sent beyond the protocol's messages of today.
    unknown: Unknown,
    /// Messages of an unknown type sent so far.
    unknown_sent: u32,
    /// Its last answer echoed its request's `seq` (see
    /// [`one_request_late`]).
    echoed_seq: bool,
    /// What the last check for output unasked found, as shown.
    stray_shown: Option<String>,
}

/// What a bot is sent beyond the messages of protocol 1 as it is today, to
/// see that it ignores what it does not know, as protocol.md asks
/// ("Versioning"): `arena check-bot` plays a game of each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unknown {
    /// Nothing (a league, a match).
    #[default]
    Nothing,
    /// A field named [`protocol::UNKNOWN`] in every request.
    Field,
    /// A message of type [`protocol::UNKNOWN`] before every request of a
    /// game but its first (in the same write): a bot that chokes on it
    /// does so in the game, not where a bot that left after its last game
    /// is started again at no charge.
    MessageType,
}

/// What was written to a bot since its game's `game_start` began, to tell
/// a bot that left after its last game (protocol.md: no game is charged;
/// it is started again and the game goes on with it, once a game at most)
/// from one that crashed in this one.
#[derive(Debug, Default)]
struct SinceStart {
    /// The `game_start` line, to send again.
    line: Vec<u8>,
    /// Bytes written since, `game_start` included (0: its write failed).
    sent: usize,
    /// Requests of this game asked so far.
    asked: u32,
    /// Unread bytes in its stdin when the bot was broken off (before its
    /// stdin closed).
    unread_at_break: Option<usize>,
    /// It had exited, whatever its status, when it was broken off.
    exit_at_break: bool,
    /// Already started again in this game.
    restarted: bool,
    /// The game this process played before this one, if any.
    previous_game: Option<String>,
    /// What was read at this game's first request was a line of the
    /// previous game (it echoes its `game_id`), written after that game's
    /// last look: the bot is started again, not charged (protocol.md).
    /// The line, as shown.
    late_line: Option<String>,
}

impl SinceStart {
    /// The bot, broken off, had left before playing this game: all that
    /// was written since `game_start` is still unread in its stdin (a pipe
    /// is read in order, so what is unread is the end of what was
    /// written), or it exited (or its stdout ended), whatever its status,
    /// before its first reply of the game. (A bot that exits on `game_end` may have read the next
    /// `game_start` and first request ahead into its own buffer with it:
    /// whether it had hangs on timing alone, so its status cannot tell an
    /// exit after the last game from a crash at this one's first request.
    /// A bot that crashes there is started again, crashes again, and is
    /// charged.) Not twice in one game: a bot that leaves at every
    /// `game_start` crashes in it.
    fn left_before_playing(&self) -> bool {
        !self.restarted
            && !self.line.is_empty()
            && (self
                .unread_at_break
                .is_some_and(|unread| unread >= self.sent)
                || self.asked <= 1 && self.exit_at_break)
    }
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
    /// A launch of `cmd` that enforces the protocol's line limit, its
    /// stderr discarded (see [`Launch::log_to`]).
    pub fn launch(cmd: BotCommand) -> Launch {
        Launch::new(cmd, Limits::new(protocol::DEFAULT_MAX_LINE))
    }

    /// Spawns the bot and does the handshake: sends `hello` (protocol
    /// version and games) and waits `timing.startup` for its hello.
    pub async fn start(launch: &Launch, timing: &Timing) -> Result<BotPlayer, StartError> {
        let mut process = BotProcess::spawn(launch).map_err(StartError::Spawn)?;
        let info = match Self::handshake(&mut process, timing, &launch.limits).await {
            Ok(info) => info,
            Err(mut e) => {
                // A script without its `#!` line (or with one behind a
                // byte-order mark, or ending in `\r`), a program built for
                // another machine: run by /bin/sh or `env`, it failed in
                // their words; the cause is said.
                if let StartError::Handshake(f) = &mut e {
                    let cmd = &launch.command;
                    let note = (f.kind == ForfeitKind::Crash)
                        .then(|| crate::bot::failed_start_note(&cmd.program, cmd.cwd.as_deref()))
                        .flatten();
                    if let Some(note) = note {
                        f.detail = format!("{}; {note}", f.detail);
                    }
                }
                // Ended, and its stderr drained into the log to the end, so
                // that what it said before failing can be shown.
                process.kill();
                process.shutdown(timing.shutdown_grace).await;
                return Err(e);
            }
        };
        Ok(BotPlayer {
            process,
            info,
            buf: Vec::with_capacity(1024),
            broken: false,
            seq: 0,
            launch: launch.clone(),
            timing: *timing,
            exits_between_games: 0,
            since_start: SinceStart::default(),
            last_game: None,
            late_output: None,
            unknown: Unknown::Nothing,
            unknown_sent: 0,
            echoed_seq: false,
            stray_shown: None,
        })
    }

    /// From now on, sends the bot `unknown` too (see [`Unknown`]).
    pub fn send_unknown(&mut self, unknown: Unknown) {
        self.unknown = unknown;
    }

    /// How many messages of an unknown type it was sent
    /// ([`Unknown::MessageType`]), by every process in its place.
    pub fn unknown_messages_sent(&self) -> u32 {
        self.unknown_sent
    }

    /// What it wrote after a game had ended, too late to be charged in
    /// that game (it was started again before the next), since the last
    /// take: `arena check-bot` fails its check for it.
    pub fn take_late_output(&mut self) -> Option<String> {
        self.late_output.take()
    }

    /// How often the bot exited after a game and was started again just
    /// before the next (at no charge: protocol.md), for a checker to tell
    /// its author.
    pub fn exits_between_games(&self) -> u32 {
        self.exits_between_games
    }

    /// Requests of its last game sent to this process (after a free
    /// restart at that game's first request, to the process started
    /// again): a checker tells a crash at a game's first request from
    /// one later in it.
    pub fn asked_in_game(&self) -> u32 {
        self.since_start.asked
    }

    /// The hello exchange (see [`BotPlayer::start`]).
    async fn handshake(
        process: &mut BotProcess,
        timing: &Timing,
        limits: &Limits,
    ) -> Result<BotInfo, StartError> {
        let deadline = later(Instant::now(), timing.startup);
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
            .map_err(|e| fail(process_fault(process, limits, e)))?;
        let line = match process.read_line(deadline).await {
            Ok(line) => line,
            Err(e) => return Err(fail(no_hello(process, e, timing, limits))),
        };
        let info = match protocol::decode(line) {
            Ok(FromBot::Hello {
                name,
                version,
                author,
                protocol: p,
            }) => {
                if let Some(p) = p.filter(|&p| p != protocol::PROTOCOL_VERSION) {
                    return Err(fail(Fault::new(
                        ForfeitKind::Protocol,
                        format!(
                            "hello: bot speaks protocol {p}, referee speaks {}",
                            protocol::PROTOCOL_VERSION
                        ),
                    )));
                }
                check_name(&name).map_err(fail)?;
                for (what, text) in [("name", &name), ("version", &version)] {
                    check_not_formula(what, text).map_err(fail)?;
                }
                BotInfo {
                    name,
                    version: protocol::truncate(version.as_bytes(), NAME_MAX),
                    author: protocol::truncate(author.as_bytes(), NAME_MAX),
                }
            }
            Ok(_) => {
                return Err(fail(Fault::new(
                    ForfeitKind::Protocol,
                    format!(
                        "expected a hello, got: {}",
                        protocol::truncate(line, DETAIL_MAX)
                    ),
                )))
            }
            Err(e) => return Err(fail(decode_fault(e, line))),
        };
        Ok(info)
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
        self.quit_report().await.clean
    }

    /// [`BotPlayer::quit`], also saying what the bot wrote without being
    /// asked after its last request (before or after `quit`).
    pub async fn quit_report(&mut self) -> QuitReport {
        let mut stray = match self.process.stray_output() {
            Ok(Some(bytes)) => Some(bytes),
            _ => None,
        };
        let before_quit = stray.is_some();
        self.buf.clear();
        protocol::encode_into(&ToBot::Quit {}, &mut self.buf);
        let deadline = Instant::now() + self.timing.shutdown_grace;
        let sent = self.process.send_line(&self.buf, deadline).await.is_ok();
        let sent_at = Instant::now();
        let mut clean = false;
        let mut ended = None;
        let mut took = None;
        if !sent {
            ended = self.process.exit_status_within(EXIT_GRACE).await;
        } else {
            // Wait for the exit by reading to end of file / exit; a bot
            // that writes lines without end is read no longer than the
            // grace (a line already there is returned without a look at
            // the clock).
            while Instant::now() < deadline {
                match self.process.read_line(deadline).await {
                    Ok(line) => {
                        let line = line.to_vec();
                        stray.get_or_insert(line);
                    }
                    // Its stdout closed, or its stdin with the quit
                    // unread (on its way out by itself): the exit itself
                    // may come later (a sandbox's keeper reaps the bot,
                    // then exits), and is waited for within the quit's
                    // grace.
                    Err(BotError::Exited { .. } | BotError::InputGone { .. }) => {
                        let left = deadline.saturating_duration_since(Instant::now());
                        ended = self.process.exit_status_within(left).await;
                        clean = ended.is_some_and(|s| s.success());
                        took = ended.map(|_| sent_at.elapsed());
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
        // Its time to quit is over: closing its stdin and SIGTERM are
        // given the half second each that protocol.md says, whatever the
        // quit's own grace (`arena check-bot` allows more).
        self.process.shutdown(QUIT_STEP).await;
        QuitReport {
            clean,
            at_quit: stray.is_some() && !before_quit,
            stray,
            status: ended,
            gone_before: !sent,
            asked: self.seq > 0,
            took,
        }
    }

    /// The fault a bot error amounts to: a bot the kernel killed at its
    /// memory limit forfeits `memory`, whatever the pipes then said; a
    /// crash at its process limit says so.
    fn fault(&self, e: BotError) -> Fault {
        process_fault(&self.process, &self.launch.limits, e)
    }

    /// Kills the bot's process group now.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// The bot is at fault: kill it now, with every descendant, so that it
    /// burns no CPU a later game needs and a reply it still owes is never
    /// read; it is started afresh for its next game.
    fn break_off(&mut self) {
        self.broken = true;
        self.since_start.unread_at_break = self.process.unread_input();
        // Gone: exited, or its stdout ended (it closed it, or is exiting:
        // the exit itself may not be seen yet, and inside the sandbox the
        // keeper's exit follows the bot's).
        self.since_start.exit_at_break =
            self.process.exit_status().is_some() || self.process.stdout_closed();
        self.process.kill();
    }

    /// One request and its reply (see [`Player::decide`]).
    async fn ask(&mut self, ask: &Ask<'_>) -> Result<Answer, Fault> {
        self.since_start.asked += 1;
        // Folded into the reply's read: no system call per decision
        // (output unasked is still seen at the latest by the check at
        // the game's end, and charged in this game).
        self.check_quiet(BEFORE_REQUEST, false)?;
        self.gone_with_pipes_held(false)?;
        self.buf.clear();
        self.seq += 1;
        // The state goes straight into the reused buffer: no value tree.
        protocol::encode_request(
            &protocol::RequestMsg {
                game_id: ask.game_id,
                seq: self.seq,
                ply: ask.game.plies(),
                legal: ask.legal,
                since: ask.since,
                timeout_ms: whole_ms(ask.timeout),
                time_left_ms: ask.time_left.map(whole_ms),
            },
            |b| ask.game.write_snapshot(b),
            &mut self.buf,
        );
        self.add_unknown(ask.game_id);
        // A paused bot runs again before its time starts.
        self.process.resume();
        if let Some(ran) = self.process.ran_while_paused() {
            return Err(Fault::new(
                ForfeitKind::Protocol,
                format!(
                    "ran while paused: its main process used {} ms of CPU while it was stopped for another's turn or between its games (a stopped process uses none: it arranged a SIGCONT for itself, such as a timer's signal; docs/security.md)",
                    ran.as_millis()
                ),
            ));
        }
        // The bot's time starts now that the request is ready: the
        // referee's own work (the state, the encoding) is not charged.
        let t0 = Instant::now();
        let stopped_at_t0 = crate::host::stopped();
        let deadline = later(t0, ask.timeout).min(ask.watchdog);
        let stderr_before = self.process.stderr_bytes();
        if let Err(mut f) = self.send(deadline).await {
            if f.kind == ForfeitKind::Timeout {
                f.detail = format!("{} ({} ms)", f.detail, whole_ms(ask.timeout));
            }
            return Err(f);
        }
        let line = match self.process.read_reply(deadline).await {
            Ok(l) => l,
            Err(BotError::Timeout) => {
                if self.process.input_closed() {
                    // The request went into the pipe just before the bot
                    // closed it: the write did not fail, the read never
                    // came.
                    self.break_off();
                    return Err(Fault::new(
                        ForfeitKind::Crash,
                        format!(
                            "closed its stdin: the request was never read (no reply within {} ms)",
                            whole_ms(ask.timeout)
                        ),
                    ));
                }
                let what = match ask.time_left {
                    Some(left) if left <= ask.timeout => "the game clock",
                    _ => "the decision timeout",
                };
                // Its hello and a reply to each request before this.
                let seen = what_arrived(&self.process, self.seq, stderr_before);
                self.break_off();
                // The game's watchdog came before the decision's limit:
                // said as the time the game had left, not as a timeout
                // that did not run out (the referee calls it a stall).
                let detail = match ask.watchdog < later(t0, ask.timeout) {
                    true => format!(
                        "no reply in the {} ms the game had left{seen}",
                        whole_ms(ask.watchdog.saturating_duration_since(t0))
                    ),
                    false => format!(
                        "no reply within {} ms ({what}){seen}",
                        whole_ms(ask.timeout)
                    ),
                };
                return Err(Fault::new(ForfeitKind::Timeout, detail));
            }
            Err(e) => {
                let f = with_partial_line(&self.process, self.fault(e));
                self.break_off();
                return Err(f);
            }
        };
        // Less the time the referee was stopped (Ctrl-Z) meanwhile.
        let elapsed = t0
            .elapsed()
            .saturating_sub(crate::host::stopped() - stopped_at_t0);
        let judged = judge_reply(line, ask, self.seq, elapsed)
            .map(|(answer, echoed)| {
                self.echoed_seq = echoed;
                answer
            })
            .map_err(|f| {
                let at = (self.seq, self.since_start.asked);
                one_request_late(f, line, self.echoed_seq, at)
            });
        if judged.is_err() {
            let late = self.since_start.asked == 1
                && late_line(line, self.since_start.previous_game.as_deref());
            self.since_start.late_line = late.then(|| protocol::shown_line(line, DETAIL_MAX));
            self.break_off();
        }
        judged
    }

    /// Outside the sandbox, a process the bot left may hold its pipes
    /// after it exited, and even answer in its place: a request to a bot
    /// whose exit waitid has seen is its crash (protocol.md: exit only
    /// after `quit`), whatever answers (one system call a request, and
    /// only there: in the sandbox nothing outlives the bot). At a game's
    /// first request, a bot that left after its last game is started
    /// again at no charge, as one whose pipes closed is. `look`: first
    /// look at the pipe, before anything is killed (its descriptors may
    /// have closed before its exit could be seen: what is there tells a
    /// bot that left alone, its stdout at its end, from one that left a
    /// process writing in its place; the fault is a crash either way).
    fn gone_with_pipes_held(&mut self, look: bool) -> Result<(), Fault> {
        if self.launch.sandbox != crate::bot::Sandbox::Off || !self.process.has_exited() {
            return Ok(());
        }
        if look {
            let _ = self.process.stray_output();
        }
        let status = self.process.exit_status();
        self.break_off();
        Err(self.fault(BotError::Exited { status }))
    }

    /// Adds to the request in the buffer what the bot is to be sent
    /// beyond it ([`BotPlayer::send_unknown`]).
    fn add_unknown(&mut self, game_id: &str) {
        match self.unknown {
            Unknown::Nothing => {}
            Unknown::Field => protocol::add_unknown_field(&mut self.buf),
            Unknown::MessageType if self.since_start.asked > 1 => {
                let mut line = Vec::with_capacity(self.buf.len() + 100);
                protocol::encode_unknown_message(game_id, &mut line);
                line.append(&mut self.buf);
                self.buf = line;
                self.unknown_sent += 1;
            }
            Unknown::MessageType => {}
        }
    }

    /// Starts the bot again in this one's place after it exited between
    /// games (protocol.md: no game is charged), keeping its count of such
    /// exits and what its game's start sent. Unchanged if it fails.
    /// `late`: it did not exit, but wrote after its last game had ended
    /// (said so, and not counted as an exit).
    async fn start_again(&mut self, late: Option<String>) -> Result<(), StartError> {
        let mut fresh = BotPlayer::start(&self.launch, &self.timing).await?;
        match &late {
            None => tracing::info!(
                bot = %self.info.name,
                "started again at its game's start: it exited after its last game"
            ),
            Some(line) => tracing::info!(
                bot = %self.info.name,
                "started again at its game's start, not charged: it wrote after its last game had ended: {line}"
            ),
        }
        fresh.exits_between_games = self.exits_between_games + u32::from(late.is_none());
        fresh.late_output = late.or_else(|| self.late_output.take());
        fresh.last_game = self.last_game.take();
        fresh.since_start = std::mem::take(&mut self.since_start);
        fresh.since_start.restarted = true;
        fresh.unknown = self.unknown;
        fresh.unknown_sent = self.unknown_sent;
        fresh.process.mark_stderr(mark_of(Turn::START));
        *self = fresh;
        Ok(())
    }

    /// After `fault`, a bot that left before playing this game: started
    /// again and sent the game's `game_start`; `fault` stands if it cannot
    /// be started.
    async fn start_over(&mut self, fault: Fault, deadline: Instant) -> Result<(), Fault> {
        let late = self.since_start.late_line.take();
        Box::pin(self.start_again(late)).await.map_err(|_| fault)?;
        self.send_start(deadline).await
    }

    /// Sends this game's `game_start` (kept in `since_start`), counting
    /// from it what is written to the bot.
    async fn send_start(&mut self, deadline: Instant) -> Result<(), Fault> {
        self.buf.clear();
        self.buf.extend_from_slice(&self.since_start.line);
        self.since_start.sent = 0;
        self.since_start.asked = 0;
        self.since_start.unread_at_break = None;
        self.since_start.exit_at_break = false;
        self.since_start.late_line = None;
        self.send(deadline).await
    }

    async fn send(&mut self, deadline: Instant) -> Result<(), Fault> {
        match self.process.send_line(&self.buf, deadline).await {
            Ok(()) => {
                self.since_start.sent += self.buf.len();
                Ok(())
            }
            Err(BotError::Timeout) => {
                self.break_off();
                Err(Fault::new(
                    ForfeitKind::Timeout,
                    "does not read its stdin (the referee's write did not finish in time)",
                ))
            }
            Err(e) => {
                self.break_off();
                Err(self.fault(e))
            }
        }
    }

    /// After an answer that is not legal here: if the bot writes another
    /// line within [`EXTRA_LINE_GRACE`], it wrote more lines than it was
    /// asked for (an answer written twice, one of them read in this
    /// request's place), and that is the fault to report, not the illegal
    /// option. `None`: nothing more came (the option is the bot's answer).
    /// A line that is not a reply (a debug print) shows no second answer:
    /// the illegal option stays the fault, the line told after it.
    async fn one_line_too_many(&mut self, option: &str, illegal: Fault) -> Fault {
        let by = Instant::now() + EXTRA_LINE_GRACE;
        let Ok(next) = self.process.read_line(by).await else {
            return illegal;
        };
        let shown = protocol::truncate(next, DETAIL_MAX);
        match protocol::decode(next) {
            Ok(FromBot::Reply { .. }) => {
                // At the game's first request, the first line may have
                // been written before the request came.
                let first = match self.since_start.asked {
                    1 => "; this was its first request of the game: if the first line was written before it, after game_start, note that game_start takes no reply",
                    _ => "",
                };
                Fault::new(
                    ForfeitKind::Protocol,
                    format!(
                        "more lines than requests: `{}` (not legal here) was read as this request's answer, and then came: {shown} (answer each request once{first})",
                        protocol::truncate(option.as_bytes(), DETAIL_MAX),
                    ),
                )
            }
            other => {
                let why = match other {
                    Err(DecodeError::BadJson(_)) => {
                        "not JSON: stdout is for protocol messages only, write logs to stderr"
                    }
                    _ => "a bot writes only its hello and one reply per request",
                };
                let mut f = illegal;
                f.detail = format!(
                    "{}; after it the bot wrote, unasked: {shown} ({why})",
                    f.detail
                );
                f
            }
        }
    }

    /// Fails (and marks the bot for restart) if it wrote anything it was
    /// not asked for, or closed its stdout, since it was last read: a
    /// stale line must never be taken for the answer to a later request.
    /// `in_pipe`: also look in the pipe (a system call); without it, only
    /// at what the last read brought in beyond its line (see
    /// [`BotProcess::stray_buffered`]).
    fn check_quiet(&mut self, when: &str, in_pipe: bool) -> Result<(), Fault> {
        let stray = match in_pipe {
            true => self.process.stray_output(),
            false => self.process.stray_buffered(),
        };
        let r = match stray {
            Ok(None) => return Ok(()),
            Ok(Some(bytes)) => {
                self.stray_shown = Some(shown_stray(&bytes));
                let first = bytes.split(|&b| b == b'\n').next().unwrap_or(&bytes);
                // Seen before a game's first request: a line of the game
                // before, as if read in the first reply's place.
                if when == BEFORE_REQUEST
                    && self.since_start.asked == 1
                    && late_line(first, self.since_start.previous_game.as_deref())
                {
                    self.since_start.late_line = Some(protocol::shown_line(first, DETAIL_MAX));
                }
                // Before any request, a reply is early, not merely extra.
                let unasked = match (self.seq, self.since_start.asked) {
                    (0, _) => Some(Unasked::Ever),
                    (_, 1) if when == BEFORE_REQUEST => Some(Unasked::ThisGame),
                    _ => None,
                };
                let at = (self.seq.saturating_add(1), self.since_start.asked);
                one_request_late(
                    stray_fault(when, &bytes, unasked),
                    first,
                    self.echoed_seq,
                    at,
                )
            }
            Err(e) => self.fault(e),
        };
        self.break_off();
        Err(r)
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
                    seed: s.seed.to_string(),
                },
                &mut self.buf,
            );
            self.since_start = SinceStart {
                line: std::mem::take(&mut self.buf),
                previous_game: self.last_game.replace(s.game_id.to_string()),
                ..SinceStart::default()
            };
            // Left over from the handshake or the previous game.
            if let Err(f) = self.check_quiet("before game_start", true) {
                if f.kind != ForfeitKind::Crash {
                    // Written after its last game's last look (its result
                    // stands): started again, this game not charged
                    // (protocol.md). Written after the hello alone, it is.
                    if self.since_start.previous_game.is_none() {
                        return Err(f);
                    }
                    // What it wrote, without the fault's own words (nor
                    // its hints, which are of output within a game).
                    let late = Some(self.stray_shown.take().unwrap_or_else(|| f.detail.clone()));
                    Box::pin(self.start_again(late)).await.map_err(|_| f)?;
                    return self.send_start(s.deadline).await;
                }
                // Its stdout closed after the last game: it exited between
                // games, which protocol.md allows: noticed before this
                // game's start, it is started again at no charge (whatever
                // its seat: the runner's own look before the game may
                // have come a moment too early). Only if that fails is it
                // this game's crash, its status saying how it ended.
                if Box::pin(self.start_again(None)).await.is_err() {
                    let status = self.process.exit_status_within(EXIT_GRACE).await;
                    return Err(self.fault(BotError::Exited { status }));
                }
            }
            match self.send_start(s.deadline).await {
                // The exit came after the look: its stdin was closed
                // before the game_start reached it.
                Err(f)
                    if f.kind == ForfeitKind::Crash && self.since_start.left_before_playing() =>
                {
                    self.start_over(f, s.deadline).await
                }
                r => r,
            }
        })
    }

    fn decide<'a>(&'a mut self, ask: &'a Ask<'a>) -> PlayerFuture<'a, Result<Answer, Fault>> {
        // The rare paths' futures (a restart, a second request) are boxed
        // where they are taken: this future, made for every decision, stays
        // the size of one request's.
        Box::pin(async move {
            match self.ask(ask).await {
                // Its first request failed with the game_start still
                // unread: the exit came after game_start was written, but
                // the bot had left after its last game all the same; or
                // what was read was a line of the game before, written
                // after its last look.
                Err(f)
                    if (f.kind == ForfeitKind::Crash && self.since_start.left_before_playing())
                        || (self.since_start.late_line.is_some()
                            && !self.since_start.restarted) =>
                {
                    self.start_over(f, ask.watchdog).await?;
                    self.process
                        .mark_stderr(mark_of(Turn::Ply(ask.game.plies())));
                    Box::pin(self.ask(ask)).await
                }
                r => r,
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
            if self.send(e.deadline).await.is_ok() {
                // Until its next game, the bot gets no CPU either.
                self.process.pause_later();
            }
        })
    }

    fn needs_restart(&self) -> bool {
        // A bot that exited between games (after game_end) is restarted
        // before its next game, and no game is charged for it.
        self.broken || self.process.has_exited()
    }

    fn quiet(&mut self, when: &str) -> Result<(), Fault> {
        self.check_quiet(when, true)?;
        // Exited during the game while a process it started kept its
        // stdout open: a crash all the same (protocol.md: exit only after
        // quit).
        self.gone_with_pipes_held(true)
    }

    fn quiet_at_end(&mut self) -> Result<(), Fault> {
        // Gone after its last reply: the game's decisions were all made,
        // so the rules' result stands; it is started again before its
        // next game, as a bot that exits between games is (protocol.md).
        let gone = match self.check_quiet(AFTER_LAST_REPLY, true) {
            // Gone whole: its stdout at its end.
            Err(f) if f.kind == ForfeitKind::Crash && self.process.stdout_closed() => f.detail,
            Err(f) => return Err(f),
            // Exited, whatever still holds its stdout (outside the
            // sandbox, a child it left): nothing wrote in its place, and
            // what it left is ended now, with the process group.
            Ok(()) if self.process.has_exited() => {
                let status = self.process.exit_status();
                self.break_off();
                format!("exited, {}", crate::bot::describe_status(&status))
            }
            Ok(()) => return Ok(()),
        };
        tracing::info!(
            bot = %self.info.name,
            "left after its last reply of the game, before game_end ({gone}): not charged, started again before its next game"
        );
        Ok(())
    }

    fn unasked_output<'a>(&'a mut self, when: &'a str) -> PlayerFuture<'a, Option<Fault>> {
        Box::pin(async move {
            if self.broken {
                return None;
            }
            let bytes = match self.process.stray_output() {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return None,
                // Gone before its first reply of this game: started again at
                // no charge before it plays (protocol.md), so its leaving
                // is no fault that came first. Seen at this game's end, it
                // is started again before the next.
                Err(_) if self.since_start.asked == 0 && !self.since_start.restarted => {
                    return None
                }
                // Gone (its stdout at its end) while the game went on: a
                // crash (protocol.md, "Errors"), and it came first; said
                // with its status, which a moment's wait finds if it exited.
                Err(e) => {
                    let e = match e {
                        BotError::Exited { status: None } => BotError::Exited {
                            status: self.process.exit_status_within(EXIT_GRACE).await,
                        },
                        e => e,
                    };
                    let mut f = self.fault(e);
                    f.detail = format!("{} {when}", f.detail);
                    self.break_off();
                    return Some(f);
                }
            };
            let unasked = match (self.seq, self.since_start.asked) {
                (0, _) => Some(Unasked::Ever),
                (_, 0) => Some(Unasked::ThisGame),
                _ => None,
            };
            self.break_off();
            Some(stray_fault(when, &bytes, unasked))
        })
    }

    fn explain_illegal<'a>(
        &'a mut self,
        option: &'a str,
        illegal: Fault,
    ) -> PlayerFuture<'a, Fault> {
        Box::pin(self.one_line_too_many(option, illegal))
    }

    fn forfeited(&mut self) {
        self.break_off();
    }

    fn pause(&mut self, force: bool) -> bool {
        self.process.pause(force)
    }

    fn mark_stderr(&mut self, turn: Turn) {
        self.process.mark_stderr(mark_of(turn));
    }

    fn take_stderr(&mut self, seat: usize) -> Option<SeatStderr> {
        let c = self.process.take_stderr()?;
        Some(SeatStderr {
            seat,
            lines: c
                .lines
                .into_iter()
                .map(|l| StderrLine {
                    turn: turn_of(l.mark),
                    text: l.text,
                })
                .collect(),
            truncated_bytes: c.dropped,
        })
    }

    fn quit<'a>(&'a mut self) -> PlayerFuture<'a, bool> {
        Box::pin(BotPlayer::quit(self))
    }

    fn quit_with_report<'a>(&'a mut self) -> PlayerFuture<'a, Option<QuitReport>> {
        Box::pin(async move { Some(self.quit_report().await) })
    }

    fn request_seq(&self) -> Option<u64> {
        (self.seq > 0).then_some(self.seq)
    }
}

/// A turn as the bot runner's mark (a number it does not interpret):
/// 0 the start, ply `p` as `p + 1`, `u32::MAX` the end.
fn mark_of(turn: Turn) -> u32 {
    match turn {
        Turn::Ply(p) => p.saturating_add(1).min(u32::MAX - 1),
        Turn::Phase(Phase::Start) => 0,
        Turn::Phase(Phase::End) => u32::MAX,
    }
}

/// The turn of a mark made by [`mark_of`].
fn turn_of(mark: u32) -> Turn {
    match mark {
        0 => Turn::START,
        u32::MAX => Turn::END,
        m => Turn::Ply(m - 1),
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

    fn decide<'a>(&'a mut self, ask: &'a Ask<'a>) -> PlayerFuture<'a, Result<Answer, Fault>> {
        let r = if ask.legal.is_empty() {
            Err(Fault::new(ForfeitKind::Protocol, "no legal option"))
        } else {
            Ok(Answer::new(
                ask.legal[self.rng.gen_range(0..ask.legal.len())].clone(),
            ))
        };
        Box::pin(std::future::ready(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bot silent after reading its whole message may be slow to start
    /// or may read to the end of its input: both are named, neither alone.
    #[test]
    fn silence_after_the_whole_message_was_read_names_both_causes() {
        let told = flush_or(Some(0));
        assert!(told.contains("still starting or thinking"), "{told}");
        assert!(told.contains("reads all of its stdin"), "{told}");
        assert!(flush_or(Some(12)).ends_with("else it was still starting or thinking"));
    }

    /// A number sent for an option, a place in `legal`: the option meant.
    #[test]
    fn an_option_sent_as_its_place_in_legal_is_named() {
        let legal = ["xi1".to_string(), "xi2".to_string()];
        assert_eq!(
            index_hint(br#"{"type":"reply","option":1}"#, &legal),
            "; if 1 is a place in `legal`, send the option itself, as a string: legal[1] is \"xi2\""
        );
        assert_eq!(index_hint(br#"{"type":"reply","option":7}"#, &legal), "");
        assert_eq!(index_hint(br#"{"type":"reply","option":-1}"#, &legal), "");
        // A number that is itself an option's label: quoting it is the fix.
        let labels = ["xi1".to_string(), "1".to_string(), "x".to_string()];
        assert_eq!(index_hint(br#"{"type":"reply","option":1}"#, &labels), "");
    }

    /// A line that is not JSON is told what it most likely meant.
    #[test]
    fn a_line_that_is_not_json_gets_the_hint_it_needs() {
        let f = decode_fault(protocol::decode(b"xi3").unwrap_err(), b"xi3");
        assert!(
            f.detail.contains(r#"{"type":"reply","option":"xi3"}"#),
            "{}",
            f.detail
        );
        let line = b"{'type': 'reply', 'option': 'G'}";
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(f.detail.contains("double quotes"), "{}", f.detail);
        let line = b"thinking about move 3...";
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(f.detail.contains("write logs to stderr"), "{}", f.detail);
        // An object broken inside (a raw NUL in a string) is not taken
        // for a log line: the parser's own message says where.
        let line = b"{\"type\":\"reply\",\"option\":\"G\x00\"}";
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(!f.detail.contains("logs"), "{}", f.detail);
        // Half a message (a reply cut short, then the bot exited) is
        // called that, not a log line.
        let f = stray_fault("before a request", br#"{"type":"re"#, None);
        assert!(f.detail.contains("cut short"), "{}", f.detail);
        assert!(!f.detail.contains("logs"), "{}", f.detail);
        // A C string's terminator after the object: named.
        let line = b"{\"type\":\"reply\",\"option\":\"G\"}\x00";
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(f.detail.contains("a NUL byte"), "{}", f.detail);
        assert!(!f.detail.contains("logs"), "{}", f.detail);
        // Two byte-order marks: named, not a log line.
        let line = "\u{feff}\u{feff}{\"type\":\"reply\",\"option\":\"G\"}".as_bytes();
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(f.detail.contains("byte-order mark"), "{}", f.detail);
        assert!(!f.detail.contains("logs"), "{}", f.detail);
        // Half a surrogate pair is named; a whole pair is a character.
        let line = br#"{"type":"reply","option":"\ud800"}"#;
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(
            f.detail.contains("half of a UTF-16 surrogate pair"),
            "{}",
            f.detail
        );
        assert!(lone_surrogate(r"x\udc00") && lone_surrogate(r"\ud800\u0041"));
        assert!(!lone_surrogate(r"\ud83d\ude00 \u00e9"));
        // JSON in colour codes is named, not a log line.
        let line = b"\x1b[32m{\"type\":\"reply\",\"option\":\"G\"}\x1b[0m";
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(f.detail.contains("escape sequences"), "{}", f.detail);
        assert!(!f.detail.contains("logs"), "{}", f.detail);
        // UTF-16 is named.
        let line: Vec<u8> = "{\"type\":\"reply\"}"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let f = decode_fault(protocol::decode(&line).unwrap_err(), &line);
        assert!(f.detail.contains("UTF-16"), "{}", f.detail);
        // Two messages without the newline between: named, not a log.
        let line = br#"{"type":"reply","option":"A"}{"type":"reply","option":"B"}"#;
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert_eq!(f.kind, ForfeitKind::BadJson);
        assert!(
            f.detail.contains("one JSON message after another"),
            "{}",
            f.detail
        );
        let line = br#"{"type":"reply","option":"A"} x"#;
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(
            !f.detail.contains("one JSON message after another"),
            "{}",
            f.detail
        );
        // Pretty-printed JSON's first line, `{` alone: said so.
        let line = b"{";
        let f = decode_fault(protocol::decode(line).unwrap_err(), line);
        assert!(
            f.detail.contains("JSON printed over several lines"),
            "{}",
            f.detail
        );
        // A stray line of a form feed alone is shown, escaped.
        let f = stray_fault("before a request", b"\x0c\n", None);
        assert!(
            f.detail.ends_with(r"\u{c}") || f.detail.contains(r"\u{c};"),
            "{}",
            f.detail
        );
    }

    /// A line over the limit is shown from its first byte that is not
    /// white space (a line padded to length would show only spaces).
    #[test]
    fn a_line_too_long_is_shown_from_what_it_says() {
        let mut start = vec![b' '; 300];
        start.extend_from_slice(b"{\"type\":\"reply\"");
        let f = fault_of(BotError::LineTooLong {
            limit: 65536,
            start,
        });
        assert_eq!(f.kind, ForfeitKind::LineTooLong);
        assert!(
            f.detail.contains(r#"bytes: {"type":"reply""#),
            "{}",
            f.detail
        );
        let f = fault_of(BotError::LineTooLong {
            limit: 65536,
            start: vec![b' '; 300],
        });
        assert!(
            f.detail
                .contains("white space all through its first 300 bytes"),
            "{}",
            f.detail
        );
    }

    /// A name must show something, and nothing hidden: a bot cannot pass
    /// for no one, or reorder the line its name is printed in.
    #[test]
    fn a_name_with_nothing_visible_or_something_hidden_is_refused() {
        assert!(check_name("random-7").is_ok());
        assert!(check_not_formula("version", "1.2-rc1").is_ok());
        for formula in ["=HYPERLINK(1)", "+1", " -2", "@SUM(A1)"] {
            let f = check_not_formula("version", formula).expect_err(formula);
            assert!(f.detail.contains("formula"), "{}", f.detail);
        }
        assert!(check_name("élan vital").is_ok());
        // A variation selector after an emoji chooses how it is drawn.
        assert!(check_name("\u{2764}\u{fe0f} bot").is_ok());
        for (name, says) in [
            ("", "empty name"),
            ("  ", "nothing but white space"),
            ("\u{a0}\u{a0}", "nothing but white space"),
            ("\u{200b}\u{200b}", "invisible"),
            ("\u{3164}", "invisible"),
            ("\u{ffa0}", "invisible"),
            ("\u{115f}\u{1160}", "invisible"),
            ("\u{34f}", "invisible"),
            ("\u{fe0f}", "shows nothing"),
            ("\u{2800}", "shows nothing"),
            ("\u{2800} \u{2800}", "U+2800 U+0020 U+2800"),
            ("\u{301}\u{301}", "shows nothing"),
            ("good\u{202e}dab", "invisible"),
            ("a\u{2028}b", "invisible"),
            ("a\u{1b}[31mb", "control"),
        ] {
            let f = check_name(name).expect_err(name);
            assert_eq!(f.kind, ForfeitKind::Protocol, "{name:?}");
            assert!(f.detail.contains(says), "{name:?}: {}", f.detail);
        }
    }

    /// Times go to the bot rounded up, never 0 (protocol.md).
    #[test]
    fn times_sent_are_whole_milliseconds_rounded_up_and_never_0() {
        assert_eq!(whole_ms(Duration::from_micros(300)), 1);
        assert_eq!(whole_ms(Duration::ZERO), 1);
        assert_eq!(whole_ms(Duration::from_micros(1500)), 2);
        assert_eq!(whole_ms(Duration::from_millis(2000)), 2000);
    }

    #[test]
    fn a_turn_survives_its_mark() {
        for t in [Turn::START, Turn::END, Turn::Ply(0), Turn::Ply(41)] {
            assert_eq!(turn_of(mark_of(t)), t);
        }
    }

    /// A debug print on stdout is `bad_json` whether it comes as an answer
    /// or unasked; unasked JSON is `protocol`.
    #[test]
    fn a_line_that_is_not_json_is_the_same_fault_asked_or_not() {
        let debug = b"thinking... depth 3\n";
        assert!(matches!(
            protocol::decode(&debug[..debug.len() - 1]),
            Err(protocol::DecodeError::BadJson(_))
        ));
        assert_eq!(
            stray_fault("before game_start", debug, Some(Unasked::Ever)).kind,
            ForfeitKind::BadJson
        );
        let json = br#"{"type":"reply","option":"A"}"#;
        assert_eq!(
            stray_fault("after game_end", json, None).kind,
            ForfeitKind::Protocol
        );
    }

    /// A reply that came before any request is called early, by when it
    /// came; other output unasked keeps its words.
    #[test]
    fn a_reply_before_any_request_is_called_early() {
        let reply = b"{\"type\":\"reply\",\"option\":\"A\"}\n";
        let f = stray_fault("before game_start", reply, Some(Unasked::Ever));
        assert_eq!(f.kind, ForfeitKind::Protocol);
        assert!(
            f.detail.starts_with("a reply before any request: "),
            "{}",
            f.detail
        );
        assert!(f.detail.contains("came before game_start"), "{}", f.detail);
        let f = stray_fault(BEFORE_REQUEST, reply, Some(Unasked::ThisGame));
        assert!(
            f.detail
                .starts_with("a reply before any request of this game: "),
            "{}",
            f.detail
        );
        // Asked before: a reply written twice, named by the request it
        // echoes when it does.
        let f = stray_fault(BEFORE_REQUEST, reply, None);
        assert!(
            f.detail
                .starts_with("a reply no request was waiting for before the next request: "),
            "{}",
            f.detail
        );
        let echoed = b"{\"type\":\"reply\",\"option\":\"A\",\"seq\":3}\n";
        let f = stray_fault(AFTER_LAST_REPLY, echoed, None);
        assert!(
            f.detail
                .starts_with("a second reply to request seq 3 after its last reply: "),
            "{}",
            f.detail
        );
        // A hello sent again is called that, whenever it comes.
        let hello = b"{\"type\":\"hello\",\"name\":\"x\"}\n";
        for unasked in [None, Some(Unasked::ThisGame)] {
            let f = stray_fault(AFTER_LAST_REPLY, hello, unasked);
            assert_eq!(f.kind, ForfeitKind::Protocol);
            assert!(
                f.detail
                    .starts_with("a second hello after its last reply: "),
                "{}",
                f.detail
            );
        }
        // A debug print before any request is still a debug print.
        let f = stray_fault("before game_start", b"hello world\n", Some(Unasked::Ever));
        assert_eq!(f.kind, ForfeitKind::BadJson);
        assert!(f.detail.starts_with("unsolicited output"), "{}", f.detail);
    }
}
