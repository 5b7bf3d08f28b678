# Shared settings and helpers of the client-suites kit (sourced by run.sh).
KIT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$KIT/../.." && pwd)
CLIENTS_DIR=${CLIENTS_DIR:-/tmp/clients}          # checkouts of the suites, the cluster, results
PG_PORT=${PG_PORT:-15432}                         # PostgreSQL itself ("direct")
PG_DATA=${PG_DATA:-$CLIENTS_DIR/pg/data}
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
PG_SOCK=$(dirname "$PG_DATA")/sock
GEOPROXY_DIR=${GEOPROXY_DIR:-$REPO}               # a built geoproxy tree (apps/proxy/dist/cli.js)
RESULTS=${RESULTS:-$CLIENTS_DIR/results}
export PG_BINDIR

log() { echo "[clients-kit $(date +%T)] $*" >&2; }

ensure_pg() {
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    bash "$KIT/lib/setup-pg.sh" "$PG_DATA" "$PG_PORT"
  elif ! runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -l "$(dirname "$PG_DATA")/server.log" -w start >/dev/null
  fi
  log "PostgreSQL on 127.0.0.1:$PG_PORT"
}

wait_port() { # port seconds
  for _ in $(seq 1 $((${2:-20} * 10))); do
    (echo >/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1
  done
  return 1
}

port_free() { ! (echo >/dev/tcp/127.0.0.1/$1) 2>/dev/null; }

LISTENER_PID=
start_way() { # way port suite outdir
  local way=$1 port=$2 suite=$3 out=$4
  case "$way" in
    direct) return 0 ;;
    pipe)
      port_free "$port" || { log "port $port is busy"; return 1; }
      node "$KIT/lib/tcp-pipe.cjs" "$port" "$PG_PORT" > "$out/pipe.log" 2>&1 &
      LISTENER_PID=$! ;;
    proxy)
      port_free "$port" || { log "port $port is busy"; return 1; }
      [ -f "$GEOPROXY_DIR/apps/proxy/dist/cli.js" ] || { log "no $GEOPROXY_DIR/apps/proxy/dist/cli.js: run pnpm run build"; return 1; }
      bash "$KIT/lib/proxy-config.sh" "$suite" "$port" "$PG_PORT" "$(dirname "$PG_DATA")" > "$out/geoproxy.toml"
      node "$GEOPROXY_DIR/apps/proxy/dist/cli.js" serve --config "$out/geoproxy.toml" > "$out/proxy.log" 2>&1 &
      LISTENER_PID=$! ;;
  esac
  wait_port "$port" 30 || { log "$way did not start on $port"; tail -20 "$out/$way.log" "$out/proxy.log" 2>/dev/null; return 1; }
  log "$way on 127.0.0.1:$port -> $PG_PORT (pid $LISTENER_PID)"
}

stop_way() {
  if [ -n "$LISTENER_PID" ]; then
    kill "$LISTENER_PID" 2>/dev/null; wait "$LISTENER_PID" 2>/dev/null; LISTENER_PID=
  fi
}
