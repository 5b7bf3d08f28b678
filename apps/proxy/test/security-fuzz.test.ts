import { connect as netConnect, type Socket } from "node:net";
import { MemoryDirectory, parseConfig } from "@geo/core";
import {
  BackendFramer,
  decodeBackendMessage,
  decodeErrorResponse,
  encodeQuery,
  encodeSASLInitialResponse,
  encodeSASLResponse,
  encodeStartupMessage,
  isProtocolFault,
  SCRAM_SHA_256,
  ScramClient,
} from "@geo/proto";
import { FakeBackend } from "@geo/testkit";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { oneRegionToml } from "./support/one-region.js";

/** GEO_FUZZ_RUNS=5000 for a longer run on demand; CI runs the default. */
const RUNS = Number(process.env.GEO_FUZZ_RUNS ?? 120);
const SEED = Number(process.env.GEO_FUZZ_SEED ?? 20_261_130);
const LOGIN_TIMEOUT_MS = 300;
const MAX_UNAUTHENTICATED = 40;

let fake: FakeBackend;
let proxy: RunningProxy;

beforeAll(async () => {
  fake = await FakeBackend.start();
  const config = parseConfig(
    oneRegionToml(
      fake.port,
      `[auth]
method = "scram-sha-256"
lookup = false
users = [{ name = "app", password = "app-secret" }]
failure_delay_ms = 0
timeout_ms = ${LOGIN_TIMEOUT_MS}
max_unauthenticated = ${MAX_UNAUTHENTICATED}`,
    ),
    "fuzz.toml",
  );
  proxy = await startProxy({
    config,
    directory: new MemoryDirectory(),
    logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
    port: 0,
    shutdownTimeoutMs: 300,
  });
});

afterAll(async () => {
  await proxy?.close({ timeoutMs: 200 });
  await fake?.close();
});

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(proxy.port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Writes `bytes` and collects what the proxy answers until it closes; rejects if it never does. */
async function throwAt(bytes: Buffer, withinMs = LOGIN_TIMEOUT_MS + 1_500): Promise<Buffer> {
  const socket = await open();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `connection still open after ${withinMs} ms for input ${bytes.toString("hex").slice(0, 80)}`,
        ),
      );
    }, withinMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    socket.write(bytes);
  });
}

/** The SQLSTATE of the first ErrorResponse in `bytes`, if any. */
function sqlstate(bytes: Buffer): string | undefined {
  const at = bytes.indexOf(0x45);
  if (at === -1 || bytes.length < at + 5) return undefined;
  const length = bytes.readInt32BE(at + 1);
  const error = decodeErrorResponse(bytes.subarray(at + 5, at + 1 + length));
  return isProtocolFault(error) ? undefined : error.fields.code;
}

async function legitimateQuery(): Promise<string> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: proxy.port,
    user: "app",
    password: "app-secret",
    database: "postgres",
  });
  client.on("error", () => undefined);
  await client.connect();
  try {
    const result = await client.query({ text: "SELECT 1", rowMode: "array" });
    return String(result.rows[0]?.[0]);
  } finally {
    await client.end();
  }
}

const startup = encodeStartupMessage({
  protocolVersion: 196608,
  parameters: { user: "app", database: "postgres" },
});

function lengthPrefixed(length: number, rest: Uint8Array): Buffer {
  const head = Buffer.alloc(4);
  head.writeInt32BE(length | 0, 0);
  return Buffer.concat([head, rest]);
}

/** Malformed startups, messages and SASL exchanges, plus plain noise. */
const hostileInput: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.integer({ min: 0, max: startup.length - 1 }).map((cut) => startup.subarray(0, cut)),
  fc
    .tuple(
      fc.oneof(fc.integer({ min: -0x80000000, max: 7 }), fc.integer({ min: 10_001, max: 0x7fffffff })),
      fc.uint8Array({ maxLength: 40 }),
    )
    .map(([length, rest]) => lengthPrefixed(length, rest)),
  fc
    .tuple(
      fc.integer({ min: 0, max: 0xffff }),
      fc.integer({ min: 0, max: 0xffff }),
      fc.uint8Array({ maxLength: 60 }),
    )
    .map(([major, minor, rest]) => {
      const body = Buffer.concat([Buffer.from([major >> 8, major & 255, minor >> 8, minor & 255]), rest]);
      return lengthPrefixed(body.length + 4, body);
    }),
  fc
    .tuple(
      fc.constantFrom(0x70, 0x51, 0x58, 0x00, 0xff),
      fc.integer({ min: -5, max: 0x7fffffff }),
      fc.uint8Array({ maxLength: 80 }),
    )
    .map(([code, length, rest]) =>
      Buffer.concat([startup, Buffer.from([code]), lengthPrefixed(length, rest)]),
    ),
  fc
    .tuple(fc.string({ maxLength: 20 }), fc.option(fc.uint8Array({ maxLength: 120 })))
    .map(([mechanism, data]) =>
      Buffer.concat([
        startup,
        encodeSASLInitialResponse({ mechanism, data: data === null ? null : Buffer.from(data) }),
      ]),
    ),
  fc
    .tuple(fc.string({ maxLength: 80 }), fc.uint8Array({ maxLength: 200 }))
    .map(([first, final]) =>
      Buffer.concat([
        startup,
        encodeSASLInitialResponse({ mechanism: "SCRAM-SHA-256", data: Buffer.from(`n,,n=,r=${first}`) }),
        encodeSASLResponse({ data: Buffer.from(final) }),
      ]),
    ),
);

describe("hostile input through a real socket", () => {
  it("closes only the offending connection for every malformed input, and other clients keep working", async () => {
    const inputs = fc.sample(hostileInput, { numRuns: RUNS, seed: SEED });
    let crashes = 0;
    const batch = 10;
    for (let i = 0; i < inputs.length; i += batch) {
      const results = await Promise.allSettled(inputs.slice(i, i + batch).map((input) => throwAt(input)));
      for (const result of results) if (result.status === "rejected") crashes++;
      expect(await legitimateQuery()).toBe("1");
    }
    console.log(
      `hostile input: ${inputs.length} inputs tried (seed ${SEED}), ${crashes} left open or crashed`,
    );
    expect(crashes).toBe(0);
    await until(() => proxy.sessionCount === 0);
    expect(proxy.sessionCount).toBe(0);
  }, 120_000);

  it("survives malformed messages and random SQL from logged-in clients without leaking their sessions", async () => {
    const inputs = fc.sample(hostileSession, { numRuns: Math.ceil(RUNS / 2), seed: SEED + 2 });
    const batch = 10;
    for (let i = 0; i < inputs.length; i += batch) {
      const sockets = await Promise.all(inputs.slice(i, i + batch).map(() => loggedIn()));
      for (const [j, socket] of sockets.entries()) socket.write(inputs[i + j]!);
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const socket of sockets) socket.destroy();
      expect(await legitimateQuery()).toBe("1");
    }
    await until(() => proxy.sessionCount === 0);
    expect(proxy.sessionCount).toBe(0);
    console.log(`hostile sessions: ${inputs.length} inputs tried after login (seed ${SEED + 2}), 0 crashes`);
  }, 60_000);

  it("refuses an oversized length before authentication at once, without waiting for the bytes", async () => {
    const started = Date.now();
    const answer = await throwAt(lengthPrefixed(0x40000000, Buffer.alloc(4)));
    expect(sqlstate(answer)).toBe("08P01");
    expect(Date.now() - started).toBeLessThan(LOGIN_TIMEOUT_MS);
    const oversizedSasl = Buffer.concat([
      startup,
      Buffer.from([0x70]),
      lengthPrefixed(0x1000000, Buffer.alloc(0)),
    ]);
    expect(sqlstate(await throwAt(oversizedSasl))).toBe("08P01");
  });

  it("times out a client that sends a byte at a time before logging in (57014)", async () => {
    const socket = await open();
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => undefined);
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    let sent = 0;
    const drip = setInterval(() => {
      if (sent < startup.length && !socket.destroyed) socket.write(startup.subarray(sent, ++sent));
    }, 50);
    await closed;
    clearInterval(drip);
    expect(sent).toBeLessThan(startup.length);
    expect(sqlstate(Buffer.concat(chunks))).toBe("57014");
  });

  it("caps connections that have not logged in (53300) and serves clients again once they are gone", async () => {
    const idle = await Promise.all(Array.from({ length: MAX_UNAUTHENTICATED }, () => open()));
    // Each starts a login and stalls in it: a silent socket would be closed to make room instead.
    await Promise.all(
      idle.map((socket) => {
        socket.on("error", () => undefined);
        socket.write(startup);
        // Its first answer (the SASL request, or 53300 beyond the address's share) says the proxy read it.
        return new Promise((resolve) => socket.once("data", resolve));
      }),
    );
    const refused = await throwAt(startup, 1_000);
    expect(sqlstate(refused)).toBe("53300");
    for (const socket of idle) socket.destroy();
    await until(async () => (await legitimateQuery().catch(() => "")) === "1");
    expect(await legitimateQuery()).toBe("1");
  });

  it("keeps serving a logged-in client through a flood of garbage connections", async () => {
    const client = new pg.Client({
      host: "127.0.0.1",
      port: proxy.port,
      user: "app",
      password: "app-secret",
      database: "postgres",
    });
    client.on("error", () => undefined);
    await client.connect();
    const noise = fc.sample(hostileInput, { numRuns: 30, seed: SEED + 1 });
    const flood = Promise.allSettled(noise.map((input) => throwAt(input)));
    const answers: string[] = [];
    for (let i = 0; i < 20; i++)
      answers.push(String((await client.query({ text: "SELECT 1", rowMode: "array" })).rows[0]?.[0]));
    await flood;
    expect(answers).toEqual(Array.from({ length: 20 }, () => "1"));
    await client.end();
  }, 30_000);
});

/** A raw socket logged in as `app` through SCRAM, at its first ReadyForQuery. */
async function loggedIn(): Promise<Socket> {
  const socket = await open();
  socket.on("error", () => undefined);
  const framer = new BackendFramer();
  const scram = new ScramClient({ password: "app-secret" });
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      framer.push(chunk);
      for (let frame = framer.next(); frame !== null; frame = framer.next()) {
        if (isProtocolFault(frame)) return reject(new Error(frame.message));
        const message = decodeBackendMessage(frame);
        if (isProtocolFault(message)) return reject(new Error(message.message));
        if (message.type === "AuthenticationSASL")
          socket.write(encodeSASLInitialResponse({ mechanism: SCRAM_SHA_256, data: scram.clientFirst() }));
        else if (message.type === "AuthenticationSASLContinue") {
          const final = scram.serverFirst(message.data);
          if (!Buffer.isBuffer(final)) return reject(new Error(final.message));
          socket.write(encodeSASLResponse({ data: final }));
        } else if (message.type === "ErrorResponse") return reject(new Error("login refused"));
        else if (message.type === "ReadyForQuery") {
          socket.off("data", onData);
          return resolve();
        }
      }
    };
    socket.on("data", onData);
    socket.write(startup);
  });
  return socket;
}

/** What a logged-in client may throw: random SQL, messages of every frontend code, noise. */
const hostileSession: fc.Arbitrary<Buffer> = fc.oneof(
  fc.string({ maxLength: 120 }).map((sql) => encodeQuery({ sql })),
  fc
    .tuple(
      fc.constantFrom(...[..."BCDEFHPQSXcdfp"].map((c) => c.charCodeAt(0))),
      fc.uint8Array({ maxLength: 120 }),
    )
    .map(([code, body]) => Buffer.concat([Buffer.from([code]), lengthPrefixed(body.length + 4, body)])),
  fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
);

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
