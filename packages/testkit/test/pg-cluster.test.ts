import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findPostgresBinaries,
  isPortOpen,
  type PgCluster,
  PostgresMissingError,
  startCluster,
} from "../src/index.js";

describe("startCluster", () => {
  let cluster: PgCluster;

  beforeAll(async () => {
    cluster = await startCluster({
      count: 3,
      settings: { application_name: "geo-testkit" },
      initSql: "CREATE TABLE seeded (id int); INSERT INTO seeded VALUES (42);",
    });
  });

  afterAll(async () => {
    await cluster.stop();
  });

  it("finds the PostgreSQL binaries and reports their major version", () => {
    const { bindir, version } = findPostgresBinaries();
    expect(existsSync(`${bindir}/initdb`)).toBe(true);
    expect(version).toBeGreaterThanOrEqual(13);
  });

  it("starts three servers on distinct ports in distinct folders", () => {
    expect(cluster.servers).toHaveLength(3);
    expect(new Set(cluster.servers.map((server) => server.port)).size).toBe(3);
    expect(new Set(cluster.servers.map((server) => server.dataDir)).size).toBe(3);
    for (const server of cluster.servers) {
      expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
    }
  });

  it("accepts node-postgres on every server with two-phase commit and logical WAL enabled", async () => {
    for (const server of cluster.servers) {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        const one = await client.query("SELECT 1 AS one");
        expect(one.rows).toEqual([{ one: 1 }]);
        const settings = await client.query(
          "SELECT current_setting('max_prepared_transactions') AS mpt, current_setting('wal_level') AS wal, current_setting('application_name') AS app",
        );
        expect(Number(settings.rows[0].mpt)).toBeGreaterThan(0);
        expect(settings.rows[0].wal).toBe("logical");
        const seeded = await client.query("SELECT id FROM seeded");
        expect(seeded.rows).toEqual([{ id: 42 }]);
      } finally {
        await client.end();
      }
    }
  });

  it("accepts postgres.js on every server and can prepare a transaction", async () => {
    for (const server of cluster.servers) {
      const sql = postgres(server.url, { max: 1, onnotice: () => {} });
      try {
        const [row] = await sql`SELECT version() AS version`;
        expect(row?.["version"]).toMatch(/^PostgreSQL \d+/);
        await sql.unsafe("BEGIN; INSERT INTO seeded VALUES (1); PREPARE TRANSACTION 'geo_probe'");
        await sql.unsafe("COMMIT PREPARED 'geo_probe'");
        const [count] = await sql`SELECT count(*)::int AS n FROM seeded`;
        expect(count?.["n"]).toBe(2);
      } finally {
        await sql.end();
      }
    }
  });

  it("crashes one server and starts it again with its prepared transaction intact", async () => {
    const server = cluster.servers[1]!;
    const before = new pg.Client({ connectionString: server.url });
    before.on("error", () => {});
    await before.connect();
    await before.query("BEGIN");
    await before.query("INSERT INTO seeded VALUES (7)");
    await before.query("PREPARE TRANSACTION 'survivor'");
    await cluster.stopServer(1);
    expect(await isPortOpen(server.port)).toBe(false);
    await expect(before.query("SELECT 1")).rejects.toThrow();
    await cluster.startServer(1);
    const after = new pg.Client({ connectionString: server.url });
    await after.connect();
    try {
      expect((await after.query("SELECT gid FROM pg_prepared_xacts")).rows).toEqual([{ gid: "survivor" }]);
      await after.query("COMMIT PREPARED 'survivor'");
      expect((await after.query("SELECT count(*)::int AS n FROM seeded WHERE id = 7")).rows).toEqual([
        { n: 1 },
      ]);
    } finally {
      await after.end();
    }
  });

  it("stops every server, closes its port and removes its folder", async () => {
    const { servers } = cluster;
    for (const server of servers) expect(await isPortOpen(server.port)).toBe(true);
    await cluster.stop();
    for (const server of servers) {
      expect(existsSync(server.dataDir)).toBe(false);
      expect(await isPortOpen(server.port)).toBe(false);
    }
  });
});

describe("startCluster failures", () => {
  it("reports the server log when a server cannot start", async () => {
    await expect(startCluster({ settings: { shared_buffers: "not-a-size" } })).rejects.toThrow(
      /shared_buffers/,
    );
  });

  it("says how to install PostgreSQL when the binaries are missing", async () => {
    const saved = process.env["GEO_PG_BINDIR"];
    process.env["GEO_PG_BINDIR"] = mkdtempSync(join(tmpdir(), "geo-no-pg-"));
    try {
      expect(() => findPostgresBinaries()).toThrow(PostgresMissingError);
      await expect(startCluster()).rejects.toThrow(/apt-get install -y postgresql/);
    } finally {
      rmSync(process.env["GEO_PG_BINDIR"], { recursive: true, force: true });
      if (saved === undefined) delete process.env["GEO_PG_BINDIR"];
      else process.env["GEO_PG_BINDIR"] = saved;
    }
  });
});

describe("startCluster with fixed ports", () => {
  it("starts each server on the port it was given", async () => {
    const probe = await import("node:net");
    const free = await new Promise<number>((resolve) => {
      const server = probe.createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
      });
    });
    await using cluster = await startCluster({ ports: [free] });
    expect(cluster.servers[0]?.port).toBe(free);
    expect(await isPortOpen(free)).toBe(true);
  });

  it("refuses a ports list that does not match the count", async () => {
    await expect(startCluster({ count: 2, ports: [1] })).rejects.toThrow(/ports names 1 port\(s\) for 2/);
  });
});
