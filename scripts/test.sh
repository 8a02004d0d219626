#!/usr/bin/env bash
# Installs what is needed and runs every test: lint and types, unit tests, integration tests against the
# real local control plane.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec npm test
