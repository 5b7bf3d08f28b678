import { appendFileSync, chownSync, existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { releasePort, reserveFreePort } from "./free-port.js";
import { destroySync, guard, release } from "./leftover-guard.js";
import type { PgCluster, PgServer } from "./pg-cluster.js";
import { findPostgresBinaries } from "./postgres-binaries.js";
import { isRoot, postgresAccount, runProgram } from "./run-program.js";

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

const portCollisionAttempts = 5;

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

class ReplicaStartError extends Error {
  override readonly name = "ReplicaStartError";
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
  const asPostgresUser = isRoot();
  const rootDir = await mkdtemp(join(tmpdir(), "geo-pg-replica-"));
  const dataDir = join(rootDir, "data");
  const logFile = join(rootDir, "server.log");
  const guarded = { rootDir, dataDir };
  let port: number | undefined;
  const run = (program: string, args: string[]) =>
    runProgram(join(bindir, program), args, { cwd: rootDir, asPostgresUser });
  const pgCtlStart = () => run("pg_ctl", ["start", "-D", dataDir, "-l", logFile, "-w", "-t", "60", "-s"]);

  try {
    if (asPostgresUser) {
      const { uid, gid } = postgresAccount();
      chownSync(rootDir, uid, gid);
    }
    // `-c fast` asks for an immediate checkpoint instead of waiting for a spread one;
    // `-X stream` ships the WAL written during the copy so the standby can become consistent.
    const backup = await run("pg_basebackup", [
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
      throw new ReplicaStartError(
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

    for (let attempt = 1; ; attempt++) {
      port = await reserveFreePort();
      appendFileSync(join(dataDir, "postgresql.conf"), `port = ${port}\n`);
      const started = await pgCtlStart();
      if (started.code === 0) break;
      const tail = logTail(logFile);
      releasePort(port);
      port = undefined;
      if (attempt < portCollisionAttempts && tail.includes("Address already in use")) continue;
      throw new ReplicaStartError(
        `pg_ctl start failed (exit ${started.code}) for replica ${dataDir}:\n${started.output}\n--- server log (tail) ---\n${tail}`,
      );
    }
    guard(guarded);
  } catch (error) {
    destroySync(guarded);
    release(guarded);
    if (port !== undefined) releasePort(port);
    throw error;
  }

  const replicaPort = port;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      const stopped = await run("pg_ctl", ["stop", "-D", dataDir, "-m", "immediate", "-w", "-s"]);
      if (stopped.code === 0) await rm(rootDir, { recursive: true, force: true, maxRetries: 3 });
      else destroySync(guarded);
      release(guarded);
      releasePort(replicaPort);
    })();
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
    stopServer: async (mode = "immediate") => {
      const stopped = await run("pg_ctl", ["stop", "-D", dataDir, "-m", mode, "-w", "-t", "60", "-s"]);
      if (stopped.code !== 0)
        throw new Error(`pg_ctl stop failed for replica ${dataDir}:\n${stopped.output}`);
    },
    startServer: async () => {
      const started = await pgCtlStart();
      if (started.code !== 0) {
        throw new ReplicaStartError(
          `pg_ctl start failed (exit ${started.code}) for replica ${dataDir}:\n${started.output}\n--- server log (tail) ---\n${logTail(logFile)}`,
        );
      }
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
