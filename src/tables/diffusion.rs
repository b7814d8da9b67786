//! Diffusion's tables: layer n holds every board with n stones in the
//! small pits (at most 5 a pit) and either side to move. Stones only ever
//! leave the small pits (for the large pits, which play no part in the
//! result), so a move stays in its layer or goes to a smaller one.

use super::rank::Ways;
use super::TableGame;
use crate::engine::diffusion::{Diffusion, MAX_IN_SMALL_PIT, SMALL_PITS, STONES};
use crate::engine::{Rules, Settings, Variant};
use std::sync::OnceLock;

pub struct DiffusionTable;

fn ways() -> &'static Ways {
    static W: OnceLock<Ways> = OnceLock::new();
    W.get_or_init(|| Ways::new(SMALL_PITS, MAX_IN_SMALL_PIT as u32, 60))
}

/// The ply cap off: the tables judge infinite play themselves.
pub fn uncapped() -> Settings {
    Settings {
        max_plies: u32::MAX,
        ..Settings::default()
    }
}

/// The 12 small pits in index order: the far row `F E D C B A`, then the
/// near row `G H I J K L`.
fn board(g: &Diffusion) -> [u8; 12] {
    let (n, s) = (g.north_row(), g.south_row());
    std::array::from_fn(|p| if p < 6 { n[p] } else { s[p - 6] })
}

impl TableGame for DiffusionTable {
    type G = Diffusion;
    const VARIANT: Variant = Variant::Diffusion;
    const LAYERS: usize = 61;

    fn layer_seeds(layer: usize) -> u32 {
        layer as u32
    }

    fn layer_exists(layer: usize) -> bool {
        // Two stones at least (one in each block), 48 at most (all).
        (2..=STONES as usize).contains(&layer)
    }

    fn layer_size(layer: usize) -> u64 {
        2 * ways().count(SMALL_PITS, layer as u32)
    }

    fn layer_name(layer: usize) -> String {
        format!("n{layer:02}")
    }

    fn decode(layer: usize, index: u64) -> Option<Diffusion> {
        let mut b = [0u8; 12];
        ways().unrank(index / 2, layer as u32, &mut b);
        // A block already empty: the game ended at the end of the last turn.
        let block_a = b[0] + b[1] + b[2] + b[6] + b[7] + b[8];
        let block_b = b[3] + b[4] + b[5] + b[9] + b[10] + b[11];
        if block_a == 0 || block_b == 0 {
            return None;
        }
        let north: [u8; 6] = std::array::from_fn(|c| b[c]);
        let south: [u8; 6] = std::array::from_fn(|c| b[6 + c]);
        let west = (STONES - layer as u32) as u8;
        Diffusion::from_rows(north, south, west, 0, (index % 2) as usize, &uncapped()).ok()
    }

    fn locate(g: &Diffusion) -> Option<(usize, u64)> {
        let seat = g.to_decide()?;
        let b = board(g);
        let n: u32 = b.iter().map(|&x| u32::from(x)).sum();
        Some((n as usize, ways().rank(&b) * 2 + seat as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_of_a_layer_locates_back_to_itself() {
        for layer in [2usize, 3, 5] {
            let mut live = 0;
            for i in 0..DiffusionTable::layer_size(layer) {
                if let Some(g) = DiffusionTable::decode(layer, i) {
                    assert_eq!(DiffusionTable::locate(&g), Some((layer, i)));
                    live += 1;
                }
            }
            assert!(live > 0);
        }
    }
}
