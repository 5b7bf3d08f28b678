import { encodeStartupMessage, FrontendCode } from "@geo/proto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { WireClient } from "./support/wire.js";

// Caps a production proxy needs, each naming its setting: copies of clients' named statements per
// backend connection ([pool] max_prepared_statements) and the length of a client's message once
// logged in ([server] max_message_bytes).
let region: OneRegion;

beforeAll(async () => {
  region = await startOneRegion({
    extraToml: "\n[pool]\nmax = 1\nmax_prepared_statements = 3\n",
  });
});
afterAll(() => region?.close());

function client(): pg.Client {
  return new pg.Client({
    host: "127.0.0.1",
    port: region.proxy.port,
    user: "postgres",
    database: "postgres",
  });
}

describe("[pool] max_prepared_statements", () => {
  it("keeps at most that many copies on a backend connection, and prepares an evicted one again", async () => {
    const c = client();
    await c.connect();
    try {
      for (let i = 1; i <= 8; i++) {
        const { rows } = await c.query({
          name: `s${i}`,
          text: `SELECT ${i}::int AS n WHERE $1::int > 0`,
          values: [1],
        });
        expect(rows).toEqual([{ n: i }]);
      }
      // One pooled connection (max = 1): the server's own view of its prepared statements.
      const held = await c.query("SELECT count(*)::int AS n FROM pg_prepared_statements");
      expect(held.rows[0].n).toBeLessThanOrEqual(3);
      // The first, long evicted, still answers: prepared again where it runs.
      expect(
        (await c.query({ name: "s1", text: "SELECT 1::int AS n WHERE $1::int > 0", values: [1] })).rows,
      ).toEqual([{ n: 1 }]);
    } finally {
      await c.end();
    }
  });
});

describe("[server] max_message_bytes", () => {
  it("ends a logged-in client that announces a longer message with 54000 naming the setting, and no other", async () => {
    const wire = await WireClient.connect(region.proxy.port);
    const bystander = client();
    await bystander.connect();
    try {
      wire.send(encodeStartupMessage({ parameters: { user: "postgres", database: "postgres" } }));
      await wire.untilReady();
      // A Query announcing 1 GiB - 1 bytes: refused from its header, before any of it is buffered.
      const header = Buffer.alloc(5);
      header[0] = FrontendCode.Query;
      header.writeInt32BE(0x3fffffff, 1);
      wire.send(header);
      const answer = await wire.next();
      expect(answer?.type).toBe("ErrorResponse");
      const fields = (answer as { fields: Record<string, string> }).fields;
      expect(fields.code ?? fields.C).toBe("54000");
      expect(JSON.stringify(fields)).toContain("max_message_bytes = 67108864");
      await wire.waitClosed();
      expect((await bystander.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      wire.close();
      await bystander.end();
    }
  });

  it("takes a message up to the limit", async () => {
    const c = client();
    await c.connect();
    try {
      const long = "x".repeat(1_000_000);
      expect((await c.query(`SELECT length('${long}') AS n`)).rows).toEqual([{ n: 1_000_000 }]);
    } finally {
      await c.end();
    }
  });
});
