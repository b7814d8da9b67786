#!/bin/bash
# Runs deploy/slurm-league.sbatch on a real, one-node Slurm cluster and
# checks what it promises. As root, on Debian, from the repository's folder:
#
#     bash deploy/test-slurm.sh
#
# 1. installs Slurm and munge from Debian's packages (slurm-wlm, munge) and
#    starts munged, slurmctld and slurmd on localhost (configuration and
#    state under $WORK, default target/slurm-test; nothing in /etc/slurm);
# 2. builds the release binaries once (cargo build --release);
# 3. submits a small league (3 reproducible bots, every variant) as a
#    3-task array, kills task 2 mid-run (scancel) and resubmits it alone
#    (sbatch --array=2), and waits for the end;
# 4. checks that the shards' games are exactly the unsharded schedule's
#    (an unsharded run of the same file, outside Slurm), game by game, and
#    that `arena rate` of the shards equals `arena rate` of that run.
# It stops the daemons it started when it ends. Exit status 0: all held.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$REPO/target/slurm-test}
cd "$REPO"
say() { printf '\n== %s\n' "$*"; }

if [ "$(id -u)" != 0 ]; then
    echo "run as root (it installs packages and starts the Slurm daemons)" >&2
    exit 2
fi

say "install slurm-wlm and munge"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null
fi
slurmctld -V

rm -rf "$WORK"
mkdir -p "$WORK"/{state,spool,log,run}
HOST=$(hostname -s)
CPUS=$(nproc)

say "start munge"
if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
fi
chown munge:munge /etc/munge/munge.key 2>/dev/null || true
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- munged --force
fi
munge -n | unmunge | grep -q 'STATUS: *Success' && echo "munge works"

say "start a one-node cluster on $HOST ($CPUS CPUs)"
export SLURM_CONF=$WORK/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=arena-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
cleanup() {
    scancel --quiet --user=root 2>/dev/null || true
    for p in slurmd slurmctld; do
        [ -s "$WORK/run/$p.pid" ] && kill "$(cat "$WORK/run/$p.pid")" 2>/dev/null || true
    done
}
trap cleanup EXIT
slurmctld -c -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
    sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
    sleep 1
done
sinfo

say "build the release binaries once"
cargo build --release --quiet
ARENA=$REPO/target/release/arena
export ARENA

say "the league"
# Three reproducible bots (the search bot with a fixed iteration count), so
# that the shards, a killed and resumed task included, give the games an
# unsharded run gives. One task runs at a time per CPU pair; the search bot
# keeps each task busy long enough to be killed mid-run.
LEAGUE=$WORK/slurm-league.toml
cat >"$LEAGUE" <<'EOF'
name = "slurm-test"
seed = 17
bots = [
  { name = "search", command = ["{bin_dir}/search-bot", "--iterations", "400"] },
  { name = "greedy", command = ["{bin_dir}/greedy-bot"] },
  { name = "random", command = ["{bin_dir}/random-bot"] },
]
variants = ["filo", "tricala", "tricala3", "hackaback", "kisolo", "diffusion"]
rounds = 4
openings = 2
max_plies = 400
output = "slurm-results"
EOF
cd "$WORK"

say "submit it as a 3-task array"
JOB=$(sbatch --parsable --array=1-3 --cpus-per-task=1 \
    --output="$WORK/log/league-%A-%a.out" "$REPO/deploy/slurm-league.sbatch" "$LEAGUE" 3)
echo "job $JOB"

say "kill task 2 once it has played some games"
CSV=$WORK/slurm-results/shard-2-of-3/games.csv
for _ in $(seq 600); do
    if [ -f "$CSV" ] && [ "$(wc -l <"$CSV")" -gt 5 ]; then break; fi
    sleep 0.5
done
scancel "${JOB}_2"
for _ in $(seq 120); do
    squeue -h -j "${JOB}_2" 2>/dev/null | grep -q . || break
    sleep 0.5
done
echo "task 2 killed after $(($(wc -l <"$CSV") - 1)) games"
"$ARENA" status "$WORK/slurm-results" || true

say "resubmit task 2 alone"
JOB2=$(sbatch --parsable --array=2 --cpus-per-task=1 \
    --output="$WORK/log/league-%A-%a.out" "$REPO/deploy/slurm-league.sbatch" "$LEAGUE" 3)
echo "job $JOB2"
for _ in $(seq 3600); do
    squeue -h 2>/dev/null | grep -q . || break
    sleep 1
done
sacct -n -X -j "$JOB,$JOB2" -o JobID,State,ExitCode 2>/dev/null || true
"$ARENA" status "$WORK/slurm-results"

say "check: the shards are the unsharded schedule, with the same ratings"
"$ARENA" run "$LEAGUE" --output "$WORK/whole" --quiet --no-build >/dev/null
python3 - "$WORK" <<'EOF'
import csv, glob, sys
work = sys.argv[1]
def games(paths):
    out = {}
    for p in paths:
        for r in csv.DictReader(open(p)):
            key = (r["variant"], r["seat0"], r["seat1"], r["seat2"],
                   r["score0"], r["score1"], r["score2"], r["reason"], r["plies"])
            assert r["game_id"] not in out, f"{r['game_id']} twice"
            out[r["game_id"]] = key
    return out
shards = games(sorted(glob.glob(f"{work}/slurm-results/shard-*-of-3/games.csv")))
whole = games([f"{work}/whole/games.csv"])
assert shards.keys() == whole.keys(), "the shards' games are not the schedule's"
diff = [g for g in whole if shards[g] != whole[g]]
assert not diff, f"{len(diff)} games differ, e.g. {diff[:3]}"
print(f"{len(shards)} games in 3 shards = the unsharded schedule, every game the same")
EOF
"$ARENA" rate "$WORK"/slurm-results/shard-*-of-3/games.csv --out "$WORK/rated-shards" --format csv >"$WORK/shards.csv"
"$ARENA" rate "$WORK/whole/games.csv" --out "$WORK/rated-whole" --format csv >"$WORK/whole.csv"
cmp "$WORK/rated-shards/ratings.csv" "$WORK/rated-whole/ratings.csv"
echo "ratings.csv of the shards = ratings.csv of the unsharded run"
"$ARENA" rate "$WORK"/slurm-results/shard-*-of-3/games.csv 2>/dev/null
say "all checks passed"
