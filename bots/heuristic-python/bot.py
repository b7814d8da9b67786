#!/usr/bin/env python3
"""A heuristic bot for mancala-arena (protocol v1), Python 3 standard library only.

It reads the state JSON of each request and plays one move ahead where it
knows the rules well enough to simulate them:

- Diffusion: empty one's own block (South owns F E D G H I, North C B A J K L):
  pick the pit whose sowing leaves the fewest stones in one's own block.
- F.I.L.O: in the movement phase keep control of stacks (the player who moves
  last wins): pick the move that leaves most own-topped stacks minus the
  opponent's; in the entry phase enter one checker at a time (the text's
  winning plan).
- Other games: prefer the option naming the pit with most stones (captures
  and long sowings), else random.
"""
import json
import random
import sys

# Diffusion: neighbours of each small pit A..L in distribution order
# (docs/rules/diffusion.md); 12 = West, 13 = East large pit.
def _pit(row, col):
    if col < 0:
        return 12
    if col > 5:
        return 13
    return 5 - col if row == "N" else 6 + col

NEIGHBOURS = []
for p in range(12):
    if p < 6:
        c = 5 - p
        NEIGHBOURS.append([_pit("N", c - 1), _pit("S", c - 1), _pit("S", c),
                           _pit("S", c + 1), _pit("N", c + 1)])
    else:
        c = p - 6
        NEIGHBOURS.append([_pit("S", c + 1), _pit("N", c + 1), _pit("N", c),
                           _pit("N", c - 1), _pit("S", c - 1)])
BLOCK = {"south": "FEDGHI", "north": "CBAJKL"}


def diffusion(state, legal):
    pits = [state["pits"][chr(65 + i)] for i in range(12)] + [state["west"], state["east"]]
    me = state["to_move"]
    other = "north" if me == "south" else "south"

    def score(letter):
        b = pits[:]
        p = ord(letter) - 65
        hand, b[p] = b[p], 0
        for n in NEIGHBOURS[p][:hand]:
            if n < 12 and b[n] < 5:
                b[n] += 1
            else:
                b[13 if me == "south" else 12] += 1
        mine = sum(b[ord(x) - 65] for x in BLOCK[me])
        theirs = sum(b[ord(x) - 65] for x in BLOCK[other])
        if mine == 0:
            return 1000
        if theirs == 0:
            return -1000
        return theirs - mine

    return max(legal, key=lambda o: (score(o), random.random()))


def filo(state, legal):
    if state["phase"] == "entry":
        return "1" if "1" in legal else legal[0]
    me = "W" if state["to_move"] == "white" else "B"
    step = 1 if me == "W" else -1
    squares = [list(state["squares"][chr(65 + i)]) for i in range(8)]

    def score(option):
        if option.endswith("!"):
            return 1000
        b = [s[:] for s in squares]
        sq = ord(option) - 65
        lifted, b[sq] = b[sq], []
        for checker in lifted:
            sq = (sq + step) % 8
            if len(b[sq]) < 4:
                b[sq].append(checker)
        tops = [s[-1] for s in b if s]
        return tops.count(me) - 2 * (len(tops) - tops.count(me))

    return max(legal, key=lambda o: (score(o), random.random()))


def biggest(state, legal):
    """Options naming a pit (`4b`, `4b:E`, `i3`...): the fullest pit first."""
    holes = state.get("pits") or state.get("holes") or {}

    def size(option):
        v = holes.get(option.split(":")[0])
        if isinstance(v, dict):
            return sum(x for x in v.values() if isinstance(x, int))
        return v if isinstance(v, int) else 0

    return max(legal, key=lambda o: (size(o), random.random()))


def choose(request):
    state, legal = request.get("state") or {}, request["legal"]
    try:
        game = state.get("variant")
        if game == "diffusion":
            return diffusion(state, legal)
        if game == "filo":
            return filo(state, legal)
        return biggest(state, legal)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        print("heuristic failed, playing at random:", repr(e), file=sys.stderr)
        return random.choice(legal)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        kind = message.get("type")
        if kind == "hello":
            send({"type": "hello", "name": "heuristic-python", "version": "1.0",
                  "author": "mancala-arena"})
        elif kind == "game_start":
            # Draw this game's randomness from the referee's seed (and the
            # seat): the same seed gives the same game again.
            if "seed" in message:
                random.seed("%s-%s" % (message["seed"], message.get("seat")))
        elif kind == "request":
            send({"type": "reply", "option": choose(message)})
        elif kind == "quit":
            return


if __name__ == "__main__":
    main()
