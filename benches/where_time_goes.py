#!/usr/bin/env python3
"""Splits the referee's samples of a profile by what they were doing
(BENCHMARKS.md, "`arena run` against the harness: an eighth look").

    perf record -F 1500 --call-graph dwarf,16384 -o arena.data \
        target/release/arena run benches/throughput.toml -o DIR -j 2 --no-build --no-report --quiet
    perf script -i arena.data --comms league-worker-0,league-worker-1 -F comm,ip,sym > arena.txt
    python3 benches/where_time_goes.py arena.txt

    perf record -F 1500 --call-graph dwarf,16384 -o harness.data \
        target/release/examples/harness benches/throughput.toml 2
    perf script -i harness.data --comms harness -F comm,ip,sym > harness.txt
    python3 benches/where_time_goes.py harness.txt

Each sample goes to the first category (in the order below) that one of
its stack's frames names; prints the samples and share of each.
"""
import collections
import sys

# (category, words in a frame's name); the first that matches wins, so
# the narrow ones come before the wide ones.
CATEGORIES = [
    ("the record's zstd", ["ZSTD_", "HUF_", "zstd::"]),
    ("the record and the row", ["runner::done", "write_record", "row_from_report"]),
    ("bots started", ["BotProcess>::spawn", "seat_bots", "Jail::new", "Bot::start"]),
    ("pausing", ["pause_later", "pause_others", "Pausing", "contain::"]),
    ("the request encoded", ["encode_request"]),
    ("the request written (the bot's turn included)", ["send_line", "write_all", "ChildStdin as std::io::Write"]),
    ("the reply read", ["read_line", "fill_line", "Stdout as tokio", "read_until"]),
    ("the reply decoded and judged", ["judge_reply", "protocol::decode"]),
    ("game start and end sent", ["Player>::start", "Player>::end", "tell_end", "Table::start"]),
    ("the decision recorded", ["Table::record", "harness::record"]),
    ("the rules (legal options, snapshot)", ["engine::"]),
    ("the referee's own", ["referee::", "harness::"]),
    ("the league's own", ["league::"]),
    ("the runtime", ["tokio::"]),
]


def category(stack):
    for name, words in CATEGORIES:
        if any(w in frame for frame in stack for w in words):
            return name
    return "elsewhere"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: where_time_goes.py PERF_SCRIPT_OUTPUT")
    counts = collections.Counter()
    stack = []
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            if line.startswith("\t"):
                parts = line.strip().split(" ", 1)
                stack.append(parts[1] if len(parts) > 1 else "")
            elif stack:
                counts[category(stack)] += 1
                stack = []
    if stack:
        counts[category(stack)] += 1
    total = sum(counts.values())
    if total == 0:
        sys.exit(f"{sys.argv[1]}: no samples (perf script -F comm,ip,sym output expected)")
    for name, n in counts.most_common():
        print(f"{n:7d} {100 * n / total:5.1f}%  {name}")
    print(f"{total:7d} 100.0%  in all")


if __name__ == "__main__":
    main()
