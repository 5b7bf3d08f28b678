import type { ScriptOutcome, StepResult } from "./outcome.js";
import type { OracleStatement } from "./statement.js";

export const VERDICTS = ["equal", "refused", "wrong", "invalid"] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface Grade {
  readonly verdict: Verdict;
  /** Why, for anything but equal: the first difference, or the error. */
  readonly detail?: string;
}

/**
 * SQLSTATEs that count as an honest refusal: 0A000 (the proxy will not run this across regions)
 * and 54000 (program_limit_exceeded: a gather bound such as gather.max_rows was reached).
 * Anything else from the proxy, where the reference answered, is a wrong answer.
 */
export const REFUSAL_SQLSTATES: ReadonlySet<string> = new Set(["0A000", "54000"]);

/** Grades what the proxy returned against what the reference PostgreSQL returned. */
export function grade(statement: OracleStatement, reference: ScriptOutcome, proxy: ScriptOutcome): Grade {
  if (reference.error !== undefined) {
    return {
      verdict: "invalid",
      detail: `the reference failed at step ${reference.failedStep}: [${reference.error.sqlstate}] ${reference.error.message}`,
    };
  }
  if (proxy.error !== undefined) {
    const where = `step ${proxy.failedStep}: [${proxy.error.sqlstate}] ${proxy.error.message}`;
    return REFUSAL_SQLSTATES.has(proxy.error.sqlstate)
      ? { verdict: "refused", detail: where }
      : { verdict: "wrong", detail: `the proxy failed at ${where}` };
  }
  for (let index = 0; index < statement.steps.length; index++) {
    const expected = reference.results[index];
    const got = proxy.results[index];
    if (expected === undefined || got === undefined) {
      return { verdict: "wrong", detail: `step ${index}: a result is missing` };
    }
    const difference = compareResults(expected, got, statement.steps[index]!.ordered);
    if (difference !== undefined) return { verdict: "wrong", detail: `step ${index}: ${difference}` };
  }
  return { verdict: "equal" };
}

function rowText(row: readonly (string | null)[]): string {
  return JSON.stringify(row);
}

/** The first difference between two results, or undefined when they are the same answer. */
export function compareResults(expected: StepResult, got: StepResult, ordered: boolean): string | undefined {
  if (expected.command !== got.command || expected.rowCount !== got.rowCount) {
    return `command tag: expected ${expected.command} ${expected.rowCount}, got ${got.command} ${got.rowCount}`;
  }
  const expectedColumns = expected.columns.map((c) => `${c.name}:${c.typeOid}`).join(", ");
  const gotColumns = got.columns.map((c) => `${c.name}:${c.typeOid}`).join(", ");
  if (expectedColumns !== gotColumns) {
    return `columns (name:type oid): expected (${expectedColumns}), got (${gotColumns})`;
  }
  const expectedRows = expected.rows.map(rowText);
  const gotRows = got.rows.map(rowText);
  if (!ordered) {
    expectedRows.sort();
    gotRows.sort();
  }
  if (expectedRows.length !== gotRows.length) {
    return `expected ${expectedRows.length} row(s), got ${gotRows.length}\n  expected: ${preview(expectedRows)}\n  got:      ${preview(gotRows)}`;
  }
  for (let index = 0; index < expectedRows.length; index++) {
    if (expectedRows[index] !== gotRows[index]) {
      return `row ${index + 1} differs: expected ${expectedRows[index]}, got ${gotRows[index]}`;
    }
  }
  return undefined;
}

function preview(rows: readonly string[]): string {
  const shown = rows.slice(0, 6).join(" ");
  return rows.length > 6 ? `${shown} ... (${rows.length} rows)` : shown === "" ? "(no rows)" : shown;
}
