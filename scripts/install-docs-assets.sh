#!/usr/bin/env bash
# Install the scripts, styles and fonts the Data Docs pages would load from public CDNs, from the npm
# registry at the exact versions of include/gpupoc/validation/docs_assets/package-lock.json (npm ci), so the
# site renders with no network. Idempotent: does nothing while node_modules matches the lock file.
# Installs Debian's npm when npm is missing.
set -euo pipefail

DIR="$(cd "$(dirname "$0")/.." && pwd)/include/gpupoc/validation/docs_assets"
STAMP="$DIR/node_modules/.gpupoc-lock.sha256"
want=$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)
if [[ -f $STAMP && "$(cat "$STAMP")" == "$want" ]]; then
  echo "install-docs-assets: up to date ($DIR/node_modules)"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  source "$(dirname "$0")/apt-install.sh"
  apt_install install-docs-assets npm
fi

# .npmrc beside package.json: no install scripts run, peer ranges as the Data Docs pages pair them
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" > "$STAMP"
echo "install-docs-assets: installed $(ls "$DIR/node_modules" | wc -l) packages into $DIR/node_modules"
