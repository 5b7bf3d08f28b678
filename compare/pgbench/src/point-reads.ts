import pg from "pg";
import { type LatencySummary, summarizeLatencies } from "./stats.js";
import type { Backend, Target, TargetName } from "./targets/target.js";

export type PointReadOutcome =
  | { target: TargetName; ok: true; latency: LatencySummary }
  | { target: TargetName; ok: false; error: string };

const POINT_READ = "SELECT abalance FROM pgbench_accounts WHERE aid = $1";
/**
 * Reads before timing starts. node-postgres and the proxies under test are JIT-compiled: on a
 * loopback read the first few thousand take two to three times as long as the steady state.
 */
const WARMUP = 2_000;
const CHUNK = 500;

/** Deterministic account ids, so every target reads the same keys in the same order. */
function* accountIds(accounts: number, seed: number): Generator<number> {
  let state = seed >>> 0;
  for (;;) {
    // xorshift32: cheap, and the same sequence on every run.
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    yield 1 + (state % accounts);
  }
}

/**
 * Sequential prepared point reads (one named statement, parsed once per connection, then only
 * Bind/Execute/Sync per read) through every target, interleaved in chunks so a drift of the
 * machine over time hits every target alike. Latencies are in µs, measured around each query.
 */
export async function measurePointReads(
  targets: readonly Target[],
  backend: Backend,
  perTarget: number,
  accounts: number,
): Promise<PointReadOutcome[]> {
  const clients = new Map<TargetName, pg.Client>();
  const failures = new Map<TargetName, string>();
  const samples = new Map<TargetName, number[]>();
  const ids = new Map<TargetName, Generator<number>>();
  for (const target of targets) {
    const client = new pg.Client({
      host: target.host,
      port: target.port,
      user: backend.user,
      database: backend.database,
    });
    client.on("error", (error) => failures.set(target.name, error.message));
    try {
      await client.connect();
      clients.set(target.name, client);
      samples.set(target.name, []);
      ids.set(target.name, accountIds(accounts, 0x9e3779b9));
    } catch (error) {
      failures.set(target.name, error instanceof Error ? error.message : String(error));
    }
  }

  const read = async (name: TargetName, client: pg.Client): Promise<number> => {
    const aid = ids.get(name)!.next().value as number;
    const started = process.hrtime.bigint();
    await client.query({ name: "geo_point_read", text: POINT_READ, values: [aid] });
    return Number(process.hrtime.bigint() - started) / 1_000;
  };

  try {
    for (const [name, client] of clients) {
      try {
        for (let i = 0; i < WARMUP; i++) await read(name, client);
      } catch (error) {
        failures.set(name, error instanceof Error ? error.message : String(error));
      }
    }
    for (let done = 0; done < perTarget; done += CHUNK) {
      const chunk = Math.min(CHUNK, perTarget - done);
      for (const [name, client] of clients) {
        if (failures.has(name)) continue;
        const into = samples.get(name)!;
        try {
          for (let i = 0; i < chunk; i++) into.push(await read(name, client));
        } catch (error) {
          failures.set(name, error instanceof Error ? error.message : String(error));
        }
      }
    }
  } finally {
    await Promise.allSettled([...clients.values()].map((client) => client.end()));
  }

  return targets.map((target): PointReadOutcome => {
    const failure = failures.get(target.name);
    if (failure !== undefined) return { target: target.name, ok: false, error: failure };
    return {
      target: target.name,
      ok: true,
      latency: summarizeLatencies(Float64Array.from(samples.get(target.name) ?? [])),
    };
  });
}
