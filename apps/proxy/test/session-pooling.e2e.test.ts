import { connect } from "node:net";
import { encodeCancelRequest, encodeQuery } from "@geo/proto";
import { RawClient } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { exchange } from "./support/side-by-side.js";

// [pool] mode = "session": each client has its own backend connection, as with one server.
let region: OneRegion;

beforeAll(async () => {
  region = await startOneRegion({ extraToml: '\n[pool]\nmode = "session"\nmax = 4\n' });
});
afterAll(() => region?.close());

async function client(): Promise<pg.Client> {
  const c = new pg.Client({
    host: "127.0.0.1",
    port: region.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

describe("session pooling", () => {
  it("reports the backend's own process id, which stays the client's for its whole session", async () => {
    const c = await client();
    try {
      const pid = (c as unknown as { processID: number }).processID;
      expect((await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid).toBe(pid);
      await c.query("BEGIN");
      expect((await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid).toBe(pid);
      await c.query("COMMIT");
      await c.query("DISCARD ALL");
      expect(
        (await c.query({ text: "SELECT pg_backend_pid() AS pid WHERE $1::int = 1", values: [1] })).rows[0]
          .pid,
      ).toBe(pid);
    } finally {
      await c.end();
    }
  });

  it("keeps session state without pinning tricks: a setting, a temporary table, an advisory lock", async () => {
    const a = await client();
    const b = await client();
    try {
      await a.query("SELECT pg_advisory_lock(7)");
      const other = await b.query("SELECT pg_try_advisory_lock(7) AS got");
      expect(other.rows[0].got).toBe(false);
      await a.query("SELECT pg_advisory_unlock(7)");
      expect((await b.query("SELECT pg_try_advisory_lock(7) AS got")).rows[0].got).toBe(true);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it("ends the client's session when its backend is terminated, as PostgreSQL does", async () => {
    const victim = await client();
    const admin = await client();
    try {
      const pid = (victim as unknown as { processID: number }).processID;
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await expect(victim.query("SELECT 1")).rejects.toBeTruthy();
    } finally {
      await admin.end();
      await victim.end().catch(() => undefined);
    }
  });

  /** What a client sees when its backend is terminated while `running` (or idle): its statement's error and its 'error' events. */
  async function terminated(target: "direct" | "proxy", running: boolean): Promise<string[]> {
    const port = target === "proxy" ? region.proxy.port : region.direct.port;
    const options = { host: "127.0.0.1", port, user: "postgres", database: "postgres" };
    const victim = new pg.Client(options);
    const admin = new pg.Client(options);
    const seen: string[] = [];
    victim.on("error", (error: Error & { code?: string }) =>
      seen.push(`event ${error.code ?? ""} ${error.message}`),
    );
    await victim.connect();
    await admin.connect();
    try {
      const pid = (await victim.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
      const ended = new Promise((resolve) => victim.once("end", resolve));
      const statement = running
        ? victim
            .query({ name: "sleeper", text: "SELECT pg_sleep($1)", values: [5] })
            .catch((error: Error & { code?: string }) =>
              seen.push(`statement ${error.code} ${error.message}`),
            )
        : Promise.resolve();
      await new Promise((r) => setTimeout(r, 200));
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await statement;
      await ended;
      return seen;
    } finally {
      await admin.end();
    }
  }

  it.each([
    ["while it runs a statement", true],
    ["while it is idle", false],
  ])(
    "tells a client whose backend is terminated %s what PostgreSQL tells it, once",
    async (_when, running) => {
      const direct = await terminated("direct", running);
      expect(direct[0]).toContain("57P01");
      expect(await terminated("proxy", running)).toEqual(direct);
    },
  );

  it("closes the client's server session when it leaves, so no later client finds what it left", async () => {
    const first = await client();
    await first.query("LOAD 'plpgsql'");
    await first.query("CREATE TEMP TABLE left_behind (a int)");
    const pid = (first as unknown as { processID: number }).processID;
    await first.end();
    const admin = new pg.Client({ ...region.direct, user: "postgres", database: "postgres" });
    await admin.connect();
    try {
      const gone = async () =>
        (await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1", [pid])).rows[0]
          .n === 0;
      for (let i = 0; i < 100 && !(await gone()); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await gone()).toBe(true);
      const next = await client();
      try {
        expect((next as unknown as { processID: number }).processID).not.toBe(pid);
        // On a fresh server session a custom setting under plpgsql's prefix is still allowed.
        await next.query("SET plpgsql.extra_foo_warnings = true");
      } finally {
        await next.end();
      }
    } finally {
      await admin.end();
    }
  });

  it("lists a named SET and RESET in pg_prepared_statements beside the client's other statements, as its server does", async () => {
    const run = async (port: number) => {
      const c = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
      await c.connect();
      try {
        await c.query({ name: "set_tz", text: "SET TimeZone = 'UTC'" });
        await c.query({ name: "set_tz", text: "SET TimeZone = 'UTC'" });
        await c.query({ name: "one", text: "SELECT 1 AS one" });
        const set = await c.query("SHOW TimeZone");
        await c.query({ name: "reset_tz", text: "RESET TimeZone" });
        const listed = await c.query(
          "SELECT statement FROM pg_prepared_statements WHERE name <> '' ORDER BY statement",
        );
        return [listed.rows, set.rows];
      } finally {
        await c.end();
      }
    };
    const direct = await run(region.direct.port);
    expect(direct).toEqual([
      [
        { statement: "RESET TimeZone" },
        { statement: "SELECT 1 AS one" },
        { statement: "SET TimeZone = 'UTC'" },
      ],
      [{ TimeZone: "UTC" }],
    ]);
    expect(await run(region.proxy.port)).toEqual(direct);
  });

  it("cancels the running statement with the client's own BackendKeyData", async () => {
    const raw = await RawClient.connect({
      host: "127.0.0.1",
      port: region.proxy.port,
      user: "postgres",
      database: "postgres",
      timeoutMs: 10_000,
    });
    try {
      const answer = exchange(raw, encodeQuery({ sql: "SELECT pg_sleep(30)" }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await new Promise<void>((resolve) => {
        const socket = connect(region.proxy.port, "127.0.0.1", () => {
          socket.end(encodeCancelRequest({ processId: raw.processId, secretKey: raw.secretKey }));
        });
        socket.on("close", () => resolve());
        socket.on("error", () => resolve());
      });
      expect(await answer).toContain("ErrorResponse 57014");
    } finally {
      await raw.close();
    }
  });
});
