#!/usr/bin/env python3
"""A random bot for mancala-arena (protocol v1), Python 3 standard library only.

Reads one JSON object per line on stdin, writes one per line on stdout.
stderr is free for logs. Use it as a template: replace `choose`.
"""
import json
import random
import sys


def choose(request):
    """Pick one of the legal options. `request["state"]` holds the full state."""
    return random.choice(request["legal"])


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
            send({"type": "hello", "name": "random-python", "version": "1.0",
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
        # game_end and unknown types: nothing to answer.


if __name__ == "__main__":
    main()
