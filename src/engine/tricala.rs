//! Tricala (seed 001, Myles Wallace 2011) for 2 or 3 players: the rules and
//! nothing else. Owns the triangular board, the set-up and sowing phases and
//! the two winning conditions; must not touch processes, JSON transport or
//! other games. Documented in docs/rules/tricala.md.
//!
//! Board (a ruling, docs/rules/tricala.md): 21 pits in six rows, row r holding r pits `ra`..;
//! corners 1a, 6a, 6f. Directions from (r, c): E (r, c+1), W (r, c-1),
//! NE (r-1, c), NW (r-1, c-1), SE (r+1, c+1), SW (r+1, c).

use super::{EngineError, Outcome, Reason, Rules, Seat, Settings, Variant, DROP_GUARD};

/// Number of pits: 1 + 2 + 3 + 4 + 5 + 6.
pub const PITS: usize = 21;
/// Rows of the triangle (each side has six pits).
pub const ROWS: usize = 6;
/// "Initially a player has nine counters."
pub const STONES: u8 = 9;
/// Set-up: "on his turn a player places three of his stones".
pub const PLACED_PER_TURN: u8 = 3;
/// Winning condition: "capturing nine or more counters of any color".
pub const CAPTURE_GOAL: u8 = 9;
/// The corner pits 1a, 6a, 6f (pit indices).
pub const CORNERS: [u8; 3] = [0, 15, 20];
/// Colour letters by seat (the rulings (docs/rules/tricala.md): W, B, R).
pub const COLOURS: [char; 3] = ['W', 'B', 'R'];

/// A sowing direction (a ruling, docs/rules/tricala.md). The order of the variants is the
/// order in which options are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    E,
    W,
    NE,
    NW,
    SE,
    SW,
}

impl Dir {
    pub const ALL: [Dir; 6] = [Dir::E, Dir::W, Dir::NE, Dir::NW, Dir::SE, Dir::SW];

    /// "It is not permitted to change the direction of sowing by 180°."
    pub fn reverse(self) -> Dir {
        match self {
            Dir::E => Dir::W,
            Dir::W => Dir::E,
            Dir::NE => Dir::SW,
            Dir::SW => Dir::NE,
            Dir::NW => Dir::SE,
            Dir::SE => Dir::NW,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dir::E => "E",
            Dir::W => "W",
            Dir::NE => "NE",
            Dir::NW => "NW",
            Dir::SE => "SE",
            Dir::SW => "SW",
        }
    }

    fn parse(s: &str) -> Option<Dir> {
        Dir::ALL.into_iter().find(|d| d.name() == s)
    }

    /// (row step, column step) of the rulings (docs/rules/tricala.md).
    const fn step(self) -> (i8, i8) {
        match self {
            Dir::E => (0, 1),
            Dir::W => (0, -1),
            Dir::NE => (-1, 0),
            Dir::NW => (-1, -1),
            Dir::SE => (1, 1),
            Dir::SW => (1, 0),
        }
    }
}

/// No neighbouring pit in that direction: the edge of the board.
const EDGE: u8 = u8::MAX;

/// Pit index of (row 1..=6, column 0..row).
const fn pit_index(row: usize, col: usize) -> usize {
    row * (row - 1) / 2 + col
}

/// (row, column) of every pit.
const ROW_COL: [(u8, u8); PITS] = {
    let mut t = [(0u8, 0u8); PITS];
    let mut r = 1;
    while r <= ROWS {
        let mut c = 0;
        while c < r {
            t[pit_index(r, c)] = (r as u8, c as u8);
            c += 1;
        }
        r += 1;
    }
    t
};

/// NEIGHBOUR[pit][dir]: the next pit in that direction, or `EDGE`.
const NEIGHBOUR: [[u8; 6]; PITS] = {
    let mut t = [[EDGE; 6]; PITS];
    let mut p = 0;
    while p < PITS {
        let (r, c) = ROW_COL[p];
        let mut d = 0;
        while d < 6 {
            let (dr, dc) = Dir::ALL[d].step();
            let r2 = r as i8 + dr;
            let c2 = c as i8 + dc;
            if r2 >= 1 && r2 <= ROWS as i8 && c2 >= 0 && c2 < r2 {
                t[p][d] = pit_index(r2 as usize, c2 as usize) as u8;
            }
            d += 1;
        }
        p += 1;
    }
    t
};

fn neighbour(pit: u8, dir: Dir) -> u8 {
    NEIGHBOUR[pit as usize][dir as usize]
}

/// The name of a pit (`1a`, `4b`, `6f`).
pub fn pit_name(pit: u8) -> String {
    let mut name = String::with_capacity(8);
    push_pit_name(&mut name, pit);
    name
}

/// [`pit_name`] appended to `out` (the row is a single digit).
fn push_pit_name(out: &mut String, pit: u8) {
    let (r, c) = ROW_COL[pit as usize];
    out.push(char::from(b'0' + r));
    out.push(char::from(b'a' + c));
}

/// Parses a pit name.
pub fn parse_pit(s: &str) -> Option<u8> {
    let b = s.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let r = (b[0] as char).to_digit(10)? as usize;
    let c = b[1].checked_sub(b'a')? as usize;
    (1..=ROWS)
        .contains(&r)
        .then_some(())
        .filter(|_| c < r)
        .map(|_| pit_index(r, c) as u8)
}

fn is_corner(pit: u8) -> bool {
    CORNERS.contains(&pit)
}

/// An option of one decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opt {
    /// Set-up: place one stone in a non-corner pit (`4b`).
    Place(u8),
    /// First decision of a sowing turn: pit and direction (`4b:E`).
    Sow(u8, Dir),
    /// The colour of the next stone dropped (`W`, `B`, `R`), by seat index.
    Colour(u8),
    /// A new direction at the edge of the board (`NE`).
    Direction(Dir),
    /// A player with no stone on the board passes.
    Pass,
}

/// The kind of the current decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// Set-up: place a stone.
    Place,
    /// Start of a sowing turn: `pit:DIR`, or `pass`.
    Start,
    /// Mid-sowing: the next pit does not exist; choose a new direction.
    Direction,
    /// Mid-sowing: the hand holds several colours; choose the next one.
    Colour,
    Over,
}

/// A Tricala game: a small `Copy` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tricala {
    players: u8,
    /// Stones per pit, by colour (seat).
    pits: [[u8; 3]; PITS],
    /// Stones each player has captured (any colours).
    captured: [u8; 3],
    /// Stones each player has placed during the set-up.
    placed: [u8; 3],
    /// Stones placed in the current set-up turn.
    placed_this_turn: u8,
    phase: Phase,
    mover: u8,
    /// Stones in hand, by colour.
    hand: [u8; 3],
    /// The pit the hand is at (the last pit sown or lifted).
    at: u8,
    dir: Dir,
    /// Stones dropped in this turn (the DROP_GUARD of the rulings (docs/rules/tricala.md)).
    drops: u32,
    plies: u32,
    max_plies: u32,
    outcome: Option<Outcome>,
}

impl Tricala {
    /// A position in the sowing phase, for tests and search bots.
    ///
    /// `pits` lists `(pit name, [W, B, R] stones)`; unlisted pits are empty.
    /// `captured` is each player's pile; `to_move` the seat about to start
    /// a sowing turn. Every colour's stones on the board plus all captured
    /// stones must add up to 9 per player. No win is judged on the position
    /// itself (only at the end of turns played from it).
    pub fn from_position(
        settings: &Settings,
        pits: &[(&str, [u8; 3])],
        captured: [u8; 3],
        to_move: Seat,
    ) -> Result<Tricala, EngineError> {
        let mut g = Tricala::new(settings)?;
        let bad = |why: String| EngineError::Setting {
            key: "position".into(),
            why,
        };
        g.pits = [[0; 3]; PITS];
        for (name, stones) in pits {
            let p = parse_pit(name).ok_or_else(|| bad(format!("no pit `{name}`")))?;
            for c in g.players as usize..3 {
                if stones[c] != 0 {
                    return Err(bad(format!("no player for colour {}", COLOURS[c])));
                }
            }
            for (pit, &s) in g.pits[p as usize].iter_mut().zip(stones) {
                *pit += s;
            }
        }
        if captured[g.players as usize..].iter().any(|&c| c != 0) {
            return Err(bad("a capture by a seat not in the game".into()));
        }
        let n = g.players as usize;
        let on_board: u32 = (0..n).map(|c| g.on_board(c) as u32).sum();
        let total = on_board + captured.iter().map(|&x| x as u32).sum::<u32>();
        if (0..n).any(|c| g.on_board(c) > STONES) || total != STONES as u32 * n as u32 {
            return Err(bad(format!(
                "stones on the board and captured must make {} per player",
                STONES
            )));
        }
        if to_move >= n {
            return Err(bad(format!("no seat {to_move}")));
        }
        g.captured = captured;
        for p in &mut g.placed[..n] {
            *p = STONES;
        }
        g.phase = Phase::Start;
        g.mover = to_move as u8;
        Ok(g)
    }

    /// The stones of colour (seat) `c` on the board.
    pub fn on_board(&self, c: usize) -> u8 {
        self.pits.iter().map(|p| p[c]).sum()
    }

    /// Stones in a pit by colour (`W`, `B`, `R`).
    pub fn pit(&self, pit: u8) -> [u8; 3] {
        self.pits[pit as usize]
    }

    /// Each player's captured pile.
    pub fn captured(&self) -> [u8; 3] {
        self.captured
    }

    /// The stones in hand mid-sowing, by colour (none between turns).
    pub fn hand(&self) -> [u8; 3] {
        self.hand
    }

    fn hand_total(&self) -> u8 {
        self.hand.iter().sum()
    }

    /// The only colour in the hand, if it holds one colour.
    fn single_colour(&self) -> Option<u8> {
        let mut found = None;
        for c in 0..self.players {
            if self.hand[c as usize] > 0 {
                if found.is_some() {
                    return None;
                }
                found = Some(c);
            }
        }
        found
    }

    /// Corner control: "having a majority of stones in the corner pits"
    /// (the rulings (docs/rules/tricala.md): more than half of the pit). 3+ stones on the board need
    /// all three corners, 2 stones two, 1 stone one. A player with no stone
    /// on the board controls nothing and cannot win this way (see
    /// docs/rules/tricala.md).
    pub fn controls_corners(&self, seat: Seat) -> bool {
        let needed = self.on_board(seat).min(3);
        needed > 0 && self.corners_held(seat) >= needed
    }

    /// The corner pits in which `seat` has "a majority of stones" (more
    /// than half of the pit, the rulings).
    pub fn corners_held(&self, seat: Seat) -> u8 {
        CORNERS
            .iter()
            .filter(|&&p| {
                let pit = self.pits[p as usize];
                let total: u8 = pit.iter().sum();
                2 * pit[seat] > total
            })
            .count() as u8
    }

    /// Either goal reached: nine or more captured, or the corners.
    fn has_won(&self, seat: Seat) -> bool {
        self.captured[seat] >= CAPTURE_GOAL || self.controls_corners(seat)
    }

    /// Sows on from `self.at` in `self.dir` until the turn ends or a
    /// decision is needed (a direction at the edge first, then a colour).
    fn sow_on(&mut self) {
        while self.hand_total() > 0 {
            // "If a stone encounters the edge of the board, the remaining
            // counters must be sown into another direction."
            if neighbour(self.at, self.dir) == EDGE {
                self.phase = Phase::Direction;
                return;
            }
            // "A player may sow the stones in any order he wishes."
            let Some(colour) = self.single_colour() else {
                self.phase = Phase::Colour;
                return;
            };
            if !self.drop_stone(colour) {
                return;
            }
        }
    }

    /// Drops one stone of `colour` into the next pit. Returns false when
    /// the turn (or the game) ended with it.
    fn drop_stone(&mut self, colour: u8) -> bool {
        let to = neighbour(self.at, self.dir);
        let before = self.pits[to as usize];
        self.pits[to as usize][colour as usize] += 1;
        self.hand[colour as usize] -= 1;
        self.at = to;
        self.drops += 1;
        if self.drops > DROP_GUARD {
            // The turn is over with the game, and counts as a ply, as a
            // perpetual turn of Kisolo does (a ruling, docs/rules/tricala.md).
            self.plies += 1;
            self.finish(Outcome::draw(self.players as usize, Reason::Perpetual));
            return false;
        }
        if self.hand_total() > 0 {
            return true;
        }
        // The last stone, judged by what the pit held before (a ruling, docs/rules/tricala.md).
        let held: u8 = before.iter().sum();
        if held == 0 {
            self.end_turn();
            false
        } else if before[self.mover as usize] == held {
            // Relay: "all of its contents are distributed in another lap
            // continuing into the same direction".
            self.hand = self.pits[to as usize];
            self.pits[to as usize] = [0; 3];
            true
        } else {
            // Capture: "all of its contents are captured" (last stone too).
            let pit: u8 = self.pits[to as usize].iter().sum();
            self.captured[self.mover as usize] += pit;
            self.pits[to as usize] = [0; 3];
            self.end_turn();
            false
        }
    }

    fn finish(&mut self, outcome: Outcome) {
        self.outcome = Some(outcome);
        self.phase = Phase::Over;
        // The hand keeps its stones when the drop guard fires mid-lap: the
        // position "as it stands after that drop" (a ruling, docs/rules/tricala.md).
    }

    /// End of a turn: the goals of every player, then stalemate, then the
    /// ply cap (the rulings (docs/rules/tricala.md) order), then the next seat.
    fn end_turn(&mut self) {
        self.plies += 1;
        self.drops = 0;
        let n = self.players as usize;
        // "It doesn't matter whose turn it is, when a winning condition is
        // reached." Several winners: the most captured stones wins; equal:
        // those players draw (a ruling, docs/rules/tricala.md).
        let mut winners = [0usize; 3];
        let mut count = 0;
        for s in 0..n {
            if self.has_won(s) {
                winners[count] = s;
                count += 1;
            }
        }
        if count > 0 {
            let best = winners[..count]
                .iter()
                .map(|&s| self.captured[s])
                .max()
                .unwrap_or(0);
            let mut top = [0usize; 3];
            let mut k = 0;
            for &s in &winners[..count] {
                if self.captured[s] == best {
                    top[k] = s;
                    k += 1;
                }
            }
            let outcome = if k == n {
                // Every player shares the first place: a plain draw.
                Outcome::draw(n, Reason::Tie)
            } else if k == 1 {
                let reason = if self.captured[top[0]] >= CAPTURE_GOAL {
                    Reason::Captures
                } else {
                    Reason::Corners
                };
                Outcome::win(n, top[0], reason)
            } else {
                Outcome::shared(n, &top[..k], Reason::Tie)
            };
            self.finish(outcome);
            return;
        }
        let sowing = self.placed[..n].iter().all(|&p| p == STONES);
        if sowing && (0..n).all(|s| self.on_board(s) == 0) {
            // Nobody can move: the most captured stones wins (equal: draw).
            let best = self.captured[..n].iter().copied().max().unwrap_or(0);
            let mut top = [0usize; 3];
            let mut k = 0;
            for s in 0..n {
                if self.captured[s] == best {
                    top[k] = s;
                    k += 1;
                }
            }
            self.finish(if k == n {
                Outcome::draw(n, Reason::Stalemate)
            } else {
                Outcome::shared(n, &top[..k], Reason::Stalemate)
            });
            return;
        }
        if self.plies >= self.max_plies {
            self.finish(Outcome::draw(n, Reason::MaxPlies));
            return;
        }
        self.mover = (self.mover + 1) % self.players;
        self.placed_this_turn = 0;
        self.phase = if sowing { Phase::Start } else { Phase::Place };
    }

    fn is_legal(&self, opt: Opt) -> bool {
        let m = self.mover as usize;
        match (self.phase, opt) {
            (Phase::Place, Opt::Place(p)) => (p as usize) < PITS && !is_corner(p),
            (Phase::Start, Opt::Sow(p, d)) => {
                (p as usize) < PITS && self.pits[p as usize][m] > 0 && neighbour(p, d) != EDGE
            }
            (Phase::Start, Opt::Pass) => self.on_board(m) == 0,
            (Phase::Direction, Opt::Direction(d)) => {
                neighbour(self.at, d) != EDGE && d != self.dir.reverse()
            }
            (Phase::Colour, Opt::Colour(c)) => c < self.players && self.hand[c as usize] > 0,
            _ => false,
        }
    }
}

impl Rules for Tricala {
    type Opt = Opt;
    const VARIANT: Variant = Variant::Tricala;

    fn new(settings: &Settings) -> Result<Self, EngineError> {
        settings.only_players(Variant::Tricala.player_counts())?;
        settings.only_options(&[])?;
        Ok(Tricala {
            players: settings.players as u8,
            pits: [[0; 3]; PITS],
            captured: [0; 3],
            placed: [0; 3],
            placed_this_turn: 0,
            phase: Phase::Place,
            mover: 0,
            hand: [0; 3],
            at: 0,
            dir: Dir::E,
            drops: 0,
            plies: 0,
            max_plies: settings.max_plies,
            outcome: None,
        })
    }

    fn players(&self) -> usize {
        self.players as usize
    }

    fn to_decide(&self) -> Option<Seat> {
        (self.phase != Phase::Over).then_some(self.mover as usize)
    }

    fn decision_kind(&self) -> &'static str {
        match self.phase {
            Phase::Place => "place",
            Phase::Start if self.on_board(self.mover as usize) == 0 => "pass",
            Phase::Start => "sow",
            Phase::Direction => "direction",
            Phase::Colour => "colour",
            Phase::Over => "none",
        }
    }

    /// Order: set-up pits in board order (1a, 2a, 2b, ... 6f, corners
    /// left out); sowing starts by pit in board order, then by direction
    /// E, W, NE, NW, SE, SW; directions in that order; colours W, B, R.
    fn options(&self, out: &mut Vec<Opt>) {
        out.clear();
        let m = self.mover as usize;
        match self.phase {
            Phase::Place => {
                out.extend((0..PITS as u8).filter(|&p| !is_corner(p)).map(Opt::Place));
            }
            Phase::Start => {
                if self.on_board(m) == 0 {
                    out.push(Opt::Pass);
                    return;
                }
                for p in 0..PITS as u8 {
                    if self.pits[p as usize][m] > 0 {
                        for d in Dir::ALL {
                            if neighbour(p, d) != EDGE {
                                out.push(Opt::Sow(p, d));
                            }
                        }
                    }
                }
            }
            Phase::Direction => {
                for d in Dir::ALL {
                    if neighbour(self.at, d) != EDGE && d != self.dir.reverse() {
                        out.push(Opt::Direction(d));
                    }
                }
            }
            Phase::Colour => {
                for c in 0..self.players {
                    if self.hand[c as usize] > 0 {
                        out.push(Opt::Colour(c));
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
        let m = self.mover as usize;
        match opt {
            Opt::Place(p) => {
                self.pits[p as usize][m] += 1;
                self.placed[m] += 1;
                self.placed_this_turn += 1;
                if self.placed_this_turn == PLACED_PER_TURN {
                    self.end_turn();
                }
            }
            Opt::Sow(p, d) => {
                // "sows the contents of a pit ... in a straight line".
                self.hand = self.pits[p as usize];
                self.pits[p as usize] = [0; 3];
                self.at = p;
                self.dir = d;
                self.sow_on();
            }
            Opt::Direction(d) => {
                self.dir = d;
                self.sow_on();
            }
            Opt::Colour(c) => {
                if self.drop_stone(c) {
                    self.sow_on();
                }
            }
            Opt::Pass => self.end_turn(),
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
        let pit = |p: u8| {
            if (p as usize) < PITS {
                pit_name(p)
            } else {
                format!("?{p}")
            }
        };
        match opt {
            Opt::Place(p) => pit(p),
            Opt::Sow(p, d) if (p as usize) < PITS => {
                let mut s = String::with_capacity(8);
                push_pit_name(&mut s, p);
                s.push(':');
                s.push_str(d.name());
                s
            }
            Opt::Sow(p, d) => format!("{}:{}", pit(p), d.name()),
            Opt::Colour(c) => COLOURS
                .get(c as usize)
                .map_or_else(|| format!("?{c}"), |c| c.to_string()),
            Opt::Direction(d) => d.name().to_string(),
            Opt::Pass => "pass".to_string(),
        }
    }

    /// `W` is both White and West: it reads as a direction when the current
    /// decision is a direction, and as a colour otherwise.
    fn parse(&self, s: &str) -> Result<Opt, EngineError> {
        let bad = || EngineError::Unparsable(s.to_string());
        if s == "pass" {
            return Ok(Opt::Pass);
        }
        if let Some((p, d)) = s.split_once(':') {
            let p = parse_pit(p).ok_or_else(bad)?;
            let d = Dir::parse(d).ok_or_else(bad)?;
            return Ok(Opt::Sow(p, d));
        }
        if let Some(p) = parse_pit(s) {
            return Ok(Opt::Place(p));
        }
        if self.phase == Phase::Direction {
            if let Some(d) = Dir::parse(s) {
                return Ok(Opt::Direction(d));
            }
        }
        if let Some(c) = COLOURS
            .iter()
            .position(|&c| s.len() == 1 && s.starts_with(c))
        {
            return Ok(Opt::Colour(c as u8));
        }
        Dir::parse(s).map(Opt::Direction).ok_or_else(bad)
    }

    /// `pits`: pit name -> `{"W": n, "B": n[, "R": n]}` (empty pits too);
    /// `captured`, `on_board`, `placed`: per seat; `phase`; `hand`
    /// (colour -> count), `at` and `direction` while a sowing is pending,
    /// else null.
    fn write_snapshot(&self, o: &mut super::json::Obj<'_>) {
        use super::json::{uints, Obj};
        let n = self.players as usize;
        // Colour letters sort B, R, W: seats 1, 2, 0.
        let colours = |o: &mut Obj<'_>, key: &str, counts: &[u8; 3]| {
            o.obj(key, |m| {
                for c in [1, 2, 0] {
                    if c < n {
                        m.uint(COLOURS[c].encode_utf8(&mut [0; 4]), u64::from(counts[c]));
                    }
                }
            })
        };
        let pending = matches!(self.phase, Phase::Direction | Phase::Colour)
            || (self.phase == Phase::Over && self.hand_total() > 0);
        match pending {
            true => o.str("at", &pit_name(self.at)),
            false => o.null("at"),
        }
        o.uints("captured", &self.captured[..n]);
        let b = o.key("corners");
        b.extend_from_slice(br#"["1a","6a","6f"]"#);
        match pending {
            true => o.str("direction", self.dir.name()),
            false => o.null("direction"),
        }
        match pending {
            true => colours(o, "hand", &self.hand),
            false => o.null("hand"),
        }
        let on_board: [u8; 3] = std::array::from_fn(|c| self.on_board(c));
        o.uints("on_board", &on_board[..n]);
        o.str(
            "phase",
            match self.phase {
                Phase::Place => "setup",
                Phase::Over => "over",
                _ => "sowing",
            },
        );
        // Pit indices run row by row, column by column: the names' order.
        o.obj("pits", |m| {
            for (p, &(r, c)) in ROW_COL.iter().enumerate() {
                let name = [b'0' + r, b'a' + c];
                colours(m, std::str::from_utf8(&name).unwrap_or("?"), &self.pits[p]);
            }
        });
        let b = o.key("placed");
        uints(b, &self.placed[..n]);
        o.uint("placed_this_turn", u64::from(self.placed_this_turn));
    }

    fn render(&self) -> String {
        let n = self.players as usize;
        let mut s = String::new();
        for r in 1..=ROWS {
            s.push_str(&" ".repeat((ROWS - r) * 4));
            for c in 0..r {
                let pit = self.pits[pit_index(r, c)];
                let mut cell = String::new();
                for (col, &k) in pit.iter().enumerate().take(n) {
                    if k > 0 {
                        cell.push_str(&format!("{}{}", COLOURS[col], k));
                    }
                }
                if cell.is_empty() {
                    cell.push('.');
                }
                s.push_str(&format!("{}{}:{:<5}", r, (b'a' + c as u8) as char, cell));
            }
            s.push('\n');
        }
        for (c, colour) in COLOURS.iter().enumerate().take(n) {
            s.push_str(&format!(
                "{}: {} on board, {} captured\n",
                colour,
                self.on_board(c),
                self.captured[c]
            ));
        }
        if self.hand_total() > 0 {
            s.push_str(&format!(
                "hand at {} going {}: {:?}\n",
                pit_name(self.at),
                self.dir.name(),
                &self.hand[..n]
            ));
        }
        s
    }

    fn check_invariants(&self) -> Result<(), String> {
        let n = self.players as usize;
        for c in n..3 {
            if self.on_board(c) != 0 || self.hand[c] != 0 || self.captured[c] != 0 {
                return Err(format!("colour {c} in a {n}-player game"));
            }
        }
        let placed_total: u32 = self.placed[..n].iter().map(|&p| p as u32).sum();
        let on_board: u32 = (0..n).map(|c| self.on_board(c) as u32).sum();
        let hand: u32 = self.hand.iter().map(|&h| h as u32).sum();
        let captured: u32 = self.captured.iter().map(|&c| c as u32).sum();
        if on_board + hand + captured != placed_total {
            return Err(format!(
                "stones not conserved: board {on_board} + hand {hand} + captured {captured} != placed {placed_total}"
            ));
        }
        for s in 0..n {
            if self.placed[s] > STONES {
                return Err(format!("seat {s} placed {}", self.placed[s]));
            }
            if self.on_board(s) + self.hand[s] > STONES {
                return Err(format!("more than 9 stones of colour {s}"));
            }
        }
        let setup = self.placed[..n].iter().any(|&p| p < STONES);
        if setup && CORNERS.iter().any(|&p| self.pits[p as usize] != [0; 3]) {
            return Err("a corner pit is occupied during the set-up".into());
        }
        if setup && (hand != 0 || captured != 0) {
            return Err("sowing during the set-up".into());
        }
        match self.phase {
            Phase::Direction | Phase::Colour if hand == 0 => {
                return Err("a sowing decision with an empty hand".into())
            }
            Phase::Place | Phase::Start if hand != 0 => {
                return Err("stones in hand between turns".into())
            }
            _ => {}
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
    use crate::engine::testing::{legal, play, replay_reference_steps};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use serde_json::json;

    fn settings(players: usize) -> Settings {
        Settings::with_players(players)
    }

    fn position(
        players: usize,
        pits: &[(&str, [u8; 3])],
        captured: [u8; 3],
        to_move: Seat,
    ) -> Tricala {
        Tricala::from_position(&settings(players), pits, captured, to_move).unwrap()
    }

    fn pit(g: &Tricala, name: &str) -> [u8; 3] {
        g.pit(parse_pit(name).unwrap())
    }

    /// The board of the rulings (docs/rules/tricala.md): 6 directions in the middle, 4 on an edge,
    /// 2 in a corner, as the text says.
    #[test]
    fn board_geometry() {
        let count = |name: &str| {
            let p = parse_pit(name).unwrap();
            Dir::ALL
                .iter()
                .filter(|&&d| neighbour(p, d) != EDGE)
                .count()
        };
        assert_eq!(count("3b"), 6);
        assert_eq!(count("5c"), 6);
        assert_eq!(count("4a"), 4);
        assert_eq!(count("6c"), 4);
        assert_eq!(count("3c"), 4);
        for corner in ["1a", "6a", "6f"] {
            assert_eq!(count(corner), 2, "{corner}");
        }
        assert_eq!(pit_name(neighbour(parse_pit("4b").unwrap(), Dir::NE)), "3b");
        assert_eq!(pit_name(neighbour(parse_pit("4b").unwrap(), Dir::NW)), "3a");
        assert_eq!(pit_name(neighbour(parse_pit("4b").unwrap(), Dir::SE)), "5c");
        assert_eq!(pit_name(neighbour(parse_pit("4b").unwrap(), Dir::SW)), "5b");
        assert_eq!(parse_pit("1b"), None);
        assert_eq!(parse_pit("7a"), None);
    }

    /// The text's tie example: White 6a, 4b with 6 captured; Black 1a, 4c
    /// with 8 captured; White captures 4bx4c: 8 each, each controls one
    /// corner with the last stone on the board: a draw (the rulings (docs/rules/tricala.md): tie).
    #[test]
    fn text_tie_example_capture_draws() {
        let mut g = position(
            2,
            &[
                ("6a", [1, 0, 0]),
                ("4b", [1, 0, 0]),
                ("1a", [0, 1, 0]),
                ("4c", [0, 1, 0]),
            ],
            [6, 8, 0],
            0,
        );
        play(&mut g, "4b:E");
        assert_eq!(g.captured(), [8, 8, 0]);
        let o = g.outcome().expect("game over");
        assert_eq!(o.reason, Reason::Tie);
        assert_eq!(&o.ranks[..2], &[0, 0]);
        assert!(o.is_draw());
        assert_eq!(g.to_decide(), None);
    }

    /// The text's tie example reached in play from the start, not built:
    /// a 38-ply line (found by a second independent implementation's
    /// search) leaves White singletons on 6a and 4b with 6 captured and
    /// Black singletons on 1a and 4c with 8 captured, White to move; then
    /// 4b:E captures and the game is a tie at its 39th ply.
    #[test]
    fn text_tie_example_reached_in_play() {
        let line = "
        6c 4d 6d 5c 3c 5d 2a 5c 6c 4d 6b 4c 6e 2a 3c 6b 5c 4a 4d:SE W 3c:SW W 2a:SE 6b:E 6c:NE
        W W 3c:NW 5e:SW NW 4a:SW 2a:SE 5d:SW B E NW W 6e:W 5a:SE 6c:NW 4d:NW 6d:E W 6b:E 4c:SW
        NW E 3c:SE 6e:W 4d:SE 6d:W 2b:SW 4a:E 3b:NE 4d:W 6f:W 4a:SE 2b:NW 5b:W 6e:NW 5a:SW
        5d:NW";
        let mut g = Tricala::new(&Settings::default()).unwrap();
        for m in line.split_whitespace() {
            play(&mut g, m);
            assert_eq!(g.outcome(), None, "after {m}");
        }
        assert_eq!(
            (g.plies(), g.to_decide(), g.captured()),
            (38, Some(0), [6, 8, 0])
        );
        for (p, stones) in [
            ("6a", [1, 0, 0]),
            ("4b", [1, 0, 0]),
            ("1a", [0, 1, 0]),
            ("4c", [0, 1, 0]),
        ] {
            assert_eq!(pit(&g, p), stones, "{p}");
        }
        play(&mut g, "4b:E");
        let o = g.outcome().expect("game over");
        assert_eq!((o.reason, &o.ranks[..2]), (Reason::Tie, &[0, 0][..]));
        assert_eq!(g.plies(), 39);
    }

    /// A two-way tie with three players, in play: seats 1 and 2 win at
    /// once (the rulings: they draw) while seat 0 moves, and seat 0 is
    /// last (ranks [1, 0, 0], scores 0, 0.75, 0.75), at ply 24.
    #[test]
    fn a_two_way_tie_of_three_players_in_play() {
        let line = "
        4d 4d 4a 4b 2b 3a 5a 4b 5d 3a 6b 5d 4b 3a 5e 2a 5e 3c 3c 6b 4b 5a 2a 3b 2b 6b 3b 4d:W
        2b:W R SW 3b:NE R W 5d:NE R NW 5a:SW B E 4d:W 4a:E 5e:SW B E 2b:SW 4b:W 6e:NE 3b:SE
        4a:NE 5e:NW 4c:E";
        let mut g = Tricala::new(&Settings::with_players(3)).unwrap();
        let moves: Vec<&str> = line.split_whitespace().collect();
        let (last, before) = moves.split_last().expect("moves");
        for m in before {
            play(&mut g, m);
            assert_eq!(g.outcome(), None, "after {m}");
        }
        play(&mut g, last);
        let o = g.outcome().expect("game over");
        assert_eq!((o.reason, &o.ranks[..]), (Reason::Tie, &[1, 0, 0][..]));
        assert_eq!(g.plies(), 24);
    }

    /// The text's tie example, White avoiding the capture (4b:W): Black
    /// runs 4c to 6f (4c:SE to 5d, 5d:SE to 6e, 6e:E to 6f: three moves on
    /// this board, the text says four) and wins controlling 1a and 6f with
    /// the two stones left. White's moves in between are quiet ones.
    #[test]
    fn text_tie_example_run_to_6f_wins_on_corners() {
        let mut g = position(
            2,
            &[
                ("6a", [1, 0, 0]),
                ("4b", [1, 0, 0]),
                ("1a", [0, 1, 0]),
                ("4c", [0, 1, 0]),
            ],
            [6, 8, 0],
            0,
        );
        for m in ["4b:W", "4c:SE", "4a:SW", "5d:SE", "5a:E"] {
            play(&mut g, m);
            assert_eq!(g.outcome(), None, "after {m}");
        }
        assert_eq!(pit(&g, "6e"), [0, 1, 0]);
        assert_eq!(pit(&g, "5b"), [1, 0, 0]);
        play(&mut g, "6e:E");
        assert_eq!(pit(&g, "6f"), [0, 1, 0]);
        assert_eq!(g.outcome(), Some(Outcome::win(2, 1, Reason::Corners)));
        assert_eq!(g.captured(), [6, 8, 0]);
    }

    /// Edge rule: "the remaining counters must be sown into another
    /// direction", never bouncing back 180°. 3 stones from 4b going E: 4c,
    /// 4d, then the edge: NW, SE, SW offered, W (back) refused.
    #[test]
    fn edge_turn_without_reversal() {
        let mut g = position(2, &[("4b", [3, 0, 0]), ("3b", [0, 1, 0])], [7, 7, 0], 0);
        play(&mut g, "4b:E");
        assert_eq!(g.decision_kind(), "direction");
        assert_eq!(legal(&g), ["NW", "SE", "SW"]);
        let before = g;
        assert_eq!(g.parse("W"), Ok(Opt::Direction(Dir::W)));
        assert_eq!(
            g.apply(Opt::Direction(Dir::W)),
            Err(EngineError::Illegal("W".into()))
        );
        assert_eq!(g, before, "an illegal option leaves the state untouched");
        play(&mut g, "SE");
        assert_eq!(pit(&g, "4c"), [1, 0, 0]);
        assert_eq!(pit(&g, "4d"), [1, 0, 0]);
        assert_eq!(pit(&g, "5e"), [1, 0, 0]);
        assert_eq!(g.to_decide(), Some(1));
        assert_eq!(g.plies(), 1);
    }

    /// In a corner the only way on that is not the way back is forced: the
    /// direction decision never has zero options (docs/rules/tricala.md).
    /// 2 stones from 5e going SE: 6f, then W is the only option, to 6e.
    #[test]
    fn corner_turn_is_forced() {
        let mut g = position(2, &[("5e", [2, 0, 0]), ("3b", [0, 1, 0])], [8, 7, 0], 0);
        play(&mut g, "5e:SE");
        assert_eq!(legal(&g), ["W"]);
        play(&mut g, "W");
        assert_eq!(pit(&g, "6f"), [1, 0, 0]);
        assert_eq!(pit(&g, "6e"), [1, 0, 0]);
        assert_eq!(g.to_decide(), Some(1));
    }

    /// "A player may sow the stones in any order he wishes": a colour
    /// decision before each drop while the hand holds several colours; at
    /// an edge the direction is asked before the colour (a ruling, docs/rules/tricala.md).
    #[test]
    fn colour_choice_and_direction_before_colour() {
        let mut g = position(2, &[("4c", [1, 2, 0]), ("2a", [0, 1, 0])], [6, 8, 0], 0);
        play(&mut g, "4c:E");
        assert_eq!(g.decision_kind(), "colour");
        assert_eq!(legal(&g), ["W", "B"]);
        play(&mut g, "B");
        assert_eq!(pit(&g, "4d"), [0, 1, 0]);
        assert_eq!(g.decision_kind(), "direction");
        assert_eq!(legal(&g), ["NW", "SE", "SW"]);
        play(&mut g, "SW");
        assert_eq!(g.decision_kind(), "colour");
        assert_eq!(legal(&g), ["W", "B"]);
        play(&mut g, "W");
        // The last stone (Black's) falls on 6d, empty: the turn ends.
        assert_eq!(pit(&g, "5d"), [1, 0, 0]);
        assert_eq!(pit(&g, "6d"), [0, 1, 0]);
        assert_eq!(pit(&g, "4c"), [0, 0, 0]);
        assert_eq!(g.to_decide(), Some(1));
        assert_eq!(g.captured(), [6, 8, 0]);
    }

    /// Relay: the last stone falls into a pit of only friendly stones; all
    /// of it is sown on in the same direction. 4a:E lands on 4b (White 1):
    /// the 2 stones go on to 4c and 4d.
    #[test]
    fn relay_continues_same_direction() {
        let mut g = position(
            2,
            &[("4a", [1, 0, 0]), ("4b", [1, 0, 0]), ("2a", [0, 1, 0])],
            [7, 8, 0],
            0,
        );
        play(&mut g, "4a:E");
        assert_eq!(pit(&g, "4a"), [0, 0, 0]);
        assert_eq!(pit(&g, "4b"), [0, 0, 0]);
        assert_eq!(pit(&g, "4c"), [1, 0, 0]);
        assert_eq!(pit(&g, "4d"), [1, 0, 0]);
        assert_eq!(g.to_decide(), Some(1));
    }

    /// A lap never skips the pit it started from (a ruling, docs/rules/tricala.md): 3 stones
    /// from 5d going E reach 5e, turn SW to 6e, turn NW back to 5d, which
    /// was emptied, so the turn ends there.
    #[test]
    fn lap_back_into_origin() {
        let mut g = position(2, &[("5d", [3, 0, 0]), ("2a", [0, 1, 0])], [6, 8, 0], 0);
        play(&mut g, "5d:E SW");
        assert_eq!(legal(&g), ["E", "W", "NW"]);
        play(&mut g, "NW");
        assert_eq!(pit(&g, "5d"), [1, 0, 0]);
        assert_eq!(pit(&g, "5e"), [1, 0, 0]);
        assert_eq!(pit(&g, "6e"), [1, 0, 0]);
        assert_eq!(g.to_decide(), Some(1));
    }

    /// Capture: the last stone falls into a pit holding an enemy stone; the
    /// whole pit, last stone included, goes to the mover's pile. A stone
    /// passing over an enemy pit (4b) captures nothing.
    #[test]
    fn capture_with_last_stone() {
        let mut g = position(
            2,
            &[
                ("4a", [2, 0, 0]),
                ("4b", [0, 1, 0]),
                ("4c", [1, 1, 0]),
                ("2a", [0, 1, 0]),
            ],
            [4, 8, 0],
            0,
        );
        play(&mut g, "4a:E");
        assert_eq!(pit(&g, "4b"), [1, 1, 0]);
        assert_eq!(pit(&g, "4c"), [0, 0, 0]);
        assert_eq!(g.captured(), [7, 8, 0]);
        assert_eq!(g.to_decide(), Some(1));
    }

    /// Corner thresholds: 3+ stones need all three corners, 2 stones two,
    /// 1 stone one; control is more than half of the pit's stones.
    #[test]
    fn corner_thresholds() {
        let w = |pits: &[(&str, [u8; 3])], on_board: u8| {
            // Black keeps one stone on 3b; the rest is captured evenly-ish.
            let mut all = pits.to_vec();
            all.push(("3b", [0, 1, 0]));
            let off = 18 - on_board - 1;
            position(2, &all, [off - off / 2, off / 2, 0], 0)
        };
        let one = [1, 0, 0];
        // Three or more stones: all three corners.
        assert!(w(&[("1a", one), ("6a", one), ("6f", one)], 3).controls_corners(0));
        assert!(w(&[("1a", one), ("6a", one), ("6f", one), ("4b", one)], 4).controls_corners(0));
        assert!(!w(&[("1a", one), ("6a", one), ("4b", one)], 3).controls_corners(0));
        // Two stones: two corners.
        assert!(w(&[("1a", one), ("6f", one)], 2).controls_corners(0));
        assert!(!w(&[("1a", one), ("4b", one)], 2).controls_corners(0));
        // One stone: one corner, alone in it.
        assert!(w(&[("6f", one)], 1).controls_corners(0));
        assert!(!w(&[("4b", one)], 1).controls_corners(0));
        // Majority: more than half of the pit.
        let g = position(
            2,
            &[("1a", [2, 1, 0]), ("6a", [1, 0, 0]), ("6f", [1, 1, 0])],
            [6, 6, 0],
            0,
        );
        assert!(!g.controls_corners(0), "6f is held half and half");
        assert!(!g.controls_corners(1));
        let g = position(
            2,
            &[("1a", [2, 1, 0]), ("6a", [1, 0, 0]), ("6f", [2, 1, 0])],
            [5, 6, 0],
            0,
        );
        assert!(g.controls_corners(0));
        // No stone on the board: no corner win (docs/rules/tricala.md).
        let g = position(2, &[("4b", one)], [8, 9, 0], 0);
        assert!(!g.controls_corners(1));
    }

    /// A winning condition reached on the opponent's turn counts ("it
    /// doesn't matter whose turn it is"): White captures 4c and leaves
    /// Black alone on corner 1a with one stone.
    #[test]
    fn win_on_opponents_turn() {
        let mut g = position(
            2,
            &[
                ("4b", [1, 0, 0]),
                ("2b", [1, 0, 0]),
                ("1a", [0, 1, 0]),
                ("4c", [0, 1, 0]),
            ],
            [6, 8, 0],
            0,
        );
        play(&mut g, "4b:E");
        assert_eq!(g.captured(), [8, 8, 0]);
        assert_eq!(g.outcome(), Some(Outcome::win(2, 1, Reason::Corners)));
    }

    /// Simultaneous wins: White reaches 9 captured while Black gains the
    /// corner; the most captured stones wins: White (9 against 7).
    #[test]
    fn simultaneous_wins_most_captured() {
        let mut g = position(
            2,
            &[
                ("4b", [1, 0, 0]),
                ("2b", [1, 0, 0]),
                ("1a", [0, 1, 0]),
                ("4c", [0, 1, 0]),
            ],
            [7, 7, 0],
            0,
        );
        play(&mut g, "4b:E");
        assert!(g.controls_corners(1));
        assert_eq!(g.captured(), [9, 7, 0]);
        assert_eq!(g.outcome(), Some(Outcome::win(2, 0, Reason::Captures)));
    }

    /// Three players: set-up in seat order, 3 stones per turn (one decision
    /// each, never a corner), then seat 0 starts sowing.
    #[test]
    fn three_player_setup_order() {
        let mut g = Tricala::new(&settings(3)).unwrap();
        let mut seats = Vec::new();
        for _ in 0..27 {
            assert_eq!(g.decision_kind(), "place");
            let opts = legal(&g);
            assert_eq!(opts.len(), 18);
            assert!(!opts.iter().any(|o| o == "1a" || o == "6a" || o == "6f"));
            seats.push(g.to_decide().unwrap());
            play(&mut g, "3b");
        }
        let expected: Vec<Seat> = (0..9).flat_map(|t| [t % 3; 3]).collect();
        assert_eq!(seats, expected);
        assert_eq!(g.plies(), 9);
        assert_eq!(pit(&g, "3b"), [9, 9, 9]);
        assert_eq!(g.to_decide(), Some(0));
        assert_eq!(g.decision_kind(), "sow");
        assert_eq!(
            legal(&g),
            ["3b:E", "3b:W", "3b:NE", "3b:NW", "3b:SE", "3b:SW"]
        );
        assert_eq!(
            g.apply(Opt::Place(4)),
            Err(EngineError::Illegal("3b".into()))
        );
    }

    /// A player with no stone on the board passes: `pass` is the only
    /// option, and it counts as a ply. Three players, Black has none.
    #[test]
    fn three_player_pass() {
        let mut g = position(
            3,
            &[
                ("4a", [1, 0, 0]),
                ("3b", [1, 0, 0]),
                ("2a", [0, 0, 1]),
                ("6c", [0, 0, 1]),
            ],
            [8, 8, 7],
            0,
        );
        play(&mut g, "4a:E");
        assert_eq!(g.outcome(), None);
        assert_eq!(g.to_decide(), Some(1));
        assert_eq!(g.decision_kind(), "pass");
        assert_eq!(legal(&g), ["pass"]);
        play(&mut g, "pass");
        assert_eq!(g.plies(), 2);
        assert_eq!(g.to_decide(), Some(2));
        assert_eq!(legal(&g)[0], "2a:E");
    }

    /// The 3-player outcome: one winner ranks first, the others share last.
    #[test]
    fn three_player_capture_win() {
        let mut g = position(
            3,
            &[
                ("4a", [1, 0, 0]),
                ("4b", [0, 0, 1]),
                ("3b", [1, 1, 0]),
                ("2a", [0, 0, 1]),
            ],
            [8, 7, 7],
            0,
        );
        play(&mut g, "4a:E");
        assert_eq!(g.captured(), [10, 7, 7]);
        assert_eq!(g.outcome(), Some(Outcome::win(3, 0, Reason::Captures)));
        assert_eq!(g.outcome().unwrap().scores(), vec![1.0, 0.25, 0.25]);
    }

    /// Relay, then an edge: 4b:E drops on 4c, which held one White stone:
    /// both are lifted and go on East, one to 4d; at 4d the next pit East
    /// does not exist, so the direction is asked (not W, the way back).
    #[test]
    fn relay_then_edge_turn() {
        let mut g = position(
            2,
            &[("4b", [1, 0, 0]), ("4c", [1, 0, 0]), ("2a", [0, 1, 0])],
            [8, 7, 0],
            0,
        );
        play(&mut g, "4b:E");
        assert_eq!(pit(&g, "4c"), [0, 0, 0]);
        assert_eq!(pit(&g, "4d"), [1, 0, 0]);
        assert_eq!(g.decision_kind(), "direction");
        assert_eq!(g.to_decide(), Some(0));
        assert_eq!(legal(&g), ["NW", "SE", "SW"]);
        play(&mut g, "SW");
        assert_eq!(pit(&g, "5d"), [1, 0, 0]);
        assert_eq!(g.to_decide(), Some(1));
        assert_eq!(g.plies(), 1);
    }

    /// The last stone is judged by what the pit held before it fell, not by
    /// its own colour: White sows 4a = W1 B1 East, choosing White first (to
    /// 4b); the last stone, Black's, falls on 4c which held only White: a
    /// relay, not a capture. The hand (W1 B1) asks the colour again; Black
    /// to 4d, then at the edge the direction, then White's stone to 3c.
    #[test]
    fn relay_judged_by_the_pit_not_the_last_stone() {
        let mut g = position(
            2,
            &[("4a", [1, 1, 0]), ("4c", [1, 0, 0]), ("2a", [0, 1, 0])],
            [7, 7, 0],
            0,
        );
        play(&mut g, "4a:E");
        assert_eq!(legal(&g), ["W", "B"]);
        play(&mut g, "W");
        assert_eq!(g.decision_kind(), "colour");
        assert_eq!(legal(&g), ["W", "B"]);
        assert_eq!(pit(&g, "4c"), [0, 0, 0]);
        play(&mut g, "B");
        assert_eq!(legal(&g), ["NW", "SE", "SW"]);
        play(&mut g, "NW");
        assert_eq!(pit(&g, "4a"), [0, 0, 0]);
        assert_eq!(pit(&g, "4b"), [1, 0, 0]);
        assert_eq!(pit(&g, "4d"), [0, 1, 0]);
        assert_eq!(pit(&g, "3c"), [1, 0, 0]);
        assert_eq!(g.captured(), [7, 7, 0]);
        assert_eq!(g.to_decide(), Some(1));
    }

    /// Corner control with 3+ stones, at the end of a turn: White holds 1a
    /// and 6a and moves its third stone 5e:SE into 6f: all three corners.
    #[test]
    fn three_corners_win() {
        let mut g = position(
            2,
            &[
                ("1a", [1, 0, 0]),
                ("6a", [1, 0, 0]),
                ("5e", [1, 0, 0]),
                ("3b", [0, 1, 0]),
            ],
            [6, 8, 0],
            0,
        );
        play(&mut g, "5e:SE");
        assert_eq!(g.outcome(), Some(Outcome::win(2, 0, Reason::Corners)));
    }

    /// Decision (docs/rules/tricala.md): a player with no stone on the board
    /// does not win by corners. White captures Black's last stone (4c) and
    /// reaches 8; Black, with none left, does not win; the game goes on and
    /// Black's turn is a recorded pass.
    #[test]
    fn no_corner_win_without_stones() {
        let mut g = position(
            2,
            &[
                ("4b", [1, 0, 0]),
                ("2a", [1, 0, 0]),
                ("3b", [1, 0, 0]),
                ("4c", [0, 1, 0]),
            ],
            [6, 8, 0],
            0,
        );
        play(&mut g, "4b:E");
        assert_eq!(g.captured(), [8, 8, 0]);
        assert_eq!(g.on_board(1), 0);
        assert_eq!(g.outcome(), None);
        assert_eq!(g.to_decide(), Some(1));
        assert_eq!(legal(&g), ["pass"]);
        play(&mut g, "pass");
        assert_eq!(g.plies(), 2);
        assert_eq!(g.to_decide(), Some(0));
    }

    /// The text's tie example with the ply cap reached by the same turn:
    /// the game's own end (the tie) is judged first (a ruling, docs/rules/tricala.md).
    #[test]
    fn ply_cap_after_the_games_own_end() {
        let mut s = settings(2);
        s.max_plies = 1;
        let pits = [
            ("6a", [1, 0, 0]),
            ("4b", [1, 0, 0]),
            ("1a", [0, 1, 0]),
            ("4c", [0, 1, 0]),
        ];
        let mut g = Tricala::from_position(&s, &pits, [6, 8, 0], 0).unwrap();
        play(&mut g, "4b:E");
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::Tie)));
        let mut g = Tricala::from_position(&s, &pits, [6, 8, 0], 0).unwrap();
        play(&mut g, "4b:W");
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::MaxPlies)));
    }

    /// Three players, the text's tie example extended: White (6a, 4b) takes
    /// 4c = Black 1 + Red 1 with its last stone (3 stones: 5 -> 8). White is
    /// left with one stone, on corner 6a; Red with one, on corner 1a: both
    /// win at once with 8 captured each: they share first place (`tie`),
    /// and Black, who reached no goal, is last. With White at 6 instead, it
    /// reaches 9 against Red's 8 and wins alone (reason `captures`).
    #[test]
    fn three_player_simultaneous_wins() {
        let pits = [
            ("6a", [1, 0, 0]),
            ("4b", [1, 0, 0]),
            ("4c", [0, 1, 1]),
            ("2b", [0, 1, 0]),
            ("1a", [0, 0, 1]),
        ];
        let mut g = position(3, &pits, [5, 8, 8], 0);
        play(&mut g, "4b:E");
        assert_eq!(g.captured(), [8, 8, 8]);
        let o = g.outcome().expect("over");
        assert_eq!((&o.ranks[..3], o.reason), (&[0, 1, 0][..], Reason::Tie));
        assert_eq!(o.scores(), vec![0.75, 0.0, 0.75]);

        let mut g = position(3, &pits, [6, 7, 8], 0);
        play(&mut g, "4b:E");
        assert_eq!(g.captured(), [9, 7, 8]);
        assert!(g.controls_corners(2));
        assert_eq!(g.outcome(), Some(Outcome::win(3, 0, Reason::Captures)));
    }

    /// The drop guard (the rulings (docs/rules/tricala.md), all games) in a relay that never ends.
    /// The rim of the board is a cycle of 15 pits whose three corner turns
    /// are forced: P0..P14 = 6a 6b 6c 6d 6e 6f (E), 5e 4d 3c 2b 1a (NW),
    /// 2a 3a 4a 5a (SW), back to 6a (E). White has 2 stones on 5a (P14) and
    /// one on each of 6b 6d 6f 4d 2b 2a 4a (P1, P3, .. P13). Sowing 5a:SW,
    /// every second pit relays 2 stones: after 16 drops the hand of 2 has
    /// just been lifted one pit further on, with the same pattern shifted by
    /// one (lifted pit empty, then 0, 1, 0, 1, ... ahead): the turn never
    /// ends. 10,001 = 16 x 625 + 1: after 625 such steps the hand was just
    /// lifted at P(14 + 625 mod 15) = P9 = 2b, and the 10,001st drop puts a
    /// stone on 1a (P10), one stone left in hand: the game ends there as a
    /// draw, `perpetual`, the turn over with it (a ply, as in Kisolo).
    #[test]
    fn endless_relay_hits_the_drop_guard() {
        let w = [1, 0, 0];
        let mut pits = vec![("5a", [2, 0, 0]), ("3b", [0, 1, 0])];
        for p in ["6b", "6d", "6f", "4d", "2b", "2a", "4a"] {
            pits.push((p, w));
        }
        let mut g = position(2, &pits, [4, 4, 0], 0);
        play(&mut g, "5a:SW");
        let mut turns = 0;
        while g.to_decide().is_some() {
            assert_eq!(g.decision_kind(), "direction");
            let opts = legal(&g);
            assert_eq!(opts.len(), 1, "corner turns are forced");
            play(&mut g, &opts[0]);
            turns += 1;
        }
        // Each corner is reached once per 15 drops or so: about 2,000 turns.
        assert!(turns > 1900, "{turns}");
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::Perpetual)));
        assert_eq!(g.plies(), 1);
        for p in 0..PITS as u8 {
            let want = match pit_name(p).as_str() {
                "1a" | "2a" | "4a" | "6a" | "6c" | "6e" | "5e" | "3c" => w,
                "3b" => [0, 1, 0],
                _ => [0, 0, 0],
            };
            assert_eq!(g.pit(p), want, "{}", pit_name(p));
        }
        let v = g.snapshot();
        assert_eq!(v["hand"], json!({"W": 1, "B": 0}));
        assert_eq!(v["at"], "1a");
        assert_eq!(v["direction"], "NW");
    }

    fn all_opts() -> Vec<Opt> {
        let mut v = Vec::new();
        for p in 0..PITS as u8 {
            v.push(Opt::Place(p));
            for d in Dir::ALL {
                v.push(Opt::Sow(p, d));
            }
        }
        v.extend(Dir::ALL.map(Opt::Direction));
        v.extend((0..3).map(Opt::Colour));
        v.push(Opt::Pass);
        v
    }

    /// Random games: invariants after every decision, every listed option
    /// applies and round-trips through its notation, unlisted ones are
    /// refused without change, every game ends within the ply cap.
    #[test]
    fn random_games() {
        let universe = all_opts();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut buf = Vec::new();
        let mut reasons = std::collections::BTreeMap::new();
        for game in 0..3000 {
            let players = 2 + game % 2;
            let mut s = settings(players);
            s.max_plies = 400;
            let mut g = Tricala::new(&s).unwrap();
            let thorough = game < 100;
            while g.to_decide().is_some() {
                g.options(&mut buf);
                assert!(!buf.is_empty());
                for &o in &buf {
                    assert_eq!(g.parse(&g.notation(o)), Ok(o));
                }
                if thorough {
                    for &o in &buf {
                        let mut h = g;
                        h.apply(o).unwrap();
                        h.check_invariants().unwrap();
                    }
                    for &o in universe.iter().filter(|o| !buf.contains(o)) {
                        let mut h = g;
                        assert!(h.apply(o).is_err(), "{:?} accepted", o);
                        assert_eq!(h, g);
                    }
                }
                let o = buf[rng.gen_range(0..buf.len())];
                g.apply(o).unwrap();
                g.check_invariants()
                    .unwrap_or_else(|e| panic!("{e}\n{}", g.render()));
            }
            assert!(g.plies() <= 400);
            *reasons
                .entry(g.outcome().unwrap().reason.name())
                .or_insert(0) += 1;
        }
        assert!(reasons.contains_key("captures") || reasons.contains_key("corners"));
    }

    #[test]
    fn snapshot_fields() {
        let mut g = position(2, &[("4c", [1, 2, 0]), ("2a", [0, 1, 0])], [6, 8, 0], 0);
        play(&mut g, "4c:E");
        let v = g.snapshot();
        assert_eq!(v["pits"]["4c"], json!({"W": 0, "B": 0}));
        assert_eq!(v["hand"], json!({"W": 1, "B": 2}));
        assert_eq!(v["at"], "4c");
        assert_eq!(v["direction"], "E");
        assert_eq!(v["captured"], json!([6, 8]));
        assert!(g.render().contains("2a:B1"));
    }
    /// Cross-check against an independent implementation: a Python program
    /// written from the rule text and the rulings (docs/rules/tricala.md) alone (not from this file)
    /// played random 2- and 3-player games and recorded, before every
    /// decision, its list of legal options and the option it picked, then
    /// the result, the plies, the captures and the final board
    /// (tests/data/rules/tricala_random_games.jsonl, one game per line).
    #[test]
    fn independent_implementation_agrees() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/rules/tricala_random_games.jsonl"
        );
        let path = std::env::var("TRICALA_GAMES").unwrap_or(path.to_string());
        let text = std::fs::read_to_string(path).unwrap();
        let mut games = 0;
        for (n, line) in text.lines().enumerate() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let players = v["players"].as_u64().unwrap() as usize;
            let mut s = settings(players);
            s.max_plies = v["max_plies"].as_u64().unwrap() as u32;
            let mut g = Tricala::new(&s).unwrap();
            let moves = replay_reference_steps(&mut g, &v["steps"], n);
            let r = &v["result"];
            let o = g.outcome().unwrap_or_else(|| panic!("game {n} not over"));
            let winners: Vec<usize> = r[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_u64().unwrap() as usize)
                .collect();
            let reason = match r[2].as_str().unwrap() {
                "captures" => Reason::Captures,
                "corners" => Reason::Corners,
                "tie" => Reason::Tie,
                "stalemate" => Reason::Stalemate,
                "max_plies" => Reason::MaxPlies,
                "perpetual" => Reason::Perpetual,
                other => panic!("{other}"),
            };
            let ranks: Vec<u8> = (0..players)
                .map(|s| u8::from(!winners.contains(&s)))
                .collect();
            assert_eq!(
                (&o.ranks[..players], o.reason),
                (&ranks[..], reason),
                "game {n}: {moves:?}"
            );
            assert_eq!(
                u64::from(g.plies()),
                v["plies"].as_u64().unwrap(),
                "game {n}"
            );
            for c in 0..players {
                assert_eq!(
                    u64::from(g.captured()[c]),
                    v["captured"][c].as_u64().unwrap(),
                    "game {n}"
                );
            }
            for p in 0..PITS as u8 {
                let want: Vec<u8> = match v["pits"].get(pit_name(p)) {
                    Some(a) => a
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_u64().unwrap() as u8)
                        .collect(),
                    None => vec![0; players],
                };
                assert_eq!(
                    g.pit(p)[..players].to_vec(),
                    want,
                    "game {n} pit {}",
                    pit_name(p)
                );
            }
            games += 1;
        }
        assert!(games >= 20, "{games} games");
    }
}
