import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { findPostgresBinaries, RawClient } from "@geo/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningDemo, startDemo } from "../scripts/demo.js";

let demo: RunningDemo;
let psqlPath: string;

beforeAll(async () => {
  const { bindir } = findPostgresBinaries();
  psqlPath = existsSync(join(bindir, "psql")) ? join(bindir, "psql") : "psql";
  demo = await startDemo({ ports: "random" });
});
afterAll(() => demo?.stop());

/**
 * Runs one statement through psql (simple query protocol): rows as `a|b|c` lines. Asynchronous,
 * because the proxy answering it runs in this process.
 */
function psql(
  sql: string,
  extra: readonly string[] = [],
): Promise<{ rows: string[]; stderr: string; status: number | null }> {
  const args = [
    "-X",
    "-q",
    "-A",
    "-t",
    "-h",
    demo.proxy.host,
    "-p",
    String(demo.proxy.port),
    "-U",
    "postgres",
    "-d",
    "shop",
  ];
  // A script of several lines goes through stdin, so psql sends each statement as a query of its own.
  const input = sql.includes("\n") ? ["-v", "ON_ERROR_STOP=1", "-f", "-"] : ["-c", sql];
  const child = spawn(psqlPath, [...args, ...extra, ...input], {
    env: { ...process.env, PGCONNECT_TIMEOUT: "10" },
  });
  child.stdin.end(sql.includes("\n") ? sql : "");
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
      resolve({ rows: stdout.split("\n").filter((line) => line !== ""), stderr, status }),
    );
  });
}

describe("the console through the proxy, in front of three PostgreSQL servers", () => {
  it("answers SHOW REGIONS over psql with the live topology", async () => {
    const { rows, status } = await psql("SHOW REGIONS");
    expect(status).toBe(0);
    const ports = new Map(demo.regions.map((region) => [region.region, region.port]));
    expect(rows).toEqual([
      `ap-south|no|ap-south|127.0.0.1:${ports.get("ap-south")}||up`,
      `eu-west|yes|eu-west|127.0.0.1:${ports.get("eu-west")}||up`,
      `us-east|no|us-east|127.0.0.1:${ports.get("us-east")}||up`,
    ]);
  });

  it("answers WHERE IS and ROUTE over postgres.js's extended protocol", async () => {
    const sql = postgres({
      host: demo.proxy.host,
      port: demo.proxy.port,
      user: "postgres",
      database: "shop",
      max: 1,
    });
    try {
      const where = await sql.unsafe("WHERE IS users chandra");
      expect(where.columns.map((column) => column.name)).toEqual(["table", "key", "region", "state"]);
      expect([...where]).toEqual([{ table: "users", key: "chandra", region: "ap-south", state: "resident" }]);
      const route = await sql.unsafe("ROUTE SELECT * FROM orders WHERE tenant_id = 'bob'");
      expect([...route]).toEqual([
        { field: "kind", value: "Select, ReadOnly, tables: orders" },
        { field: "plan", value: "one region: us-east (ReadOnly)" },
      ]);
      const error = await sql.unsafe("WHERE IS customers alice").catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: "42P01" });
      // The session stays usable after a console error.
      const [row] = await sql.unsafe("SELECT name FROM users WHERE tenant_id = 'chandra'");
      expect(row).toEqual({ name: "Chandra" });
    } finally {
      await sql.end();
    }
  });

  it("answers inside a transaction without ending it", async () => {
    const script = [
      "BEGIN;",
      "INSERT INTO users (tenant_id, id, name) VALUES ('alice', 99, 'Alice again');",
      "WHERE IS users alice;",
      "SELECT count(*) FROM users WHERE tenant_id = 'alice';",
      "ROLLBACK;",
      "SELECT count(*) FROM users WHERE tenant_id = 'alice';",
    ].join("\n");
    const { rows, stderr, status } = await psql(script);
    expect(stderr).toBe("");
    expect(status).toBe(0);
    expect(rows).toEqual(["users|alice|eu-west|resident", "2", "1"]);
  });

  it("shows each region's pool in SHOW POOLS once the proxy has used it", async () => {
    const { rows, status } = await psql("SHOW POOLS");
    expect(status).toBe(0);
    const byRegion = new Map(rows.map((line) => [line.split("|")[0], line.split("|")]));
    expect([...byRegion.keys()].sort()).toEqual(["ap-south", "eu-west", "us-east"]);
    for (const [region, columns] of byRegion) {
      const port = demo.regions.find((entry) => entry.region === region)!.port;
      expect(columns.slice(0, 5)).toEqual([region, "primary", `127.0.0.1:${port}`, "shop", "postgres"]);
      expect(Number(columns[8]), `total of ${region}`).toBeGreaterThanOrEqual(1);
      expect(Number(columns[13]), `checkouts of ${region}`).toBeGreaterThanOrEqual(1);
    }
  });

  it("answers a console error over psql with its SQLSTATE and hint", async () => {
    const { stderr, status } = await psql("SHOW PEERS", ["-v", "VERBOSITY=verbose", "-v", "ON_ERROR_STOP=1"]);
    expect(status).not.toBe(0);
    expect(stderr).toContain("55000");
    expect(stderr).toContain("HINT:  Set [directory_store] shared = true");
  });
});

describe("the demo's load, checked in each region directly", () => {
  it("puts each tenant's rows in its key's region only, replicated tables everywhere, pinned ones at home", async () => {
    const expected: Record<string, { users: string[]; orders: string[] }> = {
      "eu-west": { users: ["alice", "dmitri", "elena"], orders: ["alice", "alice"] },
      "us-east": { users: ["bob", "george"], orders: ["bob", "george"] },
      "ap-south": { users: ["chandra", "farah", "hiro"], orders: ["chandra", "hiro"] },
    };
    for (const region of demo.regions) {
      const client = await RawClient.connect({
        host: region.host,
        port: region.port,
        user: "postgres",
        database: "shop",
      });
      try {
        const users = await client.query("SELECT tenant_id FROM users ORDER BY tenant_id");
        const orders = await client.query("SELECT tenant_id FROM orders ORDER BY tenant_id, id");
        const counts = await client.query(
          "SELECT (SELECT count(*) FROM currencies), (SELECT count(*) FROM fx_rates), (SELECT count(*) FROM eu_audit)",
        );
        expect(
          users.rows.map((row) => row[0]),
          region.region,
        ).toEqual(expected[region.region]!.users);
        expect(
          orders.rows.map((row) => row[0]),
          region.region,
        ).toEqual(expected[region.region]!.orders);
        expect(counts.rows[0], region.region).toEqual(["4", "4", region.region === "eu-west" ? "2" : "0"]);
      } finally {
        await client.close();
      }
    }
  });
});
