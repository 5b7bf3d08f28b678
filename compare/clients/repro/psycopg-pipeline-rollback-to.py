# Repro: psycopg tests/test_pipeline.py::test_errors_raised_on_nested_transaction_exit. In libpq
# pipeline mode, after an error inside a savepoint, psycopg sends ROLLBACK TO SAVEPOINT and RELEASE
# SAVEPOINT in one batch (one Sync). PostgreSQL runs ROLLBACK TO, which ends the failed state, then
# RELEASE; a proxy that checks "in a failed block?" when the RELEASE arrives, before the ROLLBACK TO
# has run, refuses it with 25P02. The second part does the same with a whole ROLLBACK and a SELECT.
#   /usr/bin/python3 psycopg-pipeline-rollback-to.py PORT
# Direct: COMMAND_OK / TUPLES_OK for every statement but the SELECTs from the missing table (42P01).
import sys

from psycopg import pq

port = sys.argv[1]
c = pq.PGconn.connect(
    f"host=127.0.0.1 port={port} dbname=psycopg_test user=psycopg_su password=psycopg sslmode=disable".encode()
)
c.enter_pipeline_mode()


def batch(*sqls):
    for s in sqls:
        c.send_query_params(s.encode(), None)
    c.pipeline_sync()
    out = []
    while True:
        r = c.get_result()
        if r is None:
            continue
        st = pq.ExecStatus(r.status).name
        if st == "PIPELINE_SYNC":
            break
        if st == "FATAL_ERROR":
            st = "ERROR " + r.error_field(pq.DiagnosticField.SQLSTATE).decode()
        out.append(st)
    print(f"{' ; '.join(sqls):28} -> {', '.join(out)}")


batch("BEGIN", "SAVEPOINT s")
batch("SELECT 1 FROM nosuchtable")
batch("ROLLBACK TO s", "RELEASE s")
batch("SELECT 1")
batch("ROLLBACK")
print("-- a whole ROLLBACK and a SELECT in one batch")
batch("BEGIN")
batch("SELECT 1 FROM nosuchtable")
batch("ROLLBACK", "SELECT 1")
batch("SELECT 2")
