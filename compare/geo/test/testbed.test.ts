import { parseConfig } from "@geo/core";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup } from "../src/cleanup.js";
import { geoConfigToml, startGeoWorld } from "../src/geo-world.js";
import { measure, openClient } from "../src/measure.js";
import { PROTOCOLS, WORKLOADS } from "../src/workloads.js";

afterAll(async () => {
  await cleanup();
});

describe("the three-region testbed", () => {
  it("writes a configuration geoproxy accepts, home region direct and the others through their relays", () => {
    const config = parseConfig(
      geoConfigToml(6543, [
        { id: "eu-west", host: "127.0.0.1", port: 5001 },
        { id: "us-east", host: "127.0.0.1", port: 5002 },
      ]),
    );
    expect(config.regions.map((region) => [region.id, region.home, region.primary.port])).toEqual([
      ["eu-west", true, 5001],
      ["us-east", false, 5002],
    ]);
  });

  it("runs every workload through geoproxy and the baseline: measured, or refused with 0A000, never failed", async () => {
    const regions = [
      { id: "eu-west", rttMs: 0 },
      { id: "us-east", rttMs: 6 },
      { id: "ap-south", rttMs: 10 },
    ];
    const world = await startGeoWorld({
      regions,
      baselineRttMs: 6,
      baselineRegion: "us-east",
      keysPerRegion: 3,
      geoproxyCli: (await import("../src/geo-world.js")).DEFAULT_CLI,
    });
    const context = { keysPerRegion: 3, remoteRegion: "us-east", regions: regions.map((r) => r.id) };
    const outcomes: string[] = [];
    for (const target of [world.proxy, world.baseline]) {
      const client = await openClient(target);
      for (const protocol of PROTOCOLS) {
        for (const workload of WORKLOADS) {
          const result = await measure(
            client,
            workload,
            { ...context, newKeyPrefix: `t-${target.port}-${protocol}`, protocol },
            3,
            1,
          );
          const label = `${target.name} ${protocol} ${workload.id}`;
          outcomes.push(`${label} ${result.kind}`);
          expect(result.kind, label).not.toBe("failed");
          if (target === world.baseline) expect(result.kind, label).toBe("measured");
        }
      }
      await client.end();
    }
    for (const protocol of PROTOCOLS) {
      expect(outcomes).toContain(`geoproxy ${protocol} home-read measured`);
      expect(outcomes).toContain(`geoproxy ${protocol} remote-read measured`);
    }
    expect(world.relays.every(({ relay }) => relay.connections > 0)).toBe(true);
  }, 120_000);
});
