import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { CONSOLE_SYNTAX, runConsoleCommand } from "./index.js";

describe("runConsoleCommand", () => {
  it("answers SHOW PEERS without a shared directory with 55000 and the setting that gives it peers", async () => {
    const result = runConsoleCommand("SHOW PEERS", await exampleContext());
    expect(result).toBeInstanceOf(PgError);
    const error = result as PgError;
    expect(error.code).toBe("55000");
    expect(error.message).toContain("SHOW PEERS");
    expect(error.hint).toContain("shared = true");
    expect(CONSOLE_SYNTAX).toContain("SHOW PEERS");
  });

  it("refuses text that is no console command with 42601, listing the valid ones", async () => {
    const result = runConsoleCommand("SELECT 1", await exampleContext());
    expect((result as PgError).code).toBe("42601");
    expect((result as PgError).hint).toContain("SHOW REGIONS");
    expect((runConsoleCommand("SELEKT", await exampleContext()) as PgError).code).toBe("42601");
  });

  it("lists every command it answers", () => {
    expect(CONSOLE_SYNTAX).toEqual([
      "SHOW REGIONS",
      "SHOW PLACEMENT",
      "SHOW SCHEMA",
      "SHOW POOLS",
      "SHOW HEALTH",
      "SHOW ALERTS",
      "SHOW STATS",
      "SHOW DIRECTORY [limit]",
      "SHOW IN DOUBT",
      "SHOW CLIENTS",
      "SHOW PEERS",
      "WHERE IS <table> <key>",
      "ROUTE <statement>",
      "RELOCATE <key>[, <key> ...] TO '<region>'",
      "REBALANCE <region> TO <region> LIMIT <n> [BATCH <m>]",
      "DRAIN <host:port>",
      "UNDRAIN <host:port>",
      "RESTRIPE <table>",
    ]);
  });
});
