#!/usr/bin/env python3
"""A random bot that logs what it does on stderr, as authors' bots do: a
line at game start, one per request naming the request's ply, one at game
end. The ladder keeps each game's stderr for the bot's owner, each line
beside the turn it was written in (docs/ladder.md, "Each game's stderr").

PAD adds that many bytes to each request's line (tests raise it to pass
the ladder's stderr cap).
"""
import json
import random
import sys

PAD = 0


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


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
            send({"type": "hello", "name": "chatty-python", "version": "1.0",
                  "author": "mancala-arena"})
        elif kind == "game_start":
            if "seed" in message:
                random.seed("%s-%s" % (message["seed"], message.get("seat")))
            log("game_start %s seat %s" % (message.get("game_id"), message.get("seat")))
        elif kind == "request":
            option = random.choice(message["legal"])
            # Written before the reply: it belongs to this request's turn.
            log("ply %d: %d legal, playing %s%s"
                % (message["ply"], len(message["legal"]), option, "." * PAD))
            send({"type": "reply", "option": option})
        elif kind == "game_end":
            log("game_end scores %s" % message.get("scores"))
        elif kind == "quit":
            return


if __name__ == "__main__":
    main()
