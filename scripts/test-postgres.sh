#!/usr/bin/env bash
# Start (once) a private PostgreSQL server for the tests, on 127.0.0.1 only, and print its URL.
#
#   scripts/test-postgres.sh            -> postgresql://postgres@127.0.0.1:54329/memoryos_test
#
# Installs the Debian package `postgresql` when no server binaries are found and we are root
# (as .ci/run runs on a fresh machine). The cluster lives in $MEMORYOS_PG_DIR (default
# /tmp/memoryos-pg-<port>), trusts loopback connections only, and is reused by later runs.
set -euo pipefail
PORT="${MEMORYOS_PG_PORT:-54329}"
DIR="${MEMORYOS_PG_DIR:-/tmp/memoryos-pg-$PORT}"
DB="${MEMORYOS_PG_DB:-memoryos_test}"

say() { echo "test-postgres: $*" >&2; }

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
BIN="$(find_bin || true)"
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing the Debian package postgresql"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || true
    apt-get install -y -qq postgresql >&2
    BIN="$(find_bin)"
  else
    say "no PostgreSQL server binaries (install the Debian package postgresql, or run .ci/run as root)"
    exit 1
  fi
fi

# as root, the server runs as the 'postgres' user (PostgreSQL refuses to run as root)
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
  AS=(runuser -u postgres --)
else
  AS=()
fi

if [ ! -f "$DIR/PG_VERSION" ]; then
  mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown postgres "$DIR"
  "${AS[@]}" "$BIN/initdb" -D "$DIR" -A trust -U postgres --no-sync >/dev/null
fi
if ! "${AS[@]}" "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
  "${AS[@]}" "$BIN/pg_ctl" -D "$DIR" -w -l "$DIR/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=200 -c fsync=off" start >/dev/null
fi
if ! "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='$DB'" | grep -q 1; then
  "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$DB"
fi
echo "postgresql://postgres@127.0.0.1:$PORT/$DB"
