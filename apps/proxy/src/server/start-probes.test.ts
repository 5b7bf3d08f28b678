import { parseConfig } from "@geo/core";
import { describe, expect, it } from "vitest";
import { type RegionProbe, startRefusal } from "./start-probes.js";

function config(server = "") {
  return parseConfig(
    `[server]
${server}
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "eu.db", port = 5432 }

[[topology.regions]]
id = "us-east"
primary = { host = "us.db", port = 5432 }
`,
    "probes.toml",
  );
}

function probe(region: string, error: string | null): RegionProbe {
  return {
    region,
    home: region === "eu-west",
    endpoint: `${region}.db:5432`,
    parameters: error === null ? new Map([["server_version", "15.8"]]) : null,
    error,
  };
}

const refused = "connect ECONNREFUSED";

describe("startRefusal", () => {
  it("starts when every region answered", () => {
    expect(startRefusal(config(), [probe("eu-west", null), probe("us-east", null)])).toBeNull();
  });

  it("starts without a region other than home", () => {
    expect(startRefusal(config(), [probe("eu-west", null), probe("us-east", refused)])).toBeNull();
  });

  it("refuses without the home region, one line per region down, the home one saying why", () => {
    const lines = startRefusal(config(), [probe("eu-west", refused), probe("us-east", refused)]);
    expect(lines).toEqual([
      "region eu-west (eu-west.db:5432) is unreachable: connect ECONNREFUSED (the home region must answer at start: every client's login reports its server settings)",
      "region us-east (us-east.db:5432) is unreachable: connect ECONNREFUSED",
    ]);
  });

  it("refuses without any region when require_all_regions_at_start is set, naming the file and field", () => {
    const lines = startRefusal(config("require_all_regions_at_start = true"), [
      probe("eu-west", null),
      probe("us-east", refused),
    ]);
    expect(lines).toEqual([
      "region us-east (us-east.db:5432) is unreachable: connect ECONNREFUSED (probes.toml: [server] require_all_regions_at_start = true refuses to start without it)",
    ]);
  });

  it("names the file, field and valid values for a setting that is not a boolean", () => {
    expect(() => config('require_all_regions_at_start = "yes"')).toThrow(
      /probes\.toml:2: server\.require_all_regions_at_start: expected true or false/,
    );
  });
});
