//! The search player: Monte-Carlo tree search (UCT) over decisions, with
//! per-seat rewards (so 3-player Tricala is max-n style: each seat picks
//! what is best for itself) and truncated random playouts scored by the
//! per-game heuristic. Owns only the search.

use super::alphabeta::key;
use super::eval::{Evaluate, Scores};
use crate::engine::{Rules, Seat, Variant, MAX_SEATS};
use rand::Rng;
use std::hash::Hash;
use std::time::Instant;

/// Search parameters.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// UCT exploration constant.
    pub explore: f64,
    /// Random decisions played after a new leaf before the heuristic
    /// scores the position.
    pub playout_depth: u32,
    /// Playouts end on [`Evaluate::fitted`], not [`Evaluate::estimate`].
    pub fitted: bool,
    /// The weight of each node's implicit minimax value (the heuristic of
    /// the leaves under it, backed up max-n) beside its mean reward in
    /// selection: 0 is plain UCT. Lanctot, Winands, Pepels and Sturtevant,
    /// "Monte Carlo Tree Search with Heuristic Evaluations using Implicit
    /// Minimax Backups" (2014).
    pub minimax: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            explore: 0.7,
            playout_depth: 30,
            fitted: false,
            minimax: 0.0,
        }
    }
}

struct Node<O> {
    /// The option that led here (none at the root).
    opt: Option<O>,
    /// The seat that decides in this node's position (none: game over).
    seat: Option<Seat>,
    children: Vec<u32>,
    untried: Vec<O>,
    visits: u32,
    /// `1 / sqrt(visits)` (1 before the first visit), kept with `visits`
    /// so that choosing among the children takes no division or root.
    inv_sqrt: f64,
    reward: Scores,
    /// The implicit minimax value: the heuristic's (or the outcome's) at a
    /// leaf; above, the child's best for the seat that decides here.
    minimax: Scores,
}

/// A search's tree, kept for the player's next decision in the same game
/// ([`choose_keeping`]): the subtree of the position met then is searched
/// on, with what the last search learnt of it.
pub struct Kept<G: Rules> {
    root: G,
    nodes: Vec<Node<G::Opt>>,
}

/// How many decisions after a kept tree's root its subtree is looked for
/// (one's own and the others' since the last search).
const KEPT_DEPTH: usize = 8;

/// The most nodes looked at while looking for it.
const KEPT_LOOK: usize = 200_000;

/// The largest subtree kept (about 100 bytes a node): a larger one is let
/// go, and the search starts afresh.
const KEPT_MAX_NODES: usize = 1 << 20;

impl<G: Rules + Hash> Kept<G> {
    /// The subtree of `now` (a position some decisions after the kept
    /// root), as a tree of its own; none when it was not reached, or when
    /// its options are not `now`'s (two positions with one key: the key is
    /// the alpha-beta table's, [`key`], the ply count included).
    fn subtree(mut self, now: &G) -> Option<Vec<Node<G::Opt>>> {
        if self.nodes.is_empty() {
            return None;
        }
        let target = key(now);
        let mut level = vec![(0u32, self.root.clone())];
        let mut looked = 0;
        let mut found = None;
        'search: for _ in 0..KEPT_DEPTH {
            let mut next = Vec::new();
            for (n, g) in &level {
                for &c in &self.nodes[*n as usize].children {
                    let Some(o) = self.nodes[c as usize].opt else {
                        continue;
                    };
                    let mut child = g.clone();
                    if child.apply(o).is_err() {
                        continue;
                    }
                    if key(&child) == target {
                        found = Some(c);
                        break 'search;
                    }
                    looked += 1;
                    if looked >= KEPT_LOOK {
                        return None;
                    }
                    next.push((c, child));
                }
            }
            level = next;
        }
        // Copied out depth first, each node's children after it.
        let mut out: Vec<Node<G::Opt>> = Vec::new();
        let mut stack = vec![(found?, None::<usize>)];
        while let Some((old, parent)) = stack.pop() {
            let id = out.len();
            if id >= KEPT_MAX_NODES {
                return None;
            }
            let n = &mut self.nodes[old as usize];
            out.push(Node {
                opt: n.opt,
                seat: n.seat,
                children: Vec::with_capacity(n.children.len()),
                untried: std::mem::take(&mut n.untried),
                visits: n.visits,
                inv_sqrt: n.inv_sqrt,
                reward: n.reward,
                minimax: n.minimax,
            });
            if let Some(p) = parent {
                out[p].children.push(id as u32);
            }
            stack.extend(n.children.iter().map(|&c| (c, Some(id))));
        }
        out[0].opt = None;
        let mut opts = Vec::new();
        now.options(&mut opts);
        let root = &out[0];
        let same = root.children.len() + root.untried.len() == opts.len()
            && opts.iter().all(|o| {
                root.untried.contains(o)
                    || root
                        .children
                        .iter()
                        .any(|&c| out[c as usize].opt == Some(*o))
            });
        (same && root.seat == now.to_decide()).then_some(out)
    }
}

/// What one search did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub iterations: u64,
    /// Decisions applied (tree and playouts).
    pub decisions: u64,
    /// Visits of the root kept from the last search's tree.
    pub kept: u32,
}

impl Params {
    /// The settings `alphabeta-rust` plays with in `variant` (`search-rust`
    /// keeps [`Params::default`], the reference it is measured against).
    /// Kisolo: playouts of 8 decisions, not 30. A Kisolo decision is a
    /// whole turn of relay laps, so 30 random turns reach far past what
    /// the heuristic can still read (a random game is over in about 35);
    /// in-process duels at 20 ms a decision scored the short playouts
    /// about +180 Elo over the long ones (BENCHMARKS.md, "Reference bots
    /// (issue 51)"). With implicit minimax backups of the hand-written
    /// estimate at weight 0.2: +215 Elo more in the same duel, and about
    /// +194 over `search-rust` in four leagues of 120 games at 50 ms.
    /// Explore 1.0 rather than 0.7: +35 Elo in two duels of 180 games in
    /// all at 20 ms (55-88-37), and +230 over `search-rust` in two leagues
    /// of 120 games at 50 ms.
    ///
    /// Diffusion: playouts of 10 decisions ending on the heuristic fitted
    /// to results (Diffusion's [`Evaluate::WEIGHTS`]), explore 0.5;
    /// the hand-written estimate reads Diffusion worse than a coin.
    ///
    /// Tricala: playouts of 6 decisions ending on the heuristic fitted to
    /// results. Two players: 75% of winners right where the hand-written
    /// one has 60%; +96 Elo over the default in 100 in-process games at
    /// 50 ms. Three players (fitted apart, [`Evaluate::WEIGHTS_3`]): 78%
    /// where the hand-written one has 68%; +57 Elo in 150 games at 50 ms.
    /// Explore 0.3 rather than 0.7 (the fitted chances spread less than a
    /// game's results): +51 Elo in 360 duel games at 50 ms with two
    /// players (200-13-147), +18 in 240 with three.
    pub fn tuned(variant: Variant) -> Self {
        match variant {
            Variant::Tricala => Params {
                explore: 0.3,
                playout_depth: 6,
                fitted: true,
                ..Params::default()
            },
            Variant::Diffusion => Params {
                explore: 0.5,
                playout_depth: 10,
                fitted: true,
                ..Params::default()
            },
            Variant::Kisolo => Params {
                explore: 1.0,
                playout_depth: 8,
                minimax: 0.2,
                ..Params::default()
            },
            _ => Params::default(),
        }
    }
}

/// Searches until `deadline` (at least one iteration per option), or for
/// exactly `iterations` when given (the deadline then is not looked at: a
/// search that stops on a count is reproducible), and returns the most
/// visited option of the current decision.
pub fn choose<G: Evaluate, R: Rng>(
    root: &G,
    deadline: Instant,
    iterations: Option<u64>,
    params: Params,
    rng: &mut R,
) -> Option<(G::Opt, Stats)> {
    search(root, None, deadline, iterations, params, rng).map(|(best, stats, _)| (best, stats))
}

/// [`choose`], starting from the subtree of `root` in the tree `kept`
/// from the player's last search when it holds one (up to
/// [`KEPT_DEPTH`] decisions on), and keeping this search's tree there.
pub fn choose_keeping<G: Evaluate, R: Rng>(
    root: &G,
    deadline: Instant,
    iterations: Option<u64>,
    params: Params,
    rng: &mut R,
    kept: &mut Option<Kept<G>>,
) -> Option<(G::Opt, Stats)> {
    let reused = kept.take().and_then(|k| k.subtree(root));
    let (best, stats, nodes) = search(root, reused, deadline, iterations, params, rng)?;
    if !nodes.is_empty() {
        *kept = Some(Kept {
            root: root.clone(),
            nodes,
        });
    }
    Some((best, stats))
}

/// Plays up to `depth` random decisions from `g`; returns how many. (Also
/// how `benches/mcts.rs` makes its positions.)
pub fn playout<G: Rules, R: Rng>(g: &mut G, depth: u32, buf: &mut Vec<G::Opt>, rng: &mut R) -> u64 {
    let mut played = 0;
    while g.to_decide().is_some() && played < depth {
        g.options(buf);
        let o = buf[rng.gen_range(0..buf.len())];
        if g.apply(o).is_err() {
            break;
        }
        played += 1;
    }
    u64::from(played)
}

/// The child of node `at` with the highest upper confidence bound for the
/// seat deciding there (UCT; the mean reward blended with the implicit
/// minimax value by [`Params::minimax`]).
fn best_child<O>(nodes: &[Node<O>], at: usize, params: &Params) -> usize {
    let me = nodes[at].seat.unwrap_or(0);
    // explore * sqrt(ln N / n) as explore * sqrt(ln N) * (1 / sqrt(n)).
    let spread = params.explore * (nodes[at].visits.max(1) as f64).ln().sqrt();
    let alpha = params.minimax;
    let mut best = (f64::NEG_INFINITY, 0u32);
    for &c in &nodes[at].children {
        let n = &nodes[c as usize];
        let mean = (1.0 - alpha) * n.reward[me] * (n.inv_sqrt * n.inv_sqrt) + alpha * n.minimax[me];
        let ucb = mean + spread * n.inv_sqrt;
        if ucb > best.0 {
            best = (ucb, c);
        }
    }
    best.1 as usize
}

/// Each node of `path` above its leaf takes the implicit minimax value of
/// its child best for the seat that decides there (max-n), leaf first.
fn back_up_minimax<O>(nodes: &mut [Node<O>], path: &[u32]) {
    for &n in path.iter().rev().skip(1) {
        let node = &nodes[n as usize];
        let Some(me) = node.seat else {
            continue;
        };
        let best = node
            .children
            .iter()
            .map(|&c| nodes[c as usize].minimax)
            .max_by(|a, b| a[me].total_cmp(&b[me]));
        if let Some(best) = best {
            nodes[n as usize].minimax = best;
        }
    }
}

type Searched<G> = (<G as Rules>::Opt, Stats, Vec<Node<<G as Rules>::Opt>>);

fn search<G: Evaluate, R: Rng>(
    root: &G,
    reused: Option<Vec<Node<G::Opt>>>,
    deadline: Instant,
    iterations: Option<u64>,
    params: Params,
    rng: &mut R,
) -> Option<Searched<G>> {
    let seat = root.to_decide()?;
    let mut buf = Vec::new();
    root.options(&mut buf);
    if buf.len() == 1 {
        return Some((buf[0], Stats::default(), Vec::new()));
    }
    let root_opts = buf.clone();
    let mut nodes: Vec<Node<G::Opt>> = reused.unwrap_or_else(|| {
        vec![Node {
            opt: None,
            seat: Some(seat),
            children: Vec::new(),
            untried: root_opts.clone(),
            visits: 0,
            inv_sqrt: 1.0,
            reward: [0.0; MAX_SEATS],
            minimax: [0.0; MAX_SEATS],
        }]
    });
    let mut stats = Stats {
        kept: nodes[0].visits,
        ..Stats::default()
    };
    let mut path: Vec<u32> = Vec::with_capacity(64);
    let heuristic = super::eval::heuristic::<G>(params.fitted);
    loop {
        let done = match iterations {
            Some(n) => stats.iterations >= n,
            None => {
                stats.iterations.is_multiple_of(16)
                    && stats.iterations >= nodes[0].untried.len() as u64
                    && Instant::now() >= deadline
            }
        };
        if done {
            break;
        }
        stats.iterations += 1;
        let mut g = root.clone();
        path.clear();
        path.push(0);
        let mut at = 0usize;
        // Selection.
        while nodes[at].untried.is_empty() && !nodes[at].children.is_empty() {
            at = best_child(&nodes, at, &params);
            if let Some(o) = nodes[at].opt {
                if g.apply(o).is_err() {
                    break;
                }
                stats.decisions += 1;
            }
            path.push(at as u32);
        }
        // Expansion.
        if !nodes[at].untried.is_empty() {
            let i = rng.gen_range(0..nodes[at].untried.len());
            let o = nodes[at].untried.swap_remove(i);
            if g.apply(o).is_ok() {
                stats.decisions += 1;
                g.options(&mut buf);
                let minimax = match params.minimax > 0.0 {
                    true => g.value_with(heuristic),
                    false => [0.0; MAX_SEATS],
                };
                let child = Node {
                    opt: Some(o),
                    seat: g.to_decide(),
                    children: Vec::new(),
                    untried: buf.clone(),
                    visits: 0,
                    inv_sqrt: 1.0,
                    reward: [0.0; MAX_SEATS],
                    minimax,
                };
                let id = nodes.len() as u32;
                nodes.push(child);
                nodes[at].children.push(id);
                path.push(id);
            }
        }
        stats.decisions += playout(&mut g, params.playout_depth, &mut buf, rng);
        let value = g.value_with(heuristic);
        // Backpropagation.
        for &n in &path {
            let node = &mut nodes[n as usize];
            node.visits += 1;
            node.inv_sqrt = (node.visits as f64).sqrt().recip();
            for (r, v) in node.reward.iter_mut().zip(value) {
                *r += v;
            }
        }
        if params.minimax > 0.0 {
            back_up_minimax(&mut nodes, &path);
        }
    }
    let best = nodes[0]
        .children
        .iter()
        .max_by_key(|&&c| nodes[c as usize].visits)
        .and_then(|&c| nodes[c as usize].opt)
        .or_else(|| root_opts.first().copied())?;
    Some((best, stats, nodes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{kisolo::Kisolo, tricala::Tricala, Settings};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn iterations<G: Evaluate>(
        g: &G,
        n: u64,
        kept: &mut Option<Kept<G>>,
        rng: &mut ChaCha8Rng,
    ) -> (G::Opt, Stats) {
        choose_keeping(g, Instant::now(), Some(n), Params::default(), rng, kept)
            .expect("a decision")
    }

    /// After one's own decision and the other's reply, the next search
    /// starts from what the last one learnt of the position met: in
    /// Kisolo (one decision a turn) and in 2-player Tricala (several).
    #[test]
    fn a_kept_tree_carries_over_to_the_next_decision() {
        fn carry<G: Evaluate>(mut g: G) {
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let mut kept = None;
            let (o, first) = iterations(&g, 3000, &mut kept, &mut rng);
            assert_eq!(first.kept, 0);
            g.apply(o).expect("legal");
            // The next decision (the other's reply, or one's own in a
            // turn of several), as another search makes it.
            let (o, _) = iterations(&g, 200, &mut None, &mut rng);
            g.apply(o).expect("legal");
            let (o, next) = iterations(&g, 100, &mut kept, &mut rng);
            assert!(next.kept > 0, "nothing kept: {next:?}");
            let mut opts = Vec::new();
            g.options(&mut opts);
            assert!(opts.contains(&o));
        }
        carry(Kisolo::new(&Settings::default()).expect("the default game"));
        carry(Tricala::new(&Settings::with_players(2)).expect("the default game"));
    }

    /// A tree kept from another game is not used, and the search still
    /// answers one of the position's own options.
    #[test]
    fn a_tree_of_another_game_is_not_used() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut kept = None;
        let mut g = Kisolo::new(&Settings::default()).expect("the default game");
        let mut opts = Vec::new();
        for _ in 0..6 {
            g.options(&mut opts);
            g.apply(opts[opts.len() / 2]).expect("legal");
        }
        iterations(&g, 2000, &mut kept, &mut rng);
        let fresh = Kisolo::new(&Settings::default()).expect("the default game");
        let (o, stats) = iterations(&fresh, 100, &mut kept, &mut rng);
        assert_eq!(stats.kept, 0);
        fresh.options(&mut opts);
        assert!(opts.contains(&o));
    }

    /// Every node's kept `1 / sqrt(visits)` is its visits' (1 before the
    /// first), in a search's tree and in the subtree kept for the next.
    #[test]
    fn each_node_keeps_one_over_the_root_of_its_visits() {
        fn check<O>(nodes: &[Node<O>]) {
            assert!(nodes.len() > 100, "a tree of {} nodes", nodes.len());
            for n in nodes {
                let want = 1.0 / f64::from(n.visits.max(1)).sqrt();
                assert!((n.inv_sqrt - want).abs() < 1e-12, "{} visits", n.visits);
            }
        }
        let mut g = Tricala::new(&Settings::with_players(2)).expect("the default game");
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let params = Params::tuned(Variant::Tricala);
        let (o, _, nodes) =
            search(&g, None, Instant::now(), Some(3000), params, &mut rng).expect("a decision");
        check(&nodes);
        let kept = Kept { root: g, nodes };
        g.apply(o).expect("legal");
        let subtree = kept.subtree(&g).expect("the subtree of the option played");
        check(&subtree);
        let (_, _, nodes) = search(
            &g,
            Some(subtree),
            Instant::now(),
            Some(3000),
            params,
            &mut rng,
        )
        .expect("a decision");
        check(&nodes);
    }

    fn node(seat: Option<Seat>, children: Vec<u32>, minimax: [f64; 2]) -> Node<u8> {
        let mut m = [0.0; MAX_SEATS];
        m[..2].copy_from_slice(&minimax);
        Node {
            opt: Some(0),
            seat,
            children,
            untried: Vec::new(),
            visits: 0,
            inv_sqrt: 1.0,
            reward: [0.0; MAX_SEATS],
            minimax: m,
        }
    }

    /// The implicit minimax values back up max-n along the path: each
    /// node takes its child best for the seat deciding there, whatever the
    /// other seat thinks of it and whatever the node held before.
    #[test]
    fn the_implicit_minimax_value_backs_up_the_best_child_for_the_seat_deciding() {
        // 0 (seat 0) -> 1, 2 (seat 1); 1 -> 3, 4 (leaves, seat 0).
        let mut nodes = vec![
            node(Some(0), vec![1, 2], [0.0, 0.0]),
            node(Some(1), vec![3, 4], [0.9, 0.1]),
            node(Some(1), vec![], [0.6, 0.4]),
            node(Some(0), vec![], [0.8, 0.2]),
            node(Some(0), vec![], [0.3, 0.7]),
        ];
        back_up_minimax(&mut nodes, &[0, 1, 4]);
        // Seat 1 at node 1 takes leaf 4 (0.7 for it), so seat 0 at the
        // root prefers node 2 (0.6) to node 1 (now 0.3).
        assert_eq!(nodes[1].minimax[..2], [0.3, 0.7]);
        assert_eq!(nodes[0].minimax[..2], [0.6, 0.4]);
        // The leaf itself keeps its heuristic value.
        assert_eq!(nodes[4].minimax[..2], [0.3, 0.7]);
    }

    /// With the minimax weight on, a search still answers one of the
    /// position's options, and the same seed the same one.
    #[test]
    fn a_search_with_implicit_minimax_is_reproducible() {
        let g = Kisolo::new(&Settings::default()).expect("the default game");
        let params = Params::tuned(Variant::Kisolo);
        assert!(params.minimax > 0.0);
        let run = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            choose(&g, Instant::now(), Some(2000), params, &mut rng).map(|(o, _)| o)
        };
        let o = run(7).expect("a decision");
        assert_eq!(Some(o), run(7));
        let mut opts = Vec::new();
        g.options(&mut opts);
        assert!(opts.contains(&o));
    }
}
