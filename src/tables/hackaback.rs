//! Hackaback's tables: layer (w, b) holds every position at the start of
//! a sowing turn with w White and b Black seeds in the 12 holes (the rest
//! in the store) and either side to move. Seeds only ever leave the holes
//! (for the store), so a turn goes to a layer with w' <= w and b' <= b.
//! A layer with w = 0 or b = 0 holds no position: someone has won.

use super::rank::Ways;
use super::TableGame;
use crate::engine::hackaback::{place_name, Hackaback, BLACK, SEEDS, STORE, WHITE};
use crate::engine::{Rules, Settings, Variant};
use std::sync::OnceLock;

pub struct HackabackTable;

/// The 12 holes in index order: `b1`..`b6` (ring 0..5), then `w6`..`w1`
/// (ring 7..12).
const HOLES: [u8; 12] = [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12];

const B_LAYERS: usize = SEEDS[BLACK] as usize + 1;

fn ways() -> &'static Ways {
    static W: OnceLock<Ways> = OnceLock::new();
    W.get_or_init(|| Ways::new(12, 24, 24))
}

fn names() -> &'static [String; 12] {
    static N: OnceLock<[String; 12]> = OnceLock::new();
    N.get_or_init(|| std::array::from_fn(|h| place_name(HOLES[h])))
}

/// The ply cap off: the tables judge infinite play themselves.
pub fn uncapped() -> Settings {
    Settings {
        max_plies: u32::MAX,
        ..Settings::default()
    }
}

fn split(layer: usize) -> (u32, u32) {
    ((layer / B_LAYERS) as u32, (layer % B_LAYERS) as u32)
}

impl TableGame for HackabackTable {
    type G = Hackaback;
    const VARIANT: Variant = Variant::Hackaback;
    const LAYERS: usize = (SEEDS[WHITE] as usize + 1) * B_LAYERS;

    fn layer_seeds(layer: usize) -> u32 {
        let (w, b) = split(layer);
        w + b
    }

    fn layer_exists(layer: usize) -> bool {
        let (w, b) = split(layer);
        w >= 1 && b >= 1
    }

    fn layer_size(layer: usize) -> u64 {
        let (w, b) = split(layer);
        2 * ways().count(12, w) * ways().count(12, b)
    }

    fn layer_name(layer: usize) -> String {
        let (w, b) = split(layer);
        format!("w{w}-b{b:02}")
    }

    fn decode(layer: usize, index: u64) -> Option<Hackaback> {
        let (w, b) = split(layer);
        let per_b = ways().count(12, b);
        let (mut white, mut black) = ([0u8; 12], [0u8; 12]);
        let pair = index / 2;
        ways().unrank(pair / per_b, w, &mut white);
        ways().unrank(pair % per_b, b, &mut black);
        let holes: Vec<(&str, u8, u8)> = (0..12)
            .filter(|&h| white[h] + black[h] > 0)
            .map(|h| (names()[h].as_str(), white[h], black[h]))
            .collect();
        let store = [SEEDS[WHITE] - w as u8, SEEDS[BLACK] - b as u8];
        Hackaback::from_position(&uncapped(), &holes, store, (index % 2) as usize, 0).ok()
    }

    fn locate(g: &Hackaback) -> Option<(usize, u64)> {
        let seat = g.to_decide()?;
        if g.decision_kind() != "sow" {
            return None;
        }
        let white: [u8; 12] = std::array::from_fn(|h| g.seeds(HOLES[h], WHITE));
        let black: [u8; 12] = std::array::from_fn(|h| g.seeds(HOLES[h], BLACK));
        let store = g.store();
        let (w, b) = (SEEDS[WHITE] - store[WHITE], SEEDS[BLACK] - store[BLACK]);
        debug_assert_eq!(g.seeds(STORE, WHITE), store[WHITE]);
        let per_b = ways().count(12, u32::from(b));
        let pair = ways().rank(&white) * per_b + ways().rank(&black);
        Some((
            usize::from(w) * B_LAYERS + usize::from(b),
            pair * 2 + seat as u64,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_of_a_layer_locates_back_to_itself() {
        for (w, b) in [(1usize, 1usize), (2, 1), (1, 3)] {
            let layer = w * B_LAYERS + b;
            assert!(HackabackTable::layer_exists(layer));
            for i in 0..HackabackTable::layer_size(layer) {
                let g = HackabackTable::decode(layer, i).expect("a position");
                assert_eq!(HackabackTable::locate(&g), Some((layer, i)));
            }
        }
    }
}
