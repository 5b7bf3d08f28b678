# postgres.js (porsager/postgres) tests/index.js, with the kit's continuing harness (suites/postgres-js).
# Several tests hard-code localhost:5432 (and 5433 for a second server), so the pipe and the proxy
# listen on 5432 here; the direct run then fails those (port artefacts, as in client-suites.md).
PGJS_DIR=${PGJS_DIR:-$CLIENTS_DIR/postgres}
WAY_PORT=${WAY_PORT:-5432}
suite_check() {
  [ -f "$PGJS_DIR/tests/index.js" ] || { echo "no postgres.js checkout at $PGJS_DIR (README.md)"; return 1; }
}
run_suite() { # way port out
  : > "$3/results.jsonl"
  # PGPASSWORD: what postgres.js (and the bootstrap's psql) answer for a role given no password,
  # when asked. PostgreSQL trusts those roles and never asks; the proxy asks (lib/proxy-config.sh).
  cd "$PGJS_DIR" && PGHOST=127.0.0.1 PGPORT=$2 PGUSER=postgres PGPASSWORD=postgres PGSOCKET=$PG_SOCK PGJS_RESULTS="$3/results.jsonl" PGJS_UNCAUGHT="$3/uncaught.jsonl" \
    PATH="$PG_BINDIR:$PATH" timeout 900 node --import "$KIT/suites/postgres-js/register.mjs" tests/index.js
}
