import { connect, createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { markdownTable, TcpRelay } from "../src/index.js";
import type { DrillReport } from "../src/run-drill.js";
import { Availability } from "../src/workloads.js";

describe("Availability", () => {
  it("measures from the first attempt after a key's last success to the end of the next success", () => {
    const availability = new Availability();
    availability.failed("k1", 100);
    availability.failed("k1", 150);
    availability.succeeded("k1", 380, 400);
    // A write that hung 250 ms before it succeeded.
    availability.succeeded("k2", 250, 500);
    availability.succeeded("k1", 600, 610);
    availability.failed("k2", 700);
    // k2's outage is still open when the workload stops at 1000.
    expect(availability.close(1000)).toEqual(
      new Map([
        ["k1", 300],
        ["k2", 300],
      ]),
    );
  });
});

describe("TcpRelay", () => {
  it("holds bytes while cut and delivers them once healed", async () => {
    const received: string[] = [];
    const server = createServer((socket: Socket) => {
      socket.on("data", (chunk) => {
        received.push(chunk.toString());
        socket.write(chunk);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const address = server.address();
    const relay = new TcpRelay(typeof address === "object" && address !== null ? address.port : 0);
    const port = await relay.start();
    const client = connect(port, "127.0.0.1");
    const echoed: string[] = [];
    const next = (): Promise<void> => new Promise((resolve) => client.once("data", () => resolve()));
    client.on("data", (chunk) => echoed.push(chunk.toString()));
    let reply = next();
    client.write("a");
    await reply;
    relay.cut();
    client.write("b");
    // A round trip through the relay's own loop: the relay could have forwarded "b" by now.
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toEqual(["a"]);
    reply = next();
    relay.heal();
    await reply;
    expect(received.join("")).toBe("ab");
    expect(echoed.join("")).toBe("ab");
    client.destroy();
    await relay.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

describe("markdownTable", () => {
  it("prints one line per scenario and workload with the worst key's unavailability", () => {
    const result = {
      attempted: 10,
      committed: 8,
      failed: 1,
      unknown: 1,
      lost: 0,
      wrong: 0,
      maxUnavailableMs: 1234,
      worstKey: "k4",
      unavailableByKey: { k4: 1234 },
      samples: [],
    };
    const report: DrillReport = {
      scenario: "region-crash",
      seconds: 20,
      seed: 1,
      keyed: result,
      transfers: { ...result, worstKey: null, maxUnavailableMs: 0, unavailableByKey: {} },
      preparedLeft: 0,
      recoverySeconds: 0,
      proxyKills: 0,
      staleReads: 0,
      misrouted: 0,
      notes: [],
      failures: [],
      keptDir: null,
    };
    const lines = markdownTable([report]).split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[2]!.split("|").map((cell) => cell.trim())).toEqual([
      "",
      "region-crash",
      "keyed",
      "10",
      "8",
      "1",
      "1",
      "0",
      "0",
      "1234 (k4)",
      "0",
      "",
    ]);
    expect(lines[3]).toContain("| transfers |");
  });
});
