#!/usr/bin/env python3
"""The ladder server with many bots and games (BENCHMARKS.md, "The ladder
at 1,000 bots and 10 M games"):

    cargo build --release --bin arena
    python3 benches/serve_scale.py BOTS GAMES [FOLDER]

Makes a ladder (filo and kisolo, no games played: `--local-games 0`) whose
SQLite store holds BOTS entered versions and GAMES finished games, written
straight into the store (random pairs, strengths spread over 800 Elo, 30%
draws, like benches/gen_games.py; no records). Then starts `arena serve`
on it and measures: the start-up (the finished games read from the store),
the first fit (`arena_fit_seconds` of /metrics), the server's memory, the
time of `/` and `/api/standings` (the median of 5), and the export
`/api/games.csv` (its time and size, and the memory after it). FOLDER
(default: a temporary one) keeps the store for another run: an existing
store is not filled again. The versions' folders do not exist: the
server's log (FOLDER/serve.log) says that it cannot start them, which
changes nothing here."""
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENA = os.path.join(REPO, "target", "release", "arena")


def fill(db, bots, games):
    """Writes the bots and the finished games into the store."""
    con = sqlite3.connect(db)
    owner = con.execute("SELECT id FROM owners WHERE name = 'bench'").fetchone()[0]
    t = "2026-11-26T00:00:00.000Z"
    versions = []
    for i in range(bots):
        name = f"b{i:04d}"
        cur = con.execute(
            "INSERT INTO bots (name, owner_id, created_at) VALUES (?, ?, ?)", (name, owner, t))
        cur = con.execute(
            "INSERT INTO versions (bot_id, number, status, folder, sha256, bytes, created_at, "
            "updated_at) VALUES (?, 1, 'entered', ?, ?, 0, ?, ?)",
            (cur.lastrowid, f"/nonexistent/{name}", "0" * 64, t, t))
        versions.append((cur.lastrowid, f"{name}@1"))
    rng = random.Random(34)
    elo = [800.0 * i / max(bots - 1, 1) for i in range(bots)]
    start = time.time() - games / 1000
    batch = []
    for g in range(games):
        a = rng.randrange(bots)
        b = rng.randrange(bots - 1)
        b += b >= a
        p = 1.0 / (1.0 + 10 ** ((elo[b] - elo[a]) / 400.0))
        if rng.random() < 0.3:
            s0, s1 = 0.5, 0.5
        elif rng.random() < p:
            s0, s1 = 1.0, 0.0
        else:
            s0, s1 = 0.0, 1.0
        variant = g % 2
        gid = f"game-{g + 1}"
        at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start + g / 1000))
        at += f".{g % 1000:03d}Z"
        row = {
            "game_id": gid, "variant": ["filo", "kisolo"][variant], "players": 2,
            "group": gid, "seat0": versions[a][1], "seat1": versions[b][1], "seat2": "",
            "score0": s0, "score1": s1, "score2": None, "reason": "store",
            "offender": None, "plies": 30, "duration_ms": 5, "seed": g, "opening": "",
            "started_at": at,
        }
        batch.append((g + 1, variant, f"{versions[a][0]},{versions[b][0]}", at, at,
                      json.dumps(row, separators=(",", ":"))))
        if len(batch) == 100_000:
            insert(con, batch)
    insert(con, batch)
    con.close()


def insert(con, batch):
    con.executemany(
        "INSERT INTO games (id, state, variant, seats, created_at, finished_at, row_json) "
        "VALUES (?, 'done', ?, ?, ?, ?, ?)", batch)
    con.commit()
    batch.clear()


def get(url):
    """The body of `url` and the seconds it took."""
    t = time.time()
    with urllib.request.urlopen(url, timeout=600) as r:
        body = r.read()
    return body, time.time() - t


def memory(pid):
    with open(f"/proc/{pid}/status") as f:
        return " ".join(l.split(":")[0] + " " + l.split()[1] + " kB"
                        for l in f if l.startswith(("VmRSS", "VmHWM")))


def main():
    bots, games = int(sys.argv[1]), int(sys.argv[2])
    folder = sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp()
    os.makedirs(folder, exist_ok=True)
    ladder = os.path.join(folder, "ladder.toml")
    db = os.path.join(folder, "results", "ladder.db")
    if not os.path.exists(db):
        with open(ladder, "w") as f:
            f.write('name = "scale"\nseed = 1\nvariants = ["filo", "kisolo"]\n'
                    'output = "results"\n[ladder]\ngames_in_flight = 1\n')
        subprocess.run([ARENA, "serve", ladder, "--add-user", "bench"], check=True,
                       stdout=subprocess.DEVNULL)
        t = time.time()
        fill(db, bots, games)
        print(f"store filled: {bots} bots, {games} games in {time.time() - t:.0f} s, "
              f"{os.path.getsize(db) / 1e6:.0f} MB")
    t = time.time()
    server = subprocess.Popen([ARENA, "serve", ladder, "--bind", "127.0.0.1:0",
                               "--local-games", "0"], stdout=subprocess.PIPE, text=True,
                              stderr=open(os.path.join(folder, "serve.log"), "w"))
    try:
        line = ""
        while "listening on " not in line:
            line = server.stdout.readline()
            if not line:
                sys.exit("arena serve stopped before it listened")
        url = line.split("listening on ")[1].strip()
        print(f"start-up (the finished games read): {time.time() - t:.1f} s; "
              f"{memory(server.pid)}")
        while True:
            metrics = get(url + "/metrics")[0].decode()
            fit = [l.split()[1] for l in metrics.splitlines()
                   if l.startswith("arena_fit_seconds")]
            if fit and float(fit[0]) > 0:
                break
            time.sleep(0.5)
        print(f"first fit: {float(fit[0]):.2f} s; after it: {memory(server.pid)}")
        for path in ["/", "/api/standings"]:
            times = sorted(get(url + path)[1] for _ in range(5))
            print(f"{path}: median {times[2] * 1000:.0f} ms (of 5)")
        body, took = get(url + "/api/games.csv")
        print(f"/api/games.csv: {len(body) / 1e6:.0f} MB in {took:.1f} s; "
              f"after it: {memory(server.pid)}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
