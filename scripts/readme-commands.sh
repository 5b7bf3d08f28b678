#!/usr/bin/env bash
# Runs the README's two commands the way a new user would, in a fresh clone of this checkout's
# HEAD: the demo ("Try it"), with the psql lines the README gives, stopped by Ctrl-C (it must exit
# 0, print no error and leave no server or folder behind); the README's explain example, which
# must work right after the demo with nothing else built; then the tests ("Run the tests").
# The commands are read from README.md itself, so the check follows the README.
#
#   bash scripts/readme-commands.sh           both commands
#   bash scripts/readme-commands.sh demo      the demo and the explain example only
#   bash scripts/readme-commands.sh --print   print the commands read from README.md
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

# The first ```sh block after the heading $1 (its lines), or after its n-th block with $2 = n.
readme_block() {
  awk -v heading="$1" -v wanted="${2:-1}" '
    $0 == heading { inside = 1; seen = 0; next }
    inside && /^## / { exit }
    inside && /^```sh$/ { seen++; if (seen == wanted) { printing = 1 }; next }
    printing && /^```$/ { exit }
    printing { print }
  ' "$repo/README.md"
}

demo_command="$(readme_block "## Try it")"
test_command="$(readme_block "## Run the tests")"
# The README's psql session: its connection line, then the statements it shows at "shop=#".
psql_block="$(readme_block "## Try it" 2)"
psql_connect="$(printf '%s\n' "$psql_block" | grep -m1 '^psql ')"
# The explain example of "Run the proxy" (its second block; the first builds and serves).
explain_command="$(readme_block "## Run the proxy" 2)"
mapfile -t statements < <(printf '%s\n' "$psql_block" | sed -n 's/^shop=# \(.*;\).*$/\1/p')

if [[ "${1:-}" == "--print" ]]; then
  printf 'demo: %s\ntests: %s\npsql: %s\n' "$demo_command" "$test_command" "$psql_connect"
  printf 'explain: %s\n' "$(printf '%s' "$explain_command" | tr -s ' \\\n' ' ')"
  printf 'statement: %s\n' "${statements[@]}"
  exit 0
fi
if [[ -z "$demo_command" || -z "$test_command" || -z "$psql_connect" || ${#statements[@]} -eq 0 ||
  "$explain_command" != *"geoproxy explain"* ]]; then
  echo "readme-commands: README.md no longer has the demo, psql, explain and test blocks this check reads" >&2
  exit 1
fi
if [[ -n "$(git -C "$repo" status --porcelain)" ]]; then
  echo "readme-commands: uncommitted changes are not in the clone; it checks HEAD $(git -C "$repo" rev-parse --short HEAD)"
fi

work="$(mktemp -d)"
demo_pid=""
cleanup() {
  if [[ -n "$demo_pid" ]] && kill -0 "$demo_pid" 2>/dev/null; then
    kill -INT -- "-$demo_pid" 2>/dev/null || true
    sleep 5
    kill -KILL -- "-$demo_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
clone="$work/geoproxy"
git clone --quiet --no-checkout "$repo" "$clone"
git -C "$clone" checkout --quiet --detach "$(git -C "$repo" rev-parse HEAD)"
# The servers the test launcher starts run as postgres when this runs as root: let them in.
chmod 755 "$work"
echo "readme-commands: fresh clone of $(git -C "$clone" rev-parse --short HEAD) in $clone"

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

run_demo() {
  for port in 5433 5434 5435 6432; do
    if port_open "$port"; then
      echo "readme-commands: port $port is in use; the demo needs it free" >&2
      return 1
    fi
  done
  echo "readme-commands: $demo_command"
  # Its own process group, as a terminal gives a foreground command; Ctrl-C goes to the group.
  (cd "$clone" && exec setsid bash -c "$demo_command" >"$work/demo.out" 2>"$work/demo.err") &
  demo_pid=$!
  local waited=0
  until grep -q "Ctrl-C stops" "$work/demo.out" 2>/dev/null; do
    if ! kill -0 "$demo_pid" 2>/dev/null || ((waited >= 600)); then
      echo "readme-commands: the demo did not get ready:" >&2
      cat "$work/demo.out" "$work/demo.err" >&2
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  local statement
  for statement in "${statements[@]}"; do
    echo "readme-commands: $psql_connect -c \"$statement\""
    if ! PGCONNECT_TIMEOUT=10 bash -c "$psql_connect -X -v ON_ERROR_STOP=1 -c \"\$0\"" "$statement" \
      >"$work/psql.out" 2>&1; then
      cat "$work/psql.out" >&2
      return 1
    fi
  done
  kill -INT -- "-$demo_pid"
  local code=0
  wait "$demo_pid" || code=$?
  demo_pid=""
  if ((code != 0)); then
    echo "readme-commands: Ctrl-C ended the demo with exit $code:" >&2
    cat "$work/demo.out" "$work/demo.err" >&2
    return 1
  fi
  if grep -Eq "ELIFECYCLE|ERR_PNPM|Error" "$work/demo.err"; then
    echo "readme-commands: the demo printed an error on Ctrl-C:" >&2
    cat "$work/demo.err" >&2
    return 1
  fi
  local folders
  folders="$(sed -n 's/^.*data folders: //p' "$work/demo.out")"
  for folder in $folders; do
    if [[ -e "$folder" ]]; then
      echo "readme-commands: $folder is left after Ctrl-C" >&2
      return 1
    fi
  done
  for port in 5433 5434 5435 6432; do
    if port_open "$port"; then
      echo "readme-commands: port $port still answers after Ctrl-C" >&2
      return 1
    fi
  done
  echo "readme-commands: the demo answered psql and stopped cleanly (exit 0)"
}

run_explain() {
  echo "readme-commands: $explain_command"
  if ! (cd "$clone" && bash -c "$explain_command") >"$work/explain.out" 2>&1; then
    echo "readme-commands: the README's explain example failed after the demo:" >&2
    cat "$work/explain.out" >&2
    return 1
  fi
  if ! grep -q "us-east" "$work/explain.out"; then
    echo "readme-commands: the README's explain example did not name bob's region, us-east:" >&2
    cat "$work/explain.out" >&2
    return 1
  fi
  echo "readme-commands: the explain example answered right after the demo"
}

run_demo
run_explain
if [[ "${1:-}" == "demo" ]]; then exit 0; fi
echo "readme-commands: $test_command"
(cd "$clone" && bash -c "$test_command")
echo "readme-commands: the README's commands ran as written"
