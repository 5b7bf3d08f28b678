/** The figures pgbench prints at the end of a run that this kit uses. */
export interface PgbenchSummary {
  /** Transactions per second, excluding the time spent opening connections. */
  tps: number;
  /** Successful transactions. */
  processed: number;
  /** Failed transactions (serialization, deadlock or, through a proxy, any error that ended one). */
  failed: number;
  /** pgbench's own mean latency in ms, kept to cross-check the one computed from the log. */
  latencyAverageMs: number;
}

function numberAfter(text: string, pattern: RegExp): number | undefined {
  const match = pattern.exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** Reads pgbench's end-of-run report; undefined when the run produced none (it aborted early). */
export function parsePgbenchOutput(stdout: string): PgbenchSummary | undefined {
  const tps = numberAfter(stdout, /^tps = ([\d.]+) \(without initial connection time\)/m);
  const processed = numberAfter(stdout, /^number of transactions actually processed: (\d+)/m);
  if (tps === undefined || processed === undefined) return undefined;
  return {
    tps,
    processed,
    failed: numberAfter(stdout, /^number of failed transactions: (\d+)/m) ?? 0,
    latencyAverageMs: numberAfter(stdout, /^latency average = ([\d.]+) ms/m) ?? Number.NaN,
  };
}
