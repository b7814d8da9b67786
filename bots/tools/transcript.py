#!/usr/bin/env python3
"""Runs a bot and copies both directions of its conversation to a file.

Usage: transcript.py OUT_FILE BOT_COMMAND...
Lines from the referee are written as `> LINE`, the bot's as `< LINE`.
Used to produce the example transcripts of protocol.md:

  arena play --game diffusion --quiet --sandbox off -- random \
      "python3 bots/tools/transcript.py /tmp/t.txt python3 bots/random-python/bot.py"
"""
import subprocess
import sys
import threading


def main():
    out = open(sys.argv[1], "w")
    bot = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, bufsize=1)
    lock = threading.Lock()

    def pump_out():
        for line in bot.stdout:
            with lock:
                out.write("< " + line)
                out.flush()
            sys.stdout.write(line)
            sys.stdout.flush()

    t = threading.Thread(target=pump_out, daemon=True)
    t.start()
    for line in sys.stdin:
        with lock:
            out.write("> " + line)
            out.flush()
        bot.stdin.write(line)
        bot.stdin.flush()
    bot.stdin.close()
    bot.wait()
    t.join(1)


if __name__ == "__main__":
    main()
