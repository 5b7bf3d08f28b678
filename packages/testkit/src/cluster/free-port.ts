import { createServer, Socket } from "node:net";

/** Ports handed out by this process and not yet released, so parallel starts never pick the same one. */
const reservedPorts = new Set<number>();

/**
 * Asks the kernel for a free TCP port on 127.0.0.1 by listening on port 0 and closing again.
 * Another process can still take it before PostgreSQL binds; callers retry on "Address already in use".
 */
export async function reserveFreePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.unref();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        const picked = typeof address === "object" && address !== null ? address.port : 0;
        server.close(() => resolve(picked));
      });
    });
    if (port !== 0 && !reservedPorts.has(port)) {
      reservedPorts.add(port);
      return port;
    }
  }
}

export function releasePort(port: number): void {
  reservedPorts.delete(port);
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isPortOpen(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const finish = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once("connect", () => finish(true));
    socket.once("error", () => finish(false));
    socket.connect(port, host);
  });
}
