import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { type LoginOutcome, RawLogins, tally } from "./support/raw-login.js";

/**
 * Login slots under floods with stored passwords looked up in a real PostgreSQL: every wrong
 * password costs a verifier lookup on the home region (the cache is off), so a flood must not
 * crowd out correct logins from other addresses, nor open more server connections than the pool
 * allows.
 */

const PASSWORD = "app-secret";
let region: OneRegion;
let logins: RawLogins;

beforeAll(async () => {
  region = await startOneRegion({
    extraToml: `[auth]
method = "scram-sha-256"
verifier_cache_ms = 0

[pool]
max = 4`,
    initSql: `CREATE ROLE app LOGIN PASSWORD '${PASSWORD}';`,
  });
  logins = new RawLogins(region.proxy.port);
}, 60_000);

afterAll(async () => {
  logins?.destroyAll();
  await region?.close();
});

async function serverConnections(): Promise<number> {
  const admin = new pg.Client({ host: region.direct.host, port: region.direct.port, user: "postgres" });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    return rows[0]!.n;
  } finally {
    await admin.end();
  }
}

describe("login slots with verifiers looked up in the home region", () => {
  it("logs in correct passwords from other addresses while silent sockets and wrong passwords flood", async () => {
    expect(await logins.scram({ user: "app", password: PASSWORD, localAddress: "127.0.0.2" })).toBe("ok");
    await logins.silent(100, "127.0.0.1");
    const flood = Promise.all(
      Array.from({ length: 150 }, () =>
        logins.scram({ user: "app", password: "wrong-password", localAddress: "127.0.0.3" }, 40_000),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const others: LoginOutcome[] = [];
    let mostServerConnections = 0;
    for (let i = 0; i < 10; i++) {
      others.push(await logins.scram({ user: "app", password: PASSWORD, localAddress: "127.0.0.2" }));
      mostServerConnections = Math.max(mostServerConnections, await serverConnections());
    }
    expect(others).toEqual(Array.from({ length: 10 }, () => "ok"));
    const counts = tally(await flood);
    // The flood gets wrong-password answers and refusals of its address, never a success.
    expect([...counts.keys()].every((code) => code === "28P01" || code === "53300")).toBe(true);
    expect(counts.get("28P01") ?? 0).toBeGreaterThan(0);
    // Lookups share the home region's pool: the flood opened no more than it allows.
    expect(mostServerConnections).toBeLessThanOrEqual(4);
  }, 90_000);

  it("still answers an unknown role like a wrong password (28P01), without naming it", async () => {
    expect(await logins.scram({ user: "nobody", password: PASSWORD, localAddress: "127.0.0.4" })).toBe(
      "28P01",
    );
  }, 30_000);
});
