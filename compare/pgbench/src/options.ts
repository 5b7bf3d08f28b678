import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { TARGET_NAMES, type TargetName } from "./targets/target.js";
import { WORKLOAD_NAMES, type WorkloadName } from "./workloads.js";

export interface BenchOptions {
  durationSeconds: number;
  rounds: number;
  warmupSeconds: number;
  scale: number;
  targets: TargetName[];
  workloads: WorkloadName[];
  pointReads: number;
  poolSize: number;
  threads: number;
  out: string | undefined;
  /** geoproxy's built command line; the workspace's apps/proxy/dist/cli.js unless given. */
  geoproxyCli: string | undefined;
}

export const USAGE = `Usage: pnpm --filter @geo/compare-pgbench run bench [flags]

  --duration <s>      seconds per pgbench run (default 10)
  --rounds <n>        interleaved rounds; medians need at least 3 (default 3)
  --warmup <s>        untimed select-only run per target before round 1; 0 skips (default 5)
  --scale <n>         pgbench -i scale factor (default 10: 1,000,000 accounts)
  --targets <list>    comma-separated, from ${TARGET_NAMES.join(",")} (default all)
  --workloads <list>  comma-separated, from ${WORKLOAD_NAMES.join(",")} (default all)
  --point-reads <n>   sequential prepared point reads per target for added latency; 0 skips (default 5000)
  --pool-size <n>     server connections PgBouncer and geoproxy may open (default 20)
  --threads <n>       pgbench -j for multi-client runs (default: the machine's cores)
  --out <file>        also write the markdown report to this file
  --geoproxy-cli <f>  geoproxy's built cli.js (default: apps/proxy/dist/cli.js of this workspace)
  --help              this text`;

export class UsageError extends Error {
  override readonly name = "UsageError";
}

function positiveInteger(flag: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new UsageError(`--${flag} must be an integer of at least ${min}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function list<T extends string>(flag: string, raw: string | undefined, choices: readonly T[]): T[] {
  if (raw === undefined) return [...choices];
  const picked = raw
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  for (const item of picked) {
    if (!(choices as readonly string[]).includes(item)) {
      throw new UsageError(`--${flag}: unknown ${JSON.stringify(item)}; choose from ${choices.join(", ")}`);
    }
  }
  if (picked.length === 0) throw new UsageError(`--${flag} is empty; choose from ${choices.join(", ")}`);
  // Keep the canonical order so every round visits targets and workloads the same way.
  return choices.filter((choice) => picked.includes(choice));
}

/** Parses the command line; undefined means --help was asked for. */
export function parseOptions(argv: readonly string[]): BenchOptions | undefined {
  const { values } = parseArgs({
    args: argv.filter((arg) => arg !== "--"),
    strict: true,
    allowPositionals: false,
    options: {
      duration: { type: "string" },
      rounds: { type: "string" },
      warmup: { type: "string" },
      scale: { type: "string" },
      targets: { type: "string" },
      workloads: { type: "string" },
      "point-reads": { type: "string" },
      "pool-size": { type: "string" },
      threads: { type: "string" },
      out: { type: "string" },
      "geoproxy-cli": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help === true) return undefined;
  return {
    durationSeconds: positiveInteger("duration", values.duration, 10),
    rounds: positiveInteger("rounds", values.rounds, 3),
    warmupSeconds: positiveInteger("warmup", values.warmup, 5, 0),
    scale: positiveInteger("scale", values.scale, 10),
    targets: list("targets", values.targets, TARGET_NAMES),
    workloads: list("workloads", values.workloads, WORKLOAD_NAMES),
    pointReads: positiveInteger("point-reads", values["point-reads"], 5000, 0),
    poolSize: positiveInteger("pool-size", values["pool-size"], 20),
    threads: positiveInteger("threads", values.threads, availableParallelism()),
    out: values.out,
    geoproxyCli: values["geoproxy-cli"],
  };
}
