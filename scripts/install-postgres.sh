#!/usr/bin/env bash
# Install Debian's PostgreSQL server binaries (initdb, pg_ctl, postgres) when missing. Idempotent. Starts
# nothing: the topology test runs its own private cluster on a free port and stops it; Debian's default
# cluster "main" is left stopped.
set -euo pipefail

find_initdb() { ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n1; }

if [[ -n "$(find_initdb)" ]]; then
  echo "install-postgres: PostgreSQL already installed ($(dirname "$(find_initdb)"))"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-postgres: need root to install postgresql; run: sudo apt-get install -y postgresql" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends postgresql; then
  echo "install-postgres: refreshing package lists (apt-get update) once"
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends postgresql
fi
# Debian's postinst may start the default cluster; only the test's own cluster should run.
if command -v pg_ctlcluster >/dev/null 2>&1; then
  for conf in /etc/postgresql/*/main; do
    [[ -d "$conf" ]] || continue
    ver=$(basename "$(dirname "$conf")")
    $SUDO pg_ctlcluster "$ver" main stop >/dev/null 2>&1 || true
  done
fi

if [[ -z "$(find_initdb)" ]]; then
  echo "install-postgres: initdb still missing after installing postgresql" >&2
  exit 1
fi
echo "install-postgres: installed $(dirname "$(find_initdb)")"
