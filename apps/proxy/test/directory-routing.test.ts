import { MemoryDirectory, parseConfig, schemaInfoFor, shardFor, Topology } from "@geo/core";
import { Analyzer } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { Router } from "../src/routing/router.js";

const TOML = `
[[topology.regions]]
id = "eu-west"
location = "eu"
home = true
primary = { host = "127.0.0.1", port = 1 }

[[topology.regions]]
id = "eu-west-2"
location = "eu"
primary = { host = "127.0.0.1", port = 2 }

[[topology.regions]]
id = "us-east"
location = "us"
primary = { host = "127.0.0.1", port = 3 }

[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"
`;

let topology: Topology;
let analyzer: Analyzer;

beforeAll(async () => {
  topology = Topology.fromConfig(parseConfig(TOML, "shards.toml"));
  analyzer = await Analyzer.create(schemaInfoFor(topology));
});

function router(unlisted: "placed" | "anywhere"): Router {
  return new Router(analyzer, topology, new MemoryDirectory([["alice", "us-east"]]), undefined, unlisted);
}

describe("routing with a directory store", () => {
  it("creates a new key in the home location's shard its hash picks", () => {
    for (const key of ["k1", "k2", "k3", "k4", "k5", "k6"]) {
      const route = router("anywhere").route(
        analyzer.analyze(`INSERT INTO users (tenant_id) VALUES ('${key}')`),
      );
      expect(route).toMatchObject({
        kind: "region",
        region: shardFor(key, "text", ["eu-west", "eu-west-2"]),
      });
    }
  });

  it("reads a key with no entry in every region, and a listed key in its region alone", () => {
    const unlisted = router("anywhere").route(analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'k1'"));
    expect(unlisted.kind).toBe("multi-region");
    const listed = router("anywhere").route(
      analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'alice'"),
    );
    expect(listed).toMatchObject({ kind: "region", region: "us-east" });
  });

  it("reads a key with no entry where it would be created when there is no store", () => {
    const route = router("placed").route(analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'k1'"));
    expect(route).toMatchObject({ kind: "region", region: shardFor("k1", "text", ["eu-west", "eu-west-2"]) });
  });
});
