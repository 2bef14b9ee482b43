#!/usr/bin/env bash
# Build the real control plane's binaries from the Go module proxy, once per machine and set of pins.
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl  k8s.io/kubernetes (a wrapper module)
#   etcd                                                              go.etcd.io/etcd/server/v3 (a small main)
#   kwok                                                              sigs.k8s.io/kwok/cmd/kwok
#   kueue (only with --with-kueue)                                    sigs.k8s.io/kueue/cmd/kueue
# The binaries land in a cache keyed by the pins (pins.env, staging-modules.txt and this script), so a second run
# is instant and a changed pin rebuilds. The Go module and build caches are reused. Nothing is downloaded from
# anywhere but the Go module proxy.
#   build.sh [--with-kueue]     build what is missing, print progress, then the binaries' directory
#   build.sh --print-bin-dir    print the binaries' directory (built or not) and exit
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
source "$HERE/pins.env"
CACHE_ROOT="${GPUPOC_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpupoc/control-plane}"
KEY="$(cat "$HERE/pins.env" "$HERE/staging-modules.txt" "$HERE/build.sh" | sha256sum | cut -c1-16)"
DIR="$CACHE_ROOT/$KEY"
BIN="$DIR/bin"

if [[ "${1:-}" == "--print-bin-dir" ]]; then echo "$BIN"; exit 0; fi
WITH_KUEUE=0; [[ "${1:-}" == "--with-kueue" ]] && WITH_KUEUE=1

log() { printf 'control-plane build [%s +%4ss] %s\n' "$(date -u +%H:%M:%S)" "$SECONDS" "$*"; }
need() { command -v "$1" >/dev/null || { echo "control-plane build: '$1' is not installed; install Go 1.26 or newer (https://go.dev/dl) and run make again" >&2; exit 1; }; }
need go

KUBE_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
wanted=("${KUBE_BINS[@]}" etcd kwok); [[ $WITH_KUEUE == 1 ]] && wanted+=(kueue)
missing=(); for b in "${wanted[@]}"; do [[ -x "$BIN/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then log "all binaries present in $BIN (pins $KEY)"; echo "$BIN"; exit 0; fi

mkdir -p "$BIN" "$DIR/src"
exec 9>"$DIR/.lock"; flock 9
log "building ${missing[*]} into $BIN (cold: about 10 to 16 minutes on 2 cores; warm: seconds)"

# A heartbeat, so a long cold build shows it is alive: the build cache's size every 60 s.
( while sleep 60; do log "still building (Go build cache $(du -sh "$(go env GOCACHE)" 2>/dev/null | cut -f1))"; done ) &
HEARTBEAT=$!; trap 'kill $HEARTBEAT 2>/dev/null || true' EXIT

export GOFLAGS="-buildvcs=false -trimpath" GOTOOLCHAIN=local CGO_ENABLED=0
KUBE_LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION \
 -X k8s.io/component-base/version.gitMajor=$(echo "$KUBERNETES_VERSION" | cut -d. -f1 | tr -d v) \
 -X k8s.io/component-base/version.gitMinor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2) \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION \
 -X k8s.io/client-go/pkg/version.gitMajor=$(echo "$KUBERNETES_VERSION" | cut -d. -f1 | tr -d v) \
 -X k8s.io/client-go/pkg/version.gitMinor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2) \
 -X k8s.io/client-go/pkg/version.gitTreeState=clean"

build_kubernetes() {
  local mod="$DIR/src/kubernetes"; mkdir -p "$mod"; cd "$mod"
  if [[ ! -f go.sum ]]; then
    log "wrapper module for k8s.io/kubernetes@$KUBERNETES_VERSION (33 staging modules at $KUBERNETES_STAGING_VERSION)"
    rm -f go.mod; go mod init gpupoc.local/control-plane >/dev/null 2>&1; go mod edit -go=1.26.0
    while read -r m; do [[ -n "$m" ]] && go mod edit -replace="k8s.io/$m=k8s.io/$m@$KUBERNETES_STAGING_VERSION"; done <"$HERE/staging-modules.txt"
    printf '//go:build tools\n\npackage tools\n\nimport (\n' >tools.go
    for b in "${KUBE_BINS[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b" >>tools.go; done
    printf ')\n' >>tools.go
    go get "k8s.io/kubernetes@$KUBERNETES_VERSION" >/dev/null 2>&1 || go get "k8s.io/kubernetes@$KUBERNETES_VERSION"
    go mod tidy
  fi
  local pkgs=(); for b in "${KUBE_BINS[@]}"; do [[ -x "$BIN/$b" ]] || pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  [[ ${#pkgs[@]} -eq 0 ]] && return
  log "go build ${pkgs[*]##*/} (the longest step)"
  go build -p 2 -ldflags "$KUBE_LDFLAGS" -o "$BIN/" "${pkgs[@]}"
}

build_etcd() {
  [[ -x "$BIN/etcd" ]] && return
  local mod="$DIR/src/etcd"; mkdir -p "$mod"; cd "$mod"
  log "etcd $ETCD_VERSION (go.etcd.io/etcd/server/v3/etcdmain)"
  if [[ ! -f go.sum ]]; then
    rm -f go.mod; go mod init gpupoc.local/etcd >/dev/null 2>&1
    printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >main.go
    go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"; go mod tidy
  fi
  go build -p 2 -ldflags "-s -w" -o "$BIN/etcd" .
}

go_install() {  # name module/cmd version ldflags
  [[ -x "$BIN/$1" ]] && return
  log "$1 $3 (go install $2@$3)"
  GOBIN="$BIN" go install -ldflags "$4" "$2@$3"
}

build_kubernetes
build_etcd
go_install kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION" "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"
[[ $WITH_KUEUE == 1 ]] && go_install kueue sigs.k8s.io/kueue/cmd/kueue "$KUEUE_VERSION" \
  "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION"
cp "$HERE/pins.env" "$DIR/pins.env"
log "done: $(ls "$BIN" | tr '\n' ' ')"
echo "$BIN"
