use super::*;
use crate::league::config::{RunSettings, Tournament};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// A Swiss of `bots` bots over F.I.L.O., 3-player Tricala and Kisolo.
fn plan(bots: usize, extra: &str) -> SwissPlan {
    let list: Vec<String> = (0..bots)
        .map(|i| format!("{{ name = \"b{i}\", command = [\"x\"] }}"))
        .collect();
    let src = format!(
        "name = \"t\"\nformat = \"swiss\"\nseed = 4\nbots = [{}]\nvariants = [\"filo\", \"tricala3\", \"kisolo\"]\n{extra}\n",
        list.join(", ")
    );
    let t = Tournament::parse_with(
        std::path::Path::new("t.toml"),
        &src,
        &RunSettings::default(),
    )
    .expect("a Swiss league");
    SwissPlan::of(&t).expect("a Swiss")
}

/// The row of game `g`: the lower bot index wins with probability 0.7
/// (drawn from `g`'s seed, so any order of play gives the same rows).
fn row(plan: &SwissPlan, g: &ScheduledGame) -> GameRow {
    let mut rng = ChaCha8Rng::seed_from_u64(g.seed ^ g.index as u64);
    let mut order: Vec<usize> = (0..g.seats.len()).collect();
    order.sort_by_key(|&s| g.seats[s]);
    if rng.gen_bool(0.3) {
        order.reverse();
    }
    let ranks: Vec<u8> = (0..g.seats.len())
        .map(|s| order.iter().position(|&x| x == s).unwrap_or(0) as u8)
        .collect();
    let scores = crate::engine::rank_scores(&ranks);
    GameRow {
        game_id: g.game_id.clone(),
        players: g.seats.len() as u8,
        group: g.group.clone(),
        seat0: plan.bots[g.seats[0]].clone(),
        seat1: plan.bots[g.seats[1]].clone(),
        seat2: g
            .seats
            .get(2)
            .map(|&b| plan.bots[b].clone())
            .unwrap_or_default(),
        score0: scores[0],
        score1: scores[1],
        score2: scores.get(2).copied(),
        ..GameRow::default()
    }
}

/// Plays `source` to its end (or `stop` games) with up to `flight` games
/// in flight, committing them in a random order; returns the rows.
fn play(
    plan: &SwissPlan,
    source: &SwissPairings,
    flight: usize,
    stop: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<GameRow> {
    let mut rows = Vec::new();
    let mut in_flight: Vec<ScheduledGame> = Vec::new();
    while rows.len() < stop {
        while in_flight.len() < flight {
            match source.next() {
                Some(g) => in_flight.push(g),
                None => break,
            }
        }
        if in_flight.is_empty() {
            assert!(!source.pending(), "nothing in flight, yet games pending");
            break;
        }
        let g = in_flight.swap_remove(rng.gen_range(0..in_flight.len()));
        let r = row(plan, &g);
        source.finished(g.index, &r);
        rows.push(r);
    }
    rows
}

fn pairings_of(state: &SwissState) -> Vec<RoundPairing> {
    state.rounds.clone()
}

#[test]
fn every_game_id_names_its_place() {
    let plan = plan(7, "rounds = 3\ngames_per_pairing = 4");
    let state = SwissState::new(&plan);
    let mut s = state.clone();
    assert!(s.advance(&plan));
    let p = s.current().clone();
    // 7 bots: 3 tables x 2 groups x 2 orders in two variants, 2 x 2 x 6.
    assert_eq!(plan.games_per_round(), 2 * 12 + 24);
    for offset in 0..plan.games_per_round() {
        let g = plan.game(2, &p, offset).expect("a game");
        assert_eq!(plan.place(&g.game_id), Some((2, g.index)), "{}", g.game_id);
    }
    for bad in [
        "s004-filo-t000-g0-o0",
        "s001-filo-t003-g0-o0",
        "s001-filo-t000-g2-o0",
        "s001-filo-t000-g0-o2",
        "s001-tricala-3p-t002-g0-o0",
        "r001-filo-p000-o0",
        "",
    ] {
        assert_eq!(plan.place(bad), None, "{bad}");
    }
}

#[test]
fn seats_are_balanced_within_one_game_per_bot() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let plan = plan(11, "rounds = 5");
    let source = SwissPairings::new(plan.clone(), SwissState::new(&plan));
    let rows = play(&plan, &source, 4, usize::MAX, &mut rng);
    assert_eq!(rows.len(), plan.len());
    // Per bot and variant, games in each seat.
    let mut seats: BTreeMap<(String, u8), Vec<i64>> = BTreeMap::new();
    for r in &rows {
        for (s, b) in r.seats().iter().enumerate() {
            seats
                .entry((b.to_string(), r.players))
                .or_insert_with(|| vec![0; 3])[s] += 1;
        }
    }
    for ((bot, players), n) in &seats {
        let n = &n[..*players as usize];
        let (lo, hi) = (n.iter().min().unwrap(), n.iter().max().unwrap());
        assert!(hi - lo <= 1, "{bot} in {players}-player games: {n:?}");
    }
}

/// A Swiss stopped anywhere (a round's games committed in any order, some
/// still in flight and lost) and resumed from its rows pairs every round
/// as the uninterrupted Swiss did.
#[test]
fn a_resumed_swiss_pairs_every_round_as_an_uninterrupted_one() {
    let plan = plan(9, "rounds = 4");
    let whole = SwissPairings::new(plan.clone(), SwissState::new(&plan));
    let rows = play(
        &plan,
        &whole,
        3,
        usize::MAX,
        &mut ChaCha8Rng::seed_from_u64(5),
    );
    let want = pairings_of(&whole.lock().state);
    assert_eq!(want.len(), 4);
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for _ in 0..12 {
        let cut = rng.gen_range(0..plan.len());
        let first = SwissPairings::new(plan.clone(), SwissState::new(&plan));
        let mut got = play(&plan, &first, 4, cut, &mut rng);
        // The resume reads the rows in the order they were written.
        got.shuffle(&mut rng);
        let state = SwissState::replay(&plan, &got);
        let resumed = SwissPairings::new(plan.clone(), state);
        let rest = play(&plan, &resumed, 2, usize::MAX, &mut rng);
        assert_eq!(got.len() + rest.len(), plan.len(), "cut at {cut}");
        assert_eq!(pairings_of(&resumed.lock().state), want, "cut at {cut}");
    }
    assert_eq!(pairings_of(&SwissState::replay(&plan, &rows)), want);
}

#[test]
fn a_round_is_handed_out_only_once_the_round_before_is_committed() {
    let plan = plan(6, "rounds = 2");
    let source = SwissPairings::new(plan.clone(), SwissState::new(&plan));
    let first: Vec<ScheduledGame> = std::iter::from_fn(|| source.next()).collect();
    assert_eq!(first.len(), plan.games_per_round());
    assert!(first.iter().all(|g| g.round == 1));
    assert!(source.pending());
    for g in &first[1..] {
        source.finished(g.index, &row(&plan, g));
    }
    assert_eq!(source.next(), None, "round 2 waits on round 1's last game");
    source.finished(first[0].index, &row(&plan, &first[0]));
    let g = source.next().expect("round 2");
    assert_eq!(g.round, 2);
}

#[test]
fn a_row_set_aside_from_a_round_others_were_paired_from_is_an_error() {
    let plan = plan(4, "rounds = 2");
    let source = SwissPairings::new(plan.clone(), SwissState::new(&plan));
    let rows = play(
        &plan,
        &source,
        1,
        usize::MAX,
        &mut ChaCha8Rng::seed_from_u64(2),
    );
    let mut state = SwissState::replay(&plan, &rows);
    let mut done = DoneSet::default();
    for i in 1..plan.len() {
        done.insert(i);
    }
    let err = state
        .keep_only(&plan, &done)
        .expect_err("round 2 came from game 0");
    assert!(err.contains("round 2"), "{err}");
}

/// A knockout match drawn on points goes to the better seed however its
/// variants' shares add up: over three variants of 6 games, the better
/// seed's shares 1, 1/4, 1/4 and the other's 0, 3/4, 3/4 are 1/2 each,
/// though as floats summed variant by variant 1/3 + 1/12 + 1/12 comes out
/// a hair under 0 + 1/4 + 1/4 (and the worse seed went through).
#[test]
fn a_knockout_match_drawn_over_three_variants_goes_to_the_better_seed() {
    let src = "name = \"k\"\nformat = \"knockout\"\nseeds = [\"b\", \"a\"]\nbots = [{ name = \"a\", command = [\"x\"] }, { name = \"b\", command = [\"x\"] }]\nvariants = [\"filo\", \"kisolo\", \"hackaback\"]\ngames_per_pairing = 6\n";
    let t = Tournament::parse_with(std::path::Path::new("k.toml"), src, &RunSettings::default())
        .expect("a knockout");
    let plan = SwissPlan::of(&t).expect("a knockout");
    let source = SwissPairings::new(plan.clone(), SwissState::new(&plan));
    let (a, b) = (0, 1);
    // Games of each variant so far: b wins every F.I.L.O. game; in the
    // others it draws the first, wins the second and loses the rest.
    let mut seen = [0; 3];
    let mut rows = Vec::new();
    while let Some(g) = source.next() {
        let k = seen[g.variant];
        seen[g.variant] += 1;
        let b_score = match (g.variant, k) {
            (0, _) => 1.0,
            (_, 0) => 0.5,
            (_, 1) => 1.0,
            _ => 0.0,
        };
        let score = |bot: usize| if bot == b { b_score } else { 1.0 - b_score };
        let r = GameRow {
            game_id: g.game_id.clone(),
            players: 2,
            group: g.group.clone(),
            seat0: plan.bots[g.seats[0]].clone(),
            seat1: plan.bots[g.seats[1]].clone(),
            score0: score(g.seats[0]),
            score1: score(g.seats[1]),
            ..GameRow::default()
        };
        source.finished(g.index, &r);
        rows.push(r);
    }
    assert_eq!((rows.len(), seen), (18, [6, 6, 6]));
    let state = SwissState::replay(&plan, &rows);
    let points = state.round_points(1).expect("the final is played");
    assert_eq!(points[a], points[b], "a drawn match is a draw: {points:?}");
    let text = report(&plan, &state);
    assert!(text.contains("champion: b\n"), "{text}");
    // Who went through, and that it was on seed, is said (knockout.txt,
    // the report's bracket, status).
    assert!(
        text.contains("round 1: b 0.50 - 0.50 a (b through on seed)\n"),
        "{text}"
    );
    assert_eq!(progress(&plan, &state).on_seed, ["b over a (round 1)"]);
}
