import type { Socket } from "node:net";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { encodeStartupMessage } from "@geo/proto";
import { FakeBackend } from "@geo/testkit";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { oneRegionToml } from "./support/one-region.js";
import { type LoginOutcome, RawLogins, tally } from "./support/raw-login.js";

/** Login slots under floods, through real sockets from distinct client addresses (support/raw-login.ts). */

const PASSWORD = "app-secret";
let fake: FakeBackend;
const proxies: RunningProxy[] = [];
const logins: RawLogins[] = [];

async function proxyWith(auth = ""): Promise<RunningProxy> {
  fake ??= await FakeBackend.start();
  const config = parseConfig(
    oneRegionToml(
      fake.port,
      `[auth]
method = "scram-sha-256"
lookup = false
users = [{ name = "app", password = "${PASSWORD}" }]
${auth}`,
    ),
    "slots.toml",
  );
  const proxy = await startProxy({
    config,
    directory: new MemoryDirectory(),
    logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
    port: 0,
    shutdownTimeoutMs: 300,
  });
  proxies.push(proxy);
  logins.push(new RawLogins(proxy.port));
  return proxy;
}

afterEach(async () => {
  for (const raw of logins.splice(0)) raw.destroyAll();
  for (const proxy of proxies.splice(0)) await proxy.close({ timeoutMs: 200 });
});

afterAll(async () => {
  await fake?.close();
});

function raw(proxy: RunningProxy): RawLogins {
  return logins[proxies.indexOf(proxy)]!;
}

function open(proxy: RunningProxy, localAddress = "127.0.0.1"): Promise<Socket> {
  return raw(proxy).open(localAddress);
}

function silent(proxy: RunningProxy, count: number, localAddress = "127.0.0.1"): Promise<Socket[]> {
  return raw(proxy).silent(count, localAddress);
}

/** A SCRAM login as `app` from `localAddress`. */
function login(
  proxy: RunningProxy,
  localAddress: string,
  password = PASSWORD,
  withinMs = 20_000,
): Promise<LoginOutcome> {
  return raw(proxy).scram({ user: "app", password, localAddress }, withinMs);
}

function closedWithin(socket: Socket, ms: number): Promise<{ closed: boolean; bytes: Buffer }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    if (socket.destroyed) return resolve({ closed: true, bytes: Buffer.alloc(0) });
    const timer = setTimeout(() => resolve({ closed: false, bytes: Buffer.concat(chunks) }), ms);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ closed: true, bytes: Buffer.concat(chunks) });
    });
  });
}

describe("login slots under floods (defaults: 100 at most, 20 per address)", () => {
  it("serves a correct login from another address while one address holds 100 silent sockets", async () => {
    const proxy = await proxyWith();
    await silent(proxy, 100, "127.0.0.1");
    // That address holds its share of slots, not the whole door.
    expect(proxy.runtime.config.auth.maxUnauthenticatedPerAddress).toBe(20);
    const started = Date.now();
    expect(await login(proxy, "127.0.0.2")).toBe("ok");
    expect(Date.now() - started).toBeLessThan(5_000);
    // And the flooding address itself can still log in: its oldest silent socket makes room.
    expect(await login(proxy, "127.0.0.1")).toBe("ok");
  });

  it("evicts the oldest silent socket when five addresses fill the door with silent sockets", async () => {
    const proxy = await proxyWith();
    const first = await open(proxy, "127.0.0.10");
    const firstClosed = closedWithin(first, 10_000);
    for (let a = 10; a < 15; a++) await silent(proxy, a === 10 ? 19 : 20, `127.0.0.${a}`);
    expect(await login(proxy, "127.0.0.2")).toBe("ok");
    // The one evicted was the oldest: it gets 53300 and is closed.
    const { closed, bytes } = await firstClosed;
    expect(closed).toBe(true);
    expect(bytes.toString("latin1")).toContain("53300");
  });

  it("keeps correct logins from other addresses working while one address sends 150 wrong passwords", async () => {
    const proxy = await proxyWith();
    const flood = Promise.all(
      Array.from({ length: 150 }, () => login(proxy, "127.0.0.1", "wrong-password", 30_000)),
    );
    // Give the flood time to be in flight (its failures wait out 250 ms, 500 ms, 1 s ... up to 10 s).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const others: LoginOutcome[] = [];
    for (let a = 2; a < 12; a++) others.push(await login(proxy, `127.0.0.${a}`));
    expect(others).toEqual(Array.from({ length: 10 }, () => "ok"));
    const outcomes = await flood;
    const counts = tally(outcomes);
    // Nothing but wrong-password answers and refusals of that address; never a success.
    expect([...counts.keys()].every((code) => code === "28P01" || code === "53300")).toBe(true);
    expect(counts.get("28P01") ?? 0).toBeGreaterThan(0);
  }, 60_000);

  it("frees a failed login's slot while its delay runs", async () => {
    const proxy = await proxyWith("failure_delay_ms = 3000\nmax_unauthenticated_per_address = 2");
    const failing = [
      login(proxy, "127.0.0.1", "wrong-password", 30_000),
      login(proxy, "127.0.0.1", "wrong-password", 30_000),
    ];
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Both failures are waiting out their delays; the address's two slots are free again.
    const started = Date.now();
    expect(await login(proxy, "127.0.0.1")).toBe("ok");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await Promise.all(failing)).toEqual(["28P01", "28P01"]);
  }, 30_000);

  it("closes a socket that sends nothing after startup_timeout_ms (57014), long before timeout_ms", async () => {
    const proxy = await proxyWith("startup_timeout_ms = 300");
    expect(proxy.runtime.config.auth.timeoutMs).toBe(60_000);
    const [socket] = await silent(proxy, 1);
    const started = Date.now();
    const { closed, bytes } = await closedWithin(socket!, 5_000);
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(bytes.toString("latin1")).toContain("57014");
  });

  it("refuses a newcomer (53300) only when every slot of its address is held by a client that spoke", async () => {
    const proxy = await proxyWith("max_unauthenticated_per_address = 3");
    const talking = await silent(proxy, 3);
    // Each sends a StartupMessage and then stalls in the SCRAM exchange: not silent, not evictable.
    for (const socket of talking)
      socket.write(encodeStartupMessage({ parameters: { user: "app", database: "postgres" } }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await login(proxy, "127.0.0.1")).toBe("53300");
    expect(await login(proxy, "127.0.0.2")).toBe("ok");
  });
});
