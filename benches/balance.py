#!/usr/bin/env python3
"""Issue 48's balance run (BENCHMARKS.md, "A budget per version"): one bot
at 500 ms a move and four instant ones on a served ladder, for a while.

    python3 benches/balance.py BIN_DIR [--seconds 600] [--out DIR] [--label NAME]
                                       [--slow random|search]

BIN_DIR holds `arena`, `random-bot` and `greedy-bot` (target/release). The
ladder is Kisolo alone (short games), 4 games in flight, every other
[ladder] key at its default. The bots: `slow`, a random player that sleeps
500 ms before each reply (Python, written here; `--slow search`: the
package's search-bot with `--millis 500`, far stronger), and four instant ones:
`greedy` (greedy-bot) and `r0`..`r2` (random-bot, three seeds). All five
are submitted at once; the clock starts when the last is entered.

Every 5 s it reads /api/standings (each version's games and 95% half-width
in the last fit) and the store's size (ladder.db with its WAL). It prints,
and writes to DIR/balance.json: the games per version at the end (the
export, /api/games.csv, counted by seat; in all, and since the last bot
was entered, while all five could play), their max/min ratio, when the
slow bot was first placed (half-width at most 50 in a fit) with its games
and the fast ones' then, and the store's size over the run.
"""
import argparse
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

SLOW_BOT = r'''import json, random, sys, time
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("type")
    if t == "hello":
        print(json.dumps({"type": "hello", "name": "slow", "version": "1"}), flush=True)
    elif t == "game_start" and "seed" in m:
        random.seed("%s-%s" % (m["seed"], m.get("seat")))
    elif t == "request":
        time.sleep(0.5)
        print(json.dumps({"type": "reply", "option": random.choice(m["legal"])}), flush=True)
    elif t == "quit":
        break
'''

LADDER = '''name = "balance"
seed = 1
variants = ["kisolo"]
openings = 0
max_plies = 1000
output = "results"

[time_control]
startup_ms = 10000
decision_ms = 2000
watchdog_ms = 300000

[ladder]
games_in_flight = 4
'''

FAST = {
    "greedy": '["{bin_dir}/greedy-bot"]',
    "r0": '["{bin_dir}/random-bot"]\nenv = { RANDOM_BOT_SEED = "0" }',
    "r1": '["{bin_dir}/random-bot"]\nenv = { RANDOM_BOT_SEED = "1" }',
    "r2": '["{bin_dir}/random-bot"]\nenv = { RANDOM_BOT_SEED = "2" }',
}


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


def store_bytes(folder):
    total = 0
    for name in ("ladder.db", "ladder.db-wal"):
        p = os.path.join(folder, "results", name)
        if os.path.exists(p):
            total += os.path.getsize(p)
    return total


def count_games(rows, bots):
    """Games per bot (by seat) in the export's rows (or its CSV text)."""
    if isinstance(rows, str):
        rows = list(csv.DictReader(io.StringIO(rows)))
    games = {b: 0 for b in bots}
    for r in rows:
        for seat in ("seat0", "seat1", "seat2"):
            name = (r.get(seat) or "").split("@")[0]
            if name in games:
                games[name] += 1
    return games


def write_bots(d, kind):
    bots = {}
    slow = os.path.join(d, "bots", "slow")
    os.makedirs(slow)
    with open(os.path.join(slow, "bot.py"), "w") as f:
        f.write(SLOW_BOT)
    with open(os.path.join(slow, "bot.toml"), "w") as f:
        if kind == "search":
            f.write('name = "slow"\ncommand = ["{bin_dir}/search-bot", "--millis", "500"]\n')
        else:
            f.write('name = "slow"\ncommand = ["python3", "bot.py"]\n')
    bots["slow"] = slow
    for name, command in FAST.items():
        b = os.path.join(d, "bots", name)
        os.makedirs(b)
        with open(os.path.join(b, "bot.toml"), "w") as f:
            f.write('name = "%s"\ncommand = %s\n' % (name, command))
        bots[name] = b
    return bots


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--out")
    ap.add_argument("--label", default="")
    ap.add_argument("--slow", choices=["random", "search"], default="random")
    a = ap.parse_args()
    arena = os.path.join(os.path.abspath(a.bin_dir), "arena")
    d = a.out or tempfile.mkdtemp(prefix="balance-")
    os.makedirs(d, exist_ok=True)
    ladder = os.path.join(d, "ladder.toml")
    with open(ladder, "w") as f:
        f.write(LADDER)
    bots = write_bots(d, a.slow)
    token = subprocess.run([arena, "serve", ladder, "--add-user", "bench"], check=True,
                           capture_output=True, text=True).stdout.strip().splitlines()[-1]
    out = open(os.path.join(d, "serve.out"), "w")
    log = open(os.path.join(d, "serve.log"), "w")
    server = subprocess.Popen([arena, "serve", ladder, "--bind", "127.0.0.1:0"],
                              stdout=out, stderr=log)
    url = None
    try:
        for _ in range(300):
            time.sleep(0.2)
            text = open(os.path.join(d, "serve.out")).read()
            if "http://" in text:
                url = "http://" + text.split("http://", 1)[1].split()[0]
                break
        if url is None:
            sys.exit("the server did not say where it listens: see %s" % d)
        submits = [subprocess.Popen([arena, "submit", "--server", url, "--token", token, path],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                   for path in bots.values()]
        for s in submits:
            if s.wait() != 0:
                sys.exit("a bot was not entered: see %s" % d)
        t0 = time.time()
        at_start = count_games(get(url + "/api/games.csv"), bots)
        samples = []
        placed = None
        while time.time() - t0 < a.seconds:
            time.sleep(5)
            st = json.loads(get(url + "/api/standings"))
            by = {r["bot"].split("@")[0]: r for r in st.get("ratings", [])}
            now = time.time() - t0
            sample = {
                "t": round(now, 1),
                "fit_games": st.get("games", 0),
                "games": {b: by[b]["games"] for b in by},
                "half_width": {b: round((by[b]["elo_high"] - by[b]["elo_low"]) / 2, 1)
                               for b in by if by[b]["rated"]},
                "store_bytes": store_bytes(d),
            }
            samples.append(sample)
            hw = sample["half_width"].get("slow")
            if placed is None and hw is not None and hw <= 50:
                fast = [sample["games"][b] for b in FAST if b in sample["games"]]
                placed = {"t": sample["t"], "slow_games": sample["games"]["slow"],
                          "fast_games_max": max(fast), "fast_games_min": min(fast),
                          "half_width": hw}
        rows = list(csv.DictReader(io.StringIO(get(url + "/api/games.csv"))))
    finally:
        server.terminate()
        server.wait(timeout=60)
    con = sqlite3.connect(os.path.join(d, "results", "ladder.db"))
    per_game = con.execute(
        "SELECT COUNT(*), AVG(LENGTH(row_json)), AVG(LENGTH(record)) FROM games WHERE state = 'done'"
    ).fetchone()
    con.close()
    games = count_games(rows, bots)
    window = {b: games[b] - at_start[b] for b in bots}
    result = {
        "label": a.label,
        "slow": a.slow,
        "seconds": a.seconds,
        "games_total": len(rows),
        "games": games,
        "ratio_max_min": round(max(games.values()) / max(1, min(games.values())), 2),
        "games_since_all_entered": window,
        "ratio_since_all_entered": round(max(window.values()) / max(1, min(window.values())), 2),
        "slow_placed": placed,
        "store_bytes_end": store_bytes(d),
        "bytes_per_game": {"games": per_game[0], "row": per_game[1], "record": per_game[2]},
        "samples": samples,
        "folder": d,
    }
    with open(os.path.join(d, "balance.json"), "w") as f:
        json.dump(result, f, indent=1)
    summary = {k: v for k, v in result.items() if k != "samples"}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
