#!/usr/bin/env bash
# Rate one results file with `arena rate`, Ordo and BayesElo, side by side,
# with the command lines of docs/ratings.md ("PGN export: Ordo and BayesElo").
#
#   scripts/compare-ordo.sh games.csv [OUT_DIR]
#
# Needs `ordo` and `bayeselo` on PATH (either may be missing: that part is
# skipped). Neither is packaged on crates.io, PyPI or Debian: build them from
# their published sources (Ordo 1.2.x by Miguel Ballicora, C, `make`;
# BayesElo by Remi Coulom, C++). This script downloads nothing.
# `arena` is target/release/arena unless ARENA says otherwise.
set -euo pipefail

csv=${1:?usage: compare-ordo.sh games.csv [OUT_DIR]}
out=${2:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
arena=${ARENA:-$root/target/release/arena}
sims=${SIMS:-1000}
mkdir -p "$out"

"$arena" pgn "$csv" -o "$out/games.pgn"
"$arena" rate "$csv" --out "$out/arena" > "$out/arena.txt"
echo "== arena rate ($out/arena.txt)"
cat "$out/arena.txt"

if command -v ordo > /dev/null; then
    ordo -v || true
    # -z 200.241: our Elo scale; -D: fit the draw rate (without it the
    # simulations assume 50% draws between equal players); -G: go on when
    # perfect scores split the file; -s: errors by simulation.
    ordo -q -p "$out/games.pgn" -a 0 -z 200.241 -D -G -s "$sims" -o "$out/ordo-D.txt"
    ordo -q -p "$out/games.pgn" -a 0 -z 200.241 -G -s "$sims" -o "$out/ordo.txt"
    echo "== ordo -a 0 -z 200.241 -D -G -s $sims ($out/ordo-D.txt)"
    cat "$out/ordo-D.txt"
    echo "== ordo -a 0 -z 200.241 -G -s $sims, no -D ($out/ordo.txt)"
    cat "$out/ordo.txt"
else
    echo "== ordo not on PATH: skipped"
fi

if command -v bayeselo > /dev/null; then
    # prior 0, advantage 0, drawelo fitted; scale 1 prints the internal
    # ratings (mm sets a display scale 4x/(1+x)^2, x = 10^(-drawelo/400)).
    bayeselo > "$out/bayeselo.txt" <<CMDS
readpgn $out/games.pgn
elo
prior 0
advantage 0
mm 0 1
exactdist
drawelo
scale 1
ratings
x
x
CMDS
    echo "== bayeselo, internal scale ($out/bayeselo.txt)"
    cat "$out/bayeselo.txt"
else
    echo "== bayeselo not on PATH: skipped"
fi
