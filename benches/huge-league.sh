#!/bin/bash
# How a league of ten million games starts, and what the referee's memory
# does while it runs (BENCHMARKS.md, "A league of ten million games").
#
#     cargo build --release && bash benches/huge-league.sh [SECONDS [ARENA RUN FLAGS...]]
#
# Writes a league of 4 instant random bots over the five 2-player games
# with 166,667 rounds (10,000,020 games) into a temporary folder, runs it
# for SECONDS (default 20), then stops it with Ctrl-C (SIGINT), and prints:
# the time until the league was announced and until its first game ended,
# the referee's peak RSS (VmHWM) just before the stop, the games played,
# and the time the stop took.
set -euo pipefail
SECONDS_TO_RUN=${1:-20}
shift || true
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$REPO/target/release
[ -x "$BIN/arena" ] || { echo "build first: cargo build --release" >&2; exit 2; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cat >"$DIR/huge.toml" <<EOF
name = "huge"
bots = [
  { name = "a", command = ["$BIN/random-bot"] },
  { name = "b", command = ["$BIN/random-bot"] },
  { name = "c", command = ["$BIN/random-bot"] },
  { name = "d", command = ["$BIN/random-bot"] },
]
rounds = 166667
concurrency = 2
output = "out"
EOF
python3 - "$BIN/arena" "$DIR/huge.toml" "$SECONDS_TO_RUN" "$@" <<'EOF'
import signal, subprocess, sys, threading, time
arena, league, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
t0 = time.time()
p = subprocess.Popen([arena, "run", league, *sys.argv[4:]], stderr=subprocess.PIPE,
                     stdout=subprocess.DEVNULL, text=True)
marks, games = {}, [0]
def read():
    for line in p.stderr:
        if line.startswith("league huge:") and "announced" not in marks:
            marks["announced"] = time.time() - t0
            print(line.strip())
        elif line.startswith("game "):
            games[0] += 1
            marks.setdefault("first game", time.time() - t0)
threading.Thread(target=read, daemon=True).start()
time.sleep(seconds)
def status(key):
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith(key):
            return l.split(":")[1].strip()
hwm = status("VmHWM")
stop = time.time()
p.send_signal(signal.SIGINT)
p.wait()
for k, v in marks.items():
    print(f"{k}: {v:.3f} s after the start")
print(f"peak RSS after {seconds:.0f} s: {hwm}; games played: {games[0]}")
print(f"Ctrl-C to exit: {time.time() - stop:.2f} s")
EOF
