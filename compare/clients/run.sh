#!/bin/bash
# Run a client's own test suite directly against PostgreSQL, through a bare TCP pipe and through
# geoproxy in one-region mode, and print the counts side by side.
#   usage: bash compare/clients/run.sh <node-postgres|postgres-js|pg-regress|psycopg|isolation> [--ways direct,pipe,proxy]
# Run as root (the cluster runs as OS user postgres). Prerequisites and checkouts: README.md.
set -u
. "$(dirname "$0")/lib/common.sh"
SUITE=${1:?usage: run.sh <suite> [--ways direct,pipe,proxy]}; shift
WAYS=direct,pipe,proxy
while [ $# -gt 0 ]; do
  case "$1" in
    --ways) WAYS=$2; shift 2 ;;
    --ways=*) WAYS=${1#--ways=}; shift ;;
    *) break ;;
  esac
done
SUITE_SH="$KIT/suites/$SUITE.sh"
[ -f "$SUITE_SH" ] || { echo "unknown suite $SUITE (have: $(ls "$KIT/suites" | sed -n 's/\.sh$//p' | tr '\n' ' '))"; exit 2; }
. "$SUITE_SH"           # defines WAY_PORT and run_suite WAY PORT OUTDIR (writes OUTDIR/results.jsonl)
suite_check || exit 2
ensure_pg
trap stop_way EXIT
for way in ${WAYS//,/ }; do
  out="$RESULTS/$SUITE/$way"; rm -rf "$out"; mkdir -p "$out"
  port=$PG_PORT; [ "$way" = direct ] || port=$WAY_PORT
  start_way "$way" "$port" "$SUITE" "$out" || exit 1
  log "running $SUITE $way (port $port), output in $out"
  t0=$(date +%s)
  run_suite "$way" "$port" "$out" > "$out/suite.log" 2>&1
  echo $(( $(date +%s) - t0 )) > "$out/seconds"
  stop_way
  log "$SUITE $way done in $(cat "$out/seconds") s: $(node "$KIT/lib/compare.mjs" --count "$out/results.jsonl")"
done
node "$KIT/lib/compare.mjs" "$SUITE" "$RESULTS/$SUITE" ${WAYS//,/ }
