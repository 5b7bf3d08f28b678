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
users = [{ name = "ops", password = "ops-secret" }]
operators = ["ops"]

[txn]
decision_log = "table"

# Moves pass the guards by the setting only their own transactions turn on.
[directory_store]
guard = true
`;

const KEYS = Array.from({ length: 100 }, (_, i) => `k${String(i).padStart(3, "0")}`);

let cluster: PgCluster;
let proxy: RunningProxy;
let direct: Record<RegionName, pg.Client>;
let ops: pg.Client;
const notices: string[] = [];

/** users/orders rows in each region, and their total. */
async function census(): Promise<Record<RegionName, string>> {
  const out = {} as Record<RegionName, string>;
  for (const region of REGIONS) {
    const result = await direct[region].query<{ u: number; o: number; t: string }>(
      "SELECT (SELECT count(*) FROM users)::int AS u, (SELECT count(*) FROM orders)::int AS o, (SELECT coalesce(sum(total), 0) FROM orders)::text AS t",
    );
    const { u, o, t } = result.rows[0]!;
    out[region] = `${u}/${o}/${t}`;
  }
  return out;
}

async function timed(sql: string): Promise<{ ms: number; rows: Record<string, string>[]; command: string }> {
  const started = performance.now();
  const result = await ops.query(sql);
  return {
    ms: performance.now() - started,
    rows: result.rows,
    command: `${result.command} ${result.rowCount}`,
  };
}

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
  direct = await connectDirect(cluster);
  // 100 keys, each with one user and two orders, in ap-south (a second shard of the same place).
  await direct["ap-south"].query(
    `INSERT INTO users (tenant_id, id, name) SELECT k, 1, k FROM unnest($1::text[]) AS k;
     INSERT INTO orders (tenant_id, id, user_id, total) SELECT k, n, 1, n * 1.25 FROM unnest($1::text[]) AS k, generate_series(1, 2) AS n;`.replaceAll(
      "$1::text[]",
      `ARRAY[${KEYS.map((key) => `'${key}'`).join(",")}]`,
    ),
  );
  proxy = await startRegionsProxy(cluster, EXTRA, "rebalance.toml");
  ops = await connectAs(proxy.port, "ops");
  ops.on("notice", (notice) => notices.push(notice.message ?? ""));
});

afterAll(async () => {
  await ops?.end().catch(() => undefined);
  await proxy?.close({ timeoutMs: 200 });
  await Promise.all(Object.values(direct).map((client) => client.end().catch(() => undefined)));
  await cluster?.stop();
});

describe("REBALANCE", () => {
  it("moves 100 keys key by key and then in batches of 25, every row accounted for", async () => {
    const before = await census();
    expect(before["ap-south"]).toBe("100/200/375.00");

    notices.length = 0;
    const oneByOne = await timed("REBALANCE ap-south TO us-east LIMIT 100 BATCH 1");
    expect(oneByOne.command).toBe("REBALANCE 100");
    expect(oneByOne.rows).toEqual([
      { table: "orders", from: "ap-south", to: "us-east", rows: "200", state: "moved" },
      { table: "users", from: "ap-south", to: "us-east", rows: "100", state: "moved" },
    ]);
    expect(notices).toHaveLength(100);
    expect(await census()).toEqual({ "eu-west": "0/0/0", "us-east": "100/200/375.00", "ap-south": "0/0/0" });

    notices.length = 0;
    const batched = await timed("REBALANCE us-east TO ap-south LIMIT 100 BATCH 25");
    expect(batched.rows.map((row) => row.rows)).toEqual(["200", "100"]);
    expect(notices).toHaveLength(4);
    expect(notices[3]).toMatch(/batch 4 of 4 moved, 100 of 100 keys/);
    expect(await census()).toEqual(before);

    const listed = await direct["eu-west"].query<{ n: number }>(
      "SELECT count(*)::int AS n FROM geoproxy_directory WHERE region = 'ap-south'",
    );
    expect(listed.rows[0]!.n).toBe(100);
    console.log(
      `REBALANCE of 100 keys (1 user + 2 orders each): BATCH 1 ${oneByOne.ms.toFixed(0)} ms, BATCH 25 ${batched.ms.toFixed(0)} ms`,
    );
  });

  it("moves at most LIMIT keys", async () => {
    const moved = await timed("REBALANCE ap-south TO eu-west LIMIT 10");
    expect(moved.rows.map((row) => row.rows)).toEqual(["20", "10"]);
    const census1 = await census();
    expect(census1["eu-west"]).toMatch(/^10\/20\//);
    await timed("REBALANCE eu-west TO ap-south LIMIT 10");
  });

  it("stops at the first refused move and reports what moved before it", async () => {
    // zz-split sorts last and has rows in two regions: the last batch is refused.
    await direct["ap-south"].query("INSERT INTO users (tenant_id, id, name) VALUES ('zz-split', 1, 'a')");
    await direct["eu-west"].query("INSERT INTO users (tenant_id, id, name) VALUES ('zz-split', 1, 'b')");
    notices.length = 0;
    const partial = await timed("REBALANCE ap-south TO us-east LIMIT 101 BATCH 25");
    expect(partial.rows).toEqual([
      { table: "orders", from: "ap-south", to: "us-east", rows: "200", state: "moved" },
      { table: "users", from: "ap-south", to: "us-east", rows: "100", state: "moved" },
      { table: "(stopped)", from: "ap-south", to: "us-east", rows: "0", state: "refused 55000" },
    ]);
    expect(notices.at(-1)).toMatch(/stopped after 100 keys/);
    const after = await census();
    expect(after["us-east"]).toBe("100/200/375.00");
    expect(after["ap-south"]).toBe("1/0/0");
  });

  it("refuses a region it does not know", async () => {
    await expect(ops.query("REBALANCE ap-south TO mars LIMIT 1")).rejects.toMatchObject({ code: "22023" });
  });
});
