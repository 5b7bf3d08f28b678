import { describe, expect, it } from "vitest";
import { grade } from "../src/grade.js";
import type { ScriptOutcome, StepResult } from "../src/outcome.js";
import type { OracleStatement } from "../src/statement.js";

const statement = (ordered: boolean): OracleStatement => ({
  seed: 1,
  index: 0,
  family: "key-lookup",
  shape: "key-lookup/test",
  steps: [{ sql: "SELECT id FROM t ORDER BY id", ordered }],
});

const rows = (...values: (string | null)[]): StepResult => ({
  kind: "rows",
  command: "SELECT",
  rowCount: values.length,
  columns: [{ name: "id", typeOid: 23 }],
  rows: values.map((value) => [value]),
});

const answered = (result: StepResult): ScriptOutcome => ({ results: [result] });
const failed = (sqlstate: string): ScriptOutcome => ({
  results: [],
  error: { kind: "error", sqlstate, message: "no" },
  failedStep: 0,
});

describe("grading an answer against the reference", () => {
  it("calls equal rows in equal order equal", () => {
    expect(grade(statement(true), answered(rows("1", "2")), answered(rows("1", "2"))).verdict).toBe("equal");
  });

  it("calls the same rows in another order wrong when the order is part of the answer", () => {
    expect(grade(statement(true), answered(rows("1", "2")), answered(rows("2", "1"))).verdict).toBe("wrong");
  });

  it("accepts any order when the statement does not define one", () => {
    expect(grade(statement(false), answered(rows("1", "2")), answered(rows("2", "1"))).verdict).toBe("equal");
  });

  it("tells NULL from the text 'null' and a missing row from an extra one", () => {
    expect(grade(statement(true), answered(rows(null)), answered(rows("null"))).verdict).toBe("wrong");
    expect(grade(statement(true), answered(rows("1")), answered(rows("1", "1"))).verdict).toBe("wrong");
  });

  it("calls a different column type wrong even when the text matches", () => {
    const bigint: StepResult = { ...rows("1"), columns: [{ name: "id", typeOid: 20 }] };
    expect(grade(statement(true), answered(rows("1")), answered(bigint)).verdict).toBe("wrong");
  });

  it("counts 0A000 and the gather bound 54000 as refusals, and any other error as wrong", () => {
    expect(grade(statement(true), answered(rows("1")), failed("0A000")).verdict).toBe("refused");
    expect(grade(statement(true), answered(rows("1")), failed("54000")).verdict).toBe("refused");
    expect(grade(statement(true), answered(rows("1")), failed("42P01")).verdict).toBe("wrong");
    expect(grade(statement(true), answered(rows("1")), failed("connection")).verdict).toBe("wrong");
  });

  it("calls a statement the reference itself rejects invalid, whatever the proxy did", () => {
    expect(grade(statement(true), failed("42601"), answered(rows("1"))).verdict).toBe("invalid");
  });
});
