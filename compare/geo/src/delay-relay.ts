import { connect, createServer, type Server, type Socket } from "node:net";

/** A TCP relay that holds every chunk for half the round trip in each direction. */
export interface DelayRelay {
  readonly host: string;
  readonly port: number;
  readonly rttMs: number;
  /** Connections relayed so far. */
  readonly connections: number;
  close(): Promise<void>;
}

// Node's timers count whole milliseconds of a loop clock read once per turn, so a timer fires up
// to about 1 ms late. The timer is set that much early and the rest is waited out turn by turn
// (setImmediate), which keeps each hop within a few tens of microseconds of its delay.
const TIMER_SLACK_MS = 1.5;

/**
 * Forwards one direction: every chunk leaves `oneWayMs` after it arrived, in arrival order, and
 * the end of the stream follows the last chunk by the same delay. One wait per direction, set
 * for the head of the queue, so order never depends on timer ordering.
 */
function delayedPipe(from: Socket, to: Socket, oneWayMs: number): void {
  const queue: { due: number; chunk: Buffer | null }[] = [];
  let waiting = false;
  const flush = () => {
    waiting = false;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.due <= now) {
      const { chunk } = queue.shift()!;
      if (chunk === null) to.end();
      else if (!to.destroyed) to.write(chunk);
    }
    schedule();
  };
  const schedule = () => {
    if (waiting || queue.length === 0) return;
    waiting = true;
    const remaining = queue[0]!.due - performance.now();
    if (remaining > TIMER_SLACK_MS) setTimeout(flush, remaining - TIMER_SLACK_MS);
    else setImmediate(flush);
  };
  from.on("data", (chunk: Buffer) => {
    queue.push({ due: performance.now() + oneWayMs, chunk });
    schedule();
  });
  from.on("end", () => {
    queue.push({ due: performance.now() + oneWayMs, chunk: null });
    schedule();
  });
  from.on("close", () => {
    // A reset (not a clean end) is passed on after the delay too, so the far side sees it in order.
    if (!from.readableEnded) setTimeout(() => to.destroy(), oneWayMs);
  });
}

/**
 * Starts a relay on 127.0.0.1 (a free port unless `port` is given) in front of `target`, adding
 * `rttMs` to every round trip: `rttMs / 2` on the way there and again on the way back.
 *
 * @example
 * const relay = await startDelayRelay({ target: { host: "127.0.0.1", port: 5432 }, rttMs: 75 });
 * // connect to 127.0.0.1:relay.port and every reply arrives 75 ms later than it would directly
 */
export async function startDelayRelay(options: {
  target: { host: string; port: number };
  rttMs: number;
  port?: number;
}): Promise<DelayRelay> {
  const oneWayMs = options.rttMs / 2;
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer({ noDelay: true }, (client) => {
    connections++;
    const upstream = connect({ host: options.target.host, port: options.target.port, noDelay: true });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    delayedPipe(client, upstream, oneWayMs);
    delayedPipe(upstream, client, oneWayMs);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    host: "127.0.0.1",
    port,
    rttMs: options.rttMs,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
