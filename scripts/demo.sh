#!/usr/bin/env bash
# Starts three local PostgreSQL servers as regions, loads the example schema and data, and runs
# geoproxy in front of them on 127.0.0.1:6432 with examples/geoproxy.toml. Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure-pnpm.sh

pnpm install --frozen-lockfile
exec pnpm --filter @geo/proxy run demo
