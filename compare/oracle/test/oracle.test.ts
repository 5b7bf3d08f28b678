import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateStatements } from "../src/generator.js";
import { type OracleWorld, startOracleWorld } from "../src/oracle-world.js";
import { describeFailure, runOracle } from "../src/run-oracle.js";
import { FAMILIES } from "../src/statement.js";

// A different seed from the documented full run, so CI and the full run cover different statements.
const CI_SEED = 11;
const CI_COUNT = 400;

describe("geoproxy over three regions against one PostgreSQL holding every row", () => {
  let world: OracleWorld | undefined;

  beforeAll(async () => {
    world = await startOracleWorld();
  });

  afterAll(async () => {
    await world?.stop();
  });

  it(`answers ${CI_COUNT} generated statements exactly or refuses them with 0A000`, async () => {
    const report = await runOracle(generateStatements(CI_SEED, CI_COUNT), world!);
    expect(report.failures.map(describeFailure).join("\n\n")).toBe("");
    expect(report.total.wrong + report.total.invalid).toBe(0);
    // Refusing everything would pass the check above; every family must also be answered somewhere.
    for (const family of FAMILIES) {
      expect(report.byFamily[family].equal, `${family} answered at least once`).toBeGreaterThan(0);
    }
  });

  it("sees a write inside a rolled-back transaction, and not after the rollback", async () => {
    const report = await runOracle(
      [
        {
          seed: 0,
          index: 0,
          family: "write-rollback",
          shape: "write-rollback/fixed",
          steps: [
            { sql: "BEGIN", ordered: false },
            { sql: "UPDATE customers SET balance = 0 WHERE tenant_id = 'emil' RETURNING id", ordered: false },
            { sql: "SELECT sum(balance) FROM customers WHERE tenant_id = 'emil'", ordered: false },
            { sql: "ROLLBACK", ordered: false },
            { sql: "SELECT sum(balance) > 0 FROM customers WHERE tenant_id = 'emil'", ordered: false },
          ],
        },
      ],
      world!,
    );
    expect(report.total.equal).toBe(1);
  });
});
