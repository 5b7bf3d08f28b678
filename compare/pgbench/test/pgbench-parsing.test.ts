import { describe, expect, it } from "vitest";
import { parsePgbenchOutput, parseTransactionLog, pgbenchFailureReason } from "../src/index.js";

describe("pgbench's per-transaction log", () => {
  it("reads the latency in microseconds from the third field of each line", () => {
    const text = "0 1 153 0 1764495433 120034\n0 2 97 0 1764495433 120131\n1 1 1204 0 1764495433 121335\n";
    expect(parseTransactionLog(text)).toEqual([153, 97, 1204]);
  });

  it("leaves out failed and skipped transactions instead of counting them as zero", () => {
    const text =
      "0 1 153 0 1764495433 120034\n0 2 failed 0 1764495433 120131\n3 7 skipped 0 1764495433 1 55\n";
    expect(parseTransactionLog(text)).toEqual([153]);
  });

  it("accepts a last line without a newline and lines carrying a schedule lag", () => {
    expect(parseTransactionLog("2 9 250 0 1764495433 120034 12\n2 10 260 0 1764495433 120300")).toEqual([
      250, 260,
    ]);
  });

  it("appends to the array it is given, so several thread logs pool into one", () => {
    const pooled = parseTransactionLog("0 1 10 0 1 2\n");
    parseTransactionLog("1 1 20 0 1 2\n", pooled);
    expect(pooled).toEqual([10, 20]);
  });
});

describe("pgbench's end-of-run report", () => {
  const report = `pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: <builtin: select only>
scaling factor: 10
query mode: prepared
number of clients: 16
number of threads: 2
maximum number of tries: 1
duration: 10 s
number of transactions actually processed: 604512
number of failed transactions: 3 (0.000%)
latency average = 0.264 ms
initial connection time = 21.337 ms
tps = 60465.012345 (without initial connection time)
`;

  it("reads tps without connection time, processed and failed transactions and the mean latency", () => {
    expect(parsePgbenchOutput(report)).toEqual({
      tps: 60465.012345,
      processed: 604512,
      failed: 3,
      latencyAverageMs: 0.264,
    });
  });

  it("reports nothing for a run that was aborted before its summary", () => {
    expect(parsePgbenchOutput("pgbench (15.18)\n")).toBeUndefined();
  });
});

describe("why a pgbench run failed", () => {
  it("keeps each distinct server error once, even when clients' messages interleave mid-line", () => {
    const stderr = [
      'pgbench: error: ERROR:  prepared statement "P_0" already exists',
      'pgbench: error: client 3 script 0 aborted in command 1 query 0: ERROR:  prepared statement "P_0" does not exist',
      'pgbench:pgbench: error: client 7 script 0 aborted in command 1 query 0: ERROR:  prepared statement "P_0" does not exist',
      "pgbench: error: Run was aborted; the above results are incomplete.",
    ].join("\n");
    expect(pgbenchFailureReason(stderr)).toBe(
      'prepared statement "P_0" already exists; prepared statement "P_0" does not exist',
    );
  });

  it("falls back to pgbench's own error lines when the server said nothing", () => {
    const stderr = 'pgbench: error: connection to server at "127.0.0.1", port 1 failed: Connection refused\n';
    expect(pgbenchFailureReason(stderr)).toContain("Connection refused");
  });
});
