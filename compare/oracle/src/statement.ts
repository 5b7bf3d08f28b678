/** The families of generated statements; every run draws from all of them in turn. */
export const FAMILIES = [
  "key-lookup",
  "aggregate",
  "group-by",
  "join-on-key",
  "join-off-key",
  "subquery",
  "distinct",
  "set-operation",
  "window",
  "write-rollback",
] as const;
export type Family = (typeof FAMILIES)[number];

/** One SQL statement of a script, and whether its row order is part of the answer. */
export interface Step {
  readonly sql: string;
  /** True when the statement's ORDER BY makes the order unique; false compares rows as a multiset. */
  readonly ordered: boolean;
}

/** What one (seed, index) generates: a single read, or a transaction ending in ROLLBACK. */
export interface OracleStatement {
  readonly seed: number;
  readonly index: number;
  readonly family: Family;
  /** A finer label inside the family, e.g. `subquery/not-exists`. */
  readonly shape: string;
  readonly steps: readonly Step[];
}

/** The statement's SQL as one text, steps separated by semicolons (for reports and de-duplication). */
export function statementText(statement: OracleStatement): string {
  return statement.steps.map((step) => step.sql).join("; ");
}
