import { encodeCopyData, encodeCopyDone, encodeQuery } from "@geo/proto";
import { type PgCluster, RawClient, startCluster } from "@geo/testkit";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningProxy } from "../src/index.js";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { connectDirect, MOVE_SCHEMA, startRegionsProxy } from "./support/move-regions.js";
import { exchange } from "./support/side-by-side.js";

// COPY FROM STDIN split across regions with the directory kept in PostgreSQL: rows of listed keys
// go to their region, and a new key is recorded, as an INSERT's first write is, in the region
// that took its rows, in the COPY's own transaction.
let cluster: PgCluster;
let proxy: RunningProxy;
let direct: Record<RegionName, pg.Client>;
let client: RawClient;

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
  direct = await connectDirect(cluster);
  // The first proxy creates the directory tables; keys listed there are loaded by the next one.
  const first = await startRegionsProxy(cluster, "[directory_store]\n", "copy.toml");
  await first.close({ timeoutMs: 200 });
  for (const region of REGIONS) {
    await direct[region].query(
      "INSERT INTO geoproxy_directory (key, region) VALUES ('bob', 'us-east'), ('chandra', 'ap-south')",
    );
  }
  proxy = await startRegionsProxy(cluster, "[directory_store]\n", "copy.toml");
  client = await RawClient.connect({
    host: "127.0.0.1",
    port: proxy.port,
    user: "postgres",
    database: "postgres",
  });
});

afterAll(async () => {
  await client?.close();
  await proxy?.close({ timeoutMs: 200 });
  await Promise.all(Object.values(direct ?? {}).map((c) => c.end().catch(() => undefined)));
  await cluster?.stop();
});

async function copy(sql: string, data: string): Promise<string[]> {
  return exchange(
    client,
    Buffer.concat([encodeQuery({ sql }), encodeCopyData({ data: Buffer.from(data) }), encodeCopyDone()]),
  );
}

async function where(key: string): Promise<string[]> {
  const found: string[] = [];
  for (const region of REGIONS) {
    const rows = await direct[region].query("SELECT count(*)::int AS n FROM users WHERE tenant_id = $1", [
      key,
    ]);
    if ((rows.rows[0].n as number) > 0) found.push(region);
  }
  return found;
}

async function listed(region: RegionName): Promise<string[]> {
  const rows = await direct[region].query(
    "SELECT key || '=' || region AS entry FROM geoproxy_directory ORDER BY key",
  );
  return rows.rows.map((row) => row.entry as string);
}

describe("COPY FROM STDIN with the directory store", () => {
  it("sends listed keys to their regions and records new keys where their rows went", async () => {
    const lines = await copy(
      "COPY users FROM STDIN",
      "bob\t1\tBob\nchandra\t1\tChandra\nzoe\t1\tZoe\nyuki\t1\tYuki\n",
    );
    expect(lines).toContain("CommandComplete COPY 4");
    expect(await where("bob")).toEqual(["us-east"]);
    expect(await where("chandra")).toEqual(["ap-south"]);
    expect(await where("zoe")).toEqual(["eu-west"]);
    expect(await listed("eu-west")).toEqual([
      "bob=us-east",
      "chandra=ap-south",
      "yuki=eu-west",
      "zoe=eu-west",
    ]);
    const route = await client.query("ROUTE SELECT * FROM users WHERE tenant_id = 'zoe'");
    expect(route.rows.map((row) => row.join("=")).join("\n")).toMatch(/one region: eu-west/);
  });

  it("records nothing when the COPY fails or its block rolls back", async () => {
    const failed = await copy("COPY users FROM STDIN", "ann\t1\tAnn\nbob\t1\tduplicate\n");
    expect(failed).toContain("ErrorResponse 23505");
    await exchange(client, encodeQuery({ sql: "BEGIN" }));
    expect(await copy("COPY users FROM STDIN", "ben\t1\tBen\nbob\t2\tBob again\n")).toContain(
      "CommandComplete COPY 2",
    );
    await exchange(client, encodeQuery({ sql: "ROLLBACK" }));
    expect(await where("ann")).toEqual([]);
    expect(await where("ben")).toEqual([]);
    for (const region of REGIONS) {
      expect(await listed(region), region).not.toContain("ann=eu-west");
      expect(await listed(region), region).not.toContain("ben=eu-west");
    }
    const prepared = await Promise.all(
      REGIONS.map((r) => direct[r].query("SELECT count(*)::int AS n FROM pg_prepared_xacts")),
    );
    expect(prepared.map((p) => p.rows[0].n)).toEqual([0, 0, 0]);
  });
});
