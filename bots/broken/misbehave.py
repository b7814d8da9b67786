#!/usr/bin/env python3
"""Misbehaving bots for the referee's tests: `misbehave.py MODE`.

Each mode plays correctly (random legal options) except for one fault. They
are not league bots (see README.md). Modes:

  crash_start   exits with status 3 before the handshake
  crash_mid     crashes (status 1) at its second request
  hang          stops answering at its first request (keeps reading)
  slow          answers its first request after 60 s
  not_json      answers its first request with a line that is not JSON
  wrong_shape   answers its first request with JSON of the wrong shape
  illegal       answers its first request with an option that is never legal
  huge_line     writes 100 MB without a newline at its first request
  stderr_flood  writes 20 MB to stderr at start and 100 kB per request, plays well
  fork_child    forks a child that keeps the pipes open, then exits at its first request
  early_exit    exits cleanly (status 0) at game start
"""
import json
import os
import random
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else ""


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def misbehave(requests):
    """Called before answering a request; returns True if it answered."""
    if MODE == "crash_mid" and requests == 2:
        sys.exit(1)
    if requests != 1:
        return False
    if MODE == "hang":
        for _ in sys.stdin:
            pass
        time.sleep(3600)
    elif MODE == "slow":
        time.sleep(60)
    elif MODE == "not_json":
        sys.stdout.write("I think I will play G\n")
        sys.stdout.flush()
        return True
    elif MODE == "wrong_shape":
        send({"type": "reply", "move": "G"})
        return True
    elif MODE == "illegal":
        send({"type": "reply", "option": "Z99"})
        return True
    elif MODE == "huge_line":
        chunk = "x" * (1 << 20)
        for _ in range(100):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(3600)
    elif MODE == "fork_child":
        if os.fork() == 0:
            time.sleep(3600)  # the child holds stdin/stdout/stderr open
            os._exit(0)
        os._exit(2)
    return False


def main():
    if MODE == "crash_start":
        sys.exit(3)
    if MODE == "stderr_flood":
        block = "flood " * 10000 + "\n"
        for _ in range(350):
            sys.stderr.write(block)
        sys.stderr.flush()
    requests = 0
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send({"type": "hello", "name": "broken-" + MODE, "version": "0",
                  "author": "mancala-arena tests"})
        elif kind == "game_start" and MODE == "early_exit":
            sys.exit(0)
        elif kind == "request":
            requests += 1
            if MODE == "stderr_flood":
                sys.stderr.write("x" * 100000 + "\n")
            if not misbehave(requests):
                send({"type": "reply", "option": random.choice(message["legal"])})
        elif kind == "quit":
            return


if __name__ == "__main__":
    main()
