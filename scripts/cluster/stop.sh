#!/usr/bin/env bash
# Stops the engine that a start-*.sh of this directory started under DIR, and nothing else: its processes
# are the postgres, redis-*, ceph-*, radosgw or swift-* processes whose working directory is inside DIR or
# whose command line names a file inside DIR (Swift's servers chdir to /), the main ones being listed in
# DIR/pid (one a line: Ceph and Swift run several). The data stays; start it again with the same start
# script, DIR and PORT.
# Usage: stop.sh DIR [SIGNAL]
#   SIGNAL is sent to the main processes; by default PostgreSQL's fast shutdown (INT), or TERM.
#   QUIT is PostgreSQL's immediate shutdown (crash recovery at the next start). KILL goes to every process
#   of the engine at once: a crash. With any other SIGNAL or none, what a PostgreSQL killed earlier left
#   behind is removed (see below).
# Returns once every process is gone. One still there after STOP_TIMEOUT seconds (default 30: a radosgw on a loaded machine has taken more than 10 to exit) is killed,
# and the script then exits 1.
set -uo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 DIR [SIGNAL]" >&2; exit 2; }
DIR=$(cd "$1" 2>/dev/null && pwd) || exit 0
if [ -f "$DIR/pg/PG_VERSION" ]; then default=INT; else default=TERM; fi
SIG=${2:-$default}; SIG=${SIG#SIG}

engine_pids() {
  local dir comm
  # find and grep fail on the processes they may not look into (other users' when not root, exited ones): not ours.
  {
    find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$DIR" -o -lname "$DIR/*" \) -printf '%h\n' 2>/dev/null || true
    grep -lF "$DIR/" /proc/[0-9]*/cmdline 2>/dev/null | sed 's|/cmdline$||' || true
  } | sort -u |
    while read -r dir; do
      read -r comm 2>/dev/null <"$dir/comm" || continue
      case $comm in postgres|redis-*|ceph-*|radosgw|swift-*) echo "${dir#/proc/}" ;; esac
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
  mains=$(grep -Fxf <(echo "$pids") "$DIR/pid" 2>/dev/null)
  [ -n "$mains" ] || { echo "stop.sh: no process of $DIR/pid is a process of $DIR" >&2; exit 1; }
  # shellcheck disable=SC2086
  kill -"$SIG" $mains || exit 1
fi

deadline=$((SECONDS + ${STOP_TIMEOUT:-30}))
while left=$(remaining "$pids") && [ -n "$left" ]; do
  # A crash leaves nothing behind, not even a child forked while the others were being killed.
  # shellcheck disable=SC2086
  [ "$SIG" = KILL ] && kill -KILL $left 2>/dev/null
  if [ $SECONDS -ge $deadline ]; then
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null
    echo "stop.sh: $DIR still running after ${STOP_TIMEOUT:-30} s, killed:" $left >&2
    exit 1
  fi
  sleep 0.02
done
