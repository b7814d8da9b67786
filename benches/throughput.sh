#!/bin/bash
# Issue 16's throughput goals (BENCHMARKS.md, "League: games per second"),
# measured side by side in one run:
#
#     cargo build --release --bins --example harness
#     bash benches/throughput.sh [RUNS [DIR [ARENA RUN FLAGS...]]]
#
# Each of RUNS (default 3) rounds runs, in turn: `arena run` of
# benches/throughput.toml (5,040 games) at -j 2 and at -j 1, each into a
# fresh results folder under DIR (default: a temporary folder; give a
# folder on the disk or on a tmpfs to choose), and the minimal blocking
# harness (examples/harness.rs) at 2 and at 1 workers over the same games
# (what the machine allows: its 1-to-2 ratio is the ceiling of arena's). It prints
# each run's 100-decision games/s (decisions from games.csv's `plies`,
# forced ones included, over the wall time of the command, start-up checks
# and all), then the best of each and the ratios arena -j 2 / harness and
# -j 1 / -j 2. The machine's load is printed before and after: on a busy
# machine the ratios of one round are the figures to trust.
set -euo pipefail
RUNS=${1:-3}
shift || true
PARENT=${1:-}
shift || true
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$REPO/target/release
[ -x "$BIN/arena" ] && [ -x "$BIN/examples/harness" ] && [ -x "$BIN/random-bot" ] || {
    echo "build first: cargo build --release --bins --example harness" >&2
    exit 2
}
DIR=$(mktemp -d ${PARENT:+-p "$PARENT"})
trap 'rm -rf "$DIR"' EXIT
LEAGUE=$REPO/benches/throughput.toml

# 100-decision games/s of one arena run: decisions from games.csv.
arena_run() {
    local j=$1 out=$DIR/run-$2-j$1
    shift 2
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN/arena" run "$LEAGUE" -o "$out" -j "$j" --no-build --no-report --quiet "$@" >/dev/null 2>"$out.log" ||
        { cat "$out.log" >&2; exit 1; }
    t1=$(date +%s.%N)
    python3 - "$out/games.csv" "$t0" "$t1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
plies = sum(int(r["plies"]) for r in rows)
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"{plies / wall / 100:.0f} {len(rows)} {plies} {wall:.2f}")
PY
    rm -rf "$out" "$out.log"
}

harness_run() {
    "$BIN/examples/harness" "$LEAGUE" "$1" | python3 -c '
import re, sys
line = sys.stdin.read()
games, plies, wall, rate = re.search(r"(\d+) games, (\d+) decisions, ([\d.]+) s, (\d+) 100", line).groups()
print(rate, games, plies, wall)'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); results under $DIR; arena run flags: ${*:-none}"
best_j2=0 best_j1=0 best_h=0 best_h1=0
for r in $(seq 1 "$RUNS"); do
    read -r j2 g p w2 < <(arena_run 2 "$r" "$@")
    read -r j1 _ _ w1 < <(arena_run 1 "$r" "$@")
    read -r h _ _ wh < <(harness_run 2)
    read -r h1 _ _ wh1 < <(harness_run 1)
    echo "round $r ($g games, $p decisions): arena -j 2 $j2 ($w2 s), arena -j 1 $j1 ($w1 s), harness 2 workers $h ($wh s), 1 worker $h1 ($wh1 s); arena/harness $(python3 -c "print(f'{$j2/$h:.2f}')"), -j1/-j2 $(python3 -c "print(f'{$j1/$j2:.2f}')") (harness 1/2 workers $(python3 -c "print(f'{$h1/$h:.2f}')"))"
    best_j2=$(( j2 > best_j2 ? j2 : best_j2 ))
    best_j1=$(( j1 > best_j1 ? j1 : best_j1 ))
    best_h=$(( h > best_h ? h : best_h ))
    best_h1=$(( h1 > best_h1 ? h1 : best_h1 ))
done
echo "best of $RUNS, 100-decision games/s: arena -j 2 $best_j2, arena -j 1 $best_j1, harness $best_h (2 workers), $best_h1 (1 worker)"
python3 -c "print(f'ratios of the bests: arena -j 2 / harness {$best_j2/$best_h:.2f} (goal >= 0.6), -j 1 / -j 2 {$best_j1/$best_j2:.2f} (goal >= 0.5; the harness 1 / 2 workers: {$best_h1/$best_h:.2f})')"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
