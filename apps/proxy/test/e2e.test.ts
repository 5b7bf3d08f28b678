import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { encodeBind, encodeExecute, encodeParse, encodeStartupMessage, encodeSync } from "@geo/proto";
import { findPostgresBinaries, RawClient } from "@geo/testkit";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy } from "../src/index.js";
import { REGIONS, regionsToml } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { WireClient } from "./support/wire.js";

let regions: RealRegions;
const bindir = findPostgresBinaries().bindir;

beforeAll(async () => {
  regions = await startRealRegions("\n[pool]\nmax = 2\n");
});
afterAll(() => regions?.close());

function proxyUrl(): string {
  return `postgres://postgres@127.0.0.1:${regions.proxy.port}/shop`;
}

function run(
  program: string,
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

const KEYED_READS = [
  "SELECT * FROM users WHERE tenant_id = 'alice' ORDER BY id",
  "SELECT id, total, created_at FROM orders WHERE tenant_id = 'bob' ORDER BY id",
  "SELECT count(*), sum(total), avg(total) FROM orders WHERE tenant_id = 'chandra'",
  "SELECT u.name, o.total FROM users u JOIN orders o ON o.tenant_id = u.tenant_id AND o.user_id = u.id WHERE u.tenant_id = 'hiro' ORDER BY 1, 2",
  "SELECT * FROM currencies ORDER BY code",
  "SELECT action FROM eu_audit",
  "SELECT status, count(*) FROM orders WHERE tenant_id IN ('george') GROUP BY status ORDER BY status",
];

describe("psql", () => {
  it("runs a script through the proxy with the answers of one PostgreSQL holding every row", async () => {
    const script = `${KEYED_READS.join(";\n")};\nBEGIN;\nUPDATE users SET age = age + 1 WHERE tenant_id = 'jamal' AND id = 1;\nSELECT age FROM users WHERE tenant_id = 'jamal' AND id = 1;\nROLLBACK;\nSELECT age FROM users WHERE tenant_id = 'jamal' AND id = 1;\n`;
    const psql = join(bindir, "psql");
    const viaProxy = await run(
      psql,
      [
        "-X",
        "-A",
        "-t",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        "127.0.0.1",
        "-p",
        String(regions.proxy.port),
        "-U",
        "postgres",
        "-d",
        "shop",
      ],
      script,
    );
    const server = regions.cluster.servers[0]!;
    const direct = await run(
      psql,
      [
        "-X",
        "-A",
        "-t",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        "127.0.0.1",
        "-p",
        String(server.port),
        "-U",
        "postgres",
        "-d",
        "reference",
      ],
      script,
    );
    expect(viaProxy.stderr).toBe("");
    expect(viaProxy.code).toBe(0);
    expect(viaProxy.stdout).toBe(direct.stdout);
    expect(viaProxy.stdout.length).toBeGreaterThan(100);
  });

  it("shows the console's SHOW REGIONS in psql", async () => {
    const psql = join(bindir, "psql");
    const result = await run(psql, [
      "-X",
      "-A",
      "-t",
      "-h",
      "127.0.0.1",
      "-p",
      String(regions.proxy.port),
      "-U",
      "postgres",
      "-d",
      "shop",
      "-c",
      "SHOW REGIONS",
    ]);
    expect(result.code).toBe(0);
    for (const region of REGIONS) expect(result.stdout).toContain(region);
  });
});

describe("drivers", () => {
  it("answers postgres.js with prepared statements as one PostgreSQL would", async () => {
    const sql = postgres(proxyUrl(), { prepare: true, max: 2, onnotice: () => undefined });
    try {
      for (const [key] of regions.entries) {
        const viaProxy = await sql`SELECT id, name, age FROM users WHERE tenant_id = ${key} ORDER BY id`;
        const expected = await regions.reference.query(
          "SELECT id, name, age FROM users WHERE tenant_id = $1 ORDER BY id",
          [key],
        );
        expect(viaProxy.map((row) => ({ ...row }))).toEqual(
          expected.rows.map((row) => ({ ...row, id: String(row.id) })),
        );
      }
    } finally {
      await sql.end();
    }
  });

  it("answers postgres.js without prepared statements as one PostgreSQL would", async () => {
    const sql = postgres(proxyUrl(), { prepare: false, max: 2, onnotice: () => undefined });
    try {
      for (const [key] of regions.entries.slice(0, 6)) {
        const viaProxy =
          await sql`SELECT count(*)::int AS n, sum(total)::text AS total FROM orders WHERE tenant_id = ${key}`;
        const expected = await regions.reference.query(
          "SELECT count(*)::int AS n, sum(total)::text AS total FROM orders WHERE tenant_id = $1",
          [key],
        );
        expect(viaProxy.map((row) => ({ ...row }))).toEqual(expected.rows);
      }
      const everyRegion = await sql`SELECT count(*)::int AS n FROM users`;
      const everyRow = await regions.reference.query("SELECT count(*)::int AS n FROM users");
      expect(everyRegion.map((row) => ({ ...row }))).toEqual(everyRow.rows);
      const refused = await sql`SELECT * FROM users FOR UPDATE`.catch((error: unknown) => error);
      expect((refused as { code?: string }).code).toBe("0A000");
      expect((await sql`SELECT 1::int AS one`)[0]).toEqual({ one: 1 });
    } finally {
      await sql.end();
    }
  });

  it("answers node-postgres named and unnamed statements as one PostgreSQL would", async () => {
    const client = new pg.Client({ connectionString: proxyUrl() });
    await client.connect();
    try {
      for (const [key] of regions.entries) {
        const text =
          "SELECT id, total::text, status FROM orders WHERE tenant_id = $1 AND total > $2 ORDER BY id";
        const named = await client.query({ name: "orders-over", text, values: [key, 10] });
        const unnamed = await client.query(text, [key, 10]);
        const expected = await regions.reference.query(text, [key, 10]);
        expect(named.rows).toEqual(expected.rows);
        expect(unnamed.rows).toEqual(expected.rows);
        expect(named.fields.map((f) => [f.name, f.dataTypeID, f.tableID !== 0])).toEqual(
          expected.fields.map((f) => [f.name, f.dataTypeID, f.tableID !== 0]),
        );
      }
    } finally {
      await client.end();
    }
  });

  it("keeps a named statement prepared on its pooled connection, and prepares it again for a newer Parse", async () => {
    const text = "SELECT age FROM users WHERE tenant_id = $1 AND id = 1 /* kept */";
    const copies =
      "/* geo: region=us-east */ SELECT count(*)::int AS n, max(prepare_time)::text AS at FROM pg_prepared_statements WHERE statement LIKE '%/* kept */%' AND name LIKE 'geo_%'";
    const first = new pg.Client({ connectionString: proxyUrl() });
    await first.connect();
    let preparedAt: string;
    try {
      for (let i = 0; i < 3; i++) await first.query({ name: "kept", text, values: ["bob"] });
      const before = (await first.query(copies)).rows[0];
      expect(before.n).toBe(1);
      preparedAt = before.at;
      for (let i = 0; i < 3; i++) await first.query({ name: "kept", text, values: ["bob"] });
      expect((await first.query(copies)).rows[0]).toEqual({ n: 1, at: preparedAt });
    } finally {
      await first.end();
    }
    const second = new pg.Client({ connectionString: proxyUrl() });
    await second.connect();
    try {
      await second.query({ name: "kept", text, values: ["bob"] });
      const after = (await second.query(copies)).rows[0];
      expect(after.n).toBe(1);
      expect(after.at > preparedAt).toBe(true);
    } finally {
      await second.end();
    }
  });

  it("passes a row-limited portal through a part at a time (PortalSuspended)", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    client.send(encodeStartupMessage({ parameters: { user: "postgres", database: "shop" } }));
    await client.untilReady();
    client.send(
      Buffer.concat([
        encodeParse({
          name: "",
          sql: "SELECT id FROM orders WHERE tenant_id = $1 ORDER BY id",
          paramTypes: [],
        }),
        encodeBind({
          portal: "p",
          statement: "",
          paramFormats: [],
          params: [Buffer.from("bob")],
          resultFormats: [],
        }),
        encodeExecute({ portal: "p", maxRows: 2 }),
        encodeExecute({ portal: "p", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    const messages = await client.untilReady();
    expect(messages.map((m) => m.type)).toEqual([
      "ParseComplete",
      "BindComplete",
      "DataRow",
      "DataRow",
      "PortalSuspended",
      "DataRow",
      "DataRow",
      "DataRow",
      "CommandComplete",
      "ReadyForQuery",
    ]);
    client.close();
  });
});

describe("transactions", () => {
  it("commits a transaction in one region and reads another region inside it", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    await client.query("BEGIN");
    await client.query("UPDATE orders SET status = 'shipped' WHERE tenant_id = 'elena' AND id = 1");
    const other = await client.query("SELECT count(*) FROM orders WHERE tenant_id = 'bob'");
    expect(other.rows).toEqual([["5"]]);
    const commit = await client.query("COMMIT");
    expect(commit.tags).toEqual(["COMMIT"]);
    expect(commit.status).toBe("I");
    const direct = await regions.direct["eu-west"].query(
      "SELECT status FROM orders WHERE tenant_id = 'elena' AND id = 1",
    );
    expect(direct.rows).toEqual([{ status: "shipped" }]);
    await client.close();
  });

  it("runs a query string spanning regions statement by statement and rolls it all back on an error", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    const ok = await client.query(
      "SELECT name FROM users WHERE tenant_id = 'alice' AND id = 1; SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1",
    );
    expect(ok.rows).toEqual([["alice-1"], ["bob-1"]]);
    expect(ok.status).toBe("I");
    const failed = await client.query(
      "UPDATE users SET age = 99 WHERE tenant_id = 'farah' AND id = 2; SELECT 1 / 0 FROM users WHERE tenant_id = 'bob'",
    );
    expect(failed.error?.code).toBe("22012");
    expect(failed.status).toBe("I");
    const age = await regions.direct["ap-south"].query(
      "SELECT age FROM users WHERE tenant_id = 'farah' AND id = 2",
    );
    expect(age.rows[0].age).not.toBe(99);
    await client.close();
  });
});

describe("COPY and EXPLAIN", () => {
  it("routes COPY ... TO by the key inside it and answers one that spans regions from all of them", async () => {
    const psql = join(bindir, "psql");
    const sql = "COPY (SELECT id, total FROM orders WHERE tenant_id = 'ines' ORDER BY id) TO STDOUT";
    const viaProxy = await run(psql, [
      "-X",
      "-h",
      "127.0.0.1",
      "-p",
      String(regions.proxy.port),
      "-U",
      "postgres",
      "-d",
      "shop",
      "-c",
      sql,
    ]);
    const server = regions.cluster.servers[0]!;
    const direct = await run(psql, [
      "-X",
      "-h",
      "127.0.0.1",
      "-p",
      String(server.port),
      "-U",
      "postgres",
      "-d",
      "reference",
      "-c",
      sql,
    ]);
    expect(viaProxy.code).toBe(0);
    expect(viaProxy.stdout).toBe(direct.stdout);
    expect(viaProxy.stdout.split("\n").filter(Boolean)).toHaveLength(5);
    const whole = "COPY users (tenant_id, id, name) TO STDOUT";
    const everyRegion = await run(psql, [
      "-X",
      "-h",
      "127.0.0.1",
      "-p",
      String(regions.proxy.port),
      "-U",
      "postgres",
      "-d",
      "shop",
      "-c",
      whole,
    ]);
    const reference = await run(psql, [
      "-X",
      "-h",
      "127.0.0.1",
      "-p",
      String(server.port),
      "-U",
      "postgres",
      "-d",
      "reference",
      "-c",
      whole,
    ]);
    expect(everyRegion.code).toBe(0);
    const sorted = (out: string): string[] => out.split("\n").filter(Boolean).sort();
    expect(sorted(everyRegion.stdout)).toEqual(sorted(reference.stdout));
  });

  it("routes EXPLAIN to the region of the key it explains", async () => {
    const client = new pg.Client({ connectionString: proxyUrl() });
    await client.connect();
    try {
      const plan = await client.query("EXPLAIN (COSTS OFF) SELECT * FROM users WHERE tenant_id = 'bob'");
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/users/);
    } finally {
      await client.end();
    }
  });
});

describe("session settings", () => {
  it("forgets a SET whose transaction rolled back, as PostgreSQL does", async () => {
    const client = new pg.Client({ connectionString: proxyUrl() });
    await client.connect();
    try {
      const expectedDefault = (await regions.direct["us-east"].query("SHOW TimeZone")).rows[0].TimeZone;
      await client.query("BEGIN");
      await client.query("SET TimeZone = 'Asia/Tokyo'");
      expect((await client.query("SHOW TimeZone")).rows[0].TimeZone).toBe("Asia/Tokyo");
      await client.query("ROLLBACK");
      for (const key of ["alice", "bob", "chandra"]) {
        const r = await client.query(
          "SELECT current_setting('TimeZone') AS tz FROM users WHERE tenant_id = $1 AND id = 1",
          [key],
        );
        expect(r.rows[0].tz).toBe(expectedDefault);
      }
      await client.query("BEGIN");
      await client.query("SET TimeZone = 'Asia/Kolkata'");
      await client.query("COMMIT");
      const r = await client.query(
        "SELECT current_setting('TimeZone') AS tz FROM users WHERE tenant_id = 'chandra' AND id = 1",
      );
      expect(r.rows[0].tz).toBe("Asia/Kolkata");
    } finally {
      await client.end();
    }
  });

  it("keeps a client with a temporary table on the connection that holds it, until DISCARD ALL", async () => {
    const client = new pg.Client({ connectionString: proxyUrl() });
    await client.connect();
    try {
      await client.query("/* geo: region=eu-west */ CREATE TEMP TABLE scratch (x int)");
      await client.query("/* geo: region=eu-west */ INSERT INTO scratch VALUES (1), (2)");
      await client.query("SELECT * FROM users WHERE tenant_id = 'alice'");
      await client.query("SELECT * FROM users WHERE tenant_id = 'bob'");
      const rows = await client.query("/* geo: region=eu-west */ SELECT sum(x)::int AS s FROM scratch");
      expect(rows.rows[0].s).toBe(3);
      await client.query("DISCARD ALL");
      const gone = await client
        .query("/* geo: region=eu-west */ SELECT 1 FROM scratch")
        .catch((e: unknown) => e);
      expect((gone as { code?: string }).code).toBe("42P01");
    } finally {
      await client.end();
    }
  });

  it("follow a client onto every pooled connection and never reach another client", async () => {
    const a = new pg.Client({ connectionString: proxyUrl() });
    const b = new pg.Client({ connectionString: proxyUrl() });
    await a.connect();
    await b.connect();
    try {
      await a.query("SET TimeZone = 'Asia/Tokyo'");
      await a.query("SET search_path = pg_catalog, public");
      const expectedDefault = (await regions.direct["eu-west"].query("SHOW TimeZone")).rows[0].TimeZone;
      for (let round = 0; round < 4; round++) {
        for (const [key] of regions.entries.slice(0, 6)) {
          const q =
            "SELECT current_setting('TimeZone') AS tz, current_setting('search_path') AS sp FROM users WHERE tenant_id = $1 AND id = 1";
          const [ra, rb] = await Promise.all([a.query(q, [key]), b.query(q, [key])]);
          expect(ra.rows[0]).toEqual({ tz: "Asia/Tokyo", sp: "pg_catalog, public" });
          expect(rb.rows[0]).toEqual({ tz: expectedDefault, sp: '"$user", public' });
        }
      }
      await a.query("RESET TimeZone");
      const after = await a.query(
        "SELECT current_setting('TimeZone') AS tz FROM users WHERE tenant_id = 'bob' AND id = 1",
      );
      expect(after.rows[0].tz).toBe(expectedDefault);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it("pins a client that LISTENs to its connection and delivers notifications", async () => {
    const listener = new pg.Client({ connectionString: proxyUrl() });
    const notifier = new pg.Client({ connectionString: proxyUrl() });
    await listener.connect();
    await notifier.connect();
    try {
      const received = new Promise<string>((resolve) =>
        listener.on("notification", (n) => resolve(n.payload ?? "")),
      );
      await listener.query("LISTEN orders_changed");
      await notifier.query("NOTIFY orders_changed, 'hello'");
      await listener.query("SELECT 1");
      expect(await received).toBe("hello");
    } finally {
      await listener.end();
      await notifier.end();
    }
  });
});

describe("pool exhaustion", () => {
  it("answers a client that cannot get a connection with an error naming the pool, not a hang", async () => {
    const config = parseConfig(
      regionsToml(
        regions.cluster.servers.map((server) => server.port),
        "\n[pool]\nmax = 1\ncheckout_timeout_ms = 300\n",
        // A second proxy beside the suite's own: a node name of its own (docs/transactions.md).
      ).replace("[server]\n", '[server]\nnode = "small-pool"\n'),
      "small-pool.toml",
    );
    const small = await startProxy({
      config,
      directory: new MemoryDirectory(regions.entries),
      logLevel: "silent",
      port: 0,
    });
    const url = `postgres://postgres@127.0.0.1:${small.port}/shop`;
    const holder = new pg.Client({ connectionString: url });
    const waiter = new pg.Client({ connectionString: url });
    await holder.connect();
    await waiter.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM users WHERE tenant_id = 'bob'");
      const started = Date.now();
      const refused = await waiter
        .query("SELECT 1 FROM users WHERE tenant_id = 'george'")
        .catch((e: unknown) => e);
      expect(["57014", "53300"]).toContain((refused as { code?: string }).code);
      expect((refused as Error).message).toContain(`127.0.0.1:${regions.cluster.servers[1]!.port}`);
      expect(Date.now() - started).toBeLessThan(3000);
      // Other regions are unaffected, and the region serves again once the transaction ends.
      expect(
        (await waiter.query("SELECT 1 AS one FROM users WHERE tenant_id = 'alice' AND id = 1")).rows,
      ).toEqual([{ one: 1 }]);
      await holder.query("COMMIT");
      expect(
        (await waiter.query("SELECT 1 AS one FROM users WHERE tenant_id = 'george' AND id = 1")).rows,
      ).toEqual([{ one: 1 }]);
    } finally {
      await holder.end();
      await waiter.end();
      await small.close({ timeoutMs: 200 });
    }
  });
});

describe("bad clients", () => {
  it("closes a malformed client with 08P01 while a real driver keeps working", async () => {
    const good = new pg.Client({ connectionString: proxyUrl() });
    await good.connect();
    try {
      const bad = await WireClient.connect(regions.proxy.port);
      bad.send(encodeStartupMessage({ parameters: { user: "postgres" } }));
      await bad.untilReady();
      bad.send(Buffer.from([0x50, 0xff, 0xff, 0xff, 0xff]));
      expect(await bad.next()).toMatchObject({ type: "ErrorResponse", fields: { code: "08P01" } });
      await bad.waitClosed();
      const result = await good.query("SELECT name FROM users WHERE tenant_id = 'dmitri' AND id = 1");
      expect(result.rows).toEqual([{ name: "dmitri-1" }]);
    } finally {
      await good.end();
    }
  });
});

describe("pgbench", () => {
  it("runs keyed reads and writes through the proxy with no errors and every write in its region", async () => {
    const pgbench = join(bindir, "pgbench");
    const dir = mkdtempSync(join(tmpdir(), "geo-pgbench-"));
    const simpleScript = join(dir, "simple.sql");
    writeFileSync(
      simpleScript,
      "\\set k random(0, 9)\nBEGIN;\nUPDATE users SET age = age + 1 WHERE tenant_id = ':k' AND id = 1;\nSELECT age FROM users WHERE tenant_id = ':k' AND id = 1;\nEND;\n",
    );
    const extendedScript = join(dir, "extended.sql");
    writeFileSync(
      extendedScript,
      "\\set k random(0, 9)\nUPDATE users SET age = age + 1 WHERE tenant_id = :k::text AND id = 1;\nSELECT age FROM users WHERE tenant_id = :k::text AND id = 1;\n",
    );
    const sumAges = async () => {
      let total = 0;
      for (const region of REGIONS) {
        const r = await regions.direct[region].query(
          "SELECT coalesce(sum(age), 0)::int AS s FROM users WHERE tenant_id ~ '^[0-9]$' AND id = 1",
        );
        total += r.rows[0].s as number;
      }
      return total;
    };
    const before = await sumAges();
    const common = [
      "-n",
      "-h",
      "127.0.0.1",
      "-p",
      String(regions.proxy.port),
      "-U",
      "postgres",
      "-c",
      "4",
      "-t",
      "40",
    ];
    const simple = await run(pgbench, [...common, "-M", "simple", "-f", simpleScript, "shop"]);
    expect(simple.stderr).not.toMatch(/error|abort/i);
    expect(simple.code).toBe(0);
    expect(simple.stdout).toMatch(/number of transactions actually processed: 160\/160/);
    const prepared = await run(pgbench, [...common, "-M", "prepared", "-f", extendedScript, "shop"]);
    expect(prepared.stderr).not.toMatch(/error|abort/i);
    expect(prepared.code).toBe(0);
    expect(prepared.stdout).toMatch(/number of transactions actually processed: 160\/160/);
    expect(await sumAges()).toBe(before + 320);
    // Each key's row is still only in its own region.
    for (const region of REGIONS) {
      const r = await regions.direct[region].query(
        "SELECT count(*)::int AS n FROM users WHERE tenant_id ~ '^[0-9]$'",
      );
      expect(r.rows[0].n).toBe(
        regions.entries.filter(([k, home]) => /^[0-9]$/.test(k) && home === region).length * 3,
      );
    }
  }, 120_000);
});
