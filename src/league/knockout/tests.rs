use super::*;

#[test]
fn rounds_are_log2_rounded_up() {
    let r: Vec<u32> = [2, 3, 4, 5, 8, 9, 16].iter().map(|&n| rounds(n)).collect();
    assert_eq!(r, vec![1, 2, 2, 3, 3, 4, 4]);
}

#[test]
fn eight_seeds_are_placed_as_a_tennis_draw() {
    assert_eq!(seed_places(8), vec![0, 7, 3, 4, 1, 6, 2, 5]);
}

#[test]
fn byes_go_to_the_top_seeds_and_no_bye_meets_a_bye() {
    for n in 2..=33 {
        let order: Vec<usize> = (0..n).rev().collect();
        let p = places(&order, &[]);
        let (pairs, mut byes) = matches(&order, &p[0]);
        byes.sort_by_key(|b| order.iter().position(|x| x == b));
        let size = n.next_power_of_two();
        assert_eq!(byes.len(), size - n, "{n} bots");
        assert_eq!(pairs.len() * 2 + byes.len(), n, "{n} bots");
        // The byes are the first seeds.
        assert_eq!(byes, order[..size - n].to_vec(), "{n} bots");
    }
}

#[test]
fn six_bots_play_two_matches_then_four_then_a_final() {
    // Bots by seed: 5 is seed 1, 4 seed 2, ...
    let order = vec![5, 4, 3, 2, 1, 0];
    let p = places(&order, &[]);
    let (pairs, byes) = matches(&order, &p[0]);
    // Seeds 4-5 and 3-6 play; seeds 1 and 2 have byes.
    assert_eq!(pairs, vec![(2, 1), (3, 0)]);
    assert_eq!(byes, vec![5, 4]);
    // Round 1: the lower seed 1 (bot 1) beats seed 4, seed 3 (bot 3) wins.
    let mut r1 = vec![0.0; 6];
    r1[1] = 1.0;
    r1[3] = 0.75;
    r1[0] = 0.25;
    let p = places(&order, &[r1.clone()]);
    let (pairs, byes) = matches(&order, &p[1]);
    assert_eq!(pairs, vec![(5, 1), (4, 3)]);
    assert!(byes.is_empty());
    // Round 2: bot 1 beats seed 1; bot 4 beats bot 3.
    let mut r2 = vec![0.0; 6];
    r2[1] = 0.6;
    r2[5] = 0.4;
    r2[4] = 1.0;
    let p = places(&order, &[r1.clone(), r2.clone()]);
    assert_eq!(matches(&order, &p[2]), (vec![(4, 1)], vec![]));
    let mut r3 = vec![0.0; 6];
    r3[4] = 0.5;
    r3[1] = 0.5;
    let p = places(&order, &[r1, r2, r3]);
    // A drawn final goes to the better seed (bot 4, seed 2).
    assert_eq!(p.last().unwrap(), &vec![Some(4)]);
    assert_eq!(p.len(), 4);
}

#[test]
fn a_drawn_match_goes_to_the_better_seed_either_way_round() {
    let order = vec![0, 1];
    let draw = vec![vec![0.5, 0.5]];
    assert_eq!(places(&order, &draw)[1], vec![Some(0)]);
    let order = vec![1, 0];
    assert_eq!(places(&order, &draw)[1], vec![Some(1)]);
    // More points win whatever the seed.
    assert_eq!(places(&order, &[vec![0.51, 0.49]])[1], vec![Some(0)]);
}
