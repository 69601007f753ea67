#!/usr/bin/env bash
# Start (installing if needed) a throwaway PostgreSQL cluster on loopback for the test suite,
# and print its DSN. Idempotent: a running cluster is reused.
set -euo pipefail
# Only the DSN goes to stdout; everything the tools print goes to stderr. The caller reads stdout
# through a pipe until it closes, so no child may keep fd 3: the postmaster daemonises and would
# hold the pipe open for ever (CI hung that way when a stale pid file sent pg_ctlcluster down a
# path that does not close inherited descriptors). Every tool below runs with fd 3 closed.
exec 3>&1 1>&2
PORT="${MIND_TEST_PG_PORT:-55432}"
CLUSTER=mindtest
DSN="postgresql://mind:mind@127.0.0.1:${PORT}/mindtest"

if ! command -v pg_createcluster >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "postgres-test-server: PostgreSQL is not installed and this is not root; skipping" >&2
    exit 0
  fi
  echo "postgres-test-server: installing PostgreSQL from Debian" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
VERSION=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h | awk '{print $2}' | grep -qx "$CLUSTER"; then
  pg_createcluster "$VERSION" "$CLUSTER" -p "$PORT" -- --auth-local=trust --auth-host=md5 \
    >/dev/null 3>&-
fi
# The daemon must not inherit any descriptor someone waits on (fd 3 here, the caller's stderr
# too), so what pg_ctlcluster says goes to a file that is shown only if the start fails.
START_LOG=$(mktemp)
trap 'rm -f "$START_LOG"' EXIT
start() { pg_ctlcluster "$VERSION" "$CLUSTER" start </dev/null >>"$START_LOG" 2>&1 3>&- || true; }
ready() { su postgres -c "psql -p $PORT -tAc 'SELECT 1'" </dev/null >/dev/null 2>&1 3>&-; }
ready || start
for i in $(seq 1 100); do
  ready && break
  # A server killed a moment ago can leave shared memory in use; try again a little later.
  if [ $((i % 20)) = 0 ]; then start; fi
  sleep 0.2
done
if ! ready; then
  echo "postgres-test-server: cluster $CLUSTER on port $PORT did not start:" >&2
  cat "$START_LOG" >&2
  echo "see /var/log/postgresql/postgresql-$VERSION-$CLUSTER.log" >&2
  exit 1
fi
su postgres -c "psql -p $PORT -tAc \"SELECT 1 FROM pg_roles WHERE rolname='mind'\"" | grep -q 1 \
  || su postgres -c "psql -p $PORT -qc \"CREATE ROLE mind LOGIN SUPERUSER PASSWORD 'mind'\""
su postgres -c "psql -p $PORT -tAc \"SELECT 1 FROM pg_database WHERE datname='mindtest'\"" \
  | grep -q 1 || su postgres -c "createdb -p $PORT -O mind mindtest"
echo "$DSN" >&3
