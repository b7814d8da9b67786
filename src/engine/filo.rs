//! F.I.L.O, "First in, last out" (Richard Hutnik, 2011; docs/rules/filo.md):
//! the rules of the game and nothing else. Must
//! not touch processes, transport or schedules; the string edge is
//! `notation`/`parse`.
//!
//! One track of 8 squares `A`..`H`, left to right. White (seat 0) moves
//! first, enters at A and sows rightwards; Black (seat 1) enters at H and
//! sows leftwards. Each player has 12 stackable checkers, all in the reserve
//! ("starting pool") at the start; checkers that leave the board go to the
//! exit area. Stacks hold at most 4 checkers.
//!
//! A turn is one decision:
//! - entry phase (while either reserve holds checkers): `1`..`8`, the number
//!   of checkers to enter, or `pass` when one's own reserve is empty;
//! - movement phase (both reserves empty): the letter of a stack topped by
//!   one's own checker, or the same letter with `!` for the escape move.
//!
//! After each turn: a player reduced to one piece or none wins (both: the
//! mover); otherwise the player to move with no legal move loses. See
//! docs/rules/filo.md and the rulings (docs/rules/filo.md) (F.I.L.O).

use super::{EngineError, Outcome, Reason, Rules, Seat, Settings, Variant};

/// The squares of the track.
pub const SQUARES: usize = 8;
/// "A square, which has already been occupied by four checkers, is skipped."
pub const MAX_STACK: u8 = 4;
/// Checkers per player.
pub const CHECKERS: u8 = 12;

/// White: seat 0, moves first, sows A -> H.
pub const WHITE: Seat = 0;
/// Black: seat 1, sows H -> A.
pub const BLACK: Seat = 1;

const LETTERS: &[u8; SQUARES] = b"ABCDEFGH";

/// The colour of a checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Colour {
    White = 0,
    Black = 1,
}

impl Colour {
    fn of(seat: Seat) -> Colour {
        if seat == WHITE {
            Colour::White
        } else {
            Colour::Black
        }
    }

    fn seat(self) -> Seat {
        self as Seat
    }

    fn letter(self) -> char {
        match self {
            Colour::White => 'W',
            Colour::Black => 'B',
        }
    }
}

/// One option of a F.I.L.O decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FiloOpt {
    /// Entry move: this many checkers from the reserve (`1`..`8`).
    Enter(u8),
    /// Movement move: the stack on this square (0 = `A` .. 7 = `H`).
    Move(u8),
    /// The same movement move followed by the escape (`C!`).
    Escape(u8),
    /// The only option of a player whose reserve is empty while the
    /// opponent's is not.
    Pass,
}

/// A F.I.L.O position. `Clone` copies a few dozen bytes; nothing on the heap.
#[derive(Clone, Debug, Hash)]
pub struct Filo {
    /// Each square's stack, bottom to top; only `heights[sq]` entries count.
    stacks: [[Colour; MAX_STACK as usize]; SQUARES],
    heights: [u8; SQUARES],
    /// Checkers still in each player's reserve (starting pool), by seat.
    reserve: [u8; 2],
    /// Checkers of each colour in the exit area, by seat.
    exited: [u8; 2],
    to_move: u8,
    plies: u32,
    max_plies: u32,
    outcome: Option<Outcome>,
}

impl Filo {
    /// An arbitrary position: `squares` lists each square `A`..`H` bottom to
    /// top as a string of `W`/`B` (`""` for an empty square, `"WBW"` for a
    /// White checker on a Black one on a White one), then each player's
    /// reserve (by seat) and the seat to move. Each colour's checkers not on
    /// the board or in the reserve are in the exit area.
    ///
    /// Checks stack heights (at most 4) and that no colour has more than 12
    /// checkers. The game is not over, whatever the position (the end rules
    /// are judged at the end of a turn).
    pub fn from_position(
        squares: [&str; SQUARES],
        reserve: [u8; 2],
        to_move: Seat,
        settings: &Settings,
    ) -> Result<Filo, EngineError> {
        let bad = |why: String| EngineError::Setting {
            key: "position".into(),
            why,
        };
        let mut g = Filo::new(settings)?;
        g.reserve = reserve;
        for (sq, text) in squares.iter().enumerate() {
            if text.len() > MAX_STACK as usize {
                return Err(bad(format!(
                    "square {} holds more than 4",
                    Self::letter(sq)
                )));
            }
            for (i, c) in text.bytes().enumerate() {
                g.stacks[sq][i] = match c {
                    b'W' | b'w' => Colour::White,
                    b'B' | b'b' => Colour::Black,
                    _ => return Err(bad(format!("`{}` is not W or B", c as char))),
                };
            }
            g.heights[sq] = text.len() as u8;
        }
        for seat in [WHITE, BLACK] {
            let present = g.on_board(seat) + reserve[seat] as u32;
            if present > CHECKERS as u32 {
                return Err(bad(format!(
                    "seat {seat} has {present} checkers (at most 12)"
                )));
            }
            g.exited[seat] = CHECKERS - present as u8;
        }
        if to_move > BLACK {
            return Err(bad(format!(
                "seat {to_move} does not exist (0 White, 1 Black)"
            )));
        }
        g.to_move = to_move as u8;
        Ok(g)
    }

    /// Each square `A`..`H` bottom to top as `W`/`B` letters (`""` if empty).
    pub fn squares(&self) -> [String; SQUARES] {
        std::array::from_fn(|sq| {
            self.stacks[sq][..self.heights[sq] as usize]
                .iter()
                .map(|c| c.letter())
                .collect()
        })
    }

    /// Checkers in each player's reserve, by seat.
    pub fn reserve(&self) -> [u8; 2] {
        self.reserve
    }

    /// Checkers of each colour in the exit area, by seat.
    pub fn exited(&self) -> [u8; 2] {
        self.exited
    }

    /// "A player's pieces are the checkers on the board plus in reserve"
    /// (a ruling, docs/rules/filo.md); exited checkers are not pieces.
    pub fn pieces(&self, seat: Seat) -> u8 {
        CHECKERS - self.exited[seat]
    }

    fn letter(sq: usize) -> char {
        LETTERS.get(sq).map_or('?', |&b| b as char)
    }

    fn on_board(&self, seat: Seat) -> u32 {
        let colour = Colour::of(seat);
        (0..SQUARES)
            .map(|sq| {
                self.stacks[sq][..self.heights[sq] as usize]
                    .iter()
                    .filter(|&&c| c == colour)
                    .count() as u32
            })
            .sum()
    }

    /// "The second phase begins after all pieces have entered the board"
    /// (the rulings (docs/rules/filo.md): only when both reserves are empty).
    fn movement_phase(&self) -> bool {
        self.reserve == [0, 0]
    }

    fn top(&self, sq: usize) -> Option<Colour> {
        match self.heights[sq] {
            0 => None,
            h => Some(self.stacks[sq][h as usize - 1]),
        }
    }

    /// "A stack, which he controls (that is, a stack which is topped by one
    /// of his own checkers)".
    fn controls(&self, seat: Seat, sq: usize) -> bool {
        self.top(sq) == Some(Colour::of(seat))
    }

    /// The next square in a player's direction of play, wrapping from the
    /// last square to the first ("it continues on the first square").
    fn next(seat: Seat, sq: usize) -> usize {
        if seat == WHITE {
            (sq + 1) % SQUARES
        } else {
            (sq + SQUARES - 1) % SQUARES
        }
    }

    /// The square nearest to a player (where entry begins).
    fn nearest(seat: Seat) -> usize {
        if seat == WHITE {
            0
        } else {
            SQUARES - 1
        }
    }

    fn non_full_squares(&self) -> u8 {
        self.heights.iter().filter(|&&h| h < MAX_STACK).count() as u8
    }

    /// The largest entry move: "takes 1-8 checkers ... from his reserve",
    /// and "it is not permitted to sow beyond the end of the row", so at
    /// most one per square holding fewer than 4.
    fn max_entry(&self, seat: Seat) -> u8 {
        self.reserve[seat].min(self.non_full_squares())
    }

    /// Entry: sow `k` checkers one by one on consecutive squares starting on
    /// the square nearest to the player, on top of whatever is there,
    /// skipping squares that hold four. The caller checked `k`.
    fn enter(&mut self, seat: Seat, k: u8) {
        let colour = Colour::of(seat);
        let mut sq = Self::nearest(seat);
        let mut left = k;
        while left > 0 {
            let h = self.heights[sq];
            if h < MAX_STACK {
                self.stacks[sq][h as usize] = colour;
                self.heights[sq] = h + 1;
                left -= 1;
            }
            sq = Self::next(seat, sq);
        }
        self.reserve[seat] -= k;
    }

    /// Movement: lift the whole stack and sow its contents one by one on the
    /// ensuing squares in the mover's direction, the lowermost checker
    /// first, wrapping round. A checker that meets a stack of four goes to
    /// the exit area, and the next checker goes to the following square.
    /// (The emptied square receives normally if a lap reaches it, the rulings (docs/rules/filo.md);
    /// with at most 4 checkers on 8 squares this cannot happen.)
    fn sow(&mut self, seat: Seat, from: usize) {
        let lifted = self.stacks[from];
        let n = self.heights[from] as usize;
        self.heights[from] = 0;
        let mut sq = from;
        for &checker in &lifted[..n] {
            sq = Self::next(seat, sq);
            let h = self.heights[sq];
            if h == MAX_STACK {
                self.exited[checker.seat()] += 1;
            } else {
                self.stacks[sq][h as usize] = checker;
                self.heights[sq] = h + 1;
            }
        }
    }

    /// The escape: "the player ... must be down to 2 to 4 pieces; these
    /// pieces must all be arranged into a single stack; this stack may not
    /// contain any pieces of the opponent". Returns that stack's square.
    /// Only asked after the mover's own movement move (a ruling, docs/rules/filo.md), when the
    /// reserve is empty, so all pieces are on the board.
    fn escape_stack(&self, seat: Seat) -> Option<usize> {
        let pieces = self.pieces(seat);
        if !(2..=MAX_STACK).contains(&pieces) {
            return None;
        }
        let colour = Colour::of(seat);
        (0..SQUARES).find(|&sq| {
            self.heights[sq] == pieces
                && self.stacks[sq][..pieces as usize]
                    .iter()
                    .all(|&c| c == colour)
        })
    }

    /// Whether moving the stack on `from` lets the mover escape.
    fn escape_after(&self, seat: Seat, from: usize) -> bool {
        // Pieces only fall during a move (exits), by at most 4: above 8 the
        // mover keeps more than 4 whatever happens.
        if self.pieces(seat) < 2 || self.pieces(seat) > 2 * MAX_STACK {
            return false;
        }
        let mut after = self.clone();
        after.sow(seat, from);
        after.escape_stack(seat).is_some()
    }

    /// The mover's legal options exist? Entry and pass always do (at most 23
    /// checkers are on the board while a reserve holds one, so some square
    /// has room); in the movement phase, a controlled stack must exist.
    fn has_legal_move(&self, seat: Seat) -> bool {
        !self.movement_phase() || (0..SQUARES).any(|sq| self.controls(seat, sq))
    }

    /// The end of a turn (the rulings (docs/rules/filo.md), F.I.L.O; common rules): one ply more;
    /// a player with one piece or none wins (if both, the mover); else the
    /// opponent, now to move, loses if they have no legal move ("the player
    /// who moves last ... wins"); else the ply cap.
    fn end_turn(&mut self) {
        let mover = self.to_move as Seat;
        let opponent = 1 - mover;
        self.plies += 1;
        self.to_move = opponent as u8;
        if self.pieces(mover) <= 1 {
            self.outcome = Some(Outcome::win(2, mover, Reason::Pieces));
        } else if self.pieces(opponent) <= 1 {
            self.outcome = Some(Outcome::win(2, opponent, Reason::Pieces));
        } else if !self.has_legal_move(opponent) {
            self.outcome = Some(Outcome::win(2, mover, Reason::NoMoves));
        } else if self.plies >= self.max_plies {
            self.outcome = Some(Outcome::draw(2, Reason::MaxPlies));
        }
    }
}

impl Rules for Filo {
    type Opt = FiloOpt;
    const VARIANT: Variant = Variant::Filo;

    /// "The gameboard is initially empty", 12 checkers in each reserve,
    /// White to move.
    fn new(settings: &Settings) -> Result<Self, EngineError> {
        settings.only_players(&[2])?;
        settings.only_options(&[])?;
        Ok(Filo {
            stacks: [[Colour::White; MAX_STACK as usize]; SQUARES],
            heights: [0; SQUARES],
            reserve: [CHECKERS; 2],
            exited: [0; 2],
            to_move: WHITE as u8,
            plies: 0,
            max_plies: settings.max_plies,
            outcome: None,
        })
    }

    fn players(&self) -> usize {
        2
    }

    fn to_decide(&self) -> Option<Seat> {
        match self.outcome {
            None => Some(self.to_move as Seat),
            Some(_) => None,
        }
    }

    fn decision_kind(&self) -> &'static str {
        if self.outcome.is_some() {
            "none"
        } else if self.movement_phase() {
            "move"
        } else if self.reserve[self.to_move as usize] > 0 {
            "entry"
        } else {
            "pass"
        }
    }

    /// Entry phase: `1`, `2`, .. up to the largest legal number; with an
    /// empty reserve: `pass` alone. Movement phase: the controlled stacks
    /// in square order `A`..`H`, each followed by its escape form (`C!`)
    /// when that move allows the escape.
    fn options(&self, out: &mut Vec<FiloOpt>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        let me = self.to_move as Seat;
        if self.movement_phase() {
            for sq in 0..SQUARES {
                if self.controls(me, sq) {
                    out.push(FiloOpt::Move(sq as u8));
                    if self.escape_after(me, sq) {
                        out.push(FiloOpt::Escape(sq as u8));
                    }
                }
            }
        } else if self.reserve[me] > 0 {
            out.extend((1..=self.max_entry(me)).map(FiloOpt::Enter));
        } else {
            out.push(FiloOpt::Pass);
        }
    }

    fn apply(&mut self, opt: FiloOpt) -> Result<(), EngineError> {
        if self.outcome.is_some() {
            return Err(EngineError::GameOver);
        }
        let me = self.to_move as Seat;
        let illegal = || EngineError::Illegal(self.notation(opt));
        match opt {
            FiloOpt::Enter(k) => {
                if self.movement_phase() || k == 0 || k > self.max_entry(me) {
                    return Err(illegal());
                }
                self.enter(me, k);
            }
            FiloOpt::Pass => {
                if self.movement_phase() || self.reserve[me] > 0 {
                    return Err(illegal());
                }
            }
            FiloOpt::Move(sq) => {
                let sq = sq as usize;
                if !self.movement_phase() || sq >= SQUARES || !self.controls(me, sq) {
                    return Err(illegal());
                }
                self.sow(me, sq);
            }
            FiloOpt::Escape(sq) => {
                let sq = sq as usize;
                if !self.movement_phase() || sq >= SQUARES || !self.controls(me, sq) {
                    return Err(illegal());
                }
                let mut after = self.clone();
                after.sow(me, sq);
                let Some(stack) = after.escape_stack(me) else {
                    return Err(illegal());
                };
                // "The stack is removed from the board, thus winning the game."
                after.exited[me] += after.heights[stack];
                after.heights[stack] = 0;
                after.plies += 1;
                after.to_move = (1 - me) as u8;
                after.outcome = Some(Outcome::win(2, me, Reason::Escape));
                *self = after;
                return Ok(());
            }
        }
        self.end_turn();
        Ok(())
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn plies(&self) -> u32 {
        self.plies
    }

    fn notation(&self, opt: FiloOpt) -> String {
        match opt {
            FiloOpt::Enter(k) => k.to_string(),
            FiloOpt::Move(sq) => Self::letter(sq as usize).to_string(),
            FiloOpt::Escape(sq) => format!("{}!", Self::letter(sq as usize)),
            FiloOpt::Pass => "pass".to_string(),
        }
    }

    /// `1`..`8`, `A`..`H`, `A!`..`H!`, `pass` (letters in either case).
    fn parse(&self, s: &str) -> Result<FiloOpt, EngineError> {
        let t = s.trim();
        let bad = || EngineError::Unparsable(s.to_string());
        if t.eq_ignore_ascii_case("pass") {
            return Ok(FiloOpt::Pass);
        }
        let (body, escape) = match t.strip_suffix('!') {
            Some(body) => (body, true),
            None => (t, false),
        };
        match body.as_bytes() {
            [d @ b'1'..=b'8'] if !escape => Ok(FiloOpt::Enter(d - b'0')),
            [c] if (b'A'..=b'H').contains(&c.to_ascii_uppercase()) => {
                let sq = c.to_ascii_uppercase() - b'A';
                Ok(if escape {
                    FiloOpt::Escape(sq)
                } else {
                    FiloOpt::Move(sq)
                })
            }
            _ => Err(bad()),
        }
    }

    /// `{"squares": {"A": ["W","B"], ..}` (bottom to top), `"reserve"`,
    /// `"exited"`, `"pieces"` (each `{"white": n, "black": n}`), `"phase"`
    /// (`entry`|`movement`), `"to_move"` (`white`|`black`), `"result"`
    /// (null, or `{"winner": "white"|"black"|null, "reason": ..}`).
    fn write_snapshot(&self, o: &mut super::json::Obj<'_>) {
        let name = |s: Seat| if s == WHITE { "white" } else { "black" };
        let per_seat = |o: &mut super::json::Obj<'_>, key: &str, v: [u8; 2]| {
            o.obj(key, |m| {
                m.uint("black", u64::from(v[BLACK]));
                m.uint("white", u64::from(v[WHITE]));
            })
        };
        per_seat(o, "exited", self.exited);
        o.str(
            "phase",
            if self.movement_phase() {
                "movement"
            } else {
                "entry"
            },
        );
        per_seat(o, "pieces", [self.pieces(WHITE), self.pieces(BLACK)]);
        per_seat(o, "reserve", self.reserve);
        match self.outcome {
            Some(out) => o.obj("result", |r| {
                r.str("reason", out.reason.name());
                match (0..2).find(|&s| out.ranks[s] == 0 && !out.is_draw()) {
                    Some(s) => r.str("winner", name(s)),
                    None => r.null("winner"),
                }
            }),
            None => o.null("result"),
        }
        o.obj("squares", |m| {
            for sq in 0..SQUARES {
                let key = Self::letter(sq);
                let b = m.key(key.encode_utf8(&mut [0; 4]));
                b.push(b'[');
                for (i, c) in self.stacks[sq][..self.heights[sq] as usize]
                    .iter()
                    .enumerate()
                {
                    if i > 0 {
                        b.push(b',');
                    }
                    super::json::string(b, c.letter().encode_utf8(&mut [0; 4]));
                }
                b.push(b']');
            }
        });
        o.str("to_move", name(self.to_move as Seat));
    }

    /// Each square's stack, top checker on the top line.
    fn render(&self) -> String {
        let mut s = String::new();
        for level in (0..MAX_STACK as usize).rev() {
            for sq in 0..SQUARES {
                let c = if level < self.heights[sq] as usize {
                    self.stacks[sq][level].letter()
                } else {
                    '.'
                };
                s.push_str(&format!(" {c} "));
            }
            s.push('\n');
        }
        s.push_str(" A  B  C  D  E  F  G  H\n");
        s.push_str(&format!(
            "reserve W {} B {}; exited W {} B {}; {}\n",
            self.reserve[0],
            self.reserve[1],
            self.exited[0],
            self.exited[1],
            match (self.outcome, self.to_move as Seat) {
                (Some(_), _) => "game over",
                (None, WHITE) => "White to move",
                (None, _) => "Black to move",
            },
        ));
        s
    }

    /// Each colour: board + reserve + exit area = 12; stacks of at most 4.
    fn check_invariants(&self) -> Result<(), String> {
        if let Some(sq) = (0..SQUARES).find(|&sq| self.heights[sq] > MAX_STACK) {
            return Err(format!(
                "square {} holds {} checkers (at most 4)",
                Self::letter(sq),
                self.heights[sq]
            ));
        }
        for seat in [WHITE, BLACK] {
            let total = self.on_board(seat) + self.reserve[seat] as u32 + self.exited[seat] as u32;
            if total != CHECKERS as u32 {
                return Err(format!("seat {seat} has {total} checkers, expected 12"));
            }
        }
        if self.to_move > 1 {
            return Err(format!("seat {} to move", self.to_move));
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

    fn s() -> Settings {
        Settings::default()
    }

    /// 12 single-checker entries each, alternating from White.
    fn after_single_entries() -> Filo {
        let mut g = Filo::new(&s()).unwrap();
        for i in 0..24 {
            assert_eq!(g.to_decide(), Some(i % 2), "entry {i}");
            play(&mut g, "1");
        }
        g
    }

    /// "The second player can force a board position ... by simply putting
    /// just one checker per turn on the board. ... 4 W 4 W 4 W ...... ......
    /// 4 B 4 B 4 B ... White to move": four White checkers on each of A, B,
    /// C (White enters at A and skips full squares), D and E empty, four
    /// Black checkers on each of F, G, H. Both reserves are empty, so the
    /// movement phase starts with White, who controls A, B and C.
    #[test]
    fn single_entries_give_the_texts_position() {
        let g = after_single_entries();
        assert_eq!(
            g.squares(),
            ["WWWW", "WWWW", "WWWW", "", "", "BBBB", "BBBB", "BBBB"]
        );
        assert_eq!(g.reserve(), [0, 0]);
        assert_eq!(g.exited(), [0, 0]);
        assert_eq!(g.to_decide(), Some(WHITE));
        assert_eq!(g.decision_kind(), "move");
        assert_eq!(legal(&g), ["A", "B", "C"]);
        assert_eq!(g.plies(), 24);
        g.check_invariants().unwrap();
    }

    /// "It is not permitted to sow beyond the end of the row": with A full,
    /// White may enter at most 7; here also B..H: after four single entries
    /// each, A and H are full, so at most 6 (6 non-full squares).
    #[test]
    fn entry_skips_full_squares_and_never_wraps() {
        let mut g = Filo::new(&s()).unwrap();
        assert_eq!(legal(&g), ["1", "2", "3", "4", "5", "6", "7", "8"]);
        for _ in 0..8 {
            play(&mut g, "1");
        }
        assert_eq!(g.squares(), ["WWWW", "", "", "", "", "", "", "BBBB"]);
        assert_eq!(legal(&g), ["1", "2", "3", "4", "5", "6"]);
        assert!(g.apply(FiloOpt::Enter(7)).is_err());
        play(&mut g, "6");
        assert_eq!(g.squares(), ["WWWW", "W", "W", "W", "W", "W", "W", "BBBB"]);
        assert_eq!(g.reserve(), [2, 8]);
    }

    /// The published solution (Ralf Gering): after the single entries,
    /// every main line and every numbered alternative replays legally, the
    /// game is not over before the last move, and Black wins. Line (4) is
    /// printed "If C (instead of B), then A, B, C+", but square A is empty
    /// when Black is to play it; the rulings (docs/rules/filo.md) corrects the misprint A -> H
    /// (the line then ends like (3)): the corrected line is tested here.
    #[test]
    fn published_solution_lines_are_black_wins() {
        let lines: [(&str, &str); 10] = [
            ("A", "A F B G C H"),
            ("(1)", "A F C G B H C G"),
            ("B", "B F A G B F C H"),
            ("(2)", "B F C G A F B H"),
            ("(3)", "B F A G C H B C"),
            (
                "(4) corrected: H for the misprinted A",
                "B F C G A F C H B C",
            ),
            ("C", "C F A G B H C F G B"),
            ("(5)", "C F B G A F B H C F G H A G B F C E B A C H E G"),
            ("(6)", "C F B G A F C F B H C F"),
            ("(7)", "C F B G A F C F G H B F C G"),
        ];
        for (name, line) in lines {
            let mut g = after_single_entries();
            let moves: Vec<&str> = line.split_whitespace().collect();
            for (i, m) in moves.iter().enumerate() {
                assert_eq!(g.outcome(), None, "line {name}: over before move {i} `{m}`");
                assert!(
                    legal(&g).contains(&m.to_string()),
                    "line {name}: move {i} `{m}` not legal; legal {:?}\n{}",
                    legal(&g),
                    g.render()
                );
                play(&mut g, m);
                g.check_invariants().unwrap();
            }
            let o = g
                .outcome()
                .unwrap_or_else(|| panic!("line {name} not over"));
            // "two of the three winning conditions have been proven to be
            // superfluous (i.e reducing one's pieces to less than 2 and the
            // 'escape move')": every line is won by moving last.
            assert_eq!(
                o,
                Outcome::win(2, BLACK, Reason::NoMoves),
                "line {name}\n{}",
                g.render()
            );
        }
    }

    /// Note (4) as printed, "If C (instead of B), then A, B, C+": Black's A
    /// is not legal (square A is empty then), which is why the rulings (docs/rules/filo.md)
    /// corrects it.
    #[test]
    fn note_4_as_printed_is_illegal() {
        let mut g = after_single_entries();
        for m in ["B", "F", "C", "G", "A", "F", "C"] {
            play(&mut g, m);
        }
        assert_eq!(g.to_decide(), Some(BLACK));
        assert_eq!(g.squares()[0], "");
        assert!(matches!(
            g.apply(FiloOpt::Move(0)),
            Err(EngineError::Illegal(_))
        ));
        assert!(legal(&g).contains(&"H".to_string()));
    }

    /// Main line A worked by hand: A: B and C are full, two White checkers
    /// exit, D and E get one each. F: E, D get a Black each, two exit at C
    /// and B. B: one exits at C, D, E, F get one each. G: F, E, D each get
    /// one, one exits at C. C: two exit at D and E, F and G get one. H: G
    /// and F get one, two exit at E and D. White tops nothing: Black wins
    /// because White has no legal move (Black moved last).
    #[test]
    fn main_line_a_by_hand() {
        let mut g = after_single_entries();
        for m in ["A", "F", "B", "G", "C", "H"] {
            play(&mut g, m);
        }
        assert_eq!(g.squares(), ["", "", "", "WBWB", "WBWB", "WBWB", "WB", ""]);
        assert_eq!(g.exited(), [5, 5]);
        assert_eq!(g.outcome(), Some(Outcome::win(2, BLACK, Reason::NoMoves)));
    }

    /// Wrap: "If a sowing is not complete, when the last square is reached,
    /// it continues on the first square." White's G (Black under White):
    /// Black to H, White to A. Black's B: A, then H, then G.
    #[test]
    fn sowing_wraps_round() {
        let mut g =
            Filo::from_position(["", "", "BB", "WW", "", "", "BW", "B"], [0, 0], WHITE, &s())
                .unwrap();
        assert_eq!(legal(&g), ["D", "G"]);
        play(&mut g, "G");
        assert_eq!(g.squares(), ["W", "", "BB", "WW", "", "", "", "BB"]);
        assert_eq!(g.outcome(), None);

        let mut g =
            Filo::from_position(["W", "WBB", "", "", "", "", "", "WW"], [0, 0], BLACK, &s())
                .unwrap();
        play(&mut g, "B");
        assert_eq!(g.squares(), ["WW", "", "", "", "", "", "B", "WWB"]);
    }

    /// Exit: a checker that meets a stack of four goes to the exit area
    /// (its own colour's count), and the next checker goes to the following
    /// square. White's C = Black, White, White over D = four Black: the Black
    /// checker exits, the Whites land on E and F.
    #[test]
    fn full_stack_sends_the_checker_to_the_exit_area() {
        let mut g = Filo::from_position(
            ["", "", "BWW", "BBBB", "", "", "", "WB"],
            [0, 0],
            WHITE,
            &s(),
        )
        .unwrap();
        assert_eq!(g.exited(), [9, 6]);
        play(&mut g, "C");
        assert_eq!(g.squares(), ["", "", "", "BBBB", "W", "W", "", "WB"]);
        assert_eq!(g.exited(), [9, 7]);
        assert_eq!((g.pieces(WHITE), g.pieces(BLACK)), (3, 5));
        assert_eq!(g.to_decide(), Some(BLACK));
        assert_eq!(legal(&g), ["D", "H"]);
    }

    /// Escape: White has 3 pieces, C = W and D = WW. Moving C makes D a
    /// pure White stack of all 3: both `C` and `C!` are offered (D's move
    /// scatters them: no `D!`). `C!` removes the stack and wins.
    #[test]
    fn escape_is_offered_and_wins() {
        let pos = ["", "", "W", "WW", "", "B", "BB", "BB"];
        let mut g = Filo::from_position(pos, [0, 0], WHITE, &s()).unwrap();
        assert_eq!(legal(&g), ["C", "C!", "D"]);
        assert!(g.apply(FiloOpt::Escape(3)).is_err());
        play(&mut g, "C!");
        assert_eq!(g.squares(), ["", "", "", "", "", "B", "BB", "BB"]);
        assert_eq!(g.exited(), [12, 7]);
        assert_eq!(g.outcome(), Some(Outcome::win(2, WHITE, Reason::Escape)));
        assert_eq!(g.plies(), 1);
    }

    /// "If the player forgets it, the stack can no longer be used for an
    /// escape move": after plain `C`, Black plays F (to E), and White's
    /// pure stack on D offers no `D!`.
    #[test]
    fn escape_only_in_the_turn_the_stack_was_made() {
        let pos = ["", "", "W", "WW", "", "B", "BB", "BB"];
        let mut g = Filo::from_position(pos, [0, 0], WHITE, &s()).unwrap();
        play(&mut g, "C");
        assert_eq!(g.outcome(), None);
        play(&mut g, "F");
        assert_eq!(g.squares(), ["", "", "", "WWW", "B", "", "BB", "BB"]);
        assert_eq!(legal(&g), ["D"]);
        let before = g.squares();
        assert!(matches!(
            g.apply(FiloOpt::Escape(3)),
            Err(EngineError::Illegal(_))
        ));
        assert_eq!(g.squares(), before);
    }

    /// No escape from a stack holding an opposing checker: White's C onto
    /// D = Black, White gives all White's pieces in one stack, with a Black
    /// checker at its bottom.
    #[test]
    fn no_escape_with_an_opposing_checker() {
        let g = Filo::from_position(
            ["", "", "W", "BW", "", "B", "BB", "BB"],
            [0, 0],
            WHITE,
            &s(),
        )
        .unwrap();
        assert_eq!(legal(&g), ["C", "D"]);
    }

    /// Forced pass: White enters 8 and 4, Black 8 and 1: White's reserve is
    /// empty while Black's is not, so `pass` is White's only option (a ply).
    /// Black's last entry starts the movement phase with White to move.
    #[test]
    fn forced_pass_until_both_reserves_are_empty() {
        let mut g = Filo::new(&s()).unwrap();
        for m in ["8", "8", "4", "1"] {
            play(&mut g, m);
        }
        assert_eq!(
            g.squares(),
            ["WBW", "WBW", "WBW", "WBW", "WB", "WB", "WB", "WBB"]
        );
        assert_eq!(g.reserve(), [0, 3]);
        assert_eq!(g.decision_kind(), "pass");
        assert_eq!(legal(&g), ["pass"]);
        assert!(g.apply(FiloOpt::Enter(1)).is_err());
        play(&mut g, "pass");
        assert_eq!(g.plies(), 5);
        assert_eq!(legal(&g), ["1", "2", "3"]);
        assert!(g.apply(FiloOpt::Pass).is_err());
        play(&mut g, "3");
        assert_eq!(
            g.squares(),
            ["WBW", "WBW", "WBW", "WBW", "WB", "WBB", "WBB", "WBBB"]
        );
        assert_eq!(g.decision_kind(), "move");
        assert_eq!(g.to_decide(), Some(WHITE));
        assert_eq!(legal(&g), ["A", "B", "C", "D"]);
    }

    /// No-move loss: Black's single checker on B goes onto A's two Whites;
    /// White now tops no stack and loses (Black moved last).
    #[test]
    fn player_without_a_move_loses() {
        let mut g =
            Filo::from_position(["WW", "B", "", "", "", "", "", "B"], [0, 0], BLACK, &s()).unwrap();
        play(&mut g, "B");
        assert_eq!(g.squares(), ["WWB", "", "", "", "", "", "", "B"]);
        assert_eq!(g.outcome(), Some(Outcome::win(2, BLACK, Reason::NoMoves)));
        assert_eq!(g.to_decide(), None);
    }

    /// Pieces: White's last-but-one checker exits at a full D: White is down
    /// to one piece and wins. And a move that leaves the opponent with one
    /// piece makes the opponent the winner (Black's checker exits).
    #[test]
    fn one_piece_or_none_wins() {
        let mut g =
            Filo::from_position(["", "", "W", "BBBB", "", "", "W", "B"], [0, 0], WHITE, &s())
                .unwrap();
        play(&mut g, "C");
        assert_eq!(g.pieces(WHITE), 1);
        assert_eq!(g.outcome(), Some(Outcome::win(2, WHITE, Reason::Pieces)));

        let mut g =
            Filo::from_position(["", "", "BW", "WWWW", "", "", "", "B"], [0, 0], WHITE, &s())
                .unwrap();
        play(&mut g, "C");
        assert_eq!(g.squares(), ["", "", "", "WWWW", "W", "", "", "B"]);
        assert_eq!(g.pieces(BLACK), 1);
        assert_eq!(g.outcome(), Some(Outcome::win(2, BLACK, Reason::Pieces)));
    }

    /// Black's lap wraps from A to H and meets a full square: Black's B =
    /// White, Black, White, Black (bottom to top) goes leftwards: the White
    /// checker meets A's four and exits, then H (wrapping round), G, F get
    /// Black, White, Black. Four checkers reach four squares at most, so
    /// the emptied origin B is never reached on 8 squares (the rulings (docs/rules/filo.md): the
    /// lap would not skip it; docs/rules/filo.md).
    #[test]
    fn black_lap_wraps_past_a_full_square() {
        let pos = ["WWWW", "WBWB", "", "BB", "", "", "", ""];
        let mut g = Filo::from_position(pos, [0, 0], BLACK, &s()).unwrap();
        assert_eq!(g.exited(), [6, 8]);
        assert_eq!(legal(&g), ["B", "D"]);
        play(&mut g, "B");
        assert_eq!(g.squares(), ["WWWW", "", "", "BB", "", "B", "W", "B"]);
        assert_eq!(g.exited(), [7, 8]);
        assert_eq!(g.outcome(), None);
        assert_eq!(g.to_decide(), Some(WHITE));
        assert_eq!(legal(&g), ["A", "G"]);
    }

    /// The escape can come from one's own checker exiting: Black (4 pieces:
    /// C = three Black, E = one Black) moves E; its checker meets D's four
    /// and exits, leaving all 3 Black pieces in the pure stack on C: `E!`
    /// is offered right after `E` (C's move scatters to B, A, H: no `C!`).
    /// `E` alone does not end the game; `E!` removes C's stack and wins.
    #[test]
    fn escape_after_own_checker_exits() {
        let pos = ["", "", "BBB", "WWWW", "B", "", "W", ""];
        let g = Filo::from_position(pos, [0, 0], BLACK, &s()).unwrap();
        assert_eq!(legal(&g), ["C", "E", "E!"]);

        let mut plain = g.clone();
        play(&mut plain, "E");
        assert_eq!(plain.squares(), ["", "", "BBB", "WWWW", "", "", "W", ""]);
        assert_eq!(plain.pieces(BLACK), 3);
        assert_eq!(plain.outcome(), None);
        assert_eq!(legal(&plain), ["D", "G"]);

        let mut g = g;
        play(&mut g, "E!");
        assert_eq!(g.squares(), ["", "", "", "WWWW", "", "", "W", ""]);
        assert_eq!(g.exited(), [7, 12]);
        assert_eq!(g.outcome(), Some(Outcome::win(2, BLACK, Reason::Escape)));
        assert_eq!(g.plies(), 1);
    }

    /// The order of the end checks: the pieces rule comes before the
    /// no-move rule. White's C = Black under White: the Black checker exits
    /// at D's four (Black is down to one piece), the White one lands on E.
    /// Black's last piece is buried under White on H, so Black also has no
    /// move; Black wins by pieces, not White by `no_moves`.
    #[test]
    fn pieces_are_judged_before_no_moves() {
        let pos = ["", "", "BW", "WWWW", "", "", "", "BW"];
        let mut g = Filo::from_position(pos, [0, 0], WHITE, &s()).unwrap();
        play(&mut g, "C");
        assert_eq!(g.squares(), ["", "", "", "WWWW", "W", "", "", "BW"]);
        assert_eq!(g.pieces(BLACK), 1);
        assert_eq!(g.outcome(), Some(Outcome::win(2, BLACK, Reason::Pieces)));
    }

    /// Entries 3, 2, 5, 2, 4, 8 by hand: White A B C; Black H G; White A..E
    /// (A B C now two high); Black H G again; White A B C D (White's reserve
    /// is empty: 3 + 5 + 4); Black's 8 cover H..A, topping every stack.
    /// Both reserves are empty: the movement phase starts with White, who
    /// controls nothing and loses at once (Black moved last). With the ply
    /// cap at 6 the game's own end condition still comes first.
    #[test]
    fn movement_phase_can_start_with_no_move() {
        for cap in [1000, 6] {
            let settings = Settings {
                max_plies: cap,
                ..Settings::default()
            };
            let mut g = Filo::new(&settings).unwrap();
            play(&mut g, "3 2 5 2");
            assert_eq!(legal(&g), ["1", "2", "3", "4"]);
            play(&mut g, "4");
            assert_eq!(g.reserve(), [0, 8]);
            assert_eq!(g.to_decide(), Some(BLACK));
            assert_eq!(legal(&g).len(), 8);
            play(&mut g, "8");
            assert_eq!(
                g.squares(),
                ["WWWB", "WWWB", "WWWB", "WWB", "WB", "B", "BBB", "BBB"]
            );
            assert_eq!(g.plies(), 6);
            assert_eq!(g.outcome(), Some(Outcome::win(2, BLACK, Reason::NoMoves)));
        }
    }

    /// Through the referee's wrapper: the forced `pass` is listed alone,
    /// reported as forced, recorded in the history and counted as a ply.
    #[test]
    fn forced_pass_is_recorded_as_a_ply() {
        let mut g = crate::engine::Game::new(Variant::Filo, &s()).unwrap();
        for m in ["8", "8", "4", "1"] {
            g.play(m).unwrap();
        }
        assert_eq!(g.legal(), ["pass"]);
        assert_eq!(g.forced().as_deref(), Some("pass"));
        g.play("pass").unwrap();
        let last = g.history().last().unwrap();
        assert_eq!(
            (last.seat, last.ply, last.option.as_str(), last.forced),
            (0, 4, "pass", true)
        );
        assert_eq!(g.plies(), 5);
        assert_eq!(g.to_decide(), Some(BLACK));
    }

    #[test]
    fn notation_round_trips_and_rejects_junk() {
        let g = Filo::new(&s()).unwrap();
        for t in ["1", "8", "A", "H", "C!", "pass"] {
            assert_eq!(g.notation(g.parse(t).unwrap()), t);
        }
        for t in ["0", "9", "I", "3!", "!", "AB", "", "passes"] {
            assert!(g.parse(t).is_err(), "{t}");
        }
        let mut g = g;
        assert!(g.apply(FiloOpt::Move(0)).is_err());
        assert!(g.apply(FiloOpt::Pass).is_err());
        assert!(g.apply(FiloOpt::Enter(0)).is_err());
        assert!(g.apply(FiloOpt::Enter(9)).is_err());
        assert_eq!(g.reserve(), [12, 12]);
        assert_eq!(g.plies(), 0);
    }

    #[test]
    fn ply_cap_is_a_draw() {
        let settings = Settings {
            max_plies: 3,
            ..Settings::default()
        };
        let mut g = Filo::new(&settings).unwrap();
        for _ in 0..3 {
            play(&mut g, "1");
        }
        assert_eq!(g.outcome(), Some(Outcome::draw(2, Reason::MaxPlies)));
    }

    /// Random games: invariants after every decision, every listed option
    /// applies, some unlisted ones are rejected without change, the cap holds.
    #[test]
    fn random_games_keep_the_invariants() {
        let mut rng = ChaCha8Rng::seed_from_u64(47);
        let mut buf = Vec::new();
        let settings = Settings {
            max_plies: 400,
            ..Settings::default()
        };
        let all: Vec<FiloOpt> = (1..=8)
            .map(FiloOpt::Enter)
            .chain((0..8).map(FiloOpt::Move))
            .chain((0..8).map(FiloOpt::Escape))
            .chain([FiloOpt::Pass])
            .collect();
        let mut reasons = std::collections::BTreeSet::new();
        for _ in 0..1500 {
            let mut g = Filo::new(&settings).unwrap();
            while g.to_decide().is_some() {
                g.options(&mut buf);
                assert!(!buf.is_empty(), "no option:\n{}", g.render());
                for &o in &all {
                    if !buf.contains(&o) {
                        let before = (g.squares(), g.reserve(), g.exited(), g.plies());
                        assert!(g.apply(o).is_err(), "{o:?} accepted\n{}", g.render());
                        assert_eq!((g.squares(), g.reserve(), g.exited(), g.plies()), before);
                    }
                }
                let opt = buf[rng.gen_range(0..buf.len())];
                g.apply(opt).unwrap();
                g.check_invariants().unwrap();
                assert!(g.plies() <= 400);
            }
            reasons.insert(g.outcome().map(|o| o.reason.name()));
        }
        // Random play reaches every way this game ends except the ply cap
        // (which it may or may not reach).
        for r in ["pieces", "no_moves", "escape"] {
            assert!(reasons.contains(&Some(r)), "{r} never reached: {reasons:?}");
        }
    }
    /// Cross-check against an independent implementation: a Python program
    /// written from the rule text and the rulings (docs/rules/filo.md) alone (not from this file)
    /// played random games and recorded, before every decision, its list of
    /// legal options and the option it picked, then the result, the plies
    /// and the final board (tests/data/rules/filo_random_games.jsonl, one
    /// game per line). Every list, every result and every board must agree.
    #[test]
    fn independent_implementation_agrees() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/rules/filo_random_games.jsonl"
        );
        let path = std::env::var("FILO_GAMES").unwrap_or(path.to_string());
        let text = std::fs::read_to_string(path).unwrap();
        let mut games = 0;
        for (n, line) in text.lines().enumerate() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let settings = Settings {
                max_plies: v["max_plies"].as_u64().unwrap() as u32,
                ..Settings::default()
            };
            let mut g = Filo::new(&settings).unwrap();
            let moves = replay_reference_steps(&mut g, &v["steps"], n);
            let r = &v["result"];
            let o = g.outcome().unwrap_or_else(|| panic!("game {n} not over"));
            let expected = match r[0].as_str().unwrap() {
                "win" => {
                    let w = r[1].as_u64().unwrap() as usize;
                    let reason = match r[2].as_str().unwrap() {
                        "pieces" => Reason::Pieces,
                        "escape" => Reason::Escape,
                        "no_moves" => Reason::NoMoves,
                        other => panic!("{other}"),
                    };
                    Outcome::win(2, w, reason)
                }
                _ => Outcome::draw(2, Reason::MaxPlies),
            };
            assert_eq!(o, expected, "game {n}: {moves:?}");
            assert_eq!(
                u64::from(g.plies()),
                v["plies"].as_u64().unwrap(),
                "game {n}"
            );
            let squares: Vec<String> = v["squares"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            assert_eq!(g.squares().to_vec(), squares, "game {n}");
            assert_eq!(
                g.exited().to_vec(),
                vec![
                    v["exited"][0].as_u64().unwrap() as u8,
                    v["exited"][1].as_u64().unwrap() as u8
                ],
                "game {n}"
            );
            games += 1;
        }
        assert!(games >= 20, "{games} games");
    }
}
