//! Rating speed: 200 bots over 1 million 2-player games (five variants,
//! seat-swap pairs, draws), the whole `ratings::rate` report (overall and
//! per-variant fits, LOS, pentanomial and variant statistics).
//! Figures are recorded in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion};
use mancala_arena::ratings::{rate, RateOptions};
use mancala_arena::results::GameRow;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const VARIANTS: [&str; 5] = ["filo", "tricala", "hackaback", "kisolo", "diffusion"];

fn league(bots: usize, games: usize) -> Vec<GameRow> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let truth: Vec<f64> = (0..bots).map(|_| rng.gen_range(-600.0..600.0)).collect();
    let names: Vec<String> = (0..bots).map(|i| format!("bot{i:03}")).collect();
    let mut rows = Vec::with_capacity(games);
    let mut g = 0;
    while rows.len() < games {
        let a = rng.gen_range(0..bots);
        let mut b = rng.gen_range(0..bots - 1);
        if b >= a {
            b += 1;
        }
        let variant = VARIANTS[g % VARIANTS.len()];
        for (s0, s1) in [(a, b), (b, a)] {
            let p = 1.0 / (1.0 + 10f64.powf(-(truth[s0] - truth[s1] + 20.0) / 400.0));
            let d = 0.5 * p.min(1.0 - p);
            let u: f64 = rng.gen();
            let s = if u < p - d / 2.0 {
                1.0
            } else if u < p + d / 2.0 {
                0.5
            } else {
                0.0
            };
            rows.push(GameRow {
                game_id: format!("{}", rows.len()),
                variant: variant.to_string(),
                players: 2,
                group: format!("p{g}"),
                seat0: names[s0].clone(),
                seat1: names[s1].clone(),
                seat2: String::new(),
                score0: s,
                score1: 1.0 - s,
                score2: None,
                reason: "store".into(),
                offender: None,
                plies: rng.gen_range(10..200),
                duration_ms: 5,
                seed: g as u64,
                opening: String::new(),
                ..Default::default()
            });
        }
        g += 1;
    }
    rows
}

fn bench(c: &mut Criterion) {
    let rows = league(200, 1_000_000);
    let mut group = c.benchmark_group("ratings");
    group.sample_size(10);
    group.bench_function("rate 200 bots x 1M games", |b| {
        b.iter(|| rate(&rows, &RateOptions::default()))
    });
    let opts = RateOptions {
        seat_advantage: true,
        ..Default::default()
    };
    group.bench_function("rate 200 bots x 1M games, seat advantage", |b| {
        b.iter(|| rate(&rows, &opts))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
