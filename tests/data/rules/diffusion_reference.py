# An independent Diffusion implementation, written from the published rule
# text (Mark Steere, 2006) and the rulings in docs/rules/diffusion.md only,
# not from src/engine/diffusion.rs.
# It plays random games and prints one JSON line per game: before every
# decision its legal options (letter order) and the option picked, then the
# result (ranks by seat, South = seat 0; reason), plies and the final
# position in the snapshot format of docs/rules/diffusion.md.
#   python3 diffusion_reference.py GAMES SEED MAX_PLIES >> diffusion_random_games.jsonl
# (committed file: 90 4 300, then 10 5 60 so that some games hit the ply cap)
# Run with no arguments, it checks Figures 3, 4 and 5 of the rule text.
import json, random, sys

NORTH, SOUTH = "FEDCBA", "GHIJKL"  # rows as the figures draw them, west to east
POS = {ch: (0, c) for c, ch in enumerate(NORTH)} | {ch: (1, c) for c, ch in enumerate(SOUTH)}
AT = {rc: ch for ch, rc in POS.items()}
LETTERS = sorted(POS)  # option order: A, B, ..., L
D = {"E": (0, 1), "NE": (-1, 1), "N": (-1, 0), "NW": (-1, -1),
     "W": (0, -1), "SW": (1, -1), "S": (1, 0), "SE": (1, 1)}
ORDER = {1: ["E", "NE", "N", "NW", "W"],   # near-row (G..L): start east, counterclockwise
         0: ["W", "SW", "S", "SE", "E"]}   # far-row (F..A): start west, counterclockwise
BLOCK = {"south": set("FEDGHI"), "north": set("CBAJKL")}  # owners: block A south, block B north


class Diffusion:
    def __init__(s, north=(4,) * 6, south=(4,) * 6, west=0, east=0, to_move="south"):
        s.pits = {ch: n for ch, n in zip(NORTH, north)} | {ch: n for ch, n in zip(SOUTH, south)}
        s.west, s.east, s.to_move, s.result = west, east, to_move, None

    def legal(s):
        return [] if s.result else [ch for ch in LETTERS if s.pits[ch] > 0]

    def targets(s, ch):
        """The pit's 5 neighbour slots in distribution order: a letter or a large pit."""
        r, c = POS[ch]
        out = []
        for d in ORDER[r]:
            dr, dc = D[d]
            cc = c + dc
            out.append("west" if cc < 0 else "east" if cc > 5 else AT[(r + dr, cc)])
        return out

    def play(s, ch):
        assert ch in s.legal()
        n, s.pits[ch] = s.pits[ch], 0
        overflow = "east" if s.to_move == "south" else "west"
        for t in s.targets(ch)[:n]:
            if t in ("west", "east"):  # corner: the large pit as two empty small pits
                setattr(s, t, getattr(s, t) + 1)
            elif s.pits[t] == 5:       # no six-count small pits
                setattr(s, overflow, getattr(s, overflow) + 1)
            else:
                s.pits[t] += 1
        s.to_move = "north" if s.to_move == "south" else "south"
        for owner, block in BLOCK.items():
            if all(s.pits[p] == 0 for p in block):
                s.result = {"winner": owner, "reason": "block"}

    def snapshot(s):
        return {"pits": dict(sorted(s.pits.items())),
                "north_row": [s.pits[ch] for ch in NORTH], "south_row": [s.pits[ch] for ch in SOUTH],
                "west": s.west, "east": s.east, "result": s.result}


def game(rng, cap):
    g, steps, plies = Diffusion(), [], 0
    while not g.result:
        opts = g.legal()
        mv = rng.choice(opts)
        steps.append([opts, mv])
        g.play(mv)
        plies += 1
        if not g.result and plies >= cap:
            g.result = {"winner": None, "reason": "max_plies"}
    w = g.result["winner"]
    ranks = [0, 0] if w is None else [0, 1] if w == "south" else [1, 0]
    return {"max_plies": cap, "players": 2, "options": {}, "steps": steps,
            "result": {"ranks": ranks, "reason": g.result["reason"]},
            "plies": plies, "final": g.snapshot()}


def figures():
    # Figure 3: I (4 stones) from the start.
    g = Diffusion(); g.play("I")
    assert ([g.pits[c] for c in NORTH], [g.pits[c] for c in SOUTH]) == ([4, 5, 5, 5, 4, 4], [4, 4, 0, 5, 4, 4])
    # Figure 4: corner F (3 stones): West 20 -> 22, G 0 -> 1 (the mover does not matter).
    for who in ("south", "north"):
        g = Diffusion((3, 0, 2, 0, 0, 2), (0, 0, 0, 0, 1, 0), 20, 20, who); g.play("F")
        assert ([g.pits[c] for c in NORTH], [g.pits[c] for c in SOUTH], g.west, g.east) == \
            ([0, 0, 2, 0, 0, 2], [1, 0, 0, 0, 1, 0], 22, 20)
    # Figure 5: C (4 stones): D +1, I and J full, K +1; East 10 -> 12 (South moving).
    g = Diffusion((2, 0, 1, 4, 0, 1), (0, 0, 5, 5, 0, 0), 20, 10); g.play("C")
    assert ([g.pits[c] for c in NORTH], [g.pits[c] for c in SOUTH], g.west, g.east) == \
        ([2, 0, 2, 0, 0, 1], [0, 0, 5, 5, 1, 0], 20, 12)
    print("figures 3, 4, 5 reproduced")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        figures()
    else:
        n, seed, cap = map(int, sys.argv[1:4])
        rng = random.Random(seed)
        for _ in range(n):
            print(json.dumps(game(rng, cap)))
