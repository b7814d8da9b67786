//! Hackaback (seed 002, Andrew B. Perkis 2001): the rules and nothing else.
//! Owns the loop of 12 holes and the store, White's set-up, single-lap
//! sowing with the store rule, the store win and the two draw rules; must
//! not touch processes, JSON transport or other games. Documented in
//! docs/rules/hackaback.md.
//!
//! The loop (a ruling, docs/rules/hackaback.md) is kept as a ring of 13 places in Black's sowing
//! order: b1..b6 (0..5), the store S (6), w6..w1 (7..12). Black sows up the
//! ring, White down it.

use super::{EngineError, Outcome, Reason, Rules, Seat, Settings, Variant};
use std::fmt;

/// Seat 0 is White (her set-up comes first), seat 1 Black (a ruling, docs/rules/hackaback.md).
pub const WHITE: Seat = 0;
pub const BLACK: Seat = 1;
/// Places on the ring: 12 holes and the store.
pub const RING: usize = 13;
/// The ring index of the store S.
pub const STORE: u8 = 6;
/// Seeds per player: Black 3 in each of his 6 holes, White 6.
pub const SEEDS: [u8; 2] = [6, 18];
/// "If the game is still proceeding after 120 moves (i.e. 240 half
/// moves), then White may claim a draw."
pub const DRAW_CLAIM_AFTER: u32 = 240;
/// Positions kept inline for the repetition rule (see [`Hackaback`]).
pub const WINDOW: usize = 1024;

/// The letter of a colour by seat.
const COLOUR_LETTER: [char; 2] = ['W', 'B'];

/// The name of a ring place: `b1`..`b6`, `S`, `w1`..`w6`.
pub fn place_name(i: u8) -> String {
    match i {
        0..=5 => ['b', char::from(b'1' + i)].iter().collect(),
        STORE => "S".to_string(),
        7..=12 => ['w', char::from(b'0' + 13 - i)].iter().collect(),
        _ => format!("?{i}"),
    }
}

/// Parses a hole name (`b1`..`b6`, `w1`..`w6`; not the store).
pub fn parse_hole(s: &str) -> Option<u8> {
    let b = s.as_bytes();
    if b.len() != 2 || !(b'1'..=b'6').contains(&b[1]) {
        return None;
    }
    let k = b[1] - b'0';
    match b[0] {
        b'b' => Some(k - 1),
        b'w' => Some(13 - k),
        _ => None,
    }
}

/// The next place in `seat`'s sowing direction.
fn next(i: u8, seat: Seat) -> u8 {
    if seat == BLACK {
        (i + 1) % RING as u8
    } else {
        (i + RING as u8 - 1) % RING as u8
    }
}

/// An option of one decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opt {
    /// A hole (ring index): White's set-up placement, or the hole to sow.
    Hole(u8),
    /// The colour of the next seed dropped into a hole, by seat.
    Colour(u8),
    /// White's draw claim after 240 sowing turns.
    Draw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// White places her six seeds, one decision each.
    Setup,
    /// First decision of a sowing turn.
    Sow,
    /// The hand holds both colours: which goes into the next hole.
    Colour,
    Over,
}

/// A Hackaback game. Fixed-size, `Clone` without allocation.
///
/// Repetition needs the positions seen before. Seeds never leave the store,
/// so a position can only recur while both store counts are unchanged: the
/// state keeps the exact encodings ([`Hackaback::position_code`]) of all
/// the positions since the last store change. The first [`WINDOW`] of them
/// live in an inline array (no heap: within the default ply cap of 1000 a
/// stretch never needs more); any further ones spill into `spill`, a `Vec`
/// that stays empty, and so allocation-free to clone, until then. Nothing
/// is ever forgotten, so detection is exact for any ply cap.
#[derive(Clone, PartialEq, Eq)]
pub struct Hackaback {
    /// Seeds per ring place, by colour (seat: 0 White, 1 Black).
    seeds: [[u8; RING]; 2],
    phase: Phase,
    mover: u8,
    /// White's seeds placed in the set-up.
    placed: u8,
    /// Seeds in hand, by colour.
    hand: [u8; 2],
    /// The ring place the last seed went to (or the origin).
    at: u8,
    plies: u32,
    /// Completed sowing turns (the set-up does not count).
    sowing_turns: u32,
    max_plies: u32,
    outcome: Option<Outcome>,
    /// Store counts of the positions in `window`.
    window_stores: [u8; 2],
    window_len: u16,
    window: [u64; WINDOW],
    /// Positions of the current stretch beyond the first `WINDOW`.
    spill: Vec<u64>,
}

/// The state a search needs to tell positions apart: everything but the
/// repetition history (`window`, `spill`), which a transposition table
/// keyed on this hash ignores.
impl std::hash::Hash for Hackaback {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.seeds.hash(h);
        self.phase.hash(h);
        self.mover.hash(h);
        self.placed.hash(h);
        self.hand.hash(h);
        self.at.hash(h);
        self.plies.hash(h);
        self.sowing_turns.hash(h);
        self.outcome.hash(h);
    }
}

impl fmt::Debug for Hackaback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hackaback")
            .field("seeds", &self.seeds)
            .field("phase", &self.phase)
            .field("mover", &self.mover)
            .field("hand", &self.hand)
            .field("at", &self.at)
            .field("plies", &self.plies)
            .field("sowing_turns", &self.sowing_turns)
            .field("outcome", &self.outcome)
            .field("history", &(self.window_len as usize + self.spill.len()))
            .finish_non_exhaustive()
    }
}

impl Hackaback {
    /// A position at the start of a sowing turn, for tests and search bots.
    ///
    /// `holes` lists `(hole name, white seeds, black seeds)`; unlisted holes
    /// are empty. `store` is `[white, black]` in the store. Every seed must
    /// be somewhere (White 6, Black 18). `sowing_turns` is the number of
    /// sowing turns already completed (for the draw claim); the ply count
    /// is set to `sowing_turns + 1` (the set-up). The position is the first
    /// entry of the repetition history.
    pub fn from_position(
        settings: &Settings,
        holes: &[(&str, u8, u8)],
        store: [u8; 2],
        to_move: Seat,
        sowing_turns: u32,
    ) -> Result<Hackaback, EngineError> {
        let mut g = Hackaback::new(settings)?;
        let bad = |why: String| EngineError::Setting {
            key: "position".into(),
            why,
        };
        g.seeds = [[0; RING]; 2];
        for &(name, w, b) in holes {
            let h = parse_hole(name).ok_or_else(|| bad(format!("no hole `{name}`")))?;
            g.seeds[WHITE][h as usize] += w;
            g.seeds[BLACK][h as usize] += b;
        }
        g.seeds[WHITE][STORE as usize] = store[WHITE];
        g.seeds[BLACK][STORE as usize] = store[BLACK];
        for s in [WHITE, BLACK] {
            let total: u32 = g.seeds[s].iter().map(|&x| x as u32).sum();
            if total != SEEDS[s] as u32 {
                return Err(bad(format!(
                    "{} seeds of {} (must be {})",
                    total, COLOUR_LETTER[s], SEEDS[s]
                )));
            }
        }
        if to_move > 1 {
            return Err(bad(format!("no seat {to_move}")));
        }
        g.placed = SEEDS[WHITE];
        g.mover = to_move as u8;
        g.phase = Phase::Sow;
        g.sowing_turns = sowing_turns;
        g.plies = sowing_turns + 1;
        g.record_position();
        Ok(g)
    }

    /// Seeds of colour (seat) `seat` at a ring place.
    pub fn seeds(&self, place: u8, seat: Seat) -> u8 {
        self.seeds[seat][place as usize]
    }

    /// `[white, black]` seeds in the store.
    pub fn store(&self) -> [u8; 2] {
        [
            self.seeds[WHITE][STORE as usize],
            self.seeds[BLACK][STORE as usize],
        ]
    }

    pub fn sowing_turns(&self) -> u32 {
        self.sowing_turns
    }

    /// The position (board and player to move) as an exact code, valid for
    /// comparison between positions with the same store counts: each
    /// colour's hole counts in unary (k ones then a zero, 12 holes), Black
    /// then White, then the mover. At most 18 + 12 + 6 + 12 + 1 = 49 bits.
    pub fn position_code(&self) -> u64 {
        let mut code = 0u64;
        for colour in [BLACK, WHITE] {
            for i in (0..RING as u8).filter(|&i| i != STORE) {
                let k = self.seeds[colour][i as usize] as u32;
                code = (code << (k + 1)) | (((1u64 << k) - 1) << 1);
            }
        }
        (code << 1) | self.mover as u64
    }

    /// Enters the position at the start of a sowing turn into the history;
    /// returns how many times it occurred before.
    fn record_position(&mut self) -> usize {
        if self.store() != self.window_stores {
            self.forget_positions();
        }
        self.remember(self.position_code())
    }

    /// A store count changed: no earlier position can recur, and the
    /// repetition history starts again.
    fn forget_positions(&mut self) {
        self.window_stores = self.store();
        self.window_len = 0;
        self.spill.clear();
    }

    /// Enters a position code into the history; returns how many times it
    /// occurred before.
    fn remember(&mut self, code: u64) -> usize {
        let seen = self.window[..self.window_len as usize]
            .iter()
            .chain(&self.spill)
            .filter(|&&c| c == code)
            .count();
        if (self.window_len as usize) < WINDOW {
            self.window[self.window_len as usize] = code;
            self.window_len += 1;
        } else {
            self.spill.push(code);
        }
        seen
    }

    /// Sows on from `self.at` until the hand is empty or a colour must be
    /// chosen.
    fn sow_on(&mut self) {
        let m = self.mover as usize;
        while self.hand[0] + self.hand[1] > 0 {
            let to = next(self.at, m);
            if to == STORE {
                // "including the large storage cup, if he has still one of
                // his own seeds in hand ... If a player has no seeds of his
                // color, when he reaches the store, he skips it."
                if self.hand[m] > 0 {
                    self.hand[m] -= 1;
                    self.seeds[m][STORE as usize] += 1;
                }
                self.at = STORE;
                continue;
            }
            if self.hand[0] > 0 && self.hand[1] > 0 {
                self.phase = Phase::Colour;
                return;
            }
            let colour = if self.hand[0] > 0 { 0 } else { 1 };
            self.drop_seed(colour);
        }
        self.end_turn();
    }

    fn drop_seed(&mut self, colour: usize) {
        let to = next(self.at, self.mover as usize);
        self.seeds[colour][to as usize] += 1;
        self.hand[colour] -= 1;
        self.at = to;
    }

    fn finish(&mut self, outcome: Outcome) {
        self.outcome = Some(outcome);
        self.phase = Phase::Over;
    }

    /// End of a turn: the store win, then repetition, then the ply cap
    /// (the rulings (docs/rules/hackaback.md) order).
    fn end_turn(&mut self) {
        let sowing = self.phase != Phase::Setup;
        self.plies += 1;
        if sowing {
            self.sowing_turns += 1;
            // "The first player to get all his seeds into the store wins."
            let m = self.mover as usize;
            if self.seeds[m][STORE as usize] == SEEDS[m] {
                // Its store changed, and no turn starts after: the
                // history is empty (`repetitions` 0, as its definition
                // says; it showed the turns before this one).
                self.forget_positions();
                self.finish(Outcome::win(2, m, Reason::Store));
                return;
            }
        }
        self.mover = 1 - self.mover;
        self.phase = Phase::Sow;
        if self.record_position() >= 2 {
            self.finish(Outcome::draw(2, Reason::Repetition));
            return;
        }
        if self.plies >= self.max_plies {
            self.finish(Outcome::draw(2, Reason::MaxPlies));
        }
    }

    fn draw_offered(&self) -> bool {
        self.phase == Phase::Sow
            && self.mover as usize == WHITE
            && self.sowing_turns >= DRAW_CLAIM_AFTER
    }

    fn is_legal(&self, opt: Opt) -> bool {
        let m = self.mover as usize;
        match (self.phase, opt) {
            (Phase::Setup, Opt::Hole(h)) => (7..RING as u8).contains(&h),
            (Phase::Sow, Opt::Hole(h)) => {
                (h as usize) < RING && h != STORE && self.seeds[m][h as usize] > 0
            }
            (Phase::Sow, Opt::Draw) => self.draw_offered(),
            (Phase::Colour, Opt::Colour(c)) => c < 2 && self.hand[c as usize] > 0,
            _ => false,
        }
    }
}

/// Holes in the order options are listed: b1..b6, then w1..w6.
const HOLE_ORDER: [u8; 12] = [0, 1, 2, 3, 4, 5, 12, 11, 10, 9, 8, 7];

/// The names of [`HOLE_ORDER`]'s holes (`place_name`), which sort in that
/// order too.
const HOLE_NAMES: [&str; 12] = [
    "b1", "b2", "b3", "b4", "b5", "b6", "w1", "w2", "w3", "w4", "w5", "w6",
];

impl Rules for Hackaback {
    type Opt = Opt;
    const VARIANT: Variant = Variant::Hackaback;

    fn new(settings: &Settings) -> Result<Self, EngineError> {
        settings.only_players(Variant::Hackaback.player_counts())?;
        settings.only_options(&[])?;
        let mut seeds = [[0; RING]; 2];
        // "Black has three black seeds in each hole on his side."
        for hole in &mut seeds[BLACK][..6] {
            *hole = 3;
        }
        Ok(Hackaback {
            seeds,
            phase: Phase::Setup,
            mover: WHITE as u8,
            placed: 0,
            hand: [0; 2],
            at: 0,
            plies: 0,
            sowing_turns: 0,
            max_plies: settings.max_plies,
            outcome: None,
            window_stores: [0; 2],
            window_len: 0,
            window: [0; WINDOW],
            spill: Vec::new(),
        })
    }

    fn players(&self) -> usize {
        2
    }

    fn to_decide(&self) -> Option<Seat> {
        (self.phase != Phase::Over).then_some(self.mover as usize)
    }

    fn decision_kind(&self) -> &'static str {
        match self.phase {
            Phase::Setup => "place",
            Phase::Sow => "sow",
            Phase::Colour => "colour",
            Phase::Over => "none",
        }
    }

    /// Order: set-up w1..w6; sowing holes b1..b6 then w1..w6, then `draw`
    /// when offered; colours B, W.
    fn options(&self, out: &mut Vec<Opt>) {
        out.clear();
        let m = self.mover as usize;
        match self.phase {
            Phase::Setup => out.extend(HOLE_ORDER[6..].iter().map(|&h| Opt::Hole(h))),
            Phase::Sow => {
                out.extend(
                    HOLE_ORDER
                        .iter()
                        .filter(|&&h| self.seeds[m][h as usize] > 0)
                        .map(|&h| Opt::Hole(h)),
                );
                if self.draw_offered() {
                    out.push(Opt::Draw);
                }
            }
            Phase::Colour => {
                for c in [BLACK, WHITE] {
                    if self.hand[c] > 0 {
                        out.push(Opt::Colour(c as u8));
                    }
                }
            }
            Phase::Over => {}
        }
    }

    fn apply(&mut self, opt: Opt) -> Result<(), EngineError> {
        if self.phase == Phase::Over {
            return Err(EngineError::GameOver);
        }
        if !self.is_legal(opt) {
            return Err(EngineError::Illegal(self.notation(opt)));
        }
        match opt {
            Opt::Hole(h) if self.phase == Phase::Setup => {
                // "White may distribute his six white seeds in any way he
                // likes on the other side."
                self.seeds[WHITE][h as usize] += 1;
                self.placed += 1;
                if self.placed == SEEDS[WHITE] {
                    self.end_turn();
                }
            }
            Opt::Hole(h) => {
                // "picks up the contents of any hole, which contains at
                // least one seed of his color".
                self.hand = [self.seeds[0][h as usize], self.seeds[1][h as usize]];
                self.seeds[0][h as usize] = 0;
                self.seeds[1][h as usize] = 0;
                self.at = h;
                self.sow_on();
            }
            Opt::Colour(c) => {
                self.drop_seed(c as usize);
                self.sow_on();
            }
            Opt::Draw => self.finish(Outcome::draw(2, Reason::DrawClaim)),
        }
        Ok(())
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn plies(&self) -> u32 {
        self.plies
    }

    fn notation(&self, opt: Opt) -> String {
        match opt {
            Opt::Hole(h) if (h as usize) < RING => place_name(h),
            Opt::Hole(h) => format!("?{h}"),
            Opt::Colour(c) => COLOUR_LETTER
                .get(c as usize)
                .map_or_else(|| format!("?{c}"), |l| l.to_string()),
            Opt::Draw => "draw".to_string(),
        }
    }

    fn parse(&self, s: &str) -> Result<Opt, EngineError> {
        match s {
            "draw" => Ok(Opt::Draw),
            "W" => Ok(Opt::Colour(WHITE as u8)),
            "B" => Ok(Opt::Colour(BLACK as u8)),
            _ => parse_hole(s)
                .map(Opt::Hole)
                .ok_or_else(|| EngineError::Unparsable(s.to_string())),
        }
    }

    /// `holes`: hole name -> `{"W": n, "B": n}`; `store`: `{"W", "B"}`;
    /// `phase`; `sowing_turns`; `draw_offered`; `hand` (`{"W", "B"}`) and
    /// `at` (the last place sown) while a sowing is pending, else null;
    /// `repetitions`: how many positions the repetition history holds (the
    /// sowing-turn starts since the last store change, this one included).
    fn write_snapshot(&self, o: &mut super::json::Obj<'_>) {
        let both = |o: &mut super::json::Obj<'_>, key: &str, place: usize| {
            o.obj(key, |m| {
                m.uint("B", u64::from(self.seeds[BLACK][place]));
                m.uint("W", u64::from(self.seeds[WHITE][place]));
            })
        };
        let pending = self.phase == Phase::Colour;
        match pending {
            true => o.str("at", &place_name(self.at)),
            false => o.null("at"),
        }
        o.bool("draw_offered", self.draw_offered());
        match pending {
            true => o.obj("hand", |m| {
                m.uint("B", u64::from(self.hand[BLACK]));
                m.uint("W", u64::from(self.hand[WHITE]));
            }),
            false => o.null("hand"),
        }
        o.obj("holes", |m| {
            for (h, name) in HOLE_ORDER.iter().zip(HOLE_NAMES) {
                both(m, name, *h as usize);
            }
        });
        o.str(
            "phase",
            match self.phase {
                Phase::Setup => "setup",
                Phase::Over => "over",
                _ => "sowing",
            },
        );
        o.uint(
            "repetitions",
            (self.window_len as usize + self.spill.len()) as u64,
        );
        o.uint("sowing_turns", u64::from(self.sowing_turns));
        both(o, "store", STORE as usize);
        o.uint("white_placed", u64::from(self.placed));
    }

    fn render(&self) -> String {
        let cell = |i: u8| {
            let (w, b) = (self.seeds[WHITE][i as usize], self.seeds[BLACK][i as usize]);
            match (w, b) {
                (0, 0) => ".".to_string(),
                (0, b) => format!("B{b}"),
                (w, 0) => format!("W{w}"),
                (w, b) => format!("W{w}B{b}"),
            }
        };
        let mut s = String::from("     ");
        for k in 1..=6 {
            s.push_str(&format!("{:<7}", format!("w{k}")));
        }
        s.push_str("\nW:   ");
        for h in (7..RING as u8).rev() {
            s.push_str(&format!("{:<7}", cell(h)));
        }
        s.push_str(&format!("  S: {}\nB:   ", cell(STORE)));
        for h in 0..6 {
            s.push_str(&format!("{:<7}", cell(h)));
        }
        s.push_str("\n     ");
        for k in 1..=6 {
            s.push_str(&format!("{:<7}", format!("b{k}")));
        }
        s.push('\n');
        if self.hand != [0, 0] {
            s.push_str(&format!(
                "hand after {}: W{} B{}\n",
                place_name(self.at),
                self.hand[WHITE],
                self.hand[BLACK]
            ));
        }
        s
    }

    fn check_invariants(&self) -> Result<(), String> {
        let placed = [self.placed, SEEDS[BLACK]];
        for s in [WHITE, BLACK] {
            let total: u32 =
                self.seeds[s].iter().map(|&x| x as u32).sum::<u32>() + self.hand[s] as u32;
            if total != placed[s] as u32 {
                return Err(format!(
                    "{} seeds not conserved: {} != {}",
                    COLOUR_LETTER[s], total, placed[s]
                ));
            }
        }
        if self.phase == Phase::Setup && self.seeds[WHITE][..=STORE as usize].iter().any(|&x| x > 0)
        {
            return Err("a white seed placed outside White's row".into());
        }
        match self.phase {
            Phase::Colour if self.hand[0] == 0 || self.hand[1] == 0 => {
                return Err("a colour decision without both colours in hand".into())
            }
            Phase::Setup | Phase::Sow if self.hand != [0, 0] => {
                return Err("seeds in hand between turns".into())
            }
            _ => {}
        }
        if !self.spill.is_empty() && (self.window_len as usize) < WINDOW {
            return Err("repetition history spilled before the window was full".into());
        }
        if self.phase == Phase::Sow && self.store() != self.window_stores {
            return Err("repetition window out of date".into());
        }
        if self.plies > self.max_plies {
            return Err("ply cap exceeded".into());
        }
        if (self.phase == Phase::Over) != self.outcome.is_some() {
            return Err("outcome and phase disagree".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testing::{legal, play};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use serde_json::json;

    /// `[white, black]` seeds in a hole.
    fn hole(g: &Hackaback, name: &str) -> [u8; 2] {
        let h = parse_hole(name).unwrap();
        [g.seeds(h, WHITE), g.seeds(h, BLACK)]
    }

    fn position(holes: &[(&str, u8, u8)], store: [u8; 2], to_move: Seat, turns: u32) -> Hackaback {
        Hackaback::from_position(&Settings::default(), holes, store, to_move, turns).unwrap()
    }

    /// The loop of the rulings (docs/rules/hackaback.md): Black b1..b6, S, w6..w1; White w1..w6, S,
    /// b6..b1.
    #[test]
    fn sowing_directions() {
        let walk = |start: &str, seat: Seat| {
            let mut i = parse_hole(start).unwrap();
            let mut v = Vec::new();
            for _ in 0..13 {
                i = next(i, seat);
                v.push(place_name(i));
            }
            v.join(" ")
        };
        assert_eq!(walk("b1", BLACK), "b2 b3 b4 b5 b6 S w6 w5 w4 w3 w2 w1 b1");
        assert_eq!(walk("w1", WHITE), "w2 w3 w4 w5 w6 S b6 b5 b4 b3 b2 b1 w1");
    }

    /// White's set-up: Black starts with 3 in each of his holes; White
    /// places 6 seeds on her side, one decision each (one ply), then Black
    /// makes the first sowing move.
    #[test]
    fn white_setup_then_black_sows() {
        let mut g = Hackaback::new(&Settings::default()).unwrap();
        assert_eq!(g.to_decide(), Some(WHITE));
        assert_eq!(g.decision_kind(), "place");
        assert_eq!(legal(&g), ["w1", "w2", "w3", "w4", "w5", "w6"]);
        let before = g.clone();
        assert_eq!(
            g.apply(Opt::Hole(0)),
            Err(EngineError::Illegal("b1".into()))
        );
        assert_eq!(g, before);
        play(&mut g, "w1 w1 w3 w6 w6");
        assert_eq!(g.plies(), 0);
        assert_eq!(g.to_decide(), Some(WHITE));
        play(&mut g, "w6");
        assert_eq!(g.plies(), 1);
        assert_eq!(g.sowing_turns(), 0);
        assert_eq!(hole(&g, "w1"), [2, 0]);
        assert_eq!(hole(&g, "w3"), [1, 0]);
        assert_eq!(hole(&g, "w6"), [3, 0]);
        assert_eq!(hole(&g, "b4"), [0, 3]);
        assert_eq!(g.to_decide(), Some(BLACK));
        assert_eq!(legal(&g), ["b1", "b2", "b3", "b4", "b5", "b6"]);
    }

    /// Store rule with an own seed in hand: it is dropped into the store
    /// (no choice). Black sows b6 (3 black): S, w6, w5. Then White sows w6
    /// (3 white + 1 black): a white seed into S, then colour choices.
    #[test]
    fn store_with_own_seed() {
        let mut g = Hackaback::new(&Settings::default()).unwrap();
        play(&mut g, "w1 w1 w3 w6 w6 w6 b6");
        assert_eq!(g.store(), [0, 1]);
        assert_eq!(hole(&g, "w6"), [3, 1]);
        assert_eq!(hole(&g, "w5"), [0, 1]);
        assert_eq!(hole(&g, "b6"), [0, 0]);
        assert_eq!(g.to_decide(), Some(WHITE));
        play(&mut g, "w6");
        // The white seed went into S without a decision; now b6.
        assert_eq!(g.store(), [1, 1]);
        assert_eq!(g.decision_kind(), "colour");
        assert_eq!(legal(&g), ["B", "W"]);
        play(&mut g, "B");
        // Only white seeds left: b5, b4 without asking.
        assert_eq!(hole(&g, "b6"), [0, 1]);
        assert_eq!(hole(&g, "b5"), [1, 3]);
        assert_eq!(hole(&g, "b4"), [1, 3]);
        assert_eq!(g.to_decide(), Some(BLACK));
        assert_eq!(g.plies(), 3);
    }

    /// Store rule without an own seed in hand: the store is skipped, never
    /// an opponent's seed in it. Black sows b5 (1 black, 2 white) putting
    /// the black seed in b6 first: S is skipped, the white seeds go to w6
    /// and w5. Putting a white seed first instead, the black seed still in
    /// hand must go into S.
    #[test]
    fn store_without_own_seed_and_colour_choice() {
        let start = position(
            &[("b5", 2, 1), ("w3", 4, 0), ("b1", 0, 17)],
            [0, 0],
            BLACK,
            0,
        );
        let mut g = start.clone();
        play(&mut g, "b5");
        assert_eq!(g.decision_kind(), "colour");
        assert_eq!(legal(&g), ["B", "W"]);
        play(&mut g, "B");
        assert_eq!(g.store(), [0, 0]);
        assert_eq!(hole(&g, "b6"), [0, 1]);
        assert_eq!(hole(&g, "w6"), [1, 0]);
        assert_eq!(hole(&g, "w5"), [1, 0]);
        assert_eq!(g.to_decide(), Some(WHITE));

        let mut g = start;
        play(&mut g, "b5 W");
        assert_eq!(g.store(), [0, 1]);
        assert_eq!(hole(&g, "b6"), [1, 0]);
        assert_eq!(hole(&g, "w6"), [1, 0]);
        assert_eq!(hole(&g, "w5"), [0, 0]);
        assert_eq!(g.to_decide(), Some(WHITE));
    }

    /// A lap never skips its origin (a ruling, docs/rules/hackaback.md): 13 seeds from b1 go
    /// round, one into S, and the 13th lands back in b1.
    #[test]
    fn full_lap_fills_origin() {
        let mut g = position(
            &[("b1", 0, 13), ("b2", 0, 5), ("w1", 6, 0)],
            [0, 0],
            BLACK,
            0,
        );
        play(&mut g, "b1");
        assert_eq!(g.store(), [0, 1]);
        assert_eq!(hole(&g, "b1"), [0, 1]);
        assert_eq!(hole(&g, "b2"), [0, 6]);
        assert_eq!(hole(&g, "w1"), [6, 1]);
    }

    /// Repetition: a 4-ply cycle (found by search, checked by hand: each
    /// step below is forced by the rules once the decisions are made) brings
    /// the position with Black to move back; its third occurrence, after
    /// the 8th ply, ends the game as a draw.
    #[test]
    fn repetition_draw() {
        // Black to move: w1 = W1 B1, w2 = B1, w4 = W1; S holds W4 B16.
        let mut g = position(
            &[("w1", 1, 1), ("w2", 0, 1), ("w4", 1, 0)],
            [4, 16],
            BLACK,
            0,
        );
        let start = g.position_code();
        let cycle = [
            // Black lifts w1 (W, B): B into b1, W into b2.
            "w1 B", // White lifts b2 (W) into b1: b1 = W1 B1.
            "b2",   // Black lifts w2 (B) into w1.
            "w2",   // White lifts b1 (W, B): W into w1, B into w2.
            "b1 W",
        ];
        for round in 0..2 {
            for (i, turn) in cycle.iter().enumerate() {
                assert_eq!(g.outcome(), None, "round {round}, before turn {i}");
                play(&mut g, turn);
            }
            assert_eq!(g.position_code(), start);
            assert_eq!(hole(&g, "w1"), [1, 1]);
            assert_eq!(hole(&g, "w2"), [0, 1]);
            assert_eq!(hole(&g, "b1"), [0, 0]);
        }
        assert_eq!(g.plies(), 9);
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::Repetition)));
    }

    /// Draw claim: once 240 sowing turns are completed, White's first
    /// decision also offers `draw` (listed last). Black never gets it.
    #[test]
    fn draw_claim_from_240_sowing_turns() {
        let mut g = position(
            &[("w1", 2, 0), ("b1", 0, 3), ("b4", 0, 2)],
            [4, 13],
            WHITE,
            239,
        );
        assert_eq!(legal(&g), ["w1"]);
        play(&mut g, "w1");
        assert_eq!(g.sowing_turns(), 240);
        assert_eq!(g.to_decide(), Some(BLACK));
        assert!(!legal(&g).contains(&"draw".to_string()));
        play(&mut g, "b4");
        assert_eq!(g.to_decide(), Some(WHITE));
        assert_eq!(g.sowing_turns(), 241);
        assert_eq!(legal(&g), ["w2", "w3", "draw"]);
        let plies = g.plies();
        play(&mut g, "draw");
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::DrawClaim)));
        assert_eq!(g.plies(), plies);
        // Not offered mid-turn, nor before 240.
        let g = position(
            &[("w1", 1, 1), ("b1", 0, 3), ("b4", 0, 2)],
            [5, 12],
            WHITE,
            241,
        );
        let mut h = g.clone();
        play(&mut h, "w1");
        assert_eq!(legal(&h), ["B", "W"]);
        let g = position(
            &[("w1", 2, 0), ("b1", 0, 3), ("b4", 0, 2)],
            [4, 13],
            WHITE,
            237,
        );
        assert_eq!(legal(&g), ["w1"]);
    }

    /// "The first player to get all his seeds into the store wins."
    #[test]
    fn store_win() {
        let mut g = position(&[("b6", 0, 1), ("w6", 1, 0)], [5, 17], BLACK, 10);
        play(&mut g, "b6");
        assert_eq!(g.store(), [5, 18]);
        assert_eq!(g.outcome(), Some(Outcome::win(2, BLACK, Reason::Store)));
        let mut g = position(&[("b6", 0, 1), ("w6", 1, 0)], [5, 17], WHITE, 10);
        play(&mut g, "w6");
        assert_eq!(g.outcome(), Some(Outcome::win(2, WHITE, Reason::Store)));
        // A white seed carried past S by Black does not count for White.
        let mut g = position(&[("b6", 1, 1), ("w2", 0, 3)], [5, 14], BLACK, 10);
        play(&mut g, "b6");
        assert_eq!(g.store(), [5, 15]);
        assert_eq!(hole(&g, "w6"), [1, 0]);
        assert_eq!(g.outcome(), None);
    }

    /// Repetition is one of the game's own end conditions, judged before
    /// the ply cap (a ruling, docs/rules/hackaback.md): the cycle of `repetition_draw` with the cap
    /// reached by the very turn that makes the third occurrence.
    #[test]
    fn repetition_before_the_ply_cap() {
        let s = Settings {
            max_plies: 9,
            ..Settings::default()
        };
        let holes = [("w1", 1, 1), ("w2", 0, 1), ("w4", 1, 0)];
        let mut g = Hackaback::from_position(&s, &holes, [4, 16], BLACK, 0).unwrap();
        play(&mut g, "w1 B b2 w2 b1 W w1 B b2 w2 b1");
        assert_eq!(g.outcome(), None);
        play(&mut g, "W");
        assert_eq!(g.plies(), 9);
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::Repetition)));
    }

    /// Repetition stays exact however long a store-free stretch lasts (the
    /// ply cap is per tournament and may be large): the 4-ply cycle of
    /// `repetition_draw` is played once, then 1100 other positions are
    /// entered into the history (as a long stretch would), then the cycle
    /// again: the start position's third occurrence is a draw.
    #[test]
    fn repetition_after_a_long_store_free_stretch() {
        let s = Settings {
            max_plies: 5000,
            ..Settings::default()
        };
        let holes = [("w1", 1, 1), ("w2", 0, 1), ("w4", 1, 0)];
        let mut g = Hackaback::from_position(&s, &holes, [4, 16], BLACK, 0).unwrap();
        play(&mut g, "w1 B b2 w2 b1 W");
        assert_eq!(g.outcome(), None);
        // Codes no real position has (bit 63 set; real codes use 49 bits).
        for i in 0..1100u64 {
            assert_eq!(g.remember((1 << 63) | i), 0);
        }
        play(&mut g, "w1 B b2 w2 b1 W");
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::Repetition)));
    }

    /// Decision (docs/rules/hackaback.md): the win is judged at the end of
    /// the turn, after the whole content has been sown. Black lifts b6
    /// (W1 B1) with 17 in the store: the store comes first, so his seed
    /// goes there (forced, no colour asked: 18, all of them), then the
    /// white seed goes on into w6. One decision, and the board shows the
    /// completed sowing.
    #[test]
    fn store_win_completes_the_sowing() {
        let mut g = position(&[("b6", 1, 1)], [5, 17], BLACK, 10);
        assert_eq!(legal(&g), ["b6"]);
        play(&mut g, "b6");
        assert_eq!(g.outcome(), Some(Outcome::win(2, BLACK, Reason::Store)));
        assert_eq!(g.store(), [5, 18]);
        assert_eq!(hole(&g, "w6"), [1, 0]);
        assert_eq!(hole(&g, "b6"), [0, 0]);
        assert_eq!(g.plies(), 12);
        assert_eq!(g.sowing_turns(), 11);
        assert!(legal(&g).is_empty());
    }

    #[test]
    fn position_code_is_exact() {
        let a = position(
            &[("w1", 1, 1), ("w2", 0, 1), ("w4", 1, 0)],
            [4, 16],
            BLACK,
            0,
        );
        let b = position(
            &[("w1", 1, 0), ("w2", 0, 2), ("w4", 1, 0)],
            [4, 16],
            BLACK,
            0,
        );
        let c = position(
            &[("w1", 1, 1), ("w2", 0, 1), ("w4", 1, 0)],
            [4, 16],
            WHITE,
            0,
        );
        assert_ne!(a.position_code(), b.position_code());
        assert_ne!(a.position_code(), c.position_code());
        let full = Hackaback::new(&Settings::default()).unwrap();
        assert!(full.position_code() < 1 << 49);
    }

    fn all_opts() -> Vec<Opt> {
        let mut v: Vec<Opt> = (0..RING as u8).map(Opt::Hole).collect();
        v.extend([Opt::Colour(0), Opt::Colour(1), Opt::Draw]);
        v
    }

    /// Random games: invariants after every decision, listed options apply
    /// and round-trip, unlisted ones are refused without change, `draw` is
    /// offered exactly when the rule says, every game ends within the cap.
    #[test]
    fn random_games() {
        let universe = all_opts();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut buf = Vec::new();
        let mut reasons = std::collections::BTreeMap::new();
        for game in 0..2000 {
            let s = Settings {
                max_plies: 300 + (game % 3) as u32 * 200,
                ..Settings::default()
            };
            let mut g = Hackaback::new(&s).unwrap();
            let thorough = game < 100;
            while g.to_decide().is_some() {
                g.options(&mut buf);
                assert!(!buf.is_empty());
                let offered = g.phase == Phase::Sow
                    && g.to_decide() == Some(WHITE)
                    && g.sowing_turns() >= 240;
                assert_eq!(buf.contains(&Opt::Draw), offered);
                for &o in &buf {
                    assert_eq!(g.parse(&g.notation(o)), Ok(o));
                }
                if thorough {
                    for &o in &buf {
                        let mut h = g.clone();
                        h.apply(o).unwrap();
                        h.check_invariants().unwrap();
                    }
                    for &o in universe.iter().filter(|o| !buf.contains(o)) {
                        let mut h = g.clone();
                        assert!(h.apply(o).is_err(), "{:?} accepted", o);
                        assert!(h == g);
                    }
                }
                if game % 4 == 0 && g.plies() == 1 && g.sowing_turns() == 0 {
                    // Jump the turn count near the claim threshold so that
                    // the `draw` offer is exercised.
                    g.sowing_turns = 236;
                }
                let mut o = buf[rng.gen_range(0..buf.len())];
                if o == Opt::Draw && rng.gen_range(0..20) != 0 {
                    o = buf[0];
                }
                g.apply(o).unwrap();
                g.check_invariants()
                    .unwrap_or_else(|e| panic!("{e}\n{}", g.render()));
            }
            assert!(g.plies() <= s.max_plies);
            *reasons
                .entry(g.outcome().unwrap().reason.name())
                .or_insert(0) += 1;
        }
        assert!(reasons.contains_key("store"), "{reasons:?}");
        assert!(reasons.contains_key("draw_claim"), "{reasons:?}");
    }

    #[test]
    fn snapshot_fields() {
        let mut g = position(
            &[("b5", 2, 1), ("w3", 4, 0), ("b1", 0, 17)],
            [0, 0],
            BLACK,
            0,
        );
        play(&mut g, "b5");
        let v = g.snapshot();
        assert_eq!(v["holes"]["w3"], json!({"W": 4, "B": 0}));
        assert_eq!(v["hand"], json!({"W": 2, "B": 1}));
        assert_eq!(v["at"], "b5");
        assert_eq!(v["store"], json!({"W": 0, "B": 0}));
        assert!(g.render().contains("B17"));
    }

    // ---- an independent reference, written from the rulings (docs/rules/hackaback.md) alone ----

    /// A deliberately naive Hackaback: places by name, the loop as the two
    /// sowing orders of the rulings (docs/rules/hackaback.md), the whole history of positions in a
    /// plain list. Speaks only canonical notation.
    struct Reference {
        /// `[white, black]` per place name, the store `S` included.
        board: std::collections::BTreeMap<String, [u8; 2]>,
        mover: usize,
        to_place: u8,
        hand: [u8; 2],
        at: String,
        colour_pending: bool,
        sowing_turns: u32,
        plies: u32,
        max_plies: u32,
        seen: Vec<(Vec<[u8; 2]>, usize)>,
        result: Option<(Option<Seat>, &'static str)>,
    }

    impl Reference {
        fn new(max_plies: u32) -> Reference {
            let mut board = std::collections::BTreeMap::new();
            for k in 1..=6 {
                board.insert(format!("b{k}"), [0, 3]);
                board.insert(format!("w{k}"), [0, 0]);
            }
            board.insert("S".to_string(), [0, 0]);
            Reference {
                board,
                mover: 0,
                to_place: 6,
                hand: [0, 0],
                at: String::new(),
                colour_pending: false,
                sowing_turns: 0,
                plies: 0,
                max_plies,
                seen: Vec::new(),
                result: None,
            }
        }

        /// The engine's position at the start of a sowing turn (read
        /// through its public accessors), as the first entry of history.
        fn from_engine(g: &Hackaback, max_plies: u32) -> Reference {
            let mut r = Reference::new(max_plies);
            for (name, v) in r.board.iter_mut() {
                *v = match parse_hole(name) {
                    Some(h) => [g.seeds(h, WHITE), g.seeds(h, BLACK)],
                    None => g.store(),
                };
            }
            r.to_place = 0;
            r.mover = g.to_decide().unwrap();
            r.sowing_turns = g.sowing_turns();
            r.plies = g.plies();
            r.seen.push((r.board.values().copied().collect(), r.mover));
            r
        }

        /// "Black sows b1..b6, S, w6..w1, b1...; White sows w1..w6, S,
        /// b6..b1, w1..."
        fn next(&self, place: &str) -> String {
            let order: Vec<String> = if self.mover == 1 {
                (1..=6)
                    .map(|k| format!("b{k}"))
                    .chain(["S".to_string()])
                    .chain((1..=6).rev().map(|k| format!("w{k}")))
                    .collect()
            } else {
                (1..=6)
                    .map(|k| format!("w{k}"))
                    .chain(["S".to_string()])
                    .chain((1..=6).rev().map(|k| format!("b{k}")))
                    .collect()
            };
            let i = order.iter().position(|p| p == place).unwrap();
            order[(i + 1) % order.len()].clone()
        }

        fn options(&self) -> Vec<String> {
            if self.result.is_some() {
                return vec![];
            }
            if self.to_place > 0 {
                return (1..=6).map(|k| format!("w{k}")).collect();
            }
            if self.colour_pending {
                return ["B", "W"].map(String::from).to_vec();
            }
            let mut v: Vec<String> = (1..=6)
                .map(|k| format!("b{k}"))
                .chain((1..=6).map(|k| format!("w{k}")))
                .filter(|h| self.board[h][self.mover] > 0)
                .collect();
            if self.mover == 0 && self.sowing_turns >= 240 {
                v.push("draw".into());
            }
            v
        }

        fn apply(&mut self, opt: &str) {
            assert!(self.options().iter().any(|o| o == opt), "{opt}");
            if self.to_place > 0 {
                self.board.get_mut(opt).unwrap()[0] += 1;
                self.to_place -= 1;
                if self.to_place == 0 {
                    self.end_turn(false);
                }
                return;
            }
            match opt {
                "draw" => self.result = Some((None, "draw_claim")),
                "B" | "W" => {
                    let c = usize::from(opt == "B");
                    let to = self.next(&self.at);
                    self.board.get_mut(&to).unwrap()[c] += 1;
                    self.hand[c] -= 1;
                    self.at = to;
                    self.colour_pending = false;
                    self.sow();
                }
                hole => {
                    self.hand = self.board[hole];
                    self.board.insert(hole.to_string(), [0, 0]);
                    self.at = hole.to_string();
                    self.sow();
                }
            }
        }

        fn sow(&mut self) {
            let m = self.mover;
            while self.hand != [0, 0] {
                let to = self.next(&self.at);
                if to == "S" {
                    if self.hand[m] > 0 {
                        self.hand[m] -= 1;
                        self.board.get_mut("S").unwrap()[m] += 1;
                    }
                    self.at = to;
                    continue;
                }
                if self.hand[0] > 0 && self.hand[1] > 0 {
                    self.colour_pending = true;
                    return;
                }
                let c = usize::from(self.hand[1] > 0);
                self.board.get_mut(&to).unwrap()[c] += 1;
                self.hand[c] -= 1;
                self.at = to;
            }
            self.end_turn(true);
        }

        fn end_turn(&mut self, sowing: bool) {
            self.plies += 1;
            if sowing {
                self.sowing_turns += 1;
                if self.board["S"][self.mover] == [6, 18][self.mover] {
                    self.result = Some((Some(self.mover), "store"));
                    return;
                }
            }
            self.mover = 1 - self.mover;
            let position = (self.board.values().copied().collect(), self.mover);
            let before = self.seen.iter().filter(|p| **p == position).count();
            self.seen.push(position);
            if before >= 2 {
                self.result = Some((None, "repetition"));
            } else if self.plies >= self.max_plies {
                self.result = Some((None, "max_plies"));
            }
        }
    }

    /// Engine and reference agree on every decision of random games: the
    /// options in order, every hole and the store, the hand, the ply and
    /// sowing-turn counts, and the result. Long caps (up to 6000 plies)
    /// exercise long store-free stretches for the repetition rule.
    #[test]
    fn matches_reference_implementation() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let mut reasons = std::collections::BTreeMap::new();
        let mut longest = 0usize;
        for game in 0..400 {
            let max_plies = [300, 1000, 6000][game % 3];
            let s = Settings {
                max_plies,
                ..Settings::default()
            };
            let (mut g, mut r) = if game % 2 == 0 {
                let g = Hackaback::new(&s).unwrap();
                (g, Reference::new(max_plies))
            } else {
                // A sparse endgame: a few seeds of each colour on the board,
                // where positions recur.
                let (w, b) = (rng.gen_range(1..4u8), rng.gen_range(1..5u8));
                let mut holes = Vec::new();
                for (colour, n) in [(WHITE, w), (BLACK, b)] {
                    for _ in 0..n {
                        let name = format!(
                            "{}{}",
                            ['b', 'w'][rng.gen_range(0..2)],
                            rng.gen_range(1..=6)
                        );
                        holes.push(if colour == WHITE {
                            (name, 1, 0)
                        } else {
                            (name, 0, 1)
                        });
                    }
                }
                let holes: Vec<(&str, u8, u8)> =
                    holes.iter().map(|(n, w, b)| (n.as_str(), *w, *b)).collect();
                let to_move = rng.gen_range(0..2);
                let turns = rng.gen_range(0..300);
                let g =
                    Hackaback::from_position(&s, &holes, [6 - w, 18 - b], to_move, turns).unwrap();
                let r = Reference::from_engine(&g, max_plies);
                (g, r)
            };
            let mut decisions = 0;
            loop {
                let opts = legal(&g);
                assert_eq!(opts, r.options(), "game {game} decision {decisions}");
                for (name, v) in &r.board {
                    let got = match parse_hole(name) {
                        Some(h) => [g.seeds(h, WHITE), g.seeds(h, BLACK)],
                        None => g.store(),
                    };
                    assert_eq!(got, *v, "game {game} decision {decisions} {name}");
                }
                assert_eq!((g.plies(), g.sowing_turns()), (r.plies, r.sowing_turns));
                let outcome = g.outcome().map(|o| {
                    let winner = (0..2).find(|&s| o.ranks[s] == 0 && !o.is_draw());
                    (winner, o.reason.name())
                });
                assert_eq!(outcome, r.result, "game {game} decision {decisions}");
                let repetitions = g.snapshot()["repetitions"].as_u64().unwrap() as usize;
                longest = longest.max(repetitions);
                // Won by the store: the last turn changed it, and none
                // started after.
                if outcome.is_some_and(|(_, reason)| reason == "store") {
                    assert_eq!(repetitions, 0, "game {game}");
                }
                if opts.is_empty() {
                    break;
                }
                // Mostly avoid the store (long store-free stretches, where
                // repetitions happen); rarely claim the draw.
                let quiet: Vec<&String> = opts
                    .iter()
                    .filter(|o| {
                        let mut h = g.clone();
                        play(&mut h, o);
                        h.store() == g.store()
                    })
                    .collect();
                let mut pick = if !quiet.is_empty() && game % 4 != 0 {
                    quiet[rng.gen_range(0..quiet.len())]
                } else {
                    &opts[rng.gen_range(0..opts.len())]
                };
                if pick == "draw" && rng.gen_range(0..50) != 0 {
                    pick = &opts[0];
                }
                play(&mut g, pick);
                r.apply(pick);
                decisions += 1;
            }
            *reasons.entry(r.result.unwrap().1).or_insert(0) += 1;
        }
        eprintln!("reasons {reasons:?}, longest store-free stretch {longest}");
        for reason in ["store", "repetition", "draw_claim", "max_plies"] {
            assert!(reasons.contains_key(reason), "{reasons:?}");
        }
    }

    /// Cross-check against an independent implementation: a Python program
    /// written from the rule text and the rulings (docs/rules/hackaback.md)
    /// alone, not from this file (tests/data/rules/hackaback_reference.py),
    /// played random games (some preferring sowings that keep away from the
    /// store, for repetitions, draw claims and the ply cap) and recorded,
    /// before every decision, its legal options and the one it picked, then
    /// the result, the plies and the final board.
    #[test]
    fn independent_implementation_agrees() {
        let games = crate::engine::testing::agrees_with_reference(
            Variant::Hackaback,
            "hackaback_random_games.jsonl",
        );
        assert!(games >= 100, "{games} games");
    }
}
