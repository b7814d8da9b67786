//! The Bradley-Terry fit on the Elo scale: maximum likelihood by Newton's
//! method over aggregated pairwise evidence, its covariance, and the limit
//! (the half-point rule Ordo's manual gives for perfect scores, generalised) that keeps every rating
//! finite when the maximum-likelihood ratings do not exist. Pure numbers:
//! knows bot indices, never names, files or rows.
//!
//! Model (as Ordo): the expected score of `a` against `b`, with `a` in the
//! earlier seat of variant group `v`, is `1 / (1 + 10^(-(r_a - r_b + h_v)/400))`
//! (`h_v = 0` without the seat-advantage option); a draw counts as half a win
//! and half a loss, i.e. the log-likelihood of a result `x` in [0, 1] is
//! `x ln p + (1 - x) ln (1 - p)`.
//!
//! 3-player evidence enters as Luce choice events (`luce::Choice`), fitted
//! jointly on the same scale: a bot's strength there is its rating plus
//! `h_v` when it sat in seat 0 (docs/ratings.md, "3-player Tricala").

#![allow(clippy::needless_range_loop)]

use super::linalg::{cholesky, dot, inverse, sandwich, solve, Matrix};
use super::luce::Choice;
use super::scale::K;
use super::table::IntervalMethod;
use std::collections::BTreeMap;

/// Weight of the virtual draw at `h = 0` that each seat parameter gets, so
/// that a variant whose first seat won (or lost) everything stays finite.
/// Against the hundreds of games of a league it moves `h` by a fraction of
/// an Elo (0.2 Elo with 60 games in the test league).
pub const PRIOR_DRAWS: f64 = 1.0;

/// Aggregated pairwise evidence between two bots in one variant group:
/// `first` sat earlier than `second`; `x` is `first`'s weighted score.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cell {
    pub first: usize,
    pub second: usize,
    pub group: usize,
    /// Sum of weights (2-player games; 3-player games are `luce::Choice`).
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
    /// The robust (sandwich) covariance of `elo`, bot x bot, when asked
    /// for (`IntervalMethod::Robust`). The caller takes each bot's variance
    /// as the larger of the two (docs/ratings.md, "Extreme tables").
    pub robust_cov: Option<Matrix>,
    /// Seat advantage (Elo) per variant group, with its standard error;
    /// `None` when not fitted or the group has no evidence.
    pub seat: Vec<Option<(f64, f64)>>,
    /// True when the half-point rule placed components that met (the
    /// "scored against" graph is not strongly connected within a group of
    /// bots that met, see `fit`). Groups that never met, each strongly
    /// connected, are not regularized: they are only `groups > 1`.
    pub regularized: bool,
    /// Bots outside the largest strongly connected component (their
    /// distance to it rests on the half-point rule). All false when not
    /// regularized.
    pub leans_on_prior: Vec<bool>,
    /// Whether each bot scored against some bot (a win or a draw of a
    /// pair, a win of a choice event): a rated bot without is one that
    /// lost every rated result, whatever W-D-L count the losers of a
    /// winner-only 3-player game as (docs/ratings.md, `all_losses`).
    pub scored: Vec<bool>,
    /// Whether some bot scored against each bot (`all_wins` without).
    pub conceded: Vec<bool>,
    /// Which group of bots that met (directly or through others) each bot
    /// belongs to: 0 is the reference group (the anchor's, see
    /// `fit_with_reference`, else the largest). Ratings of different groups
    /// cannot be compared.
    pub group: Vec<usize>,
    /// Number of such groups (0 without rated bots).
    pub groups: usize,
    /// The bots whose average is the default zero: every rated bot, or,
    /// when regularized, the largest strongly connected component if it
    /// has two bots or more (as Ordo, whose average leaves out the perfect
    /// winners and losers it places afterwards).
    pub core: Vec<bool>,
    /// Quasi-likelihood dispersion: Pearson X² / degrees of freedom, clamped
    /// to [0.01, 4]; 1 when fewer than 30 degrees of freedom.
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

/// No parameter (a cell without a seat parameter).
const NONE: usize = usize::MAX;

/// Residual of the conjugate gradients relative to the gradient at which a
/// Newton direction is taken as solved: far below what moves a rating by
/// the fit's tolerance (steps under 1e-7 Elo end it).
const CG_TOLERANCE: f64 = 1e-10;

/// Conjugate-gradient iterations per Newton direction, at least; more for
/// more parameters (`Curvature::conjugate_gradients`).
const CG_MIN_ITERATIONS: usize = 200;

/// The Hessian of `Problem::value` at one point, as its terms: what
/// `Problem::derivatives` used to add into a dense matrix, kept apart so
/// that its product with a vector costs O(cells) (`times`), and the dense
/// matrix is built only where a factorisation needs it (`dense`).
struct Curvature<'a> {
    n: usize,
    /// Per 2-player cell: its parameters (first, second, seat or `NONE`)
    /// and `hd`; the cell adds `hd v vᵀ`, `v = e_first - e_second + e_seat`.
    cells: Vec<([usize; 3], f64)>,
    /// The entries of the choice events' blocks: (row, column, value).
    entries: Vec<(usize, usize, f64)>,
    /// The seat priors' diagonal: (parameter, value).
    prior: Vec<(usize, f64)>,
    /// The gauge penalties: each adds `λ u uᵀ`.
    gauges: &'a [(f64, Vec<(usize, f64)>)],
}

impl Curvature<'_> {
    /// The signs of a cell's parameters in `v`.
    const SIGNS: [f64; 3] = [1.0, -1.0, 1.0];

    /// The dense Hessian, each entry the sum of its terms in the order
    /// the dense fit always added them: cells, choice events, priors,
    /// gauges.
    fn dense(&self) -> Matrix {
        let mut h = Matrix::zeros(self.n);
        for &(idx, hd) in &self.cells {
            for (&i, si) in idx.iter().zip(Self::SIGNS) {
                if i == NONE {
                    continue;
                }
                for (&j, sj) in idx.iter().zip(Self::SIGNS) {
                    if j == NONE {
                        continue;
                    }
                    h.add(i, j, si * sj * hd);
                }
            }
        }
        for &(i, j, v) in &self.entries {
            h.add(i, j, v);
        }
        for &(k, v) in &self.prior {
            h.add(k, k, v);
        }
        for (lambda, u) in self.gauges {
            for &(i, wi) in u {
                for &(j, wj) in u {
                    h.add(i, j, lambda * wi * wj);
                }
            }
        }
        h
    }

    /// `H x` into `out`.
    fn times(&self, x: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|o| *o = 0.0);
        for &([a, b, s], hd) in &self.cells {
            let xs = if s == NONE { 0.0 } else { x[s] };
            let t = hd * (x[a] - x[b] + xs);
            out[a] += t;
            out[b] -= t;
            if s != NONE {
                out[s] += t;
            }
        }
        for &(i, j, v) in &self.entries {
            out[i] += v * x[j];
        }
        for &(k, v) in &self.prior {
            out[k] += v * x[k];
        }
        for (lambda, u) in self.gauges {
            let s: f64 = u.iter().map(|&(k, w)| w * x[k]).sum();
            for &(i, wi) in u {
                out[i] += lambda * wi * s;
            }
        }
    }

    /// The diagonal of `H`.
    fn diagonal(&self) -> Vec<f64> {
        let mut d = vec![0.0; self.n];
        for &(idx, hd) in &self.cells {
            for &i in idx.iter().filter(|&&i| i != NONE) {
                d[i] += hd;
            }
        }
        for &(i, j, v) in &self.entries {
            if i == j {
                d[i] += v;
            }
        }
        for &(k, v) in &self.prior {
            d[k] += v;
        }
        for (lambda, u) in self.gauges {
            for &(i, wi) in u {
                d[i] += lambda * wi * wi;
            }
        }
        d
    }

    /// `H⁻¹ g` by conjugate gradients preconditioned by the diagonal
    /// (Hestenes and Stiefel 1952; Nocedal and Wright, "Numerical
    /// Optimization", algorithm 5.3), to a residual of `CG_TOLERANCE`
    /// times `|g|`. `None` when `H` shows a direction of no or negative
    /// curvature, or the iterations (`CG_MIN_ITERATIONS`, or twice the
    /// parameters) run out: the caller then factors `H`.
    fn conjugate_gradients(&self, g: &[f64]) -> Option<Vec<f64>> {
        let n = self.n;
        let norm_g = dot(g, g).sqrt();
        let mut x = vec![0.0; n];
        if norm_g == 0.0 {
            return Some(x);
        }
        let inv_diag: Vec<f64> = self
            .diagonal()
            .iter()
            .map(|&d| if d > 0.0 { 1.0 / d } else { 1.0 })
            .collect();
        let mut r = g.to_vec();
        let mut z: Vec<f64> = r.iter().zip(&inv_diag).map(|(r, m)| r * m).collect();
        let mut p = z.clone();
        let mut rz = dot(&r, &z);
        let mut q = vec![0.0; n];
        for _ in 0..CG_MIN_ITERATIONS.max(2 * n) {
            self.times(&p, &mut q);
            let pq = dot(&p, &q);
            if pq.is_nan() || pq <= 0.0 || pq.is_infinite() {
                return None;
            }
            let alpha = rz / pq;
            for k in 0..n {
                x[k] += alpha * p[k];
                r[k] -= alpha * q[k];
            }
            if dot(&r, &r).sqrt() <= CG_TOLERANCE * norm_g {
                return Some(x);
            }
            for k in 0..n {
                z[k] = r[k] * inv_diag[k];
            }
            let rz_next = dot(&r, &z);
            let beta = rz_next / rz;
            rz = rz_next;
            for k in 0..n {
                p[k] = z[k] + beta * p[k];
            }
        }
        None
    }
}

/// One maximum-likelihood problem: a bot's rating is `bot_base + θ[bot_param]`,
/// a variant group's seat advantage `group_base + θ[group_param]`.
struct Problem<'a> {
    cells: &'a [Cell],
    /// Luce choice events (3-player games); their members are all rated.
    choices: &'a [Choice],
    bot_param: Vec<Option<usize>>,
    bot_base: Vec<f64>,
    group_param: Vec<Option<usize>>,
    group_base: Vec<f64>,
    nparams: usize,
    /// Parameters carrying one virtual draw at 0 (the seat parameters).
    seat_prior: Vec<usize>,
    /// The weight of that draw ([`PRIOR_DRAWS`], but in
    /// [`seats_without_estimate`]).
    prior_draws: f64,
    /// Gauge penalties `λ (Σ u_k θ_k)²`, one per set of parameters whose
    /// common level the data do not determine: (λ, [(k, u_k)]).
    gauges: Vec<(f64, Vec<(usize, f64)>)>,
}

impl Problem<'_> {
    fn diff(&self, theta: &[f64], c: &Cell) -> Option<(usize, usize, Option<usize>, f64)> {
        let a = self.bot_param.get(c.first).copied().flatten()?;
        let b = self.bot_param.get(c.second).copied().flatten()?;
        let g = self.group_param.get(c.group).copied().flatten();
        let h = self.group_base.get(c.group).copied().unwrap_or(0.0) + g.map_or(0.0, |g| theta[g]);
        let d = self.bot_base[c.first] + theta[a] - self.bot_base[c.second] - theta[b] + h;
        Some((a, b, g, d))
    }

    /// The strengths `u` of a choice event's members (rating, plus the
    /// seat advantage for the member in seat 0) and, per member, the
    /// parameters `u` moves with (its rating; the seat parameter).
    fn strengths(&self, theta: &[f64], c: &Choice) -> ([f64; 3], [[Option<usize>; 2]; 3]) {
        let mut u = [0.0; 3];
        let mut params = [[None; 2]; 3];
        for k in 0..c.size {
            let b = c.members[k];
            let p = self.bot_param.get(b).copied().flatten();
            u[k] = self.bot_base.get(b).copied().unwrap_or(0.0) + p.map_or(0.0, |p| theta[p]);
            params[k][0] = p;
            if c.seat0 == Some(k) {
                let g = self.group_param.get(c.group).copied().flatten();
                u[k] += self.group_base.get(c.group).copied().unwrap_or(0.0)
                    + g.map_or(0.0, |g| theta[g]);
                params[k][1] = g;
            }
        }
        (u, params)
    }

    /// Negative log-likelihood (plus seat prior and gauge terms).
    fn value(&self, theta: &[f64]) -> f64 {
        let mut f = 0.0;
        for c in self.cells {
            if let Some((_, _, _, d)) = self.diff(theta, c) {
                let z = K * d;
                f -= c.x * ln_sigmoid(z) + (c.w - c.x) * ln_sigmoid(-z);
            }
        }
        for c in self.choices {
            f += c.neg_log_likelihood(&self.strengths(theta, c).0);
        }
        for &k in &self.seat_prior {
            let t = theta[k];
            f -= self.prior_draws * 0.5 * (ln_sigmoid(K * t) + ln_sigmoid(-K * t));
        }
        for (lambda, u) in &self.gauges {
            let s: f64 = u.iter().map(|&(k, w)| w * theta[k]).sum();
            f += 0.5 * lambda * s * s;
        }
        f
    }

    /// Gradient and Hessian of `value`, the Hessian as its terms
    /// (`Curvature`): one per 2-player cell and per entry of a choice
    /// event's block, O(cells) in all, never a dense matrix.
    fn derivatives(&self, theta: &[f64]) -> (Vec<f64>, Curvature<'_>) {
        let n = self.nparams;
        let mut g = vec![0.0; n];
        let mut cells = Vec::with_capacity(self.cells.len());
        for c in self.cells {
            let Some((a, b, s, d)) = self.diff(theta, c) else {
                continue;
            };
            let p = sigmoid(K * d);
            let gd = -K * (c.x - c.w * p);
            let hd = K * K * c.w * p * (1.0 - p);
            g[a] += gd;
            g[b] -= gd;
            if let Some(s) = s {
                g[s] += gd;
            }
            cells.push(([a, b, s.unwrap_or(NONE)], hd));
        }
        let mut entries = Vec::new();
        for c in self.choices {
            let (u, params) = self.strengths(theta, c);
            let (gu, hu) = c.derivatives(&u);
            for i in 0..c.size {
                for pi in params[i].iter().flatten() {
                    g[*pi] += gu[i];
                    for j in 0..c.size {
                        for pj in params[j].iter().flatten() {
                            entries.push((*pi, *pj, hu[i][j]));
                        }
                    }
                }
            }
        }
        let mut prior = Vec::with_capacity(self.seat_prior.len());
        for &k in &self.seat_prior {
            let p = sigmoid(K * theta[k]);
            g[k] += -K * self.prior_draws * (0.5 - p);
            prior.push((k, K * K * self.prior_draws * p * (1.0 - p)));
        }
        for (lambda, u) in &self.gauges {
            let s: f64 = u.iter().map(|&(k, w)| w * theta[k]).sum();
            for &(i, wi) in u {
                g[i] += lambda * wi * s;
            }
        }
        let h = Curvature {
            n,
            cells,
            entries,
            prior,
            gauges: &self.gauges,
        };
        (g, h)
    }

    /// Newton's method with a backtracking line search from 0. Returns the
    /// optimum, the iterations and the inverse of the curvature there.
    ///
    /// Each Newton direction solves `H s = g` by conjugate gradients on
    /// the Hessian's product with a vector (`Curvature::times`, O(cells)),
    /// preconditioned by its diagonal, to a residual of `CG_TOLERANCE`
    /// relative to the gradient; where that fails (the curvature is not
    /// positive definite, or the iterations run out) the direction is the
    /// dense one (Cholesky of `H`, with a ridge if needed). The dense
    /// curvature is factored once, at the optimum, for the covariance.
    fn solve(&self) -> (Vec<f64>, usize, Matrix) {
        let mut theta = vec![0.0; self.nparams];
        let mut iterations = 0;
        let mut fval = self.value(&theta);
        let mut last_l = None;
        for it in 0..200 {
            iterations = it + 1;
            let (g, h) = self.derivatives(&theta);
            let step = match h.conjugate_gradients(&g) {
                Some(step) => step,
                None => {
                    let dense = h.dense();
                    let Some(l) = cholesky(&dense).or_else(|| cholesky_ridge(&dense)) else {
                        break;
                    };
                    let step = solve(&l, &g);
                    last_l = Some(l);
                    step
                }
            };
            let slope: f64 = -g.iter().zip(&step).map(|(a, b)| a * b).sum::<f64>();
            let mut t = 1.0;
            let mut accepted = false;
            for _ in 0..60 {
                let cand: Vec<f64> = theta.iter().zip(&step).map(|(a, s)| a - t * s).collect();
                let fc = self.value(&cand);
                if fc <= fval + 1e-4 * t * slope || (fc - fval).abs() <= 1e-12 * fval.abs().max(1.0)
                {
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
        let h = self.derivatives(&theta).1.dense();
        let l = cholesky(&h).or_else(|| cholesky_ridge(&h)).or(last_l);
        drop(h);
        let mut inv = l
            .as_ref()
            .map(inverse)
            .unwrap_or_else(|| Matrix::zeros(self.nparams));
        // The gauge penalties fix levels the data leave free; remove what
        // they add to the covariance (project onto `Σ u_k θ_k = 0`), so that
        // it is the covariance of the constrained estimate.
        for (_, u) in &self.gauges {
            project_out(&mut inv, u);
        }
        (theta, iterations, inv)
    }

    /// The meat of the robust (sandwich, Huber–White) covariance: the sum
    /// over games of the outer product of each game's score (the gradient
    /// of its log-likelihood) at `theta`. A game of expectation `p` and
    /// score `s` moves `K (s - p)` along `e_first - e_second` (+ its seat
    /// parameter); over a cell's games `Σ (s - p)² = x2 - 2 p x + w p²`.
    /// The games' part is multiplied by `games_factor` (HC1's). 3-player
    /// choice events add their model information times `phi` (the
    /// dispersion's variance, not a robust one: docs/ratings.md, "Extreme
    /// tables").
    fn score_outer_products(&self, theta: &[f64], games_factor: f64, phi: f64) -> Matrix {
        let mut b = Matrix::zeros(self.nparams);
        for c in self.cells {
            let Some((first, second, seat, d)) = self.diff(theta, c) else {
                continue;
            };
            let p = sigmoid(K * d);
            let squares = (c.x2 - 2.0 * p * c.x + p * p * c.w).max(0.0);
            let idx = [
                Some((first, 1.0)),
                Some((second, -1.0)),
                seat.map(|s| (s, 1.0)),
            ];
            for &(i, si) in idx.iter().flatten() {
                for &(j, sj) in idx.iter().flatten() {
                    b.add(i, j, si * sj * K * K * squares * games_factor);
                }
            }
        }
        for c in self.choices {
            let (u, params) = self.strengths(theta, c);
            let (_, hu) = c.derivatives(&u);
            for i in 0..c.size {
                for pi in params[i].iter().flatten() {
                    for j in 0..c.size {
                        for pj in params[j].iter().flatten() {
                            b.add(*pi, *pj, phi * hu[i][j]);
                        }
                    }
                }
            }
        }
        b
    }

    /// Pearson X² of the evidence at `theta`.
    fn pearson(&self, theta: &[f64]) -> f64 {
        let mut x2 = 0.0;
        for c in self.cells {
            if let Some((_, _, _, d)) = self.diff(theta, c) {
                let p = sigmoid(K * d);
                let v = p * (1.0 - p);
                if v > 1e-12 {
                    x2 += (c.x2 - 2.0 * p * c.x + p * p * c.w) / v;
                }
            }
        }
        for c in self.choices {
            x2 += c.pearson(&self.strengths(theta, c).0);
        }
        x2
    }
}

/// `G <- P G Pᵀ` with `P = I - v uᵀ / (u·v)`, `v` the indicator of the
/// parameters in `u`: the covariance of the estimate under `uᵀθ = 0` from
/// any generalised inverse `G` (the null direction of the curvature is `v`).
fn project_out(g: &mut Matrix, u: &[(usize, f64)]) {
    let n = g.n;
    let uv: f64 = u.iter().map(|&(_, w)| w).sum();
    if u.is_empty() || uv.abs() < 1e-300 {
        return;
    }
    // gu = G u, ugu = uᵀ G u
    let mut gu = vec![0.0; n];
    for i in 0..n {
        gu[i] = u.iter().map(|&(k, w)| g.get(i, k) * w).sum();
    }
    let ugu: f64 = u.iter().map(|&(k, w)| w * gu[k]).sum();
    let mut inv_set = vec![false; n];
    for &(k, _) in u {
        inv_set[k] = true;
    }
    for i in 0..n {
        for j in 0..n {
            let vi = if inv_set[i] { 1.0 } else { 0.0 };
            let vj = if inv_set[j] { 1.0 } else { 0.0 };
            let d = -vi * gu[j] / uv - gu[i] * vj / uv + vi * vj * ugu / (uv * uv);
            if d != 0.0 {
                g.add(i, j, d);
            }
        }
    }
}

/// The gauge weight: about the curvature of one bot's rating, so that the
/// penalty neither dominates nor vanishes in the Newton steps.
fn gauge_lambda(weight: f64, size: usize) -> f64 {
    K * K * 0.25 * weight.max(1.0) / size.max(1) as f64
}

/// Union-find root.
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The smallest quasi-likelihood dispersion used. A draw rate `d` between
/// equal bots makes the true value `1 - d`, so a floor must be low: at
/// 0.25 (until 2026-11) intervals of close bots drawing 93% of their games
/// covered the truth 100% of the time instead of 95%
/// (`examples/draw_coverage.rs`, docs/ratings.md).
const DISPERSION_MIN: f64 = 0.01;

/// A choice event restricted to the members in its winners' strongly
/// connected component (`comp_of`): in the limit that defines the
/// estimate when it does not exist, the members of components below have
/// probability 0 and drop out. `None` when fewer than two members remain.
fn within_component(c: &Choice, comp_of: &dyn Fn(usize) -> Option<usize>) -> Option<Choice> {
    let winner = (0..c.size).find(|&k| c.y[k] > 0.0)?;
    let home = comp_of(c.members[winner])?;
    let mut out = Choice {
        members: [usize::MAX; 3],
        size: 0,
        seat0: None,
        y: [0.0; 3],
        q: [0.0; 3],
        ..*c
    };
    for k in 0..c.size {
        if comp_of(c.members[k]) == Some(home) {
            let n = out.size;
            out.members[n] = c.members[k];
            out.y[n] = c.y[k];
            out.q[n] = c.q[k];
            if c.seat0 == Some(k) {
                out.seat0 = Some(n);
            }
            out.size += 1;
        }
    }
    (out.size >= 2).then_some(out)
}

/// The results of a choice event between members of different components,
/// as pairwise cells for placing the components (stage 2 of `fit`): each
/// winner beats each member of another component with its wins shared
/// over the other members. No seat advantage (group out of range).
fn cross_cells(c: &Choice, comp_of: &dyn Fn(usize) -> Option<usize>) -> Vec<Cell> {
    let mut out = Vec::new();
    let others = (c.size.max(2) - 1) as f64;
    for i in (0..c.size).filter(|&i| c.y[i] > 0.0) {
        for j in (0..c.size).filter(|&j| j != i) {
            let (a, b) = (c.members[i], c.members[j]);
            if comp_of(a) != comp_of(b) {
                let w = c.y[i] / others;
                out.push(Cell {
                    first: a,
                    second: b,
                    group: usize::MAX,
                    w,
                    x: w,
                    x2: w,
                });
            }
        }
    }
    out
}

/// Fits `nbots` ratings (and one seat parameter for each of the `ngroups`
/// variant groups where `seat_groups` says so and there are games) to
/// the pairwise `cells` and the 3-player `choices`, jointly.
///
/// When the maximum-likelihood estimate exists (the "scored against"
/// graph is strongly connected) this is plain maximum likelihood. When it
/// does not, the estimate is the limit that Ordo uses for perfect scores,
/// generalised: (1) the ratings inside each strongly connected component
/// are the maximum-likelihood ratings of the games inside it (in the limit
/// the games between components, all won by the same side, carry no
/// information on them); (2) the components are then placed by maximum
/// likelihood on the games between them, with the internal ratings fixed
/// and, between every two components that met, half a point moved from
/// the winner to the loser ("as if one of the games was a draw", Ordo's
/// rule for a perfect winner; at most a quarter of the games between
/// them, so that one won game still leaves the winner ahead). Components that never met, even through
/// others, cannot be compared: each such group is centred on 0.
#[cfg(test)]
pub fn fit(
    nbots: usize,
    ngroups: usize,
    cells: &[Cell],
    choices: &[Choice],
    seat_groups: &[bool],
    intervals: IntervalMethod,
) -> FitOutput {
    fit_with_reference(nbots, ngroups, cells, choices, seat_groups, intervals, None)
}

/// `fit`, with the group of bots that met `reference` (the anchor) as the
/// reference group 0 when `reference` is rated; otherwise, as `fit`, the
/// largest. The core (whose average is the default zero) and the bots that
/// lean on the prior are taken inside the reference group, so that an
/// anchor in a smaller group leaves its own group unflagged and flags the
/// others `disconnected`, as they are centred.
pub fn fit_with_reference(
    nbots: usize,
    ngroups: usize,
    cells: &[Cell],
    choices: &[Choice],
    seat_groups: &[bool],
    intervals: IntervalMethod,
    reference: Option<usize>,
) -> FitOutput {
    let choices: Vec<&Choice> = choices.iter().filter(|c| c.w > 0.0).collect();
    let params = Params::of(nbots, ngroups, cells, &choices, seat_groups);
    let comps = Components::of(&params, cells, &choices);
    let inside = fit_inside(&params, &comps, cells, &choices, intervals);
    let mut out = output_of(&params, &inside);
    for &i in &params.param_bot {
        let q = params.bot_param[i].unwrap_or(0);
        out.scored[i] = comps.scored[q];
        out.conceded[i] = comps.conceded[q];
    }
    if comps.count() > 1 {
        let reference = reference.and_then(|b| comps.of_bot(&params, b));
        place_components(
            &mut out,
            &params,
            &comps,
            (&inside.theta, reference),
            cells,
            &choices,
        );
    }
    out
}

/// The unknowns of a fit: one rating per bot with evidence, then one seat
/// advantage per variant group with evidence whose seat is fitted.
struct Params {
    nbots: usize,
    ngroups: usize,
    /// Whether each bot has any evidence.
    rated: Vec<bool>,
    /// Each bot's parameter, if it is rated.
    bot_param: Vec<Option<usize>>,
    /// The bot of each rating parameter (the first `m()` parameters).
    param_bot: Vec<usize>,
    /// Each group's seat parameter, if it is fitted.
    group_param: Vec<Option<usize>>,
    /// Ratings and seat advantages.
    nparams: usize,
}

impl Params {
    /// Which bots and groups have evidence, numbered.
    fn of(
        nbots: usize,
        ngroups: usize,
        cells: &[Cell],
        choices: &[&Choice],
        seat_groups: &[bool],
    ) -> Params {
        let mut rated = vec![false; nbots];
        let mut group_used = vec![false; ngroups];
        for c in cells.iter().filter(|c| c.w > 0.0 && c.first != c.second) {
            rated[c.first] = true;
            rated[c.second] = true;
            if c.group < ngroups {
                group_used[c.group] = true;
            }
        }
        for c in choices {
            for &b in &c.members[..c.size] {
                rated[b] = true;
            }
            if c.seat0.is_some() && c.group < ngroups {
                group_used[c.group] = true;
            }
        }
        let mut bot_param = vec![None; nbots];
        let mut param_bot = Vec::new();
        for (i, r) in rated.iter().enumerate() {
            if *r {
                bot_param[i] = Some(param_bot.len());
                param_bot.push(i);
            }
        }
        let mut group_param = vec![None; ngroups];
        let mut nparams = param_bot.len();
        for (gi, u) in group_used.iter().enumerate() {
            if *u && seat_groups.get(gi).copied().unwrap_or(false) {
                group_param[gi] = Some(nparams);
                nparams += 1;
            }
        }
        Params {
            nbots,
            ngroups,
            rated,
            bot_param,
            param_bot,
            group_param,
            nparams,
        }
    }

    /// The rated bots (their ratings are the first parameters).
    fn m(&self) -> usize {
        self.param_bot.len()
    }
}

/// The strongly connected components of the "scored against" graph over
/// the rated bots: the maximum-likelihood estimate exists when there is
/// one (Zermelo 1929; Hunter 2004, assumption 1).
struct Components {
    /// Each rating parameter's component.
    of: Vec<usize>,
    /// Rated bots per component.
    size: Vec<usize>,
    /// Each rating parameter: whether it scored against another, and
    /// whether another scored against it.
    scored: Vec<bool>,
    conceded: Vec<bool>,
}

impl Components {
    fn of(p: &Params, cells: &[Cell], choices: &[&Choice]) -> Components {
        let adj = scored_against(p, cells, choices);
        let of = scc(p.m(), &adj);
        let count = of.iter().copied().max().map_or(0, |c| c + 1);
        let mut size = vec![0usize; count];
        of.iter().for_each(|&c| size[c] += 1);
        let scored = adj.iter().map(|out| !out.is_empty()).collect();
        let mut conceded = vec![false; p.m()];
        adj.iter().flatten().for_each(|&b| conceded[b] = true);
        Components {
            of,
            size,
            scored,
            conceded,
        }
    }

    fn count(&self) -> usize {
        self.size.len()
    }

    /// The component of bot `b`, if it is rated.
    fn of_bot(&self, p: &Params, b: usize) -> Option<usize> {
        p.bot_param.get(b).copied().flatten().map(|q| self.of[q])
    }
}

/// The graph "a scored against b" over the rating parameters. In a choice
/// event every member who won scored against the others.
fn scored_against(p: &Params, cells: &[Cell], choices: &[&Choice]) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); p.m()];
    for c in cells.iter().filter(|c| c.w > 0.0) {
        if let (Some(a), Some(b)) = (p.bot_param[c.first], p.bot_param[c.second]) {
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
    for c in choices {
        for i in (0..c.size).filter(|&i| c.y[i] > 0.0) {
            for j in (0..c.size).filter(|&j| j != i) {
                let (a, b) = (p.bot_param[c.members[i]], p.bot_param[c.members[j]]);
                if let (Some(a), Some(b)) = (a, b) {
                    if a != b {
                        adj[a].push(b);
                    }
                }
            }
        }
    }
    adj
}

/// What stage 1 of `fit` found: every parameter, fitted inside the
/// components.
struct Inside {
    theta: Vec<f64>,
    iterations: usize,
    /// The covariance of `theta`: the inverse of the curvature times the
    /// dispersion.
    cov: Matrix,
    /// The robust (sandwich) covariance of `theta`, when asked for.
    robust: Option<Matrix>,
    dispersion: f64,
}

/// Stage 1 of `fit`: maximum likelihood inside each component (all of it
/// when the estimate exists), one gauge per component.
fn fit_inside(
    p: &Params,
    comps: &Components,
    cells: &[Cell],
    choices: &[&Choice],
    intervals: IntervalMethod,
) -> Inside {
    fit_inside_with(p, comps, cells, choices, intervals, PRIOR_DRAWS)
}

/// How far (Elo) a seat advantage may move when its virtual draw weighs a
/// millionth of [`PRIOR_DRAWS`] and still have a finite estimate: one
/// moves by a fraction of an Elo; one the games do not bound, by
/// `ln(10^6) / K`, some 2,400 Elo.
const UNBOUNDED_SHIFT: f64 = 100.0;

/// The seat groups whose advantage has no finite estimate although the
/// first seat did not win (or lose) every game: the games separate by seat
/// once the ratings are free (Hackaback: between random bots the first
/// seat always wins, and a strong bot wins from either seat, so the
/// strong bot, placed on its own, leaves only games the first seat won).
/// Each is fitted with its virtual draw and with a millionth of it: the
/// estimate moves by more than [`UNBOUNDED_SHIFT`] only where it rests on
/// the draw alone.
pub fn seats_without_estimate(
    nbots: usize,
    ngroups: usize,
    cells: &[Cell],
    choices: &[Choice],
    seat_groups: &[bool],
) -> Vec<bool> {
    let choices: Vec<&Choice> = choices.iter().filter(|c| c.w > 0.0).collect();
    let params = Params::of(nbots, ngroups, cells, &choices, seat_groups);
    let comps = Components::of(&params, cells, &choices);
    let at = |weight: f64| {
        fit_inside_with(
            &params,
            &comps,
            cells,
            &choices,
            IntervalMethod::Dispersion,
            weight,
        )
        .theta
    };
    let (held, free) = (at(PRIOR_DRAWS), at(PRIOR_DRAWS * 1e-6));
    (0..ngroups)
        .map(|g| {
            // A fit that did not converge (not a number) is no estimate.
            params.group_param[g].is_some_and(|k| {
                let shift = (held[k] - free[k]).abs();
                shift.is_nan() || shift > UNBOUNDED_SHIFT
            })
        })
        .collect()
}

/// [`fit_inside`] with the seat parameters' virtual draw weighing
/// `prior_draws`.
fn fit_inside_with(
    p: &Params,
    comps: &Components,
    cells: &[Cell],
    choices: &[&Choice],
    intervals: IntervalMethod,
    prior_draws: f64,
) -> Inside {
    let inside: Vec<Cell> = cells
        .iter()
        .filter(|c| match (p.bot_param[c.first], p.bot_param[c.second]) {
            (Some(a), Some(b)) => a != b && comps.of[a] == comps.of[b],
            _ => false,
        })
        .copied()
        .collect();
    let comp_of = |b: usize| comps.of_bot(p, b);
    let inside_choices: Vec<Choice> = choices
        .iter()
        .filter_map(|c| within_component(c, &comp_of))
        .collect();
    let problem = Problem {
        cells: &inside,
        choices: &inside_choices,
        bot_param: p.bot_param.clone(),
        bot_base: vec![0.0; p.nbots],
        group_param: p.group_param.clone(),
        group_base: vec![0.0; p.ngroups],
        nparams: p.nparams,
        seat_prior: (p.m()..p.nparams).collect(),
        prior_draws,
        gauges: component_gauges(p, comps, &inside, &inside_choices),
    };
    let (theta, iterations, inv) = problem.solve();
    let dispersion = dispersion(&problem, &theta, p, comps.count());
    let robust = (intervals == IntervalMethod::Robust)
        .then(|| robust_covariance(&problem, &theta, &inv, dispersion, p, comps.count()));
    let mut cov = inv;
    cov.a.iter_mut().for_each(|v| *v *= dispersion);
    Inside {
        theta,
        iterations,
        cov,
        robust,
        dispersion,
    }
}

/// The robust covariance of stage 1's estimate (Huber 1967; White 1980):
/// the sandwich `H⁻¹ B H⁻¹`, `H⁻¹` the inverse curvature `inv` and `B`
/// the games' outer products of scores (`score_outer_products`), with the
/// small-sample factor `N / (N - k)` of HC1 on the games (`N` the weight of
/// the evidence, `k` the free parameters; the choice events' part, `φ`
/// times their information, has its own).
fn robust_covariance(
    stage1: &Problem,
    theta: &[f64],
    inv: &Matrix,
    phi: f64,
    p: &Params,
    ncomp: usize,
) -> Matrix {
    let (n, k) = weight_and_free(stage1, p, ncomp);
    let hc1 = if n - k >= 1.0 { n / (n - k) } else { 1.0 };
    sandwich(inv, &stage1.score_outer_products(theta, hc1, phi))
}

/// The weight of stage 1's evidence (games, and the degrees of freedom of
/// the choice events) and its free parameters.
fn weight_and_free(stage1: &Problem, p: &Params, ncomp: usize) -> (f64, f64) {
    let inside_w: f64 = stage1.cells.iter().map(|c| c.w).sum::<f64>()
        + stage1.choices.iter().map(|c| c.dof()).sum::<f64>();
    let m = p.m();
    let free = ((m - ncomp.min(m)) + (p.nparams - m)) as f64;
    (inside_w, free)
}

/// One gauge per component (the level of each is free in stage 1),
/// weighted by the evidence inside it.
fn component_gauges(
    p: &Params,
    comps: &Components,
    inside: &[Cell],
    inside_choices: &[Choice],
) -> Vec<(f64, Vec<(usize, f64)>)> {
    let mut weight = vec![0.0; comps.count()];
    for c in inside {
        if let Some(a) = p.bot_param[c.first] {
            weight[comps.of[a]] += c.w;
        }
    }
    for c in inside_choices {
        if let Some(k) = comps.of_bot(p, c.members[0]) {
            weight[k] += c.w;
        }
    }
    let mut members: Vec<Vec<(usize, f64)>> = vec![Vec::new(); comps.count()];
    for q in 0..p.m() {
        members[comps.of[q]].push((q, 1.0));
    }
    members
        .into_iter()
        .enumerate()
        .map(|(c, u)| (gauge_lambda(weight[c], comps.size[c]), u))
        .collect()
}

/// The quasi-likelihood dispersion of stage 1: Pearson X² over the
/// evidence inside the components, per degree of freedom (one per
/// 2-player game, members - 1 per choice event: the expectation of its
/// Pearson X²); 1 with fewer than 30.
fn dispersion(stage1: &Problem, theta: &[f64], p: &Params, ncomp: usize) -> f64 {
    let x2 = stage1.pearson(theta);
    let (inside_w, free) = weight_and_free(stage1, p, ncomp);
    let dof = inside_w - free;
    if dof >= 30.0 {
        (x2 / dof).clamp(DISPERSION_MIN, 4.0)
    } else {
        1.0
    }
}

/// The output of stage 1 alone, by bot and group: the whole fit when the
/// estimate exists (one group of bots, all in the core, none leaning on
/// the prior).
fn output_of(p: &Params, s: &Inside) -> FitOutput {
    let nbots = p.nbots;
    let mut elo = vec![0.0; nbots];
    for &i in &p.param_bot {
        elo[i] = s.theta[p.bot_param[i].unwrap_or(0)];
    }
    let by_bot = |m: &Matrix| {
        let mut cov = Matrix::zeros(nbots);
        for &i in &p.param_bot {
            let a = p.bot_param[i].unwrap_or(0);
            for &j in &p.param_bot {
                let b = p.bot_param[j].unwrap_or(0);
                cov.a[i * nbots + j] = m.get(a, b);
            }
        }
        cov
    };
    // The seat's variance: the larger of the two, as a bot's (see
    // `FitOutput::robust_cov`).
    let seat_var = |g: usize| {
        let robust = s.robust.as_ref().map_or(0.0, |r| r.get(g, g));
        s.cov.get(g, g).max(robust).max(0.0)
    };
    let seat = p
        .group_param
        .iter()
        .map(|g| g.map(|g| (s.theta[g], seat_var(g).sqrt())))
        .collect();
    FitOutput {
        rated: p.rated.clone(),
        elo,
        cov: by_bot(&s.cov),
        robust_cov: s.robust.as_ref().map(by_bot),
        seat,
        regularized: false,
        leans_on_prior: vec![false; nbots],
        scored: vec![false; nbots],
        conceded: vec![false; nbots],
        group: vec![0; nbots],
        groups: usize::from(p.m() > 0),
        core: p.rated.clone(),
        dispersion: s.dispersion,
        iterations: s.iterations,
    }
}

/// Stage 2 of `fit`, when the estimate does not exist: places the
/// components by maximum likelihood on the games between them (`theta`,
/// stage 1's, fixed inside), moves `out`'s ratings and covariance by it,
/// and says who leans on the prior, who is the core and which group of
/// bots each belongs to.
fn place_components(
    out: &mut FitOutput,
    p: &Params,
    comps: &Components,
    (theta, reference): (&[f64], Option<usize>),
    cells: &[Cell],
    choices: &[&Choice],
) {
    let comp_of = |b: usize| comps.of_bot(p, b);
    let cross: Vec<Cell> = choices
        .iter()
        .flat_map(|c| cross_cells(c, &comp_of))
        .collect();
    let (weak, between) = meetings(p, comps, cells, &cross);
    let outside = half_point_cells(p, comps, cells, &cross, &between);
    let (offset, iterations, inv) = between_problem(p, comps, theta, &outside, &weak).solve();
    out.iterations += iterations;
    let moves = offsets_moves(p, comps, (theta, &offset), &outside, &inv);
    out.cov = placed_covariance(p, comps, &out.cov, &moves, &inv);
    if let Some(r) = out.robust_cov.as_ref() {
        out.robust_cov = Some(placed_covariance(p, comps, r, &moves, &inv));
    }
    for &i in &p.param_bot {
        out.elo[i] += offset[comps.of[p.bot_param[i].unwrap_or(0)]];
    }
    // The half-point rule placed something only where components met:
    // groups that never met, each strongly connected, need no prior.
    out.regularized = weak.iter().any(|u| u.len() > 1);
    label_bots(out, p, comps, &weak, reference);
}

/// How stage 2's offsets move with stage 1's ratings (the implicit
/// function's derivative at the optimum, `-A⁻¹ B`: `A` the offsets'
/// curvature, whose constrained inverse is `inv`, `B` the curvature
/// between the offsets and the ratings of the bots that played between
/// components): by component, the bots (by index) it moves with and how
/// much. A perfect winner is placed against the bots it met: its rating
/// moves with theirs, and so does its uncertainty (Ordo's simulation
/// carries it the same way).
fn offsets_moves(
    p: &Params,
    comps: &Components,
    (theta, offset): (&[f64], &[f64]),
    outside: &[Cell],
    inv: &Matrix,
) -> Vec<Vec<(usize, f64)>> {
    let n = comps.count();
    // B, by component: the bots of its games with other components.
    let mut b: Vec<BTreeMap<usize, f64>> = vec![BTreeMap::new(); n];
    for c in outside.iter().filter(|c| c.w > 0.0) {
        let (Some(qa), Some(qb)) = (p.bot_param[c.first], p.bot_param[c.second]) else {
            continue;
        };
        let (ca, cb) = (comps.of[qa], comps.of[qb]);
        let seat = p
            .group_param
            .get(c.group)
            .copied()
            .flatten()
            .map_or(0.0, |g| theta[g]);
        let d = theta[qa] + offset[ca] - theta[qb] - offset[cb] + seat;
        let pr = sigmoid(K * d);
        let h = K * K * c.w * pr * (1.0 - pr);
        for (comp, sign) in [(ca, 1.0), (cb, -1.0)] {
            *b[comp].entry(c.first).or_default() += sign * h;
            *b[comp].entry(c.second).or_default() -= sign * h;
        }
    }
    (0..n)
        .map(|c| {
            let mut row: BTreeMap<usize, f64> = BTreeMap::new();
            for (k, bk) in b.iter().enumerate() {
                let ick = inv.get(c, k);
                if ick != 0.0 {
                    for (&bot, &v) in bk {
                        *row.entry(bot).or_default() -= ick * v;
                    }
                }
            }
            row.into_iter().filter(|(_, v)| *v != 0.0).collect()
        })
        .collect()
}

/// The covariance of the placed ratings `θ_i + o_c(i)(θ)`, bot x bot:
/// stage 1's `inside` carried through the offsets' `moves` (the delta
/// method, `J Σ Jᵀ` with `J = I + ∂o/∂θ`), plus stage 2's own `inv`.
fn placed_covariance(
    p: &Params,
    comps: &Components,
    inside: &Matrix,
    moves: &[Vec<(usize, f64)>],
    inv: &Matrix,
) -> Matrix {
    let nbots = p.nbots;
    let comp = |i: usize| comps.of[p.bot_param[i].unwrap_or(0)];
    // (∂o/∂θ) Σ: by component, by bot.
    let moved: Vec<Vec<f64>> = moves
        .iter()
        .map(|row| {
            let mut v = vec![0.0; nbots];
            for &(l, d) in row {
                for &j in &p.param_bot {
                    v[j] += d * inside.get(l, j);
                }
            }
            v
        })
        .collect();
    let n = comps.count();
    let mut both = Matrix::zeros(n);
    for (c, row) in moves.iter().enumerate() {
        for (k, mk) in moved.iter().enumerate() {
            both.add(c, k, row.iter().map(|&(l, d)| d * mk[l]).sum());
        }
    }
    let mut cov = Matrix::zeros(nbots);
    for &i in &p.param_bot {
        let ci = comp(i);
        for &j in &p.param_bot {
            let cj = comp(j);
            cov.a[i * nbots + j] =
                inside.get(i, j) + moved[ci][j] + moved[cj][i] + both.get(ci, cj) + inv.get(ci, cj);
        }
    }
    cov
}

/// The weight of the games between two components, by their ids (the
/// smaller first).
type Between = BTreeMap<(usize, usize), f64>;

/// The groups of components that met, directly or through others (each
/// component with its size, the groups in a fixed order), and the weight
/// of the games between every two components that met.
fn meetings(
    p: &Params,
    comps: &Components,
    cells: &[Cell],
    cross: &[Cell],
) -> (Vec<Vec<(usize, f64)>>, Between) {
    let mut parent: Vec<usize> = (0..comps.count()).collect();
    let mut between = Between::new();
    for c in cells.iter().chain(cross).filter(|c| c.w > 0.0) {
        if let (Some(a), Some(b)) = (p.bot_param[c.first], p.bot_param[c.second]) {
            let (ca, cb) = (comps.of[a], comps.of[b]);
            if ca != cb {
                *between.entry((ca.min(cb), ca.max(cb))).or_default() += c.w;
                let (ra, rb) = (root(&mut parent, ca), root(&mut parent, cb));
                parent[ra] = rb;
            }
        }
    }
    let mut weak: BTreeMap<usize, Vec<(usize, f64)>> = BTreeMap::new();
    for c in 0..comps.count() {
        let r = root(&mut parent, c);
        weak.entry(r).or_default().push((c, comps.size[c] as f64));
    }
    (weak.into_values().collect(), between)
}

/// The games between components as stage 2 fits them: between every two
/// components that met, half a point moves from the winner to the loser,
/// shared by weight; at most a quarter of their games, so that the winner
/// of a single game still ends up ahead (score 3/4).
fn half_point_cells(
    p: &Params,
    comps: &Components,
    cells: &[Cell],
    cross: &[Cell],
    between: &Between,
) -> Vec<Cell> {
    cells
        .iter()
        .chain(cross)
        .filter_map(|c| {
            let (a, b) = (p.bot_param[c.first]?, p.bot_param[c.second]?);
            let (ca, cb) = (comps.of[a], comps.of[b]);
            if ca == cb || c.w <= 0.0 {
                return None;
            }
            let total = between.get(&(ca.min(cb), ca.max(cb))).copied()?;
            let shift = (0.5f64).min(0.25 * total) * c.w / total;
            let x = if c.x > 0.5 * c.w {
                c.x - shift
            } else {
                c.x + shift
            };
            Some(Cell { x, ..*c })
        })
        .collect()
}

/// Stage 2's problem: one offset per component, the ratings inside and
/// the seat advantages fixed at stage 1's `theta`, one gauge per group of
/// components that met (`weak`).
fn between_problem<'a>(
    p: &Params,
    comps: &Components,
    theta: &[f64],
    outside: &'a [Cell],
    weak: &[Vec<(usize, f64)>],
) -> Problem<'a> {
    let mut comp_param = vec![None; p.nbots];
    let mut base = vec![0.0; p.nbots];
    for &i in &p.param_bot {
        let q = p.bot_param[i].unwrap_or(0);
        comp_param[i] = Some(comps.of[q]);
        base[i] = theta[q];
    }
    let total_between: f64 = outside.iter().map(|c| c.w).sum();
    let gauges: Vec<(f64, Vec<(usize, f64)>)> = weak
        .iter()
        .map(|u| (gauge_lambda(total_between, comps.count()), u.clone()))
        .collect();
    Problem {
        cells: outside,
        choices: &[],
        bot_param: comp_param,
        bot_base: base,
        group_param: vec![None; p.ngroups],
        group_base: (0..p.ngroups)
            .map(|g| p.group_param[g].map_or(0.0, |k| theta[k]))
            .collect(),
        nparams: comps.count(),
        seat_prior: Vec::new(),
        prior_draws: PRIOR_DRAWS,
        gauges,
    }
}

/// After stage 2: the groups of components that met are numbered, 0 the
/// reference (the group of the component `reference`, if given, else the
/// largest); inside it, the bots outside its largest component lean on the
/// prior, and the core is that component (if it has two bots or more; else
/// the whole reference group). Bots of other groups are not core: they are
/// centred on their own.
fn label_bots(
    out: &mut FitOutput,
    p: &Params,
    comps: &Components,
    weak: &[Vec<(usize, f64)>],
    reference: Option<usize>,
) {
    let (ncomp, size) = (comps.count(), &comps.size);
    let mut weak_index = vec![0usize; ncomp];
    let mut weak_size: Vec<usize> = Vec::new();
    for (k, u) in weak.iter().enumerate() {
        for &(c, _) in u {
            weak_index[c] = k;
        }
        weak_size.push(u.iter().map(|&(c, _)| size[c]).sum());
    }
    out.groups = weak_size.len();
    // Ties between groups go to the one with the first bot (by the
    // caller's order: by name), not to an order of the components.
    let mut weak_first = vec![usize::MAX; weak_size.len()];
    for (q, &c) in comps.of.iter().enumerate() {
        let k = weak_index[c];
        weak_first[k] = weak_first[k].min(q);
    }
    let main = match reference {
        Some(c) => weak_index[c],
        None => (0..weak_size.len())
            .max_by_key(|&k| (weak_size[k], usize::MAX - weak_first[k]))
            .unwrap_or(0),
    };
    // Ties between components of one size go to the one with the first
    // bot too (a component's number is the search's order).
    let mut comp_first = vec![usize::MAX; ncomp];
    for (q, &c) in comps.of.iter().enumerate() {
        comp_first[c] = comp_first[c].min(q);
    }
    let biggest = (0..ncomp)
        .filter(|&c| weak_index[c] == main)
        .max_by_key(|&c| (size[c], usize::MAX - comp_first[c]))
        .unwrap_or(0);
    for &i in &p.param_bot {
        let c = comps.of[p.bot_param[i].unwrap_or(0)];
        let in_main = weak_index[c] == main;
        out.leans_on_prior[i] = c != biggest;
        out.core[i] = in_main && (c == biggest || size[biggest] < 2);
        // Group 0 is the main group; the others follow in order.
        let k = weak_index[c];
        out.group[i] = if k == main {
            0
        } else if k < main {
            k + 1
        } else {
            k
        };
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
        let out = fit(
            2,
            1,
            &[cell(0, 1, 40.0, 30.0)],
            &[],
            &[false],
            IntervalMethod::Dispersion,
        );
        let want = 400.0 * 3f64.log10();
        assert!(!out.regularized);
        assert!(out.iterations < 30);
        assert!(((out.elo[0] - out.elo[1]) - want).abs() < 1e-6);
    }

    #[test]
    fn a_perfect_score_is_finite_and_regularized() {
        let out = fit(
            2,
            1,
            &[cell(0, 1, 5.0, 5.0)],
            &[],
            &[false],
            IntervalMethod::Dispersion,
        );
        assert!(out.regularized);
        assert!(out.elo.iter().all(|e| e.is_finite()));
        assert!(out.elo[0] > out.elo[1]);
        assert!(out.cov.a.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn groups_that_never_met_need_no_half_point_rule_and_follow_the_reference() {
        // 0-1-2 play each other (each scoring against each), 3-4 likewise:
        // two groups, each strongly connected.
        let cells = [
            cell(0, 1, 4.0, 2.0),
            cell(1, 2, 4.0, 2.0),
            cell(2, 0, 4.0, 1.0),
            cell(3, 4, 4.0, 3.0),
        ];
        let out = fit(5, 1, &cells, &[], &[false], IntervalMethod::Dispersion);
        assert!(!out.regularized, "no component was placed by the rule");
        assert_eq!(out.groups, 2);
        assert_eq!(out.group, vec![0, 0, 0, 1, 1]);
        assert_eq!(out.core, vec![true, true, true, false, false]);
        // The anchor's group is the reference, whatever its size.
        let out = fit_with_reference(
            5,
            1,
            &cells,
            &[],
            &[false],
            IntervalMethod::Dispersion,
            Some(4),
        );
        assert_eq!(out.group, vec![1, 1, 1, 0, 0]);
        assert_eq!(out.core, vec![false, false, false, true, true]);
        assert!(out.leans_on_prior[..3].iter().all(|&l| l));
        assert!(!out.leans_on_prior[3] && !out.leans_on_prior[4]);
        // Groups of one size: the one with the first bot is the reference.
        let pairs = [cell(2, 3, 2.0, 1.0), cell(0, 1, 2.0, 1.0)];
        let out = fit(4, 1, &pairs, &[], &[false], IntervalMethod::Dispersion);
        assert_eq!(out.group, vec![0, 0, 1, 1]);
        let pairs = [cell(3, 2, 2.0, 1.0), cell(1, 0, 2.0, 1.0)];
        let out = fit(4, 1, &pairs, &[], &[false], IntervalMethod::Dispersion);
        assert_eq!(out.group, vec![0, 0, 1, 1]);
        // A perfect winner over 3-4 is placed by the rule.
        let mut cells = cells.to_vec();
        cells.push(cell(5, 3, 2.0, 2.0));
        let out = fit(6, 1, &cells, &[], &[false], IntervalMethod::Dispersion);
        assert!(out.regularized);
        // With a perfect loser too, 3-4-5-6 is the largest group, and its
        // own largest component 3-4 (not the larger 0-1-2 of the other
        // group) is the core: 3 and 4 do not lean on the prior.
        cells.push(cell(4, 6, 2.0, 2.0));
        let out = fit(7, 1, &cells, &[], &[false], IntervalMethod::Dispersion);
        assert_eq!(out.group, vec![1, 1, 1, 0, 0, 0, 0]);
        assert_eq!(
            out.core,
            vec![false, false, false, true, true, false, false]
        );
        assert_eq!(
            out.leans_on_prior[3..],
            [false, false, true, true],
            "{:?}",
            out.leans_on_prior
        );
    }

    /// A league of `n` bots over two variant groups with seat parameters,
    /// random pairs and results, and a few 3-player events: every kind of
    /// term of the curvature.
    fn league(n: usize, games: usize) -> (Vec<Cell>, Vec<Choice>) {
        let mut s = 34u64;
        let mut next = |m: usize| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) as usize) % m
        };
        let mut cells = Vec::new();
        for k in 0..games {
            let a = next(n);
            let b = (a + 1 + next(n - 1)) % n;
            // The stronger bot (higher index) scores more often.
            let x = if next(n + 4) < b + 2 {
                1.0
            } else {
                next(2) as f64 * 0.5
            };
            cells.push(Cell {
                first: a,
                second: b,
                group: k % 2,
                w: 1.0,
                x,
                x2: x * x,
            });
        }
        let choices = (0..n / 3)
            .map(|k| Choice {
                group: 1,
                members: [k, k + n / 3, k + 2 * (n / 3)],
                size: 3,
                seat0: Some(k % 3),
                w: 4.0,
                y: [1.0, 1.0, 2.0],
                q: [1.0, 1.0, 2.0],
            })
            .collect();
        (cells, choices)
    }

    /// The problem of stage 1 of `fit` for `league`.
    fn problem<'a>(n: usize, cells: &'a [Cell], choices: &'a [Choice]) -> Problem<'a> {
        let refs: Vec<&Choice> = choices.iter().collect();
        let p = Params::of(n, 2, cells, &refs, &[true, true]);
        let comps = Components::of(&p, cells, &refs);
        assert_eq!(comps.count(), 1, "the test league is connected");
        Problem {
            cells,
            choices,
            bot_param: p.bot_param.clone(),
            bot_base: vec![0.0; n],
            group_param: p.group_param.clone(),
            group_base: vec![0.0; 2],
            nparams: p.nparams,
            seat_prior: (p.m()..p.nparams).collect(),
            prior_draws: PRIOR_DRAWS,
            gauges: component_gauges(&p, &comps, cells, choices),
        }
    }

    #[test]
    fn conjugate_gradients_give_the_dense_newton_direction() {
        let (cells, choices) = league(60, 3000);
        let problem = problem(60, &cells, &choices);
        let mut theta: Vec<f64> = (0..problem.nparams).map(|k| k as f64 - 30.0).collect();
        for _ in 0..3 {
            let (g, h) = problem.derivatives(&theta);
            let dense = h.dense();
            let mut hx = vec![0.0; h.n];
            h.times(&g, &mut hx);
            for i in 0..h.n {
                let want: f64 = (0..h.n).map(|j| dense.get(i, j) * g[j]).sum();
                assert!(
                    (hx[i] - want).abs() <= 1e-9 * want.abs().max(1e-6),
                    "H g row {i}"
                );
            }
            let want = solve(&cholesky(&dense).expect("positive definite"), &g);
            let got = h.conjugate_gradients(&g).expect("converges");
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() <= 1e-7 * b.abs().max(1.0), "{a} against {b}");
            }
            theta = theta.iter().zip(&want).map(|(t, s)| t - s).collect();
        }
    }

    #[test]
    fn the_fit_by_conjugate_gradients_is_the_dense_newton_fit() {
        let (cells, choices) = league(40, 2000);
        let problem = problem(40, &cells, &choices);
        let (theta, iterations, inv) = problem.solve();
        assert!(iterations < 20);
        // Newton's method with dense directions from the same start.
        let mut dense = vec![0.0; problem.nparams];
        for _ in 0..50 {
            let (g, h) = problem.derivatives(&dense);
            let l = cholesky(&h.dense()).expect("positive definite");
            let step = solve(&l, &g);
            dense.iter_mut().zip(&step).for_each(|(t, s)| *t -= s);
            if step.iter().all(|s| s.abs() < 1e-10) {
                break;
            }
        }
        for (a, b) in theta.iter().zip(&dense) {
            assert!((a - b).abs() < 1e-6, "{a} against {b}");
        }
        let (_, h) = problem.derivatives(&dense);
        let mut want = inverse(&cholesky(&h.dense()).expect("positive definite"));
        for (_, u) in &problem.gauges {
            project_out(&mut want, u);
        }
        for (a, b) in inv.a.iter().zip(&want.a) {
            assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-3), "{a} against {b}");
        }
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
