import { type PgCluster, startCluster } from "@geo/testkit";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningProxy } from "../src/index.js";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { connectAs, connectDirect, MOVE_SCHEMA, startRegionsProxy } from "./support/move-regions.js";

const EXTRA = `
[auth]
method = "scram-sha-256"
lookup = false
users = [{ name = "ops", password = "ops-secret" }, { name = "app", password = "app-secret" }]
operators = ["ops"]

[txn]
decision_log = "table"

[directory_store]
hold_ms = 4000
lock_timeout_ms = 800
`;

let cluster: PgCluster;
let proxy: RunningProxy;
let direct: Record<RegionName, pg.Client>;
let ops: pg.Client;
let app: pg.Client;

function connect(user: "ops" | "app"): Promise<pg.Client> {
  return connectAs(proxy.port, user);
}

/** Rows of the key in each region: `region:users/orders`. */
async function spread(key: string): Promise<string[]> {
  const out: string[] = [];
  for (const region of REGIONS) {
    const result = await direct[region].query<{ u: number; o: number }>(
      "SELECT (SELECT count(*) FROM users WHERE tenant_id = $1)::int AS u, (SELECT count(*) FROM orders WHERE tenant_id = $1)::int AS o",
      [key],
    );
    const { u, o } = result.rows[0]!;
    if (u + o > 0) out.push(`${region}:${u}/${o}`);
  }
  return out;
}

async function entries(key: string): Promise<string[]> {
  const out: string[] = [];
  for (const region of REGIONS) {
    const result = await direct[region].query<{ region: string }>(
      "SELECT region FROM geoproxy_directory WHERE key = $1",
      [key],
    );
    out.push(`${region}:${result.rows[0]?.region ?? "-"}`);
  }
  return out;
}

async function seed(key: string, client: pg.Client = app): Promise<void> {
  await client.query(
    `INSERT INTO users (tenant_id, id, name) VALUES ('${key}', 1, 'a'), ('${key}', 2, 'b'), ('${key}', 3, 'c')`,
  );
  await client.query(
    `INSERT INTO orders (tenant_id, id, user_id, total) VALUES ${[1, 2, 3, 4, 5]
      .map((id) => `('${key}', ${id}, ${1 + (id % 3)}, 0)`)
      .join(", ")}`,
  );
}

async function preparedLeft(): Promise<number> {
  let count = 0;
  for (const region of REGIONS) {
    const result = await direct[region].query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_prepared_xacts",
    );
    count += result.rows[0]!.n;
  }
  return count;
}

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
  direct = await connectDirect(cluster);
  proxy = await startRegionsProxy(cluster, EXTRA, "relocate.toml");
  ops = await connect("ops");
  app = await connect("app");
});

afterAll(async () => {
  await ops?.end().catch(() => undefined);
  await app?.end().catch(() => undefined);
  await proxy?.close({ timeoutMs: 200 });
  await Promise.all(Object.values(direct).map((client) => client.end().catch(() => undefined)));
  await cluster?.stop();
});

describe("RELOCATE", () => {
  it("moves a key's users and orders under concurrent writes, losing and doubling no increment", async () => {
    await seed("mover");
    expect(await spread("mover")).toEqual(["eu-west:3/5"]);
    let running = true;
    let committed = 0;
    let refused = 0;
    const writers = await Promise.all([1, 2, 3, 4].map(() => connect("app")));
    const loops = writers.map(async (client, w) => {
      for (let i = 0; running; i++) {
        try {
          const id = 1 + ((w + i) % 5);
          // Half the writers use the extended protocol (the key bound as a parameter).
          const result =
            w % 2 === 0
              ? await client.query(
                  `UPDATE orders SET total = total + 1 WHERE tenant_id = 'mover' AND id = ${id}`,
                )
              : await client.query({
                  text: "UPDATE orders SET total = total + 1 WHERE tenant_id = $1 AND id = $2",
                  values: ["mover", id],
                });
          if (result.rowCount === 1) committed++;
        } catch (error) {
          if ((error as { code?: string }).code !== "40001") throw error;
          refused++;
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const answer = await ops.query("RELOCATE mover TO 'us-east'");
    await new Promise((resolve) => setTimeout(resolve, 300));
    running = false;
    await Promise.all(loops);
    await Promise.all(writers.map((client) => client.end()));

    expect(answer.rows).toEqual([
      { table: "orders", from: "eu-west", to: "us-east", rows: "5", state: "moved" },
      { table: "users", from: "eu-west", to: "us-east", rows: "3", state: "moved" },
    ]);
    expect(await spread("mover")).toEqual(["us-east:3/5"]);
    expect(await entries("mover")).toEqual(["eu-west:us-east", "us-east:us-east", "ap-south:us-east"]);
    const sum = await app.query("SELECT sum(total)::int AS total FROM orders WHERE tenant_id = 'mover'");
    expect(committed).toBeGreaterThan(0);
    expect(sum.rows[0].total).toBe(committed);
    expect(await preparedLeft()).toBe(0);
    console.log(`relocate under load: ${committed} increments committed, ${refused} refused with 40001`);
  });

  it("moves several keys named together and answers per table and source", async () => {
    await seed("pair-a");
    await seed("pair-b");
    const placed = () =>
      new Map(proxy.runtime.observability.placement().regions.map((region) => [region.id, region]));
    const before = placed();
    const movesBefore = proxy.runtime.observability.placement().movesDone;
    const answer = await ops.query("RELOCATE 'pair-a', 'pair-b' TO 'ap-south'");
    expect(answer.rows).toEqual([
      { table: "orders", from: "eu-west", to: "ap-south", rows: "10", state: "moved" },
      { table: "users", from: "eu-west", to: "ap-south", rows: "6", state: "moved" },
    ]);
    // The admin port's placement map follows: rows in and out, keys per region, moves done.
    const after = placed();
    expect(after.get("ap-south")!.rowsIn - before.get("ap-south")!.rowsIn).toBe(16);
    expect(after.get("eu-west")!.rowsOut - before.get("eu-west")!.rowsOut).toBe(16);
    expect(after.get("ap-south")!.keys - before.get("ap-south")!.keys).toBe(2);
    expect(after.get("eu-west")!.keys - before.get("eu-west")!.keys).toBe(-2);
    expect(proxy.runtime.observability.placement().movesDone).toBe(movesBefore + 1);
    expect(proxy.runtime.observability.placement().moves).toEqual([]);
    const read = await app.query(
      "SELECT count(*)::int AS n FROM orders WHERE tenant_id IN ('pair-a', 'pair-b')",
    );
    expect(read.rows[0].n).toBe(10);
  });

  it("lets only operators move keys", async () => {
    await expect(app.query("RELOCATE mover TO 'eu-west'")).rejects.toMatchObject({ code: "42501" });
    expect(await spread("mover")).toEqual(["us-east:3/5"]);
  });

  it("refuses a key with rows in two regions and changes nothing", async () => {
    await direct["us-east"].query("INSERT INTO users (tenant_id, id, name) VALUES ('split', 1, 'x')");
    await direct["ap-south"].query("INSERT INTO users (tenant_id, id, name) VALUES ('split', 1, 'y')");
    await expect(ops.query("RELOCATE split TO 'eu-west'")).rejects.toMatchObject({ code: "55000" });
    expect(await spread("split")).toEqual(["us-east:1/0", "ap-south:1/0"]);
    expect(await entries("split")).toEqual(["eu-west:-", "us-east:-", "ap-south:-"]);
    expect(await preparedLeft()).toBe(0);
  });

  it("refuses when a table outside the move has a foreign key onto one inside, and changes nothing", async () => {
    await seed("fk-key");
    const ddl =
      "CREATE TABLE reviews (tenant_id text, user_id bigint, FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id))";
    for (const region of REGIONS) await direct[region].query(ddl);
    try {
      await expect(ops.query("RELOCATE 'fk-key' TO 'us-east'")).rejects.toMatchObject({ code: "2BP01" });
      expect(await spread("fk-key")).toEqual(["eu-west:3/5"]);
      expect(await entries("fk-key")).toEqual(["eu-west:eu-west", "us-east:-", "ap-south:-"]);
    } finally {
      for (const region of REGIONS) await direct[region].query("DROP TABLE reviews");
    }
  });

  it("gives up cleanly when its locks are not granted within lock_timeout_ms", async () => {
    await seed("locked");
    const blocker = direct["eu-west"];
    await blocker.query("BEGIN");
    await blocker.query("UPDATE users SET name = name WHERE tenant_id = 'locked' AND id = 1");
    try {
      const started = Date.now();
      await expect(ops.query("RELOCATE locked TO 'ap-south'")).rejects.toMatchObject({ code: "55P03" });
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      await blocker.query("ROLLBACK");
    }
    expect(await spread("locked")).toEqual(["eu-west:3/5"]);
    expect(await entries("locked")).toEqual(["eu-west:eu-west", "us-east:-", "ap-south:-"]);
    expect(await preparedLeft()).toBe(0);
    // Once the writer is gone the same move goes through.
    const moved = await ops.query("RELOCATE locked TO 'ap-south'");
    expect(moved.rows.map((row) => row.state)).toEqual(["moved", "moved"]);
  });

  it("abandons a move whose counts disagree (rows read, inserted, deleted) and changes nothing", async () => {
    await seed("swallowed");
    // A trigger in the destination that drops orders rows: fewer inserted than read.
    await direct[
      "ap-south"
    ].query(`CREATE FUNCTION swallow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
      CREATE TRIGGER swallow BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION swallow();`);
    try {
      await expect(ops.query("RELOCATE swallowed TO 'ap-south'")).rejects.toMatchObject({ code: "XX001" });
    } finally {
      await direct["ap-south"].query("DROP TRIGGER swallow ON orders; DROP FUNCTION swallow()");
    }
    expect(await spread("swallowed")).toEqual(["eu-west:3/5"]);
    expect(await entries("swallowed")).toEqual(["eu-west:eu-west", "us-east:-", "ap-south:-"]);
    expect(await preparedLeft()).toBe(0);
  });

  it("holds a statement for a moving key until the move ends, and refuses one inside a transaction with work done", async () => {
    await seed("waited");
    const inBlock = await connect("app");
    const reader = await connect("app");
    try {
      await inBlock.query("BEGIN");
      await inBlock.query("UPDATE orders SET total = total + 1 WHERE tenant_id = 'waited' AND id = 1");
      // The move waits for the block's row lock; meanwhile statements on the key are held.
      const move = ops.query("RELOCATE waited TO 'us-east'");
      await new Promise((resolve) => setTimeout(resolve, 150));
      const held = reader.query("SELECT count(*)::int AS n FROM orders WHERE tenant_id = 'waited'");
      await expect(
        inBlock.query("UPDATE orders SET total = total + 1 WHERE tenant_id = 'waited' AND id = 2"),
      ).rejects.toMatchObject({ code: "40001" });
      // Still waiting for the block's lock: the admin port shows the move running.
      expect(proxy.runtime.observability.placement().moves).toEqual([
        { keys: ["waited"], to: "us-east", startedAt: expect.any(String) },
      ]);
      await inBlock.query("ROLLBACK");
      const moved = await move;
      expect(proxy.runtime.observability.placement().moves).toEqual([]);
      expect(moved.rows.map((row) => row.to)).toEqual(["us-east", "us-east"]);
      expect((await held).rows).toEqual([{ n: 5 }]);
      expect(await spread("waited")).toEqual(["us-east:3/5"]);
    } finally {
      await inBlock.end();
      await reader.end();
    }
  });

  it("answers ROUTE for a key with where it lives after a move", async () => {
    const route = await app.query<{ field: string; value: string }>(
      "ROUTE SELECT * FROM orders WHERE tenant_id = 'mover'",
    );
    expect(route.rows.find((row) => row.field === "plan")?.value).toMatch(/^one region: us-east/);
  });
});
