import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerFreezer } from "./support/frozen-server.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/**
 * Logins while the home region (eu-west) is frozen by SIGSTOP, with the unreachable guard out of
 * reach: only `[pool] lookup_timeout_ms` can end the proxy's own lookups there. `app` is looked
 * up in the home region (its stored verifier); `postgres` is configured, so only the check of its
 * startup settings asks the home region.
 */

const LOOKUP_TIMEOUT_MS = 1_500;
/** Far above the deadline: a login still unanswered by then hangs. */
const HUNG_AFTER_MS = 30_000;
const EU_WEST = 0;

let regions: RealRegions;
const freezer = new ServerFreezer();

beforeAll(async () => {
  regions = await startRealRegions(`
[pool]
unreachable_timeout_ms = 600000
lookup_timeout_ms = ${LOOKUP_TIMEOUT_MS}

[auth]
method = "scram-sha-256"
users = [{ name = "postgres", password = "pw" }]
verifier_cache_ms = 0
`);
  await regions.direct["eu-west"].query("CREATE ROLE app LOGIN PASSWORD 'app-secret' SUPERUSER");
}, 120_000);

afterAll(async () => {
  freezer.resume();
  await regions?.close();
});

function clientOf(user: string, password: string, applicationName: string): pg.Client {
  const c = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user,
    password,
    database: "postgres",
    application_name: applicationName,
  });
  c.on("error", () => undefined);
  return c;
}

type Login = { readonly ok: true } | { readonly ok: false; readonly code?: string; readonly message: string };

async function logIn(c: pg.Client): Promise<Login | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), HUNG_AFTER_MS);
  });
  const login = c.connect().then(
    (): Login => ({ ok: true }),
    (error: { code?: string; message: string }): Login => ({
      ok: false,
      message: error.message,
      ...(error.code === undefined ? {} : { code: error.code }),
    }),
  );
  try {
    return await Promise.race([login, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** One login and statement of each kind first, so the pools hold idle home connections to reuse. */
async function warm(): Promise<void> {
  for (const [user, password] of [
    ["app", "app-secret"],
    ["postgres", "pw"],
  ] as const) {
    const c = clientOf(user, password, "warm");
    expect(await logIn(c)).toEqual({ ok: true });
    await c.query("SELECT name FROM users WHERE tenant_id = 'alice' AND id = 1");
    await c.end();
  }
}

describe("a login while the home region is frozen by SIGSTOP", () => {
  it("fails a looked-up role's login in bounded time, naming the home region and the setting", async () => {
    await warm();
    await freezer.freeze(regions.cluster.servers[EU_WEST]!.dataDir);
    try {
      const started = Date.now();
      const c = clientOf("app", "app-secret", "frozen-home-1");
      const login = await logIn(c);
      console.log(`home frozen: a looked-up login answered after ${Date.now() - started} ms`);
      expect(login).not.toBe("hung");
      expect(login).toMatchObject({ ok: false, code: "57P03" });
      const { message } = login as { message: string };
      expect(message).toContain("eu-west");
      expect(message).toContain("lookup_timeout_ms");
      await c.end().catch(() => undefined);
    } finally {
      freezer.resume();
    }
    // Once it answers, the same login works again.
    const again = clientOf("app", "app-secret", "thawed");
    expect(await logIn(again)).toEqual({ ok: true });
    await again.end();
  }, 90_000);

  it("lets a configured role log in despite the unanswered settings check, and serves the other regions", async () => {
    await warm();
    await freezer.freeze(regions.cluster.servers[EU_WEST]!.dataDir);
    try {
      const started = Date.now();
      // A new application_name: a check the proxy has not remembered, so the home region is asked.
      const c = clientOf("postgres", "pw", "frozen-home-2");
      const login = await logIn(c);
      console.log(`home frozen: a configured login answered after ${Date.now() - started} ms`);
      expect(login).toEqual({ ok: true });
      const chandra = await c.query("SELECT name FROM users WHERE tenant_id = 'chandra' AND id = 1");
      expect(chandra.rows).toEqual([{ name: "chandra-1" }]);
      const bob = await c.query("SELECT name FROM users WHERE tenant_id = 'bob' AND id = 2");
      expect(bob.rows).toEqual([{ name: "bob-2" }]);
      await c.end();
    } finally {
      freezer.resume();
    }
  }, 90_000);
});
