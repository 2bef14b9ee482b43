#!/usr/bin/env bash
# Install Debian's Chromium (headless browser for the UI test) when /usr/bin/chromium is missing.
# Idempotent: does nothing when the binary exists; runs `apt-get update` at most once, and only when
# installing from the current package lists fails.
set -euo pipefail

PACKAGES=(chromium chromium-driver fonts-dejavu-core)
if [[ -x /usr/bin/chromium ]]; then
  echo "install-browser: chromium already installed ($(/usr/bin/chromium --version 2>/dev/null || echo unknown))"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-browser: need root to install ${PACKAGES[*]}; run: sudo apt-get install -y ${PACKAGES[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends "${PACKAGES[@]}"; then
  echo "install-browser: refreshing package lists (apt-get update) once"
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${PACKAGES[@]}"
fi

if [[ ! -x /usr/bin/chromium ]]; then
  echo "install-browser: /usr/bin/chromium still missing after installing ${PACKAGES[*]}" >&2
  exit 1
fi
echo "install-browser: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
