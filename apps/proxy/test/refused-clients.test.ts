import { readdirSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { BackendFramer, decodeErrorResponse, encodeStartupMessage, isProtocolFault } from "@geo/proto";
import { FakeBackend } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { oneRegionToml } from "./support/one-region.js";

let fake: FakeBackend;
let proxy: RunningProxy;

beforeAll(async () => {
  fake = await FakeBackend.start();
  const config = parseConfig(oneRegionToml(fake.port, "", `max_connections = 2`), "refused.toml");
  proxy = await startProxy({
    config,
    directory: new MemoryDirectory(),
    logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
    port: 0,
    shutdownTimeoutMs: 300,
  });
});

afterAll(async () => {
  await proxy?.close({ timeoutMs: 200 });
  await fake?.close();
});

const openDescriptors = () => readdirSync("/proc/self/fd").length;

/** A client that sends its StartupMessage, as every driver does, and reads the proxy's answer. */
function refusedClient(): Promise<{ code: string | undefined; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket: Socket = netConnect(proxy.port, "127.0.0.1", () => {
      socket.write(encodeStartupMessage({ parameters: { user: "postgres", database: "postgres" } }));
    });
    const framer = new BackendFramer();
    socket.on("error", () => undefined);
    socket.on("data", (chunk) => {
      framer.push(chunk);
      for (let frame = framer.next(); frame !== null; frame = framer.next()) {
        if (isProtocolFault(frame) || frame.code !== 0x45) continue;
        const error = decodeErrorResponse(frame.payload);
        const code = isProtocolFault(error) ? undefined : error.fields.code;
        resolve({ code, socket });
      }
    });
    socket.once("error", reject);
  });
}

describe("clients refused for max_connections", () => {
  it("get 53300 and have their sockets closed by the proxy, leaking no descriptor", async () => {
    const served = [0, 1].map(
      () => new pg.Client({ host: "127.0.0.1", port: proxy.port, user: "postgres", database: "postgres" }),
    );
    for (const client of served) await client.connect();
    try {
      const before = openDescriptors();
      for (let round = 0; round < 4; round++) {
        const refused = await Promise.all(Array.from({ length: 25 }, () => refusedClient()));
        expect(refused.map((r) => r.code)).toEqual(refused.map(() => "53300"));
        for (const { socket } of refused) socket.destroy();
      }
      // The clients' ends are closed: whatever stays open is the proxy's (it once kept every
      // refused socket, with the client's unread startup bytes, for good).
      const deadline = Date.now() + 5_000;
      while (openDescriptors() > before + 2 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(openDescriptors()).toBeLessThanOrEqual(before + 2);
      expect((await served[0]!.query("SELECT 1")).rowCount).toBe(1);
    } finally {
      for (const client of served) await client.end();
    }
  });
});

describe("a client that says goodbye before it starts up", () => {
  it("is closed without an error, as PostgreSQL closes it", async () => {
    const received: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      const socket = netConnect(proxy.port, "127.0.0.1", () => socket.write(Buffer.from([0x58, 0, 0, 0, 4])));
      socket.on("data", (chunk) => received.push(chunk));
      socket.on("close", () => resolve());
      socket.on("error", reject);
    });
    expect(Buffer.concat(received).length).toBe(0);
  });
});
