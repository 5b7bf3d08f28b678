import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { txnSection } from "./support/txn-data-dir.js";

/*
 * Passthrough for roles whose stored secret is an MD5 hash, against real PostgreSQL 15 with real
 * clients: the proxy reads the hash from the home region, challenges the client with MD5, and logs
 * in to the backend as the role with that hash. Roles without a password and unknown roles get the
 * same refusal; a backend that asks an MD5-stored role for SCRAM gets a clear error.
 */

const run = promisify(execFile);
const PSQL = existsSync("/usr/lib/postgresql/15/bin/psql") ? "/usr/lib/postgresql/15/bin/psql" : "psql";
const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

const MALLORY_PASSWORD = "mallory-secret";
const ALICE_PASSWORD = "alice-secret";

let cluster: PgCluster;
/** method = "md5" with passthrough: MD5-stored roles get MD5, SCRAM-stored ones SCRAM. */
let md5Proxy: RunningProxy;
/** method = "scram-sha-256" with passthrough: an MD5 hash cannot be checked. */
let scramProxy: RunningProxy;
let dir: string;

function toml(port: number, auth: string, node: string): string {
  return `[server]
host = "127.0.0.1"
port = 0
node = "${node}"

[[topology.regions]]
id = "eu"
home = true
primary = { host = "127.0.0.1", port = ${port}, database = "postgres", user = "postgres" }

[routing]
default_placement = { placement = "pinned" }
${txnSection()}
[auth]
${auth}
`;
}

function start(text: string): Promise<RunningProxy> {
  return startProxy({
    config: parseConfig(text, "passthrough-md5.toml"),
    directory: new MemoryDirectory(),
    logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
    // Failed logins are answered without the growing delay, so the test does not wait it out.
    security: { sleep: async () => undefined },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "geo-passthrough-md5-"));
  cluster = await startCluster({
    count: 1,
    hba: [
      "host all mallory,nopass 127.0.0.1/32 md5",
      // Stored as MD5 but asked for SCRAM by the server: no login can be made from the hash.
      "host all hashonly 127.0.0.1/32 scram-sha-256",
      "host all alice 127.0.0.1/32 scram-sha-256",
    ],
    initSql: `
      SET password_encryption = 'scram-sha-256';
      CREATE ROLE alice LOGIN PASSWORD '${ALICE_PASSWORD}';
      SET password_encryption = 'md5';
      CREATE ROLE mallory LOGIN PASSWORD '${MALLORY_PASSWORD}';
      CREATE ROLE hashonly LOGIN PASSWORD 'hashonly-secret';
      CREATE ROLE nopass LOGIN;
    `,
  });
  const port = cluster.servers[0]!.port;
  // Two proxies over one server at once: each its own node name (docs/transactions.md).
  md5Proxy = await start(toml(port, `method = "md5"\npassthrough = true`, "md5-proxy"));
  scramProxy = await start(toml(port, `method = "scram-sha-256"\npassthrough = true`, "scram-proxy"));
}, 60_000);

afterAll(async () => {
  await md5Proxy?.close({ timeoutMs: 200 });
  await scramProxy?.close({ timeoutMs: 200 });
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  readonly rows?: unknown[];
  readonly code?: string;
  readonly message?: string;
  readonly hint?: string;
}

/** node-postgres: log in through the proxy and run one query, or the error on the way. */
async function viaPg(proxy: RunningProxy, user: string, password: string, sql: string): Promise<Outcome> {
  const client = new pg.Client({ host: "127.0.0.1", port: proxy.port, user, password, database: "postgres" });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const result = await client.query(sql);
    return { rows: result.rows };
  } catch (error) {
    const e = error as { code?: string; message: string; hint?: string };
    return { code: e.code ?? "none", message: e.message, ...(e.hint === undefined ? {} : { hint: e.hint }) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function viaPsql(
  proxy: RunningProxy,
  user: string,
  password: string,
  sql: string,
): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await run(
      PSQL,
      [
        `host=127.0.0.1 port=${proxy.port} dbname=postgres user=${user} sslmode=disable`,
        "-X",
        "-At",
        "-c",
        sql,
      ],
      { env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: "10" }, timeout: 20_000 },
    );
    return { ok: true, out: stdout.trim() };
  } catch (error) {
    return { ok: false, out: String((error as { stderr?: string }).stderr ?? error) };
  }
}

describe("passthrough of a role stored as an MD5 hash (method = md5)", () => {
  it("logs node-postgres in with the right password and reaches the backend as that role", async () => {
    // The server asks mallory for md5 (pg_hba) and the proxy holds no password for it: only the
    // stored hash can have logged that backend connection in.
    const outcome = await viaPg(md5Proxy, "mallory", MALLORY_PASSWORD, "SELECT session_user AS who");
    expect(outcome).toEqual({ rows: [{ who: "mallory" }] });
  });

  it("logs psql in with the right password", async () => {
    expect(await viaPsql(md5Proxy, "mallory", MALLORY_PASSWORD, "SELECT current_user")).toEqual({
      ok: true,
      out: "mallory",
    });
  });

  it("refuses a wrong password with 28P01, from node-postgres and from psql", async () => {
    const outcome = await viaPg(md5Proxy, "mallory", "not-it", "SELECT 1");
    expect(outcome.code).toBe("28P01");
    const psql = await viaPsql(md5Proxy, "mallory", "not-it", "SELECT 1");
    expect(psql.ok).toBe(false);
    expect(psql.out).toContain('password authentication failed for user "mallory"');
  });

  it("refuses a role without a password exactly as an unknown role, with a hint that says why", async () => {
    const nopass = await viaPg(md5Proxy, "nopass", "anything", "SELECT 1");
    const ghost = await viaPg(md5Proxy, "ghost", "anything", "SELECT 1");
    expect(nopass.code).toBe("28P01");
    expect(ghost.code).toBe("28P01");
    expect(nopass.message?.replace("nopass", "<role>")).toBe(ghost.message?.replace("ghost", "<role>"));
    expect(nopass.hint).toBe(ghost.hint);
    expect(nopass.hint).toMatch(
      /no password stored.*give the role a password, or list it under \[auth\] users/,
    );
    const psql = await viaPsql(md5Proxy, "nopass", "anything", "SELECT 1");
    expect(psql.ok).toBe(false);
    expect(psql.out).toContain('password authentication failed for user "nopass"');
  });

  it("still logs a SCRAM-stored role in with SCRAM and passes its keys through", async () => {
    expect(await viaPg(md5Proxy, "alice", ALICE_PASSWORD, "SELECT current_user AS who")).toEqual({
      rows: [{ who: "alice" }],
    });
    expect(await viaPsql(md5Proxy, "alice", ALICE_PASSWORD, "SELECT current_user")).toEqual({
      ok: true,
      out: "alice",
    });
  });

  it("says the MD5 hash cannot answer when the backend asks the role for SCRAM (08001)", async () => {
    const outcome = await viaPg(md5Proxy, "hashonly", "hashonly-secret", "SELECT 1");
    expect(outcome.code).toBe("08001");
    expect(outcome.message).toMatch(
      /asks role "hashonly" for SCRAM-SHA-256 authentication, which cannot be answered from the role's MD5 hash/,
    );
  });
});

describe("passthrough under method = scram-sha-256", () => {
  it("refuses an MD5-stored role as it refuses an unknown one (28P01), and serves a SCRAM-stored one", async () => {
    const mallory = await viaPg(scramProxy, "mallory", MALLORY_PASSWORD, "SELECT 1");
    const ghost = await viaPg(scramProxy, "ghost", MALLORY_PASSWORD, "SELECT 1");
    expect(mallory.code).toBe("28P01");
    expect(mallory.message?.replace("mallory", "<role>")).toBe(ghost.message?.replace("ghost", "<role>"));
    expect(await viaPg(scramProxy, "alice", ALICE_PASSWORD, "SELECT current_user AS who")).toEqual({
      rows: [{ who: "alice" }],
    });
  });
});

describe("a contradictory [auth] at start", () => {
  it("refuses trust with passwords in [auth] users: exit 78 and one line naming file, field and choices", async () => {
    const file = join(dir, "trust-with-passwords.toml");
    writeFileSync(
      file,
      toml(
        cluster.servers[0]!.port,
        `method = "trust"\nusers = [{ name = "app", password = "app-secret" }]`,
        "trust-proxy",
      ),
    );
    const failed = await run(process.execPath, ["--import", "tsx", CLI, "serve", "--config", file], {
      timeout: 30_000,
    }).then(
      () => null,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(78);
    const lines = (failed?.stderr ?? "").trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${file}:`);
    expect(lines[0]).toContain("auth.method");
    expect(lines[0]).toContain('method "trust" checks no password');
    expect(lines[0]).toContain("(valid: scram-sha-256, md5)");
  });
});
