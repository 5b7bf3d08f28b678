import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { sqlState } from "./support/sql-state.js";

// currval() and lastval() read the server session's memory of its own nextval() calls. In
// transaction pooling a client's statements run on whichever pooled connection is free, so that
// memory is another client's or another connection's: refused (exact or refuse). In session
// pooling the client has its own server session, and they answer as on one server.

const INIT = "CREATE SEQUENCE kit_seq";

async function connect(region: OneRegion): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: region.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
  return client;
}

describe("sequence values of the server session, in transaction pooling", () => {
  let region: OneRegion;
  // One pooled connection: every client's statements run on the same server session.
  beforeAll(async () => {
    region = await startOneRegion({ extraToml: "\n[pool]\nmax = 1\n", initSql: INIT });
  });
  afterAll(() => region?.close());

  it("never answers lastval() or currval() with another client's draw", async () => {
    const drawer = await connect(region);
    const reader = await connect(region);
    try {
      const drawn = (await drawer.query("SELECT nextval('kit_seq')::int AS n")).rows[0].n;
      expect(drawn).toBe(1);
      // Directly, `reader` never drew: 55000. Through one pooled connection it used to see 1.
      expect(await sqlState(reader.query("SELECT lastval()"))).toBe("0A000");
      expect(await sqlState(reader.query("SELECT currval('kit_seq')"))).toBe("0A000");
      expect(
        await sqlState(reader.query({ text: "SELECT currval($1::regclass)", values: ["kit_seq"] })),
      ).toBe("0A000");
    } finally {
      await drawer.end();
      await reader.end();
    }
  });

  it("refuses them in a block and in a string too, and the session goes on", async () => {
    const client = await connect(region);
    try {
      await client.query("BEGIN");
      await client.query("SELECT nextval('kit_seq')");
      expect(await sqlState(client.query("SELECT currval('kit_seq')"))).toBe("0A000");
      await client.query("ROLLBACK");
      expect(await sqlState(client.query("SELECT nextval('kit_seq'); SELECT currval('kit_seq')"))).toBe(
        "0A000",
      );
      const next = (await client.query("SELECT nextval('kit_seq')::int AS n")).rows[0].n;
      expect(next).toBeGreaterThan(1);
      expect((await client.query("SELECT last_value::int AS n FROM kit_seq")).rows[0].n).toBe(next);
    } finally {
      await client.end();
    }
  });
});

describe("sequence values of the server session, in session pooling", () => {
  let region: OneRegion;
  beforeAll(async () => {
    region = await startOneRegion({ extraToml: '\n[pool]\nmode = "session"\nmax = 3\n', initSql: INIT });
  });
  afterAll(() => region?.close());

  it("answers currval() and lastval() from the client's own server session, as PostgreSQL does", async () => {
    const client = await connect(region);
    const other = await connect(region);
    try {
      const drawn = (await client.query("SELECT nextval('kit_seq')::int AS n")).rows[0].n;
      await other.query("SELECT nextval('kit_seq')");
      expect((await client.query("SELECT currval('kit_seq')::int AS n")).rows[0].n).toBe(drawn);
      expect((await client.query("SELECT lastval()::int AS n")).rows[0].n).toBe(drawn);
      // A new client's server session has drawn nothing, whoever used the server before.
      const fresh = await connect(region);
      try {
        expect(await sqlState(fresh.query("SELECT lastval()"))).toBe("55000");
      } finally {
        await fresh.end();
      }
    } finally {
      await client.end();
      await other.end();
    }
  });
});
