import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runPgbench } from "../src/pgbench-run.js";
import type { Backend, Target } from "../src/targets/target.js";
import { startTcpRelay } from "../src/targets/tcp-relay.js";
import { onTeardown, removeAtTeardown, runToCompletion, teardown } from "../src/teardown.js";
import { workload } from "../src/workloads.js";

describe("a pgbench run through the bare relay against real PostgreSQL", () => {
  let backend: Backend;
  let relay: Target;
  let logDir: string;

  beforeAll(async () => {
    const cluster = await startCluster({ count: 1 });
    const server = cluster.servers[0]!;
    backend = { host: server.host, port: server.port, user: server.user, database: server.database };
    onTeardown(() => cluster.stop());
    const init = await runToCompletion("pgbench", [
      "-i",
      "-q",
      "-s",
      "1",
      "-h",
      backend.host,
      "-p",
      String(backend.port),
      "-U",
      backend.user,
      backend.database,
    ]);
    expect(init.code, init.stderr).toBe(0);
    const workDir = mkdtempSync(join(tmpdir(), "geo-compare-pgbench-test-"));
    removeAtTeardown(workDir);
    logDir = workDir;
    relay = await startTcpRelay(backend, workDir);
  });

  afterAll(() => teardown());

  it("reports tps, a latency for every transaction from the log, and the relay's CPU per transaction", async () => {
    const run = await runPgbench(relay, backend, workload("select-prepared-1"), 1, {
      durationSeconds: 1,
      threads: 2,
      logDir,
    });
    if (!run.measured.ok) throw new Error(run.measured.error);
    expect(run.measured.processed).toBeGreaterThan(100);
    expect(run.measured.latency.count).toBe(run.measured.processed);
    expect(run.measured.latency.p99).toBeGreaterThanOrEqual(run.measured.latency.p50);
    expect(run.measured.latency.p50).toBeGreaterThan(0);
    expect(run.measured.proxyCpuPerTransaction).toBeGreaterThan(0);
  });
});
