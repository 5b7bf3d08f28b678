import { appendFileSync, chownSync, existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { releasePort, reserveFreePort } from "./free-port.js";
import { destroySync, type GuardedServer, guard, release } from "./leftover-guard.js";
import { isRoot, type ProgramResult, postgresAccount, runProgram } from "./run-program.js";

/** The temp folder of one launched server: its data directory and its log live inside it. */
export interface ServerFolder extends GuardedServer {
  logFile: string;
  /** How error messages name the server, e.g. `/tmp/geo-pg-x/data` or `replica /tmp/…/data`. */
  label: string;
}

export class ServerStartError extends Error {
  override readonly name = "ServerStartError";
}

const portCollisionAttempts = 5;

function quoteSetting(value: string): string {
  return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** postgresql.conf lines for the settings; names are checked because they are not quoted. */
export function settingLines(settings: Readonly<Record<string, string>>): string {
  return Object.entries(settings)
    .map(([name, value]) => {
      if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(name))
        throw new Error(`invalid PostgreSQL setting name: ${name}`);
      return `${name} = ${quoteSetting(value)}\n`;
    })
    .join("");
}

export function logTail(logFile: string, lines = 30): string {
  if (!existsSync(logFile)) return "(no server log was written)";
  return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/** A fresh temp folder; nothing is created inside it yet. */
export async function makeServerFolder(prefix: string, kind?: string): Promise<ServerFolder> {
  const rootDir = await mkdtemp(join(tmpdir(), prefix));
  const dataDir = join(rootDir, "data");
  return {
    rootDir,
    dataDir,
    logFile: join(rootDir, "server.log"),
    label: kind === undefined ? dataDir : `${kind} ${dataDir}`,
  };
}

/** PostgreSQL refuses to run as root, so the folder must belong to the account the server runs as. */
export function handFolderToServerAccount(folder: ServerFolder): void {
  if (!isRoot()) return;
  const { uid, gid } = postgresAccount();
  chownSync(folder.rootDir, uid, gid);
}

/** Runs a PostgreSQL program from `bindir` inside the folder, as the server's account. */
export function runServerProgram(
  bindir: string,
  folder: ServerFolder,
  program: string,
  args: string[],
  input?: string,
): Promise<ProgramResult> {
  return runProgram(join(bindir, program), args, {
    cwd: folder.rootDir,
    asPostgresUser: isRoot(),
    ...(input === undefined ? {} : { input }),
  });
}

function pgCtlStart(bindir: string, folder: ServerFolder): Promise<ProgramResult> {
  return runServerProgram(bindir, folder, "pg_ctl", [
    "start",
    "-D",
    folder.dataDir,
    "-l",
    folder.logFile,
    "-w",
    "-t",
    "60",
    "-s",
  ]);
}

function startFailure(folder: ServerFolder, started: ProgramResult, tail: string): ServerStartError {
  return new ServerStartError(
    `pg_ctl start failed (exit ${started.code}) for ${folder.label}:\n${started.output}\n--- server log (tail) ---\n${tail}`,
  );
}

/**
 * Starts the server in a prepared data directory, on `fixedPort` or on a free port, and guards it
 * against being left behind. A free port can be taken between reserving and binding it, so a
 * collision is retried on another one; a fixed port fails with the server's own message.
 */
export async function startOnPort(
  bindir: string,
  folder: ServerFolder,
  fixedPort: number | undefined,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? (await reserveFreePort());
    // A later line wins in postgresql.conf, so a retry just appends the next port.
    appendFileSync(join(folder.dataDir, "postgresql.conf"), `port = ${port}\n`);
    const started = await pgCtlStart(bindir, folder);
    if (started.code === 0) {
      guard(folder);
      return port;
    }
    const tail = logTail(folder.logFile);
    if (fixedPort === undefined) releasePort(port);
    if (fixedPort === undefined && attempt < portCollisionAttempts && tail.includes("Address already in use"))
      continue;
    throw startFailure(folder, started, tail);
  }
}

/** Starts a stopped server again on the port already written in its configuration. */
export async function restartServer(bindir: string, folder: ServerFolder): Promise<void> {
  const started = await pgCtlStart(bindir, folder);
  if (started.code !== 0) throw startFailure(folder, started, logTail(folder.logFile));
}

/** Stops the server and keeps its data: "immediate" is a crash as far as PostgreSQL is concerned. */
export async function stopKeepingData(
  bindir: string,
  folder: ServerFolder,
  mode: "immediate" | "fast",
): Promise<void> {
  const stopped = await runServerProgram(bindir, folder, "pg_ctl", [
    "stop",
    "-D",
    folder.dataDir,
    "-m",
    mode,
    "-w",
    "-t",
    "60",
    "-s",
  ]);
  if (stopped.code !== 0) throw new Error(`pg_ctl stop failed for ${folder.label}:\n${stopped.output}`);
}

/** Removes what a start that failed half-way left behind, then lets its error go on. */
export function discardFailedStart(folder: ServerFolder): void {
  destroySync(folder);
  release(folder);
}

/** Stops the server and removes its folder; a server that will not stop is killed instead. */
export async function stopAndRemove(bindir: string, folder: ServerFolder, port: number): Promise<void> {
  const stopped = await runServerProgram(bindir, folder, "pg_ctl", [
    "stop",
    "-D",
    folder.dataDir,
    "-m",
    "immediate",
    "-w",
    "-s",
  ]);
  if (stopped.code === 0) await rm(folder.rootDir, { recursive: true, force: true, maxRetries: 3 });
  else destroySync(folder);
  release(folder);
  releasePort(port);
}
