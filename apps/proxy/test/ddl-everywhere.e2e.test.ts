import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

// DDL that names no configured table (a function, an index dropped by name, a type, a grant)
// changes what every region's statements may use: it reaches every region in one commit.
let regions: RealRegions;
let client: pg.Client;

beforeAll(async () => {
  regions = await startRealRegions();
  client = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
});
afterAll(async () => {
  await client?.end().catch(() => undefined);
  await regions?.close();
});

const REGION_NAMES = ["eu-west", "us-east", "ap-south"] as const;

async function everywhere(sql: string): Promise<unknown[]> {
  return Promise.all(
    REGION_NAMES.map(async (region) => (await regions.direct[region].query(sql)).rows[0]?.n),
  );
}

describe("DDL that names no table, with three regions", () => {
  it("creates a function in every region, so a read across regions can call it, and drops it everywhere", async () => {
    await client.query(
      "CREATE FUNCTION geo_twice(x bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT x * 2'",
    );
    expect(await everywhere("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'geo_twice'")).toEqual([
      1, 1, 1,
    ]);
    const read = await client.query("SELECT sum(geo_twice(id))::int AS s FROM orders");
    const expected = await regions.reference.query("SELECT sum(id * 2)::int AS s FROM orders");
    expect(read.rows).toEqual(expected.rows);
    await client.query("DROP FUNCTION geo_twice(bigint)");
    expect(await everywhere("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'geo_twice'")).toEqual([
      0, 0, 0,
    ]);
  });

  it("drops an index by name in every region that has it", async () => {
    await client.query("CREATE INDEX geo_users_age_idx ON users (age)");
    expect(
      await everywhere("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'geo_users_age_idx'"),
    ).toEqual([1, 1, 1]);
    await client.query("DROP INDEX geo_users_age_idx");
    expect(
      await everywhere("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'geo_users_age_idx'"),
    ).toEqual([0, 0, 0]);
  });

  it("rolls the DDL back in every region with its block", async () => {
    await client.query("BEGIN");
    await client.query("CREATE TYPE geo_mood AS ENUM ('ok', 'meh')");
    await client.query("ROLLBACK");
    expect(await everywhere("SELECT count(*)::int AS n FROM pg_type WHERE typname = 'geo_mood'")).toEqual([
      0, 0, 0,
    ]);
    await client.query("CREATE TYPE geo_mood AS ENUM ('ok', 'meh')");
    expect(await everywhere("SELECT count(*)::int AS n FROM pg_type WHERE typname = 'geo_mood'")).toEqual([
      1, 1, 1,
    ]);
    await client.query("DROP TYPE geo_mood");
  });

  it("keeps a temporary object where the session is, and a role created once", async () => {
    await client.query("CREATE TEMP SEQUENCE geo_local_seq");
    expect((await client.query("SELECT nextval('geo_local_seq')::int AS n")).rows).toEqual([{ n: 1 }]);
    await client.query("CREATE ROLE geo_ddl_role");
    const roles = await everywhere("SELECT count(*)::int AS n FROM pg_roles WHERE rolname = 'geo_ddl_role'");
    // Each region is its own server here: the role exists where the session ran it, only there.
    expect(roles.filter((n) => n === 1)).toHaveLength(1);
    await client.query("DROP ROLE geo_ddl_role");
  });
});

describe("DDL that would move a configured table away from its configuration", () => {
  it("refuses renaming a configured table or moving it to another schema, and changes nothing", async () => {
    for (const sql of [
      "ALTER TABLE orders RENAME TO orders_old",
      "ALTER TABLE currencies SET SCHEMA pg_temp",
    ]) {
      const error = (await client.query(sql).catch((e: unknown) => e)) as { code?: string; hint?: string };
      expect({ sql, code: error.code }).toEqual({ sql, code: "0A000" });
      expect(error.hint).toContain("[[tables]] entry");
    }
    expect(await everywhere("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'orders'")).toEqual([
      1, 1, 1,
    ]);
  });

  it("refuses renaming, dropping or retyping a geo-partitioned table's key column, and allows other columns", async () => {
    for (const sql of [
      "ALTER TABLE orders RENAME COLUMN tenant_id TO t",
      "ALTER TABLE public.users RENAME tenant_id TO t",
      "ALTER TABLE orders DROP COLUMN tenant_id",
      "ALTER TABLE orders ALTER COLUMN tenant_id TYPE varchar(40)",
    ]) {
      const error = (await client.query(sql).catch((e: unknown) => e)) as { code?: string; message?: string };
      expect({ sql, code: error.code }).toEqual({ sql, code: "0A000" });
      expect(error.message).toContain("key column tenant_id");
    }
    await client.query("ALTER TABLE orders RENAME COLUMN status TO state");
    expect(
      await everywhere(
        "SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'state'",
      ),
    ).toEqual([1, 1, 1]);
    await client.query("ALTER TABLE orders RENAME COLUMN state TO status");
  });
});

describe("a relation created from rows of several regions", () => {
  it("refuses CREATE TABLE AS and CREATE MATERIALIZED VIEW over geo rows, and creates nothing anywhere", async () => {
    for (const [sql, command] of [
      ["CREATE TABLE order_copy AS SELECT * FROM orders", "CREATE TABLE AS"],
      [
        "CREATE MATERIALIZED VIEW order_copy AS SELECT tenant_id, count(*) FROM orders GROUP BY 1",
        "CREATE MATERIALIZED VIEW",
      ],
    ] as const) {
      const error = (await client.query(sql).catch((e: unknown) => e)) as { code?: string; message?: string };
      expect({ sql, code: error.code }).toEqual({ sql, code: "0A000" });
      expect(error.message).toContain(`${command} would create`);
    }
    expect(await everywhere("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'order_copy'")).toEqual([
      0, 0, 0,
    ]);
  });

  it("creates it where one key's rows are, and in each region when the hint says so", async () => {
    await client.query("CREATE TABLE alice_orders AS SELECT * FROM orders WHERE tenant_id = 'alice'");
    expect(
      await everywhere("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'alice_orders'"),
    ).toEqual([1, 0, 0]);
    await client.query("/* geo: region=us-east */ CREATE TABLE us_orders AS SELECT * FROM orders");
    const direct = await regions.direct["us-east"].query("SELECT count(*)::int AS n FROM us_orders");
    const orders = await regions.direct["us-east"].query("SELECT count(*)::int AS n FROM orders");
    expect(direct.rows).toEqual(orders.rows);
  });
});
