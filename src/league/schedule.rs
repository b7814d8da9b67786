//! The league schedule: a pure function from a tournament to the list of
//! games, with stable ids, seat-swap groups, seeds, openings and shards.
//!
//! Knows nothing of processes or files. Same tournament and seed: the same
//! games with the same ids, in the same order.

use super::config::{Tournament, VariantSpec};
use crate::engine::{Game, Settings};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One game to play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledGame {
    /// Position in the full schedule.
    pub index: usize,
    pub game_id: String,
    /// The seat-swap group: the games of one pairing, variant and round,
    /// which share a seed and an opening and differ only by seat order.
    pub group: String,
    pub group_index: usize,
    pub round: u32,
    /// Index into `Tournament::variants`.
    pub variant: usize,
    /// Bot indices (into `Tournament::bots`) by seat.
    pub seats: Vec<usize>,
    /// The group's seed: it draws the opening.
    pub seed: u64,
}

/// Every subset of `k` of `0..n` in lexicographic order.
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(k);
    fn go(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            go(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    go(0, n, k, &mut cur, &mut out);
    out
}

/// Every ordering of `items`, in lexicographic order of positions: for two
/// items the original order first, then the swap.
fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first);
            out.push(p);
        }
    }
    out
}

/// The seed a game's bots are sent (`game_start.seed`): the tournament seed
/// mixed with the game id, so the same league file and seed send the same
/// seeds, whatever the order, the workers or a resume.
pub fn bot_seed(seed: u64, game_id: &str) -> u64 {
    group_seed(seed, &format!("bots:{game_id}"))
}

/// A stable 64-bit mix of the tournament seed and a group id (FNV-1a, then
/// splitmix64), independent of platform and Rust version.
pub fn group_seed(seed: u64, group: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in group.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The full schedule: rounds outermost (so adding rounds keeps the earlier
/// ids), then the groups of a round interleaved so that every block of
/// `pairings` groups gives each pairing one game group, variants rotating;
/// the games of a group (its seat orders) are adjacent.
pub fn schedule(t: &Tournament) -> Vec<ScheduledGame> {
    let mut games = Vec::new();
    let mut group_index = 0;
    let gauntlet = t
        .gauntlet
        .as_ref()
        .and_then(|g| t.bots.iter().position(|b| &b.name == g));
    let per_variant: Vec<Vec<Vec<usize>>> = t
        .variants
        .iter()
        .map(|v| {
            combinations(t.bots.len(), v.players)
                .into_iter()
                .filter(|c| gauntlet.is_none_or(|g| c.contains(&g)))
                .collect()
        })
        .collect();
    let most = per_variant.iter().map(Vec::len).max().unwrap_or(0);
    let nv = t.variants.len();
    for round in 1..=t.rounds {
        for j in 0..most * nv {
            let c = j % most.max(1);
            let v = (j / most.max(1) + c) % nv;
            let Some(combo) = per_variant[v].get(c) else {
                continue;
            };
            let key = t.variants[v].label();
            let group = format!("r{round:03}-{key}-p{c:03}");
            let seed = group_seed(t.seed, &group);
            for (o, seats) in permutations(combo).into_iter().enumerate() {
                games.push(ScheduledGame {
                    index: games.len(),
                    game_id: format!("{group}-o{o}"),
                    group: group.clone(),
                    group_index,
                    round,
                    variant: v,
                    seats,
                    seed,
                });
            }
            group_index += 1;
        }
    }
    games
}

/// A shard `K/N` (1-based K).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}`: expected K/N, for example 2/4"))?;
        let k: usize = k
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: K is not a number"))?;
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: N is not a number"))?;
        if n == 0 || k == 0 || k > n {
            return Err(format!("`{s}`: need 1 <= K <= N"));
        }
        Ok(Shard { index: k, count: n })
    }
}

impl Shard {
    /// Whole seat-swap groups go to one shard, dealt round-robin, so that
    /// every shard is itself balanced and pair statistics stay whole.
    pub fn contains(&self, g: &ScheduledGame) -> bool {
        g.group_index % self.count == self.index - 1
    }
}

/// The opening of a group: `n` uniformly random decisions drawn from the
/// group's seed, never one that ends the game (the opening stops early if
/// every option would). The same for every game of the group, since it does
/// not depend on who sits where.
pub fn opening(spec: &VariantSpec, settings: &Settings, seed: u64, n: u32) -> Vec<String> {
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let Ok(mut game) = Game::new(spec.variant, settings) else {
        return out;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    while out.len() < n as usize && game.to_decide().is_some() {
        let mut legal = game.legal();
        let mut chosen = None;
        while !legal.is_empty() {
            let opt = legal.swap_remove(rng.gen_range(0..legal.len()));
            let mut trial = game.clone();
            if trial.play(&opt).is_ok() && trial.outcome().is_none() {
                chosen = Some((opt, trial));
                break;
            }
        }
        match chosen {
            Some((opt, next)) => {
                out.push(opt);
                game = next;
            }
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::league::config::{default_variants, BotSpec, TimeSettings};
    use std::collections::{BTreeMap, BTreeSet};

    fn tournament(bots: usize, variants: Vec<VariantSpec>, rounds: u32) -> Tournament {
        Tournament {
            name: "t".into(),
            seed: 7,
            bots: (0..bots)
                .map(|i| BotSpec {
                    name: format!("b{i}"),
                    command: vec!["x".into()],
                    cwd: None,
                    env: vec![],
                    build: None,
                    limits: Default::default(),
                })
                .collect(),
            variants,
            rounds,
            time: TimeSettings::default(),
            max_plies: 100,
            concurrency: 1,
            output: "out".into(),
            openings: 0,
            gauntlet: None,
            sandbox: Default::default(),
            limits: Default::default(),
        }
    }

    fn tricala3() -> VariantSpec {
        crate::league::config::parse_variant("tricala3").unwrap()
    }

    #[test]
    fn every_pairing_plays_every_seat_order_equally_often() {
        let mut vs = default_variants();
        vs.push(tricala3());
        let t = tournament(4, vs, 2);
        let s = schedule(&t);
        // 2 players: C(4,2)=6 pairings x 2 orders x 5 variants; 3 players:
        // C(4,3)=4 triples x 6 orders; times 2 rounds.
        assert_eq!(s.len(), 2 * (6 * 2 * 5 + 4 * 6));
        let ids: BTreeSet<_> = s.iter().map(|g| g.game_id.clone()).collect();
        assert_eq!(ids.len(), s.len(), "game ids are unique");
        let mut count: BTreeMap<(usize, Vec<usize>), usize> = BTreeMap::new();
        for g in &s {
            *count.entry((g.variant, g.seats.clone())).or_default() += 1;
        }
        assert!(
            count.values().all(|&c| c == 2),
            "each seat order once per round"
        );
        assert_eq!(count.len(), 6 * 2 * 5 + 4 * 6);
        // Groups share seeds; different groups differ.
        for w in s.windows(2) {
            assert_eq!(w[0].group == w[1].group, w[0].seed == w[1].seed);
        }
    }

    #[test]
    fn same_tournament_same_schedule_and_balanced_prefixes() {
        let t = tournament(5, default_variants(), 1);
        let a = schedule(&t);
        assert_eq!(a, schedule(&t));
        // After every block of 10 groups (the 10 pairings), each pairing
        // has played exactly one group.
        let groups: Vec<&ScheduledGame> = a.iter().filter(|g| g.game_id.ends_with("-o0")).collect();
        for block in groups.chunks(10) {
            let pairs: BTreeSet<Vec<usize>> = block
                .iter()
                .map(|g| {
                    let mut s = g.seats.clone();
                    s.sort();
                    s
                })
                .collect();
            assert_eq!(pairs.len(), block.len());
        }
    }

    #[test]
    fn shards_partition_the_schedule() {
        let mut vs = default_variants();
        vs.push(tricala3());
        let t = tournament(4, vs, 3);
        let all = schedule(&t);
        for n in 1..=5 {
            let mut seen = BTreeSet::new();
            for k in 1..=n {
                let shard = Shard { index: k, count: n };
                for g in all.iter().filter(|g| shard.contains(g)) {
                    assert!(
                        seen.insert(g.game_id.clone()),
                        "{} in two shards",
                        g.game_id
                    );
                }
            }
            assert_eq!(seen.len(), all.len());
        }
        assert!("0/3".parse::<Shard>().is_err());
        assert!("4/3".parse::<Shard>().is_err());
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
    }

    #[test]
    fn gauntlet_keeps_only_pairings_with_the_bot() {
        let mut t = tournament(4, default_variants(), 1);
        t.gauntlet = Some("b2".into());
        let s = schedule(&t);
        assert_eq!(s.len(), 3 * 2 * 5);
        assert!(s.iter().all(|g| g.seats.contains(&2)));
    }

    #[test]
    fn group_seed_is_stable() {
        // Fixed values: a change here changes every published schedule.
        assert_eq!(
            group_seed(1, "r001-filo-p000"),
            group_seed(1, "r001-filo-p000")
        );
        assert_ne!(
            group_seed(1, "r001-filo-p000"),
            group_seed(2, "r001-filo-p000")
        );
        assert_ne!(
            group_seed(1, "r001-filo-p000"),
            group_seed(1, "r001-filo-p001")
        );
    }
}
