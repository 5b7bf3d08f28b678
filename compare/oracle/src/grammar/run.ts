import type { Endpoint } from "../oracle-world.js";
import { ScriptClient, type ScriptOutcome, type StepResult } from "../outcome.js";
import { type QueryNode, render, shrinkCandidates } from "./ast.js";
import { type GrammarKind, type GrammarStatement, type GrammarStep, grammarText } from "./generate.js";

/**
 * SQLSTATEs of an honest refusal: 0A000 (not run across regions) and the gather bounds
 * (53400 in docs/errors.md; 54000 in older builds). Anything else the reference did not also raise
 * is a wrong answer.
 */
export const GRAMMAR_REFUSALS: ReadonlySet<string> = new Set(["0A000", "53400", "54000"]);

export type GrammarVerdict = "agreed" | "refused" | "wrong";

export interface GrammarGrade {
  readonly verdict: GrammarVerdict;
  /** The refusal's `[SQLSTATE] message`, or what differed. */
  readonly detail?: string | undefined;
  /** Agreement on an error both servers raised (the generator's statement was not valid). */
  readonly errorAgreement?: string | undefined;
  readonly expected?: string | undefined;
  readonly got?: string | undefined;
  /**
   * The reference raised an error PostgreSQL raises only under some plans and the proxy answered:
   * not graded (see `planDependent`).
   */
  readonly planDependent?: true | undefined;
}

/**
 * Errors whose raising depends on the plan PostgreSQL chose, not on the statement: a scalar
 * sub-query is evaluated only for the rows that reach it (21000 when it returns several), and
 * text compared under two implicit collations fails only where the executor hashes or sorts
 * it (42P22 "could not determine which collation to use for string hashing/comparison"); a
 * deterministic equality needs no collation. One server holding every row chooses another plan
 * than the regions and the home finish, so the reference may raise it where the proxy answers.
 */
function planDependent(error: { readonly sqlstate: string; readonly message: string } | undefined): boolean {
  if (error === undefined) return false;
  if (error.sqlstate === "21000") return error.message.startsWith("more than one row returned by a subquery");
  return (
    error.sqlstate === "42P22" &&
    error.message.startsWith("could not determine which collation to use for string")
  );
}

export interface GradeOptions {
  /**
   * The two sides are different databases (the control run): types created by the schema have
   * other OIDs there, so those are compared as "a user type". Regions and the reference are
   * created alike, so the proxy's grading compares every OID.
   */
  readonly otherDatabase?: boolean | undefined;
}

const FIRST_USER_OID = 16384;
const FLOAT4 = 700;
const FLOAT8 = 701;

/** Values as compared: floats rounded (the order of addition differs between one server and a merge). */
function normalise(result: StepResult): string[] {
  const floats = result.columns.map((c) => (c.typeOid === FLOAT4 ? 6 : c.typeOid === FLOAT8 ? 12 : 0));
  return result.rows.map((row) =>
    JSON.stringify(
      row.map((value, i) => {
        const digits = floats[i] ?? 0;
        if (value === null || digits === 0) return value;
        const n = Number(value);
        return Number.isFinite(n) ? (n === 0 ? "0" : n.toPrecision(digits)) : value;
      }),
    ),
  );
}

function preview(rows: readonly string[]): string {
  if (rows.length === 0) return "(no rows)";
  const shown = rows.slice(0, 8).join(" ");
  return rows.length > 8 ? `${shown} ... (${rows.length} rows)` : shown;
}

function showResult(result: StepResult | undefined, error?: { sqlstate: string; message: string }): string {
  if (error !== undefined) return `error [${error.sqlstate}] ${error.message}`;
  if (result === undefined) return "(nothing)";
  return `${result.command} ${result.rowCount ?? ""}: ${preview(normalise(result))}`;
}

/** The first difference between two results of one step, or undefined. */
export function compareStep(
  expected: StepResult,
  got: StepResult,
  ordered: boolean,
  options: GradeOptions = {},
): string | undefined {
  if (expected.command !== got.command || expected.rowCount !== got.rowCount)
    return `command tag: expected ${expected.command} ${expected.rowCount}, got ${got.command} ${got.rowCount}`;
  const oid = (typeOid: number) =>
    options.otherDatabase && typeOid >= FIRST_USER_OID ? "user type" : typeOid;
  const ec = expected.columns.map((c) => `${c.name}:${oid(c.typeOid)}`).join(", ");
  const gc = got.columns.map((c) => `${c.name}:${oid(c.typeOid)}`).join(", ");
  if (ec !== gc) return `columns (name:type oid): expected (${ec}), got (${gc})`;
  const e = normalise(expected);
  const g = normalise(got);
  if (!ordered) {
    e.sort();
    g.sort();
  }
  if (e.length !== g.length) return `expected ${e.length} row(s), got ${g.length}`;
  for (let i = 0; i < e.length; i++)
    if (e[i] !== g[i])
      return `${ordered ? "row" : "sorted row"} ${i + 1} differs: expected ${e[i]}, got ${g[i]}`;
  return undefined;
}

/** Grades what the proxy returned for a statement against the reference's answer. */
export function gradeGrammar(
  statement: Pick<GrammarStatement, "steps" | "tlp" | "norec">,
  reference: ScriptOutcome,
  proxy: ScriptOutcome,
  options: GradeOptions = {},
): GrammarGrade {
  const steps = statement.steps;
  for (let i = 0; i < steps.length; i++) {
    const refError = reference.failedStep === i ? reference.error : undefined;
    const gotError = proxy.failedStep === i ? proxy.error : undefined;
    if (
      gotError !== undefined &&
      GRAMMAR_REFUSALS.has(gotError.sqlstate) &&
      refError?.sqlstate !== gotError.sqlstate
    )
      return { verdict: "refused", detail: `[${gotError.sqlstate}] ${gotError.message}` };
    if (refError !== undefined || gotError !== undefined) {
      if (refError !== undefined && gotError !== undefined && refError.sqlstate === gotError.sqlstate)
        return { verdict: "agreed", errorAgreement: `[${refError.sqlstate}] ${refError.message}` };
      return {
        verdict: "wrong",
        detail: `step ${i}: ${refError === undefined ? "the proxy failed where the reference answered" : gotError === undefined ? "the proxy answered where the reference failed" : "another error"}`,
        expected: showResult(reference.results[i], refError),
        got: showResult(proxy.results[i], gotError),
        // Only where the reference raised it: the proxy raising 21000 where one server answers
        // could be rows duplicated across regions, which stays wrong.
        ...(gotError === undefined && planDependent(refError) ? { planDependent: true as const } : {}),
      };
    }
    const expected = reference.results[i];
    const got = proxy.results[i];
    if (expected === undefined || got === undefined)
      return { verdict: "wrong", detail: `step ${i}: a result is missing` };
    const difference = compareStep(expected, got, steps[i]!.ordered, options);
    if (difference !== undefined)
      return {
        verdict: "wrong",
        detail: `step ${i}: ${difference}`,
        expected: showResult(expected),
        got: showResult(got),
      };
  }
  if (statement.tlp !== undefined) {
    const whole = normalise(proxy.results[0]!);
    let parts = [1, 2, 3].flatMap((i) => normalise(proxy.results[i]!));
    let all = whole;
    if (statement.tlp.distinct) {
      parts = [...new Set(parts)];
      all = [...new Set(all)];
    }
    parts.sort();
    all.sort();
    if (parts.join("\n") !== all.join("\n"))
      return {
        verdict: "wrong",
        detail: `TLP: Q through the proxy has ${all.length} row(s); Q WHERE p, NOT p and p IS NULL through the proxy add up to ${parts.length}`,
        expected: preview(all),
        got: preview(parts),
      };
  }
  if (statement.norec) {
    const a = proxy.results[0]!.rows[0]?.[0];
    const b = proxy.results[1]!.rows[0]?.[0];
    if (a !== b)
      return {
        verdict: "wrong",
        detail: "NoREC: count(*) WHERE p and count(CASE WHEN p ...) differ through the proxy",
        expected: String(b),
        got: String(a),
      };
  }
  return { verdict: "agreed" };
}

export interface GrammarWrong {
  readonly statement: GrammarStatement;
  readonly grade: GrammarGrade;
  /** The smallest variant that is still wrong (single-step statements), else the statement itself. */
  readonly minimal: string;
  readonly minimalGrade: GrammarGrade;
}

export interface GrammarReport {
  readonly statements: number;
  readonly agreed: number;
  /** Agreed because both raised the same error. */
  readonly agreedOnError: number;
  readonly refused: number;
  readonly wrong: number;
  readonly byKind: Map<GrammarKind, Record<GrammarVerdict, number>>;
  readonly refusalReasons: Map<string, number>;
  readonly errorAgreements: Map<string, number>;
  readonly wrongs: readonly GrammarWrong[];
  /** Proxy connections that dropped after a statement had answered: a failure like a wrong answer. */
  readonly lost: readonly { readonly after: string; readonly message: string }[];
  /**
   * Statements the reference and its reversed copy answer differently (a bug in the generator:
   * the answer depends on row order or plan). Not graded; listed so they are fixed.
   */
  readonly unstable: readonly GrammarStatement[];
  readonly elapsedMs: number;
}

/** A message with its particulars blurred, so alike refusals count together. */
export function reasonShape(reason: string): string {
  return reason
    .replace(/"[^"]*"/g, '"..."')
    .replace(/\([^)]*\)/g, "(...)")
    .replace(/\$\d+/g, "$n")
    .replace(/\b(table|tables|joins|writes|reads|column) [a-z_.0-9, ]+ (across|in|from|has)\b/g, "$1 ... $2")
    .replace(/\b\d+\b/g, "N")
    .slice(0, 150);
}

/** Runs statements through both sides, grades them, and shrinks each wrong one. */
export async function runGrammar(
  statements: readonly GrammarStatement[],
  targets: {
    reference: Endpoint;
    proxy: Endpoint;
    intKeys?: { readonly reference: Endpoint; readonly proxy: Endpoint } | undefined;
    /** The reference's reversed copies: a shrunk statement must give them the reference's answer. */
    control?: { readonly text: Endpoint; readonly int: Endpoint } | undefined;
  },
  options: {
    onGraded?: (statement: GrammarStatement, grade: GrammarGrade) => void;
    /** Shrink at most this many wrong statements (each costs up to ~60 runs). */
    shrinkLimit?: number;
    /** `proxy` is another database (the control run): see GradeOptions. */
    otherDatabase?: boolean;
  } = {},
): Promise<GrammarReport> {
  const started = performance.now();
  const clients = {
    text: {
      reference: new ScriptClient(targets.reference, "simple", 20_000),
      proxy: new ScriptClient(targets.proxy, "simple", 20_000),
    },
    int:
      targets.intKeys === undefined
        ? undefined
        : {
            reference: new ScriptClient(targets.intKeys.reference, "simple", 20_000),
            proxy: new ScriptClient(targets.intKeys.proxy, "simple", 20_000),
          },
  };
  const controls =
    targets.control === undefined || options.otherDatabase
      ? undefined
      : { text: new ScriptClient(targets.control.text), int: new ScriptClient(targets.control.int) };
  const byKind = new Map<GrammarKind, Record<GrammarVerdict, number>>();
  const refusalReasons = new Map<string, number>();
  const errorAgreements = new Map<string, number>();
  const wrongs: GrammarWrong[] = [];
  const lost: { after: string; message: string }[] = [];
  const unstable: GrammarStatement[] = [];
  let agreed = 0;
  let agreedOnError = 0;
  let refused = 0;
  let wrong = 0;
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  try {
    for (const statement of statements) {
      const pair = statement.world === "int" ? clients.int : clients.text;
      if (pair === undefined) continue;
      const { reference, proxy } = pair;
      const expected = await reference.run(statement.steps);
      const got = await proxy.run(statement.steps);
      const g = gradeGrammar(statement, expected, got, { otherDatabase: options.otherDatabase });
      const counts = byKind.get(statement.kind) ?? { agreed: 0, refused: 0, wrong: 0 };
      counts[g.verdict]++;
      byKind.set(statement.kind, counts);
      if (g.verdict === "agreed") {
        agreed++;
        if (g.errorAgreement !== undefined) {
          agreedOnError++;
          bump(errorAgreements, reasonShape(g.errorAgreement));
        }
      } else if (g.verdict === "refused") {
        refused++;
        bump(refusalReasons, reasonShape(g.detail ?? ""));
      } else if (g.planDependent === true) {
        // An error only some plans raise, on one side only: neither answer is wrong.
        unstable.push(statement);
      } else if (
        controls !== undefined &&
        gradeGrammar(
          statement,
          expected,
          await (statement.world === "int" ? controls.int : controls.text).run(statement.steps),
          { otherDatabase: true },
        ).verdict !== "agreed"
      ) {
        // One PostgreSQL gives two answers (row order, plan): the generator's fault, not graded.
        unstable.push(statement);
      } else {
        wrong++;
        const shrunk =
          statement.query !== undefined && wrongs.length < (options.shrinkLimit ?? 40)
            ? await shrink(statement.query, statement.steps[0]!, reference, proxy, {
                otherDatabase: options.otherDatabase,
                control: statement.world === "int" ? controls?.int : controls?.text,
              })
            : undefined;
        wrongs.push({
          statement,
          grade: g,
          minimal: shrunk?.sql ?? grammarText(statement),
          minimalGrade: shrunk?.grade ?? g,
        });
      }
      options.onGraded?.(statement, g);
    }
  } finally {
    for (const pair of [clients.text, clients.int]) if (pair !== undefined) lost.push(...pair.proxy.lost);
    await Promise.all([controls?.text.close(), controls?.int.close()]);
    await Promise.all(
      [clients.text, clients.int].flatMap((pair) =>
        pair === undefined ? [] : [pair.reference.close(), pair.proxy.close()],
      ),
    );
  }
  return {
    statements: agreed + refused + wrong + unstable.length,
    agreed,
    agreedOnError,
    refused,
    wrong,
    byKind,
    refusalReasons,
    errorAgreements,
    wrongs,
    lost,
    unstable,
    elapsedMs: performance.now() - started,
  };
}

/** Greedily drops parts of a wrong query while it stays wrong. */
async function shrink(
  query: QueryNode,
  step: GrammarStep,
  reference: ScriptClient,
  proxy: ScriptClient,
  options: GradeOptions & { control?: ScriptClient | undefined },
): Promise<{ sql: string; grade: GrammarGrade } | undefined> {
  let current = query;
  let best: { sql: string; grade: GrammarGrade } | undefined;
  let budget = 60;
  let improved = true;
  while (improved && budget > 0) {
    improved = false;
    for (const candidate of shrinkCandidates(current)) {
      if (budget-- <= 0) break;
      const sql = render(candidate);
      const ordered = candidate.order?.total === true && candidate.order.orderBy.length > 0;
      const s = { sql, values: step.values, ordered };
      const expected = await reference.run([s]);
      // A smaller query must still be valid: one the reference rejects proves nothing.
      if (expected.error !== undefined) continue;
      const g = gradeGrammar({ steps: [s] }, expected, await proxy.run([s]), options);
      // Nor may it depend on row order or plan: the reversed copy must give the same answer.
      const stable =
        g.verdict !== "wrong" ||
        options.control === undefined ||
        gradeGrammar({ steps: [s] }, expected, await options.control.run([s]), { otherDatabase: true })
          .verdict === "agreed";
      if (g.verdict === "wrong" && stable) {
        current = candidate;
        best = {
          sql:
            step.values !== undefined && step.values.length > 0
              ? `${sql}  -- $ = ${JSON.stringify(step.values)}`
              : sql,
          grade: g,
        };
        improved = true;
        break;
      }
    }
  }
  return best;
}

const VERDICTS: readonly GrammarVerdict[] = ["agreed", "refused", "wrong"];

/** What a wrong answer looks like, so alike ones count together. */
function symptom(g: GrammarGrade): string {
  const got = g.got ?? "";
  if (got.startsWith("error ")) return `the proxy failed: ${reasonShape(got.slice(6))}`;
  if ((g.expected ?? "").startsWith("error ")) return `the proxy answered where the reference failed`;
  const detail = g.detail ?? "";
  if (detail.startsWith("TLP") || detail.startsWith("NoREC")) return detail.split(":")[0]!;
  if (/command tag|expected \d+ row/.test(detail)) return "another number of rows";
  if (detail.includes("columns")) return "other columns or types";
  return detail.includes("sorted row") ? "other rows" : "other rows or order";
}

/** The report as markdown. */
export function formatGrammarReport(report: GrammarReport, options: { seed: number; start: number }): string {
  // The share answered (not refused) of the statements graded.
  const graded = report.statements - report.unstable.length;
  const answered = graded - report.refused;
  const pct = (n: number) => (graded === 0 ? "0.0" : ((100 * n) / graded).toFixed(1));
  const lines = [
    `## Oracle, adversarial generator: seed ${options.seed}, statements ${options.start}..${options.start + report.statements - 1}, ${(report.elapsedMs / 1000).toFixed(1)} s`,
    "",
    "| statements | agreed | (of which on the same error) | refused | wrong | share answered | not graded | connections dropped |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    `| ${report.statements} | ${report.agreed} | ${report.agreedOnError} | ${report.refused} | ${report.wrong} | ${pct(answered)}% | ${report.unstable.length} | ${report.lost.length} |`,
    "",
    "| kind | agreed | refused | wrong |",
    "| --- | ---: | ---: | ---: |",
    ...[...report.byKind.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([kind, c]) => `| ${kind} | ${VERDICTS.map((v) => c[v]).join(" | ")} |`),
  ];
  const table = (title: string, map: Map<string, number>) => {
    if (map.size === 0) return;
    lines.push("", title, "", "| count | reason |", "| ---: | --- |");
    for (const [reason, n] of [...map.entries()].sort((a, b) => b[1] - a[1]))
      lines.push(`| ${n} | ${reason.replaceAll("|", "\\|")} |`);
  };
  table("Refusals by reason:", report.refusalReasons);
  table("Errors both servers raised (agreement):", report.errorAgreements);
  const symptoms = new Map<string, number>();
  for (const w of report.wrongs) {
    const key = symptom(w.minimalGrade);
    symptoms.set(key, (symptoms.get(key) ?? 0) + 1);
  }
  table("Wrong answers by symptom (of the shrunk statement):", symptoms);
  if (report.wrongs.length > 0) {
    lines.push("", `### ${report.wrongs.length} wrong`, "");
    for (const w of report.wrongs) {
      lines.push(
        `WRONG #${w.statement.index} (seed ${w.statement.seed}, ${w.statement.kind}): ${w.minimalGrade.detail ?? ""}`,
        ...(w.minimal === grammarText(w.statement)
          ? []
          : [
              `  generated: ${grammarText(w.statement).replaceAll("\n", "\n  ")}`,
              `    (${w.grade.detail ?? ""})`,
              "  shrunk:",
            ]),
        `  ${w.minimal.replaceAll("\n", "\n  ")}`,
        `  expected: ${w.minimalGrade.expected ?? ""}`,
        `  got:      ${w.minimalGrade.got ?? ""}`,
        "",
      );
    }
  }
  if (report.unstable.length > 0) {
    lines.push(
      "",
      `### ${report.unstable.length} not graded: one PostgreSQL gives two answers (fix the generator)`,
      "",
    );
    for (const u of report.unstable) lines.push(`#${u.index} (${u.kind}) ${grammarText(u)}`, "");
  }
  if (report.lost.length > 0) {
    lines.push("", `### ${report.lost.length} connection(s) dropped by the proxy after answering`, "");
    for (const l of report.lost) lines.push(`after: ${l.after}`, `  ${l.message}`, "");
  }
  lines.push(
    report.wrong + report.lost.length === 0
      ? "PASS: nothing wrong."
      : `FAIL: ${report.wrong} wrong, ${report.lost.length} connection(s) dropped.`,
  );
  return lines.join("\n");
}
