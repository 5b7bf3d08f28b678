#!/bin/bash
# Repro: a listener's open block does not hold the notification queue (isolation spec async-notify,
# permutation "llisten lbegin usage bignotify usage").   bash listen-begin-queue-usage.sh PORT
# Session A runs LISTEN c1 and BEGIN and stays in its block; session B sends 1000 notifications and
# reads pg_notification_queue_usage(). PostgreSQL keeps them queued while A's transaction is open
# (A reads them only when it goes idle): t. If the BEGIN never reached A's backend, that backend is
# idle, takes them at once, and the queue is empty again: f.
# (geoproxy at 308fd70, session pooling: f; with any statement after BEGIN in A: t, as direct.)
PORT=${1:?usage: listen-begin-queue-usage.sh PORT}
PSQL=${PG_BINDIR:-/usr/lib/postgresql/15/bin}/psql
export PGSSLMODE=disable PGUSER=postgres PGDATABASE=postgres
{ echo 'LISTEN c1;'; echo 'BEGIN;'; sleep 3; echo 'COMMIT;'; } |
  "$PSQL" -h 127.0.0.1 -p "$PORT" -qAt -o /dev/null &
sleep 1
"$PSQL" -h 127.0.0.1 -p "$PORT" -qAt -c "SELECT count(pg_notify('c1', s::text)) FROM generate_series(1, 1000) s" -o /dev/null
echo "queue in use while A's block is open: $("$PSQL" -h 127.0.0.1 -p "$PORT" -qAt -c 'SELECT pg_notification_queue_usage() > 0')"
wait
