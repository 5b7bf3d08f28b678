import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { releasePort } from "./free-port.js";
import { findPostgresBinaries, findPsql } from "./postgres-binaries.js";
import { isRoot, runProgram } from "./run-program.js";
import {
  discardFailedStart,
  handFolderToServerAccount,
  makeServerFolder,
  restartServer,
  runServerProgram,
  type ServerFolder,
  ServerStartError,
  settingLines,
  startOnPort,
  stopAndRemove,
  stopKeepingData,
} from "./server-process.js";

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

interface RunningServer {
  server: PgServer;
  folder: ServerFolder;
}

async function startOne(
  options: StartClusterOptions,
  bindir: string,
  psql: string,
  fixedPort: number | undefined,
): Promise<RunningServer> {
  const folder = await makeServerFolder("geo-pg-");
  const { dataDir } = folder;
  let port: number | undefined;
  try {
    handFolderToServerAccount(folder);
    const initdb = await runServerProgram(bindir, folder, "initdb", [
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

    port = await startOnPort(bindir, folder, fixedPort);
    const server: PgServer = {
      host: "127.0.0.1",
      port,
      user: "postgres",
      database: "postgres",
      dataDir,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    };
    if (options.initSql !== undefined) {
      const init = await runProgram(
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
        { cwd: folder.rootDir, asPostgresUser: isRoot(), input: options.initSql },
      );
      if (init.code !== 0) throw new ServerStartError(`initSql failed on port ${port}:\n${init.output}`);
    }
    return { server, folder };
  } catch (error) {
    discardFailedStart(folder);
    if (port !== undefined) releasePort(port);
    throw error;
  }
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
    await Promise.all(running.map((server) => stopAndRemove(bindir, server.folder, server.server.port)));
    throw failure.reason;
  }

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= Promise.all(
      running.map((server) => stopAndRemove(bindir, server.folder, server.server.port)),
    ).then(() => undefined);
    return stopping;
  };
  const at = (index: number): RunningServer => {
    const entry = running[index];
    if (entry === undefined) throw new RangeError(`no server ${index} in a cluster of ${running.length}`);
    return entry;
  };
  return {
    servers: running.map((entry) => entry.server),
    stopServer: (index, mode = "immediate") => stopKeepingData(bindir, at(index).folder, mode),
    startServer: (index) => restartServer(bindir, at(index).folder),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
