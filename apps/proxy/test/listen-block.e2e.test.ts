import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";

// A listener inside an open transaction block holds the notifications sent meanwhile: PostgreSQL
// delivers them when the block ends, so they stay in the queue (isolation spec async-notify). A
// session whose state lives on one connection (LISTEN pins it; session pooling owns it) begins
// its block there at once, as one server would.
const regions: Record<string, OneRegion> = {};

beforeAll(async () => {
  regions.transaction = await startOneRegion();
  regions.session = await startOneRegion({ extraToml: '\n[pool]\nmode = "session"\n' });
});
afterAll(async () => {
  for (const region of Object.values(regions)) await region.close();
});

async function queueHeldDuringBlock(port: number): Promise<boolean> {
  const options = { host: "127.0.0.1", port, user: "postgres", database: "postgres" };
  const listener = new pg.Client(options);
  const sender = new pg.Client(options);
  await listener.connect();
  await sender.connect();
  try {
    await listener.query("LISTEN c1");
    await listener.query("BEGIN");
    await sender.query("SELECT count(pg_notify('c1', s::text)) FROM generate_series(1, 1000) s");
    const { rows } = await sender.query("SELECT pg_notification_queue_usage() > 0 AS held");
    await listener.query("COMMIT");
    return rows[0].held as boolean;
  } finally {
    await listener.end();
    await sender.end();
  }
}

describe("a listener's open block", () => {
  it.each(["transaction", "session"])(
    "holds the notification queue as on one server (%s pooling)",
    async (mode) => {
      const region = regions[mode]!;
      expect(await queueHeldDuringBlock(region.direct.port)).toBe(true);
      expect(await queueHeldDuringBlock(region.proxy.port)).toBe(true);
    },
  );
});
