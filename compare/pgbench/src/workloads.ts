/** The pgbench workloads every target runs, in the order every round visits them. */
export const WORKLOAD_NAMES = [
  "select-simple-1",
  "select-simple-16",
  "select-prepared-1",
  "select-prepared-16",
  "tpcb-16",
] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];

export interface Workload {
  name: WorkloadName;
  /** What the table calls it. */
  title: string;
  clients: number;
  protocol: "simple" | "prepared";
  /** pgbench's built-in script: select-only (-S) or TPC-B (-b tpcb-like). */
  script: "select-only" | "tpcb-like";
}

export function workload(name: WorkloadName): Workload {
  switch (name) {
    case "select-simple-1":
      return {
        name,
        title: "select-only, simple, 1 client",
        clients: 1,
        protocol: "simple",
        script: "select-only",
      };
    case "select-simple-16":
      return {
        name,
        title: "select-only, simple, 16 clients",
        clients: 16,
        protocol: "simple",
        script: "select-only",
      };
    case "select-prepared-1":
      return {
        name,
        title: "select-only, prepared, 1 client",
        clients: 1,
        protocol: "prepared",
        script: "select-only",
      };
    case "select-prepared-16":
      return {
        name,
        title: "select-only, prepared, 16 clients",
        clients: 16,
        protocol: "prepared",
        script: "select-only",
      };
    case "tpcb-16":
      return {
        name,
        title: "TPC-B, simple, 16 clients",
        clients: 16,
        protocol: "simple",
        script: "tpcb-like",
      };
  }
}

/**
 * pgbench arguments for one timed run. `-n` skips pgbench's own vacuum, which would otherwise go
 * through the proxy under test; the session vacuums directly instead (see `prepareForRun`).
 */
export function pgbenchRunArgs(
  w: Workload,
  options: { durationSeconds: number; threads: number; logPrefix: string },
): string[] {
  return [
    "-n",
    "-T",
    String(options.durationSeconds),
    "-c",
    String(w.clients),
    "-j",
    String(Math.max(1, Math.min(w.clients, options.threads))),
    "-M",
    w.protocol,
    "-b",
    w.script,
    "-l",
    `--log-prefix=${options.logPrefix}`,
  ];
}
