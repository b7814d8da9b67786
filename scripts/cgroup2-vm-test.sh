#!/usr/bin/env bash
# cgroup2-vm-test.sh: tests arena's cgroup v2 limits for real, in a throw-away VM whose
# /sys/fs/cgroup is cgroup v2: CGROUP2_VM names the tool that boots it and runs a command as
# root inside (`$CGROUP2_VM -- CMD`; any tool that does so will serve).
# CI does not run it: it takes minutes (software emulation). Run from the repository root, as root:
#     scripts/cgroup2-vm-test.sh            # builds the test binaries on the host, then boots the VM
#     scripts/cgroup2-vm-test.sh --no-build # reuses target/cgroup2-vm/bins
# Inside the VM it runs (1) as root: tests/cgroup_v2.rs, the referee's memory-hog and fork-bomb
# tests, and check-bot with a hog and a fork bomb (arena makes /sys/fs/cgroup/arena-<pid>);
# (2) as a non-root organiser given a delegated folder through ARENA_CGROUP, the same;
# (3) as a non-root organiser whose own cgroup is delegated (what `systemd-run --user --scope
# -p Delegate=yes` gives), the same; (4) as a non-root organiser with nothing delegated:
# check-bot says why no cgroup applies. A watcher (as root) prints each bot leaf's counters, so the
# kernel's refusals (pids.events max, memory.events oom_kill) are seen, not inferred.
# Exits non-zero when any test fails.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
bins=$repo/target/cgroup2-vm/bins

if [ "${1:-}" != --inside ]; then
  set -e
  if [ "${1:-}" != --no-build ]; then
    mkdir -p "$(dirname "$bins")"
    cargo build --bin arena
    cargo test --no-run --test cgroup_v2 --test referee_bots --test bots_check \
      --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"].upper() + "=" + m["executable"])
' > "$bins"
    echo "ARENA=$repo/target/debug/arena" >> "$bins"
  fi
  cat "$bins"
  exec "${CGROUP2_VM:?set CGROUP2_VM to a tool that runs \`TOOL -- CMD\` as root in a VM with cgroup v2}" -- bash scripts/cgroup2-vm-test.sh --inside
fi

# ---------------- inside the VM, as root ----------------
. "$bins"
fails=0
say() { printf '\n=== %s\n' "$*"; }
check() { # NAME COMMAND...: runs it, counts a failure
  local name=$1; shift
  if "$@"; then echo "--- ok: $name"; else echo "--- FAILED: $name"; fails=$((fails + 1)); fi
}
CG=/sys/fs/cgroup
USER_PATH=/usr/local/bin:/usr/bin:/bin
# The host's PATH (carried in) may start python3 through a pyenv shim, a shell script that takes
# longer than a bot's 10 s hello under emulation: the system's python3 for every bot.
export PATH=/usr/local/sbin:/usr/sbin:/sbin:$USER_PATH
say "VM: $(uname -r); $(stat -fc %T $CG) at $CG; controllers: $(cat $CG/cgroup.controllers)"

# Prints, every 0.2 s, the counters of each bot leaf (a cgroup named arena-* with a pids.max)
# that changed, wherever it is (as root).
watch_leaves() {
  # Shell builtins only (read, no cat or sed): under emulation a fork costs milliseconds, and a
  # bot must say hello within 10 s.
  local last= line d pm pc pe me mp oom k v
  while :; do
    for d in $CG/arena-*/ $CG/*/arena-*/; do
      read -r pm < "$d/pids.max" 2>/dev/null && [ "$pm" != max ] || continue
      read -r pc < "$d/pids.current" && read -r me < "$d/memory.max" &&
        read -r mp < "$d/memory.peak" || continue
      pe= oom=
      while read -r k v; do [ "$k" = max ] && pe=$v; done < "$d/pids.events"
      while read -r k v; do [ "$k" = oom_kill ] && oom=$v; done < "$d/memory.events"
      [ -n "$pe" ] && [ -n "$oom" ] || continue # read while it went
      d=${d%/}
      line="${d##*/}: pids.max=$pm pids.current=$pc pids.events:max=$pe memory.max=$me memory.peak=$mp memory.events:oom_kill=$oom"
      case $last in *"|$line|"*) ;; *) echo "  [watch] $line"; last="$last|$line|" ;; esac
    done 2>/dev/null
    sleep 0.5
  done
}
watch_leaves & watcher=$!
trap 'kill $watcher 2>/dev/null' EXIT

# The VM's /usr is an overlay mounted over an earlier /usr/lib overlay, which /proc/self/mountinfo
# still lists though nothing reaches it: the bot sandbox's view (view.rs) fails to remount it
# read-only (EINVAL) and no bot starts. Detaching the /usr overlay makes the layout plain.
umount -l /usr && echo "(VM: /usr overlay detached, so that the sandbox's view can be built)"

# What each context runs: $1 = a label; run as "$as" (a command prefix).
suite() {
  local label=$1
  check "$label: tests/cgroup_v2.rs" $as "$CGROUP_V2" --test-threads=1 --nocapture
  check "$label: referee tests (memory hog, fork bomb)" $as "$REFEREE_BOTS" --exact --nocapture --test-threads=1 \
    a_memory_hog_forfeits_memory a_fork_bomb_is_contained_and_forfeits
  say "$label: arena check-bot, memory hog (--memory-mb 200)"
  out=$($as "$ARENA" check-bot --game filo --timeout-ms 20000 --memory-mb 200 -- \
    python3 "$repo/bots/broken/misbehave.py" hog 2>&1)
  echo "$out" | grep -E 'limits|FAIL|memory' | head -5
  check "$label: check-bot hog forfeits memory" grep -q 'seat 0: memory' <<<"$out"
  check "$label: check-bot names cgroup v2" grep -q 'by cgroup v2' <<<"$out"
  say "$label: arena check-bot, fork bomb (--processes 32)"
  out=$($as "$ARENA" check-bot --game filo --timeout-ms 2000 --processes 32 -- \
    python3 "$repo/bots/broken/misbehave.py" fork_bomb 2>&1)
  echo "$out" | grep -E 'limits|FAIL' | head -5
  check "$label: check-bot fork bomb fails" grep -q 'FAIL' <<<"$out"
  check "$label: no fork bomb process is left" sh -c '! pgrep -f "misbehave.p[y] fork_bomb"'
}

# Warm-up, not counted: the first sandboxed bot in a fresh VM reads python3 and the bot through
# cold 9p caches under emulation, and may miss its 10 s hello.
"$ARENA" check-bot --game filo --memory-mb 64 -- python3 "$repo/bots/broken/misbehave.py" hog \
  >/dev/null 2>&1 || :

# (1) root: arena makes /sys/fs/cgroup/arena-<pid> itself.
say "(1) as root, no ARENA_CGROUP: arena makes $CG/arena-<pid>"
as=env
suite "root"
check "root: the arena-<pid> folders of ended runs are removed by the next run" sh -c "
  $ARENA check-bot --game filo -- python3 $repo/bots/broken/misbehave.py hog >/dev/null 2>&1
  n=\$(ls -d $CG/arena-* 2>/dev/null | wc -l); echo \"  arena-* folders left at the top: \$n (the last run's own)\"; [ \$n -le 1 ]"
check "root: without cgroups (as nobody, nothing delegated) the data-size rlimit bounds a hog" \
  "$BOTS_CHECK" --exact --nocapture without_cgroups_a_memory_hog_is_bounded_by_its_data_size

# The organiser: a user of its own (useradd writes to the VM's throw-away /etc).
useradd -m organiser 2>/dev/null || true
ou=$(id -u organiser)
# Runs "$@" as the organiser, started in the cgroup folder $inside.
as_organiser() {
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$inside" \
    setpriv --reuid="$ou" --regid="$ou" --clear-groups \
    env -i HOME=/home/organiser PATH=$USER_PATH TMPDIR=/tmp ${ARENA_CGROUP:+ARENA_CGROUP=$ARENA_CGROUP} "$@"
}

# (2) non-root with a subtree given by the organiser's root (the documented commands).
say "(2) non-root organiser, ARENA_CGROUP=$CG/arena (the commands of docs/security.md)"
mkdir -p $CG/arena/login
echo "+memory +pids +cpu +cpuset" > $CG/cgroup.subtree_control
chown -R organiser: $CG/arena
inside=$CG/arena/login ARENA_CGROUP=$CG/arena
as=as_organiser
suite "ARENA_CGROUP"
echo "  left in $CG/arena: $(cd $CG/arena && ls -d */ | tr '\n' ' ')"
unset ARENA_CGROUP

# (3) non-root whose own cgroup is delegated as systemd does for Delegate=yes: the folder and
# its cgroup.procs, cgroup.subtree_control and cgroup.threads belong to the user.
say "(3) non-root organiser, own cgroup delegated (as systemd-run --user --scope -p Delegate=yes)"
# Each command gets a fresh scope, as each systemd-run does (once arena has turned controllers on
# in one, no process may join it any more).
as_in_scope() {
  inside=$CG/run-$BASHPID-$RANDOM.scope
  mkdir "$inside"
  chown organiser: "$inside" "$inside"/cgroup.procs "$inside"/cgroup.subtree_control "$inside"/cgroup.threads
  as_organiser "$@"
}
as=as_in_scope
suite "delegated own cgroup"

# (4) non-root with nothing delegated: says why.
say "(4) non-root organiser, nothing delegated"
mkdir -p $CG/plain
inside=$CG/plain
out=$(as_organiser "$ARENA" check-bot --game filo --memory-mb 200 -- \
  python3 "$repo/bots/broken/misbehave.py" hog 2>&1)
echo "$out" | grep -E 'limits|FAIL' | head -3
check "nothing delegated: says why no cgroup applies" grep -q 'no cgroup can be made here' <<<"$out"

say "failures: $fails"
[ $fails -eq 0 ]
