import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { encodeBind, encodeExecute, encodeParse, encodeStartupMessage, encodeSync } from "@geo/proto";
import pg from "pg";
import postgres from "postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startProxy } from "../src/index.js";
import { REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { WireClient } from "./support/wire.js";

const EXTRA_SCHEMA = `
CREATE TABLE tickets (
  tenant_id text NOT NULL,
  code      text NOT NULL,
  CONSTRAINT tickets_code_key UNIQUE (code) DEFERRABLE INITIALLY DEFERRED
);
CREATE TABLE settings (name text PRIMARY KEY, value text NOT NULL);`;

const logDir = mkdtempSync(join(tmpdir(), "geo-distributed-"));

const EXTRA_TOML = `
[[tables]]
table = "tickets"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "settings"
placement = "global_replicated"
writer = "us-east"

[txn]
log_path = "${join(logDir, "decisions.log")}"
`;

let regions: RealRegions;
let client: pg.Client;

beforeAll(async () => {
  regions = await startRealRegions(EXTRA_TOML);
  for (const region of REGIONS) await regions.direct[region].query(EXTRA_SCHEMA);
  await regions.reference.query(EXTRA_SCHEMA);
  client = new pg.Client({ host: "127.0.0.1", port: regions.proxy.port, user: "postgres", database: "shop" });
  await client.connect();
});

afterAll(async () => {
  await client?.end().catch(() => undefined);
  await regions?.close();
});

afterEach(async () => {
  // Whatever a test did, no transaction may stay prepared in any region.
  for (const region of REGIONS) {
    const prepared = await regions.direct[region].query("SELECT gid FROM pg_prepared_xacts");
    expect(prepared.rows, region).toEqual([]);
  }
});

async function usersIn(region: RegionName, key: string, id: number): Promise<string[]> {
  const result = await regions.direct[region].query(
    "SELECT name FROM users WHERE tenant_id = $1 AND id = $2",
    [key, id],
  );
  return result.rows.map((row) => row.name as string);
}

async function snapshot(db: pg.Client): Promise<string> {
  const result = await db.query(
    "SELECT tenant_id, id, name, age FROM users WHERE id < 100 OR id >= 200 ORDER BY tenant_id, id",
  );
  return JSON.stringify(result.rows);
}

async function everyRegion(): Promise<string> {
  const rows: unknown[] = [];
  for (const region of REGIONS) {
    const result = await regions.direct[region].query(
      "SELECT tenant_id, id, name, age FROM users WHERE id < 100 OR id >= 200",
    );
    rows.push(...result.rows);
  }
  rows.sort((a, b) => {
    const x = a as { tenant_id: string; id: string };
    const y = b as { tenant_id: string; id: string };
    return x.tenant_id < y.tenant_id ? -1 : x.tenant_id > y.tenant_id ? 1 : Number(x.id) - Number(y.id);
  });
  return JSON.stringify(rows);
}

describe("a transaction block writing in several regions", () => {
  it("commits in two phases at COMMIT and sees its own writes in each region before", async () => {
    await client.query("BEGIN");
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 100, 'a-100')");
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 100, 'b-100')");
    const alice = await client.query("SELECT name FROM users WHERE tenant_id = 'alice' AND id = 100");
    const bob = await client.query("SELECT name FROM users WHERE tenant_id = 'bob' AND id = 100");
    expect([alice.rows, bob.rows]).toEqual([[{ name: "a-100" }], [{ name: "b-100" }]]);
    // Nothing is visible outside the block before COMMIT.
    expect(await usersIn("eu-west", "alice", 100)).toEqual([]);
    const commit = await client.query("COMMIT");
    expect(commit.command).toBe("COMMIT");
    expect(await usersIn("eu-west", "alice", 100)).toEqual(["a-100"]);
    expect(await usersIn("us-east", "bob", 100)).toEqual(["b-100"]);
  });

  it("rolls back every region at ROLLBACK", async () => {
    await client.query("BEGIN");
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 101, 'a-101')");
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('chandra', 101, 'c-101')");
    await client.query("ROLLBACK");
    expect(await usersIn("eu-west", "alice", 101)).toEqual([]);
    expect(await usersIn("ap-south", "chandra", 101)).toEqual([]);
  });

  it("commits only the regions written in two phases and ends the regions only read", async () => {
    await client.query("BEGIN");
    await client.query("SELECT count(*) FROM users WHERE tenant_id = 'chandra'");
    await client.query("UPDATE users SET age = 61 WHERE tenant_id = 'alice' AND id = 1");
    await client.query("UPDATE users SET age = 62 WHERE tenant_id = 'bob' AND id = 1");
    await client.query("COMMIT");
    const ages = await Promise.all([
      regions.direct["eu-west"].query("SELECT age FROM users WHERE tenant_id = 'alice' AND id = 1"),
      regions.direct["us-east"].query("SELECT age FROM users WHERE tenant_id = 'bob' AND id = 1"),
    ]);
    expect(ages.map((result) => result.rows[0].age)).toEqual([61, 62]);
    await regions.reference.query(
      "UPDATE users SET age = CASE tenant_id WHEN 'alice' THEN 61 ELSE 62 END WHERE tenant_id IN ('alice', 'bob') AND id = 1",
    );
    const status = await client.query("SELECT 1 AS one");
    expect(status.rows).toEqual([{ one: 1 }]);
  });

  it("gives the client the region's 23505 when PREPARE is refused and commits nothing anywhere", async () => {
    await regions.direct["us-east"].query("INSERT INTO tickets (tenant_id, code) VALUES ('bob', 'T-1')");
    await client.query("BEGIN");
    await client.query("INSERT INTO tickets (tenant_id, code) VALUES ('alice', 'T-2')");
    await client.query("INSERT INTO tickets (tenant_id, code) VALUES ('bob', 'T-1')");
    const error = await client
      .query("COMMIT")
      .catch((e: unknown) => e as { code?: string; constraint?: string });
    expect(error).toMatchObject({ code: "23505", constraint: "tickets_code_key" });
    const alice = await regions.direct["eu-west"].query("SELECT code FROM tickets");
    const bob = await regions.direct["us-east"].query("SELECT code FROM tickets");
    expect([alice.rows, bob.rows]).toEqual([[], [{ code: "T-1" }]]);
    // The session is usable and outside any block afterwards.
    const after = await client.query("SELECT count(*)::int AS n FROM tickets WHERE tenant_id = 'alice'");
    expect(after.rows).toEqual([{ n: 0 }]);
  });

  it("commits a query string whose statements write in two regions as one transaction", async () => {
    await client.query(
      "INSERT INTO users (tenant_id, id, name) VALUES ('alice', 102, 'a-102'); INSERT INTO users (tenant_id, id, name) VALUES ('chandra', 102, 'c-102')",
    );
    expect(await usersIn("eu-west", "alice", 102)).toEqual(["a-102"]);
    expect(await usersIn("ap-south", "chandra", 102)).toEqual(["c-102"]);
  });
});

describe("one statement writing in several regions", () => {
  it("splits a multi-key INSERT by region, returning rows in VALUES order and counting them all", async () => {
    const sql = `INSERT INTO users (tenant_id, id, name) VALUES
      ('bob', 200, 'b-200'), ('alice', 200, 'a-200'), ('chandra', 200, 'c-200'), ('alice', 201, 'a-201')
      RETURNING tenant_id, id, name`;
    const through = await client.query(sql);
    const reference = await regions.reference.query(sql);
    expect(through.command).toBe("INSERT");
    expect(through.rowCount).toBe(4);
    expect(through.rows).toEqual(reference.rows);
    expect(through.rows.map((row) => row.name)).toEqual(["b-200", "a-200", "c-200", "a-201"]);
    expect(await usersIn("eu-west", "alice", 201)).toEqual(["a-201"]);
    expect(await usersIn("us-east", "alice", 201)).toEqual([]);
    expect(await usersIn("ap-south", "chandra", 200)).toEqual(["c-200"]);
  });

  it("sends UPDATE without a key to every region and sums the rows it changed", async () => {
    const sql = "UPDATE users SET age = age + 1 WHERE age > 40 AND (id < 100 OR id >= 200)";
    const through = await client.query(sql);
    const reference = await regions.reference.query(sql);
    expect(through.command).toBe("UPDATE");
    expect(through.rowCount).toBe(reference.rowCount);
    expect(reference.rowCount).toBeGreaterThan(1);
    expect(await everyRegion()).toEqual(await snapshot(regions.reference));
  });

  it("sends DELETE without a key to every region and sums the rows it deleted", async () => {
    const sql = "DELETE FROM users WHERE id >= 200";
    const through = await client.query(sql);
    const reference = await regions.reference.query(sql);
    expect(through.command).toBe("DELETE");
    expect(through.rowCount).toBe(4);
    expect(through.rowCount).toBe(reference.rowCount);
    expect(await everyRegion()).toEqual(await snapshot(regions.reference));
  });

  it("joins a multi-region statement inside a block and rolls it back with the block", async () => {
    await client.query("BEGIN");
    const inserted = await client.query(
      "INSERT INTO users (tenant_id, id, name) VALUES ('alice', 300, 'a'), ('bob', 300, 'b')",
    );
    expect(inserted.rowCount).toBe(2);
    const seen = await client.query("SELECT count(*)::int AS n FROM users WHERE id = 300");
    expect(seen.rows).toEqual([{ n: 2 }]);
    await client.query("ROLLBACK");
    expect(await usersIn("eu-west", "alice", 300)).toEqual([]);
    expect(await usersIn("us-east", "bob", 300)).toEqual([]);
  });

  it("fails the whole statement when one region rejects its rows, committing none", async () => {
    const error = await client
      .query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 400, 'a'), ('bob', 1, 'duplicate')")
      .catch((e: unknown) => e as { code?: string });
    expect(error).toMatchObject({ code: "23505" });
    expect(await usersIn("eu-west", "alice", 400)).toEqual([]);
  });
});

describe("replicated tables", () => {
  it("writes a table without a writer in every region in one two-phase commit", async () => {
    const result = await client.query("INSERT INTO currencies (code, name, digits) VALUES ('JPY', 'Yen', 0)");
    expect(result.rowCount).toBe(1);
    for (const region of REGIONS) {
      const rows = await regions.direct[region].query("SELECT name FROM currencies WHERE code = 'JPY'");
      expect(rows.rows, region).toEqual([{ name: "Yen" }]);
    }
  });

  it("writes a table with a writer there alone and reads it back from the writer afterwards", async () => {
    const session = new pg.Client({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    await session.connect();
    try {
      await session.query("INSERT INTO settings (name, value) VALUES ('mode', 'fast')");
      const us = await regions.direct["us-east"].query("SELECT value FROM settings");
      const eu = await regions.direct["eu-west"].query("SELECT value FROM settings");
      expect([us.rows, eu.rows]).toEqual([[{ value: "fast" }], []]);
      const read = await session.query("SELECT value FROM settings WHERE name = 'mode'");
      expect(read.rows).toEqual([{ value: "fast" }]);
    } finally {
      await session.end();
    }
  });
});

describe("an extended-protocol batch outside a block", () => {
  it("commits writes in two regions at Sync as one distributed transaction", async () => {
    const wire = await WireClient.connect(regions.proxy.port);
    try {
      wire.send(encodeStartupMessage({ parameters: { user: "postgres", database: "shop" } }));
      await wire.untilReady();
      const insert = (key: string): Buffer[] => [
        encodeParse({
          name: "",
          sql: "INSERT INTO users (tenant_id, id, name) VALUES ($1, 500, $1)",
          paramTypes: [],
        }),
        encodeBind({
          portal: "",
          statement: "",
          paramFormats: [],
          params: [Buffer.from(key)],
          resultFormats: [],
        }),
        encodeExecute({ portal: "", maxRows: 0 }),
      ];
      wire.send(Buffer.concat([...insert("alice"), ...insert("bob"), ...insert("chandra"), encodeSync()]));
      const messages = await wire.untilReady();
      expect(messages.map((m) => m.type)).toEqual([
        "ParseComplete",
        "BindComplete",
        "CommandComplete",
        "ParseComplete",
        "BindComplete",
        "CommandComplete",
        "ParseComplete",
        "BindComplete",
        "CommandComplete",
        "ReadyForQuery",
      ]);
      expect(messages.at(-1)).toMatchObject({ status: "I" });
      expect(await usersIn("eu-west", "alice", 500)).toEqual(["alice"]);
      expect(await usersIn("us-east", "bob", 500)).toEqual(["bob"]);
      expect(await usersIn("ap-south", "chandra", 500)).toEqual(["chandra"]);
    } finally {
      wire.socket.destroy();
    }
  });

  it("rolls back every region of the batch when a statement in it fails", async () => {
    const wire = await WireClient.connect(regions.proxy.port);
    try {
      wire.send(encodeStartupMessage({ parameters: { user: "postgres", database: "shop" } }));
      await wire.untilReady();
      const insert = (key: string, id: number): Buffer[] => [
        encodeParse({
          name: "",
          sql: "INSERT INTO users (tenant_id, id, name) VALUES ($1, $2, $1)",
          paramTypes: [],
        }),
        encodeBind({
          portal: "",
          statement: "",
          paramFormats: [],
          params: [Buffer.from(key), Buffer.from(String(id))],
          resultFormats: [],
        }),
        encodeExecute({ portal: "", maxRows: 0 }),
      ];
      wire.send(
        Buffer.concat([
          ...insert("alice", 501),
          ...insert("bob", 501),
          ...insert("chandra", 1),
          encodeSync(),
        ]),
      );
      const messages = await wire.untilReady();
      expect(messages.some((m) => m.type === "ErrorResponse")).toBe(true);
      expect(messages.at(-1)).toMatchObject({ type: "ReadyForQuery", status: "I" });
      expect(await usersIn("eu-west", "alice", 501)).toEqual([]);
      expect(await usersIn("us-east", "bob", 501)).toEqual([]);
    } finally {
      wire.socket.destroy();
    }
  });
});

describe("one statement writing in several regions, with bound parameters (extended protocol)", () => {
  it("splits a parameterised multi-key INSERT, returning rows in VALUES order, committed at Sync", async () => {
    const result = await client.query(
      "INSERT INTO users (tenant_id, id, name) VALUES ($1, 700, $2), ($3, 700, $4), ($5, 700, $6) RETURNING tenant_id, name",
      ["chandra", "c-700", "alice", "a-700", "bob", "b-700"],
    );
    expect(result.command).toBe("INSERT");
    expect(result.rowCount).toBe(3);
    expect(result.rows).toEqual([
      { tenant_id: "chandra", name: "c-700" },
      { tenant_id: "alice", name: "a-700" },
      { tenant_id: "bob", name: "b-700" },
    ]);
    expect(await usersIn("ap-south", "chandra", 700)).toEqual(["c-700"]);
    expect(await usersIn("eu-west", "alice", 700)).toEqual(["a-700"]);
    expect(await usersIn("us-east", "bob", 700)).toEqual(["b-700"]);
  });

  it("sums a parameterised keyless UPDATE inside a block and rolls it back with the block", async () => {
    await client.query("BEGIN");
    const updated = await client.query("UPDATE users SET name = name || $1 WHERE id = $2", ["!", 700]);
    expect(updated.rowCount).toBe(3);
    await client.query("ROLLBACK");
    expect(await usersIn("eu-west", "alice", 700)).toEqual(["a-700"]);
    const removed = await client.query("DELETE FROM users WHERE id = $1", [700]);
    expect(removed.rowCount).toBe(3);
    expect(await usersIn("us-east", "bob", 700)).toEqual([]);
  });
});

describe("drivers", () => {
  it("runs a postgres.js multi-key insert with prepared statements and its transaction across regions", async () => {
    const sql = postgres(`postgres://postgres@127.0.0.1:${regions.proxy.port}/shop`, {
      max: 1,
      onnotice: () => undefined,
    });
    try {
      const rows = [
        { tenant_id: "bob", id: 900, name: "b-900" },
        { tenant_id: "alice", id: 900, name: "a-900" },
      ];
      const inserted = await sql`INSERT INTO users ${sql(rows)} RETURNING tenant_id, name`;
      expect(inserted.map((row) => ({ ...row }))).toEqual([
        { tenant_id: "bob", name: "b-900" },
        { tenant_id: "alice", name: "a-900" },
      ]);
      await sql.begin(async (tx) => {
        await tx`UPDATE users SET name = 'a-901' WHERE tenant_id = ${"alice"} AND id = 900`;
        await tx`UPDATE users SET name = 'b-901' WHERE tenant_id = ${"bob"} AND id = 900`;
      });
      expect(await usersIn("eu-west", "alice", 900)).toEqual(["a-901"]);
      expect(await usersIn("us-east", "bob", 900)).toEqual(["b-901"]);
      const removed = await sql`DELETE FROM users WHERE id = ${900}`;
      expect(removed.count).toBe(2);
    } finally {
      await sql.end();
    }
  });
});

describe("the table decision log", () => {
  it("records a two-phase commit's decision in the home region's table and completes it", async () => {
    const config = parseConfig(
      regionsToml(
        regions.cluster.servers.map((server) => server.port),
        `${EXTRA_TOML.replace(/\[txn\][\s\S]*$/, "")}
[server]
node = "tablelog"

[txn]
decision_log = "table"
log_table = "geo_txn_decisions"
`,
      ).replace(/\[server\]\nhost = "127.0.0.1"\nport = 0\n/, ""),
      "table-log.toml",
    );
    const second = await startProxy({
      config,
      directory: new MemoryDirectory(regions.entries),
      logLevel: "silent",
      port: 0,
    });
    const other = new pg.Client({ host: "127.0.0.1", port: second.port, user: "postgres", database: "shop" });
    try {
      await other.connect();
      await other.query("BEGIN");
      await other.query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 600, 'b-600')");
      await other.query("INSERT INTO users (tenant_id, id, name) VALUES ('chandra', 600, 'c-600')");
      await other.query("COMMIT");
      expect(await usersIn("us-east", "bob", 600)).toEqual(["b-600"]);
      expect(await usersIn("ap-south", "chandra", 600)).toEqual(["c-600"]);
      const decisions = await regions.direct["eu-west"].query(
        "SELECT gid, decision, participants, completed_at IS NOT NULL AS completed FROM geo_txn_decisions",
      );
      expect(decisions.rows).toHaveLength(1);
      expect(decisions.rows[0]).toMatchObject({ decision: "commit", completed: true });
      expect(decisions.rows[0].gid).toMatch(/^geo_tablelog_/);
      expect([...decisions.rows[0].participants].sort()).toEqual(["ap-south", "us-east"]);
    } finally {
      await other.end().catch(() => undefined);
      await second.close({ timeoutMs: 200 });
    }
  });
});

describe("console", () => {
  it("lists a prepared transaction recovery cannot settle yet in SHOW IN DOUBT, and drops it once settled", async () => {
    const gid = `geo_geoproxy_${Date.now().toString(36).padStart(9, "0")}0123456789abcdef`;
    const us = regions.direct["us-east"];
    await us.query("BEGIN");
    await us.query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 800, 'b-800')");
    await us.query(`PREPARE TRANSACTION '${gid}'`);
    // Undecided and within the grace period: recovery leaves it, and says so.
    await regions.proxy.runtime.txn.recoverNow();
    const listed = await client.query("SHOW IN DOUBT");
    expect(listed.rows).toEqual([expect.objectContaining({ gid, decision: "abort", regions: "us-east" })]);
    await us.query(`ROLLBACK PREPARED '${gid}'`);
    await regions.proxy.runtime.txn.recoverNow();
    expect((await client.query("SHOW IN DOUBT")).rows).toEqual([]);
  });

  it("answers SHOW IN DOUBT with no rows once every commit is settled", async () => {
    const result = await client.query("SHOW IN DOUBT");
    expect(result.rows).toEqual([]);
    expect(result.fields.map((field) => field.name)).toContain("gid");
  });
});
