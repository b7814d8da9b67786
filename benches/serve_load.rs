//! The load generator of `benches/serve.sh` (BENCHMARKS.md, "The ladder
//! service"): N concurrent readers, each a thread with its own
//! connection, asking for the given paths in turn for a set time;
//! prints the requests, their rate and the p50/p99/max latency per path.
//!
//!     cargo bench --bench serve_load -- URL SECONDS READERS PATH...

use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [url, seconds, readers, paths @ ..] = args.as_slice() else {
        eprintln!("usage: serve_load URL SECONDS READERS PATH...");
        std::process::exit(2);
    };
    let seconds: u64 = seconds.parse().expect("SECONDS is a whole number");
    let readers: usize = readers.parse().expect("READERS is a whole number");
    let until = Instant::now() + Duration::from_secs(seconds);
    let threads: Vec<_> = (0..readers)
        .map(|r| {
            let url = url.clone();
            let paths = paths.to_vec();
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                let mut seen: Vec<Vec<u32>> = vec![Vec::new(); paths.len()];
                let mut errors = 0u64;
                let mut k = r;
                while Instant::now() < until {
                    let i = k % paths.len();
                    k += 1;
                    let t0 = Instant::now();
                    match agent.get(format!("{url}{}", paths[i])).call() {
                        Ok(mut resp) if resp.status().as_u16() == 200 => {
                            let _ = resp.body_mut().read_to_vec();
                            seen[i].push(t0.elapsed().as_micros() as u32);
                        }
                        _ => errors += 1,
                    }
                }
                (seen, errors)
            })
        })
        .collect();
    let mut all: Vec<Vec<u32>> = vec![Vec::new(); paths.len()];
    let mut errors = 0;
    for t in threads {
        let (seen, e) = t.join().expect("a reader panicked");
        errors += e;
        for (a, s) in all.iter_mut().zip(seen) {
            a.extend(s);
        }
    }
    println!("{readers} readers, {seconds} s, {errors} failed requests");
    for (p, mut l) in paths.iter().zip(all) {
        l.sort_unstable();
        let q = |f: f64| {
            l.get(((l.len() as f64 * f) as usize).min(l.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0) as f64
                / 1000.0
        };
        println!(
            "{p}: {} requests, {:.0}/s, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            l.len(),
            l.len() as f64 / seconds as f64,
            q(0.5),
            q(0.99),
            q(1.0)
        );
    }
}
