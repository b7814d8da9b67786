//! A large, realistic `games.csv` for timing `arena rate` and `arena pgn`
//! (BENCHMARKS.md, "Ratings"): every pairing of BOTS bots in each of the
//! five 2-player variants, round after round as a league schedules them,
//! each group a seat-swap pair sharing an opening; true ratings spread over
//! +/-600 Elo, about 20% draws, a few forfeits; every column of the current
//! schema, every row valid. Seeded: the same arguments give the same file.
//!
//!     cargo run --release --example gen_games -- --rows 10000000 --bots 200 OUT.csv
//!
//! Optional: `--seed N` (default 1).

use mancala_arena::results::csvio::all_columns;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, UNIX_EPOCH};

const VARIANTS: [&str; 5] = ["filo", "tricala", "hackaback", "kisolo", "diffusion"];

struct Args {
    rows: u64,
    bots: usize,
    seed: u64,
    out: String,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        rows: 1_000_000,
        bots: 200,
        seed: 1,
        out: String::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} wants a number"))?;
            v.parse()
                .map_err(|_| format!("{name}: `{v}` is not a number"))
        };
        match x.as_str() {
            "--rows" => a.rows = value("--rows")?,
            "--bots" => a.bots = value("--bots")? as usize,
            "--seed" => a.seed = value("--seed")?,
            _ if x.starts_with('-') => return Err(format!("unknown option {x}")),
            _ => a.out = x,
        }
    }
    if a.out.is_empty() || a.bots < 2 {
        return Err("usage: gen_games [--rows N] [--bots B (>= 2)] [--seed S] OUT.csv".to_string());
    }
    Ok(a)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = args()?;
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    let truth: Vec<f64> = (0..a.bots).map(|_| rng.gen_range(-600.0..600.0)).collect();
    let names: Vec<String> = (0..a.bots).map(|i| format!("bot{i:03}")).collect();
    let combos: Vec<(usize, usize)> = (0..a.bots)
        .flat_map(|i| ((i + 1)..a.bots).map(move |j| (i, j)))
        .collect();
    let file = std::fs::File::create(&a.out)?;
    let mut w = csv::Writer::from_writer(std::io::BufWriter::with_capacity(1 << 20, file));
    w.write_record(all_columns())?;
    // 2026-11-23T00:00:00Z, one game started every 100 ms.
    let start = UNIX_EPOCH + Duration::from_secs(1_795_392_000);
    let (mut rows, mut draws) = (0u64, 0u64);
    'rounds: for round in 1.. {
        // Variants outermost within a round, as the league interleaves them.
        for (c, &(i, j)) in combos.iter().enumerate() {
            for variant in VARIANTS {
                let group = format!("r{round:03}-{variant}-p{c:05}");
                let seed: u64 = rng.gen();
                let opening = format!("{} {}", rng.gen_range(0..6), rng.gen_range(0..6));
                for (order, (s0, s1)) in [(i, j), (j, i)].into_iter().enumerate() {
                    if rows == a.rows {
                        break 'rounds;
                    }
                    // Expected score with 20 Elo for the first seat; draws
                    // most likely between equals.
                    let p = 1.0 / (1.0 + 10f64.powf(-(truth[s0] - truth[s1] + 20.0) / 400.0));
                    let d = 1.2 * p.min(1.0 - p);
                    let u: f64 = rng.gen();
                    let score0 = if u < p - d / 2.0 {
                        1.0
                    } else if u < p + d / 2.0 {
                        0.5
                    } else {
                        0.0
                    };
                    let forfeit = rng.gen_bool(0.002) && score0 != 0.5;
                    let reason = if score0 == 0.5 {
                        "tie"
                    } else if forfeit {
                        "timeout"
                    } else {
                        "store"
                    };
                    let offender = match (forfeit, score0 == 1.0) {
                        (false, _) => "",
                        (true, true) => "1",
                        (true, false) => "0",
                    };
                    draws += u64::from(score0 == 0.5);
                    let plies: u32 = rng.gen_range(12..220);
                    let started =
                        humantime::format_rfc3339_millis(start + Duration::from_millis(rows * 100));
                    let t0: f64 = rng.gen_range(0.0..2000.0);
                    let t1: f64 = rng.gen_range(0.0..2000.0);
                    w.write_record([
                        format!("{group}-o{order}").as_str(),
                        variant,
                        "2",
                        &group,
                        &names[s0],
                        &names[s1],
                        "",
                        &score0.to_string(),
                        &(1.0 - score0).to_string(),
                        "",
                        reason,
                        offender,
                        &plies.to_string(),
                        &rng.gen_range(5u64..3000).to_string(),
                        &seed.to_string(),
                        &opening,
                        &started.to_string(),
                        "1.0",
                        "1.0",
                        "",
                        &format!("{t0:.1}"),
                        &format!("{t1:.1}"),
                        "",
                        // No record: record_file, record_offset, record_length.
                        "",
                        "",
                        "",
                    ])?;
                    rows += 1;
                }
            }
        }
    }
    w.flush()?;
    eprintln!(
        "wrote {rows} games ({:.1}% draws) of {} bots to {}",
        100.0 * draws as f64 / rows.max(1) as f64,
        a.bots,
        a.out
    );
    Ok(())
}
