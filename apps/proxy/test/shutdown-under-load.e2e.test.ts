import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { connect as netConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { encodeStartupMessage } from "@geo/proto";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchProxy } from "./support/proxy-child.js";

/**
 * SIGTERM on a real geoproxy process over three real PostgreSQL servers, while its clients do
 * everything a drain has to cope with: a socket that never says a word, clients refused for
 * max_connections that keep their end open, a session idle inside a transaction block, one
 * waiting on a long statement, one that stopped reading a large result. The drain must still end
 * within its timeout and the process exit 0.
 */

const schema = readFileSync(fileURLToPath(new URL("../../../examples/schema.sql", import.meta.url)), "utf8");
const DRAIN_MS = 1_500;
/** Past the drain: up to 1 s for sessions to close, then the pools' own 1 s, on a loaded 2-core machine. */
const BOUND_MS = DRAIN_MS + 6_000;

let cluster: PgCluster;
let folder: string;
const sockets: Socket[] = [];
const clients: pg.Client[] = [];

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: schema });
  folder = await mkdtemp(join(tmpdir(), "geo-shutdown-"));
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await cluster?.stop();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

async function session(port: number): Promise<pg.Client> {
  const c = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  c.on("error", () => undefined);
  await c.connect();
  clients.push(c);
  return c;
}

/** A raw socket to the proxy; `startup` sends a StartupMessage, as every driver does. */
function raw(port: number, startup: boolean): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, "127.0.0.1", () => {
      if (startup)
        socket.write(encodeStartupMessage({ parameters: { user: "postgres", database: "postgres" } }));
      resolve(socket);
    });
    socket.on("error", () => undefined);
    socket.once("error", reject);
    sockets.push(socket);
  });
}

/** A simple Query message, built by hand. */
function query(sql: string): Buffer {
  const text = Buffer.from(`${sql}\0`, "utf8");
  const header = Buffer.alloc(5);
  header.write("Q", 0, "latin1");
  header.writeInt32BE(4 + text.length, 1);
  return Buffer.concat([header, text]);
}

/** Logs in over a raw socket, asks for a large result and stops reading it. */
async function slowReader(port: number): Promise<Socket> {
  const socket = await raw(port, true);
  await new Promise<void>((resolve) => {
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = Buffer.concat([seen, chunk]);
      // ReadyForQuery 'Z' with length 5 ends the login.
      if (seen.includes(Buffer.from([0x5a, 0, 0, 0, 5]))) {
        socket.off("data", onData);
        resolve();
      }
    };
    socket.on("data", onData);
  });
  socket.pause();
  socket.write(query("SELECT repeat('x', 1000) FROM generate_series(1, 2000000)"));
  return socket;
}

describe("SIGTERM while clients misbehave", () => {
  it("drains within its timeout and exits 0 with silent, refused, idle-in-transaction, waiting and unread clients", async () => {
    const proxy = await launchProxy({
      ports: cluster.servers.map((s) => s.port),
      folder,
      node: "drainer",
      server: "max_connections = 6\n",
      shutdownTimeoutMs: DRAIN_MS,
    });

    const inBlock = await session(proxy.port);
    await inBlock.query("BEGIN");
    await inBlock.query("SELECT name FROM users WHERE tenant_id = 'alice'");
    const waiting = await session(proxy.port);
    const long = waiting.query("SELECT pg_sleep(60)").then(
      () => "answered",
      (error: Error & { code?: string }) => error.code ?? error.message,
    );
    await slowReader(proxy.port);
    for (let i = 0; i < 3; i++) await session(proxy.port);
    // Every slot is taken: these get 53300 and keep their end of the socket open.
    const refused = await Promise.all(Array.from({ length: 20 }, () => raw(proxy.port, true)));
    const silent = await Promise.all(Array.from({ length: 20 }, () => raw(proxy.port, false)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const descriptors = proxy.descriptors();

    const started = Date.now();
    proxy.child.kill("SIGTERM");
    const { code } = await proxy.exited;
    const tookMs = Date.now() - started;
    console.log(
      `SIGTERM with ${refused.length} refused, ${silent.length} silent, 1 idle in a block, 1 waiting, 1 unread client (${descriptors} descriptors open): exited ${code} after ${tookMs} ms (drain timeout ${DRAIN_MS} ms)`,
    );
    expect(code).toBe(0);
    expect(proxy.output()).toMatch(/"msg":"geoproxy stopped"/);
    expect(tookMs).toBeLessThan(BOUND_MS);
    // The waiting statement's session was ended by the proxy, not answered.
    expect(await long).not.toBe("answered");
    // Nothing a drain cut short is left prepared anywhere.
    for (const server of cluster.servers) {
      const direct = new pg.Client({
        host: server.host,
        port: server.port,
        user: "postgres",
        database: "postgres",
      });
      await direct.connect();
      try {
        expect((await direct.query("SELECT gid FROM pg_prepared_xacts")).rows).toEqual([]);
      } finally {
        await direct.end();
      }
    }
  }, 60_000);
});
