#!/usr/bin/env python3
"""Writes a generated games.csv for the rating and report benchmarks
(BENCHMARKS.md, "Issue 34").

    python3 benches/gen_games.py BOTS GAMES OUT.csv [SEED]

BOTS bots `b0000`... with true strengths spread over 800 Elo play GAMES
2-player games over two variants (filo, kisolo), each game a random pair
(every pair about equally often) with a random first seat; 30% draws, the
rest decided by the Elo model. Deterministic for a given SEED."""
import random
import sys

bots, games, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 34)
names = [f"b{i:04d}" for i in range(bots)]
elo = [800.0 * i / max(bots - 1, 1) for i in range(bots)]
head = ("game_id,variant,players,group,seat0,seat1,seat2,score0,score1,score2,"
        "reason,offender,plies,duration_ms,seed,opening\n")
with open(out, "w") as f:
    f.write(head)
    buf = []
    for g in range(games):
        a = rng.randrange(bots)
        b = rng.randrange(bots - 1)
        b += b >= a
        p = 1.0 / (1.0 + 10 ** ((elo[b] - elo[a]) / 400.0))
        u = rng.random()
        if u < 0.3:
            s0, s1 = "0.5", "0.5"
        elif rng.random() < p:
            s0, s1 = "1", "0"
        else:
            s0, s1 = "0", "1"
        v = "filo" if g % 2 else "kisolo"
        buf.append(f"g{g},{v},2,p,{names[a]},{names[b]},,{s0},{s1},,store,,30,5,{g},\n")
        if len(buf) >= 100000:
            f.write("".join(buf))
            buf.clear()
    f.write("".join(buf))
