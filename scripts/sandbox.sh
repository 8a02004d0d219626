#!/usr/bin/env bash
# Installs what is needed and starts the sandbox: the local control plane with a demo, in the background.
# Pass `down` to stop it, `status` to see how to reach it, `--help` for more; flags alone (`--api-port=...`) start
# it with them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The command is the first argument that is not a flag (flags may come before it); none means up.
command=""
takes_value=false
for arg in "$@"; do
  if $takes_value; then takes_value=false; continue; fi
  case "$arg" in
    --state | --api-port | --demo-port) takes_value=true ;;
    -h | --help) command=help && break ;;
    -*) ;;
    *) command="$arg" && break ;;
  esac
done
case "${1:-}" in -h | --help | help) set -- --help ;; *) [[ -n "$command" ]] || { command=up; set -- up "$@"; } ;; esac
# Starting needs the packages and binaries; stopping and status need only what starting installed.
if [[ "$command" == up || ! -d node_modules ]]; then bash scripts/setup.sh; fi
exec npm run --silent sandbox -- "$@"
