#!/usr/bin/env python3
"""Runs a bot and copies both directions of its conversation to a file.

Usage: transcript.py OUT_FILE BOT_COMMAND...
Lines from the referee are written as `> LINE`, the bot's as `< LINE`.
Used to produce the example transcripts of protocol.md:

  arena play --game diffusion --quiet --sandbox off -- random \
      "python3 bots/tools/transcript.py /tmp/t.txt python3 bots/random-python/bot.py"
"""
import json
import subprocess
import sys
import threading


def is_quit(line):
    """Whether the referee's line is `quit`, after which it sends nothing."""
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("type") == "quit"


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
        try:
            bot.stdin.write(line)
            bot.stdin.flush()
        except BrokenPipeError:
            break
        # After `quit` the referee waits for this process to exit
        # (protocol.md): stop reading and exit with the bot.
        if is_quit(line):
            break
    try:
        bot.stdin.close()
    except BrokenPipeError:
        pass
    status = bot.wait()
    t.join(1)
    sys.exit(status)


if __name__ == "__main__":
    main()
