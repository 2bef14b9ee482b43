#!/usr/bin/env bash
# Shared by the install scripts: `apt_install TAG PACKAGE...` installs Debian packages as root (or with sudo),
# first from the current package lists and, only if that fails, once more after `apt-get update`.
apt_install() {
  local tag=$1; shift
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    else
      echo "$tag: need root to install $*; run: sudo apt-get install -y $*" >&2
      return 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y --no-install-recommends "$@"; then
    echo "$tag: refreshing package lists (apt-get update) once"
    $sudo apt-get update
    $sudo apt-get install -y --no-install-recommends "$@"
  fi
}
