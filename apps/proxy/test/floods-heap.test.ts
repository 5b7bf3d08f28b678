import type { Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { FakeBackend } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { flood, openSending, startupBytes } from "./support/flood.js";
import { oneRegionToml } from "./support/one-region.js";

/**
 * What floods leave in the proxy's heap once collected. Resident memory (floods.e2e) only tells
 * how far V8 grew its heap; a leak shows here, as live objects that survive a full collection.
 */

const FLOOD = 2_000;
const WAVE = 200;
/** What a round may leave live for good: a leak of 100 bytes per connection is 0.8 MiB a round. */
const LIVE_GROWTH_MIB = 2;

let fake: FakeBackend;
let proxy: RunningProxy;
const held: Socket[] = [];

// A full collection on demand without starting Node with --expose-gc.
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

function liveHeapMiB(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed / 1048576;
}

const floods: readonly (() => Buffer)[] = [
  startupBytes, // refused: every session slot is taken
  () => Buffer.alloc(0), // silent before login
  () => Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 3, 0, 0]), // a length past any limit
  () => Buffer.from(Array.from({ length: 64 }, () => Math.floor(Math.random() * 256))),
];

async function round(): Promise<void> {
  for (const bytes of floods) {
    const sockets = await flood(proxy.port, FLOOD, WAVE, bytes);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const socket of sockets) socket.destroy();
  }
  // Let the proxy see every close.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
}

beforeAll(async () => {
  fake = await FakeBackend.start();
  proxy = await startProxy({
    config: parseConfig(oneRegionToml(fake.port, "", `max_connections = 4`), "floods-heap.toml"),
    directory: new MemoryDirectory(),
    logLevel: "silent",
    port: 0,
    shutdownTimeoutMs: 300,
  });
  for (let i = 0; i < 4; i++) held.push(await openSending(proxy.port, startupBytes()));
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await proxy?.close({ timeoutMs: 200 });
  await fake?.close();
});

describe(`rounds of floods (${floods.length} kinds of ${FLOOD} connections each)`, () => {
  it("leave nothing live in the heap: after the first round it stays level", async () => {
    const before = liveHeapMiB();
    const after: number[] = [];
    for (let i = 0; i < 4; i++) {
      await round();
      after.push(liveHeapMiB());
    }
    console.log(
      `live heap ${before.toFixed(1)} MiB before, ${after.map((mib) => mib.toFixed(1)).join(" / ")} MiB after each round`,
    );
    for (const mib of after.slice(1)) expect(mib - after[0]!).toBeLessThan(LIVE_GROWTH_MIB);
  }, 120_000);
});
