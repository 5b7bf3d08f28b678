# PostgreSQL's isolation schedule (src/test/isolation/isolation_schedule, 115 specs of 15.18) run by
# pg_isolation_regress + isolationtester built in the sources of Debian's postgresql-15 (README.md)
# against HOST:PORT, installcheck style, as OS user postgres. Each spec opens several sessions at once
# and a control session that asks pg_isolation_test_session_is_blocked() about the sessions' backend
# PIDs (BackendKeyData), so it needs one backend per client session for the whole spec.
ISO_SRC=${ISO_SRC:-$CLIENTS_DIR/pg-src/src/src/test/isolation}
ISO_STEP_TIMEOUT=${ISO_STEP_TIMEOUT:-60}   # PGISOLATIONTIMEOUT: cancel a waiting step after this, give up after twice
ISO_SPEC_TIMEOUT=${ISO_SPEC_TIMEOUT:-300}  # seconds per spec (suites/isolation/isolationtester kills it)
ISO_RUN_TIMEOUT=${ISO_RUN_TIMEOUT:-3600}   # seconds for the whole schedule
WAY_PORT=${WAY_PORT:-16432}
suite_check() {
  [ -f "$ISO_SRC/isolation_schedule" ] && [ -x "$ISO_SRC/pg_isolation_regress" ] && [ -x "$ISO_SRC/isolationtester" ] || {
    echo "no isolation sources with pg_isolation_regress and isolationtester built at $ISO_SRC (README.md)"; return 1; }
}
run_suite() { # way port out
  local out=$3/isolation bin=$3/bin
  mkdir -p "$out" "$bin"
  # pg_isolation_regress runs the isolationtester found beside its own (resolved) path; a copy of it
  # next to suites/isolation/isolationtester puts a per-spec limit around the real one.
  cp "$ISO_SRC/pg_isolation_regress" "$bin/" && cp "$KIT/suites/isolation/isolationtester" "$bin/" && chmod 755 "$bin/isolationtester"
  : > "$3/timed-out"; chown -R postgres: "$3"
  ( cd "$out" && runuser -u postgres -- env PGSSLMODE=${PGSSLMODE:-disable} PGISOLATIONTIMEOUT="$ISO_STEP_TIMEOUT" \
      ISO_TESTER="$ISO_SRC/isolationtester" ISO_SPEC_TIMEOUT="$ISO_SPEC_TIMEOUT" ISO_TIMED_OUT="$3/timed-out" \
      timeout -k 30 "$ISO_RUN_TIMEOUT" "$bin/pg_isolation_regress" --host=127.0.0.1 --port="$2" --user=postgres \
      --inputdir="$ISO_SRC" --outputdir="$out" --bindir="$PG_BINDIR" \
      --schedule="$ISO_SRC/isolation_schedule" ${ISO_ARGS:-} ) 2>&1 | tee "$3/pg_isolation_regress.out"
  local rc=${PIPESTATUS[0]} stopped=
  echo "pg_isolation_regress exit $rc"
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && stopped=$ISO_SRC/isolation_schedule   # the run hit its limit
  # one row per spec; the error is the spec's first differing lines from regression.diffs, or the limit hit
  node "$KIT/suites/isolation/parse.mjs" "$3/pg_isolation_regress.out" "$out" "$3/timed-out" "$ISO_SPEC_TIMEOUT" \
    $stopped > "$3/results.jsonl"
}
