import type { PgbenchRun } from "./pgbench-run.js";
import type { PointReadOutcome } from "./point-reads.js";
import { median, spread } from "./stats.js";
import { type TargetName, targetLabel } from "./targets/target.js";
import { type WorkloadName, workload } from "./workloads.js";

export interface ReportInput {
  command: string;
  date: string;
  /** Lines describing the machine and software, already formatted. */
  setup: string[];
  /** Things the reader must know: targets skipped or failed, runs that failed. */
  notes: string[];
  targets: readonly TargetName[];
  workloads: readonly WorkloadName[];
  runs: readonly PgbenchRun[];
  pointReads: readonly PointReadOutcome[] | undefined;
}

/** One cell of the summary: a target's figures over every round of one workload. */
export interface CellSummary {
  okRuns: number;
  totalRuns: number;
  tps: ReturnType<typeof spread>;
  /** Medians over rounds of each run's mean and p99 latency, in µs. */
  meanLatencyMicros: number;
  p99LatencyMicros: number;
  proxyCpuMicrosPerTransaction: number | undefined;
  failedTransactions: number;
  firstError: string | undefined;
}

export function summarizeCell(runs: readonly PgbenchRun[]): CellSummary {
  const ok = runs.flatMap((run) => (run.measured.ok ? [run.measured] : []));
  const errors = runs.flatMap((run) => (run.measured.ok ? [] : [run.measured.error]));
  const cpu = ok.flatMap((m) =>
    m.proxyCpuPerTransaction === undefined ? [] : [m.proxyCpuPerTransaction * 1e6],
  );
  return {
    okRuns: ok.length,
    totalRuns: runs.length,
    tps: spread(ok.map((m) => m.tps)),
    meanLatencyMicros: median(ok.map((m) => m.latency.mean)),
    p99LatencyMicros: median(ok.map((m) => m.latency.p99)),
    proxyCpuMicrosPerTransaction: cpu.length === 0 ? undefined : median(cpu),
    failedTransactions: ok.reduce((total, m) => total + m.failed, 0),
    firstError: errors[0],
  };
}

const DASH = "—";

function integer(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : DASH;
}

function fixed(value: number | undefined, digits: number): string {
  return value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : DASH;
}

/** a/b as `0.87x`, or a dash when either side was not measured. */
export function ratio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0)
    return DASH;
  return `${(a / b).toFixed(2)}x`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function renderReport(input: ReportInput): string {
  const cells = new Map<string, CellSummary>();
  const key = (w: WorkloadName, t: TargetName) => `${w}/${t}`;
  for (const w of input.workloads) {
    for (const t of input.targets) {
      const runs = input.runs.filter((run) => run.workload === w && run.target === t);
      if (runs.length > 0) cells.set(key(w, t), summarizeCell(runs));
    }
  }

  const throughputRows: string[][] = [];
  for (const w of input.workloads) {
    for (const t of input.targets) {
      const cell = cells.get(key(w, t));
      if (cell === undefined) continue;
      const runsCell =
        cell.okRuns === cell.totalRuns ? String(cell.okRuns) : `${cell.okRuns}/${cell.totalRuns} (see notes)`;
      throughputRows.push([
        workload(w).title,
        targetLabel(t),
        integer(cell.tps.median),
        cell.okRuns === 0 ? DASH : `${integer(cell.tps.min)}–${integer(cell.tps.max)}`,
        fixed(cell.meanLatencyMicros / 1000, 3),
        fixed(cell.p99LatencyMicros / 1000, 3),
        t === "direct" ? "n/a" : fixed(cell.proxyCpuMicrosPerTransaction, 1),
        integer(cell.failedTransactions),
        runsCell,
      ]);
    }
  }

  const tpsOf = (w: WorkloadName, t: TargetName) => {
    const cell = cells.get(key(w, t));
    return cell === undefined || cell.okRuns === 0 ? undefined : cell.tps.median;
  };
  const ratioRows = input.workloads.map((w) => [
    workload(w).title,
    ratio(tpsOf(w, "geoproxy"), tpsOf(w, "direct")),
    ratio(tpsOf(w, "geoproxy"), tpsOf(w, "pgbouncer")),
    ratio(tpsOf(w, "geoproxy"), tpsOf(w, "relay")),
    ratio(tpsOf(w, "pgbouncer"), tpsOf(w, "direct")),
    ratio(tpsOf(w, "relay"), tpsOf(w, "direct")),
  ]);

  const sections = [
    "## pgbench: geoproxy, PostgreSQL direct, PgBouncer and a bare Node.js relay",
    "",
    `- Date: ${input.date}`,
    ...input.setup.map((line) => `- ${line}`),
    `- Command: \`${input.command}\``,
    "",
    ...(input.notes.length === 0 ? [] : ["**Notes**", "", ...input.notes.map((note) => `- ${note}`), ""]),
    "### Throughput and latency",
    "",
    "tps is the median over rounds (pgbench, without connection time); latencies are the medians over rounds " +
      "of each run's mean and p99, computed from pgbench's per-transaction log; proxy CPU is user+system time " +
      "of the proxy process per transaction.",
    "",
    table(
      [
        "Workload",
        "Target",
        "tps (median)",
        "tps min–max",
        "avg latency ms",
        "p99 latency ms",
        "proxy CPU µs/tx",
        "failed tx",
        "runs",
      ],
      throughputRows,
    ),
    "",
    "### Ratios of median tps",
    "",
    table(
      [
        "Workload",
        "geoproxy/direct",
        "geoproxy/PgBouncer",
        "geoproxy/relay",
        "PgBouncer/direct",
        "relay/direct",
      ],
      ratioRows,
    ),
  ];

  if (input.pointReads !== undefined) {
    const direct = input.pointReads.find((outcome) => outcome.target === "direct");
    const directLatency = direct?.ok === true ? direct.latency : undefined;
    const rows = input.pointReads.map((outcome) => {
      if (!outcome.ok)
        return [targetLabel(outcome.target), DASH, DASH, DASH, DASH, `failed: ${outcome.error}`];
      const added = (mine: number, theirs: number | undefined) =>
        outcome.target === "direct" || theirs === undefined ? DASH : fixed(mine - theirs, 0);
      return [
        targetLabel(outcome.target),
        fixed(outcome.latency.p50, 0),
        fixed(outcome.latency.p99, 0),
        added(outcome.latency.p50, directLatency?.p50),
        added(outcome.latency.p99, directLatency?.p99),
        integer(outcome.latency.count),
      ];
    });
    sections.push(
      "",
      "### Added latency of a point read",
      "",
      "Sequential prepared `SELECT abalance FROM pgbench_accounts WHERE aid = $1` from one node-postgres " +
        "connection per target, interleaved in chunks of 500 after 2,000 warm-up reads each; added = the target's " +
        "percentile minus the direct connection's.",
      "",
      table(["Target", "p50 µs", "p99 µs", "added p50 µs", "added p99 µs", "reads"], rows),
    );
  }
  return `${sections.join("\n")}\n`;
}
