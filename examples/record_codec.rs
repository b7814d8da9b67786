//! The measurement behind the record logs' codec and level (issue 35,
//! docs/league.md "Game records"): the records of a record log, each
//! compressed alone (one zstd frame per game, as the league writes them),
//! at several levels, in the record format of 1 (one JSON object per
//! decision with every field) and in the compact decision lines of format 2.
//!
//!     cargo run --release --example record_codec -- results/NAME/games/records-0000.jsonl [GAMES [DICT]]
//!
//! Prints, per format and level: bytes per game, the ratio, and the CPU time
//! per game to compress and to decompress (the best of 3 passes).

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: record_codec LOG.jsonl [GAMES]");
        std::process::exit(2);
    };
    let limit: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    // A dictionary (`zstd --train`) to compare with, if given.
    let dict: Vec<u8> = args
        .next()
        .map(|p| std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}")))
        .unwrap_or_default();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    // The records: each from its `game` line to its `end` line.
    let mut v1: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with(r#"{"type":"game""#) {
            if v1.len() == limit {
                break;
            }
            v1.push(String::new());
        }
        if let Some(r) = v1.last_mut() {
            r.push_str(line);
            r.push('\n');
        }
    }
    let v2: Vec<String> = v1.iter().map(|r| compact(r)).collect();
    println!("{} games from {path}", v1.len());
    println!("format | level | plain bytes/game | zstd bytes/game | ratio | compress us/game | decompress us/game");
    for (name, recs) in [("1 (full lines)", &v1), ("2 (compact lines)", &v2)] {
        let plain: usize = recs.iter().map(String::len).sum();
        for level in [-3, -1, 1, 2, 3, 5, 9, 19] {
            let mut c = zstd::bulk::Compressor::with_dictionary(level, &dict).expect("compressor");
            let mut d = zstd::bulk::Decompressor::with_dictionary(&dict).expect("decompressor");
            let (mut best_c, mut best_d, mut bytes) = (f64::MAX, f64::MAX, 0);
            for _ in 0..3 {
                let t = Instant::now();
                let frames: Vec<Vec<u8>> = recs
                    .iter()
                    .map(|r| c.compress(r.as_bytes()).expect("compress"))
                    .collect();
                best_c = best_c.min(t.elapsed().as_secs_f64());
                bytes = frames.iter().map(Vec::len).sum::<usize>();
                let t = Instant::now();
                for (f, r) in frames.iter().zip(recs) {
                    let out = d.decompress(f, r.len()).expect("decompress");
                    assert_eq!(out.len(), r.len());
                }
                best_d = best_d.min(t.elapsed().as_secs_f64());
            }
            let n = recs.len() as f64;
            println!(
                "{name} | {level} | {:.0} | {:.0} | {:.1} | {:.1} | {:.1}",
                plain as f64 / n,
                bytes as f64 / n,
                plain as f64 / bytes as f64,
                best_c / n * 1e6,
                best_d / n * 1e6
            );
        }
    }
}

/// A record of format 1 as format 2 writes it: `format` on the game line;
/// decision lines without `type`, `forced`/`opening` only when true,
/// `elapsed_us` as `us` only when not 0.
fn compact(record: &str) -> String {
    let mut out = String::new();
    for line in record.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON");
        if v["type"] == "game" {
            out.push_str(&line.replacen(r#"{"type":"game","#, r#"{"type":"game","format":2,"#, 1));
            out.push('\n');
            continue;
        }
        if v["type"] != "decision" {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut m = serde_json::Map::new();
        m.insert("seat".into(), v["seat"].clone());
        m.insert("ply".into(), v["ply"].clone());
        m.insert("option".into(), v["option"].clone());
        for flag in ["forced", "opening"] {
            if v[flag] == true {
                m.insert(flag.into(), true.into());
            }
        }
        if v["elapsed_us"].as_u64().unwrap_or(0) > 0 {
            m.insert("us".into(), v["elapsed_us"].clone());
        }
        out.push_str(&serde_json::Value::Object(m).to_string());
        out.push('\n');
    }
    out
}
