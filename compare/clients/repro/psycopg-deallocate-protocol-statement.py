# Repro: psycopg tests/test_prepared.py::test_evict_lru_deallocate. psycopg prepares statements with
# the extended protocol (Parse "_pg3_N") and, when its cache of prepared_max statements is full,
# drops the oldest with the SQL command "DEALLOCATE _pg3_N" (protocol-level and SQL-level prepared
# statements share one namespace in PostgreSQL). Sends that DEALLOCATE as a simple Query and with
# the extended protocol, then parses the name again.
#   /usr/bin/python3 psycopg-deallocate-protocol-statement.py PORT
# Direct: both DEALLOCATEs succeed and the name can be parsed again.
import sys

from psycopg import pq

port = sys.argv[1]
dsn = f"host=127.0.0.1 port={port} dbname=psycopg_test user=psycopg_su password=psycopg sslmode=disable"


def show(what, r):
    code = (r.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()
    print(f"  {what}: {pq.ExecStatus(r.status).name} {code} {r.error_message.decode().strip()}")


for how in ["simple Query", "extended protocol"]:
    print(how)
    c = pq.PGconn.connect(dsn.encode())
    show('Parse "_pg3_0"', c.prepare(b"_pg3_0", b"select 1"))
    sql = b"DEALLOCATE _pg3_0"
    show("DEALLOCATE _pg3_0", c.exec_(sql) if how == "simple Query" else c.exec_params(sql, None))
    show('Parse "_pg3_0" again', c.prepare(b"_pg3_0", b"select 2"))
    c.finish()
