#!/usr/bin/env bash
# The report at a million games (BENCHMARKS.md, "The report at a million
# games (issue 33)"):
#
#     cargo build --release && bash benches/report_scale.sh [SIZES...]
#
# Plays a real league of 10,000 games (five instant random Rust bots over
# the six variants, as the demo's bots would; ply cap 600) with `arena
# run --no-report`, then grows its games.csv to each size of SIZES
# (default: 10000 100000 1000000) by repeating its rows under new game ids
# that name the same records (a row says where its record is, so every
# row's game can be shown), and for each size prints the CPU time (user +
# system), the wall time, the peak memory and the size of `arena report`
# (the default: a sample of the games) and of `arena report --all-games`
# (every game's viewer; skipped above ALL_GAMES_MAX games, default
# 100000: a million games replayed is some 21 minutes of CPU).
#
# The repeated rows are the real league's games again, so the ratings and
# the sample are those of a league with many games per pairing; what
# differs from a real million-game league is only that records repeat.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
# ARENA_BIN: another folder holding `arena` and `random-bot`.
BIN=${ARENA_BIN:-$REPO/target/release}
[ -x "$BIN/arena" ] || { echo "build first: cargo build --release" >&2; exit 2; }
# Absolute: the league is played from a folder of its own.
BIN=$(cd "$BIN" && pwd)
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 100000 1000000)
ALL_GAMES_MAX=${ALL_GAMES_MAX:-100000}
DIR=$(mktemp -d)
chmod o+rx "$DIR"  # bots in the sandbox run as users of their own
trap 'rm -rf "$DIR"' EXIT

cat >"$DIR/base.toml" <<EOF
name = "scale"
seed = 33
bots = [
  { name = "r1", command = ["$BIN/random-bot"] },
  { name = "r2", command = ["$BIN/random-bot"] },
  { name = "r3", command = ["$BIN/random-bot"] },
  { name = "r4", command = ["$BIN/random-bot"] },
  { name = "r5", command = ["$BIN/random-bot"] },
]
variants = ["filo", "tricala", "tricala3", "hackaback", "kisolo", "diffusion"]
# 5 bots: 10 pairs x 5 labels x 2 seats + 10 triples x 6 orders = 160 games a round
rounds = 63
openings = 2
max_plies = 600
concurrency = 2
output = "base"
EOF
(cd "$DIR" && "$BIN/arena" run base.toml --quiet --no-report >/dev/null)
BASE=$DIR/base
echo "base league: $(($(wc -l <"$BASE/games.csv") - 1)) games, records $(du -sh "$BASE/games" | cut -f1)"

# measure LABEL CMD...: CPU (user+sys) s, wall s, peak RSS MB
measure() {
    local label=$1
    shift
    /usr/bin/time -f "%U %S %e %M" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" || {
        cat "$DIR/err" >&2
        exit 1
    }
    read -r user sys wall rss <"$DIR/time"
    printf '%-34s cpu %7.1f s  wall %7.1f s  peak %6d MB' "$label" \
        "$(echo "$user + $sys" | bc)" "$wall" $((rss / 1024))
}

for n in "${SIZES[@]}"; do
    L=$DIR/l$n
    rm -rf "$L"
    mkdir -p "$L"
    ln -s "$BASE/games" "$L/games"
    python3 - "$BASE/games.csv" "$L/games.csv" "$n" <<'EOF'
import sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(src).read().splitlines()
head, rows = lines[0], lines[1:]
with open(dst, "w") as f:
    f.write(head + "\n")
    k = 0
    while k < n:
        rep = k // len(rows)
        for r in rows:
            if k == n:
                break
            gid, rest = r.split(",", 1)
            f.write((gid if rep == 0 else f"{gid}-x{rep}") + "," + rest + "\n")
            k += 1
EOF
    measure "$n games: arena report" "$BIN/arena" report "$L" -o "$L/report"
    echo "  size $(du -sh "$L/report" | cut -f1) $(grep -o '([0-9]* in the viewer)' "$DIR/err" || true)"
    measure "$n games: report again (refresh)" "$BIN/arena" report "$L" -o "$L/report"
    echo
    if [ "$n" -le "$ALL_GAMES_MAX" ]; then
        measure "$n games: arena report --all-games" "$BIN/arena" report "$L" --all-games -o "$L/all"
        echo "  size $(du -sh "$L/all" | cut -f1)"
    fi
    rm -rf "$L/all"
done
