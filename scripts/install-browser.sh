#!/usr/bin/env bash
# Install Debian's Chromium (headless browser for the UI test and report.pdf) and a Chinese font (a zh
# report's PDF) when either is missing.
# Idempotent: does nothing when both exist; runs `apt-get update` at most once, and only when
# installing from the current package lists fails.
set -euo pipefail

PACKAGES=(chromium chromium-driver fonts-dejavu-core fonts-wqy-microhei)
CJK_FONT=/usr/share/fonts/truetype/wqy/wqy-microhei.ttc
if [[ -x /usr/bin/chromium && -f $CJK_FONT ]]; then
  echo "install-browser: chromium already installed ($(/usr/bin/chromium --version 2>/dev/null || echo unknown))"
  exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install install-browser "${PACKAGES[@]}"
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"

if [[ ! -x /usr/bin/chromium ]]; then
  echo "install-browser: /usr/bin/chromium still missing after installing ${PACKAGES[*]}" >&2
  exit 1
fi
echo "install-browser: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
