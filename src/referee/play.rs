//! One game as a small state machine: [`Table::set_up`] (spec checks and
//! the opening), [`Table::start`] (game start to every player), one
//! [`Table::turn`] per decision, [`Table::record`], which every decision
//! goes through (opening, forced, asked), and [`Table::finish`], which builds
//! the [`GameReport`] and tells every player how the game ended.

use super::player::{self, Ask, End, Player, Start};
use super::{
    forfeit_scores, DecisionRecord, EndReason, Event, Fault, ForfeitKind, GameReport, GameSpec,
    SpecError,
};
use crate::engine::{Decision, Game};
use crate::protocol::DecisionMsg;
use crate::results::stderr::{self, SeatStderr};
use std::time::Duration;
use tokio::time::Instant;

/// Plays one game. `players[s]` plays seat `s`. Returns `Err` only when the
/// spec itself is unplayable; everything a player does wrong ends the game
/// with a forfeit in the report.
pub async fn play_game(
    spec: &GameSpec,
    players: &mut [&mut dyn Player],
    on_event: &mut (dyn FnMut(&Event<'_>) + Send),
) -> Result<GameReport, SpecError> {
    let mut table = Table::set_up(spec, players)?;
    let mut forfeit = table.start().await.err();
    if forfeit.is_none() {
        on_event(&Event::Started {
            spec,
            game: &table.game,
        });
    }
    while forfeit.is_none() {
        match table.turn().await? {
            Turn::Decided => on_event(&Event::Decided {
                decision: table.last(),
                game: &table.game,
            }),
            Turn::Forfeit(seat, fault) => forfeit = Some((seat, fault)),
            Turn::Over => break,
        }
    }
    Ok(table.finish(forfeit, on_event).await)
}

/// The legal options for a message: the first ones, up to about 100 bytes
/// (the engine's notation: nothing to escape).
fn listed(legal: &[String]) -> String {
    let mut out = String::new();
    for (i, o) in legal.iter().enumerate() {
        if out.len() + o.len() > 100 {
            out.push_str(&format!(" ... ({} in all)", legal.len()));
            break;
        }
        if i > 0 {
            out.push(' ');
        }
        out.push_str(o);
    }
    out
}

/// For an option that holds a character outside ASCII (a look-alike of
/// a letter, a space of another kind), which one: every option of every
/// game is ASCII, and such a character looks right on screen.
fn not_ascii(option: &str) -> String {
    match option.chars().find(|c| !c.is_ascii()) {
        Some(c) => format!(
            " (it holds U+{:04X}, which is not ASCII: every option is)",
            u32::from(c)
        ),
        None => String::new(),
    }
}

/// For an option that is a legal one written otherwise (in another
/// case, with white space around it, in fullwidth forms), which one and
/// how it differs: options are taken exactly, and the difference is easy
/// to miss in a detail (a list cut short may not even show the option).
fn near_miss(option: &str, legal: &[String]) -> String {
    // Fullwidth ASCII (U+FF01 to U+FF5E) and the ideographic space; and
    // control characters (a C string's NUL terminator) left out.
    let narrow: String = option
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .map(|c| match c {
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(u32::from(c) - 0xfee0).unwrap_or(c),
            '\u{3000}' => ' ',
            c => c,
        })
        .collect();
    let controls = option.chars().any(|c| c.is_control() && !c.is_whitespace());
    let bare = narrow.trim();
    // The option encoded twice: a JSON string holding the option's own
    // quotes (`"\"xi1\""`).
    if let Ok(inner) = serde_json::from_str::<String>(bare) {
        if let Some(meant) = legal.iter().find(|l| **l == inner) {
            return format!(
                "; `{meant}` is legal, and this is it in quotes of its own: the option was encoded twice (send the string itself, encoded once)"
            );
        }
    }
    // A character that shows nothing (a zero-width space, a byte order
    // mark, a soft hyphen) or a combining mark (an accent drawn on the
    // letter before it): the option looks exactly right on screen.
    use crate::text::draws_nothing;
    if let Some(c) = bare.chars().find(|&c| draws_nothing(c)) {
        let seen: String = bare.chars().filter(|&c| !draws_nothing(c)).collect();
        if let Some(meant) = legal.iter().find(|l| **l == seen) {
            let what = match crate::text::is_hidden(c) {
                true => "an invisible character",
                false => "a combining mark (drawn on the character before it)",
            };
            return format!(
                "; `{meant}` is legal, and this is it with {what} in it, U+{:04X}: send the option exactly as listed",
                u32::from(c)
            );
        }
    }
    let Some(meant) = legal.iter().find(|l| l.eq_ignore_ascii_case(bare)) else {
        // Letters of another script that look alike (a Cyrillic `х` for
        // a Latin `x`), as a bot's name is compared with another's.
        let look = crate::text::look_of(bare);
        return match legal.iter().find(|l| crate::text::look_of(l) == look) {
            Some(meant) => format!(
                "; `{meant}` is legal, and this looks like it but is written with other letters (of another script, as a Cyrillic `х` for a Latin `x`): send the option exactly as listed"
            ),
            None => other_spelling(bare, legal),
        };
    };
    let mut how = Vec::new();
    if meant.as_str() != bare {
        how.push("in another case");
    }
    if bare.len() != narrow.len() {
        how.push("with white space around it");
    }
    if controls {
        how.push("with a control character in it (a NUL, a C string's terminator?)");
    }
    if option
        .chars()
        .any(|c| ('\u{ff01}'..='\u{ff5e}').contains(&c) || c == '\u{3000}')
    {
        how.push("in fullwidth characters");
    }
    if how.is_empty() {
        return String::new();
    }
    format!(
        "; `{meant}` is legal, and this is it {}: send the option exactly as listed",
        how.join(", ")
    )
}

/// For an option that is none written otherwise: a legal one with other
/// separators (`6e-NW` for `6e:NW`), the first part of legal ones (`2a`
/// where a sowing also names its direction, `2a:E`), or a place in
/// `legal` sent as a string (`"11"`, where no option is a number).
fn other_spelling(bare: &str, legal: &[String]) -> String {
    let key = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let k = key(bare);
    let same: Vec<&String> = legal
        .iter()
        .filter(|l| !k.is_empty() && key(l) == k)
        .collect();
    if let [meant] = same.as_slice() {
        return format!(
            "; `{meant}` is legal, and this is it with other separators: send the option exactly as listed (the rules docs give each game's notation)"
        );
    }
    let begun: Vec<&str> = legal
        .iter()
        .filter(|l| {
            l.len() > bare.len()
                && l.starts_with(bare)
                && !l.as_bytes()[bare.len()].is_ascii_alphanumeric()
        })
        .map(String::as_str)
        .collect();
    if !begun.is_empty() && !bare.is_empty() {
        let shown: Vec<&str> = begun.iter().take(4).copied().collect();
        return format!(
            "; it is the first part of {} legal option(s) ({}{}): an option names all its parts",
            begun.len(),
            shown.join(" "),
            if begun.len() > 4 { " ..." } else { "" }
        );
    }
    // The end of one legal option (`i5` for Kisolo's `xi5`): its start left out.
    let ended: Vec<&String> = legal
        .iter()
        .filter(|l| !bare.is_empty() && l.len() > bare.len() && l.ends_with(bare))
        .collect();
    if let [meant] = ended.as_slice() {
        return format!(
            "; it is the end of `{meant}`, which is legal: an option is written whole (the rules docs give each game's notation)"
        );
    }
    let numbers = legal.iter().any(|l| l.bytes().all(|b| b.is_ascii_digit()));
    match bare.parse::<usize>() {
        Ok(i) if !numbers && i < legal.len() => format!(
            "; it looks like a place in `legal` (legal[{i}] is `{}`): send the option itself",
            legal[i]
        ),
        _ => String::new(),
    }
}

/// What one turn came to.
enum Turn {
    /// A decision was made and recorded.
    Decided,
    /// The seat to decide forfeited.
    Forfeit(usize, Fault),
    /// The rules ended the game.
    Over,
}

/// One game in play.
struct Table<'s, 'p, 'q> {
    spec: &'s GameSpec,
    players: &'p mut [&'q mut dyn Player],
    game: Game,
    names: Vec<String>,
    /// The record: every decision, in order.
    decisions: Vec<DecisionRecord>,
    /// Per seat, the decisions it has not been shown yet.
    unseen: Vec<Vec<DecisionMsg>>,
    /// Per seat, the time left on its game clock.
    clocks: Vec<Option<Duration>>,
    started: Instant,
    watchdog: Instant,
    /// The referee's own hold on the watchdog (100 ms after it), in case a
    /// player ignores its deadlines: one timer for the whole game, not one
    /// per decision.
    stall: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// The time this process had spent stopped (Ctrl-Z, SIGSTOP) when the
    /// watchdog was last moved: the time the referee spends stopped is
    /// not the game's either.
    stopped: Duration,
}

impl<'s, 'p, 'q> Table<'s, 'p, 'q> {
    /// Checks the spec against the players and applies the opening.
    fn set_up(
        spec: &'s GameSpec,
        players: &'p mut [&'q mut dyn Player],
    ) -> Result<Self, SpecError> {
        let started = Instant::now();
        let n = spec.settings.players;
        if players.len() != n {
            return Err(SpecError::Players {
                players: players.len(),
                expected: n,
            });
        }
        let game = Game::new(spec.variant, &spec.settings)?;
        let names = if spec.names.len() == n {
            spec.names.clone()
        } else {
            players.iter().map(|p| p.name().to_string()).collect()
        };
        let mut table = Table {
            spec,
            players,
            game,
            names,
            decisions: Vec::with_capacity(128),
            unseen: vec![Vec::new(); n],
            clocks: vec![spec.time.clock.map(|c| c.base); n],
            started,
            watchdog: player::later(started, spec.watchdog),
            stall: Box::pin(tokio::time::sleep_until(player::later(
                started,
                spec.watchdog.saturating_add(Duration::from_millis(100)),
            ))),
            stopped: crate::host::stopped(),
        };
        for (index, option) in spec.opening.iter().enumerate() {
            let decision = table
                .game
                .play(option)
                .map_err(|error| SpecError::Opening {
                    index,
                    option: option.clone(),
                    error,
                })?
                .clone();
            table.record(decision, Origin::Opening);
        }
        Ok(table)
    }

    /// Game start to every player: no answer expected; a write failure is a
    /// forfeit.
    async fn start(&mut self) -> Result<(), (usize, Fault)> {
        let spec = self.spec;
        for (seat, p) in self.players.iter_mut().enumerate() {
            // What it wrote between games belongs to none.
            let _ = p.take_stderr(seat);
            p.mark_stderr(stderr::Turn::START);
            let s = Start {
                game_id: &spec.game_id,
                variant: spec.variant,
                settings: &spec.settings,
                seat,
                names: &self.names,
                time: spec.time.msg(),
                seed: spec.seed,
                deadline: player::later(Instant::now(), spec.time.per_decision).min(self.watchdog),
            };
            p.start(&s).await.map_err(|f| (seat, f))?;
        }
        Ok(())
    }

    /// One decision: applied without asking when it is the only option
    /// (a ruling, docs/rules.md), else asked of its seat under the decision timeout, the
    /// seat's clock and the game's watchdog, and checked against the legal
    /// options.
    async fn turn(&mut self) -> Result<Turn, SpecError> {
        let Some(seat) = self.game.to_decide() else {
            return Ok(Turn::Over);
        };
        past_stops(&mut self.stopped, &mut self.watchdog, self.stall.as_mut());
        let legal = self.game.legal();
        if let [only] = legal.as_slice() {
            // The engine listed it; failing here is an engine bug.
            let decision = self.game.play(only)?.clone();
            self.record(decision, Origin::Forced);
            return Ok(Turn::Decided);
        }
        let spec = self.spec;
        let timeout = match self.clocks[seat] {
            Some(left) => spec.time.per_decision.min(left),
            None => spec.time.per_decision,
        };
        let asked = Instant::now();
        let decision_deadline = player::later(asked, timeout);
        let ask = Ask {
            game_id: &spec.game_id,
            game: &self.game,
            legal: &legal,
            since: &self.unseen[seat],
            // What the bot is told is the real limit: no later than the
            // watchdog (protocol.md, "Times are always real limits").
            timeout: timeout.min(self.watchdog.saturating_duration_since(asked)),
            time_left: self.clocks[seat],
            deadline: decision_deadline.min(self.watchdog),
            watchdog: self.watchdog,
        };
        // The player is given the deadline; the referee also enforces the
        // watchdog itself in case a player ignores it.
        // The other seats are paused while this one thinks (see
        // `pause_others`), as soon as they are idle, at the latest after
        // PAUSE_GRACE.
        self.players[seat].mark_stderr(stderr::Turn::Ply(self.game.plies()));
        let hold = (&mut self.stopped, &mut self.watchdog, self.stall.as_mut());
        let answer = answer_of(self.players, seat, &ask, hold, spec.watchdog).await;
        // A player that does not time itself (the built-in ones) is timed
        // here; a bot's time is measured from its request's write.
        let elapsed = answer.as_ref().map_or(Duration::ZERO, |a| {
            a.elapsed.unwrap_or_else(|| asked.elapsed())
        });
        self.unseen[seat].clear();
        if let Some(f) = answer
            .as_ref()
            .ok()
            .and_then(|_| clock_ran_out(self.clocks[seat], elapsed))
        {
            return Ok(Turn::Forfeit(seat, f));
        }
        let answer = match answer {
            Ok(a) => a,
            Err(mut f) => {
                // The watchdog came first: a stall, said with what the
                // player saw (a line begun without its newline, ...).
                if f.kind == ForfeitKind::Timeout && self.watchdog < decision_deadline {
                    f = Fault::new(
                        ForfeitKind::Stall,
                        format!("game watchdog of {:?} expired: {}", spec.watchdog, f.detail),
                    );
                }
                return Ok(Turn::Forfeit(seat, f));
            }
        };
        // The option must be one of `legal`, exactly: the engine's parser
        // is more forgiving (case, spaces) than the protocol.
        let shown = || crate::protocol::truncate(answer.option.as_bytes(), player::DETAIL_MAX);
        if !legal.contains(&answer.option) {
            let asked = self.asked(seat);
            let detail = format!(
                "`{}` is not one of the legal options ({}; exactly as written) of {asked}{}{}",
                shown(),
                listed(&legal),
                not_ascii(&answer.option),
                near_miss(&answer.option, &legal)
            );
            // The player may know better what happened (a bot's answer
            // written twice, the first read in this request's place).
            let f = self.players[seat]
                .explain_illegal(&answer.option, Fault::new(ForfeitKind::Illegal, detail))
                .await;
            return Ok(Turn::Forfeit(seat, f));
        }
        let decision = match self.game.play(&answer.option) {
            Ok(d) => d.clone(),
            Err(e) => {
                let asked = self.asked(seat);
                let detail = format!("`{}` is not legal in {asked}; engine: {e}", shown());
                let f = Fault::new(ForfeitKind::Illegal, detail);
                return Ok(Turn::Forfeit(seat, f));
            }
        };
        if let (Some(left), Some(c)) = (self.clocks[seat].as_mut(), spec.time.clock) {
            *left = left.saturating_sub(elapsed) + c.increment;
        }
        self.record(decision, Origin::Asked(elapsed));
        Ok(Turn::Decided)
    }

    /// The decision `seat` is asked for, as a fault's detail names it: the
    /// request's `seq` (a bot's), the ply and the kind of decision
    /// (`request seq 3 (ply 2, decision `sow`)`).
    fn asked(&self, seat: usize) -> String {
        let what = format!(
            "ply {}, decision `{}`",
            self.game.plies(),
            self.game.decision_kind()
        );
        match self.players[seat].request_seq() {
            Some(seq) => format!("request seq {seq} ({what})"),
            None => format!("the request of {what}"),
        }
    }

    /// Records one decision, as the engine canonically wrote it, and queues
    /// it for every seat that has not seen it (the seat that chose an asked
    /// decision has).
    fn record(&mut self, d: Decision, origin: Origin) {
        let (opening, elapsed) = match origin {
            Origin::Opening => (true, Duration::ZERO),
            Origin::Forced => (false, Duration::ZERO),
            Origin::Asked(elapsed) => (false, elapsed),
        };
        let chooser = matches!(origin, Origin::Asked(_)).then_some(d.seat);
        let record = DecisionRecord {
            seat: d.seat,
            ply: d.ply,
            option: d.option,
            forced: d.forced,
            opening,
            elapsed_us: elapsed.as_micros() as u64,
        };
        let msg = record.msg();
        for (seat, unseen) in self.unseen.iter_mut().enumerate() {
            if Some(seat) != chooser {
                unseen.push(msg.clone());
            }
        }
        self.decisions.push(record);
    }

    /// The last decision recorded (after [`Turn::Decided`]).
    fn last(&self) -> &DecisionRecord {
        &self.decisions[self.decisions.len() - 1]
    }

    /// Ends the game: the report (the forfeit's, or the rules' outcome), the
    /// `Forfeit` and `Ended` events, then game end to every player with what
    /// it has not seen yet.
    async fn finish(
        mut self,
        forfeit: Option<(usize, Fault)>,
        on_event: &mut (dyn FnMut(&Event<'_>) + Send),
    ) -> GameReport {
        // Output nobody asked for belongs to this game: a second reply to
        // the last request, a daemon writing to the bot's stdout. Found
        // when a seat is ruled at fault, it came first, and is the fault.
        let forfeit = match forfeit {
            Some((seat, f)) if !f.unasked => {
                Some(self.unasked_first(seat, f.kind).await.unwrap_or((seat, f)))
            }
            None => self.stray_output(),
            f => f,
        };
        if let Some((seat, fault)) = &forfeit {
            self.players[*seat].forfeited();
            on_event(&Event::Forfeit { seat: *seat, fault });
        }
        let mut report = self.report(forfeit);
        on_event(&Event::Ended { report: &report });
        self.tell_end(&report).await;
        report.stderr = self.take_stderr();
        report
    }

    /// What each seat wrote on stderr in this game, for the seats whose
    /// stderr is kept and that wrote something.
    fn take_stderr(&mut self) -> Vec<SeatStderr> {
        self.players
            .iter_mut()
            .enumerate()
            .filter_map(|(seat, p)| p.take_stderr(seat))
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// The first seat that wrote output it was not asked for, if any
    /// (the game ended by the rules: [`Player::quiet_at_end`]).
    fn stray_output(&mut self) -> Option<(usize, Fault)> {
        self.players
            .iter_mut()
            .enumerate()
            .find_map(|(seat, p)| p.quiet_at_end().err().map(|f| (seat, f)))
    }

    /// Output another seat than `faulted` wrote unasked, or its leaving
    /// (its pipe at its end: a crash), found in its pipe
    /// once `faulted` was ruled at fault (`kind`): it was written before
    /// the referee saw that fault (a timeout: before the time ran out; an
    /// answer or an exit: before it was read), so that fault, the first,
    /// is ruled (protocol.md, "Errors"). Pipes keep no time: of several
    /// seats that wrote, the first in seat order is ruled.
    async fn unasked_first(&mut self, faulted: usize, kind: ForfeitKind) -> Option<(usize, Fault)> {
        let before = match kind {
            ForfeitKind::Timeout | ForfeitKind::Stall => "its time ran out",
            ForfeitKind::Illegal => "its illegal answer",
            ForfeitKind::BadJson => "its line that was not JSON",
            ForfeitKind::LineTooLong => "its line that was too long",
            ForfeitKind::Protocol => "its answer that broke the protocol",
            ForfeitKind::Crash => "it crashed",
            ForfeitKind::Memory => "it was killed at its memory limit",
        };
        let when = format!("while seat {faulted} was asked, before {before}");
        for (seat, p) in self.players.iter_mut().enumerate() {
            if seat != faulted {
                if let Some(f) = p.unasked_output(&when).await {
                    return Some((seat, f));
                }
            }
        }
        None
    }

    fn report(&mut self, forfeit: Option<(usize, Fault)>) -> GameReport {
        let n = self.players.len();
        let (scores, reason, offender, detail) = match (forfeit, self.game.outcome()) {
            (Some((seat, fault)), _) => (
                forfeit_scores(n, seat),
                EndReason::Forfeit(fault.kind),
                Some(seat),
                Some(fault.detail),
            ),
            (None, Some(o)) => (o.scores(), EndReason::Rules(o.reason), None, None),
            // Unreachable: turns end only on an outcome or a forfeit.
            (None, None) => (Vec::new(), EndReason::Unplayable, None, None),
        };
        GameReport {
            game_id: self.spec.game_id.clone(),
            variant: self.spec.variant,
            players: n,
            names: self.names.clone(),
            scores,
            reason,
            offender,
            detail,
            plies: self.game.plies(),
            decisions: std::mem::take(&mut self.decisions),
            final_state: self.game.snapshot(),
            duration: self.started.elapsed(),
            stderr: Vec::new(),
        }
    }

    async fn tell_end(&mut self, report: &GameReport) {
        for (seat, p) in self.players.iter_mut().enumerate() {
            // Each player gets its own second: one that does not read its
            // stdin cannot make the others miss their game_end.
            p.mark_stderr(stderr::Turn::END);
            let e = End {
                game_id: &report.game_id,
                scores: &report.scores,
                reason: report.reason.name(),
                offender: report.offender,
                since: &self.unseen[seat],
                state: &report.final_state,
                deadline: Instant::now() + Duration::from_secs(1),
            };
            p.end(&e).await;
        }
    }
}

/// Where a decision came from.
enum Origin {
    /// The spec's opening: applied without asking.
    Opening,
    /// The only option: applied without asking.
    Forced,
    /// Asked of its seat, which took this long.
    Asked(Duration),
}

pub use crate::bot::{PAUSE_AFTER, PAUSE_GRACE};

/// The decision of `players[seat]` (`ask`), the other seats paused
/// meanwhile (see [`pause_others`], as soon as they are idle, at the
/// latest after [`PAUSE_GRACE`]), under the referee's own hold on the
/// game's `watchdog` (`hold`: the stops seen, the watchdog's instant and
/// its timer), moved past the referee's own stops ([`past_stops`]).
async fn answer_of(
    players: &mut [&mut dyn Player],
    seat: usize,
    ask: &Ask<'_>,
    (stopped, watchdog_at, mut stall): (
        &mut Duration,
        &mut Instant,
        std::pin::Pin<&mut tokio::time::Sleep>,
    ),
    watchdog: Duration,
) -> Result<player::Answer, Fault> {
    let (before, rest) = players.split_at_mut(seat);
    let (mover, after) = rest.split_at_mut(1);
    let mut others: Vec<&mut &mut dyn Player> = before.iter_mut().chain(after.iter_mut()).collect();
    let decide = mover[0].decide(ask);
    tokio::pin!(decide);
    let pausing = pause_others(&mut others);
    tokio::pin!(pausing);
    let mut paused = false;
    loop {
        tokio::select! {
            biased;
            answer = &mut decide => return answer,
            () = &mut pausing, if !paused => paused = true,
            () = stall.as_mut() => {
                // Not while the referee itself was stopped (its SIGCONT's
                // handler may run a moment after this thread woke).
                tokio::time::sleep(Duration::from_millis(5)).await;
                if !past_stops(stopped, watchdog_at, stall.as_mut()) {
                    return Err(Fault::new(ForfeitKind::Stall, format!(
                        "no answer within the game's watchdog of {watchdog:?} (the decision's own deadline ignored)"
                    )));
                }
            }
        }
    }
}

/// Pauses every player of `others` (they are not to move), from
/// [`PAUSE_AFTER`] on: each as soon as it is idle (looked at every
/// millisecond), all after [`PAUSE_GRACE`].
async fn pause_others(others: &mut [&mut &mut dyn Player]) {
    let until = Instant::now() + PAUSE_GRACE;
    let mut left: Vec<usize> = (0..others.len()).collect();
    tokio::time::sleep(PAUSE_AFTER).await;
    loop {
        let force = Instant::now() >= until;
        left.retain(|&i| !others[i].pause(force));
        if left.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Moves the game's watchdog (and the referee's hold on it, `stall`) past
/// the time this process spent stopped since `seen` (docs/league.md: the
/// time the referee spends stopped is not charged to a bot); whether it
/// moved.
fn past_stops(
    seen: &mut Duration,
    watchdog: &mut Instant,
    stall: std::pin::Pin<&mut tokio::time::Sleep>,
) -> bool {
    let now = crate::host::stopped();
    let Some(by) = now.checked_sub(*seen).filter(|d| !d.is_zero()) else {
        return false;
    };
    *seen = now;
    *watchdog = player::later(*watchdog, by);
    let hold = stall.deadline() + by;
    stall.reset(hold);
    true
}

/// protocol.md, "Limits": a reply read past the decision time is taken
/// when it was already waiting (the referee's own delay is not the
/// bot's), but never past the clock (`left`), which would otherwise stop
/// at zero and be enforced no more: a reply that took `elapsed`, longer
/// than that, is a timeout.
fn clock_ran_out(left: Option<Duration>, elapsed: Duration) -> Option<Fault> {
    let left = left.filter(|&left| elapsed > left)?;
    let detail = format!(
        "the game clock ran out: the reply took {:.1} ms with {:.1} ms left",
        elapsed.as_secs_f64() * 1e3,
        left.as_secs_f64() * 1e3
    );
    Some(Fault::new(ForfeitKind::Timeout, detail))
}

#[cfg(test)]
mod tests {
    use super::{near_miss, not_ascii};
    use crate::engine::{Game, Settings, Variant};

    /// The note on a look-alike holds for every game: no legal option of
    /// any game (in the first 300 plies of a game per seat count, the
    /// first option taken each time) is anything but ASCII.
    #[test]
    fn every_option_is_ascii_so_a_look_alike_is_named() {
        for v in Variant::ALL {
            for &n in v.player_counts() {
                let mut game = Game::new(v, &Settings::with_players(n)).unwrap();
                for ply in 0..300 {
                    if game.to_decide().is_none() {
                        break;
                    }
                    let legal = game.legal();
                    assert!(
                        legal.iter().all(|o| not_ascii(o).is_empty()),
                        "{v} {legal:?}"
                    );
                    let pick = legal[ply % legal.len()].clone();
                    game.play(&pick).unwrap();
                }
            }
        }
        // Cyrillic `х` (U+0445) in place of the Latin `x`.
        assert_eq!(
            not_ascii("\u{445}i2"),
            " (it holds U+0445, which is not ASCII: every option is)"
        );
    }

    /// A legal option written otherwise is named, with how it differs;
    /// anything else gets no such note.
    #[test]
    fn a_legal_option_written_otherwise_is_named() {
        let legal = ["2a".to_string(), "G".to_string()];
        assert_eq!(
            near_miss("2A", &legal),
            "; `2a` is legal, and this is it in another case: send the option exactly as listed"
        );
        assert!(near_miss(" G\t", &legal)
            .contains("`G` is legal, and this is it with white space around it:"));
        assert!(near_miss("\u{ff12}\u{ff41}", &legal).contains("it in fullwidth characters:"));
        assert!(near_miss("\u{3000}g", &legal)
            .contains("it in another case, with white space around it, in fullwidth characters:"));
        assert!(near_miss("G\u{0}", &legal)
            .contains("`G` is legal, and this is it with a control character in it (a NUL"));
        assert!(near_miss("\u{421}", &["C".to_string()])
            .contains("`C` is legal, and this looks like it"));
        // What shows nothing, or draws on the letter before it, is named
        // as such, not as a letter of another script.
        for (sent, said) in [
            ("\u{feff}2a", "an invisible character in it, U+FEFF:"),
            ("2a\u{200b}", "an invisible character in it, U+200B:"),
            ("2\u{ad}a", "an invisible character in it, U+00AD:"),
            ("2a\u{2060}", "an invisible character in it, U+2060:"),
            (
                "2a\u{301}",
                "a combining mark (drawn on the character before it) in it, U+0301:",
            ),
        ] {
            let told = near_miss(sent, &legal);
            assert!(
                told.starts_with(&format!("; `2a` is legal, and this is it with {said}")),
                "{told}"
            );
        }
        assert_eq!(
            near_miss("\"G\"", &legal),
            "; `G` is legal, and this is it in quotes of its own: the option was encoded twice (send the string itself, encoded once)"
        );
        assert_eq!(near_miss("Z9", &legal), "");
        assert_eq!(near_miss("\"Z9\"", &legal), "");
        assert_eq!(near_miss("", &legal), "");
    }

    /// An option that is none written otherwise: with other separators,
    /// the first part of legal ones, or a place in `legal` as a string.
    #[test]
    fn an_option_spelled_otherwise_is_told_what_it_looks_like() {
        let legal: Vec<String> = ["6e:NW", "2a:E", "2a:W", "xi7"].map(String::from).to_vec();
        assert!(near_miss("6e-NW", &legal)
            .starts_with("; `6e:NW` is legal, and this is it with other separators"));
        assert!(near_miss("6E NW", &legal).contains("`6e:NW` is legal"));
        assert_eq!(
            near_miss("2a", &legal),
            "; it is the first part of 2 legal option(s) (2a:E 2a:W): an option names all its parts"
        );
        // `x7` is no part of `xi7` (a part ends at a separator).
        assert_eq!(near_miss("x7", &legal), "");
        // `i7` is its end, its start left out.
        assert_eq!(
            near_miss("i7", &legal),
            "; it is the end of `xi7`, which is legal: an option is written whole (the rules docs give each game's notation)"
        );
        assert_eq!(
            near_miss("3", &legal),
            "; it looks like a place in `legal` (legal[3] is `xi7`): send the option itself"
        );
        assert_eq!(near_miss("4", &legal), "");
        // Where options are numbers (F.I.L.O's), a number is an option.
        assert_eq!(
            near_miss(
                "3",
                &[
                    "1".to_string(),
                    "2".to_string(),
                    "5".to_string(),
                    "9".to_string()
                ]
            ),
            ""
        );
    }
}
