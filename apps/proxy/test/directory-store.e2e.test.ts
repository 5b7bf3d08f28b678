import { type PgCluster, startCluster } from "@geo/testkit";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningProxy } from "../src/index.js";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { connectAs, connectDirect, MOVE_SCHEMA, startRegionsProxy } from "./support/move-regions.js";

const AUTH = `
[auth]
method = "scram-sha-256"
lookup = false
users = [{ name = "ops", password = "ops-secret" }, { name = "app", password = "app-secret" }]
operators = ["ops"]

[txn]
decision_log = "table"
`;

let cluster: PgCluster;
let proxy: RunningProxy;
let direct: Record<RegionName, pg.Client>;
let app: pg.Client;

function connect(port: number, user = "app"): Promise<pg.Client> {
  return connectAs(port, user);
}

async function start(extra: string): Promise<RunningProxy> {
  return startRegionsProxy(cluster, `${AUTH}\n${extra}`, "directory.toml");
}

/**
 * Stops the proxy and starts it again with `extra`: one proxy at a time over a directory store
 * (a second one beside it is refused at start, directory-claim.e2e).
 */
async function restart(extra: string): Promise<void> {
  await app.end().catch(() => undefined);
  await proxy.close({ timeoutMs: 200 });
  proxy = await start(extra);
  app = await connect(proxy.port);
}

/** The ROUTE answer's `field -> value` pairs. */
async function routeOf(client: pg.Client, sql: string): Promise<Record<string, string>> {
  const result = await client.query<{ field: string; value: string }>(`ROUTE ${sql}`);
  return Object.fromEntries(result.rows.map((row) => [row.field, row.value]));
}

async function directoryRows(region: RegionName): Promise<string[]> {
  const result = await direct[region].query<{ key: string; region: string }>(
    "SELECT key, region FROM geoproxy_directory ORDER BY key",
  );
  return result.rows.map((row) => `${row.key}=${row.region}`);
}

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
  direct = await connectDirect(cluster);
  // A key whose rows were written before the directory existed, and one stranded in two regions.
  await direct["us-east"].query("INSERT INTO users (tenant_id, id, name) VALUES ('legacy', 1, 'old')");
  await direct["us-east"].query("INSERT INTO users (tenant_id, id, name) VALUES ('twice', 1, 'a')");
  await direct["ap-south"].query("INSERT INTO users (tenant_id, id, name) VALUES ('twice', 1, 'b')");
  proxy = await start("[directory_store]\n");
  app = await connect(proxy.port);
});

afterAll(async () => {
  await app?.end().catch(() => undefined);
  await proxy?.close({ timeoutMs: 200 });
  await Promise.all(Object.values(direct).map((client) => client.end().catch(() => undefined)));
  await cluster?.stop();
});

describe("the directory store", () => {
  it("creates the directory table in every region at start, and again without complaint", async () => {
    for (const region of REGIONS) {
      const found = await direct[region].query(
        "SELECT to_regclass('geoproxy_directory') IS NOT NULL AS present",
      );
      expect(found.rows[0].present).toBe(true);
    }
    await restart("[directory_store]\n");
  });

  it("records a first write's key in the region that took it, so its reads go to that region alone", async () => {
    expect((await routeOf(app, "SELECT * FROM users WHERE tenant_id = 'zoe'")).plan).toMatch(
      /^scatter-gather over /,
    );
    await app.query("INSERT INTO users (tenant_id, id, name) VALUES ('zoe', 1, 'Zoe')");
    expect(await directoryRows("eu-west")).toContain("zoe=eu-west");
    expect(await directoryRows("us-east")).not.toContain("zoe=eu-west");
    const route = await routeOf(app, "SELECT * FROM users WHERE tenant_id = 'zoe'");
    expect(route.plan).toMatch(/^one region: eu-west/);
    const rows = await app.query("SELECT name FROM users WHERE tenant_id = 'zoe'");
    expect(rows.rows).toEqual([{ name: "Zoe" }]);
  });

  it("records a first write made inside a transaction block only if the block commits", async () => {
    await app.query("BEGIN");
    await app.query("INSERT INTO users (tenant_id, id, name) VALUES ('rolled', 1, 'R')");
    await app.query("ROLLBACK");
    expect(await directoryRows("eu-west")).not.toContain("rolled=eu-west");
    await app.query("BEGIN");
    await app.query("INSERT INTO users (tenant_id, id, name) VALUES ('kept', 1, 'K')");
    await app.query("COMMIT");
    expect(await directoryRows("eu-west")).toContain("kept=eu-west");
  });

  it("records a first write sent with the extended protocol, with its key as a parameter", async () => {
    await app.query({
      text: "INSERT INTO users (tenant_id, id, name) VALUES ($1, $2, $3)",
      values: ["param-key", 1, "P"],
    });
    expect(await directoryRows("eu-west")).toContain("param-key=eu-west");
  });

  it("loads the directory at start: a new proxy routes the recorded key to one region", async () => {
    await restart("[directory_store]\n");
    expect((await routeOf(app, "SELECT * FROM users WHERE tenant_id = 'zoe'")).plan).toMatch(
      /^one region: eu-west/,
    );
  });

  it("looks for a key with no entry in every region, and then reads it from the one that holds it", async () => {
    const rows = await app.query("SELECT name FROM users WHERE tenant_id = 'legacy'");
    expect(rows.rows).toEqual([{ name: "old" }]);
    expect(await directoryRows("us-east")).toContain("legacy=us-east");
    expect((await routeOf(app, "SELECT * FROM users WHERE tenant_id = 'legacy'")).plan).toMatch(
      /^one region: us-east/,
    );
  });

  it("refuses to read a key whose rows are in two regions rather than guess", async () => {
    await expect(app.query("SELECT * FROM users WHERE tenant_id = 'twice'")).rejects.toMatchObject({
      code: "55000",
    });
    expect(await directoryRows("us-east")).not.toContain("twice=us-east");
  });
});

describe("hints", () => {
  it("routes a key= hint as if every geo-partitioned table were constrained to that key", async () => {
    const route = await routeOf(app, "/* geo: key=legacy */ SELECT count(*) FROM users");
    expect(route.plan).toMatch(/^one region: us-east/);
    const count = await app.query("/* geo: key=legacy */ SELECT count(*)::int AS n FROM users");
    // Only us-east's rows: legacy and the stray copy of twice.
    expect(count.rows).toEqual([{ n: 2 }]);
  });

  it("sends a region= hint's statement to that region, even one the parser cannot read", async () => {
    expect((await routeOf(app, "/* geo: region=ap-south */ SELECT count(*) FROM users")).plan).toMatch(
      /^one region: ap-south/,
    );
    const count = await app.query("/* geo: region=ap-south */ SELECT count(*)::int AS n FROM users");
    expect(count.rows).toEqual([{ n: 1 }]);
    // Valid in PostgreSQL 15, beyond what the analyser's parser is asked to read here: a
    // statement with a syntax error gets PostgreSQL's own error from the hinted region.
    await expect(app.query("/* geo: region=ap-south */ SELEC 1")).rejects.toMatchObject({ code: "42601" });
  });
});

describe("guards", () => {
  it("refuse in PostgreSQL a write for a key the region's own directory places elsewhere", async () => {
    await restart("[directory_store]\nguard = true\n");
    // zoe lives in eu-west; a write that reaches us-east directly (a stale router) is refused there.
    await direct["us-east"].query(
      "INSERT INTO geoproxy_directory (key, region) VALUES ('zoe', 'eu-west') ON CONFLICT DO NOTHING",
    );
    await expect(
      direct["us-east"].query("INSERT INTO users (tenant_id, id, name) VALUES ('zoe', 2, 'stray')"),
    ).rejects.toMatchObject({
      code: "40001",
    });
    const stray = await direct["us-east"].query(
      "SELECT count(*)::int AS n FROM users WHERE tenant_id = 'zoe'",
    );
    expect(stray.rows).toEqual([{ n: 0 }]);
    // The right region takes it, and keys with no entry are not refused.
    await app.query("INSERT INTO users (tenant_id, id, name) VALUES ('zoe', 2, 'second')");
    await direct["us-east"].query("INSERT INTO users (tenant_id, id, name) VALUES ('fresh-us', 1, 'ok')");
    const triggers = await direct["ap-south"].query(
      "SELECT count(*)::int AS n FROM pg_trigger WHERE tgname = 'geoproxy_guard'",
    );
    expect(triggers.rows).toEqual([{ n: 2 }]);
  });
});
