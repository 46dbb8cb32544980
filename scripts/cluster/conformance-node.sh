#!/usr/bin/env bash
# One conformance file's server in cluster mode: the node the tests talk to
# and a second node that shares the processing (each holds some of the
# shards, so a measure pushed to one is often processed by the other), on a
# database and a Redis of their own for this file. Runs in the foreground
# until SIGTERM or SIGINT, then stops both nodes.
# Usage: conformance-node.sh PORT DATA_DIR MAX_LIMIT
# Environment: GNOCCHI_TEST_POSTGRES (postgresql://user@host:port, a server
# this file may create a database on), GNOCCHI_TEST_REDIS (redis://host:port;
# flushed: the files run one at a time) and, for sealed splits in an object
# store, GNOCCHI_TEST_S3 (an s3:// URL; each file gets a bucket of its own).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PORT DATA_DIR MAX_LIMIT" >&2; exit 2; }
port=$1 data=$2 max_limit=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
pg=${GNOCCHI_TEST_POSTGRES:?set GNOCCHI_TEST_POSTGRES}
redis=${GNOCCHI_TEST_REDIS:?set GNOCCHI_TEST_REDIS}

db=conformance_$(date +%s%N)
psql -q "$pg/postgres" -c "CREATE DATABASE $db" >/dev/null
redis-cli -u "$redis" FLUSHALL >/dev/null
other=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")

common=(--host 127.0.0.1 --index "$pg/$db" --incoming "$redis" --series "$redis" --coordination "$redis"
  --shards 4 --lease 3000 --max-limit "$max_limit" --no-default-archive-policies --workers 1)
if [ -n "${GNOCCHI_TEST_S3:-}" ]; then
  s3=${GNOCCHI_TEST_S3%%\?*}
  common+=(--splits "${s3%/*}/c$(date +%s%N)")
fi
node "$root/dist/server/main.js" --port "$other" --data-dir "$data/b" --node-id b "${common[@]}" &
b=$!
node "$root/dist/server/main.js" --port "$port" --data-dir "$data/a" --node-id a "${common[@]}" &
a=$!
trap 'kill -TERM $a $b 2>/dev/null; wait $a $b' TERM INT
wait $a
