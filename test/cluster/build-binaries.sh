#!/usr/bin/env bash
# Builds the control-plane binaries from the Go module proxy into a cache outside the repo.
# Prints the directory holding the binaries on its last line. Idempotent: a finished build is reused
# until versions.env changes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

cache="${NAPWAKE_CACHE:-$HOME/.cache/napwake}"
# Keyed on versions.env only: bump BUILD_RECIPE there when this script changes what it produces.
stamp="$(sha256sum "$here/versions.env" | cut -c1-16)"
out="$cache/bin/$stamp"
work="$cache/build"
kubernetes_binaries=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
binaries=(etcd "${kubernetes_binaries[@]}" kwok metrics-server)

log() { printf '[build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# kwok ships no built-in stages or metrics: its YAML comes from the kwok module, copied beside the binaries.
kwok_files=(
  kustomize/stage/node/fast/node-initialize.yaml
  kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
  kustomize/stage/pod/fast/pod-ready.yaml
  kustomize/stage/pod/fast/pod-complete.yaml
  kustomize/stage/pod/fast/pod-delete.yaml
  kustomize/metrics/resource/metrics-resource.yaml
  kustomize/metrics/usage/usage-from-annotation.yaml
)

all_built() {
  local b
  for b in "${binaries[@]}"; do [[ -x "$out/$b" ]] || return 1; done
  [[ -s "$out/kwok-config.yaml" ]] && [[ -s "$out/keda-scaledobjects-crd.yaml" ]]
}

copy_kwok_config() {
  local src f
  src="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION"
  [[ -d "$src" ]] || (cd "$work" && go mod download "sigs.k8s.io/kwok@$KWOK_VERSION")
  for f in "${kwok_files[@]}"; do
    cat "$src/$f"
    printf '\n---\n'
  done >"$out/kwok-config.yaml.tmp"
  mv "$out/kwok-config.yaml.tmp" "$out/kwok-config.yaml"
}

# KEDA's ScaledObject CRD, as KEDA ships it, for tests that hold a ScaledObject at zero. Only the module's
# source is downloaded (in a scratch module, so no go.mod of ours changes); nothing of KEDA is built.
copy_keda_crd() {
  local src dir="$work/keda"
  src="$(go env GOMODCACHE)/github.com/kedacore/keda/v2@$KEDA_VERSION"
  if [[ ! -d "$src" ]]; then
    new_module "$dir" keda
    (cd "$dir" && go mod download "github.com/kedacore/keda/v2@$KEDA_VERSION")
  fi
  cat "$src/config/crd/bases/keda.sh_scaledobjects.yaml" >"$out/keda-scaledobjects-crd.yaml.tmp"
  mv "$out/keda-scaledobjects-crd.yaml.tmp" "$out/keda-scaledobjects-crd.yaml"
}

if all_built; then
  log "binaries up to date in $out"
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { log "go is not installed: install Go 1.26 or newer"; exit 1; }
mkdir -p "$out" "$work"
# One build at a time (the sandbox and the tests started together share $work): the second waits, then finds
# the binaries built, at the check above, as the script runs again under the lock, held by flock itself (-o), so
# no process the build leaves behind holds it.
if [[ -z "${NAPWAKE_BUILD_LOCKED:-}" ]]; then
  export NAPWAKE_BUILD_LOCKED=1
  lock="$cache/.build.lock"
  status=0
  flock -n -E 75 -o "$lock" bash "${BASH_SOURCE[0]}" "$@" || status=$?
  [[ $status -eq 75 ]] || exit "$status"
  log "another build is running; waiting for it"
  exec flock -o "$lock" bash "${BASH_SOURCE[0]}" "$@"
fi
export GOFLAGS="-buildvcs=false -trimpath" CGO_ENABLED=0
started=$SECONDS

# new_module DIR NAME: an empty build module whose go.mod we fill with `go get`.
new_module() {
  rm -rf "$1" && mkdir -p "$1"
  (cd "$1" && go mod init "napwake.dev/build/$2" >/dev/null 2>&1)
}

build_kubernetes() {
  local dir="$work/kubernetes" minor="${KUBERNETES_VERSION#v1.}"
  minor="${minor%%.*}"
  log "kubernetes $KUBERNETES_VERSION: resolving modules"
  new_module "$dir" kubernetes
  cd "$dir"
  go mod download "k8s.io/kubernetes@$KUBERNETES_VERSION"
  local src
  src="$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBERNETES_VERSION"
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local paths that do not
  # exist outside its repository; point each one at its published v0.<minor>.<patch> release instead.
  local staging_version="v0.${KUBERNETES_VERSION#v1.}"
  {
    echo
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    echo
    grep -E '^\s+k8s\.io/[a-z0-9-]+ => \./staging/' "$src/go.mod" |
      awk -v v="$staging_version" '{ printf "replace %s => %s %s\n", $1, $1, v }'
  } >>go.mod
  log "kubernetes: go mod tidy (downloads dependencies)"
  cat >tools.go <<GO
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  go mod tidy -e >/dev/null 2>&1 || go mod tidy
  local ldflags="-s -w"
  local key
  for key in "gitVersion=$KUBERNETES_VERSION" "gitMajor=1" "gitMinor=$minor" "gitTreeState=clean"; do
    ldflags+=" -X k8s.io/component-base/version.$key -X k8s.io/client-go/pkg/version.$key"
  done
  log "kubernetes: compiling kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (the long part)"
  # Built beside $out and moved in once all four are there: a build cut short leaves none of them in $out.
  local built="$work/kubernetes-out"
  rm -rf "$built" && mkdir -p "$built"
  go build -ldflags "$ldflags" -o "$built/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
  local b
  for b in "${kubernetes_binaries[@]}"; do mv "$built/$b" "$out/$b"; done
}

# build_tool NAME MODULE@VERSION PACKAGE
build_tool() {
  local name="$1" modver="$2" pkg="$3" dir="$work/$1"
  log "$name ${modver#*@}: resolving and compiling"
  new_module "$dir" "$name"
  cd "$dir"
  go get -tool "$pkg@${modver#*@}" >/dev/null 2>&1 || go get -tool "$pkg@${modver#*@}"
  go build -ldflags "-s -w" -o "$dir/$name" "$pkg"
  mv "$dir/$name" "$out/$name"
}

kubernetes_built() {
  local b
  for b in "${kubernetes_binaries[@]}"; do [[ -x "$out/$b" ]] || return 1; done
}
kubernetes_built || build_kubernetes
[[ -x "$out/etcd" ]] || build_tool etcd "go.etcd.io/etcd/server/v3@$ETCD_VERSION" go.etcd.io/etcd/server/v3
[[ -x "$out/kwok" ]] || build_tool kwok "sigs.k8s.io/kwok@$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok
[[ -x "$out/metrics-server" ]] ||
  build_tool metrics-server "sigs.k8s.io/metrics-server@$METRICS_SERVER_VERSION" sigs.k8s.io/metrics-server/cmd/metrics-server

[[ -s "$out/kwok-config.yaml" ]] || copy_kwok_config
[[ -s "$out/keda-scaledobjects-crd.yaml" ]] || copy_keda_crd
all_built || { log "a binary is missing from $out"; exit 1; }
log "all binaries built in $((SECONDS - started)) s into $out"
echo "$out"
