#!/bin/bash
# How the zstd dictionary of the record frames (src/results/records-v2.zdict,
# docs/league.md "Game records") was made, for the record: two leagues of the
# four instant random bots over the six variants (60 rounds each, the second
# with 2 opening decisions and another seed: 10,080 games), each record a
# sample, `zstd --train` to 16 KB with the id 35035.
#
#     cargo build --release && bash benches/records-dict.sh OUT.zdict
#
# Do not replace the shipped dictionary with a new one under the same id:
# every frame written names the id of its dictionary, and the arena
# decompresses frames with the one it has built in. A better dictionary is
# a new id (and a new constant beside the old one, which stays readable).
# The shipped one was trained on the same leagues' records written by the
# version before issue 35 (format 1), turned into format 2 lines.
set -euo pipefail
OUT=${1:?usage: records-dict.sh OUT.zdict}
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$REPO/target/release
[ -x "$BIN/arena" ] || { echo "build first: cargo build --release" >&2; exit 2; }
command -v zstd >/dev/null || { echo "needs the zstd command" >&2; exit 2; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
for league in "train1 1 0" "train2 7 2"; do
  set -- $league
  cat >"$DIR/$1.toml" <<EOF
name = "$1"
seed = $2
openings = $3
sandbox = "off"   # training data only: no need for the walls (and the temporary folder holds the league)
bots = [
  { name = "a", command = ["$BIN/random-bot"] },
  { name = "b", command = ["$BIN/random-bot"] },
  { name = "c", command = ["$BIN/random-bot"] },
  { name = "d", command = ["$BIN/random-bot"] },
]
variants = ["filo", "tricala", "tricala3", "hackaback", "kisolo", "diffusion"]
rounds = 60
concurrency = 2
output = "$1"
EOF
  "$BIN/arena" run "$DIR/$1.toml" --quiet --no-report >/dev/null
done
# One sample per record: the frames of the logs, decompressed and split at
# each game line.
mkdir "$DIR/samples"
for f in "$DIR"/train*/games/records-*.jsonl.zst; do
  zstd -dc -D "$(dirname "$f")/records.zdict" "$f"
done | awk -v d="$DIR/samples" '/^\{"type":"game"/ { if (f) close(f); n++; f = d "/" n ".jsonl" } { print > f }'
zstd -q -f --train "$DIR"/samples/* --maxdict=16384 --dictID=35035 -o "$OUT"
ls -l "$OUT"
