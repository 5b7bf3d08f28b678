import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { txnSection } from "./support/txn-data-dir.js";

/*
 * Passthrough for roles with no password, against two real PostgreSQL 15 servers: a role that
 * [auth] users lists by name alone logs in without being asked for a password when the home
 * region's server lets it in without one (a trust entry in its pg_hba.conf), and reaches every
 * region as itself. Where a server asks it for a password, or it does not exist, the login fails
 * with that server's reason; a role with no password that is not listed is still refused as an
 * unknown one.
 */

const run = promisify(execFile);
const PSQL = existsSync("/usr/lib/postgresql/15/bin/psql") ? "/usr/lib/postgresql/15/bin/psql" : "psql";
const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

let cluster: PgCluster;
const proxies: RunningProxy[] = [];

function toml(method: string, users: string, node: string, passthrough = true): string {
  const [eu, us] = cluster.servers;
  return `[server]
host = "127.0.0.1"
port = 0
node = "${node}"

[[topology.regions]]
id = "eu"
home = true
primary = { host = "127.0.0.1", port = ${eu!.port}, database = "postgres", user = "postgres" }

[[topology.regions]]
id = "us"
primary = { host = "127.0.0.1", port = ${us!.port}, database = "postgres", user = "postgres" }

[routing]
default_placement = { placement = "pinned" }
${txnSection()}
[auth]
method = "${method}"
passthrough = ${passthrough}
users = [${users}]
`;
}

async function start(text: string): Promise<RunningProxy> {
  const proxy = await startProxy({
    config: parseConfig(text, "passthrough-no-password.toml"),
    directory: new MemoryDirectory(),
    logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
    security: { sleep: async () => undefined },
  });
  proxies.push(proxy);
  return proxy;
}

const LISTED = `{ name = "reporter" }, { name = "asked" }, { name = "ghost" }`;

beforeAll(async () => {
  cluster = await startCluster({
    count: 2,
    // Before the launcher's own trust lines: "asked" is asked for a password in every region.
    hba: ["host all asked 127.0.0.1/32 md5"],
    initSql: `
      CREATE ROLE reporter LOGIN;
      CREATE ROLE asked LOGIN;
      CREATE ROLE unlisted LOGIN;
      SET password_encryption = 'scram-sha-256';
      CREATE ROLE alice LOGIN PASSWORD 'alice-secret';
    `,
  });
}, 60_000);

afterAll(async () => {
  for (const proxy of proxies) await proxy.close({ timeoutMs: 200 });
  await cluster?.stop();
});

interface Outcome {
  readonly rows?: unknown[];
  readonly code?: string;
  readonly message?: string;
  readonly hint?: string;
}

async function viaPg(proxy: RunningProxy, user: string, sql: string, password?: string): Promise<Outcome> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: proxy.port,
    user,
    database: "postgres",
    ...(password === undefined ? {} : { password }),
  });
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

/** psql with -w: it never prompts, so a password request fails at once. */
async function viaPsql(
  proxy: RunningProxy,
  user: string,
  sql: string,
): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await run(
      PSQL,
      [
        `host=127.0.0.1 port=${proxy.port} dbname=postgres user=${user} sslmode=disable`,
        "-X",
        "-w",
        "-At",
        "-c",
        sql,
      ],
      { env: { ...process.env, PGPASSWORD: "", PGCONNECT_TIMEOUT: "10" }, timeout: 20_000 },
    );
    return { ok: true, out: stdout.trim() };
  } catch (error) {
    return { ok: false, out: String((error as { stderr?: string }).stderr ?? error) };
  }
}

for (const method of ["scram-sha-256", "md5"] as const) {
  describe(`passthrough of roles with no password (method = "${method}")`, () => {
    let proxy: RunningProxy;
    beforeAll(async () => {
      proxy = await start(toml(method, LISTED, `no-password-${method}`));
    });

    it("logs a listed role in without a password where the servers trust it, as itself in every region", async () => {
      expect(await viaPg(proxy, "reporter", "SELECT session_user AS who")).toEqual({
        rows: [{ who: "reporter" }],
      });
      // Another region's server, reached as the same role with no secret (its trust entry).
      expect(
        await viaPg(
          proxy,
          "reporter",
          "/* geo: region=us */ SELECT session_user AS who, current_setting('port') AS port",
        ),
      ).toEqual({ rows: [{ who: "reporter", port: String(cluster.servers[1]!.port) }] });
      expect(await viaPsql(proxy, "reporter", "SELECT current_user")).toEqual({ ok: true, out: "reporter" });
    });

    it("refuses a listed role the home server asks for a password, saying so (28000)", async () => {
      const outcome = await viaPg(proxy, "asked", "SELECT 1");
      expect(outcome.code).toBe("28000");
      expect(outcome.message).toMatch(
        /role "asked" logs in without a password, but region eu's server did not let it in without one/,
      );
      expect(outcome.hint).toMatch(/trust entry for the proxy's address/);
      const psql = await viaPsql(proxy, "asked", "SELECT 1");
      expect(psql.ok).toBe(false);
      expect(psql.out).toContain("did not let it in without one");
    });

    it("refuses a listed role that does not exist on the home server (28000)", async () => {
      const outcome = await viaPg(proxy, "ghost", "SELECT 1");
      expect(outcome.code).toBe("28000");
      expect(outcome.message).toMatch(
        /role "ghost" logs in without a password, but .*"ghost" does not exist/,
      );
    });

    it("still refuses a role with no password that is not listed, as an unknown role (28P01)", async () => {
      const unlisted = await viaPg(proxy, "unlisted", "SELECT 1", "anything");
      expect(unlisted.code).toBe("28P01");
      expect(unlisted.message).toBe('password authentication failed for user "unlisted"');
    });

    it("still asks a role with a password for it", async () => {
      expect(await viaPg(proxy, "alice", "SELECT current_user AS who", "alice-secret")).toEqual({
        rows: [{ who: "alice" }],
      });
      expect((await viaPg(proxy, "alice", "SELECT 1", "wrong")).code).toBe("28P01");
    });
  });
}

describe("a role listed by name alone without passthrough", () => {
  it("is refused at start by the CLI, naming the file, the user and the fix (exit 69, as the other security settings)", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "geo-no-password-"));
    try {
      const file = join(dir, "geoproxy.toml");
      writeFileSync(file, toml("scram-sha-256", `{ name = "reporter" }`, "no-password-cli", false));
      const failed = await run(process.execPath, ["--import", "tsx", CLI, "serve", "--config", file], {
        timeout: 30_000,
      }).catch((error: unknown) => error as { code: number; stderr: string });
      expect("code" in failed ? failed.code : 0).toBe(69);
      expect("stderr" in failed ? failed.stderr : "").toMatch(
        /geoproxy\.toml: auth\.users "reporter": no password or verifier is given; a role listed by name alone logs in without a password .* only with auth\.passthrough = true/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
