#!/usr/bin/env bash
# Starts a private redis-server for cluster mode on 127.0.0.1:PORT with everything under DIR: the
# append-only file in DIR/appendonlydir (reloaded when started again on the same DIR), log in DIR/redis.log.
# Prints the server's URL once it answers with its data loaded; on failure prints the end of the log and
# exits 1.
# Usage: start-redis.sh DIR PORT      Stop: stop.sh DIR
# Needs Debian's redis-server package.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIR PORT" >&2; exit 2; }
mkdir -p "$1"; DIR=$(cd "$1" && pwd); PORT=$2
command -v redis-server >/dev/null || { echo "no Redis: apt-get install redis-server" >&2; exit 1; }

# appendfsync always: Redis answers a write once it is fsynced to the AOF, so an acknowledged measure
# survives a machine crash too, not only a process crash. RDB snapshots off: the AOF is the only copy.
# maxmemory-policy noeviction: a full Redis refuses writes instead of dropping keys.
# setsid: a daemon of its own session, whose pid is $! (unlike --daemonize, which forks once more).
setsid redis-server --bind 127.0.0.1 --port "$PORT" --dir "$DIR" --logfile "$DIR/redis.log" \
  --appendonly yes --appendfsync always --save '' --maxmemory-policy noeviction \
  </dev/null >/dev/null 2>&1 &
pid=$!
echo "$pid" >"$DIR/pid"

# Ready once the server answering on PORT is this one (not another that holds the port) and has loaded the AOF.
ready() {
  local info; info=$(redis-cli -h 127.0.0.1 -p "$PORT" info 2>/dev/null | tr -d '\r')
  grep -qx "process_id:$pid" <<<"$info" && grep -qx 'loading:0' <<<"$info"
}
deadline=$((SECONDS + 60))
until ready; do
  if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
    kill -KILL "$pid" 2>/dev/null || true
    tail -n 20 "$DIR/redis.log" >&2 || true
    echo "redis-server did not start on 127.0.0.1:$PORT" >&2; exit 1
  fi
  sleep 0.01
done
echo "redis://127.0.0.1:$PORT"
