import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { txnSection } from "./support/txn-data-dir.js";

/*
 * docs/security.md's table "Which logins work with which stored secret", cell by cell, against one
 * real PostgreSQL 15 server: for each [auth] of the table, a role stored as a SCRAM verifier, one
 * stored as an MD5 hash, one with no password, one that does not exist and, under passthrough,
 * one listed by name alone, each logging in through the proxy with node-postgres. An answer is
 * the role the backend saw (session_user) or the SQLSTATE of the refusal.
 */

const PASSWORDS: Readonly<Record<string, string>> = {
  alice: "alice-secret",
  mallory: "mallory-secret",
  nopass: "anything",
  ghost: "anything",
  reporter: "",
};

type Answer = string;

/** Each row of the table: its [auth] lines and the answer for each role. */
const ROWS: readonly { readonly auth: string; readonly answers: Readonly<Record<string, Answer>> }[] = [
  {
    auth: `method = "trust"`,
    answers: { alice: "as postgres", mallory: "as postgres", nopass: "as postgres", ghost: "as postgres" },
  },
  {
    auth: `method = "scram-sha-256"`,
    answers: { alice: "as postgres", mallory: "28P01", nopass: "28P01", ghost: "28P01" },
  },
  {
    auth: `method = "md5"`,
    answers: { alice: "as postgres", mallory: "as postgres", nopass: "28P01", ghost: "28P01" },
  },
  {
    auth: `method = "scram-sha-256"\npassthrough = true\nusers = [{ name = "reporter" }]`,
    answers: {
      alice: "as alice",
      mallory: "28P01",
      nopass: "28P01",
      ghost: "28P01",
      reporter: "as reporter",
    },
  },
  {
    auth: `method = "md5"\npassthrough = true\nusers = [{ name = "reporter" }]`,
    answers: {
      alice: "as alice",
      mallory: "as mallory",
      nopass: "28P01",
      ghost: "28P01",
      reporter: "as reporter",
    },
  },
];

let cluster: PgCluster;
const proxies: RunningProxy[] = [];

function toml(auth: string, node: string): string {
  const server = cluster.servers[0]!;
  return `[server]
host = "127.0.0.1"
port = 0
node = "${node}"

[[topology.regions]]
id = "eu"
home = true
primary = { host = "127.0.0.1", port = ${server.port}, database = "postgres", user = "postgres" }

[routing]
default_placement = { placement = "pinned" }
${txnSection()}
[auth]
${auth}
`;
}

function start(text: string): Promise<RunningProxy> {
  return startProxy({
    config: parseConfig(text, "security-table.toml"),
    directory: new MemoryDirectory(),
    logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
    security: { sleep: async () => undefined },
  });
}

beforeAll(async () => {
  cluster = await startCluster({
    count: 1,
    // The server asks each role for what its stored secret answers; the rest is trusted.
    hba: ["host all alice 127.0.0.1/32 scram-sha-256", "host all mallory 127.0.0.1/32 md5"],
    initSql: `
      SET password_encryption = 'scram-sha-256';
      CREATE ROLE alice LOGIN PASSWORD '${PASSWORDS["alice"]}';
      SET password_encryption = 'md5';
      CREATE ROLE mallory LOGIN PASSWORD '${PASSWORDS["mallory"]}';
      CREATE ROLE nopass LOGIN;
      CREATE ROLE reporter LOGIN;
    `,
  });
}, 60_000);

afterAll(async () => {
  for (const proxy of proxies) await proxy.close({ timeoutMs: 200 });
  await cluster?.stop();
});

async function login(proxy: RunningProxy, user: string): Promise<Answer> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: proxy.port,
    user,
    password: PASSWORDS[user] ?? "",
    database: "postgres",
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const result = await client.query<{ who: string }>("SELECT session_user AS who");
    return `as ${result.rows[0]!.who}`;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe("docs/security.md: which logins work with which stored secret", () => {
  for (const [index, row] of ROWS.entries()) {
    it(`answers each stored secret as the table says under ${row.auth.replaceAll("\n", ", ")}`, async () => {
      const proxy = await start(toml(row.auth, `security-table-${index}`));
      proxies.push(proxy);
      const answers: Record<string, Answer> = {};
      for (const user of Object.keys(row.answers)) answers[user] = await login(proxy, user);
      expect(answers).toEqual(row.answers);
    });
  }

  it("refuses passthrough under trust at start: no login proves a secret", async () => {
    const started = await start(
      toml(`method = "trust"\npassthrough = true`, "security-table-trust-pt"),
    ).catch((error: unknown) => error as Error);
    if (!(started instanceof Error)) proxies.push(started);
    expect(started).toBeInstanceOf(Error);
    expect((started as Error).message).toMatch(
      /auth\.passthrough needs auth\.method = "scram-sha-256" or "md5"/,
    );
  });
});
