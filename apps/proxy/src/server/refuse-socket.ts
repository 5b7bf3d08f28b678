import type { Socket } from "node:net";

/**
 * Sends a final message to a client the proxy will not serve, then closes the socket for good.
 * `end()` alone leaves it half open while the client's unread startup bytes sit in its buffer:
 * the descriptor would stay until the client hangs up, which a well-behaved driver never does
 * before it reads our answer, and `server.close()` would wait for it.
 */
export function refuseSocket(socket: Socket, finalMessage: Buffer): void {
  socket.on("error", () => socket.destroy());
  // Read and drop whatever the client sends meanwhile.
  socket.resume();
  socket.end(finalMessage, () => socket.destroy());
  // A peer that never reads our answer cannot hold the descriptor either.
  setTimeout(() => socket.destroy(), 2_000).unref();
}
