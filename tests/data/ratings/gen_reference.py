#!/usr/bin/env python3
"""Test-data generator and independent reference for `arena rate`.

Not a runtime dependency: run by hand (python3 gen_reference.py) to
regenerate league.csv and league_expected.csv in this directory.

- league.csv: a simulated 2-player league (6 bots, two variants, seat-swap
  pairs, draws, a few forfeits), fixed seed.
- league_expected.csv: ratings computed here WITHOUT the Rust code, by a
  different algorithm: Hunter's (2004) minorization-maximization for
  Bradley-Terry (draw = half a win, half a loss), mapped to Elo by
  400*log10(gamma) and centered at 0; standard errors from the Fisher
  information inverted by Gauss-Jordan after pinning one bot, times the
  Pearson dispersion X^2 / (N - (bots - 1)), centered.
"""
import math
import random

random.seed(20261122)
BOTS = {"alpha": 210.0, "bravo": 90.0, "charlie": 0.0, "delta": -40.0, "echo": -120.0, "foxtrot": -260.0}
NAMES = sorted(BOTS)
HEADER = "game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,reason,offender,plies,duration_ms,seed,opening"


def simulate():
    rows = []
    gid = 0
    for variant, pairs in (("filo", 6), ("kisolo", 4)):
        for i, a in enumerate(NAMES):
            for b in NAMES[i + 1:]:
                for k in range(pairs):
                    group = f"{variant}-{a}-{b}-{k}"
                    seed = random.randrange(1 << 32)
                    for s0, s1 in ((a, b), (b, a)):
                        p = 1 / (1 + 10 ** (-(BOTS[s0] - BOTS[s1]) / 400))
                        d = 0.6 * min(p, 1 - p)
                        u = random.random()
                        score = 1.0 if u < p - d / 2 else (0.5 if u < p + d / 2 else 0.0)
                        reason, offender = ("tie", "") if score == 0.5 else ("store", "")
                        if score != 0.5 and random.random() < 0.05:
                            reason, offender = "timeout", ("1" if score == 1.0 else "0")
                        plies = random.randrange(20, 120)
                        rows.append(f"{variant}-{gid:05d},{variant},2,{group},{s0},{s1},,{score},{1 - score},,"
                                    f"{reason},{offender},{plies},{plies * 3},{seed},")
                        gid += 1
    return rows


def fit(rows):
    n = {(a, b): 0.0 for a in NAMES for b in NAMES}
    pts = {(a, b): 0.0 for a in NAMES for b in NAMES}
    sq = {(a, b): 0.0 for a in NAMES for b in NAMES}
    for r in rows:
        f = r.split(",")
        a, b, s = f[4], f[5], float(f[7])
        n[(a, b)] += 1; n[(b, a)] += 1
        pts[(a, b)] += s; pts[(b, a)] += 1 - s
        sq[(a, b)] += s * s; sq[(b, a)] += (1 - s) ** 2
    gamma = {x: 1.0 for x in NAMES}
    for _ in range(20000):
        new = {}
        for i in NAMES:
            w = sum(pts[(i, j)] for j in NAMES if j != i)
            den = sum(n[(i, j)] / (gamma[i] + gamma[j]) for j in NAMES if j != i)
            new[i] = w / den
        g = math.exp(sum(math.log(v) for v in new.values()) / len(new))
        new = {k: v / g for k, v in new.items()}
        done = max(abs(math.log(new[k] / gamma[k])) for k in NAMES) < 1e-14
        gamma = new
        if done:
            break
    elo = {k: 400 * math.log10(v) for k, v in gamma.items()}
    mean = sum(elo.values()) / len(elo)
    elo = {k: v - mean for k, v in elo.items()}
    # Fisher information on the Elo scale, pinned at NAMES[0].
    K = math.log(10) / 400
    m = len(NAMES)
    H = [[0.0] * m for _ in range(m)]
    x2, total = 0.0, len(rows)
    for i, a in enumerate(NAMES):
        for j, b in enumerate(NAMES):
            if i >= j or n[(a, b)] == 0:
                continue
            p = 1 / (1 + 10 ** (-(elo[a] - elo[b]) / 400))
            v = K * K * n[(a, b)] * p * (1 - p)
            H[i][i] += v; H[j][j] += v; H[i][j] -= v; H[j][i] -= v
            x2 += (sq[(a, b)] - 2 * p * pts[(a, b)] + p * p * n[(a, b)]) / (p * (1 - p))
    phi = min(4.0, max(0.25, x2 / (total - (m - 1))))
    R = [row[1:] for row in H[1:]]
    k = m - 1
    A = [R[i] + [1.0 if i == j else 0.0 for j in range(k)] for i in range(k)]
    for c in range(k):
        piv = max(range(c, k), key=lambda r: abs(A[r][c]))
        A[c], A[piv] = A[piv], A[c]
        d = A[c][c]
        A[c] = [x / d for x in A[c]]
        for r in range(k):
            if r != c:
                fct = A[r][c]
                A[r] = [x - fct * y for x, y in zip(A[r], A[c])]
    C = [[0.0] * m for _ in range(m)]
    for i in range(k):
        for j in range(k):
            C[i + 1][j + 1] = phi * A[i][k + j]
    rowm = [sum(C[i]) / m for i in range(m)]
    allm = sum(rowm) / m
    se = {a: math.sqrt(C[i][i] - 2 * rowm[i] + allm) for i, a in enumerate(NAMES)}
    return elo, se


rows = simulate()
with open("league.csv", "w") as fh:
    fh.write(HEADER + "\n" + "\n".join(rows) + "\n")
elo, se = fit(rows)
with open("league_expected.csv", "w") as fh:
    fh.write("bot,elo,elo_se\n")
    for b in NAMES:
        fh.write(f"{b},{elo[b]:.6f},{se[b]:.6f}\n")
print(open("league_expected.csv").read())
