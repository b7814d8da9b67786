#!/bin/bash
# The server's memory under big uploads (issue 47, BENCHMARKS.md "Open to
# the public: an upload's memory"):
#
#     cargo build --release --bins
#     bash benches/upload_memory.sh [BIN_DIR [UPLOADS [MB]]]
#
# Serves an empty ladder with the `arena` in BIN_DIR (default
# target/release) that takes UPLOADS (default 40) uploads at once
# (`uploads_at_once`), then sends UPLOADS uploads of a bot folder holding
# MB (default 15) MiB of random bytes (so about as many compressed), all
# at once with curl, each from an owner of its own. Prints the server's
# resident memory (VmRSS of /proc/PID/status, sampled every 100 ms): its
# baseline at rest (after one upload of the same kind, taken and checked
# first, so that what is made once and kept, such as thread pools and
# the store's caches, is in it), its peak while the uploads arrive and are
# unpacked, built and checked, and again at rest once the intake is idle.
# Then where the anonymous memory grew, by kind of mapping (from
# /proc/PID/smaps at the baseline and after): glibc's thread heaps (the
# 64 MiB-aligned mappings), thread stacks (2 MiB mappings, kept by glibc
# for reuse after their threads end), the main heap; and the most threads
# the server ran at once.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${1:-$REPO/target/release}" && pwd)
N=${2:-40}
MB=${3:-15}
[ -x "$BIN/arena" ] || { echo "$BIN: no arena there (cargo build --release --bins)" >&2; exit 2; }
DIR=$(mktemp -d)
SERVER=
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; rm -rf "$DIR"' EXIT
cat > "$DIR/ladder.toml" <<TOML
name = "uploads"
seed = 1
variants = ["kisolo"]
output = "results"
[ladder]
games_in_flight = 1
uploads_at_once = $N
upload_mb = 16
TOML
# A bot of each owner's own (a bot's name is its owner's), the same
# random bytes in each; it exits at once, so that its check refuses it
# quickly (what is measured is the upload's way in: spool, unpack, copy).
mkdir -p "$DIR/bot"
head -c $((MB << 20)) /dev/urandom > "$DIR/bot/data.bin"
for i in $(seq 0 "$N"); do
    printf 'name = "big%s"\ncommand = ["python3", "-c", "pass"]\n' "$i" > "$DIR/bot/bot.toml"
    tar -czf "$DIR/bot-$i.tar.gz" -C "$DIR/bot" .
done
echo "upload: $(($(stat -c %s "$DIR/bot-0.tar.gz") >> 20)) MiB compressed, $N at once"
TOKENS=()
for i in $(seq 0 "$N"); do
    TOKENS+=("$("$BIN/arena" serve "$DIR/ladder.toml" --add-user "owner$i" | tail -1)")
done
"$BIN/arena" serve "$DIR/ladder.toml" --bind 127.0.0.1:0 > "$DIR/serve.out" 2> "$DIR/serve.log" &
SERVER=$!
for _ in $(seq 100); do grep -q listening "$DIR/serve.out" 2>/dev/null && break; sleep 0.2; done
URL=$(grep -o 'http://[0-9.:]*' "$DIR/serve.out")
# VmRSS in KiB (printed in MiB with one decimal).
rss() { awk '/^VmRSS/ {print $2}' "/proc/$SERVER/status"; }
mib() { python3 -c "print(f'{$1 / 1024:.1f}')"; }
# Of it, what the server holds (its heap, stacks, buffers): RssAnon, in
# KiB. The rest is the binary's and libraries' pages, read in from the
# files as code runs, shared and dropped by the kernel when it needs them.
anon() { awk '/^RssAnon/ {print $2}' "/proc/$SERVER/status"; }
busy() {
    curl -s "$URL/api/bots" | python3 -c '
import json, sys
bots = json.load(sys.stdin)["bots"]
print(sum(b["latest"]["status"] in ("receiving", "queued", "building", "checking") for b in bots))'
}
post() { # owner index: uploads its bot, the status code to stdout
    curl -s -o "$DIR/answer-$1" -w '%{http_code}\n' -X POST \
        -H "Authorization: Bearer ${TOKENS[$1]}" -H 'Content-Type: application/gzip' \
        --data-binary @"$DIR/bot-$1.tar.gz" "$URL/api/bots"
}
echo "warm-up upload: $(post 0)"
for _ in $(seq 600); do [ "$(busy)" = 0 ] && break; sleep 0.5; done
sleep 15
BASE=$(rss)
BASE_ANON=$(anon)
cp "/proc/$SERVER/smaps" "$DIR/smaps.base"
echo "baseline: $(mib $BASE) MiB ($(mib $BASE_ANON) MiB anonymous)"
PEAK=$BASE
THREADS=0
PIDS=()
for i in $(seq 1 "$N"); do
    post "$i" > "$DIR/code-$i" &
    PIDS+=($!)
done
# Sample while the uploads arrive, then while the intake works through
# them (none queued, building or checking any more), for at most 15 min.
t0=$(date +%s)
while :; do
    r=$(rss); [ "$r" -gt "$PEAK" ] && PEAK=$r
    t=$(ls "/proc/$SERVER/task" | wc -l); [ "$t" -gt "$THREADS" ] && THREADS=$t
    running=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && running=1; done
    if [ $running = 0 ] && [ "$(busy)" = 0 ]; then break; fi
    [ $(($(date +%s) - t0)) -gt 900 ] && { echo "the intake was still busy after 15 min" >&2; break; }
    sleep 0.1
done
echo "answers: $(cat "$DIR"/code-* | sort | uniq -c | tr -s ' \n' ' ')"
# tokio's blocking threads (the bodies' writes to disk) end after 10 s idle.
sleep 15
AFTER=$(rss)
AFTER_ANON=$(anon)
cp "/proc/$SERVER/smaps" "$DIR/smaps.after"
echo "peak: $(mib $PEAK) MiB ($(mib $((PEAK - BASE))) MiB above the baseline)"
echo "after, at rest: $(mib $AFTER) MiB ($(python3 -c "print(f'{100 * ($AFTER - $BASE) / $BASE:+.0f}')")% of the baseline), anonymous $(mib $AFTER_ANON) MiB ($(python3 -c "print(f'{100 * ($AFTER_ANON - $BASE_ANON) / $BASE_ANON:+.0f}')")% of the baseline's)"
echo "most threads at once: $THREADS"
python3 - "$DIR/smaps.base" "$DIR/smaps.after" <<'PY'
import re, sys

def kinds(path):
    """Anonymous KiB by kind of mapping."""
    out, kind = {}, None
    for line in open(path):
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+ *(.*)", line)
        if m:
            start, end, name = int(m[1], 16), int(m[2], 16), m[3].strip()
            if name == "[heap]":
                kind = "main heap"
            elif name:
                kind = "files and the rest"
            elif start % (64 << 20) == 0:
                kind = "thread heaps"
            elif end - start == 2 << 20:
                kind = "thread stacks"
            else:
                kind = "files and the rest"
        elif line.startswith("Anonymous:") and kind:
            out[kind] = out.get(kind, 0) + int(line.split()[1])
    return out

base, after = kinds(sys.argv[1]), kinds(sys.argv[2])
for k in ("thread heaps", "thread stacks", "main heap", "files and the rest"):
    b, a = base.get(k, 0), after.get(k, 0)
    print(f"anonymous, {k}: {b / 1024:.1f} -> {a / 1024:.1f} MiB ({(a - b) / 1024:+.1f})")
PY
