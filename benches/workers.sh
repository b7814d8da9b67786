#!/bin/bash
# The workers' figures (BENCHMARKS.md, "Workers at the speed of one
# machine", issue 49), side by side in one run on one machine:
#
#     cargo build --release --bins
#     bash benches/workers.sh [SECONDS [ROUNDS]]
#
# (WAYS="alone 1x-j2" runs only those ways; `alone` is needed for the
# ratios.)
#
# With ARENA_BENCH_PG=postgres://... (a cluster the script may create
# databases in: `bash .ci/postgres start` prints one), each figure on
# PostgreSQL too; else on SQLite only.
#
# Each round serves a fresh ladder (benches/bench_ladder.sh: the four
# instant seeded random bots over every game, 2 games in flight) four
# ways, in turn, and counts its games over SECONDS (default 20) once the
# bots are entered and a few seconds have passed:
#   alone:  the server plays its own games (2 in flight);
#   1x-j2:  `--local-games 0` and one `arena worker -j 2` on loopback;
#   2x-j1:  `--local-games 0` and two `arena worker -j 1`;
#   4x-j1:  `--local-games 0` and four `arena worker -j 1` (the server's
#           capacity: its CPU seconds per game, from /proc).
# Prints each figure (games/s, the server's CPU ms per game, and the CPU ms
# per game of everything the way runs: server, workers and bots, from a
# cgroup v1 `cpuacct` group made for it where /sys/fs/cgroup/cpuacct is
# writable, as root; "-" elsewhere), then the medians and the ratios to
# `alone`. On a machine shared with other work, games/s measures the share
# of the CPUs a way gets as much as its cost (more processes, more share):
# the CPU per game is the figure that load does not bend as much.
set -euo pipefail
SECONDS_RUN=${1:-20}
ROUNDS=${2:-2}
WARM=${WARM:-5}
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$REPO/target/release
[ -x "$BIN/arena" ] && [ -x "$BIN/random-bot" ] || {
    echo "build first: cargo build --release --bins" >&2
    exit 2
}
# The bots' `{bin_dir}` binaries are brought up to date by each worker's
# build: stale ones would be rebuilt in the middle of a way's run.
if [ -n "$(find "$REPO/src" "$REPO/Cargo.toml" -newer "$BIN/arena" -print -quit)" ]; then
    echo "$BIN/arena is older than the source: cargo build --release --bins first" >&2
    exit 2
fi
. "$REPO/benches/bench_ladder.sh"
DIR=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$DIR"
}
trap cleanup EXIT
TICK=$(getconf CLK_TCK)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"

# The CPU seconds of process $1 so far (user + system).
cpu_of() {
    awk -v t="$TICK" '{print ($14 + $15) / t}' "/proc/$1/stat"
}

# The CPU nanoseconds used so far in cgroup $1 ("-" without one).
cg_usage() {
    if [ -n "$1" ]; then cat "$1/cpuacct.usage"; else echo -; fi
}

# Runs "$@" in the background in cgroup $CG (when there is one).
in_cg() {
    if [ -n "$CG" ]; then
        ( echo "$BASHPID" > "$CG/cgroup.procs"; exec "$@" ) &
    else
        "$@" &
    fi
}

# One way of serving, on database $2 (empty: SQLite in the run's folder):
# prints "games/s server_cpu_ms_per_game all_cpu_ms_per_game".
serve_once() {
    local way=$1 db=$2 run=$DIR/run-$RANDOM
    mkdir -p "$run"
    CG=/sys/fs/cgroup/cpuacct/arena-bench-$$-$RANDOM
    mkdir "$CG" 2>/dev/null || CG=
    write_bench_ladder "$run"
    local local_games=() workers=0 jobs=1
    case $way in
        alone) ;;
        1x-j2) local_games=(--local-games 0); workers=1; jobs=2 ;;
        2x-j1) local_games=(--local-games 0); workers=2 ;;
        4x-j1) local_games=(--local-games 0); workers=4 ;;
    esac
    export ARENA_DB=$db
    [ -n "$db" ] || unset ARENA_DB
    local token tokens=()
    token=$("$BIN/arena" serve "$run/ladder.toml" --add-user bench | tail -1)
    for w in $(seq "$workers"); do
        tokens+=("$("$BIN/arena" serve "$run/ladder.toml" --add-worker "w$w" | tail -1)")
    done
    in_cg "$BIN/arena" serve "$run/ladder.toml" --bind 127.0.0.1:0 "${local_games[@]}" > "$run/serve.out" 2> "$run/serve.log"
    SERVER=$!
    PIDS=("$SERVER")
    for _ in $(seq 100); do grep -q listening "$run/serve.out" 2>/dev/null && break; sleep 0.2; done
    URL=$(grep -o 'http://[0-9.:]*' "$run/serve.out")
    for i in 0 1 2 3; do
        "$BIN/arena" submit --server "$URL" --token "$token" "$run/bots/r$i" > "$run/submit-$i.log"
    done
    local w=0
    for t in "${tokens[@]}"; do
        w=$((w + 1))
        in_cg "$BIN/arena" worker --server "$URL" --token "$t" -j "$jobs" --cache "$run/w$w" > "$run/w$w.out" 2> "$run/w$w.log"
        PIDS+=("$!")
    done
    sleep "$WARM"
    local g0 g1 t0 t1 c0 c1 a0 a1
    g0=$(bench_games); t0=$(date +%s.%N); c0=$(cpu_of "$SERVER"); a0=$(cg_usage "$CG")
    sleep "$SECONDS_RUN"
    g1=$(bench_games); t1=$(date +%s.%N); c1=$(cpu_of "$SERVER"); a1=$(cg_usage "$CG")
    for p in "${PIDS[@]:1}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
    PIDS=()
    if [ "$g1" = "$g0" ]; then
        # No game in the window: keep the logs to see why.
        local kept
        kept=$(mktemp -d "${TMPDIR:-/tmp}/workers-bench-XXXXXX")
        cp "$run"/*.log "$run"/*.out "$kept/" 2>/dev/null || true
        echo "$way on ${db:-SQLite}: no game in ${SECONDS_RUN} s; the logs are kept in $kept" >&2
    fi
    rm -rf "$run"
    if [ -n "$CG" ]; then
        sleep 0.5
        rmdir "$CG" 2>/dev/null || true
    fi
    local used=None
    [ "$a0" = - ] || used=$((a1 - a0))
    python3 -c "
g = max($g1 - $g0, 1)
a = '-' if '$used' == 'None' else f'{$used / 1e6 / g:.3f}'
print(f'{($g1 - $g0) / ($t1 - $t0):.1f} {1000 * ($c1 - $c0) / g:.3f} {a}')"
}

# A fresh database on the PostgreSQL cluster of ARENA_BENCH_PG.
pg_db() {
    local name="bench_workers_$RANDOM$RANDOM"
    psql "$ARENA_BENCH_PG" -qc "CREATE DATABASE $name" >/dev/null
    echo "${ARENA_BENCH_PG%/*}/$name"
}

BACKENDS=(sqlite)
[ -n "${ARENA_BENCH_PG:-}" ] && BACKENDS+=(postgres)
RESULTS=$DIR/results.txt
: > "$RESULTS"
for r in $(seq "$ROUNDS"); do
    for backend in "${BACKENDS[@]}"; do
        for way in ${WAYS:-alone 1x-j2 2x-j1 4x-j1}; do
            db=
            [ "$backend" = postgres ] && db=$(pg_db)
            x=$(serve_once "$way" "$db")
            echo "round $r, $backend, $way: $x (games/s, server CPU ms/game, all CPU ms/game); load $(cut -d' ' -f1 /proc/loadavg)"
            echo "$backend $way $x" >> "$RESULTS"
        done
    done
done
python3 - "$RESULTS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for backend in dict.fromkeys(r[0] for r in rows):
    med = {}
    for way in ["alone", "1x-j2", "2x-j1", "4x-j1"]:
        xs = [r[2:5] for r in rows if r[0] == backend and r[1] == way]
        if xs:
            all_ms = [float(x[2]) for x in xs if x[2] != "-"]
            med[way] = (
                statistics.median(float(x[0]) for x in xs),
                statistics.median(float(x[1]) for x in xs),
                statistics.median(all_ms) if all_ms else None,
            )
    for way, (g, ms, all_ms) in med.items():
        ratio = g / med["alone"][0]
        cap = 1000 / ms if ms > 0 else float("inf")
        line = f"{backend} {way}: median {g:.1f} games/s ({ratio:.2f}x alone); server {ms:.3f} CPU ms a game ({cap:.0f} games per CPU second)"
        if all_ms and med["alone"][2]:
            line += f"; all {all_ms:.3f} CPU ms a game (alone / this: {med['alone'][2] / all_ms:.2f}x)"
        print(line)
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
