# An independent Hackaback implementation, written from the published rule
# text and the rulings in docs/rules/hackaback.md only, not from
# src/engine/hackaback.rs. It plays random games (random.Random(seed)) and
# prints one JSON line per game: before every decision (forced ones included)
# the legal options in canonical order and the option picked, then the
# result (ranks by seat, reason), the plies and the final snapshot.
#   python3 hackaback_reference.py GAMES SEED MAX_PLIES [slow]
# (slow: sowing moves that cannot reach the store are preferred, which gives
# long games: repetitions, draw claims, the ply cap)
# The committed hackaback_random_games.jsonl (Hackaback has no variant
# options) was made by:
#   python3 hackaback_reference.py 40 1 40 > hackaback_random_games.jsonl
#   python3 hackaback_reference.py 40 2 300 >> hackaback_random_games.jsonl
#   python3 hackaback_reference.py 18 3 300 slow >> hackaback_random_games.jsonl
#   python3 hackaback_reference.py 2 4 1 >> hackaback_random_games.jsonl
#   for s in 269 1181 1810; do python3 hackaback_reference.py 1 $s 300 slow; done >> hackaback_random_games.jsonl
# (the last three seeds end by repetition)
import json, random, sys

# Ring of 13 places in Black's sowing order; White sows it backwards.
PLACES = ["b1", "b2", "b3", "b4", "b5", "b6", "S", "w6", "w5", "w4", "w3", "w2", "w1"]
IDX = {n: i for i, n in enumerate(PLACES)}
STORE = IDX["S"]
HOLES = ["b1", "b2", "b3", "b4", "b5", "b6", "w1", "w2", "w3", "w4", "w5", "w6"]
W, B = 0, 1                 # colour index = seat: seat 0 White, seat 1 Black
COLOUR = "WB"
TOTAL = [6, 18]
STEP = [-1, +1]             # White clockwise (backwards on the ring), Black forwards
DROP_GUARD = 10000


class Hackaback:
    def __init__(s, max_plies):
        s.cap = max_plies
        s.holes = [[0, 0] for _ in PLACES]          # [W, B] per place; S unused
        for n in HOLES[:6]:
            s.holes[IDX[n]][B] = 3
        s.store = [0, 0]
        s.placed = 0
        s.mover = W                                  # White's set-up comes first
        s.ply = 0
        s.sowing_turns = 0
        s.hand = None                                # [W, B] while sowing
        s.pos = None                                 # last place passed (a skipped S included)
        s.drops = 0
        s.seen = {}
        s.result = None

    def decision(s):
        if s.result:
            return None
        if s.placed < 6:
            return "place"
        return "colour" if s.hand is not None else "sow"

    def legal(s):
        d = s.decision()
        if d == "place":
            return HOLES[6:]
        if d == "colour":
            return ["B", "W"]
        if d == "sow":
            opts = [n for n in HOLES if s.holes[IDX[n]][s.mover] > 0]
            if s.mover == W and s.sowing_turns >= 240:
                opts.append("draw")
            return opts
        return []

    def apply(s, o):
        assert o in s.legal(), o
        d = s.decision()
        if d == "place":
            s.holes[IDX[o]][W] += 1
            s.placed += 1
            if s.placed == 6:
                s.end_turn(sowing=False)
        elif o == "draw":
            s.result = ([0, 0], "draw_claim")       # not a completed turn: no ply
        elif d == "sow":
            i = IDX[o]
            s.hand, s.holes[i] = s.holes[i], [0, 0]
            s.pos = i
            s.drops = 0
            s.sow()
        else:                                        # colour for the next hole
            s.drop(COLOUR.index(o))
            s.sow()

    def drop(s, c):
        p = (s.pos + STEP[s.mover]) % 13
        s.hand[c] -= 1
        if p == STORE:
            s.store[c] += 1
        else:
            s.holes[p][c] += 1
        s.pos = p
        s.drops += 1
        if s.drops > DROP_GUARD:                     # cannot happen: at most 24 seeds
            s.result = ([0, 0], "perpetual")

    def sow(s):
        m = s.mover
        while sum(s.hand) > 0 and not s.result:
            p = (s.pos + STEP[m]) % 13
            if p == STORE:
                if s.hand[m] > 0:
                    s.drop(m)                        # compulsory, no question
                else:
                    s.pos = p                        # skipped, nothing sown
                continue
            if s.hand[W] > 0 and s.hand[B] > 0:
                return                               # ask the colour
            s.drop(W if s.hand[W] > 0 else B)
        if s.result:
            return
        s.hand = None
        s.end_turn(sowing=True)

    def end_turn(s, sowing):
        s.ply += 1
        if sowing:
            s.sowing_turns += 1
            if s.store[s.mover] == TOTAL[s.mover]:
                ranks = [1, 1]
                ranks[s.mover] = 0
                s.result = (ranks, "store")
                return
        s.mover = 1 - s.mover
        key = (tuple(map(tuple, s.holes)), tuple(s.store), s.mover)
        s.seen[key] = s.seen.get(key, 0) + 1
        if s.seen[key] >= 3:
            s.result = ([0, 0], "repetition")
        elif s.ply >= s.cap:
            s.result = ([0, 0], "max_plies")

    def snapshot(s):
        return {"phase": "over" if s.result else ("setup" if s.placed < 6 else "sowing"),
                "holes": {n: {"W": s.holes[IDX[n]][W], "B": s.holes[IDX[n]][B]} for n in HOLES},
                "store": {"W": s.store[W], "B": s.store[B]},
                "white_placed": s.placed, "sowing_turns": s.sowing_turns,
                "hand": None if s.hand is None else {"W": s.hand[W], "B": s.hand[B]},
                "ply": s.ply}


def reaches_store(g, o):
    i = IDX[o]
    return sum(g.holes[i]) >= ((STORE - i) * STEP[g.mover]) % 13


def play(rng, cap, slow=False):
    # slow: a sowing move that cannot reach the store is preferred (longer
    # games, so that repetitions, draw claims and the ply cap occur)
    g = Hackaback(cap)
    steps = []
    while not g.result:
        opts = g.legal()
        pool = opts
        if slow and g.decision() == "sow":
            pool = [o for o in opts if o == "draw" or not reaches_store(g, o)] or opts
        o = rng.choice(pool)
        steps.append([opts, o])
        g.apply(o)
    ranks, reason = g.result
    return {"max_plies": cap, "players": 2, "options": {}, "steps": steps,
            "result": {"ranks": ranks, "reason": reason}, "plies": g.ply, "final": g.snapshot()}


if __name__ == "__main__":
    games, seed, cap = map(int, sys.argv[1:4])
    slow = sys.argv[4:] == ["slow"]
    rng = random.Random(seed)
    for _ in range(games):
        print(json.dumps(play(rng, cap, slow)))
