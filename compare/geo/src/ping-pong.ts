import { connect, createServer, type Server, type Socket } from "node:net";
import { startDelayRelay } from "./delay-relay.js";
import { type LatencySummary, summarize } from "./percentiles.js";

/** An echo server on 127.0.0.1: whatever arrives goes straight back. */
export async function startEcho(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Sends a small message and waits for all of it to come back, `count` times in a row, on one connection. */
export async function pingPong(port: number, count: number, size = 64): Promise<number[]> {
  const socket = connect({ host: "127.0.0.1", port, noDelay: true });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  const message = Buffer.alloc(size, 0x61);
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await new Promise<void>((resolve, reject) => {
        let received = 0;
        const onData = (chunk: Buffer) => {
          received += chunk.length;
          if (received >= size) {
            socket.off("data", onData);
            socket.off("error", reject);
            resolve();
          }
        };
        socket.on("data", onData);
        socket.once("error", reject);
        socket.write(message);
      });
      samples.push(performance.now() - started);
    }
  } finally {
    socket.destroy();
  }
  return samples;
}

/** What a relay measured against what it was set to. */
export interface RelayCheck {
  readonly configuredRttMs: number;
  readonly measured: LatencySummary;
  /** Measured median minus configured minus the direct loopback median: what the relay added beyond its setting. */
  readonly excessP50Ms: number;
}

/** Measures the round trip through a fresh relay per setting, and once directly, over an echo server. */
export async function checkRelays(
  rtts: readonly number[],
  count: number,
): Promise<{
  direct: LatencySummary;
  relays: RelayCheck[];
}> {
  const echo = await startEcho();
  try {
    const direct = summarize(await pingPong(echo.port, count));
    const relays: RelayCheck[] = [];
    for (const rttMs of rtts) {
      const relay = await startDelayRelay({ target: { host: "127.0.0.1", port: echo.port }, rttMs });
      try {
        const measured = summarize(await pingPong(relay.port, count));
        relays.push({ configuredRttMs: rttMs, measured, excessP50Ms: measured.p50 - rttMs - direct.p50 });
      } finally {
        await relay.close();
      }
    }
    return { direct, relays };
  } finally {
    await echo.close();
  }
}
