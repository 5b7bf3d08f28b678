import pg from "pg";
import { startOracleWorld } from "./src/oracle-world.js";
const world = await startOracleWorld({ world: "grammar", logLevel: "error" });
try {
  for (const [name, ep] of [["reference", world.reference], ["proxy", world.proxy]] as const) {
    const c = new pg.Client({ host: ep.host, port: ep.port, user: ep.user, database: ep.database });
    c.on("error", (e) => console.log(name, "client error event:", e.message));
    await c.connect();
    try { await c.query({ text: "SELECT $1::text AS c FROM users u WHERE u.id = 'x'::text", values: ["a"] }); } catch (e) { console.log(name, "query 1 failed:", (e as Error).message); }
    await new Promise((r) => setTimeout(r, 200));
    try { const r = await c.query("SELECT 1 AS one"); console.log(name, "query 2:", r.rows); } catch (e) { console.log(name, "query 2 failed:", (e as Error).message); }
    await c.end().catch(() => {});
  }
} finally { await world.stop(); }
