import { parseConfig } from "@geo/core";
import { describe, expect, it } from "vitest";
import { CancelRegistry, type CancelWorkers } from "../src/server/cancel-registry.js";
import { stampWorker, workerOfSecret } from "../src/server/worker-key.js";
import { readPrimaryOrder, readWorkerReport } from "../src/workers/messages.js";
import { checkAdminPorts, workerConfig, workerIndexFrom } from "../src/workers/worker-config.js";

/** A worker's registry whose forwards are recorded. */
function workerRegistry(index: number): { registry: CancelRegistry; forwarded: unknown[][] } {
  const forwarded: unknown[][] = [];
  const workers: CancelWorkers = {
    index,
    forward: (worker, processId, secretKey) => forwarded.push([worker, processId, secretKey.toString("hex")]),
  };
  return { registry: new CancelRegistry(workers), forwarded };
}

function counting(): { cancel(): void; count: number } {
  const session = {
    count: 0,
    cancel() {
      session.count++;
    },
  };
  return session;
}

describe("cancel keys naming their worker", () => {
  it("writes the index into the secret's high four bits and leaves the other 28 random", () => {
    for (let index = 1; index <= 16; index++) {
      const secret = stampWorker(Buffer.from([0xff, 0x12, 0x34, 0x56]), index);
      expect(workerOfSecret(secret)).toBe(index);
      expect(secret[0]! & 0x0f).toBe(0x0f);
      expect(secret.subarray(1)).toEqual(Buffer.from([0x12, 0x34, 0x56]));
    }
    expect(() => stampWorker(Buffer.alloc(4), 0)).toThrow(RangeError);
    expect(() => stampWorker(Buffer.alloc(4), 17)).toThrow(RangeError);
  });

  it("reads some worker from any key, and none from an empty one", () => {
    for (let byte = 0; byte < 256; byte++) {
      const worker = workerOfSecret(Buffer.from([byte, 0, 0, 0]));
      expect(worker).toBeGreaterThanOrEqual(1);
      expect(worker).toBeLessThanOrEqual(16);
    }
    expect(workerOfSecret(Buffer.alloc(0))).toBeUndefined();
  });

  it("issues keys naming this worker, cancels its own here and forwards another worker's", () => {
    const { registry, forwarded } = workerRegistry(3);
    const session = counting();
    const key = registry.register(session);
    expect(workerOfSecret(key.secretKey)).toBe(3);
    expect(registry.cancel(key.processId, key.secretKey)).toBe("cancelled");
    expect(session.count).toBe(1);
    const foreign = stampWorker(Buffer.from(key.secretKey), 5);
    expect(registry.cancel(key.processId, foreign)).toBe("forwarded");
    expect(forwarded).toEqual([[5, key.processId, foreign.toString("hex")]]);
    expect(session.count).toBe(1);
  });

  it("never forwards what another worker passed on, and matches nothing with a forged key", () => {
    const { registry, forwarded } = workerRegistry(1);
    const session = counting();
    const key = registry.register(session);
    expect(registry.cancelHere(key.processId, stampWorker(Buffer.from(key.secretKey), 2))).toBe(false);
    expect(registry.cancelHere(key.processId, Buffer.from([key.secretKey[0]!, 0, 0, 0, 0]))).toBe(false);
    expect(registry.cancel(key.processId + 1, key.secretKey)).toBe("unmatched");
    expect(forwarded).toEqual([]);
    expect(session.count).toBe(0);
  });

  it("keeps the whole secret random in one process", () => {
    const registry = new CancelRegistry();
    const highs = new Set<number>();
    for (let i = 0; i < 200; i++) highs.add(registry.register(counting()).secretKey[0]! >> 4);
    expect(highs.size).toBeGreaterThan(8);
  });
});

describe("messages between the primary and its workers", () => {
  it("reads well-formed reports and orders", () => {
    expect(readWorkerReport({ type: "geoproxy:listening", port: 6432, node: "p-w1" })).toEqual({
      type: "geoproxy:listening",
      port: 6432,
      node: "p-w1",
    });
    const cancel = { type: "geoproxy:cancel", worker: 2, processId: -5, secretKey: "0a0b0c0d" };
    expect(readWorkerReport(cancel)).toEqual(cancel);
    expect(readPrimaryOrder({ type: "geoproxy:stop" })).toEqual({ type: "geoproxy:stop" });
    expect(readPrimaryOrder({ type: "geoproxy:cancel", processId: 7, secretKey: "0a0b0c0d" })).toEqual({
      type: "geoproxy:cancel",
      processId: 7,
      secretKey: "0a0b0c0d",
    });
  });

  it("ignores anything malformed rather than throwing", () => {
    const bad: unknown[] = [
      null,
      "geoproxy:stop",
      42,
      { type: "geoproxy:cancel", worker: 1, processId: 2 ** 31, secretKey: "0a0b0c0d" },
      { type: "geoproxy:cancel", worker: 1, processId: 1, secretKey: "0a0b0c" },
      { type: "geoproxy:cancel", worker: 1, processId: 1, secretKey: "zz0b0c0d" },
      { type: "geoproxy:cancel", worker: 1, processId: 1.5, secretKey: "0a0b0c0d" },
      { type: "geoproxy:listening", port: "6432", node: "a" },
      { type: "something else" },
    ];
    for (const message of bad) {
      expect(readWorkerReport(message), JSON.stringify(message)).toBeNull();
      expect(readPrimaryOrder(message), JSON.stringify(message)).toBeNull();
    }
    for (const worker of [0, 17, 1.5, "1"])
      expect(
        readWorkerReport({ type: "geoproxy:cancel", worker, processId: 1, secretKey: "0a0b0c0d" }),
      ).toBeNull();
  });
});

const REGIONS = `[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = 5432 }
`;

describe("a worker's own configuration", () => {
  it("names worker i <node>-w<i> and gives it admin port + i - 1, 0 staying 0", () => {
    const config = parseConfig(`[server]\nnode = "edge"\nworkers = 2\n\n${REGIONS}\n[admin]\nport = 9100\n`);
    expect(workerConfig(config, 1).server.node).toBe("edge-w1");
    expect(workerConfig(config, 2).server.node).toBe("edge-w2");
    expect(workerConfig(config, 2).admin?.port).toBe(9101);
    expect(config.server.node).toBe("edge");
    const free = parseConfig(`${REGIONS}\n[admin]\nport = 0\n`);
    expect(workerConfig(free, 3).admin?.port).toBe(0);
    expect(workerConfig(parseConfig(REGIONS), 2).admin).toBeUndefined();
  });

  it("refuses admin ports running past 65535, naming admin.port", () => {
    const config = parseConfig(`${REGIONS}\n[admin]\nport = 65535\n`, "p.toml");
    expect(() => checkAdminPorts(config, 1)).not.toThrow();
    expect(() => checkAdminPorts(config, 2)).toThrow(
      /^p\.toml: admin\.port: 2 workers serve admin ports 65535 to 65536/,
    );
  });

  it("reads the worker index only from a positive integer", () => {
    expect(workerIndexFrom({ GEOPROXY_WORKER: "2" })).toBe(2);
    for (const value of [undefined, "", "0", "-1", "x", "01"])
      expect(workerIndexFrom({ GEOPROXY_WORKER: value })).toBeUndefined();
  });
});
