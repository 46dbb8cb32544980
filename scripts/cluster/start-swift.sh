#!/usr/bin/env bash
# Starts a private all-in-one OpenStack Swift for cluster mode's object-store splits, everything under DIR:
# one device, one replica, the object, container and account servers on 127.0.0.1:PORT+1..PORT+3, and the
# proxy on 127.0.0.1:PORT with tempauth and the s3api middleware (S3, path-style, region us-east-1). Its
# rings and configuration are in DIR/etc (swift_dir; /etc/swift is not used). Started again on the same DIR
# it reuses the data. Prints the s3:// URL of bucket `gnocchi` (access key test:tester, its colon escaped)
# once every server answers and writes it to DIR/url; on failure prints the end of the logs and exits 1.
# Usage: start-swift.sh DIR PORT      Stop: stop.sh DIR
# Needs Debian's swift swift-proxy swift-object swift-account swift-container packages.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIR PORT" >&2; exit 2; }
mkdir -p "$1"; DIR=$(cd "$1" && pwd); PORT=$2
OBJECT=$((PORT + 1)) CONTAINER=$((PORT + 2)) ACCOUNT=$((PORT + 3))
for cmd in swift-ring-builder swift-proxy-server swift-object-server swift-container-server swift-account-server; do
  command -v "$cmd" >/dev/null || { echo "no Swift ($cmd): apt-get install swift swift-proxy swift-object swift-account swift-container" >&2; exit 1; }
done
cd "$DIR"

fail() {
  echo "$1" >&2
  tail -n 15 "$DIR"/log/*.log >&2 2>/dev/null || true
  exit 1
}

if [ ! -f etc/swift.conf ]; then
  mkdir -p etc node/d1 log
  # workers = 0: each server is one process serving in its main thread (no forked workers to track).
  common="[DEFAULT]
swift_dir = $DIR/etc
devices = $DIR/node
mount_check = false
bind_ip = 127.0.0.1
user = $(id -un)
workers = 0
log_level = WARNING"
  printf '[swift-hash]\nswift_hash_path_suffix = gnocchi\nswift_hash_path_prefix = gnocchi\n[storage-policy:0]\nname = Policy-0\ndefault = yes\n' >etc/swift.conf
  for server in object:$OBJECT container:$CONTAINER account:$ACCOUNT; do
    name=${server%%:*} port=${server##*:}
    printf '%s\nbind_port = %s\n[pipeline:main]\npipeline = %s-server\n[app:%s-server]\nuse = egg:swift#%s\n' \
      "$common" "$port" "$name" "$name" "$name" >"etc/$name-server.conf"
  done
  # The three rings (one device each) in one Python process: swift-ring-builder's 9 calls took 17 s on a busy machine.
  # Swift's own interpreter (its shebang): another python3 on the PATH may lack Swift's modules.
  python=$(sed -n '1s/^#! *//p' "$(command -v swift-ring-builder)")
  "$python" - "$DIR/etc" "$OBJECT" "$CONTAINER" "$ACCOUNT" <<'PY' || fail "swift: building the rings failed"
import sys
from swift.common.ring import RingBuilder
etc, ports = sys.argv[1], dict(zip(('object', 'container', 'account'), map(int, sys.argv[2:5])))
for name, port in ports.items():
    builder = RingBuilder(6, 1, 1)
    builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port, 'device': 'd1', 'weight': 100})
    builder.rebalance()
    builder.get_ring().save(f'{etc}/{name}.ring.gz')
PY
  # No memcached: s3api requests are authenticated by their signature, which tempauth checks itself.
  cat >etc/proxy-server.conf <<CONF
[DEFAULT]
swift_dir = $DIR/etc
bind_ip = 127.0.0.1
bind_port = $PORT
user = $(id -un)
workers = 0
log_level = WARNING
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk s3api tempauth copy proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:cache]
use = egg:swift#memcache
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:bulk]
use = egg:swift#bulk
[filter:copy]
use = egg:swift#copy
CONF
fi

# setsid: servers of their own session whose pids are $!; stop.sh finds them by the configuration file they name.
: >"$DIR/pid"
for name in object container account proxy; do
  setsid "swift-$name-server" "$DIR/etc/$name-server.conf" </dev/null >>"log/$name.log" 2>&1 &
  echo $! >>"$DIR/pid"
done
deadline=$((SECONDS + 120))
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
waiting() { # what
  local pid
  for pid in $(cat "$DIR/pid"); do kill -0 "$pid" 2>/dev/null || fail "swift: a server exited (address already in use?) before $1"; done
  [ $SECONDS -lt $deadline ] || fail "swift: $1 not ready within 120 s"
  sleep 0.05
}
for port in $OBJECT $CONTAINER $ACCOUNT; do
  until listening "$port"; do waiting "127.0.0.1:$port"; done
done
until curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthcheck"; do waiting "the proxy"; done
echo "s3://test%3Atester:testing@127.0.0.1:$PORT/gnocchi" | tee "$DIR/url"
