# An independent Tricala implementation, written from the rule text
# (the published rule text) and the rulings (docs/rules/tricala.md) only, not from src/engine/tricala.rs.
# It plays random games and prints one JSON line per game: before every
# decision its legal options and the option picked, then the result
# (kind, winners, reason), plies, captures and the final board. The Rust
# test engine::tricala::tests::independent_implementation_agrees replays them.
#   python3 tricala_reference.py GAMES SEED MAX_PLIES PLAYERS >> tricala_random_games.jsonl
# (committed file: 40 12 200 2, then 40 13 200 3; TRICALA_GAMES=path points
# the test elsewhere)
import random, json, sys
PITS = [(r, c) for r in range(1, 7) for c in range(r)]
IDX = {rc: i for i, rc in enumerate(PITS)}
def name(i): r, c = PITS[i]; return f"{r}{'abcdef'[c]}"
NAMES = [name(i) for i in range(21)]
DIRS = {"E": (0, 1), "W": (0, -1), "NE": (-1, 0), "NW": (-1, -1), "SE": (1, 1), "SW": (1, 0)}
DORDER = ["E", "W", "NE", "NW", "SE", "SW"]
REV = {"E": "W", "W": "E", "NE": "SW", "SW": "NE", "NW": "SE", "SE": "NW"}
CORNERS = [IDX[(1, 0)], IDX[(6, 0)], IDX[(6, 5)]]
COL = "WBR"
def nb(i, d):
    r, c = PITS[i]; dr, dc = DIRS[d]; return IDX.get((r + dr, c + dc))
class T:
    def __init__(s, n):
        s.n = n; s.pits = [[0] * n for _ in range(21)]; s.cap = [0] * n; s.placed = [0] * n; s.tp = 0
        s.mover = 0; s.hand = [0] * n; s.at = None; s.d = None; s.ply = 0; s.out = None; s.pending = None; s.drops = 0
    def onb(s, p): return sum(x[p] for x in s.pits)
    def sowing(s): return all(x == 9 for x in s.placed)
    def kind(s):
        if s.out: return "none"
        if not s.sowing(): return "place"
        if s.pending: return s.pending
        return "pass" if s.onb(s.mover) == 0 else "sow"
    def legal(s):
        k = s.kind(); m = s.mover
        if k == "place": return [NAMES[i] for i in range(21) if i not in CORNERS]
        if k == "pass": return ["pass"]
        if k == "sow": return [f"{NAMES[i]}:{d}" for i in range(21) if s.pits[i][m] > 0 for d in DORDER if nb(i, d) is not None]
        if k == "direction": return [d for d in DORDER if nb(s.at, d) is not None and d != REV[s.d]]
        if k == "colour": return [COL[c] for c in range(s.n) if s.hand[c] > 0]
        return []
    def ctrl(s, p):
        need = min(s.onb(p), 3)
        if need == 0: return False
        held = sum(1 for c in CORNERS if 2 * s.pits[c][p] > sum(s.pits[c]))
        return held >= need
    def won(s, p): return s.cap[p] >= 9 or s.ctrl(p)
    def run(s):
        # continue sowing until a decision is needed or the turn ends
        while sum(s.hand) > 0:
            if nb(s.at, s.d) is None: s.pending = "direction"; return
            cols = [c for c in range(s.n) if s.hand[c] > 0]
            if len(cols) > 1: s.pending = "colour"; return
            if not s.drop(cols[0]): return
    def drop(s, c):
        to = nb(s.at, s.d); before = list(s.pits[to]); s.pits[to][c] += 1; s.hand[c] -= 1; s.at = to; s.drops += 1
        if s.drops > 10000:
            s.out = ("draw", list(range(s.n)), "perpetual"); s.pending = None; s.ply += 1; return False
        if sum(s.hand): return True
        if sum(before) == 0: s.end(); return False
        if before[s.mover] == sum(before):
            s.hand = s.pits[to]; s.pits[to] = [0] * s.n; return True
        s.cap[s.mover] += sum(s.pits[to]); s.pits[to] = [0] * s.n; s.end(); return False
    def end(s):
        cap = s.capv  # the ply cap, set by gen()
        s.pending = None; s.ply += 1; s.drops = 0
        ws = [p for p in range(s.n) if s.won(p)]
        if ws:
            b = max(s.cap[p] for p in ws); top = [p for p in ws if s.cap[p] == b]
            if len(top) == 1: s.out = ("win", top, "captures" if s.cap[top[0]] >= 9 else "corners")
            else: s.out = ("shared", top, "tie")
            return
        if s.sowing() and all(s.onb(p) == 0 for p in range(s.n)):
            b = max(s.cap); s.out = ("shared", [p for p in range(s.n) if s.cap[p] == b], "stalemate"); return
        if s.ply >= cap: s.out = ("draw", list(range(s.n)), "max_plies"); return
        s.mover = (s.mover + 1) % s.n; s.tp = 0
    def play(s, mv):
        assert mv in s.legal(), (mv, s.legal())
        k = s.kind(); m = s.mover
        if k == "place":
            s.pits[NAMES.index(mv)][m] += 1; s.placed[m] += 1; s.tp += 1
            if s.tp == 3: s.end()
        elif k == "pass": s.end()
        elif k == "sow":
            p, d = mv.split(":"); i = NAMES.index(p); s.hand = s.pits[i]; s.pits[i] = [0] * s.n; s.at = i; s.d = d; s.pending = None; s.run()
        elif k == "direction": s.d = mv; s.pending = None; s.run()
        elif k == "colour":
            s.pending = None
            if s.drop(COL.index(mv)): s.run()
def gen(n, seed, cap, players):
    rnd = random.Random(seed); games = []
    for _ in range(n):
        g = T(players); g.capv = cap; steps = []
        while not g.out:
            lg = g.legal(); mv = rnd.choice(lg); steps.append([lg, mv]); g.play(mv)
        games.append({"max_plies": cap, "players": players, "steps": steps, "result": [g.out[0], sorted(g.out[1]), g.out[2]], "plies": g.ply,
                      "captured": g.cap, "pits": {NAMES[i]: g.pits[i] for i in range(21) if sum(g.pits[i])}})
    return games
if __name__ == "__main__":
    n, seed, cap, players = map(int, sys.argv[1:5])
    for gm in gen(n, seed, cap, players): print(json.dumps(gm))
