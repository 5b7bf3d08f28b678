import type { PgbenchRun } from "./pgbench-run.js";
import { targetLabel } from "./targets/target.js";
import { workload } from "./workloads.js";

/** One note per target and workload that failed in any round, with the known reason where there is one. */
export function failureNotes(runs: readonly PgbenchRun[]): string[] {
  const failed = new Map<string, { run: PgbenchRun; error: string; rounds: number[] }>();
  const total = new Map<string, number>();
  for (const run of runs) {
    const key = `${run.target}/${run.workload}`;
    total.set(key, (total.get(key) ?? 0) + 1);
    if (run.measured.ok) continue;
    const entry = failed.get(key);
    if (entry === undefined) failed.set(key, { run, error: run.measured.error, rounds: [run.round] });
    else entry.rounds.push(run.round);
  }
  return [...failed.entries()].map(([key, { run, error, rounds }]) => {
    const w = workload(run.workload);
    const known =
      run.target === "pgbouncer" && w.protocol === "prepared"
        ? " PgBouncer before 1.21 does not carry protocol-level prepared statements across server " +
          "connections in transaction pooling: a statement prepared on one connection is executed on another, " +
          "so this is a limit of the pooler, not of the machine."
        : "";
    return `${targetLabel(run.target)}, ${w.title}: failed in ${rounds.length} of ${total.get(key)} rounds: ${error.replace(/[.\s]+$/, "")}.${known}`;
  });
}
