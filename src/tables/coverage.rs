//! How much of played games a game's tables of up to N seeds reach
//! (docs/tables.md, "Coverage"; `arena tables coverage`): each turn start
//! of a game's decisions is located in its layer, whose seeds in play are
//! compared with N. Needs no table file: only where positions fall.

use super::TableGame;
use crate::engine::Rules;

/// The reach of tables over the games counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reach {
    /// Games counted, and those with a turn in the tables.
    pub games: u64,
    pub reached: u64,
    /// Turn starts counted, and those in the tables.
    pub turns: u64,
    pub covered: u64,
    /// Over the games that reached the tables, the sum of the share of
    /// their turns played before the first one in them (for the mean).
    pub first_share_sum: f64,
}

impl Reach {
    /// The mean share of a reaching game played before the tables take
    /// over, when any game reached them.
    pub fn mean_first_share(&self) -> Option<f64> {
        (self.reached > 0).then(|| self.first_share_sum / self.reached as f64)
    }
}

/// Counts the game played from `g` by `moves` (the record's decisions,
/// each in the engine's notation) into `reach`, for tables of up to
/// `seeds` seeds in play; a decision that cannot be replayed is the
/// error, with its number.
pub fn add<T: TableGame>(
    reach: &mut Reach,
    mut g: T::G,
    moves: &[String],
    seeds: u32,
) -> Result<(), String> {
    let (mut turns, mut covered, mut first) = (0u64, 0u64, None);
    for (i, m) in moves.iter().enumerate() {
        if let Some((layer, _)) = T::locate(&g) {
            if T::layer_seeds(layer) <= seeds {
                covered += 1;
                first.get_or_insert(turns);
            }
            turns += 1;
        }
        let opt = g
            .parse(m)
            .map_err(|e| format!("decision {} `{m}`: {e}", i + 1))?;
        g.apply(opt)
            .map_err(|e| format!("decision {} `{m}`: {e}", i + 1))?;
    }
    reach.games += 1;
    reach.turns += turns;
    reach.covered += covered;
    if let Some(f) = first {
        reach.reached += 1;
        reach.first_share_sum += f as f64 / turns.max(1) as f64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hackaback::Hackaback;
    use crate::engine::Settings;
    use crate::tables::hackaback::HackabackTable;

    /// A Hackaback game played by its first listed option each time.
    fn first_options(n: usize) -> Vec<String> {
        let mut g = Hackaback::new(&Settings::default()).unwrap();
        let mut moves = Vec::new();
        let mut opts = Vec::new();
        while g.to_decide().is_some() && moves.len() < n {
            g.options(&mut opts);
            moves.push(g.notation(opts[0]));
            g.apply(opts[0]).unwrap();
        }
        moves
    }

    #[test]
    fn every_turn_is_covered_by_tables_of_all_the_seeds_and_none_by_none() {
        let moves = first_options(400);
        let start = || Hackaback::new(&Settings::default()).unwrap();
        let mut all = Reach::default();
        add::<HackabackTable>(&mut all, start(), &moves, 24).unwrap();
        // Hackaback starts with its 24 seeds in the holes (docs/tables.md).
        assert!(all.turns > 0);
        assert_eq!(all.covered, all.turns, "{all:?}");
        assert_eq!(all.mean_first_share(), Some(0.0));
        let mut none = Reach::default();
        add::<HackabackTable>(&mut none, start(), &moves, 0).unwrap();
        assert_eq!((none.turns, none.covered, none.reached), (all.turns, 0, 0));
        assert_eq!(none.mean_first_share(), None);
    }

    #[test]
    fn a_move_that_cannot_be_replayed_is_named() {
        let mut r = Reach::default();
        let g = Hackaback::new(&Settings::default()).unwrap();
        let err = add::<HackabackTable>(&mut r, g, &["zz".to_string()], 6).unwrap_err();
        assert!(err.starts_with("decision 1 `zz`"), "{err}");
        assert_eq!(r, Reach::default());
    }
}
