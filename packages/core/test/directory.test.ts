import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  canonicalKey,
  hashTextExtended,
  loadDirectoryTsv,
  loadRouting,
  MemoryDirectory,
  parseConfig,
  parseDirectoryTsv,
  placeKey,
  shardFor,
  Topology,
} from "../src/index.js";
import { examples, exampleTopology } from "./support/examples.js";

const topology = exampleTopology;

const sharded = Topology.fromConfig(
  parseConfig(`
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "eu1" }

[[topology.regions]]
id = "eu-west-2"
location = "eu-west"
primary = { host = "eu2" }

[[topology.regions]]
id = "eu-west-3"
location = "eu-west"
primary = { host = "eu3" }

[[topology.regions]]
id = "us-east"
primary = { host = "us" }
`),
);

function tsvError(text: string): ConfigError {
  try {
    parseDirectoryTsv(text, topology, "keys.tsv");
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("topology", () => {
  it("sorts regions by id and finds the home region and its location's shards", () => {
    expect(topology.regionIds).toEqual(["ap-south", "eu-west", "us-east"]);
    expect(topology.home.id).toBe("eu-west");
    expect(topology.homeShards).toEqual(["eu-west"]);
    expect(sharded.homeShards).toEqual(["eu-west", "eu-west-2", "eu-west-3"]);
    expect(sharded.shardsOf("us-east")).toEqual(["us-east"]);
    expect(topology.tables.get("fx_rates")).toMatchObject({ writer: "us-east" });
  });
});

describe("directory", () => {
  it("loads the example keys, one region per key", () => {
    const directory = loadDirectoryTsv(`${examples}keys.tsv`, topology);
    expect(directory.lookup("alice")).toBe("eu-west");
    expect(directory.lookup("bob")).toBe("us-east");
    expect(directory.lookup("chandra")).toBe("ap-south");
    expect(directory.lookup("nobody")).toBeUndefined();
    expect(directory.size).toBe(10);
  });

  it("loads a topology file and a directory together, or no directory at all", () => {
    const routing = loadRouting(`${examples}topology.toml`, `${examples}keys.tsv`);
    expect(routing.topology.home.id).toBe("eu-west");
    expect(routing.directory.lookup("hiro")).toBe("ap-south");
    expect(loadRouting(`${examples}topology.toml`).directory.size).toBe(0);
  });

  it("loads the directory file the configuration names, unless another file is given", () => {
    const routing = loadRouting(`${examples}geoproxy.toml`);
    expect(routing.directory.size).toBe(10);
    expect(routing.directory.lookup("bob")).toBe("us-east");
    const dir = mkdtempSync(join(tmpdir(), "geo-directory-"));
    writeFileSync(join(dir, "other.tsv"), "bob\tap-south\n");
    const overridden = loadRouting(`${examples}geoproxy.toml`, join(dir, "other.tsv"));
    expect(overridden.directory.lookup("bob")).toBe("ap-south");
    expect(overridden.directory.size).toBe(1);
  });

  it("reports a directory file the configuration names but that is missing as an error of that field", () => {
    const dir = mkdtempSync(join(tmpdir(), "geo-directory-"));
    const config = join(dir, "geoproxy.toml");
    writeFileSync(
      config,
      `${readFileSync(`${examples}topology.toml`, "utf8")}\n[directory]\nfile = "gone.tsv"\n`,
    );
    let thrown: unknown;
    try {
      loadRouting(config);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const error = thrown as ConfigError;
    expect(error.file).toBe(config);
    expect(error.path).toBe("directory.file");
    expect(error.line).toBe(readFileSync(config, "utf8").split("\n").indexOf('file = "gone.tsv"') + 1);
    expect(error.message).toContain(join(dir, "gone.tsv"));
    expect(error.message).toContain("there is no such file");
    expect(error.message).toContain("remove [directory] file");
    expect(error.message).not.toContain("ENOENT");
  });

  it("names a missing directory file given instead of the configuration's", () => {
    const gone = join(mkdtempSync(join(tmpdir(), "geo-directory-")), "gone.tsv");
    expect(() => loadRouting(`${examples}geoproxy.toml`, gone)).toThrow(
      `${gone}: cannot read it: there is no such file`,
    );
  });

  it("keeps everything before the tab as the key, spaces included, and skips comments", () => {
    const directory = parseDirectoryTsv("# comment\n\nmary ann\tus-east\r\n 42\tap-south\n", topology);
    expect(directory.lookup("mary ann")).toBe("us-east");
    expect(directory.lookup(" 42")).toBe("ap-south");
    expect(directory.size).toBe(2);
  });

  it("names the file and line of a row without a tab", () => {
    const error = tsvError("alice\teu-west\nbob us-east\n");
    expect(error.message).toMatch(/^keys\.tsv:2: expected key<TAB>region/);
  });

  it("names the file, line and valid regions for an unknown region", () => {
    const error = tsvError("alice\teu-central\n");
    expect(error.line).toBe(1);
    expect(error.choices).toEqual(["ap-south", "eu-west", "us-east"]);
  });

  it("refuses a key listed twice, naming both lines", () => {
    const error = tsvError("alice\teu-west\nbob\tus-east\nalice\tap-south\n");
    expect(error.code).toBe("duplicate");
    expect(error.line).toBe(3);
    expect(error.detail).toMatch(/line 1/);
  });

  it("refuses an empty key", () => {
    expect(tsvError("\teu-west\n").detail).toMatch(/empty/);
  });

  it("changes when a key is assigned or removed", () => {
    const directory = new MemoryDirectory([["alice", "eu-west"]]);
    directory.assign("alice", "us-east");
    expect(directory.lookup("alice")).toBe("us-east");
    expect(directory.remove("alice")).toBe(true);
    expect(directory.lookup("alice")).toBeUndefined();
  });
});

describe("placement", () => {
  const directory = new MemoryDirectory([["bob", "us-east"]]);

  it("places a listed key where the directory says", () => {
    expect(placeKey("bob", "text", topology, directory)).toBe("us-east");
  });

  it("creates an unlisted key in the home region when the home location has one shard", () => {
    expect(placeKey("zoe", "text", topology, directory)).toBe("eu-west");
  });

  it("picks among the home location's shards by the unsigned hash modulo the shard count", () => {
    const counts = new Map<string, number>();
    for (let index = 0; index < 3000; index++) {
      const key = `tenant-${index}`;
      const region = placeKey(key, "text", sharded, directory);
      const expected = sharded.homeShards[Number(BigInt.asUintN(64, hashTextExtended(key)) % 3n)];
      expect(region).toBe(expected);
      counts.set(region, (counts.get(region) ?? 0) + 1);
    }
    for (const shard of sharded.homeShards) expect(counts.get(shard)).toBeGreaterThan(800);
  });

  it("hashes integer keys with hashint8extended, whatever their spelling", () => {
    expect(shardFor("7", "integer", sharded.homeShards)).toBe(
      shardFor("+007", "integer", sharded.homeShards),
    );
    expect(canonicalKey("+007", "integer")).toBe("7");
    expect(canonicalKey("-0", "integer")).toBe("0");
    expect(canonicalKey("+007", "text")).toBe("+007");
  });
});
