#!/bin/bash
# Two builds of `arena serve` side by side, in one run on one machine
# (benches/serve.sh's step 2, alternated): before and after a change that
# must not slow the ladder down (BENCHMARKS.md, "The ladder service").
#
#     bash benches/serve_ab.sh OLD_BIN_DIR NEW_BIN_DIR [SECONDS [ROUNDS]]
#
# Each BIN_DIR holds a release `arena` and `random-bot` (a clone of the
# older commit built with `cargo build --release --bins`, say). Each round
# serves a fresh ladder with each build in turn (the order swapped every
# round: A B, B A, ...): the four instant seeded random bots over every
# game, 2 games in flight, uploaded with `arena submit`, and the games/s
# over SECONDS (default 30) once all four are entered. Prints each
# figure, then each build's median and the ratio new / old.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BIN_DIR NEW_BIN_DIR [SECONDS [ROUNDS]]" >&2; exit 2; }
OLD=$(cd "$1" && pwd)
NEW=$(cd "$2" && pwd)
SECONDS_RUN=${3:-30}
ROUNDS=${4:-3}
for b in "$OLD" "$NEW"; do
    [ -x "$b/arena" ] && [ -x "$b/random-bot" ] || { echo "$b: no arena and random-bot there" >&2; exit 2; }
done
DIR=$(mktemp -d)
. "$(dirname "$0")/bench_ladder.sh"
SERVER=
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; rm -rf "$DIR"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# One ladder served by the build in $1 for SECONDS_RUN: prints its games/s.
serve_once() {
    local bin=$1 run=$DIR/run-$RANDOM
    mkdir -p "$run"
    write_bench_ladder "$run"
    serve_bench_ladder "$bin" "$run"
    local g0 g1 t0 t1
    g0=$(bench_games); t0=$(date +%s.%N)
    sleep "$SECONDS_RUN"
    g1=$(bench_games); t1=$(date +%s.%N)
    kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=
    rm -rf "$run"
    python3 -c "print(f'{($g1 - $g0) / ($t1 - $t0):.1f}')"
}

A=(); B=()
for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
    for which in $order; do
        if [ "$which" = old ]; then x=$(serve_once "$OLD"); A+=("$x"); else x=$(serve_once "$NEW"); B+=("$x"); fi
        echo "round $r, $which: $x games/s"
    done
done
python3 - "${A[*]}" "${B[*]}" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"old: median {ma:.1f} games/s of {a}")
print(f"new: median {mb:.1f} games/s of {b}")
print(f"new / old: {mb / ma:.3f}")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
