import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { CONSOLE_SYNTAX, runConsoleCommand } from "./index.js";

describe("runConsoleCommand", () => {
  it("refuses a recognised command this build does not answer with 0A000, listing the valid ones", async () => {
    const result = runConsoleCommand("SHOW PEERS", await exampleContext());
    expect(result).toBeInstanceOf(PgError);
    const error = result as PgError;
    expect(error.code).toBe("0A000");
    expect(error.message).toContain("SHOW PEERS");
    for (const syntax of CONSOLE_SYNTAX) expect(error.hint).toContain(syntax);
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
