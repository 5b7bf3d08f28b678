import { type Grade, grade, VERDICTS, type Verdict } from "./grade.js";
import type { Endpoint } from "./oracle-world.js";
import { type Protocol, ScriptClient } from "./outcome.js";
import { FAMILIES, type Family, type OracleStatement, statementText } from "./statement.js";

/** One graded statement. */
export interface GradedStatement {
  readonly statement: OracleStatement;
  readonly grade: Grade;
}

export type VerdictCounts = Record<Verdict, number>;

/** Everything a run found: counts per family and per verdict, and every wrong or invalid statement. */
export interface OracleReport {
  readonly total: VerdictCounts;
  readonly byFamily: Record<Family, VerdictCounts>;
  readonly byShape: Map<string, VerdictCounts>;
  /** Wrong and invalid statements, in index order. */
  readonly failures: readonly GradedStatement[];
  /** The SQLSTATE-and-reason of refusals, counted (the first line of each message). */
  readonly refusalReasons: Map<string, number>;
  readonly elapsedMs: number;
  readonly protocol: Protocol;
}

function zeroCounts(): VerdictCounts {
  return Object.fromEntries(VERDICTS.map((verdict) => [verdict, 0])) as VerdictCounts;
}

/**
 * Runs each statement against the reference and through the proxy, one at a time on one
 * connection each, and grades it, with the simple query protocol or (`protocol: "extended"`) with
 * every string literal bound as a parameter. `onGraded` sees every statement as it is graded.
 */
export async function runOracle(
  statements: readonly OracleStatement[],
  targets: { reference: Endpoint; proxy: Endpoint },
  options: { protocol?: Protocol; onGraded?: (graded: GradedStatement) => void } = {},
): Promise<OracleReport> {
  const started = performance.now();
  const protocol = options.protocol ?? "simple";
  const reference = new ScriptClient(targets.reference, protocol);
  const proxy = new ScriptClient(targets.proxy, protocol);
  const total = zeroCounts();
  const byFamily = Object.fromEntries(FAMILIES.map((family) => [family, zeroCounts()])) as Record<
    Family,
    VerdictCounts
  >;
  const byShape = new Map<string, VerdictCounts>();
  const failures: GradedStatement[] = [];
  const refusalReasons = new Map<string, number>();
  try {
    for (const statement of statements) {
      const sqls = statement.steps.map((step) => step.sql);
      const expected = await reference.run(sqls);
      const got = await proxy.run(sqls);
      const graded: GradedStatement = { statement, grade: grade(statement, expected, got) };
      const verdict = graded.grade.verdict;
      total[verdict]++;
      byFamily[statement.family][verdict]++;
      const shapeCounts = byShape.get(statement.shape) ?? zeroCounts();
      shapeCounts[verdict]++;
      byShape.set(statement.shape, shapeCounts);
      if (verdict === "wrong" || verdict === "invalid") failures.push(graded);
      if (verdict === "refused" && got.error !== undefined) {
        const reason = `[${got.error.sqlstate}] ${reasonShape(got.error.message)}`;
        refusalReasons.set(reason, (refusalReasons.get(reason) ?? 0) + 1);
      }
      options.onGraded?.(graded);
    }
  } finally {
    await Promise.all([reference.close(), proxy.close()]);
  }
  return {
    total,
    byFamily,
    byShape,
    failures,
    refusalReasons,
    elapsedMs: performance.now() - started,
    protocol,
  };
}

/** A refusal message with its particulars (table and region lists) blurred, so alike ones count together. */
function reasonShape(message: string): string {
  return message
    .replace(/\([^)]*\)/g, "(...)")
    .replace(/\b(table|tables|joins|writes|reads) [a-z_, ]+ (across|in|from)\b/g, "$1 ... $2")
    .slice(0, 120);
}

/** Text of a failure for the terminal: the statement, how to reproduce it, and the difference. */
export function describeFailure(
  { statement, grade }: GradedStatement,
  protocol: Protocol = "simple",
): string {
  return [
    `${grade.verdict.toUpperCase()} #${statement.index} (seed ${statement.seed}, ${statement.shape}, ${protocol} protocol)`,
    `  ${statementText(statement)}`,
    `  ${grade.detail ?? ""}`.replaceAll("\n", "\n  "),
  ].join("\n");
}
