import type { Socket } from "node:net";
import type { ConnectFunction } from "@geo/pool";

/** Bytes between the proxy and one backend since the proxy started. */
export interface TrafficBytes {
  /** Received from the backend. */
  readonly in: number;
  /** Sent to the backend. */
  readonly out: number;
}

interface AddressTraffic {
  closedIn: number;
  closedOut: number;
  readonly open: Set<Socket>;
}

/**
 * Counts the bytes on every backend connection's TCP socket (under TLS, the encrypted bytes: what
 * crosses the network), by `host:port`. Open sockets are read when asked; a closed one's counts
 * are kept, so the totals only grow.
 */
export class BackendTraffic {
  readonly #byAddress = new Map<string, AddressTraffic>();

  /** Counts `socket`'s bytes under `address` until it closes, and keeps them after. */
  watch(socket: Socket, address: string): void {
    let entry = this.#byAddress.get(address);
    if (entry === undefined) {
      entry = { closedIn: 0, closedOut: 0, open: new Set() };
      this.#byAddress.set(address, entry);
    }
    const traffic = entry;
    traffic.open.add(socket);
    socket.once("close", () => {
      traffic.open.delete(socket);
      traffic.closedIn += socket.bytesRead;
      traffic.closedOut += socket.bytesWritten;
    });
  }

  /** The bytes each backend address exchanged with the proxy so far. */
  totals(): Map<string, TrafficBytes> {
    const out = new Map<string, TrafficBytes>();
    for (const [address, entry] of this.#byAddress) {
      let bytesIn = entry.closedIn;
      let bytesOut = entry.closedOut;
      for (const socket of entry.open) {
        bytesIn += socket.bytesRead;
        bytesOut += socket.bytesWritten;
      }
      out.set(address, { in: bytesIn, out: bytesOut });
    }
    return out;
  }

  /**
   * `connect` with each new connection's socket counted, before any TLS upgrade the options carry
   * (which then runs on the counted socket).
   */
  meter(connect: ConnectFunction): ConnectFunction {
    return (options) => {
      const upgrade = options.upgrade;
      return connect({
        ...options,
        upgrade: async (socket, context) => {
          this.watch(socket, context.address);
          return upgrade === undefined ? socket : upgrade(socket, context);
        },
      });
    };
  }
}
