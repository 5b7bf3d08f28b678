import type { Answer } from "./answer.js";

export const VERDICTS = ["equal", "refused", "wrong", "invalid"] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface Grade {
  readonly verdict: Verdict;
  readonly detail?: string;
}

/**
 * An honest refusal: 0A000 (not answered across regions) or 53400 (configuration_limit_exceeded,
 * a [gather] bound), and it must carry a hint naming the way out. Any other error is wrong.
 */
export const REFUSAL_SQLSTATES: ReadonlySet<string> = new Set(["0A000", "53400"]);

/** Grades the proxy's answer against the reference's: exact columns, tag and rows (as a multiset unless ordered). */
export function grade(expected: Answer, got: Answer, ordered: boolean): Grade {
  if (expected.error !== undefined) {
    return {
      verdict: "invalid",
      detail: `the reference failed: [${expected.error.sqlstate}] ${expected.error.message}`,
    };
  }
  if (got.error !== undefined) {
    const what = `[${got.error.sqlstate}] ${got.error.message}`;
    if (!REFUSAL_SQLSTATES.has(got.error.sqlstate))
      return { verdict: "wrong", detail: `the proxy failed: ${what}` };
    if (got.error.hint === undefined)
      return { verdict: "wrong", detail: `a refusal without a hint: ${what}` };
    return { verdict: "refused", detail: `${what} (hint: ${got.error.hint})` };
  }
  if (expected.columns.join(" ") !== got.columns.join(" ")) {
    return {
      verdict: "wrong",
      detail: `columns: expected (${expected.columns.join(", ")}), got (${got.columns.join(", ")})`,
    };
  }
  if (expected.tag !== got.tag)
    return { verdict: "wrong", detail: `tag: expected ${expected.tag}, got ${got.tag}` };
  const want = ordered ? expected.rows : [...expected.rows].sort();
  const have = ordered ? got.rows : [...got.rows].sort();
  if (want.length !== have.length) {
    return { verdict: "wrong", detail: `expected ${want.length} row(s), got ${have.length}` };
  }
  for (let index = 0; index < want.length; index++) {
    if (want[index] !== have[index]) {
      return { verdict: "wrong", detail: `row ${index + 1}: expected ${want[index]}, got ${have[index]}` };
    }
  }
  return { verdict: "equal" };
}
