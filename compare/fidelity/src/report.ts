import { VERDICTS } from "./grade.js";
import { describeGraded, type FidelityReport, type VerdictCounts } from "./run-fidelity.js";
import { FAMILIES } from "./statements.js";

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(" | ")} |`;
  const rule = `|${widths.map((width, column) => `${"-".repeat(width + 1)}${column === 0 ? "-" : ":"}`).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

function countsRow(label: string, counts: VerdictCounts): string[] {
  const sum = VERDICTS.reduce((total, verdict) => total + counts[verdict], 0);
  return [label, String(sum), ...VERDICTS.map((verdict) => String(counts[verdict]))];
}

/** The run as markdown: counts per family, each refusal with its reason, then every failure. */
export function formatReport(report: FidelityReport): string {
  const parts = [
    `## Fidelity: ${report.format} results, ${(report.elapsedMs / 1000).toFixed(1)} s`,
    "",
    table(
      ["family", "statements", ...VERDICTS],
      [
        ...FAMILIES.map((family) => countsRow(family, report.byFamily[family])),
        countsRow("total", report.total),
      ],
    ),
  ];
  const refused = report.graded.filter((graded) => graded.grade.verdict === "refused");
  if (refused.length > 0) {
    parts.push(
      "",
      "Refused:",
      ...refused.map(
        (graded) => `- ${graded.statement.family}/${graded.statement.name}: ${graded.grade.detail ?? ""}`,
      ),
    );
  }
  const failed = report.graded.filter(
    (graded) => graded.grade.verdict === "wrong" || graded.grade.verdict === "invalid",
  );
  if (failed.length > 0) parts.push("", ...failed.map((graded) => describeGraded(graded, report.format)));
  parts.push(
    "",
    failed.length === 0
      ? `PASS: ${report.total.equal} equal, ${report.total.refused} refused, 0 wrong.`
      : `FAIL: ${report.total.wrong} wrong, ${report.total.invalid} invalid.`,
  );
  return parts.join("\n");
}
