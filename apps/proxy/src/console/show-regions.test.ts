import { parseConfig } from "@geo/core";
import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { type ConsoleRows, runConsoleCommand } from "./index.js";
import { observedFixture } from "./observed-fixture.js";

describe("SHOW REGIONS", () => {
  it("lists every region of the example topology in id order with home, location and primary", async () => {
    const result = runConsoleCommand("SHOW REGIONS", await exampleContext());
    expect(result).toEqual({
      columns: ["region", "home", "location", "primary", "replicas", "health"],
      rows: [
        ["ap-south", "no", "ap-south", "127.0.0.1:5435", "", null],
        ["eu-west", "yes", "eu-west", "127.0.0.1:5433", "", null],
        ["us-east", "no", "us-east", "127.0.0.1:5434", "", null],
      ],
      tag: "SHOW",
    });
  });

  it("is recognised in any case, with a semicolon and after a comment", async () => {
    const ctx = await exampleContext();
    const plain = runConsoleCommand("SHOW REGIONS", ctx);
    expect(runConsoleCommand("/* hello */ show regions;", ctx)).toEqual(plain);
  });

  it("shows a region's location and its replicas", async () => {
    const config = parseConfig(`
[[topology.regions]]
id = "eu-west-1"
location = "eu"
home = true
primary = { host = "eu1.internal", port = 5432, database = "shop" }
replicas = [{ host = "eu1-r1.internal", port = 5432, database = "shop" }, { host = "eu1-r2.internal", port = 6543, database = "shop" }]

[[topology.regions]]
id = "eu-west-2"
location = "eu"
primary = { host = "eu2.internal", port = 5432, database = "shop" }
`);
    const result = runConsoleCommand("SHOW REGIONS", await exampleContext({ config }));
    expect(result).not.toBeInstanceOf(PgError);
    expect((result as { rows: unknown }).rows).toEqual([
      ["eu-west-1", "yes", "eu", "eu1.internal:5432", "eu1-r1.internal:5432, eu1-r2.internal:6543", null],
      ["eu-west-2", "no", "eu", "eu2.internal:5432", "", null],
    ]);
  });

  it("gives each region its primary's health as SHOW HEALTH sees it, a replica's health aside", async () => {
    const result = runConsoleCommand("SHOW REGIONS", {
      ...(await exampleContext()),
      observed: observedFixture(),
    }) as ConsoleRows;
    expect(result.columns.at(-1)).toBe("health");
    // The fixture knows eu-west (primary up, replica unknown) and us-east (primary down), not ap-south.
    expect(result.rows.map((row) => [row[0], row.at(-1)])).toEqual([
      ["ap-south", null],
      ["eu-west", "up"],
      ["us-east", "down"],
    ]);
  });
});
