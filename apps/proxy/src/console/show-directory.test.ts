import { MemoryDirectory } from "@geo/core";
import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { type ConsoleRows, runConsoleCommand } from "./index.js";

describe("SHOW DIRECTORY", () => {
  it("lists the directory's keys in key order with their regions", async () => {
    const result = runConsoleCommand("SHOW DIRECTORY", await exampleContext()) as ConsoleRows;
    expect(result.columns).toEqual(["key", "region"]);
    expect(result.tag).toBe("SHOW");
    expect(result.rows.slice(0, 3)).toEqual([
      ["alice", "eu-west"],
      ["bob", "us-east"],
      ["chandra", "ap-south"],
    ]);
    const keys = result.rows.map((row) => row[0]!);
    expect(keys).toEqual([...keys].sort());
  });

  it("stops at the limit given, and ALL lists every key", async () => {
    const directory = new MemoryDirectory(
      Array.from({ length: 150 }, (_, i): [string, string] => [`k${String(i).padStart(3, "0")}`, "eu-west"]),
    );
    const ctx = await exampleContext({ directory });
    expect((runConsoleCommand("show directory 2;", ctx) as ConsoleRows).rows).toEqual([
      ["k000", "eu-west"],
      ["k001", "eu-west"],
    ]);
    expect((runConsoleCommand("SHOW DIRECTORY", ctx) as ConsoleRows).rows).toHaveLength(100);
    expect((runConsoleCommand("SHOW DIRECTORY all", ctx) as ConsoleRows).rows).toHaveLength(150);
  });

  it("refuses a limit that is not a positive whole number with 42601", async () => {
    const ctx = await exampleContext();
    for (const text of ["SHOW DIRECTORY 0", "SHOW DIRECTORY -3", "SHOW DIRECTORY lots"]) {
      const result = runConsoleCommand(text, ctx);
      expect(result, text).toBeInstanceOf(PgError);
      expect((result as PgError).code).toBe("42601");
    }
  });
});
