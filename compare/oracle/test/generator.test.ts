import { startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateStatement, generateStatements } from "../src/generator.js";
import { liftLiterals } from "../src/outcome.js";
import { dataSql, SCHEMA_SQL } from "../src/schema.js";
import { FAMILIES, statementText } from "../src/statement.js";

describe("the statement generator", () => {
  it("gives the same statement for the same seed and index, whatever was generated before", () => {
    const inOrder = generateStatements(7, 60);
    const backwards = Array.from({ length: 60 }, (_, i) => generateStatement(7, 59 - i)).reverse();
    expect(backwards.map(statementText)).toEqual(inOrder.map(statementText));
  });

  it("gives different statements for different seeds", () => {
    const one = generateStatements(1, 200).map(statementText);
    const two = generateStatements(2, 200).map(statementText);
    const same = one.filter((text, index) => text === two[index]).length;
    expect(same).toBeLessThan(20);
  });

  it("draws at least 2,000 distinct statements from one seed", () => {
    const texts = new Set(generateStatements(1, 2400).map(statementText));
    expect(texts.size).toBeGreaterThanOrEqual(2000);
  });

  it("covers every family, and the subquery kinds the oracle promises", () => {
    const statements = generateStatements(1, 2000);
    const families = new Set(statements.map((statement) => statement.family));
    expect([...families].sort()).toEqual([...FAMILIES].sort());
    const shapes = new Set(statements.map((statement) => statement.shape));
    for (const shape of [
      "subquery/in",
      "subquery/exists",
      "subquery/not-exists",
      "subquery/correlated-scalar",
      "subquery/scalar",
      "subquery/cte",
      "subquery/lateral",
    ]) {
      expect(shapes).toContain(shape);
    }
  });
});

describe("lifting literals into parameters", () => {
  it("binds each quoted string, quotes undoubled, and leaves numbers in the text", () => {
    expect(liftLiterals("SELECT 1 FROM t WHERE a = 'o''hara' AND b IN ('x', 'mo li') AND c > 2.5")).toEqual({
      text: "SELECT 1 FROM t WHERE a = $1 AND b IN ($2, $3) AND c > 2.5",
      values: ["o'hara", "x", "mo li"],
    });
  });
});

describe("every generated statement against one real PostgreSQL holding every row", () => {
  let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
  let client: pg.Client | undefined;

  beforeAll(async () => {
    cluster = await startCluster({ count: 1, initSql: SCHEMA_SQL });
    client = new pg.Client({ connectionString: cluster.servers[0]!.url });
    await client.connect();
    await client.query(dataSql("reference"));
  });

  afterAll(async () => {
    await client?.end();
    await cluster?.stop();
  });

  it("runs 2,000 statements of seed 1 without an error (no generator bug)", async () => {
    const failures: string[] = [];
    for (const statement of generateStatements(1, 2000)) {
      for (const step of statement.steps) {
        try {
          await client!.query(step.sql);
        } catch (error) {
          failures.push(`#${statement.index}: ${step.sql}\n  ${(error as Error).message}`);
          await client!.query("ROLLBACK");
          break;
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("runs them with every string literal bound as a parameter too (the extended protocol's form)", async () => {
    const failures: string[] = [];
    for (const statement of generateStatements(1, 2000)) {
      for (const step of statement.steps) {
        try {
          await client!.query(liftLiterals(step.sql));
        } catch (error) {
          failures.push(`#${statement.index}: ${step.sql}\n  ${(error as Error).message}`);
          await client!.query("ROLLBACK");
          break;
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("returns a unique order: each ordered read gives the same rows when run backwards over the same data", async () => {
    // Reversing the physical order of the rows changes nothing when ORDER BY ends in a unique key.
    const statements = generateStatements(3, 400);
    const first = new Map<number, string>();
    for (const statement of statements) {
      const step = statement.steps[0]!;
      if (!step.ordered || step.sql === "BEGIN") continue;
      const result = await client!.query({ text: step.sql, rowMode: "array" });
      first.set(statement.index, JSON.stringify(result.rows));
    }
    await client!.query("SET enable_indexscan = off; SET enable_bitmapscan = off");
    await client!.query(
      "CREATE TABLE customers_r AS SELECT * FROM customers ORDER BY tenant_id DESC, id DESC; TRUNCATE customers; INSERT INTO customers SELECT * FROM customers_r; DROP TABLE customers_r",
    );
    await client!.query(
      "CREATE TABLE orders_r AS SELECT * FROM orders ORDER BY tenant_id DESC, id DESC; TRUNCATE orders; INSERT INTO orders SELECT * FROM orders_r; DROP TABLE orders_r",
    );
    const differing: string[] = [];
    for (const statement of statements) {
      const expected = first.get(statement.index);
      if (expected === undefined) continue;
      const result = await client!.query({ text: statement.steps[0]!.sql, rowMode: "array" });
      if (JSON.stringify(result.rows) !== expected) differing.push(statement.steps[0]!.sql);
    }
    await client!.query("RESET enable_indexscan; RESET enable_bitmapscan");
    expect(first.size).toBeGreaterThan(250);
    expect(differing).toEqual([]);
  });
});
