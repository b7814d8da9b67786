//! The Bradley-Terry fit on the Elo scale: maximum likelihood by Newton's
//! method over aggregated pairwise evidence, its covariance, and the
//! regularisation that keeps every rating finite. Pure numbers: knows bot
//! indices, never names, files or rows.
//!
//! Model (as Ordo): the expected score of `a` against `b`, with `a` in the
//! earlier seat of variant group `v`, is `1 / (1 + 10^(-(r_a - r_b + h_v)/400))`
//! (`h_v = 0` without the seat-advantage option); a draw counts as half a win
//! and half a loss, i.e. the log-likelihood of a result `x` in [0, 1] is
//! `x ln p + (1 - x) ln (1 - p)`.

#![allow(clippy::needless_range_loop)]

use super::linalg::{cholesky, inverse, solve, Matrix};

/// `ln(10) / 400`: the logistic slope of the Elo scale.
pub const K: f64 = std::f64::consts::LN_10 / 400.0;

/// Weight of the virtual draw each bot plays against a virtual opponent
/// rated at the pool average when the maximum-likelihood estimate does not
/// exist (see `regularized`), and of the virtual draw at `h = 0` each seat
/// parameter always gets.
pub const PRIOR_DRAWS: f64 = 1.0;

/// Aggregated pairwise evidence between two bots in one variant group:
/// `first` sat earlier than `second`; `x` is `first`'s weighted score.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cell {
    pub first: usize,
    pub second: usize,
    pub group: usize,
    /// Sum of weights (games, or 1/3 per seat pair of a 3-player game).
    pub w: f64,
    /// Sum of weight * score of `first`.
    pub x: f64,
    /// Sum of weight * score², for the dispersion estimate.
    pub x2: f64,
}

/// What the fit found. Indices are the caller's bot indices.
#[derive(Clone, Debug)]
pub struct FitOutput {
    /// Whether each bot has any evidence.
    pub rated: Vec<bool>,
    /// Ratings (Elo) in an arbitrary gauge; only differences are meaningful.
    /// Unrated bots hold 0.
    pub elo: Vec<f64>,
    /// Covariance of `elo` (already scaled by `dispersion`), bot x bot.
    /// Rows of unrated bots are 0.
    pub cov: Matrix,
    /// Seat advantage (Elo) per variant group, with its standard error;
    /// `None` when not fitted or the group has no evidence.
    pub seat: Vec<Option<(f64, f64)>>,
    /// True when the maximum-likelihood estimate did not exist (the
    /// "scored against" graph is not strongly connected) and the virtual
    /// draws were added.
    pub regularized: bool,
    /// Bots outside the largest strongly connected component (their rating
    /// leans on the virtual draws). All false when not regularized.
    pub leans_on_prior: Vec<bool>,
    /// Quasi-likelihood dispersion: Pearson X² / degrees of freedom, clamped
    /// to [0.25, 4]; 1 when fewer than 30 degrees of freedom.
    pub dispersion: f64,
    /// Newton iterations used.
    pub iterations: usize,
}

#[inline]
fn ln_sigmoid(z: f64) -> f64 {
    if z > 0.0 {
        -(-z).exp().ln_1p()
    } else {
        z - z.exp().ln_1p()
    }
}

#[inline]
fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// Strongly connected components of a directed graph (Kosaraju), as a
/// component id per node.
fn scc(n: usize, adj: &[Vec<usize>]) -> Vec<usize> {
    let mut radj = vec![Vec::new(); n];
    for (u, vs) in adj.iter().enumerate() {
        for &v in vs {
            radj[v].push(u);
        }
    }
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for s in 0..n {
        if seen[s] {
            continue;
        }
        let mut stack = vec![(s, 0usize)];
        seen[s] = true;
        while let Some(&mut (u, ref mut k)) = stack.last_mut() {
            if *k < adj[u].len() {
                let v = adj[u][*k];
                *k += 1;
                if !seen[v] {
                    seen[v] = true;
                    stack.push((v, 0));
                }
            } else {
                order.push(u);
                stack.pop();
            }
        }
    }
    let mut comp = vec![usize::MAX; n];
    let mut c = 0;
    for &s in order.iter().rev() {
        if comp[s] != usize::MAX {
            continue;
        }
        let mut stack = vec![s];
        comp[s] = c;
        while let Some(u) = stack.pop() {
            for &v in &radj[u] {
                if comp[v] == usize::MAX {
                    comp[v] = c;
                    stack.push(v);
                }
            }
        }
        c += 1;
    }
    comp
}

/// Cholesky of `h + eps·I` for growing `eps`, relative to the diagonal.
fn cholesky_ridge(h: &Matrix) -> Option<Matrix> {
    let scale = (0..h.n).map(|i| h.get(i, i).abs()).fold(1e-12, f64::max);
    let mut eps = 1e-10 * scale;
    for _ in 0..12 {
        let mut r = h.clone();
        for i in 0..h.n {
            r.add(i, i, eps);
        }
        if let Some(l) = cholesky(&r) {
            return Some(l);
        }
        eps *= 10.0;
    }
    None
}

struct Problem<'a> {
    cells: &'a [Cell],
    /// bot index -> parameter index
    bot_param: Vec<Option<usize>>,
    /// group index -> parameter index
    group_param: Vec<Option<usize>>,
    nparams: usize,
    nbots_rated: usize,
    prior_bots: bool,
    /// gauge penalty weight (0 when the prior fixes the gauge)
    lambda: f64,
}

impl Problem<'_> {
    fn diff(&self, theta: &[f64], c: &Cell) -> Option<(usize, usize, Option<usize>, f64)> {
        let a = self.bot_param[c.first]?;
        let b = self.bot_param[c.second]?;
        let g = self.group_param.get(c.group).copied().flatten();
        let d = theta[a] - theta[b] + g.map_or(0.0, |g| theta[g]);
        Some((a, b, g, d))
    }

    /// Negative log-likelihood (plus prior and gauge terms).
    fn value(&self, theta: &[f64]) -> f64 {
        let mut f = 0.0;
        for c in self.cells {
            if let Some((_, _, _, d)) = self.diff(theta, c) {
                let z = K * d;
                f -= c.x * ln_sigmoid(z) + (c.w - c.x) * ln_sigmoid(-z);
            }
        }
        for (k, &t) in theta.iter().enumerate() {
            if k < self.nbots_rated && !self.prior_bots {
                continue;
            }
            // one virtual draw at difference t
            f -= PRIOR_DRAWS * 0.5 * (ln_sigmoid(K * t) + ln_sigmoid(-K * t));
        }
        if self.lambda > 0.0 {
            let s: f64 = theta[..self.nbots_rated].iter().sum();
            f += 0.5 * self.lambda * s * s;
        }
        f
    }

    /// Gradient and Hessian of `value`.
    fn derivatives(&self, theta: &[f64]) -> (Vec<f64>, Matrix) {
        let n = self.nparams;
        let mut g = vec![0.0; n];
        let mut h = Matrix::zeros(n);
        for c in self.cells {
            let Some((a, b, s, d)) = self.diff(theta, c) else {
                continue;
            };
            let p = sigmoid(K * d);
            let gd = -K * (c.x - c.w * p);
            let hd = K * K * c.w * p * (1.0 - p);
            let idx: [(usize, f64); 3] = [(a, 1.0), (b, -1.0), (s.unwrap_or(usize::MAX), 1.0)];
            for &(i, si) in &idx {
                if i == usize::MAX {
                    continue;
                }
                g[i] += si * gd;
                for &(j, sj) in &idx {
                    if j == usize::MAX {
                        continue;
                    }
                    h.add(i, j, si * sj * hd);
                }
            }
        }
        for (k, &t) in theta.iter().enumerate() {
            if k < self.nbots_rated && !self.prior_bots {
                continue;
            }
            let p = sigmoid(K * t);
            g[k] += -K * PRIOR_DRAWS * (0.5 - p);
            h.add(k, k, K * K * PRIOR_DRAWS * p * (1.0 - p));
        }
        if self.lambda > 0.0 {
            let s: f64 = theta[..self.nbots_rated].iter().sum();
            for i in 0..self.nbots_rated {
                g[i] += self.lambda * s;
                for j in 0..self.nbots_rated {
                    h.add(i, j, self.lambda);
                }
            }
        }
        (g, h)
    }
}

/// Fits `nbots` ratings (and, if `seat_advantage`, one seat parameter per
/// each of `ngroups` variant groups) to `cells`.
pub fn fit(nbots: usize, ngroups: usize, cells: &[Cell], seat_advantage: bool) -> FitOutput {
    // Which bots and groups have evidence.
    let mut rated = vec![false; nbots];
    let mut group_used = vec![false; ngroups];
    for c in cells.iter().filter(|c| c.w > 0.0 && c.first != c.second) {
        rated[c.first] = true;
        rated[c.second] = true;
        if c.group < ngroups {
            group_used[c.group] = true;
        }
    }
    let mut bot_param = vec![None; nbots];
    let mut m = 0;
    for (i, r) in rated.iter().enumerate() {
        if *r {
            bot_param[i] = Some(m);
            m += 1;
        }
    }
    let mut group_param = vec![None; ngroups];
    let mut nparams = m;
    if seat_advantage {
        for (gi, u) in group_used.iter().enumerate() {
            if *u {
                group_param[gi] = Some(nparams);
                nparams += 1;
            }
        }
    }

    // Existence of the MLE: the graph "a scored against b" must be strongly
    // connected (Zermelo 1929; Hunter 2004, assumption 1).
    let mut adj = vec![Vec::new(); m];
    for c in cells.iter().filter(|c| c.w > 0.0) {
        if let (Some(a), Some(b)) = (bot_param[c.first], bot_param[c.second]) {
            if a == b {
                continue;
            }
            if c.x > 0.0 {
                adj[a].push(b);
            }
            if c.w - c.x > 0.0 {
                adj[b].push(a);
            }
        }
    }
    let comp = scc(m, &adj);
    let ncomp = comp.iter().copied().max().map_or(0, |c| c + 1);
    let regularized = ncomp > 1;
    let mut leans_on_prior = vec![false; nbots];
    if regularized {
        let mut size = vec![0usize; ncomp];
        comp.iter().for_each(|&c| size[c] += 1);
        let biggest = (0..ncomp).max_by_key(|&c| size[c]).unwrap_or(0);
        for i in 0..nbots {
            if let Some(p) = bot_param[i] {
                leans_on_prior[i] = comp[p] != biggest;
            }
        }
    }

    let total_w: f64 = cells.iter().map(|c| c.w).sum();
    let lambda = if regularized || m == 0 {
        0.0
    } else {
        K * K * 0.25 * total_w.max(1.0) / m as f64
    };
    let prob = Problem {
        cells,
        bot_param: bot_param.clone(),
        group_param: group_param.clone(),
        nparams,
        nbots_rated: m,
        prior_bots: regularized,
        lambda,
    };

    let mut theta = vec![0.0; nparams];
    let mut iterations = 0;
    let mut fval = prob.value(&theta);
    let mut last_h = None;
    for it in 0..200 {
        iterations = it + 1;
        let (g, h) = prob.derivatives(&theta);
        let Some(l) = cholesky(&h).or_else(|| cholesky_ridge(&h)) else {
            break;
        };
        let step = solve(&l, &g);
        last_h = Some(l);
        let slope: f64 = -g.iter().zip(&step).map(|(a, b)| a * b).sum::<f64>();
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..60 {
            let cand: Vec<f64> = theta.iter().zip(&step).map(|(a, s)| a - t * s).collect();
            let fc = prob.value(&cand);
            if fc <= fval + 1e-4 * t * slope || (fc - fval).abs() <= 1e-12 * fval.abs().max(1.0) {
                theta = cand;
                fval = fc;
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        let maxstep = step.iter().fold(0.0f64, |a, s| a.max((t * s).abs()));
        if !accepted || maxstep < 1e-7 {
            break;
        }
    }
    // Curvature at the optimum (with a tiny ridge if rounding made it
    // indefinite: intervals must stay finite).
    let (_, h) = prob.derivatives(&theta);
    let l = cholesky(&h).or_else(|| cholesky_ridge(&h)).or(last_h);
    let inv = l
        .as_ref()
        .map(inverse)
        .unwrap_or_else(|| Matrix::zeros(nparams));

    // Dispersion: Pearson X² over the real evidence (not the virtual draws).
    let mut x2 = 0.0;
    for c in cells {
        if let Some((_, _, _, d)) = prob.diff(&theta, c) {
            let p = sigmoid(K * d);
            let v = p * (1.0 - p);
            if v > 1e-12 {
                x2 += (c.x2 - 2.0 * p * c.x + p * p * c.w) / v;
            }
        }
    }
    let free = (m.saturating_sub(1) + (nparams - m)) as f64;
    let dof = total_w - free;
    let dispersion = if dof >= 30.0 {
        (x2 / dof).clamp(0.25, 4.0)
    } else {
        1.0
    };

    let mut elo = vec![0.0; nbots];
    let mut cov = Matrix::zeros(nbots);
    for i in 0..nbots {
        if let Some(p) = bot_param[i] {
            elo[i] = theta[p];
            for j in 0..nbots {
                if let Some(q) = bot_param[j] {
                    cov.a[i * nbots + j] = dispersion * inv.get(p, q);
                }
            }
        }
    }
    let seat = group_param
        .iter()
        .map(|g| g.map(|g| (theta[g], (dispersion * inv.get(g, g)).max(0.0).sqrt())))
        .collect();
    FitOutput {
        rated,
        elo,
        cov,
        seat,
        regularized,
        leans_on_prior,
        dispersion,
        iterations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(first: usize, second: usize, w: f64, x: f64) -> Cell {
        Cell {
            first,
            second,
            group: 0,
            w,
            x,
            x2: x, // wins and losses only
        }
    }

    #[test]
    fn two_bots_match_the_closed_form() {
        // A scores 30 of 40 against B: r_A - r_B = 400 log10(30/10).
        let out = fit(2, 1, &[cell(0, 1, 40.0, 30.0)], false);
        let want = 400.0 * 3f64.log10();
        assert!(!out.regularized);
        assert!(out.iterations < 30);
        assert!(((out.elo[0] - out.elo[1]) - want).abs() < 1e-6);
    }

    #[test]
    fn a_perfect_score_is_finite_and_regularized() {
        let out = fit(2, 1, &[cell(0, 1, 5.0, 5.0)], false);
        assert!(out.regularized);
        assert!(out.elo.iter().all(|e| e.is_finite()));
        assert!(out.elo[0] > out.elo[1]);
        assert!(out.cov.a.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn scc_finds_a_cycle_and_a_sink() {
        // 0 -> 1 -> 2 -> 0 is a cycle, 3 only receives.
        let adj = vec![vec![1, 3], vec![2], vec![0], vec![]];
        let c = scc(4, &adj);
        assert_eq!(c[0], c[1]);
        assert_eq!(c[1], c[2]);
        assert_ne!(c[0], c[3]);
    }
}
