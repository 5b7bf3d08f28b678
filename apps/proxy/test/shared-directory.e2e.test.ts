import { mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SharedTables } from "../src/directory/shared-tables.js";
import { REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";
import { ServerFreezer } from "./support/frozen-server.js";
import { ProxyChild } from "./support/proxy-child.js";
import {
  incrementUntilStopped,
  LEASE_MS,
  POLL_MS,
  peers,
  SHARED_STORE,
  SharedProxies,
  until,
} from "./support/shared-proxies.js";

// Several proxies as real processes over three real servers, sharing one directory whose
// authority is eu-west: each homed in another region, they agree on new keys, a move through one
// is held by the other, and losing the authority stops routing on geo-partitioned tables only.
const proxies = new SharedProxies("geo-shared-directory-");

beforeAll(() => proxies.start());
beforeEach(() => proxies.reset());
afterEach(() => proxies.stopProxies());
afterAll(() => proxies.close());

/** A proxy named `node`, homed in `home`, over the three servers with `store` as its [directory_store]. */
function launch(node: string, home: RegionName, store = SHARED_STORE): Promise<ProxyChild> {
  return proxies.launch(node, home, { store });
}

const connect = (port: number): Promise<pg.Client> => proxies.connect(port);

const regionsWith = (key: string): Promise<RegionName[]> => proxies.regionsWith(key);

describe("a directory shared by two proxies", () => {
  it("lists both proxies in SHOW PEERS with their homes and leases, and a stopped one leaves the list", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const b = await launch("us-proxy", "us-east");
    const [portA, portB] = await Promise.all([a.listening(), b.listening()]);
    const client = await connect(portA);
    await until(async () => (await peers(client)).length === 2, 5000);
    const rows = await peers(client);
    expect(rows.map((row) => [row["node"], row["home"], row["this_proxy"], row["lease"]])).toEqual([
      ["eu-proxy", "eu-west", "t", "held"],
      ["us-proxy", "us-east", "f", "held"],
    ]);
    expect(Number(rows[1]!["heartbeat_age_ms"])).toBeLessThan(LEASE_MS);
    await (await connect(portB)).end();
    await b.stop();
    await until(async () => (await peers(client)).length === 1, 5000);
  });

  it("starts three proxies at the same moment over a store none of them created yet", async () => {
    const started = await Promise.all(
      (["eu-west", "us-east", "ap-south"] as const).map((home, i) => launch(`together-${i}`, home)),
    );
    const ports = await Promise.all(started.map((child) => child.listening()));
    const client = await connect(ports[0]!);
    await until(async () => (await peers(client)).length === 3, 5000);
  });

  it("places a new key written through both proxies at once in one region, whichever home each has", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const b = await launch("us-proxy", "us-east");
    const [clientA, clientB] = await Promise.all([
      connect(await a.listening()),
      connect(await b.listening()),
    ]);
    const keys = Array.from({ length: 20 }, (_, i) => `fresh-${i}`);
    await Promise.all(
      keys.flatMap((key) => [
        clientA.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, 'a')", [key]),
        clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 2, 'b')", [key]),
      ]),
    );
    const homes = new Set<RegionName>();
    for (const key of keys) {
      const where = await regionsWith(key);
      expect(where, key).toHaveLength(1);
      homes.add(where[0]!);
      // Both proxies read both rows, wherever the key went.
      for (const client of [clientA, clientB]) {
        const { rows } = await client.query("SELECT id FROM users WHERE tenant_id = $1 ORDER BY id", [key]);
        expect(
          rows.map((row) => Number(row.id)),
          key,
        ).toEqual([1, 2]);
      }
    }
    expect([...homes].every((region) => region === "eu-west" || region === "us-east")).toBe(true);
    // The authority lists each key once, where its rows are.
    const { rows } = await proxies.direct["eu-west"].query(
      "SELECT key, region FROM geoproxy_directory WHERE key LIKE 'fresh-%' AND written_xid IS NOT NULL",
    );
    expect(rows).toHaveLength(keys.length);
    for (const row of rows) expect(await regionsWith(row.key)).toEqual([row.region]);
  });

  it("moves a key through one proxy while the other increments its row: every committed increment is in the sum", async () => {
    const a = await launch("mover", "eu-west");
    const b = await launch("writer", "us-east");
    const [clientA, clientB] = await Promise.all([
      connect(await a.listening()),
      connect(await b.listening()),
    ]);
    await clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ('counter', 1, '0')");
    const start = (await regionsWith("counter"))[0]!;
    const writer = incrementUntilStopped(clientB, "counter");
    const targets = REGIONS.filter((region) => region !== start);
    const moved: RegionName[] = [];
    for (const to of [...targets, start, targets[0]!]) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      const { rows } = await clientA.query(`RELOCATE counter TO '${to}'`);
      expect(rows.length).toBeGreaterThan(0);
      moved.push(to);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    const { committed, lost, refused } = await writer.stop();
    const where = await regionsWith("counter");
    expect(where).toEqual([moved.at(-1)]);
    const { rows } = await proxies.direct[where[0]!].query(
      "SELECT name FROM users WHERE tenant_id = 'counter'",
    );
    expect(lost).toBe(0);
    expect(committed).toBeGreaterThan(10);
    expect(Number(rows[0].name)).toBe(committed);
    // Held statements wait for the move rather than fail; only the documented retryable 40001 may appear.
    expect(refused.filter((code) => code !== "40001")).toEqual([]);
    // Both proxies now route the key where it went.
    for (const client of [clientA, clientB]) {
      const { rows: read } = await client.query("SELECT name FROM users WHERE tenant_id = 'counter'");
      expect(Number(read[0].name)).toBe(committed);
    }
  });

  it("refuses a second move of a key while one is announced, through the other proxy or the same one", async () => {
    const a = await launch("first-mover", "eu-west");
    const b = await launch("second-mover", "us-east");
    const c = await launch("sleeper", "ap-south");
    const [portA, portB] = await Promise.all([a.listening(), b.listening(), c.listening()]);
    const [clientA, againA, clientB] = [await connect(portA), await connect(portA), await connect(portB)];
    await clientA.query("INSERT INTO users (tenant_id, id, name) VALUES ('contested', 1, 'x')");
    const from = (await regionsWith("contested"))[0]!;
    const [to, other] = REGIONS.filter((region) => region !== from);
    await until(async () => (await peers(clientA)).length === 3, 5000);
    // The first move waits up to 1.5 x lease_ms for the frozen peer's confirmation: the window.
    process.kill(c.pid!, "SIGSTOP");
    const firstMove = clientA.query(`RELOCATE contested TO '${to}'`);
    await until(
      async () =>
        (await proxies.direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_moving"))
          .rows[0].n === 1,
      5000,
    );
    const throughB = await clientB.query(`RELOCATE contested TO '${other}'`).catch((error) => error);
    expect(throughB.code).toBe("55P03");
    expect(throughB.message).toContain("being moved by proxy first-mover");
    const throughA = await againA.query(`RELOCATE contested TO '${other}'`).catch((error) => error);
    expect(throughA.code).toBe("55P03");
    expect(throughA.message).toContain("another move through this proxy");
    await firstMove;
    expect(await regionsWith("contested")).toEqual([to]);
    // Nothing of the refused moves is left announced.
    expect(
      (await proxies.direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_moving"))
        .rows[0].n,
    ).toBe(0);
    expect((await clientB.query("SELECT name FROM users WHERE tenant_id = 'contested'")).rows).toHaveLength(
      1,
    );
  });

  it("keeps a key's rows in one region, where both proxies route it, when the two move it at the same time", async () => {
    const a = await launch("left", "eu-west");
    const b = await launch("right", "us-east");
    const [clientA, clientB] = [await connect(await a.listening()), await connect(await b.listening())];
    await clientA.query("INSERT INTO users (tenant_id, id, name) VALUES ('tug', 1, 'x')");
    await until(async () => (await peers(clientA)).length === 2, 5000);
    const outcomes: string[] = [];
    for (let round = 0; round < 12; round++) {
      const [toA, toB] = [REGIONS[round % 3]!, REGIONS[(round + 1) % 3]!];
      const results = await Promise.all([
        clientA.query(`RELOCATE tug TO '${toA}'`).then(
          () => "moved",
          (error: { code?: string }) => error.code ?? "?",
        ),
        clientB.query(`RELOCATE tug TO '${toB}'`).then(
          () => "moved",
          (error: { code?: string }) => error.code ?? "?",
        ),
      ]);
      outcomes.push(...results);
      const where = await regionsWith("tug");
      expect(where, `round ${round}`).toHaveLength(1);
      const { rows } = await proxies.direct["eu-west"].query(
        "SELECT region FROM geoproxy_directory WHERE key = 'tug'",
      );
      expect(rows[0].region, `round ${round}`).toBe(where[0]);
      await until(async () => {
        const [readA, readB] = await Promise.all([
          clientA.query("SELECT name FROM users WHERE tenant_id = 'tug'"),
          clientB.query("SELECT name FROM users WHERE tenant_id = 'tug'"),
        ]);
        return readA.rows.length === 1 && readB.rows.length === 1;
      }, 3000);
    }
    // A move that lost the race is refused with the documented 55P03, never half made.
    expect(outcomes.filter((outcome) => outcome !== "moved" && outcome !== "55P03")).toEqual([]);
    expect(outcomes).toContain("moved");
  });

  it("moves a key with a peer without waiting for the peer's next poll: the announcement wakes it", async () => {
    const slow = `shared = true\nauthority = "eu-west"\npoll_ms = 3000\nlease_ms = 9000\nhold_ms = 8000\n`;
    const a = await launch("waker", "eu-west", slow);
    const b = await launch("sleeper", "us-east", slow);
    const [clientA, clientB] = [await connect(await a.listening()), await connect(await b.listening())];
    await clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ('woken', 1, 'x')");
    await until(async () => (await peers(clientA)).length === 2, 10_000);
    const took: number[] = [];
    for (const to of ["ap-south", "eu-west", "us-east"] as const) {
      const started = Date.now();
      await clientA.query(`RELOCATE woken TO '${to}'`);
      took.push(Date.now() - started);
      // The peer let the key go as soon as the move was withdrawn, not a poll later.
      expect((await clientB.query("SELECT name FROM users WHERE tenant_id = 'woken'")).rows).toHaveLength(1);
    }
    took.sort((x, y) => x - y);
    // Polling alone, the peer would see each announcement 1.5 s later on average (up to 3 s).
    expect(took[1]).toBeLessThan(1000);
  });

  it("does not wait for a frozen peer past 1.5 x lease_ms, and the peer routes again only after catching up", async () => {
    const a = await launch("mover", "eu-west");
    const b = await launch("frozen", "us-east");
    const [clientA, clientB] = await Promise.all([
      connect(await a.listening()),
      connect(await b.listening()),
    ]);
    await clientA.query("INSERT INTO users (tenant_id, id, name) VALUES ('ice', 1, 'x')");
    expect((await clientB.query("SELECT name FROM users WHERE tenant_id = 'ice'")).rows).toHaveLength(1);
    const from = (await regionsWith("ice"))[0]!;
    const to = REGIONS.find((region) => region !== from)!;
    process.kill(b.pid!, "SIGSTOP");
    const started = Date.now();
    await clientA.query(`RELOCATE ice TO '${to}'`);
    const took = Date.now() - started;
    // It waited for the frozen peer's heartbeat to age past 1.5 x lease_ms, not for lock_timeout_ms.
    expect(took).toBeGreaterThanOrEqual(LEASE_MS * 1.5 - 2 * POLL_MS);
    expect(await regionsWith("ice")).toEqual([to]);
    process.kill(b.pid!, "SIGCONT");
    // Its first statement after waking is refused (lease lapsed) or answered from the new region.
    const after = await clientB
      .query("UPDATE users SET name = 'thawed' WHERE tenant_id = 'ice'")
      .then((result) => result.rowCount)
      .catch((error: { code?: string }) => error.code);
    expect([1, "57P03"]).toContain(after);
    await until(async () => {
      const result = await clientB
        .query("UPDATE users SET name = 'thawed' WHERE tenant_id = 'ice'")
        .catch(() => ({ rowCount: -1 }));
      return result.rowCount === 1;
    }, 5000);
    expect(
      (await proxies.direct[to].query("SELECT name FROM users WHERE tenant_id = 'ice'")).rows[0].name,
    ).toBe("thawed");
  });

  it("refuses statements on geo-partitioned tables with 57P03 while the authority is down, serves the rest, and resumes", async () => {
    const a = await launch("eu-proxy", "eu-west");
    const b = await launch("us-proxy", "us-east");
    const [clientA, clientB] = await Promise.all([
      connect(await a.listening()),
      connect(await b.listening()),
    ]);
    await clientB.query("INSERT INTO users (tenant_id, id, name) VALUES ('steady', 1, 'x')");
    // The servers commit asynchronously: what the authority holds is made durable before it stops.
    await proxies.direct["eu-west"].query("CHECKPOINT");
    // The test's own client to eu-west dies with the server; a new one is opened after.
    proxies.direct["eu-west"].on("error", () => undefined);
    await proxies.cluster.stopServer(0, "immediate");
    try {
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 2 * POLL_MS));
      const refusal = await clientB.query("SELECT name FROM users WHERE tenant_id = 'steady'").then(
        () => null,
        (error: { code?: string; message?: string; hint?: string }) => error,
      );
      expect(refusal?.code).toBe("57P03");
      expect(refusal?.message).toContain("region eu-west");
      expect(refusal?.hint).toContain("SHOW PEERS");
      // A statement on no geo-partitioned table still goes.
      expect((await clientB.query("SELECT 41 + 1 AS n")).rows[0].n).toBe(42);
      const lease = (await peers(clientB)).find((row) => row["this_proxy"] === "t");
      expect(lease?.["lease"]).not.toBe("held");
      const alerts = (await clientB.query("SHOW ALERTS")).rows.map((row) => [row.name, row.subject]);
      expect(alerts).toContainEqual(["directory_unreachable", "eu-west"]);
    } finally {
      await proxies.cluster.startServer(0);
      proxies.direct["eu-west"] = await proxies.connectServer(0);
    }
    await until(async () => {
      const result = await clientB
        .query("SELECT name FROM users WHERE tenant_id = 'steady'")
        .catch(() => ({ rows: [] as unknown[] }));
      return result.rows.length === 1;
    }, 10_000);
    const fresh = await connect(await a.listening());
    await until(async () => {
      const result = await fresh
        .query("SELECT name FROM users WHERE tenant_id = 'steady'")
        .catch(() => ({ rows: [] }));
      return result.rows.length === 1;
    }, 10_000);
    void clientA;
  });

  it("stops routing geo-partitioned tables within lease_ms of the authority freezing, and resumes once it answers", async () => {
    const b = await launch("us-proxy", "us-east");
    const client = await connect(await b.listening());
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('thaw', 1, 'x')");
    const where = (await regionsWith("thaw"))[0]!;
    expect(where).not.toBe("eu-west");
    const freezer = new ServerFreezer();
    await freezer.freeze(proxies.cluster.servers[0]!.dataDir);
    const frozenAt = Date.now();
    try {
      let refusal: { code?: string } | null = null;
      await until(async () => {
        refusal = await client.query("SELECT name FROM users WHERE tenant_id = 'thaw'").then(
          () => null,
          (error: { code?: string }) => error,
        );
        return refusal !== null;
      }, 4 * LEASE_MS);
      expect(refusal!.code).toBe("57P03");
      // No later than one lease (and a poll to notice) after the last visit that got through.
      expect(Date.now() - frozenAt).toBeLessThan(2 * LEASE_MS + 1000);
      // The console still answers at once: nothing waits on the frozen authority.
      const started = Date.now();
      expect((await peers(client)).find((row) => row["this_proxy"] === "t")?.["lease"]).not.toBe("held");
      expect(Date.now() - started).toBeLessThan(2 * LEASE_MS);
      // Frozen for several leases: every visit gives up on its own after lease_ms.
      await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
    } finally {
      freezer.resume();
    }
    await until(async () => {
      const result = await client
        .query("SELECT name FROM users WHERE tenant_id = 'thaw'")
        .catch(() => ({ rows: [] as unknown[] }));
      return result.rows.length === 1;
    }, 5000);
  });

  it("starts beside a long transaction on the authority's directory table: its tables are altered only when missing", async () => {
    const first = await launch("early", "eu-west");
    await first.listening();
    await first.stop();
    const reader = await proxies.connectServer(0);
    try {
      await reader.query("BEGIN; SELECT count(*) FROM geoproxy_directory");
      const late = await launch("late", "us-east");
      const client = await connect(await late.listening());
      await until(async () => (await peers(client)).some((row) => row["lease"] === "held"), 3000);
      await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('beside', 1, 'x')");
      expect((await client.query("SELECT name FROM users WHERE tenant_id = 'beside'")).rows).toHaveLength(1);
    } finally {
      await reader.query("ROLLBACK").catch(() => undefined);
      await reader.end();
    }
  });

  it("refuses to start a proxy whose authority is its own home while a live peer agrees in another region", async () => {
    const home = `shared = true\npoll_ms = ${POLL_MS}\nlease_ms = ${LEASE_MS}\n`;
    const first = await launch("eu-home", "eu-west", home);
    await first.listening();
    const second = await launch("us-home", "us-east", home);
    expect(await second.exitCode()).toBe(69);
    expect(second.stderr).toContain("eu-home (homed in eu-west) agrees in region eu-west");
    expect(second.stderr).toContain("Set the same [directory_store] authority");
  });

  it("stops routing in both proxies when two that agree in different regions come to run at once", async () => {
    const home = `shared = true\npoll_ms = ${POLL_MS}\nlease_ms = ${LEASE_MS}\n`;
    const first = await launch("eu-home", "eu-west", home);
    const clientA = await connect(await first.listening());
    // Frozen past 1.5 x lease_ms, its heartbeat is not live: the second one's start does not see it.
    process.kill(first.pid!, "SIGSTOP");
    await new Promise((resolve) => setTimeout(resolve, 1.5 * LEASE_MS + 2 * POLL_MS));
    const second = await launch("us-home", "us-east", home);
    const clientB = await connect(await second.listening());
    process.kill(first.pid!, "SIGCONT");
    for (const [client, other] of [
      [clientA, "us-home (homed in us-east) agrees in region us-east"],
      [clientB, "eu-home (homed in eu-west) agrees in region eu-west"],
    ] as const) {
      let refusal: { code?: string; message?: string; hint?: string } | null = null;
      await until(
        async () => {
          refusal = await client.query("SELECT name FROM users WHERE tenant_id = 'split'").then(
            () => null,
            (error) => (error.code === "55000" ? error : null),
          );
          return refusal !== null;
        },
        20 * POLL_MS + 5000,
      );
      expect(refusal!.message).toContain(other);
      expect(refusal!.hint).toContain("Set the same [directory_store] authority");
      const alerts = (await client.query("SHOW ALERTS")).rows.map((row) => row.name);
      expect(alerts).toContain("directory_split");
      expect((await client.query("SELECT 1 AS n")).rows[0].n).toBe(1);
    }
  });

  it("refuses a shared proxy beside one that owns the store alone, and one with a fixed directory beside shared ones", async () => {
    const alone = await launch("alone", "eu-west", "");
    await alone.listening();
    const shared = await launch("joiner", "us-east");
    expect(await shared.exitCode()).toBe(69);
    expect(shared.stderr).toContain('application_name "geoproxy store alone"');
    await alone.stop();

    const first = await launch("first", "eu-west");
    await first.listening();
    const data = await mkdtemp(join(proxies.folder, "fixed-"));
    const keys = join(data, "keys.tsv");
    await writeFile(keys, "alice\teu-west\n");
    const config = join(data, "geoproxy.toml");
    await writeFile(
      config,
      regionsToml(
        proxies.cluster.servers.map((s) => s.port),
        `\n[txn]\ndata_dir = "${data}"\n`,
      ).replace("[server]\n", '[server]\nnode = "fixed"\n'),
    );
    const fixed = new ProxyChild(["--config", config, "--directory", keys, "--log-level", "info"]);
    proxies.adopt(fixed);
    expect(await fixed.exitCode()).toBe(69);
    expect(fixed.stderr).toContain('application_name "geoproxy shared first"');
  });
});

describe("the authority's tables", () => {
  it("reads at the next visit only the rows its last snapshot did not see, while a transaction stays open", async () => {
    const first = await launch("creator", "eu-west");
    await first.listening();
    await first.stop();
    const tables = new SharedTables("geoproxy_directory");
    const authority = proxies.direct["eu-west"];
    const idle = await proxies.connectServer(0);
    try {
      // An open transaction with an id holds every later snapshot's xmin back.
      await idle.query("BEGIN; SELECT pg_current_xact_id()");
      await authority.query(tables.claimSql(["early"], "us-east"));
      const full = (await authority.query(tables.visitSql(null))).rows[0];
      expect(JSON.parse(full.entries)).toContainEqual(["early", "us-east", 0]);
      const quiet = (await authority.query(tables.visitSql(full.snapshot))).rows[0];
      expect(JSON.parse(quiet.entries)).toEqual([]);
      await authority.query(tables.claimSql(["later"], "ap-south"));
      const next = (await authority.query(tables.visitSql(quiet.snapshot))).rows[0];
      expect(JSON.parse(next.entries)).toEqual([["later", "ap-south", 0]]);
      // The open transaction's own write, committed after the snapshots that did not see it, is read.
      await idle.query(tables.claimSql(["slow"], "eu-west"));
      await idle.query("COMMIT");
      const last = (await authority.query(tables.visitSql(next.snapshot))).rows[0];
      expect(JSON.parse(last.entries)).toEqual([["slow", "eu-west", 0]]);
    } finally {
      await idle.end();
    }
  });
});
