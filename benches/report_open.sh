#!/usr/bin/env bash
# How long a league's HTML report takes to open in headless Chromium:
# `benches/report_open.sh RESULTS_DIR [GAME_ID]` (after `arena report
# RESULTS_DIR`). Times, 3 times each, Chromium loading and running a page
# until its DOM is dumped: an empty page (Chromium's own start and exit),
# the report's index.html, the list of all games (which loads
# games/index.js), and the viewer of one game at its last step (which loads
# games/index.js and the game's chunk). The report's cost is a
# page's time minus the empty page's. See BENCHMARKS.md, "HTML report".
set -euo pipefail
dir=$(cd "$1" && pwd)
game=${2:-$(awk -F, 'NR == 2 { print $1 }' "$dir/games.csv")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo '<!DOCTYPE html><html><body>empty</body></html>' > "$tmp/empty.html"

open() { # open URL: milliseconds, and the DOM in $tmp/dom.html
    rm -rf "$tmp/profile"
    local t0 t1
    t0=$(date +%s%N)
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$tmp/profile" --virtual-time-budget=30000 --dump-dom "$1" \
        > "$tmp/dom.html" 2>/dev/null
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
}

for page in "file://$tmp/empty.html" "file://$dir/report/index.html" \
            "file://$dir/report/index.html#games" \
            "file://$dir/report/index.html#game=$game&step=end"; do
    times=()
    for _ in 1 2 3; do times+=("$(open "$page")"); done
    shown=""
    if grep -q 'class="board"' "$tmp/dom.html"; then
        shown=" (viewer: $(grep -o 'decision [0-9]* of [0-9]*' "$tmp/dom.html" | head -1))"
    elif grep -q 'class="game-list"' "$tmp/dom.html"; then
        shown=" (list: $(grep -o '<p>[0-9]* games</p>' "$tmp/dom.html" | head -1 | tr -d '<>/p'))"
    fi
    printf '%6s ms  %s%s\n' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)" "${page#file://$dir/}" "$shown"
done
