import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP relay in front of one region's PostgreSQL, so a drill can cut the region off without root
 * or a second network: only loopback exists here. Cut, it forwards nothing in either direction and
 * opens nothing upstream for new connections, as a network path that drops every packet does (TCP
 * on both sides sees silence, not a reset). Healed, held bytes flow again, as TCP's
 * retransmissions would deliver them after a short partition.
 */
export class TcpRelay {
  private server: Server | null = null;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket | null; pending: Buffer[] }>();
  private cutOff = false;
  port = 0;

  constructor(private readonly upstreamPort: number) {}

  get isCut(): boolean {
    return this.cutOff;
  }

  async start(port = 0): Promise<number> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    const address = server.address();
    this.port = typeof address === "object" && address !== null ? address.port : 0;
    return this.port;
  }

  /** Stops forwarding: every open connection goes silent and new ones are never answered. */
  cut(): void {
    this.cutOff = true;
    for (const pair of this.pairs) {
      pair.client.pause();
      pair.upstream?.pause();
    }
  }

  /** Forwards again, held bytes included; connections accepted while cut are opened upstream now. */
  heal(): void {
    this.cutOff = false;
    for (const pair of this.pairs) {
      if (pair.upstream === null) this.open(pair);
      pair.client.resume();
      pair.upstream?.resume();
    }
  }

  async stop(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    this.pairs.clear();
    const server = this.server;
    this.server = null;
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const pair = { client, upstream: null as Socket | null, pending: [] as Buffer[] };
    this.pairs.add(pair);
    client.setNoDelay(true);
    const drop = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on("error", drop);
    client.on("close", drop);
    client.on("data", (chunk: Buffer) => {
      if (pair.upstream === null) pair.pending.push(chunk);
      else pair.upstream.write(chunk);
    });
    if (this.cutOff) client.pause();
    else this.open(pair);
  }

  private open(pair: { client: Socket; upstream: Socket | null; pending: Buffer[] }): void {
    const upstream = connect(this.upstreamPort, "127.0.0.1");
    pair.upstream = upstream;
    upstream.setNoDelay(true);
    for (const chunk of pair.pending) upstream.write(chunk);
    pair.pending = [];
    upstream.on("data", (chunk: Buffer) => pair.client.write(chunk));
    const drop = (): void => {
      this.pairs.delete(pair);
      pair.client.destroy();
      upstream.destroy();
    };
    upstream.on("error", drop);
    upstream.on("close", drop);
    if (this.cutOff) upstream.pause();
  }
}
