#!/usr/bin/env python3
"""A hostile build (docs/security.md, "Builds"): `python3 build.py`, a bot
folder's `build` command. It tries to write outside the folder it builds in
($BUILD_MARK, a path of the host, and $BUILD_ORIGINAL, the bot's own folder
as the organiser keeps it) and to connect to 127.0.0.1:$BUILD_PORT, then
writes its findings, one per line as `<what>: <result>` (a result that
starts with `open` means it worked), to built.txt in the folder it runs in,
which must work."""
import os
import socket


def attempt(what, action):
    try:
        action()
        return "%s: open" % what
    except Exception as e:  # every refusal is a finding, whatever its kind
        return "%s: refused (%s)" % (what, type(e).__name__)


def write(path):
    with open(path, "w") as f:
        f.write("written by a build\n")


def connect():
    s = socket.create_connection(("127.0.0.1", int(os.environ["BUILD_PORT"])), timeout=5)
    s.close()


lines = [
    attempt("write mark", lambda: write(os.environ["BUILD_MARK"])),
    attempt(
        "write original",
        lambda: write(os.path.join(os.environ["BUILD_ORIGINAL"], "from-build.txt")),
    ),
    attempt("connect", connect),
]
with open("built.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
