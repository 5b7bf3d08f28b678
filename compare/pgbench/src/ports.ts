import { connect, createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { ManagedProcess } from "./teardown.js";
import { logTail } from "./teardown.js";

/** A TCP port on 127.0.0.1 that was free a moment ago (the kernel picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Waits until `process` accepts TCP connections on `port`; fails with its log if it exits first. */
export async function waitUntilListening(
  process: ManagedProcess,
  port: number,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (process.hasExited()) {
      throw new Error(`${process.name} exited before listening on ${port}:\n${logTail(process.logFile)}`);
    }
    if (await accepts(port)) return;
    await sleep(50);
  }
  throw new Error(
    `${process.name} did not listen on ${port} within ${timeoutMs} ms:\n${logTail(process.logFile)}`,
  );
}
