#!/usr/bin/env bash
# Starts a private PostgreSQL server for cluster mode on 127.0.0.1:PORT with everything under DIR: data in
# DIR/pg (created on first use, reused after), log in DIR/postgres.log, Unix socket in DIR. Local
# connections are trusted, superuser `postgres`. Prints the server's URL once it accepts connections;
# on failure prints the end of the log and exits 1.
# Usage: start-postgres.sh DIR PORT      Stop: stop.sh DIR
# Needs Debian's postgresql package (its newest /usr/lib/postgresql/*/bin, or set PGBIN).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIR PORT" >&2; exit 2; }
mkdir -p "$1"; DIR=$(cd "$1" && pwd); PORT=$2
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
[ -x "$PGBIN/pg_ctl" ] || { echo "no PostgreSQL: apt-get install postgresql, or set PGBIN" >&2; exit 1; }

# PostgreSQL refuses to run as root: root runs it as the postgres system user (made by the package).
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$DIR"

if [ ! -f "$DIR/pg/PG_VERSION" ]; then
  # --no-sync: a crash during initdb leaves nothing worth keeping; the server itself runs with fsync on.
  as_owner "$PGBIN/initdb" -D "$DIR/pg" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
    >"$DIR/initdb.log" 2>&1 || {
    tail -n 20 "$DIR/initdb.log" >&2
    [ "$(id -u)" = 0 ] && echo "(run as root: DIR and every directory above it must be reachable by the postgres user)" >&2
    exit 1
  }
fi
# A postmaster killed by -9 leaves its lock files (data directory, socket), which PostgreSQL ignores once that
# process is gone but not while it is a zombie (dead, not yet reaped: a container's init may leave it so for
# seconds): remove those.
for lock in "$DIR/pg/postmaster.pid" "$DIR/.s.PGSQL.$PORT.lock"; do
  [ -f "$lock" ] || continue
  stat=$(cat "/proc/$(head -n 1 "$lock")/stat" 2>/dev/null || true)
  stat=${stat##*) }
  if [ "${stat%% *}" = Z ]; then rm -f "$lock"; fi
done
# After a crash (kill -9, immediate stop) this replays the WAL before accepting connections; -w waits for it.
as_owner "$PGBIN/pg_ctl" -D "$DIR/pg" -l "$DIR/postgres.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories='$DIR'" start >/dev/null \
  || { tail -n 20 "$DIR/postgres.log" >&2; exit 1; }
head -n 1 "$DIR/pg/postmaster.pid" >"$DIR/pid"
echo "postgresql://postgres@127.0.0.1:$PORT/postgres"
