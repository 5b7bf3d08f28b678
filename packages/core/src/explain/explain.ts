import {
  type Analysis,
  type Analyzer,
  type MergePlan,
  type RowCount,
  SqlAnalysisError,
  type StatementKind,
} from "@geo/sql";
import type { GatherConfig } from "../config/types.js";
import type { Directory } from "../directory/directory.js";
import type { Plan } from "../planner/plan.js";
import { type ParamValue, plan } from "../planner/planner.js";
import type { Topology } from "../topology/topology.js";

const KIND_NAMES: Record<StatementKind, string> = {
  select: "Select",
  insert: "Insert",
  update: "Update",
  delete: "Delete",
  merge: "Merge",
  copy: "Copy",
  explain: "Explain",
  ddl: "DDL",
  utility: "Utility",
  session: "Session",
  transaction: "Transaction",
  console: "Console",
  empty: "Empty",
};

const LOCAL_NAMES = {
  transaction: "transaction control",
  session: "a session setting",
  console: "a console command",
  empty: "an empty statement",
} as const;

export interface ExplainOptions {
  /** A loaded analyzer whose key columns come from the same topology (see `schemaInfoFor`). */
  readonly analyzer: Analyzer;
  readonly topology: Topology;
  readonly directory: Directory;
  readonly params?: readonly ParamValue[];
  readonly unlistedKeys?: "placed" | "anywhere";
  readonly gather?: GatherConfig;
}

function line(label: string, text: string): string {
  return `  ${label.padEnd(8)}${text}`;
}

/**
 * Says where a statement would run and how its answer would be combined, without running it:
 * what `geoproxy explain` and the console's ROUTE print. Pure: no I/O, the analyzer is loaded.
 *
 * @example
 * explain("SELECT * FROM users WHERE tenant_id = 'alice'", { analyzer, topology, directory });
 * //   kind    Select, ReadOnly, tables: users
 * //   plan    one region: eu-west (ReadOnly)
 */
export function explain(sql: string, options: ExplainOptions): string {
  let analysis: Analysis;
  try {
    analysis = options.analyzer.analyze(sql);
  } catch (error) {
    if (!(error instanceof SqlAnalysisError)) throw error;
    return [
      line("plan", `refused [${error.sqlstate}]`),
      line("reason", error.message),
      ...(error.hint === undefined ? [] : [line("hint", error.hint)]),
    ].join("\n");
  }
  const decided = plan(analysis, {
    topology: options.topology,
    directory: options.directory,
    ...(options.params === undefined ? {} : { params: options.params }),
    ...(options.unlistedKeys === undefined ? {} : { unlistedKeys: options.unlistedKeys }),
    ...(options.gather === undefined ? {} : { gather: options.gather }),
  });
  return formatPlan(analysis, decided);
}

/** The explain layout of a plan already made. */
export function formatPlan(analysis: Analysis, decided: Plan): string {
  const access = analysis.readOnly && !analysis.hints.primary ? "ReadOnly" : "ReadWrite";
  const tables: string[] = [];
  for (const ref of analysis.tables) {
    const name = ref.schema === undefined ? ref.name : `${ref.schema}.${ref.name}`;
    if (!tables.includes(name)) tables.push(name);
  }
  const lines = [
    line(
      "kind",
      `${KIND_NAMES[analysis.kind]}, ${access}${tables.length > 0 ? `, tables: ${tables.join(", ")}` : ""}`,
    ),
  ];
  switch (decided.kind) {
    case "single":
      lines.push(
        line(
          "plan",
          `one region: ${decided.region} (${decided.access === "read-only" ? "ReadOnly" : "ReadWrite"})`,
        ),
      );
      break;
    case "scatter": {
      lines.push(line("plan", `scatter-gather over ${decided.regions.join(", ")}`));
      const merge = decided.merge;
      if (merge.tier === "gather") {
        for (const source of merge.sources) {
          const regions = decided.gatherSources?.find((entry) => entry.table === source.table)?.regions ?? [];
          lines.push(line("regions", `${source.regionSql}  [${regions.join(", ")}]`));
        }
      } else {
        lines.push(line("regions", merge.regionSql));
      }
      lines.push(line("finish", describeFinish(merge, decided.homeFinishAllowed)));
      break;
    }
    case "distributed-write":
      lines.push(line("plan", `distributed write over ${decided.regions.join(", ")} (two-phase commit)`));
      if (decided.statements.some((statement) => statement.sql !== analysis.text)) {
        for (const statement of decided.statements)
          lines.push(line("regions", `${statement.region}: ${statement.sql}`));
      }
      break;
    case "each-region":
      lines.push(
        line("plan", `in each region, one at a time, outside a transaction: ${decided.regions.join(", ")}`),
      );
      lines.push(
        line(
          "block",
          decided.outsideBlock
            ? "refused inside a transaction block, as PostgreSQL refuses it [25001]"
            : decided.blockOnly
              ? "only inside a transaction block: in each region as part of it (two-phase commit); outside one refused, as PostgreSQL refuses it [25P01]"
              : "inside a transaction block: in each region as part of it (two-phase commit)",
        ),
      );
      break;
    case "deferred": {
      const params = decided.params.map((index) => `$${index}`);
      lines.push(
        line("plan", `deferred until ${params.join(", ")} ${params.length === 1 ? "is" : "are"} bound`),
      );
      break;
    }
    case "refused":
      lines.push(line("plan", `refused [${decided.refusal.sqlstate}]`));
      lines.push(line("reason", decided.refusal.reason));
      lines.push(line("hint", decided.refusal.hint));
      break;
    case "local":
      lines.push(line("plan", `handled by the session: ${LOCAL_NAMES[decided.what]}`));
      break;
  }
  return lines.join("\n");
}

function count(value: RowCount): string {
  return value.kind === "constant" ? String(value.value) : `$${value.index}`;
}

function describeFinish(
  merge: Exclude<MergePlan, { tier: "refused" } | { tier: "scatter-write" }>,
  homeFinishAllowed: boolean,
): string {
  switch (merge.tier) {
    case "concat": {
      const limit = merge.limit?.count === undefined ? "" : `, limit ${count(merge.limit.count)}`;
      const offset = merge.limit?.offset === undefined ? "" : `, offset ${count(merge.limit.offset)}`;
      return `rows: concatenated${limit}${offset}`;
    }
    case "ordered": {
      const limit = merge.limit?.count === undefined ? "" : `, limit ${count(merge.limit.count)}`;
      const offset = merge.limit?.offset === undefined ? "" : `, offset ${count(merge.limit.offset)}`;
      const fallback = homeFinishAllowed
        ? ""
        : " (residency: only by the proxy; refused if a sort key is not exactly comparable)";
      return `rows: merged in order${limit}${offset}${fallback}`;
    }
    case "partial-aggregate":
      return `${merge.partials.length} partial aggregate(s) regrouped in the home region`;
    case "gather":
      return `rows gathered to the home region and finished there (${merge.reason})`;
  }
}
