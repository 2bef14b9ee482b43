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

source "$(dirname "$0")/apt-install.sh"
apt_install install-postgres postgresql
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
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
