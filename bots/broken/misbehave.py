#!/usr/bin/env python3
"""Misbehaving bots for the referee's tests: `misbehave.py MODE`.

Each mode plays correctly (random legal options) except for one fault. They
are not league bots (see README.md). Modes:

  crash_start   exits with status 3 before the handshake
  hog_at_start  takes memory without end before the handshake
  crash_mid     crashes (status 1, a traceback on stderr) at its second request
  abort         at its second request calls abort()
  signal_33     at its second request kills itself with signal 33 (one of
                glibc's own, SIGSETXID)
  hang          stops answering at its first request (keeps reading)
  slow          answers its first request after 60 s
  stall_later   answers its first two requests, then at its third writes
                "thinking" to stderr and answers after 60 s (a search bot
                starved of CPU)
  deaf_later    answers its first request, then sleeps 60 s without reading
                (its second request stays unread in its stdin)
  not_json      answers its first request with a line that is not JSON
  wrong_shape   answers its first request with JSON of the wrong shape
  illegal       answers its first request with an option that is never legal
  illegal_late  at its first request waits 1 s, then answers an option that
                is never legal
  crash_late    at its first request waits 1 s, then exits with status 1
  illegal_more  answers its first request with an option that is never legal
                and then a legal one (both lines in one write): one line too many
  huge_line     writes 100 MB without a newline at its first request
  no_newline    answers its first request without the newline
  cr_only       answers its first request with a line ended by `\r` alone
  cut_then_crash  at its first request writes the start of a reply (no
                newline) and crashes (status 1)
  echo_seq      plays well, echoing each request's seq (not a fault)
  fill_tmp      at its first request fills its /tmp with 16 MB files until
                the space runs out, says how much on stderr, plays on
  wrong_seq     echoes a seq one past the request's
  stderr_flood  writes 20 MB to stderr at start and 100 kB per request, plays well
  fork_child    forks a child that keeps the pipes open, then exits at its first request
  early_exit    exits cleanly (status 0) at game start
  double_reply  answers its first request twice (both lines in one write)
  exit_after_reply  answers its first request, then exits with status 1 at once
  spin_after_end  plays well; after game_end spins the CPU until its next message
  stray_after   answers its first request, then writes the same reply again
                in a second write
  double_first  answers every request twice with its first legal option
                (both lines in one write)
  stale_reply   answers its second request echoing another game id and the
                ply of its first request
  hello_extra   sends a stray reply line together with its hello
  hello_again   plays well, but says its hello again at each game_start
  hello_typed   answers its first request with its option under
                "type": "hello" (a copy-paste of its hello's line)
  two_on_a_line  answers its first request with two replies on one line
                (no newline between them)
  write_flood   answers its first request, then 10000 more reply lines
  spaced        answers with a legal option padded with spaces (" G ")
  not_object    answers its first request with the JSON number 42
  go_fields     answers its first request with its field names capitalized
                ({"Type": "reply", "Option": ...}, as Go's encoding/json
                writes a struct without json tags)
  encoded_twice  answers its first request with its reply encoded twice: a
                JSON string holding the reply's object
  binary        answers its first request with invalid UTF-8, NUL and an escape sequence
  noise_ok      plays well, but wraps every reply in blank lines, CRLF and a BOM
  close_stdout  closes its stdout at its first request and keeps running
  close_stdin   closes its stdin before sending its hello, then waits
  close_stdin_later  answers its first request, waits 0.5 s (its next
                request comes meanwhile, unread), closes its stdin and waits
  null_fields   plays well; its hello says "version": null, "author": null
                (not a fault: null is an optional field left out)
  leave_after_hello  closes its stdin, sends its hello, and exits (status
                0) 0.2 s later: an interpreter slow to shut down
  ignore_term   plays well, ignores SIGTERM and never exits on quit
  quit_status   plays well; on quit exits with status 7
  talk_at_quit  plays well; on quit writes {"type": "bye"}, then exits 0
  flood_at_quit  plays well; on quit writes lines without end
  slow_exit     plays well; on quit closes its stdout, then takes a second
                more to exit (status 0)
  dev_stdout    plays well (not a fault), writing its lines through
                /dev/stdout and a note through /dev/stderr, as shell scripts do
  setsid_child  forks a grandchild that leaves the process group (setsid)
                and sleeps; plays well
  fork_hang     forks a child holding the pipes, then hangs at its first request
  fork_slow_start  forks a child holding the pipes, then sleeps an hour before
                its hello (a league's start-up check waits on it)
  hand_over     at its second request forks; the parent exits (status 0) and
                the child answers in its place to the end (outside the
                sandbox nothing ends the child with it)
  exit_after_game  plays well, exits (status 0) right after its first game_end
  exit_after_last  plays well; right after its reply to a request at the
                game's last ply (max_plies - 1), before game_end, exits
                (status 0)
  close_after_last  the same, but closes its stdout instead and plays on
                (reads to the end, exits on quit)
  fork_exit_after_last  plays well; at its last request of a 2-player game
                that reaches max_plies (ply >= max_plies - 2) forks a child
                that sleeps 20 s holding the pipes, answers, and exits
                (status 0) at once
  exit_late_after_game  plays well; after each game_end reads nothing more,
                waits 0.3 s and exits (status 0): the next game_start is
                written before the exit can be seen
  exit1_late_after_game  the same, exiting with status 1
  close_after_next_start  plays well; after each game_end reads the next
                line (the next game_start), closes its stdout, waits 0.5 s
                and exits (status 0): it left before playing that game, but
                its stdout ends before its exit can be seen
  crash_on_end  plays well; crashes (status 1, a traceback on stderr) in its
                handler of every game_end
  talk_after_end  plays well, but answers every game_end with a stray reply
                line (echoing the ended game's game_id)
  late_after_end  plays well; 0.5 s after each game_end writes a reply again,
                echoing the ended game's game_id (read in the next game)
  print_after_end  plays well, but answers every game_end with a debug
                print on stdout (not JSON)
  print_late_after_end  the same, 0.5 s after each game_end (read in the
                next game)
  blank_flood   at its first request writes blank lines without end
  spin          at its first request forks a child, and both spin on the CPU
  hog           at its first request takes memory, 16 MB at a time, without end
  fork_bomb     at its first request forks without end (children fork too)
  spy           plays well; at its first request looks for secrets (other
                processes' environments and descriptors, the network on
                127.0.0.1:$SPY_PORT), reads $SPY_VICTIM, $SPY_LEAGUE, appends
                to $SPY_VICTIM, $SPY_RESULTS and its own folder, and writes
                what it found to stderr
  daemon        plays well, but at each game_start leaves a daemon (setsid)
                that writes a reply line to the inherited stdout at once
                (the bot goes on once it has) and then every 10 ms
  bad_version   says protocol 2 in its hello
  no_name       sends a hello without a name
  silent        never answers the hello (keeps reading)
  stop_self     at its first request stops itself (SIGSTOP to its own pid)
  crash_then_hang  with a second argument MARKER: at its first request,
                if MARKER does not exist, makes it and exits (status 4);
                else hangs (a second process, started again, times out)
  crash_then_crash_later  with a second argument MARKER: at its first
                request, if MARKER does not exist, makes it and exits (status
                4); else crashes (status 1) at its third request
  threads       with a second argument N: starts N threads (each asleep)
                before its hello, then plays well; a thread refused is a
                crash (status 1, "can't start new thread")
  limits_probe  with a second argument FOLDER: before its hello tries to
                take 300 MiB and to write a 2 MiB file in FOLDER, says on
                stderr what was refused, and exits with status 5 if both
                were, else 6
  reply_on_stderr  writes each reply on stderr, not stdout
  no_flush      sends its hello, but keeps its first reply in a buffer of
                its own (as a write never flushed) and waits for the next line
  strict        plays well on the messages of today alone: raises (status 1)
                on a message of a type it does not know, on a request with a
                field it does not know (`time_left_ms` of a per-game clock
                included), and on a Kisolo board of other than 7 columns

With a second argument PIDFILE, the modes that fork write
"GROUP CHILD" (process group, child pid) there once the child runs, or,
where the sandbox does not let them, "PIDS GROUP CHILD" to stderr.
"""
import json
import select
import os
import random
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
PIDFILE = sys.argv[2] if len(sys.argv) > 2 else None


FIRST_PLY = [None]


def leave_group():
    """setsid, where allowed: the sandbox's system-call filter refuses it
    (the process then stays in the bot's group, and is found there)."""
    try:
        os.setsid()
    except OSError as e:
        sys.stderr.write("setsid refused (%s)\n" % e.strerror)


def start_daemon():
    """A setsid daemon that writes a reply line to the inherited stdout at
    once and then every 10 ms, until the pipe is gone. Returns once the
    first line is written: on a loaded machine the child might otherwise
    not run before the game is over, and the test would prove nothing."""
    ready_r, ready_w = os.pipe()
    if os.fork() != 0:
        os.close(ready_w)
        os.read(ready_r, 1)
        os.close(ready_r)
        return
    os.close(ready_r)
    leave_group()
    line = (json.dumps({"type": "reply", "option": "daemon"}) + "\n").encode()
    first = True
    while True:
        try:
            os.write(1, line)
        except OSError:
            os._exit(0)
        if first:
            os.write(ready_w, b"x")
            os.close(ready_w)
            first = False
        time.sleep(0.01)


# The messages and request fields of protocol 1 that mode `strict` knows.
KNOWN_TYPES = ("hello", "game_start", "request", "game_end", "quit")
KNOWN_REQUEST = {"type", "game_id", "seq", "ply", "state", "legal", "since", "timeout_ms"}


def strict(message):
    """Mode strict: what a bot written against today's messages alone
    does with what a league may send it beyond them."""
    kind = message.get("type")
    if kind not in KNOWN_TYPES:
        raise ValueError("unknown message type %r" % kind)
    if kind == "request":
        unknown = sorted(set(message) - KNOWN_REQUEST)
        if unknown:
            raise KeyError("unknown fields %s" % unknown)
        columns = message["state"].get("columns", 7)
        if columns != 7:
            raise IndexError("a Kisolo board has 7 columns, not %d" % columns)


def send(message):
    if MODE == "dev_stdout":
        with open("/dev/stdout", "w") as out:
            out.write(json.dumps(message) + "\n")
        with open("/dev/stderr", "w") as err:
            err.write("sent through /dev/stdout\n")
        return
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def raw(data):
    """Writes bytes to stdout in one write."""
    sys.stdout.flush()
    os.write(1, data)


def fork_sleeper(leave_group):
    """Forks a child that sleeps for an hour (holding the pipes); returns its pid."""
    pid = os.fork()
    if pid == 0:
        if leave_group:
            globals()["leave_group"]()
        time.sleep(3600)
        os._exit(0)
    if PIDFILE:
        line = "%d %d\n" % (os.getpgid(0), pid)
        try:
            with open(PIDFILE + ".tmp", "w") as f:
                f.write(line)
            os.rename(PIDFILE + ".tmp", PIDFILE)
        except OSError:
            # In its sandbox the bot cannot write there: say it on stderr.
            sys.stderr.write("PIDS " + line)
            sys.stderr.flush()
    return pid


def spy():
    """Reports to stderr, one finding per line, what it could reach."""
    found = []
    found.append("env: " + ",".join(sorted(os.environ)))
    secrets = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if b"SECRET" in f.read():
                    with open("/proc/%s/comm" % pid) as c:
                        secrets.append(pid + "/" + c.read().strip())
        except OSError:
            pass
    found.append("secrets in: " + (",".join(secrets) or "none"))
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    found.append("processes: %s" % (len(others) or "none"))
    shown = []
    for pid in others:
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as a:
                if a.read().strip(b"\0"):
                    shown.append(pid)
        except OSError:
            pass
    found.append("command lines: %s" % (len(shown) or "none"))
    # The referee: the `arena` process whose command line names this
    # league's file ($SPY_LEAGUE). Where it cannot be seen, the attacks go
    # to $SPY_TARGET, a pid the test knows is alive outside.
    referee = None
    league = os.environ.get("SPY_LEAGUE", "\0").encode()
    for pid in others:
        try:
            with open("/proc/%s/comm" % pid) as c, open("/proc/%s/cmdline" % pid, "rb") as a:
                if c.read().strip() == "arena" and league in a.read():
                    referee = int(pid)
        except OSError:
            pass
    if referee is None:
        referee = int(os.environ.get("SPY_TARGET", "1"))
        found.append("referee: not visible; attacking %d" % referee)
    else:
        found.append("referee: %d" % referee)
    # Files: another bot's, the results, the league file, its own.
    for what, var, how in [("victim file", "SPY_VICTIM", "r"),
                           ("victim rewrite", "SPY_VICTIM", "a"),
                           ("results", "SPY_RESULTS", "a"),
                           ("league file", "SPY_LEAGUE", "r"),
                           ("own folder", "", "a")]:
        path = os.environ.get(var, "") if var else os.path.join(os.getcwd(), "spy.txt")
        try:
            with open(path, how) as f:
                if how == "a":
                    f.write("spy was here\n")
                    found.append("%s: written %s" % (what, path))
                else:
                    found.append("%s: read %r" % (what, f.read(40)))
        except OSError as e:
            found.append("%s: denied (%s)" % (what, e.strerror))
    try:
        with open("/proc/%d/environ" % referee, "rb") as f:
            f.read()
        found.append("referee environ: read")
    except OSError as e:
        found.append("referee environ: denied (%s)" % e.strerror)
    try:
        targets = [os.readlink("/proc/%d/fd/%s" % (referee, fd))
                   for fd in os.listdir("/proc/%d/fd" % referee)]
        found.append("referee fds: %s" % " ".join(sorted(set(targets)))[:300])
    except OSError as e:
        found.append("referee fds: denied (%s)" % e.strerror)
    try:
        os.close(os.open("/proc/%d/fd/0" % referee, os.O_WRONLY))
        found.append("referee pipes: opened")
    except OSError as e:
        found.append("referee pipes: denied (%s)" % e.strerror)
    try:
        os.kill(referee, 0)
        found.append("referee signals: allowed")
    except OSError as e:
        found.append("referee signals: denied (%s)" % e.strerror)
    try:
        import socket
        socket.create_connection(("127.0.0.1", int(os.environ.get("SPY_PORT", "1"))), timeout=2).close()
        found.append("network: connected")
    except OSError as e:
        found.append("network: blocked (%s)" % e.strerror)
    home = os.environ.get("HOME", "")
    try:
        with open(os.path.join(home, "scratch.txt"), "w") as f:
            f.write("mine")
        found.append("home: writable " + home)
    except OSError as e:
        found.append("home: not writable (%s)" % e.strerror)
    sys.stderr.write("".join("SPY " + line + "\n" for line in found))
    sys.stderr.flush()


UNFLUSHED = []


def misbehave(requests, message):
    """Called before answering a request; returns True if it answered."""
    if MODE in ("illegal_late", "crash_late"):
        time.sleep(1)
        if MODE == "crash_late":
            sys.exit(1)
        send({"type": "reply", "option": "Z99"})
        return True
    if MODE == "crash_then_crash_later":
        if requests == 1 and not os.path.exists(PIDFILE):
            open(PIDFILE, "w").close()
            sys.stderr.write("first process: exiting\n")
            sys.exit(4)
        if requests == 3:
            raise RuntimeError("second process: a bug at request 3")  # status 1
    if MODE == "crash_mid" and requests == 2:
        raise RuntimeError("crash_mid: a bug at request 2")  # status 1
    if MODE == "abort" and requests == 2:
        os.abort()
    if MODE == "signal_33" and requests == 2:
        os.kill(os.getpid(), 33)
    if MODE == "close_stdin_later" and requests == 1:
        send({"type": "reply", "option": random.choice(message["legal"])})
        time.sleep(0.5)
        os.close(0)
        time.sleep(3600)
    if MODE == "stop_self" and requests == 1:
        os.kill(os.getpid(), signal.SIGSTOP)
    if MODE == "deaf_later" and requests == 1:
        send({"type": "reply", "option": random.choice(message["legal"])})
        time.sleep(60)
        return True
    if MODE == "stall_later" and requests == 3:
        sys.stderr.write("thinking\n")
        sys.stderr.flush()
        time.sleep(60)
    if MODE == "stale_reply" and requests == 2:
        send({"type": "reply", "option": random.choice(message["legal"]),
              "game_id": "old-" + message["game_id"], "ply": FIRST_PLY[0]})
        return True
    if MODE == "cut_then_crash" and requests == 1:
        raw(json.dumps({"type": "reply", "option": message["legal"][0]}).encode()[:20])
        sys.exit(1)
    if MODE == "no_newline" and requests == 1:
        raw(json.dumps({"type": "reply", "option": message["legal"][0]}).encode())
        return True
    if MODE == "cr_only" and requests == 1:
        raw(json.dumps({"type": "reply", "option": message["legal"][0]}).encode() + b"\r")
        return True
    if MODE in ("echo_seq", "wrong_seq"):
        seq = message["seq"] + (1 if MODE == "wrong_seq" else 0)
        send({"type": "reply", "option": random.choice(message["legal"]), "seq": seq})
        return True
    if MODE == "fill_tmp" and requests == 1:
        # Files of 16 MB in its /tmp until the space runs out (at most 1 GB).
        chunk, wrote, why = b"x" * (16 << 20), 0, "no error"
        for n in range(64):
            try:
                with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "fill%d" % n), "wb") as f:
                    f.write(chunk)
                wrote += 16
            except OSError as e:
                why = e.strerror
                break
        sys.stderr.write("FILL wrote %d MB (%s)\n" % (wrote, why))
        sys.stderr.flush()
    if MODE == "spaced":
        send({"type": "reply", "option": " " + random.choice(message["legal"]) + " "})
        return True
    if MODE == "noise_ok":
        reply = json.dumps({"type": "reply", "option": random.choice(message["legal"])})
        raw(b"\n \r\n\xef\xbb\xbf" + reply.encode() + b"\r\n\n\t\n")
        return True
    if MODE == "double_first":
        line = json.dumps({"type": "reply", "option": message["legal"][0]})
        raw((line + "\n" + line + "\n").encode())
        return True
    if requests == 1:
        FIRST_PLY[0] = message["ply"]
    if requests != 1:
        return False
    if MODE == "double_reply":
        line = json.dumps({"type": "reply", "option": random.choice(message["legal"])})
        raw((line + "\n" + line + "\n").encode())
        return True
    if MODE == "two_on_a_line":
        line = json.dumps({"type": "reply", "option": random.choice(message["legal"])})
        raw((line + line + "\n").encode())
        return True
    if MODE == "crash_then_hang":
        if not os.path.exists(PIDFILE):
            open(PIDFILE, "w").close()
            sys.stderr.write("first process: exiting\n")
            sys.exit(4)
        sys.stderr.write("second process: hanging\n")
        sys.stderr.flush()
        time.sleep(3600)
    if MODE == "reply_on_stderr":
        # Its reply written to the wrong stream.
        sys.stderr.write(json.dumps({"type": "reply", "option": message["legal"][0]}) + "\n")
        sys.stderr.flush()
        return True
    if MODE == "no_flush":
        # As a write to a block-buffered stdout never flushed (whatever
        # PYTHONUNBUFFERED says): the reply stays in the bot.
        UNFLUSHED.append(json.dumps({"type": "reply", "option": message["legal"][0]}) + "\n")
        return True
    if MODE == "exit_after_reply":
        send({"type": "reply", "option": random.choice(message["legal"])})
        os._exit(1)
    if MODE == "stray_after":
        line = json.dumps({"type": "reply", "option": random.choice(message["legal"])})
        raw((line + "\n").encode())
        raw((line + "\n").encode())
        return True
    if MODE == "illegal_more":
        bad = json.dumps({"type": "reply", "option": "Z99"})
        good = json.dumps({"type": "reply", "option": random.choice(message["legal"])})
        raw((bad + "\n" + good + "\n").encode())
        return True
    if MODE == "spy":
        spy()
        return False
    if MODE == "hog":
        hoard = []
        while True:
            hoard.append(b"x" * (16 << 20))
    if MODE == "fork_bomb":
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.01)
    if MODE == "spin":
        os.fork()
        while True:
            pass
    if MODE == "blank_flood":
        chunk = b"\n" * 65536
        while True:
            raw(chunk)
    if MODE == "write_flood":
        line = json.dumps({"type": "reply", "option": random.choice(message["legal"])})
        raw(((line + "\n") * 10000).encode())
        return True
    if MODE == "not_object":
        raw(b"42\n")
        return True
    if MODE == "go_fields":
        send({"Type": "reply", "Option": random.choice(message["legal"])})
        return True
    if MODE == "encoded_twice":
        send(json.dumps({"type": "reply", "option": random.choice(message["legal"])}))
        return True
    if MODE == "binary":
        raw(b"\xff\xfe\x00\x1b[31mred\x1b[0m\n")
        return True
    if MODE == "close_stdout":
        sys.stdout.flush()
        os.close(1)
        for _ in sys.stdin:
            pass
        time.sleep(3600)
    if MODE == "fork_hang":
        fork_sleeper(False)
        for _ in sys.stdin:
            pass
        time.sleep(3600)
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
    elif MODE == "hello_typed":
        send({"type": "hello", "option": message["legal"][0]})
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
    if MODE == "hog_at_start":
        hoard = []
        while True:
            hoard.append(b"x" * (16 << 20))
    if MODE == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "setsid_child":
        fork_sleeper(True)
    if MODE == "fork_slow_start":
        fork_sleeper(False)
        time.sleep(3600)
    if MODE == "limits_probe":
        try:
            held = bytearray(300 << 20)
            memory = "allowed"
            del held
        except MemoryError:
            memory = "refused"
        try:
            with open(os.path.join(PIDFILE, "big"), "wb") as f:
                f.write(b"x" * (2 << 20))
            size = "allowed"
        except OSError as e:
            size = "refused (%s)" % e.strerror
        sys.stderr.write("PROBE 300 MiB: %s; a 2 MiB file: %s\n" % (memory, size))
        sys.exit(5 if memory == "refused" and size != "allowed" else 6)
    if MODE == "threads":
        import threading
        for _ in range(int(PIDFILE)):
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    if MODE == "stderr_flood":
        block = "flood " * 10000 + "\n"
        for _ in range(350):
            sys.stderr.write(block)
        sys.stderr.flush()
    requests = 0
    max_plies = None
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if MODE == "strict":
            strict(message)
        if kind == "game_start":
            max_plies = message.get("max_plies")
        if kind == "hello":
            hello = {"type": "hello", "name": "broken-" + MODE, "version": "0",
                     "author": "mancala-arena tests"}
            if MODE == "silent":
                continue
            if MODE == "bad_version":
                hello["protocol"] = 2
            if MODE == "no_name":
                del hello["name"]
            if MODE == "close_stdin":
                os.close(0)
                send(hello)
                time.sleep(3600)
            if MODE == "null_fields":
                hello["version"] = None
                hello["author"] = None
            if MODE == "leave_after_hello":
                os.close(0)
                send(hello)
                time.sleep(0.2)
                sys.exit(0)
            if MODE == "hello_extra":
                extra = {"type": "reply", "option": "1"}
                raw((json.dumps(hello) + "\n" + json.dumps(extra) + "\n").encode())
                continue
            send(hello)
        elif kind == "game_start" and MODE == "early_exit":
            sys.exit(0)
        elif kind == "game_start" and MODE == "hello_again":
            send({"type": "hello", "name": "broken-" + MODE})
        elif kind == "game_start" and MODE == "daemon":
            start_daemon()
        elif kind == "game_end" and MODE == "exit_after_game":
            sys.exit(0)
        elif kind == "game_end" and MODE == "crash_on_end":
            raise RuntimeError("my game_end handler failed")
        elif kind == "game_end" and MODE == "spin_after_end":
            # Busy between games, until the next message comes.
            while not select.select([0], [], [], 0)[0]:
                pass
        elif kind == "game_end" and MODE == "close_after_next_start":
            sys.stdin.readline()
            os.close(1)
            time.sleep(0.5)
            sys.exit(0)
        elif kind == "game_end" and MODE in ("exit_late_after_game", "exit1_late_after_game"):
            time.sleep(0.3)
            sys.exit(0 if MODE == "exit_late_after_game" else 1)
        elif kind == "game_end" and MODE == "talk_after_end":
            send({"type": "reply", "option": "thanks", "game_id": message["game_id"]})
        elif kind == "game_end" and MODE == "late_after_end":
            time.sleep(0.5)
            send({"type": "reply", "option": "thanks", "game_id": message["game_id"]})
        elif kind == "game_end" and MODE in ("print_after_end", "print_late_after_end"):
            if MODE == "print_late_after_end":
                time.sleep(0.5)
            print("game over, score", message["scores"], flush=True)
        elif kind == "request":
            requests += 1
            if MODE == "stderr_flood":
                sys.stderr.write("x" * 100000 + "\n")
            if MODE == "hand_over" and requests == 2 and os.fork() != 0:
                os._exit(0)
            its_last = max_plies is not None and message["ply"] >= max_plies - 2
            if MODE == "fork_exit_after_last" and its_last and os.fork() == 0:
                time.sleep(20)
                os._exit(0)
            if not misbehave(requests, message):
                send({"type": "reply", "option": random.choice(message["legal"])})
            if MODE == "fork_exit_after_last" and its_last:
                os._exit(0)
            last = max_plies is not None and message["ply"] >= max_plies - 1
            if MODE == "exit_after_last" and last:
                os._exit(0)
            if MODE == "close_after_last" and last:
                os.close(1)
        elif kind == "quit":
            if MODE == "ignore_term":
                time.sleep(3600)
            if MODE == "quit_status":
                sys.stderr.write("cleaning up failed\n")
                sys.exit(7)
            if MODE == "flood_at_quit":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                while True:
                    sys.stdout.write('{"type": "bye"}\n' * 100)
                    sys.stdout.flush()
            if MODE == "talk_at_quit":
                send({"type": "bye"})
                sys.exit(0)
            if MODE == "slow_exit":
                sys.stdout.flush()
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                time.sleep(1)
            return


if __name__ == "__main__":
    main()
