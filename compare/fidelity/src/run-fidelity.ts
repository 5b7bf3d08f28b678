import { type Answer, BinarySession, TextSession } from "./answer.js";
import { type Grade, grade, VERDICTS, type Verdict } from "./grade.js";
import { FAMILIES, type Family, type FidelityStatement } from "./statements.js";
import type { Endpoint } from "./world.js";

export const RESULT_FORMATS = ["text", "binary"] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

export type VerdictCounts = Record<Verdict, number>;

export interface GradedStatement {
  readonly statement: FidelityStatement;
  readonly grade: Grade;
}

export interface FidelityReport {
  readonly format: ResultFormat;
  readonly byFamily: Record<Family, VerdictCounts>;
  readonly total: VerdictCounts;
  readonly graded: readonly GradedStatement[];
  readonly elapsedMs: number;
}

interface Session {
  answer(statement: FidelityStatement): Promise<Answer>;
  close(): Promise<void>;
}

function open(format: ResultFormat, target: Endpoint): Promise<Session> {
  switch (format) {
    case "text":
      return TextSession.open(target);
    case "binary":
      return BinarySession.open(target);
  }
}

function zero(): VerdictCounts {
  return Object.fromEntries(VERDICTS.map((verdict) => [verdict, 0])) as VerdictCounts;
}

/** Runs every statement on the reference and through the proxy (one connection each) and grades the pair. */
export async function runFidelity(
  statements: readonly FidelityStatement[],
  targets: { readonly reference: Endpoint; readonly proxy: Endpoint },
  format: ResultFormat,
): Promise<FidelityReport> {
  const started = performance.now();
  let [reference, proxy] = await Promise.all([open(format, targets.reference), open(format, targets.proxy)]);
  const byFamily = Object.fromEntries(FAMILIES.map((family) => [family, zero()])) as Record<
    Family,
    VerdictCounts
  >;
  const total = zero();
  const graded: GradedStatement[] = [];
  try {
    for (const statement of statements) {
      const [expected, got] = await Promise.all([reference.answer(statement), proxy.answer(statement)]);
      const result = grade(expected, got, statement.ordered);
      byFamily[statement.family][result.verdict]++;
      total[result.verdict]++;
      graded.push({ statement, grade: result });
      // A broken or timed-out connection is graded wrong once; the next statement gets a fresh one,
      // so one failure is reported as one, not as every statement after it.
      if (got.error?.sqlstate === "connection") {
        await proxy.close();
        proxy = await open(format, targets.proxy);
      }
      if (expected.error?.sqlstate === "connection") {
        await reference.close();
        reference = await open(format, targets.reference);
      }
    }
  } finally {
    await Promise.all([reference.close(), proxy.close()]);
  }
  return { format, byFamily, total, graded, elapsedMs: performance.now() - started };
}

/** A graded statement as the report prints it. */
export function describeGraded(graded: GradedStatement, format: ResultFormat): string {
  const { statement, grade: result } = graded;
  const params = statement.params === undefined ? "" : `\n  params: ${JSON.stringify(statement.params)}`;
  return `${result.verdict.toUpperCase()} ${statement.family}/${statement.name} (${format})\n  ${statement.sql}${params}\n  ${result.detail ?? ""}`;
}
