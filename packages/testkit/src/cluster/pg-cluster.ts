import { appendFileSync, chownSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { releasePort, reserveFreePort } from "./free-port.js";
import { destroySync, guard, release } from "./leftover-guard.js";
import { findPostgresBinaries, findPsql } from "./postgres-binaries.js";
import { isRoot, postgresAccount, runProgram } from "./run-program.js";

/** One running PostgreSQL server, reachable over TCP on 127.0.0.1 with trust auth for `postgres`. */
export interface PgServer {
  host: string;
  port: number;
  user: string;
  database: string;
  /** The data directory; it also holds the server's Unix socket. */
  dataDir: string;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
}

/** Servers started together; `stop()` (or `await using`) stops them and removes their folders. */
export interface PgCluster {
  servers: PgServer[];
  /**
   * Stops one server, keeping its data: "immediate" (default) is a crash as far as PostgreSQL is
   * concerned (no checkpoint; recovery replays WAL on the next start), "fast" a clean shutdown.
   * Clients connected to it lose their connections.
   */
  stopServer(index: number, mode?: "immediate" | "fast"): Promise<void>;
  /** Starts a stopped server again on the same port and data; resolves once it accepts connections. */
  startServer(index: number): Promise<void>;
  /** Stops every server and removes its folder. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface StartClusterOptions {
  /** How many servers; 1 when omitted. */
  count?: number;
  /** postgresql.conf settings, applied after (and so overriding) the launcher's defaults. */
  settings?: Record<string, string>;
  /** pg_hba.conf lines placed before the default trust lines, e.g. `host all alice 127.0.0.1/32 scram-sha-256`. */
  hba?: string[];
  /** SQL run on each server once it accepts connections (through psql, stops at the first error). */
  initSql?: string;
  /**
   * Fixed ports, one per server (a configuration that names its regions' ports, such as the demo's).
   * A port in use fails the start with the server's own message instead of moving elsewhere.
   */
  ports?: readonly number[];
}

const defaultSettings: Readonly<Record<string, string>> = {
  listen_addresses: "127.0.0.1",
  max_connections: "100",
  max_prepared_transactions: "20",
  wal_level: "logical",
  max_wal_senders: "10",
  max_replication_slots: "10",
  shared_buffers: "32MB",
  // Throwaway servers: durability buys nothing and costs seconds on every commit-heavy test.
  fsync: "off",
  synchronous_commit: "off",
  full_page_writes: "off",
  log_min_messages: "warning",
  log_line_prefix: "%m [%p] ",
};

const defaultHba = [
  "local all all trust",
  "host all all 127.0.0.1/32 trust",
  "host all all ::1/128 trust",
  "local replication all trust",
  "host replication all 127.0.0.1/32 trust",
];

const portCollisionAttempts = 5;

interface RunningServer {
  server: PgServer;
  rootDir: string;
  dataDir: string;
  logFile: string;
}

function quoteSetting(value: string): string {
  return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

function settingLines(settings: Readonly<Record<string, string>>): string {
  return Object.entries(settings)
    .map(([name, value]) => {
      if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(name))
        throw new Error(`invalid PostgreSQL setting name: ${name}`);
      return `${name} = ${quoteSetting(value)}\n`;
    })
    .join("");
}

function logTail(logFile: string, lines = 30): string {
  if (!existsSync(logFile)) return "(no server log was written)";
  return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

class ServerStartError extends Error {
  override readonly name = "ServerStartError";
}

async function startOne(
  options: StartClusterOptions,
  bindir: string,
  psql: string,
  fixedPort: number | undefined,
): Promise<RunningServer> {
  const asPostgresUser = isRoot();
  const rootDir = await mkdtemp(join(tmpdir(), "geo-pg-"));
  const dataDir = join(rootDir, "data");
  const logFile = join(rootDir, "server.log");
  const guarded = { rootDir, dataDir };
  let port: number | undefined;
  try {
    if (asPostgresUser) {
      const { uid, gid } = postgresAccount();
      chownSync(rootDir, uid, gid);
    }
    const run = (program: string, args: string[], input?: string) =>
      runProgram(program, args, {
        cwd: rootDir,
        asPostgresUser,
        ...(input === undefined ? {} : { input }),
      });

    const initdb = await run(join(bindir, "initdb"), [
      "-D",
      dataDir,
      "--auth=trust",
      "-U",
      "postgres",
      "--no-sync",
      "-E",
      "UTF8",
      "--locale=C",
    ]);
    if (initdb.code !== 0)
      throw new ServerStartError(`initdb failed (exit ${initdb.code}):\n${initdb.output}`);

    // Appending and truncating keep the files owned by postgres even when we write them as root.
    appendFileSync(
      join(dataDir, "postgresql.conf"),
      `\n# geoproxy testkit\n${settingLines({
        ...defaultSettings,
        unix_socket_directories: dataDir,
        ...options.settings,
      })}`,
    );
    writeFileSync(join(dataDir, "pg_hba.conf"), `${[...(options.hba ?? []), ...defaultHba].join("\n")}\n`);

    for (let attempt = 1; ; attempt++) {
      port = fixedPort ?? (await reserveFreePort());
      // A later line wins in postgresql.conf, so a retry just appends the next port.
      appendFileSync(join(dataDir, "postgresql.conf"), `port = ${port}\n`);
      const started = await pgCtlStart(bindir, rootDir, dataDir, logFile);
      if (started.code === 0) break;
      const tail = logTail(logFile);
      if (fixedPort === undefined) releasePort(port);
      port = undefined;
      if (
        fixedPort === undefined &&
        attempt < portCollisionAttempts &&
        tail.includes("Address already in use")
      )
        continue;
      throw new ServerStartError(
        `pg_ctl start failed (exit ${started.code}) for ${dataDir}:\n${started.output}\n--- server log (tail) ---\n${tail}`,
      );
    }
    guard(guarded);

    if (options.initSql !== undefined) {
      const init = await run(
        psql,
        [
          "-X",
          "-q",
          "-v",
          "ON_ERROR_STOP=1",
          "-h",
          "127.0.0.1",
          "-p",
          String(port),
          "-U",
          "postgres",
          "-d",
          "postgres",
          "-f",
          "-",
        ],
        options.initSql,
      );
      if (init.code !== 0) throw new ServerStartError(`initSql failed on port ${port}:\n${init.output}`);
    }

    const server: PgServer = {
      host: "127.0.0.1",
      port,
      user: "postgres",
      database: "postgres",
      dataDir,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    };
    return { server, rootDir, dataDir, logFile };
  } catch (error) {
    destroySync(guarded);
    release(guarded);
    if (port !== undefined) releasePort(port);
    throw error;
  }
}

function pgCtlStart(bindir: string, rootDir: string, dataDir: string, logFile: string) {
  return runProgram(join(bindir, "pg_ctl"), ["start", "-D", dataDir, "-l", logFile, "-w", "-t", "60", "-s"], {
    cwd: rootDir,
    asPostgresUser: isRoot(),
  });
}

async function stopServerKeepingData(
  running: RunningServer,
  bindir: string,
  mode: "immediate" | "fast",
): Promise<void> {
  const stopped = await runProgram(
    join(bindir, "pg_ctl"),
    ["stop", "-D", running.dataDir, "-m", mode, "-w", "-t", "60", "-s"],
    { cwd: running.rootDir, asPostgresUser: isRoot() },
  );
  if (stopped.code !== 0) throw new Error(`pg_ctl stop failed for ${running.dataDir}:\n${stopped.output}`);
}

async function restartServer(running: RunningServer, bindir: string): Promise<void> {
  const started = await pgCtlStart(bindir, running.rootDir, running.dataDir, running.logFile);
  if (started.code !== 0) {
    throw new ServerStartError(
      `pg_ctl start failed (exit ${started.code}) for ${running.dataDir}:\n${started.output}\n--- server log (tail) ---\n${logTail(running.logFile)}`,
    );
  }
}

async function stopOne(running: RunningServer, bindir: string): Promise<void> {
  const stopped = await runProgram(
    join(bindir, "pg_ctl"),
    ["stop", "-D", running.dataDir, "-m", "immediate", "-w", "-s"],
    {
      cwd: running.rootDir,
      asPostgresUser: isRoot(),
    },
  );
  const guarded = { rootDir: running.rootDir, dataDir: running.dataDir };
  if (stopped.code === 0) {
    await rm(running.rootDir, { recursive: true, force: true, maxRetries: 3 });
  } else {
    destroySync(guarded);
  }
  release(guarded);
  releasePort(running.server.port);
}

/**
 * Starts `count` real PostgreSQL servers in parallel, each in a fresh temp folder on a free port,
 * with `max_prepared_transactions = 20` and `wal_level = logical`.
 *
 * @example
 * await using cluster = await startCluster({ count: 3 });
 * const sql = postgres(cluster.servers[0]!.url);
 * @throws PostgresMissingError when the PostgreSQL binaries are not installed.
 */
export async function startCluster(options: StartClusterOptions = {}): Promise<PgCluster> {
  const { bindir } = findPostgresBinaries();
  const psql = findPsql(bindir);
  const count = options.count ?? 1;
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`count must be a positive integer, got ${count}`);

  if (options.ports !== undefined && options.ports.length !== count)
    throw new RangeError(`ports names ${options.ports.length} port(s) for ${count} server(s)`);

  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, (_, index) => startOne(options, bindir, psql, options.ports?.[index])),
  );
  const running = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
  const failure = outcomes.find((outcome) => outcome.status === "rejected");
  if (failure !== undefined) {
    await Promise.all(running.map((server) => stopOne(server, bindir)));
    throw failure.reason;
  }

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= Promise.all(running.map((server) => stopOne(server, bindir))).then(() => undefined);
    return stopping;
  };
  const at = (index: number): RunningServer => {
    const entry = running[index];
    if (entry === undefined) throw new RangeError(`no server ${index} in a cluster of ${running.length}`);
    return entry;
  };
  return {
    servers: running.map((entry) => entry.server),
    stopServer: (index, mode = "immediate") => stopServerKeepingData(at(index), bindir, mode),
    startServer: (index) => restartServer(at(index), bindir),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
