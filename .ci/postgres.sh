#!/usr/bin/env bash
# Starts a throw-away PostgreSQL server for the store/postgres tests and
# prints, on its last line, the export that points the tests at it:
#
#	eval "$(bash .ci/postgres.sh | tail -1)"
#
# It runs as root on Debian and is idempotent: it installs the server
# when initdb/pg_ctl are missing, initialises a cluster once in
# $PGCI_DIR/data (default /tmp/agw-postgres, owned by the postgres user),
# and reuses a server already answering on the port. The server listens
# on 127.0.0.1:55432 only, trusts its connections and runs with
# fsync=off: it holds throw-away test data. "bash .ci/postgres.sh stop"
# stops it.
set -euo pipefail

PORT="${PGCI_PORT:-55432}"
BASE="${PGCI_DIR:-/tmp/agw-postgres}"
DATA="$BASE/data"
DB="${PGCI_DB:-agw_test}"
ROLE="${PGCI_ROLE:-agw}"

log() { echo "postgres.sh: $*" >&2; }

find_bin() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

BIN="$(find_bin || true)"
if [ -z "$BIN" ]; then
	log "installing postgresql"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq postgresql >&2
	BIN="$(find_bin)"
fi
log "using $BIN"

as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

if [ "${1:-}" = "stop" ]; then
	as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >&2 || true
	exit 0
fi

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
	useradd --system --home-dir "$BASE" --shell /bin/bash postgres
fi

mkdir -p "$BASE"
if [ "$(id -u)" = 0 ]; then chown postgres: "$BASE"; fi

if [ ! -s "$DATA/PG_VERSION" ]; then
	log "initialising cluster in $DATA"
	as_pg "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >&2 ||
		as_pg "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C >&2
fi

if ! "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT"; then
	log "starting server on 127.0.0.1:$PORT"
	# Unix socket in the data dir's parent so no system directory is needed.
	as_pg "$BIN/pg_ctl" -D "$DATA" -l "$BASE/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $PORT -k $BASE -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >&2 || { cat "$BASE/server.log" >&2; exit 1; }
fi

ready=0
for _ in $(seq 1 60); do
	if "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT"; then
		ready=1
		break
	fi
	sleep 0.5
done
if [ "$ready" != 1 ]; then
	log "server did not accept connections on 127.0.0.1:$PORT"
	cat "$BASE/server.log" >&2 || true
	exit 1
fi

psql_pg() { as_pg "$BIN/psql" -v ON_ERROR_STOP=1 -qtA -h 127.0.0.1 -p "$PORT" -U postgres "$@"; }
if [ "$(psql_pg -d postgres -c "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != 1 ]; then
	psql_pg -d postgres -c "CREATE ROLE \"$ROLE\" LOGIN" >&2
fi
if [ "$(psql_pg -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
	psql_pg -d postgres -c "CREATE DATABASE \"$DB\" OWNER \"$ROLE\"" >&2
fi

echo "export TEST_POSTGRES_URL=postgres://$ROLE@127.0.0.1:$PORT/$DB?sslmode=disable"
