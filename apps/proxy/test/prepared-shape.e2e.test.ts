import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";

// A client decodes the rows of its prepared statement by the columns it was told when it
// described it. After the table changes shape, one server fails the statement with "cached plan
// must not change result type" (and postgres.js prepares it again); a pooled connection that has
// no copy of the statement yet must not answer with the new columns instead.
let region: OneRegion;
let admin: pg.Client;

beforeAll(async () => {
  region = await startOneRegion();
  admin = new pg.Client({ ...region.direct, user: "postgres", database: "postgres" });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await region?.close();
});

/** Closes the proxy's idle pooled connections: the next statement gets a fresh one, with no copies. */
async function freshBackends(): Promise<void> {
  const { rows } = await admin.query(
    "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'idle' AND backend_type = 'client backend'",
  );
  const pids = rows.map((row) => row.pid as number);
  await admin.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [pids]);
  // Once the backends are gone, the proxy's pool sees their sockets close and drops them.
  for (let i = 0; i < 100; i++) {
    const left = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)", [
      pids,
    ]);
    if (left.rows[0].n === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 200));
}

async function reshape(port: number, table: string, viaFreshBackend: boolean): Promise<unknown[]> {
  const sql = postgres({
    host: "127.0.0.1",
    port,
    user: "postgres",
    database: "postgres",
    max: 1,
    onnotice: () => {},
  });
  try {
    await sql.unsafe(`CREATE TABLE ${table} (a int, b bool)`);
    await sql.unsafe(`INSERT INTO ${table} VALUES (1, true)`);
    // A tagged query: postgres.js prepares and describes it once, then only binds and executes it.
    const before = await sql`SELECT * FROM ${sql(table)}`;
    await admin.query(`DROP TABLE ${table}`);
    await admin.query(`CREATE TABLE ${table} (x text, y text, z text)`);
    await admin.query(`INSERT INTO ${table} VALUES ('p', 'q', 'r')`);
    if (viaFreshBackend) await freshBackends();
    const after = await sql`SELECT * FROM ${sql(table)}`;
    return [[...before], [...after]];
  } finally {
    await admin.query(`DROP TABLE IF EXISTS ${table}`);
    await sql.end();
  }
}

describe("a prepared statement whose table changed shape", () => {
  it("is answered as one server answers it when its next Bind lands on a fresh pooled connection", async () => {
    const direct = await reshape(region.direct.port, "shape_direct", false);
    expect(direct).toEqual([[{ a: 1, b: true }], [{ x: "p", y: "q", z: "r" }]]);
    expect(await reshape(region.proxy.port, "shape_proxy", true)).toEqual(direct);
  });

  it("fails its Bind with 0A000 from RevalidateCachedQuery, as PostgreSQL does", async () => {
    const client = new pg.Client({
      host: "127.0.0.1",
      port: region.proxy.port,
      user: "postgres",
      database: "postgres",
    });
    await client.connect();
    try {
      await client.query("CREATE TABLE shape_pg (a int, b bool)");
      await client.query({ name: "shape_q", text: "SELECT * FROM shape_pg", values: [] });
      await admin.query("DROP TABLE shape_pg");
      await admin.query("CREATE TABLE shape_pg (x text)");
      await freshBackends();
      // node-postgres does not describe a named statement again: it decodes by the first answer.
      const error = (await client
        .query({ name: "shape_q", text: "SELECT * FROM shape_pg", values: [] })
        .catch((e: unknown) => e)) as { code?: string; routine?: string; message?: string };
      expect([error.code, error.routine, error.message]).toEqual([
        "0A000",
        "RevalidateCachedQuery",
        "cached plan must not change result type",
      ]);
    } finally {
      await admin.query("DROP TABLE IF EXISTS shape_pg");
      await client.end();
    }
  });
});
