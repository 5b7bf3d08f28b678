// Repro: a session whose backend is terminated while its statement runs (node-postgres
// query-error-handling-prepared-statement-tests.js, connection-pool/error-tests.js).
//   node terminate-running-backend.mjs NODE_POSTGRES_DIR PORT
// Session A runs pg_sleep(5); session B terminates the backend running it. PostgreSQL sends A a
// FATAL 57P01 and closes A's connection; the script reports what A saw and whether its socket closed.
import { createRequire } from "node:module";

const [npDir, port] = process.argv.slice(2);
const pg = createRequire(`${npDir}/packages/pg/`)("./");
const cfg = {
  host: "127.0.0.1",
  port: Number(port),
  user: "postgres",
  password: "postgres",
  database: "ci_db_test",
};
const a = new pg.Client(cfg),
  b = new pg.Client(cfg);
await a.connect();
await b.connect();
const t0 = Date.now();
a.on("error", (e) => console.log(`A 'error' event after ${Date.now() - t0} ms: ${e.message}`));
a.on("end", () => console.log(`A connection ended after ${Date.now() - t0} ms`));
const pidSeenByA = (await a.query("select pg_backend_pid() as p")).rows[0].p;
const q = a.query("select pg_sleep(5) as slept").then(
  () => console.log("A query: success (not killed)"),
  (e) => console.log(`A query error after ${Date.now() - t0} ms: ${e.code} ${e.message}`),
);
await new Promise((r) => setTimeout(r, 500));
const killed = await b.query(
  "select pid, pg_terminate_backend(pid) from pg_stat_activity where query = 'select pg_sleep(5) as slept'",
);
console.log(`pg_backend_pid() seen by A: ${pidSeenByA}; killed: ${JSON.stringify(killed.rows)}`);
await q;
await new Promise((r) => setTimeout(r, 2000));
console.log(
  `after 2 s: A still usable? ${await a.query("select 1").then(
    () => "yes",
    (e) => "no: " + e.message,
  )}`,
);
await b.end();
process.exit(0);
