import { parseConfig } from "@geo/core";
import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { runConsoleCommand } from "./index.js";

describe("SHOW PLACEMENT", () => {
  it("lists each configured table's placement, key, writer, region and residency, sorted by name", async () => {
    const result = runConsoleCommand("SHOW PLACEMENT", await exampleContext());
    expect(result).toEqual({
      columns: ["table", "placement", "key", "writer", "region", "residency"],
      rows: [
        ["currencies", "global_replicated", null, null, null, "none"],
        ["eu_audit", "pinned", null, null, "eu-west", "strict"],
        ["fx_rates", "global_replicated", null, "us-east", null, "none"],
        ["orders", "geo_partitioned", "tenant_id", null, null, "none"],
        ["users", "geo_partitioned", "tenant_id", null, null, "none"],
      ],
      tag: "SHOW",
    });
  });

  it("adds a (default) row for tables no entry names when a default placement is set", async () => {
    const config = parseConfig(`
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = 5433, database = "shop" }

[[topology.regions]]
id = "us-east"
primary = { host = "127.0.0.1", port = 5434, database = "shop" }

[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"

[routing]
default_placement = { placement = "pinned", region = "us-east" }
`);
    const result = runConsoleCommand("SHOW PLACEMENT", await exampleContext({ config }));
    expect((result as { rows: unknown }).rows).toEqual([
      ["users", "geo_partitioned", "tenant_id", null, null, "none"],
      ["(default)", "pinned", null, null, "us-east", "none"],
    ]);
  });
});
