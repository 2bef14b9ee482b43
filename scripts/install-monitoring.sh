#!/usr/bin/env bash
# Install Debian's Prometheus and Alertmanager when they are missing. Idempotent: does nothing when both
# binaries exist; runs `apt-get update` at most once, and only when a package has to be installed.
# Installing starts no service here (no systemd); `gpupoc stack up` starts the servers itself.
set -euo pipefail

declare -A BINARIES=(
  [prometheus]=/usr/bin/prometheus
  [prometheus-alertmanager]=/usr/bin/prometheus-alertmanager
)

missing=()
for pkg in prometheus prometheus-alertmanager; do
  [[ -x "${BINARIES[$pkg]}" ]] || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-monitoring: prometheus and prometheus-alertmanager already installed"
  exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install install-monitoring "${missing[@]}"
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"

# Debian's postinst may try to start the services; there is no init system here, but stop any
# daemon a policy might have launched so that only `gpupoc stack up` runs these servers.
for pkg in "${missing[@]}"; do
  if command -v service >/dev/null 2>&1; then
    $SUDO service "$pkg" stop >/dev/null 2>&1 || true
  fi
done

for pkg in prometheus prometheus-alertmanager; do
  if [[ ! -x "${BINARIES[$pkg]}" ]]; then
    echo "install-monitoring: ${BINARIES[$pkg]} still missing after installing $pkg" >&2
    exit 1
  fi
done
echo "install-monitoring: installed ${missing[*]}"
