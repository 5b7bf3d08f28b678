import type { Measurement } from "./measure.js";
import type { LatencySummary } from "./percentiles.js";
import type { RelayCheck } from "./ping-pong.js";

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(" | ")} |`;
  const rule = `|${widths.map((width, column) => `${"-".repeat(width + 1)}${column === 0 ? "-" : ":"}`).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

export const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(1));

/** The relay check: each relay's measured round trip against its setting. */
export function relayTable(direct: LatencySummary, relays: readonly RelayCheck[]): string {
  return markdownTable(
    ["link", "configured RTT", "measured p50", "p99", "min", "beyond the setting (p50)"],
    [
      ["loopback, no relay", "0", ms(direct.p50), ms(direct.p99), ms(direct.min), "-"],
      ...relays.map((check) => [
        `relay, ${check.configuredRttMs} ms`,
        String(check.configuredRttMs),
        ms(check.measured.p50),
        ms(check.measured.p99),
        ms(check.measured.min),
        `${check.excessP50Ms >= 0 ? "+" : ""}${ms(check.excessP50Ms)}`,
      ]),
    ],
  );
}

function cells(measurement: Measurement | undefined): string[] {
  if (measurement === undefined) return ["-", "-", "-"];
  switch (measurement.kind) {
    case "measured":
      return [ms(measurement.latency.p50), ms(measurement.latency.p95), ms(measurement.latency.p99)];
    case "refused":
      return [`REFUSED (${measurement.sqlstate})`, "", ""];
    case "failed":
      return [`FAILED (${measurement.sqlstate})`, "", ""];
  }
}

export interface WorkloadRow {
  readonly title: string;
  readonly proxy: Measurement | undefined;
  readonly baseline: Measurement | undefined;
}

/** Latency percentiles per workload, geoproxy next to the single-PostgreSQL baseline. */
export function latencyTable(rows: readonly WorkloadRow[], baselineLabel: string): string {
  return markdownTable(
    ["workload", "geoproxy p50", "p95", "p99", `${baselineLabel} p50`, "p95", "p99"],
    rows.map((row) => [row.title, ...cells(row.proxy), ...cells(row.baseline)]),
  );
}

/** Every workload that did not produce numbers, with the server's own words. */
export function unmeasuredNotes(rows: readonly WorkloadRow[], baselineLabel: string): string[] {
  const notes: string[] = [];
  for (const row of rows) {
    for (const [who, measurement] of [
      ["geoproxy", row.proxy],
      [baselineLabel, row.baseline],
    ] as const) {
      if (measurement === undefined || measurement.kind === "measured") continue;
      notes.push(
        `- ${row.title}, ${who}: ${measurement.kind} (${measurement.sqlstate}): ${measurement.message}`,
      );
    }
  }
  return notes;
}
