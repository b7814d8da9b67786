//! Engine speed: uniformly random playouts per game on one core, reported
//! as decisions per second (criterion's throughput) and games per second
//! (printed from the same measurement). Results: BENCHMARKS.md.
//!
//! Each iteration replays the same batch of seeded random games, so the
//! number of decisions per iteration is known before timing and criterion's
//! `elem/s` is decisions per second. Goals (issue 2): >= 5M decisions/s on
//! Diffusion, >= 1M on every other game.
//!
//! Run: `cargo bench --bench engine` (or `-- kisolo` for one game).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mancala_arena::engine::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, random_playout,
    tricala::Tricala, Rules, Settings,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The system allocator, counting allocations, so that the bench can show
/// that a decision allocates nothing (issue 2: no heap allocation per
/// decision on the hot path).
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Seeded games per iteration.
const BATCH: u64 = 50;

/// Plays the batch from `start`; returns the decisions made.
fn play_batch<G: Rules>(start: &G, buf: &mut Vec<G::Opt>) -> u64 {
    let mut decisions = 0;
    for seed in 0..BATCH {
        let mut g = start.clone();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        decisions += random_playout(&mut g, &mut rng, buf);
        black_box(&g);
    }
    decisions
}

fn bench_game<G: Rules>(c: &mut Criterion, name: &str, settings: Settings) {
    let start = match G::new(&settings) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("{name}: skipped, cannot start a game: {e}");
            return;
        }
    };
    let mut buf = Vec::new();
    let decisions = play_batch(&start, &mut buf);
    let per_game = decisions as f64 / BATCH as f64;
    // The option buffer has grown to its size: count what a second pass of
    // the same games allocates.
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    play_batch(&start, &mut buf);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    let mut group = c.benchmark_group("random_playouts");
    group
        .throughput(Throughput::Elements(decisions))
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    group.bench_function(BenchmarkId::from_parameter(name), |b| {
        b.iter(|| play_batch(&start, &mut buf))
    });
    group.finish();
    // games/s = decisions/s / decisions per game.
    eprintln!(
        "{name}: {per_game:.1} decisions per game ({decisions} in {BATCH} seeded games), \
         {allocations} heap allocations in {decisions} decisions"
    );
}

fn with_option(players: usize, key: &str, value: &str) -> Settings {
    let mut s = Settings::with_players(players);
    s.options.insert(key.into(), value.into());
    s
}

fn engine(c: &mut Criterion) {
    bench_game::<Filo>(c, "filo", Settings::with_players(2));
    bench_game::<Tricala>(c, "tricala_2p", Settings::with_players(2));
    bench_game::<Tricala>(c, "tricala_3p", Settings::with_players(3));
    bench_game::<Hackaback>(c, "hackaback", Settings::with_players(2));
    bench_game::<Kisolo>(c, "kisolo_6", with_option(2, "columns", "6"));
    bench_game::<Kisolo>(c, "kisolo_7", Settings::with_players(2));
    bench_game::<Kisolo>(c, "kisolo_8", with_option(2, "columns", "8"));
    bench_game::<Diffusion>(c, "diffusion", Settings::with_players(2));
}

criterion_group!(benches, engine);
criterion_main!(benches);
