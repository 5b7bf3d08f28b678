// Repro: a session's SET ROLE is replayed by the proxy on a pooled backend connection before the
// session's next statement; when the replay fails (the role was dropped meanwhile by another
// session), the client gets the replay's error but its statement still runs, as the proxy's own role.
// Directly, the statement fails (the dropped role has no privilege) and nothing is deleted.
//   node replay-failure-runs-statement.mjs NODE_POSTGRES_DIR PORT [PG_PORT]
// (the rows left are counted on a direct connection to PG_PORT, default 15432)
import { createRequire } from "node:module";

const [npDir, port, pgPort = "15432"] = process.argv.slice(2);
const pg = createRequire(`${npDir}/packages/pg/`)("./");
const cfg = {
  host: "127.0.0.1",
  port: Number(port),
  user: "postgres",
  password: "postgres",
  database: "ci_db_test",
};
const admin = new pg.Client(cfg),
  a = new pg.Client(cfg);
const direct = new pg.Client({ ...cfg, port: Number(pgPort) });
for (const c of [admin, a])
  c.on("error", (e) => console.log(`${c === a ? "A" : "admin"} connection error event: ${e.message}`));
await admin.connect();
await a.connect();
await direct.connect();
await admin.query(
  "DROP TABLE IF EXISTS kit_victim; DROP ROLE IF EXISTS kit_r; CREATE ROLE kit_r; CREATE TABLE kit_victim(a int); INSERT INTO kit_victim VALUES (1),(2),(3)",
);
await a.query("SET ROLE kit_r");
console.log("A current_user:", (await a.query("select current_user as u")).rows[0].u);
await admin.query("DROP ROLE kit_r"); // another session drops the role A has SET
const r = await a.query("DELETE FROM kit_victim").then(
  (x) => `ok, ${x.rowCount} rows deleted`,
  (e) => `error ${e.code}: ${e.message}`,
);
console.log("A: DELETE FROM kit_victim ->", r);
await new Promise((res) => setTimeout(res, 500));
console.log(
  "rows left in kit_victim (direct count):",
  (await direct.query("select count(*)::int as n from kit_victim")).rows[0].n,
);
await direct.query("DROP TABLE kit_victim");
process.exit(0);
