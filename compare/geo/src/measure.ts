import pg from "pg";
import type { Target } from "./geo-world.js";
import { type LatencySummary, summarize } from "./percentiles.js";
import type { Workload, WorkloadContext } from "./workloads.js";

/** A workload's result on one target: latencies, or why it did not run. */
export type Measurement =
  | { readonly kind: "measured"; readonly latency: LatencySummary }
  | { readonly kind: "refused"; readonly sqlstate: string; readonly message: string }
  | { readonly kind: "failed"; readonly sqlstate: string; readonly message: string };

export async function openClient(target: Target): Promise<pg.Client> {
  const client = new pg.Client({
    host: target.host,
    port: target.port,
    user: "postgres",
    database: "postgres",
    application_name: "geo-testbed",
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

function describeError(error: unknown): { sqlstate: string; message: string } {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return { sqlstate: typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : "-----", message };
}

/**
 * Runs `warmup` unrecorded operations (pools fill, connections to remote regions open), then
 * `iterations` timed ones, one at a time on one connection. The first error ends the workload:
 * 0A000 is a refusal (the proxy does not run this yet), anything else a failure.
 */
export async function measure(
  client: pg.Client,
  workload: Workload,
  context: WorkloadContext,
  iterations: number,
  warmup: number,
): Promise<Measurement> {
  const samples: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    const started = performance.now();
    try {
      await workload.run(client, i, context);
    } catch (error) {
      const { sqlstate, message } = describeError(error);
      return sqlstate === "0A000"
        ? { kind: "refused", sqlstate, message }
        : { kind: "failed", sqlstate, message };
    }
    if (i >= warmup) samples.push(performance.now() - started);
  }
  return { kind: "measured", latency: summarize(samples) };
}
