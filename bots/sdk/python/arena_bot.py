"""The mancala-arena protocol (v1) in one function, Python standard library only.

    from arena_bot import run

    def choose(request):
        # request: the referee's request (see protocol.md): "legal", "state",
        # "since", "timeout_ms", ...; return one string of request["legal"].
        return request["legal"][0]

    run(choose, name="my-bot", version="1.0", author="me")

It answers the hello, seeds `random` from each game's seed (mixed with the
seat: the same seed gives the same game again), calls `choose` for every
request and sends its answer, flushed, and ends on `quit`. `on_start(msg)`
and `on_end(msg)`, if given, see `game_start` and `game_end`. Log to stderr.
"""
import json
import random
import sys


def run(choose, name, version="1.0", author="", on_start=None, on_end=None):
    def send(message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send({"type": "hello", "name": name, "version": version, "author": author})
        elif kind == "game_start":
            if "seed" in message:
                random.seed("%s-%s" % (message["seed"], message.get("seat")))
            if on_start:
                on_start(message)
        elif kind == "request":
            reply = {"type": "reply", "option": choose(message)}
            if "seq" in message:
                reply["seq"] = message["seq"]
            send(reply)
        elif kind == "game_end":
            if on_end:
                on_end(message)
        elif kind == "quit":
            return
