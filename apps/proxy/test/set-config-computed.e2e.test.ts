import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";

// Transaction pooling. A setting the proxy cannot replay elsewhere must neither be lost for its
// client nor reach another one through a pooled connection.
let region: OneRegion;

beforeAll(async () => {
  region = await startOneRegion({ extraToml: "\n[pool]\nmax = 4\n" });
});
afterAll(() => region?.close());

async function viaProxy(options: Partial<pg.ClientConfig> = {}): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: region.proxy.port,
    user: "postgres",
    database: "postgres",
    ...options,
  });
  await client.connect();
  return client;
}

describe("set_config of a value the proxy cannot replay", () => {
  it("stays the client's own: its later statements see it, and no other client does", async () => {
    const setter = await viaProxy({ application_name: "setter" });
    try {
      // What isolationtester does for each of its sessions: a value computed by the server.
      await setter.query(
        "SELECT set_config('application_name', current_setting('application_name') || '/s1', false)",
      );
      const others = await Promise.all(
        [1, 2, 3].map(async () => {
          const other = await viaProxy({ application_name: "other" });
          try {
            return (await other.query("SELECT current_setting('application_name') AS app")).rows[0].app;
          } finally {
            await other.end();
          }
        }),
      );
      expect(others).toEqual(["other", "other", "other"]);
      for (let i = 0; i < 3; i++)
        expect((await setter.query("SELECT current_setting('application_name') AS app")).rows[0].app).toBe(
          "setter/s1",
        );
    } finally {
      await setter.end();
    }
    const next = await viaProxy({ application_name: "next" });
    try {
      expect((await next.query("SELECT current_setting('application_name') AS app")).rows[0].app).toBe(
        "next",
      );
    } finally {
      await next.end();
    }
  });
});
