#!/bin/bash
# Per-file runner for node-postgres packages/pg/test/integration (as in docs/client-suites.md: every
# file as `node FILE postgres://`, not stopping at a failing file). Writes results.jsonl to $1.
OUT=$1; PRELOAD=$(cd "$(dirname "$0")" && pwd)/preload.cjs
cd "$NP_DIR/packages/pg" || exit 1
: > "$OUT/results.jsonl"
for f in $(find test/integration -name '*-tests.js' | sort); do
  ev="$OUT/events.tmp"; : > "$ev"
  out=$(NP_EVENTS=$ev NP_FILE=$f timeout 120 node -r "$PRELOAD" "$f" postgres:// 2>&1); rc=$?
  cat "$ev" >> "$OUT/results.jsonl"
  if [ $rc -ne 0 ]; then
    echo "=== FAIL rc=$rc $f"; echo "$out" | grep -v DeprecationWarning | tail -30
    # a file that failed outside any check (or was killed by `timeout`) counts as a failure of its own
    if ! grep -q '"status":"fail"' "$ev"; then
      node -e 'const [f,rc,t]=process.argv.slice(1);console.log(JSON.stringify({name:f+" :: (file)",status:"fail",error:"exit "+rc+": "+t}))' \
        "$f" "$rc" "$(echo "$out" | grep -v DeprecationWarning | tail -8)" >> "$OUT/results.jsonl"
    fi
  else
    node -e 'console.log(JSON.stringify({name:process.argv[1]+" :: (file)",status:"pass"}))' "$f" >> "$OUT/results.jsonl"
  fi
done
rm -f "$OUT/events.tmp"
