//! Reading the tables: the exact value of a position, of any state inside
//! a turn, and of each option of a decision.

use super::format::{layer_path, read_layer, FormatError};
use super::{TableGame, Value};
use crate::engine::Rules;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Whatever gives exact values of positions at the start of a turn (the
/// tables, the F.I.L.O solver); `None` where it does not reach.
pub trait Oracle<G: Rules> {
    fn at_turn_start(&self, g: &G) -> Option<Value>;

    /// What is known already, without any new work (a search asks this
    /// at every node; the F.I.L.O solver solves only when asked
    /// [`Oracle::at_turn_start`]).
    fn known(&self, g: &G) -> Option<Value> {
        self.at_turn_start(g)
    }
}

/// What became of a layer's file: its values, not built (`None`), or
/// unusable (the error, kept so that the file is not read again at
/// every probe).
type Loaded = Result<Option<Arc<Vec<u16>>>, String>;

/// A game's tables in a folder, each layer read on first use and kept (a
/// damaged one too: it is read once, then never used).
pub struct Tables<T: TableGame> {
    dir: PathBuf,
    layers: Mutex<HashMap<usize, Loaded>>,
    /// The first damaged file met (a missing one is not an error).
    error: Mutex<Option<String>>,
    _game: std::marker::PhantomData<T>,
}

impl<T: TableGame> Tables<T> {
    pub fn open(dir: &Path) -> Tables<T> {
        Tables {
            dir: dir.to_path_buf(),
            layers: Mutex::new(HashMap::new()),
            error: Mutex::new(None),
            _game: std::marker::PhantomData,
        }
    }

    /// A layer's values, `None` when it was not built; the error of a
    /// file that cannot be used (read once: later calls give it again
    /// without reading the file).
    pub fn layer(&self, layer: usize) -> Result<Option<Arc<Vec<u16>>>, String> {
        let mut map = self.layers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = map.get(&layer) {
            return v.clone();
        }
        let name = T::layer_name(layer);
        let path = layer_path(&self.dir, T::VARIANT, &name);
        let v = read_layer(&path, T::VARIANT, &name, T::layer_size(layer))
            .map(|v| v.map(Arc::new))
            .map_err(|e: FormatError| e.to_string());
        map.insert(layer, v.clone());
        v
    }

    /// The first damaged table file met by [`Oracle::at_turn_start`].
    pub fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl<T: TableGame> Oracle<T::G> for Tables<T> {
    fn at_turn_start(&self, g: &T::G) -> Option<Value> {
        let (l, i) = T::locate(g)?;
        match self.layer(l) {
            Ok(v) => Value::decode(*v?.get(i as usize)?),
            Err(e) => {
                let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(e);
                None
            }
        }
    }
}

/// The value for the player deciding in `g` of choosing `opt`: exact, or
/// `None` where the oracle does not reach.
pub fn option_value<G: Rules>(oracle: &dyn Oracle<G>, g: &G, opt: G::Opt) -> Option<Value> {
    let mover = g.to_decide()?;
    let mut c = g.clone();
    c.apply(opt).ok()?;
    if let Some(o) = c.outcome() {
        return Some(if o.is_draw() {
            Value::Draw
        } else if o.ranks[mover] == 0 {
            Value::Win(1)
        } else {
            Value::Loss(1)
        });
    }
    if c.plies() == g.plies() {
        // Still the same turn: the same player decides again.
        return state_value(oracle, &c);
    }
    let v = oracle.at_turn_start(&c)?;
    Some(if c.to_decide() == Some(mover) {
        match v {
            Value::Win(d) => Value::Win(d + 1),
            Value::Loss(d) => Value::Loss(d + 1),
            Value::Draw => Value::Draw,
        }
    } else {
        v.back()
    })
}

/// The exact value of any state that is not over, for the player deciding
/// there: from the oracle at the start of a turn, else the best of its
/// options (every one must be reached).
pub fn state_value<G: Rules>(oracle: &dyn Oracle<G>, g: &G) -> Option<Value> {
    if let Some(v) = oracle.at_turn_start(g) {
        return Some(v);
    }
    let mut opts = Vec::new();
    g.options(&mut opts);
    let mut best: Option<Value> = None;
    for o in opts {
        let v = option_value(oracle, g, o)?;
        if best.is_none_or(|b| v.rank() > b.rank()) {
            best = Some(v);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::build::built_for_test;
    use crate::tables::diffusion::DiffusionTable;

    /// A damaged layer is read once: named, then left alone (a bot that
    /// read it again at every node of its search would run out of time).
    #[test]
    fn a_damaged_layer_is_read_once_and_its_error_kept() {
        let dir = built_for_test::<DiffusionTable>(3);
        let n03 = dir.path().join("diffusion").join("n03.tbl");
        let good = std::fs::read(&n03).expect("n03");
        let mut bad = good.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x40;
        std::fs::write(&n03, &bad).expect("damaged");
        let tables = Tables::<DiffusionTable>::open(dir.path());
        let l = (0..DiffusionTable::LAYERS)
            .find(|&l| DiffusionTable::layer_name(l) == "n03")
            .expect("the layer n03");
        let e = tables.layer(l).expect_err("damaged");
        assert!(e.contains("n03.tbl") && e.contains("checksum"), "{e}");
        // Mended on disk, it is not read again.
        std::fs::write(&n03, &good).expect("mended");
        assert_eq!(tables.layer(l).expect_err("kept"), e);
        assert!(Tables::<DiffusionTable>::open(dir.path())
            .layer(l)
            .expect("read anew")
            .is_some());
    }
}
