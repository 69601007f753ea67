#!/usr/bin/env bash
# What the test suite needs beyond Python, made ready in one go: Debian's Chromium and its
# ChromeDriver (browser tests) and a PostgreSQL server on loopback (contract cases). Prints the
# DSN to use (the caller's MIND_TEST_POSTGRES_DSN if it set one). `make test` runs this in the
# background while lint runs: both packages' installs wait on the network, lint on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/browser-test-setup.sh
if [ -n "${MIND_TEST_POSTGRES_DSN:-}" ]; then
  echo "$MIND_TEST_POSTGRES_DSN"
else
  timeout 600 scripts/postgres-test-server.sh
fi
