#!/usr/bin/env bash
# Runs every check the project has: lint, build, type check and all tests
# (unit, property, fake-backend and end-to-end against real PostgreSQL).
# Installs pnpm and the dependencies first when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure-pnpm.sh

export NO_COLOR=1 CI="${CI:-1}"
pnpm install --frozen-lockfile
pnpm run lint
pnpm run build
pnpm run typecheck
pnpm run test
