#!/usr/bin/env python3
"""Independent reference values for the pentanomial GSPRT log-likelihood ratio
(src/ratings/sprt.rs unit tests, docs/ratings.md "SPRT").

Standard library only. Run: python3 tests/data/sprt/llr_reference.py

The LLR of pentanomial counts c (pair scores a = 0, 1/4, 1/2, 3/4, 1) is

    LLR = sum_i c_i * (ln p1_i - ln p0_i)

where p0, p1 are the maximum-likelihood distributions of the pair score
under H0 and H1 (Michel Van den Bergh, "Comments on Normalized Elo";
fastchess getLLR): the distribution closest to the observed frequencies
(maximising sum_i c_i ln p_i) that satisfies

  - logistic model:   mean(p) = 1 / (1 + 10^(-elo/400))
  - normalized model: (mean(p) - 1/2) / sd(p) = sqrt(2) * elo / (800 / ln 10)

Counts of zero are replaced by 1e-3 first, as fastchess does.

This script does NOT use fastchess's method (a one-dimensional root of the
dual in theta by the ITP method, and for the normalized model a fixed-point
iteration around it). It solves the Karush-Kuhn-Tucker system of the
constrained maximisation directly, for all five p_i (as ln p_i) and both
Lagrange multipliers at once, by damped Newton with a finite-difference
Jacobian, along a homotopy from uniform data to the observed frequencies,
and checks that the equations and constraints hold at the solution to
1e-10.
"""

import math

A = [0.0, 0.25, 0.5, 0.75, 1.0]
SCALE = 800.0 / math.log(10.0)


def regularize(c):
    return [1e-3 if x == 0 else float(x) for x in c]


def solve(matrix, rhs):
    """Gaussian elimination with partial pivoting."""
    n = len(rhs)
    m = [row[:] + [rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for k in range(col, n + 1):
                m[r][k] -= f * m[col][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def mean_sd(p):
    mu = sum(a * q for a, q in zip(A, p))
    var = sum(q * (a - mu) ** 2 for a, q in zip(A, p))
    return mu, math.sqrt(var)


def constraint(p, model, target):
    mu, sd = mean_sd(p)
    if model == "logistic":
        return mu - target
    return (mu - 0.5) - target * sd


def grad(p, model, target):
    """Gradient of the constraint in p (p not renormalised)."""
    mu, sd = mean_sd(p)
    if model == "logistic":
        return A[:]
    # var = sum p a^2 - mu^2 => dvar/dp_i = a_i^2 - 2 mu a_i
    return [a - target * (a * a - 2 * mu * a) / (2 * sd) for a in A]


def kkt(x, phat, model, target):
    """x = (ln p_1..5, lam, gam). Residuals of the stationarity equations
    multiplied by p_i (phat_i - p_i (lam + gam dg/dp_i) = 0), sum p = 1 and
    the constraint."""
    p = [math.exp(y) for y in x[:5]]
    lam, gam = x[5], x[6]
    dg = grad(p, model, target)
    res = [phat[i] - p[i] * (lam + gam * dg[i]) for i in range(5)]
    res.append(sum(p) - 1.0)
    res.append(constraint(p, model, target))
    return res


def newton(x, phat, model, target):
    for _ in range(100):
        r = kkt(x, phat, model, target)
        norm = max(abs(v) for v in r)
        if norm < 1e-15:
            break
        jac = [[0.0] * 7 for _ in range(7)]
        for j in range(7):
            h = 1e-7 * max(1.0, abs(x[j]))
            y = x[:]
            y[j] += h
            rj = kkt(y, phat, model, target)
            for i in range(7):
                jac[i][j] = (rj[i] - r[i]) / h
        dx = solve(jac, [-v for v in r])
        # Damped: halve the step until the residual decreases.
        step = 1.0
        while step > 1e-12:
            y = [xi + step * d for xi, d in zip(x, dx)]
            if max(abs(v) for v in kkt(y, phat, model, target)) < norm:
                break
            step /= 2
        else:
            break
        x = y
    return x


def mle(phat, model, target):
    # Homotopy: solve for uniform data first, then move the data to phat in
    # small steps (q = (1 - lam) uniform + lam phat, 1 - lam shrinking by
    # 0.7 a step down to 1e-14), each Newton solve starting from the last.
    x = [math.log(0.2)] * 5 + [1.0, 0.0]
    rest = 1.0
    while True:
        rest = max(rest * 0.7, 0.0) if rest > 1e-14 else 0.0
        q = [rest * 0.2 + (1 - rest) * h for h in phat]
        x = newton(x, q, model, target)
        if rest == 0.0:
            break
    p = [math.exp(y) for y in x[:5]]
    assert abs(sum(p) - 1) < 1e-10, p
    assert abs(constraint(p, model, target)) < 1e-10, p
    assert max(abs(v) for v in kkt(x, phat, model, target)) < 1e-10, p
    return p


def llr(counts, elo0, elo1, model):
    c = regularize(counts)
    total = sum(c)
    phat = [x / total for x in c]
    if model == "logistic":
        t0 = 1 / (1 + 10 ** (-elo0 / 400))
        t1 = 1 / (1 + 10 ** (-elo1 / 400))
    else:
        t0 = math.sqrt(2) * elo0 / SCALE
        t1 = math.sqrt(2) * elo1 / SCALE
    p0 = mle(phat, model, t0)
    p1 = mle(phat, model, t1)
    return sum(ci * (math.log(b) - math.log(a)) for ci, a, b in zip(c, p0, p1))


CASES = [
    # (counts LL, LD, WL+DD, WD, WW), elo0, elo1
    ([10, 40, 100, 40, 10], 0.0, 5.0),
    ([12, 50, 180, 70, 20], 0.0, 5.0),
    ([403, 2130, 4040, 2350, 482], 0.0, 2.0),
    ([30, 20, 50, 10, 5], -5.0, 0.0),
    ([0, 3, 10, 6, 1], 0.0, 10.0),
    # Degenerate: no pairs, every pair in one bucket (in the last one
    # fastchess's normalized iteration diverges to NaN).
    ([0, 0, 0, 0, 0], 0.0, 5.0),
    ([0, 0, 0, 0, 1000], 0.0, 5.0),
    ([1000, 0, 0, 0, 0], 0.0, 5.0),
    ([0, 0, 1000, 0, 0], 0.0, 5.0),
    ([1000000, 0, 0, 0, 0], 0.0, 50.0),
    # Almost every pair, or every pair, win-loss (Hackaback between weak
    # bots, issue 29): where fastchess's stopping rules moved the crossing.
    ([0, 0, 15504, 0, 0], 0.0, 5.0),
    ([0, 0, 15504, 0, 0], -3.0, 1.0),
    ([2, 25, 15450, 24, 3], 0.0, 5.0),
    ([2, 25, 15450, 24, 3], -3.0, 1.0),
]

if __name__ == "__main__":
    for model in ("normalized", "logistic"):
        for counts, e0, e1 in CASES:
            print(f"{model:10} {counts} [{e0}, {e1}]  LLR = {llr(counts, e0, e1, model):.6f}")
    print("bounds alpha=beta=0.05:", math.log(0.05 / 0.95), math.log(0.95 / 0.05))
