import { VERDICTS } from "./grade.js";
import { describeFailure, type OracleReport, type VerdictCounts } from "./run-oracle.js";
import { FAMILIES } from "./statement.js";

function sum(counts: VerdictCounts): number {
  return VERDICTS.reduce((total, verdict) => total + counts[verdict], 0);
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(" | ")} |`;
  const rule = `|${widths.map((width, column) => (column === 0 ? `${"-".repeat(width + 1)}-` : `${"-".repeat(width + 1)}:`)).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

function countsRow(label: string, counts: VerdictCounts): string[] {
  return [label, String(sum(counts)), ...VERDICTS.map((verdict) => String(counts[verdict]))];
}

/** The run as markdown: counts per family and per shape, refusal reasons, then every failure. */
export function formatReport(
  report: OracleReport,
  options: { seed: number; count: number; shapes: boolean },
): string {
  const header = ["family", "statements", ...VERDICTS];
  const parts = [
    `## Oracle: seed ${options.seed}, ${options.count} statements, ${report.protocol} protocol, ${(report.elapsedMs / 1000).toFixed(1)} s`,
    "",
    table(header, [
      ...FAMILIES.map((family) => countsRow(family, report.byFamily[family])),
      countsRow("**total**", report.total),
    ]),
  ];
  if (options.shapes) {
    const shapes = [...report.byShape.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    parts.push(
      "",
      table(
        ["shape", "statements", ...VERDICTS],
        shapes.map(([shape, counts]) => countsRow(shape, counts)),
      ),
    );
  }
  if (report.refusalReasons.size > 0) {
    const reasons = [...report.refusalReasons.entries()].sort((a, b) => b[1] - a[1]);
    parts.push(
      "",
      "Refusals by reason:",
      "",
      table(
        ["reason", "statements"],
        reasons.map(([r, n]) => [r, String(n)]),
      ),
    );
  }
  if (report.failures.length > 0) {
    parts.push(
      "",
      `### ${report.failures.length} failure(s)`,
      "",
      ...report.failures.map((failure) => describeFailure(failure, report.protocol)),
    );
  }
  const failed = report.total.wrong + report.total.invalid;
  parts.push(
    "",
    failed === 0
      ? `PASS: no wrong and no invalid answer (${report.total.equal} equal, ${report.total.refused} refused).`
      : `FAIL: ${report.total.wrong} wrong, ${report.total.invalid} invalid.`,
  );
  return parts.join("\n");
}
