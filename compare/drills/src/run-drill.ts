import { execFile } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { type PgCluster, type PgReplica, startCluster, startReplica } from "@geo/testkit";
import pg from "pg";
import {
  configToml,
  DECISION_TABLE,
  type DecisionLogKind,
  directoryTsv,
  KEYS,
  REGIONS,
  SCHEMA_SQL,
  type SharedStore,
  seedSql,
} from "./bank.js";
import { checkWorkloads, countPrepared, type WorkloadResult } from "./check.js";
import { ProxyProcess, sleep } from "./proxy-process.js";
import { TcpRelay } from "./relay.js";
import {
  keyedLoop,
  newReadTally,
  newWorkloadState,
  readLoop,
  transferLoop,
  type WorkloadState,
} from "./workloads.js";

const run = promisify(execFile);

/** What a scenario needs started before the workloads begin. */
export interface ScenarioSetup {
  readonly decisionLog?: DecisionLogKind;
  /** The directory in PostgreSQL, for RELOCATE and REBALANCE. */
  readonly directoryStore?: boolean;
  /** A TCP relay in front of every region's primary, so one can be cut off. */
  readonly relays?: boolean;
  /** A streaming replica of this region (index into REGIONS), listed in the topology. */
  readonly replicaOf?: number;
  /** The admin port on, so the proxy probes its backends (SHOW REGIONS then reads the probes). */
  readonly healthProbes?: boolean;
  /** The file decision log on a filesystem of its own of this many KiB (a tmpfs; needs root). */
  readonly logFilesystemKiB?: number;
  /**
   * With `logFilesystemKiB` and the table log: the decision table and its index are created in the
   * home region in a tablespace on that filesystem, so filling it stops the table's writes (53100)
   * while the server's own files and WAL have room, as a full volume under one tablespace does.
   */
  readonly logTablespace?: boolean;
  /** `[txn]` at its defaults instead of the drill's shortened settings (see `configToml`). */
  readonly txnDefaults?: boolean;
  /**
   * Two proxies sharing the directory (`SHARED_DIRECTORY`): the first homed in eu-west, the
   * second in us-east, each with its own node name and data folder. Keyed clients and transfer
   * clients take them in turn (k0 the first, k1 the second, ...).
   */
  readonly proxies?: 1 | 2;
  /** With two proxies: they agree in a majority of the regions rather than in eu-west. */
  readonly majority?: boolean;
}

/** The shared store of two-proxy drills: agreed in the home region, eu-west. */
export const SHARED_DIRECTORY: SharedStore = { authority: "eu-west", pollMs: 100, leaseMs: 1000 };

/** Everything a scenario's fault script may use while the workloads run. */
export interface DrillContext {
  readonly cluster: PgCluster;
  /** The first proxy (the only one unless `setup.proxies` is 2). */
  readonly proxy: ProxyProcess;
  readonly proxyPort: number;
  /** Every proxy, the first one first, and their ports. */
  readonly proxies: readonly ProxyProcess[];
  readonly proxyPorts: readonly number[];
  /** One per region when the setup asks for relays. */
  readonly relays: readonly (TcpRelay | undefined)[];
  readonly replica: PgReplica | undefined;
  readonly random: () => number;
  readonly startedAt: number;
  readonly deadline: number;
  /** The folder holding the decision log (a filesystem of its own with `logFilesystemKiB`). */
  readonly logDir: string;
  readonly state: WorkloadState;
  progress(line: string): void;
  /** A line for the scenario's report. */
  note(line: string): void;
  /** A check of the scenario's own that did not hold: the drill fails, with this line. */
  fail(line: string): void;
  /** A new client straight to region `index`'s primary; the caller ends it. */
  direct(index: number): Promise<pg.Client>;
  /** Sleeps until this fraction of the run has passed. */
  at(fraction: number): Promise<void>;
}

export interface Scenario {
  readonly name: string;
  /** One line: what is broken and how. */
  readonly summary: string;
  readonly setup?: ScenarioSetup;
  /** Shortest run that lets the faults happen, in seconds. */
  readonly minSeconds?: number;
  /** Breaks things while the workloads run; must leave every server running and reachable. */
  faults(ctx: DrillContext): Promise<void>;
  /**
   * Checks of the scenario's own once the workloads stopped and recovery ran, before the grading
   * (`ctx.note`, `ctx.fail`; `ctx.direct` reads the regions).
   */
  verify?(ctx: DrillContext): Promise<void>;
}

export interface DrillOptions {
  readonly scenario: Scenario;
  /** How long the workloads run. */
  readonly seconds: number;
  /** Concurrent transfer clients (the keyed workload has one client per key). Default 3. */
  readonly transferClients?: number;
  /** Seed of the fault schedule and the transfers, for a repeatable run. */
  readonly seed?: number;
  readonly onProgress?: (line: string) => void;
}

export interface DrillReport {
  readonly scenario: string;
  readonly seconds: number;
  readonly seed: number;
  readonly keyed: WorkloadResult;
  readonly transfers: WorkloadResult;
  /** Prepared transactions left in any region once recovery has run. */
  readonly preparedLeft: number;
  /** Seconds from the end of the run until nothing was prepared anywhere. */
  readonly recoverySeconds: number;
  readonly proxyKills: number;
  /** Counter reads, in the session that had just written, that returned less than it wrote. */
  readonly staleReads: number;
  /** Writes whose UPDATE found no row where the proxy sent it. */
  readonly misrouted: number;
  readonly notes: readonly string[];
  /** Checks of the scenario's own that did not hold (`DrillContext.fail`). */
  readonly failures: readonly string[];
  /** Where the proxy's log and the decision log were kept, when something went wrong. */
  readonly keptDir: string | null;
}

/** Whether a report shows nothing lost, nothing wrong and nothing left prepared. */
export function drillPassed(report: DrillReport): boolean {
  return (
    report.keyed.lost === 0 &&
    report.keyed.wrong === 0 &&
    report.transfers.lost === 0 &&
    report.transfers.wrong === 0 &&
    report.preparedLeft === 0 &&
    report.failures.length === 0
  );
}

/**
 * Runs one scenario: three PostgreSQL servers (the regions), geoproxy as a child process (two
 * sharing the directory with `setup.proxies = 2`), the keyed and the transfer workloads through it
 * for `seconds`, and the scenario's faults meanwhile. Afterwards every region is read directly, the
 * scenario's own checks run and both workloads are graded.
 */
export async function runDrill(options: DrillOptions): Promise<DrillReport> {
  const { scenario } = options;
  const setup = scenario.setup ?? {};
  const progress = options.onProgress ?? (() => undefined);
  const seed = options.seed ?? Date.now();
  const random = prng(seed);
  const work = mkdtempSync(join(tmpdir(), "geo-drill-"));
  const logDir = join(work, "log");
  mkdirSync(logDir);
  const notes: string[] = [];
  const failures: string[] = [];
  let mounted = false;
  // Immediate shutdown loses what sits in WAL buffers: commits must reach the kernel before they answer.
  const cluster = await startCluster({
    count: 3,
    initSql: SCHEMA_SQL,
    settings: { synchronous_commit: "on", max_connections: "200" },
  });
  const direct: pg.Client[] = [];
  const relays: (TcpRelay | undefined)[] = [];
  let replica: PgReplica | undefined;
  const proxies: ProxyProcess[] = [];
  let keep = false;
  try {
    if (setup.logFilesystemKiB !== undefined) {
      await run("mount", ["-t", "tmpfs", "-o", `size=${setup.logFilesystemKiB}k`, "tmpfs", logDir]);
      mounted = true;
    }
    for (const [i, region] of REGIONS.entries()) {
      const client = await connectDirect(cluster.servers[i]!.port);
      await client.query(seedSql(region));
      if (i === 0 && setup.logTablespace === true) await decisionTableIn(client, logDir);
      await client.end();
    }
    if (setup.replicaOf !== undefined) {
      replica = await startReplica(cluster, { of: setup.replicaOf });
    }
    const regionPorts: number[] = [];
    for (const server of cluster.servers) {
      if (setup.relays === true) {
        const relay = new TcpRelay(server.port);
        regionPorts.push(await relay.start());
        relays.push(relay);
      } else {
        regionPorts.push(server.port);
        relays.push(undefined);
      }
    }
    const directoryPath = join(work, "keys.tsv");
    writeFileSync(directoryPath, directoryTsv());
    const shared = (setup.proxies ?? 1) > 1;
    const directoryStore = shared || setup.directoryStore === true;
    const proxyPorts: number[] = [];
    // The first proxy's files keep their one-proxy names; the second's carry its letter.
    for (const [i, suffix] of (shared ? ["", "-b"] : [""]).entries()) {
      const node = `drill-${"ab"[i]}`;
      const port = await freePort();
      const configPath = join(work, `geoproxy${suffix}.toml`);
      writeFileSync(
        configPath,
        configToml({
          proxyPort: port,
          regionPorts,
          ...(replica === undefined ? {} : { replicaPorts: { [setup.replicaOf!]: replica.port } }),
          logPath: join(logDir, `decisions${suffix}.log`),
          decisionLog: setup.decisionLog ?? "file",
          directoryStore,
          healthProbes: setup.healthProbes === true,
          txnDefaults: setup.txnDefaults === true,
          ...(shared
            ? {
                node,
                home: i,
                dataDir: join(work, node),
                shared:
                  setup.majority === true ? { ...SHARED_DIRECTORY, authority: "majority" } : SHARED_DIRECTORY,
              }
            : {}),
        }),
      );
      proxies.push(
        new ProxyProcess({
          configPath,
          ...(directoryStore ? {} : { directoryPath }),
          port,
          logPath: join(work, `proxy${suffix}.log`),
        }),
      );
      proxyPorts.push(port);
    }
    await Promise.all(proxies.map((proxy) => proxy.start()));
    const proxyPort = proxyPorts[0]!;

    const state = newWorkloadState();
    const startedAt = Date.now();
    const deadline = startedAt + options.seconds * 1000;
    const running = proxies[0]!;
    const ctx: DrillContext = {
      cluster,
      proxy: running,
      proxyPort,
      proxies,
      proxyPorts,
      relays,
      replica,
      random,
      startedAt,
      deadline,
      logDir,
      state,
      progress: (line) => progress(`${((Date.now() - startedAt) / 1000).toFixed(1)} s: ${line}`),
      note: (line) => notes.push(line),
      fail: (line) => failures.push(line),
      direct: (index) => connectDirect(cluster.servers[index]!.port),
      at: (fraction) => sleep(Math.max(0, startedAt + fraction * (deadline - startedAt) - Date.now())),
    };
    // With a replica, read-only clients read the replica's region's counters: their reads may go there.
    const reads = newReadTally();
    const replicaKeys = KEYS.filter((k) => k.region === REGIONS[setup.replicaOf ?? -1]).map((k) => k.key);
    const workloads = [
      ...KEYS.map(({ key }, i) => keyedLoop(proxyPorts[i % proxyPorts.length]!, key, deadline, state)),
      ...(replicaKeys.length === 0
        ? []
        : [0, 1].map(() => readLoop(proxyPort, replicaKeys, deadline, state, reads))),
      ...Array.from({ length: options.transferClients ?? 3 }, (_, i) =>
        transferLoop(proxyPorts[i % proxyPorts.length]!, deadline, random, state),
      ),
    ];
    const faults = scenario.faults(ctx).catch((error: unknown) => {
      notes.push(`fault script failed: ${error instanceof Error ? error.message : String(error)}`);
      keep = true;
    });
    await Promise.all([...workloads, faults]);
    const stoppedAt = Date.now();
    for (const proxy of proxies) if (!proxy.running) await proxy.start();
    if (replicaKeys.length > 0) {
      const longest = Math.max(0, ...reads.availability.close(stoppedAt).values());
      notes.push(
        `reads of ${replicaKeys.join(", ")} by read-only sessions: ${reads.ok} answered, ${reads.failed} failed, ${reads.stale} stale (behind an acknowledged write), ${reads.backwards} went backwards; longest wait for an answer ${longest} ms`,
      );
    }

    const recoveryStarted = Date.now();
    for (const server of cluster.servers) direct.push(await connectDirect(server.port));
    let preparedLeft = await countPrepared(direct);
    while (preparedLeft > 0 && Date.now() - recoveryStarted < 60_000) {
      await sleep(250);
      preparedLeft = await countPrepared(direct);
    }
    const recoverySeconds = (Date.now() - recoveryStarted) / 1000;
    await scenario.verify?.(ctx).catch((error: unknown) => {
      failures.push(`verify failed: ${error instanceof Error ? error.message : String(error)}`);
    });
    const graded = await checkWorkloads(direct, state, stoppedAt);
    const report: DrillReport = {
      scenario: scenario.name,
      seconds: options.seconds,
      seed,
      ...graded,
      preparedLeft,
      recoverySeconds,
      proxyKills: proxies.reduce((sum, proxy) => sum + proxy.kills, 0),
      staleReads: state.staleReads,
      misrouted: state.misrouted,
      notes,
      failures,
      keptDir: null,
    };
    keep ||= !drillPassed(report);
    return keep ? { ...report, keptDir: work } : report;
  } finally {
    await Promise.all(direct.map((client) => client.end().catch(() => undefined)));
    await Promise.all(proxies.map((proxy) => proxy.stop().catch(() => undefined)));
    await Promise.all(relays.map((relay) => relay?.stop()));
    await replica?.stop().catch(() => undefined);
    await cluster.stop();
    if (mounted) await run("umount", ["-l", logDir]).catch(() => undefined);
    if (!keep) rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The table decision log, created before the proxy starts (its own CREATE TABLE IF NOT EXISTS then
 * finds it) in a tablespace on the log's filesystem: the same columns as TableDecisionLog's.
 */
async function decisionTableIn(home: pg.Client, logDir: string): Promise<void> {
  const location = join(logDir, "tablespace");
  mkdirSync(location);
  // The server runs as postgres: it must reach the folder through the drill's private one.
  chmodSync(dirname(logDir), 0o711);
  const { stdout } = await run("id", ["-u", "postgres"]);
  const { stdout: group } = await run("id", ["-g", "postgres"]);
  chownSync(location, Number(stdout.trim()), Number(group.trim()));
  await home.query(`CREATE TABLESPACE geo_decisions LOCATION '${location}'`);
  await home.query(
    `CREATE TABLE ${DECISION_TABLE} (gid text PRIMARY KEY USING INDEX TABLESPACE geo_decisions, ` +
      "decision text NOT NULL CHECK (decision IN ('commit', 'abort')), participants text[] NOT NULL, " +
      "decided_at timestamptz NOT NULL, completed_at timestamptz) TABLESPACE geo_decisions",
  );
}

export async function connectDirect(port: number): Promise<pg.Client> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  client.on("error", () => undefined);
  await client.connect();
  return client;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** mulberry32: a small seeded generator, so a failing schedule can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
