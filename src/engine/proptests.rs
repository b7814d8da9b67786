//! Property tests over every game through the generic [`Rules`] interface
//! (issue 2, point 3). Owns no rules: it only drives the games' own
//! `options`/`apply`/`check_invariants` and must not reach into any game.
//!
//! For every game and player count, thousands of random games (seeded
//! ChaCha) are checked after every decision:
//! - `check_invariants` holds (conservation of stones/checkers, limits);
//! - the game is over exactly when there is nobody to decide and no option;
//! - every listed option round-trips through its notation and applies to a
//!   clone, leaving invariants intact;
//! - options that are not listed (strings seen in other decisions' lists,
//!   and junk) are rejected and leave the state unchanged (snapshot, render,
//!   seat, plies and outcome compared before and after);
//! - every game ends within the ply cap, and the outcome's scores sum to
//!   players / 2.

use super::{
    diffusion::Diffusion, filo::Filo, hackaback::Hackaback, kisolo::Kisolo, tricala::Tricala,
    Rules, Settings,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random games per test (per game and player count).
const GAMES: usize = 1000;
/// The ply cap used here: low enough to keep the tests short, high enough
/// that most games end by their own rules.
const MAX_PLIES: u32 = 200;
/// No game needs more decisions per ply than this (Tricala's colour and
/// direction choices are the most); a bound so a broken engine fails
/// instead of hanging.
const MAX_DECISIONS_PER_PLY: u64 = 400;
/// Strings that no game's notation accepts as a legal option here.
const JUNK: &[&str] = &[
    "", " ", "zz", "pass!", "99", "0", "xo9", "x", "4b:Q", "o0", "i99", "drawx", "Z", "??",
];

/// What must not change when an option is rejected.
fn fingerprint<G: Rules>(g: &G) -> String {
    // The snapshot's own bytes (`snapshot()` would parse them into a
    // `Value`, the most of this test's time).
    let mut snapshot = Vec::new();
    let mut o = super::json::Obj::new(&mut snapshot);
    g.write_snapshot(&mut o);
    o.end();
    format!(
        "{}|{}|{:?}|{}|{:?}",
        String::from_utf8_lossy(&snapshot),
        g.render(),
        g.to_decide(),
        g.plies(),
        g.outcome()
    )
}

fn check_game<G: Rules>(mut settings: Settings, games: usize, seed: u64) {
    settings.max_plies = MAX_PLIES;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf: Vec<G::Opt> = Vec::new();
    // Notation strings seen in earlier decisions (of any seat and phase).
    let mut pool: Vec<String> = Vec::new();
    let mut pooled: std::collections::HashSet<String> = std::collections::HashSet::new();
    for game in 0..games {
        let mut g = match G::new(&settings) {
            Ok(g) => g,
            Err(e) => panic!("{}: cannot start a game: {e}", G::VARIANT),
        };
        let mut decisions = 0u64;
        g.check_invariants()
            .unwrap_or_else(|e| panic!("{} game {game} at start: {e}", G::VARIANT));
        while g.to_decide().is_some() {
            let d = decisions;
            let ctx = move || format!("{} game {game} decision {d}", G::VARIANT);
            assert!(g.outcome().is_none(), "{}: outcome while deciding", ctx());
            g.options(&mut buf);
            assert!(!buf.is_empty(), "{}: a decision without options", ctx());
            let legal: Vec<String> = buf.iter().map(|&o| g.notation(o)).collect();

            // Every listed option: notation round-trips, applies to a clone.
            for (&opt, s) in buf.iter().zip(&legal) {
                assert_eq!(g.parse(s).ok(), Some(opt), "{}: `{s}` round trip", ctx());
                let mut h = g.clone();
                if let Err(e) = h.apply(opt) {
                    panic!("{}: listed `{s}` rejected: {e}", ctx());
                }
                if let Err(e) = h.check_invariants() {
                    panic!("{}: after `{s}`: {e}", ctx());
                }
            }

            // Options not listed: rejected, nothing changes (the state is
            // compared once after all of them; a change names them all).
            let before = fingerprint(&g);
            let foreign = pool.choose_multiple(&mut rng, 3).cloned();
            let junk = JUNK.choose_multiple(&mut rng, 1).map(|s| s.to_string());
            let tried: Vec<String> = foreign.chain(junk).filter(|s| !legal.contains(s)).collect();
            for s in &tried {
                if let Ok(opt) = g.parse(s) {
                    assert!(
                        !buf.contains(&opt),
                        "{}: `{s}` parses to a listed option but is not listed",
                        ctx()
                    );
                    assert!(
                        g.apply(opt).is_err(),
                        "{}: unlisted `{s}` was accepted (legal: {legal:?})",
                        ctx()
                    );
                }
            }
            if !tried.is_empty() {
                assert_eq!(
                    fingerprint(&g),
                    before,
                    "{}: one of {tried:?} changed the state",
                    ctx()
                );
            }

            for s in &legal {
                if pool.len() < 400 && pooled.insert(s.clone()) {
                    pool.push(s.clone());
                }
            }

            let opt = buf[rng.gen_range(0..buf.len())];
            g.apply(opt)
                .unwrap_or_else(|e| panic!("{}: listed option rejected: {e}", ctx()));
            decisions += 1;
            g.check_invariants()
                .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
            assert!(g.plies() <= MAX_PLIES, "{}: past the ply cap", ctx());
            assert!(
                decisions <= u64::from(MAX_PLIES + 1) * MAX_DECISIONS_PER_PLY,
                "{}: the game does not end",
                ctx()
            );
        }

        // Over: no options, an outcome whose scores sum to players / 2.
        g.options(&mut buf);
        assert!(
            buf.is_empty(),
            "{} game {game}: options after the end",
            G::VARIANT
        );
        let outcome = g
            .outcome()
            .unwrap_or_else(|| panic!("{} game {game}: no outcome", G::VARIANT));
        assert_eq!(usize::from(outcome.players), g.players());
        let scores = outcome.scores();
        assert_eq!(scores.len(), g.players());
        let sum: f64 = scores.iter().sum();
        assert!(
            (sum - g.players() as f64 / 2.0).abs() < 1e-9,
            "{} game {game}: scores {scores:?}",
            G::VARIANT
        );
        if let Some(opt) = pool.first().and_then(|s| g.parse(s).ok()) {
            assert!(
                g.clone().apply(opt).is_err(),
                "{}: move after the end",
                G::VARIANT
            );
        }
    }
}

fn with_option(players: usize, key: &str, value: &str) -> Settings {
    let mut s = Settings::with_players(players);
    s.options.insert(key.into(), value.into());
    s
}

#[test]
fn filo() {
    check_game::<Filo>(Settings::with_players(2), GAMES, 0);
}

#[test]
fn tricala_2_players() {
    check_game::<Tricala>(Settings::with_players(2), GAMES, 1);
}

#[test]
fn tricala_3_players() {
    check_game::<Tricala>(Settings::with_players(3), GAMES, 2);
}

#[test]
fn hackaback() {
    check_game::<Hackaback>(Settings::with_players(2), GAMES, 3);
}

#[test]
fn kisolo_6_columns() {
    check_game::<Kisolo>(with_option(2, "columns", "6"), GAMES, 4);
}

#[test]
fn kisolo_7_columns() {
    check_game::<Kisolo>(Settings::with_players(2), GAMES, 5);
}

#[test]
fn kisolo_8_columns() {
    check_game::<Kisolo>(with_option(2, "columns", "8"), GAMES, 6);
}

#[test]
fn diffusion() {
    check_game::<Diffusion>(Settings::with_players(2), GAMES, 7);
}

/// Every game's written snapshot is canonical JSON: read back (the
/// game's `snapshot()`, with the `Game`'s own fields added to the
/// value) and written by serde_json, it gives the same bytes, at every
/// ply of seeded random games (Kisolo at each size, Tricala with 2 and 3
/// players), up to the end and its result.
#[test]
fn written_snapshots_are_serde_jsons_bytes() {
    use super::{Game, Variant};
    use rand::{Rng, SeedableRng};
    let mut settings = Vec::new();
    for v in Variant::ALL {
        for &n in v.player_counts() {
            settings.push((v, Settings::with_players(n)));
        }
    }
    for c in ["6", "7", "8"] {
        let mut s = Settings::default();
        s.options.insert("columns".into(), c.into());
        settings.push((Variant::Kisolo, s));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    let mut buf = Vec::new();
    for (v, s) in settings {
        let mut s = s;
        s.max_plies = 300;
        for _ in 0..20 {
            let mut game = Game::new(v, &s).unwrap();
            loop {
                buf.clear();
                game.write_snapshot(&mut buf);
                let expected = serde_json::to_vec(&game.snapshot()).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&buf),
                    String::from_utf8_lossy(&expected),
                    "{v} at ply {}",
                    game.plies()
                );
                let legal = game.legal();
                if game.to_decide().is_none() || legal.is_empty() {
                    break;
                }
                let pick = legal[rng.gen_range(0..legal.len())].clone();
                game.play(&pick).unwrap();
            }
        }
    }
}
