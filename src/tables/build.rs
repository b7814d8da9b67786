//! Building a game's tables, layer by layer from the fewest seeds up
//! (docs/tables.md, "Build"). Within a layer, rounds: round `d` gives its
//! value to every position whose value is a win or a loss in exactly `d`
//! plies, from the values known so far (its own layer's earlier rounds and
//! the finished smaller layers); what no round decides is a draw (neither
//! side can force the end). Each round is shared out between threads.
//! A finished layer is written at once, so a killed build loses at most
//! the layer it was making: run again, it reads the finished ones back.

use super::format::{layer_path, read_layer, write_layer, FormatError};
use super::{combine, layers_upto, turn_ends, End, TableGame, Value, MAX_DISTANCE, NOT_A_POSITION};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Every position with up to this many seeds in play.
    pub seeds: u32,
    /// The tables folder (`DIR/VARIANT/LAYER.tbl`).
    pub dir: PathBuf,
    pub threads: usize,
}

/// `T`'s tables up to `seeds`, built on 2 threads into a fresh temporary
/// folder (removed when it is dropped): for tests that read real tables.
#[cfg(test)]
pub(crate) fn built_for_test<T: TableGame>(seeds: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = BuildOptions {
        seeds,
        dir: dir.path().to_path_buf(),
        threads: 2,
    };
    build::<T>(&opts, &mut |_| {}).expect("built");
    dir
}

/// What became of one layer.
#[derive(Clone, Debug, Default)]
pub struct LayerReport {
    pub name: String,
    pub seeds: u32,
    pub positions: u64,
    pub wins: u64,
    pub losses: u64,
    pub draws: u64,
    /// Indexes that name no position (the game is already over there).
    pub not_positions: u64,
    /// The longest win or loss, in plies.
    pub longest: u16,
    pub rounds: u32,
    pub elapsed: Duration,
    /// Read back from an earlier build rather than built.
    pub resumed: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("layer {0}: a distance beyond {MAX_DISTANCE} plies does not fit the format")]
    TooLong(String),
}

/// Builds (or resumes) the tables of `T` up to `opts.seeds`; `progress`
/// hears of each layer as it is finished.
pub fn build<T: TableGame>(
    opts: &BuildOptions,
    progress: &mut dyn FnMut(&LayerReport),
) -> Result<Vec<LayerReport>, BuildError> {
    let mut done: Vec<Option<Vec<u16>>> = vec![None; T::LAYERS];
    let mut reports = Vec::new();
    for layer in layers_upto::<T>(opts.seeds) {
        let t0 = Instant::now();
        let name = T::layer_name(layer);
        let path = layer_path(&opts.dir, T::VARIANT, &name);
        let size = T::layer_size(layer);
        let (values, rounds, resumed) = match read_layer(&path, T::VARIANT, &name, size)? {
            Some(v) => (v, 0, true),
            None => {
                let (v, rounds) = solve_layer::<T>(layer, &done, opts.threads.max(1))
                    .ok_or_else(|| BuildError::TooLong(name.clone()))?;
                write_layer(&path, T::VARIANT, &name, T::layer_seeds(layer), &v)?;
                (v, rounds, false)
            }
        };
        let mut r = LayerReport {
            name,
            seeds: T::layer_seeds(layer),
            positions: size,
            rounds,
            resumed,
            ..LayerReport::default()
        };
        for &v in &values {
            match Value::decode(v) {
                Some(Value::Win(d)) => {
                    r.wins += 1;
                    r.longest = r.longest.max(d);
                }
                Some(Value::Loss(d)) => {
                    r.losses += 1;
                    r.longest = r.longest.max(d);
                }
                Some(Value::Draw) => r.draws += 1,
                None => r.not_positions += 1,
            }
        }
        r.elapsed = t0.elapsed();
        progress(&r);
        reports.push(r);
        done[layer] = Some(values);
    }
    Ok(reports)
}

/// One layer's values by rounds; `None` when a distance overflows.
fn solve_layer<T: TableGame>(
    layer: usize,
    done: &[Option<Vec<u16>>],
    threads: usize,
) -> Option<(Vec<u16>, u32)> {
    let size = T::layer_size(layer);
    let vals: Vec<AtomicU16> = (0..size).map(|_| AtomicU16::new(0)).collect();
    let mut d: u16 = 1;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let (resolved, next) = round::<T>(layer, &vals, done, d, threads);
        if resolved > 0 {
            d = d.checked_add(1)?;
        } else if next == u16::MAX {
            break;
        } else {
            d = next;
        }
        if d > MAX_DISTANCE {
            return None;
        }
    }
    Some((
        vals.into_iter().map(AtomicU16::into_inner).collect(),
        rounds,
    ))
}

const CHUNK: u64 = 2048;

/// Round `d`: every undecided position whose value is now known to be a
/// win or loss in `d` plies gets it. Returns how many did and the smallest
/// distance of the values found but not yet due (`u16::MAX`: none).
fn round<T: TableGame>(
    layer: usize,
    vals: &[AtomicU16],
    done: &[Option<Vec<u16>>],
    d: u16,
    threads: usize,
) -> (u64, u16) {
    let next_chunk = AtomicU64::new(0);
    let size = vals.len() as u64;
    let value_at = |l: usize, i: u64| -> Option<Value> {
        let v = if l == layer {
            let v = vals.get(i as usize)?.load(Ordering::Relaxed);
            if v == 0 {
                return None;
            }
            v
        } else {
            *done.get(l)?.as_ref()?.get(i as usize)?
        };
        Value::decode(v)
    };
    let work = || {
        let (mut resolved, mut next) = (0u64, u16::MAX);
        let mut ends: Vec<End> = Vec::new();
        loop {
            let start = next_chunk.fetch_add(CHUNK, Ordering::Relaxed);
            if start >= size {
                break;
            }
            for i in start..(start + CHUNK).min(size) {
                if vals[i as usize].load(Ordering::Relaxed) != 0 {
                    continue;
                }
                let Some(g) = T::decode(layer, i) else {
                    vals[i as usize].store(NOT_A_POSITION, Ordering::Relaxed);
                    continue;
                };
                ends.clear();
                let mut missing = 0;
                turn_ends::<T>(&g, &mut ends, &mut missing);
                if missing > 0 {
                    // An end the tables cannot place: never a proved loss.
                    ends.push(End::Over(Value::Draw));
                }
                let Some(v) = combine(&ends, value_at) else {
                    continue;
                };
                if v.plies() == d {
                    vals[i as usize].store(v.encode(), Ordering::Relaxed);
                    resolved += 1;
                } else {
                    next = next.min(v.plies());
                }
            }
        }
        (resolved, next)
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(work)).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .fold((0, u16::MAX), |(r, n), (r2, n2)| (r + r2, n.min(n2)))
    })
}
