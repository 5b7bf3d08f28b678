# psycopg 3 (psycopg/psycopg at tag 3.1.7) tests/ run by Debian's pytest against Debian's python3-psycopg
# 3.1.7, fast subset as in client-suites.md §4. pytest writes junit XML; suites/psycopg/junit-to-jsonl.py
# turns it into results.jsonl. The DSN's port is never 5432: libpq leaves the default port out of
# info.get_parameters(), which test_get_params would see as a failure.
PSYCOPG_DIR=${PSYCOPG_DIR:-$CLIENTS_DIR/psycopg}
PSYCOPG_PYTHON=${PSYCOPG_PYTHON:-/usr/bin/python3}   # Debian's, where python3-psycopg is installed
PSYCOPG_MARKERS=${PSYCOPG_MARKERS:-not slow and not mypy and not proxy and not timing}
PSYCOPG_TEST_TIMEOUT=${PSYCOPG_TEST_TIMEOUT:-60}     # seconds per test (pytest-timeout)
PSYCOPG_RUN_TIMEOUT=${PSYCOPG_RUN_TIMEOUT:-2400}     # seconds for the whole run
WAY_PORT=${WAY_PORT:-16432}
suite_check() {
  [ -f "$PSYCOPG_DIR/tests/conftest.py" ] || { echo "no psycopg checkout at $PSYCOPG_DIR (README.md)"; return 1; }
  "$PSYCOPG_PYTHON" -c 'import psycopg, psycopg_pool, pytest, pytest_asyncio, anyio' 2>/dev/null || {
    echo "$PSYCOPG_PYTHON lacks psycopg, psycopg_pool, pytest, pytest-asyncio or anyio (README.md)"; return 1; }
  [ "$WAY_PORT" != 5432 ] || { echo "WAY_PORT=5432 breaks test_get_params; choose another port"; return 1; }
}
run_suite() { # way port out
  local out=$3 timeout_opts=()
  # pytest-timeout (python3-pytest-timeout) fails a hanging test and goes on; without it only the
  # whole-run limit below applies.
  if "$PSYCOPG_PYTHON" -c 'import pytest_timeout' 2>/dev/null; then
    timeout_opts=(--timeout="$PSYCOPG_TEST_TIMEOUT" --timeout-method=signal)
  fi
  # The cache lives in the way's output folder: conftest marks a run as crashed in the cache at start
  # and refuses to run after a run that was killed, so a fresh one each time.
  # SIGINT at the run's limit lets pytest stop and still write the junit XML of the tests it ran.
  ( cd "$PSYCOPG_DIR" && \
    PSYCOPG_TEST_DSN="host=127.0.0.1 port=$2 dbname=psycopg_test user=psycopg_su password=psycopg" \
    timeout -s INT -k 60 "$PSYCOPG_RUN_TIMEOUT" "$PSYCOPG_PYTHON" -m pytest -q -o cache_dir="$out/pytest-cache" \
      -p no:randomly -rfE --tb=short -m "$PSYCOPG_MARKERS" \
      "${timeout_opts[@]}" --junitxml="$out/junit.xml" ${PSYCOPG_ARGS:-} )
  local rc=$?; echo "pytest exit $rc"
  # exit 124 (timeout's), 137 (killed) or 2 (pytest interrupted): the rows written so far, and a failure
  "$PSYCOPG_PYTHON" "$KIT/suites/psycopg/junit-to-jsonl.py" "$out/junit.xml" "$rc" "$PSYCOPG_RUN_TIMEOUT" > "$out/results.jsonl"
}
