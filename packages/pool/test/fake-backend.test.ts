import { createServer, type Server, type Socket } from "node:net";
import { BackendCode, encodeQuery, type PgError } from "@geo/proto";
import { FakeBackend } from "@geo/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { BackendConnection, Pool } from "../src/index.js";

const cleanups: (() => Promise<unknown> | unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fake(options: Parameters<typeof FakeBackend.start>[0] = {}): Promise<FakeBackend> {
  const backend = await FakeBackend.start(options);
  cleanups.push(() => backend.close());
  return backend;
}

const silentSockets = new Set<Socket>();

/** A server that accepts TCP connections and never says a word. */
async function silentServer(): Promise<number> {
  const sockets = silentSockets;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.resume(); // read (and ignore) everything, so the peer's close is seen
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as { port: number }).port;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function poolFor(port: number, overrides: Partial<ConstructorParameters<typeof Pool>[0]> = {}): Pool {
  const pool = new Pool({
    key: { host: "127.0.0.1", port, database: "postgres", user: "postgres" },
    ...overrides,
  });
  cleanups.push(() => pool.close({ timeoutMs: 100 }));
  return pool;
}

describe("BackendConnection against the fake backend", () => {
  it("reports 08006 to the receiver when the server drops the connection mid-result", async () => {
    const backend = await fake({
      rules: [{ match: "select big", reply: { columns: ["n"], rows: [[1], [2], [3], [4], [5]] } }],
      failures: { closeMidResult: { match: "select big", afterRows: 2 } },
    });
    const connection = await BackendConnection.connect({
      host: backend.host,
      port: backend.port,
      database: "postgres",
      user: "postgres",
      connectTimeoutMs: 2_000,
    });
    cleanups.push(() => connection.destroy());
    const codes: string[] = [];
    const broken = new Promise<PgError>((resolve) =>
      connection.setReceiver({
        onFrame: (frame) => codes.push(String.fromCharCode(frame.code)),
        onBroken: resolve,
      }),
    );
    connection.write(encodeQuery({ sql: "select big" }));
    const error = await broken;
    expect(error.code).toBe("08006");
    expect(error.message).toContain(`127.0.0.1:${backend.port}`);
    expect(codes.join("")).toBe("TDD");
    expect(connection.broken).toBe(true);
  });

  it("settles closed once the socket closed, whether the client closed it or the server dropped it", async () => {
    const backend = await fake({
      rules: [{ match: "select big", reply: { columns: ["n"], rows: [[1], [2], [3]] } }],
      failures: { closeMidResult: { match: "select big", afterRows: 1 } },
    });
    const open = () =>
      BackendConnection.connect({
        host: backend.host,
        port: backend.port,
        database: "postgres",
        user: "postgres",
        connectTimeoutMs: 2_000,
      });
    const closedByClient = await open();
    const dropped = await open();
    cleanups.push(() => dropped.destroy());
    let settled = false;
    void dropped.closed.then(() => {
      settled = true;
    });
    await closedByClient.close();
    await expect(closedByClient.closed).resolves.toBeUndefined();
    expect(settled).toBe(false);
    await dropped.simpleQuery("select big").catch(() => undefined);
    await dropped.closed;
    expect(dropped.broken).toBe(true);
  });

  it("closes only the connection when its receiver throws", async () => {
    const backend = await fake();
    const pool = poolFor(backend.port, { max: 1 });
    const lease = await pool.acquire();
    const broken = new Promise<PgError>((resolve) => lease.connection.onBroken(resolve));
    lease.connection.setReceiver({
      onFrame: () => {
        throw new Error("receiver bug");
      },
    });
    lease.connection.write(encodeQuery({ sql: "select 1" }));
    const error = await broken;
    expect(error.code).toBe("XX000");
    expect(error.message).toContain("receiver bug");
    lease.release();
    expect(pool.stats()).toMatchObject({ discarded: 1, total: 0 });
    await using next = await pool.acquire();
    expect((await next.connection.simpleQuery("select 1")).rows).toEqual([["1"]]);
  });

  it("logs in with SCRAM to a server that checks the proof", async () => {
    const backend = await fake({ auth: { method: "scram-sha-256", password: "pw" } });
    const connection = await BackendConnection.connect({
      host: backend.host,
      port: backend.port,
      database: "postgres",
      user: "app",
      password: "pw",
      connectTimeoutMs: 2_000,
    });
    cleanups.push(() => connection.destroy());
    expect(connection.parameters.get("server_version")).toBe("15.8");
    await expect(
      BackendConnection.connect({
        host: backend.host,
        port: backend.port,
        database: "postgres",
        user: "app",
        password: "nope",
        connectTimeoutMs: 2_000,
      }),
    ).rejects.toMatchObject({ code: "28P01" });
  });

  it("fails with 08001 naming host:port when the server accepts but never answers", async () => {
    const port = await silentServer();
    const started = Date.now();
    const error = await BackendConnection.connect({
      host: "127.0.0.1",
      port,
      database: "postgres",
      user: "postgres",
      connectTimeoutMs: 150,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "08001" });
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect(Date.now() - started).toBeLessThan(1_500);
    // The half-open socket was closed, not leaked.
    const deadline = Date.now() + 1_000;
    while ([...silentSockets].some((socket) => !socket.closed) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect([...silentSockets].every((socket) => socket.closed)).toBe(true);
  });

  it("fails with 08001 naming host:port when the connection is refused", async () => {
    const port = await closedPort();
    const error = await BackendConnection.connect({
      host: "127.0.0.1",
      port,
      database: "postgres",
      user: "postgres",
      connectTimeoutMs: 2_000,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "08001" });
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
  });
});

describe("Pool against the fake backend", () => {
  it("answers a checkout with 57014 while the only connection is stuck in a stalled statement", async () => {
    const backend = await fake({ failures: { stallOn: "select stall" } });
    const pool = poolFor(backend.port, { max: 1, checkoutTimeoutMs: 150 });
    const lease = await pool.acquire();
    lease.connection.setReceiver({ onFrame: () => undefined });
    lease.connection.write(encodeQuery({ sql: "select stall" }));
    await backend.received("select stall");
    const started = Date.now();
    await expect(pool.acquire()).rejects.toMatchObject({ code: "57014" });
    expect(Date.now() - started).toBeLessThan(1_500);
    lease.discard("stalled");
    expect(pool.stats()).toMatchObject({ total: 0, discarded: 1, timeouts: 1 });
  });

  it("passes the connect error to the waiter instead of letting it wait out its timeout", async () => {
    const port = await silentServer();
    const pool = poolFor(port, { max: 1, connectTimeoutMs: 100, checkoutTimeoutMs: 5_000 });
    const started = Date.now();
    await expect(pool.acquire()).rejects.toMatchObject({ code: "08001" });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(pool.stats()).toMatchObject({ connectFailures: 1, total: 0, waiting: 0 });
  });

  it("rejects warm() with the connect error when the backend is unreachable", async () => {
    const pool = poolFor(await closedPort(), { min: 2, max: 2 });
    await expect(pool.warm()).rejects.toMatchObject({ code: "08001" });
  });

  it("discards a connection whose reset fails and serves the waiter with a new one", async () => {
    const backend = await fake({
      rules: [
        { match: "discard all", reply: { error: { code: "XX000", message: "reset refused" } }, times: 1 },
      ],
    });
    const pool = poolFor(backend.port, { max: 1 });
    const first = await pool.acquire();
    const firstId = first.connection.id;
    const waiter = pool.acquire();
    first.release({ reset: true });
    const second = await waiter;
    expect(second.connection.id).not.toBe(firstId);
    expect(pool.stats()).toMatchObject({ discarded: 1, created: 2, resets: 0 });
    second.release();
  });

  it("keeps server parameters current from ParameterStatus messages sent after login", async () => {
    const backend = await fake();
    const pool = poolFor(backend.port, { max: 1 });
    await using lease = await pool.acquire();
    const codes: number[] = [];
    lease.connection.setReceiver({ onFrame: (frame) => codes.push(frame.code) });
    await lease.connection.simpleQuery("SET application_name = 'reporting'");
    expect(lease.connection.parameters.get("application_name")).toBe("reporting");
    // The owner's receiver was set aside during the internal statement, and is back.
    expect(codes).toEqual([]);
    await new Promise<void>((resolve) => {
      lease.connection.setReceiver({
        onFrame(frame) {
          codes.push(frame.code);
          if (frame.code === BackendCode.ReadyForQuery) resolve();
        },
      });
      lease.connection.write(encodeQuery({ sql: "select 1" }));
    });
    expect(String.fromCharCode(...codes)).toBe("TDCZ");
  });
});
