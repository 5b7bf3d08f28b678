import { appendFileSync } from "node:fs";
import { join } from "node:path";
import type { PgCluster, PgServer } from "./pg-cluster.js";
import { findPostgresBinaries } from "./postgres-binaries.js";
import {
  discardFailedStart,
  handFolderToServerAccount,
  makeServerFolder,
  restartServer,
  runServerProgram,
  ServerStartError,
  settingLines,
  startOnPort,
  stopAndRemove,
  stopKeepingData,
} from "./server-process.js";

/**
 * A streaming replica of a launched server: a hot standby that accepts read-only connections and
 * replays the primary's WAL as it arrives.
 */
export interface PgReplica extends PgServer {
  /** The server it streams from. */
  readonly primary: PgServer;
  /** Stops the replica, keeping its data ("immediate" by default: a crash). */
  stopServer(mode?: "immediate" | "fast"): Promise<void>;
  /** Starts a stopped replica again on the same port; it resumes streaming from where it stopped. */
  startServer(): Promise<void>;
  /** Stops the replica and removes its folder; idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface StartReplicaOptions {
  /** Which server of a cluster to copy; 0 when omitted. Ignored when a server is passed. */
  of?: number;
  /** postgresql.conf settings for the replica, applied after the primary's copied ones. */
  settings?: Record<string, string>;
}

function primaryOf(source: PgCluster | PgServer, index: number): PgServer {
  if (!("servers" in source)) return source;
  const server = source.servers[index];
  if (server === undefined)
    throw new RangeError(`no server ${index} in a cluster of ${source.servers.length}`);
  return server;
}

/**
 * Starts a streaming replica of a server started by `startCluster`: `pg_basebackup -R` copies the
 * primary into a fresh temp folder (which also writes `standby.signal` and `primary_conninfo`), and
 * the copy starts as a hot standby on a free port. Resolves once it accepts connections.
 *
 * Replay can be held back to create lag: `SELECT pg_wal_replay_pause()` on the replica (WAL still
 * arrives, nothing new becomes visible), `SELECT pg_wal_replay_resume()` to catch up.
 *
 * @example
 * await using cluster = await startCluster();
 * await using replica = await startReplica(cluster);
 * const reader = postgres(replica.url); // read-only: writes fail with 25006
 * @throws PostgresMissingError when the PostgreSQL binaries are not installed.
 */
export async function startReplica(
  source: PgCluster | PgServer,
  options: StartReplicaOptions = {},
): Promise<PgReplica> {
  const primary = primaryOf(source, options.of ?? 0);
  const { bindir } = findPostgresBinaries();
  const folder = await makeServerFolder("geo-pg-replica-", "replica");
  const { dataDir } = folder;
  let replicaPort: number;
  try {
    handFolderToServerAccount(folder);
    // `-c fast` asks for an immediate checkpoint instead of waiting for a spread one;
    // `-X stream` ships the WAL written during the copy so the standby can become consistent.
    const backup = await runServerProgram(bindir, folder, "pg_basebackup", [
      "-h",
      primary.host,
      "-p",
      String(primary.port),
      "-U",
      primary.user,
      "-D",
      dataDir,
      "-R",
      "-X",
      "stream",
      "-c",
      "fast",
      "--no-sync",
    ]);
    if (backup.code !== 0)
      throw new ServerStartError(
        `pg_basebackup from port ${primary.port} failed (exit ${backup.code}):\n${backup.output}`,
      );

    // The copy carries the primary's postgresql.conf (its port, its socket folder): later lines win.
    appendFileSync(
      join(dataDir, "postgresql.conf"),
      `\n# geoproxy testkit replica\n${settingLines({
        hot_standby: "on",
        unix_socket_directories: dataDir,
        ...options.settings,
      })}`,
    );
    replicaPort = await startOnPort(bindir, folder, undefined);
  } catch (error) {
    discardFailedStart(folder);
    throw error;
  }

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= stopAndRemove(bindir, folder, replicaPort);
    return stopping;
  };
  return {
    host: "127.0.0.1",
    port: replicaPort,
    user: primary.user,
    database: primary.database,
    dataDir,
    url: `postgres://${primary.user}@127.0.0.1:${replicaPort}/${primary.database}`,
    primary,
    stopServer: (mode = "immediate") => stopKeepingData(bindir, folder, mode),
    startServer: () => restartServer(bindir, folder),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
