import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";

/** A long-running process this kit started, stopped only by its own pid. */
export interface ManagedProcess {
  name: string;
  pid: number;
  /** Where its stdout and stderr go, shown when it fails. */
  logFile: string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>;
  hasExited(): boolean;
  stop(): Promise<void>;
}

type Cleanup = () => Promise<void> | void;

const cleanups: Cleanup[] = [];
let tearingDown: Promise<void> | undefined;

/**
 * Registers work to undo at teardown; undone in reverse order of registration. Returns a function
 * that drops the registration once the work no longer needs undoing.
 */
export function onTeardown(cleanup: Cleanup): () => void {
  cleanups.push(cleanup);
  return () => {
    const index = cleanups.lastIndexOf(cleanup);
    if (index !== -1) cleanups.splice(index, 1);
  };
}

/** Runs every registered cleanup once, newest first, reporting (not throwing) their failures. */
export function teardown(): Promise<void> {
  tearingDown ??= (async () => {
    while (cleanups.length > 0) {
      const cleanup = cleanups.pop()!;
      try {
        await cleanup();
      } catch (error) {
        console.error(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return tearingDown;
}

/** Stops everything on Ctrl-C, SIGTERM or an uncaught failure, then exits. */
export function installSignalHandlers(): void {
  const stopAndExit = (code: number) => {
    void teardown().finally(() => process.exit(code));
  };
  process.once("SIGINT", () => {
    console.error("\ninterrupted: stopping every process this run started");
    stopAndExit(130);
  });
  process.once("SIGTERM", () => stopAndExit(143));
  process.once("uncaughtException", (error) => {
    console.error(error);
    stopAndExit(1);
  });
}

function waitForExit(child: ChildProcess): Promise<number | string> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else if (child.signalCode !== null) resolve(child.signalCode);
    else child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
}

/** Sends SIGTERM to one pid, then SIGKILL if it has not exited within `graceMs`. */
async function stopPid(pid: number, exited: Promise<unknown>, graceMs = 5_000): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone.
    }
  };
  signal("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    signal("SIGKILL");
    await exited;
  }
}

export interface StartOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
}

/** Starts a daemon with its output in `logFile`, stopped at teardown if still running. */
export function startProcess(
  name: string,
  command: string,
  args: readonly string[],
  logFile: string,
  options: StartOptions = {},
): ManagedProcess {
  const logFd = openSync(logFile, "a");
  const spawnOptions: SpawnOptions = { stdio: ["ignore", logFd, logFd], ...options };
  const child = spawn(command, args, spawnOptions);
  closeSync(logFd);
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const pid = child.pid;
  const exited = waitForExit(child);
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const managed: ManagedProcess = {
    name,
    pid,
    logFile,
    exited,
    hasExited: () => done,
    stop: () => (done ? Promise.resolve() : stopPid(pid, exited)),
  };
  onTeardown(() => managed.stop());
  return managed;
}

export interface RunResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion, capturing its output. While it runs its pid is registered, so
 * an interrupted session stops it too (a pgbench mid-run, for instance).
 */
export function runToCompletion(
  command: string,
  args: readonly string[],
  options: StartOptions = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.once("error", reject);
    const exited = waitForExit(child);
    const pid = child.pid;
    const unregister = pid === undefined ? () => {} : onTeardown(() => stopPid(pid, exited));
    child.once("close", async () => {
      unregister();
      resolve({
        code: await exited,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
      });
    });
  });
}

/** The last lines of a process's log, for error messages. */
export function logTail(logFile: string, lines = 20): string {
  try {
    return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
