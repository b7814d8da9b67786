//! [`Game`]: any of the five games behind one dynamic, string-speaking
//! interface, with the decision history. This is the engine's edge: options
//! are canonical notation strings here.

use super::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    EngineError, Outcome, Rules, Seat, Settings, Variant,
};
use serde::Serialize;

/// One recorded decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub seat: Seat,
    /// Completed turns before this decision (the ply it belongs to).
    pub ply: u32,
    /// The option in canonical notation.
    pub option: String,
    /// True when it was the only option (applied without asking).
    pub forced: bool,
}

// Hackaback keeps its repetition history inline (about 8 KB, no heap; see
// hackaback.rs); the wrapper is not on any hot path, so no Box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum State {
    Filo(Filo),
    Tricala(Tricala),
    Hackaback(Hackaback),
    Kisolo(Kisolo),
    Diffusion(Diffusion),
}

/// Runs `$body` with `$g` bound to the concrete game inside `$state`.
macro_rules! with_game {
    ($state:expr, $g:ident => $body:expr) => {
        match $state {
            State::Filo($g) => $body,
            State::Tricala($g) => $body,
            State::Hackaback($g) => $body,
            State::Kisolo($g) => $body,
            State::Diffusion($g) => $body,
        }
    };
}

/// Any game, with its settings and the history of its decisions.
#[derive(Clone, Debug)]
pub struct Game {
    variant: Variant,
    settings: Settings,
    state: State,
    history: Vec<Decision>,
}

fn legal_strings<G: Rules>(g: &G) -> Vec<String> {
    let mut buf = Vec::new();
    g.options(&mut buf);
    buf.into_iter().map(|o| g.notation(o)).collect()
}

/// How many options the current decision has, without writing them.
fn option_count<G: Rules>(g: &G) -> usize {
    let mut buf = Vec::new();
    g.options(&mut buf);
    buf.len()
}

fn play_str<G: Rules>(g: &mut G, s: &str) -> Result<String, EngineError> {
    if g.to_decide().is_none() {
        return Err(EngineError::GameOver);
    }
    let opt = g.parse(s)?;
    // An illegal option is named as it was written (`c`, not the `C` it
    // reads as), so that the message quotes what the user typed.
    g.apply(opt).map_err(|e| match e {
        EngineError::Illegal(_) => EngineError::Illegal(s.to_string()),
        e => e,
    })?;
    Ok(g.notation(opt))
}

impl Game {
    pub fn new(variant: Variant, settings: &Settings) -> Result<Game, EngineError> {
        let state = match variant {
            Variant::Filo => State::Filo(Filo::new(settings)?),
            Variant::Tricala => State::Tricala(Tricala::new(settings)?),
            Variant::Hackaback => State::Hackaback(Hackaback::new(settings)?),
            Variant::Kisolo => State::Kisolo(Kisolo::new(settings)?),
            Variant::Diffusion => State::Diffusion(Diffusion::new(settings)?),
        };
        Ok(Game {
            variant,
            settings: settings.clone(),
            state,
            history: Vec::new(),
        })
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn players(&self) -> usize {
        with_game!(&self.state, g => g.players())
    }

    /// The seat to decide; `None` once the game is over.
    pub fn to_decide(&self) -> Option<Seat> {
        with_game!(&self.state, g => g.to_decide())
    }

    pub fn decision_kind(&self) -> &'static str {
        with_game!(&self.state, g => g.decision_kind())
    }

    /// The legal options of the current decision, in canonical notation.
    pub fn legal(&self) -> Vec<String> {
        with_game!(&self.state, g => legal_strings(g))
    }

    /// Applies one option (canonical notation; surrounding white space is
    /// ignored) and records it. Returns the decision as recorded, its option
    /// in canonical notation. On error the game is unchanged.
    pub fn play(&mut self, option: &str) -> Result<&Decision, EngineError> {
        let seat = self.to_decide().ok_or(EngineError::GameOver)?;
        let ply = self.plies();
        let forced = with_game!(&self.state, g => option_count(g)) == 1;
        let option = with_game!(&mut self.state, g => play_str(g, option.trim()))?;
        self.history.push(Decision {
            seat,
            ply,
            option,
            forced,
        });
        Ok(&self.history[self.history.len() - 1])
    }

    /// The only legal option, when the current decision has exactly one.
    pub fn forced(&self) -> Option<String> {
        let mut legal = self.legal();
        if legal.len() == 1 {
            legal.pop()
        } else {
            None
        }
    }

    pub fn outcome(&self) -> Option<Outcome> {
        with_game!(&self.state, g => g.outcome())
    }

    pub fn plies(&self) -> u32 {
        with_game!(&self.state, g => g.plies())
    }

    /// The full state as JSON: the game's own snapshot plus `variant`,
    /// `players`, `ply`, `to_decide`, `decision`, and `result` once over;
    /// [`Game::write_snapshot`]'s bytes read back (one writer of a state's
    /// JSON).
    pub fn snapshot(&self) -> serde_json::Value {
        let mut buf = Vec::new();
        self.write_snapshot(&mut buf);
        // The engine's own bytes: JSON whatever the state (tests read them
        // back at every ply of random games).
        serde_json::from_slice(&buf).unwrap_or_default()
    }

    /// The full state's JSON written into `buf` (compact, keys in byte
    /// order, as serde_json writes a value), without building a value (see
    /// [`super::json`]).
    pub fn write_snapshot(&self, buf: &mut Vec<u8>) {
        use super::json::{Obj, Scalar};
        let extra = [
            ("decision", Scalar::Str(self.decision_kind())),
            ("players", Scalar::Uint(self.players() as u64)),
            ("ply", Scalar::Uint(u64::from(self.plies()))),
            (
                "to_decide",
                self.to_decide()
                    .map_or(Scalar::Null, |s| Scalar::Uint(s as u64)),
            ),
            ("variant", Scalar::Str(self.variant.name())),
        ];
        let mut o = Obj::with_extra(buf, &extra);
        with_game!(&self.state, g => g.write_snapshot(&mut o));
        o.end();
    }

    /// The board as text.
    pub fn render(&self) -> String {
        with_game!(&self.state, g => g.render())
    }

    /// Every decision so far, forced ones included.
    pub fn history(&self) -> &[Decision] {
        &self.history
    }

    pub fn check_invariants(&self) -> Result<(), String> {
        with_game!(&self.state, g => g.check_invariants())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An illegal option is named as written, not as the notation it
    /// reads as: `c` at F.I.L.O's first entry, where `C` is no option.
    #[test]
    fn an_illegal_option_is_named_as_written() {
        let mut g = Game::new(Variant::Filo, &Settings::default()).unwrap();
        assert_eq!(g.play("c"), Err(EngineError::Illegal("c".into())));
        assert_eq!(g.play("C"), Err(EngineError::Illegal("C".into())));
        assert!(g.play("1").is_ok());
    }
}
