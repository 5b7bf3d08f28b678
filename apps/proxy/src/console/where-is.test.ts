import { MemoryDirectory, parseConfig, shardFor } from "@geo/core";
import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { runConsoleCommand } from "./index.js";

const COLUMNS = ["table", "key", "region", "state"];

describe("WHERE IS", () => {
  it("finds a key the directory lists as resident in its region", async () => {
    const ctx = await exampleContext();
    expect(runConsoleCommand("WHERE IS users alice", ctx)).toEqual({
      columns: COLUMNS,
      rows: [["users", "alice", "eu-west", "resident"]],
      tag: "SELECT 1",
    });
    expect(runConsoleCommand("where is orders bob;", ctx)).toMatchObject({
      rows: [["orders", "bob", "us-east", "resident"]],
    });
  });

  it("says an unlisted key is placed by hash in the home location", async () => {
    const result = runConsoleCommand("WHERE IS users zoe", await exampleContext());
    expect(result).toMatchObject({ rows: [["users", "zoe", "eu-west", "placed by hash"]] });
  });

  it("places an unlisted key on the home location's shard its hash picks", async () => {
    const config = parseConfig(`
[[topology.regions]]
id = "eu-1"
location = "eu"
home = true
primary = { host = "127.0.0.1", port = 5433, database = "shop" }

[[topology.regions]]
id = "eu-2"
location = "eu"
primary = { host = "127.0.0.1", port = 5434, database = "shop" }

[[topology.regions]]
id = "us-1"
primary = { host = "127.0.0.1", port = 5435, database = "shop" }

[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"
`);
    const ctx = await exampleContext({ config, directory: new MemoryDirectory([["pinned-key", "us-1"]]) });
    const seen = new Set<string>();
    for (let index = 0; index < 16; index++) {
      const key = `tenant-${index}`;
      const result = runConsoleCommand(`WHERE IS users ${key}`, ctx);
      const region = shardFor(key, "text", ["eu-1", "eu-2"]);
      expect(result).toMatchObject({ rows: [["users", key, region, "placed by hash"]] });
      seen.add(region);
    }
    expect([...seen].sort()).toEqual(["eu-1", "eu-2"]);
    expect(runConsoleCommand("WHERE IS users 'pinned-key'", ctx)).toMatchObject({
      rows: [["users", "pinned-key", "us-1", "resident"]],
    });
  });

  it("says a replicated table is in every region and a pinned one in its own", async () => {
    const ctx = await exampleContext();
    expect(runConsoleCommand("WHERE IS currencies EUR", ctx)).toMatchObject({
      rows: [["currencies", "EUR", "ap-south, eu-west, us-east", "replicated"]],
    });
    expect(runConsoleCommand("WHERE IS eu_audit bob", ctx)).toMatchObject({
      rows: [["eu_audit", "bob", "eu-west", "pinned"]],
    });
  });

  it("reads quoted keys, quoted and schema-qualified table names as PostgreSQL does", async () => {
    const ctx = await exampleContext();
    expect(runConsoleCommand(`WHERE IS public."users" 'o''brien and co'`, ctx)).toMatchObject({
      rows: [["users", "o'brien and co", "eu-west", "placed by hash"]],
    });
    expect(runConsoleCommand("WHERE IS USERS chandra", ctx)).toMatchObject({
      rows: [["users", "chandra", "ap-south", "resident"]],
    });
  });

  it("refuses an unknown table with 42P01, naming it and the tables that are placed", async () => {
    const result = runConsoleCommand("WHERE IS customers alice", await exampleContext());
    expect(result).toBeInstanceOf(PgError);
    const error = result as PgError;
    expect(error.code).toBe("42P01");
    expect(error.message).toContain('"customers"');
    expect(error.message).toContain("users");
    expect(error.hint).toContain("[[tables]]");
    expect(error.table).toBe("customers");
  });

  it("treats a quoted mixed-case name as a different table than the folded one", async () => {
    const result = runConsoleCommand(`WHERE IS "Users" alice`, await exampleContext());
    expect((result as PgError).code).toBe("42P01");
  });

  it("refuses a missing key or an unquoted key with spaces with 42601 and an example", async () => {
    const ctx = await exampleContext();
    for (const text of ["WHERE IS", "WHERE IS users", "WHERE IS users alice smith", "WHERE IS users 'open"]) {
      const result = runConsoleCommand(text, ctx);
      expect(result, text).toBeInstanceOf(PgError);
      expect((result as PgError).code, text).toBe("42601");
      expect((result as PgError).hint, text).toContain("WHERE IS users alice");
    }
  });

  it("canonicalises integer keys and refuses non-integers with 22P02 when keys are integers", async () => {
    const config = parseConfig(`
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = 5433, database = "shop" }

[[topology.regions]]
id = "us-east"
primary = { host = "127.0.0.1", port = 5434, database = "shop" }

[[tables]]
table = "accounts"
placement = "geo_partitioned"
key = "account_id"

[routing]
key_type = "integer"
`);
    const ctx = await exampleContext({ config, directory: new MemoryDirectory([["7", "us-east"]]) });
    expect(runConsoleCommand("WHERE IS accounts 007", ctx)).toMatchObject({
      rows: [["accounts", "7", "us-east", "resident"]],
    });
    expect((runConsoleCommand("WHERE IS accounts seven", ctx) as PgError).code).toBe("22P02");
  });

  it("follows the default placement for a table no entry names", async () => {
    const config = parseConfig(`
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = 5433, database = "shop" }

[[topology.regions]]
id = "us-east"
primary = { host = "127.0.0.1", port = 5434, database = "shop" }

[routing]
default_placement = { placement = "pinned", region = "us-east" }
`);
    const ctx = await exampleContext({ config });
    expect(runConsoleCommand("WHERE IS invoices 12", ctx)).toMatchObject({
      rows: [["invoices", "12", "us-east", "pinned"]],
    });
  });
});
