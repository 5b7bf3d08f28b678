import { MemoryDirectory, parseConfig, schemaInfoFor, Topology } from "@geo/core";
import { Analyzer } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { statementKeys } from "../src/moves/statement-keys.js";
import { regionsToml } from "./support/fake-regions.js";

let analyzer: Analyzer;
let topology: Topology;
const directory = new MemoryDirectory([["alice", "eu-west"]]);
const same = (key: string): string => key;

beforeAll(async () => {
  topology = Topology.fromConfig(parseConfig(regionsToml([1, 2, 3]), "t.toml"));
  analyzer = await Analyzer.create(schemaInfoFor(topology));
});

describe("what a statement touches, for holds and first writes", () => {
  it("takes a key= hint as the key of every geo-partitioned table", () => {
    const keys = statementKeys(
      analyzer.analyze("/* geo: key=bob */ SELECT * FROM users"),
      topology,
      directory,
      same,
    );
    expect(keys.touch).toEqual({ kind: "keys", keys: ["bob"] });
    expect(keys.unlisted).toEqual(["bob"]);
  });

  it("treats a region= statement the parser cannot read as touching any key", () => {
    const keys = statementKeys(
      analyzer.analyze("/* geo: region=us-east */ VACUUM FULL ANALYSE users x y"),
      topology,
      directory,
      same,
    );
    expect(keys.touch).toEqual({ kind: "any" });
  });

  it("names the inserted keys the directory does not list as first writes", () => {
    const keys = statementKeys(
      analyzer.analyze("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 1, 'a'), ('carol', 1, 'c')"),
      topology,
      directory,
      same,
    );
    expect(keys.newKeys).toEqual(["carol"]);
    expect(keys.unlisted).toEqual([]);
  });

  it("reads bound parameters, and takes an unbound one as any key", () => {
    const analysis = analyzer.analyze("SELECT * FROM orders WHERE tenant_id = $1");
    expect(statementKeys(analysis, topology, directory, same, ["alice"]).touch).toEqual({
      kind: "keys",
      keys: ["alice"],
    });
    expect(statementKeys(analysis, topology, directory, same).touch).toEqual({ kind: "any" });
  });

  it("touches nothing for a statement on tables placed without a key", () => {
    expect(
      statementKeys(analyzer.analyze("SELECT * FROM currencies"), topology, directory, same).touch,
    ).toEqual({
      kind: "none",
    });
  });
});
