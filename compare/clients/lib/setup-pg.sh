#!/bin/bash
# Build and start one PostgreSQL 15 cluster set up for every suite of the kit (the logic of the shared
# setup-pg.sh: roles, databases, pg_hba, ssl). Run as root; the server runs as OS user postgres and
# listens on 127.0.0.1 only.   usage: setup-pg.sh DATADIR PORT
set -e
D=$1; PORT=$2; SOCK=$(dirname "$D")/sock
BIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
if [ -f "$D/PG_VERSION" ]; then echo "cluster exists: $D"; exit 0; fi
mkdir -p "$D" "$SOCK"; chown -R postgres: "$(dirname "$D")"
runuser -u postgres -- $BIN/initdb -D "$D" -U postgres --auth-local=trust --auth-host=md5 -E UTF8 --locale=C.UTF-8 >/dev/null
( cd "$D" && runuser -u postgres -- openssl req -new -x509 -nodes -days 365 -text -subj "/CN=localhost" \
    -keyout server.key -out server.crt 2>/dev/null && chmod 600 server.key )
cat >> "$D/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$SOCK'
ssl = on                          # postgres.js + node-postgres SSL tests
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
wal_level = logical               # postgres.js subscribe() tests
max_prepared_transactions = 100   # postgres.js / psycopg TPC tests
max_connections = 300
CONF
cat > "$D/pg_hba.conf" <<'HBA'
local   all               all                                    trust
host    ci_db_test        all                     127.0.0.1/32   md5
host    postgres_js_test  postgres_js_test        127.0.0.1/32   trust
host    postgres_js_test  postgres_js_test_md5    127.0.0.1/32   md5
host    postgres_js_test  postgres_js_test_scram  127.0.0.1/32   scram-sha-256
host    all               postgres                127.0.0.1/32   trust
host    all               all                     127.0.0.1/32   md5
HBA
chown postgres: "$D/pg_hba.conf" "$D/postgresql.conf"
runuser -u postgres -- $BIN/pg_ctl -D "$D" -l "$(dirname "$D")/server.log" -w start >/dev/null
psql -h "$SOCK" -p "$PORT" -U postgres -q -v ON_ERROR_STOP=1 <<'SQL'
ALTER USER postgres PASSWORD 'postgres';
CREATE DATABASE ci_db_test;                       -- node-postgres
SET password_encryption = 'scram-sha-256';
CREATE ROLE scram_test LOGIN PASSWORD 'test4scram';                -- node-postgres sasl tests
CREATE ROLE scram_unicode_test LOGIN PASSWORD U&'IX-\2168';
CREATE ROLE psycopg_su SUPERUSER LOGIN PASSWORD 'psycopg';         -- psycopg (password-auth user)
CREATE DATABASE psycopg_test;
SQL
# a copy of the server certificate the proxy can offer to clients ([tls] cert/key)
cp "$D/server.crt" "$D/server.key" "$(dirname "$D")/"
echo "PG up on 127.0.0.1:$PORT ($D)"
