import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

let regions: RealRegions;

// One connection per region and a short checkout: a client pinned to eu-west's only connection
// shows as another client's checkout timing out there.
beforeAll(async () => {
  regions = await startRealRegions("\n[pool]\nmax = 1\ncheckout_timeout_ms = 400\n");
});
afterAll(() => regions?.close());

function proxyUrl(): string {
  return `postgres://postgres@127.0.0.1:${regions.proxy.port}/shop`;
}

async function connected(options: Partial<pg.ClientConfig> = {}): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: proxyUrl(), ...options });
  await client.connect();
  return client;
}

/** Whether another client can get eu-west's only connection (it cannot while one is pinned to it). */
async function euWestFree(): Promise<boolean> {
  const other = await connected();
  try {
    await other.query("SELECT 1 FROM users WHERE tenant_id = 'alice' AND id = 1");
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "53300" || code === "57014") return false;
    throw error;
  } finally {
    await other.end();
  }
}

describe("ROLLBACK TO SAVEPOINT and the session's settings", () => {
  it("undoes a SET made after the savepoint, in every region the session goes to next", async () => {
    const client = await connected();
    try {
      await client.query("BEGIN");
      await client.query("SELECT 1 FROM users WHERE tenant_id = 'alice' AND id = 1");
      await client.query("SET TimeZone = 'Asia/Tokyo'");
      await client.query("SAVEPOINT before_paris");
      await client.query("SET TimeZone = 'Europe/Paris'");
      expect((await client.query("SHOW TimeZone")).rows[0].TimeZone).toBe("Europe/Paris");
      await client.query("ROLLBACK TO SAVEPOINT before_paris");
      expect((await client.query("SHOW TimeZone")).rows[0].TimeZone).toBe("Asia/Tokyo");
      await client.query("COMMIT");
      for (const key of ["alice", "bob", "chandra"]) {
        const r = await client.query(
          "SELECT current_setting('TimeZone') AS tz FROM users WHERE tenant_id = $1 AND id = 1",
          [key],
        );
        expect(r.rows[0].tz).toBe("Asia/Tokyo");
      }
    } finally {
      await client.end();
    }
  });

  it("drops a SET LOCAL made after the savepoint from regions the block reaches later", async () => {
    const client = await connected();
    try {
      await client.query("BEGIN");
      await client.query("SELECT 1 FROM users WHERE tenant_id = 'alice' AND id = 1");
      await client.query("SAVEPOINT a");
      await client.query("SET LOCAL statement_timeout = '4321ms'");
      await client.query("ROLLBACK TO SAVEPOINT a");
      const other = await client.query(
        "SELECT current_setting('statement_timeout') AS t FROM users WHERE tenant_id = 'bob' AND id = 1",
      );
      expect(other.rows[0].t).toBe("0");
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
  });
});

describe("a query string holding its own block", () => {
  it("forgets the SETs of a block the string rolls back", async () => {
    const client = await connected();
    try {
      const expectedDefault = (await regions.direct["us-east"].query("SHOW TimeZone")).rows[0].TimeZone;
      await client.query("BEGIN; SET TimeZone = 'Asia/Tokyo'; ROLLBACK");
      const r = await client.query(
        "SELECT current_setting('TimeZone') AS tz FROM users WHERE tenant_id = 'bob' AND id = 1",
      );
      expect(r.rows[0].tz).toBe(expectedDefault);
    } finally {
      await client.end();
    }
  });

  it("keeps the SETs made before a savepoint the string rolls back to", async () => {
    const client = await connected();
    try {
      await client.query(
        "BEGIN; SET TimeZone = 'Asia/Tokyo'; SAVEPOINT s; SET TimeZone = 'Europe/Paris'; ROLLBACK TO SAVEPOINT s; COMMIT",
      );
      for (const key of ["alice", "bob"]) {
        const r = await client.query(
          "SELECT current_setting('TimeZone') AS tz FROM users WHERE tenant_id = $1 AND id = 1",
          [key],
        );
        expect(r.rows[0].tz).toBe("Asia/Tokyo");
      }
    } finally {
      await client.end();
    }
  });
});

describe("unpinning", () => {
  it("gives the connection back after UNLISTEN *", async () => {
    const client = await connected();
    try {
      await client.query("LISTEN jobs");
      expect(await euWestFree()).toBe(false);
      await client.query("UNLISTEN *");
      expect(await euWestFree()).toBe(true);
    } finally {
      await client.end();
    }
  });

  it("gives the connection back when the last WITH HOLD cursor is closed, not before", async () => {
    const client = await connected();
    try {
      await client.query(
        "DECLARE first_c CURSOR WITH HOLD FOR SELECT name FROM users WHERE tenant_id = 'alice' ORDER BY id",
      );
      await client.query(
        "DECLARE second_c CURSOR WITH HOLD FOR SELECT name FROM users WHERE tenant_id = 'alice' ORDER BY id",
      );
      expect((await client.query("FETCH 1 FROM first_c")).rows).toEqual([{ name: "alice-1" }]);
      await client.query("CLOSE first_c");
      expect(await euWestFree()).toBe(false);
      expect((await client.query("FETCH 1 FROM second_c")).rows).toEqual([{ name: "alice-1" }]);
      await client.query("CLOSE second_c");
      expect(await euWestFree()).toBe(true);
    } finally {
      await client.end();
    }
  });

  it("stays pinned after pg_advisory_unlock(key) and gives the connection back after pg_advisory_unlock_all()", async () => {
    const sql = postgres(proxyUrl(), { max: 1, onnotice: () => undefined });
    try {
      await sql`SELECT pg_advisory_lock(${7}::bigint)`;
      await sql`SELECT pg_advisory_lock(${7}::bigint)`;
      await sql`SELECT pg_advisory_unlock(${7}::bigint)`;
      expect(await euWestFree()).toBe(false);
      await sql`SELECT pg_advisory_unlock_all()`;
      expect(await euWestFree()).toBe(true);
    } finally {
      await sql.end();
    }
  });

  it("keeps the connection while an UNLISTEN inside a block can still roll back", async () => {
    const client = await connected();
    try {
      await client.query("LISTEN jobs");
      await client.query("BEGIN");
      await client.query("UNLISTEN *");
      await client.query("ROLLBACK");
      expect(await euWestFree()).toBe(false);
      const received = new Promise<string>((resolve) =>
        client.on("notification", (n) => resolve(n.payload ?? "")),
      );
      await client.query("NOTIFY jobs, 'still listening'");
      expect(await received).toBe("still listening");
    } finally {
      await client.end();
    }
  });
});

describe("settings in the startup packet", () => {
  it("refuses an invalid value at connect with FATAL, as PostgreSQL does", async () => {
    const client = new pg.Client({ connectionString: proxyUrl(), options: "-c statement_timeout=abc" });
    const error = (await client.connect().catch((e: unknown) => e)) as { code?: string; severity?: string };
    expect(error.code).toBe("22023");
    expect(error.severity).toBe("FATAL");
  });

  it("refuses an unknown setting at connect with FATAL", async () => {
    const client = new pg.Client({ connectionString: proxyUrl(), options: "-c no_such_setting=1" });
    const error = (await client.connect().catch((e: unknown) => e)) as { code?: string; severity?: string };
    expect(error.code).toBe("42704");
    expect(error.severity).toBe("FATAL");
  });

  it("accepts valid settings and gives them to every region", async () => {
    const client = await connected({ options: "-c statement_timeout=1500" });
    try {
      for (const key of ["alice", "bob"]) {
        const r = await client.query(
          "SELECT current_setting('statement_timeout') AS t FROM users WHERE tenant_id = $1 AND id = 1",
          [key],
        );
        expect(r.rows[0].t).toBe("1500ms");
      }
    } finally {
      await client.end();
    }
  });
});
