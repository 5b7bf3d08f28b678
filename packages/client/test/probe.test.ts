import { createServer, type Server, type Socket } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectOne } from "../src/index.js";

/** Accepts connections and never answers: what a half-dead host looks like to a driver. */
let silent: Server;
const sockets: Socket[] = [];
beforeAll(async () => {
  silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

describe("selectOne", () => {
  it("gives up on a server that accepts but never answers, within its timeout", async () => {
    const address = silent.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const sql = postgres(`postgres://app@127.0.0.1:${port}/orders`, { max: 1 });
    const started = performance.now();
    try {
      await expect(selectOne(sql, 150)).rejects.toThrow("no answer to SELECT 1 within 150 ms");
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await sql.end({ timeout: 0 });
    }
  });

  it("fails on a refused connection", async () => {
    const probeServer = createServer();
    await new Promise<void>((resolve) => probeServer.listen(0, "127.0.0.1", resolve));
    const address = probeServer.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    await new Promise((resolve) => probeServer.close(resolve));
    const sql = postgres(`postgres://app@127.0.0.1:${port}/orders`, { max: 1 });
    try {
      await expect(selectOne(sql, 5_000)).rejects.toMatchObject({ code: "ECONNREFUSED" });
    } finally {
      await sql.end({ timeout: 0 });
    }
  });
});
