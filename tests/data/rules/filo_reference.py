# An independent F.I.L.O implementation, written from the rule text
# (the published rule text) and the rulings (docs/rules/filo.md) only, not from src/engine/filo.rs.
# It plays random games and prints one JSON line per game: before every
# decision its legal options and the option picked, then the result, plies,
# final squares (bottom to top) and exited checkers. The Rust test
# engine::filo::tests::independent_implementation_agrees replays them.
#   python3 filo_reference.py GAMES SEED MAX_PLIES > filo_random_games.jsonl
# (committed file: 300 11 200; FILO_GAMES=path points the test elsewhere)
import random, json, sys
L = "ABCDEFGH"
class Filo:
    def __init__(s):
        s.sq = [[] for _ in range(8)]; s.res = [12, 12]; s.ex = [0, 0]; s.tm = 0; s.ply = 0; s.res_out = None
    def pieces(s, p): return 12 - s.ex[p]
    def mv(s): return s.res == [0, 0]
    def step(s, p): return 1 if p == 0 else -1
    def legal(s):
        if s.res_out: return []
        p = s.tm
        if not s.mv():
            if s.res[p] == 0: return ["pass"]
            nf = sum(1 for x in s.sq if len(x) < 4)
            return [str(k) for k in range(1, min(8, s.res[p], nf) + 1)]
        out = []
        for i in range(8):
            if s.sq[i] and s.sq[i][-1] == p:
                out.append(L[i])
                t = s.copy(); t.sow(p, i)
                if t.esc(p) is not None: out.append(L[i] + "!")
        return out
    def copy(s):
        t = Filo(); t.sq = [list(x) for x in s.sq]; t.res = list(s.res); t.ex = list(s.ex); t.tm = s.tm; t.ply = s.ply; t.res_out = s.res_out
        return t
    def sow(s, p, i):
        st = s.sq[i]; s.sq[i] = []; j = i
        for c in st:
            j = (j + s.step(p)) % 8
            if len(s.sq[j]) == 4: s.ex[c] += 1
            else: s.sq[j].append(c)
    def esc(s, p):
        n = s.pieces(p)
        if not 2 <= n <= 4: return None
        for i in range(8):
            if len(s.sq[i]) == n and all(c == p for c in s.sq[i]): return i
        return None
    def play(s, m, cap=1000):
        assert m in s.legal(), (m, s.legal())
        p = s.tm
        if m == "pass": pass
        elif m.isdigit():
            k = int(m); j = 0 if p == 0 else 7
            while k:
                if len(s.sq[j]) < 4: s.sq[j].append(p); k -= 1
                j += s.step(p)
            s.res[p] -= int(m)
        else:
            i = L.index(m[0]); s.sow(p, i)
            if m.endswith("!"):
                e = s.esc(p); s.ex[p] += len(s.sq[e]); s.sq[e] = []
                s.ply += 1; s.tm = 1 - p; s.res_out = ("win", p, "escape"); return
        s.ply += 1; s.tm = 1 - p; o = 1 - p
        if s.pieces(p) <= 1: s.res_out = ("win", p, "pieces")
        elif s.pieces(o) <= 1: s.res_out = ("win", o, "pieces")
        elif not s.legal(): s.res_out = ("win", p, "no_moves")
        elif s.ply >= cap: s.res_out = ("draw", None, "max_plies")
def gen(n, seed, cap):
    rnd = random.Random(seed); games = []
    for _ in range(n):
        g = Filo(); steps = []
        while not g.res_out:
            lg = g.legal(); m = rnd.choice(lg); steps.append([lg, m]); g.play(m, cap)
        games.append({"max_plies": cap, "steps": steps, "result": list(g.res_out), "plies": g.ply,
                      "squares": ["".join("WB"[c] for c in x) for x in g.sq], "exited": g.ex})
    return games
if __name__ == "__main__":
    n, seed, cap = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    for gm in gen(n, seed, cap): print(json.dumps(gm))
