#!/usr/bin/env bash
# Install Debian's Redis server (redis-server) when missing: the broker of the CeleryExecutor topology test.
# Idempotent. Starts nothing: the test runs its own private server on a free port and stops it; Debian's
# default service, if its postinst started one, is stopped again.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
  echo "install-redis: redis-server already installed ($(redis-server --version | awk '{print $3}'))"
  exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install install-redis redis-server
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
# Only the test's own server should run: stop the packaged service if the postinst started it.
if command -v service >/dev/null 2>&1; then
  $SUDO service redis-server stop >/dev/null 2>&1 || true
fi

if ! command -v redis-server >/dev/null 2>&1; then
  echo "install-redis: redis-server still missing after installing redis-server" >&2
  exit 1
fi
echo "install-redis: installed $(command -v redis-server)"
