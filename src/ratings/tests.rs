//! Tests of the ratings against closed forms and simulations with known
//! true ratings. Deterministic seeds; no timing.

use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, Normal};

fn row2(id: &str, variant: &str, group: &str, a: &str, b: &str, score_a: f64) -> GameRow {
    GameRow {
        game_id: id.to_string(),
        variant: variant.to_string(),
        players: 2,
        group: group.to_string(),
        seat0: a.to_string(),
        seat1: b.to_string(),
        seat2: String::new(),
        score0: score_a,
        score1: 1.0 - score_a,
        score2: None,
        reason: if score_a == 0.5 { "tie" } else { "store" }.to_string(),
        offender: None,
        plies: 40,
        duration_ms: 10,
        seed: 1,
        opening: String::new(),
        ..Default::default()
    }
}

fn row3(id: &str, seats: [&str; 3], scores: [f64; 3]) -> GameRow {
    GameRow {
        game_id: id.to_string(),
        variant: "tricala".to_string(),
        players: 3,
        group: "g".to_string(),
        seat0: seats[0].to_string(),
        seat1: seats[1].to_string(),
        seat2: seats[2].to_string(),
        score0: scores[0],
        score1: scores[1],
        score2: Some(scores[2]),
        reason: "store".to_string(),
        offender: None,
        plies: 60,
        duration_ms: 10,
        seed: 1,
        opening: String::new(),
        ..Default::default()
    }
}

/// `w` wins, `d` draws and `l` losses of A against B, seats alternating.
fn head_to_head(w: usize, d: usize, l: usize) -> Vec<GameRow> {
    let mut rows = Vec::new();
    let results = std::iter::repeat_n(1.0, w)
        .chain(std::iter::repeat_n(0.5, d))
        .chain(std::iter::repeat_n(0.0, l));
    for (k, s) in results.enumerate() {
        let id = format!("g{k}");
        if k % 2 == 0 {
            rows.push(row2(&id, "filo", &id, "A", "B", s));
        } else {
            rows.push(row2(&id, "filo", &id, "B", "A", 1.0 - s));
        }
    }
    rows
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn two_bots_match_the_closed_form_split_around_zero() {
    // A beats B in w = 30 of n = 40: elo_A - elo_B = 400 log10(w / (n - w)).
    let rep = rate(&head_to_head(30, 0, 10), &RateOptions::default()).unwrap();
    let d = 400.0 * (30.0f64 / 10.0).log10();
    let a = rep.overall.get("A").unwrap();
    let b = rep.overall.get("B").unwrap();
    assert!(close(a.elo, d / 2.0, 1e-6), "{}", a.elo);
    assert!(close(b.elo, -d / 2.0, 1e-6));
    assert_eq!(a.flag, Flag::None);
    // Interval: var(d) = phi / (K^2 n p (1 - p)), with the Pearson dispersion
    // phi = n / (n - 1) (no draws: X^2 = n exactly at p = w / n); each
    // bot's centered rating is +-d/2, so its half-width is z sd(d) / 2.
    let (n, p) = (40.0, 0.75);
    let k = std::f64::consts::LN_10 / 400.0;
    let var_d = (n / (n - 1.0)) / (k * k * n * p * (1.0 - p));
    let half = 1.959964 * var_d.sqrt() / 2.0;
    assert!(
        close(a.elo_high - a.elo, half, 1e-3),
        "{} vs {half}",
        a.elo_high - a.elo
    );
    assert!(close(a.elo - a.elo_low, half, 1e-3));
    // LOS of A over B: Phi(d / sd(d)).
    let los = rep.overall.los("A", "B").unwrap();
    let want = Normal::standard().cdf(d / var_d.sqrt());
    assert!(close(los, want, 1e-6));
}

#[test]
fn draws_count_as_half_a_win_and_half_a_loss() {
    // 20 wins, 10 draws, 10 losses: score 25/40.
    let rep = rate(&head_to_head(20, 10, 10), &RateOptions::default()).unwrap();
    let d = 400.0 * (25.0f64 / 15.0).log10();
    let a = rep.overall.get("A").unwrap();
    assert!(close(a.elo, d / 2.0, 1e-6));
    assert_eq!(a.count.draws, 10);
}

#[test]
fn anchoring_a_bot_shifts_the_scale() {
    let opts = RateOptions {
        anchor: Some(Anchor {
            bot: "B".into(),
            elo: 1500.0,
        }),
        ..Default::default()
    };
    let rep = rate(&head_to_head(30, 0, 10), &opts).unwrap();
    let d = 400.0 * 3f64.log10();
    let b = rep.overall.get("B").unwrap();
    assert!(close(b.elo, 1500.0, 1e-9));
    assert!(close(b.elo_high, 1500.0, 1e-9), "the anchor has no error");
    assert!(close(rep.overall.get("A").unwrap().elo, 1500.0 + d, 1e-6));
    let bad = RateOptions {
        anchor: Some(Anchor {
            bot: "nobody".into(),
            elo: 0.0,
        }),
        ..Default::default()
    };
    assert!(matches!(
        rate(&head_to_head(1, 0, 1), &bad),
        Err(RatingError::UnknownAnchor(_))
    ));
}

#[test]
fn perfect_scores_are_finite_and_flagged() {
    let rep = rate(&head_to_head(5, 0, 0), &RateOptions::default()).unwrap();
    let a = rep.overall.get("A").unwrap();
    let b = rep.overall.get("B").unwrap();
    assert!(rep.overall.regularized);
    for r in [a, b] {
        assert!(r.elo.is_finite() && r.elo_low.is_finite() && r.elo_high.is_finite());
    }
    assert!(a.elo > b.elo);
    assert_eq!(a.flag, Flag::AllWins);
    assert_eq!(b.flag, Flag::AllLosses);
}

#[test]
fn single_games_behave() {
    // One win: finite, flagged.
    let rep = rate(&head_to_head(1, 0, 0), &RateOptions::default()).unwrap();
    let a = rep.overall.get("A").unwrap();
    assert!(a.elo.is_finite() && a.elo > 0.0 && a.elo_high.is_finite());
    assert_eq!(a.flag, Flag::AllWins);
    // One draw: the MLE exists (both at 0), with a finite, wide interval.
    let rep = rate(&head_to_head(0, 1, 0), &RateOptions::default()).unwrap();
    let a = rep.overall.get("A").unwrap();
    assert!(!rep.overall.regularized);
    assert!(close(a.elo, 0.0, 1e-9));
    assert!(a.elo_high.is_finite() && a.elo_high > 100.0);
    assert_eq!(a.flag, Flag::None);
}

#[test]
fn a_bot_without_games_is_unrated_and_listed_last() {
    let opts = RateOptions {
        extra_bots: vec!["C".into()],
        ..Default::default()
    };
    let rep = rate(&head_to_head(3, 1, 2), &opts).unwrap();
    let last = rep.overall.ratings.last().unwrap();
    assert_eq!(last.bot, "C");
    assert!(!last.rated);
    assert_eq!(last.flag, Flag::Unrated);
    assert_eq!(rep.overall.los("A", "C"), None);
    // Per variant: a bot that never played it is unrated there.
    let mut rows = head_to_head(3, 1, 2);
    rows.push(row2("k1", "kisolo", "k1", "A", "C", 0.5));
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    let kisolo = rep
        .per_variant
        .iter()
        .find(|s| s.variant == "kisolo")
        .unwrap();
    assert_eq!(kisolo.get("B").unwrap().flag, Flag::Unrated);
    assert!(kisolo.get("C").unwrap().rated);
}

#[test]
fn order_of_rows_does_not_matter() {
    let rows = simulate_league(&mut ChaCha8Rng::seed_from_u64(7), &TRUE8, 6, 0.0);
    let mut shuffled = rows.clone();
    shuffled.reverse();
    shuffled.swap(3, 77);
    let a = rate(&rows, &RateOptions::default()).unwrap();
    let b = rate(&shuffled, &RateOptions::default()).unwrap();
    for (x, y) in a.overall.ratings.iter().zip(&b.overall.ratings) {
        assert_eq!(x.bot, y.bot);
        assert!(close(x.elo, y.elo, 1e-9) && close(x.elo_low, y.elo_low, 1e-9));
    }
}

#[test]
fn pentanomial_counts_and_elo() {
    // Seat-swap pairs of A and B (A's two results): WW, WW, WL, DD, LD.
    let pairs: [(f64, f64); 5] = [(1.0, 1.0), (1.0, 1.0), (1.0, 0.0), (0.5, 0.5), (0.0, 0.5)];
    let mut rows = Vec::new();
    for (k, (x, y)) in pairs.iter().enumerate() {
        let g = format!("p{k}");
        rows.push(row2(&format!("{g}a"), "filo", &g, "A", "B", *x));
        rows.push(row2(&format!("{g}b"), "filo", &g, "B", "A", 1.0 - *y));
    }
    // An incomplete group is not a pair.
    rows.push(row2("lone", "filo", "lone", "A", "B", 1.0));
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    let p = rep
        .pairs
        .iter()
        .find(|p| p.variant == "all" && p.bot_a == "A")
        .unwrap();
    assert_eq!(p.penta, [0, 1, 2, 0, 2]); // LL, LD, WL+DD, WD, WW
    assert_eq!((p.a_wins, p.draws, p.b_wins, p.results), (6, 3, 2, 11));
    // Pair scores 1/4, 1/2, 1/2, 1, 1: mean 0.65.
    let xs = [0.25, 0.5, 0.5, 1.0, 1.0];
    let mu: f64 = xs.iter().sum::<f64>() / 5.0;
    let var: f64 = xs.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / 5.0;
    let se = (var / 5.0).sqrt();
    let elo = |s: f64| -400.0 * (1.0 / s - 1.0).log10();
    assert!(close(p.penta_elo.unwrap(), elo(0.65), 1e-9));
    let (lo, hi) = (mu - 1.959964 * se, mu + 1.959964 * se);
    assert!(close(
        p.penta_elo_err.unwrap(),
        (elo(hi) - elo(lo)) / 2.0,
        1e-3
    ));
}

#[test]
fn variant_statistics() {
    let mut rows = head_to_head(2, 1, 1); // seat0: A(1), B(1-1=0? see below)
    rows[0].plies = 10;
    rows[1].plies = 20;
    rows[2].plies = 30;
    rows[3].plies = 100;
    rows[3].reason = "timeout".into();
    rows[3].offender = Some(1);
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    let v = &rep.variants[0];
    assert_eq!(v.variant, "filo");
    assert_eq!((v.games, v.draws, v.forfeits), (4, 1, 1));
    assert!(close(v.plies_mean, 40.0, 1e-12) && close(v.plies_median, 25.0, 1e-12));
    assert_eq!((v.plies_min, v.plies_max), (10, 100));
    // Seat 0 scores: g0 A wins 1, g1 B (A won) 0, g2 A draws 0.5, g3 B (A lost) 1.
    assert!(close(v.first_seat_score, 2.5 / 4.0, 1e-12));
    // Game 3: seat1 is A, and A forfeited on time.
    let a = rep.overall.get("A").unwrap();
    assert_eq!(a.count.forfeits, 1);
    assert_eq!(a.count.forfeit_reasons.get("timeout"), Some(&1));
    // Every end reason of A's games, whoever caused it.
    assert_eq!(a.count.reasons.get("timeout"), Some(&1));
    assert_eq!(a.count.reasons.values().sum::<u64>(), 4);
    assert_eq!(
        rep.overall.get("B").unwrap().count.reasons.get("timeout"),
        Some(&1)
    );
}

#[test]
fn three_player_games_weigh_one_game_each() {
    // X first, Y second, Z third, 6 times (full rankings); a three-way tie;
    // one winner-only game.
    let mut rows: Vec<GameRow> = (0..6)
        .map(|k| row3(&format!("t{k}"), ["X", "Y", "Z"], [1.0, 0.5, 0.0]))
        .collect();
    rows.push(row3("t6", ["Z", "Y", "X"], [0.5, 0.5, 0.5]));
    rows.push(row3("t7", ["Z", "X", "Y"], [1.0, 0.25, 0.25]));
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    assert_eq!(rep.per_variant[0].variant, "tricala-3p");
    let x = rep.overall.get("X").unwrap();
    assert_eq!(x.count.games, 8);
    // The counts stay pairwise: X beats both in 6 games (12 wins), draws
    // twice in t6, loses to Z and "draws" Y in t7.
    assert_eq!((x.count.wins, x.count.draws, x.count.losses), (12, 3, 1));
    assert!(x.elo > rep.overall.get("Y").unwrap().elo);
    assert!(!rep.overall.regularized);
    // For the fit: 7 ranked games as 3 seat pairs of weight 1/3, the
    // winner-only game as one Luce event of weight 1 (no X-Y draw).
    let mut ev = stats::EvidenceBuilder::new();
    rows.iter().for_each(|r| ev.add(r));
    let ev = ev.finish(&[]);
    assert!(ev.cells.is_empty());
    let total: f64 = ev.choices.iter().map(|c| c.w).sum();
    assert!(close(total, 8.0, 1e-9));
    let triples: Vec<_> = ev.choices.iter().filter(|c| c.size == 3).collect();
    assert_eq!(triples.len(), 1);
    assert_eq!(triples[0].w, 1.0);
}

/// Winner-only 3-player rows at their exact expected frequencies under
/// Luce's model: `per_arrangement` games for each of the 6 seatings of
/// `bots` (name, Elo), seat 0 `seat` Elo stronger, win counts rounded.
fn winner_only_rows(bots: [(&str, f64); 3], seat: f64, per_arrangement: f64) -> Vec<GameRow> {
    let mut rows = Vec::new();
    for perm in [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ] {
        let u: Vec<f64> = (0..3)
            .map(|s| bots[perm[s]].1 + if s == 0 { seat } else { 0.0 })
            .collect();
        let sum: f64 = u.iter().map(|v| 10f64.powf(v / 400.0)).sum();
        for (s, v) in u.iter().enumerate() {
            let n = (per_arrangement * 10f64.powf(v / 400.0) / sum).round() as usize;
            let mut scores = [0.25; 3];
            scores[s] = 1.0;
            for _ in 0..n {
                let id = format!("w{}", rows.len());
                let names = perm.map(|b| bots[b].0);
                rows.push(row3(&id, names, scores));
            }
        }
    }
    rows
}

#[test]
fn winner_only_exact_frequencies_give_back_the_truth() {
    // Issue 15: A = +200, B = 0, C = -200 came back as +147, -44, -103
    // when the two losers counted as a draw. 6000 games, rounded counts.
    let rows = winner_only_rows([("A", 200.0), ("B", 0.0), ("C", -200.0)], 0.0, 1000.0);
    assert_eq!(rows.len(), 6000);
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    for (bot, truth) in [("A", 200.0), ("B", 0.0), ("C", -200.0)] {
        let r = rep.overall.get(bot).unwrap();
        eprintln!("{bot}: {:.2} +/- {:.2}", r.elo, r.elo_high - r.elo);
        assert!(close(r.elo, truth, 1.0), "{bot} {}", r.elo);
        assert!(r.elo_low <= truth && truth <= r.elo_high, "{bot} {r:?}");
        assert!(r.elo_se > 2.0 && r.elo_se < 6.0, "{bot} se {}", r.elo_se);
    }
    // No ties and a model that holds: the dispersion is about 1.
    assert!(
        close(rep.overall.dispersion, 1.0, 0.05),
        "{}",
        rep.overall.dispersion
    );
}

#[test]
fn winner_only_fractional_frequencies_are_exact() {
    // The same at the level of the fit, with unrounded expected counts.
    let truth = [200.0, 0.0, -200.0];
    let p = luce::probabilities(&truth, 3);
    let c = luce::Choice {
        group: 0,
        members: [0, 1, 2],
        size: 3,
        seat0: None,
        w: 6000.0,
        y: p.map(|v| 6000.0 * v),
        q: p.map(|v| 6000.0 * v),
    };
    let out = fit::fit(3, 1, &[], &[c], &[false], IntervalMethod::Dispersion);
    let mean = out.elo.iter().sum::<f64>() / 3.0;
    for (e, t) in out.elo.iter().zip(truth) {
        assert!(close(e - mean, t, 1e-6), "{e} {t}");
    }
}

#[test]
fn winner_only_seat_advantage_is_fitted_on_the_first_seat() {
    // Seat 0 plays 60 Elo stronger in every arrangement.
    let rows = winner_only_rows([("A", 200.0), ("B", 0.0), ("C", -200.0)], 60.0, 2000.0);
    let opts = RateOptions {
        seat_advantage: true,
        ..Default::default()
    };
    let rep = rate(&rows, &opts).unwrap();
    let (label, h, lo, hi) = rep.overall.seat_advantage[0].clone();
    assert_eq!(label, "tricala-3p");
    assert!(
        close(h, 60.0, 1.0) && lo < 60.0 && 60.0 < hi,
        "{h} [{lo}, {hi}]"
    );
    for (bot, truth) in [("A", 200.0), ("B", 0.0), ("C", -200.0)] {
        assert!(
            close(rep.overall.get(bot).unwrap().elo, truth, 1.0),
            "{bot}"
        );
    }
    // Without the option the seats cancel (every seating equally often).
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    assert!(close(rep.overall.get("A").unwrap().elo, 200.0, 3.0));
}

#[test]
fn two_and_three_player_games_share_one_scale() {
    // A and B meet only in 2-player games (A +200: 76% expected, exact),
    // B, C and D only in winner-only 3-player games (0, -100, -300). The
    // joint fit links A to C and D through B.
    let mut rows = Vec::new();
    let e = 1.0 / (1.0 + 10f64.powf(-0.5));
    let wins = (1000.0 * e).round() as usize;
    for k in 0..1000 {
        let (id, g) = (format!("p{k}"), format!("pg{}", k / 2));
        let a_won = if k < wins { 1.0 } else { 0.0 };
        rows.push(if k % 2 == 0 {
            row2(&id, "tricala", &g, "A", "B", a_won)
        } else {
            row2(&id, "tricala", &g, "B", "A", 1.0 - a_won)
        });
    }
    rows.extend(winner_only_rows(
        [("B", 0.0), ("C", -100.0), ("D", -300.0)],
        0.0,
        1000.0,
    ));
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    // Centred on the average: 200, 0, -100, -300 minus -50.
    for (bot, truth) in [("A", 250.0), ("B", 50.0), ("C", -50.0), ("D", -250.0)] {
        let r = rep.overall.get(bot).unwrap();
        assert!(close(r.elo, truth, 1.5), "{bot} {}", r.elo);
        assert!(r.elo_low <= truth && truth <= r.elo_high, "{bot}");
    }
    // A's distance to D carries the uncertainty of both kinds of games.
    let (a, d) = (rep.overall.get("A").unwrap(), rep.overall.get("D").unwrap());
    assert!(a.elo_se > rep.overall.get("B").unwrap().elo_se);
    assert!(rep.overall.los("A", "D").unwrap() > 0.999);
    assert!(a.elo - d.elo > 490.0);
}

#[test]
fn a_perfect_bot_leaves_the_others_at_their_maximum_likelihood() {
    // the rule of Ordo's manual: the others are rated without the perfect players' games,
    // the perfect players are placed as if one of their games was a draw.
    let base = simulate_league(&mut ChaCha8Rng::seed_from_u64(11), &TRUE8, 4, 0.0);
    let mut rows = base.clone();
    for i in 0..TRUE8.len() {
        rows.push(row2(
            &format!("w{i}"),
            "filo",
            &format!("w{i}"),
            "ace",
            &format!("b{i}"),
            1.0,
        ));
        rows.push(row2(
            &format!("l{i}"),
            "filo",
            &format!("l{i}"),
            &format!("b{i}"),
            "dud",
            1.0,
        ));
    }
    let plain = rate(&base, &RateOptions::default()).unwrap();
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    assert!(rep.overall.regularized && !plain.overall.regularized);
    assert_eq!(rep.overall.groups, 1);
    for r in &plain.overall.ratings {
        let q = rep.overall.get(&r.bot).unwrap();
        assert!(close(q.elo, r.elo, 1e-6), "{} {} {}", r.bot, q.elo, r.elo);
        assert!(close(q.elo_se, r.elo_se, 1e-6), "{}", r.bot);
        assert_eq!(q.flag, Flag::None);
    }
    assert!(rep.overall.anchor.contains("unflagged"));
    // ace: expected score 7.5 of 8 against the fixed others.
    let ace = rep.overall.get("ace").unwrap();
    assert_eq!(ace.flag, Flag::AllWins);
    let expected: f64 = plain
        .overall
        .ratings
        .iter()
        .map(|r| 1.0 / (1.0 + 10f64.powf(-(ace.elo - r.elo) / 400.0)))
        .sum();
    assert!(close(expected, 7.5, 1e-6), "{expected}");
    assert_eq!(rep.overall.get("dud").unwrap().flag, Flag::AllLosses);
    assert_eq!(rep.overall.ratings[0].bot, "ace");
    assert_eq!(rep.overall.ratings.last().unwrap().bot, "dud");
}

#[test]
fn a_chain_of_wins_is_ordered_and_flagged() {
    // A beat B twice, B beat C twice, never the other way.
    let rows = vec![
        row2("1", "filo", "1", "A", "B", 1.0),
        row2("2", "filo", "2", "B", "A", 0.0),
        row2("3", "filo", "3", "B", "C", 1.0),
        row2("4", "filo", "4", "C", "B", 0.0),
    ];
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    let st = &rep.overall;
    assert!(st.regularized);
    let (a, b, c) = (
        st.get("A").unwrap(),
        st.get("B").unwrap(),
        st.get("C").unwrap(),
    );
    assert!(a.elo > b.elo && b.elo > c.elo);
    assert_eq!(
        (a.flag, b.flag, c.flag),
        (Flag::AllWins, Flag::Prior, Flag::AllLosses)
    );
    // Each link: 1.5 of 2, i.e. 400 log10(3) apart; average of all = 0.
    let d = 400.0 * 3f64.log10();
    assert!(close(a.elo - b.elo, d, 1e-6) && close(b.elo - c.elo, d, 1e-6));
    assert!(close(a.elo + b.elo + c.elo, 0.0, 1e-6));
}

#[test]
fn all_draws_and_all_losses() {
    let rep = rate(&head_to_head(0, 6, 0), &RateOptions::default()).unwrap();
    let a = rep.overall.get("A").unwrap();
    assert!(!rep.overall.regularized);
    assert!(close(a.elo, 0.0, 1e-9) && a.elo_high.is_finite() && a.elo_high > 0.0);
    let rep = rate(&head_to_head(0, 0, 4), &RateOptions::default()).unwrap();
    let a = rep.overall.get("A").unwrap();
    let b = rep.overall.get("B").unwrap();
    assert_eq!((a.flag, b.flag), (Flag::AllLosses, Flag::AllWins));
    // 4 games: 3.5 of 4 for B.
    assert!(close(b.elo - a.elo, 400.0 * 7f64.log10(), 1e-6));
}

#[test]
fn disconnected_groups_stay_finite_and_are_not_compared() {
    // {A, B} and {C, D, E} never met; E lost every game.
    let mut rows = head_to_head(5, 2, 3);
    for (k, (x, y, s)) in [
        ("C", "D", 1.0),
        ("D", "C", 1.0),
        ("C", "D", 0.5),
        ("C", "E", 1.0),
        ("E", "D", 0.0),
    ]
    .iter()
    .enumerate()
    {
        rows.push(row2(&format!("x{k}"), "filo", &format!("x{k}"), x, y, *s));
    }
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    let st = &rep.overall;
    assert_eq!(st.groups, 2);
    for r in &st.ratings {
        assert!(r.elo.is_finite() && r.elo_low.is_finite() && r.elo_high.is_finite());
    }
    // The larger group is the main one; the other is flagged.
    assert_eq!(st.get("C").unwrap().flag, Flag::None);
    assert_eq!(st.get("A").unwrap().flag, Flag::Disconnected);
    assert_eq!(st.los("A", "C"), None);
    assert!(st.los("A", "B").is_some() && st.los("C", "D").is_some());
    // Inside each group the ratings are the group's own; each group is
    // centred on its own average.
    let (a, b) = (st.get("A").unwrap(), st.get("B").unwrap());
    assert!(close(a.elo - b.elo, 400.0 * (6.0f64 / 4.0).log10(), 1e-6));
    assert!(close(a.elo + b.elo, 0.0, 1e-6));
    assert!(close(a.elo_se, b.elo_se, 1e-9));
    // Anchored in the small group: the anchor holds, the other group is
    // centred on the anchor's value.
    let opts = RateOptions {
        anchor: Some(Anchor {
            bot: "B".into(),
            elo: 1000.0,
        }),
        ..Default::default()
    };
    let st = rate(&rows, &opts).unwrap().overall;
    assert!(close(st.get("B").unwrap().elo, 1000.0, 1e-9));
    let others: Vec<f64> = ["C", "D", "E"]
        .iter()
        .map(|b| st.get(b).unwrap().elo)
        .collect();
    assert!(
        close(others.iter().sum::<f64>() / 3.0, 1000.0, 1e-6),
        "{others:?}"
    );
}

/// The probe's two files: {c, d} alone, and {c, d} pooled with {a, b, x}
/// (the larger group, the reference one) that never met them.
fn c_and_d_rows(with_other_group: bool) -> Vec<GameRow> {
    let other = [
        ("a", "b", 1.0),
        ("b", "a", 1.0),
        ("a", "b", 0.5),
        ("b", "a", 0.5),
        ("a", "x", 0.5),
        ("x", "a", 1.0),
    ];
    let cd = [
        ("c", "d", 1.0),
        ("d", "c", 0.0),
        ("c", "d", 0.0),
        ("d", "c", 0.5),
        ("c", "d", 1.0),
    ];
    let games = if with_other_group { &other[..] } else { &[] };
    games
        .iter()
        .chain(cd.iter())
        .enumerate()
        .map(|(k, (x, y, s))| row2(&format!("g{k}"), "filo", &format!("p{}", k / 2), x, y, *s))
        .collect()
}

#[test]
fn los_inside_another_group_keeps_its_covariance_and_is_antisymmetric() {
    let rated = |pooled: bool, intervals: IntervalMethod| {
        let opts = RateOptions {
            intervals,
            ..Default::default()
        };
        rate(&c_and_d_rows(pooled), &opts).unwrap().overall
    };
    // With φ alone (1 in both tables) the pooled LOS is the alone one.
    let (alone, pooled) = (
        rated(false, IntervalMethod::Dispersion),
        rated(true, IntervalMethod::Dispersion),
    );
    assert_eq!(pooled.groups, 2);
    assert_eq!(pooled.get("c").unwrap().flag, Flag::Disconnected);
    let (los_alone, los_pooled) = (alone.los("c", "d").unwrap(), pooled.los("c", "d").unwrap());
    assert!(
        close(los_pooled, los_alone, 1e-9),
        "{los_pooled} {los_alone}"
    );
    // The robust variances carry the table's HC1 factor, N / (N - k) over
    // all its games: the same correlation, each variance scaled alike.
    let (alone, pooled) = (
        rated(false, IntervalMethod::Robust),
        rated(true, IntervalMethod::Robust),
    );
    let z = |st: &Standings| {
        let se = st.get("c").unwrap().elo_se;
        Normal::standard().inverse_cdf(st.los("c", "d").unwrap()) * se
    };
    assert!(
        close(z(&pooled), z(&alone), 1e-6),
        "{} {}",
        z(&pooled),
        z(&alone)
    );
    for (a, row) in pooled.los_matrix() {
        for (b, los) in pooled.ratings.iter().zip(row) {
            if let (Some(ab), Some(ba)) = (los, pooled.los(&b.bot, &a)) {
                assert!(close(ab + ba, 1.0, 1e-9), "LOS({a},{}) {ab} + {ba}", b.bot);
            }
        }
    }
    let n = pooled.ratings.len();
    for i in 0..n {
        for j in 0..n {
            assert_eq!(pooled.cov[i * n + j], pooled.cov[j * n + i], "{i} {j}");
        }
    }
}

// ---- simulations with known true ratings ----

const TRUE8: [f64; 8] = [-350.0, -250.0, -100.0, 0.0, 50.0, 150.0, 200.0, 300.0];

/// Round robin: each pair plays `pairs` seat-swap pairs. Result model: the
/// expected score of the first seat is logistic(d + seat) on the Elo scale,
/// a draw happens with probability 0.8 min(p, 1 - p) (so the expectation is
/// kept).
fn simulate_league(rng: &mut ChaCha8Rng, truth: &[f64], pairs: usize, seat: f64) -> Vec<GameRow> {
    let names: Vec<String> = (0..truth.len()).map(|i| format!("b{i}")).collect();
    let mut rows = Vec::new();
    for i in 0..truth.len() {
        for j in (i + 1)..truth.len() {
            for k in 0..pairs {
                let g = format!("{i}-{j}-{k}");
                for (s0, s1, tag) in [(i, j, "a"), (j, i, "b")] {
                    let p = 1.0 / (1.0 + 10f64.powf(-(truth[s0] - truth[s1] + seat) / 400.0));
                    let dr = 0.8 * p.min(1.0 - p);
                    let u: f64 = rng.gen();
                    let s = if u < p - dr / 2.0 {
                        1.0
                    } else if u < p + dr / 2.0 {
                        0.5
                    } else {
                        0.0
                    };
                    rows.push(row2(
                        &format!("{g}{tag}"),
                        "filo",
                        &g,
                        &names[s0],
                        &names[s1],
                        s,
                    ));
                }
            }
        }
    }
    rows
}

fn coverage_of(st: &Standings, truth: &[f64], hit: &mut usize, total: &mut usize) {
    let mean = truth.iter().sum::<f64>() / truth.len() as f64;
    for (i, t) in truth.iter().enumerate() {
        let r = st.get(&format!("b{i}")).unwrap();
        *total += 1;
        if r.elo_low <= t - mean && t - mean <= r.elo_high {
            *hit += 1;
        }
    }
}

/// 95% draws between two equal bots: the score's variance is a twentieth
/// of a coin's, and the dispersion says so instead of stopping at a floor
/// of 0.25 (docs/ratings.md, "High draw rates").
#[test]
fn the_dispersion_follows_a_very_high_draw_rate() {
    let rows = head_to_head(5, 190, 5);
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    let phi = rep.overall.dispersion;
    assert!((0.03..0.08).contains(&phi), "dispersion {phi}");
}

#[test]
fn simulated_leagues_cover_the_truth_about_95_percent() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let (mut hit, mut total) = (0, 0);
    for _ in 0..150 {
        let rows = simulate_league(&mut rng, &TRUE8, 10, 0.0);
        let rep = rate(&rows, &RateOptions::default()).unwrap();
        assert!(!rep.overall.regularized);
        assert!(rep.overall.dispersion < 0.95, "draws shrink the variance");
        coverage_of(&rep.overall, &TRUE8, &mut hit, &mut total);
    }
    let cov = hit as f64 / total as f64;
    eprintln!("coverage {cov} ({hit}/{total})");
    assert!((0.93..=0.97).contains(&cov), "coverage {cov}");
}

/// Where the first seat won every game of a variant (Hackaback between
/// random bots, say) the seat advantage has no finite estimate: it is
/// reported unbounded, that variant is rated without it, and the other
/// variants keep theirs.
#[test]
fn a_seat_that_wins_every_game_is_unbounded_not_a_number() {
    let bots = ["a", "b", "c"];
    let mut rows = Vec::new();
    let mut k = 0;
    for (i, x) in bots.iter().enumerate() {
        for y in &bots[i + 1..] {
            for round in 0..4 {
                for (s0, s1) in [(x, y), (y, x)] {
                    // Hackaback: the first seat always wins.
                    rows.push(row2(
                        &format!("h{k}"),
                        "hackaback",
                        &format!("h{i}{round}{x}{y}"),
                        s0,
                        s1,
                        1.0,
                    ));
                    // Filo: `a` is better, seats alternate winning.
                    let score = match (*s0, *s1) {
                        ("a", _) => {
                            if round % 4 == 3 {
                                0.5
                            } else {
                                1.0
                            }
                        }
                        (_, "a") => {
                            if round % 4 == 3 {
                                0.5
                            } else {
                                0.0
                            }
                        }
                        _ => {
                            if (k + round) % 2 == 0 {
                                1.0
                            } else {
                                0.0
                            }
                        }
                    };
                    rows.push(row2(
                        &format!("f{k}"),
                        "filo",
                        &format!("f{i}{round}{x}{y}"),
                        s0,
                        s1,
                        score,
                    ));
                    k += 1;
                }
            }
        }
    }
    let with = rate(
        &rows,
        &RateOptions {
            seat_advantage: true,
            ..Default::default()
        },
    )
    .unwrap();
    let without = rate(&rows, &RateOptions::default()).unwrap();
    assert_eq!(
        with.overall.seat_unbounded,
        vec![("hackaback".to_string(), 1.0)]
    );
    let labels: Vec<&str> = with
        .overall
        .seat_advantage
        .iter()
        .map(|s| s.0.as_str())
        .collect();
    assert_eq!(labels, ["filo"], "filo keeps its seat advantage");
    assert!(with
        .overall
        .seat_advantage
        .iter()
        .all(|s| s.1.abs() < 400.0));
    // Hackaback alone: rated as without the option.
    let h_with = with
        .per_variant
        .iter()
        .find(|s| s.variant == "hackaback")
        .unwrap();
    let h_without = without
        .per_variant
        .iter()
        .find(|s| s.variant == "hackaback")
        .unwrap();
    assert!(h_with.seat_advantage.is_empty());
    for r in &h_without.ratings {
        let e = h_with.get(&r.bot).unwrap().elo;
        assert!((e - r.elo).abs() < 1e-6, "{}: {e} vs {}", r.bot, r.elo);
    }
    let text = crate::report::tables::standings_table(&with.overall);
    assert!(
        text.contains("first-seat advantage hackaback: unbounded (the first seat scored 100.0%"),
        "{text}"
    );
}

/// Hackaback as the analyst found it: between random bots the first seat
/// always wins, and a strong bot wins from either seat. The first seat
/// scores 76%, yet the advantage has no finite estimate: the strong bot is
/// placed apart, and the other games were all won by the first seat. It
/// is reported unbounded and the variant rated as without the option
/// (it was 1,044 Elo [819, 1268], dragging the strong bot 700 Elo up and
/// spreading three like bots over 230 Elo). A finite advantage among the
/// same bots is kept.
#[test]
fn a_seat_unbounded_once_the_ratings_are_fitted_is_found() {
    let mut rows = Vec::new();
    let mut k = 0;
    let mut game = |rows: &mut Vec<GameRow>, s0: &str, s1: &str, score: f64| {
        rows.push(row2(
            &format!("g{k}"),
            "hackaback",
            &format!("p{k}"),
            s0,
            s1,
            score,
        ));
        k += 1;
    };
    for _ in 0..10 {
        for weak in ["x", "y", "z"] {
            game(&mut rows, "strong", weak, 1.0);
            game(&mut rows, weak, "strong", 0.0);
        }
        for (a, b) in [("x", "y"), ("x", "z"), ("y", "z")] {
            game(&mut rows, a, b, 1.0);
            game(&mut rows, b, a, 1.0);
        }
    }
    let opts = RateOptions {
        seat_advantage: true,
        ..Default::default()
    };
    let with = rate(&rows, &opts).unwrap();
    let without = rate(&rows, &RateOptions::default()).unwrap();
    assert!(
        with.overall.seat_advantage.is_empty(),
        "{:?}",
        with.overall.seat_advantage
    );
    assert_eq!(with.overall.seat_unbounded.len(), 1);
    let (label, score) = &with.overall.seat_unbounded[0];
    assert_eq!(label, "hackaback");
    assert!((score - 0.75).abs() < 1e-9, "{score}");
    for r in &without.overall.ratings {
        let e = with.overall.get(&r.bot).unwrap().elo;
        assert!((e - r.elo).abs() < 1e-6, "{}: {e} vs {}", r.bot, r.elo);
    }
    let text = crate::report::tables::standings_table(&with.overall);
    assert!(text.contains("the games leave it without bound"), "{text}");
    // One game among the weak won by the second seat could still be put
    // down to the ratings (y above x by the advantage); two, one each
    // way, cannot: a finite estimate.
    game(&mut rows, "x", "y", 0.0);
    let still = rate(&rows, &opts).unwrap();
    assert_eq!(still.overall.seat_unbounded.len(), 1);
    game(&mut rows, "y", "x", 0.0);
    let bounded = rate(&rows, &opts).unwrap();
    assert!(bounded.overall.seat_unbounded.is_empty());
    assert_eq!(bounded.overall.seat_advantage.len(), 1);
}

#[test]
fn seat_advantage_is_recovered_jointly() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let (mut hit, mut total, mut seat_hit) = (0, 0, 0);
    let runs = 100;
    for _ in 0..runs {
        let rows = simulate_league(&mut rng, &TRUE8, 10, 60.0);
        let opts = RateOptions {
            seat_advantage: true,
            ..Default::default()
        };
        let rep = rate(&rows, &opts).unwrap();
        coverage_of(&rep.overall, &TRUE8, &mut hit, &mut total);
        let (_, h, lo, hi) = rep.overall.seat_advantage[0].clone();
        assert!(h > 0.0);
        if lo <= 60.0 && 60.0 <= hi {
            seat_hit += 1;
        }
        assert!(rep.variants[0].seat_elo.is_some());
    }
    let cov = hit as f64 / total as f64;
    eprintln!("coverage {cov} ({hit}/{total}), seat {seat_hit}/{runs}");
    assert!((0.92..=0.975).contains(&cov), "rating coverage {cov}");
    assert!(
        (88..=99).contains(&seat_hit),
        "seat coverage {seat_hit}/{runs}"
    );
}

#[test]
fn three_player_leagues_are_recovered_conservatively() {
    // Plackett-Luce with Gumbel noise: pairwise P(i above j) is exactly
    // logistic on the Elo scale, so the pairwise model holds.
    let truth = [-200.0, -50.0, 0.0, 100.0, 150.0];
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (mut hit, mut total) = (0, 0);
    let k = std::f64::consts::LN_10 / 400.0;
    for _ in 0..60 {
        let mut rows = Vec::new();
        for g in 0..400 {
            let mut pick: Vec<usize> = (0..truth.len()).collect();
            for i in 0..3 {
                let j = rng.gen_range(i..pick.len());
                pick.swap(i, j);
            }
            let perf: Vec<f64> = pick[..3]
                .iter()
                .map(|&b| {
                    let u: f64 = rng.gen_range(1e-12..1.0);
                    k * truth[b] - (-u.ln()).ln()
                })
                .collect();
            let scores: Vec<f64> = (0..3)
                .map(|s| {
                    (0..3)
                        .filter(|&t| t != s)
                        .map(|t| if perf[s] > perf[t] { 1.0 } else { 0.0 })
                        .sum::<f64>()
                        / 2.0
                })
                .collect();
            let names: Vec<String> = pick[..3].iter().map(|b| format!("b{b}")).collect();
            rows.push(row3(
                &format!("g{g}"),
                [&names[0], &names[1], &names[2]],
                [scores[0], scores[1], scores[2]],
            ));
        }
        let rep = rate(&rows, &RateOptions::default()).unwrap();
        coverage_of(&rep.overall, &truth, &mut hit, &mut total);
    }
    let cov = hit as f64 / total as f64;
    eprintln!("coverage {cov} ({hit}/{total})");
    // Weight 1/3 per pair under-counts the information: over-coverage.
    assert!(cov >= 0.93, "coverage {cov}");
}

mod never_nan {
    use super::*;
    use proptest::prelude::*;

    fn game() -> impl Strategy<Value = (usize, usize, usize, u8, bool)> {
        // (bot a, bot b, bot c, outcome, three players)
        (
            0usize..5,
            0usize..5,
            0usize..5,
            0u8..3,
            prop::bool::weighted(0.2),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Whatever the results (few games, perfect scores, self-play,
        /// disconnected groups), every number is finite.
        #[test]
        fn every_rating_is_finite(
            games in prop::collection::vec(game(), 1..25),
            seat in any::<bool>(),
            anchored in any::<bool>(),
        ) {
            let names = ["a", "b", "c", "d", "e"];
            let rows: Vec<GameRow> = games
                .iter()
                .enumerate()
                .map(|(k, &(a, b, c, o, three))| {
                    let id = format!("g{k}");
                    if three {
                        let sc = match o {
                            0 => [1.0, 0.5, 0.0],
                            1 => [0.5, 0.5, 0.5],
                            _ => [0.25, 0.25, 1.0],
                        };
                        row3(&id, [names[a], names[b], names[c]], sc)
                    } else {
                        row2(&id, if k % 2 == 0 { "filo" } else { "kisolo" }, &id,
                             names[a], names[b], o as f64 / 2.0)
                    }
                })
                .collect();
            let opts = RateOptions {
                seat_advantage: seat,
                anchor: anchored.then(|| Anchor { bot: rows[0].seat0.clone(), elo: 1000.0 }),
                extra_bots: vec!["zed".into()],
                ..Default::default()
            };
            let rep = rate(&rows, &opts).unwrap();
            for st in std::iter::once(&rep.overall).chain(&rep.per_variant) {
                prop_assert!(st.dispersion.is_finite());
                for r in &st.ratings {
                    prop_assert!(r.elo.is_finite() && r.elo_low.is_finite() && r.elo_high.is_finite(),
                        "{:?}", r);
                    prop_assert!(r.elo_low <= r.elo && r.elo <= r.elo_high);
                    prop_assert_eq!(r.rated, r.flag != Flag::Unrated);
                    for q in &st.ratings {
                        if let Some(l) = st.los(&r.bot, &q.bot) {
                            prop_assert!((0.0..=1.0).contains(&l));
                        }
                    }
                }
                for s in &st.seat_advantage {
                    prop_assert!(s.1.is_finite() && s.2.is_finite() && s.3.is_finite());
                }
            }
            prop_assert_eq!(rep.overall.get("zed").map(|r| r.flag), Some(Flag::Unrated));
        }
    }
}

/// Rows counted one at a time in any order give `rate`'s report, field for
/// field (the JSON of `arena rate --format json`), on real league files of
/// 2- and 3-player games; a third game in a seat-swap group (two leagues
/// sharing group ids) takes its pair out of the pentanomial counts.
#[test]
fn the_tally_in_any_order_is_the_report_of_rate() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ratings");
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for name in ["league.csv", "tricala3_league.csv"] {
        let rows = crate::results::csvio::read_rows(&dir.join(name)).unwrap();
        for seat_advantage in [false, true] {
            let opts = RateOptions {
                seat_advantage,
                ..Default::default()
            };
            let want = serde_json::to_string(&rate(&rows, &opts).unwrap()).unwrap();
            let mut shuffled = rows.clone();
            for _ in 0..3 {
                for i in (1..shuffled.len()).rev() {
                    shuffled.swap(i, rng.gen_range(0..=i));
                }
                let mut tally = Tally::new(&opts);
                for r in &shuffled {
                    tally.add(r);
                }
                let got = serde_json::to_string(&tally.report().unwrap()).unwrap();
                assert!(got == want, "{name}: shuffled rows give another report");
            }
        }
    }
    // Three games in one group: no pair; two: a pair, wherever they are.
    let mut rows = vec![
        row2("1", "filo", "g", "A", "B", 1.0),
        row2("2", "filo", "h", "A", "B", 0.5),
        row2("3", "filo", "g", "B", "A", 0.5),
        row2("4", "filo", "h", "B", "A", 0.0),
        row2("5", "filo", "g", "B", "A", 0.0),
    ];
    let pairs = |rows: &[GameRow]| {
        let rep = rate(rows, &RateOptions::default()).unwrap();
        rep.pairs[0].penta
    };
    assert_eq!(pairs(&rows), [0, 0, 0, 1, 0]);
    rows.remove(4);
    rows.reverse();
    assert_eq!(pairs(&rows), [0, 0, 0, 2, 0]);
}

// ---- robust (sandwich) intervals: docs/ratings.md, "Extreme tables" ----

/// Two bots, A scoring 6 wins, 10 draws and 4 losses against B (fewer than
/// 30 degrees of freedom: φ = 1). With `p = 0.55` A's expected score, the
/// rating difference `δ` has curvature `H = K² n p(1-p)` and the games'
/// scores `K (s - p)`, so the sandwich with HC1's `n / (n - 1)` is
/// `var(δ) = Σ (s - p)² / (K² n (n - 1) p² (1-p)²)`, with
/// `Σ (s - p)² = 6·0.45² + 10·0.05² + 4·0.55² = 2.45`.
#[test]
fn the_sandwich_of_two_bots_in_closed_form() {
    let k = std::f64::consts::LN_10 / 400.0;
    let cell = Cell {
        first: 0,
        second: 1,
        group: 0,
        w: 20.0,
        x: 6.0 + 5.0,
        x2: 6.0 + 2.5,
    };
    let out = fit::fit(2, 1, &[cell], &[], &[false], IntervalMethod::Robust);
    let (n, p, squares) = (20.0, 0.55, 2.45);
    let want = squares / (k * k * n * (n - 1.0) * p * p * (1.0 - p) * (1.0 - p));
    let r = out.robust_cov.expect("asked for");
    let var = r.get(0, 0) + r.get(1, 1) - 2.0 * r.get(0, 1);
    assert!(close(var, want, 1e-6 * want), "{var} vs {want}");
    // The quasi-likelihood variance (φ = 1) is larger here: 1 / H.
    let quasi = out.cov.get(0, 0) + out.cov.get(1, 1) - 2.0 * out.cov.get(0, 1);
    let want_quasi = 1.0 / (k * k * n * p * (1.0 - p));
    assert!(close(quasi, want_quasi, 1e-6 * want_quasi));
    assert!(want < want_quasi);
    // Reported: each bot's centred rating is ±δ/2 with the larger variance.
    let rep = rate(&head_to_head(6, 10, 4), &RateOptions::default()).unwrap();
    assert_eq!(rep.overall.intervals, IntervalMethod::Robust);
    let a = rep.overall.get("A").unwrap();
    assert!(
        close(a.elo_se, want_quasi.sqrt() / 2.0, 1e-6),
        "{}",
        a.elo_se
    );
    // Mostly decisive games (18 wins, 2 draws, 20 losses; n ≥ 31, so φ =
    // X² / (n - 1)): for two bots the sandwich with HC1 and φ / H are the
    // same number.
    let rep = rate(&head_to_head(18, 2, 20), &RateOptions::default()).unwrap();
    let robust = rep.overall.get("A").unwrap().elo_se;
    let opts = RateOptions {
        intervals: IntervalMethod::Dispersion,
        ..RateOptions::default()
    };
    let rep = rate(&head_to_head(18, 2, 20), &opts).unwrap();
    assert_eq!(rep.overall.intervals, IntervalMethod::Dispersion);
    let quasi = rep.overall.get("A").unwrap().elo_se;
    assert!(close(robust, quasi, 1e-9 * quasi), "{robust} vs {quasi}");
}

/// Eight close bots (-3 to +3 Elo), 80 games per pairing; bots 2 and 7
/// draw 90% of their games, the others 99.5% among themselves (as far as
/// the expected score allows): the table's one φ (about 0.05) is the calm
/// bots' variance, and the bold bots' intervals are too narrow
/// (`examples/draw_coverage.rs`, line `bold 0.02 0.995/0.9`: 0.83 with φ,
/// 0.96 robust over 2000 leagues).
fn simulate_bold_league(rng: &mut ChaCha8Rng, truth: &[f64; 8]) -> Vec<GameRow> {
    let names: Vec<String> = (0..truth.len()).map(|i| format!("b{i}")).collect();
    let bold = |i: usize| i == 2 || i == 7;
    let mut rows = Vec::new();
    for i in 0..truth.len() {
        for j in (i + 1)..truth.len() {
            for k in 0..40 {
                let g = format!("{i}-{j}-{k}");
                for (s0, s1, tag) in [(i, j, "a"), (j, i, "b")] {
                    let e = 1.0 / (1.0 + 10f64.powf(-(truth[s0] - truth[s1]) / 400.0));
                    let rate = if bold(i) || bold(j) { 0.9 } else { 0.995 };
                    let dr = f64::min(rate, 2.0 * e.min(1.0 - e));
                    let u: f64 = rng.gen();
                    let s = if u < e - dr / 2.0 {
                        1.0
                    } else if u < e + dr / 2.0 {
                        0.5
                    } else {
                        0.0
                    };
                    let id = format!("{g}{tag}");
                    rows.push(row2(&id, "filo", &g, &names[s0], &names[s1], s));
                }
            }
        }
    }
    rows
}

#[test]
fn bold_bots_in_a_drawn_table_need_their_own_variance() {
    let truth = [-3.0, -2.0, -1.2, -0.4, 0.4, 1.2, 2.0, 3.0];
    let mut rng = ChaCha8Rng::seed_from_u64(34);
    // [method][bold, calm]: intervals holding the truth, intervals.
    let (mut hit, mut total) = ([[0usize; 2]; 2], [[0usize; 2]; 2]);
    let methods = [IntervalMethod::Dispersion, IntervalMethod::Robust];
    for _ in 0..200 {
        let rows = simulate_bold_league(&mut rng, &truth);
        for (m, intervals) in methods.into_iter().enumerate() {
            let opts = RateOptions {
                intervals,
                ..RateOptions::default()
            };
            let rep = rate(&rows, &opts).unwrap();
            for (i, t) in truth.iter().enumerate() {
                let r = rep.overall.get(&format!("b{i}")).unwrap();
                let kind = usize::from(!(i == 2 || i == 7));
                total[m][kind] += 1;
                hit[m][kind] += usize::from(r.elo_low <= *t && *t <= r.elo_high);
            }
        }
    }
    let cov = |m: usize, k: usize| hit[m][k] as f64 / total[m][k] as f64;
    eprintln!(
        "bold: φ {} robust {}; calm: φ {} robust {}",
        cov(0, 0),
        cov(1, 0),
        cov(0, 1),
        cov(1, 1)
    );
    assert!(cov(0, 0) < 0.9, "one φ per table: bold {}", cov(0, 0));
    assert!(cov(1, 0) >= 0.92, "robust: bold {}", cov(1, 0));
    assert!(cov(1, 1) >= 0.93, "robust: calm {}", cov(1, 1));
}

/// The table of issue 34: six bots, 20 games per pairing, every game drawn
/// but four (98.7% draws), all four played by `A` (3 wins, 1 loss). One φ
/// (about 0.013) gives `A` the variance of a bot that draws as often as
/// the table; its own games say more.
#[test]
fn the_bot_with_the_decisive_games_of_a_drawn_table_gets_a_wider_interval() {
    let bots = ["A", "B", "C", "D", "E", "F"];
    let mut rows = Vec::new();
    for i in 0..bots.len() {
        for j in (i + 1)..bots.len() {
            for k in 0..20 {
                // A beats B, C and D once each and loses once to E.
                let s = match (i, j, k) {
                    (0, 1..=3, 0) => 1.0,
                    (0, 4, 0) => 0.0,
                    _ => 0.5,
                };
                let id = format!("{i}-{j}-{k}");
                rows.push(row2(&id, "filo", &id, bots[i], bots[j], s));
            }
        }
    }
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    let phi = rep.overall.dispersion;
    assert!((0.01..0.02).contains(&phi), "dispersion {phi}");
    let a = rep.overall.get("A").unwrap();
    let half = |se: f64| z_value() * se;
    eprintln!(
        "φ {phi:.4}: A ±{:.1} (±{:.1} with φ alone)",
        half(a.elo_se),
        half(a.elo_se_dispersion)
    );
    assert!(a.elo_se > 1.4 * a.elo_se_dispersion, "{a:?}");
    // F, with only draws, keeps the φ interval.
    let f = rep.overall.get("F").unwrap();
    assert!(close(f.elo_se, f.elo_se_dispersion, 1e-12));
}

#[test]
fn why_a_pentanomial_elo_has_no_interval() {
    use super::penta_elo_gap;
    assert_eq!(penta_elo_gap(&[0; 5]), Some("no complete seat-swap pair"));
    assert_eq!(
        penta_elo_gap(&[0, 0, 0, 0, 3]),
        Some("its seat-swap pairs score 0% or 100%")
    );
    // One pair, or every pair alike: no interval, not a zero-width one.
    assert_eq!(
        penta_elo_gap(&[0, 0, 1, 0, 0]),
        Some("one seat-swap pair is too few")
    );
    assert_eq!(super::penta_elo(&[0, 0, 3, 0, 0]), (Some(0.0), None));
    assert_eq!(
        penta_elo_gap(&[0, 0, 3, 0, 0]),
        Some("every seat-swap pair scored the same")
    );
    assert_eq!(penta_elo_gap(&[0, 1, 2, 0, 2]), None);
}

/// A bot that never won a winner-only 3-player game lost every rated
/// result: `all_losses`, though its W-D-L counts the two losers of each
/// game as a draw (it was `prior`, "not perfect itself").
#[test]
fn a_three_player_bot_that_never_won_lost_every_rated_result() {
    let mut rows = Vec::new();
    for k in 0..30 {
        let (p, q) = match k % 2 {
            0 => ([1.0, 0.25, 0.25], [0.25, 1.0, 0.25]),
            _ => ([0.25, 1.0, 0.25], [1.0, 0.25, 0.25]),
        };
        rows.push(row3(&format!("a{k}"), ["P", "Q", "R"], p));
        rows.push(row3(&format!("b{k}"), ["Q", "P", "R"], q));
    }
    let rep = rate(&rows, &RateOptions::default()).unwrap();
    let r = rep.overall.get("R").unwrap();
    assert_eq!(r.flag, Flag::AllLosses, "{r:?}");
    assert!(r.count.draws > 0, "{r:?}");
    assert_eq!(rep.overall.get("P").unwrap().flag, Flag::None);
}

/// Of two components of one size inside the group that met, the one with
/// the first bot by name is the core whose average is zero, as for
/// groups that never met (docs/ratings.md): not the one the search of
/// components happened to number first.
#[test]
fn of_two_cores_of_one_size_the_first_bot_by_name_sets_the_zero() {
    // Two pairs that drew each other, one pair beating the other: {a, b}
    // the winners, then the losers.
    for (win, lose) in [(["a", "b"], ["y", "z"]), (["y", "z"], ["a", "b"])] {
        let mut rows = Vec::new();
        for (k, (x, y, s)) in [
            (win[0], win[1], 0.5),
            (lose[0], lose[1], 0.5),
            (win[0], lose[0], 1.0),
            (win[1], lose[1], 1.0),
        ]
        .iter()
        .enumerate()
        {
            rows.push(row2(&format!("g{k}"), "filo", &format!("g{k}"), x, y, *s));
        }
        let rep = rate(&rows, &RateOptions::default()).unwrap();
        let st = &rep.overall;
        let (a, b) = (st.get("a").unwrap(), st.get("b").unwrap());
        assert!(close(a.elo + b.elo, 0.0, 1e-6), "{a:?} {b:?}");
        assert_eq!((a.flag, b.flag), (Flag::None, Flag::None));
        assert_eq!(st.get("y").unwrap().flag, Flag::Prior);
    }
}
