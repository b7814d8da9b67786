#!/usr/bin/env python3
"""What Ordo 1.2.x would print, re-implemented from its formulas (standard
library only; not Ordo's code, and not a CI dependency). Run by hand, in
this directory, to regenerate the Ordo columns of docs/ratings.md:

    python3 ordo_reference.py perfect perfect_ordo.csv
    python3 ordo_reference.py perfect league_perfect.csv
    python3 ordo_reference.py errors league.csv 1000
    python3 ordo_reference.py errors league_nodraws.csv 1000   (league.csv less its draws:
                                       grep -v ',0.5,0.5,' league.csv > league_nodraws.csv)

The formulas, as read in Ordo's source (1.2.x):
- model: E = 1/(1 + exp(-BETA*diff)), BETA = ln(0.76/0.24)/z, z = 200.241
  (`-z 200.241`, our Elo scale); ratings by maximum likelihood, averaged to
  0 over the players without a perfect score (`-a 0`).
- draw model (xpect.c, get_pWDL): at expected score p, P_draw solves
  a*P^2 + 2*P + 4(p^2 - p) = 0, a = 4f^2 - 1, f = (1 - d)/(2d), i.e.
  P_draw = sqrt(P_win*P_loss)/f; P_win = p - P_draw/2. d = 0.5 by default
  (then P_win = p^2); with -D, the d whose expected number of draws equals
  the observed one (rating.c, adjust_drawrate).
- a perfect winner (loser) is placed where the product of its P_win (P_loss)
  over its games is 1/2 (indiv.c, calc_ind_rating_superplayer).
- errors with -s N (sim.c): every game replayed N times from the fitted
  ratings with get_pWDL at d, ratings refitted, 1.96 times the standard
  deviation of each rating over the replays.
Ours (half-point rule): sum of n_i*E over the opponents = score - 1/2.
"""
import csv
import math
import random
import sys

BETA = math.log(0.76 / 0.24) / 200.241


def xpect(diff):
    return 1 / (1 + math.exp(-diff * BETA))


def p_draw(p, d):
    if d < 1e-5:
        return 2 * d * math.sqrt(p - p * p) - d * d
    f = (1 - d) / (2 * d)
    a = 4 * f * f - 1
    c = 4 * (p * p - p)
    if abs(a) < 1e-12:
        return -c / 2
    return (math.sqrt(1 - a * c) - 1) / a


def p_win(diff, d):
    p = xpect(diff)
    return p - p_draw(p, d) / 2


def bisect(f, lo=-20000.0, hi=20000.0):
    """Root of an increasing f."""
    for _ in range(300):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def games_of(path):
    return [(r["seat0"], r["seat1"], float(r["score0"])) for r in csv.DictReader(open(path)) if r["players"] == "2"]


def fit(games, bots):
    """Maximum likelihood (Hunter's MM), averaged to 0."""
    g = {b: 1.0 for b in bots}
    for _ in range(5000):
        new = {}
        for i in bots:
            w = sum(s if a == i else 1 - s for a, b, s in games if i in (a, b))
            den = sum(1 / (g[a] + g[b]) for a, b, s in games if i in (a, b))
            new[i] = w / den
        m = math.exp(sum(math.log(v) for v in new.values()) / len(bots))
        new = {k: v / m for k, v in new.items()}
        done = max(abs(math.log(new[k] / g[k])) for k in bots) < 1e-12
        g = new
        if done:
            break
    r = {k: math.log(v) / BETA for k, v in g.items()}
    avg = sum(r.values()) / len(r)
    return {k: v - avg for k, v in r.items()}


def fit_d(games, r):
    draws = sum(1 for g in games if g[2] == 0.5)

    def excess(d):
        return sum(p_draw(xpect(r[a] - r[b]), d) for a, b, _ in games) - draws

    if draws == 0:
        return 0.0
    return bisect(excess, 1e-9, 0.999)


def perfect(path):
    games = games_of(path)
    bots = sorted({a for a, _, _ in games} | {b for _, b, _ in games})
    score = {b: [0.0, 0] for b in bots}
    for a, b, s in games:
        score[a][0] += s
        score[a][1] += 1
        score[b][0] += 1 - s
        score[b][1] += 1
    flagged = {b for b, (s, n) in score.items() if s in (0, n)}
    core_bots = [b for b in bots if b not in flagged]
    core = [g for g in games if g[0] not in flagged and g[1] not in flagged]
    r = fit(core, core_bots)
    d = fit_d(core, r)
    print(f"{path}: -D draw rate d = {d:.6f}")
    print(f"{'bot':8} {'ours':>9} {'ordo':>9} {'ordo -D':>9}")
    for b in sorted(flagged):
        win = score[b][0] > 0
        opps = [(r[y if x == b else x], 1) for x, y, _ in games if b in (x, y)]
        n = len(opps)
        ours = bisect(lambda x: sum(xpect(x - o) for o, _ in opps) - (n - 0.5 if win else 0.5))

        def ordo(dd):
            if win:
                return bisect(lambda x: sum(math.log(p_win(x - o, dd)) for o, _ in opps) - math.log(0.5))
            return bisect(lambda x: math.log(0.5) - sum(math.log(p_win(o - x, dd)) for o, _ in opps))

        print(f"{b:8} {ours:9.2f} {ordo(0.5):9.2f} {ordo(d):9.2f}")
    for b in core_bots:
        print(f"{b:8} {r[b]:9.2f} {r[b]:9.2f} {r[b]:9.2f}")


def errors(path, n, seed=1):
    games = games_of(path)
    bots = sorted({a for a, _, _ in games} | {b for _, b, _ in games})
    r0 = fit(games, bots)
    d = fit_d(games, r0)
    out = {}
    for label, dd in (("-D", d), ("no -D", 0.5)):
        rnd = random.Random(seed)
        s1 = {b: 0.0 for b in bots}
        s2 = {b: 0.0 for b in bots}
        for _ in range(n):
            sim = []
            for a, b, _ in games:
                p = xpect(r0[a] - r0[b])
                pd = p_draw(p, dd)
                u = rnd.random()
                sim.append((a, b, 1.0 if u < p - pd / 2 else 0.5 if u < p + pd / 2 else 0.0))
            r = fit(sim, bots)
            for k in bots:
                s1[k] += r[k]
                s2[k] += r[k] ** 2
        out[label] = {k: 1.96 * math.sqrt(max(0.0, s2[k] / n - (s1[k] / n) ** 2)) for k in bots}
    print(f"{path}: {len(games)} games, -D draw rate d = {d:.4f}, {n} simulations")
    for b in sorted(bots, key=lambda k: -r0[k]):
        print(f"{b:8} {r0[b]:7.1f}  -D +/-{out['-D'][b]:5.1f}  no -D +/-{out['no -D'][b]:5.1f}")


if __name__ == "__main__":
    if sys.argv[1] == "perfect":
        perfect(sys.argv[2])
    else:
        errors(sys.argv[2], int(sys.argv[3]))
