import { readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Latencies (µs) of the successful transactions in pgbench's per-transaction log text.
 *
 * Each line is `client_id transaction_no time script_no time_epoch time_us [schedule_lag]`, where
 * `time` is the transaction's latency in microseconds. A failed or skipped transaction carries the
 * word `failed` or `skipped` there instead of a number, so it is left out rather than counted as 0.
 */
export function parseTransactionLog(text: string, into: number[] = []): number[] {
  let lineStart = 0;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    const firstSpace = text.indexOf(" ", lineStart);
    const secondSpace = firstSpace === -1 ? -1 : text.indexOf(" ", firstSpace + 1);
    const thirdSpace = secondSpace === -1 ? -1 : text.indexOf(" ", secondSpace + 1);
    if (thirdSpace !== -1 && thirdSpace < lineEnd) {
      const field = text.slice(secondSpace + 1, thirdSpace);
      const micros = Number(field);
      if (field.length > 0 && Number.isFinite(micros)) into.push(micros);
    }
    lineStart = lineEnd + 1;
  }
  return into;
}

/**
 * Reads and deletes every log file pgbench wrote for `--log-prefix=<prefix>`: one per thread,
 * named `<prefix>.<pid>` for the first thread and `<prefix>.<pid>.<thread>` for the others.
 */
export function collectTransactionLogs(prefix: string): Float64Array {
  const dir = dirname(prefix);
  const stem = `${basename(prefix)}.`;
  const latencies: number[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(stem)) continue;
    const path = join(dir, name);
    parseTransactionLog(readFileSync(path, "utf8"), latencies);
    rmSync(path, { force: true });
  }
  return Float64Array.from(latencies);
}
