#!/usr/bin/env bash
# Stops the engine that start-postgres.sh or start-redis.sh started under DIR, and nothing else: its
# processes are the postgres or redis-* processes whose working directory is inside DIR (both engines
# run from their data directory), the main one being DIR/pid. The data stays; start it again with the same
# start script, DIR and PORT.
# Usage: stop.sh DIR [SIGNAL]
#   SIGNAL is sent to the main process; by default PostgreSQL's fast shutdown (INT) or Redis's TERM.
#   QUIT is PostgreSQL's immediate shutdown (crash recovery at the next start). KILL goes to every process
#   of the engine at once: a crash. With any other SIGNAL or none, what a PostgreSQL killed earlier left
#   behind is removed (see below).
# Returns once every process is gone. One still there after STOP_TIMEOUT seconds (default 10) is killed,
# and the script then exits 1.
set -uo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 DIR [SIGNAL]" >&2; exit 2; }
DIR=$(cd "$1" 2>/dev/null && pwd) || exit 0
if [ -f "$DIR/pg/PG_VERSION" ]; then default=INT; else default=TERM; fi
SIG=${2:-$default}; SIG=${SIG#SIG}

engine_pids() {
  local dir comm
  # find fails on the processes it may not look into (other users' when not root): those are not ours.
  { find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$DIR" -o -lname "$DIR/*" \) -printf '%h\n' 2>/dev/null || true; } |
    while read -r dir; do
      read -r comm 2>/dev/null <"$dir/comm" || continue
      case $comm in postgres|redis-*) echo "${dir#/proc/}" ;; esac
    done
}
# A process that has begun to exit no longer shows its working directory: wait for it to be a zombie or gone.
exited() {
  local stat
  { stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 0
  stat=${stat##*) }
  [ "${stat%% *}" = Z ]
}
remaining() {
  local pid
  for pid in $1; do exited "$pid" || echo "$pid"; done
  engine_pids
}

# A PostgreSQL killed by -9 leaves its System V shared memory segment (56 bytes, numbered on line 7 of
# postmaster.pid) for its next start to remove; stopping it for good removes it instead, if it is still that
# postmaster's (creator pid) and unused. /proc/sysvipc/shm columns: key shmid perms size cpid lpid nattch.
remove_crash_segment() {
  local lock=$DIR/pg/postmaster.pid postmaster shmid
  [ -f "$lock" ] || return 0
  postmaster=$(sed -n 1p "$lock"); shmid=$(sed -n 7p "$lock" | awk '{ print $2 }')
  awk -v id="${shmid:-none}" -v pid="$postmaster" '$2 == id && $5 == pid && $7 == 0 { found = 1 } END { exit !found }' \
    /proc/sysvipc/shm && ipcrm -m "$shmid"
}

pids=$(engine_pids)
if [ -z "$pids" ]; then
  [ "$SIG" = KILL ] || remove_crash_segment
  exit 0
fi
if [ "$SIG" = KILL ]; then
  # shellcheck disable=SC2086 # one pid a word
  kill -KILL $pids 2>/dev/null
else
  main=$(cat "$DIR/pid" 2>/dev/null)
  grep -qx "${main:-none}" <<<"$pids" || { echo "stop.sh: $DIR/pid is not a process of $DIR" >&2; exit 1; }
  kill -"$SIG" "$main" || exit 1
fi

deadline=$((SECONDS + ${STOP_TIMEOUT:-10}))
while left=$(remaining "$pids") && [ -n "$left" ]; do
  # A crash leaves nothing behind, not even a child forked while the others were being killed.
  # shellcheck disable=SC2086
  [ "$SIG" = KILL ] && kill -KILL $left 2>/dev/null
  if [ $SECONDS -ge $deadline ]; then
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null
    echo "stop.sh: $DIR still running after ${STOP_TIMEOUT:-10} s, killed:" $left >&2
    exit 1
  fi
  sleep 0.02
done
