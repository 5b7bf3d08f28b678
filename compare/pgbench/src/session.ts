import { mkdirSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startCluster } from "@geo/testkit";
import pg from "pg";
import { failureNotes } from "./failure-notes.js";
import { shout } from "./loud.js";
import { describeMachine, loadAverage, programVersion } from "./machine.js";
import type { BenchOptions } from "./options.js";
import { type PgbenchRun, runPgbench } from "./pgbench-run.js";
import { measurePointReads, type PointReadOutcome } from "./point-reads.js";
import { renderReport } from "./report.js";
import { geoproxyUnavailable, startGeoproxy } from "./targets/geoproxy.js";
import { findPgbouncer, pgbouncerVersion, startPgbouncer } from "./targets/pgbouncer.js";
import type { Backend, Target, TargetName } from "./targets/target.js";
import { targetLabel } from "./targets/target.js";
import { startTcpRelay } from "./targets/tcp-relay.js";
import { onTeardown, removeAtTeardown, runToCompletion, stopIfTearingDown, teardown } from "./teardown.js";
import { workload } from "./workloads.js";

/** Where the proxy's command line appears once @geo/proxy is built. */
export const DEFAULT_GEOPROXY_CLI = fileURLToPath(
  new URL("../../../apps/proxy/dist/cli.js", import.meta.url),
);

/** Settings on top of the launcher's defaults (which turn fsync and synchronous_commit off). */
const SERVER_SETTINGS: Record<string, string> = {
  max_connections: "200",
  shared_buffers: "256MB",
};

const ACCOUNTS_PER_SCALE = 100_000;

export class MissingToolError extends Error {
  override readonly name = "MissingToolError";
}

async function withDirectClient<T>(backend: Backend, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    host: backend.host,
    port: backend.port,
    user: backend.user,
    database: backend.database,
  });
  // A dropped connection also emits 'error'; the failing query or connect already reports it.
  client.on("error", () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * What pgbench would do before a TPC-B run without -n, done on a direct connection so the proxy
 * under test never sees maintenance statements: keep history from growing across runs and the
 * small hot tables from bloating, so later runs are not handicapped by earlier ones.
 */
async function prepareTpcbRun(backend: Backend): Promise<void> {
  await withDirectClient(backend, async (client) => {
    await client.query("VACUUM pgbench_branches");
    await client.query("VACUUM pgbench_tellers");
    await client.query("TRUNCATE pgbench_history");
  });
}

/** Checks a target answers a real query before it is timed, so a broken path fails fast and clearly. */
async function checkAnswers(target: Target, backend: Backend): Promise<void> {
  await withDirectClient({ ...backend, host: target.host, port: target.port }, async (client) => {
    const result = await client.query("SELECT count(*)::int AS n FROM pgbench_branches");
    if (typeof result.rows[0]?.n !== "number")
      throw new Error("unexpected answer to a count of pgbench_branches");
  });
}

function formatRun(run: PgbenchRun, rounds: number): string {
  const head = `[round ${run.round}/${rounds}] ${run.workload.padEnd(18)} ${targetLabel(run.target).padEnd(17)}`;
  if (!run.measured.ok) return `${head} FAILED: ${run.measured.error}`;
  const m = run.measured;
  const cpu =
    m.proxyCpuPerTransaction === undefined
      ? ""
      : `  proxy cpu ${(m.proxyCpuPerTransaction * 1e6).toFixed(1)} µs/tx`;
  const failed = m.failed > 0 ? `  failed ${m.failed}` : "";
  return `${head} ${m.tps.toFixed(0).padStart(7)} tps  avg ${(m.latency.mean / 1000).toFixed(3)} ms  p99 ${(m.latency.p99 / 1000).toFixed(3)} ms${cpu}${failed}`;
}

/** Runs the whole interleaved session and returns the markdown report. */
export async function runSession(options: BenchOptions, command: string): Promise<string> {
  const loadAtStart = loadAverage();
  const notes: string[] = [];
  const note = (message: string) => {
    shout(message);
    notes.push(message.replace(/\n/g, " "));
  };

  const pgbench = programVersion("pgbench");
  if (pgbench === undefined) {
    throw new MissingToolError(
      "pgbench is not installed. Install it with `apt-get install -y postgresql-client` (Debian/Ubuntu).",
    );
  }

  const geoproxyCli = resolve(options.geoproxyCli ?? DEFAULT_GEOPROXY_CLI);
  const wanted = new Set<TargetName>(options.targets);
  let pgbouncerBinary: string | undefined;
  if (wanted.has("pgbouncer")) {
    try {
      pgbouncerBinary = findPgbouncer();
    } catch (error) {
      note(`PgBouncer NOT MEASURED: ${(error as Error).message}`);
      wanted.delete("pgbouncer");
    }
  }
  if (wanted.has("geoproxy")) {
    const why = geoproxyUnavailable(geoproxyCli);
    if (why !== undefined) {
      note(`geoproxy NOT MEASURED: ${why}`);
      wanted.delete("geoproxy");
    }
  }

  const workDir = await mkdtemp(join(tmpdir(), "geo-compare-pgbench-"));
  removeAtTeardown(workDir);
  const logDir = join(workDir, "pgbench-logs");
  mkdirSync(logDir);

  try {
    console.error("starting PostgreSQL");
    const cluster = await startCluster({ count: 1, settings: SERVER_SETTINGS });
    // On a signal the testkit's own guard may already have removed the server: nothing left to stop.
    onTeardown(() => cluster.stop().catch(() => undefined));
    const server = cluster.servers[0]!;
    const backend: Backend = {
      host: server.host,
      port: server.port,
      user: server.user,
      database: server.database,
    };
    const serverVersion = await withDirectClient(backend, async (client) => {
      const result = await client.query<{ server_version: string }>("SHOW server_version");
      return result.rows[0]?.server_version ?? "unknown";
    });

    console.error(`initialising pgbench data, scale ${options.scale}`);
    const init = await runToCompletion("pgbench", [
      "-i",
      "-q",
      "-s",
      String(options.scale),
      "-h",
      backend.host,
      "-p",
      String(backend.port),
      "-U",
      backend.user,
      backend.database,
    ]);
    if (init.code !== 0) throw new Error(`pgbench -i failed (exit ${init.code}):\n${init.stderr}`);

    const targets: Target[] = [];
    for (const name of options.targets) {
      if (!wanted.has(name)) continue;
      try {
        const target = await startTarget(name, backend, workDir, options, pgbouncerBinary, geoproxyCli);
        await checkAnswers(target, backend);
        targets.push(target);
        console.error(`${targetLabel(name)} ready on 127.0.0.1:${target.port}`);
      } catch (error) {
        note(
          `${targetLabel(name)} NOT MEASURED: it failed to start or to answer: ${(error as Error).message}`,
        );
      }
    }

    if (options.warmupSeconds > 0) {
      // Fills shared buffers, opens the poolers' server connections and lets the Node.js proxies'
      // hot paths get compiled, so round 1 is not handicapped against the later ones.
      console.error(`warming up every target for ${options.warmupSeconds} s`);
      for (const target of targets) {
        stopIfTearingDown();
        await runPgbench(target, backend, workload("select-simple-16"), 0, {
          durationSeconds: options.warmupSeconds,
          threads: options.threads,
          logDir,
        });
      }
    }

    const runs: PgbenchRun[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      for (const name of options.workloads) {
        const w = workload(name);
        for (const target of targets) {
          stopIfTearingDown();
          if (w.script === "tpcb-like") await prepareTpcbRun(backend);
          const run = await runPgbench(target, backend, w, round, {
            durationSeconds: options.durationSeconds,
            threads: options.threads,
            logDir,
          });
          stopIfTearingDown();
          console.error(formatRun(run, options.rounds));
          runs.push(run);
        }
      }
    }
    notes.push(...failureNotes(runs));

    let pointReads: PointReadOutcome[] | undefined;
    stopIfTearingDown();
    if (options.pointReads > 0) {
      console.error(`measuring ${options.pointReads} sequential prepared point reads per target`);
      pointReads = await measurePointReads(
        targets,
        backend,
        options.pointReads,
        options.scale * ACCOUNTS_PER_SCALE,
      );
    }

    const busiest = Math.max(Number(loadAtStart), Number(loadAverage()));
    if (busiest > availableParallelism() / 2) {
      notes.push(
        `The machine was busy (1-minute load up to ${busiest.toFixed(1)} on ${availableParallelism()} cores): ` +
          "other work competed for the CPU, so these figures are noisier than a quiet machine's.",
      );
    }
    if (options.rounds < 3)
      notes.push(`Only ${options.rounds} round(s): a smoke run, not a figure to publish.`);
    const setup = [
      describeMachine(),
      `PostgreSQL ${serverVersion} (testkit launcher: fsync=off, synchronous_commit=off; shared_buffers=256MB), ` +
        `${pgbench}, ${pgbouncerBinary === undefined ? "PgBouncer not installed" : pgbouncerVersion(pgbouncerBinary)} ` +
        `(pool_mode=transaction, default_pool_size=${options.poolSize}), Node.js ${process.version}`,
      `1-minute load average: ${loadAtStart} before the session, ${loadAverage()} after it`,
      `Session: ${options.rounds} interleaved rounds (each round runs every workload on every target in turn), ` +
        `${options.durationSeconds} s per run after a ${options.warmupSeconds} s warm-up per target, pgbench scale ${options.scale}, -j ${options.threads} for 16 clients, ` +
        `geoproxy pool max ${options.poolSize} at --log-level warn; everything on 127.0.0.1`,
    ];
    return renderReport({
      command,
      date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      setup,
      notes,
      targets: targets.map((target) => target.name),
      workloads: options.workloads,
      runs,
      pointReads,
    });
  } finally {
    await teardown();
  }
}

async function startTarget(
  name: TargetName,
  backend: Backend,
  workDir: string,
  options: BenchOptions,
  pgbouncerBinary: string | undefined,
  geoproxyCli: string,
): Promise<Target> {
  switch (name) {
    case "direct":
      return { name, host: backend.host, port: backend.port, proxyPid: undefined };
    case "pgbouncer":
      return startPgbouncer(pgbouncerBinary!, backend, { poolSize: options.poolSize, maxClients: 200 });
    case "relay":
      return startTcpRelay(backend, workDir);
    case "geoproxy":
      return startGeoproxy(geoproxyCli, backend, workDir, options.poolSize);
  }
}
