//! Tricala's tables (2 players): layer (w, b, c) holds every position at
//! the start of a sowing turn with w White and b Black stones on the 21
//! pits, c stones captured by White and the rest of the 18 (18 - w - b -
//! c) by Black, and either side to move. Captures only take stones off the
//! board (docs/rules/tricala.md: "capture the whole pit ... into the
//! mover's pile"), so a turn stays in its layer or goes to one with fewer
//! stones on the board. A pile of 9 has won, so each pile holds 0 to 8 and
//! a layer has at least 2 stones on the board.

use super::rank::Ways;
use super::TableGame;
use crate::engine::tricala::{pit_name, Tricala, CAPTURE_GOAL, PITS, STONES};
use crate::engine::{Rules, Settings, Variant};
use std::sync::OnceLock;

pub struct TricalaTable;

/// Stones on the board (of one colour) and in a pile: 0 to 9.
const COUNTS: usize = STONES as usize + 1;
/// A pile that has not won: 0 to 8.
const PILES: usize = CAPTURE_GOAL as usize;

fn ways() -> &'static Ways {
    static W: OnceLock<Ways> = OnceLock::new();
    W.get_or_init(|| Ways::new(PITS, STONES as u32, STONES as u32))
}

fn names() -> &'static [String; PITS] {
    static N: OnceLock<[String; PITS]> = OnceLock::new();
    N.get_or_init(|| std::array::from_fn(|p| pit_name(p as u8)))
}

/// The rule text's tie, White to move: "White singletons on 6a, 4b.
/// White has captured 6 stones. Black singletons on 1a, 4c. Black has
/// captured 8 stones." White's best is the tie (4b sown onto 4c captures
/// both stones: 8 each, a corner each, both win at once with as many
/// captured: a draw, docs/rules/tricala.md); moving 4b away lets Black
/// win.
#[cfg(test)]
pub(crate) fn rule_texts_tie() -> Tricala {
    let pits = [
        ("6a", [1, 0, 0]),
        ("4b", [1, 0, 0]),
        ("1a", [0, 1, 0]),
        ("4c", [0, 1, 0]),
    ];
    Tricala::from_position(&uncapped(), &pits, [6, 8, 0], 0).expect("the rule text's position")
}

/// Two players, the ply cap off: the tables judge infinite play
/// themselves.
pub fn uncapped() -> Settings {
    Settings {
        players: 2,
        max_plies: u32::MAX,
        ..Settings::default()
    }
}

/// White's and Black's stones on the board, and White's pile, of a layer.
fn split(layer: usize) -> (u32, u32, u32) {
    let c = layer % PILES;
    let b = (layer / PILES) % COUNTS;
    let w = layer / PILES / COUNTS;
    (w as u32, b as u32, c as u32)
}

/// Black's pile in a layer: what is neither on the board nor White's.
fn black_pile(layer: usize) -> i64 {
    let (w, b, c) = split(layer);
    2 * i64::from(STONES) - i64::from(w + b + c)
}

impl TableGame for TricalaTable {
    type G = Tricala;
    const VARIANT: Variant = Variant::Tricala;
    const LAYERS: usize = COUNTS * COUNTS * PILES;

    fn layer_seeds(layer: usize) -> u32 {
        let (w, b, _) = split(layer);
        w + b
    }

    fn layer_exists(layer: usize) -> bool {
        (0..PILES as i64).contains(&black_pile(layer))
    }

    fn layer_size(layer: usize) -> u64 {
        let (w, b, _) = split(layer);
        2 * ways().count(PITS, w) * ways().count(PITS, b)
    }

    fn layer_name(layer: usize) -> String {
        let (w, b, c) = split(layer);
        format!("w{w}-b{b}-c{c}-{}", black_pile(layer))
    }

    fn decode(layer: usize, index: u64) -> Option<Tricala> {
        let (w, b, c) = split(layer);
        let per_b = ways().count(PITS, b);
        let (mut white, mut black) = ([0u8; PITS], [0u8; PITS]);
        let pair = index / 2;
        ways().unrank(pair / per_b, w, &mut white);
        ways().unrank(pair % per_b, b, &mut black);
        let pits: Vec<(&str, [u8; 3])> = (0..PITS)
            .filter(|&p| white[p] + black[p] > 0)
            .map(|p| (names()[p].as_str(), [white[p], black[p], 0]))
            .collect();
        let piles = [c as u8, u8::try_from(black_pile(layer)).ok()?, 0];
        Tricala::from_position(&uncapped(), &pits, piles, (index % 2) as usize).ok()
    }

    fn locate(g: &Tricala) -> Option<(usize, u64)> {
        if g.players() != 2 || !matches!(g.decision_kind(), "sow" | "pass") {
            return None;
        }
        let seat = g.to_decide()?;
        let white: [u8; PITS] = std::array::from_fn(|p| g.pit(p as u8)[0]);
        let black: [u8; PITS] = std::array::from_fn(|p| g.pit(p as u8)[1]);
        let (w, b) = (g.on_board(0), g.on_board(1));
        let c = g.captured()[0];
        if c as usize >= PILES || g.captured()[1] as usize >= PILES {
            return None;
        }
        let layer = (usize::from(w) * COUNTS + usize::from(b)) * PILES + usize::from(c);
        let per_b = ways().count(PITS, u32::from(b));
        let pair = ways().rank(&white) * per_b + ways().rank(&black);
        Some((layer, pair * 2 + seat as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::build::built_for_test;
    use crate::tables::probe::{Oracle, Tables};
    use crate::tables::Value;

    /// [`rule_texts_tie`]: a draw, as the text says.
    #[test]
    fn the_rule_texts_tie_is_a_draw_with_white_to_move() {
        let dir = built_for_test::<TricalaTable>(4);
        let tables = Tables::<TricalaTable>::open(dir.path());
        let g = rule_texts_tie();
        assert_eq!(tables.at_turn_start(&g), Some(Value::Draw));
        // The capture 4b x 4c ends the game at once, drawn.
        let mut tie = g;
        tie.apply(g.parse("4b:E").expect("4b east"))
            .expect("4b sown onto 4c");
        assert!(tie.outcome().is_some_and(|o| o.is_draw()), "{tie:?}");
        // 4b moved away from 4c: Black wins (the text: Black's 4c goes
        // on to 6f, a second corner).
        for away in ["4b:W", "4b:NE", "4b:NW", "4b:SW"] {
            let mut c = g;
            c.apply(g.parse(away).expect("a direction from 4b"))
                .expect("sown");
            assert_eq!(c.to_decide(), Some(1), "{away}");
            assert!(
                matches!(tables.at_turn_start(&c), Some(Value::Win(_))),
                "{away}: {:?}",
                tables.at_turn_start(&c)
            );
        }
    }

    #[test]
    fn every_index_of_a_layer_locates_back_to_itself() {
        // (w, b, White's pile): Black's pile is the rest of 18.
        for (w, b, c) in [(1usize, 1usize, 8usize), (2, 1, 7), (1, 2, 8), (2, 2, 6)] {
            let layer = (w * COUNTS + b) * PILES + c;
            assert!(TricalaTable::layer_exists(layer), "{w} {b} {c}");
            assert_eq!(TricalaTable::layer_seeds(layer), (w + b) as u32);
            for i in 0..TricalaTable::layer_size(layer) {
                let g = TricalaTable::decode(layer, i).expect("a position");
                assert_eq!(TricalaTable::locate(&g), Some((layer, i)));
            }
        }
    }

    #[test]
    fn a_layer_holds_no_pile_that_has_won() {
        // 1 + 1 on the board: 16 captured, 8 each, the only split.
        let two: Vec<usize> = (0..TricalaTable::LAYERS)
            .filter(|&l| TricalaTable::layer_exists(l) && TricalaTable::layer_seeds(l) == 2)
            .inspect(|&l| {
                let (w, b, c) = split(l);
                assert_eq!((c, black_pile(l)), (8, 8), "{w} {b}");
            })
            .collect();
        // White 2 and Black 0, White 1 and Black 1, White 0 and Black 2.
        assert_eq!(two.len(), 3);
        assert!(TricalaTable::layer_name(two[1]).starts_with("w1-b1-c8-8"));
        assert!((0..TricalaTable::LAYERS)
            .filter(|&l| TricalaTable::layer_seeds(l) < 2)
            .all(|l| !TricalaTable::layer_exists(l)));
    }
}
