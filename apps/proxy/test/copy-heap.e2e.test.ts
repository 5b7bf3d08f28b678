import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/**
 * A COPY FROM STDIN far larger than any buffer of the proxy's, split over three real regions,
 * with the proxy in this process: its live memory (heap objects and the Buffers they hold, after
 * full collections) is sampled while the data streams. Two of the regions stall at their first
 * row (a trigger waits on an advisory lock the test holds) until the client has stopped sending
 * (or has sent everything): a proxy that read on regardless would hold their two thirds of the
 * stream, 133 MB; one that reads the client only while every region keeps up holds a few batches.
 */

const TOTAL_BYTES = 200_000_000;
/** Far below the data's size: what a proxy that buffered it could not stay under. */
const GROWTH_LIMIT_MIB = 64;
const SAMPLE_EVERY_BYTES = 16 * 1048576;
/** Two keys in each region (examples/keys.tsv). */
const KEYS = ["alice", "dmitri", "bob", "george", "chandra", "hiro"];
const STALLED = ["us-east", "ap-south"] as const;
/** The client is taken to be held back once nothing more was sent for this long. */
const STILL_MS = 1_500;

// A full collection on demand without starting Node with --expose-gc.
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** Live memory after full collections: heap objects plus the Buffers (array buffers) they keep. */
function liveMiB(): { heap: number; buffers: number; total: number } {
  collect();
  collect();
  const usage = process.memoryUsage();
  const heap = usage.heapUsed / 1048576;
  const buffers = usage.arrayBuffers / 1048576;
  return { heap, buffers, total: heap + buffers };
}

let regions: RealRegions;

beforeAll(async () => {
  regions = await startRealRegions(`
[[tables]]
table = "bulk"
placement = "geo_partitioned"
key = "tenant_id"
`);
  // Unlogged and without an index: the servers load as fast as they can, the proxy is the subject.
  for (const region of REGIONS)
    await regions.direct[region].query(
      "CREATE UNLOGGED TABLE bulk (tenant_id text NOT NULL, id int8, pad text)",
    );
  for (const region of STALLED)
    await regions.direct[region].query(`
      CREATE FUNCTION bulk_stall() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(42); RETURN NEW; END $$;
      CREATE TRIGGER bulk_stall BEFORE INSERT ON bulk FOR EACH ROW EXECUTE FUNCTION bulk_stall();`);
});
afterAll(async () => {
  await regions?.close();
});

describe(`a COPY FROM STDIN of ${TOTAL_BYTES / 1e6} MB over three regions`, () => {
  it("keeps the proxy's live memory within a few batches, far below the data's size", async () => {
    // One chunk of whole rows, sent again and again: the client allocates nothing per chunk.
    const rows: string[] = [];
    for (let i = 0; i < 60; i++) rows.push(`${KEYS[i % KEYS.length]}\t${i}\t${"x".repeat(1_000)}`);
    const chunk = Buffer.from(`${rows.join("\n")}\n`);
    const chunks = Math.ceil(TOTAL_BYTES / chunk.length);
    const sql = postgres({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "postgres",
      max: 1,
      onnotice: () => undefined,
    });
    try {
      await sql`SELECT 1`;
      const before = liveMiB();
      const samples: { heap: number; buffers: number; total: number }[] = [];
      let sent = 0;
      let nextSample = SAMPLE_EVERY_BYTES;
      function* data(): Generator<Buffer> {
        for (let i = 0; i < chunks; i++) {
          sent += chunk.length;
          if (sent >= nextSample) {
            nextSample += SAMPLE_EVERY_BYTES;
            samples.push(liveMiB());
          }
          yield chunk;
        }
      }
      for (const region of STALLED) await regions.direct[region].query("SELECT pg_advisory_lock(42)");
      // The stall ends once the client was held back (nothing sent for a while) or sent it all.
      let done = false;
      let stalledFor = 0;
      let sentAtRelease = 0;
      const release = new Promise<void>((resolve) => {
        let seen = -1;
        let still = Date.now();
        const timer = setInterval(() => {
          if (sent !== seen) {
            seen = sent;
            still = Date.now();
          }
          if (!done && Date.now() - still < STILL_MS) return;
          clearInterval(timer);
          stalledFor = Date.now() - stallStart;
          sentAtRelease = sent;
          resolve();
        }, 100);
      });
      const unlocked = release.then(async () => {
        for (const region of STALLED) await regions.direct[region].query("SELECT pg_advisory_unlock(42)");
      });
      const stallStart = Date.now();
      const started = process.hrtime.bigint();
      const writable = await sql`COPY bulk (tenant_id, id, pad) FROM STDIN`.writable();
      await pipeline(Readable.from(data()), writable).finally(() => {
        done = true;
      });
      await unlocked;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const after = liveMiB();

      const counts: number[] = [];
      for (const region of REGIONS) {
        const result = await regions.direct[region].query("SELECT count(*)::int AS n FROM bulk");
        counts.push(result.rows[0].n as number);
      }
      const total = chunks * rows.length;
      expect(counts).toEqual([total / 3, total / 3, total / 3]);

      const peak = samples.reduce((a, b) => (b.total > a.total ? b : a), before);
      const growth = peak.total - before.total;
      console.log(
        `COPY of ${(sent / 1e6).toFixed(1)} MB (${total} rows) in ${seconds.toFixed(1)} s, ${(sent / 1e6 / seconds).toFixed(1)} MB/s ` +
          `(two regions stalled for the first ${(stalledFor / 1000).toFixed(1)} s, ${(sentAtRelease / 1e6).toFixed(1)} MB sent by then); ` +
          `live heap + buffers before ${before.heap.toFixed(1)} + ${before.buffers.toFixed(1)} MiB, ` +
          `peak of ${samples.length} samples ${peak.heap.toFixed(1)} + ${peak.buffers.toFixed(1)} MiB (+${growth.toFixed(1)}), ` +
          `after ${after.heap.toFixed(1)} + ${after.buffers.toFixed(1)} MiB`,
      );
      expect(samples.length).toBeGreaterThanOrEqual(Math.floor(TOTAL_BYTES / SAMPLE_EVERY_BYTES) - 1);
      expect(growth).toBeLessThan(GROWTH_LIMIT_MIB);
      expect(after.total - before.total).toBeLessThan(GROWTH_LIMIT_MIB);
    } finally {
      await sql.end({ timeout: 1 });
    }
  }, 240_000);
});
