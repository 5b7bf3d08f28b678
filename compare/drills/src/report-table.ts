import type { DrillReport } from "./run-drill.js";

export const TABLE_COLUMNS = [
  "scenario",
  "workload",
  "attempted",
  "committed",
  "failed",
  "unknown",
  "lost",
  "dup/half",
  "max unavail ms",
  "prepared left",
] as const;

/** The report's two lines (keyed, transfers) as table cells. */
export function reportRows(report: DrillReport): string[][] {
  return (
    [
      ["keyed", report.keyed],
      ["transfers", report.transfers],
    ] as const
  ).map(([workload, result]) => [
    report.scenario,
    workload,
    String(result.attempted),
    String(result.committed),
    String(result.failed),
    String(result.unknown),
    String(result.lost),
    String(result.wrong),
    `${result.maxUnavailableMs}${result.worstKey === null ? "" : ` (${result.worstKey})`}`,
    String(report.preparedLeft),
  ]);
}

/** A Markdown table of the reports, one line per scenario and workload. */
export function markdownTable(reports: readonly DrillReport[]): string {
  const rows = reports.flatMap(reportRows);
  const widths = TABLE_COLUMNS.map((column, i) =>
    Math.max(column.length, ...rows.map((row) => row[i]!.length)),
  );
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(" | ")} |`;
  return [
    line(TABLE_COLUMNS),
    `|${widths.map((w, i) => (i < 2 ? `${"-".repeat(w + 1)}-` : `${"-".repeat(w + 1)}:`)).join("|")}|`,
    ...rows.map(line),
  ].join("\n");
}
