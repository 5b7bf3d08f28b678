import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateStatements } from "../src/generator.js";
import { grade } from "../src/grade.js";
import { type OracleWorld, startOracleWorld } from "../src/oracle-world.js";
import { ScriptClient } from "../src/outcome.js";
import { describeFailure, runOracle } from "../src/run-oracle.js";
import { FAMILIES } from "../src/statement.js";

// A different seed from the documented full run, so CI and the full run cover different statements.
const CI_SEED = 11;
const CI_COUNT = 400;
const CI_EXTENDED_COUNT = 200;

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
    expect(report.failures.map((failure) => describeFailure(failure)).join("\n\n")).toBe("");
    expect(report.total.wrong + report.total.invalid).toBe(0);
    // Refusing everything would pass the check above; every family must also be answered somewhere.
    for (const family of FAMILIES) {
      expect(report.byFamily[family].equal, `${family} answered at least once`).toBeGreaterThan(0);
    }
  });

  it("answers the same statements exactly or refuses them over the extended protocol, keys bound as parameters", async () => {
    const report = await runOracle(generateStatements(CI_SEED, CI_EXTENDED_COUNT), world!, {
      protocol: "extended",
    });
    expect(report.failures.map((failure) => describeFailure(failure, "extended")).join("\n\n")).toBe("");
    expect(report.total.equal).toBeGreaterThan(0);
  });

  it("grades as wrong an answer from only some of the regions (the oracle can fail)", async () => {
    // The hint sends the statement to one region: an honest routing of a dishonest request.
    const statement = {
      seed: 0,
      index: 0,
      family: "key-lookup" as const,
      shape: "key-lookup/forced-region",
      steps: [{ sql: "SELECT tenant_id, id FROM customers ORDER BY tenant_id, id", ordered: true }],
    };
    const hinted = {
      ...statement,
      steps: [{ ...statement.steps[0]!, sql: `/* geo: region=us-east */ ${statement.steps[0]!.sql}` }],
    };
    const reference = await new ScriptClient(world!.reference).run(statement.steps.map((step) => step.sql));
    const proxy = new ScriptClient(world!.proxy);
    const got = await proxy.run(hinted.steps.map((step) => step.sql));
    await proxy.close();
    expect(grade(statement, reference, got).verdict).toBe("wrong");
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
