#!/usr/bin/env bash
# Installs what Napwake's sandbox and tests need on a fresh Debian machine: Debian packages, npm packages
# (Node.js 24 among them) and the control-plane binaries built from the Go module proxy (cached outside
# the repo, so only the first run is slow). Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

need_packages=()
command -v prometheus >/dev/null || need_packages+=(prometheus)
command -v promtool >/dev/null || need_packages+=(prometheus)
command -v unshare >/dev/null || need_packages+=(util-linux)
command -v ip >/dev/null || need_packages+=(iproute2)
command -v curl >/dev/null || need_packages+=(curl)
# Go reaches its module proxy over HTTPS with the system's certificates (npm brings its own).
[[ -s /etc/ssl/certs/ca-certificates.crt ]] || need_packages+=(ca-certificates)
if ((${#need_packages[@]})); then
  mapfile -t need_packages < <(printf '%s\n' "${need_packages[@]}" | sort -u)
  step "installing Debian packages: ${need_packages[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    # No sudo, or one that would ask for a password with nobody at a terminal to type it.
    if ! command -v sudo >/dev/null || { ! sudo -n true 2>/dev/null && [[ ! -t 0 ]]; }; then
      echo "installing Debian packages needs root; run as root: apt-get install ${need_packages[*]}" >&2
      exit 1
    fi
    sudo_cmd=(sudo)
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${need_packages[@]}" >/dev/null
  # The package starts a Prometheus of its own where systemd runs; the harness runs its own.
  command -v systemctl >/dev/null && "${sudo_cmd[@]}" systemctl disable --now prometheus >/dev/null 2>&1 || true
fi

go_version=$(go env GOVERSION 2>/dev/null || echo none)
case "$go_version" in
  go1.2[6-9]* | go1.[3-9]*) ;;
  *) echo "Go 1.26 or newer is needed to build the control plane from the Go module proxy (found: $go_version); install it and run again" >&2; exit 1 ;;
esac

if [[ ! -x node_modules/.bin/node ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  step "installing npm packages (Node.js 24 among them)"
  npm ci --no-audit --no-fund
fi

step "building the control plane binaries (cached; a cold build takes about 10 minutes on 2 cores)"
bash test/cluster/build-binaries.sh >/dev/null
