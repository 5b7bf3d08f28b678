import {
  encodeCancelRequest,
  encodeGSSENCRequest,
  encodeQuery,
  encodeSSLRequest,
  encodeStartupMessage,
  ProtocolVersion,
} from "@geo/proto";
import { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeRegions, startFakeRegions } from "./support/fake-regions.js";
import { WireClient } from "./support/wire.js";

let regions: FakeRegions;

beforeAll(async () => {
  regions = await startFakeRegions({ "eu-west": { parameters: { TimeZone: "Europe/Paris" } } });
});
afterAll(() => regions.close());

async function login(
  client: WireClient,
  parameters: Record<string, string> = {},
  version = ProtocolVersion.v3_0,
) {
  client.send(
    encodeStartupMessage({
      protocolVersion: version,
      parameters: { user: "app", database: "shop", ...parameters },
    }),
  );
  return client.untilReady();
}

describe("startup", () => {
  it("answers SSLRequest with N and then accepts a clear-text startup", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    client.send(encodeSSLRequest());
    expect((await client.raw(1)).toString()).toBe("N");
    const messages = await login(client);
    expect(messages[0]).toMatchObject({ type: "AuthenticationOk" });
    expect(messages.at(-1)).toEqual({ type: "ReadyForQuery", status: "I" });
    client.close();
  });

  it("answers GSSENCRequest with N", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    client.send(encodeGSSENCRequest());
    expect((await client.raw(1)).toString()).toBe("N");
    const messages = await login(client);
    expect(messages.at(-1)).toEqual({ type: "ReadyForQuery", status: "I" });
    client.close();
  });

  it("reports the home region's parameters, the client's own settings and its own BackendKeyData", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    const messages = await login(client, { application_name: "checkout" });
    const statuses = new Map(
      messages.flatMap((m) => (m.type === "ParameterStatus" ? [[m.name, m.value] as const] : [])),
    );
    expect(statuses.get("TimeZone")).toBe("Europe/Paris");
    expect(statuses.get("server_version")).toMatch(/^15/);
    expect(statuses.get("application_name")).toBe("checkout");
    const key = messages.find((m) => m.type === "BackendKeyData");
    expect(key).toBeDefined();
    const backendPids = regions.fakes["eu-west"].connections.map((c) => c.id);
    expect(backendPids).not.toContain((key as { processId: number }).processId);
    client.close();
  });

  it("negotiates down to 3.0 for a newer minor version and unknown _pq_ options", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    const messages = await login(client, { "_pq_.compression": "on" }, (3 << 16) | 2);
    expect(messages[0]).toEqual({
      type: "NegotiateProtocolVersion",
      newestMinor: 0,
      unrecognizedOptions: ["_pq_.compression"],
    });
    expect(messages.at(-1)).toEqual({ type: "ReadyForQuery", status: "I" });
    client.close();
  });

  it("refuses a replication connection with a FATAL 0A000 before authentication when there are several regions", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    client.send(encodeStartupMessage({ parameters: { user: "app", replication: "database" } }));
    const message = await client.next();
    expect(message).toMatchObject({
      type: "ErrorResponse",
      fields: { code: "0A000", severityNonLocalized: "FATAL" },
    });
    await client.waitClosed();
  });

  it("refuses protocol 2 with a FATAL error", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    client.send(encodeStartupMessage({ protocolVersion: 2 << 16, parameters: { user: "app" } }));
    const message = await client.next();
    expect(message).toMatchObject({
      type: "ErrorResponse",
      fields: { code: "0A000", severityNonLocalized: "FATAL" },
    });
    await client.waitClosed();
  });
});

describe("bad input", () => {
  it("closes a client that sends malformed bytes with 08P01 while other clients carry on", async () => {
    const other = await RawClient.connect({ host: "127.0.0.1", port: regions.proxy.port, user: "app" });
    const client = await WireClient.connect(regions.proxy.port);
    await login(client);
    // A Query whose length word says 2: below the minimum of 4.
    client.send(Buffer.from([0x51, 0, 0, 0, 2]));
    const message = await client.next();
    expect(message).toMatchObject({ type: "ErrorResponse", fields: { code: "08P01" } });
    await client.waitClosed();
    const answer = await other.query("SELECT 1");
    expect(answer.rows).toEqual([["1"]]);
    await other.close();
  });

  it("closes a client whose startup packet is garbage, and keeps listening", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    client.send(Buffer.from([0, 0, 0, 3, 1, 2, 3]));
    const message = await client.next();
    expect(message).toMatchObject({ type: "ErrorResponse", fields: { code: "08P01" } });
    await client.waitClosed();
    const again = await RawClient.connect({ host: "127.0.0.1", port: regions.proxy.port, user: "app" });
    expect((await again.query("SELECT 1")).rows).toEqual([["1"]]);
    await again.close();
  });

  it("closes a client that sends an unknown message type", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    await login(client);
    client.send(Buffer.from([0x7a, 0, 0, 0, 4]));
    const message = await client.next();
    expect(message).toMatchObject({ type: "ErrorResponse", fields: { code: "08P01" } });
    await client.waitClosed();
  });

  it("survives a client that disconnects in the middle of a message", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    await login(client);
    client.send(encodeQuery({ sql: "SELECT 1" }).subarray(0, 7));
    client.close();
    const again = await RawClient.connect({ host: "127.0.0.1", port: regions.proxy.port, user: "app" });
    expect((await again.query("SELECT 1")).rows).toEqual([["1"]]);
    await again.close();
  });
});

describe("cancel", () => {
  it("ignores a CancelRequest with a key no session has", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    client.send(encodeCancelRequest({ processId: 1, secretKey: Buffer.from([1, 2, 3, 4]) }));
    await client.waitClosed();
  });
});

describe("robustness", () => {
  it("never lets random bytes from clients raise an unhandled error in the proxy", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    process.on("uncaughtException", onUnhandled);
    try {
      let seed = 42;
      const random = () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed;
      };
      for (let i = 0; i < 40; i++) {
        const client = await WireClient.connect(regions.proxy.port);
        if (i % 2 === 0) await login(client);
        const junk = Buffer.alloc(1 + (random() % 64));
        for (let j = 0; j < junk.length; j++) junk[j] = random() & 0xff;
        client.send(junk);
        await new Promise((resolve) => setTimeout(resolve, 5));
        client.close();
      }
      const survivor = await RawClient.connect({ host: "127.0.0.1", port: regions.proxy.port, user: "app" });
      expect((await survivor.query("SELECT 1")).rows).toEqual([["1"]]);
      await survivor.close();
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      process.off("uncaughtException", onUnhandled);
    }
  });
});
