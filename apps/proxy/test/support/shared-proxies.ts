import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { REGIONS, type RegionName, regionsToml } from "./fake-regions.js";
import { connectDirect, MOVE_SCHEMA } from "./move-regions.js";
import { ProxyChild } from "./proxy-child.js";

/** The one role of these proxies: a password login that may RELOCATE. */
export const OPS_AUTH = `[auth]
method = "scram-sha-256"
lookup = false
users = [{ name = "ops", password = "ops-secret" }]
operators = ["ops"]
`;

/** The shared directory the tests run: authority eu-west, short polls and leases. */
export const POLL_MS = 100;
export const LEASE_MS = 600;
export const SHARED_STORE = `shared = true\nauthority = "eu-west"\npoll_ms = ${POLL_MS}\nlease_ms = ${LEASE_MS}\nhold_ms = 8000\n`;
/** The same, agreeing in a majority of the three regions. */
export const MAJORITY_STORE = SHARED_STORE.replace('authority = "eu-west"', 'authority = "majority"');

export interface SharedLaunch {
  /** The `[directory_store]` lines. */
  readonly store: string;
  /** More `[txn]` lines than `data_dir`. */
  readonly txn?: string;
  /** More sections (`[admin]`, ...). */
  readonly sections?: string;
  /** The proxy's data folder: given, a restart finds what the last run left there. */
  readonly data?: string;
}

/**
 * Three real PostgreSQL servers with the move schema and the proxies started over them as child
 * processes, each its own node homed in a region of its own choosing: what the tests of a shared
 * directory run on. Call `start` in beforeAll, `stopProxies` in afterEach and `close` in afterAll.
 */
export class SharedProxies {
  cluster!: PgCluster;
  direct!: Record<RegionName, pg.Client>;
  folder!: string;
  readonly #running: ProxyChild[] = [];
  readonly #clients: pg.Client[] = [];

  constructor(private readonly prefix: string) {}

  async start(): Promise<void> {
    this.cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
    this.direct = await connectDirect(this.cluster);
    this.folder = await mkdtemp(join(tmpdir(), this.prefix));
  }

  /** Drops the shared directory's tables and empties the geo-partitioned ones in every region. */
  async reset(): Promise<void> {
    for (const region of REGIONS)
      await this.direct[region].query(
        "DROP TABLE IF EXISTS geoproxy_directory, geoproxy_directory_peers, geoproxy_directory_moves, geoproxy_directory_confirms, geoproxy_directory_moving, geoproxy_directory_ended, geoproxy_directory_paxos; TRUNCATE orders, users",
      );
  }

  /** Closes the clients and stops every proxy (a frozen one is woken first). */
  async stopProxies(): Promise<void> {
    await Promise.all(this.#clients.splice(0).map((client) => client.end().catch(() => undefined)));
    for (const child of this.#running) {
      try {
        if (child.pid !== undefined) process.kill(child.pid, "SIGCONT");
      } catch {
        // Exited already.
      }
    }
    await Promise.all(this.#running.splice(0).map((child) => child.stop()));
  }

  async close(): Promise<void> {
    for (const client of Object.values(this.direct ?? {})) await client.end().catch(() => undefined);
    await this.cluster?.stop();
    if (this.folder !== undefined) await rm(this.folder, { recursive: true, force: true });
  }

  /** A proxy named `node`, homed in `home`, with `OPS_AUTH` and the given sections. */
  async launch(node: string, home: RegionName, options: SharedLaunch): Promise<ProxyChild> {
    const data = options.data ?? (await mkdtemp(join(this.folder, `${node}-`)));
    const toml = regionsToml(
      this.cluster.servers.map((s) => s.port),
      `\n${OPS_AUTH}\n${options.sections ?? ""}\n[txn]\ndata_dir = "${data}"\n${options.txn ?? ""}\n[directory_store]\n${options.store}\n`,
    )
      .replace("[server]\n", `[server]\nnode = "${node}"\n`)
      .replace("home = true\n", "")
      .replace(`id = "${home}"\n`, `id = "${home}"\nhome = true\n`);
    const configPath = join(data, "geoproxy.toml");
    await writeFile(configPath, toml);
    const child = new ProxyChild(["--config", configPath, "--log-level", "info"]);
    this.#running.push(child);
    return child;
  }

  /** A proxy started some other way, stopped with the others. */
  adopt(child: ProxyChild): void {
    this.#running.push(child);
  }

  /** Forgets a proxy that exited, so `stopProxies` does not wait for it. */
  forget(child: ProxyChild): void {
    const index = this.#running.indexOf(child);
    if (index >= 0) this.#running.splice(index, 1);
  }

  /** A client logged in as ops, closed by `stopProxies`. */
  async connect(port: number): Promise<pg.Client> {
    const client = new pg.Client({
      host: "127.0.0.1",
      port,
      user: "ops",
      password: "ops-secret",
      database: "postgres",
    });
    client.on("error", () => undefined);
    await client.connect();
    this.#clients.push(client);
    return client;
  }

  /** The regions (of `among`) whose own server holds rows of `key` in users. */
  async regionsWith(key: string, among: readonly RegionName[] = REGIONS): Promise<RegionName[]> {
    const found: RegionName[] = [];
    for (const region of among) {
      const { rows } = await this.direct[region].query(
        "SELECT count(*)::int AS n FROM users WHERE tenant_id = $1",
        [key],
      );
      if (rows[0].n > 0) found.push(region);
    }
    return found;
  }

  /** A client straight to region `index`'s server, as postgres. */
  async connectServer(index: number): Promise<pg.Client> {
    const server = this.cluster.servers[index]!;
    const client = new pg.Client({
      host: server.host,
      port: server.port,
      user: "postgres",
      database: "postgres",
    });
    await client.connect();
    return client;
  }
}

/** SHOW PEERS through `client`. */
export async function peers(client: pg.Client): Promise<Record<string, string | null>[]> {
  return (await client.query("SHOW PEERS")).rows;
}

/** Resolves once `check` holds; rejects after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** What increments of one row told their client. */
export interface Increments {
  /** UPDATE 1: committed. */
  committed: number;
  /** UPDATE 0: the row was not where the statement went (a lost write). */
  lost: number;
  /** The SQLSTATE (or message) of each refused increment. */
  readonly refused: string[];
}

/**
 * Increments `key`'s row with id 1 (its `name` holds the count) through `client`, one statement
 * at a time, until the returned `stop` is called; `stop` resolves with what they were told.
 */
export function incrementUntilStopped(
  client: pg.Client,
  key: string,
  pauseMs = 0,
): { readonly counts: Increments; stop(): Promise<Increments> } {
  const counts: Increments = { committed: 0, lost: 0, refused: [] };
  let stopped = false;
  const running = (async () => {
    while (!stopped) {
      try {
        const result = await client.query(
          "UPDATE users SET name = (name::int + 1)::text WHERE tenant_id = $1 AND id = 1",
          [key],
        );
        if (result.rowCount === 1) counts.committed++;
        else counts.lost++;
      } catch (error) {
        counts.refused.push((error as { code?: string }).code ?? String(error));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return {
    counts,
    stop: async () => {
      stopped = true;
      await running;
      return counts;
    },
  };
}
