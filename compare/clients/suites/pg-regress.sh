# PostgreSQL's core regression schedule (src/test/regress/parallel_schedule) run by the installed
# pg_regress against HOST:PORT, installcheck style, as OS user postgres (README.md: the sources come
# from Debian's postgresql-15 source package, with regress.so/refint.so/autoinc.so built).
PGREG_SRC=${PGREG_SRC:-$CLIENTS_DIR/pg-src/src/src/test/regress}
PG_REGRESS=${PG_REGRESS:-/usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress}
WAY_PORT=${WAY_PORT:-16432}
suite_check() {
  [ -f "$PGREG_SRC/parallel_schedule" ] && [ -f "$PGREG_SRC/regress.so" ] || {
    echo "no regression sources with regress.so at $PGREG_SRC (README.md)"; return 1; }
  [ -x "$PG_REGRESS" ] || { echo "no pg_regress at $PG_REGRESS"; return 1; }
}
# In transaction pooling `temp`'s PREPARE TRANSACTION 'twophase_search' succeeds (the pooled backend
# already has a temporary namespace) and stays prepared, holding database regression: the next run
# could not drop it, and a logical slot's creation (postgres.js `subscribe`) waits for it. Rolled
# back before and after each run (it is only ever the suite's own).
rollback_leftover() {
  "$PG_BINDIR/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -Atqc \
    "SELECT 1 FROM pg_prepared_xacts WHERE gid = 'twophase_search' AND database = 'regression'" 2>/dev/null | grep -q 1 &&
    "$PG_BINDIR/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d regression -qc "ROLLBACK PREPARED 'twophase_search'" &&
    echo "rolled back the prepared transaction twophase_search left in regression"
  return 0
}
run_suite() { # way port out
  local out=$3/regress sched=$PGREG_SRC/parallel_schedule port=$2 extra=
  mkdir -p "$out"; chown -R postgres: "$3"
  rollback_leftover
  if [ "${PGREG_SETUP:-}" = direct ] && [ "$1" != direct ]; then
    # Diagnosis variant: test_setup (which loads its tables with server-side COPY FROM a file) runs
    # directly against PostgreSQL and creates the `regression` database; the rest of the schedule then
    # runs through the way under test with --use-existing, so COPY's refusal does not hide other causes.
    ( cd "$out" && runuser -u postgres -- env PGSSLMODE=disable "$PG_REGRESS" --host=127.0.0.1 --port="$PG_PORT" \
        --user=postgres --inputdir="$PGREG_SRC" --outputdir="$out" --dlpath="$PGREG_SRC" --bindir="$PG_BINDIR" test_setup ) \
      || { echo "test_setup failed directly (a prepared transaction left in regression? see pg_prepared_xacts)"; return 1; }
    grep -v '^test: test_setup$' "$PGREG_SRC/parallel_schedule" > "$3/schedule"; chown postgres: "$3/schedule"
    sched=$3/schedule; extra=--use-existing
  fi
  ( cd "$out" && runuser -u postgres -- env PGSSLMODE=${PGSSLMODE:-disable} "$PG_REGRESS" \
      --host=127.0.0.1 --port="$port" --user=postgres $extra \
      --inputdir="$PGREG_SRC" --outputdir="$out" --dlpath="$PGREG_SRC" --bindir="$PG_BINDIR" \
      --max-concurrent-tests=20 --schedule="$sched" ${PGREG_ARGS:-} ) 2>&1 | tee "$3/pg_regress.out"
  # one row per test; the error is the test's first differing lines from regression.diffs
  node "$KIT/suites/pg-regress/parse.mjs" "$3/pg_regress.out" "$out" > "$3/results.jsonl" 2>/dev/null || true
  rollback_leftover
}
