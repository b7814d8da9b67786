#!/bin/bash
# The ladder service's figures (BENCHMARKS.md, "The ladder service"), in
# one run on one machine:
#
#     cargo build --release --bins && cargo bench --no-run --bench serve_load
#     bash benches/serve.sh [SECONDS [TARGET_GAMES]]
#
# 1. `arena run` of benches/throughput.toml at -j 2 (four instant, seeded
#    random bots over every game, 5,040 games): games/s over its wall time,
#    three times before step 2 and three times once the server has
#    stopped; the median of the six is the figure (one run lasts about 5 s,
#    and this machine's speed drifts by a third from minute to minute: the
#    runs on both sides of the serve steps bracket them).
# 2. `arena serve` of a ladder with the same variants and 2 games in
#    flight; the same four bots uploaded with `arena submit`; games/s over
#    SECONDS (default 60) once all four are entered.
# 3. 100 concurrent readers of `/` and `/api/standings` for 30 s while the
#    games go on (benches/serve_load.rs): p50, p99 and max latency.
# 4. The games go on until TARGET_GAMES (default 100000) are done: the
#    server's memory then (VmRSS, VmHWM) and its last refit's time.
# 5. A refit at 1,000,000 games: benches/serve_scale.py with the same four
#    bots' names and a store of a million finished games (its start-up,
#    first fit, memory, pages and export).
set -euo pipefail
SECONDS_RUN=${1:-60}
TARGET=${2:-100000}
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$REPO/target/release
LOAD=$(ls -t "$REPO"/target/release/deps/serve_load-* 2>/dev/null | grep -v '\.d$' | head -1)
[ -x "$BIN/arena" ] && [ -x "$BIN/random-bot" ] && [ -n "$LOAD" ] || {
    echo "build first: cargo build --release --bins && cargo bench --no-run --bench serve_load" >&2
    exit 2
}
DIR=$(mktemp -d)
SERVER=
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; rm -rf "$DIR"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. arena run, three times (three more after step 2).
RUN_RATES=()
run_once() {
    rm -rf "$DIR/run"
    local t0 t1 n r
    t0=$(date +%s.%N)
    "$BIN/arena" run "$REPO/benches/throughput.toml" -o "$DIR/run" -j 2 --no-build --no-report --quiet >/dev/null 2>"$DIR/run.log"
    t1=$(date +%s.%N)
    n=$(($(wc -l < "$DIR/run/games.csv") - 1))
    r=$(python3 -c "print(f'{$n / ($t1 - $t0):.1f}')")
    RUN_RATES+=("$r")
    echo "arena run -j 2: $n games in $(python3 -c "print(f'{$t1 - $t0:.1f}')") s: $r games/s"
}
for _ in 1 2 3; do run_once; done

# 2. arena serve, the same bots uploaded.
. "$REPO/benches/bench_ladder.sh"
write_bench_ladder "$DIR"
serve_bench_ladder "$BIN" "$DIR"
games() { bench_games; }
g0=$(games); t0=$(date +%s.%N)
sleep "$SECONDS_RUN"
g1=$(games); t1=$(date +%s.%N)
SERVE_RATE=$(python3 -c "print(f'{($g1 - $g0) / ($t1 - $t0):.1f}')")
echo "arena serve, 2 games in flight: $((g1 - g0)) games in $(python3 -c "print(f'{$t1 - $t0:.1f}')") s: $SERVE_RATE games/s (against arena run: at the end)"

# 3. 100 readers while the games go on.
echo "100 readers for 30 s while games are played, at $(games) games:"
g0=$(games); t0=$(date +%s.%N)
"$LOAD" "$URL" 30 100 / /api/standings
g1=$(games); t1=$(date +%s.%N)
echo "games meanwhile: $(python3 -c "print(f'{($g1 - $g0) / ($t1 - $t0):.1f}')") games/s"

# 4. Memory at TARGET games.
while [ "$(games)" -lt "$TARGET" ]; do sleep 5; done
echo "at $(games) games: server $(grep -E 'VmRSS|VmHWM' /proc/$SERVER/status | tr -s ' \n' ' '); last refit $(curl -s "$URL/metrics" | awk '/^arena_fit_seconds/ {print $2}') s"
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=

# 5. A refit at 1 M games.
echo "a store of 1,000,000 finished games of 4 bots:"
python3 "$REPO/benches/serve_scale.py" 4 1000000 "$DIR/million"

# 1 again: three more runs of arena run, the server stopped, and the ratio
# of step 2 to the median of all six.
for _ in 1 2 3; do run_once; done
RUN_RATE=$(python3 -c "import statistics; print(f'{statistics.median([$(IFS=,; echo "${RUN_RATES[*]}")]):.1f}')")
echo "arena run -j 2, median of ${#RUN_RATES[@]} runs: $RUN_RATE games/s; serve / run $(python3 -c "print(f'{$SERVE_RATE / $RUN_RATE:.2f}')") (goal >= 0.8)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
