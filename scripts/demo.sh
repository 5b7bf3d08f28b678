#!/usr/bin/env bash
# Starts three local PostgreSQL servers as regions, loads the example schema and data, and runs
# geoproxy in front of them on 127.0.0.1:6432 with examples/geoproxy.toml. Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure-pnpm.sh

pnpm install --frozen-lockfile
pnpm exec turbo run build --filter=@geo/proxy... --output-logs=errors-only
# The demo replaces this shell: Ctrl-C reaches it directly, with no package manager or launcher in
# between to print an error, exit non-zero, or end it before it removed what it made.
cd apps/proxy
exec node --import tsx scripts/demo.ts
