#!/usr/bin/env bash
# Issue 34's done-when benchmark in one run (BENCHMARKS.md, "A thousand
# bots: the done-when run"):
#
#     cargo build --release --bin arena && bash benches/thousand_bots.sh
#
# For each number of bots in BOTS (default: 100 1000 2000) and of games in
# GAMES (default: 1000000 10000000), writes a generated games.csv with
# `python3 benches/gen_games.py BOTS GAMES FILE` (random pairs and seats,
# strengths over 800 Elo, 30% draws, filo and kisolo; seed 34), then
# measures with /usr/bin/time the wall time and the peak memory of
#
#     arena rate FILE                  (the standings, no tables written)
#     arena rate FILE --out DIR        (ratings.csv, pairs.csv, variants.csv,
#                                       crosstable.csv)
#     arena report FOLDER -o OUT       (a folder holding that games.csv; the
#                                       games have no records, so the sample's
#                                       viewer notes them as missing)
#
# and prints one line per size, then the goals at 1,000 bots and 10 M
# games. SKIP="2000x10000000" leaves sizes out (BOTSxGAMES, space
# separated). The files are deleted as it goes (a 10 M-row games.csv is
# about 600 MB); set KEEP=DIR to keep them there.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ARENA_BIN:-$REPO/target/release}/arena
[ -x "$BIN" ] || { echo "build first: cargo build --release --bin arena" >&2; exit 2; }
read -r -a BOTS <<<"${BOTS:-100 1000 2000}"
read -r -a GAMES <<<"${GAMES:-1000000 10000000}"
SKIP=${SKIP:-}
DIR=${KEEP:-$(mktemp -d)}
mkdir -p "$DIR"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$DIR"' EXIT

# measure NAME CMD...: sets T_NAME (wall s) and M_NAME (peak RSS MB).
measure() {
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" || {
        echo "failed: $*" >&2
        cat "$DIR/err" >&2
        exit 1
    }
    read -r wall rss <"$DIR/time"
    printf -v "T_$name" '%s' "$wall"
    printf -v "M_$name" '%s' "$((rss / 1024))"
}

printf '%-6s %-9s | %-17s | %-17s | %-6s | %-17s\n' bots games "rate" "rate --out" ratio "report"
for b in "${BOTS[@]}"; do
    for g in "${GAMES[@]}"; do
        if [[ " $SKIP " == *" ${b}x${g} "* ]]; then
            printf '%-6s %-9s | skipped (SKIP)\n' "$b" "$g"
            continue
        fi
        L=$DIR/l${b}x$g
        rm -rf "$L"
        mkdir -p "$L"
        python3 "$REPO/benches/gen_games.py" "$b" "$g" "$L/games.csv"
        measure rate "$BIN" rate "$L/games.csv"
        measure out "$BIN" rate "$L/games.csv" --out "$L/tables"
        measure report "$BIN" report "$L" -o "$L/report"
        ratio=$(echo "scale=2; $T_out / $T_rate" | bc)
        printf '%-6s %-9s | %7s s %5s MB | %7s s %5s MB | %5sx | %7s s %5s MB\n' \
            "$b" "$g" "$T_rate" "$M_rate" "$T_out" "$M_out" "$ratio" "$T_report" "$M_report"
        if [ "$b" = 1000 ] && [ "$g" = 10000000 ]; then
            goal_out=$(echo "$T_out <= 1.5 * $T_rate && $M_out <= 1024" | bc)
            goal_report=$(echo "$T_report <= 30" | bc)
            GOALS="goal at 1,000 bots x 10 M games: rate --out ${ratio}x of rate and $M_out MB (<= 1.5x, <= 1 GB): $([ "$goal_out" = 1 ] && echo met || echo not met); report $T_report s (<= 30 s): $([ "$goal_report" = 1 ] && echo met || echo not met)"
        fi
        [ -n "${KEEP:-}" ] || rm -rf "$L"
    done
done
echo "${GOALS:-goal at 1,000 bots x 10 M games: not measured in this run}"
