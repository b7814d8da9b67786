#!/usr/bin/env bash
# Regenerates the screenshots of the HTML report in this folder: a small
# league of the random (Rust, Python) and greedy bots over every game (the demo
# league's file with fewer bots and rounds, into target/report-shots/), its
# report, then headless Chromium takes the report page and one game viewer
# per game (Tricala with 3 players too), each in the middle of its game.
#
#     docs/report/screenshots.sh        (from anywhere in the repository)
#
# Needs Chromium (Debian: apt-get install chromium).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/report-shots
rm -rf "$out"
cargo build --release --quiet --bins
target/release/arena run tournaments/demo.toml --bots random-rust,random-python,greedy-rust \
    --rounds 2 --output "$out/demo" --quiet >/dev/null
target/release/arena report "$out/demo" >/dev/null
index="file://$(pwd)/$out/demo/report/index.html"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

shot() { # shot FRAGMENT FILE WIDTH HEIGHT
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --virtual-time-budget=10000 \
        --window-size="$3,$4" --screenshot="docs/report/$2" "$index$1" 2>/dev/null >/dev/null
    echo "docs/report/$2"
}

shot "" report.png 1200 1500
# One game per label: greedy-rust against random-rust, seat 0 greedy.
for label in filo tricala tricala-3p hackaback kisolo diffusion; do
    id=$(awk -F, -v l="$label" 'NR > 1 {
            lab = ($3 == 3) ? $2 "-3p" : $2
            if (lab == l && $5 == "greedy-rust") { print $1; exit }
        }' "$out/demo/games.csv")
    # The record's decision lines: those without a `type` (record format 2).
    decisions=$(target/release/arena show "$out/demo" "$id" --json | grep -vc '"type":')
    shot "#game=$id&decision=$((decisions / 2))" "viewer-$label.png" 1200 900
done
