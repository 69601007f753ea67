#!/usr/bin/env bash
# Start (installing if needed) a throwaway PostgreSQL cluster on loopback for the test suite,
# and print its DSN. Idempotent: a running cluster is reused.
set -euo pipefail
# Only the DSN goes to stdout; everything the tools print goes to stderr.
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
  pg_createcluster "$VERSION" "$CLUSTER" -p "$PORT" -- --auth-local=trust --auth-host=md5 >/dev/null
fi
pg_ctlcluster "$VERSION" "$CLUSTER" start 2>/dev/null || true
for _ in $(seq 1 50); do
  su postgres -c "psql -p $PORT -tAc 'SELECT 1'" >/dev/null 2>&1 && break
  sleep 0.2
done
su postgres -c "psql -p $PORT -tAc \"SELECT 1 FROM pg_roles WHERE rolname='mind'\"" | grep -q 1 \
  || su postgres -c "psql -p $PORT -qc \"CREATE ROLE mind LOGIN SUPERUSER PASSWORD 'mind'\""
su postgres -c "psql -p $PORT -tAc \"SELECT 1 FROM pg_database WHERE datname='mindtest'\"" \
  | grep -q 1 || su postgres -c "createdb -p $PORT -O mind mindtest"
echo "$DSN" >&3
