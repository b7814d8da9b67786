//! The ladder's pairing rule: which game to start next, from the last
//! rating fit (possibly stale), each bot's game counts and the games in
//! flight. Pure: no I/O, no database, no processes; the same inputs and the
//! same random generator state give the same pick.
//!
//! The rule (docs/ladder.md, "Pairing"):
//! 1. with probability `random_share`, a uniformly random pairing (keeps the
//!    comparison graph connected and the fit honest);
//! 2. otherwise, if a bot is in placement (too few games, no rating yet or
//!    an interval wider than `placement_width`), the one with the fewest
//!    games plays opponents spread over the whole table (a van der Corput
//!    sequence over the rating order);
//! 3. otherwise, the pair of rating neighbours whose game tells most about
//!    their order: the variance of their rating difference a game removes,
//!    weighted by how uncertain their order is, less for pairs in flight.
//!
//! In every case the variant is the one the chosen bots played least and the
//! seats go to whoever is furthest below their share of them (seat balance).
//!
//! Before any of the three, the **time share** ([`Entrant::clock`]): the
//! ladder's time is shared between versions by their measured time per
//! game, so that each plays at the same pace whatever its speed. A version's
//! clock is the time its own moves used since it joined the share, divided
//! by its time per game ([`clock`]); with its games in flight (one expected
//! game each) it is its pace. Only versions within `lead` of the lowest pace
//! take part in a pick (with the lowest ones added when too few are), so a
//! fast version waits for a slow one instead of racing ahead of it, and a
//! slow one gets as many slots as its games need.

use rand::seq::SliceRandom;
use rand::Rng;
use std::collections::HashMap;

/// `ln(10) / 400`: the Elo scale's logistic slope (as `ratings`' fit).
const K: f64 = std::f64::consts::LN_10 / 400.0;

/// The z value of a 95% interval: `half_width / Z` is a standard error.
const Z: f64 = 1.959_963_984_540_054;

/// The standard error assumed for a bot without one (a fresh bot: about
/// the spread of a whole table).
const UNKNOWN_SE: f64 = 350.0;

/// The rule's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PairingConfig {
    /// Share of picks that are uniformly random pairings (default 0.1).
    pub random_share: f64,
    /// A bot is placed once its 95% interval's half-width (Elo) is at most
    /// this (default 50).
    pub placement_width: f64,
    /// ... and it has played at least this many games (default 20).
    pub placement_games: u32,
    /// Rating neighbours considered on each side of a bot by the
    /// information rule (default 3).
    pub window: usize,
    /// How far (in games) a version's pace may run ahead of the lowest
    /// before it waits for the others (default 4).
    pub lead: f64,
}

impl Default for PairingConfig {
    fn default() -> Self {
        PairingConfig {
            random_share: 0.1,
            placement_width: 50.0,
            placement_games: 20,
            window: 3,
            lead: 4.0,
        }
    }
}

/// One bot version on the ladder, as the last fit and the game counts see
/// it. Ids must be unique within one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    /// The caller's id of the bot version.
    pub id: u64,
    /// Elo from the last fit; `None`: not rated yet.
    pub elo: Option<f64>,
    /// Half-width of the 95% interval from the last fit; `None`: not rated.
    pub half_width: Option<f64>,
    /// Finished games, all variants (including those since the last fit).
    pub games: u64,
    /// Finished games at the time of the last fit: `games - fit_games` are
    /// the games the fit has not seen yet (their information is added to
    /// the fit's interval, so a stale fit does not pick one pair for ever).
    pub fit_games: u64,
    /// Finished games per seat index (missing entries count as 0).
    pub seat_counts: Vec<u64>,
    /// Finished games per ladder variant index (missing entries count as 0).
    pub variant_games: Vec<u64>,
    /// Its clock in the time share: the time its own moves used since it
    /// joined the share, divided by its measured time per game, plus where
    /// it joined ([`clock`]). In games: a version that played n games of
    /// its usual length since it joined has `base + n`.
    pub clock: f64,
}

/// A version's clock in the time share: `base` (the lowest clock when it
/// joined, so that a newcomer is not owed the ladder's past) plus the
/// seconds its own moves used since (`used_secs`) over its measured
/// seconds per game (`secs_per_game`; at least a millisecond). A game its
/// bot thought longer over than usual costs it more of its share.
pub fn clock(base: f64, used_secs: f64, secs_per_game: f64) -> f64 {
    base + used_secs / secs_per_game.max(1e-3)
}

impl Entrant {
    /// Whether the bot is still in placement: fewer than `placement_games`
    /// games, no rating, or an interval wider than `placement_width`.
    pub fn in_placement(&self, config: &PairingConfig) -> bool {
        self.games < u64::from(config.placement_games)
            || self.elo.is_none()
            || self.half_width.is_none_or(|h| h > config.placement_width)
    }

    /// Standard error now: the fit's, narrowed by the Fisher information
    /// of an even game for each game since the fit.
    fn se(&self) -> f64 {
        let se = self.half_width.map_or(UNKNOWN_SE, |h| (h / Z).max(1e-3));
        let since = self.games.saturating_sub(self.fit_games) as f64;
        (1.0 / (1.0 / (se * se) + since * K * K * 0.25)).sqrt()
    }
}

/// One game the ladder plays (by its variant's player count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LadderVariant {
    /// 2 or 3.
    pub players: usize,
}

/// The next game: a ladder variant index and the entrants' ids by seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pick {
    pub variant: usize,
    pub seats: Vec<u64>,
}

/// The games in flight, as the rules count them: games by bot, by pair of
/// bots, by bot and seat, and by variant and bot. Counted once and kept
/// as picks are added, so that a pick costs the same with 2 games in
/// flight or 4,000 (a worker's batch of instant games, issue 49).
#[derive(Clone, Debug, Default)]
pub struct InFlight {
    bot: HashMap<u64, u64>,
    pair: HashMap<(u64, u64), u64>,
    seat: HashMap<(u64, usize), u64>,
    variant: HashMap<(usize, u64), u64>,
}

impl InFlight {
    /// The counts of `picks`.
    pub fn of(picks: &[Pick]) -> InFlight {
        let mut f = InFlight::default();
        for p in picks {
            f.add(p);
        }
        f
    }

    /// Counts one more game in flight (a bot seated twice counts once).
    pub fn add(&mut self, p: &Pick) {
        for (seat, &id) in p.seats.iter().enumerate() {
            *self.seat.entry((id, seat)).or_default() += 1;
        }
        let mut bots = p.seats.clone();
        bots.sort_unstable();
        bots.dedup();
        for (x, &a) in bots.iter().enumerate() {
            *self.bot.entry(a).or_default() += 1;
            *self.variant.entry((p.variant, a)).or_default() += 1;
            for &b in &bots[x + 1..] {
                *self.pair.entry((a, b)).or_default() += 1;
            }
        }
    }

    /// Games in flight with bot `id`.
    fn of_bot(&self, id: u64) -> u64 {
        self.bot.get(&id).copied().unwrap_or(0)
    }

    /// Games in flight with both `a` and `b`.
    fn of_pair(&self, a: u64, b: u64) -> u64 {
        self.pair.get(&(a.min(b), a.max(b))).copied().unwrap_or(0)
    }

    /// Games in flight with bot `id` at seat `seat`.
    fn at_seat(&self, id: u64, seat: usize) -> u64 {
        self.seat.get(&(id, seat)).copied().unwrap_or(0)
    }

    /// Games in flight of variant `v` with bot `id`.
    fn in_variant(&self, v: usize, id: u64) -> u64 {
        self.variant.get(&(v, id)).copied().unwrap_or(0)
    }
}

/// The next game to start, or `None` when no variant has enough entrants
/// (fewer entrants than players) or there are no variants.
pub fn pick(
    entrants: &[Entrant],
    variants: &[LadderVariant],
    config: &PairingConfig,
    in_flight: &InFlight,
    rng: &mut impl Rng,
) -> Option<Pick> {
    let most = variants.iter().map(|v| v.players).max().unwrap_or(0);
    let sharing = within_share(entrants, in_flight, config.lead, most);
    let entrants: Vec<Entrant> = sharing.iter().map(|&i| entrants[i].clone()).collect();
    let feasible: Vec<usize> = (0..variants.len())
        .filter(|&v| variants[v].players >= 2 && variants[v].players <= entrants.len())
        .collect();
    if feasible.is_empty() {
        return None;
    }
    let ctx = Ctx {
        entrants: &entrants,
        variants,
        in_flight,
        feasible,
    };
    if rng.gen::<f64>() < config.random_share {
        return Some(ctx.random(rng));
    }
    let placing = (0..entrants.len())
        .filter(|&i| entrants[i].in_placement(config))
        .min_by(|&a, &b| {
            ctx.pace(a)
                .total_cmp(&ctx.pace(b))
                .then(entrants[a].games.cmp(&entrants[b].games))
                .then(entrants[a].id.cmp(&entrants[b].id))
        });
    Some(match placing {
        Some(focus) => ctx.placement(focus, rng),
        None => ctx.informative(config.window.max(1), rng),
    })
}

/// The time share: the indices of the entrants whose pace (clock plus
/// games in flight) is within `lead` of the lowest, in their order; when
/// fewer than `most` are, the next lowest paces are added up to `most`
/// (so that every variant keeps enough players).
pub fn within_share(
    entrants: &[Entrant],
    in_flight: &InFlight,
    lead: f64,
    most: usize,
) -> Vec<usize> {
    let pace: Vec<f64> = entrants
        .iter()
        .map(|e| e.clock + in_flight.of_bot(e.id) as f64)
        .collect();
    let mut order: Vec<usize> = (0..entrants.len()).collect();
    order.sort_by(|&a, &b| {
        pace[a]
            .total_cmp(&pace[b])
            .then(entrants[a].id.cmp(&entrants[b].id))
    });
    let Some(&low) = order.first() else {
        return order;
    };
    let cut = pace[low] + lead.max(0.0);
    let mut keep: Vec<usize> = order
        .iter()
        .enumerate()
        .filter(|&(rank, &i)| pace[i] <= cut || rank < most)
        .map(|(_, &i)| i)
        .collect();
    keep.sort_unstable();
    keep
}

/// One call's inputs, with the in-flight counts they imply.
struct Ctx<'a> {
    entrants: &'a [Entrant],
    variants: &'a [LadderVariant],
    in_flight: &'a InFlight,
    /// Variants with enough entrants.
    feasible: Vec<usize>,
}

impl Ctx<'_> {
    /// Games in flight with entrant `i`.
    fn load(&self, i: usize) -> u64 {
        self.in_flight.of_bot(self.entrants[i].id)
    }

    /// Entrant `i`'s pace: its clock and its games in flight.
    fn pace(&self, i: usize) -> f64 {
        self.entrants[i].clock + self.load(i) as f64
    }

    /// Games in flight with both `i` and `j`.
    fn pair_load(&self, i: usize, j: usize) -> u64 {
        self.in_flight
            .of_pair(self.entrants[i].id, self.entrants[j].id)
    }

    /// A uniformly random pairing: variant, bots and seat order.
    fn random(&self, rng: &mut impl Rng) -> Pick {
        let v = *self.feasible.choose(rng).unwrap_or(&self.feasible[0]);
        let mut idx: Vec<usize> = (0..self.entrants.len()).collect();
        idx.shuffle(rng);
        idx.truncate(self.variants[v].players);
        Pick {
            variant: v,
            seats: idx.iter().map(|&i| self.entrants[i].id).collect(),
        }
    }

    /// The feasible variant the bots `bots` played least (finished plus in
    /// flight, summed), ties by index.
    fn least_played(&self, bots: &[usize]) -> usize {
        let count = |v: usize| -> u64 {
            bots.iter()
                .map(|&i| {
                    let e = &self.entrants[i];
                    e.variant_games.get(v).copied().unwrap_or(0)
                        + self.in_flight.in_variant(v, e.id)
                })
                .sum()
        };
        self.feasible
            .iter()
            .copied()
            .min_by_key(|&v| (count(v), v))
            .unwrap_or(self.feasible[0])
    }

    /// Entrant indices sorted by rating (unrated at 0, the scale's
    /// average), ties by id.
    fn by_rating(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.entrants.len()).collect();
        order.sort_by(|&a, &b| {
            let (ea, eb) = (&self.entrants[a], &self.entrants[b]);
            ea.elo
                .unwrap_or(0.0)
                .total_cmp(&eb.elo.unwrap_or(0.0))
                .then(ea.id.cmp(&eb.id))
        });
        order
    }

    /// Rule 2: the placement bot `focus` against opponents spread over the
    /// table. Its k-th game (finished plus in flight) takes the opponent at
    /// quantile `vdc(k)` of the rating order (van der Corput: 0, 1/2, 1/4,
    /// 3/4, ...), jittered within the sequence's current stratum; a 3-player
    /// game's second opponent sits half a table further.
    fn placement(&self, focus: usize, rng: &mut impl Rng) -> Pick {
        let v = self.least_played(&[focus]);
        let others: Vec<usize> = self
            .by_rating()
            .into_iter()
            .filter(|&i| i != focus)
            .collect();
        let k = self.entrants[focus].games + self.load(focus);
        let width = 1.0 / (k + 1).next_power_of_two() as f64;
        let base = van_der_corput(k) + rng.gen::<f64>() * width;
        let need = self.variants[v].players - 1;
        let mut chosen: Vec<usize> = Vec::with_capacity(need);
        for j in 0..need {
            let q = (base + j as f64 / need as f64).fract();
            let at = ((q * others.len() as f64) as usize).min(others.len() - 1);
            // The nearest not yet chosen, in rating order.
            let pos = (0..others.len())
                .flat_map(|d| [at + d, at.wrapping_sub(d)])
                .find(|&p| p < others.len() && !chosen.contains(&others[p]));
            if let Some(p) = pos {
                chosen.push(others[p]);
            }
        }
        chosen.push(focus);
        self.seated(v, chosen, rng)
    }

    /// Rule 3: the neighbour pair (within `window` places in the rating
    /// order) of the highest `score`; a 3-player variant adds the third bot
    /// of the highest summed score with both.
    fn informative(&self, window: usize, rng: &mut impl Rng) -> Pick {
        let order = self.by_rating();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for (x, &a) in order.iter().enumerate() {
            for &b in order.iter().skip(x + 1).take(window) {
                pairs.push((a, b));
            }
        }
        // Random order first, so that equal scores are broken by the rng.
        pairs.shuffle(rng);
        let best = pairs
            .iter()
            .copied()
            .max_by(|&(a, b), &(c, d)| self.score(a, b).total_cmp(&self.score(c, d)))
            .unwrap_or((order[0], order[order.len().min(2) - 1]));
        let (a, b) = best;
        let v = self.least_played(&[a, b]);
        let mut chosen = vec![a, b];
        while chosen.len() < self.variants[v].players {
            let mut rest: Vec<usize> = (0..self.entrants.len())
                .filter(|i| !chosen.contains(i))
                .collect();
            rest.shuffle(rng);
            let third = rest.into_iter().max_by(|&x, &y| {
                let sx: f64 = chosen.iter().map(|&c| self.score(c, x)).sum();
                let sy: f64 = chosen.iter().map(|&c| self.score(c, y)).sum();
                sx.total_cmp(&sy)
            });
            match third {
                Some(t) => chosen.push(t),
                None => break,
            }
        }
        self.seated(v, chosen, rng)
    }

    /// How much a game between `a` and `b` tells about their order: the
    /// variance of their rating difference one game removes (Fisher
    /// information `K² p (1 - p)` of the result against the prior variance
    /// `s²`), times `exp(-d² / 2s²)` (how uncertain their order is: `d` the
    /// rating gap, `s` its standard error), divided by `1 + games of the
    /// pair in flight`.
    fn score(&self, a: usize, b: usize) -> f64 {
        let (ea, eb) = (&self.entrants[a], &self.entrants[b]);
        let d = ea.elo.unwrap_or(0.0) - eb.elo.unwrap_or(0.0);
        let s2 = ea.se().powi(2) + eb.se().powi(2);
        let p = 1.0 / (1.0 + (-K * d).exp());
        let info = K * K * p * (1.0 - p);
        let removed = s2 - 1.0 / (1.0 / s2 + info);
        let uncertain = (-d * d / (2.0 * s2)).exp();
        removed * uncertain / (1.0 + self.pair_load(a, b) as f64)
    }

    /// Seats `bots` in variant `v`: seat by seat, the bot furthest below its
    /// fair share of that seat takes it (its games there, finished plus in
    /// flight, times the seats of `v`, less its games in all of them: in a
    /// 2-player game the one with fewer seat-0 than seat-1 games sits first),
    /// ties by the rng.
    fn seated(&self, v: usize, mut bots: Vec<usize>, rng: &mut impl Rng) -> Pick {
        bots.shuffle(rng);
        let n = self.variants[v].players.min(bots.len());
        let sat = |i: usize, seat: usize| -> i64 {
            let e = &self.entrants[i];
            let flying = self.in_flight.at_seat(e.id, seat);
            (e.seat_counts.get(seat).copied().unwrap_or(0) + flying) as i64
        };
        let below = |i: usize, seat: usize| -> i64 {
            sat(i, seat) * n as i64 - (0..n).map(|t| sat(i, t)).sum::<i64>()
        };
        let mut seats = Vec::with_capacity(n);
        for seat in 0..n {
            // `min_by_key` keeps the first of equals: the shuffled order.
            let Some(pos) = (0..bots.len()).min_by_key(|&x| below(bots[x], seat)) else {
                break;
            };
            seats.push(self.entrants[bots.remove(pos)].id);
        }
        Pick { variant: v, seats }
    }
}

/// The van der Corput sequence in base 2: `k`'s bits mirrored behind the
/// binary point (0, 1/2, 1/4, 3/4, 1/8, ...), spread evenly over [0, 1)
/// at every prefix.
fn van_der_corput(k: u64) -> f64 {
    k.reverse_bits() as f64 / 2f64.powi(64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// A placed bot (interval ±40, 100 games) at `elo`.
    fn placed(id: u64, elo: f64) -> Entrant {
        Entrant {
            id,
            elo: Some(elo),
            half_width: Some(40.0),
            games: 100,
            fit_games: 100,
            seat_counts: vec![50, 50],
            variant_games: vec![100],
            clock: 0.0,
        }
    }

    /// A bot that has not played yet.
    fn fresh(id: u64) -> Entrant {
        Entrant {
            id,
            elo: None,
            half_width: None,
            games: 0,
            fit_games: 0,
            seat_counts: vec![],
            variant_games: vec![],
            clock: 0.0,
        }
    }

    fn two() -> Vec<LadderVariant> {
        vec![LadderVariant { players: 2 }]
    }

    fn rule_only() -> PairingConfig {
        PairingConfig {
            random_share: 0.0,
            ..PairingConfig::default()
        }
    }

    /// Records a finished pick in the entrants' counts.
    fn finish(entrants: &mut [Entrant], p: &Pick) {
        for (seat, id) in p.seats.iter().enumerate() {
            let e = entrants.iter_mut().find(|e| e.id == *id).unwrap();
            e.games += 1;
            if e.seat_counts.len() <= seat {
                e.seat_counts.resize(seat + 1, 0);
            }
            e.seat_counts[seat] += 1;
            if e.variant_games.len() <= p.variant {
                e.variant_games.resize(p.variant + 1, 0);
            }
            e.variant_games[p.variant] += 1;
        }
    }

    #[test]
    fn the_placement_bot_plays_first() {
        let mut es: Vec<Entrant> = (0..10).map(|i| placed(i, i as f64 * 50.0)).collect();
        es.push(fresh(99));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..50 {
            let p = pick(&es, &two(), &rule_only(), &InFlight::default(), &mut rng).unwrap();
            assert!(p.seats.contains(&99), "{p:?}");
            finish(&mut es, &p);
        }
        // Placed after its interval narrows and it has enough games.
        let e = es.iter_mut().find(|e| e.id == 99).unwrap();
        e.elo = Some(0.0);
        e.half_width = Some(45.0);
        assert!(!es.iter().any(|e| e.in_placement(&rule_only())));
    }

    #[test]
    fn placement_takes_the_fewest_games_then_the_lowest_id() {
        let mut es: Vec<Entrant> = (0..6).map(|i| placed(i, i as f64 * 50.0)).collect();
        let mut a = fresh(8);
        a.games = 3;
        let b = fresh(9);
        let c = fresh(7);
        es.extend([a, b, c]);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let p = pick(&es, &two(), &rule_only(), &InFlight::default(), &mut rng).unwrap();
        assert!(p.seats.contains(&7), "{p:?}");
        // 7 in flight: 9 has fewer games counting those.
        let p = pick(
            &es,
            &two(),
            &rule_only(),
            &InFlight::of(std::slice::from_ref(&p)),
            &mut rng,
        )
        .unwrap();
        assert!(p.seats.contains(&9), "{p:?}");
        // Too few games keeps a narrow interval in placement.
        let mut d = placed(5, 0.0);
        d.games = 5;
        assert!(d.in_placement(&rule_only()));
    }

    #[test]
    fn placement_opponents_spread_over_the_table() {
        let mut es: Vec<Entrant> = (0..16).map(|i| placed(i, i as f64 * 40.0)).collect();
        es.push(fresh(99));
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut met = Vec::new();
        for _ in 0..16 {
            let p = pick(&es, &two(), &rule_only(), &InFlight::default(), &mut rng).unwrap();
            met.extend(p.seats.iter().copied().filter(|&i| i != 99));
            finish(&mut es, &p);
        }
        met.sort();
        met.dedup();
        assert!(met.len() >= 10, "{met:?}");
        assert!(met.iter().any(|&i| i < 4) && met.iter().any(|&i| i >= 12));
    }

    #[test]
    fn seats_balance_over_many_picks() {
        let mut es: Vec<Entrant> = (0..6).map(|i| placed(i, i as f64 * 30.0)).collect();
        for e in &mut es {
            e.seat_counts = vec![0, 0];
        }
        let config = PairingConfig {
            random_share: 0.2,
            ..PairingConfig::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..600 {
            let p = pick(&es, &two(), &config, &InFlight::default(), &mut rng).unwrap();
            if rng.gen::<f64>() < 0.9 {
                finish(&mut es, &p);
            }
        }
        for e in &es {
            let d = e.seat_counts[0] as i64 - e.seat_counts[1] as i64;
            assert!(d.abs() <= 4, "{e:?}");
        }
    }

    #[test]
    fn every_variant_is_covered() {
        let variants = vec![
            LadderVariant { players: 2 },
            LadderVariant { players: 2 },
            LadderVariant { players: 3 },
        ];
        let mut es: Vec<Entrant> = (0..8).map(|i| placed(i, i as f64 * 30.0)).collect();
        for e in &mut es {
            e.variant_games = vec![];
        }
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut per_variant = [0u64; 3];
        for _ in 0..300 {
            let p = pick(
                &es,
                &variants,
                &PairingConfig::default(),
                &InFlight::default(),
                &mut rng,
            )
            .unwrap();
            assert_eq!(p.seats.len(), variants[p.variant].players);
            per_variant[p.variant] += 1;
            finish(&mut es, &p);
        }
        assert!(per_variant.iter().all(|&n| n >= 50), "{per_variant:?}");
        for e in &es {
            assert!(
                (0..3).all(|v| e.variant_games.get(v).copied().unwrap_or(0) > 0),
                "{e:?}"
            );
        }
    }

    #[test]
    fn the_random_share_is_respected() {
        // Every rule pick has the placement bot 99; a random one has it
        // 2 times in 10.
        let mut es: Vec<Entrant> = (0..9).map(|i| placed(i, i as f64 * 30.0)).collect();
        es.push(fresh(99));
        let missing = |share: f64, seed: u64| -> f64 {
            let config = PairingConfig {
                random_share: share,
                ..PairingConfig::default()
            };
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = 2000;
            let without = (0..n)
                .filter(|_| {
                    let p = pick(&es, &two(), &config, &InFlight::default(), &mut rng).unwrap();
                    !p.seats.contains(&99)
                })
                .count();
            without as f64 / n as f64
        };
        assert_eq!(missing(0.0, 6), 0.0);
        let m = missing(0.3, 7);
        assert!((0.18..=0.30).contains(&m), "{m}");
        let m = missing(1.0, 8);
        assert!((0.74..=0.86).contains(&m), "{m}");
    }

    #[test]
    fn no_pick_has_a_bot_twice() {
        let variants = vec![LadderVariant { players: 2 }, LadderVariant { players: 3 }];
        let mut es: Vec<Entrant> = (0..5).map(|i| placed(i, i as f64 * 10.0)).collect();
        es.push(fresh(50));
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut flying: Vec<Pick> = Vec::new();
        for _ in 0..500 {
            let in_flight = InFlight::of(&flying);
            let p = pick(
                &es,
                &variants,
                &PairingConfig::default(),
                &in_flight,
                &mut rng,
            )
            .unwrap();
            let mut ids = p.seats.clone();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), variants[p.variant].players, "{p:?}");
            flying.push(p);
            if flying.len() > 3 {
                let done = flying.remove(0);
                finish(&mut es, &done);
            }
        }
    }

    #[test]
    fn none_below_the_player_count() {
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let config = PairingConfig::default();
        assert_eq!(
            pick(
                &[placed(1, 0.0)],
                &two(),
                &config,
                &InFlight::default(),
                &mut rng
            ),
            None
        );
        assert_eq!(
            pick(&[], &two(), &config, &InFlight::default(), &mut rng),
            None
        );
        let pair = [placed(1, 0.0), placed(2, 0.0)];
        let three = [LadderVariant { players: 3 }];
        assert_eq!(
            pick(&pair, &three, &config, &InFlight::default(), &mut rng),
            None
        );
        assert_eq!(
            pick(&pair, &[], &config, &InFlight::default(), &mut rng),
            None
        );
        // A 3-player variant beside a 2-player one: the 2-player one.
        let both = [LadderVariant { players: 3 }, LadderVariant { players: 2 }];
        let p = pick(&pair, &both, &config, &InFlight::default(), &mut rng).unwrap();
        assert_eq!(p.variant, 1);
    }

    #[test]
    fn close_pairs_are_preferred_and_in_flight_ones_penalised() {
        let es = [
            placed(1, 0.0),
            placed(2, 5.0),
            placed(3, 20.0),
            placed(4, 400.0),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut ids = |flying: &[Pick], es: &[Entrant]| {
            let mut s = pick(es, &two(), &rule_only(), &InFlight::of(flying), &mut rng)
                .unwrap()
                .seats;
            s.sort();
            s
        };
        assert_eq!(ids(&[], &es), vec![1, 2]);
        let flying = [Pick {
            variant: 0,
            seats: vec![2, 1],
        }];
        let other = ids(&flying, &es);
        assert_ne!(other, vec![1, 2]);
        assert!(!other.contains(&4), "{other:?}");
        // Games since the fit narrow the pair's interval just the same.
        let mut stale = es.clone();
        stale[0].games += 3000;
        stale[1].games += 3000;
        assert_ne!(ids(&[], &stale), vec![1, 2]);
    }

    #[test]
    fn the_same_rng_gives_the_same_picks() {
        let mut es: Vec<Entrant> = (0..12).map(|i| placed(i, i as f64 * 25.0)).collect();
        es.push(fresh(40));
        let run = |seed: u64| -> Vec<Pick> {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..100)
                .map(|_| {
                    pick(
                        &es,
                        &two(),
                        &PairingConfig::default(),
                        &InFlight::default(),
                        &mut rng,
                    )
                    .unwrap()
                })
                .collect()
        };
        assert_eq!(run(12), run(12));
        assert_ne!(run(12), run(13));
    }

    /// A simulated ladder of `slots` slots over `seconds`: bot `i` spends
    /// `secs[i]` of its own time per game, a game lasts its bots' times
    /// summed, and a finished game moves its bots' clocks by their own time
    /// over their time per game (one game each, here). With `elos`, the
    /// bots are rated so (±40) from the start, and placed after 20 games;
    /// without, never rated (in placement throughout). Games per bot.
    fn timed(
        secs: &[f64],
        slots: usize,
        seconds: f64,
        config: &PairingConfig,
        elos: Option<&[f64]>,
    ) -> Vec<u64> {
        let mut es: Vec<Entrant> = (0..secs.len())
            .map(|i| match elos {
                Some(elo) => placed(i as u64, elo[i]),
                None => fresh(i as u64),
            })
            .collect();
        for e in &mut es {
            e.games = 0;
            e.fit_games = 0;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let mut flying: Vec<(f64, Pick)> = Vec::new();
        let mut now = 0.0;
        while now < seconds {
            while flying.len() < slots {
                let in_flight: Vec<Pick> = flying.iter().map(|(_, p)| p.clone()).collect();
                let p = pick(&es, &two(), config, &InFlight::of(&in_flight), &mut rng).unwrap();
                let length: f64 = p.seats.iter().map(|&s| secs[s as usize]).sum();
                flying.push((now + length, p));
            }
            let first = (0..flying.len())
                .min_by(|&a, &b| flying[a].0.total_cmp(&flying[b].0))
                .unwrap();
            let (at, p) = flying.remove(first);
            now = at;
            finish(&mut es, &p);
            for id in &p.seats {
                let e = es.iter_mut().find(|e| e.id == *id).unwrap();
                e.clock = clock(0.0, e.games as f64 * secs[*id as usize], secs[*id as usize]);
            }
        }
        es.iter().map(|e| e.games).collect()
    }

    #[test]
    fn a_slow_bot_plays_at_the_pace_of_fast_ones() {
        // One bot at 5 s a game, four at 5 ms, four slots, ten minutes.
        // Rated or not; the slow one far above the others or among them.
        let secs = [5.0, 0.005, 0.005, 0.005, 0.005];
        let far = [800.0, 0.0, 10.0, 20.0, 30.0];
        let near = [0.0, -20.0, 10.0, 20.0, 30.0];
        for elos in [None, Some(&far[..]), Some(&near[..])] {
            let games = timed(&secs, 4, 600.0, &PairingConfig::default(), elos);
            let (lo, hi) = (games.iter().min().unwrap(), games.iter().max().unwrap());
            assert!(*lo >= 100, "{games:?}");
            assert!(*hi <= lo + 12, "{elos:?}: {games:?}");
        }
    }

    #[test]
    fn without_the_share_the_fast_ones_race() {
        // The same ladder with an unbounded lead (the rule as it was), the
        // slow bot placed far above the others: its games are no longer
        // informative, and it plays only the random share's.
        let secs = [5.0, 0.005, 0.005, 0.005, 0.005];
        let config = PairingConfig {
            lead: f64::INFINITY,
            ..PairingConfig::default()
        };
        let far = [800.0, 0.0, 10.0, 20.0, 30.0];
        let games = timed(&secs, 4, 600.0, &config, Some(&far));
        let (lo, hi) = (games.iter().min().unwrap(), games.iter().max().unwrap());
        assert!(*hi > 5 * lo, "{games:?}");
    }

    #[test]
    fn the_share_keeps_the_lowest_paces_and_enough_players() {
        let mut es: Vec<Entrant> = (0..5).map(|i| placed(i, 0.0)).collect();
        for (e, c) in es.iter_mut().zip([10.0, 3.0, 7.0, 3.5, 20.0]) {
            e.clock = c;
        }
        assert_eq!(
            within_share(&es, &InFlight::default(), 4.0, 2),
            vec![1, 2, 3]
        );
        assert_eq!(within_share(&es, &InFlight::default(), 0.0, 2), vec![1, 3]);
        assert_eq!(
            within_share(&es, &InFlight::default(), 0.0, 3),
            vec![1, 2, 3]
        );
        // Games in flight count: 1 is playing two, 3 is now the lowest.
        let flying = vec![
            Pick {
                variant: 0,
                seats: vec![1, 4],
            },
            Pick {
                variant: 0,
                seats: vec![2, 1],
            },
        ];
        assert_eq!(
            within_share(&es, &InFlight::of(&flying), 1.0, 2),
            vec![1, 3]
        );
        assert_eq!(
            within_share(&es, &InFlight::of(&flying), 0.4, 2),
            vec![1, 3]
        );
        assert_eq!(within_share(&es, &InFlight::of(&flying), 0.4, 1), vec![3]);
        assert!(within_share(&[], &InFlight::default(), 4.0, 2).is_empty());
        // A pick never has a version beyond the share.
        let mut rng = ChaCha8Rng::seed_from_u64(22);
        for _ in 0..200 {
            let p = pick(
                &es,
                &two(),
                &PairingConfig::default(),
                &InFlight::default(),
                &mut rng,
            )
            .unwrap();
            assert!(p.seats.iter().all(|s| [1, 2, 3].contains(s)), "{p:?}");
        }
    }

    #[test]
    fn a_clock_counts_games_of_the_bots_own_length() {
        assert_eq!(clock(5.0, 10.0, 0.5), 25.0);
        // A game twice its usual length costs two.
        assert_eq!(clock(0.0, 1.0, 0.5), 2.0);
        // An instant bot (0 ms measured) is counted at a millisecond.
        assert_eq!(clock(0.0, 0.002, 0.0), 2.0);
    }

    #[test]
    fn van_der_corput_halves_the_table() {
        let v: Vec<f64> = (0..4).map(van_der_corput).collect();
        assert_eq!(v, vec![0.0, 0.5, 0.25, 0.75]);
    }

    #[test]
    fn the_counts_in_flight_are_those_of_the_games() {
        // Random 2- and 3-player games among 6 bots, counted as they are
        // added, against each count taken from the list of games.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut games: Vec<Pick> = Vec::new();
        let mut counted = InFlight::default();
        for _ in 0..300 {
            let mut bots: Vec<u64> = (0..6).collect();
            bots.shuffle(&mut rng);
            let players = rng.gen_range(2..=3);
            let p = Pick {
                variant: players - 2,
                seats: bots[..players].to_vec(),
            };
            counted.add(&p);
            games.push(p);
        }
        assert_eq!(InFlight::of(&games).bot, counted.bot);
        for a in 0..6u64 {
            let with = |f: &dyn Fn(&Pick) -> bool| games.iter().filter(|p| f(p)).count() as u64;
            assert_eq!(counted.of_bot(a), with(&|p| p.seats.contains(&a)));
            for seat in 0..3 {
                assert_eq!(
                    counted.at_seat(a, seat),
                    with(&|p| p.seats.get(seat) == Some(&a))
                );
            }
            for v in 0..2 {
                assert_eq!(
                    counted.in_variant(v, a),
                    with(&|p| p.variant == v && p.seats.contains(&a))
                );
            }
            for b in 0..6u64 {
                if a != b {
                    assert_eq!(
                        counted.of_pair(a, b),
                        with(&|p| p.seats.contains(&a) && p.seats.contains(&b))
                    );
                }
            }
        }
        assert_eq!(counted.of_bot(99), 0);
    }
}
