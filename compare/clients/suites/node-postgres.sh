# node-postgres (brianc/node-postgres) packages/pg integration tests, JS driver.
NP_DIR=${NP_DIR:-$CLIENTS_DIR/node-postgres}
WAY_PORT=${WAY_PORT:-16432}
suite_check() {
  [ -d "$NP_DIR/packages/pg/node_modules" ] || [ -d "$NP_DIR/node_modules/pg-protocol" ] || {
    echo "no node-postgres checkout with dependencies at $NP_DIR (README.md: Obtaining the suites)"; return 1; }
}
run_suite() { # way port out
  export NP_DIR PGHOST=127.0.0.1 PGPORT=$2 PGUSER=postgres PGPASSWORD=postgres PGDATABASE=ci_db_test \
    SCRAM_TEST_PGUSER=scram_test SCRAM_TEST_PGPASSWORD=test4scram \
    SCRAM_TEST_PGUSER_UNICODE=scram_unicode_test SCRAM_TEST_PGPASSWORD_UNICODE=$'IX-\u2168'
  bash "$KIT/suites/node-postgres/run-files.sh" "$3"
}
