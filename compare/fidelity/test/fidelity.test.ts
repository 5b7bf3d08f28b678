import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TextSession } from "../src/answer.js";
import { grade } from "../src/grade.js";
import { MERGE_ROWS, measureMergeMemory } from "../src/merge-memory.js";
import { formatReport } from "../src/report.js";
import { describeGraded, type FidelityReport, runFidelity } from "../src/run-fidelity.js";
import { FAMILIES, STATEMENTS } from "../src/statements.js";
import { type FidelityWorld, startFidelityWorld } from "../src/world.js";

const RSS_GROWTH_BOUND_KB = 96 * 1024;

function failures(report: FidelityReport): string {
  return report.graded
    .filter((graded) => graded.grade.verdict === "wrong" || graded.grade.verdict === "invalid")
    .map((graded) => describeGraded(graded, report.format))
    .join("\n\n");
}

describe("geoproxy over three regions answers a fixed statement list exactly as one PostgreSQL", () => {
  let world: FidelityWorld | undefined;

  beforeAll(async () => {
    world = await startFidelityWorld();
  });

  afterAll(async () => {
    await world?.stop();
  });

  it("holds at least 150 statements with unique names", () => {
    expect(STATEMENTS.length).toBeGreaterThanOrEqual(150);
    const names = STATEMENTS.map((statement) => `${statement.family}/${statement.name}`);
    expect(new Set(names).size).toBe(names.length);
  });

  it("answers every statement with the reference's text answer, or refuses with a hint", async () => {
    const report = await runFidelity(STATEMENTS, world!, "text");
    console.log(formatReport(report));
    expect(failures(report)).toBe("");
    expect(report.total.wrong + report.total.invalid).toBe(0);
    for (const family of FAMILIES) {
      expect(report.byFamily[family].equal, `${family} answered at least once`).toBeGreaterThan(0);
    }
  });

  it("answers every statement with the reference's binary bytes through Parse/Bind/Execute", async () => {
    const report = await runFidelity(STATEMENTS, world!, "binary");
    console.log(formatReport(report));
    expect(failures(report)).toBe("");
    expect(report.total.wrong + report.total.invalid).toBe(0);
    expect(report.total.equal).toBeGreaterThan(STATEMENTS.length / 2);
  });

  it("refuses statements past a tight gather bound with 53400 and a hint naming the setting", async () => {
    const tight = await world!.startProxy("\n[gather]\nmax_rows = 20\n");
    try {
      const offKey = STATEMENTS.filter((statement) => statement.family === "join-off-key");
      const report = await runFidelity(
        offKey,
        { reference: world!.reference, proxy: tight.endpoint },
        "text",
      );
      expect(failures(report)).toBe("");
      const refused = report.graded.filter((graded) => graded.grade.verdict === "refused");
      expect(refused.length).toBeGreaterThan(0);
      for (const graded of refused) expect(graded.grade.detail).toMatch(/^\[53400\].*hint: .*max_rows/);
    } finally {
      await tight.close();
    }
  });

  it("grades as wrong the answer of one region only (the comparison can fail)", async () => {
    const statement = STATEMENTS.find((candidate) => candidate.name === "group-tenant")!;
    const hinted = { ...statement, sql: `/* geo: region=us-east */ ${statement.sql}` };
    const [reference, proxy] = await Promise.all([
      TextSession.open(world!.reference),
      TextSession.open(world!.proxy),
    ]);
    try {
      const expected = await reference.answer(statement);
      const got = await proxy.answer(hinted);
      expect(got.error).toBeUndefined();
      expect(grade(expected, got, statement.ordered).verdict).toBe("wrong");
    } finally {
      await Promise.all([reference.close(), proxy.close()]);
    }
  });

  it("grades a refusal without a hint, or with another SQLSTATE, as wrong", () => {
    const expected = { columns: ["n:23:-1"], rows: ["[1]"], tag: "SELECT 1" };
    const refusal = (sqlstate: string, hint: string | undefined) => ({
      columns: [],
      rows: [],
      tag: "",
      error: { sqlstate, message: "no", hint },
    });
    expect(grade(expected, refusal("0A000", "Constrain the key."), true).verdict).toBe("refused");
    expect(grade(expected, refusal("0A000", undefined), true).verdict).toBe("wrong");
    expect(grade(expected, refusal("XX000", "x"), true).verdict).toBe("wrong");
    expect(grade(expected, { ...expected, rows: ["[2]"] }, true).verdict).toBe("wrong");
  });

  it(`streams a merge of ${MERGE_ROWS} rows ordered by an integer with bounded proxy memory`, async () => {
    const result = await measureMergeMemory(world!.regions);
    console.log(
      `merge of ${result.rows} rows (${(result.bytes / 1048576).toFixed(1)} MB): geoproxy RSS ${(result.baselineRssKb / 1024).toFixed(1)} MB -> peak ${(result.peakRssKb / 1024).toFixed(1)} MB, growth ${(result.growthKb / 1024).toFixed(1)} MB`,
    );
    expect(result.rows).toBe(MERGE_ROWS);
    expect(result.inOrder).toBe(true);
    // The answer is larger than the bound, so holding it whole would cross it.
    expect(result.bytes).toBeGreaterThan(RSS_GROWTH_BOUND_KB * 1024);
    expect(result.growthKb).toBeLessThan(RSS_GROWTH_BOUND_KB);
  });
});
