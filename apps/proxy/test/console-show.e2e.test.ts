import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { findPostgresBinaries } from "@geo/testkit";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

let regions: RealRegions;
let psqlPath: string;
let sql: postgres.Sql;

beforeAll(async () => {
  const { bindir } = findPostgresBinaries();
  psqlPath = existsSync(join(bindir, "psql")) ? join(bindir, "psql") : "psql";
  regions = await startRealRegions();
  sql = postgres({
    host: regions.proxy.host,
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
    max: 1,
    onnotice: () => undefined,
  });
});

afterAll(async () => {
  await sql?.end();
  await regions?.close();
});

/** One command through psql (simple query protocol): the header line, then rows as `a|b|c`. */
function psql(command: string): Promise<{ lines: string[]; stderr: string; status: number | null }> {
  const child = spawn(
    psqlPath,
    [
      ...["-X", "-q", "-A", "-P", "footer=off", "-P", "null=NULL"],
      ...["-h", regions.proxy.host, "-p", String(regions.proxy.port), "-U", "postgres", "-d", "postgres"],
      ...["-c", command],
    ],
    { env: { ...process.env, PGCONNECT_TIMEOUT: "10" } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (status) =>
      resolve({ lines: stdout.split("\n").filter((line) => line !== ""), stderr, status }),
    );
  });
}

function endpoint(index: number): string {
  return `127.0.0.1:${regions.cluster.servers[index]!.port}`;
}

describe("the SHOW commands through the proxy, in front of three PostgreSQL servers", () => {
  it("answers SHOW HEALTH over psql with every primary up", async () => {
    const { lines, status, stderr } = await psql("SHOW HEALTH");
    expect(status, stderr).toBe(0);
    expect(lines).toEqual([
      "region|home|role|endpoint|health|in_recovery|lag_bytes|drained",
      `ap-south|no|primary|${endpoint(2)}|up|NULL|NULL|no`,
      `eu-west|yes|primary|${endpoint(0)}|up|NULL|NULL|no`,
      `us-east|no|primary|${endpoint(1)}|up|NULL|NULL|no`,
    ]);
  });

  it("answers SHOW ALERTS and SHOW IN DOUBT with their columns and no rows when all is well", async () => {
    const alerts = await sql.unsafe("SHOW ALERTS");
    expect(alerts.columns.map((column) => column.name)).toEqual(["name", "subject", "message", "since"]);
    expect(alerts.length).toBe(0);
    const inDoubt = await sql.unsafe("show in doubt;");
    expect(inDoubt.columns.map((column) => column.name)).toEqual([
      "gid",
      "decision",
      "regions",
      "pending",
      "decided_at",
    ]);
    expect(inDoubt.length).toBe(0);
  });

  it("answers SHOW STATS over postgres.js with the statements it routed, per region and plan kind", async () => {
    const before = await sql.unsafe("SHOW STATS");
    expect(before.columns.map((column) => column.name)).toEqual([
      "kind",
      "name",
      "count",
      "p50_ms",
      "p95_ms",
      "p99_ms",
    ]);
    const count = (rows: readonly Record<string, string | null>[], kind: string, name: string): number =>
      Number(rows.find((row) => row["kind"] === kind && row["name"] === name)?.["count"] ?? Number.NaN);
    await sql`SELECT id FROM users WHERE tenant_id = ${"bob"}`;
    await sql`SELECT id FROM users WHERE tenant_id = ${"chandra"}`;
    await sql.unsafe("UPDATE users SET tenant_id = 'x' WHERE tenant_id = 'alice'").catch(() => undefined);
    const after = await sql.unsafe("SHOW STATS");
    expect(count(after, "region", "us-east") - count(before, "region", "us-east")).toBe(1);
    expect(count(after, "region", "ap-south") - count(before, "region", "ap-south")).toBe(1);
    expect(count(after, "plan", "refused") - count(before, "plan", "refused")).toBe(1);
    expect(count(after, "plan", "console") - count(before, "plan", "console")).toBe(1);
    expect(count(after, "error", "0A000")).toBe(1);
    const oneRegion = after.find((row) => row["kind"] === "plan" && row["name"] === "one_region");
    expect(Number(oneRegion?.["p50_ms"])).toBeGreaterThan(0);
    expect(Number(oneRegion?.["p99_ms"])).toBeGreaterThanOrEqual(Number(oneRegion?.["p50_ms"]));
  });

  it("answers SHOW DIRECTORY with a limit over psql, keys in order", async () => {
    const { lines, status, stderr } = await psql("SHOW DIRECTORY 3");
    expect(status, stderr).toBe(0);
    expect(lines).toEqual(["key|region", "0|eu-west", "1|us-east", "2|ap-south"]);
    const all = await sql.unsafe("SHOW DIRECTORY ALL");
    expect(all.length).toBe(regions.entries.length);
  });

  it("answers SHOW CLIENTS with every connection, its state and how many statements it ran", async () => {
    const other = new pg.Client({
      host: regions.proxy.host,
      port: regions.proxy.port,
      user: "postgres",
      database: "reporting",
    });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT id FROM users WHERE tenant_id = 'alice'");
      const rows = await sql.unsafe("SHOW CLIENTS");
      expect(rows.columns.map((column) => column.name)).toEqual([
        "id",
        "user",
        "database",
        "address",
        "state",
        "connected_at",
        "statements",
      ]);
      expect(rows.length).toBe(2);
      const reporting = rows.find((row) => row["database"] === "reporting");
      expect(reporting).toMatchObject({ user: "postgres", state: "idle in transaction", statements: "2" });
      expect(reporting?.["address"]).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(reporting?.["connected_at"]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00$/);
      const self = rows.find((row) => row["database"] === "postgres");
      expect(self?.["state"]).toBe("active");
    } finally {
      await other.end();
    }
  });
});
