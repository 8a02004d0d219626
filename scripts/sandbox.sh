#!/usr/bin/env bash
# Installs what is needed and starts the sandbox: the local control plane with a demo, in the background.
# Pass `down` to stop it, `status` to see how to reach it, `--help` for more; flags alone (`--api-port=...`) start
# it with them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${1:-}" in -h | --help | help) set -- --help ;; "" | -*) set -- up "$@" ;; esac
# Starting needs the packages and binaries; stopping and status need only what starting installed.
if [[ "$1" == up || ! -d node_modules ]]; then bash scripts/setup.sh; fi
exec npm run --silent sandbox -- "$@"
