import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateGrammarStatement, generateGrammarStatements, grammarText } from "../src/grammar/generate.js";
import { formatGrammarReport, gradeGrammar, runGrammar } from "../src/grammar/run.js";
import { readStatementFile } from "../src/grammar/statement-file.js";
import { type OracleWorld, startOracleWorld } from "../src/oracle-world.js";
import { ScriptClient } from "../src/outcome.js";

// Not the seed documented in docs/NUMBERS.md, so CI and the measured run cover different statements.
const CI_SEED = 7;
const CI_COUNT = 2000;

describe("the grammar generator", () => {
  it("is a pure function of (seed, index)", () => {
    const a = generateGrammarStatements(3, 200).map(grammarText);
    const b = generateGrammarStatements(3, 200).map(grammarText);
    expect(a).toEqual(b);
    expect(grammarText(generateGrammarStatement(3, 150))).toBe(a[150]);
    expect(new Set(a).size).toBeGreaterThan(190);
  });

  it("covers every kind and the constructs the brief names", () => {
    const statements = generateGrammarStatements(1, 2000);
    const kinds = new Set(statements.map((s) => s.kind));
    for (const kind of ["select", "setop", "no-from", "with", "params", "prepare", "tlp", "norec", "int-key"])
      expect(kinds, kind).toContain(kind);
    const text = statements.map(grammarText).join("\n");
    for (const construct of [
      "LEFT JOIN",
      "RIGHT JOIN",
      "FULL JOIN",
      "LATERAL",
      "NOT EXISTS",
      "NOT IN (SELECT",
      "WITH RECURSIVE",
      "INTERSECT ALL",
      "EXCEPT",
      "GROUPING SETS",
      "ROLLUP",
      "HAVING",
      "DISTINCT ON",
      "OVER (",
      "WITH TIES",
      "OFFSET",
      'COLLATE "C"',
      "COLLATE ci",
      "string_agg(",
      "array_agg(",
      "bool_and(",
      "avg(",
      "= ANY(ARRAY[",
      "'alice'::text",
      "generate_series(",
      "(VALUES ",
      "PREPARE ",
      "EXECUTE ",
      '::"char"',
      "ROW(",
      "B'",
      "x1.acct = '0",
    ])
      expect(text, construct).toContain(construct);
  });

  it("grades a TLP partition that loses rows as wrong, and the same error on both sides as agreement", () => {
    const rows = (values: string[]) => ({
      kind: "rows" as const,
      command: "SELECT",
      rowCount: values.length,
      columns: [{ name: "c1", typeOid: 25 }],
      rows: values.map((v) => [v]),
    });
    const steps = [0, 1, 2, 3].map((i) => ({ sql: `q${i}`, ordered: false }));
    const whole = { results: [rows(["a", "b", "c"]), rows(["a"]), rows(["b"]), rows([])] };
    expect(gradeGrammar({ steps, tlp: { distinct: false } }, whole, whole).verdict).toBe("wrong");
    const error = { kind: "error" as const, sqlstate: "21000", message: "more than one row" };
    const failed = { results: [], error, failedStep: 0 };
    expect(gradeGrammar({ steps: [steps[0]!] }, failed, failed).verdict).toBe("agreed");
    const refusal = { results: [], error: { ...error, sqlstate: "0A000" }, failedStep: 0 };
    expect(gradeGrammar({ steps: [steps[0]!] }, { results: [rows(["a"])] }, refusal).verdict).toBe("refused");
    expect(gradeGrammar({ steps: [steps[0]!] }, { results: [rows(["a"])] }, failed).verdict).toBe("wrong");
    // An error only some plans raise: not graded where the reference raised it and the proxy
    // answered; still wrong the other way round (rows duplicated across regions would raise it).
    const subquery = {
      kind: "error" as const,
      sqlstate: "21000",
      message: "more than one row returned by a subquery used as an expression",
    };
    const planFailed = { results: [], error: subquery, failedStep: 0 };
    const answered = { results: [rows([])] };
    expect(gradeGrammar({ steps: [steps[0]!] }, planFailed, answered).planDependent).toBe(true);
    expect(gradeGrammar({ steps: [steps[0]!] }, answered, planFailed)).toMatchObject({ verdict: "wrong" });
    expect(gradeGrammar({ steps: [steps[0]!] }, answered, planFailed).planDependent).toBeUndefined();
    // Floats are compared rounded: the order of addition differs between one server and a merge.
    const float = (v: string) => ({ ...rows([v]), columns: [{ name: "c1", typeOid: 701 }] });
    expect(
      gradeGrammar(
        { steps: [steps[0]!] },
        { results: [float("0.30000000000000004")] },
        { results: [float("0.3")] },
      ).verdict,
    ).toBe("agreed");
  });
});

describe("geoproxy against one PostgreSQL, on adversarial generated statements", () => {
  let world: OracleWorld | undefined;

  beforeAll(async () => {
    world = await startOracleWorld({ world: "grammar" });
  });

  afterAll(async () => {
    await world?.stop();
  });

  it("grades as wrong an answer from one region only (the oracle can fail)", async () => {
    const sql = "SELECT tenant_id, id FROM users";
    const reference = await new ScriptClient(world!.reference).run([sql]);
    const proxy = new ScriptClient(world!.proxy);
    const got = await proxy.run([`/* geo: region=us-east */ ${sql}`]);
    await proxy.close();
    expect(gradeGrammar({ steps: [{ sql, ordered: false }] }, reference, got).verdict).toBe("wrong");
  });

  it("draws only statements whose answer does not depend on row order or plan (the control run)", async () => {
    const control = world!.control!;
    const report = await runGrammar(
      generateGrammarStatements(CI_SEED, CI_COUNT),
      {
        reference: world!.reference,
        proxy: control.text,
        intKeys: { reference: world!.intKeys!.reference, proxy: control.int },
      },
      { otherDatabase: true },
    );
    expect(report.wrong === 0 ? "" : formatGrammarReport(report, { seed: CI_SEED, start: 0 })).toBe("");
    expect(report.statements).toBe(CI_COUNT);
  });

  it(`answers ${CI_COUNT} generated statements (seed ${CI_SEED}) exactly or refuses them`, async () => {
    const report = await runGrammar(generateGrammarStatements(CI_SEED, CI_COUNT), world!, {
      shrinkLimit: 12,
    });
    const text = formatGrammarReport(report, { seed: CI_SEED, start: 0 });
    // Refusing everything would pass a check of wrong answers alone.
    expect(report.agreed, text).toBeGreaterThan(CI_COUNT / 2);
    expect(report.wrong + report.lost.length === 0 ? "" : text).toBe("");
  });

  it("answers the hand-written corpus exactly (corpus/hand-written.sql)", async () => {
    const statements = readStatementFile(
      fileURLToPath(new URL("../corpus/hand-written.sql", import.meta.url)),
    );
    const report = await runGrammar(statements, world!, { shrinkLimit: 0 });
    const text = formatGrammarReport(report, { seed: 0, start: 0 });
    expect(report.statements, text).toBe(statements.length);
    expect(report.agreed, text).toBeGreaterThan(statements.length * 0.9);
    expect(report.wrong + report.lost.length + report.unstable.length === 0 ? "" : text).toBe("");
  });
});
