#!/usr/bin/env bash
# Runs the Vitest suite against Debian's PostgreSQL 15 server instead of the bundled PostgreSQL:
# `npm run test:postgres15`. The product supports any PostgreSQL from 15 on (DATABASE_URL); this
# proves the oldest one with the same tests. A throwaway cluster is made in a temporary folder,
# started on a free loopback port (as the postgres user when run as root: PostgreSQL refuses
# root), handed to the suite through TEST_DATABASE_URL, and removed afterwards.
# PG_BIN names another server's binaries (default /usr/lib/postgresql/15/bin).
set -euo pipefail
cd "$(dirname "$0")/.."

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
if [ ! -x "$PG_BIN/postgres" ]; then
  echo "no PostgreSQL server at $PG_BIN (Debian: apt-get install postgresql-15)" >&2
  exit 2
fi

dir=$(mktemp -d /tmp/imagegen-pg15-XXXXXX)
as_server() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}
[ "$(id -u)" = 0 ] && chown postgres "$dir"
port=$(node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")

stop() {
  as_server "'$PG_BIN/pg_ctl' -D '$dir/data' -m immediate -w stop" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT

as_server "'$PG_BIN/initdb' -D '$dir/data' -A trust -U postgres --encoding=UTF8 --locale=C.UTF-8 --no-sync" >"$dir/initdb.log"
# The same settings as the bundled test cluster: loopback and a socket file in its own folder, no fsync.
as_server "'$PG_BIN/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w start -o \"-p $port \
  -c listen_addresses=127.0.0.1 -c unix_socket_directories='$dir' -c max_connections=200 \
  -c fsync=off -c synchronous_commit=off -c full_page_writes=off\"" >/dev/null
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on $dir/.s.PGSQL.$port and 127.0.0.1:$port"

# The projects that own SQL: db (pools, migrations, LISTEN), server (the queue, models, webhooks,
# analytics) and search (its insights), and app, the program that starts the roles (its worker
# processes and the fleet test). The others reach PostgreSQL only through the server's code, which
# these already run on this server; arguments replace this choice (any vitest filter).
# Left out of that choice: the suites of what the request bodies cost and how they are refused
# (the fuzz, any-string and hostile-body suites send tens of thousands of requests whose SQL is
# the one INSERT every other server suite runs), the cpu engine's models, which reach no SQL, and
# npm start's first-run and CLI suite, which starts processes more than it queries.
if [ "$#" -eq 0 ]; then
  set -- --project db --project server --project search --project app \
    --exclude '**/test/http/api-fuzz.test.ts' --exclude '**/test/http/api-any-string.test.ts' \
    --exclude '**/test/hostile-bodies.test.ts' --exclude '**/test/engines/cpu-engine-api.test.ts' \
    --exclude '**/test/start.test.ts'
fi
# The fleet test's 5,000 tasks prove scale in the first pass; here 300 prove the same faults on
# this server (kills at the 60th, 120th and 180th acknowledged task), and CI stays within its time.
FLEET_TASKS=${FLEET_TASKS:-300} TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?host=$dir" npx vitest run "$@"
