#!/usr/bin/env bash
# Installs what is needed and starts the sandbox: the local control plane with a demo, in the background.
# Pass `down` to stop it, `status` to see how to reach it; flags alone (`--api-port=...`) start it with them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ $# -eq 0 || "$1" == -* ]]; then set -- up "$@"; fi
bash scripts/setup.sh
exec npm run --silent sandbox -- "$@"
