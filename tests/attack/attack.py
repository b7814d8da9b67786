#!/usr/bin/env python3
"""Attack bots for the sandbox's tests (docs/security.md): `attack.py MODE`.

Every mode plays correctly (random legal options) and attacks on the side,
writing one finding per line to stderr as `ATTACK <what>: <result>`; a
result that starts with `open` means the attack worked. Modes:

  probe         at its first request: inherited descriptors ($PROBE_FD),
                the controlling terminal and TIOCSTI, the keyring, inotify,
                flock, vsock and inet sockets, ptrace, unshare, mount, the
                files $PROBE_FILES (colon-separated) it must not read,
                /proc's host-wide files, NoNewPrivs and Seccomp
  send          a colluding bot: from its first request on, says "1" through
                every channel it knows (flock and fcntl locks on a system
                file, the user keyring, reads watched by inotify, a vsock
                port, an abstract unix socket)
  recv          the other colluder: at each request looks for the bit on
                every channel, and reports what it found
  hold          a colluding bot that signals through the host-wide
                counters: at each odd request it holds thousands of
                descriptors, 128 MiB of memory and 2,000 files in its /tmp
                (descriptors, memory, inodes and dentries), at each even
                one it lets them go; it stays paused holding them
  count         the other colluder: at each request reads the counters
                ($COUNTERS) and reports what each said
  mounts        at its first request reports every line of its mount table
                (/proc/self/mountinfo and /proc/mounts) and its working folder
  honest        thinks $THINK_MS of CPU time (busy loop) per decision, and
                reports the wall time each took
  hog           at its first request leaves 4 children that spin on the CPU
                for ever, then answers at once every time
"""
import ctypes
import json
import os
import random
import socket
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "probe"
LIBC = ctypes.CDLL(None, use_errno=True)
LOCK_FILE = "/etc/hostname" if os.path.exists("/etc/hostname") else "/etc/passwd"


def report(what, result):
    sys.stderr.write("ATTACK %s: %s\n" % (what, result))
    sys.stderr.flush()


def attempt(what, fn):
    """Runs fn; 'open: ...' if it worked, 'refused (errno)' if it raised."""
    try:
        got = fn()
        report(what, "open" + ("" if got is None else ": %s" % (got,)))
    except OSError as e:
        report(what, "refused (%s)" % (e.strerror or e))
    except Exception as e:  # noqa: BLE001 (a probe reports whatever happens)
        report(what, "refused (%s)" % e)


def syscall(nr, *args):
    r = LIBC.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


# x86_64 and aarch64 system call numbers.
ARM = os.uname().machine in ("aarch64", "arm64")
NR = {
    "ptrace": 117 if ARM else 101,
    "keyctl": 219 if ARM else 250,
    "add_key": 217 if ARM else 248,
    "unshare": 97 if ARM else 272,
    "bpf": 280 if ARM else 321,
    "perf_event_open": 241 if ARM else 298,
    "userfaultfd": 282 if ARM else 323,
    "io_uring_setup": 425,
}
KEY_SPEC_SESSION_KEYRING = -3
KEY_SPEC_USER_KEYRING = -4


def add_key(desc, ring):
    return syscall(NR["add_key"], ctypes.addressof(ctypes.create_string_buffer(b"user")),
                   ctypes.addressof(ctypes.create_string_buffer(desc)),
                   ctypes.addressof(ctypes.create_string_buffer(b"1")), 1, ring)


def find_key(desc, ring):
    KEYCTL_SEARCH = 10
    return syscall(NR["keyctl"], KEYCTL_SEARCH, ring,
                   ctypes.addressof(ctypes.create_string_buffer(b"user")),
                   ctypes.addressof(ctypes.create_string_buffer(desc)), 0)


def probe():
    fd = int(os.environ.get("PROBE_FD", "0") or 0)
    if fd:
        def inherited():
            data = os.pread(fd, 64, 0)
            os.pwrite(fd, b"bot was here", 0)
            return "read %r and wrote" % data
        attempt("inherited descriptor", inherited)
    report("descriptors", " ".join(sorted(os.listdir("/proc/self/fd"))))
    attempt("controlling terminal", lambda: os.close(os.open("/dev/tty", os.O_RDWR)))

    def tiocsti():
        import fcntl
        import termios
        for f in (0, 1, 2):
            try:
                fcntl.ioctl(f, termios.TIOCSTI, b"x")
                return "injected through %d" % f
            except OSError:
                pass
        raise OSError("no descriptor took TIOCSTI")
    attempt("tiocsti", tiocsti)
    attempt("session keyring", lambda: add_key(b"arena-probe", KEY_SPEC_SESSION_KEYRING))
    attempt("user keyring", lambda: add_key(b"arena-probe", KEY_SPEC_USER_KEYRING))
    attempt("inotify", lambda: syscall(253 if not ARM else 26, 0))  # inotify_init1
    attempt("flock", lambda: flock_system_file())
    attempt("vsock", lambda: socket.socket(40, socket.SOCK_STREAM).close())
    attempt("inet socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
    attempt("ptrace", lambda: syscall(NR["ptrace"], 0, 0, 0, 0))  # PTRACE_TRACEME
    attempt("unshare", lambda: syscall(NR["unshare"], 0x10000000))  # CLONE_NEWUSER
    attempt("bpf", lambda: syscall(NR["bpf"], 0, 0, 0))
    attempt("perf_event_open", lambda: syscall(NR["perf_event_open"], 0, 0, -1, -1, 0))
    attempt("userfaultfd", lambda: syscall(NR["userfaultfd"], 0))
    attempt("io_uring", lambda: syscall(NR["io_uring_setup"], 1, 0))
    attempt("mount", lambda: mount_tmpfs())
    for path in [p for p in os.environ.get("PROBE_FILES", "").split(":") if p]:
        attempt("read " + path, lambda p=path: open(p, "rb").read(40))
    for name in ("stat", "loadavg", "uptime"):
        try:
            with open("/proc/" + name) as f:
                data = f.read()
            report("/proc/" + name, "open" if data else "empty")
        except OSError as e:
            report("/proc/" + name, "refused (%s)" % e.strerror)
    try:
        with open("/proc/self/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        report("no_new_privs", status.get("NoNewPrivs", "?").strip())
        report("seccomp", status.get("Seccomp", "?").strip())
        report("uid", status.get("Uid", "?").split()[0])
    except OSError as e:
        report("status", "refused (%s)" % e.strerror)


def flock_system_file():
    import fcntl
    f = open(LOCK_FILE, "rb")
    fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
    return LOCK_FILE


def mount_tmpfs():
    r = LIBC.mount(b"none", b"/tmp", b"tmpfs", 0, None)
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


HELD = []


def send():
    """Says 1 on every channel it can open; keeps them open."""
    import fcntl

    def lock():
        f = open(LOCK_FILE, "rb")
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        HELD.append(f)

    def posix_lock():
        f = open(LOCK_FILE, "rb")
        fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        HELD.append(f)

    def vsock():
        s = socket.socket(40, socket.SOCK_STREAM)
        s.bind((0xFFFFFFFF, 7777))
        s.listen(1)
        HELD.append(s)

    def abstract():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind("\0arena-collude")
        s.listen(1)
        HELD.append(s)

    import threading

    def touching():
        while True:
            touch_watched()
            time.sleep(0.005)
    threading.Thread(target=touching, daemon=True).start()
    for what, fn in [("flock", lock), ("fcntl lock", posix_lock),
                     ("user keyring", lambda: add_key(b"arena-collude", KEY_SPEC_USER_KEYRING)),
                     ("vsock", vsock), ("abstract socket", abstract)]:
        attempt("send " + what, fn)


def touch_watched():
    """The inotify channel: reads that a watcher of /etc sees."""
    try:
        with open(LOCK_FILE, "rb") as f:
            f.read(1)
    except OSError:
        pass


def recv():
    import fcntl
    found = {}

    def locked(kind):
        f = open(LOCK_FILE, "rb")
        try:
            if kind == "flock":
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            return True
        finally:
            f.close()

    for what, fn in [("flock", lambda: locked("flock")),
                     ("fcntl lock", lambda: locked("fcntl")),
                     ("user keyring", lambda: find_key(b"arena-collude", KEY_SPEC_USER_KEYRING) > 0),
                     ("vsock", lambda: vsock_connect()),
                     ("abstract socket", lambda: abstract_connect()),
                     ("inotify", lambda: inotify_sees())]:
        try:
            found[what] = "open: got 1" if fn() else "nothing"
        except OSError as e:
            found[what] = "nothing (%s)" % (e.strerror or e)
    for what, result in found.items():
        report("recv " + what, result)


def vsock_connect():
    s = socket.socket(40, socket.SOCK_STREAM)
    s.settimeout(0.2)
    try:
        s.connect((2, 7777))
        return True
    finally:
        s.close()


def abstract_connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0arena-collude")
        return True
    finally:
        s.close()


def inotify_sees():
    fd = syscall(253 if not ARM else 26, os.O_NONBLOCK)  # inotify_init1
    try:
        IN_ACCESS, IN_OPEN = 0x1, 0x20
        LIBC.inotify_add_watch(fd, os.path.dirname(LOCK_FILE).encode(), IN_ACCESS | IN_OPEN)
        time.sleep(0.05)
        try:
            return len(os.read(fd, 4096)) > 0
        except BlockingIOError:
            return False
    finally:
        os.close(fd)


HOLDING = {"fds": [], "memory": None, "files": []}


def hold(request):
    """Says 1 (odd request) or 0 (even) through the host-wide counters."""
    if request % 2 == 1:
        import resource
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (OSError, ValueError):
            pass
        want = min(8000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64)
        try:
            while len(HOLDING["fds"]) < want:
                HOLDING["fds"].append(os.open("/dev/null", os.O_RDONLY))
        except OSError:
            pass
        try:
            HOLDING["memory"] = b"\x01" * (128 << 20)
        except MemoryError:
            pass
        for i in range(2000):
            path = "/tmp/hold-%d" % i
            try:
                with open(path, "w"):
                    pass
                HOLDING["files"].append(path)
            except OSError:
                break
        report("hold %d" % request, "1 (%d descriptors, %d files)"
               % (len(HOLDING["fds"]), len(HOLDING["files"])))
    else:
        for fd in HOLDING["fds"]:
            os.close(fd)
        for path in HOLDING["files"]:
            os.unlink(path)
        HOLDING.update(fds=[], memory=None, files=[])
        report("hold %d" % request, "0")


COUNTERS = ["/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr", "/proc/sys/fs/inode-state",
            "/proc/sys/fs/dentry-state", "/proc/meminfo", "/proc/pressure/cpu",
            "/proc/pressure/memory", "/proc/pressure/io", "/proc/loadavg", "/proc/stat",
            "/proc/vmstat", "/proc/sys/kernel/random/entropy_avail", "/proc/sys/fs/aio-nr"]


def count():
    """Reports what each host-wide counter says now: the text itself, or
    its first line and a digest when it is long."""
    import hashlib
    for path in os.environ.get("COUNTERS", ":".join(COUNTERS)).split(":"):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            report("counter " + path, "absent (%s)" % e.strerror)
            continue
        text = data.decode("utf-8", "replace")
        if len(text) > 120:
            text = "%s ... sha1 %s" % (text.split("\n")[0], hashlib.sha1(data).hexdigest())
        report("counter " + path, text.strip().replace("\n", " | "))


def mounts():
    for name in ("mountinfo", "mounts"):
        try:
            with open("/proc/self/" + name) as f:
                for line in f:
                    report(name, line.rstrip("\n"))
        except OSError as e:
            report(name, "refused (%s)" % e.strerror)
    report("cwd", os.getcwd())


SPINNERS = []


def hog():
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            while True:
                pass
        SPINNERS.append(pid)


OPPONENT = ["?"]


def think():
    want = float(os.environ.get("THINK_MS", "90")) / 1000.0
    wall0 = time.monotonic()
    cpu0 = time.process_time()
    x = 0
    while time.process_time() - cpu0 < want:
        x += 1
    report("think wall ms vs " + OPPONENT[0], "%.1f" % ((time.monotonic() - wall0) * 1000.0))


def main():
    requests = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            print(json.dumps({"type": "hello", "name": "attack-" + MODE, "protocol": 1}), flush=True)
        elif kind == "game_start":
            names = message.get("names", [])
            others = [n for i, n in enumerate(names) if i != message.get("seat")]
            OPPONENT[0] = ",".join(others) or "?"
        elif kind == "request":
            requests += 1
            if MODE == "probe" and requests == 1:
                probe()
            elif MODE == "send":
                if requests == 1:
                    send()
            elif MODE == "recv":
                recv()
            elif MODE == "hold":
                hold(requests)
            elif MODE == "count":
                count()
            elif MODE == "mounts" and requests == 1:
                mounts()
            elif MODE == "honest":
                think()
            elif MODE == "hog" and not SPINNERS:
                hog()
            print(json.dumps({"type": "reply", "option": random.choice(message["legal"])}), flush=True)
        elif kind == "quit":
            break


if __name__ == "__main__":
    main()
