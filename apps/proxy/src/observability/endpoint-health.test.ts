import { parseConfig, Topology } from "@geo/core";
import type { PoolStats } from "@geo/pool";
import { describe, expect, it } from "vitest";
import { EndpointHealth } from "./endpoint-health.js";

const topology = Topology.fromConfig(
  parseConfig(
    `[[topology.regions]]
id = "us-east"
primary = { host = "us.db", port = 5432, database = "app" }

[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "eu.db", port = 5432, database = "app" }
replicas = [{ host = "eu-replica.db", port = 5432, database = "app" }]
`,
    "health.toml",
  ),
);

function pool(host: string, created: number, connectFailures: number, user = "app"): PoolStats {
  return {
    name: `${host}:5432/app as ${user}`,
    key: { host, port: 5432, database: "app", user },
    min: 0,
    max: 10,
    idle: 0,
    busy: 0,
    resetting: 0,
    connecting: 0,
    waiting: 0,
    total: 0,
    created,
    discarded: 0,
    timeouts: 0,
    queueFull: 0,
    connectFailures,
    checkouts: 0,
    resets: 0,
    waitTimeMs: 0,
  };
}

function healthOf(health: EndpointHealth, endpoint: string): string | undefined {
  return health
    .regions()
    .flatMap((region) => region.endpoints)
    .find((entry) => entry.endpoint === endpoint)?.health;
}

describe("EndpointHealth", () => {
  it("starts every primary up, replicas unknown, regions by id", () => {
    const health = new EndpointHealth(topology);
    expect(health.regions().map((region) => [region.id, region.home])).toEqual([
      ["eu-west", true],
      ["us-east", false],
    ]);
    expect(health.regions()[0]?.endpoints.map((entry) => [entry.endpoint, entry.role, entry.health])).toEqual(
      [
        ["eu.db:5432", "primary", "up"],
        ["eu-replica.db:5432", "replica", "unknown"],
      ],
    );
  });

  it("marks a primary down when opening connections failed and none opened, and up when one opens", () => {
    const health = new EndpointHealth(topology);
    health.update([pool("us.db", 1, 0)]);
    health.update([pool("us.db", 1, 2)], new Date("2026-11-30T10:00:00Z"));
    expect(healthOf(health, "us.db:5432")).toBe("down");
    expect(health.down()).toEqual([
      { region: "us-east", endpoint: "us.db:5432", since: new Date("2026-11-30T10:00:00Z") },
    ]);
    health.update([pool("us.db", 1, 3)], new Date("2026-11-30T10:01:00Z"));
    expect(health.down()[0]?.since).toEqual(new Date("2026-11-30T10:00:00Z"));
    health.update([pool("us.db", 2, 3)]);
    expect(healthOf(health, "us.db:5432")).toBe("up");
  });

  it("starts a region that did not answer at start down, and up once a pool opens a connection to it", () => {
    const started = new Date("2026-11-30T09:00:00Z");
    const health = new EndpointHealth(topology, started, new Set(["us-east"]));
    expect(healthOf(health, "us.db:5432")).toBe("down");
    expect(healthOf(health, "eu.db:5432")).toBe("up");
    expect(health.down()).toEqual([{ region: "us-east", endpoint: "us.db:5432", since: started }]);
    // The start-up attempt and the retries since failed: still down, since the start.
    health.update([pool("us.db", 0, 4)]);
    expect(health.down()[0]?.since).toEqual(started);
    health.update([pool("us.db", 1, 4)]);
    expect(healthOf(health, "us.db:5432")).toBe("up");
  });

  it("sums the pools of one endpoint, whatever their roles", () => {
    const health = new EndpointHealth(topology);
    health.update([pool("eu.db", 1, 0, "app"), pool("eu.db", 0, 0, "report")]);
    health.update([pool("eu.db", 1, 0, "app"), pool("eu.db", 0, 1, "report")]);
    expect(healthOf(health, "eu.db:5432")).toBe("down");
  });

  it("takes a readiness check's outcome for the region's primary", () => {
    const health = new EndpointHealth(topology);
    health.observe("eu-west", false);
    expect(healthOf(health, "eu.db:5432")).toBe("down");
    health.observe("eu-west", true);
    expect(healthOf(health, "eu.db:5432")).toBe("up");
  });
});
