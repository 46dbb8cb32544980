#!/usr/bin/env bash
# Starts a private one-node Ceph for cluster mode's object-store splits, everything under DIR: a monitor
# (msgr v2 on 127.0.0.1:PORT+1), one OSD (BlueStore on a sparse 4 GiB file in DIR/osd.0) and radosgw (S3,
# path-style) on 127.0.0.1:PORT, with an S3 user whose keys are in the URL. No manager (it is only
# needed for dashboards and balancing: 315 MB saved), cephx off (loopback only), pools of size 1. Started
# again on the same DIR it reuses the data (no new cluster). Prints the s3:// URL of bucket `gnocchi` once
# radosgw answers and writes it to DIR/url; on failure prints the end of the logs and exits 1.
# Usage: start-ceph.sh DIR PORT      Stop: stop.sh DIR
# Needs Debian's ceph-mon ceph-osd radosgw ceph-common packages.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIR PORT" >&2; exit 2; }
mkdir -p "$1"; DIR=$(cd "$1" && pwd); PORT=$2; MON=$((PORT + 1))
for cmd in ceph-mon ceph-osd radosgw radosgw-admin ceph monmaptool; do
  command -v "$cmd" >/dev/null || { echo "no Ceph ($cmd): apt-get install ceph-mon ceph-osd radosgw ceph-common" >&2; exit 1; }
done
CONF=$DIR/ceph.conf
KEY=gnocchi SECRET=gnocchi-secret
cd "$DIR"

fail() {
  echo "$1" >&2
  tail -n 15 "$DIR"/log/*.log >&2 2>/dev/null || true
  exit 1
}

if [ ! -f "$CONF" ]; then
  mkdir -p mon.a osd.0 run log
  cat >"$CONF" <<CONF
[global]
fsid = $(cat /proc/sys/kernel/random/uuid)
mon host = v2:127.0.0.1:$MON
auth cluster required = none
auth service required = none
auth client required = none
# radosgw asks for the 'secure' messenger mode, which needs cephx: allow crc too (else it retries for 300 s)
ms mon client mode = crc secure
ms client mode = crc secure
ms bind ipv4 = true
ms bind ipv6 = false
ms bind msgr1 = false
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
mon cluster log file = $DIR/log/cluster.log
# the daemons stay in DIR (stop.sh finds them by their working directory)
chdir = $DIR
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
osd crush chooseleaf type = 0
[mon]
mon data = $DIR/mon.\$id
[osd]
osd data = $DIR/osd.\$id
osd objectstore = bluestore
bluestore block create = true
bluestore block size = 4294967296
bluestore fsck on mount = false
osd memory target = 939524096
[client.rgw.gnocchi]
rgw frontends = beast endpoint=127.0.0.1:$PORT
rgw data = $DIR/rgw
CONF
  monmaptool --create --fsid "$(sed -n 's/^fsid = //p' "$CONF")" --addv a "[v2:127.0.0.1:$MON]" monmap >/dev/null
  ceph-mon -c "$CONF" --mkfs -i a --monmap monmap >log/mkfs.log 2>&1 || fail "ceph-mon --mkfs failed"
fi

# setsid and -f: daemons of their own session whose pids are $! (Ceph's own daemonizing forks again).
daemon() { setsid "$@" -f </dev/null >>"$DIR/log/stdout.log" 2>&1 & echo $! >>"$DIR/pid"; }
: >"$DIR/pid"
deadline=$((SECONDS + 120))
wait_for() { # what, test command...
  local what=$1; shift
  local pid
  until "$@" >/dev/null 2>&1; do
    for pid in $(cat "$DIR/pid"); do kill -0 "$pid" 2>/dev/null || fail "ceph: a daemon exited (address already in use?) before the $what was ready"; done
    [ $SECONDS -lt $deadline ] || fail "ceph: $what not ready within 120 s"
    sleep 0.1
  done
}

daemon ceph-mon -c "$CONF" -i a
wait_for "monitor" timeout 5 ceph -c "$CONF" mon stat
if [ ! -f osd.0/fsid ]; then
  uuid=$(cat /proc/sys/kernel/random/uuid)
  [ "$(ceph -c "$CONF" osd new "$uuid")" = 0 ] || fail "ceph osd new did not give id 0"
  ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$uuid" >log/osd-mkfs.log 2>&1 || fail "ceph-osd --mkfs failed"
fi
daemon ceph-osd -c "$CONF" -i 0
osd_up() { timeout 5 ceph -c "$CONF" osd stat | grep -q '1 up'; }
wait_for "OSD" osd_up
daemon radosgw -c "$CONF" -n client.rgw.gnocchi
wait_for "radosgw" curl -sf -o /dev/null "http://127.0.0.1:$PORT/"
if [ ! -f rgw-user.json ]; then
  radosgw-admin -c "$CONF" user create --uid=gnocchi --display-name=gnocchi --access-key="$KEY" --secret="$SECRET" \
    >rgw-user.json 2>log/rgw-user.log || fail "radosgw-admin user create failed"
fi
echo "s3://$KEY:$SECRET@127.0.0.1:$PORT/gnocchi" | tee "$DIR/url"
