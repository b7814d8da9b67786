#!/usr/bin/env python3
"""Independent reference for `arena rate`, with numpy and scipy.

Not a runtime or CI dependency: run by hand once (pip install numpy scipy;
python3 reference.py, in this directory) to regenerate the inputs it
derives and `reference_expected.csv`. `tests/rate_cli.rs` compares the
binary's ratings.csv with the committed numbers.

Everything here is written from the model's definition, not from the Rust
code, and with other algorithms:

- the ratings maximise the Bradley-Terry log-likelihood on the Elo scale
  (draw = half a win and half a loss, 3-player seat pairs weighted 1/3)
  with scipy.optimize.minimize (BFGS), one bot pinned at 0, then centred
  (Ordo's `-a 0`);
- the standard errors invert the Fisher information of the pinned problem
  with numpy, are mapped to "rating minus the average" and scaled by the
  Pearson dispersion X^2 / (N - k) (clamped to [0.25, 4], used with at
  least 30 degrees of freedom);
- perfect scores follow Ordo's documented rule (manual, "Perfect winners
  and losers"): remove players who won or lost every game, repeatedly,
  fit the rest, then put each one back at the rating where its expected
  score equals its real score minus (or plus) half a point against the
  fixed ratings of its opponents, "as if one of the games was a draw".

Cases (the `case` column of reference_expected.csv):
  league        league.csv: 6 bots, 300 games, draws
  filo_seat     the filo games of league.csv with a first-seat advantage
                fitted jointly (one variant: one seat parameter, as
                Ordo's -W on that variant's PGN)
  perfect       league_perfect.csv: league.csv plus a bot that won every
                game and one that lost every game (they never met: one
                perfect player against a connected pool is where Ordo's
                rule and ours are the same rule)
  tricala3      tricala3_league.csv: 3-player games only
"""
import csv
import math
import random

import numpy as np
from scipy.optimize import minimize

K = math.log(10) / 400


def read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def evidence(rows):
    """(a, b, w, x, x2): a in the earlier seat, x = a's weighted score."""
    out = []
    for r in rows:
        n = int(r["players"])
        seats = [r["seat0"], r["seat1"]] + ([r["seat2"]] if n == 3 else [])
        sc = [float(r["score0"]), float(r["score1"])] + ([float(r["score2"])] if n == 3 else [])
        wt = 1.0 if n == 2 else 1.0 / 3.0
        for s in range(n):
            for t in range(s + 1, n):
                if seats[s] == seats[t]:
                    continue
                x = 1.0 if sc[s] > sc[t] + 1e-9 else (0.5 if abs(sc[s] - sc[t]) <= 1e-9 else 0.0)
                out.append((seats[s], seats[t], wt, wt * x, wt * x * x))
    return out


def nll(theta, ev, idx, seat):
    f = 0.0
    g = np.zeros_like(theta)
    for a, b, w, x, _ in ev:
        d = theta[idx[a]] - theta[idx[b]] + (theta[-1] if seat else 0.0)
        p = 1 / (1 + math.exp(-K * d))
        f -= x * math.log(p) + (w - x) * math.log(1 - p)
        gd = -K * (x - w * p)
        g[idx[a]] += gd
        g[idx[b]] -= gd
        if seat:
            g[-1] += gd
    return f, g


def fisher(theta, ev, idx, seat):
    n = len(theta)
    h = np.zeros((n, n))
    x2 = 0.0
    for a, b, w, x, xx in ev:
        d = theta[idx[a]] - theta[idx[b]] + (theta[-1] if seat else 0.0)
        p = 1 / (1 + math.exp(-K * d))
        v = np.zeros(n)
        v[idx[a]] += 1
        v[idx[b]] -= 1
        if seat:
            v[-1] += 1
        h += K * K * w * p * (1 - p) * np.outer(v, v)
        x2 += (xx - 2 * p * x + p * p * w) / (p * (1 - p))
    return h, x2


def fit(rows, seat=False):
    ev = evidence(rows)
    bots = sorted({e[0] for e in ev} | {e[1] for e in ev})
    m = len(bots)
    idx = {b: i for i, b in enumerate(bots)}
    nfree = (m - 1) + (1 if seat else 0)

    def full(free):
        return np.concatenate(([0.0], free))  # bots[0] pinned at 0

    def obj(free):
        f, g = nll(full(free), ev, idx, seat)
        return f, g[1:]

    res = minimize(obj, np.zeros(nfree), jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    theta = full(res.x)
    h, x2 = fisher(theta, ev, idx, seat)
    total = sum(e[2] for e in ev)
    dof = total - nfree
    phi = min(4.0, max(0.25, x2 / dof)) if dof >= 30 else 1.0
    cov_free = np.linalg.inv(h[1:, 1:]) * phi
    cov = np.zeros((m + (1 if seat else 0),) * 2)
    cov[1:, 1:] = cov_free
    # rating minus the average of all bots: T = I - 1/m on the bot block
    t = np.eye(m) - np.ones((m, m)) / m
    cb = t @ cov[:m, :m] @ t.T
    elo = theta[:m] - theta[:m].mean()
    out = {b: (elo[i], math.sqrt(max(cb[i, i], 0.0))) for i, b in enumerate(bots)}
    if seat:
        out["(seat)"] = (theta[-1], math.sqrt(cov[-1, -1]))
    return out


def fit_ordo_perfect(rows):
    """The half-point rule of Ordo's manual for perfect winners and losers (no dispersion, no seat)."""
    ev = evidence(rows)
    bots = sorted({e[0] for e in ev} | {e[1] for e in ev})
    purged = []
    live = set(bots)
    while True:
        score = {b: [0.0, 0.0] for b in live}
        for a, b, w, x, _ in ev:
            if a in live and b in live:
                score[a][0] += x
                score[a][1] += w
                score[b][0] += w - x
                score[b][1] += w
        perfect = sorted(b for b, (s, n) in score.items() if n > 0 and (s == 0 or s == n))
        if not perfect:
            break
        purged.extend(perfect)
        live -= set(perfect)
    core = [r for r in rows if all(r[k] in live for k in ("seat0", "seat1"))]
    rating = {b: e for b, (e, _) in fit(core).items()}
    for p in reversed(purged):  # the last purged are closest to the core
        opp = []
        s = n = 0.0
        for a, b, w, x, _ in ev:
            if a == p and b in rating:
                opp.append((rating[b], w))
                s += x
                n += w
            elif b == p and a in rating:
                opp.append((rating[a], w))
                s += w - x
                n += w
        target = s - 0.5 if s > 0 else 0.5

        def expected(r):
            return sum(w / (1 + 10 ** (-(r - o) / 400)) for o, w in opp)

        lo, hi = -5000.0, 5000.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if expected(mid) < target:
                lo = mid
            else:
                hi = mid
        rating[p] = (lo + hi) / 2
    return rating, sorted(live)


def fit_bayeselo_model(rows):
    """BayesElo's likelihood with `prior 0`, `advantage 0` and drawelo fitted
    (`mm 0 1`): P(win) = 1/(1+10^((-d+de)/400)), P(loss) = 1/(1+10^((d+de)/400)),
    P(draw) = the rest. Printed only, to document how far its draw model
    moves the ratings from the half-point model (docs/ratings.md)."""
    rows = [r for r in rows if r["players"] == "2"]
    bots = sorted({r["seat0"] for r in rows} | {r["seat1"] for r in rows})
    idx = {b: i for i, b in enumerate(bots)}
    m = len(bots)

    def nll(v):
        th = np.concatenate(([0.0], v[: m - 1]))
        de = v[m - 1]
        f = 0.0
        for r in rows:
            d = th[idx[r["seat0"]]] - th[idx[r["seat1"]]]
            pw = 1 / (1 + 10 ** ((-d + de) / 400))
            pl = 1 / (1 + 10 ** ((d + de) / 400))
            s = float(r["score0"])
            f -= math.log(pw if s == 1 else pl if s == 0 else 1 - pw - pl)
        return f

    x0 = np.concatenate((np.zeros(m - 1), [50.0]))
    res = minimize(nll, x0, method="Nelder-Mead", options={"maxiter": 40000, "xatol": 1e-6, "fatol": 1e-9})
    res = minimize(nll, res.x, method="BFGS")
    th = np.concatenate(([0.0], res.x[: m - 1]))
    th -= th.mean()
    return {b: th[i] for i, b in enumerate(bots)}, res.x[m - 1]


def make_perfect():
    rows = read("league.csv")
    names = sorted({r["seat0"] for r in rows})
    extra = []
    k = 0
    for star, sign in (("zulu", 1.0), ("yankee", 0.0)):
        for i, opp in enumerate(names):
            for s0, s1 in ((star, opp), (opp, star)):
                score = sign if s0 == star else 1 - sign
                extra.append(dict(rows[0], game_id=f"p-{k:03d}", group=f"p-{star}-{i}", seat0=s0, seat1=s1,
                                  score0=str(score), score1=str(1 - score), reason="store", offender=""))
                k += 1
    write("league_perfect.csv", rows + extra)


def make_tricala3():
    random.seed(31337)
    truth = {"t1": 150.0, "t2": 60.0, "t3": 0.0, "t4": -90.0, "t5": -140.0}
    names = sorted(truth)
    rows = []
    for g in range(600):
        pick = random.sample(names, 3)
        perf = [K * truth[b] - math.log(-math.log(random.uniform(1e-12, 1.0))) for b in pick]
        sc = [sum(1.0 if perf[s] > perf[t] else 0.0 for t in range(3) if t != s) / 2 for s in range(3)]
        if random.random() < 0.08:  # a three-way tie now and then
            sc = [0.5, 0.5, 0.5]
        rows.append({"game_id": f"t3-{g:04d}", "variant": "tricala", "players": "3", "group": f"t3g{g // 6}",
                     "seat0": pick[0], "seat1": pick[1], "seat2": pick[2], "score0": str(sc[0]),
                     "score1": str(sc[1]), "score2": str(sc[2]), "reason": "corners", "offender": "",
                     "plies": str(40 + g % 50), "duration_ms": "120", "seed": str(g // 6), "opening": ""})
    write("tricala3_league.csv", rows)


def write(path, rows):
    cols = list(rows[0].keys())
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    make_perfect()
    make_tricala3()
    lines = ["case,bot,elo,elo_se"]
    for case, path, seat in (("league", "league.csv", False), ("filo_seat", "league.csv", True),
                             ("tricala3", "tricala3_league.csv", False)):
        rows = read(path)
        if case == "filo_seat":
            rows = [r for r in rows if r["variant"] == "filo"]
        for b, (e, se) in sorted(fit(rows, seat).items()):
            lines.append(f"{case},{b},{e:.6f},{se:.6f}")
    ordo, core = fit_ordo_perfect(read("league_perfect.csv"))
    mean = sum(ordo[b] for b in core) / len(core)  # Ordo centres the players it fitted
    for b in sorted(ordo):
        lines.append(f"perfect,{b},{ordo[b] - mean:.6f},")
    be, drawelo = fit_bayeselo_model(read("league.csv"))
    print(f"BayesElo draw model on league.csv (not a test): drawelo {drawelo:.1f}, "
          + ", ".join(f"{b} {e:.1f}" for b, e in sorted(be.items())))
    with open("reference_expected.csv", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
