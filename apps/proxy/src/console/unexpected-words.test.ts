import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { runConsoleCommand } from "./index.js";

/** Each console command with words it does not take, and the form its hint must give. */
const CASES: readonly (readonly [text: string, command: string, form: string])[] = [
  ["SHOW HEALTH now", "SHOW HEALTH", "SHOW HEALTH"],
  ["SHOW ALERTS x", "SHOW ALERTS", "SHOW ALERTS"],
  ["SHOW IN DOUBT x", "SHOW IN DOUBT", "SHOW IN DOUBT"],
  ["show in  doubt for real;", "SHOW IN DOUBT", "SHOW IN DOUBT"],
  ["SHOW REGIONS x", "SHOW REGIONS", "SHOW REGIONS"],
  ["SHOW PLACEMENT of users", "SHOW PLACEMENT", "SHOW PLACEMENT"],
  ["SHOW POOLS eu-west", "SHOW POOLS", "SHOW POOLS"],
  ["SHOW STATS now", "SHOW STATS", "SHOW STATS"],
  ["SHOW CLIENTS all", "SHOW CLIENTS", "SHOW CLIENTS"],
  ["SHOW DIRECTORY 10 x", "SHOW DIRECTORY", "SHOW DIRECTORY 20"],
  ["WHERE IS users alice bob", "WHERE IS", "WHERE IS users alice"],
  ["RELOCATE alice TO 'us-east' now", "RELOCATE", "RELOCATE alice"],
  ["REBALANCE eu-west TO us-east LIMIT 5 now", "REBALANCE", "REBALANCE eu-west TO"],
  ["DRAIN 10.0.0.6:5432 now", "DRAIN", "DRAIN 10.0.0.6:5432"],
  ["UNDRAIN 10.0.0.6:5432 now", "UNDRAIN", "UNDRAIN 10.0.0.6:5432"],
];

describe("console commands given words they do not take", () => {
  for (const [text, command, form] of CASES) {
    it(`answers ${JSON.stringify(text)} with 42601 naming ${command} and hinting ${form}`, async () => {
      // A remote client under trust: the words are refused before the permission is checked.
      const ctx = { ...(await exampleContext()), clientAddress: "10.1.2.3" };
      const result = runConsoleCommand(text, ctx);
      expect(result).toBeInstanceOf(PgError);
      const error = result as PgError;
      expect(error.code).toBe("42601");
      expect(error.message).toContain(command);
      expect(error.hint).toContain(form);
    });
  }

  it("makes the proxy's analyzer see a console SHOW with words as a console statement, alone and in a batch", async () => {
    const { analyzer } = await exampleContext();
    for (const text of ["SHOW HEALTH now", "SHOW ALERTS x", "SHOW IN DOUBT x", "SHOW REGIONS x"]) {
      expect(analyzer.analyze(text).kind, text).toBe("console");
    }
    expect(analyzer.analyzeBatch("SELECT 1; SHOW REGIONS x").map((analysis) => analysis.kind)).toEqual([
      "select",
      "console",
    ]);
  });

  it("counts a trailing comment as no words", async () => {
    const ctx = await exampleContext();
    expect(runConsoleCommand("SHOW REGIONS -- which ones?", ctx)).toEqual(
      runConsoleCommand("SHOW REGIONS", ctx),
    );
    expect(runConsoleCommand("SHOW REGIONS; /* done */", ctx)).not.toBeInstanceOf(PgError);
  });
});
