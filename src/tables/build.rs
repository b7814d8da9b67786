//! Building a game's tables, layer by layer from the fewest seeds up
//! (docs/tables.md, "Build"). Within a layer, rounds: round `d` gives its
//! value to every position whose value is a win or a loss in exactly `d`
//! plies, from the values known so far (its own layer's earlier rounds and
//! the finished smaller layers); what no round decides is a draw (neither
//! side can force the end). Each round is shared out between threads.
//! A finished layer is written at once, so a killed build loses at most
//! the layer it was making: run again, it reads the finished ones back.

use super::format::{check_writable, layer_path, read_layer, write_layer, FormatError};
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
    /// A layer's file there but unusable: the build stops rather than
    /// overwrite it (nothing built is lost), and says how to go on.
    #[error("{0} (delete that file and run the build again: it makes that layer anew and keeps the others)")]
    Damaged(FormatError),
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
    super::format::sweep_parts(&opts.dir.join(T::VARIANT.name()));
    for layer in layers_upto::<T>(opts.seeds) {
        let t0 = Instant::now();
        let name = T::layer_name(layer);
        let path = layer_path(&opts.dir, T::VARIANT, &name);
        let size = T::layer_size(layer);
        let read = read_layer(&path, T::VARIANT, &name, size).map_err(|e| match e {
            FormatError::Bad { .. } => BuildError::Damaged(e),
            e => BuildError::Format(e),
        })?;
        let (values, rounds, resumed) = match read {
            Some(v) => (v, 0, true),
            None => {
                // A folder that cannot be written is named before the
                // layer's work, not after it.
                check_writable(&path)?;
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

/// The threads a round of a layer of `size` indexes uses: at most one a
/// chunk, at least one.
fn threads_for(size: u64, threads: usize) -> usize {
    let chunks = usize::try_from(size.div_ceil(CHUNK)).unwrap_or(usize::MAX);
    threads.min(chunks).max(1)
}

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
    // No more threads than chunks; a thread the system refuses leaves its
    // share to the others (and to this one when none starts).
    let threads = threads_for(size, threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        let here = if handles.is_empty() {
            work()
        } else {
            (0, u16::MAX)
        };
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .fold(here, |(r, n), (r2, n2)| (r + r2, n.min(n2)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::diffusion::DiffusionTable;

    #[test]
    fn a_round_uses_no_more_threads_than_chunks() {
        assert_eq!(threads_for(156, 100_000), 1);
        assert_eq!(threads_for(0, 4), 1);
        assert_eq!(threads_for(3 * CHUNK + 1, 100_000), 4);
        assert_eq!(threads_for(u64::MAX, 2), 2);
    }

    /// A damaged layer stops the build with the file named and what to
    /// do; the file is left as it was, and the layers before it too.
    #[test]
    fn a_damaged_layer_stops_the_build_and_says_what_to_do() {
        let dir = built_for_test::<DiffusionTable>(4);
        let opts = BuildOptions {
            seeds: 4,
            dir: dir.path().to_path_buf(),
            threads: 1,
        };
        let n03 = dir.path().join("diffusion").join("n03.tbl");
        let mut bytes = std::fs::read(&n03).expect("n03");
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&n03, &bytes).expect("damaged");
        let e = build::<DiffusionTable>(&opts, &mut |_| {}).expect_err("refused");
        let e = e.to_string();
        assert!(
            e.contains("n03.tbl: not a usable table file: checksum"),
            "{e}"
        );
        assert!(
            e.contains("delete that file and run the build again"),
            "{e}"
        );
        assert_eq!(std::fs::read(&n03).expect("still there"), bytes);
        assert!(dir.path().join("diffusion").join("n04.tbl").is_file());
    }
}
