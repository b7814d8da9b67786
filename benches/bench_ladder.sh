# Sourced by benches/serve.sh and benches/serve_ab.sh: the benchmark's
# ladder (the variants of benches/throughput.toml, 2 games in flight, no
# maintenance rate) and its four instant seeded random bots, served and
# entered.

# Writes DIR/ladder.toml and the bots' folders DIR/bots/r0..r3.
write_bench_ladder() {
    local dir=$1
    cat > "$dir/ladder.toml" <<TOML
name = "bench"
seed = 1
variants = ["filo", "tricala", "tricala3", "hackaback", "kisolo", "diffusion"]
openings = 0
max_plies = 1000
output = "results"
[ladder]
games_in_flight = 2
# Full speed once the bots are placed: what is measured is the server's
# pace, not the maintenance rate (600 games an hour by default).
maintenance_games_per_hour = 100000000
refit_seconds = 10
refit_games = 5000
TOML
    for i in 0 1 2 3; do
        mkdir -p "$dir/bots/r$i"
        printf 'name = "r%s"\ncommand = ["{bin_dir}/random-bot"]\nenv = { RANDOM_BOT_SEED = "%s" }\n' $i $i > "$dir/bots/r$i/bot.toml"
    done
}

# Serves DIR's ladder with the arena in BIN_DIR and uploads its four bots:
# sets SERVER (the pid) and URL.
serve_bench_ladder() {
    local bin=$1 dir=$2 token
    token=$("$bin/arena" serve "$dir/ladder.toml" --add-user bench | tail -1)
    "$bin/arena" serve "$dir/ladder.toml" --bind 127.0.0.1:0 > "$dir/serve.out" 2> "$dir/serve.log" &
    SERVER=$!
    for _ in $(seq 100); do grep -q listening "$dir/serve.out" 2>/dev/null && break; sleep 0.2; done
    URL=$(grep -o 'http://[0-9.:]*' "$dir/serve.out")
    for i in 0 1 2 3; do
        "$bin/arena" submit --server "$URL" --token "$token" "$dir/bots/r$i" > "$dir/submit-$i.log"
    done
}

# Games finished on the server at URL.
bench_games() {
    curl -s "$URL/health" | python3 -c 'import json,sys; print(json.load(sys.stdin)["games"])'
}
