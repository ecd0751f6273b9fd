#!/usr/bin/env bash
# Installs Debian's PostgreSQL server binaries for the `sdtt serve` PostgreSQL tests (the
# tests start their own server in a temporary folder; nothing is configured or started
# here). Safe to run again: does nothing when initdb is already there.
# Usage: bash tests/serve/install_postgres.sh   (PG_BIN=/path/to/bin to use another build)
set -euo pipefail

bin="${PG_BIN:-}"
if [ -z "$bin" ]; then
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
fi
if [ -n "$bin" ] && [ -x "$bin/initdb" ]; then
  echo "postgresql test server ready: $("$bin/postgres" --version)"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
elif command -v sudo >/dev/null 2>&1; then
  sudo apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
else
  echo "install_postgres.sh: install PostgreSQL (Debian/Ubuntu: apt-get install postgresql) or set PG_BIN" >&2
  exit 1
fi
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
echo "postgresql test server ready: $("$bin/postgres" --version)"
