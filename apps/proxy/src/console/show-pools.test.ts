import { describe, expect, it } from "vitest";
import type { RegionPoolStats } from "./context.js";
import { exampleContext } from "./example-context.js";
import { runConsoleCommand } from "./index.js";

function pool(region: string, port: number, figures: Partial<RegionPoolStats> = {}): RegionPoolStats {
  const key = { host: "127.0.0.1", port, database: "shop", user: "postgres" };
  return {
    name: `127.0.0.1:${port}/shop as postgres`,
    key,
    region,
    role: "primary",
    min: 0,
    max: 20,
    idle: 0,
    busy: 0,
    resetting: 0,
    connecting: 0,
    waiting: 0,
    total: 0,
    created: 0,
    discarded: 0,
    timeouts: 0,
    queueFull: 0,
    connectFailures: 0,
    checkouts: 0,
    resets: 0,
    waitTimeMs: 0,
    ...figures,
  };
}

describe("SHOW POOLS", () => {
  it("shows one row per pool, sorted by region, with occupancy and counters", async () => {
    const pools = [
      pool("us-east", 5434, { idle: 1, total: 1, created: 1, checkouts: 1 }),
      pool("eu-west", 5433, {
        idle: 2,
        busy: 3,
        waiting: 4,
        total: 5,
        created: 7,
        discarded: 2,
        checkouts: 40,
        waitTimeMs: 10,
        resets: 6,
        timeouts: 1,
        queueFull: 1,
        connectFailures: 3,
      }),
    ];
    const result = runConsoleCommand("SHOW POOLS", await exampleContext({ pools }));
    expect(result).toEqual({
      columns: [
        "region",
        "role",
        "endpoint",
        "database",
        "user",
        "idle",
        "busy",
        "waiting",
        "total",
        "max",
        "min",
        "resetting",
        "connecting",
        "checkouts",
        "avg_wait_ms",
        "created",
        "discarded",
        "resets",
        "timeouts",
        "queue_full",
        "connect_failures",
      ],
      rows: [
        [
          "eu-west",
          "primary",
          "127.0.0.1:5433",
          "shop",
          "postgres",
          "2",
          "3",
          "4",
          "5",
          "20",
          "0",
          "0",
          "0",
          "40",
          "0.250",
          "7",
          "2",
          "6",
          "1",
          "1",
          "3",
        ],
        [
          "us-east",
          "primary",
          "127.0.0.1:5434",
          "shop",
          "postgres",
          "1",
          "0",
          "0",
          "1",
          "20",
          "0",
          "0",
          "0",
          "1",
          "0.000",
          "1",
          "0",
          "0",
          "0",
          "0",
          "0",
        ],
      ],
      tag: "SHOW",
    });
  });

  it("answers with no rows before any pool exists", async () => {
    const result = runConsoleCommand("SHOW POOLS", await exampleContext());
    expect(result).toMatchObject({ rows: [], tag: "SHOW" });
  });
});
