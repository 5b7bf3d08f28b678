import { spawn } from "node:child_process";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import type { ProxyChild } from "./support/proxy-child.js";
import {
  incrementUntilStopped,
  LEASE_MS,
  MAJORITY_STORE,
  peers,
  SHARED_STORE,
  SharedProxies,
  until,
} from "./support/shared-proxies.js";

// Two proxies as real processes over three real servers, agreeing in a majority of the regions
// (`authority = "majority"`): new keys placed by Paxos with every region an acceptor, moves
// announced to a majority, and a region's server stopped and started again while both route.
const proxies = new SharedProxies("geo-shared-majority-");

beforeAll(() => proxies.start());
beforeEach(() => proxies.reset());
afterEach(() => proxies.stopProxies());
afterAll(() => proxies.close());

function launch(node: string, home: RegionName, store = MAJORITY_STORE): Promise<ProxyChild> {
  return proxies.launch(node, home, { store });
}

/** `COPY users FROM STDIN` of `data` through psql, as ops; resolves with psql's exit code and output. */
function psqlCopy(port: number, data: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      "psql",
      [
        "-X",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "ops",
        "-d",
        "postgres",
        "-c",
        "COPY users FROM STDIN",
      ],
      { env: { ...process.env, PGPASSWORD: "ops-secret" } },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
    child.stdin.end(data);
  });
}

const connect = (port: number): Promise<pg.Client> => proxies.connect(port);

const regionsWith = (key: string, among?: readonly RegionName[]): Promise<RegionName[]> =>
  proxies.regionsWith(key, among);

/** `key`'s directory row in `region`'s own table, as [region, version], or null. */
async function entryIn(region: RegionName, key: string): Promise<[string, number] | null> {
  const { rows } = await proxies.direct[region].query(
    "SELECT region, version::int AS version FROM geoproxy_directory WHERE key = $1",
    [key],
  );
  return rows.length === 0 ? null : [rows[0].region, rows[0].version];
}

/** Stops region `index`'s server; its direct client goes with it. */
async function stopRegion(index: number): Promise<void> {
  const region = REGIONS[index]!;
  await proxies.direct[region].end().catch(() => undefined);
  await proxies.cluster.stopServer(index, "fast");
}

/** Starts region `index`'s server again, with a new direct client. */
async function startRegion(index: number): Promise<void> {
  await proxies.cluster.startServer(index);
  proxies.direct[REGIONS[index]!] = await proxies.connectServer(index);
}

describe("a directory shared in a majority of the regions", () => {
  it("keeps its tables in every region and places a new key written through both proxies at once in one region", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const b = await launch("us-proxy", "us-east");
    const [clientA, clientB] = await Promise.all([
      connect(await a.listening()),
      connect(await b.listening()),
    ]);
    await until(async () => (await peers(clientA)).length === 2, 5000);
    // Routing, neither fenced; nothing under way, nothing held.
    for (const row of await peers(clientA))
      expect([row["lease"], row["fenced"], row["statements"], row["holds"]], row["node"]!).toEqual([
        "held",
        "f",
        "0",
        "0",
      ]);
    // Each region holds both heartbeats: a majority needs each proxy's in at least two.
    for (const region of REGIONS) {
      const { rows } = await proxies.direct[region].query(
        "SELECT node, authority FROM geoproxy_directory_peers ORDER BY node",
      );
      expect(rows, region).toEqual([
        { node: "eu-proxy", authority: "majority" },
        { node: "us-proxy", authority: "majority" },
      ]);
    }
    const keys = Array.from({ length: 20 }, (_, i) => `fresh-${i}`);
    await Promise.all(
      keys.flatMap((key) => [
        clientA.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, 'a')", [key]),
        clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 2, 'b')", [key]),
      ]),
    );
    for (const key of keys) {
      const where = await regionsWith(key);
      expect(where, key).toHaveLength(1);
      expect(["eu-west", "us-east"]).toContain(where[0]);
      for (const client of [clientA, clientB]) {
        const { rows } = await client.query("SELECT id FROM users WHERE tenant_id = $1 ORDER BY id", [key]);
        expect(
          rows.map((row) => Number(row.id)),
          key,
        ).toEqual([1, 2]);
      }
      // A majority of the acceptors accepted the region the rows are in, and none another one.
      let accepted = 0;
      for (const region of REGIONS) {
        const { rows } = await proxies.direct[region].query(
          "SELECT accepted_region FROM geoproxy_directory_paxos WHERE key = $1",
          [key],
        );
        const value = rows[0]?.accepted_region ?? null;
        if (value !== null) {
          expect(value, `${key} in ${region}`).toBe(where[0]);
          accepted++;
        }
      }
      expect(accepted, key).toBeGreaterThanOrEqual(2);
    }
    // The chosen region is learnt as each key's entry, version 0, in every region.
    await until(async () => {
      for (const region of REGIONS) {
        const { rows } = await proxies.direct[region].query(
          "SELECT count(*)::int AS n FROM geoproxy_directory WHERE key LIKE 'fresh-%'",
        );
        if (rows[0].n !== keys.length) return false;
      }
      return true;
    }, 5000);
  });

  it("moves a key through one proxy while the other increments it: the entry's version rises in every region", async () => {
    const a = await launch("mover", "eu-west");
    const b = await launch("writer", "us-east");
    const [clientA, clientB] = await Promise.all([
      connect(await a.listening()),
      connect(await b.listening()),
    ]);
    await clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ('counter', 1, '0')");
    const writer = incrementUntilStopped(clientB, "counter");
    const path: RegionName[] = ["ap-south", "eu-west", "us-east", "ap-south"];
    for (const to of path) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await clientA.query(`RELOCATE counter TO '${to}'`);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    const { committed, lost, refused } = await writer.stop();
    expect(await regionsWith("counter")).toEqual(["ap-south"]);
    const { rows } = await proxies.direct["ap-south"].query(
      "SELECT name FROM users WHERE tenant_id = 'counter'",
    );
    expect(lost).toBe(0);
    expect(committed).toBeGreaterThan(10);
    expect(Number(rows[0].name)).toBe(committed);
    expect(refused.filter((code) => code !== "40001")).toEqual([]);
    for (const region of REGIONS) expect(await entryIn(region, "counter"), region).toEqual(["ap-south", 4]);
    // Every withdrawn announcement left its marker; none is left announced.
    for (const region of REGIONS) {
      const moves = await proxies.direct[region].query(
        "SELECT count(*)::int AS n FROM geoproxy_directory_moves",
      );
      expect(moves.rows[0].n, region).toBe(0);
      const ended = await proxies.direct[region].query(
        "SELECT count(*)::int AS n FROM geoproxy_directory_ended",
      );
      expect(ended.rows[0].n, region).toBe(path.length);
    }
  });

  it("keeps routing through both proxies while one region's server is down; a move and a claim between the other two succeed; the region catches up when back", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const b = await launch("us-proxy", "us-east");
    const [clientA, clientB] = await Promise.all([
      connect(await a.listening()),
      connect(await b.listening()),
    ]);
    await clientA.query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 1, '0')");
    await clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 1, '0')");
    await clientA.query("INSERT INTO users (tenant_id, id, name) VALUES ('chandra', 1, '0')");
    await clientA.query("RELOCATE chandra TO 'ap-south'");
    expect(await regionsWith("alice")).toEqual(["eu-west"]);
    expect(await regionsWith("bob")).toEqual(["us-east"]);
    await until(async () => (await peers(clientA)).length === 2 && (await peers(clientB)).length === 2, 5000);

    // Increments through both proxies, of keys whose regions stay up, for the whole outage.
    const alice = incrementUntilStopped(clientA, "alice", 5);
    const bob = incrementUntilStopped(clientB, "bob", 5);

    await stopRegion(2); // ap-south
    // Well past the lease: both proxies still route, on a majority of two regions.
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
    const before = [alice.counts.committed, bob.counts.committed];
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(alice.counts.committed).toBeGreaterThan(before[0]!);
    expect(bob.counts.committed).toBeGreaterThan(before[1]!);
    // A key whose rows are in the region that is down cannot be moved; nothing is touched.
    // Each proxy, at its last heartbeat, holds nothing and runs a statement or none.
    for (const row of await peers(clientB))
      expect(Number(row["statements"]), row["node"]!).toBeLessThanOrEqual(1);
    const stuck = await clientA.query("RELOCATE chandra TO 'eu-west'").catch((error) => error);
    expect(stuck.code).toBe("57P03");
    expect(stuck.message).toContain("needs region ap-south");
    // A move between the two regions that answer, through the proxy of the other home.
    await clientB.query("RELOCATE alice TO 'us-east'");
    expect(await regionsWith("alice", ["eu-west", "us-east"])).toEqual(["us-east"]);
    // A new key through each proxy: claimed by the two acceptors that answer.
    await clientA.query("INSERT INTO users (tenant_id, id, name) VALUES ('dora', 1, 'd')");
    await clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ('dora', 2, 'd')");
    await clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ('emil', 1, 'e')");
    expect(await regionsWith("dora", ["eu-west", "us-east"])).toEqual(["eu-west"]);
    expect(await regionsWith("emil", ["eu-west", "us-east"])).toEqual(["us-east"]);
    for (const client of [clientA, clientB])
      expect(
        (await client.query("SELECT count(*)::int AS n FROM users WHERE tenant_id = 'dora'")).rows[0].n,
      ).toBe(2);

    await startRegion(2);
    // Back, ap-south gets what it missed from the visits that hear from it again: alice's new
    // entry (version 1, above the one it holds) and the claims made while it was down.
    await until(async () => {
      const alice = await entryIn("ap-south", "alice");
      const dora = await entryIn("ap-south", "dora");
      const emil = await entryIn("ap-south", "emil");
      return (
        JSON.stringify([alice, dora, emil]) ===
        JSON.stringify([
          ["us-east", 1],
          ["eu-west", 0],
          ["us-east", 0],
        ])
      );
    }, 10_000);
    // And chandra, whose rows are there, moves again once the proxy holds its node's claim in
    // ap-south again (retaken every recovery interval): until then writes across regions wait.
    await until(
      async () =>
        clientA
          .query("RELOCATE chandra TO 'eu-west'")
          .then(() => true)
          .catch(() => false),
      15_000,
    );
    expect(await regionsWith("chandra")).toEqual(["eu-west"]);

    for (const [key, writer] of [
      ["alice", alice],
      ["bob", bob],
    ] as const) {
      const { committed, lost, refused } = await writer.stop();
      expect({ key, lost, refused }).toEqual({ key, lost: 0, refused: [] });
      const { rows } = await proxies.direct["us-east"].query("SELECT name FROM users WHERE tenant_id = $1", [
        key,
      ]);
      expect(Number(rows[0].name)).toBe(committed);
      expect(committed).toBeGreaterThan(20);
    }
  });

  // Two COPYs claiming the same 3,000 keys wait on each other's rows in every region; on a loaded
  // machine a claim statement can outlast a 600 ms step, and both COPYs are then refused (57P03,
  // nothing placed): correct, but not what this case looks at. Its lease is longer.
  it.each([
    ["a majority of the regions", MAJORITY_STORE.replace(`lease_ms = ${LEASE_MS}`, "lease_ms = 5000")],
    ["one authority region", SHARED_STORE.replace(`lease_ms = ${LEASE_MS}`, "lease_ms = 5000")],
  ])(
    "claims the 3,000 new keys of a COPY through each proxy at once, agreeing in %s: each key in one region, each COPY whole or not at all",
    async (_where, store) => {
      const a = await launch("eu-proxy", "eu-west", store);
      const b = await launch("us-proxy", "us-east", store);
      const [portA, portB] = await Promise.all([a.listening(), b.listening()]);
      const keys = Array.from({ length: 3000 }, (_, i) => `bulk-${i}`);
      const rows = (id: number): string => `${keys.map((key) => `${key}\t${id}\tcopied`).join("\n")}\n`;
      const [viaA, viaB] = await Promise.all([psqlCopy(portA, rows(1)), psqlCopy(portB, rows(2))]);
      const committed = [viaA, viaB].filter((result) => result.code === 0).length;
      expect(committed, `${viaA.output}\n${viaB.output}`).toBeGreaterThanOrEqual(1);
      for (const result of [viaA, viaB])
        if (result.code !== 0) expect(result.output).toMatch(/placed in region .* by another proxy/);
      let total = 0;
      const perKey = new Map<string, Set<string>>();
      for (const region of REGIONS) {
        const { rows: found } = await proxies.direct[region].query(
          "SELECT tenant_id FROM users WHERE tenant_id LIKE 'bulk-%'",
        );
        total += found.length;
        for (const row of found)
          (perKey.get(row.tenant_id) ?? perKey.set(row.tenant_id, new Set()).get(row.tenant_id)!).add(region);
      }
      expect(total).toBe(committed * keys.length);
      expect(perKey.size).toBe(keys.length);
      expect([...perKey.values()].filter((regions) => regions.size !== 1)).toEqual([]);
    },
  );

  it.each([
    ["a majority of the regions", MAJORITY_STORE],
    ["one authority region", SHARED_STORE],
  ])(
    "lets reads of a moving key through the peer while the rows are copied, holds writes, and never reads it where its rows are not, agreeing in %s",
    async (_where, store) => {
      const a = await launch("mover", "eu-west", store);
      const b = await launch("reader", "us-east", store);
      const [clientA, clientB, writerB] = [
        await connect(await a.listening()),
        await connect(await b.listening()),
        await connect(await b.listening()),
      ];
      const ROWS = 40_000;
      await clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ('big', 0, 'x')");
      const from = (await regionsWith("big"))[0]!;
      await proxies.direct[from].query(
        `INSERT INTO users (tenant_id, id, name) SELECT 'big', g, repeat('x', 40) FROM generate_series(1, ${ROWS - 1}) AS g`,
      );
      await until(async () => (await peers(clientA)).length === 2, 5000);
      const reads: { at: number; n: number }[] = [];
      const writes: number[] = [];
      let stop = false;
      const reading = (async () => {
        while (!stop) {
          const { rows } = await clientB.query(
            "SELECT count(*)::int AS n FROM users WHERE tenant_id = 'big'",
          );
          reads.push({ at: Date.now(), n: rows[0].n });
        }
      })();
      const writing = (async () => {
        while (!stop) {
          await writerB.query("UPDATE users SET name = 'y' WHERE tenant_id = 'big' AND id = 0");
          writes.push(Date.now());
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const to = REGIONS.find((region) => region !== from)!;
      const started = Date.now();
      await clientA.query(`RELOCATE big TO '${to}'`);
      const ended = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 200));
      stop = true;
      await Promise.all([reading, writing]);
      expect(await regionsWith("big")).toEqual([to]);
      // Every read found every row: none went where the rows were not.
      expect(reads.filter((read) => read.n !== ROWS)).toEqual([]);
      // The copy of 40,000 rows takes a while; reads answered through it, writes waited.
      expect(ended - started).toBeGreaterThan(150);
      const inside = (at: number): boolean => at > started + 50 && at < ended - 100;
      expect(reads.filter((read) => inside(read.at)).length).toBeGreaterThan(0);
      expect(writes.filter(inside)).toEqual([]);
      expect(writes.some((at) => at > ended)).toBe(true);
    },
  );

  it("stops routing geo-partitioned tables within lease_ms once a majority is out of reach, and resumes when one answers again", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const client = await connect(await a.listening());
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 1, 'a')");
    await stopRegion(1); // us-east
    await stopRegion(2); // ap-south
    const stoppedAt = Date.now();
    let refusal: { code?: string; message: string } | undefined;
    await until(async () => {
      refusal = await client
        .query("SELECT name FROM users WHERE tenant_id = 'alice'")
        .then(() => undefined)
        .catch((error) => error);
      return refusal !== undefined;
    }, 5 * LEASE_MS);
    expect(Date.now() - stoppedAt).toBeLessThan(LEASE_MS + 1000);
    expect(refusal?.code).toBe("57P03");
    expect(refusal?.message).toContain("the shared directory's authority, a majority of regions (");
    // Its own row says so.
    const self = (await peers(client)).find((row) => row["this_proxy"] === "t");
    expect(self?.["fenced"]).toBe("t");
    expect(["lapsing", "lapsed"]).toContain(self?.["lease"]);
    // Tables outside the directory still run.
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await startRegion(1);
    await until(
      async () =>
        client
          .query("SELECT name FROM users WHERE tenant_id = 'alice'")
          .then((result) => result.rows[0]?.name === "a")
          .catch(() => false),
      10_000,
    );
    await startRegion(2);
  });
});
