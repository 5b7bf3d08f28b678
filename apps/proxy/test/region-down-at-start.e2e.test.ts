import { Writable } from "node:stream";
import type { ProxySnapshot } from "@geo/admin";
import { MemoryDirectory, parseConfig } from "@geo/core";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, StartupError, startProxy } from "../src/index.js";
import { createLogger } from "../src/log.js";
import { parseScrape } from "./admin-prometheus.js";
import { regionsToml } from "./support/fake-regions.js";
import { directoryEntries, type RealRegions, startRealRegions } from "./support/real-regions.js";
import { proxyClient, timed } from "./support/timed-query.js";

/**
 * A proxy (re)started while one region's server is stopped: us-east (bob) is down, eu-west is home.
 * It starts, serves what does not need us-east, fails what does at once naming it, and picks it up
 * when its server comes back, without a restart.
 */

const US_EAST = 1;
const HOME = 0;
/** Generous for a loaded 2-core machine; a statement that hung would exceed it by far. */
const FAST_MS = 2_000;
/** How long the region may take to be served again once its server is back (probes run every second). */
const PICK_UP_MS = 15_000;

let regions: RealRegions;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  regions = await startRealRegions();
  // Clients straight to a server that is stopped here see it go.
  for (const direct of [...Object.values(regions.direct), regions.reference])
    direct.on("error", () => undefined);
});

afterAll(async () => {
  await regions?.cluster.startServer(US_EAST).catch(() => undefined);
  await regions?.close();
});

/** The three regions' configuration; `serverFields` join its `[server]` section. */
function configWith(extraToml: string, serverFields = "") {
  const toml = regionsToml(
    regions.cluster.servers.map((server) => server.port),
    extraToml,
    // A name of its own: the file's first proxy (startRealRegions) runs over the same servers.
  ).replace("[server]\n", `[server]\nnode = "down-at-start"\n${serverFields}`);
  return parseConfig(toml, "down-at-start.toml");
}

function capturingLogger() {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line.trim() !== "") logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return createLogger("info", sink);
}

const client = (proxy: RunningProxy): Promise<pg.Client> => proxyClient(proxy.port);

/** Polls `check` until it holds, at most `limitMs`; resolves with how long that took. */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if (await check()) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`not within ${limitMs} ms`);
}

describe("a proxy started while a region is down", () => {
  let proxy: RunningProxy;
  let adminUrl: string;

  beforeAll(async () => {
    // A sequence made on the server, not striped: read only once the region answers again.
    await regions.direct["us-east"].query("CREATE TABLE tickets (tenant_id text NOT NULL, id bigserial)");
    // "fast": the testkit's servers do not wait for WAL at commit, so a crash could lose the rows.
    await regions.cluster.stopServer(US_EAST, "fast");
    proxy = await startProxy({
      config: configWith(
        '\n[admin]\nport = 0\n\n[[tables]]\ntable = "tickets"\nplacement = "geo_partitioned"\nkey = "tenant_id"\nids = "striped"\n',
      ),
      directory: new MemoryDirectory(directoryEntries()),
      logger: capturingLogger(),
      port: 0,
      shutdownTimeoutMs: 500,
    });
    adminUrl = proxy.runtime.observability.admin!.url;
  }, 60_000);

  afterAll(async () => {
    await proxy?.close({ timeoutMs: 200 });
    await regions.direct["us-east"].query("DROP TABLE IF EXISTS tickets").catch(() => undefined);
  });

  it("starts, and logs the down region with its error", () => {
    expect(proxy.lateRegions).toEqual(["us-east"]);
    const line = logLines.find((entry) => entry["region"] === "us-east" && entry["level"] === 40);
    expect(line?.["msg"]).toContain("us-east");
    expect(String(line?.["err"])).toMatch(/ECONNREFUSED|connect/);
  });

  it("serves a key of another region, a read across the regions that are up, and a replicated table", async () => {
    const c = await client(proxy);
    const chandra = await timed(c, "SELECT name FROM users WHERE tenant_id = 'chandra' ORDER BY id");
    expect(chandra.error).toBeUndefined();
    expect(chandra.rows).toEqual([["chandra-1"], ["chandra-2"], ["chandra-3"]]);
    const across = await timed(
      c,
      "SELECT tenant_id, count(*) FROM users WHERE tenant_id IN ('alice', 'chandra') GROUP BY tenant_id ORDER BY tenant_id",
    );
    expect(across.error).toBeUndefined();
    expect(across.rows).toEqual([
      ["alice", "3"],
      ["chandra", "3"],
    ]);
    const replicated = await timed(c, "SELECT count(*) FROM currencies");
    expect(replicated.error).toBeUndefined();
    expect(replicated.rows).toEqual([["3"]]);
    await c.end();
  });

  it("fails a statement for the down region at once, naming it, and the session carries on", async () => {
    const c = await client(proxy);
    for (const sql of [
      "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1",
      "SELECT count(*) FROM users",
    ]) {
      const outcome = await timed(c, sql);
      expect(outcome.error?.code, sql).toMatch(/^08/);
      expect(outcome.error?.message, sql).toContain("us-east");
      expect(outcome.ms, sql).toBeLessThan(FAST_MS);
    }
    expect((await timed(c, "SELECT 1")).rows).toEqual([[1]]);
    await c.end();
  });

  it("shows the region down in SHOW HEALTH, SHOW REGIONS, /snapshot and /metrics", async () => {
    const c = await client(proxy);
    const health = await c.query({ text: "SHOW HEALTH", rowMode: "array" });
    const usEast = health.rows.find((row) => row[0] === "us-east");
    expect(usEast?.[4]).toBe("down");
    expect(health.rows.find((row) => row[0] === "ap-south")?.[4]).toBe("up");
    const regionRows = await c.query<{ region: string; health: string }>("SHOW REGIONS");
    expect(regionRows.rows.map((row) => [row.region, row.health])).toEqual([
      ["ap-south", "up"],
      ["eu-west", "up"],
      ["us-east", "down"],
    ]);
    // Its sequences could not be read yet.
    const alerts = await c.query<{ name: string }>("SHOW ALERTS");
    expect(alerts.rows.filter((row) => row.name === "sequence_ids_collide")).toEqual([]);
    await c.end();
    const snapshot = (await (await fetch(`${adminUrl}/snapshot`)).json()) as ProxySnapshot;
    const region = snapshot.regions.find((r) => r.id === "us-east");
    expect(region?.endpoints[0]?.health).toBe("down");
    const endpoint = `127.0.0.1:${regions.cluster.servers[US_EAST]!.port}`;
    const metrics = parseScrape(await (await fetch(`${adminUrl}/metrics`)).text());
    expect(metrics.value("geoproxy_backend_up", { endpoint })).toBe(0);
  });

  it("picks the region up once its server is back, without a restart", async () => {
    await regions.cluster.startServer(US_EAST);
    const back = Date.now();
    const c = await client(proxy);
    const served = await within(PICK_UP_MS, async () => {
      const outcome = await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1");
      return outcome.error === undefined && outcome.rows[0]?.[0] === "bob-1";
    });
    console.log(`region down at start: served again ${served} ms after its server was back`);
    const across = await timed(
      c,
      "SELECT count(*) FROM users WHERE tenant_id IN ('alice', 'bob', 'chandra')",
    );
    expect(across.error).toBeUndefined();
    expect(across.rows).toEqual([["9"]]);
    const up = await within(PICK_UP_MS, async () => {
      const health = await c.query({ text: "SHOW HEALTH", rowMode: "array" });
      return health.rows.find((row) => row[0] === "us-east")?.[4] === "up" && proxy.lateRegions.length === 0;
    });
    console.log(
      `region down at start: up in SHOW HEALTH and picked up ${Date.now() - back} ms after (${up} ms after serving)`,
    );
    expect(
      logLines.some((entry) => entry["region"] === "us-east" && String(entry["msg"]).includes("picked up")),
    ).toBe(true);
    // Its sequences were read when it was picked up: the unstriped one is an alert now.
    const alerts = await c.query<{ name: string; subject: string; message: string }>("SHOW ALERTS");
    const collide = alerts.rows.filter((row) => row.name === "sequence_ids_collide");
    expect(collide.map((row) => row.subject)).toEqual(["us-east/tickets.id"]);
    expect(collide[0]?.message).toContain("steps by 1 from 1, not by 3 from 2");
    await c.end();
  }, 60_000);
});

describe("a proxy keeping its directory in the regions, started while a region is down", () => {
  let proxy: RunningProxy;

  beforeAll(async () => {
    // A proxy with a directory store is the only one over its tables: the file's first proxy (a
    // TSV directory) would be refused beside it, and this one beside that (directory-claim.e2e).
    await regions.proxy.close({ timeoutMs: 200 });
    await regions.cluster.stopServer(US_EAST, "fast");
    proxy = await startProxy({
      config: configWith("\n[directory_store]\n"),
      logLevel: "silent",
      port: 0,
      shutdownTimeoutMs: 500,
    });
  }, 60_000);

  afterAll(async () => {
    await regions.cluster.startServer(US_EAST).catch(() => undefined);
    await proxy?.close({ timeoutMs: 200 });
  });

  it("looks for keys in the down region's unread table instead of placing them anew, then loads it when it is back", async () => {
    const c = await client(proxy);
    // No entry anywhere yet: bob is looked for in every region, which needs us-east.
    const bob = await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1");
    expect(bob.error?.message).toContain("us-east");
    expect(bob.ms).toBeLessThan(FAST_MS);
    // A first write might be of a key that us-east's table lists: refused while it is unread.
    const insert =
      "INSERT INTO users (tenant_id, id, name, country, age) VALUES ('zoe', 1, 'zoe-1', 'FR', 30)";
    const refused = await timed(c, insert);
    expect(refused.error?.message).toContain("us-east");
    // What needs no key is served: a replicated table, read at home.
    expect((await timed(c, "SELECT count(*) FROM currencies")).rows).toEqual([["3"]]);

    await regions.cluster.startServer(US_EAST);
    await within(PICK_UP_MS, async () => proxy.lateRegions.length === 0);
    const located = await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1");
    expect(located.error).toBeUndefined();
    expect(located.rows).toEqual([["bob-1"]]);
    const inserted = await timed(c, insert);
    expect(inserted.error).toBeUndefined();
    expect((await timed(c, "SELECT name FROM users WHERE tenant_id = 'zoe'")).rows).toEqual([["zoe-1"]]);
    await c.end();
  }, 60_000);
});

describe("start-up refusals with a region down", () => {
  it("refuses without the home region, naming it and why", async () => {
    await regions.cluster.stopServer(HOME, "fast");
    try {
      const started = await startProxy({
        config: configWith(""),
        logLevel: "silent",
        port: 0,
      }).catch((error: unknown) => error);
      expect(started).toBeInstanceOf(StartupError);
      const lines = (started as StartupError).lines;
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^region eu-west \(.*\) is unreachable: .*home region must answer/);
    } finally {
      await regions.cluster.startServer(HOME);
    }
  }, 60_000);

  it("refuses with require_all_regions_at_start = true, naming the region and the field", async () => {
    await regions.cluster.stopServer(US_EAST, "fast");
    try {
      const started = await startProxy({
        config: configWith("", "require_all_regions_at_start = true\n"),
        logLevel: "silent",
        port: 0,
      }).catch((error: unknown) => error);
      expect(started).toBeInstanceOf(StartupError);
      const lines = (started as StartupError).lines;
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^region us-east .* is unreachable: .*require_all_regions_at_start/);
    } finally {
      await regions.cluster.startServer(US_EAST);
    }
  }, 60_000);
});
