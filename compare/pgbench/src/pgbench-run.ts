import { join } from "node:path";
import { collectTransactionLogs } from "./pgbench-log.js";
import { parsePgbenchOutput } from "./pgbench-output.js";
import { cpuSecondsOfTree } from "./proc-cpu.js";
import { type LatencySummary, summarizeLatencies } from "./stats.js";
import type { Backend, Target, TargetName } from "./targets/target.js";
import { runToCompletion } from "./teardown.js";
import { pgbenchRunArgs, type Workload, type WorkloadName } from "./workloads.js";

export interface PgbenchRun {
  target: TargetName;
  workload: WorkloadName;
  round: number;
  measured:
    | {
        ok: true;
        tps: number;
        processed: number;
        failed: number;
        /** Per-transaction latency in µs, computed from pgbench's log. */
        latency: LatencySummary;
        /** CPU seconds the proxy process spent per successful transaction; undefined for direct. */
        proxyCpuPerTransaction: number | undefined;
      }
    | { ok: false; error: string };
}

/**
 * Why a pgbench run went wrong, in a line: the distinct server errors it printed (the part after
 * `ERROR:` or `FATAL:`), else its distinct error lines, else its last lines. Sixteen clients
 * failing alike print sixteen copies, interleaved mid-line, so only distinct messages are kept.
 */
export function pgbenchFailureReason(stderr: string): string {
  const serverErrors = [...stderr.matchAll(/(?:ERROR|FATAL):\s+(.+?)(?=\s*(?:pgbench:|$))/gm)].map((m) =>
    m[1]!.trim(),
  );
  if (serverErrors.length > 0) return [...new Set(serverErrors)].slice(0, 3).join("; ");
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /error|abort|could not/i.test(line))
    .map((line) => line.replace(/client \d+/g, "client N"));
  return (
    [...new Set(lines)].slice(0, 3).join("; ") ||
    stderr.trim().split("\n").slice(-2).join("; ") ||
    "no output"
  );
}

/** One timed pgbench run against one target, with its transaction log and the proxy's CPU. */
export async function runPgbench(
  target: Target,
  backend: Backend,
  w: Workload,
  round: number,
  options: { durationSeconds: number; threads: number; logDir: string },
): Promise<PgbenchRun> {
  const logPrefix = join(options.logDir, `${target.name}-${w.name}-r${round}`);
  const args = [
    ...pgbenchRunArgs(w, { ...options, logPrefix }),
    "-h",
    target.host,
    "-p",
    String(target.port),
    "-U",
    backend.user,
    backend.database,
  ];
  const cpuBefore = target.proxyPid === undefined ? undefined : cpuSecondsOfTree(target.proxyPid);
  const result = await runToCompletion("pgbench", args, { cwd: options.logDir });
  const cpuAfter = target.proxyPid === undefined ? undefined : cpuSecondsOfTree(target.proxyPid);
  const latencies = collectTransactionLogs(logPrefix);
  const base = { target: target.name, workload: w.name, round };
  const summary = parsePgbenchOutput(result.stdout);
  if (result.code !== 0 || summary === undefined) {
    return {
      ...base,
      measured: { ok: false, error: `pgbench exit ${result.code}: ${pgbenchFailureReason(result.stderr)}` },
    };
  }
  if (summary.processed === 0) {
    return {
      ...base,
      measured: { ok: false, error: `no transaction completed: ${pgbenchFailureReason(result.stderr)}` },
    };
  }
  return {
    ...base,
    measured: {
      ok: true,
      tps: summary.tps,
      processed: summary.processed,
      failed: summary.failed,
      latency: summarizeLatencies(latencies),
      proxyCpuPerTransaction:
        cpuBefore === undefined || cpuAfter === undefined
          ? undefined
          : (cpuAfter - cpuBefore) / summary.processed,
    },
  };
}
