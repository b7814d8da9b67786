# An independent Kisolo implementation, written from the published rule text
# and the rulings in docs/rules/kisolo.md only, not from src/engine/kisolo.rs.
# It plays random games and prints one JSON line per game: before every
# decision the legal options (in the documented order) and the option picked,
# then the result (ranks, reason), the plies and the final snapshot
# (columns, outer, inner, hand).
#   python3 kisolo_reference.py GAMES SEED MAX_PLIES [COLUMNS]
# Committed sample (kisolo_random_games.jsonl):
#   python3 kisolo_reference.py 70 14 300 > kisolo_random_games.jsonl
#   python3 kisolo_reference.py 15 315 300 6 >> kisolo_random_games.jsonl
#   python3 kisolo_reference.py 15 17 300 8 >> kisolo_random_games.jsonl
#   python3 kisolo_reference.py 5 1 30 >> kisolo_random_games.jsonl
# (seeds picked so that the sample holds perpetual draws by repetition and
# by the drop guard, and ply-cap draws)
import json, random, sys

DROP_GUARD = 10_000


class Kisolo:
    def __init__(s, columns=7, max_plies=300):
        s.C = columns; s.cap = max_plies
        # board[seat][t]: the seat's track, t = 0..C-1 is o1..oC, t = C..2C-1 is iC..i1
        s.board = [[3] * (2 * columns) for _ in range(2)]
        s.to_move = 0; s.ply = 0; s.hand = 0; s.result = None

    # coordinates
    def o(s, k): return k - 1                      # track index of oK
    def i(s, k): return 2 * s.C - k                 # track index of iK
    def is_inner(s, t): return t >= s.C
    def col(s, t): return 2 * s.C - t               # K of an inner track index
    def facing(s, k): return s.C + 1 - k            # my iK faces their i(C+1-k)

    def legal(s):
        if s.result: return []
        me, op = s.board[s.to_move], s.board[1 - s.to_move]
        caps = [f"xi{k}" for k in range(1, s.C + 1)
                if me[s.i(k)] and op[s.i(s.facing(k))]]
        if caps: return caps
        return ([f"o{k}" for k in range(1, s.C + 1) if me[s.o(k)]] +
                [f"i{k}" for k in range(1, s.C + 1) if me[s.i(k)]])

    def take_file(s, k):
        """Empty the opponent's file facing my iK (inner + outer behind); return the seeds."""
        op = s.board[1 - s.to_move]; f = s.facing(k)
        seeds = op[s.i(f)] + op[s.o(f)]; op[s.i(f)] = 0; op[s.o(f)] = 0
        return seeds

    def play(s, mv):
        assert mv in s.legal(), mv
        me = s.board[s.to_move]; n2 = 2 * s.C; drops = 0
        if mv[0] == "x":
            start = s.i(int(mv[2:])); hand = s.take_file(int(mv[2:]))
        else:
            t = s.o(int(mv[1:])) if mv[0] == "o" else s.i(int(mv[1:]))
            hand = me[t]; me[t] = 0; start = (t + 1) % n2
        seen = set()
        while True:
            pos = start                              # sow one lap
            while hand:
                me[pos] += 1; hand -= 1; drops += 1
                if drops > DROP_GUARD:               # the 10,001st drop of the turn
                    s.hand = hand; return s.finish(None, "perpetual")
                h = pos; pos = (pos + 1) % n2
            key = (tuple(s.board[0]), tuple(s.board[1]), h)
            if key in seen: return s.finish(None, "perpetual")
            seen.add(key)
            n = (h + 1) % n2
            if me[n] == 0: break                     # the move ends
            op = s.board[1 - s.to_move]
            if me[h] >= 2 and s.is_inner(n) and op[s.i(s.facing(s.col(n)))]:
                hand = s.take_file(s.col(n)); start = n          # capture, sow from n
            else:
                hand = me[n]; me[n] = 0; start = (n + 1) % n2   # relay from n
        # end of turn: inner rows
        empty = [not any(s.board[p][s.C:]) for p in (0, 1)]
        if empty[0] and empty[1]: return s.finish(s.to_move, "inner_row")
        if empty[0] or empty[1]: return s.finish(1 if empty[0] else 0, "inner_row")
        s.ply += 1; s.to_move = 1 - s.to_move
        if s.ply >= s.cap: s.result = ([0, 0], "max_plies")

    def finish(s, winner, reason):
        s.ply += 1
        s.result = ([0, 0] if winner is None else [0 if p == winner else 1 for p in (0, 1)], reason)

    def snapshot(s):
        C = s.C
        return {"columns": C,
                "outer": [s.board[p][:C] for p in (0, 1)],
                "inner": [[s.board[p][s.i(k)] for k in range(1, C + 1)] for p in (0, 1)],
                "hand": s.hand}


def gen(games, seed, cap, columns=None):
    rnd = random.Random(seed)
    for _ in range(games):
        g = Kisolo(columns or 7, cap); steps = []
        while not g.result:
            lg = g.legal(); mv = rnd.choice(lg); steps.append([lg, mv]); g.play(mv)
        yield {"max_plies": cap, "players": 2,
               "options": {"columns": columns} if columns else {},
               "steps": steps, "result": {"ranks": g.result[0], "reason": g.result[1]},
               "plies": g.ply, "final": g.snapshot()}


if __name__ == "__main__":
    a = list(map(int, sys.argv[1:5]))
    for gm in gen(a[0], a[1], a[2], a[3] if len(a) > 3 else None):
        print(json.dumps(gm))
